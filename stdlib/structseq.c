/*
** structseq.c — CPython's "struct sequences": tuples whose items also have
** names (time.struct_time, sys.version_info, sys.float_info,
** os.stat_result). Indexing, len, iteration, comparison and hashing act on
** the visible items; every field is an attribute.
*/
#include <string.h>

#include "stdlib_priv.h"

typedef struct StructSeq {
    Obj obj;
    Str *qualname;  /* "time.struct_time", for repr */
    Tuple *names;   /* Str field names, visible ones first */
    Tuple *values;  /* all field values */
    Tuple *visible; /* the first nvisible values: the sequence part */
} StructSeq;

static Value structseq_repr(VM *vm, Value self);

static bool is_structseq(Value v) { return IS_OBJ(v) && AS_OBJ(v)->type->repr == structseq_repr; }

static Value as_seq(VM *vm, Value v) {
    (void)vm;
    return is_structseq(v) ? OBJ_VAL(((StructSeq *)AS_OBJ(v))->visible) : v;
}

static Value structseq_repr(VM *vm, Value self) {
    StructSeq *s = (StructSeq *)AS_OBJ(self);
    int base = vm->nroots;
    vm_push_root(vm, self);
    Str *out = str_printf(vm, "%s(", s->qualname->chars);
    vm_push_root(vm, OBJ_VAL(out));
    for (int64_t i = 0; i < s->visible->len; i++) {
        Str *r = vm_repr(vm, s->visible->items[i]);
        vm_push_root(vm, OBJ_VAL(r));
        out = str_printf(vm, "%s%s%s=%s", out->chars, i ? ", " : "", AS_STR(s->names->items[i])->chars, r->chars);
        vm->roots[base + 1] = OBJ_VAL(out);
        vm_pop_roots(vm, 1);
    }
    out = str_printf(vm, "%s)", out->chars);
    vm_pop_roots(vm, vm->nroots - base);
    return STR_VAL(out);
}

static Value structseq_getattr(VM *vm, Value self, Str *name) {
    StructSeq *s = (StructSeq *)AS_OBJ(self);
    /* from the end: a hidden field may refine a visible one of the same
    ** name (os.stat_result's float st_mtime over the int item) */
    for (int64_t i = s->names->len - 1; i >= 0; i--)
        if (str_equal(AS_STR(s->names->items[i]), name)) return s->values->items[i];
    if (strcmp(name->chars, "n_fields") == 0) return INT_VAL(s->names->len);
    if (strcmp(name->chars, "n_sequence_fields") == 0) return INT_VAL(s->visible->len);
    if (strcmp(name->chars, "__class__") == 0) return OBJ_VAL(AS_OBJ(self)->type);
    Value m = type_lookup(vm, AS_OBJ(self)->type, name);
    if (IS_EMPTY(m)) {
        /* tuple methods (count, index, ...) act on the visible items */
        Value seq = OBJ_VAL(s->visible);
        return vm_getattr_opt(vm, seq, name);
    }
    if (IS_OBJ(m) && (AS_OBJ(m)->type == vm->t_builtin_function || AS_OBJ(m)->type == vm->t_function))
        return bound_method_new(vm, self, m);
    return m;
}

static Value structseq_getitem(VM *vm, Value self, Value key) {
    return vm_getitem(vm, OBJ_VAL(((StructSeq *)AS_OBJ(self))->visible), key);
}

static int64_t structseq_len(VM *vm, Value self) {
    (void)vm;
    return ((StructSeq *)AS_OBJ(self))->visible->len;
}

static Value structseq_iter(VM *vm, Value self) {
    return vm_iter(vm, OBJ_VAL(((StructSeq *)AS_OBJ(self))->visible));
}

static bool structseq_contains(VM *vm, Value self, Value item) {
    return vm_contains(vm, OBJ_VAL(((StructSeq *)AS_OBJ(self))->visible), item);
}

