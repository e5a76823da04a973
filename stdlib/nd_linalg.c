/*
** nd_linalg.c — dot products: np.dot, np.matmul, the @ operator and
** a.dot(b) for 1-D and 2-D operands (vector·vector, matrix·vector,
** vector·matrix, matrix·matrix), computed in the promoted dtype with
** cache-friendly loops.
*/
#include "nd_priv.h"

/* C[m,n] = A[m,k] B[k,n] on contiguous buffers of type T (i-k-j order). */
#define GEMM(T, NAME)                                                                  \
    static void NAME(const T *A, const T *B, T *C, int64_t m, int64_t k, int64_t n) {  \
        for (int64_t i = 0; i < m; i++) {                                              \
            T *c = C + i * n;                                                          \
            for (int64_t j = 0; j < n; j++) c[j] = 0;                                  \
            for (int64_t p = 0; p < k; p++) {                                          \
                T a = A[i * k + p];                                                    \
                const T *b = B + p * n;                                                \
                for (int64_t j = 0; j < n; j++) c[j] += a * b[j];                      \
            }                                                                          \
        }                                                                              \
    }
GEMM(float, gemm_f32)
GEMM(double, gemm_f64)
GEMM(uint64_t, gemm_u64)

/* Vector dot with 8 partial sums (like a SIMD BLAS). */
#define VDOT(T, NAME)                                                        \
    static T NAME(const T *a, const T *b, int64_t n) {                       \
        T s[8] = {0};                                                        \
        int64_t i = 0;                                                       \
        for (; i + 8 <= n; i += 8)                                           \
            for (int j = 0; j < 8; j++) s[j] += a[i + j] * b[i + j];         \
        T r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])); \
        for (; i < n; i++) r += a[i] * b[i];                                 \
        return r;                                                            \
    }
VDOT(float, vdot_f32)
VDOT(double, vdot_f64)

static NDArray *contig(VM *vm, NDArray *a, NDType t) {
    if (a->dtype == t && (a->flags & ND_C_CONTIGUOUS)) return a;
    return nd_astype(vm, a, t);
}

static Value dot2(VM *vm, NDArray *A, NDArray *B, bool matmul);

