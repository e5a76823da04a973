/*
** numba_types.c — Numba's type objects: numba.float32, numba.void,
** numba.types.Array(...), and the signatures they build.
**
** Real Numba code builds its kernel signatures from these objects:
**   float32[:, ::1]            an array type (subscripting a scalar type)
**   void(float32[:], int32)    a signature (calling a type with types)
**   float32(1.1)               a cast (calling a type with a value)
** and also passes them as dtypes (np.zeros(3, numba.float32),
** cuda.local.array(4, float32)). The compiler reads signatures as text
** (jit/signature.c), so a signature or a tuple of types given to cuda.jit or
** compile_ptx is written back as that text (numba_signature_text); as a
** dtype, a scalar type answers nd_dtype_try (numba_type_dtype).
**
** Scalar types and none are one object each per VM (numba.float32 is
** numba.types.float32); array types and signatures compare by value.
*/
#include <string.h>

#include "cuda_priv.h"
#include "numba_types.h"

/* A scalar type (dtype >= 0, !is_array), none (dtype < 0), or an array type. */
typedef struct NumbaType {
    Obj obj;
    int8_t dtype; /* NDType; -1 for none */
    bool is_array;
    uint8_t ndim;
    char layout; /* arrays: 'C', 'F' or 'A' */
} NumbaType;

/* What calling a type with types returns: (args) -> return_type. */
typedef struct NumbaSig {
    Obj obj;
    Value ret;  /* a NumbaType */
    Value args; /* a tuple of NumbaTypes */
} NumbaSig;

/* The per-VM state rides on the base type numba.core.types.abstract.Type,
** so it lives as long as the VM's types and needs no free hook; the
** singletons stay alive through the base type's dict (_gpy_singletons). */
typedef struct NumbaTypesState {
    Type base;
    Type *t_bool, *t_int, *t_float, *t_complex, *t_none, *t_array, *t_sig;
    NumbaType *scalar[ND__COUNT];
    NumbaType *none;
    Module *types; /* numba.types */
} NumbaTypesState;

static NumbaTypesState *ntstate(VM *vm);

static bool is_ntype(VM *vm, Value v) {
    if (!IS_OBJ(v) || !vm->cuda || !vm->cuda->numba_types) return false;
    return AS_OBJ(v)->type->base == vm->cuda->numba_types;
}

static bool is_nsig(VM *vm, Value v) {
    return IS_OBJ(v) && vm->cuda && vm->cuda->numba_types &&
           AS_OBJ(v)->type == ((NumbaTypesState *)vm->cuda->numba_types)->t_sig;
}

static NumbaType *as_nt(Value v) { return (NumbaType *)AS_OBJ(v); }

int numba_type_dtype(VM *vm, Value v) {
    if (!is_ntype(vm, v)) return -1;
    NumbaType *t = as_nt(v);
    return t->is_array ? -1 : t->dtype;
}

/* ------------------------------------------------------------ text forms */

static const char *scalar_name(int dtype) { return dtype < 0 ? "none" : dtype_name((NDType)dtype); }

/* Numba's str: float32, none, array(float32, 2d, C) */
static void type_str_to(StrBuf *sb, const NumbaType *t) {
    if (!t->is_array) sb_appends(sb, scalar_name(t->dtype));
    else sb_printf(sb, "array(%s, %dd, %c)", scalar_name(t->dtype), t->ndim, t->layout);
}

/* Numba's repr: float32, Array(float32, 2, 'C', False, aligned=True) */
static void type_repr_to(StrBuf *sb, const NumbaType *t) {
    if (!t->is_array) sb_appends(sb, scalar_name(t->dtype));
    else sb_printf(sb, "Array(%s, %d, '%c', False, aligned=True)", scalar_name(t->dtype), t->ndim, t->layout);
}

/* The text jit/signature.c reads: float32, void, float32[:, ::1] (false
** for a type that text cannot spell: 0-d arrays). */
static bool type_sig_to(StrBuf *sb, const NumbaType *t) {
    if (!t->is_array) {
        sb_appends(sb, t->dtype < 0 ? "void" : dtype_name((NDType)t->dtype));
        return true;
    }
    if (t->ndim == 0) return false;
    sb_printf(sb, "%s[", dtype_name((NDType)t->dtype));
    for (int i = 0; i < t->ndim; i++) {
        bool unit = (t->layout == 'C' && i == t->ndim - 1) || (t->layout == 'F' && i == 0);
        sb_appends(sb, i ? ", " : "");
        sb_appends(sb, unit ? "::1" : ":");
    }
    sb_putc(sb, ']');
    return true;
}

