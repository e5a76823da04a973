/*
** itertools.c — the itertools module: lazy iterator types that pull one
** item from their sources per next(), as CPython's (same argument rules,
** same messages). The combinatoric ones copy their input into a tuple pool
** first and step an index array, so each item costs O(r).
*/
#include <string.h>

#include "stdlib_priv.h"

/* ---- shared helpers ---- */

/* Arguments by position or by name, Argument Clinic style: out[i] is EMPTY
** when argument i was not given. The first nreq are required. */
static void parse_args(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, const char *const *names,
                       int nnames, int nreq, Value *out) {
    if (argc > nnames)
        vm_raise_kind(vm, TypeError, "%s() takes at most %d argument%s (%d given)", fname, nnames,
                      nnames == 1 ? "" : "s", argc + (kwargs ? (int)kwargs->count : 0));
    for (int i = 0; i < nnames; i++) out[i] = i < argc ? argv[i] : EMPTY_VAL;
    if (kwargs) {
        for (int i = 0; i < nnames; i++) {
            Value k = kw_take(vm, kwargs, names[i]);
            if (IS_EMPTY(k)) continue;
            if (i < argc)
                vm_raise_kind(vm, TypeError, "argument for %s() given by name ('%s') and position (%d)", fname,
                              names[i], i + 1);
            out[i] = k;
        }
        kw_done(vm, fname, kwargs);
    }
    for (int i = 0; i < nreq; i++)
        if (IS_EMPTY(out[i]))
            vm_raise_kind(vm, TypeError, "%s() missing required argument '%s' (pos %d)", fname, names[i], i + 1);
}

/* "takewhile expected 2 arguments, got 1" (positional-only, no keywords) */
static void pos_only(VM *vm, const char *fname, int argc, Dict *kwargs, int min, int max) {
    kw_none(vm, fname, kwargs);
    arg_between(vm, fname, argc, min, max);
}

static Value iter_self(VM *vm, Value self) {
    (void)vm;
    return self;
}

static Value m_iter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)vm;
    (void)argc;
    (void)kwargs;
    return argv[0];
}

static Value m_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)kwargs;
    Value out;
    if (vm_next(vm, argv[0], &out)) return out;
    vm_throw(vm, OBJ_VAL(vm->exc[EXC_StopIteration]));
}

typedef Value (*NewFn)(VM *, Type *, int, Value *, Dict *);
typedef bool (*NextFn)(VM *, Value, Value *);
typedef void (*MarkFn)(VM *, Obj *);

static Type *iter_type(VM *vm, Module *m, const char *name, NewFn new_, NextFn next, MarkFn mark) {
    Type *t = STDLIB_FIND_TYPE(vm, next, next);
    if (!t) {
        t = type_new_builtin(vm, name, vm->t_object, 0);
        t->new_ = new_;
        t->iter = iter_self;
        t->next = next;
        t->mark = mark;
        type_add_method(vm, t, "__iter__", m_iter);
        type_add_method(vm, t, "__next__", m_next);
    }
    if (m && new_) dict_set_cstr(vm, m->dict, name, OBJ_VAL(t));
    return t;
}

/* The calls below run user code: every value they need afterwards that no
** object holds yet is pushed as a root. */
static Value call1(VM *vm, Value f, Value a) { return vm_call(vm, f, 1, &a); }

static Value call2(VM *vm, Value f, Value a, Value b) {
    Value args[2] = {a, b};
    return vm_call(vm, f, 2, args);
}

#define MARK(field) gc_mark_value(vm, ((ThisType *)o)->field)

/* ================================================================ count */

typedef struct Count {
    Obj obj;
    Value cur, step;
} Count;

static Value count_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"start", "step"};
    Value a[2];
    parse_args(vm, "count", argc, argv, kwargs, names, 2, 0, a);
    Value start = IS_EMPTY(a[0]) ? INT_VAL(0) : a[0], step = IS_EMPTY(a[1]) ? INT_VAL(1) : a[1];
    for (int i = 0; i < 2; i++) {
        Value v = i ? step : start;
        /* a number: int, float, or a class with __index__/__int__/__float__ */
        if (!IS_INTLIKE(v) && !IS_FLOAT(v) && (!IS_OBJ(v) || AS_OBJ(v)->type == vm->t_str ||
                                               (IS_EMPTY(vm_getattr_opt(vm, v, cstr_name(vm, "__index__"))) &&
                                                IS_EMPTY(vm_getattr_opt(vm, v, cstr_name(vm, "__int__"))) &&
                                                IS_EMPTY(vm_getattr_opt(vm, v, cstr_name(vm, "__float__"))))))
            vm_raise_kind(vm, TypeError, "a number is required");
    }
    Count *c = gc_alloc_obj(vm, cls, sizeof(Count));
    c->cur = IS_BOOL(start) ? INT_VAL(AS_INTLIKE(start)) : start;
    c->step = IS_BOOL(step) ? INT_VAL(AS_INTLIKE(step)) : step;
    return OBJ_VAL(c);
}

static bool count_next(VM *vm, Value self, Value *out) {
    Count *c = (Count *)AS_OBJ(self);
    *out = c->cur;
    int64_t r;
    if (IS_INT(c->cur) && IS_INT(c->step) && !int_add_overflow(c->cur.as.i, c->step.as.i, &r)) c->cur = INT_VAL(r);
    else {
        vm_push_root(vm, *out);
        c->cur = vm_binop(vm, BINOP_ADD, c->cur, c->step);
        vm_pop_roots(vm, 1);
    }
    return true;
}

