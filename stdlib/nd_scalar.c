/*
** nd_scalar.c — numpy scalar types (np.float32, np.int64, np.bool_, ...):
** one Type per dtype whose instances hold one element. Arithmetic goes
** through the array operators (a scalar is a strong 0-d operand), so
** np.float32(1) + 1 stays float32 like numpy.
*/
#include "nd_priv.h"

Value nd_scalar_from_ptr(VM *vm, NDType dt, const void *p) {
    NDScalar *s = gc_alloc_obj(vm, nd_state(vm)->t_scalar[dt], sizeof(NDScalar));
    s->dtype = dt;
    memset(&s->v, 0, sizeof s->v);
    memcpy(&s->v, p, nd_itemsize(dt));
    return OBJ_VAL(s);
}

#define SC(v) ((NDScalar *)AS_OBJ(v))

static Value sc_repr(VM *vm, Value self) { return STR_VAL(nd_format_scalar(vm, SC(self)->dtype, &SC(self)->v, true)); }
static Value sc_str(VM *vm, Value self) { return STR_VAL(nd_format_scalar(vm, SC(self)->dtype, &SC(self)->v, false)); }

static bool sc_truthy(VM *vm, Value self) {
    (void)vm;
    NDScalar *s = SC(self);
    if (nd_is_complex(s->dtype)) {
        double re, im;
        nd_load_c(s->dtype, &s->v, &re, &im);
        return re != 0 || im != 0;
    }
    if (nd_is_float(s->dtype)) return nd_load_f(s->dtype, &s->v) != 0;
    return nd_load_u(s->dtype, &s->v) != 0;
}

/* Same hash as the equal Python number, so dict keys mix. */
static int64_t sc_hash(VM *vm, Value self) {
    NDScalar *s = SC(self);
    return vm_hash(vm, nd_load_value(vm, s->dtype, &s->v));
}

static Value m_float(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__float__", kw);
    (void)argc;
    return FLOAT_VAL(nd_load_f(SC(argv[0])->dtype, &SC(argv[0])->v));
}
static Value m_int(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__int__", kw);
    (void)argc;
    NDScalar *s = SC(argv[0]);
    if (nd_is_float(s->dtype) || nd_is_complex(s->dtype)) { /* complex: the real part (numpy warns) */
        double d = nd_load_f(s->dtype, &s->v);
        if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
        if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
        if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
            vm_raise_kind(vm, OverflowError, "Python int too large to convert to C long");
        return INT_VAL((int64_t)d);
    }
    return nd_load_value(vm, s->dtype, &s->v).tag == VAL_FLOAT ? FLOAT_VAL(nd_load_f(s->dtype, &s->v))
                                                          : INT_VAL(nd_load_i(s->dtype, &s->v));
}
static Value m_index(VM *vm, int argc, Value *argv, Dict *kw) {
    NDScalar *s = SC(argv[0]);
    if (nd_is_float(s->dtype))
        vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", nd_dtype_name(s->dtype));
    return m_int(vm, argc, argv, kw);
}
static Value m_complex(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__complex__", kw);
    (void)argc;
    double re, im;
    nd_load_c(SC(argv[0])->dtype, &SC(argv[0])->v, &re, &im);
    return complex_value(vm, re, im);
}
static Value m_item(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "item", kw);
    (void)argc;
    return nd_load_value(vm, SC(argv[0])->dtype, &SC(argv[0])->v);
}
static Value m_astype(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "astype", kw);
    arg_between(vm, "astype", argc, 2, 2);
    NDType dt = nd_dtype_from_value(vm, argv[1]);
    NDElem e;
    nd_cast1(dt, &e, SC(argv[0])->dtype, &SC(argv[0])->v);
    return nd_scalar_from_ptr(vm, dt, &e);
}
static Value m_is_integer(VM *vm, int argc, Value *argv, Dict *kw) {
    (void)vm; (void)argc; (void)kw;
    NDScalar *s = SC(argv[0]);
    if (!nd_is_float(s->dtype)) return BOOL_VAL(true);
    double d = nd_load_f(s->dtype, &s->v);
    return BOOL_VAL(isfinite(d) && d == floor(d));
}

/* round(x) gives a Python int (half to even); round(x, n) a scalar of
** x's dtype rounded like np.round. */
static Value m_round(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__round__", kw);
    arg_between(vm, "__round__", argc, 1, 2);
    NDScalar *s = SC(argv[0]);
    if (argc == 2 && !IS_NONE(argv[1])) return nd_round(vm, argv[0], vm_to_index(vm, argv[1]));
    if (!nd_is_float(s->dtype)) return m_int(vm, 1, argv, NULL);
    double d = nearbyint(nd_load_f(s->dtype, &s->v));
    if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
    if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
    if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
        vm_raise_kind(vm, OverflowError, "Python int too large to convert to C long");
    return INT_VAL((int64_t)d);
}