/* "(Array(float32, 1, 'A', False, aligned=True), int32) -> none": the
** arguments as a tuple of reprs, then the return type's str. */
static void sig_str_to(StrBuf *sb, const NumbaSig *s) {
    Tuple *a = AS_TUPLE(s->args);
    sb_putc(sb, '(');
    for (int64_t i = 0; i < a->len; i++) {
        if (i) sb_appends(sb, ", ");
        type_repr_to(sb, as_nt(a->items[i]));
    }
    sb_appends(sb, a->len == 1 ? ",) -> " : ") -> ");
    type_str_to(sb, as_nt(s->ret));
}

static Value nt_repr(VM *vm, Value self) {
    StrBuf sb;
    sb_init(&sb);
    type_repr_to(&sb, as_nt(self));
    return STR_VAL(sb_finish(vm, &sb));
}

static Value nt_str(VM *vm, Value self) {
    StrBuf sb;
    sb_init(&sb);
    type_str_to(&sb, as_nt(self));
    return STR_VAL(sb_finish(vm, &sb));
}

static Value sig_str(VM *vm, Value self) {
    StrBuf sb;
    sb_init(&sb);
    sig_str_to(&sb, (NumbaSig *)AS_OBJ(self));
    return STR_VAL(sb_finish(vm, &sb));
}

/* ------------------------------------------------------------- creation */

static NumbaType *nt_alloc(VM *vm, Type *cls, int dtype, bool is_array, int ndim, char layout) {
    NumbaType *t = gc_alloc_obj(vm, cls, sizeof(NumbaType));
    t->dtype = (int8_t)dtype;
    t->is_array = is_array;
    t->ndim = (uint8_t)ndim;
    t->layout = layout;
    return t;
}

static Value array_type(VM *vm, const NumbaType *dtype, int ndim, char layout) {
    if (dtype->is_array)
        vm_raise_kind(vm, TypeError, "The dtype of a Buffer type cannot itself be a Buffer type, this is unsupported behaviour.");
    if (dtype->dtype < 0) vm_raise_kind(vm, TypeError, "gpy has no arrays of none");
    return OBJ_VAL(nt_alloc(vm, ntstate(vm)->t_array, dtype->dtype, true, ndim, layout));
}

/* ret(args...): args must all be types. */
static Value make_sig(VM *vm, Value ret, int argc, const Value *argv) {
    for (int i = 0; i < argc; i++)
        if (!is_ntype(vm, argv[i]))
            vm_raise_kind(vm, TypeError, "a signature takes Numba types such as int32 or float32[:], not '%s'",
                          vm_type_name(vm, argv[i]));
    Tuple *args = tuple_from_array(vm, argc, argv);
    vm_push_root(vm, OBJ_VAL(args));
    NumbaSig *s = gc_alloc_obj(vm, ntstate(vm)->t_sig, sizeof(NumbaSig));
    s->ret = ret;
    s->args = OBJ_VAL(args);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(s);
}

/* ------------------------------------------------------------- behaviour */

/* float32[:], float32[:, ::1] (C), float32[::1, :] (F), float32[::2] (A):
** as Numba decides, a unit step on the first of several dimensions makes F,
** else on the last makes C. */
static bool plain_slice(VM *vm, Value v) {
    if (!IS_OBJ(v) || AS_OBJ(v)->type != vm->t_slice) return false;
    Slice *s = (Slice *)AS_OBJ(v);
    return IS_NONE(s->start) && IS_NONE(s->stop);
}

static bool unit_step(Value v) {
    Value step = ((Slice *)AS_OBJ(v))->step;
    return (IS_INT(step) && AS_INT(step) == 1) || (IS_BOOL(step) && AS_BOOL(step));
}

static Value nt_getitem(VM *vm, Value self, Value key) {
    NumbaType *t = as_nt(self);
    if (t->is_array)
        vm_raise_kind(vm, TypeError, "The dtype of a Buffer type cannot itself be a Buffer type, this is unsupported behaviour.");
    int ndim;
    char layout = 'A';
    if (plain_slice(vm, key)) {
        ndim = 1;
        if (unit_step(key)) layout = 'C';
    } else {
        bool ok = IS_TUPLE(vm, key) && AS_TUPLE(key)->len > 0;
        for (int64_t i = 0; ok && i < AS_TUPLE(key)->len; i++) ok = plain_slice(vm, AS_TUPLE(key)->items[i]);
        if (!ok)
            vm_raise_kind(vm, KeyError, "Can only index numba types with slices with no start or stop, got %s.",
                          vm_repr(vm, key)->chars);
        Tuple *k = AS_TUPLE(key);
        if (k->len > ND_MAXDIM) vm_raise_kind(vm, ValueError, "too many dimensions: %lld", (long long)k->len);
        ndim = (int)k->len;
        if (unit_step(k->items[0])) layout = 'F';
        else if (unit_step(k->items[k->len - 1])) layout = 'C';
    }
    return array_type(vm, t, ndim, layout);
}

