/*
** re_engine.c — the _gpy_re module: the matcher under the re module
** (stdlib/re.gpy). Patterns are compiled by PCRE2 (Debian's libpcre2-8,
** with its JIT) after re.gpy has checked them the way CPython's parser
** does and translated the few spellings PCRE2 reads differently. A str
** pattern runs in UTF mode (Unicode \w \d \s \b through PCRE2_UCP unless
** re.ASCII); a bytes pattern byte by byte. Offsets cross this boundary as
** character indices: gpy strs are UTF-8, so byte offsets are converted.
**
**   compile(pattern, flags) -> Code            (ValueError(msg, byte offset) on a bad pattern)
**   Code.groups, Code.names (tuple of (name, number))
**   Code.match(s, pos, endpos, mode) -> spans or None   mode 0 search, 1 match, 2 fullmatch
**   Code.scan(s, pos, endpos, limit) -> [spans, ...]     successive matches, CPython's empty-match rule
** spans: a tuple of 4 * (groups + 1) ints: each group's start and end as
** character indices, then the same as byte offsets (for substr), -1 for a
** group that did not take part.
**   substr(s, bstart, bend) -> s's characters between two byte offsets
** (gpy indexes a non-ASCII str by walking it: slicing by bytes is what keeps
** findall and sub linear).
*/
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>

#include "bytes.h"
#include "stdlib_priv.h"

/* Python's flag values (re.IGNORECASE ...) */
enum { RE_I = 2, RE_L = 4, RE_M = 8, RE_S = 16, RE_U = 32, RE_X = 64, RE_A = 256 };

typedef struct Code {
    Obj obj;
    pcre2_code *code;
    pcre2_match_data *md;
    bool is_str; /* a str pattern: subjects are strs (UTF-8) */
    int32_t groups;
    Value names; /* tuple of (name, number) */
} Code;

static void code_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((Code *)o)->names); }

static void code_finalize(VM *vm, Obj *o) {
    (void)vm;
    Code *c = (Code *)o;
    if (c->md) pcre2_match_data_free(c->md);
    if (c->code) pcre2_code_free(c->code);
    c->md = NULL;
    c->code = NULL;
}

static Type *code_type(VM *vm);

static Code *as_code(VM *vm, const char *fname, int argc, Value *argv) {
    if (argc < 1 || !IS_OBJ(argv[0]) || AS_OBJ(argv[0])->type != code_type(vm))
        vm_raise_kind(vm, TypeError, "%s() needs a compiled pattern", fname);
    return (Code *)AS_OBJ(argv[0]);
}

/* ----------------------------------------------------------- subjects */

typedef struct Subject {
    const uint8_t *p;
    size_t len;      /* bytes */
    bool chars;      /* offsets are characters of a non-ASCII str */
    uint32_t check;  /* PCRE2_NO_UTF_CHECK once the subject is known valid (ASCII, or checked once) */
    size_t cur_byte, cur_char; /* a conversion cursor */
} Subject;

static void subject_of(VM *vm, Code *c, Value s, Subject *sub) {
    memset(sub, 0, sizeof *sub);
    if (c->is_str) {
        if (!IS_STR(vm, s)) vm_raise_kind(vm, TypeError, "cannot use a string pattern on a bytes-like object");
        Str *str = AS_STR(s);
        sub->p = (const uint8_t *)str->chars;
        sub->len = (size_t)str->len;
        sub->chars = !str->ascii;
        sub->check = str->ascii ? PCRE2_NO_UTF_CHECK : 0;
        return;
    }
    if (IS_STR(vm, s)) vm_raise_kind(vm, TypeError, "cannot use a bytes pattern on a string-like object");
    BufferView v;
    buffer_need(vm, s, &v);
    sub->p = v.buf;
    sub->len = (size_t)v.len;
}

static size_t char_count(Subject *s) { /* characters in the whole subject */
    if (!s->chars) return s->len;
    size_t n = 0;
    for (size_t i = 0; i < s->len; i++) n += (s->p[i] & 0xC0) != 0x80;
    return n;
}

