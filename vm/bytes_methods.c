/*
** bytes_methods.c — the str-like methods of bytes and bytearray (one
** implementation for both: a result has the type of self), and
** bytearray's mutating methods. Character classes are ASCII only, as in
** CPython's bytes.
*/
#include <string.h>

#include "bytes.h"
#include "vm.h"

typedef struct BArg {
    const uint8_t *p;
    int64_t n;
} BArg;

static bool self_bytes(VM *vm, Value v, BArg *out) {
    *out = (BArg){(const uint8_t *)"", 0};
    if (IS_BYTES(vm, v)) {
        *out = (BArg){AS_BYTES(v)->data, AS_BYTES(v)->len};
        return true;
    }
    if (IS_BYTEARRAY(vm, v)) {
        *out = (BArg){AS_BYTEARRAY(v)->data, AS_BYTEARRAY(v)->len};
        return true;
    }
    return false;
}

/* self plus positional/keyword arguments by name into out[0..n). */
static BArg margs(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, const char *const *names, int n,
                  int min, Value *out) {
    BArg self;
    if (argc < 1 || !self_bytes(vm, argv[0], &self))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a 'bytes' object", name);
    int npos = argc - 1;
    if (npos > n)
        vm_raise_kind(vm, TypeError, "%s() takes at most %d argument%s (%d given)", name, n, n == 1 ? "" : "s", npos);
    for (int i = 0; i < n; i++) out[i] = i < npos ? argv[i + 1] : EMPTY_VAL;
    if (kwargs && kwargs->count > 0) {
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v)) {
            const char *kname = IS_STR(vm, k) ? AS_STR(k)->chars : "?";
            int j = 0;
            while (j < n && (!names || strcmp(names[j], kname) != 0)) j++;
            if (j == n) vm_raise_kind(vm, TypeError, "%s() got an unexpected keyword argument '%s'", name, kname);
            if (j < npos)
                vm_raise_kind(vm, TypeError, "argument for %s() given by name ('%s') and position (%d)", name, kname,
                              j + 1);
            out[j] = v;
        }
    }
    for (int i = 0; i < min; i++)
        if (IS_EMPTY(out[i]))
            vm_raise_kind(vm, TypeError, "%s() missing required argument '%s' (pos %d)", name,
                          names ? names[i] : "arg", i + 1);
    return self;
}

static BArg need_buf(VM *vm, Value v) {
    BufferView bv;
    buffer_need(vm, v, &bv);
    return (BArg){bv.buf, bv.len};
}

static Value mk(VM *vm, Value self, const uint8_t *p, int64_t n) {
    return bytes_like_new(vm, self, p, n);
}

static uint8_t *data_of(VM *vm, Value v) {
    return IS_BYTES(vm, v) ? AS_BYTES(v)->data : AS_BYTEARRAY(v)->data;
}