/* float32(int32, float32[:]) builds a signature; float32(1.1) casts (as
** numpy's float32 would: Numba casts through numpy). */
static Value nt_call(VM *vm, Value self, int argc, Value *argv, Dict *kwargs) {
    NumbaType *t = as_nt(self);
    if (kwargs && kwargs->count)
        vm_raise_kind(vm, TypeError, "%s() takes no keyword arguments", AS_STR(nt_str(vm, self))->chars);
    if (argc == 1 && !is_ntype(vm, argv[0])) {
        if (t->is_array || t->dtype < 0)
            vm_raise_kind(vm, NotImplementedError, "cannot cast a value to %s", AS_STR(nt_str(vm, self))->chars);
        return vm_call(vm, nd_scalar_type(vm, (NDType)t->dtype), 1, argv);
    }
    return make_sig(vm, self, argc, argv);
}

static bool nt_same(const NumbaType *a, const NumbaType *b) {
    return a->dtype == b->dtype && a->is_array == b->is_array && a->ndim == b->ndim && a->layout == b->layout;
}

static Value nt_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (op != CMP_EQ && op != CMP_NE) return EMPTY_VAL;
    bool eq = is_ntype(vm, a) && is_ntype(vm, b) && nt_same(as_nt(a), as_nt(b));
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}

static int64_t nt_hash(VM *vm, Value self) {
    (void)vm;
    NumbaType *t = as_nt(self);
    return 0x4e54 + ((int64_t)(t->dtype + 1) << 16) + ((int64_t)t->is_array << 12) + ((int64_t)t->ndim << 4) +
           (t->layout & 0xf);
}

static Value nt_getattr(VM *vm, Value self, Str *name) {
    NumbaType *t = as_nt(self);
    NumbaTypesState *s = ntstate(vm);
    const char *n = name->chars;
    if (!strcmp(n, "name") || !strcmp(n, "key")) return nt_str(vm, self);
    if (t->is_array) {
        if (!strcmp(n, "dtype")) return OBJ_VAL(s->scalar[t->dtype]);
        if (!strcmp(n, "ndim")) return INT_VAL(t->ndim);
        if (!strcmp(n, "layout")) return STR_VAL(str_new(vm, &t->layout, 1));
        if (!strcmp(n, "mutable") || !strcmp(n, "aligned")) return BOOL_VAL(true);
        if (!strcmp(n, "readonly")) return BOOL_VAL(false);
        if (!strcmp(n, "is_c_contig")) return BOOL_VAL(t->layout == 'C' || (t->ndim <= 1 && t->layout == 'F'));
        if (!strcmp(n, "is_f_contig")) return BOOL_VAL(t->layout == 'F' || (t->ndim <= 1 && t->layout == 'C'));
        if (!strcmp(n, "is_contig")) return BOOL_VAL(t->layout != 'A');
    } else if (t->dtype >= 0) {
        NDType dt = (NDType)t->dtype;
        if (!strcmp(n, "bitwidth") && dt != ND_BOOL) return INT_VAL((int64_t)dtype_itemsize(dt) * 8);
        if (!strcmp(n, "signed") && (nd_is_signed(dt) || nd_is_unsigned(dt))) return BOOL_VAL(nd_is_signed(dt));
        if (!strcmp(n, "underlying_float") && nd_is_complex(dt))
            return OBJ_VAL(s->scalar[dt == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64]);
    }
    return generic_getattr(vm, self, name);
}

