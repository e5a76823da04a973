/*
** nd_array.c — the ndarray type: attributes, len/iter/truth, str/repr (via
** nd_print.c) and the shape methods (reshape, ravel, flatten, transpose,
** copy, astype, tolist, item, fill, squeeze).
*/
#include "nd_priv.h"

static Value arr_repr(VM *vm, Value self) { return STR_VAL(nd_format_array(vm, ND_AS(self), true)); }
static Value arr_str(VM *vm, Value self) { return STR_VAL(nd_format_array(vm, ND_AS(self), false)); }

static int64_t arr_hash(VM *vm, Value self) {
    (void)self;
    vm_raise_kind(vm, TypeError, "unhashable type: 'numpy.ndarray'");
}

static int64_t arr_len(VM *vm, Value self) {
    NDArray *a = ND_AS(self);
    if (a->ndim == 0) vm_raise_kind(vm, TypeError, "len() of unsized object");
    return a->shape[0];
}

static bool arr_truthy(VM *vm, Value self) {
    NDArray *a = ND_AS(self);
    if (a->size != 1)
        vm_raise_kind(vm, ValueError, a->size == 0 ? "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an array is not empty."
                                                   : "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
    return nd_load_f(a->dtype, a->data) != 0 || (!nd_is_float(a->dtype) && nd_load_u(a->dtype, a->data) != 0);
}

/* The transpose with axes reversed (or permuted by perm). */
static NDArray *transpose(VM *vm, NDArray *a, const int *perm) {
    int64_t sh[ND_MAXDIM], st[ND_MAXDIM];
    for (int i = 0; i < a->ndim; i++) {
        int p = perm ? perm[i] : a->ndim - 1 - i;
        sh[i] = a->shape[p];
        st[i] = a->strides[p];
    }
    return nd_view(vm, a, a->data, a->ndim, sh, st);
}

/* Iterator over rows (iter(a)) or elements (a.flat). */
static Value it_new(VM *vm, Value arr, bool flat) {
    NDIterObj *it = gc_alloc_obj(vm, nd_state(vm)->t_iter, sizeof(NDIterObj));
    it->arr = arr;
    it->pos = 0;
    it->flat = flat;
    return OBJ_VAL(it);
}
static void it_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((NDIterObj *)o)->arr); }
static Value it_iter(VM *vm, Value self) { (void)vm; return self; }
static bool it_next(VM *vm, Value self, Value *out) {
    NDIterObj *it = (NDIterObj *)AS_OBJ(self);
    NDArray *a = ND_AS(it->arr);
    if (it->flat) {
        if (it->pos >= a->size) return false;
        int64_t flat = it->pos++;
        char *p = a->data;
        for (int d = a->ndim - 1; d >= 0; d--) {
            p += (flat % a->shape[d]) * a->strides[d];
            flat /= a->shape[d];
        }
        *out = nd_scalar_from_ptr(vm, a->dtype, p);
        return true;
    }
    if (it->pos >= a->shape[0]) return false;
    char *p = a->data + it->pos++ * a->strides[0];
    if (a->ndim == 1) *out = nd_scalar_from_ptr(vm, a->dtype, p);
    else *out = OBJ_VAL(nd_view(vm, a, p, a->ndim - 1, a->shape + 1, a->strides + 1));
    return true;
}
static Value it_len_fn(VM *vm, int argc, Value *argv, Dict *kw) {
    (void)vm; (void)argc; (void)kw;
    return INT_VAL(ND_AS(((NDIterObj *)AS_OBJ(argv[0]))->arr)->size);
}

