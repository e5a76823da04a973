/*
** nd_index.c — a[key] and a[key] = v. Basic indexing (integers, slices,
** None/np.newaxis, Ellipsis and tuples of them) gives views; boolean masks
** and integer arrays (advanced indexing) give copies. Assignment goes
** through the same selection and broadcasts the value.
*/
#include "nd_priv.h"

static bool is_advanced(VM *vm, Value k) {
    return nd_check(vm, k) || IS_LIST(vm, k);
}

static _Noreturn void bad_index(VM *vm) {
    vm_raise_kind(vm, IndexError,
                  "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices");
}

/* An integer index (Python int or numpy integer scalar), or false. */
static bool int_key(VM *vm, Value k, int64_t *out) {
    if (IS_INTLIKE(k)) { *out = AS_INTLIKE(k); return true; }
    if (nd_is_scalar(vm, k)) {
        NDScalar *s = (NDScalar *)AS_OBJ(k);
        if (nd_is_float(s->dtype)) bad_index(vm);
        *out = nd_load_i(s->dtype, &s->v);
        return true;
    }
    return false;
}

/* Basic indexing: a view of a (or, with *scalar_out set, one element). */
static NDArray *basic_view(VM *vm, NDArray *a, int nk, Value *keys, bool *all_ints) {
    int used = 0, ell = -1, nnone = 0, nslice = 0;
    for (int i = 0; i < nk; i++) {
        if (IS_OBJ(keys[i]) && vm_is(keys[i], vm->ellipsis)) {
            if (ell >= 0) vm_raise_kind(vm, IndexError, "an index can only have a single ellipsis ('...')");
            ell = i;
        } else if (IS_NONE(keys[i])) nnone++;
        else {
            used++;
            if (IS_OBJ(keys[i]) && AS_OBJ(keys[i])->type == vm->t_slice) nslice++;
        }
    }
    if (used > a->ndim)
        vm_raise_kind(vm, IndexError, "too many indices for array: array is %d-dimensional, but %d were indexed",
                      a->ndim, used);
    /* each None adds an axis, each integer drops one: numpy's check on the
    ** result's rank, with gpy's limit (numpy 2's is 64) */
    int result_dims = a->ndim + nnone - (used - nslice);
    if (result_dims > ND_MAXDIM)
        vm_raise_kind(vm, IndexError, "number of dimensions must be within [0, %d], indexing result would have %d",
                      ND_MAXDIM, result_dims);
    int64_t sh[ND_MAXDIM], st[ND_MAXDIM];
    int n = 0, ax = 0;
    char *p = a->data;
    *all_ints = ell < 0;
    for (int i = 0; i < nk; i++) {
        Value k = keys[i];
        int64_t idx;
        if (i == ell) {
            int rest = a->ndim - used;
            for (int j = 0; j < rest; j++, ax++) {
                if (n >= ND_MAXDIM) vm_raise_kind(vm, IndexError, "too many dimensions");
                sh[n] = a->shape[ax];
                st[n++] = a->strides[ax];
            }
        } else if (IS_NONE(k)) {
            if (n >= ND_MAXDIM) vm_raise_kind(vm, IndexError, "too many dimensions");
            sh[n] = 1;
            st[n++] = 0;
            *all_ints = false;
        } else if (int_key(vm, k, &idx)) {
            int64_t len = a->shape[ax];
            int64_t j = idx < 0 ? idx + len : idx;
            if (j < 0 || j >= len)
                vm_raise_kind(vm, IndexError, "index %lld is out of bounds for axis %d with size %lld", (long long)idx,
                              ax, (long long)len);
            p += j * a->strides[ax];
            ax++;
        } else if (IS_OBJ(k) && AS_OBJ(k)->type == vm->t_slice) {
            int64_t start, stop, step;
            int64_t cnt = slice_indices(vm, (Slice *)AS_OBJ(k), a->shape[ax], &start, &stop, &step);
            if (cnt > 0) p += start * a->strides[ax];
            sh[n] = cnt;
            st[n++] = nd_wrap_mul(a->strides[ax], step);
            ax++;
            *all_ints = false;
        } else bad_index(vm);
    }
    for (; ax < a->ndim; ax++) {
        if (n >= ND_MAXDIM) vm_raise_kind(vm, IndexError, "too many dimensions");
        sh[n] = a->shape[ax];
        st[n++] = a->strides[ax];
        *all_ints = false;
    }
    return nd_view(vm, a, p, n, sh, st);
}

