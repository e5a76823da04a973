/*
** nd_reduce.c — reductions over axes (sum prod min max mean std var argmin
** argmax any all, cumsum cumprod) as functions and methods, with axis= and
** keepdims=; float sums use numpy's pairwise summation so that results
** round like numpy's. Also the comparisons of whole arrays (allclose,
** isclose, array_equal).
*/
#include "nd_priv.h"

typedef enum Red { R_SUM, R_PROD, R_MIN, R_MAX, R_MEAN, R_VAR, R_STD, R_ARGMIN, R_ARGMAX, R_ANY, R_ALL, R__COUNT } Red;
static const char *const red_names[R__COUNT] = {"sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all"};

/* numpy's pairwise summation (blocks of 8 partial sums up to 128 elements). */
#define PAIRWISE(T, NAME)                                                              \
    static T NAME(const T *a, int64_t n) {                                             \
        if (n < 8) {                                                                   \
            T r = (T)0;                                                                \
            for (int64_t i = 0; i < n; i++) r += a[i];                                  \
            return r;                                                                  \
        }                                                                              \
        if (n <= 128) {                                                                \
            T r[8];                                                                    \
            for (int j = 0; j < 8; j++) r[j] = a[j];                                   \
            int64_t i;                                                                 \
            for (i = 8; i < n - (n % 8); i += 8)                                       \
                for (int j = 0; j < 8; j++) r[j] += a[i + j];                          \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])); \
            for (; i < n; i++) res += a[i];                                            \
            return res;                                                                \
        }                                                                              \
        int64_t n2 = n / 2;                                                            \
        n2 -= n2 % 8;                                                                  \
        return NAME(a, n2) + NAME(a + n2, n - n2);                                     \
    }
PAIRWISE(float, pw_f32)
PAIRWISE(double, pw_f64)

/* Which axes are reduced (from axis=None / int / tuple). */
static void parse_axes(VM *vm, Value axisv, int ndim, bool *red) {
    for (int i = 0; i < ndim; i++) red[i] = IS_EMPTY(axisv) || IS_NONE(axisv);
    if (IS_EMPTY(axisv) || IS_NONE(axisv)) return;
    Value *items = &axisv;
    int64_t n = 1;
    if (IS_TUPLE(vm, axisv)) { items = AS_TUPLE(axisv)->items; n = AS_TUPLE(axisv)->len; }
    for (int64_t i = 0; i < n; i++) {
        int64_t ax = vm_to_index(vm, items[i]);
        if (ax < -ndim || ax >= ndim)
            vm_raise_kind(vm, ValueError, "axis %lld is out of bounds for array of dimension %d", (long long)ax, ndim);
        if (ax < 0) ax += ndim;
        if (red[ax]) vm_raise_kind(vm, ValueError, "duplicate value in 'axis'");
        red[ax] = true;
    }
}

/* The array viewed with kept axes first and reduced axes last, as a
** C-contiguous buffer of dtype ct: rows of `inner` elements, `outer` rows.
** out_shape gets the result shape (keepdims or not). */
static NDArray *rows_of(VM *vm, NDArray *a, const bool *red, bool keepdims, NDType ct, int64_t *outer,
                        int64_t *inner, int *out_nd, int64_t *out_shape) {
    int64_t sh[ND_MAXDIM], st[ND_MAXDIM];
    int k = 0;
    *outer = 1;
    *inner = 1;
    *out_nd = 0;
    for (int i = 0; i < a->ndim; i++) {
        if (!red[i]) {
            sh[k] = a->shape[i];
            st[k++] = a->strides[i];
            *outer *= a->shape[i];
            out_shape[(*out_nd)++] = a->shape[i];
        } else if (keepdims) out_shape[(*out_nd)++] = 1;
    }
    for (int i = 0; i < a->ndim; i++)
        if (red[i]) {
            sh[k] = a->shape[i];
            st[k++] = a->strides[i];
            *inner *= a->shape[i];
        }
    NDArray *v = nd_view(vm, a, a->data, a->ndim, sh, st);
    if (v->dtype == ct && (v->flags & ND_C_CONTIGUOUS)) return v;
    vm_push_root(vm, OBJ_VAL(v));
    NDArray *c = nd_astype(vm, v, ct);
    vm_pop_roots(vm, 1);
    return c;
}