/* divmod(x, y) = (x // y, x % y) with numpy's scalar arithmetic. */
static Value sc_divmod(VM *vm, Value x, Value y) {
    Value q = nd_binop(vm, BINOP_FLOORDIV, x, y);
    if (IS_EMPTY(q)) return vm->not_implemented;
    vm_push_root(vm, q);
    Value r = nd_binop(vm, BINOP_MOD, x, y);
    vm_push_root(vm, r);
    Tuple *t = tuple_new(vm, 2);
    t->items[0] = q;
    t->items[1] = IS_EMPTY(r) ? NONE_VAL : r;
    vm_pop_roots(vm, 2);
    return OBJ_VAL(t);
}
static Value m_divmod(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__divmod__", kw);
    arg_between(vm, "__divmod__", argc, 2, 2);
    return sc_divmod(vm, argv[0], argv[1]);
}
static Value m_rdivmod(VM *vm, int argc, Value *argv, Dict *kw) {
    kw_none(vm, "__rdivmod__", kw);
    arg_between(vm, "__rdivmod__", argc, 2, 2);
    return sc_divmod(vm, argv[1], argv[0]);
}

static Value sc_getattr(VM *vm, Value self, Str *name) {
    NDScalar *s = SC(self);
    const char *n = name->chars;
    if (!strcmp(n, "dtype")) return nd_dtype_object(vm, s->dtype);
    if (!strcmp(n, "shape")) return OBJ_VAL(tuple_new(vm, 0));
    if (!strcmp(n, "ndim")) return INT_VAL(0);
    if (!strcmp(n, "size")) return INT_VAL(1);
    if (!strcmp(n, "itemsize") || !strcmp(n, "nbytes")) return INT_VAL((int64_t)nd_itemsize(s->dtype));
    if (nd_is_complex(s->dtype) && (!strcmp(n, "real") || !strcmp(n, "imag"))) {
        NDElem part;
        NDType pt = nd_complex_part_type(s->dtype);
        memcpy(&part, s->v.b + (n[0] == 'i' ? nd_itemsize(pt) : 0), nd_itemsize(pt));
        return nd_scalar_from_ptr(vm, pt, &part);
    }
    if (!strcmp(n, "real") || !strcmp(n, "T")) return self;
    if (!strcmp(n, "imag")) {
        NDElem z = {0};
        return nd_scalar_from_ptr(vm, s->dtype, &z);
    }
    return generic_getattr(vm, self, name);
}

/* np.float32(x): a scalar from a number or string; an array from arrays
** and sequences (like numpy). */
static Value sc_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    NDType dt = (NDType)nd_dtype_try(vm, OBJ_VAL(cls));
    NDElem e = {0};
    if (nd_is_complex(dt) && argc == 2) { /* np.complex64(re, im), as complex(re, im) */
        kw_done(vm, cls->cname, kwargs);
        Value z = vm_call(vm, OBJ_VAL(vm->t_complex), 2, argv);
        nd_store_value(vm, dt, &e, z);
        return nd_scalar_from_ptr(vm, dt, &e);
    }
    kw_done(vm, cls->cname, kwargs);
    arg_between(vm, cls->cname, argc, 0, 1);
    if (argc == 0) return nd_scalar_from_ptr(vm, dt, &e);
    Value v = argv[0];
    if (nd_check(vm, v) || IS_LIST(vm, v) || IS_TUPLE(vm, v)) {
        NDArray *a = nd_array_from(vm, v, dt, true);
        return nd_result(vm, a);
    }
    if (IS_STR(vm, v) && !nd_is_float(dt) && !nd_is_complex(dt)) {
        Value i = int_from_str(vm, AS_STR(v)->chars, (size_t)AS_STR(v)->len, 10);
        nd_store_value(vm, dt, &e, i);
    } else if ((IS_INT(v) || (IS_OBJ(v) && AS_OBJ(v)->type == vm->t_int)) && !nd_is_float(dt) && dt != ND_BOOL) {
        nd_store_value(vm, dt, &e, v); /* a big int too: numpy's OverflowError */
    } else if (nd_is_scalar(vm, v)) { /* np.int8(np.float64(300.0)): numpy casts */
        nd_cast1(dt, &e, ((NDScalar *)AS_OBJ(v))->dtype, &((NDScalar *)AS_OBJ(v))->v);
    } else if (dt == ND_BOOL && !IS_NUMBER(v)) {
        bool b = vm_truthy(vm, v);
        e.b[0] = b;
    } else {
        nd_store_value(vm, dt, &e, v);
    }
    return nd_scalar_from_ptr(vm, dt, &e);
}

void nd_scalar_init(VM *vm, NDState *st) {
    for (int i = 0; i < ND__COUNT; i++) {
        Type *t = type_new_builtin(vm, dtype_name((NDType)i), vm->t_object, 0);
        t->new_ = sc_new;
        t->repr = sc_repr;
        t->str = sc_str;
        t->truthy = sc_truthy;
        t->hash = sc_hash;
        t->binop = nd_binop;
        t->compare = nd_compare;
        t->unop = nd_unop;
        t->getattr = sc_getattr;
        type_add_method(vm, t, "__float__", m_float);
        type_add_method(vm, t, "__int__", m_int);
        type_add_method(vm, t, "__complex__", m_complex);
        if (!nd_is_float((NDType)i) && !nd_is_complex((NDType)i)) type_add_method(vm, t, "__index__", m_index);
        type_add_method(vm, t, "item", m_item);
        if (i != ND_BOOL) type_add_method(vm, t, "__round__", m_round);
        type_add_method(vm, t, "__divmod__", m_divmod);
        type_add_method(vm, t, "__rdivmod__", m_rdivmod);
        type_add_method(vm, t, "tolist", m_item);
        type_add_method(vm, t, "astype", m_astype);
        type_add_method(vm, t, "is_integer", m_is_integer);
        st->t_scalar[i] = t;
    }
}