/* Advanced selection: the byte offsets of the selected sub-blocks (an
** int64 array whose shape is the index shape) and how many leading axes of
** a the index consumed. */
static NDArray *advanced_offsets(VM *vm, NDArray *a, int nk, Value *keys, int *consumed) {
    if (nk == 1) {
        NDArray *k = nd_from_value(vm, keys[0], -1);
        if (k->dtype == ND_BOOL) {
            if (k->ndim > a->ndim)
                vm_raise_kind(vm, IndexError, "too many indices for array: array is %d-dimensional, but %d were indexed",
                              a->ndim, k->ndim);
            for (int d = 0; d < k->ndim; d++)
                if (k->shape[d] != a->shape[d])
                    vm_raise_kind(vm, IndexError,
                                  "boolean index did not match indexed array along axis %d; size of axis is %lld but size of corresponding boolean axis is %lld",
                                  d, (long long)a->shape[d], (long long)k->shape[d]);
            vm_push_root(vm, OBJ_VAL(k));
            int64_t cnt = 0;
            int64_t idx[ND_MAXDIM] = {0};
            char *pk = k->data, *dummy = NULL;
            for (int64_t i = 0; i < k->size; i++) {
                cnt += *pk != 0;
                nd_advance(k->ndim, k->shape, idx, &pk, k->strides, NULL, NULL);
            }
            (void)dummy;
            NDArray *off = nd_new(vm, ND_INT64, 1, &cnt);
            int64_t *o = (int64_t *)off->data, w = 0;
            memset(idx, 0, sizeof idx);
            pk = k->data;
            char *pa = a->data;
            for (int64_t i = 0; i < k->size; i++) {
                if (*pk) o[w++] = pa - a->data;
                nd_advance(k->ndim, k->shape, idx, &pk, k->strides, &pa, a->strides);
            }
            vm_pop_roots(vm, 1);
            *consumed = k->ndim;
            return off;
        }
    }
    if (nk > a->ndim)
        vm_raise_kind(vm, IndexError, "too many indices for array: array is %d-dimensional, but %d were indexed",
                      a->ndim, nk);
    /* integer arrays, one per leading axis, broadcast together */
    List *ks = list_new(vm, nk);
    vm_push_root(vm, OBJ_VAL(ks));
    NDArray *b = NULL;
    for (int i = 0; i < nk; i++) {
        if (!is_advanced(vm, keys[i]) && !IS_INTLIKE(keys[i]) && !nd_is_scalar(vm, keys[i]))
            vm_raise_kind(vm, IndexError, "gpy's numpy does not support mixing slices with index arrays");
        NDArray *k = nd_from_value(vm, keys[i], -1);
        if (k->size == 0 && k->dtype == ND_FLOAT64) k = nd_astype(vm, k, ND_INT64);
        if (nd_is_float(k->dtype) || k->dtype == ND_BOOL) bad_index(vm);
        list_append(vm, ks, OBJ_VAL(k));
        if (!b) b = k;
    }
    int64_t shape[ND_MAXDIM];
    int nd = b->ndim;
    memcpy(shape, b->shape, sizeof(int64_t) * (size_t)nd);
    for (int i = 1; i < nk; i++) {
        NDArray *k = ND_AS(ks->items[i]);
        int64_t sh2[ND_MAXDIM];
        int64_t kst[ND_MAXDIM];
        int nd2 = nd > k->ndim ? nd : k->ndim;
        for (int d = 0; d < nd2; d++) sh2[d] = 1;
        for (int d = 0; d < nd; d++) sh2[nd2 - nd + d] = shape[d];
        for (int d = 0; d < k->ndim; d++)
            if (sh2[nd2 - k->ndim + d] == 1) sh2[nd2 - k->ndim + d] = k->shape[d];
        /* sh2 keeps every axis of the running shape (only its 1s are
        ** replaced), so only k can fail to broadcast to it */
        if (!nd_bcast_strides(k, nd2, sh2, kst)) {
            char s1[400], s2[400];
            nd_shape_str(s1, sizeof s1, nd, shape);
            nd_shape_str(s2, sizeof s2, k->ndim, k->shape);
            vm_raise_kind(vm, IndexError, "shape mismatch: indexing arrays could not be broadcast together with shapes %s %s ", s1, s2);
        }
        nd = nd2;
        memcpy(shape, sh2, sizeof(int64_t) * (size_t)nd);
    }
    NDArray *off = nd_new(vm, ND_INT64, nd, shape);
    vm_push_root(vm, OBJ_VAL(off));
    int64_t *o = (int64_t *)off->data;
    for (int i = 0; i < nk; i++) {
        NDArray *k = ND_AS(ks->items[i]);
        int64_t kst[ND_MAXDIM], idx[ND_MAXDIM] = {0};
        nd_bcast_strides(k, nd, shape, kst);
        char *pk = k->data, *po = off->data;
        int64_t ost[ND_MAXDIM];
        for (int d = 0; d < nd; d++) ost[d] = off->strides[d];
        for (int64_t j = 0; j < off->size; j++) {
            int64_t v = nd_load_i(k->dtype, pk), len = a->shape[i];
            int64_t w = v < 0 ? v + len : v;
            if (w < 0 || w >= len)
                vm_raise_kind(vm, IndexError, "index %lld is out of bounds for axis %d with size %lld", (long long)v, i,
                              (long long)len);
            o[j] += w * a->strides[i];
            (void)po;
            nd_advance(nd, shape, idx, &pk, kst, &po, ost);
        }
    }
    vm_pop_roots(vm, 2);
    *consumed = nk;
    return off;
}