static Value count_repr(VM *vm, Value self) {
    Count *c = (Count *)AS_OBJ(self);
    Str *cur = vm_repr(vm, c->cur);
    if (IS_INT(c->step) && c->step.as.i == 1) return STR_VAL(str_printf(vm, "count(%s)", cur->chars));
    vm_push_root(vm, STR_VAL(cur));
    Str *step = vm_repr(vm, c->step);
    vm_pop_roots(vm, 1);
    return STR_VAL(str_printf(vm, "count(%s, %s)", cur->chars, step->chars));
}

#define ThisType Count
static void count_mark(VM *vm, Obj *o) {
    MARK(cur);
    MARK(step);
}
#undef ThisType

/* ================================================================ cycle */

typedef struct Cycle {
    Obj obj;
    Value it;     /* EMPTY once the source is exhausted */
    List *saved;
    int64_t index; /* position in saved after the first pass */
} Cycle;

static Value cycle_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    pos_only(vm, "cycle", argc, kwargs, 1, 1);
    Value it = vm_iter(vm, argv[0]);
    vm_push_root(vm, it);
    List *saved = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(saved));
    Cycle *c = gc_alloc_obj(vm, cls, sizeof(Cycle));
    c->it = it;
    c->saved = saved;
    vm_pop_roots(vm, 2);
    return OBJ_VAL(c);
}

static bool cycle_next(VM *vm, Value self, Value *out) {
    Cycle *c = (Cycle *)AS_OBJ(self);
    if (!IS_EMPTY(c->it)) {
        if (vm_next(vm, c->it, out)) {
            vm_push_root(vm, *out); /* list_append may collect */
            list_append(vm, c->saved, *out);
            vm_pop_roots(vm, 1);
            return true;
        }
        c->it = EMPTY_VAL;
    }
    if (c->saved->len == 0) return false;
    if (c->index >= c->saved->len) c->index = 0;
    *out = c->saved->items[c->index++];
    return true;
}

#define ThisType Cycle
static void cycle_mark(VM *vm, Obj *o) {
    MARK(it);
    gc_mark_obj(vm, &((Cycle *)o)->saved->obj);
}
#undef ThisType

/* ================================================================ repeat */

typedef struct Repeat {
    Obj obj;
    Value value;
    int64_t left; /* -1: forever */
} Repeat;

static Value repeat_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"object", "times"};
    Value a[2];
    parse_args(vm, "repeat", argc, argv, kwargs, names, 2, 1, a);
    int64_t left = -1;
    if (!IS_EMPTY(a[1])) {
        left = vm_to_index(vm, a[1]);
        if (left < 0) left = 0;
    }
    Repeat *r = gc_alloc_obj(vm, cls, sizeof(Repeat));
    r->value = a[0];
    r->left = left;
    return OBJ_VAL(r);
}

static bool repeat_next(VM *vm, Value self, Value *out) {
    (void)vm;
    Repeat *r = (Repeat *)AS_OBJ(self);
    if (r->left == 0) return false;
    if (r->left > 0) r->left--;
    *out = r->value;
    return true;
}

static Value repeat_repr(VM *vm, Value self) {
    Repeat *r = (Repeat *)AS_OBJ(self);
    Str *v = vm_repr(vm, r->value);
    if (r->left < 0) return STR_VAL(str_printf(vm, "repeat(%s)", v->chars));
    return STR_VAL(str_printf(vm, "repeat(%s, %lld)", v->chars, (long long)r->left));
}

static Value repeat_length_hint(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)kwargs;
    Repeat *r = (Repeat *)AS_OBJ(argv[0]);
    if (r->left < 0) vm_raise_kind(vm, TypeError, "len() of unsized object");
    return INT_VAL(r->left);
}

#define ThisType Repeat
static void repeat_mark(VM *vm, Obj *o) { MARK(value); }
#undef ThisType

/* ================================================================ accumulate */

typedef struct Accumulate {
    Obj obj;
    Value it, func, total, initial; /* total EMPTY before the first item; initial EMPTY once yielded */
} Accumulate;

static Value accumulate_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"iterable", "func", "initial"};
    if (argc > 2)
        vm_raise_kind(vm, TypeError, "accumulate() takes at most 3 arguments (%d given)",
                      argc + (kwargs ? (int)kwargs->count : 0));
    Value a[3];
    parse_args(vm, "accumulate", argc, argv, kwargs, names, 3, 1, a);
    Value it = vm_iter(vm, a[0]);
    vm_push_root(vm, it);
    Accumulate *acc = gc_alloc_obj(vm, cls, sizeof(Accumulate));
    acc->it = it;
    acc->func = IS_EMPTY(a[1]) ? NONE_VAL : a[1];
    acc->total = EMPTY_VAL;
    acc->initial = IS_EMPTY(a[2]) || IS_NONE(a[2]) ? EMPTY_VAL : a[2];
    vm_pop_roots(vm, 1);
    return OBJ_VAL(acc);
}

static bool accumulate_next(VM *vm, Value self, Value *out) {
    Accumulate *a = (Accumulate *)AS_OBJ(self);
    if (!IS_EMPTY(a->initial)) {
        a->total = a->initial;
        a->initial = EMPTY_VAL;
        *out = a->total;
        return true;
    }
    Value v;
    if (IS_EMPTY(a->it) || !vm_next(vm, a->it, &v)) return false;
    if (IS_EMPTY(a->total)) a->total = v;
    else {
        vm_push_root(vm, v);
        a->total = IS_NONE(a->func) ? vm_binop(vm, BINOP_ADD, a->total, v) : call2(vm, a->func, a->total, v);
        vm_pop_roots(vm, 1);
    }
    *out = a->total;
    return true;
}

#define ThisType Accumulate
static void accumulate_mark(VM *vm, Obj *o) {
    MARK(it);
    MARK(func);
    MARK(total);
    MARK(initial);
}
#undef ThisType

/* ================================================================ chain */

typedef struct Chain {
    Obj obj;
    Value sources; /* an iterator over the iterables; EMPTY when done */
    Value cur;     /* the current iterator, EMPTY between sources */
} Chain;

