/*
** numpy.c — a first, small numpy-compatible module: 1-D arrays of
** bool/int64/float32/float64, creation functions, elementwise arithmetic
** with scalars and equal-shaped arrays, basic slicing (views), and numpy
** 2.x's str/repr for the common cases. See docs/arrays.md.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ndarray.h"
#include "stdlib_priv.h"

static Type *t_ndarray;
static Type *t_dtype_f32, *t_dtype_f64, *t_dtype_i64, *t_dtype_bool;

static const char *dt_name(NDType d) {
    switch (d) {
    case ND_BOOL: return "bool";
    case ND_INT64: return "int64";
    case ND_FLOAT32: return "float32";
    default: return "float64";
    }
}

size_t nd_itemsize(NDType dt) {
    switch (dt) {
    case ND_BOOL: return 1;
    case ND_FLOAT32: return 4;
    default: return 8;
    }
}

bool nd_check(VM *vm, Value v) {
    (void)vm;
    return t_ndarray && IS_OBJ(v) && AS_OBJ(v)->type == t_ndarray;
}

static void nd_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((NDArray *)o)->base); }
static void nd_finalize(VM *vm, Obj *o) {
    NDArray *a = (NDArray *)o;
    if (a->nbytes_owned) gc_free(vm, a->data, a->nbytes_owned);
    a->nbytes_owned = 0;
}

NDArray *ndarray_new(VM *vm, NDType dt, int64_t n) {
    size_t bytes = (size_t)n * ndarray_itemsize(dt);
    char *data = gc_malloc(vm, bytes ? bytes : 1);
    memset(data, 0, bytes ? bytes : 1);
    NDArray *a = gc_alloc_obj(vm, t_ndarray, sizeof(NDArray) + 2 * sizeof(int64_t));
    a->shape = a->dims;
    a->strides = a->dims + 1;
    a->size = n;
    a->flags = ND_C_CONTIGUOUS | ND_F_CONTIGUOUS | ND_WRITEABLE;
    a->dtype = dt;
    a->ndim = 1;
    a->shape[0] = n;
    a->strides[0] = (int64_t)ndarray_itemsize(dt);
    a->data = data;
    a->nbytes_owned = bytes ? bytes : 1;
    a->base = NONE_VAL;
    return a;
}

NDArray *ndarray_wrap(VM *vm, NDType dt, void *data, int64_t n, Value base) {
    vm_push_root(vm, base);
    NDArray *a = gc_alloc_obj(vm, t_ndarray, sizeof(NDArray) + 2 * sizeof(int64_t));
    a->shape = a->dims;
    a->strides = a->dims + 1;
    a->size = n;
    a->flags = ND_C_CONTIGUOUS | ND_F_CONTIGUOUS | ND_WRITEABLE;
    vm_pop_roots(vm, 1);
    a->dtype = dt;
    a->ndim = 1;
    a->shape[0] = n;
    a->strides[0] = (int64_t)ndarray_itemsize(dt);
    a->data = data;
    a->base = base;
    return a;
}

static double get_f(NDArray *a, int64_t i) {
    char *p = a->data + i * a->strides[0];
    switch (a->dtype) {
    case ND_BOOL: return *(uint8_t *)p;
    case ND_INT64: return (double)*(int64_t *)p;
    case ND_FLOAT32: return *(float *)p;
    default: return *(double *)p;
    }
}
static int64_t get_i(NDArray *a, int64_t i) {
    char *p = a->data + i * a->strides[0];
    switch (a->dtype) {
    case ND_BOOL: return *(uint8_t *)p;
    case ND_INT64: return *(int64_t *)p;
    case ND_FLOAT32: return (int64_t)*(float *)p;
    default: return (int64_t)*(double *)p;
    }
}
static void set_num(NDArray *a, int64_t i, double f, int64_t iv, bool isint) {
    char *p = a->data + i * a->strides[0];
    switch (a->dtype) {
    case ND_BOOL: *(uint8_t *)p = isint ? iv != 0 : f != 0; break;
    case ND_INT64: *(int64_t *)p = isint ? iv : (int64_t)f; break;
    case ND_FLOAT32: *(float *)p = isint ? (float)iv : (float)f; break;
    default: *(double *)p = isint ? (double)iv : f; break;
    }
}
static void set_val(VM *vm, NDArray *a, int64_t i, Value v) {
    if (IS_FLOAT(v)) set_num(a, i, AS_FLOAT(v), 0, false);
    else if (IS_INTLIKE(v)) set_num(a, i, 0, AS_INTLIKE(v), true);
    else vm_raise_kind(vm, TypeError, "float() argument must be a string or a real number, not '%s'",
                       vm_type_name(vm, v));
}
static Value get_val(NDArray *a, int64_t i) {
    switch (a->dtype) {
    case ND_BOOL: return BOOL_VAL(get_i(a, i));
    case ND_INT64: return INT_VAL(get_i(a, i));
    default: return FLOAT_VAL(get_f(a, i));
    }
}

/* dtype= argument: None, a dtype type, a name, float, int, bool. */
static NDType parse_dtype(VM *vm, Value v, NDType dflt) {
    if (IS_EMPTY(v) || IS_NONE(v)) return dflt;
    if (IS_OBJ(v)) {
        Obj *o = AS_OBJ(v);
        if (o == (Obj *)t_dtype_f32) return ND_FLOAT32;
        if (o == (Obj *)t_dtype_f64 || o == (Obj *)vm->t_float) return ND_FLOAT64;
        if (o == (Obj *)t_dtype_i64 || o == (Obj *)vm->t_int) return ND_INT64;
        if (o == (Obj *)t_dtype_bool || o == (Obj *)vm->t_bool) return ND_BOOL;
        if (IS_STR(vm, v)) {
            const char *s = AS_STR(v)->chars;
            if (!strcmp(s, "float32")) return ND_FLOAT32;
            if (!strcmp(s, "float64") || !strcmp(s, "float")) return ND_FLOAT64;
            if (!strcmp(s, "int64") || !strcmp(s, "int")) return ND_INT64;
            if (!strcmp(s, "bool")) return ND_BOOL;
            vm_raise_kind(vm, TypeError, "data type '%s' not understood", s);
        }
    }
    vm_raise_kind(vm, TypeError, "Cannot interpret '%s' as a data type", vm_type_name(vm, v));
}

