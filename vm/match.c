/*
** match.c — run-time support of the match statement (compile_match.c
** emits the instructions). The rules are CPython 3.11's:
**  - sequence patterns match list, tuple, range, memoryview, deque and their
**    subclasses, never str, bytes or bytearray;
**  - mapping patterns match dict and its subclasses, read with .get on
**    anything but an exact dict;
**  - class patterns use isinstance, then __match_args__ for positional
**    sub-patterns; bool, bytearray, bytes, dict, float, frozenset, int,
**    list, set, str and tuple (and their subclasses) match themselves with
**    one positional sub-pattern.
*/
#include <string.h>

#include "match.h"

/* True if t or one of its bases is the builtin type named cname (for the
** types vm/ has no field for: they live in stdlib/). */
static bool has_builtin_base(Type *t, const char *const *cnames)
{
    for (Type *b = t; b; b = b->base)
        for (int i = 0; cnames[i]; i++)
            if (b->cname && strcmp(b->cname, cnames[i]) == 0)
                return true;
    return false;
}

/* isinstance(v, collections.abc.<abc_name>) once a program has imported
** collections.abc (a registered or derived class matches, as CPython's
** Py_TPFLAGS_SEQUENCE/MAPPING make it); false before, at no cost. */
static bool abc_instance(VM *vm, Value v, const char *abc_name)
{
    Value mod = dict_get_cstr(vm, vm->modules, "_collections_abc");
    if (!IS_OBJ(mod) || AS_OBJ(mod)->type != vm->t_module)
        return false;
    Value cls = dict_get_cstr(vm, ((Module *)AS_OBJ(mod))->dict, abc_name);
    if (!IS_OBJ(cls) || !type_is_subtype(AS_OBJ(cls)->type, vm->t_type))
        return false;
    return class_isinstance(vm, v, (Type *)AS_OBJ(cls));
}

static bool is_sequence(VM *vm, Value v)
{
    if (!IS_OBJ(v))
        return false;
    Type *t = AS_OBJ(v)->type;
    if (t == vm->t_list || t == vm->t_tuple || t == vm->t_range)
        return true;
    if (t == vm->t_str || t == vm->t_dict)
        return false;
    if (type_is_subtype(t, vm->t_list) || type_is_subtype(t, vm->t_tuple))
        return true;
    static const char *const seqs[] = {"memoryview", "deque", "array", NULL};
    if (has_builtin_base(t, seqs))
        return true;
    static const char *const never[] = {"bytes", "bytearray", NULL};
    if (type_is_subtype(t, vm->t_str) || type_is_subtype(t, vm->t_dict) || has_builtin_base(t, never))
        return false;
    return abc_instance(vm, v, "Sequence") && !abc_instance(vm, v, "Mapping");
}

static bool is_mapping(VM *vm, Value v)
{
    if (!IS_OBJ(v))
        return false;
    Type *t = AS_OBJ(v)->type;
    if (t == vm->t_dict || type_is_subtype(t, vm->t_dict))
        return true;
    static const char *const maps[] = {"mappingproxy", "OrderedDict", "defaultdict", "Counter", NULL};
    if (has_builtin_base(t, maps))
        return true;
    return abc_instance(vm, v, "Mapping");
}

bool match_sequence(VM *vm, Value subject, uint32_t ext)
{
    if (!is_sequence(vm, subject))
        return false;
    int64_t n = vm_len(vm, subject), want = (int64_t)(ext & 0x7fffffffu);
    return (ext >> 31) ? n >= want : n == want;
}

Value match_star(VM *vm, Value subject, int64_t before, int64_t after)
{
    int64_t stop = vm_len(vm, subject) - after;
    List *l = list_new(vm, stop - before > 0 ? stop - before : 0);
    Value lv = OBJ_VAL(l);
    vm_push_root(vm, lv);
    for (int64_t i = before; i < stop; i++)
        list_append(vm, l, vm_getitem(vm, subject, INT_VAL(i)));
    vm_pop_roots(vm, 1);
    return lv;
}

bool match_mapping(VM *vm, Value subject, int64_t minlen)
{
    return is_mapping(vm, subject) && (minlen == 0 || vm_len(vm, subject) >= minlen);
}

bool match_keys(VM *vm, Value subject, Value keys, Value *values)
{
    Tuple *kt = AS_TUPLE(keys);
    Tuple *vt = tuple_new(vm, kt->len);
    *values = OBJ_VAL(vt);
    /* keys already looked up: two value patterns may name equal keys */
    Set *seen = set_new(vm, vm->t_set);
    vm_push_root(vm, OBJ_VAL(seen));
    bool exact = IS_DICT(vm, subject);
    Value get = EMPTY_VAL, missing = EMPTY_VAL;
    if (!exact) {
        get = vm_getattr(vm, subject, str_cstr(vm, "get"));
        vm_push_root(vm, get);
        missing = OBJ_VAL(list_new(vm, 0)); /* a fresh object no mapping can hold */
        vm_push_root(vm, missing);
    }
    bool ok = true;
    for (int64_t i = 0; i < kt->len && ok; i++) {
        Value key = kt->items[i];
        if (set_contains(vm, seen, key)) {
            Str *r = vm_repr(vm, key);
            vm_raise_kind(vm, ValueError, "mapping pattern checks duplicate key (%s)", r->chars);
        }
        set_add(vm, seen, key);
        Value v;
        if (exact) {
            ok = dict_get(vm, (Dict *)AS_OBJ(subject), key, &v);
        } else {
            Value args[2] = {key, missing};
            v = vm_call(vm, get, 2, args);
            ok = !vm_is(v, missing);
        }
        if (ok)
            vt->items[i] = v;
    }
    vm_pop_roots(vm, exact ? 1 : 3);
    return ok;
}