/* a.flat[k] / a.flat[k] = v: C-order flat indexing; slices and index
** arrays go through a 1-D view (contiguous arrays) or a copy (reads). */
static char *flat_ptr(VM *vm, NDArray *a, int64_t k) {
    int64_t i = k < 0 ? k + a->size : k;
    if (i < 0 || i >= a->size)
        vm_raise_kind(vm, IndexError, "index %lld is out of bounds for size %lld", (long long)k, (long long)a->size);
    char *p = a->data;
    for (int d = a->ndim - 1; d >= 0; d--) {
        p += (i % a->shape[d]) * a->strides[d];
        i /= a->shape[d];
    }
    return p;
}
static NDArray *flat_view(VM *vm, NDArray *a, bool for_write) {
    if (a->flags & ND_C_CONTIGUOUS) return nd_view(vm, a, a->data, 1, &a->size, NULL);
    if (for_write) vm_raise_kind(vm, TypeError, "gpy's numpy: a.flat[...] = v with slices needs a contiguous array");
    NDArray *c = nd_copy(vm, a);
    return nd_wrap(vm, c->dtype, c->data, 1, &c->size, NULL, OBJ_VAL(c));
}
/* numpy's flatiter message for an integer index array out of bounds. */
static void check_flat_keys(VM *vm, NDArray *a, Value key) {
    if (!nd_check(vm, key) && !IS_LIST(vm, key)) return;
    NDArray *k = nd_from_value(vm, key, -1);
    if (nd_is_float(k->dtype) || k->dtype == ND_BOOL) return;
    for (int64_t i = 0; i < k->size; i++) {
        int64_t v = (int64_t)nd_get_double(k, i);
        if (v >= a->size || v < -a->size)
            vm_raise_kind(vm, IndexError, "index %lld is out of bounds for size %lld", (long long)v, (long long)a->size);
    }
}

static Value it_getitem(VM *vm, Value self, Value key) {
    NDArray *a = ND_AS(((NDIterObj *)AS_OBJ(self))->arr);
    if (IS_INTLIKE(key)) return nd_scalar_from_ptr(vm, a->dtype, flat_ptr(vm, a, AS_INTLIKE(key)));
    check_flat_keys(vm, a, key);
    NDArray *v = flat_view(vm, a, false);
    vm_push_root(vm, OBJ_VAL(v));
    Value r = nd_getitem(vm, OBJ_VAL(v), key);
    vm_pop_roots(vm, 1);
    return r;
}
static void it_setitem(VM *vm, Value self, Value key, Value value) {
    NDArray *a = ND_AS(((NDIterObj *)AS_OBJ(self))->arr);
    if (IS_EMPTY(value)) vm_raise_kind(vm, TypeError, "cannot delete array elements");
    if (IS_INTLIKE(key)) {
        nd_store_value(vm, a->dtype, flat_ptr(vm, a, AS_INTLIKE(key)), value);
        return;
    }
    /* the selected flat positions: arange(size)[key]; the value repeats
    ** cyclically over them like numpy's flatiter assignment */
    if (!(a->flags & ND_WRITEABLE)) vm_raise_kind(vm, ValueError, "assignment destination is read-only");
    check_flat_keys(vm, a, key);
    NDArray *pos = nd_empty(vm, ND_INT64, 1, &a->size);
    for (int64_t i = 0; i < a->size; i++) ((int64_t *)pos->data)[i] = i;
    vm_push_root(vm, OBJ_VAL(pos));
    NDArray *sel = nd_from_value(vm, nd_getitem(vm, OBJ_VAL(pos), key), -1);
    vm_push_root(vm, OBJ_VAL(sel));
    NDArray *sc = nd_copy(vm, sel); /* C order */
    vm_push_root(vm, OBJ_VAL(sc));
    NDArray *v = nd_astype(vm, nd_from_value(vm, value, a->dtype), a->dtype);
    vm_push_root(vm, OBJ_VAL(v));
    NDArray *vc = nd_copy(vm, v);
    vm_push_root(vm, OBJ_VAL(vc));
    size_t is = nd_itemsize(a->dtype);
    if (vc->size > 0)
        for (int64_t k = 0; k < sc->size; k++)
            memcpy(flat_ptr(vm, a, ((int64_t *)sc->data)[k]), vc->data + (size_t)(k % vc->size) * is, is);
    vm_pop_roots(vm, 5);
}

/* ---- a.flags ---- */

enum { FL_C, FL_F, FL_O, FL_W, FL_A, FL_X, FL_FNC, FL_FORC, FL_B, FL_CA, FL_FA, FL__COUNT };

/* The value of one flag of a. */
static bool flag_value(NDArray *a, int f) {
    bool c = a->flags & ND_C_CONTIGUOUS, fo = a->flags & ND_F_CONTIGUOUS, w = a->flags & ND_WRITEABLE;
    switch (f) {
    case FL_C: return c;
    case FL_F: return fo;
    case FL_O: return IS_NONE(a->base);
    case FL_W: return w;
    case FL_A: return true;
    case FL_X: return false;
    case FL_FNC: return fo && !c;
    case FL_FORC: return fo || c;
    case FL_B: return w;
    case FL_CA: return w && c;
    default: return w && fo && !c;
    }
}