static inline bool is_space(uint8_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
static inline bool is_upper(uint8_t c) { return c >= 'A' && c <= 'Z'; }
static inline bool is_lower(uint8_t c) { return c >= 'a' && c <= 'z'; }
static inline bool is_alpha(uint8_t c) { return is_upper(c) || is_lower(c); }
static inline bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static inline uint8_t to_upper(uint8_t c) { return is_lower(c) ? (uint8_t)(c - 32) : c; }
static inline uint8_t to_lower(uint8_t c) { return is_upper(c) ? (uint8_t)(c + 32) : c; }

/* start/end arguments: None or an index, clamped like a slice. */
static void range_args(VM *vm, Value s, Value e, int64_t len, int64_t *start, int64_t *end) {
    *start = 0;
    *end = len;
    if (!IS_EMPTY(s) && !IS_NONE(s)) *start = vm_to_index(vm, s);
    if (!IS_EMPTY(e) && !IS_NONE(e)) *end = vm_to_index(vm, e);
    if (*end > len) *end = len;
    else if (*end < 0) { *end += len; if (*end < 0) *end = 0; }
    if (*start < 0) { *start += len; if (*start < 0) *start = 0; }
}

/* find/rfind/index/rindex/count's sub argument: an int byte or a buffer. */
static BArg sub_arg(VM *vm, Value v, uint8_t *one) {
    BufferView bv;
    if (buffer_get(vm, v, &bv)) return (BArg){bv.buf, bv.len};
    if (IS_INTLIKE(v)) {
        int64_t x = AS_INTLIKE(v);
        if (x < 0 || x > 255) vm_raise_kind(vm, ValueError, "byte must be in range(0, 256)");
        *one = (uint8_t)x;
        return (BArg){one, 1};
    }
    vm_raise_kind(vm, TypeError, "argument should be integer or bytes-like object, not '%s'", vm_type_name(vm, v));
}

static const char *const find_names[] = {"sub", "start", "end"};

static int64_t find_impl(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, bool rev) {
    Value a[3];
    arg_no_kwargs(vm, name, kwargs);
    margs(vm, name, argc, argv, NULL, find_names, 3, 1, a);
    uint8_t one;
    int64_t start, end;
    BArg self;
    self_bytes(vm, argv[0], &self);
    range_args(vm, a[1], a[2], self.n, &start, &end);
    BArg sub = sub_arg(vm, a[0], &one);
    self_bytes(vm, argv[0], &self);
    if (end - start < sub.n) return -1;
    if (!rev) {
        const uint8_t *r = bytes_find_raw(self.p + start, end - start, sub.p, sub.n);
        return r ? r - self.p : -1;
    }
    for (int64_t i = end - sub.n; i >= start; i--)
        if (memcmp(self.p + i, sub.p, (size_t)sub.n) == 0) return i;
    return -1;
}

static Value m_find(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return INT_VAL(find_impl(vm, "find", argc, argv, kwargs, false));
}
static Value m_rfind(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return INT_VAL(find_impl(vm, "rfind", argc, argv, kwargs, true));
}
static Value m_index(VM *vm, int argc, Value *argv, Dict *kwargs) {
    int64_t r = find_impl(vm, "index", argc, argv, kwargs, false);
    if (r < 0) vm_raise_kind(vm, ValueError, "subsection not found");
    return INT_VAL(r);
}
static Value m_rindex(VM *vm, int argc, Value *argv, Dict *kwargs) {
    int64_t r = find_impl(vm, "rindex", argc, argv, kwargs, true);
    if (r < 0) vm_raise_kind(vm, ValueError, "subsection not found");
    return INT_VAL(r);
}

static Value m_count(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value a[3];
    arg_no_kwargs(vm, "count", kwargs);
    margs(vm, "count", argc, argv, NULL, find_names, 3, 1, a);
    uint8_t one;
    int64_t start, end;
    BArg self;
    self_bytes(vm, argv[0], &self);
    range_args(vm, a[1], a[2], self.n, &start, &end);
    BArg sub = sub_arg(vm, a[0], &one);
    self_bytes(vm, argv[0], &self);
    if (end < start) return INT_VAL(0);
    if (sub.n == 0) return INT_VAL(end - start + 1);
    int64_t cnt = 0;
    for (int64_t i = start; i + sub.n <= end;) {
        if (memcmp(self.p + i, sub.p, (size_t)sub.n) == 0) {
            cnt++;
            i += sub.n;
        } else {
            i++;
        }
    }
    return INT_VAL(cnt);
}

static Value affix_match(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, bool suffix) {
    Value a[3];
    arg_no_kwargs(vm, name, kwargs);
    margs(vm, name, argc, argv, NULL, find_names, 3, 1, a);
    BArg self;
    self_bytes(vm, argv[0], &self);
    int64_t start, end;
    range_args(vm, a[1], a[2], self.n, &start, &end);
    Value pre = a[0];
    int64_t count = 1;
    Value *items = &pre;
    if (IS_TUPLE(vm, pre)) {
        count = AS_TUPLE(pre)->len;
        items = AS_TUPLE(pre)->items;
    }
    for (int64_t i = 0; i < count; i++) {
        BufferView bv;
        if (!buffer_get(vm, items[i], &bv)) {
            if (items != &pre)
                vm_raise_kind(vm, TypeError, "a bytes-like object is required, not '%s'", vm_type_name(vm, items[i]));
            vm_raise_kind(vm, TypeError, "%s first arg must be bytes or a tuple of bytes, not %s", name,
                          vm_type_name(vm, pre));
        }
        self_bytes(vm, argv[0], &self);
        if (end - start < bv.len || start > self.n) continue;
        const uint8_t *at = suffix ? self.p + end - bv.len : self.p + start;
        if (memcmp(at, bv.buf, (size_t)bv.len) == 0) return BOOL_VAL(true);
    }
    return BOOL_VAL(false);
}
static Value m_startswith(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return affix_match(vm, "startswith", argc, argv, kwargs, false);
}
static Value m_endswith(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return affix_match(vm, "endswith", argc, argv, kwargs, true);
}

/* ---------------------------------------------------------------- split family */

static const char *const split_names[] = {"sep", "maxsplit"};

static Value m_split_impl(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, bool rev) {
    Value a[2];
    margs(vm, name, argc, argv, kwargs, split_names, 2, 0, a);
    int64_t maxsplit = IS_EMPTY(a[1]) ? -1 : vm_to_index(vm, a[1]);
    if (maxsplit < 0) maxsplit = INT64_MAX;
    BArg self;
    self_bytes(vm, argv[0], &self);
    List *out = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(out));
    Value self_v = argv[0];
    if (IS_EMPTY(a[0]) || IS_NONE(a[0])) {
        int64_t n = self.n;
        if (!rev) {
            int64_t i = 0;
            while (i < n) {
                while (i < n && is_space(self.p[i])) i++;
                if (i >= n) break;
                if (maxsplit-- == 0) { /* the rest, trailing whitespace kept */
                    list_append(vm, out, mk(vm, self_v, self.p + i, n - i));
                    break;
                }
                int64_t j = i;
                while (j < n && !is_space(self.p[j])) j++;
                list_append(vm, out, mk(vm, self_v, self.p + i, j - i));
                i = j;
            }
        } else {
            int64_t i = n;
            while (i > 0) {
                while (i > 0 && is_space(self.p[i - 1])) i--;
                if (i <= 0) break;
                if (maxsplit-- == 0) { /* the rest, leading whitespace kept */
                    list_append(vm, out, mk(vm, self_v, self.p, i));
                    break;
                }
                int64_t j = i;
                while (j > 0 && !is_space(self.p[j - 1])) j--;
                list_append(vm, out, mk(vm, self_v, self.p + j, i - j));
                i = j;
            }
        }
    } else {
        BArg sep = need_buf(vm, a[0]);
        if (sep.n == 0) vm_raise_kind(vm, ValueError, "empty separator");
        self_bytes(vm, self_v, &self);
        if (!rev) {
            int64_t i = 0;
            while (maxsplit > 0) {
                const uint8_t *f = bytes_find_raw(self.p + i, self.n - i, sep.p, sep.n);
                if (!f) break;
                list_append(vm, out, mk(vm, self_v, self.p + i, f - (self.p + i)));
                i = f - self.p + sep.n;
                maxsplit--;
            }
            list_append(vm, out, mk(vm, self_v, self.p + i, self.n - i));
        } else {
            int64_t e = self.n;
            while (maxsplit > 0) {
                int64_t k = e - sep.n;
                while (k >= 0 && memcmp(self.p + k, sep.p, (size_t)sep.n) != 0) k--;
                if (k < 0) break;
                list_append(vm, out, mk(vm, self_v, self.p + k + sep.n, e - k - sep.n));
                e = k;
                maxsplit--;
            }
            list_append(vm, out, mk(vm, self_v, self.p, e));
        }
    }
    if (rev) {
        for (int64_t i = 0, j = out->len - 1; i < j; i++, j--) {
            Value t = out->items[i];
            out->items[i] = out->items[j];
            out->items[j] = t;
        }
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(out);
}
static Value m_split(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return m_split_impl(vm, "split", argc, argv, kwargs, false);
}
static Value m_rsplit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return m_split_impl(vm, "rsplit", argc, argv, kwargs, true);
}