static Type *chain_type(VM *vm);

static Value chain_make(VM *vm, Type *cls, Value iterables) {
    Value src = vm_iter(vm, iterables);
    vm_push_root(vm, src);
    Chain *c = gc_alloc_obj(vm, cls, sizeof(Chain));
    c->sources = src;
    c->cur = EMPTY_VAL;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(c);
}

static Value chain_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "chain", kwargs);
    Tuple *t = tuple_from_array(vm, argc, argv);
    vm_push_root(vm, OBJ_VAL(t));
    Value c = chain_make(vm, cls, OBJ_VAL(t));
    vm_pop_roots(vm, 1);
    return c;
}

static Value chain_from_iterable(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "from_iterable", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "chain.from_iterable() takes exactly one argument (%d given)", argc);
    return chain_make(vm, chain_type(vm), argv[0]);
}

static bool chain_next(VM *vm, Value self, Value *out) {
    Chain *c = (Chain *)AS_OBJ(self);
    for (;;) {
        if (IS_EMPTY(c->cur)) {
            Value next;
            if (IS_EMPTY(c->sources) || !vm_next(vm, c->sources, &next)) {
                c->sources = EMPTY_VAL;
                return false;
            }
            vm_push_root(vm, next);
            c->cur = vm_iter(vm, next);
            vm_pop_roots(vm, 1);
        }
        if (vm_next(vm, c->cur, out)) return true;
        c->cur = EMPTY_VAL;
    }
}

#define ThisType Chain
static void chain_mark(VM *vm, Obj *o) {
    MARK(sources);
    MARK(cur);
}
#undef ThisType

static Type *chain_type(VM *vm) { return iter_type(vm, NULL, "chain", chain_new, chain_next, chain_mark); }

/* ================================================================ compress */

typedef struct Compress {
    Obj obj;
    Value data, selectors;
} Compress;

static Value compress_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"data", "selectors"};
    Value a[2];
    parse_args(vm, "compress", argc, argv, kwargs, names, 2, 2, a);
    Value d = vm_iter(vm, a[0]);
    vm_push_root(vm, d);
    Value s = vm_iter(vm, a[1]);
    vm_push_root(vm, s);
    Compress *c = gc_alloc_obj(vm, cls, sizeof(Compress));
    c->data = d;
    c->selectors = s;
    vm_pop_roots(vm, 2);
    return OBJ_VAL(c);
}

static bool compress_next(VM *vm, Value self, Value *out) {
    Compress *c = (Compress *)AS_OBJ(self);
    for (;;) {
        Value d, s;
        if (!vm_next(vm, c->data, &d)) return false;
        vm_push_root(vm, d);
        bool more = vm_next(vm, c->selectors, &s);
        bool keep = more && vm_truthy(vm, s);
        vm_pop_roots(vm, 1);
        if (!more) return false;
        if (keep) {
            *out = d;
            return true;
        }
    }
}

#define ThisType Compress
static void compress_mark(VM *vm, Obj *o) {
    MARK(data);
    MARK(selectors);
}
#undef ThisType

/* ================================================ dropwhile, takewhile, filterfalse, starmap */

typedef struct PredIter {
    Obj obj;
    Value func, it;
    bool done; /* dropwhile: dropping is over; takewhile: stopped */
} PredIter;

static Value pred_make(VM *vm, Type *cls, const char *name, int argc, Value *argv, Dict *kwargs) {
    pos_only(vm, name, argc, kwargs, 2, 2);
    Value it = vm_iter(vm, argv[1]);
    vm_push_root(vm, it);
    PredIter *p = gc_alloc_obj(vm, cls, sizeof(PredIter));
    p->func = argv[0];
    p->it = it;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(p);
}

static Value dropwhile_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    return pred_make(vm, cls, "dropwhile", argc, argv, kwargs);
}
static Value takewhile_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    return pred_make(vm, cls, "takewhile", argc, argv, kwargs);
}
static Value filterfalse_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    return pred_make(vm, cls, "filterfalse", argc, argv, kwargs);
}
static Value starmap_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    return pred_make(vm, cls, "starmap", argc, argv, kwargs);
}

/* pred(v) as a bool, v rooted while pred runs */
static bool test(VM *vm, Value pred, Value v) {
    vm_push_root(vm, v);
    bool r = vm_truthy(vm, IS_NONE(pred) ? v : call1(vm, pred, v));
    vm_pop_roots(vm, 1);
    return r;
}

static bool dropwhile_next(VM *vm, Value self, Value *out) {
    PredIter *p = (PredIter *)AS_OBJ(self);
    Value v;
    while (vm_next(vm, p->it, &v)) {
        if (p->done || !test(vm, p->func, v)) {
            p->done = true;
            *out = v;
            return true;
        }
    }
    return false;
}

static bool takewhile_next(VM *vm, Value self, Value *out) {
    PredIter *p = (PredIter *)AS_OBJ(self);
    Value v;
    if (p->done || !vm_next(vm, p->it, &v)) return false;
    if (test(vm, p->func, v)) {
        *out = v;
        return true;
    }
    p->done = true;
    return false;
}

