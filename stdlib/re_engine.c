/*
** re_engine.c — the `_re` module: the matching core of `re` on PCRE2
** (Debian's libpcre2-8, JIT-compiled where the platform allows).
**
** stdlib/re.gpy parses Python's pattern syntax itself (so errors carry
** CPython's messages and positions) and hands PCRE2 an equivalent pattern;
** this file compiles it and runs the matches. str subjects are UTF-8 (gpy's
** own representation), so PCRE2 runs in UTF mode on them directly; offsets
** are turned into code-point indexes here, with a cursor that moves forward
** through a scan so findall/sub over a long text stay linear.
**
**   compile(pat, flags)               -> Code, or (message, offset) on error
**   exec(code, s, pos, endpos, mode)  -> [start0, end0, start1, ..., byte offsets] or None
**   scan(code, s, pos, endpos, limit) -> flat spans of every match
**   slice(s, b0, b1)                  -> the text between two byte offsets
**   findall(code, s, pos, endpos)     -> list as re.findall returns it
**   subt(code, s, pieces, count)      -> (result, n) for a literal template
*/
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "bytes.h"
#include "stdlib_priv.h"
#include "unicode.h"

/* flags from re.gpy */
/* RF_NOJIT: PCRE2 10.42's JIT keeps a stale capture from a possessive repeat
** of a group (( A)*+ can report group 1 set after zero iterations): patterns
** with possessive or atomic parts run on the interpreter */
enum { RF_I = 1, RF_M = 2, RF_S = 4, RF_UTF = 8, RF_UCP = 16, RF_NOJIT = 32 };
/* exec modes */
enum { RM_SEARCH = 0, RM_MATCH = 1, RM_FULL = 2, RM_NOTEMPTY_ATSTART = 4 };

typedef struct Code {
    Obj obj;
    pcre2_code *code;
    pcre2_match_data *md; /* reused: filled and copied out before gpy runs again */
    uint32_t ngroups;
    bool utf;
} Code;

static Type *code_type(VM *vm);

static void code_finalize(VM *vm, Obj *o) {
    (void)vm;
    Code *c = (Code *)o;
    if (c->md) pcre2_match_data_free(c->md);
    if (c->code) pcre2_code_free(c->code);
    c->md = NULL;
    c->code = NULL;
}

static Code *want_code(VM *vm, Value v) {
    if (!IS_OBJ(v) || AS_OBJ(v)->type != code_type(vm)) vm_raise_kind(vm, TypeError, "expected a compiled pattern");
    return (Code *)AS_OBJ(v);
}

static Value r_compile(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "compile", kwargs);
    if (argc != 2 || !IS_INT(argv[1])) vm_raise_kind(vm, TypeError, "compile(pattern, flags)");
    int64_t f = argv[1].as.i;
    const char *p;
    size_t n;
    if (IS_STR(vm, argv[0])) {
        p = AS_STR(argv[0])->chars;
        n = (size_t)AS_STR(argv[0])->len;
    } else if (IS_BYTES(vm, argv[0])) {
        p = (const char *)AS_BYTES(argv[0])->data;
        n = (size_t)AS_BYTES(argv[0])->len;
    } else
        vm_raise_kind(vm, TypeError, "pattern must be str or bytes");
    /* $ keeps PCRE2's default (end, or before a final newline) as Python's;
    ** in MULTILINE, Python's ^ also matches after a newline that ends the text */
    uint32_t opts = PCRE2_ALT_CIRCUMFLEX;
    if (f & RF_I) opts |= PCRE2_CASELESS;
    if (f & RF_M) opts |= PCRE2_MULTILINE;
    if (f & RF_S) opts |= PCRE2_DOTALL;
    /* a gpy str may hold a lone surrogate (3-byte form): PCRE2 must not reject it */
    if (f & RF_UTF) opts |= PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
    if (f & RF_UCP) opts |= PCRE2_UCP;
    /* PCRE2 10.42's start-of-match optimization misses matches of caseless
    ** patterns with lookarounds ((?=a)[^a]*A in ".A"): those run without it */
    if ((opts & PCRE2_CASELESS) && memmem(p, n, "(?", 2)) opts |= PCRE2_NO_START_OPTIMIZE;
    int err;
    PCRE2_SIZE erroff;
    pcre2_compile_context *cctx = pcre2_compile_context_create(NULL);
    if (!cctx) vm_raise_kind(vm, MemoryError, "out of memory");
    pcre2_set_newline(cctx, PCRE2_NEWLINE_LF); /* Python's only line end */
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)p, n, opts, &err, &erroff, cctx);
    pcre2_compile_context_free(cctx);
    if (!code) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(err, buf, sizeof buf);
        Value pair[2] = {OBJ_VAL(str_cstr(vm, (const char *)buf)), INT_VAL((int64_t)erroff)};
        vm_push_root(vm, pair[0]);
        Value r = OBJ_VAL(tuple_from_array(vm, 2, pair));
        vm_pop_roots(vm, 1);
        return r;
    }
    if (!(f & RF_NOJIT)) pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* best effort: else the interpreter */
    Code *c = gc_alloc_obj(vm, code_type(vm), sizeof(Code));
    c->code = code;
    c->utf = (f & RF_UTF) != 0;
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &c->ngroups);
    c->md = pcre2_match_data_create_from_pattern(code, NULL);
    if (!c->md) vm_raise_kind(vm, MemoryError, "out of memory");
    return OBJ_VAL(c);
}