/* Byte offset of character index ci (clamped to the end). */
static size_t to_byte(Subject *s, size_t ci) {
    if (!s->chars) return ci < s->len ? ci : s->len;
    if (ci < s->cur_char) s->cur_byte = s->cur_char = 0; /* only for pos/endpos, once a call */
    size_t b = s->cur_byte, c = s->cur_char;
    while (b < s->len && c < ci) {
        b++;
        while (b < s->len && (s->p[b] & 0xC0) == 0x80) b++;
        c++;
    }
    s->cur_byte = b;
    s->cur_char = c;
    return b;
}

/* Character index of byte offset bi (a character boundary). */
static size_t to_char(Subject *s, size_t bi) {
    if (!s->chars) return bi;
    size_t c = s->cur_char;
    if (bi < s->cur_byte) /* a group before the cursor: walk back to it */
        for (size_t b = bi; b < s->cur_byte; b++) c -= (s->p[b] & 0xC0) != 0x80;
    else
        for (size_t b = s->cur_byte; b < bi; b++) c += (s->p[b] & 0xC0) != 0x80;
    s->cur_byte = bi;
    s->cur_char = c;
    return c;
}

/* ------------------------------------------------------------ compile */

static Value f_compile(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "compile", kwargs);
    arg_count(vm, "compile", argc, 2, 2);
    int64_t flags = arg_int(vm, "compile", argv[1]);
    bool is_str = IS_STR(vm, argv[0]);
    const char *pat;
    size_t plen;
    if (is_str) {
        pat = AS_STR(argv[0])->chars;
        plen = (size_t)AS_STR(argv[0])->len;
    } else {
        BufferView v;
        buffer_need(vm, argv[0], &v);
        pat = (const char *)v.buf;
        plen = (size_t)v.len;
    }
    uint32_t opts = PCRE2_DUPNAMES;
    if (flags & RE_I) opts |= PCRE2_CASELESS;
    if (flags & RE_M) opts |= PCRE2_MULTILINE | PCRE2_ALT_CIRCUMFLEX; /* ^ also after a final newline, as Python */
    if (flags & RE_S) opts |= PCRE2_DOTALL;
    if (flags & RE_X) opts |= PCRE2_EXTENDED;
    if (is_str) {
        /* not PCRE2_MATCH_INVALID_UTF: with it 10.42's JIT misses \\D and \\W
        ** on non-ASCII characters; subjects are checked instead (Subject) */
        opts |= PCRE2_UTF;
        if (!(flags & RE_A)) opts |= PCRE2_UCP;
    }
    /* PCRE2 10.42's start-of-match optimization misses matches of caseless
    ** patterns with lookarounds ((?=a)[^a]*A in "A"): those run without it */
    if ((opts & PCRE2_CASELESS) && memmem(pat, plen, "(?", 2)) opts |= PCRE2_NO_START_OPTIMIZE;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (cc) pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    int err;
    PCRE2_SIZE erroff;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pat, plen, opts, &err, &erroff, cc);
    if (cc) pcre2_compile_context_free(cc);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        Value args[2] = {STR_VAL(str_cstr(vm, (const char *)msg)), INT_VAL((int64_t)erroff)};
        vm_push_root(vm, args[0]);
        Value e = vm_call(vm, OBJ_VAL(vm->exc[EXC_ValueError]), 2, args);
        vm_throw(vm, e);
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* the interpreter runs what the JIT cannot take */
    Code *c = gc_alloc_obj(vm, code_type(vm), sizeof(Code));
    c->code = code;
    c->is_str = is_str;
    c->names = NONE_VAL;
    uint32_t ngroups = 0;
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &ngroups);
    c->groups = (int32_t)ngroups;
    c->md = pcre2_match_data_create_from_pattern(code, NULL);
    if (!c->md) vm_raise_kind(vm, MemoryError, "out of memory");
    Value cv = OBJ_VAL(c);
    vm_push_root(vm, cv);
    uint32_t count = 0, entry = 0;
    PCRE2_SPTR table = NULL;
    pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &count);
    pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry);
    pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
    Tuple *names = tuple_new(vm, (int64_t)count);
    c->names = OBJ_VAL(names);
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = table + (size_t)i * entry;
        Value pair[2] = {STR_VAL(str_cstr(vm, (const char *)e + 2)), INT_VAL((e[0] << 8) | e[1])};
        vm_push_root(vm, pair[0]);
        names->items[i] = OBJ_VAL(tuple_from_array(vm, 2, pair));
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return cv;
}