static bool filterfalse_next(VM *vm, Value self, Value *out) {
    PredIter *p = (PredIter *)AS_OBJ(self);
    Value v;
    while (vm_next(vm, p->it, &v)) {
        if (!test(vm, p->func, v)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool starmap_next(VM *vm, Value self, Value *out) {
    PredIter *p = (PredIter *)AS_OBJ(self);
    Value v;
    if (!vm_next(vm, p->it, &v)) return false;
    vm_push_root(vm, v);
    if (!IS_TUPLE(vm, v)) {
        /* any iterable of arguments, as f(*v) takes it */
        List *l = list_new(vm, 0);
        vm_push_root(vm, OBJ_VAL(l));
        Value it = vm_iter(vm, v), x;
        vm_push_root(vm, it);
        while (vm_next(vm, it, &x)) list_append(vm, l, x);
        v = OBJ_VAL(tuple_from_array(vm, l->len, l->items));
        vm_pop_roots(vm, 3);
        vm_push_root(vm, v);
    }
    Tuple *t = AS_TUPLE(v);
    *out = vm_call(vm, p->func, (int)t->len, t->items);
    vm_pop_roots(vm, 1);
    return true;
}

#define ThisType PredIter
static void pred_mark(VM *vm, Obj *o) {
    MARK(func);
    MARK(it);
}
#undef ThisType

/* ================================================================ groupby */

/* groupby holds the current key/value; each _grouper reads through it
** while it is still the parent's current group. */
typedef struct GroupBy {
    Obj obj;
    Value it, keyfunc;
    Value tgtkey, currkey, currvalue; /* EMPTY when unset */
    Value currgrouper;                /* the last _grouper made */
} GroupBy;

typedef struct Grouper {
    Obj obj;
    Value parent, tgtkey;
} Grouper;

static Type *grouper_type(VM *vm);

static Value groupby_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"iterable", "key"};
    Value a[2];
    parse_args(vm, "groupby", argc, argv, kwargs, names, 2, 1, a);
    Value it = vm_iter(vm, a[0]);
    vm_push_root(vm, it);
    GroupBy *g = gc_alloc_obj(vm, cls, sizeof(GroupBy));
    g->it = it;
    g->keyfunc = IS_EMPTY(a[1]) ? NONE_VAL : a[1];
    g->tgtkey = g->currkey = g->currvalue = g->currgrouper = EMPTY_VAL;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(g);
}

/* Reads the next item into currkey/currvalue; false at the end. */
static bool groupby_step(VM *vm, GroupBy *g) {
    Value v;
    if (!vm_next(vm, g->it, &v)) return false;
    vm_push_root(vm, v);
    Value k = IS_NONE(g->keyfunc) ? v : call1(vm, g->keyfunc, v);
    g->currvalue = v;
    g->currkey = k;
    vm_pop_roots(vm, 1);
    return true;
}

static bool groupby_next(VM *vm, Value self, Value *out) {
    GroupBy *g = (GroupBy *)AS_OBJ(self);
    g->currgrouper = EMPTY_VAL;
    /* skip to the next key */
    for (;;) {
        if (IS_EMPTY(g->currkey)) {
            if (!groupby_step(vm, g)) return false;
        } else if (IS_EMPTY(g->tgtkey)) {
            break;
        } else {
            if (!vm_equal(vm, g->tgtkey, g->currkey)) break;
            if (!groupby_step(vm, g)) return false;
        }
    }
    g->tgtkey = g->currkey;
    Grouper *gr = gc_alloc_obj(vm, grouper_type(vm), sizeof(Grouper));
    gr->parent = self;
    gr->tgtkey = g->tgtkey;
    g->currgrouper = OBJ_VAL(gr);
    vm_push_root(vm, OBJ_VAL(gr));
    Tuple *t = tuple_new(vm, 2);
    t->items[0] = g->currkey;
    t->items[1] = OBJ_VAL(gr);
    vm_pop_roots(vm, 1);
    *out = OBJ_VAL(t);
    return true;
}

static bool grouper_next(VM *vm, Value self, Value *out) {
    Grouper *gr = (Grouper *)AS_OBJ(self);
    GroupBy *g = (GroupBy *)AS_OBJ(gr->parent);
    /* only the newest group can still be read */
    if (!IS_OBJ(g->currgrouper) || AS_OBJ(g->currgrouper) != AS_OBJ(self)) return false;
    if (IS_EMPTY(g->currvalue) && !groupby_step(vm, g)) return false;
    if (!vm_equal(vm, gr->tgtkey, g->currkey)) return false;
    *out = g->currvalue;
    g->currvalue = EMPTY_VAL; /* consumed; currkey stays for groupby_next */
    return true;
}

#define ThisType GroupBy
static void groupby_mark(VM *vm, Obj *o) {
    MARK(it);
    MARK(keyfunc);
    MARK(tgtkey);
    MARK(currkey);
    MARK(currvalue);
    MARK(currgrouper);
}
#undef ThisType
#define ThisType Grouper
static void grouper_mark(VM *vm, Obj *o) {
    MARK(parent);
    MARK(tgtkey);
}
#undef ThisType

static Type *grouper_type(VM *vm) { return iter_type(vm, NULL, "_grouper", NULL, grouper_next, grouper_mark); }

/* ================================================================ islice */

typedef struct ISlice {
    Obj obj;
    Value it;          /* EMPTY when done */
    int64_t next, stop; /* stop -1: none */
    int64_t step, cnt;
} ISlice;

static int64_t islice_arg(VM *vm, Value v, const char *msg) {
    if (IS_NONE(v)) return -1;
    if (!IS_INTLIKE(v) && !(IS_OBJ(v) && !IS_EMPTY(vm_getattr_opt(vm, v, cstr_name(vm, "__index__")))))
        vm_raise_kind(vm, ValueError, "%s", msg);
    int64_t i = vm_to_index(vm, v);
    if (i < 0) vm_raise_kind(vm, ValueError, "%s", msg);
    return i;
}

static Value islice_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "islice", kwargs);
    arg_between(vm, "islice", argc, 2, 4);
    int64_t start = 0, stop, step = 1;
    static const char stop_msg[] = "Stop argument for islice() must be None or an integer: 0 <= x <= sys.maxsize.";
    static const char idx_msg[] = "Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.";
    if (argc == 2) {
        stop = islice_arg(vm, argv[1], stop_msg);
    } else {
        int64_t s = islice_arg(vm, argv[1], idx_msg);
        start = s < 0 ? 0 : s;
        stop = islice_arg(vm, argv[2], stop_msg);
        if (argc == 4) {
            int64_t st = IS_NONE(argv[3]) ? 1 : islice_arg(vm, argv[3], "Step for islice() must be a positive integer or None.");
            if (st == 0) vm_raise_kind(vm, ValueError, "Step for islice() must be a positive integer or None.");
            step = st;
        }
    }
    Value it = vm_iter(vm, argv[0]);
    vm_push_root(vm, it);
    ISlice *s = gc_alloc_obj(vm, cls, sizeof(ISlice));
    s->it = it;
    s->next = start;
    s->stop = stop;
    s->step = step;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(s);
}

