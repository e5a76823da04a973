/*
** iterators.c — the lazy iterator types behind the builtins enumerate,
** zip, map, filter, reversed and two-argument iter(): each object pulls
** one item from its source per next(), like CPython's.
*/
#include <string.h>

#include "stdlib_priv.h"

typedef struct Enumerate {
    Obj obj;
    Value it;
    int64_t count;
} Enumerate;

typedef struct Zip {
    Obj obj;
    Tuple *its; /* NULL once exhausted */
    bool strict;
} Zip;

typedef struct MapIter {
    Obj obj;
    Value func;
    Tuple *its; /* NULL once exhausted */
} MapIter;

typedef struct FilterIter {
    Obj obj;
    Value func; /* None: keep truthy items */
    Value it;   /* EMPTY once exhausted */
} FilterIter;

/* reversed(seq): walks indexes len-1 .. 0 (lists, tuples and ASCII strings
** read directly, anything else through __getitem__; ranges use range.c's
** reversed range iterator). */
typedef struct Reversed {
    Obj obj;
    Value seq; /* EMPTY once exhausted */
    int64_t index;
} Reversed;

typedef struct CallIter {
    Obj obj;
    Value func; /* EMPTY once exhausted */
    Value sentinel;
} CallIter;

/* ---- shared slots ---- */

static Value iter_self(VM *vm, Value self) {
    (void)vm;
    return self;
}

static Value repr_named(VM *vm, Value self, const char *name) {
    return STR_VAL(str_printf(vm, "<%s object at %p>", name, (void *)AS_OBJ(self)));
}

/* __iter__ / __next__ as methods, for code that calls them directly */
static Value m_iter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "__iter__", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "expected 0 arguments, got %d", argc - 1);
    return argv[0];
}

static Value m_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "__next__", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "expected 0 arguments, got %d", argc - 1);
    Value self = argv[0], out;
    if (vm_next(vm, self, &out)) return out;
    vm_throw(vm, OBJ_VAL(vm->exc[EXC_StopIteration]));
}

static Type *make_type(VM *vm, const char *name, Value (*new_)(VM *, Type *, int, Value *, Dict *),
                       Value (*repr)(VM *, Value), bool (*next)(VM *, Value, Value *),
                       void (*mark)(VM *, Obj *)) {
    Type *t = type_new_builtin(vm, name, vm->t_object, 0);
    t->new_ = new_;
    t->repr = repr;
    t->iter = iter_self;
    t->next = next;
    t->mark = mark;
    type_add_method(vm, t, "__iter__", m_iter);
    type_add_method(vm, t, "__next__", m_next);
    return t;
}

/* ---- enumerate ---- */

static Value enumerate_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    Value iterable = argc > 0 ? argv[0] : EMPTY_VAL, start = argc > 1 ? argv[1] : EMPTY_VAL;
    if (argc > 2) vm_raise_kind(vm, TypeError, "enumerate() takes at most 2 arguments (%d given)", argc);
    Value k = kw_take(vm, kwargs, "iterable");
    if (!IS_EMPTY(k)) {
        if (!IS_EMPTY(iterable))
            vm_raise_kind(vm, TypeError, "argument for enumerate() given by name ('iterable') and position (1)");
        iterable = k;
    }
    k = kw_take(vm, kwargs, "start");
    if (!IS_EMPTY(k)) {
        if (!IS_EMPTY(start))
            vm_raise_kind(vm, TypeError, "argument for enumerate() given by name ('start') and position (2)");
        start = k;
    }
    kw_done(vm, "enumerate", kwargs);
    if (IS_EMPTY(iterable))
        vm_raise_kind(vm, TypeError, "enumerate() missing required argument 'iterable' (pos 1)");
    int64_t count = IS_EMPTY(start) ? 0 : vm_to_index(vm, start);
    Value it = vm_iter(vm, iterable);
    Enumerate *e = gc_alloc_obj(vm, cls, sizeof(Enumerate));
    e->it = it;
    e->count = count;
    return OBJ_VAL(e);
}

static bool enumerate_next(VM *vm, Value self, Value *out) {
    Enumerate *e = (Enumerate *)AS_OBJ(self);
    Value v;
    if (IS_EMPTY(e->it) || !vm_next(vm, e->it, &v)) return false;
    if (e->count == INT64_MAX) vm_raise_kind(vm, OverflowError, "integer overflow");
    Tuple *t = tuple_new(vm, 2);
    t->items[0] = INT_VAL(e->count);
    t->items[1] = v;
    e->count++;
    *out = OBJ_VAL(t);
    return true;
}

static Value enumerate_repr(VM *vm, Value self) { return repr_named(vm, self, "enumerate"); }

static void enumerate_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((Enumerate *)o)->it); }

/* ---- zip ---- */