static void split_key(VM *vm, Value key, int *nk, Value **keys, Value *one) {
    if (IS_TUPLE(vm, key)) {
        *nk = (int)AS_TUPLE(key)->len;
        *keys = AS_TUPLE(key)->items;
    } else {
        *one = key;
        *nk = 1;
        *keys = one;
    }
}

/* A 0-d boolean key (True, np.True_, np.array(False)): numpy adds an axis
** of length 1 and selects it (True) or nothing of it (False). */
static bool is_bool_0d(VM *vm, Value k, bool *truth) {
    if (IS_BOOL(k)) { *truth = AS_BOOL(k); return true; }
    if (nd_is_scalar(vm, k) && ((NDScalar *)AS_OBJ(k))->dtype == ND_BOOL) {
        *truth = ((NDScalar *)AS_OBJ(k))->v.u8 != 0;
        return true;
    }
    if (nd_check(vm, k) && ND_AS(k)->dtype == ND_BOOL && ND_AS(k)->ndim == 0) {
        *truth = *ND_AS(k)->data != 0;
        return true;
    }
    return false;
}

static bool any_advanced(VM *vm, int nk, Value *keys) {
    bool truth;
    for (int i = 0; i < nk; i++)
        if (is_advanced(vm, keys[i]) || is_bool_0d(vm, keys[i], &truth)) return true;
    return false;
}

/* The int64 index arrays of a boolean key (np.nonzero), appended to out. */
static void bool_to_ints(VM *vm, NDArray *k, List *out) {
    int64_t cnt = 0, idx[ND_MAXDIM] = {0};
    char *p = k->data;
    for (int64_t i = 0; i < k->size; i++) {
        cnt += *p != 0;
        nd_advance(k->ndim, k->shape, idx, &p, k->strides, NULL, NULL);
    }
    int64_t first = out->len;
    for (int d = 0; d < k->ndim; d++) list_append(vm, out, OBJ_VAL(nd_new(vm, ND_INT64, 1, &cnt)));
    memset(idx, 0, sizeof idx);
    p = k->data;
    int64_t w = 0;
    for (int64_t i = 0; i < k->size; i++) {
        if (*p) {
            for (int d = 0; d < k->ndim; d++) ((int64_t *)ND_AS(out->items[first + d])->data)[w] = idx[d];
            w++;
        }
        nd_advance(k->ndim, k->shape, idx, &p, k->strides, NULL, NULL);
    }
}