/* Flag names: attribute (lowercase) and the item keys numpy accepts. */
static int flag_attr(const char *s) {
    static const char *const names[FL__COUNT] = {"c_contiguous", "f_contiguous", "owndata", "writeable", "aligned",
                                                 "writebackifcopy", "fnc", "forc", "behaved", "carray", "farray"};
    for (int i = 0; i < FL__COUNT; i++)
        if (!strcmp(s, names[i])) return i;
    if (!strcmp(s, "contiguous")) return FL_C;
    if (!strcmp(s, "fortran")) return FL_F;
    return -1;
}
static int flag_key(const char *s) {
    static const struct { const char *k; int f; } keys[] = {
        {"C_CONTIGUOUS", FL_C}, {"C", FL_C}, {"CONTIGUOUS", FL_C}, {"F_CONTIGUOUS", FL_F}, {"F", FL_F},
        {"FORTRAN", FL_F}, {"OWNDATA", FL_O}, {"O", FL_O}, {"WRITEABLE", FL_W}, {"W", FL_W},
        {"ALIGNED", FL_A}, {"A", FL_A}, {"WRITEBACKIFCOPY", FL_X}, {"X", FL_X}, {"FNC", FL_FNC},
        {"FORC", FL_FORC}, {"BEHAVED", FL_B}, {"B", FL_B}, {"CARRAY", FL_CA}, {"CA", FL_CA},
        {"FARRAY", FL_FA}, {"FA", FL_FA},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(s, keys[i].k)) return keys[i].f;
    return -1;
}

#define FL_ARR(v) ND_AS(((NDFlagsObj *)AS_OBJ(v))->arr)

static void fl_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((NDFlagsObj *)o)->arr); }

static Value fl_str(VM *vm, Value self) {
    NDArray *a = FL_ARR(self);
    return STR_VAL(str_printf(vm,
                              "  C_CONTIGUOUS : %s\n  F_CONTIGUOUS : %s\n  OWNDATA : %s\n  WRITEABLE : %s\n"
                              "  ALIGNED : %s\n  WRITEBACKIFCOPY : %s\n",
                              flag_value(a, FL_C) ? "True" : "False", flag_value(a, FL_F) ? "True" : "False",
                              flag_value(a, FL_O) ? "True" : "False", flag_value(a, FL_W) ? "True" : "False",
                              "True", "False"));
}

static Value fl_getattr(VM *vm, Value self, Str *name) {
    int f = flag_attr(name->chars);
    if (f >= 0) return BOOL_VAL(flag_value(FL_ARR(self), f));
    if (name->chars[0] == '_') return generic_getattr(vm, self, name);
    vm_raise_kind(vm, AttributeError, "'numpy._core.multiarray.flagsobj' object has no attribute '%s'", name->chars);
}

static Value fl_getitem(VM *vm, Value self, Value key) {
    int f = IS_STR(vm, key) ? flag_key(AS_STR(key)->chars) : -1;
    if (f < 0) vm_raise_kind(vm, KeyError, "Unknown flag");
    return BOOL_VAL(flag_value(FL_ARR(self), f));
}

/* Only WRITEABLE can change; True needs a writeable owner. */
static void set_writeable(VM *vm, NDArray *a, Value value) {
    if (IS_EMPTY(value)) vm_raise_kind(vm, AttributeError, "cannot delete flag");
    if (!vm_truthy(vm, value)) {
        a->flags &= ~ND_WRITEABLE;
        return;
    }
    if (nd_check(vm, a->base) && !(ND_AS(a->base)->flags & ND_WRITEABLE))
        vm_raise_kind(vm, ValueError, "cannot set WRITEABLE flag to True of this array");
    a->flags |= ND_WRITEABLE;
}