static bool islice_next(VM *vm, Value self, Value *out) {
    ISlice *s = (ISlice *)AS_OBJ(self);
    if (IS_EMPTY(s->it)) return false;
    Value v;
    while (s->cnt < s->next) {
        if (!vm_next(vm, s->it, &v)) {
            s->it = EMPTY_VAL;
            return false;
        }
        s->cnt++;
    }
    if (s->stop >= 0 && s->cnt >= s->stop) {
        s->it = EMPTY_VAL;
        return false;
    }
    if (!vm_next(vm, s->it, &v)) {
        s->it = EMPTY_VAL;
        return false;
    }
    s->cnt++;
    int64_t oldnext = s->next;
    s->next += s->step;
    if (s->next < oldnext || (s->stop >= 0 && s->next > s->stop)) s->next = s->stop;
    *out = v;
    return true;
}

#define ThisType ISlice
static void islice_mark(VM *vm, Obj *o) { MARK(it); }
#undef ThisType

/* ================================================================ pairwise */

typedef struct Pairwise {
    Obj obj;
    Value it, old; /* old EMPTY before the first item */
} Pairwise;

static Value pairwise_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    pos_only(vm, "pairwise", argc, kwargs, 1, 1);
    Value it = vm_iter(vm, argv[0]);
    vm_push_root(vm, it);
    Pairwise *p = gc_alloc_obj(vm, cls, sizeof(Pairwise));
    p->it = it;
    p->old = EMPTY_VAL;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(p);
}

static bool pairwise_next(VM *vm, Value self, Value *out) {
    Pairwise *p = (Pairwise *)AS_OBJ(self);
    if (IS_EMPTY(p->it)) return false;
    if (IS_EMPTY(p->old) && !vm_next(vm, p->it, &p->old)) {
        p->it = EMPTY_VAL;
        return false;
    }
    Value v;
    if (!vm_next(vm, p->it, &v)) {
        p->it = p->old = EMPTY_VAL;
        return false;
    }
    vm_push_root(vm, v);
    Tuple *t = tuple_new(vm, 2);
    t->items[0] = p->old;
    t->items[1] = v;
    p->old = v;
    vm_pop_roots(vm, 1);
    *out = OBJ_VAL(t);
    return true;
}

#define ThisType Pairwise
static void pairwise_mark(VM *vm, Obj *o) {
    MARK(it);
    MARK(old);
}
#undef ThisType

/* ================================================================ tee */

/* The items read from the shared source, in a chain of fixed-size links:
** each tee walks the chain at its own pace and links nobody can reach any
** more are collected. */
#define TEE_LINK_ITEMS 57
typedef struct TeeLink {
    Obj obj;
    Value source; /* the shared source iterator (a one-item list once exhausted: EMPTY) */
    struct TeeLink *next;
    int n;
    Value items[TEE_LINK_ITEMS];
} TeeLink;

typedef struct Tee {
    Obj obj;
    TeeLink *link;
    int index;
} Tee;

static Type *tee_type(VM *vm);
static Type *teelink_type(VM *vm);

static TeeLink *teelink_new(VM *vm, Value source) {
    TeeLink *l = gc_alloc_obj(vm, teelink_type(vm), sizeof(TeeLink));
    l->source = source;
    return l;
}

static Value tee_from_link(VM *vm, TeeLink *link, int index) {
    vm_push_root(vm, OBJ_VAL(link));
    Tee *t = gc_alloc_obj(vm, tee_type(vm), sizeof(Tee));
    t->link = link;
    t->index = index;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(t);
}

static Value tee_of(VM *vm, Value iterable) {
    Value it = vm_iter(vm, iterable);
    if (IS_OBJ(it) && AS_OBJ(it)->type == tee_type(vm)) {
        Tee *src = (Tee *)AS_OBJ(it);
        return tee_from_link(vm, src->link, src->index);
    }
    vm_push_root(vm, it);
    TeeLink *l = teelink_new(vm, it);
    vm_pop_roots(vm, 1);
    return tee_from_link(vm, l, 0);
}

static Value tee_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    (void)cls;
    pos_only(vm, "_tee", argc, kwargs, 1, 1);
    return tee_of(vm, argv[0]);
}

static bool tee_next(VM *vm, Value self, Value *out) {
    Tee *t = (Tee *)AS_OBJ(self);
    TeeLink *l = t->link;
    if (t->index == TEE_LINK_ITEMS) {
        if (!l->next) {
            TeeLink *n = teelink_new(vm, l->source);
            l->next = n;
        }
        l = t->link = l->next;
        t->index = 0;
    }
    if (t->index >= l->n) {
        /* this tee is the front runner: read one more item */
        Value v;
        if (IS_EMPTY(l->source) || !vm_next(vm, l->source, &v)) return false;
        if (t->index < l->n) { /* the source re-entered this tee: use what it stored */
            *out = l->items[t->index++];
            return true;
        }
        l->items[l->n++] = v;
    }
    *out = l->items[t->index++];
    return true;
}