/* Iterators of the arguments, in a Tuple (rooted while user code runs). */
static Tuple *iterators_of(VM *vm, int argc, Value *argv) {
    Tuple *src = tuple_from_array(vm, argc, argv);
    vm_push_root(vm, OBJ_VAL(src));
    Tuple *its = tuple_new(vm, argc);
    vm_push_root(vm, OBJ_VAL(its));
    for (int i = 0; i < argc; i++) its->items[i] = vm_iter(vm, src->items[i]);
    vm_pop_roots(vm, 2);
    return its;
}

static Value zip_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    Value strict = kw_take(vm, kwargs, "strict");
    if (kwargs && kwargs->count > 0) {
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v))
            if (IS_STR(vm, k))
                vm_raise_kind(vm, TypeError, "zip() got an unexpected keyword argument '%s'", AS_STR(k)->chars);
    }
    bool st = !IS_EMPTY(strict) && vm_truthy(vm, strict);
    Tuple *its = iterators_of(vm, argc, argv);
    vm_push_root(vm, OBJ_VAL(its));
    Zip *z = gc_alloc_obj(vm, cls, sizeof(Zip));
    vm_pop_roots(vm, 1);
    z->its = its;
    z->strict = st;
    return OBJ_VAL(z);
}

static _Noreturn void zip_strict_error(VM *vm, int64_t i, bool shorter) {
    const char *what = shorter ? "shorter" : "longer";
    if (i == 1) vm_raise_kind(vm, ValueError, "zip() argument 2 is %s than argument 1", what);
    vm_raise_kind(vm, ValueError, "zip() argument %lld is %s than arguments 1-%lld", (long long)i + 1, what,
                  (long long)i);
}

static bool zip_next(VM *vm, Value self, Value *out) {
    Zip *z = (Zip *)AS_OBJ(self);
    Tuple *its = z->its;
    if (!its || its->len == 0) return false;
    int64_t n = its->len;
    Tuple *res = tuple_new(vm, n);
    vm_push_root(vm, OBJ_VAL(res));
    for (int64_t i = 0; i < n; i++) {
        Value v;
        if (!vm_next(vm, its->items[i], &v)) {
            vm_pop_roots(vm, 1);
            z->its = NULL;
            if (z->strict) {
                if (i > 0) zip_strict_error(vm, i, true);
                for (int64_t j = 1; j < n; j++)
                    if (vm_next(vm, its->items[j], &v)) zip_strict_error(vm, j, false);
            }
            return false;
        }
        res->items[i] = v;
    }
    vm_pop_roots(vm, 1);
    *out = OBJ_VAL(res);
    return true;
}

static Value zip_repr(VM *vm, Value self) { return repr_named(vm, self, "zip"); }

static void zip_mark(VM *vm, Obj *o) {
    Zip *z = (Zip *)o;
    if (z->its) gc_mark_obj(vm, (Obj *)z->its);
}

/* ---- map ---- */

static Value map_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "map", kwargs);
    if (argc < 2) vm_raise_kind(vm, TypeError, "map() must have at least two arguments.");
    Value func = argv[0];
    vm_push_root(vm, func);
    Tuple *its = iterators_of(vm, argc - 1, argv + 1);
    vm_push_root(vm, OBJ_VAL(its));
    MapIter *m = gc_alloc_obj(vm, cls, sizeof(MapIter));
    vm_pop_roots(vm, 2);
    m->func = func;
    m->its = its;
    return OBJ_VAL(m);
}

static bool map_next(VM *vm, Value self, Value *out) {
    MapIter *m = (MapIter *)AS_OBJ(self);
    Tuple *its = m->its;
    if (!its) return false;
    if (its->len == 1) {
        Value v;
        if (!vm_next(vm, its->items[0], &v)) {
            m->its = NULL;
            return false;
        }
        *out = vm_call(vm, m->func, 1, &v);
        return true;
    }
    Tuple *args = tuple_new(vm, its->len);
    vm_push_root(vm, OBJ_VAL(args));
    for (int64_t i = 0; i < its->len; i++) {
        Value v;
        if (!vm_next(vm, its->items[i], &v)) {
            vm_pop_roots(vm, 1);
            m->its = NULL;
            return false;
        }
        args->items[i] = v;
    }
    *out = vm_call(vm, m->func, (int)args->len, args->items);
    vm_pop_roots(vm, 1);
    return true;
}

static Value map_repr(VM *vm, Value self) { return repr_named(vm, self, "map"); }

static void map_mark(VM *vm, Obj *o) {
    MapIter *m = (MapIter *)o;
    gc_mark_value(vm, m->func);
    if (m->its) gc_mark_obj(vm, (Obj *)m->its);
}

/* ---- filter ---- */