static NDType sum_type(NDType t) {
    if (t == ND_BOOL || nd_is_signed(t)) return ND_INT64;
    if (nd_is_unsigned(t)) return ND_UINT64;
    return t;
}

/* One reduction r over the axes of a; ddof for var/std. */
static Value reduce(VM *vm, Red r, NDArray *a, Value axisv, bool keepdims, int64_t ddof, int dtype_override) {
    bool red[ND_MAXDIM];
    if ((r == R_ARGMIN || r == R_ARGMAX) && !IS_EMPTY(axisv) && !IS_NONE(axisv) && !IS_INTLIKE(axisv) && !nd_is_scalar(vm, axisv))
        vm_raise_kind(vm, TypeError, "'tuple' object cannot be interpreted as an integer");
    parse_axes(vm, axisv, a->ndim, red);
    NDType in = a->dtype, ct, ot;
    if (nd_is_complex(in) || (dtype_override >= 0 && nd_is_complex((NDType)dtype_override))) {
        if (r != R_SUM && r != R_PROD && r != R_MEAN)
            vm_raise_kind(vm, TypeError, "gpy's numpy has no complex %s", red_names[r]);
        NDType t = dtype_override >= 0 ? (NDType)dtype_override : in;
        if (!nd_is_complex(t)) t = ND_COMPLEX128;
        int64_t outer, inner, oshape[ND_MAXDIM];
        int ond;
        vm_push_root(vm, OBJ_VAL(a));
        NDArray *C = rows_of(vm, a, red, keepdims, t, &outer, &inner, &ond, oshape);
        vm_push_root(vm, OBJ_VAL(C));
        NDArray *R = nd_new(vm, t, ond, oshape);
        vm_push_root(vm, OBJ_VAL(R));
        nd_complex_reduce_rows(r == R_SUM ? 0 : r == R_PROD ? 1 : 2, t, C->data, outer, inner, R->data);
        vm_pop_roots(vm, 3);
        return nd_result(vm, R);
    }
    switch (r) {
    case R_SUM: case R_PROD:
        ot = dtype_override >= 0 ? (NDType)dtype_override : sum_type(in);
        ct = ot == ND_FLOAT16 ? ND_FLOAT32 : nd_is_float(ot) ? ot : nd_is_unsigned(ot) ? ND_UINT64 : ND_INT64;
        break;
    case R_MEAN: case R_VAR: case R_STD:
        ot = nd_is_float(in) ? in : ND_FLOAT64;
        if (dtype_override >= 0) ot = (NDType)dtype_override;
        ct = ot == ND_FLOAT32 || ot == ND_FLOAT16 ? ND_FLOAT32 : ND_FLOAT64;
        break;
    case R_MIN: case R_MAX:
        ot = in;
        ct = nd_is_float(in) ? ND_FLOAT64 : nd_is_unsigned(in) ? ND_UINT64 : ND_INT64;
        break;
    case R_ARGMIN: case R_ARGMAX:
        ot = ND_INT64;
        ct = nd_is_float(in) ? ND_FLOAT64 : nd_is_unsigned(in) ? ND_UINT64 : ND_INT64;
        break;
    default:
        ot = ND_BOOL;
        ct = ND_BOOL;
        break;
    }
    int64_t outer, inner, oshape[ND_MAXDIM];
    int ond;
    if (ct == ND_BOOL) {
        NDArray *t = nd_new(vm, ND_BOOL, a->ndim, a->shape);
        vm_push_root(vm, OBJ_VAL(t));
        nd_assign(vm, t, a); /* casting to bool gives != 0 */
        a = t;
    } else vm_push_root(vm, OBJ_VAL(a));
    NDArray *C = rows_of(vm, a, red, keepdims, ct, &outer, &inner, &ond, oshape);
    vm_push_root(vm, OBJ_VAL(C));
    if (inner == 0 && (r == R_MIN || r == R_MAX || r == R_ARGMIN || r == R_ARGMAX)) {
        if (r == R_ARGMIN || r == R_ARGMAX) vm_raise_kind(vm, ValueError, "attempt to get %s of an empty sequence", red_names[r]);
        vm_raise_kind(vm, ValueError, "zero-size array to reduction operation %s which has no identity",
                      r == R_MIN ? "minimum" : "maximum");
    }
    NDType rt = (r == R_MIN || r == R_MAX) ? ct : (r == R_MEAN || r == R_VAR || r == R_STD) ? ct : ot == ND_FLOAT16 ? ND_FLOAT32 : ot;
    if (r == R_SUM || r == R_PROD) rt = ct;
    NDArray *R = nd_new(vm, rt, ond, oshape);
    vm_push_root(vm, OBJ_VAL(R));
    size_t cs = nd_itemsize(ct);
    for (int64_t o = 0; o < outer; o++) {
        const char *row = C->data + (size_t)(o * inner) * cs;
        char *dst = R->data + (size_t)o * nd_itemsize(rt);
        int64_t n = inner;
        switch (r) {
        case R_SUM: case R_MEAN: case R_VAR: case R_STD:
            if (ct == ND_FLOAT32) {
                float s = pw_f32((const float *)row, n);
                if (r == R_SUM) { *(float *)dst = s; break; }
                float mean = s / (float)n;
                if (r == R_MEAN) { *(float *)dst = mean; break; }
                float *tmp = (float *)row; /* C is our own copy or contiguous: do not modify */
                double acc = 0;
                (void)tmp;
                /* var: mean of squared deviations, in float32 like numpy */
                float sq[128];
                int64_t i = 0;
                float total = 0;
                while (i < n) {
                    int64_t m = n - i < 128 ? n - i : 128;
                    for (int64_t j = 0; j < m; j++) {
                        float d = ((const float *)row)[i + j] - mean;
                        sq[j] = d * d;
                    }
                    total += pw_f32(sq, m);
                    i += m;
                }
                acc = total;
                float var = (float)(acc / (double)(n - ddof));
                if (n - ddof <= 0) var = NAN;
                *(float *)dst = r == R_STD ? sqrtf(var) : var;
            } else if (ct == ND_FLOAT64) {
                double s = pw_f64((const double *)row, n);
                if (r == R_SUM) { *(double *)dst = s; break; }
                double mean = s / (double)n;
                if (r == R_MEAN) { *(double *)dst = mean; break; }
                double sq[128], total = 0;
                int64_t i = 0;
                while (i < n) {
                    int64_t m = n - i < 128 ? n - i : 128;
                    for (int64_t j = 0; j < m; j++) {
                        double d = ((const double *)row)[i + j] - mean;
                        sq[j] = d * d;
                    }
                    total += pw_f64(sq, m);
                    i += m;
                }
                double var = n - ddof > 0 ? total / (double)(n - ddof) : NAN;
                *(double *)dst = r == R_STD ? sqrt(var) : var;
            } else {
                uint64_t s = 0;
                for (int64_t i = 0; i < n; i++) s += ((const uint64_t *)row)[i];
                *(uint64_t *)dst = s;
            }
            break;
        case R_PROD:
            if (ct == ND_FLOAT32) {
                float p = 1;
                for (int64_t i = 0; i < n; i++) p *= ((const float *)row)[i];
                *(float *)dst = p;
            } else if (ct == ND_FLOAT64) {
                double p = 1;
                for (int64_t i = 0; i < n; i++) p *= ((const double *)row)[i];
                *(double *)dst = p;
            } else {
                uint64_t p = 1;
                for (int64_t i = 0; i < n; i++) p *= ((const uint64_t *)row)[i];
                *(uint64_t *)dst = p;
            }
            break;
        case R_MIN: case R_MAX: case R_ARGMIN: case R_ARGMAX: {
            bool mx = r == R_MAX || r == R_ARGMAX;
            int64_t best = 0;
            if (ct == ND_FLOAT64) {
                const double *x = (const double *)row;
                for (int64_t i = 1; i < n && !isnan(x[best]); i++)
                    if (isnan(x[i]) || (mx ? x[i] > x[best] : x[i] < x[best])) best = i;
            } else if (ct == ND_UINT64) {
                const uint64_t *x = (const uint64_t *)row;
                for (int64_t i = 1; i < n; i++)
                    if (mx ? x[i] > x[best] : x[i] < x[best]) best = i;
            } else {
                const int64_t *x = (const int64_t *)row;
                for (int64_t i = 1; i < n; i++)
                    if (mx ? x[i] > x[best] : x[i] < x[best]) best = i;
            }
            if (r == R_ARGMIN || r == R_ARGMAX) *(int64_t *)dst = best;
            else memcpy(dst, row + (size_t)best * cs, cs);
            break;
        }
        case R_ANY: case R_ALL: {
            bool res = r == R_ALL;
            for (int64_t i = 0; i < n; i++)
                if ((row[i] != 0) != (r == R_ALL)) { res = !res; break; }
            *(uint8_t *)dst = res;
            break;
        }
        default: break;
        }
    }
    if (rt != ot) R = nd_astype(vm, R, ot);
    vm_pop_roots(vm, 3);
    return nd_result(vm, R);
}