static Value tee_copy(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)kwargs;
    Tee *t = (Tee *)AS_OBJ(argv[0]);
    return tee_from_link(vm, t->link, t->index);
}

static void tee_mark(VM *vm, Obj *o) { gc_mark_obj(vm, &((Tee *)o)->link->obj); }

static void teelink_mark(VM *vm, Obj *o) {
    TeeLink *l = (TeeLink *)o;
    gc_mark_value(vm, l->source);
    if (l->next) gc_mark_obj(vm, &l->next->obj);
    for (int i = 0; i < l->n; i++) gc_mark_value(vm, l->items[i]);
}

static bool no_next(VM *vm, Value self, Value *out) {
    (void)vm;
    (void)self;
    (void)out;
    return false;
}

static Type *tee_type(VM *vm) {
    Type *t = STDLIB_FIND_TYPE(vm, next, tee_next);
    if (!t) {
        t = iter_type(vm, NULL, "_tee", tee_new, tee_next, tee_mark);
        type_add_method(vm, t, "__copy__", tee_copy);
    }
    return t;
}

static Type *teelink_type(VM *vm) {
    Type *t = STDLIB_FIND_TYPE(vm, mark, teelink_mark);
    if (!t) {
        t = type_new_builtin(vm, "_tee_dataobject", vm->t_object, 0);
        t->mark = teelink_mark;
        t->next = no_next;
    }
    return t;
}

static Value f_tee(VM *vm, int argc, Value *argv, Dict *kwargs) {
    pos_only(vm, "tee", argc, kwargs, 1, 2);
    int64_t n = argc > 1 ? vm_to_index(vm, argv[1]) : 2;
    if (n < 0) vm_raise_kind(vm, ValueError, "n must be >= 0");
    Tuple *result = tuple_new(vm, n);
    vm_push_root(vm, OBJ_VAL(result));
    if (n > 0) {
        /* an iterator that is a tee already is the first result itself */
        Value it = vm_iter(vm, argv[0]);
        result->items[0] = IS_OBJ(it) && AS_OBJ(it)->type == tee_type(vm) ? it : tee_of(vm, it);
        Tee *first = (Tee *)AS_OBJ(result->items[0]);
        for (int64_t i = 1; i < n; i++) result->items[i] = tee_from_link(vm, first->link, first->index);
    } else {
        vm_iter(vm, argv[0]); /* still checks that it is iterable */
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(result);
}

/* ================================================================ zip_longest */

typedef struct ZipLongest {
    Obj obj;
    Tuple *its;  /* an entry becomes EMPTY when exhausted; NULL when all are */
    Value fill;
    int64_t active;
} ZipLongest;

static Value zip_longest_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    Value fill = NONE_VAL;
    if (kwargs && kwargs->count) {
        Value f = kw_take(vm, kwargs, "fillvalue");
        if (!IS_EMPTY(f)) fill = f;
        if (kwargs->count) vm_raise_kind(vm, TypeError, "zip_longest() got an unexpected keyword argument");
    }
    vm_push_root(vm, fill);
    Tuple *its = tuple_from_array(vm, argc, argv);
    vm_push_root(vm, OBJ_VAL(its));
    for (int i = 0; i < argc; i++) its->items[i] = vm_iter(vm, its->items[i]);
    ZipLongest *z = gc_alloc_obj(vm, cls, sizeof(ZipLongest));
    z->its = its;
    z->fill = fill;
    z->active = argc;
    vm_pop_roots(vm, 2);
    return OBJ_VAL(z);
}

static bool zip_longest_next(VM *vm, Value self, Value *out) {
    ZipLongest *z = (ZipLongest *)AS_OBJ(self);
    if (!z->its || z->its->len == 0) return false;
    int64_t n = z->its->len;
    Tuple *t = tuple_new(vm, n);
    for (int64_t i = 0; i < n; i++) t->items[i] = NONE_VAL;
    vm_push_root(vm, OBJ_VAL(t));
    for (int64_t i = 0; i < n; i++) {
        Value it = z->its->items[i], v;
        if (IS_EMPTY(it)) {
            v = z->fill;
        } else if (!vm_next(vm, it, &v)) {
            z->its->items[i] = EMPTY_VAL;
            if (--z->active == 0) {
                z->its = NULL;
                vm_pop_roots(vm, 1);
                return false;
            }
            v = z->fill;
        }
        t->items[i] = v;
    }
    vm_pop_roots(vm, 1);
    *out = OBJ_VAL(t);
    return true;
}

static void zip_longest_mark(VM *vm, Obj *o) {
    ZipLongest *z = (ZipLongest *)o;
    if (z->its) gc_mark_obj(vm, &z->its->obj);
    gc_mark_value(vm, z->fill);
}

/* ================================================ the combinatoric iterators */

/* pool: the input as a tuple; indices: r positions (or cycles for
** permutations); first: no item produced yet; done: exhausted. */
typedef struct Combi {
    Obj obj;
    Tuple *pool;
    int64_t *indices, *cycles;
    int64_t n, r, nindices, ncycles;
    bool first, done;
    int kind;
} Combi;

enum { K_PRODUCT, K_PERMUTATIONS, K_COMBINATIONS, K_CWR };

static Tuple *tuple_of(VM *vm, Value iterable) {
    if (IS_TUPLE(vm, iterable) && AS_OBJ(iterable)->type == vm->t_tuple) return AS_TUPLE(iterable);
    List *l = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(l));
    Value it = vm_iter(vm, iterable), v;
    vm_push_root(vm, it);
    while (vm_next(vm, it, &v)) list_append(vm, l, v);
    Tuple *t = tuple_from_array(vm, l->len, l->items);
    vm_pop_roots(vm, 2);
    return t;
}