Value match_rest(VM *vm, Value subject, Value keys)
{
    Dict *d = dict_new(vm);
    Value dv = OBJ_VAL(d);
    vm_push_root(vm, dv);
    if (IS_OBJ(subject) && type_is_subtype(AS_OBJ(subject)->type, vm->t_dict)) {
        int64_t pos = 0;
        Value k, v;
        while (dict_next((Dict *)AS_OBJ(subject), &pos, &k, &v))
            dict_set(vm, d, k, v);
    } else {
        /* another mapping: its keys, then subject[key] */
        Value it = vm_iter(vm, vm_call(vm, vm_getattr(vm, subject, str_cstr(vm, "keys")), 0, NULL));
        vm_push_root(vm, it);
        Value k;
        while (vm_next(vm, it, &k)) {
            vm_push_root(vm, k);
            dict_set(vm, d, k, vm_getitem(vm, subject, k));
            vm_pop_roots(vm, 1);
        }
        vm_pop_roots(vm, 1);
    }
    Tuple *kt = AS_TUPLE(keys);
    for (int64_t i = 0; i < kt->len; i++)
        dict_del(vm, d, kt->items[i]);
    vm_pop_roots(vm, 1);
    return dv;
}

/* Types whose instances match themselves: C(x) binds x to the subject. */
static bool matches_self(VM *vm, Type *t)
{
    Type *const core[] = {vm->t_bool, vm->t_dict, vm->t_float, vm->t_frozenset, vm->t_int,
                          vm->t_list, vm->t_set,  vm->t_str,   vm->t_tuple};
    for (size_t i = 0; i < sizeof core / sizeof core[0]; i++)
        if (t == core[i] || type_is_subtype(t, core[i]))
            return true;
    static const char *const others[] = {"bytes", "bytearray", NULL};
    return has_builtin_base(t, others);
}

typedef struct AttrGet {
    Value obj;
    Str *name;
    Value result;
} AttrGet;

static void attr_get(VM *vm, void *ud)
{
    AttrGet *g = ud;
    g->result = vm_getattr(vm, g->obj, g->name);
}

/* getattr(subject, name), or EMPTY on AttributeError (the pattern fails). */
static Value get_attribute(VM *vm, Value subject, Str *name)
{
    AttrGet g = {subject, name, EMPTY_VAL};
    if (vm_pcall(vm, attr_get, &g))
        return g.result;
    Value exc = vm->exc_value;
    if (vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_AttributeError])))
        return EMPTY_VAL;
    vm_rethrow(vm, exc);
}

bool match_class(VM *vm, Value subject, Value cls, Value kwnames, int npos, Value *attrs)
{
    if (!IS_OBJ(cls) || AS_OBJ(cls)->type != vm->t_type) {
        if (!(IS_OBJ(cls) && type_is_subtype(AS_OBJ(cls)->type, vm->t_type)))
            vm_raise_kind(vm, TypeError, "called match pattern must be a type");
    }
    Type *ct = (Type *)AS_OBJ(cls);
    if (!vm_isinstance(vm, subject, ct))
        return false;
    Tuple *kw = IS_NONE(kwnames) ? NULL : AS_TUPLE(kwnames);
    int nkw = kw ? (int)kw->len : 0;
    Tuple *out = tuple_new(vm, npos + nkw);
    *attrs = OBJ_VAL(out);
    const char *cname = ct->name ? ct->name->chars : ct->cname;
    Tuple *margs = NULL;
    bool self = false;
    if (npos > 0) {
        Value ma = get_attribute(vm, cls, str_cstr(vm, "__match_args__"));
        int64_t allowed;
        if (!IS_EMPTY(ma)) {
            if (!IS_TUPLE(vm, ma))
                vm_raise_kind(vm, TypeError, "%s.__match_args__ must be a tuple (got %s)", cname,
                              vm_type_name(vm, ma));
            margs = AS_TUPLE(ma);
            allowed = margs->len;
        } else {
            self = matches_self(vm, ct);
            allowed = self ? 1 : 0;
        }
        if (npos > allowed)
            vm_raise_kind(vm, TypeError, "%s() accepts %lld positional sub-pattern%s (%d given)", cname,
                          (long long)allowed, allowed == 1 ? "" : "s", npos);
        if (margs)
            vm_push_root(vm, OBJ_VAL(margs)); /* a user __match_args__ may be replaced meanwhile */
    }
    for (int i = 0; i < npos + nkw; i++) {
        if (self) {
            out->items[i] = subject;
            continue;
        }
        Value name = i < npos ? margs->items[i] : kw->items[i - npos];
        if (!IS_STR(vm, name))
            vm_raise_kind(vm, TypeError, "__match_args__ elements must be strings (got %s)", vm_type_name(vm, name));
        for (int j = 0; j < i; j++) {
            Value prev = j < npos ? margs->items[j] : kw->items[j - npos];
            if (IS_STR(vm, prev) && str_equal((Str *)AS_OBJ(prev), (Str *)AS_OBJ(name))) {
                Str *r = vm_repr(vm, name);
                vm_raise_kind(vm, TypeError, "%s() got multiple sub-patterns for attribute %s", cname, r->chars);
            }
        }
        Value v = get_attribute(vm, subject, (Str *)AS_OBJ(name));
        if (IS_EMPTY(v)) {
            if (margs)
                vm_pop_roots(vm, 1);
            return false;
        }
        out->items[i] = v;
    }
    if (margs)
        vm_pop_roots(vm, 1);
    return true;
}