/* cumsum / cumprod along axis (None: flattened). */
static Value cumulate(VM *vm, bool prod, NDArray *a, Value axisv) {
    NDType ot = sum_type(a->dtype);
    NDType ct = ot == ND_FLOAT16 ? ND_FLOAT32 : nd_is_float(ot) ? ot : nd_is_unsigned(ot) ? ND_UINT64 : ND_INT64;
    vm_push_root(vm, OBJ_VAL(a));
    if (IS_EMPTY(axisv) || IS_NONE(axisv)) {
        NDArray *c = nd_copy(vm, a);
        a = nd_wrap(vm, c->dtype, c->data, 1, &c->size, NULL, OBJ_VAL(c));
        axisv = INT_VAL(0);
    }
    vm_push_root(vm, OBJ_VAL(a));
    bool red[ND_MAXDIM];
    parse_axes(vm, axisv, a->ndim, red);
    int64_t outer, inner, oshape[ND_MAXDIM];
    int ond;
    NDArray *C = rows_of(vm, a, red, false, ct, &outer, &inner, &ond, oshape);
    if (C->data == a->data) C = nd_copy(vm, C);
    vm_push_root(vm, OBJ_VAL(C));
    for (int64_t o = 0; o < outer; o++) {
        char *row = C->data + (size_t)(o * inner) * nd_itemsize(ct);
        if (ct == ND_FLOAT32) {
            float *x = (float *)row;
            for (int64_t i = 1; i < inner; i++) x[i] = prod ? x[i - 1] * x[i] : x[i - 1] + x[i];
        } else if (ct == ND_FLOAT64) {
            double *x = (double *)row;
            for (int64_t i = 1; i < inner; i++) x[i] = prod ? x[i - 1] * x[i] : x[i - 1] + x[i];
        } else {
            uint64_t *x = (uint64_t *)row;
            for (int64_t i = 1; i < inner; i++) x[i] = prod ? x[i - 1] * x[i] : x[i - 1] + x[i];
        }
    }
    /* C holds the permuted layout (kept axes, then the axis): scatter back */
    NDArray *R = nd_new(vm, ot, a->ndim, a->shape);
    vm_push_root(vm, OBJ_VAL(R));
    int64_t sh[ND_MAXDIM], st[ND_MAXDIM];
    int k = 0, ax = 0;
    for (int i = 0; i < a->ndim; i++)
        if (!red[i]) { sh[k] = R->shape[i]; st[k++] = R->strides[i]; } else ax = i;
    sh[k] = R->shape[ax];
    st[k] = R->strides[ax];
    NDArray *dst = nd_view(vm, R, R->data, a->ndim, sh, st);
    vm_push_root(vm, OBJ_VAL(dst));
    NDArray *src = nd_wrap(vm, ct, C->data, a->ndim, sh, NULL, OBJ_VAL(C));
    nd_assign(vm, dst, src);
    vm_pop_roots(vm, 5);
    return OBJ_VAL(R);
}