/* -------------------------------------------------------------- match */

/* One match from byte offset start within [0, end); PCRE2 options.
** Returns the spans tuple or NONE. */
static Value match_once(VM *vm, Code *c, Subject *s, size_t start, size_t end, uint32_t opts, bool *found) {
    int rc = pcre2_match(c->code, s->p, end, start, opts | s->check, c->md, NULL);
    if (rc >= 0 || rc == PCRE2_ERROR_NOMATCH) s->check = PCRE2_NO_UTF_CHECK;
    *found = rc >= 0;
    if (rc == PCRE2_ERROR_NOMATCH) return NONE_VAL;
    if (rc < 0) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof msg);
        if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21)
            vm_raise_kind(vm, ValueError, "the string holds a lone surrogate, which regular expressions cannot read");
        if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
            rc == PCRE2_ERROR_JIT_STACKLIMIT)
            vm_raise_kind(vm, RecursionError, "maximum recursion limit exceeded in a regular expression (%s)", msg);
        vm_raise_kind(vm, RuntimeError, "regular expression match failed: %s", msg);
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
    int64_t n = 2 * ((int64_t)c->groups + 1);
    Tuple *t = tuple_new(vm, 2 * n);
    for (int64_t g = 0; g <= c->groups; g++) {
        PCRE2_SIZE a = g < rc ? ov[2 * g] : PCRE2_UNSET, b = g < rc ? ov[2 * g + 1] : PCRE2_UNSET;
        if (a == PCRE2_UNSET) {
            t->items[2 * g] = t->items[2 * g + 1] = t->items[n + 2 * g] = t->items[n + 2 * g + 1] = INT_VAL(-1);
        } else {
            t->items[2 * g] = INT_VAL((int64_t)to_char(s, a));
            t->items[2 * g + 1] = INT_VAL((int64_t)to_char(s, b));
            t->items[n + 2 * g] = INT_VAL((int64_t)a);
            t->items[n + 2 * g + 1] = INT_VAL((int64_t)b);
        }
    }
    return OBJ_VAL(t);
}

/* pos/endpos (characters, as Python slices them) to byte offsets. */
static void bounds(VM *vm, Subject *s, Value posv, Value endv, size_t *start, size_t *end) {
    int64_t n = (int64_t)char_count(s);
    int64_t pos = IS_NONE(posv) ? 0 : arg_int(vm, "match", posv);
    int64_t endpos = IS_NONE(endv) ? n : arg_int(vm, "match", endv);
    if (pos < 0) pos = 0;
    if (pos > n) pos = n;
    if (endpos < 0) endpos = 0;
    if (endpos > n) endpos = n;
    *end = to_byte(s, (size_t)endpos);
    *start = pos > endpos ? *end + 1 : to_byte(s, (size_t)pos); /* past the end: no match */
}

static Value m_match(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "match", kwargs);
    Code *c = as_code(vm, "match", argc, argv);
    arg_count(vm, "match", argc - 1, 4, 4);
    Subject s;
    subject_of(vm, c, argv[1], &s);
    size_t start, end;
    bounds(vm, &s, argv[2], argv[3], &start, &end);
    if (start > end) return NONE_VAL;
    int64_t mode = arg_int(vm, "match", argv[4]);
    uint32_t opts = mode == 1 ? PCRE2_ANCHORED : mode == 2 ? PCRE2_ANCHORED | PCRE2_ENDANCHORED : 0;
    bool found;
    return match_once(vm, c, &s, start, end, opts, &found);
}