static void fl_setattr(VM *vm, Value self, Str *name, Value value) {
    int f = flag_attr(name->chars);
    if (f == FL_W) { set_writeable(vm, FL_ARR(self), value); return; }
    if (f >= 0)
        vm_raise_kind(vm, AttributeError, "attribute '%s' of 'numpy._core.multiarray.flagsobj' objects is not writable", name->chars);
    vm_raise_kind(vm, AttributeError, "'numpy._core.multiarray.flagsobj' object has no attribute '%s'", name->chars);
}

static void fl_setitem(VM *vm, Value self, Value key, Value value) {
    int f = IS_STR(vm, key) ? flag_key(AS_STR(key)->chars) : -1;
    if (f < 0) vm_raise_kind(vm, KeyError, "Unknown flag");
    if (f != FL_W) vm_raise_kind(vm, KeyError, "Unknown flag");
    set_writeable(vm, FL_ARR(self), value);
}

static Value flags_new(VM *vm, Value arr) {
    NDFlagsObj *f = gc_alloc_obj(vm, nd_state(vm)->t_flags, sizeof(NDFlagsObj));
    f->arr = arr;
    return OBJ_VAL(f);
}

static Value arr_iter(VM *vm, Value self) {
    if (ND_AS(self)->ndim == 0) vm_raise_kind(vm, TypeError, "iteration over a 0-d array");
    return it_new(vm, self, false);
}

static Value arr_getattr(VM *vm, Value self, Str *name) {
    NDArray *a = ND_AS(self);
    const char *s = name->chars;
    switch (s[0]) {
    case 'T': if (!s[1]) return OBJ_VAL(transpose(vm, a, NULL)); break;
    case 'b': if (!strcmp(s, "base")) return a->base; break;
    case 'd': if (!strcmp(s, "dtype")) return nd_dtype_object(vm, a->dtype); break;
    case 'f':
        if (!strcmp(s, "flat")) return it_new(vm, self, true);
        if (!strcmp(s, "flags")) return flags_new(vm, self);
        break;
    case 'i':
        if (!strcmp(s, "itemsize")) return INT_VAL((int64_t)nd_itemsize(a->dtype));
        if (!strcmp(s, "imag")) return nd_complex_part(vm, self, true);
        break;
    case 'n':
        if (!strcmp(s, "ndim")) return INT_VAL(a->ndim);
        if (!strcmp(s, "nbytes")) return INT_VAL(a->size * (int64_t)nd_itemsize(a->dtype));
        break;
    case 's':
        if (!strcmp(s, "shape")) return nd_shape_tuple(vm, a->ndim, a->shape);
        if (!strcmp(s, "size")) return INT_VAL(a->size);
        if (!strcmp(s, "strides")) return nd_shape_tuple(vm, a->ndim, a->strides);
        break;
    case 'r': if (!strcmp(s, "real")) return nd_complex_part(vm, self, false); break;
    default: break;
    }
    return generic_getattr(vm, self, name);
}

/* The shape of reshape(...) arguments, with one -1 inferred. */
static int reshape_shape(VM *vm, NDArray *a, int argc, Value *argv, int64_t *shape) {
    int nd;
    if (argc == 1) nd = 0;
    else if (argc == 2 && (IS_TUPLE(vm, argv[1]) || IS_LIST(vm, argv[1]))) {
        Value v = argv[1];
        int64_t n = IS_TUPLE(vm, v) ? AS_TUPLE(v)->len : AS_LIST(v)->len;
        Value *it = IS_TUPLE(vm, v) ? AS_TUPLE(v)->items : AS_LIST(v)->items;
        if (n > ND_MAXDIM) vm_raise_kind(vm, ValueError, "too many dimensions");
        for (int64_t i = 0; i < n; i++) shape[i] = vm_to_index(vm, it[i]);
        nd = (int)n;
    } else {
        if (argc - 1 > ND_MAXDIM) vm_raise_kind(vm, ValueError, "too many dimensions");
        for (int i = 1; i < argc; i++) shape[i - 1] = vm_to_index(vm, argv[i]);
        nd = argc - 1;
    }
    /* numpy 2's _fix_unknown_dimension: any negative entry is the unknown
    ** one; the product of the others must not overflow */
    int neg = -1;
    int64_t known = 1;
    for (int i = 0; i < nd; i++) {
        if (shape[i] < 0) {
            if (neg >= 0) vm_raise_kind(vm, ValueError, "can only specify one unknown dimension");
            neg = i;
        } else if (__builtin_mul_overflow(known, shape[i], &known)) goto bad;
    }
    if (neg >= 0) {
        if (known == 0 || a->size % known) goto bad;
        shape[neg] = a->size / known;
    } else if (known != a->size) goto bad;
    return nd;
bad:;
    /* numpy's convert_shape_to_string: leading unknowns are left out, later
    ** ones print as "newaxis" */
    char buf[400];
    int i = 0, w = 0;
    while (i < nd && shape[i] < 0) i++;
    w += snprintf(buf + w, sizeof buf - (size_t)w, "(");
    for (int first = i; i < nd && w < (int)sizeof buf - 24; i++) {
        if (shape[i] < 0) w += snprintf(buf + w, sizeof buf - (size_t)w, ",newaxis");
        else w += snprintf(buf + w, sizeof buf - (size_t)w, i > first ? ",%lld" : "%lld", (long long)shape[i]);
    }
    snprintf(buf + w, sizeof buf - (size_t)w, nd == 1 && shape[0] >= 0 ? ",)" : ")");
    vm_raise_kind(vm, ValueError, "cannot reshape array of size %lld into shape %s", (long long)a->size, buf);
}