/* ---- printing ---- */

/* numpy's formatting of one float in a list: digits with up to 8 decimals,
** trailing zeros stripped; '.' kept. */
static void fmt_float(double d, char *buf, size_t n) {
    if (isnan(d)) { snprintf(buf, n, "nan"); return; }
    if (isinf(d)) { snprintf(buf, n, d < 0 ? "-inf" : "inf"); return; }
    snprintf(buf, n, "%.8f", d);
    size_t l = strlen(buf);
    while (l > 0 && buf[l - 1] == '0') buf[--l] = 0;
    if (!strcmp(buf, "-0.") && d == 0 && !signbit(d)) strcpy(buf, "0.");
}

static Value nd_format(VM *vm, NDArray *a, bool repr) {
    int64_t n = a->shape[0];
    char (*items)[64] = gc_malloc(vm, (size_t)(n ? n : 1) * 64);
    size_t maxint = 0, maxfrac = 0;
    for (int64_t i = 0; i < n; i++) {
        if (a->dtype == ND_BOOL) snprintf(items[i], 64, "%s", get_i(a, i) ? "True" : "False");
        else if (a->dtype == ND_INT64) snprintf(items[i], 64, "%lld", (long long)get_i(a, i));
        else fmt_float(get_f(a, i), items[i], 64);
        char *dot = strchr(items[i], '.');
        size_t ip = dot ? (size_t)(dot - items[i]) : strlen(items[i]);
        size_t fp = dot ? strlen(dot + 1) : 0;
        if (ip > maxint) maxint = ip;
        if (fp > maxfrac) maxfrac = fp;
    }
    if (a->dtype == ND_BOOL) maxint = 5; /* numpy always pads True to False's width */
    size_t cap = (size_t)n * (maxint + maxfrac + 4) + 64;
    char *out = gc_malloc(vm, cap);
    size_t o = 0;
    if (repr) o += (size_t)sprintf(out + o, "array(");
    out[o++] = '[';
    for (int64_t i = 0; i < n; i++) {
        if (i) o += (size_t)sprintf(out + o, repr ? ", " : " ");
        char *dot = strchr(items[i], '.');
        size_t ip = dot ? (size_t)(dot - items[i]) : strlen(items[i]);
        size_t fp = dot ? strlen(dot + 1) : 0;
        bool leftpad = a->dtype != ND_BOOL;
        if (a->dtype == ND_BOOL) {
            size_t w = strlen(items[i]);
            for (size_t k = w; k < maxint; k++) out[o++] = ' ';
        }
        if (leftpad) for (size_t k = ip; k < maxint; k++) out[o++] = ' ';
        o += (size_t)sprintf(out + o, "%s", items[i]);
        if (a->dtype == ND_FLOAT32 || a->dtype == ND_FLOAT64)
            for (size_t k = fp; k < maxfrac; k++) out[o++] = ' ';
    }
    out[o++] = ']';
    out[o] = 0;
    if (repr) {
        if (n == 0 || (a->dtype != ND_INT64 && a->dtype != ND_FLOAT64 && a->dtype != ND_BOOL))
            o += (size_t)sprintf(out + o, ", dtype=%s", dt_name(a->dtype));
        out[o++] = ')';
        out[o] = 0;
    }
    Value r = OBJ_VAL(str_new(vm, out, o));
    gc_free(vm, out, cap);
    gc_free(vm, items, (size_t)(n ? n : 1) * 64);
    return r;
}
static Value nd_repr(VM *vm, Value s) { return nd_format(vm, (NDArray *)AS_OBJ(s), true); }
static Value nd_str(VM *vm, Value s) { return nd_format(vm, (NDArray *)AS_OBJ(s), false); }