static Value m_splitlines(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"keepends"};
    Value a[1];
    BArg self = margs(vm, "splitlines", argc, argv, kwargs, names, 1, 0, a);
    bool keep = !IS_EMPTY(a[0]) && vm_truthy(vm, a[0]);
    List *out = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(out));
    int64_t i = 0;
    while (i < self.n) {
        int64_t j = i;
        while (j < self.n && self.p[j] != '\n' && self.p[j] != '\r') j++;
        int64_t eol = j;
        if (j < self.n) j += (self.p[j] == '\r' && j + 1 < self.n && self.p[j + 1] == '\n') ? 2 : 1;
        list_append(vm, out, mk(vm, argv[0], self.p + i, (keep ? j : eol) - i));
        i = j;
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(out);
}

static Value partition_impl(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, bool rev) {
    Value a[1];
    arg_no_kwargs(vm, name, kwargs);
    margs(vm, name, argc, argv, NULL, NULL, 1, 0, a);
    if (IS_EMPTY(a[0])) vm_raise_kind(vm, TypeError, "%s() takes exactly one argument (0 given)", name);
    BArg sep = need_buf(vm, a[0]);
    if (sep.n == 0) vm_raise_kind(vm, ValueError, "empty separator");
    BArg self;
    self_bytes(vm, argv[0], &self);
    int64_t at = -1;
    if (!rev) {
        const uint8_t *f = bytes_find_raw(self.p, self.n, sep.p, sep.n);
        if (f) at = f - self.p;
    } else {
        for (int64_t k = self.n - sep.n; k >= 0; k--)
            if (memcmp(self.p + k, sep.p, (size_t)sep.n) == 0) {
                at = k;
                break;
            }
    }
    Tuple *t = tuple_new(vm, 3);
    vm_push_root(vm, OBJ_VAL(t));
    if (at < 0) {
        Value whole = mk(vm, argv[0], self.p, self.n), empty = mk(vm, argv[0], (const uint8_t *)"", 0);
        t->items[rev ? 2 : 0] = whole;
        t->items[1] = empty;
        t->items[rev ? 0 : 2] = mk(vm, argv[0], (const uint8_t *)"", 0);
    } else {
        t->items[0] = mk(vm, argv[0], self.p, at);
        t->items[1] = mk(vm, argv[0], sep.p, sep.n);
        t->items[2] = mk(vm, argv[0], self.p + at + sep.n, self.n - at - sep.n);
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(t);
}
static Value m_partition(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return partition_impl(vm, "partition", argc, argv, kwargs, false);
}
static Value m_rpartition(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return partition_impl(vm, "rpartition", argc, argv, kwargs, true);
}

/* ---------------------------------------------------------------- strip, affixes, replace, join */

static Value strip_impl(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, int which) {
    Value a[1];
    arg_no_kwargs(vm, name, kwargs);
    margs(vm, name, argc, argv, NULL, NULL, 1, 0, a);
    BArg chars = {(const uint8_t *)" \t\n\r\v\f", 6};
    if (!IS_EMPTY(a[0]) && !IS_NONE(a[0])) chars = need_buf(vm, a[0]);
    BArg self;
    self_bytes(vm, argv[0], &self);
    int64_t s = 0, e = self.n;
    if (which & 1)
        while (s < e && memchr(chars.p, self.p[s], (size_t)chars.n)) s++;
    if (which & 2)
        while (e > s && memchr(chars.p, self.p[e - 1], (size_t)chars.n)) e--;
    return mk(vm, argv[0], self.p + s, e - s);
}
static Value m_strip(VM *vm, int argc, Value *argv, Dict *kwargs) { return strip_impl(vm, "strip", argc, argv, kwargs, 3); }
static Value m_lstrip(VM *vm, int argc, Value *argv, Dict *kwargs) { return strip_impl(vm, "lstrip", argc, argv, kwargs, 1); }
static Value m_rstrip(VM *vm, int argc, Value *argv, Dict *kwargs) { return strip_impl(vm, "rstrip", argc, argv, kwargs, 2); }

static Value affix_remove(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, bool suffix) {
    Value a[1];
    arg_no_kwargs(vm, name, kwargs);
    margs(vm, name, argc, argv, NULL, NULL, 1, 1, a);
    BArg x = need_buf(vm, a[0]);
    BArg self;
    self_bytes(vm, argv[0], &self);
    if (x.n <= self.n && memcmp(suffix ? self.p + self.n - x.n : self.p, x.p, (size_t)x.n) == 0)
        return mk(vm, argv[0], suffix ? self.p : self.p + x.n, self.n - x.n);
    return mk(vm, argv[0], self.p, self.n);
}
static Value m_removeprefix(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return affix_remove(vm, "removeprefix", argc, argv, kwargs, false);
}
static Value m_removesuffix(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return affix_remove(vm, "removesuffix", argc, argv, kwargs, true);
}

static Value m_replace(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value a[3];
    arg_no_kwargs(vm, "replace", kwargs);
    margs(vm, "replace", argc, argv, NULL, NULL, 3, 2, a);
    int64_t count = IS_EMPTY(a[2]) ? -1 : vm_to_index(vm, a[2]);
    BArg old = need_buf(vm, a[0]), new_ = need_buf(vm, a[1]);
    BArg self;
    self_bytes(vm, argv[0], &self);
    if (count < 0) count = INT64_MAX;
    StrBuf sb;
    sb_init(&sb);
    int64_t i = 0;
    if (old.n == 0) {
        /* insert new before every byte and at the end */
        for (; i <= self.n; i++) {
            if (count > 0) {
                sb_append(&sb, (const char *)new_.p, (size_t)new_.n);
                count--;
            }
            if (i < self.n) sb_putc(&sb, (char)self.p[i]);
        }
    } else {
        while (i < self.n) {
            const uint8_t *f = count > 0 ? bytes_find_raw(self.p + i, self.n - i, old.p, old.n) : NULL;
            if (!f) break;
            sb_append(&sb, (const char *)self.p + i, (size_t)(f - (self.p + i)));
            sb_append(&sb, (const char *)new_.p, (size_t)new_.n);
            i = f - self.p + old.n;
            count--;
        }
        sb_append(&sb, (const char *)self.p + i, (size_t)(self.n - i));
    }
    Value r = mk(vm, argv[0], sb.data ? (const uint8_t *)sb.data : (const uint8_t *)"", (int64_t)sb.len);
    sb_free(&sb);
    return r;
}

static Value m_join(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value a[1];
    arg_no_kwargs(vm, "join", kwargs);
    margs(vm, "join", argc, argv, NULL, NULL, 1, 1, a);
    List *items = list_from_iterable(vm, a[0]);
    vm_push_root(vm, OBJ_VAL(items));
    int64_t total = 0;
    BArg self;
    self_bytes(vm, argv[0], &self);
    for (int64_t i = 0; i < items->len; i++) {
        BufferView bv;
        if (!buffer_get(vm, items->items[i], &bv))
            vm_raise_kind(vm, TypeError, "sequence item %lld: expected a bytes-like object, %s found", (long long)i,
                          vm_type_name(vm, items->items[i]));
        total += bv.len + (i ? self.n : 0);
    }
    Value r = bytes_like_new(vm, argv[0], NULL, total);
    uint8_t *d = data_of(vm, r);
    self_bytes(vm, argv[0], &self);
    for (int64_t i = 0; i < items->len; i++) {
        BufferView bv;
        buffer_get(vm, items->items[i], &bv);
        if (i) {
            memcpy(d, self.p, (size_t)self.n);
            d += self.n;
        }
        memcpy(d, bv.buf, (size_t)bv.len);
        d += bv.len;
    }
    vm_pop_roots(vm, 1);
    return r;
}

/* ---------------------------------------------------------------- case, predicates */

typedef enum { C_UPPER, C_LOWER, C_SWAP, C_CAP, C_TITLE } CaseOp;

static Value case_impl(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, CaseOp op) {
    arg_no_kwargs(vm, name, kwargs);
    BArg self = margs(vm, name, argc, argv, NULL, NULL, 0, 0, NULL);
    Value r = bytes_like_new(vm, argv[0], self.p, self.n);
    uint8_t *d = data_of(vm, r);
    bool prev_cased = false;
    for (int64_t i = 0; i < self.n; i++) {
        uint8_t c = d[i];
        switch (op) {
        case C_UPPER: d[i] = to_upper(c); break;
        case C_LOWER: d[i] = to_lower(c); break;
        case C_SWAP: d[i] = is_upper(c) ? to_lower(c) : to_upper(c); break;
        case C_CAP: d[i] = i == 0 ? to_upper(c) : to_lower(c); break;
        case C_TITLE:
            d[i] = prev_cased ? to_lower(c) : to_upper(c);
            prev_cased = is_alpha(c);
            break;
        }
    }
    return r;
}
#define CASE_M(fn, name, op) \
    static Value fn(VM *vm, int argc, Value *argv, Dict *kwargs) { return case_impl(vm, name, argc, argv, kwargs, op); }
CASE_M(m_upper, "upper", C_UPPER)
CASE_M(m_lower, "lower", C_LOWER)
CASE_M(m_swapcase, "swapcase", C_SWAP)
CASE_M(m_capitalize, "capitalize", C_CAP)
CASE_M(m_title, "title", C_TITLE)

static bool all_of(BArg s, bool (*pred)(uint8_t)) {
    if (s.n == 0) return false;
    for (int64_t i = 0; i < s.n; i++)
        if (!pred(s.p[i])) return false;
    return true;
}
static bool p_alnum(uint8_t c) { return is_alpha(c) || is_digit(c); }
static bool p_alpha(uint8_t c) { return is_alpha(c); }
static bool p_digit(uint8_t c) { return is_digit(c); }
static bool p_space(uint8_t c) { return is_space(c); }
#define PRED_M(fn, name, pred)                                                     \
    static Value fn(VM *vm, int argc, Value *argv, Dict *kwargs) {                 \
        arg_no_kwargs(vm, name, kwargs);                                           \
        return BOOL_VAL(all_of(margs(vm, name, argc, argv, NULL, NULL, 0, 0, NULL), pred)); \
    }
PRED_M(m_isalnum, "isalnum", p_alnum)
PRED_M(m_isalpha, "isalpha", p_alpha)
PRED_M(m_isdigit, "isdigit", p_digit)
PRED_M(m_isspace, "isspace", p_space)

static Value m_isascii(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "isascii", kwargs);
    BArg s = margs(vm, "isascii", argc, argv, NULL, NULL, 0, 0, NULL);
    for (int64_t i = 0; i < s.n; i++)
        if (s.p[i] >= 0x80) return BOOL_VAL(false);
    return BOOL_VAL(true);
}