/* A C-order reshape: a view when a is contiguous, else a copy. */
static NDArray *reshape(VM *vm, NDArray *a, int nd, const int64_t *shape) {
    if (!(a->flags & ND_C_CONTIGUOUS)) {
        a = nd_copy(vm, a);
        NDArray *r = nd_wrap(vm, a->dtype, a->data, nd, shape, NULL, OBJ_VAL(a));
        return r;
    }
    return nd_view(vm, a, a->data, nd, shape, NULL);
}

/* The strides that let a (size > 0) be seen with shape newdims without a
** copy, numpy's _attempt_nocopy_reshape (C order): each group of old axes
** whose product equals a group of new axes must be contiguous in memory.
** False when no such strides exist. */
static bool nocopy_strides(const NDArray *a, int newnd, const int64_t *newdims, int64_t *newstrides) {
    int64_t od[ND_MAXDIM], os[ND_MAXDIM];
    int oldnd = 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != 1) { od[oldnd] = a->shape[i]; os[oldnd++] = a->strides[i]; }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < newnd && oi < oldnd) {
        int64_t np = newdims[ni], op = od[oi];
        while (np != op) {
            if (np < op) np *= newdims[nj++];
            else op *= od[oj++];
        }
        for (int ok = oi; ok < oj - 1; ok++)
            if (os[ok] != od[ok + 1] * os[ok + 1]) return false;
        newstrides[nj - 1] = os[oj - 1];
        for (int nk = nj - 1; nk > ni; nk--) newstrides[nk - 1] = newstrides[nk] * newdims[nk];
        ni = nj++;
        oi = oj++;
    }
    /* trailing axes of length 1 */
    int64_t last = ni > 0 ? newstrides[ni - 1] : (int64_t)nd_itemsize(a->dtype);
    for (int nk = ni; nk < newnd; nk++) newstrides[nk] = last;
    return true;
}

/* a.shape = s: numpy's in-place reshape, never a copy. */
static void set_shape(VM *vm, NDArray *a, Value v) {
    if (IS_NONE(v)) vm_raise_kind(vm, TypeError, "Use () not None as shape arguments");
    int64_t shape[ND_MAXDIM], strides[ND_MAXDIM];
    Value args[2] = {OBJ_VAL(a), v};
    int nd = reshape_shape(vm, a, 2, args, shape);
    nd_shape_size(vm, nd, shape, a->dtype);
    if (a->size == 0) {
        for (int i = 0; i < nd; i++) strides[i] = 0; /* numpy 2: empty arrays have zero strides */
    } else if (!nocopy_strides(a, nd, shape, strides)) {
        vm_raise_kind(vm, AttributeError,
                      "Incompatible shape for in-place modification. Use `.reshape()` to make a copy with the desired shape.");
    }
    nd_set_layout(vm, a, nd, shape, strides);
}