/* Advanced indexing mixed with basic keys, numpy's rules: integers count as
** index arrays; the index dimensions replace the indexed axes when those
** are adjacent, else they come first. Returns the selection (get) or
** assigns setval to it (set, returns NULL). */
static NDArray *advanced(VM *vm, NDArray *a, int nk, Value *keys, Value setval) {
    if (nk == 1 && nd_check(vm, keys[0]) && ND_AS(keys[0])->dtype == ND_BOOL && IS_EMPTY(setval)) {
        /* fast, common case: a[mask] */
    }
    List *arrs = list_new(vm, nk);
    vm_push_root(vm, OBJ_VAL(arrs));
    Tuple *bk = tuple_new(vm, nk > 0 ? nk + ND_MAXDIM : 1); /* basic keys, arrays replaced by ':' */
    vm_push_root(vm, OBJ_VAL(bk));
    Value full = slice_new(vm, NONE_VAL, NONE_VAL, NONE_VAL);
    vm_push_root(vm, full);
    int nb = 0, vaxis = 0, adv_axes[ND_MAXDIM], na = 0, aaxis = 0;
    int used = 0;
    bool truth;
    for (int i = 0; i < nk; i++)
        if (!IS_NONE(keys[i]) && !(IS_OBJ(keys[i]) && vm_is(keys[i], vm->ellipsis)) && !is_bool_0d(vm, keys[i], &truth)) {
            if ((nd_check(vm, keys[i]) || IS_LIST(vm, keys[i])) && nd_from_value(vm, keys[i], -1)->dtype == ND_BOOL)
                used += nd_from_value(vm, keys[i], -1)->ndim;
            else used++;
        }
    if (used > a->ndim)
        vm_raise_kind(vm, IndexError, "too many indices for array: array is %d-dimensional, but %d were indexed",
                      a->ndim, used);
    for (int i = 0; i < nk; i++) {
        Value k = keys[i];
        int64_t iv;
        if (IS_OBJ(k) && vm_is(k, vm->ellipsis)) {
            vaxis += a->ndim - used;
            aaxis += a->ndim - used;
            bk->items[nb++] = k;
        } else if (IS_NONE(k) || (IS_OBJ(k) && AS_OBJ(k)->type == vm->t_slice)) {
            vaxis++;
            if (!IS_NONE(k)) aaxis++;
            bk->items[nb++] = k;
        } else if (is_bool_0d(vm, k, &truth)) {
            /* a new axis (None) indexed with [0] or [] */
            int64_t cnt = truth ? 1 : 0;
            NDArray *sel = nd_new(vm, ND_INT64, 1, &cnt);
            vm_push_root(vm, OBJ_VAL(sel));
            if (cnt) ((int64_t *)sel->data)[0] = 0;
            list_append(vm, arrs, OBJ_VAL(sel));
            vm_pop_roots(vm, 1);
            if (na >= ND_MAXDIM) bad_index(vm);
            adv_axes[na++] = vaxis++;
            bk->items[nb++] = NONE_VAL;
        } else if (int_key(vm, k, &iv) || is_advanced(vm, k)) {
            NDArray *ka = nd_from_value(vm, k, -1);
            vm_push_root(vm, OBJ_VAL(ka));
            if (ka->dtype == ND_BOOL && !IS_BOOL(k)) {
                for (int d = 0; d < ka->ndim; d++)
                    if (ka->shape[d] != a->shape[aaxis + d])
                        vm_raise_kind(vm, IndexError,
                                      "boolean index did not match indexed array along axis %d; size of axis is %lld but size of corresponding boolean axis is %lld",
                                      aaxis + d, (long long)a->shape[aaxis + d], (long long)ka->shape[d]);
                aaxis += ka->ndim;
                bool_to_ints(vm, ka, arrs);
                for (int d = 0; d < ka->ndim; d++) {
                    if (na >= ND_MAXDIM) bad_index(vm);
                    adv_axes[na++] = vaxis++;
                    bk->items[nb++] = full;
                }
            } else {
                if (ka->size == 0 && ka->dtype == ND_FLOAT64) ka = nd_astype(vm, ka, ND_INT64);
                if (nd_is_float(ka->dtype) || ka->dtype == ND_BOOL) bad_index(vm);
                list_append(vm, arrs, OBJ_VAL(ka));
                aaxis++;
                if (na >= ND_MAXDIM) bad_index(vm);
                adv_axes[na++] = vaxis++;
                bk->items[nb++] = full;
            }
            vm_pop_roots(vm, 1);
        } else bad_index(vm);
    }
    bool ints;
    NDArray *V = basic_view(vm, a, nb, bk->items, &ints);
    vm_push_root(vm, OBJ_VAL(V));
    /* P: V with the indexed axes first */
    int64_t sh[ND_MAXDIM], st[ND_MAXDIM];
    bool isadv[ND_MAXDIM] = {0};
    for (int j = 0; j < na; j++) {
        isadv[adv_axes[j]] = true;
        sh[j] = V->shape[adv_axes[j]];
        st[j] = V->strides[adv_axes[j]];
    }
    int q = na;
    for (int d = 0; d < V->ndim; d++)
        if (!isadv[d]) { sh[q] = V->shape[d]; st[q++] = V->strides[d]; }
    NDArray *P = nd_view(vm, V, V->data, V->ndim, sh, st);
    vm_push_root(vm, OBJ_VAL(P));
    int consumed;
    NDArray *off = advanced_offsets(vm, P, (int)arrs->len, arrs->items, &consumed);
    vm_push_root(vm, OBJ_VAL(off));
    bool adjacent = true;
    for (int j = 1; j < na; j++) adjacent = adjacent && adv_axes[j] == adv_axes[j - 1] + 1;
    int first = adjacent ? adv_axes[0] : 0;
    /* my order: idx dims then rest; numpy's: rest[:first] + idx + rest[first:] */
    int ni = off->ndim, nr = P->ndim - consumed, nd = ni + nr;
    if (nd > ND_MAXDIM) vm_raise_kind(vm, IndexError, "too many dimensions");
    int64_t mine[ND_MAXDIM];
    memcpy(mine, off->shape, sizeof(int64_t) * (size_t)ni);
    memcpy(mine + ni, P->shape + consumed, sizeof(int64_t) * (size_t)nr);
    int perm[ND_MAXDIM]; /* numpy axis i = my axis perm[i] */
    {
        int w = 0;
        for (int r = 0; r < first; r++) perm[w++] = ni + r;
        for (int i = 0; i < ni; i++) perm[w++] = i;
        for (int r = first; r < nr; r++) perm[w++] = ni + r;
    }
    int64_t subsize = 1;
    for (int d = consumed; d < P->ndim; d++) subsize *= P->shape[d];
    size_t is = nd_itemsize(a->dtype);
    int64_t *o = (int64_t *)off->data;
    NDArray *R = nd_new(vm, a->dtype, nd, mine);
    vm_push_root(vm, OBJ_VAL(R));
    if (!IS_EMPTY(setval)) {
        /* the value broadcast to numpy's result shape, stored in my order */
        int64_t npshape[ND_MAXDIM], rst[ND_MAXDIM];
        for (int i = 0; i < nd; i++) { npshape[i] = mine[perm[i]]; rst[i] = R->strides[perm[i]]; }
        NDArray *v = ND_AS(setval);
        int64_t vst[ND_MAXDIM];
        if (!nd_bcast_strides(v, nd, npshape, vst)) {
            char s1[400], s2[400];
            nd_shape_str(s1, sizeof s1, v->ndim, v->shape);
            nd_shape_str(s2, sizeof s2, nd, npshape);
            vm_raise_kind(vm, ValueError, "shape mismatch: value array of shape %s could not be broadcast to indexing result of shape %s", s1, s2);
        }
        NDArray *Rv = nd_view(vm, R, R->data, nd, npshape, rst);
        vm_push_root(vm, OBJ_VAL(Rv));
        nd_assign(vm, Rv, v);
        vm_pop_roots(vm, 1);
    }
    for (int64_t j = 0; j < off->size; j++) {
        char *blk = P->data + o[j];
        char *rb = R->data + (size_t)(j * subsize) * is;
        if (nr == 0) {
            if (IS_EMPTY(setval)) memcpy(rb, blk, is);
            else memcpy(blk, rb, is);
            continue;
        }
        NDArray *pv = nd_view(vm, P, blk, nr, P->shape + consumed, P->strides + consumed);
        vm_push_root(vm, OBJ_VAL(pv));
        NDArray *rv = nd_wrap(vm, a->dtype, rb, nr, P->shape + consumed, NULL, OBJ_VAL(R));
        if (IS_EMPTY(setval)) nd_assign(vm, rv, pv);
        else nd_assign(vm, pv, rv);
        vm_pop_roots(vm, 1);
    }
    NDArray *res = NULL;
    if (IS_EMPTY(setval)) {
        bool ident = true;
        for (int i = 0; i < nd; i++) ident = ident && perm[i] == i;
        if (ident) res = R;
        else {
            int64_t psh[ND_MAXDIM], pst[ND_MAXDIM];
            for (int i = 0; i < nd; i++) { psh[i] = R->shape[perm[i]]; pst[i] = R->strides[perm[i]]; }
            NDArray *tv = nd_view(vm, R, R->data, nd, psh, pst);
            vm_push_root(vm, OBJ_VAL(tv));
            res = nd_copy(vm, tv);
            vm_pop_roots(vm, 1);
        }
    }
    vm_pop_roots(vm, 7);
    return res;
}