static Value case_pred(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, bool upper) {
    arg_no_kwargs(vm, name, kwargs);
    BArg s = margs(vm, name, argc, argv, NULL, NULL, 0, 0, NULL);
    bool cased = false;
    for (int64_t i = 0; i < s.n; i++) {
        if (upper ? is_lower(s.p[i]) : is_upper(s.p[i])) return BOOL_VAL(false);
        if (upper ? is_upper(s.p[i]) : is_lower(s.p[i])) cased = true;
    }
    return BOOL_VAL(cased);
}
static Value m_isupper(VM *vm, int argc, Value *argv, Dict *kwargs) { return case_pred(vm, "isupper", argc, argv, kwargs, true); }
static Value m_islower(VM *vm, int argc, Value *argv, Dict *kwargs) { return case_pred(vm, "islower", argc, argv, kwargs, false); }

static Value m_istitle(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "istitle", kwargs);
    BArg s = margs(vm, "istitle", argc, argv, NULL, NULL, 0, 0, NULL);
    bool cased = false, prev = false;
    for (int64_t i = 0; i < s.n; i++) {
        uint8_t c = s.p[i];
        if (is_upper(c)) {
            if (prev) return BOOL_VAL(false);
            prev = cased = true;
        } else if (is_lower(c)) {
            if (!prev) return BOOL_VAL(false);
            prev = cased = true;
        } else {
            prev = false;
        }
    }
    return BOOL_VAL(cased);
}