/* matmul of stacks: the leading (batch) axes broadcast, each pair of
** trailing matrices goes through dot2; 1-D operands act as a row / column
** whose axis is dropped from the result, like numpy. */
static Value matmul_nd(VM *vm, NDArray *A, NDArray *B) {
    int64_t ash[ND_MAXDIM + 1], ast[ND_MAXDIM + 1], bsh[ND_MAXDIM + 1], bst[ND_MAXDIM + 1];
    int an = A->ndim, bn = B->ndim;
    if (an == 1) { an = 2; ash[0] = 1; ast[0] = 0; ash[1] = A->shape[0]; ast[1] = A->strides[0]; }
    else { memcpy(ash, A->shape, sizeof(int64_t) * (size_t)an); memcpy(ast, A->strides, sizeof(int64_t) * (size_t)an); }
    if (bn == 1) { bn = 2; bsh[0] = B->shape[0]; bst[0] = B->strides[0]; bsh[1] = 1; bst[1] = 0; }
    else { memcpy(bsh, B->shape, sizeof(int64_t) * (size_t)bn); memcpy(bst, B->strides, sizeof(int64_t) * (size_t)bn); }
    int64_t m = ash[an - 2], k = ash[an - 1], k2 = bsh[bn - 2], n = bsh[bn - 1];
    if (k != k2)
        vm_raise_kind(vm, ValueError, "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size %lld is different from %lld)",
                      (long long)k2, (long long)k);
    int nb = (an > bn ? an : bn) - 2;
    int64_t rsh[ND_MAXDIM + 2], sa[ND_MAXDIM], sb[ND_MAXDIM]; /* batch shape and strides */
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - (an - 2)), db = d - (nb - (bn - 2));
        int64_t la = da >= 0 ? ash[da] : 1, lb = db >= 0 ? bsh[db] : 1;
        if (la != lb && la != 1 && lb != 1) {
            /* numpy's gufunc message: each operand's batch axes, core axes as newaxis */
            char s1[400], s2[400], r1[400], r2[400], rq[100];
            nd_shape_str(s1, sizeof s1, A->ndim, A->shape);
            nd_shape_str(s2, sizeof s2, B->ndim, B->shape);
            nd_shape_str(r1, sizeof r1, an - 2, ash);
            nd_shape_str(r2, sizeof r2, bn - 2, bsh);
            r1[strlen(r1) - 1] = 0; /* drop ')' (and a 1-tuple's ',') */
            if (an - 2 == 1) r1[strlen(r1) - 1] = 0;
            r2[strlen(r2) - 1] = 0;
            if (bn - 2 == 1) r2[strlen(r2) - 1] = 0;
            int64_t core[2] = {m, n};
            nd_shape_str(rq, sizeof rq, 2, core);
            vm_raise_kind(vm, ValueError, "operands could not be broadcast together with remapped shapes [original->remapped]: %s->%s%snewaxis,newaxis) %s->%s%snewaxis,newaxis)  and requested shape %s",
                          s1, r1, an > 2 ? "," : "", s2, r2, bn > 2 ? "," : "", rq);
        }
        rsh[d] = la == 1 ? lb : la;
        sa[d] = da >= 0 && la != 1 ? ast[da] : 0;
        sb[d] = db >= 0 && lb != 1 ? bst[db] : 0;
    }
    if (nb + 2 > ND_MAXDIM) vm_raise_kind(vm, ValueError, "too many dimensions");
    rsh[nb] = m;
    rsh[nb + 1] = n;
    NDArray *R = nd_new(vm, nd_promote(A->dtype, B->dtype), nb + 2, rsh);
    vm_push_root(vm, OBJ_VAL(R));
    int64_t count = 1, idx[ND_MAXDIM] = {0};
    for (int d = 0; d < nb; d++) count *= rsh[d];
    char *pa = A->data, *pb = B->data, *pr = R->data;
    for (int64_t i = 0; i < count && m * n > 0; i++) {
        NDArray *Ai = nd_view(vm, A, pa, 2, ash + an - 2, ast + an - 2);
        vm_push_root(vm, OBJ_VAL(Ai));
        NDArray *Bi = nd_view(vm, B, pb, 2, bsh + bn - 2, bst + bn - 2);
        vm_push_root(vm, OBJ_VAL(Bi));
        Value ri = dot2(vm, Ai, Bi, true);
        vm_push_root(vm, ri);
        NDArray *dst = nd_view(vm, R, pr, 2, R->shape + nb, R->strides + nb);
        vm_push_root(vm, OBJ_VAL(dst));
        nd_assign(vm, dst, ND_AS(ri));
        vm_pop_roots(vm, 4);
        for (int d = nb - 1; d >= 0; d--) {
            pr += R->strides[d];
            pa += sa[d];
            pb += sb[d];
            if (++idx[d] < rsh[d]) break;
            idx[d] = 0;
            pr -= R->strides[d] * rsh[d];
            pa -= sa[d] * rsh[d];
            pb -= sb[d] * rsh[d];
        }
    }
    if (A->ndim == 1 || B->ndim == 1) { /* drop the added row / column axis */
        int64_t fsh[ND_MAXDIM];
        int fn = 0;
        for (int d = 0; d < nb; d++) fsh[fn++] = rsh[d];
        if (A->ndim != 1) fsh[fn++] = m;
        if (B->ndim != 1) fsh[fn++] = n;
        NDArray *F = nd_wrap(vm, R->dtype, R->data, fn, fsh, NULL, OBJ_VAL(R));
        vm_push_root(vm, OBJ_VAL(F));
        R = nd_copy(vm, F);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(R);
}