static void arr_setattr(VM *vm, Value self, Str *name, Value value) {
    static const char *const readonly[] = {"T", "base", "flags", "itemsize", "nbytes", "ndim", "size"};
    const char *s = name->chars;
    if (!strcmp(s, "shape")) {
        if (IS_EMPTY(value)) vm_raise_kind(vm, AttributeError, "Cannot delete array shape");
        set_shape(vm, ND_AS(self), value);
        return;
    }
    for (size_t i = 0; i < sizeof readonly / sizeof readonly[0]; i++)
        if (!strcmp(s, readonly[i]))
            vm_raise_kind(vm, AttributeError, "attribute '%s' of 'numpy.ndarray' objects is not writable", s);
    generic_setattr(vm, self, name, value);
}

static Value m_reshape(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "reshape", kw);
    NDArray *a = ND_AS(argv[0]);
    int64_t shape[ND_MAXDIM];
    int nd = reshape_shape(vm, a, argc, argv, shape);
    return OBJ_VAL(reshape(vm, a, nd, shape));
}
static Value m_ravel(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "ravel", kw);
    (void)argc;
    NDArray *a = ND_AS(argv[0]);
    return OBJ_VAL(reshape(vm, a, 1, &a->size));
}
static Value m_flatten(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "flatten", kw);
    (void)argc;
    NDArray *c = nd_copy(vm, ND_AS(argv[0]));
    if (c->ndim != 1) {
        vm_push_root(vm, OBJ_VAL(c));
        NDArray *r = nd_wrap(vm, c->dtype, c->data, 1, &c->size, NULL, OBJ_VAL(c));
        vm_pop_roots(vm, 1);
        return OBJ_VAL(r);
    }
    return OBJ_VAL(c);
}
static Value m_transpose(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "transpose", kw);
    NDArray *a = ND_AS(argv[0]);
    if (argc == 1 || (argc == 2 && IS_NONE(argv[1]))) return OBJ_VAL(transpose(vm, a, NULL));
    int64_t ax[ND_MAXDIM];
    int n;
    if (argc == 2 && (IS_TUPLE(vm, argv[1]) || IS_LIST(vm, argv[1]))) n = nd_parse_shape(vm, argv[1], ax);
    else {
        n = argc - 1;
        if (n > ND_MAXDIM) n = ND_MAXDIM;
        for (int i = 0; i < n; i++) ax[i] = vm_to_index(vm, argv[i + 1]);
    }
    if (n != a->ndim) vm_raise_kind(vm, ValueError, "axes don't match array");
    int perm[ND_MAXDIM];
    bool seen[ND_MAXDIM] = {0};
    for (int i = 0; i < n; i++) {
        int64_t x = ax[i] < 0 ? ax[i] + n : ax[i];
        if (x < 0 || x >= n)
            vm_raise_kind(vm, ValueError, "axis %lld is out of bounds for array of dimension %d", (long long)ax[i], n);
        if (seen[x]) vm_raise_kind(vm, ValueError, "repeated axis in transpose");
        seen[x] = true;
        perm[i] = (int)x;
    }
    return OBJ_VAL(transpose(vm, a, perm));
}
static Value m_copy(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "copy", kw);
    (void)argc;
    return OBJ_VAL(nd_copy(vm, ND_AS(argv[0])));
}
static Value m_astype(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "astype", kw);
    arg_between(vm, "astype", argc, 2, 2);
    return OBJ_VAL(nd_astype(vm, ND_AS(argv[0]), nd_dtype_from_value(vm, argv[1])));
}