/* ---------------------------------------------------------------- padding */

static uint8_t fill_arg(VM *vm, const char *name, Value v) {
    if (IS_EMPTY(v)) return ' ';
    BufferView bv;
    if ((IS_BYTES(vm, v) || IS_BYTEARRAY(vm, v)) && buffer_get(vm, v, &bv) && bv.len == 1) return bv.buf[0];
    vm_raise_kind(vm, TypeError, "%s() argument 2 must be a byte string of length 1, not %s", name,
                  IS_BYTES(vm, v) || IS_BYTEARRAY(vm, v) ? "bytes" : vm_type_name(vm, v));
}

static Value pad_impl(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, int how) {
    Value a[2];
    arg_no_kwargs(vm, name, kwargs);
    margs(vm, name, argc, argv, NULL, NULL, 2, 1, a);
    int64_t width = vm_to_index(vm, a[0]);
    uint8_t fill = fill_arg(vm, name, a[1]);
    BArg s;
    self_bytes(vm, argv[0], &s);
    if (width <= s.n) return mk(vm, argv[0], s.p, s.n);
    int64_t total = width - s.n, left;
    if (how == 0) left = total / 2 + (total & width & 1); /* CPython's center rounding */
    else if (how == 1) left = 0;
    else left = total;
    Value r = bytes_like_new(vm, argv[0], NULL, width);
    uint8_t *d = data_of(vm, r);
    self_bytes(vm, argv[0], &s);
    memset(d, fill, (size_t)left);
    memcpy(d + left, s.p, (size_t)s.n);
    memset(d + left + s.n, fill, (size_t)(total - left));
    return r;
}
static Value m_center(VM *vm, int argc, Value *argv, Dict *kwargs) { return pad_impl(vm, "center", argc, argv, kwargs, 0); }
static Value m_ljust(VM *vm, int argc, Value *argv, Dict *kwargs) { return pad_impl(vm, "ljust", argc, argv, kwargs, 1); }
static Value m_rjust(VM *vm, int argc, Value *argv, Dict *kwargs) { return pad_impl(vm, "rjust", argc, argv, kwargs, 2); }