Value nd_getitem(VM *vm, Value self, Value key) {
    NDArray *a = ND_AS(self);
    int nk;
    Value *keys, one;
    split_key(vm, key, &nk, &keys, &one);
    if (!any_advanced(vm, nk, keys)) {
        bool ints;
        NDArray *v = basic_view(vm, a, nk, keys, &ints);
        if (v->ndim == 0 && (ints || IS_TUPLE(vm, key)) && !(nk == 1 && IS_OBJ(keys[0]) && vm_is(keys[0], vm->ellipsis)))
            return nd_scalar_from_ptr(vm, v->dtype, v->data);
        return OBJ_VAL(v);
    }
    return OBJ_VAL(advanced(vm, a, nk, keys, EMPTY_VAL));
}

/* The value of an assignment as an array of the target's dtype. */
static NDArray *value_array(VM *vm, NDArray *a, Value value) {
    if (nd_check(vm, value)) return ND_AS(value);
    if (IS_LIST(vm, value) || IS_TUPLE(vm, value)) return nd_array_from(vm, value, a->dtype, false);
    NDArray *v = nd_new(vm, a->dtype, 0, NULL);
    vm_push_root(vm, OBJ_VAL(v));
    nd_store_value(vm, a->dtype, v->data, value);
    vm_pop_roots(vm, 1);
    return v;
}

void nd_setitem(VM *vm, Value self, Value key, Value value) {
    NDArray *a = ND_AS(self);
    if (IS_EMPTY(value)) vm_raise_kind(vm, ValueError, "cannot delete array elements");
    if (!(a->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "assignment destination is read-only");
    int nk;
    Value *keys, one;
    split_key(vm, key, &nk, &keys, &one);
    NDArray *v = value_array(vm, a, value);
    vm_push_root(vm, OBJ_VAL(v));
    if (!any_advanced(vm, nk, keys)) {
        bool ints;
        NDArray *dst = basic_view(vm, a, nk, keys, &ints);
        /* one element takes one value, as numpy's scalar assignment */
        if (ints && v->ndim > 0) vm_raise_kind(vm, ValueError, "setting an array element with a sequence.");
        vm_push_root(vm, OBJ_VAL(dst));
        nd_assign(vm, dst, v);
        vm_pop_roots(vm, 2);
        return;
    }
    advanced(vm, a, nk, keys, OBJ_VAL(v));
    vm_pop_roots(vm, 1);
}