/* The subject: bytes of a str or bytes-like, and whether indexes are code points. */
typedef struct Subject {
    const char *s;
    size_t len;
    bool cp;                  /* a non-ASCII str: byte offsets <-> code-point indexes */
    size_t cur_b, cur_c;      /* conversion cursor: byte cur_b is code point cur_c */
    Value v;
} Subject;

static void subject_init(VM *vm, Subject *sj, Code *c, Value v) {
    memset(sj, 0, sizeof *sj);
    sj->v = v;
    Value u = class_unbox(vm, v);
    if (IS_STR(vm, u)) {
        if (!c->utf) vm_raise_kind(vm, TypeError, "cannot use a bytes pattern on a string-like object");
        sj->s = AS_STR(u)->chars;
        sj->len = (size_t)AS_STR(u)->len;
        sj->cp = !AS_STR(u)->ascii;
        sj->v = u;
        return;
    }
    if (c->utf) {
        if (IS_BYTES(vm, u) || IS_BYTEARRAY(vm, u))
            vm_raise_kind(vm, TypeError, "cannot use a string pattern on a bytes-like object");
        vm_raise_kind(vm, TypeError, "expected string or bytes-like object, got '%s'", vm_type_name(vm, v));
    }
    if (IS_BYTES(vm, u)) {
        sj->s = (const char *)AS_BYTES(u)->data;
        sj->len = (size_t)AS_BYTES(u)->len;
        sj->v = u;
        return;
    }
    vm_raise_kind(vm, TypeError, "expected string or bytes-like object, got '%s'", vm_type_name(vm, v));
}