static int64_t *index_array(VM *vm, int64_t n) {
    if (n < 0 || n > (int64_t)(SIZE_MAX / sizeof(int64_t)) / 2) vm_throw(vm, vm->memory_error);
    return gc_malloc(vm, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
}

static Combi *combi_new(VM *vm, Type *cls, int kind, Tuple *pool, int64_t r) {
    vm_push_root(vm, OBJ_VAL(pool));
    Combi *c = gc_alloc_obj(vm, cls, sizeof(Combi));
    c->pool = pool;
    c->kind = kind;
    c->n = pool->len;
    c->r = r;
    c->first = true;
    vm_push_root(vm, OBJ_VAL(c));
    c->nindices = kind == K_PERMUTATIONS ? c->n : r;
    c->indices = index_array(vm, c->nindices);
    if (kind == K_PERMUTATIONS) {
        c->ncycles = r;
        c->cycles = index_array(vm, r);
    }
    vm_pop_roots(vm, 2);
    return c;
}

static int64_t r_arg(VM *vm, Value v, bool need_int_msg) {
    if (need_int_msg && !IS_INTLIKE(v)) vm_raise_kind(vm, TypeError, "Expected int as r");
    int64_t r = vm_to_index(vm, v);
    if (r < 0) vm_raise_kind(vm, ValueError, "r must be non-negative");
    return r;
}

static Value combinations_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"iterable", "r"};
    Value a[2];
    parse_args(vm, "combinations", argc, argv, kwargs, names, 2, 2, a);
    Tuple *pool = tuple_of(vm, a[0]);
    vm_push_root(vm, OBJ_VAL(pool));
    Combi *c = combi_new(vm, cls, K_COMBINATIONS, pool, r_arg(vm, a[1], false));
    for (int64_t i = 0; i < c->r; i++) c->indices[i] = i;
    if (c->r > c->n) c->done = true;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(c);
}

static Value cwr_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"iterable", "r"};
    Value a[2];
    parse_args(vm, "combinations_with_replacement", argc, argv, kwargs, names, 2, 2, a);
    Tuple *pool = tuple_of(vm, a[0]);
    vm_push_root(vm, OBJ_VAL(pool));
    Combi *c = combi_new(vm, cls, K_CWR, pool, r_arg(vm, a[1], false));
    for (int64_t i = 0; i < c->r; i++) c->indices[i] = 0;
    if (c->n == 0 && c->r > 0) c->done = true;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(c);
}

static Value permutations_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"iterable", "r"};
    Value a[2];
    parse_args(vm, "permutations", argc, argv, kwargs, names, 2, 1, a);
    Tuple *pool = tuple_of(vm, a[0]);
    vm_push_root(vm, OBJ_VAL(pool));
    int64_t r = IS_EMPTY(a[1]) || IS_NONE(a[1]) ? pool->len : r_arg(vm, a[1], true);
    Combi *c = combi_new(vm, cls, K_PERMUTATIONS, pool, r);
    for (int64_t i = 0; i < c->n; i++) c->indices[i] = i;
    for (int64_t i = 0; i < r; i++) c->cycles[i] = c->n - i;
    if (r > c->n) c->done = true;
    vm_pop_roots(vm, 1);
    return OBJ_VAL(c);
}

/* product: the pools of all arguments (repeated) concatenated in pool, and
** cycles[k] holding the size of pool k (indices index within each). */
static Value product_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    int64_t repeat = 1;
    if (kwargs && kwargs->count) {
        Value rv = kw_take(vm, kwargs, "repeat");
        if (kwargs->count) kw_done(vm, "product", kwargs);
        if (!IS_EMPTY(rv)) repeat = vm_to_index(vm, rv);
        if (repeat < 0) vm_raise_kind(vm, ValueError, "repeat argument cannot be negative");
    }
    Tuple *args = tuple_from_array(vm, argc, argv);
    vm_push_root(vm, OBJ_VAL(args));
    List *all = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(all));
    Tuple *pools = tuple_new(vm, argc);
    vm_push_root(vm, OBJ_VAL(pools));
    for (int i = 0; i < argc; i++) pools->items[i] = OBJ_VAL(tuple_of(vm, args->items[i]));
    int64_t npools = (int64_t)argc * repeat;
    if (argc && npools / argc != repeat) vm_throw(vm, vm->memory_error);
    int64_t *sizes = index_array(vm, npools);
    bool empty = false;
    for (int64_t k = 0; k < npools; k++) {
        Tuple *p = AS_TUPLE(pools->items[k % (argc ? argc : 1)]);
        sizes[k] = p->len;
        if (p->len == 0) empty = true;
        for (int64_t j = 0; j < p->len; j++) list_append(vm, all, p->items[j]);
    }
    Tuple *pool = tuple_from_array(vm, all->len, all->items);
    vm_push_root(vm, OBJ_VAL(pool));
    Combi *c;
    {
        c = gc_alloc_obj(vm, cls, sizeof(Combi));
        c->pool = pool;
        c->kind = K_PRODUCT;
        c->r = npools;
        c->first = true;
        c->cycles = sizes;
        c->ncycles = npools;
        vm_push_root(vm, OBJ_VAL(c));
        c->nindices = npools;
        c->indices = index_array(vm, npools);
        vm_pop_roots(vm, 1);
    }
    for (int64_t k = 0; k < npools; k++) c->indices[k] = 0;
    c->done = empty;
    vm_pop_roots(vm, 4);
    return OBJ_VAL(c);
}