static Value m_zfill(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value a[1];
    arg_no_kwargs(vm, "zfill", kwargs);
    margs(vm, "zfill", argc, argv, NULL, NULL, 1, 1, a);
    int64_t width = vm_to_index(vm, a[0]);
    BArg s;
    self_bytes(vm, argv[0], &s);
    if (width <= s.n) return mk(vm, argv[0], s.p, s.n);
    int64_t fill = width - s.n;
    Value r = bytes_like_new(vm, argv[0], NULL, width);
    uint8_t *d = data_of(vm, r);
    memset(d, '0', (size_t)fill);
    memcpy(d + fill, s.p, (size_t)s.n);
    if (s.n > 0 && (s.p[0] == '+' || s.p[0] == '-')) {
        d[0] = s.p[0];
        d[fill] = '0';
    }
    return r;
}

static Value m_expandtabs(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"tabsize"};
    Value a[1];
    BArg s = margs(vm, "expandtabs", argc, argv, kwargs, names, 1, 0, a);
    int64_t tab = IS_EMPTY(a[0]) ? 8 : vm_to_index(vm, a[0]);
    self_bytes(vm, argv[0], &s);
    StrBuf sb;
    sb_init(&sb);
    int64_t col = 0;
    for (int64_t i = 0; i < s.n; i++) {
        uint8_t c = s.p[i];
        if (c == '\t') {
            if (tab > 0) {
                int64_t n = tab - col % tab;
                for (int64_t k = 0; k < n; k++) sb_putc(&sb, ' ');
                col += n;
            }
        } else {
            sb_putc(&sb, (char)c);
            col = (c == '\n' || c == '\r') ? 0 : col + 1;
        }
    }
    Value r = mk(vm, argv[0], sb.data ? (const uint8_t *)sb.data : (const uint8_t *)"", (int64_t)sb.len);
    sb_free(&sb);
    return r;
}

/* ---------------------------------------------------------------- hex, fromhex, translate */

static Value m_hex(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"sep", "bytes_per_sep"};
    Value a[2];
    BArg s = margs(vm, "hex", argc, argv, kwargs, names, 2, 0, a);
    char sep = 0;
    int64_t per = IS_EMPTY(a[1]) ? 1 : vm_to_index(vm, a[1]);
    if (!IS_EMPTY(a[0])) {
        const uint8_t *sp;
        int64_t sn;
        if (IS_STR(vm, a[0])) {
            sp = (const uint8_t *)AS_STR(a[0])->chars;
            sn = AS_STR(a[0])->nchars;
            if (sn == 1 && AS_STR(a[0])->len != 1)
                vm_raise_kind(vm, ValueError, "sep must be ASCII.");
        } else {
            BArg b = need_buf(vm, a[0]);
            sp = b.p;
            sn = b.n;
        }
        if (sn != 1) vm_raise_kind(vm, ValueError, "sep must be length 1.");
        sep = (char)sp[0];
        if ((uint8_t)sep >= 0x80) vm_raise_kind(vm, ValueError, "sep must be ASCII.");
    }
    self_bytes(vm, argv[0], &s);
    StrBuf sb;
    sb_init(&sb);
    int64_t group = per < 0 ? -per : per;
    for (int64_t i = 0; i < s.n; i++) {
        if (sep && group > 0 && i > 0) {
            /* positive: groups counted from the right; negative: from the left */
            bool boundary = per > 0 ? (s.n - i) % group == 0 : i % group == 0;
            if (boundary) sb_putc(&sb, sep);
        }
        sb_printf(&sb, "%02x", s.p[i]);
    }
    return STR_VAL(sb_finish(vm, &sb));
}