/* numba.types.Array(dtype, ndim, layout, readonly=False) */
static Value array_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    Value readonly = kw_take(vm, kwargs, "readonly");
    (void)kw_take(vm, kwargs, "aligned");
    kw_done(vm, "Array", kwargs);
    if (argc < 3 || argc > 4)
        vm_raise_kind(vm, TypeError, "Array() takes dtype, ndim and layout (%d argument%s given)", argc,
                      argc == 1 ? "" : "s");
    if (!is_ntype(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "Array(): dtype must be a Numba type such as float32, not '%s'",
                      vm_type_name(vm, argv[0]));
    if (IS_OBJ(argv[1]) && AS_OBJ(argv[1])->type == vm->t_int) /* a big int */
        vm_raise_kind(vm, ValueError, "Array(): invalid ndim %s", vm_repr(vm, argv[1])->chars);
    if (!IS_INT(argv[1])) vm_raise_kind(vm, TypeError, "Array(): ndim must be an int, not '%s'", vm_type_name(vm, argv[1]));
    int64_t ndim = AS_INT(argv[1]);
    if (ndim < 0 || ndim > ND_MAXDIM) vm_raise_kind(vm, ValueError, "Array(): invalid ndim %lld", (long long)ndim);
    Str *layout = IS_STR(vm, argv[2]) ? AS_STR(argv[2]) : NULL;
    if (!layout || layout->len != 1 || !strchr("CFA", layout->chars[0]))
        vm_raise_kind(vm, ValueError, "Invalid layout %s", vm_repr(vm, argv[2])->chars);
    if ((argc > 3 && vm_truthy(vm, argv[3])) || (!IS_EMPTY(readonly) && vm_truthy(vm, readonly)))
        vm_raise_kind(vm, NotImplementedError, "gpy has no read-only array types");
    return array_type(vm, as_nt(argv[0]), (int)ndim, layout->chars[0]);
}

static void sig_mark(VM *vm, Obj *o) {
    NumbaSig *s = (NumbaSig *)o;
    gc_mark_value(vm, s->ret);
    gc_mark_value(vm, s->args);
}

static Value sig_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (op != CMP_EQ && op != CMP_NE) return EMPTY_VAL;
    bool eq = false;
    if (is_nsig(vm, a) && is_nsig(vm, b)) {
        NumbaSig *x = (NumbaSig *)AS_OBJ(a), *y = (NumbaSig *)AS_OBJ(b);
        eq = vm_equal(vm, x->ret, y->ret) && vm_equal(vm, x->args, y->args);
    }
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}

static int64_t sig_hash(VM *vm, Value self) {
    NumbaSig *s = (NumbaSig *)AS_OBJ(self);
    return vm_hash(vm, s->ret) * 31 + vm_hash(vm, s->args);
}

static Value sig_getattr(VM *vm, Value self, Str *name) {
    NumbaSig *s = (NumbaSig *)AS_OBJ(self);
    if (!strcmp(name->chars, "args")) return s->args;
    if (!strcmp(name->chars, "return_type")) return s->ret;
    if (!strcmp(name->chars, "_gpy_text")) {
        Str *t = numba_signature_text(vm, self);
        if (t) return STR_VAL(t);
    }
    return generic_getattr(vm, self, name);
}

/* --------------------------------------------------- signatures as text */

/* A tuple whose items are all types: the argument types of a signature. */
static bool type_tuple(VM *vm, Value v) {
    if (!IS_TUPLE(vm, v)) return false;
    for (int64_t i = 0; i < AS_TUPLE(v)->len; i++)
        if (!is_ntype(vm, AS_TUPLE(v)->items[i])) return false;
    return true;
}

bool numba_is_signature(VM *vm, Value v) {
    return IS_STR(vm, v) || is_nsig(vm, v) || (IS_TUPLE(vm, v) && AS_TUPLE(v)->len > 0 && type_tuple(vm, v));
}

Str *numba_signature_text(VM *vm, Value v) {
    if (IS_STR(vm, v)) return AS_STR(v);
    Value ret = EMPTY_VAL, args;
    if (is_nsig(vm, v)) {
        ret = ((NumbaSig *)AS_OBJ(v))->ret;
        args = ((NumbaSig *)AS_OBJ(v))->args;
    } else if (type_tuple(vm, v)) {
        args = v;
    } else {
        return NULL;
    }
    StrBuf sb;
    sb_init(&sb);
    bool ok = IS_EMPTY(ret) || type_sig_to(&sb, as_nt(ret));
    sb_putc(&sb, '(');
    Tuple *a = AS_TUPLE(args);
    for (int64_t i = 0; ok && i < a->len; i++) {
        if (i) sb_appends(&sb, ", ");
        ok = type_sig_to(&sb, as_nt(a->items[i]));
    }
    sb_putc(&sb, ')');
    if (!ok) {
        sb_free(&sb);
        vm_raise_kind(vm, TypeError, "0-dimensional array types cannot be kernel arguments");
    }
    return sb_finish(vm, &sb);
}

Value numba_type_named(VM *vm, const char *name) {
    NumbaTypesState *s = ntstate(vm);
    if (!strcmp(name, "none") || !strcmp(name, "void")) return OBJ_VAL(s->none);
    int dt = dtype_from_numba_name(name, strlen(name));
    if (dt >= 0) return OBJ_VAL(s->scalar[dt]);
    return STR_VAL(str_cstr(vm, name));
}

/* --------------------------------------------------------------- modules */