/* ---- arithmetic ---- */

static NDType promote(NDType a, NDType b) { return a > b ? a : b; }

static Value nd_binop(VM *vm, BinOp op, Value x, Value y) {
    if (op != BINOP_ADD && op != BINOP_SUB && op != BINOP_MUL && op != BINOP_TRUEDIV) return EMPTY_VAL;
    NDArray *A = ndarray_check(vm, x) ? (NDArray *)AS_OBJ(x) : NULL;
    NDArray *B = ndarray_check(vm, y) ? (NDArray *)AS_OBJ(y) : NULL;
    Value sx = x, sy = y;
    if (!A && !IS_NUMBER(x)) return EMPTY_VAL;
    if (!B && !IS_NUMBER(y)) return EMPTY_VAL;
    int64_t n = A ? A->shape[0] : B->shape[0];
    if (A && B && A->shape[0] != B->shape[0] && A->shape[0] != 1 && B->shape[0] != 1)
        vm_raise_kind(vm, ValueError, "operands could not be broadcast together with shapes (%lld,) (%lld,) ",
                      (long long)A->shape[0], (long long)B->shape[0]);
    if (A && B) n = A->shape[0] > B->shape[0] ? A->shape[0] : B->shape[0];
    /* numpy 2: Python scalars are weak; a float scalar lifts ints/bools to float64 */
    NDType dt;
    if (A && B) dt = promote(A->dtype, B->dtype);
    else {
        NDType ad = A ? A->dtype : B->dtype;
        Value s = A ? sy : sx;
        if (IS_FLOAT(s) && ad < ND_FLOAT32) dt = ND_FLOAT64;
        else if (IS_INT(s) && ad == ND_BOOL) dt = ND_INT64;
        else dt = ad;
    }
    if (op == BINOP_TRUEDIV && dt < ND_FLOAT32) dt = ND_FLOAT64;
    if (dt == ND_BOOL && op == BINOP_SUB)
        vm_raise_kind(vm, TypeError, "numpy boolean subtract, the `-` operator, is not supported");
    NDArray *R = ndarray_new(vm, dt, n);
    for (int64_t i = 0; i < n; i++) {
        if (dt == ND_INT64 || dt == ND_BOOL) {
            int64_t p = A ? get_i(A, A->shape[0] == 1 ? 0 : i) : AS_INTLIKE(sx);
            int64_t q = B ? get_i(B, B->shape[0] == 1 ? 0 : i) : AS_INTLIKE(sy);
            int64_t r = op == BINOP_ADD ? (int64_t)((uint64_t)p + (uint64_t)q)
                        : op == BINOP_SUB ? (int64_t)((uint64_t)p - (uint64_t)q)
                                          : (int64_t)((uint64_t)p * (uint64_t)q);
            if (dt == ND_BOOL && op == BINOP_ADD) r = p || q;
            if (dt == ND_BOOL && op == BINOP_MUL) r = p && q;
            set_num(R, i, 0, r, true);
        } else {
            double p = A ? get_f(A, A->shape[0] == 1 ? 0 : i) : AS_NUMBER(sx);
            double q = B ? get_f(B, B->shape[0] == 1 ? 0 : i) : AS_NUMBER(sy);
            double r;
            if (dt == ND_FLOAT32) {
                float fp = (float)p, fq = (float)q;
                r = op == BINOP_ADD ? fp + fq : op == BINOP_SUB ? fp - fq : op == BINOP_MUL ? fp * fq : fp / fq;
            } else {
                r = op == BINOP_ADD ? p + q : op == BINOP_SUB ? p - q : op == BINOP_MUL ? p * q : p / q;
            }
            set_num(R, i, r, 0, false);
        }
    }
    return OBJ_VAL(R);
}