static Value tolist_rec(VM *vm, NDArray *a, int d, char *p) {
    if (d == a->ndim) return nd_load_value(vm, a->dtype, p);
    List *l = list_new(vm, a->shape[d]);
    vm_push_root(vm, OBJ_VAL(l));
    for (int64_t i = 0; i < a->shape[d]; i++) list_append(vm, l, tolist_rec(vm, a, d + 1, p + i * a->strides[d]));
    vm_pop_roots(vm, 1);
    return OBJ_VAL(l);
}
static Value m_tolist(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "tolist", kw);
    (void)argc;
    NDArray *a = ND_AS(argv[0]);
    return tolist_rec(vm, a, 0, a->data);
}
static Value m_item(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "item", kw);
    NDArray *a = ND_AS(argv[0]);
    if (argc == 1) {
        if (a->size != 1) vm_raise_kind(vm, ValueError, "can only convert an array of size 1 to a Python scalar");
        return nd_load_value(vm, a->dtype, a->data);
    }
    int64_t k = vm_to_index(vm, argv[1]), i = k < 0 ? k + a->size : k;
    if (i < 0 || i >= a->size)
        vm_raise_kind(vm, IndexError, "index %lld is out of bounds for size %lld", (long long)k, (long long)a->size);
    NDElem e;
    nd_store_f(ND_FLOAT64, &e, 0);
    char *p = a->data;
    int64_t flat = i;
    for (int d = a->ndim - 1; d >= 0; d--) {
        p += (flat % a->shape[d]) * a->strides[d];
        flat /= a->shape[d];
    }
    return nd_load_value(vm, a->dtype, p);
}
static Value m_fill(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "fill", kw);
    arg_between(vm, "fill", argc, 2, 2);
    NDArray *a = ND_AS(argv[0]);
    NDElem e;
    nd_store_value(vm, a->dtype, &e, argv[1]);
    NDArray *src = nd_wrap(vm, a->dtype, &e, 0, NULL, NULL, NONE_VAL);
    nd_assign(vm, a, src);
    return NONE_VAL;
}
/* squeeze: drops the length-1 axes (all, or those of axis=int/tuple). */
Value nd_squeeze(VM *vm, NDArray *a, Value axisv) {
    bool drop[ND_MAXDIM];
    if (IS_EMPTY(axisv) || IS_NONE(axisv)) {
        for (int i = 0; i < a->ndim; i++) drop[i] = a->shape[i] == 1;
    } else {
        for (int i = 0; i < a->ndim; i++) drop[i] = false;
        int n = IS_TUPLE(vm, axisv) ? (int)AS_TUPLE(axisv)->len : 1;
        for (int j = 0; j < n; j++) {
            Value v = IS_TUPLE(vm, axisv) ? AS_TUPLE(axisv)->items[j] : axisv;
            int64_t ax = vm_to_index(vm, v);
            if (ax < -a->ndim || ax >= a->ndim)
                vm_raise_kind(vm, ValueError, "axis %lld is out of bounds for array of dimension %d", (long long)ax, a->ndim);
            if (ax < 0) ax += a->ndim;
            if (drop[ax]) vm_raise_kind(vm, ValueError, "duplicate value in 'axis'");
            if (a->shape[ax] != 1)
                vm_raise_kind(vm, ValueError, "cannot select an axis to squeeze out which has size not equal to one");
            drop[ax] = true;
        }
    }
    int64_t sh[ND_MAXDIM], st[ND_MAXDIM];
    int n = 0;
    for (int i = 0; i < a->ndim; i++)
        if (!drop[i]) { sh[n] = a->shape[i]; st[n++] = a->strides[i]; }
    return OBJ_VAL(nd_view(vm, a, a->data, n, sh, st));
}
static Value m_squeeze(VM *vm, int argc, Value *argv, Dict *kw) {
    Value axisv = kw_take(vm, kw, "axis");
    kw_done(vm, "squeeze", kw);
    arg_between(vm, "squeeze", argc, 1, 2);
    if (argc == 2) axisv = argv[1];
    return nd_squeeze(vm, ND_AS(argv[0]), axisv);
}
static Value m_swapaxes(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "swapaxes", kw);
    arg_between(vm, "swapaxes", argc, 3, 3);
    NDArray *a = ND_AS(argv[0]);
    int64_t x = vm_to_index(vm, argv[1]), y = vm_to_index(vm, argv[2]);
    if (x < 0) x += a->ndim;
    if (y < 0) y += a->ndim;
    if (x < 0 || x >= a->ndim || y < 0 || y >= a->ndim)
        vm_raise_kind(vm, ValueError, "axis is out of bounds for array of dimension %d", a->ndim);
    int perm[ND_MAXDIM];
    for (int i = 0; i < a->ndim; i++) perm[i] = i;
    perm[x] = (int)y;
    perm[y] = (int)x;
    return OBJ_VAL(transpose(vm, a, perm));
}
static Value m_float(VM *vm, int argc, Value *argv, Dict *kw) {
    NDArray *a = ND_AS(argv[0]);
    (void)argc; (void)kw;
    if (a->size != 1) vm_raise_kind(vm, TypeError, "only 0-dimensional arrays can be converted to Python scalars");
    return FLOAT_VAL(nd_load_f(a->dtype, a->data));
}
static Value m_int(VM *vm, int argc, Value *argv, Dict *kw) {
    NDArray *a = ND_AS(argv[0]);
    (void)argc; (void)kw;
    if (a->size != 1) vm_raise_kind(vm, TypeError, "only 0-dimensional arrays can be converted to Python scalars");
    return INT_VAL(nd_load_i(a->dtype, a->data));
}