static size_t count_cp(const char *s, size_t a, size_t b) {
    size_t n = 0;
    for (size_t i = a; i < b; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* byte offset -> index, moving the cursor (forward mostly, backward for groups in a lookbehind) */
static int64_t to_index(Subject *sj, size_t b) {
    if (!sj->cp) return (int64_t)b;
    if (b >= sj->cur_b)
        sj->cur_c += count_cp(sj->s, sj->cur_b, b);
    else
        sj->cur_c -= count_cp(sj->s, b, sj->cur_b);
    sj->cur_b = b;
    return (int64_t)sj->cur_c;
}

/* index -> byte offset (clamped to the subject) */
static size_t to_byte(Subject *sj, int64_t i) {
    if (!sj->cp) return (size_t)i;
    return uc_offset(sj->s, sj->len, (size_t)i);
}

static int64_t subject_nindex(VM *vm, Subject *sj) {
    if (!sj->cp) return (int64_t)sj->len;
    return AS_STR(sj->v)->nchars;
    (void)vm;
}

/* pos/endpos clamped as CPython does; returns byte offsets */
static void subject_bounds(VM *vm, Subject *sj, Value vpos, Value vend, size_t *bpos, size_t *bend) {
    int64_t n = subject_nindex(vm, sj);
    int64_t pos = IS_INT(vpos) ? vpos.as.i : 0, end = IS_INT(vend) ? vend.as.i : n;
    if (pos < 0) pos = 0;
    if (pos > n) pos = n;
    if (end < 0) end = 0;
    if (end > n) end = n;
    *bend = to_byte(sj, end);
    *bpos = pos > end ? *bend + 1 : to_byte(sj, pos); /* past the end: nothing matches */
    sj->cur_b = *bpos > *bend ? *bend : *bpos;
    sj->cur_c = (size_t)(pos > end ? end : pos);
}

/* runs one match; true when found; raises on engine errors */
static bool run(VM *vm, Code *c, Subject *sj, size_t start, size_t end, uint32_t opts) {
    if (start > end) return false;
    int rc = pcre2_match(c->code, (PCRE2_SPTR)sj->s, end, start, opts, c->md, NULL);
    /* the JIT's default 32 KiB stack is too small for this pattern and text:
    ** the interpreter (which backtracks on the heap) finishes the job */
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
        rc = pcre2_match(c->code, (PCRE2_SPTR)sj->s, end, start, opts | PCRE2_NO_JIT, c->md, NULL);
    if (rc > 0) {
        /* groups past the highest one set are unset, whatever the vector holds */
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
        for (uint32_t g = (uint32_t)rc; g <= c->ngroups; g++) ov[2 * g] = ov[2 * g + 1] = PCRE2_UNSET;
        return true;
    }
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(rc, buf, sizeof buf);
    vm_raise_kind(vm, RuntimeError, "regular expression engine: %s", (const char *)buf);
}

static const PCRE2_SIZE *ovector(Code *c) { return pcre2_get_ovector_pointer(c->md); }

/* appends the 2*(ngroups+1) indexes of the last match to l (-1 for unset
** groups), then the same spans as byte offsets: re.gpy slices the subject
** with those (_re.slice), in time proportional to the piece, not its place */
static void push_spans(VM *vm, Code *c, Subject *sj, List *l) {
    const PCRE2_SIZE *ov = ovector(c);
    for (uint32_t g = 0; g <= c->ngroups; g++) {
        if (ov[2 * g] == PCRE2_UNSET) {
            list_append(vm, l, INT_VAL(-1));
            list_append(vm, l, INT_VAL(-1));
        } else {
            list_append(vm, l, INT_VAL(to_index(sj, ov[2 * g])));
            list_append(vm, l, INT_VAL(to_index(sj, ov[2 * g + 1])));
        }
    }
    for (uint32_t g = 0; g <= 2 * c->ngroups + 1; g++)
        list_append(vm, l, INT_VAL(ov[g] == PCRE2_UNSET ? -1 : (int64_t)ov[g]));
}

static Value r_exec(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "exec", kwargs);
    if (argc != 5 || !IS_INT(argv[4])) vm_raise_kind(vm, TypeError, "exec(code, string, pos, endpos, mode)");
    Code *c = want_code(vm, argv[0]);
    Subject sj;
    subject_init(vm, &sj, c, argv[1]);
    size_t bpos, bend;
    subject_bounds(vm, &sj, argv[2], argv[3], &bpos, &bend);
    int64_t mode = argv[4].as.i;
    uint32_t opts = 0;
    if ((mode & 3) == RM_MATCH) opts |= PCRE2_ANCHORED;
    if ((mode & 3) == RM_FULL) opts |= PCRE2_ANCHORED | PCRE2_ENDANCHORED;
    if (mode & RM_NOTEMPTY_ATSTART) opts |= PCRE2_NOTEMPTY_ATSTART;
    if (!run(vm, c, &sj, bpos, bend, opts)) return NONE_VAL;
    List *l = list_new(vm, 2 * (c->ngroups + 1));
    vm_push_root(vm, OBJ_VAL(l));
    push_spans(vm, c, &sj, l);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(l);
}

/* Iterates the matches as findall/finditer/sub/split see them (3.7+): after
** an empty match the next one may start at the same place but not be empty. */
typedef struct Scan {
    Code *c;
    Subject *sj;
    size_t at, end;
    bool after_empty;
} Scan;

static bool scan_next(VM *vm, Scan *sc) {
    if (sc->at > sc->end) return false;
    if (!run(vm, sc->c, sc->sj, sc->at, sc->end, sc->after_empty ? PCRE2_NOTEMPTY_ATSTART : 0)) return false;
    const PCRE2_SIZE *ov = ovector(sc->c);
    sc->after_empty = ov[0] == ov[1];
    sc->at = ov[1];
    return true;
}

static Value r_scan(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "scan", kwargs);
    if (argc != 5 || !IS_INT(argv[4])) vm_raise_kind(vm, TypeError, "scan(code, string, pos, endpos, limit)");
    Code *c = want_code(vm, argv[0]);
    Subject sj;
    subject_init(vm, &sj, c, argv[1]);
    size_t bpos, bend;
    subject_bounds(vm, &sj, argv[2], argv[3], &bpos, &bend);
    int64_t limit = argv[4].as.i, n = 0;
    Scan sc = {c, &sj, bpos, bend, false};
    List *l = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(l));
    while ((limit <= 0 || n < limit) && scan_next(vm, &sc)) {
        push_spans(vm, c, &sj, l);
        n++;
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(l);
}