static Value filter_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "filter", kwargs);
    arg_between(vm, "filter", argc, 2, 2);
    Value func = argv[0];
    vm_push_root(vm, func);
    Value it = vm_iter(vm, argv[1]);
    vm_push_root(vm, it);
    FilterIter *f = gc_alloc_obj(vm, cls, sizeof(FilterIter));
    vm_pop_roots(vm, 2);
    f->func = func;
    f->it = it;
    return OBJ_VAL(f);
}

static bool filter_next(VM *vm, Value self, Value *out) {
    FilterIter *f = (FilterIter *)AS_OBJ(self);
    Value v;
    while (!IS_EMPTY(f->it) && vm_next(vm, f->it, &v)) {
        bool keep;
        if (IS_NONE(f->func)) {
            keep = vm_truthy(vm, v);
        } else {
            vm_push_root(vm, v);
            Value a = v;
            Value r = vm_call(vm, f->func, 1, &a);
            keep = vm_truthy(vm, r);
            vm_pop_roots(vm, 1);
        }
        if (keep) {
            *out = v;
            return true;
        }
    }
    f->it = EMPTY_VAL;
    return false;
}

static Value filter_repr(VM *vm, Value self) { return repr_named(vm, self, "filter"); }

static void filter_mark(VM *vm, Obj *o) {
    FilterIter *f = (FilterIter *)o;
    gc_mark_value(vm, f->func);
    gc_mark_value(vm, f->it);
}

/* ---- reversed ---- */

static Value reversed_of(VM *vm, Type *t, Value seq);

static Value reversed_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "reversed", kwargs);
    arg_between(vm, "reversed", argc, 1, 1);
    return reversed_of(vm, cls, argv[0]);
}

static Value reversed_make(VM *vm, Type *t, Value seq, int64_t len) {
    vm_push_root(vm, seq);
    Reversed *r = gc_alloc_obj(vm, t, sizeof(Reversed));
    vm_pop_roots(vm, 1);
    r->seq = seq;
    r->index = len - 1;
    if (len <= 0) r->seq = EMPTY_VAL;
    return OBJ_VAL(r);
}

Value iter_reversed(VM *vm, Value seq) { return reversed_of(vm, STDLIB_FIND_TYPE(vm, new_, reversed_new), seq); }

/* reversed(seq) with rt the reversed type */
static Value reversed_of(VM *vm, Type *rt, Value seq) {
    Type *t = vm_typeof(vm, seq);
    if (t == vm->t_list) return reversed_make(vm, rt, seq, AS_LIST(seq)->len);
    if (t == vm->t_tuple) return reversed_make(vm, rt, seq, AS_TUPLE(seq)->len);
    if (t == vm->t_range) return range_reversed(vm, (Range *)AS_OBJ(seq));
    if (t == vm->t_str) {
        Str *s = AS_STR(seq);
        if (s->ascii) return reversed_make(vm, rt, seq, s->len);
        List *chars = list_from_iterable(vm, seq);
        return reversed_make(vm, rt, OBJ_VAL(chars), chars->len);
    }
    Value rev = type_lookup(vm, t, cstr_name(vm, "__reversed__"));
    if (!IS_EMPTY(rev)) {
        if (IS_NONE(rev)) vm_raise_kind(vm, TypeError, "'%s' object is not reversible", vm_type_name(vm, seq));
        Value a = seq;
        return vm_call(vm, rev, 1, &a);
    }
    if (t == vm->t_dict) {
        /* dicts keep insertion order: walk a snapshot of the keys */
        Dict *d = AS_DICT(seq);
        List *keys = list_new(vm, d->count);
        int64_t pos = 0;
        Value k, v;
        while (dict_next(d, &pos, &k, &v)) list_append(vm, keys, k);
        return reversed_make(vm, rt, OBJ_VAL(keys), keys->len);
    }
    bool has_getitem = t != vm->t_set && t != vm->t_frozenset &&
                       (t->getitem || !IS_EMPTY(type_lookup(vm, t, cstr_name(vm, "__getitem__"))));
    bool has_len = t->len || !IS_EMPTY(type_lookup(vm, t, cstr_name(vm, "__len__")));
    if (!has_getitem || !has_len)
        vm_raise_kind(vm, TypeError, "'%s' object is not reversible", vm_type_name(vm, seq));
    vm_push_root(vm, seq);
    int64_t n = vm_len(vm, seq);
    vm_pop_roots(vm, 1);
    return reversed_make(vm, rt, seq, n);
}

typedef struct GetItemCall {
    Value seq;
    int64_t index;
    Value result;
} GetItemCall;

static void do_getitem(VM *vm, void *ud) {
    GetItemCall *c = ud;
    c->result = vm_getitem(vm, c->seq, INT_VAL(c->index));
}