/* a < b etc: elementwise, giving a bool array (compared as doubles, or
** as int64 when both sides are integral). */
static Value nd_compare(VM *vm, CmpOp op, Value x, Value y) {
    if (op > CMP_GE) return EMPTY_VAL;
    NDArray *A = ndarray_check(vm, x) ? (NDArray *)AS_OBJ(x) : NULL;
    NDArray *B = ndarray_check(vm, y) ? (NDArray *)AS_OBJ(y) : NULL;
    if ((!A && !IS_NUMBER(x)) || (!B && !IS_NUMBER(y))) return EMPTY_VAL;
    int64_t na = A ? A->shape[0] : 1, nb = B ? B->shape[0] : 1;
    if (na != nb && na != 1 && nb != 1)
        vm_raise_kind(vm, ValueError, "operands could not be broadcast together with shapes (%lld,) (%lld,) ",
                      (long long)na, (long long)nb);
    int64_t n = na > nb ? na : nb;
    if (A && !B) n = na;
    if (B && !A) n = nb;
    vm_push_root(vm, x);
    vm_push_root(vm, y);
    NDArray *R = ndarray_new(vm, ND_BOOL, n);
    vm_pop_roots(vm, 2);
    for (int64_t i = 0; i < n; i++) {
        double p = A ? get_f(A, na == 1 ? 0 : i) : AS_NUMBER(x);
        double q = B ? get_f(B, nb == 1 ? 0 : i) : AS_NUMBER(y);
        bool r = op == CMP_EQ ? p == q : op == CMP_NE ? p != q : op == CMP_LT ? p < q
               : op == CMP_LE ? p <= q : op == CMP_GT ? p > q : p >= q;
        set_num(R, i, 0, r, true);
    }
    return OBJ_VAL(R);
}

/* -a */
static Value nd_unop(VM *vm, UnOp op, Value x) {
    NDArray *A = (NDArray *)AS_OBJ(x);
    if (op != UNOP_NEG && op != UNOP_POS) return EMPTY_VAL;
    if (op == UNOP_NEG && A->dtype == ND_BOOL)
        vm_raise_kind(vm, TypeError, "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead.");
    NDArray *R = ndarray_new(vm, A->dtype, A->shape[0]);
    for (int64_t i = 0; i < A->shape[0]; i++) {
        if (A->dtype >= ND_FLOAT32) set_num(R, i, op == UNOP_NEG ? -get_f(A, i) : get_f(A, i), 0, false);
        else set_num(R, i, 0, op == UNOP_NEG ? (int64_t)(0 - (uint64_t)get_i(A, i)) : get_i(A, i), true);
    }
    return OBJ_VAL(R);
}

/* ---- indexing ---- */

static Value nd_getitem(VM *vm, Value self, Value key) {
    NDArray *a = (NDArray *)AS_OBJ(self);
    if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice) {
        int64_t start, stop, step;
        int64_t cnt = slice_indices(vm, (Slice *)AS_OBJ(key), a->shape[0], &start, &stop, &step);
        Value owner = IS_NONE(a->base) ? self : a->base;
        NDArray *v = ndarray_wrap(vm, a->dtype, a->data + start * a->strides[0], cnt, owner);
        v->strides[0] = a->strides[0] * step;
        return OBJ_VAL(v);
    }
    int64_t i = vm_to_index(vm, key);
    int64_t n = a->shape[0];
    if (i < 0) i += n;
    if (i < 0 || i >= n)
        vm_raise_kind(vm, IndexError, "index %lld is out of bounds for axis 0 with size %lld",
                      (long long)(i < 0 ? i - n : i), (long long)n);
    return get_val(a, i);
}