static Value dot2(VM *vm, NDArray *A, NDArray *B, bool matmul) {
    if (A->ndim == 0 || B->ndim == 0) {
        if (matmul) vm_raise_kind(vm, ValueError, "matmul: Input operand %d does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)", A->ndim == 0 ? 0 : 1);
        return nd_binop(vm, BINOP_MUL, OBJ_VAL(A), OBJ_VAL(B));
    }
    if (A->ndim > 2 || B->ndim > 2) {
        /* np.dot equals matmul when b is 1-D/2-D or a is 1-D */
        if (matmul || B->ndim <= 2 || A->ndim == 1) return matmul_nd(vm, A, B);
        vm_raise_kind(vm, ValueError, "gpy's numpy supports np.dot of 1-D and 2-D arrays only (use matmul / @ for stacks)");
    }
    int64_t m = A->ndim == 2 ? A->shape[0] : 1, k = A->shape[A->ndim - 1];
    int64_t k2 = B->shape[0], n = B->ndim == 2 ? B->shape[1] : 1;
    if (k != k2) {
        if (matmul)
            vm_raise_kind(vm, ValueError, "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size %lld is different from %lld)",
                          (long long)k2, (long long)k);
        char s1[400], s2[400];
        nd_shape_str(s1, sizeof s1, A->ndim, A->shape);
        nd_shape_str(s2, sizeof s2, B->ndim, B->shape);
        vm_raise_kind(vm, ValueError, "shapes %s and %s not aligned: %lld (dim %d) != %lld (dim 0)", s1, s2, (long long)k,
                      A->ndim - 1, (long long)k2);
    }
    NDType ot = nd_promote(A->dtype, B->dtype);
    if (nd_is_complex(ot)) vm_raise_kind(vm, TypeError, "gpy's numpy has no complex matrix products");
    NDType ct = ot == ND_FLOAT16 ? ND_FLOAT32 : nd_is_float(ot) ? ot : nd_is_unsigned(ot) ? ND_UINT64 : ND_INT64;
    NDArray *CA = contig(vm, A, ct);
    vm_push_root(vm, OBJ_VAL(CA));
    NDArray *CB = contig(vm, B, ct);
    vm_push_root(vm, OBJ_VAL(CB));
    int64_t oshape[2];
    int ond = 0;
    if (A->ndim == 2) oshape[ond++] = m;
    if (B->ndim == 2) oshape[ond++] = n;
    NDArray *R = nd_new(vm, ct, ond, oshape);
    vm_push_root(vm, OBJ_VAL(R));
    if (ond == 0 || (A->ndim == 2 && B->ndim == 1) || (A->ndim == 1 && B->ndim == 1)) {
        /* rows of A dotted with the vector B */
        for (int64_t i = 0; i < m; i++) {
            if (ct == ND_FLOAT32) ((float *)R->data)[i] = vdot_f32((const float *)CA->data + i * k, (const float *)CB->data, k);
            else if (ct == ND_FLOAT64) ((double *)R->data)[i] = vdot_f64((const double *)CA->data + i * k, (const double *)CB->data, k);
            else {
                uint64_t s = 0;
                const uint64_t *a = (const uint64_t *)CA->data + i * k, *b = (const uint64_t *)CB->data;
                for (int64_t p = 0; p < k; p++) s += a[p] * b[p];
                ((uint64_t *)R->data)[i] = s;
            }
        }
    } else {
        switch (ct) {
        case ND_FLOAT32: gemm_f32((const float *)CA->data, (const float *)CB->data, (float *)R->data, m, k, n); break;
        case ND_FLOAT64: gemm_f64((const double *)CA->data, (const double *)CB->data, (double *)R->data, m, k, n); break;
        case ND_UINT64: gemm_u64((const uint64_t *)CA->data, (const uint64_t *)CB->data, (uint64_t *)R->data, m, k, n); break;
        /* signed integers too: unsigned arithmetic wraps as numpy's does,
        ** where int64_t's would overflow (undefined behaviour) */
        default: gemm_u64((const uint64_t *)CA->data, (const uint64_t *)CB->data, (uint64_t *)R->data, m, k, n); break;
        }
    }
    if (ct != ot) R = nd_astype(vm, R, ot);
    vm_pop_roots(vm, 3);
    return nd_result(vm, R);
}

Value nd_matmul(VM *vm, Value x, Value y) {
    int w;
    NDArray *A = nd_operand(vm, x, &w);
    if (!A) return EMPTY_VAL;
    vm_push_root(vm, OBJ_VAL(A));
    NDArray *B = nd_operand(vm, y, &w);
    if (!B) { vm_pop_roots(vm, 1); return EMPTY_VAL; }
    vm_push_root(vm, OBJ_VAL(B));
    Value r = dot2(vm, A, B, true);
    vm_pop_roots(vm, 2);
    return r;
}

static Value call2(VM *vm, const char *name, int argc, Value *argv, Dict *kw, bool matmul) {
    kw_done(vm, name, kw);
    arg_between(vm, name, argc, 2, 2);
    NDArray *A = nd_from_value(vm, argv[0], -1);
    vm_push_root(vm, OBJ_VAL(A));
    NDArray *B = nd_from_value(vm, argv[1], -1);
    vm_push_root(vm, OBJ_VAL(B));
    Value r = dot2(vm, A, B, matmul);
    vm_pop_roots(vm, 2);
    return r;
}
static Value f_dot(VM *vm, int argc, Value *argv, Dict *kw) { return call2(vm, "dot", argc, argv, kw, false); }
static Value f_matmul(VM *vm, int argc, Value *argv, Dict *kw) { return call2(vm, "matmul", argc, argv, kw, true); }
static Value f_vdot(VM *vm, int argc, Value *argv, Dict *kw) { return call2(vm, "vdot", argc, argv, kw, false); }

void nd_linalg_init(VM *vm, NDState *st, Module *m) {
    module_add_function(vm, m, "dot", f_dot);
    module_add_function(vm, m, "matmul", f_matmul);
    module_add_function(vm, m, "inner", f_vdot);
    type_add_method(vm, st->t_array, "dot", f_dot);
}