/* the text between two byte offsets, as the subject's type */
static Value slice(VM *vm, Subject *sj, size_t a, size_t b) {
    if (IS_STR(vm, sj->v)) return OBJ_VAL(str_new(vm, sj->s + a, b - a));
    return OBJ_VAL(bytes_new(vm, sj->s + a, (int64_t)(b - a)));
}

static Value group_value(VM *vm, Code *c, Subject *sj, uint32_t g) {
    const PCRE2_SIZE *ov = ovector(c);
    if (ov[2 * g] == PCRE2_UNSET) return IS_STR(vm, sj->v) ? OBJ_VAL(str_new(vm, "", 0)) : OBJ_VAL(bytes_new(vm, "", 0));
    return slice(vm, sj, ov[2 * g], ov[2 * g + 1]);
}

/* slice(s, b0, b1): the text between two byte offsets that a match reported (b1 -1: the end) */
static Value r_slice(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "slice", kwargs);
    if (argc != 3 || !IS_INT(argv[1]) || !IS_INT(argv[2])) vm_raise_kind(vm, TypeError, "slice(string, start, end)");
    Value u = class_unbox(vm, argv[0]);
    int64_t a = argv[1].as.i, b = argv[2].as.i, n;
    if (IS_STR(vm, u))
        n = AS_STR(u)->len;
    else if (IS_BYTES(vm, u))
        n = AS_BYTES(u)->len;
    else
        vm_raise_kind(vm, TypeError, "slice: str or bytes expected");
    if (b == -1) b = n; /* to the end */
    if (a < 0 || b < a || b > n) vm_raise_kind(vm, ValueError, "slice: bad offsets");
    if (IS_STR(vm, u)) return OBJ_VAL(str_new(vm, AS_STR(u)->chars + a, (size_t)(b - a)));
    return OBJ_VAL(bytes_new(vm, AS_BYTES(u)->data + a, b - a));
}

static Value r_findall(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "findall", kwargs);
    if (argc != 4) vm_raise_kind(vm, TypeError, "findall(code, string, pos, endpos)");
    Code *c = want_code(vm, argv[0]);
    Subject sj;
    subject_init(vm, &sj, c, argv[1]);
    size_t bpos, bend;
    subject_bounds(vm, &sj, argv[2], argv[3], &bpos, &bend);
    Scan sc = {c, &sj, bpos, bend, false};
    List *l = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(l));
    while (scan_next(vm, &sc)) {
        Value item;
        if (c->ngroups == 0)
            item = group_value(vm, c, &sj, 0);
        else if (c->ngroups == 1)
            item = group_value(vm, c, &sj, 1);
        else {
            Tuple *t = tuple_new(vm, c->ngroups);
            vm_push_root(vm, OBJ_VAL(t));
            for (uint32_t g = 1; g <= c->ngroups; g++) t->items[g - 1] = group_value(vm, c, &sj, g);
            vm_pop_roots(vm, 1);
            item = OBJ_VAL(t);
        }
        vm_push_root(vm, item);
        list_append(vm, l, item);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(l);
}