static void nd_setitem(VM *vm, Value self, Value key, Value value) {
    NDArray *a = (NDArray *)AS_OBJ(self);
    if (IS_EMPTY(value)) vm_raise_kind(vm, ValueError, "cannot delete array elements");
    if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice) {
        int64_t start, stop, step;
        int64_t cnt = slice_indices(vm, (Slice *)AS_OBJ(key), a->shape[0], &start, &stop, &step);
        for (int64_t k = 0; k < cnt; k++) set_val(vm, a, start + k * step, value);
        return;
    }
    int64_t i = vm_to_index(vm, key);
    int64_t n = a->shape[0];
    if (i < 0) i += n;
    if (i < 0 || i >= n)
        vm_raise_kind(vm, IndexError, "index %lld is out of bounds for axis 0 with size %lld",
                      (long long)(i < 0 ? i - n : i), (long long)n);
    set_val(vm, a, i, value);
}

static int64_t nd_len(VM *vm, Value self) {
    (void)vm;
    return ((NDArray *)AS_OBJ(self))->shape[0];
}

static Value nd_getattr(VM *vm, Value self, Str *name) {
    NDArray *a = (NDArray *)AS_OBJ(self);
    const char *s = name->chars;
    if (!strcmp(s, "ndim")) return INT_VAL(a->ndim);
    if (!strcmp(s, "size")) return INT_VAL(a->shape[0]);
    if (!strcmp(s, "itemsize")) return INT_VAL((int64_t)ndarray_itemsize(a->dtype));
    if (!strcmp(s, "nbytes")) return INT_VAL(a->shape[0] * (int64_t)ndarray_itemsize(a->dtype));
    if (!strcmp(s, "shape")) {
        Tuple *t = tuple_new(vm, 1);
        t->items[0] = INT_VAL(a->shape[0]);
        return OBJ_VAL(t);
    }
    if (!strcmp(s, "dtype")) return OBJ_VAL(str_cstr(vm, dt_name(a->dtype)));
    return EMPTY_VAL;
}

/* a.sum() / a.min() / a.max() / a.mean() over the whole 1-D array. */
static Value reduce(VM *vm, int argc, Value *argv, Dict *kwargs, const char *name, int kind) {
    kw_done(vm, name, kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "%s() takes no arguments in gpy's numpy", name);
    NDArray *a = (NDArray *)AS_OBJ(argv[0]);
    int64_t n = a->shape[0];
    if (n == 0 && (kind == 1 || kind == 2))
        vm_raise_kind(vm, ValueError, "zero-size array to reduction operation %s which has no identity",
                      kind == 1 ? "minimum" : "maximum");
    bool flt = a->dtype >= ND_FLOAT32 || kind == 3;
    if (!flt) {
        int64_t acc = kind == 0 ? 0 : get_i(a, 0);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = get_i(a, i);
            if (kind == 0) acc = (int64_t)((uint64_t)acc + (uint64_t)v);
            else if (kind == 1 ? v < acc : v > acc) acc = v;
        }
        if (a->dtype == ND_BOOL && kind != 0) return BOOL_VAL(acc);
        return INT_VAL(acc);
    }
    double acc = (kind == 0 || kind == 3) ? 0 : get_f(a, 0);
    for (int64_t i = 0; i < n; i++) {
        double v = get_f(a, i);
        if (kind == 0 || kind == 3) acc += v;
        else if (isnan(v) || (kind == 1 ? v < acc : v > acc)) acc = v;
    }
    if (kind == 3) acc = n ? acc / (double)n : NAN;
    if (a->dtype == ND_FLOAT32) acc = (float)acc;
    return FLOAT_VAL(acc);
}
static Value m_sum(VM *vm, int argc, Value *argv, Dict *kw) { return reduce(vm, argc, argv, kw, "sum", 0); }
static Value m_min(VM *vm, int argc, Value *argv, Dict *kw) { return reduce(vm, argc, argv, kw, "min", 1); }
static Value m_max(VM *vm, int argc, Value *argv, Dict *kw) { return reduce(vm, argc, argv, kw, "max", 2); }
static Value m_mean(VM *vm, int argc, Value *argv, Dict *kw) { return reduce(vm, argc, argv, kw, "mean", 3); }