/* Advances the index state; false when exhausted. */
static bool combi_advance(Combi *c) {
    int64_t n = c->n, r = c->r, *ix = c->indices;
    switch (c->kind) {
    case K_PRODUCT: {
        for (int64_t k = r - 1; k >= 0; k--) {
            if (++ix[k] < c->cycles[k]) return true;
            ix[k] = 0;
        }
        return false;
    }
    case K_COMBINATIONS: {
        int64_t i = r - 1;
        while (i >= 0 && ix[i] == i + n - r) i--;
        if (i < 0) return false;
        ix[i]++;
        for (int64_t j = i + 1; j < r; j++) ix[j] = ix[j - 1] + 1;
        return true;
    }
    case K_CWR: {
        int64_t i = r - 1;
        while (i >= 0 && ix[i] == n - 1) i--;
        if (i < 0) return false;
        int64_t v = ix[i] + 1;
        for (int64_t j = i; j < r; j++) ix[j] = v;
        return true;
    }
    default: { /* permutations: rotate the tail through the cycles */
        for (int64_t i = r - 1; i >= 0; i--) {
            if (--c->cycles[i] == 0) {
                int64_t first = ix[i];
                memmove(ix + i, ix + i + 1, (size_t)(n - i - 1) * sizeof(int64_t));
                ix[n - 1] = first;
                c->cycles[i] = n - i;
            } else {
                int64_t j = c->cycles[i];
                int64_t t = ix[i];
                ix[i] = ix[n - j];
                ix[n - j] = t;
                return true;
            }
        }
        return false;
    }
    }
}

static bool combi_next(VM *vm, Value self, Value *out) {
    Combi *c = (Combi *)AS_OBJ(self);
    if (c->done) return false;
    if (c->first) c->first = false;
    else if (!combi_advance(c)) {
        c->done = true;
        return false;
    }
    Tuple *t = tuple_new(vm, c->r);
    if (c->kind == K_PRODUCT) {
        int64_t base = 0;
        for (int64_t k = 0; k < c->r; k++) {
            t->items[k] = c->pool->items[base + c->indices[k]];
            base += c->cycles[k];
        }
    } else {
        for (int64_t k = 0; k < c->r; k++) t->items[k] = c->pool->items[c->indices[k]];
    }
    *out = OBJ_VAL(t);
    return true;
}

static void combi_mark(VM *vm, Obj *o) {
    Combi *c = (Combi *)o;
    if (c->pool) gc_mark_obj(vm, &c->pool->obj);
}

static void combi_finalize(VM *vm, Obj *o) {
    Combi *c = (Combi *)o;
    if (c->indices) gc_free(vm, c->indices, (size_t)(c->nindices > 0 ? c->nindices : 1) * sizeof(int64_t));
    if (c->cycles) gc_free(vm, c->cycles, (size_t)(c->ncycles > 0 ? c->ncycles : 1) * sizeof(int64_t));
    c->indices = c->cycles = NULL;
}

static bool product_next(VM *vm, Value self, Value *out) { return combi_next(vm, self, out); }
static bool permutations_next(VM *vm, Value self, Value *out) { return combi_next(vm, self, out); }
static bool combinations_next(VM *vm, Value self, Value *out) { return combi_next(vm, self, out); }
static bool cwr_next(VM *vm, Value self, Value *out) { return combi_next(vm, self, out); }

/* ================================================================ the module */

static Module *build_itertools(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "itertools"));
    vm_push_root(vm, OBJ_VAL(m));
    Type *t = iter_type(vm, m, "count", count_new, count_next, count_mark);
    t->repr = count_repr;
    iter_type(vm, m, "cycle", cycle_new, cycle_next, cycle_mark);
    t = iter_type(vm, m, "repeat", repeat_new, repeat_next, repeat_mark);
    t->repr = repeat_repr;
    if (IS_EMPTY(dict_get_cstr(vm, t->dict, "__length_hint__")))
        type_add_method(vm, t, "__length_hint__", repeat_length_hint);
    iter_type(vm, m, "accumulate", accumulate_new, accumulate_next, accumulate_mark);
    t = chain_type(vm);
    dict_set_cstr(vm, m->dict, "chain", OBJ_VAL(t));
    if (IS_EMPTY(dict_get_cstr(vm, t->dict, "from_iterable")))
        dict_set_cstr(vm, t->dict, "from_iterable", native_new(vm, "from_iterable", chain_from_iterable, NONE_VAL));
    iter_type(vm, m, "compress", compress_new, compress_next, compress_mark);
    iter_type(vm, m, "dropwhile", dropwhile_new, dropwhile_next, pred_mark);
    iter_type(vm, m, "takewhile", takewhile_new, takewhile_next, pred_mark);
    iter_type(vm, m, "filterfalse", filterfalse_new, filterfalse_next, pred_mark);
    iter_type(vm, m, "starmap", starmap_new, starmap_next, pred_mark);
    iter_type(vm, m, "groupby", groupby_new, groupby_next, groupby_mark);
    grouper_type(vm);
    iter_type(vm, m, "islice", islice_new, islice_next, islice_mark);
    iter_type(vm, m, "pairwise", pairwise_new, pairwise_next, pairwise_mark);
    dict_set_cstr(vm, m->dict, "_tee", OBJ_VAL(tee_type(vm)));
    teelink_type(vm);
    module_add_function(vm, m, "tee", f_tee);
    iter_type(vm, m, "zip_longest", zip_longest_new, zip_longest_next, zip_longest_mark);
    static const struct {
        const char *name;
        NewFn new_;
        NextFn next;
    } combis[] = {
        {"product", product_new, product_next},
        {"permutations", permutations_new, permutations_next},
        {"combinations", combinations_new, combinations_next},
        {"combinations_with_replacement", cwr_new, cwr_next},
    };
    for (size_t i = 0; i < sizeof combis / sizeof combis[0]; i++) {
        t = iter_type(vm, m, combis[i].name, combis[i].new_, combis[i].next, combi_mark);
        t->finalize = combi_finalize;
    }
    vm_pop_roots(vm, 1);
    return m;
}

void itertools_register(VM *vm) { module_register_native(vm, "itertools", build_itertools); }