/* A growable byte buffer in the VM's allocator (no raise can leak it: the
** pieces are checked before building starts). */
typedef struct Buf {
    char *p;
    size_t n, cap;
} Buf;

static void buf_put(VM *vm, Buf *b, const char *s, size_t n) {
    if (n == 0) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        b->p = gc_realloc(vm, b->p, b->cap, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

/* subt(code, s, pieces, count): pieces alternate literal text and group
** numbers (ints, already checked against the group count by re.gpy) */
static Value r_subt(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "subt", kwargs);
    if (argc != 4 || !IS_INT(argv[3]) || !IS_OBJ(argv[2]) || AS_OBJ(argv[2])->type != vm->t_list)
        vm_raise_kind(vm, TypeError, "subt(code, string, pieces, count)");
    Code *c = want_code(vm, argv[0]);
    Subject sj;
    subject_init(vm, &sj, c, argv[1]);
    List *pieces = (List *)AS_OBJ(argv[2]);
    for (int64_t i = 0; i < pieces->len; i++) {
        Value p = pieces->items[i];
        if (IS_INT(p) ? (p.as.i < 0 || p.as.i > c->ngroups) : !(IS_STR(vm, p) || IS_BYTES(vm, p)))
            vm_raise_kind(vm, ValueError, "bad template piece");
    }
    int64_t count = argv[3].as.i, n = 0;
    Scan sc = {c, &sj, 0, sj.len, false};
    Buf b = {0};
    size_t last = 0;
    while ((count <= 0 || n < count) && scan_next(vm, &sc)) {
        const PCRE2_SIZE *ov = ovector(c);
        buf_put(vm, &b, sj.s + last, ov[0] - last);
        for (int64_t i = 0; i < pieces->len; i++) {
            Value p = pieces->items[i];
            if (IS_INT(p)) {
                size_t g = (size_t)p.as.i;
                if (ov[2 * g] != PCRE2_UNSET) buf_put(vm, &b, sj.s + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
            } else if (IS_STR(vm, p))
                buf_put(vm, &b, AS_STR(p)->chars, (size_t)AS_STR(p)->len);
            else
                buf_put(vm, &b, (const char *)AS_BYTES(p)->data, (size_t)AS_BYTES(p)->len);
        }
        last = ov[1];
        n++;
    }
    buf_put(vm, &b, sj.s + last, sj.len - last);
    Value r;
    if (n == 0)
        r = sj.v;
    else if (IS_STR(vm, sj.v))
        r = OBJ_VAL(str_new_data(vm, b.p ? b.p : "", b.n));
    else
        r = OBJ_VAL(bytes_new(vm, b.p ? b.p : "", (int64_t)b.n));
    if (b.p) gc_free(vm, b.p, b.cap);
    vm_push_root(vm, r);
    Value pair[2] = {r, INT_VAL(n)};
    Value t = OBJ_VAL(tuple_from_array(vm, 2, pair));
    vm_pop_roots(vm, 1);
    return t;
}

static Type *code_type(VM *vm) {
    Type *t = STDLIB_FIND_TYPE(vm, finalize, code_finalize);
    if (t) return t;
    t = type_new_builtin(vm, "_re.Code", vm->t_object, 0);
    t->finalize = code_finalize;
    class_allow_subclass(vm, t, false);
    return t;
}

static Module *build_re_engine(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "_re"));
    vm_push_root(vm, OBJ_VAL(m));
    code_type(vm);
    module_add_function(vm, m, "compile", r_compile);
    module_add_function(vm, m, "exec", r_exec);
    module_add_function(vm, m, "scan", r_scan);
    module_add_function(vm, m, "findall", r_findall);
    module_add_function(vm, m, "slice", r_slice);
    module_add_function(vm, m, "subt", r_subt);
    vm_pop_roots(vm, 1);
    return m;
}

void re_engine_register(VM *vm) { module_register_native(vm, "_re", build_re_engine); }