static bool reversed_next(VM *vm, Value self, Value *out) {
    Reversed *r = (Reversed *)AS_OBJ(self);
    Value seq = r->seq;
    if (IS_EMPTY(seq) || r->index < 0) {
        r->seq = EMPTY_VAL;
        return false;
    }
    Type *t = vm_typeof(vm, seq);
    int64_t i = r->index;
    if (t == vm->t_list) {
        List *l = AS_LIST(seq);
        if (i >= l->len) {
            r->seq = EMPTY_VAL;
            return false;
        }
        *out = l->items[i];
    } else if (t == vm->t_tuple) {
        *out = AS_TUPLE(seq)->items[i];
    } else if (t == vm->t_str && AS_STR(seq)->ascii) {
        unsigned char c = (unsigned char)AS_STR(seq)->chars[i];
        *out = vm->single_chars[c] ? STR_VAL(vm->single_chars[c]) : STR_VAL(str_new(vm, (char *)&c, 1));
    } else {
        GetItemCall c = {seq, i, EMPTY_VAL};
        if (!vm_pcall(vm, do_getitem, &c)) {
            Value exc = vm->exc_value;
            if (vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_IndexError])) ||
                vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_StopIteration]))) {
                r->seq = EMPTY_VAL;
                return false;
            }
            vm_throw(vm, exc);
        }
        *out = c.result;
    }
    r->index = i - 1;
    if (r->index < 0) r->seq = EMPTY_VAL;
    return true;
}

static Value reversed_repr(VM *vm, Value self) {
    Value seq = ((Reversed *)AS_OBJ(self))->seq;
    if (IS_LIST(vm, seq)) return repr_named(vm, self, "list_reverseiterator");
    return repr_named(vm, self, "reversed");
}

static void reversed_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((Reversed *)o)->seq); }

/* ---- iter(callable, sentinel) ---- */

static Value calliter_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    kw_none(vm, "callable_iterator", kwargs);
    arg_between(vm, "callable_iterator", argc, 2, 2);
    return iter_callable(vm, argv[0], argv[1]);
}

static bool calliter_next(VM *vm, Value self, Value *out) {
    CallIter *c = (CallIter *)AS_OBJ(self);
    if (IS_EMPTY(c->func)) return false;
    Value r = vm_call(vm, c->func, 0, NULL);
    vm_push_root(vm, r);
    bool stop = vm_equal(vm, r, c->sentinel);
    vm_pop_roots(vm, 1);
    if (stop) {
        c->func = EMPTY_VAL;
        c->sentinel = EMPTY_VAL;
        return false;
    }
    *out = r;
    return true;
}

static Value calliter_repr(VM *vm, Value self) { return repr_named(vm, self, "callable_iterator"); }

static void calliter_mark(VM *vm, Obj *o) {
    CallIter *c = (CallIter *)o;
    gc_mark_value(vm, c->func);
    gc_mark_value(vm, c->sentinel);
}

static bool is_callable(VM *vm, Value v) {
    if (!IS_OBJ(v)) return false;
    Type *t = vm_typeof(vm, v);
    return t->call || t == vm->t_function || t == vm->t_builtin_function || t == vm->t_method ||
           type_is_subtype(t, vm->t_type) || !IS_EMPTY(type_lookup(vm, t, vm->sym_call));
}

Value iter_callable(VM *vm, Value callable, Value sentinel) {
    if (!is_callable(vm, callable)) vm_raise_kind(vm, TypeError, "iter(v, w): v must be callable");
    Type *t = STDLIB_FIND_TYPE(vm, next, calliter_next);
    vm_push_root(vm, callable);
    vm_push_root(vm, sentinel);
    CallIter *c = gc_alloc_obj(vm, t, sizeof(CallIter));
    vm_pop_roots(vm, 2);
    c->func = callable;
    c->sentinel = sentinel;
    return OBJ_VAL(c);
}

void iterators_init(VM *vm) {
    Dict *b = vm->builtins;
    dict_set_cstr(vm, b, "enumerate",
                  OBJ_VAL(make_type(vm, "enumerate", enumerate_new, enumerate_repr, enumerate_next, enumerate_mark)));
    dict_set_cstr(vm, b, "zip", OBJ_VAL(make_type(vm, "zip", zip_new, zip_repr, zip_next, zip_mark)));
    dict_set_cstr(vm, b, "map", OBJ_VAL(make_type(vm, "map", map_new, map_repr, map_next, map_mark)));
    dict_set_cstr(vm, b, "filter",
                  OBJ_VAL(make_type(vm, "filter", filter_new, filter_repr, filter_next, filter_mark)));
    dict_set_cstr(vm, b, "reversed",
                  OBJ_VAL(make_type(vm, "reversed", reversed_new, reversed_repr, reversed_next, reversed_mark)));
    make_type(vm, "callable_iterator", calliter_new, calliter_repr, calliter_next, calliter_mark);
}