/* Module-level np.reshape / np.transpose / np.ravel and shape queries. */
static Value f_reshape(VM *vm, int argc, Value *argv, Dict *kw) {
    arg_between(vm, "reshape", argc, 2, 2);
    Value a = OBJ_VAL(nd_from_value(vm, argv[0], -1));
    Value args[2] = {a, argv[1]};
    return m_reshape(vm, 2, args, kw);
}
static Value f_transpose(VM *vm, int argc, Value *argv, Dict *kw) {
    arg_between(vm, "transpose", argc, 1, 2);
    Value args[2] = {OBJ_VAL(nd_from_value(vm, argv[0], -1)), argc == 2 ? argv[1] : NONE_VAL};
    return m_transpose(vm, 2, args, kw);
}
static Value f_ravel(VM *vm, int argc, Value *argv, Dict *kw) {
    arg_between(vm, "ravel", argc, 1, 1);
    Value a = OBJ_VAL(nd_from_value(vm, argv[0], -1));
    return m_ravel(vm, 1, &a, kw);
}
static Value f_shape(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "shape", kw);
    arg_between(vm, "shape", argc, 1, 1);
    NDArray *a = nd_from_value(vm, argv[0], -1);
    return nd_shape_tuple(vm, a->ndim, a->shape);
}
static Value f_ndim(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "ndim", kw);
    arg_between(vm, "ndim", argc, 1, 1);
    return INT_VAL(nd_from_value(vm, argv[0], -1)->ndim);
}
static Value f_size(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_done(vm, "size", kw);
    arg_between(vm, "size", argc, 1, 1);
    return INT_VAL(nd_from_value(vm, argv[0], -1)->size);
}

void nd_array_type_init(VM *vm, NDState *st) {
    Type *t = st->t_array;
    t->repr = arr_repr;
    t->str = arr_str;
    t->len = arr_len;
    t->hash = arr_hash;
    t->truthy = arr_truthy;
    t->iter = arr_iter;
    t->getattr = arr_getattr;
    t->setattr = arr_setattr;
    t->getitem = nd_getitem;
    t->setitem = nd_setitem;
    t->binop = nd_binop;
    t->compare = nd_compare;
    t->unop = nd_unop;
    static const struct { const char *name; NativeFn fn; } ms[] = {
        {"reshape", m_reshape}, {"ravel", m_ravel}, {"flatten", m_flatten}, {"transpose", m_transpose},
        {"copy", m_copy}, {"astype", m_astype}, {"tolist", m_tolist}, {"item", m_item}, {"fill", m_fill},
        {"squeeze", m_squeeze}, {"swapaxes", m_swapaxes}, {"__float__", m_float}, {"__int__", m_int},
    };
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) type_add_method(vm, t, ms[i].name, ms[i].fn);
    Type *it = type_new_builtin(vm, "flatiter", vm->t_object, 0);
    it->mark = it_mark;
    it->iter = it_iter;
    it->next = it_next;
    it->getitem = it_getitem;
    it->setitem = it_setitem;
    type_add_method(vm, it, "__len__", it_len_fn);
    st->t_iter = it;
    Type *fl = type_new_builtin(vm, "flagsobj", vm->t_object, 0);
    fl->mark = fl_mark;
    fl->str = fl_str;
    fl->repr = fl_str;
    fl->getattr = fl_getattr;
    fl->setattr = fl_setattr;
    fl->getitem = fl_getitem;
    fl->setitem = fl_setitem;
    st->t_flags = fl;
}

void nd_array_funcs_init(VM *vm, Module *m) {
    static const struct { const char *name; NativeFn fn; } fns[] = {
        {"reshape", f_reshape}, {"transpose", f_transpose}, {"ravel", f_ravel},
        {"shape", f_shape}, {"ndim", f_ndim}, {"size", f_size},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);
}