static int hexval(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static Value m_fromhex(VM *vm, int argc, Value *argv, Dict *kwargs) {
    /* a classmethod: argv[0] is the class */
    arg_no_kwargs(vm, "fromhex", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "fromhex() takes exactly one argument (%d given)", argc - 1);
    if (!IS_STR(vm, argv[1]))
        vm_raise_kind(vm, TypeError, "fromhex() argument must be str, not %s", vm_type_name(vm, argv[1]));
    Str *s = AS_STR(argv[1]);
    StrBuf sb;
    sb_init(&sb);
    const uint8_t *p = (const uint8_t *)s->chars;
    int64_t n = s->len, i = 0, ci = 0;
    while (i < n) {
        if (is_space(p[i])) {
            i++;
            ci++;
            continue;
        }
        int hi = hexval(p[i]);
        int lo = i + 1 < n ? hexval(p[i + 1]) : -1;
        if (hi < 0 || lo < 0) {
            sb_free(&sb);
            int64_t at = hi < 0 ? ci : ci + 1;
            vm_raise_kind(vm, ValueError, "non-hexadecimal number found in fromhex() arg at position %lld",
                          (long long)at);
        }
        sb_putc(&sb, (char)(hi * 16 + lo));
        i += 2;
        ci += 2;
    }
    Value cls = argv[0];
    Value r = IS_OBJ(cls) && AS_OBJ(cls) == (Obj *)vm->t_bytearray
                  ? OBJ_VAL(bytearray_new(vm, sb.data, (int64_t)sb.len))
                  : OBJ_VAL(bytes_new(vm, sb.data ? sb.data : "", (int64_t)sb.len));
    sb_free(&sb);
    return r;
}

static Value m_maketrans(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "maketrans", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "maketrans expected 2 arguments, got %d", argc);
    BArg from = need_buf(vm, argv[0]), to = need_buf(vm, argv[1]);
    if (from.n != to.n) vm_raise_kind(vm, ValueError, "maketrans arguments must have same length");
    Bytes *t = bytes_alloc(vm, 256);
    for (int i = 0; i < 256; i++) t->data[i] = (uint8_t)i;
    for (int64_t i = 0; i < from.n; i++) t->data[from.p[i]] = to.p[i];
    return OBJ_VAL(t);
}

static Value m_translate(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"table", "delete"};
    Value a[2];
    margs(vm, "translate", argc, argv, kwargs, names, 2, 1, a);
    BArg table = {NULL, 0}, del = {(const uint8_t *)"", 0};
    if (!IS_NONE(a[0])) {
        table = need_buf(vm, a[0]);
        if (table.n != 256) vm_raise_kind(vm, ValueError, "translation table must be 256 characters long");
    }
    if (!IS_EMPTY(a[1])) del = need_buf(vm, a[1]);
    BArg s;
    self_bytes(vm, argv[0], &s);
    StrBuf sb;
    sb_init(&sb);
    for (int64_t i = 0; i < s.n; i++) {
        if (del.n && memchr(del.p, s.p[i], (size_t)del.n)) continue;
        sb_putc(&sb, (char)(table.p ? table.p[s.p[i]] : s.p[i]));
    }
    Value r = mk(vm, argv[0], sb.data ? (const uint8_t *)sb.data : (const uint8_t *)"", (int64_t)sb.len);
    sb_free(&sb);
    return r;
}

/* ---------------------------------------------------------------- bytearray only */

