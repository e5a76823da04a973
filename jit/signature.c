/*
** signature.c — Numba's signature strings ("void(float32[:, ::1], int64)",
** "float64(float64)") parsed into kernel types, and whether a declared
** parameter type takes an argument type. The type names are numba's, from
** the one dtype table (contracts/dtype.h).
*/
#include <stdio.h>
#include <string.h>

#include "jit.h"

static void skip_ws(const char **p) {
    while (**p == ' ' || **p == '\t' || **p == '\n') (*p)++;
}

/* One type of a signature: a scalar name, optionally [:, ::1]-style dims. */
static const JType *parse_type(VM *vm, const char **p, char *err, size_t errsize) {
    skip_ws(p);
    const char *s = *p;
    while ((**p >= 'a' && **p <= 'z') || (**p >= 'A' && **p <= 'Z') || (**p >= '0' && **p <= '9') || **p == '_')
        (*p)++;
    size_t n = (size_t)(*p - s);
    if (n == 0) {
        snprintf(err, errsize, "expected a type name at '%.20s'", s);
        return NULL;
    }
    /* numba's type names (contracts/dtype.h), plus its two names for no value */
    int kind = dtype_from_numba_name(s, n);
    if ((n == 4 && memcmp(s, "void", 4) == 0) || (n == 4 && memcmp(s, "none", 4) == 0)) kind = JK_VOID;
    if (kind < 0) {
        snprintf(err, errsize, "unknown type '%.*s'", (int)n, s);
        return NULL;
    }
    skip_ws(p);
    if (**p != '[') return jt_scalar(vm, (JKind)kind);
    if (kind == JK_VOID) {
        snprintf(err, errsize, "arrays of void are not a type");
        return NULL;
    }
    (*p)++;
    int ndim = 0, contig_at = -1;
    for (;;) {
        skip_ws(p);
        if (**p != ':') {
            snprintf(err, errsize, "expected ':' in array dimensions at '%.20s'", *p);
            return NULL;
        }
        (*p)++;
        skip_ws(p);
        if (**p == ':') {
            (*p)++;
            skip_ws(p);
            if (**p != '1') {
                snprintf(err, errsize, "expected '::1' in array dimensions");
                return NULL;
            }
            (*p)++;
            if (contig_at >= 0) {
                snprintf(err, errsize, "only one dimension may be '::1'");
                return NULL;
            }
            contig_at = ndim;
        }
        ndim++;
        skip_ws(p);
        if (**p == ',') {
            (*p)++;
            continue;
        }
        if (**p == ']') {
            (*p)++;
            break;
        }
        snprintf(err, errsize, "expected ',' or ']' in array dimensions at '%.20s'", *p);
        return NULL;
    }
    if (ndim > ND_MAXDIM) {
        snprintf(err, errsize, "too many dimensions");
        return NULL;
    }
    char layout = 'A';
    if (contig_at == ndim - 1) layout = 'C';
    else if (contig_at == 0) layout = 'F';
    else if (contig_at >= 0) {
        snprintf(err, errsize, "'::1' must be the first or the last dimension");
        return NULL;
    }
    return jt_array(vm, (NDType)kind, ndim, layout);
}

int jit_parse_signature(VM *vm, const char *s, const JType **out, int max, const JType **ret, char *err,
                         size_t errsize) {
    const char *p = s;
    skip_ws(&p);
    *ret = jt_scalar(vm, JK_VOID);
    if (*p != '(') {
        *ret = parse_type(vm, &p, err, errsize);
        if (!*ret) return -1;
        skip_ws(&p);
        if (*p != '(') {
            snprintf(err, errsize, "expected '(' after the return type in signature '%s'", s);
            return -1;
        }
    }
    p++;
    int n = 0;
    skip_ws(&p);
    if (*p == ')') {
        p++;
    } else {
        for (;;) {
            if (n >= max) {
                snprintf(err, errsize, "too many arguments in signature");
                return -1;
            }
            out[n] = parse_type(vm, &p, err, errsize);
            if (!out[n]) return -1;
            if (out[n]->kind == JK_VOID) {
                snprintf(err, errsize, "void is not an argument type");
                return -1;
            }
            n++;
            skip_ws(&p);
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == ')') {
                p++;
                break;
            }
            snprintf(err, errsize, "expected ',' or ')' in signature '%s'", s);
            return -1;
        }
    }
    skip_ws(&p);
    if (*p) {
        snprintf(err, errsize, "unexpected text after signature: '%s'", p);
        return -1;
    }
    return n;
}

/* Whether a signature's parameter type takes an argument of type a: arrays
** of its dtype and dimensions (any layout where it says 'A'), any scalar
** where it has a scalar (the callee is specialized on the scalar it gets,
** where Numba would convert it first), tuples element by
** element, else the same type. */
bool jit_signature_param_accepts(const JType *s, const JType *a) {
    if (s->kind == JK_ARRAY)
        return a->kind == JK_ARRAY && a->dtype == s->dtype && a->ndim == s->ndim &&
               (s->layout == 'A' || s->layout == a->layout);
    if (jt_is_scalar(s)) return jt_is_scalar(a);
    if (jt_is_complex(s)) return jt_is_scalar(a) || jt_is_complex(a);
    if (s->kind == JK_TUPLE) {
        if (a->kind != JK_TUPLE || a->n != s->n) return false;
        for (int i = 0; i < s->n; i++)
            if (!jit_signature_param_accepts(s->elems[i], a->elems[i])) return false;
        return true;
    }
    return s == a;
}