static Value structseq_compare(VM *vm, CmpOp op, Value a, Value b) {
    Value x = as_seq(vm, a), y = as_seq(vm, b);
    if (!IS_TUPLE(vm, x) || !IS_TUPLE(vm, y)) return EMPTY_VAL;
    return vm_compare(vm, op, x, y);
}

static int64_t structseq_hash(VM *vm, Value self) {
    return vm_hash(vm, OBJ_VAL(((StructSeq *)AS_OBJ(self))->visible));
}

static Value structseq_binop(VM *vm, BinOp op, Value a, Value b) {
    if (op != BINOP_ADD && op != BINOP_MUL) return EMPTY_VAL;
    return vm_binop(vm, op, as_seq(vm, a), as_seq(vm, b));
}

static void structseq_mark(VM *vm, Obj *o) {
    StructSeq *s = (StructSeq *)o;
    if (s->qualname) gc_mark_obj(vm, (Obj *)s->qualname);
    if (s->names) gc_mark_obj(vm, (Obj *)s->names);
    if (s->values) gc_mark_obj(vm, (Obj *)s->values);
    if (s->visible) gc_mark_obj(vm, (Obj *)s->visible);
}

/* The type named after the last dot of qualname, made on first use. */
static Type *structseq_type(VM *vm, const char *qualname) {
    const char *dot = strrchr(qualname, '.');
    const char *shortname = dot ? dot + 1 : qualname;
    for (int32_t i = 0; i < vm->nbuiltin_types; i++) {
        Type *t = vm->builtin_types[i];
        if (t->repr != structseq_repr) continue;
        const char *n = t->name ? t->name->chars : t->cname;
        if (n && strcmp(n, shortname) == 0) return t;
    }
    Type *t = type_new_builtin(vm, shortname, vm->t_object, 0);
    t->repr = structseq_repr;
    t->getattr = structseq_getattr;
    t->getitem = structseq_getitem;
    t->len = structseq_len;
    t->iter = structseq_iter;
    t->contains = structseq_contains;
    t->compare = structseq_compare;
    t->hash = structseq_hash;
    t->binop = structseq_binop;
    t->mark = structseq_mark;
    if (t->dict && dot) {
        Str *mod = str_new(vm, qualname, (size_t)(dot - qualname));
        dict_set_cstr(vm, t->dict, "__module__", STR_VAL(mod));
    }
    return t;
}

Value structseq_new(VM *vm, const char *qualname, const char *const *fields, int nfields, int nvisible,
                    const Value *values) {
    int base = vm->nroots;
    Type *t = structseq_type(vm, qualname);
    Tuple *vals = tuple_from_array(vm, nfields, values);
    vm_push_root(vm, OBJ_VAL(vals));
    Tuple *vis = tuple_from_array(vm, nvisible, values);
    vm_push_root(vm, OBJ_VAL(vis));
    Tuple *names = tuple_new(vm, nfields);
    vm_push_root(vm, OBJ_VAL(names));
    for (int i = 0; i < nfields; i++) names->items[i] = STR_VAL(cstr_name(vm, fields[i]));
    Str *qn = str_cstr(vm, qualname);
    vm_push_root(vm, OBJ_VAL(qn));
    StructSeq *s = gc_alloc_obj(vm, t, sizeof(StructSeq));
    s->qualname = qn;
    s->names = names;
    s->values = vals;
    s->visible = vis;
    vm_pop_roots(vm, vm->nroots - base);
    return OBJ_VAL(s);
}

bool structseq_check(VM *vm, Value v, const char *qualname) {
    (void)vm;
    if (!is_structseq(v)) return false;
    return qualname == NULL || strcmp(((StructSeq *)AS_OBJ(v))->qualname->chars, qualname) == 0;
}

Value structseq_field(VM *vm, Value v, int i) {
    (void)vm;
    StructSeq *s = (StructSeq *)AS_OBJ(v);
    return i < s->values->len ? s->values->items[i] : NONE_VAL;
}