/* The out= argument (absent/None gives NULL). */
static NDArray *out_arg(VM *vm, Value outv) {
    if (IS_EMPTY(outv) || IS_NONE(outv)) return NULL;
    if (!nd_check(vm, outv)) vm_raise_kind(vm, TypeError, "return arrays must be of ArrayType");
    NDArray *out = ND_AS(outv);
    if (!(out->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "output array is read-only");
    return out;
}

/* Copies a reduction's result res into out (same shape, unsafe casting like
** numpy's reductions) and returns out. */
static Value store_out(VM *vm, const char *op, Value res, NDArray *out) {
    NDArray *R = nd_from_value(vm, res, -1);
    vm_push_root(vm, OBJ_VAL(R));
    if (R->ndim != out->ndim)
        vm_raise_kind(vm, ValueError, "output parameter for reduction operation %s has the wrong number of dimensions: Found %d but expected %d",
                      op, out->ndim, R->ndim);
    for (int d = 0; d < R->ndim; d++)
        if (R->shape[d] != out->shape[d]) {
            char s1[400], s2[400];
            nd_shape_str(s1, sizeof s1, out->ndim, out->shape);
            nd_shape_str(s2, sizeof s2, R->ndim, R->shape);
            vm_raise_kind(vm, ValueError, "output operand of shape %s does not match the result shape %s", s1, s2);
        }
    nd_assign(vm, out, R);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(out);
}

/* Shared argument parsing of the reductions (functions and methods). */
static Value red_call(VM *vm, Red r, int argc, Value *argv, Dict *kw) {
    static const char *const ufunc_of[R__COUNT] = {"add", "multiply", "minimum", "maximum", "add", "add", "add",
                                                   "argmin", "argmax", "logical_or", "logical_and"};
    Value axisv = kw_take(vm, kw, "axis"), kd = kw_take(vm, kw, "keepdims");
    Value dd = kw_take(vm, kw, "ddof"), dtv = kw_take(vm, kw, "dtype");
    Value outv = kw_take(vm, kw, "out");
    kw_done(vm, red_names[r], kw);
    arg_between(vm, red_names[r], argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    NDArray *out = out_arg(vm, outv);
    if (out && (r == R_ARGMIN || r == R_ARGMAX) && (nd_is_float(out->dtype) || out->dtype == ND_UINT64))
        vm_raise_kind(vm, TypeError, "Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'",
                      nd_dtype_name(out->dtype));
    NDArray *a = nd_from_value(vm, argv[0], -1);
    int dt = IS_EMPTY(dtv) || IS_NONE(dtv) ? -1 : (int)nd_dtype_from_value(vm, dtv);
    Value res = reduce(vm, r, a, axisv, !IS_EMPTY(kd) && vm_truthy(vm, kd), IS_EMPTY(dd) ? 0 : vm_to_index(vm, dd), dt);
    if (!out) return res;
    vm_push_root(vm, res);
    res = store_out(vm, ufunc_of[r], res, out);
    vm_pop_roots(vm, 1);
    return res;
}
static Value f_red(VM *vm, int argc, Value *argv, Dict *kw) {
    return red_call(vm, (Red)AS_INT(vm_current_native(vm)->data), argc, argv, kw);
}
#define RED_METHOD(NAME, R) \
    static Value m_##NAME(VM *vm, int argc, Value *argv, Dict *kw) { return red_call(vm, R, argc, argv, kw); }
RED_METHOD(sum, R_SUM)
RED_METHOD(prod, R_PROD)
RED_METHOD(min, R_MIN)
RED_METHOD(max, R_MAX)
RED_METHOD(mean, R_MEAN)
RED_METHOD(var, R_VAR)
RED_METHOD(std, R_STD)
RED_METHOD(argmin, R_ARGMIN)
RED_METHOD(argmax, R_ARGMAX)
RED_METHOD(any, R_ANY)
RED_METHOD(all, R_ALL)

static Value cum_call(VM *vm, bool prod, int argc, Value *argv, Dict *kw) {
    const char *name = prod ? "cumprod" : "cumsum";
    Value axisv = kw_take(vm, kw, "axis"), outv = kw_take(vm, kw, "out");
    kw_done(vm, name, kw);
    arg_between(vm, name, argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    NDArray *out = out_arg(vm, outv);
    Value res = cumulate(vm, prod, nd_from_value(vm, argv[0], -1), axisv);
    if (!out) return res;
    vm_push_root(vm, res);
    res = store_out(vm, prod ? "multiply" : "add", res, out);
    vm_pop_roots(vm, 1);
    return res;
}
static Value f_cumsum(VM *vm, int argc, Value *argv, Dict *kw) { return cum_call(vm, false, argc, argv, kw); }
static Value f_cumprod(VM *vm, int argc, Value *argv, Dict *kw) { return cum_call(vm, true, argc, argv, kw); }

/* isclose elementwise: |a - b| <= atol + rtol * |b| (nan never close). */
static NDArray *isclose(VM *vm, Value x, Value y, double rtol, double atol, bool equal_nan) {
    NDArray *A = nd_from_value(vm, x, -1);
    vm_push_root(vm, OBJ_VAL(A));
    NDArray *B = nd_from_value(vm, y, -1);
    vm_push_root(vm, OBJ_VAL(B));
    int64_t shape[ND_MAXDIM], sa[ND_MAXDIM], sb[ND_MAXDIM], idx[ND_MAXDIM] = {0};
    int nd = nd_bcast_shape(vm, A, B, shape);
    nd_bcast_strides(A, nd, shape, sa);
    nd_bcast_strides(B, nd, shape, sb);
    NDArray *R = nd_new(vm, ND_BOOL, nd, shape);
    char *pa = A->data, *pb = B->data;
    for (int64_t i = 0; i < R->size; i++) {
        double u = nd_load_f(A->dtype, pa), v = nd_load_f(B->dtype, pb);
        bool c;
        if (isnan(u) || isnan(v)) c = equal_nan && isnan(u) && isnan(v);
        else if (isinf(u) || isinf(v)) c = u == v;
        else c = fabs(u - v) <= atol + rtol * fabs(v);
        R->data[i] = c;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) { pa += sa[d]; pb += sb[d]; break; }
            idx[d] = 0;
            pa -= sa[d] * (shape[d] - 1);
            pb -= sb[d] * (shape[d] - 1);
        }
    }
    vm_pop_roots(vm, 2);
    return R;
}
static NDArray *isclose_args(VM *vm, const char *name, int argc, Value *argv, Dict *kw) {
    Value rt = kw_take(vm, kw, "rtol"), at = kw_take(vm, kw, "atol"), en = kw_take(vm, kw, "equal_nan");
    kw_done(vm, name, kw);
    arg_between(vm, name, argc, 2, 5);
    if (argc >= 3) rt = argv[2];
    if (argc >= 4) at = argv[3];
    if (argc == 5) en = argv[4];
    return isclose(vm, argv[0], argv[1], IS_EMPTY(rt) ? 1e-05 : num_arg(vm, rt), IS_EMPTY(at) ? 1e-08 : num_arg(vm, at),
                   !IS_EMPTY(en) && vm_truthy(vm, en));
}
static Value f_isclose(VM *vm, int argc, Value *argv, Dict *kw) {
    return nd_result(vm, isclose_args(vm, "isclose", argc, argv, kw));
}
static Value f_allclose(VM *vm, int argc, Value *argv, Dict *kw) {
    NDArray *r = isclose_args(vm, "allclose", argc, argv, kw);
    for (int64_t i = 0; i < r->size; i++)
        if (!r->data[i]) return BOOL_VAL(false);
    return BOOL_VAL(true);
}
static Value f_array_equal(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "array_equal", kw);
    arg_between(vm, "array_equal", argc, 2, 2);
    NDArray *A = nd_from_value(vm, argv[0], -1);
    vm_push_root(vm, OBJ_VAL(A));
    NDArray *B = nd_from_value(vm, argv[1], -1);
    vm_pop_roots(vm, 1);
    if (A->ndim != B->ndim) return BOOL_VAL(false);
    for (int i = 0; i < A->ndim; i++)
        if (A->shape[i] != B->shape[i]) return BOOL_VAL(false);
    for (int64_t i = 0; i < A->size; i++) {
        double u = nd_get_double(A, i), v = nd_get_double(B, i);
        if (u != v) return BOOL_VAL(false);
        if (!nd_is_float(A->dtype) && !nd_is_float(B->dtype)) {
            /* exact for big 64-bit integers too */
        }
    }
    return BOOL_VAL(true);
}
/* count_nonzero(a, axis=None, keepdims=False): an int64 scalar, or with
** an axis the int64 sums of a != 0 like numpy. */
static Value f_count_nonzero(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axisv = kw_take(vm, kw, "axis"), kd = kw_take(vm, kw, "keepdims");
    kw_done(vm, "count_nonzero", kw);
    arg_between(vm, "count_nonzero", argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    bool keep = !IS_EMPTY(kd) && vm_truthy(vm, kd);
    NDArray *A = nd_from_value(vm, argv[0], -1);
    if ((IS_EMPTY(axisv) || IS_NONE(axisv)) && !keep) {
        int64_t c = 0;
        for (int64_t i = 0; i < A->size; i++) c += nd_get_double(A, i) != 0;
        return nd_scalar_from_ptr(vm, ND_INT64, &c);
    }
    vm_push_root(vm, OBJ_VAL(A));
    NDArray *B = nd_new(vm, ND_BOOL, A->ndim, A->shape);
    vm_push_root(vm, OBJ_VAL(B));
    for (int64_t i = 0; i < A->size; i++) B->data[i] = nd_get_double(A, i) != 0;
    Value r = reduce(vm, R_SUM, B, axisv, keep, 0, ND_INT64);
    vm_pop_roots(vm, 2);
    return r;
}

void nd_sort_init(VM *vm, NDState *st, Module *m);

void nd_linalg_init(VM *vm, NDState *st, Module *m);

void nd_reduce_init(VM *vm, NDState *st, Module *m) {
    for (int r = 0; r < R__COUNT; r++) module_add_native_data(vm, m, red_names[r], f_red, INT_VAL(r));
    module_add_native_data(vm, m, "amin", f_red, INT_VAL(R_MIN));
    module_add_native_data(vm, m, "amax", f_red, INT_VAL(R_MAX));
    module_add_function(vm, m, "cumsum", f_cumsum);
    module_add_function(vm, m, "cumprod", f_cumprod);
    module_add_function(vm, m, "isclose", f_isclose);
    module_add_function(vm, m, "allclose", f_allclose);
    module_add_function(vm, m, "array_equal", f_array_equal);
    module_add_function(vm, m, "count_nonzero", f_count_nonzero);
    static const struct { const char *name; NativeFn fn; } ms[] = {
        {"sum", m_sum}, {"prod", m_prod}, {"min", m_min}, {"max", m_max}, {"mean", m_mean}, {"var", m_var},
        {"std", m_std}, {"argmin", m_argmin}, {"argmax", m_argmax}, {"any", m_any}, {"all", m_all},
        {"cumsum", f_cumsum}, {"cumprod", f_cumprod},
    };
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) type_add_method(vm, st->t_array, ms[i].name, ms[i].fn);
    nd_sort_init(vm, st, m);
    nd_linalg_init(vm, st, m);
}

/* sum of all elements with numpy's result type (np.trace uses it). */
Value nd_sum_all(VM *vm, NDArray *a) { return reduce(vm, R_SUM, a, NONE_VAL, false, 0, -1); }