/* ---- module functions ---- */

static Value mk_fill(VM *vm, int argc, Value *argv, Dict *kwargs, const char *fname, double fill) {
    Value dtv = kw_take(vm, kwargs, "dtype");
    kw_done(vm, fname, kwargs);
    arg_between(vm, fname, argc, 1, 2);
    if (argc == 2) dtv = argv[1];
    int64_t n = vm_to_index(vm, argv[0]);
    if (n < 0) vm_raise_kind(vm, ValueError, "negative dimensions are not allowed");
    NDArray *a = ndarray_new(vm, parse_dtype(vm, dtv, ND_FLOAT64), n);
    if (fill != 0)
        for (int64_t i = 0; i < n; i++) set_num(a, i, fill, 0, false);
    return OBJ_VAL(a);
}
static Value f_zeros(VM *vm, int argc, Value *argv, Dict *kw) { return mk_fill(vm, argc, argv, kw, "zeros", 0); }
static Value f_ones(VM *vm, int argc, Value *argv, Dict *kw) { return mk_fill(vm, argc, argv, kw, "ones", 1); }

static Value f_arange(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtv = kw_take(vm, kwargs, "dtype");
    kw_done(vm, "arange", kwargs);
    arg_between(vm, "arange", argc, 1, 3);
    Value start = INT_VAL(0), stop = argv[0], step = INT_VAL(1);
    if (argc >= 2) { start = argv[0]; stop = argv[1]; }
    if (argc == 3) step = argv[2];
    if (!IS_NUMBER(start) || !IS_NUMBER(stop) || !IS_NUMBER(step))
        vm_raise_kind(vm, TypeError, "arange() arguments must be numbers");
    bool anyf = IS_FLOAT(start) || IS_FLOAT(stop) || IS_FLOAT(step);
    double s0 = AS_NUMBER(start), s1 = AS_NUMBER(stop), st = AS_NUMBER(step);
    if (st == 0) vm_raise_kind(vm, ZeroDivisionError, "division by zero");
    double cnt = ceil((s1 - s0) / st);
    int64_t n = cnt > 0 ? (int64_t)cnt : 0;
    NDArray *a = ndarray_new(vm, parse_dtype(vm, dtv, anyf ? ND_FLOAT64 : ND_INT64), n);
    for (int64_t i = 0; i < n; i++) {
        if (anyf) set_num(a, i, s0 + (double)i * st, 0, false);
        else set_num(a, i, 0, AS_INTLIKE(start) + i * AS_INTLIKE(step), true);
    }
    return OBJ_VAL(a);
}

static Value f_array(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value dtv = kw_take(vm, kwargs, "dtype");
    kw_done(vm, "array", kwargs);
    arg_between(vm, "array", argc, 1, 2);
    if (argc == 2) dtv = argv[1];
    Value src = argv[0];
    if (ndarray_check(vm, src)) {
        NDArray *s = (NDArray *)AS_OBJ(src);
        NDArray *a = ndarray_new(vm, parse_dtype(vm, dtv, s->dtype), s->shape[0]);
        for (int64_t i = 0; i < s->shape[0]; i++) {
            if (s->dtype >= ND_FLOAT32) set_num(a, i, get_f(s, i), 0, false);
            else set_num(a, i, 0, get_i(s, i), true);
        }
        return OBJ_VAL(a);
    }
    Value *items;
    int64_t n;
    if (IS_LIST(vm, src)) { items = AS_LIST(src)->items; n = AS_LIST(src)->len; }
    else if (IS_TUPLE(vm, src)) { items = AS_TUPLE(src)->items; n = AS_TUPLE(src)->len; }
    else vm_raise_kind(vm, TypeError, "gpy's numpy.array() needs a list or tuple");
    NDType inf = ND_BOOL;
    for (int64_t i = 0; i < n; i++) {
        Value v = items[i];
        if (IS_FLOAT(v)) inf = ND_FLOAT64;
        else if (IS_INT(v)) { if (inf < ND_INT64) inf = ND_INT64; }
        else if (!IS_BOOL(v)) vm_raise_kind(vm, TypeError, "gpy's numpy.array() supports 1-D numbers only");
    }
    if (n == 0) inf = ND_FLOAT64;
    NDType dt = parse_dtype(vm, dtv, inf);
    NDArray *a = ndarray_new(vm, dt, n);
    for (int64_t i = 0; i < n; i++) set_val(vm, a, i, items[i]);
    return OBJ_VAL(a);
}