static Type *subtype(VM *vm, Type *base, const char *name, const char *module) {
    Type *t = type_new_builtin(vm, name, base, 0);
    dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, module)));
    return t;
}

static NumbaTypesState *ntstate(VM *vm) {
    CudaState *st = cuda_state(vm);
    if (st->numba_types) return (NumbaTypesState *)st->numba_types;
    NumbaTypesState *s =
        (NumbaTypesState *)type_new_builtin_sized(vm, "Type", vm->t_object, 0, sizeof(NumbaTypesState));
    Type *b = &s->base;
    dict_set_cstr(vm, b->dict, "__module__", STR_VAL(str_cstr(vm, "numba.core.types.abstract")));
    b->repr = nt_repr;
    b->str = nt_str;
    b->call = nt_call;
    b->getitem = nt_getitem;
    b->compare = nt_compare;
    b->hash = nt_hash;
    b->getattr = nt_getattr;
    s->t_bool = subtype(vm, b, "Boolean", "numba.core.types.scalars");
    s->t_int = subtype(vm, b, "Integer", "numba.core.types.scalars");
    s->t_float = subtype(vm, b, "Float", "numba.core.types.scalars");
    s->t_complex = subtype(vm, b, "Complex", "numba.core.types.scalars");
    s->t_none = subtype(vm, b, "NoneType", "numba.core.types.misc");
    s->t_array = subtype(vm, b, "Array", "numba.core.types.npytypes");
    s->t_array->new_ = array_new;
    s->t_sig = subtype(vm, vm->t_object, "Signature", "numba.core.typing.templates");
    s->t_sig->str = sig_str;
    s->t_sig->repr = sig_str;
    s->t_sig->mark = sig_mark;
    s->t_sig->compare = sig_compare;
    s->t_sig->hash = sig_hash;
    s->t_sig->getattr = sig_getattr;
    /* the singletons, kept alive by the base type's dict */
    Tuple *keep = tuple_new(vm, ND__COUNT + 1);
    dict_set_cstr(vm, b->dict, "_gpy_singletons", OBJ_VAL(keep));
    for (int dt = 0; dt < ND__COUNT; dt++) {
        Type *cls = dt == ND_BOOL ? s->t_bool : nd_is_complex((NDType)dt) ? s->t_complex
                  : nd_is_signed((NDType)dt) || nd_is_unsigned((NDType)dt) ? s->t_int : s->t_float;
        s->scalar[dt] = nt_alloc(vm, cls, dt, false, 0, 0);
        keep->items[dt] = OBJ_VAL(s->scalar[dt]);
    }
    s->none = nt_alloc(vm, s->t_none, -1, false, 0, 0);
    keep->items[ND__COUNT] = OBJ_VAL(s->none);
    st->numba_types = b;
    return s;
}

void numba_types_install(VM *vm, Module *m, bool with_classes) {
    NumbaTypesState *s = ntstate(vm);
    vm_push_root(vm, OBJ_VAL(m));
    size_t nalias;
    const DTypeAlias *alias = dtype_aliases(&nalias);
    for (size_t i = 0; i < nalias; i++)
        if (alias[i].numba >= 0) dict_set_cstr(vm, m->dict, alias[i].name, OBJ_VAL(s->scalar[alias[i].numba]));
    dict_set_cstr(vm, m->dict, "void", OBJ_VAL(s->none));
    dict_set_cstr(vm, m->dict, "none", OBJ_VAL(s->none));
    if (with_classes) {
        dict_set_cstr(vm, m->dict, "Type", OBJ_VAL(&s->base));
        dict_set_cstr(vm, m->dict, "Boolean", OBJ_VAL(s->t_bool));
        dict_set_cstr(vm, m->dict, "Integer", OBJ_VAL(s->t_int));
        dict_set_cstr(vm, m->dict, "Float", OBJ_VAL(s->t_float));
        dict_set_cstr(vm, m->dict, "Complex", OBJ_VAL(s->t_complex));
        dict_set_cstr(vm, m->dict, "NoneType", OBJ_VAL(s->t_none));
        dict_set_cstr(vm, m->dict, "Array", OBJ_VAL(s->t_array));
    }
    vm_pop_roots(vm, 1);
}

/* numba.types (also numba.core.types): the types and their classes. */
Module *numba_types_module(VM *vm) {
    NumbaTypesState *s = ntstate(vm);
    if (s->types) return s->types;
    Module *m = module_new(vm, str_cstr(vm, "numba.types"));
    dict_set_cstr(vm, s->base.dict, "_gpy_types_module", OBJ_VAL(m)); /* keeps it alive */
    s->types = m;
    numba_types_install(vm, m, true);
    return m;
}