static ByteArray *ba_self(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs, int min, int max) {
    arg_no_kwargs(vm, name, kwargs);
    if (argc < 1 || !IS_BYTEARRAY(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a 'bytearray' object", name);
    int n = argc - 1;
    if (n < min || n > max) {
        if (min == max && min == 0) vm_raise_kind(vm, TypeError, "%s() takes no arguments (%d given)", name, n);
        if (min == max) vm_raise_kind(vm, TypeError, "%s() takes exactly one argument (%d given)", name, n);
        vm_raise_kind(vm, TypeError, "%s expected at most %d arguments, got %d", name, max, n);
    }
    return AS_BYTEARRAY(argv[0]);
}

static uint8_t byte_arg(VM *vm, Value v) {
    int64_t x = vm_to_index(vm, v);
    if (x < 0 || x > 255) vm_raise_kind(vm, ValueError, "byte must be in range(0, 256)");
    return (uint8_t)x;
}

static Value m_append(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ByteArray *ba = ba_self(vm, "append", argc, argv, kwargs, 1, 1);
    uint8_t c = byte_arg(vm, argv[1]);
    bytearray_resize(vm, ba, ba->len + 1);
    ba->data[ba->len - 1] = c;
    return NONE_VAL;
}

static Value m_extend(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ByteArray *ba = ba_self(vm, "extend", argc, argv, kwargs, 1, 1);
    if (IS_STR(vm, argv[1])) vm_raise_kind(vm, TypeError, "'str' object cannot be interpreted as an integer");
    if (IS_INTLIKE(argv[1]) || IS_FLOAT(argv[1]) || IS_NONE(argv[1]))
        vm_raise_kind(vm, TypeError, "can't extend bytearray with %s", vm_type_name(vm, argv[1]));
    Value src = bytes_from_object(vm, argv[1], false);
    vm_push_root(vm, src);
    int64_t old = ba->len;
    bytearray_resize(vm, ba, old + AS_BYTES(src)->len);
    memcpy(ba->data + old, AS_BYTES(src)->data, (size_t)AS_BYTES(src)->len);
    vm_pop_roots(vm, 1);
    return NONE_VAL;
}

static Value m_insert(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ByteArray *ba = ba_self(vm, "insert", argc, argv, kwargs, 2, 2);
    int64_t i = vm_to_index(vm, argv[1]);
    uint8_t c = byte_arg(vm, argv[2]);
    if (i < 0) {
        i += ba->len;
        if (i < 0) i = 0;
    }
    if (i > ba->len) i = ba->len;
    bytearray_resize(vm, ba, ba->len + 1);
    memmove(ba->data + i + 1, ba->data + i, (size_t)(ba->len - 1 - i));
    ba->data[i] = c;
    return NONE_VAL;
}

static Value m_pop(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ByteArray *ba = ba_self(vm, "pop", argc, argv, kwargs, 0, 1);
    int64_t i = argc > 1 ? vm_to_index(vm, argv[1]) : -1;
    if (ba->len == 0) vm_raise_kind(vm, IndexError, "pop from empty bytearray");
    if (i < 0) i += ba->len;
    if (i < 0 || i >= ba->len) vm_raise_kind(vm, IndexError, "pop index out of range");
    uint8_t c = ba->data[i];
    memmove(ba->data + i, ba->data + i + 1, (size_t)(ba->len - i - 1));
    ba->len--;
    return INT_VAL(c);
}

static Value m_remove(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ByteArray *ba = ba_self(vm, "remove", argc, argv, kwargs, 1, 1);
    uint8_t c = byte_arg(vm, argv[1]);
    uint8_t *f = ba->len ? memchr(ba->data, c, (size_t)ba->len) : NULL;
    if (!f) vm_raise_kind(vm, ValueError, "value not found in bytearray");
    int64_t i = f - ba->data;
    memmove(ba->data + i, ba->data + i + 1, (size_t)(ba->len - i - 1));
    ba->len--;
    return NONE_VAL;
}

static Value m_clear(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ba_self(vm, "clear", argc, argv, kwargs, 0, 0)->len = 0;
    return NONE_VAL;
}

static Value m_copy(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ByteArray *ba = ba_self(vm, "copy", argc, argv, kwargs, 0, 0);
    return OBJ_VAL(bytearray_new(vm, ba->data, ba->len));
}

static Value m_reverse(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ByteArray *ba = ba_self(vm, "reverse", argc, argv, kwargs, 0, 0);
    for (int64_t i = 0, j = ba->len - 1; i < j; i++, j--) {
        uint8_t t = ba->data[i];
        ba->data[i] = ba->data[j];
        ba->data[j] = t;
    }
    return NONE_VAL;
}

/* ---------------------------------------------------------------- registration */

static void add_wrapped(VM *vm, Type *t, const char *name, NativeFn fn, Type *wrapper) {
    Value f = native_new(vm, name, fn, EMPTY_VAL);
    vm_push_root(vm, f);
    Wrapper *w = gc_alloc_obj(vm, wrapper, sizeof(Wrapper));
    w->func = f;
    w->fset = NONE_VAL;
    w->fdel = NONE_VAL;
    dict_set_cstr(vm, t->dict, name, OBJ_VAL(w));
    vm_pop_roots(vm, 1);
}

void bytes_methods_init(VM *vm, Type *t) {
    static const struct {
        const char *name;
        NativeFn fn;
    } methods[] = {
        {"capitalize", m_capitalize}, {"center", m_center},       {"count", m_count},
        {"decode", codec_bytes_decode_method}, {"endswith", m_endswith}, {"expandtabs", m_expandtabs},
        {"find", m_find},             {"hex", m_hex},             {"index", m_index},
        {"isalnum", m_isalnum},       {"isalpha", m_isalpha},     {"isascii", m_isascii},
        {"isdigit", m_isdigit},       {"islower", m_islower},     {"isspace", m_isspace},
        {"istitle", m_istitle},       {"isupper", m_isupper},     {"join", m_join},
        {"ljust", m_ljust},           {"lower", m_lower},         {"lstrip", m_lstrip},
        {"partition", m_partition},   {"removeprefix", m_removeprefix}, {"removesuffix", m_removesuffix},
        {"replace", m_replace},       {"rfind", m_rfind},         {"rindex", m_rindex},
        {"rjust", m_rjust},           {"rpartition", m_rpartition}, {"rsplit", m_rsplit},
        {"rstrip", m_rstrip},         {"split", m_split},         {"splitlines", m_splitlines},
        {"startswith", m_startswith}, {"strip", m_strip},         {"swapcase", m_swapcase},
        {"title", m_title},           {"translate", m_translate}, {"upper", m_upper},
        {"zfill", m_zfill},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) type_add_method(vm, t, methods[i].name, methods[i].fn);
    add_wrapped(vm, t, "fromhex", m_fromhex, vm->t_classmethod);
    add_wrapped(vm, t, "maketrans", m_maketrans, vm->t_staticmethod);
    if (t == vm->t_bytearray) {
        static const struct {
            const char *name;
            NativeFn fn;
        } ba_methods[] = {
            {"append", m_append}, {"extend", m_extend}, {"insert", m_insert}, {"pop", m_pop},
            {"remove", m_remove}, {"clear", m_clear},   {"copy", m_copy},     {"reverse", m_reverse},
        };
        for (size_t i = 0; i < sizeof ba_methods / sizeof ba_methods[0]; i++)
            type_add_method(vm, t, ba_methods[i].name, ba_methods[i].fn);
    }
}