/* Successive matches as re.finditer finds them: after an empty match the
** next may start at the same place only if it is not empty (CPython 3.7+). */
static Value m_scan(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "scan", kwargs);
    Code *c = as_code(vm, "scan", argc, argv);
    arg_count(vm, "scan", argc - 1, 4, 4);
    Subject s;
    subject_of(vm, c, argv[1], &s);
    size_t start, end;
    bounds(vm, &s, argv[2], argv[3], &start, &end);
    int64_t limit = IS_NONE(argv[4]) ? -1 : arg_int(vm, "scan", argv[4]);
    List *out = list_new(vm, 0);
    Value outv = OBJ_VAL(out);
    vm_push_root(vm, outv);
    uint32_t opts = 0;
    while (start <= end && (limit < 0 || out->len < limit)) {
        bool found;
        Value m = match_once(vm, c, &s, start, end, opts, &found);
        if (!found) break;
        list_append(vm, out, m);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
        size_t a = ov[0], b = ov[1];
        if (b > a) {
            start = b;
            opts = 0;
        } else {
            start = b;
            opts = PCRE2_NOTEMPTY_ATSTART;
        }
        (void)a;
    }
    vm_pop_roots(vm, 1);
    return outv;
}

/* substr(s, b0, b1): the str (or bytes) between byte offsets b0 and b1 of
** s, which the engine reported (character boundaries); b1 -1: the end. */
static Value f_substr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "substr", kwargs);
    arg_count(vm, "substr", argc, 3, 3);
    int64_t b0 = arg_int(vm, "substr", argv[1]), b1 = arg_int(vm, "substr", argv[2]);
    if (IS_STR(vm, argv[0])) {
        Str *str = AS_STR(argv[0]);
        if (b1 == -1) b1 = str->len;
        if (b0 < 0 || b1 < b0 || b1 > str->len) vm_raise_kind(vm, ValueError, "substr: bad byte range");
        if (b0 == 0 && b1 == str->len) return argv[0];
        return STR_VAL(str_new(vm, str->chars + b0, (size_t)(b1 - b0)));
    }
    BufferView v;
    buffer_need(vm, argv[0], &v);
    if (b0 < 0 || b1 < b0 || b1 > v.len) vm_raise_kind(vm, ValueError, "substr: bad byte range");
    return OBJ_VAL(bytes_new(vm, v.buf + b0, b1 - b0));
}

static Value m_groups(VM *vm, int argc, Value *argv, Dict *kw) {
    (void)kw;
    return INT_VAL(as_code(vm, "groups", argc, argv)->groups);
}

static Value m_names(VM *vm, int argc, Value *argv, Dict *kw) {
    (void)kw;
    return as_code(vm, "names", argc, argv)->names;
}

static Type *code_type(VM *vm) {
    Type *t = STDLIB_FIND_TYPE(vm, finalize, code_finalize);
    if (t) return t;
    t = type_new_builtin(vm, "_Code", vm->t_object, 0);
    t->mark = code_mark;
    t->finalize = code_finalize;
    type_add_method(vm, t, "match", m_match);
    type_add_method(vm, t, "scan", m_scan);
    type_add_method(vm, t, "groups", m_groups);
    type_add_method(vm, t, "names", m_names);
    class_allow_subclass(vm, t, false);
    return t;
}

static Module *build_re_engine(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "_gpy_re"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "compile", f_compile);
    module_add_function(vm, m, "substr", f_substr);
    dict_set_cstr(vm, m->dict, "Code", OBJ_VAL(code_type(vm)));
    vm_pop_roots(vm, 1);
    return m;
}

void re_engine_register(VM *vm) { module_register_native(vm, "_gpy_re", build_re_engine); }