/* np.float32(x) etc: scalar constructors returning plain floats/ints. */
static Value dt_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    kw_done(vm, cls->cname, kwargs);
    arg_between(vm, cls->cname, argc, 0, 1);
    Value v = argc ? argv[0] : INT_VAL(0);
    if (!IS_NUMBER(v)) vm_raise_kind(vm, TypeError, "%s() argument must be a number", cls->cname);
    if (cls == t_dtype_f32) return FLOAT_VAL((double)(float)AS_NUMBER(v));
    if (cls == t_dtype_f64) return FLOAT_VAL(AS_NUMBER(v));
    if (cls == t_dtype_bool) return BOOL_VAL(AS_NUMBER(v) != 0);
    return INT_VAL(IS_FLOAT(v) ? (int64_t)AS_FLOAT(v) : AS_INTLIKE(v));
}

Module *stdlib_numpy(VM *vm) {
    if (!t_ndarray) {
        t_ndarray = type_new_builtin(vm, "ndarray", vm->t_object, 0);
        t_ndarray->repr = nd_repr;
        t_ndarray->str = nd_str;
        t_ndarray->binop = nd_binop;
        t_ndarray->compare = nd_compare;
        t_ndarray->unop = nd_unop;
        t_ndarray->getitem = nd_getitem;
        t_ndarray->setitem = nd_setitem;
        t_ndarray->len = nd_len;
        t_ndarray->getattr = nd_getattr;
        t_ndarray->mark = nd_mark;
        t_ndarray->finalize = nd_finalize;
        type_add_method(vm, t_ndarray, "sum", m_sum);
        type_add_method(vm, t_ndarray, "min", m_min);
        type_add_method(vm, t_ndarray, "max", m_max);
        type_add_method(vm, t_ndarray, "mean", m_mean);
        t_dtype_f32 = type_new_builtin(vm, "float32", vm->t_object, 0);
        t_dtype_f64 = type_new_builtin(vm, "float64", vm->t_object, 0);
        t_dtype_i64 = type_new_builtin(vm, "int64", vm->t_object, 0);
        t_dtype_bool = type_new_builtin(vm, "bool", vm->t_object, 0);
        t_dtype_f32->new_ = t_dtype_f64->new_ = t_dtype_i64->new_ = t_dtype_bool->new_ = dt_new;
    }
    Module *m = module_new(vm, str_cstr(vm, "numpy"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "array", f_array);
    module_add_function(vm, m, "zeros", f_zeros);
    module_add_function(vm, m, "ones", f_ones);
    module_add_function(vm, m, "empty", f_zeros);
    module_add_function(vm, m, "arange", f_arange);
    dict_set_cstr(vm, m->dict, "ndarray", OBJ_VAL(t_ndarray));
    dict_set_cstr(vm, m->dict, "float32", OBJ_VAL(t_dtype_f32));
    dict_set_cstr(vm, m->dict, "float64", OBJ_VAL(t_dtype_f64));
    dict_set_cstr(vm, m->dict, "int64", OBJ_VAL(t_dtype_i64));
    dict_set_cstr(vm, m->dict, "bool_", OBJ_VAL(t_dtype_bool));
    vm_pop_roots(vm, 1);
    return m;
}

/* ---- TEMPORARY lead shims: the new ndarray.h API over this 1-D module, so
** the kernel compiler and the cuda module link while the N-d rewrite lands.
** The N-d module replaces this whole file. ---- */
const char *nd_dtype_name(NDType dt) { return dt_name(dt); }
int nd_dtype_try(VM *vm, Value v) {
    if (IS_OBJ(v)) {
        Obj *o = AS_OBJ(v);
        if (o == (Obj *)t_dtype_f32) return ND_FLOAT32;
        if (o == (Obj *)t_dtype_f64 || o == (Obj *)vm->t_float) return ND_FLOAT64;
        if (o == (Obj *)t_dtype_i64 || o == (Obj *)vm->t_int) return ND_INT64;
        if (o == (Obj *)t_dtype_bool || o == (Obj *)vm->t_bool) return ND_BOOL;
        if (IS_STR(vm, v)) {
            const char *s = AS_STR(v)->chars;
            if (!strcmp(s, "float32")) return ND_FLOAT32;
            if (!strcmp(s, "float64") || !strcmp(s, "float")) return ND_FLOAT64;
            if (!strcmp(s, "int64") || !strcmp(s, "int")) return ND_INT64;
            if (!strcmp(s, "bool")) return ND_BOOL;
        }
    }
    return -1;
}
NDType nd_dtype_from_value(VM *vm, Value v) { return parse_dtype(vm, v, ND_FLOAT64); }
Value nd_dtype_object(VM *vm, NDType dt) { return nd_scalar_type(vm, dt); }
Value nd_scalar_type(VM *vm, NDType dt) {
    (void)vm;
    switch (dt) {
    case ND_FLOAT32: return t_dtype_f32 ? OBJ_VAL(t_dtype_f32) : NONE_VAL;
    case ND_INT64: return t_dtype_i64 ? OBJ_VAL(t_dtype_i64) : NONE_VAL;
    case ND_BOOL: return t_dtype_bool ? OBJ_VAL(t_dtype_bool) : NONE_VAL;
    default: return t_dtype_f64 ? OBJ_VAL(t_dtype_f64) : NONE_VAL;
    }
}
void nd_update_flags(NDArray *a) {
    int64_t st = (int64_t)nd_itemsize(a->dtype);
    bool c = true;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] != 1 && a->strides[i] != st) c = false;
        st *= a->shape[i];
    }
    a->flags = (c ? ND_C_CONTIGUOUS : 0) | ND_WRITEABLE;
}
NDArray *nd_wrap(VM *vm, NDType dt, void *data, int ndim, const int64_t *shape,
                 const int64_t *strides, Value base) {
    vm_push_root(vm, base);
    NDArray *a = gc_alloc_obj(vm, t_ndarray, sizeof(NDArray) + 2 * (size_t)ndim * sizeof(int64_t));
    vm_pop_roots(vm, 1);
    a->shape = a->dims;
    a->strides = a->dims + ndim;
    a->dtype = dt;
    a->ndim = ndim;
    a->size = 1;
    int64_t st = (int64_t)nd_itemsize(dt);
    for (int i = ndim - 1; i >= 0; i--) {
        a->shape[i] = shape[i];
        a->strides[i] = strides ? strides[i] : st;
        st *= shape[i];
        a->size *= shape[i];
    }
    a->data = data;
    a->base = base;
    nd_update_flags(a);
    return a;
}
NDArray *nd_new(VM *vm, NDType dt, int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    size_t bytes = (size_t)n * nd_itemsize(dt);
    char *data = gc_malloc(vm, bytes ? bytes : 1);
    memset(data, 0, bytes ? bytes : 1);
    NDArray *a = nd_wrap(vm, dt, data, ndim, shape, NULL, NONE_VAL);
    a->nbytes_owned = bytes ? bytes : 1;
    return a;
}
NDArray *nd_copy(VM *vm, NDArray *a) {
    NDArray *c = nd_new(vm, a->dtype, a->ndim, a->shape);
    size_t is = nd_itemsize(a->dtype);
    int64_t idx[ND_MAXDIM] = {0};
    for (int64_t k = 0; k < a->size; k++) {
        char *p = a->data;
        for (int d = 0; d < a->ndim; d++) p += idx[d] * a->strides[d];
        memcpy(c->data + (size_t)k * is, p, is);
        for (int d = a->ndim - 1; d >= 0; d--) {
            if (++idx[d] < a->shape[d]) break;
            idx[d] = 0;
        }
    }
    return c;
}
NDArray *nd_from_value(VM *vm, Value v, int dt) {
    if (nd_check(vm, v) && (dt < 0 || ((NDArray *)AS_OBJ(v))->dtype == (NDType)dt))
        return (NDArray *)AS_OBJ(v);
    Value argv[2] = {v, dt < 0 ? NONE_VAL : nd_scalar_type(vm, (NDType)dt)};
    return (NDArray *)AS_OBJ(f_array(vm, 2, argv, NULL));
}
double nd_get_double(NDArray *a, int64_t flat) { return get_f(a, flat); }
