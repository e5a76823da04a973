/*
** collections_deque.c — collections.deque: a ring buffer of Values whose
** capacity is a power of two, so that appends and pops at both ends are
** O(1) and indexing is one mask away. The module _collections holds the
** type; stdlib/collections.gpy imports it from there.
** Every mutation bumps `state`, so an iterator created before it raises
** CPython's "deque mutated during iteration".
*/
#include <string.h>

#include "class_internal.h" /* class_unbox: a deque subclass's instance holds its deque */
#include "container.h"
#include "stdlib_priv.h"

typedef struct Deque {
    Obj obj;
    Value *items;
    int64_t cap;    /* power of two, or 0 before the first item */
    int64_t head;   /* slot of element 0 */
    int64_t len;
    int64_t maxlen; /* -1: unbounded */
    uint64_t state; /* bumped by every mutation */
} Deque;

typedef struct DequeIter {
    Obj obj;
    Value deque; /* EMPTY once exhausted */
    int64_t index;
    uint64_t state;
    bool reverse;
} DequeIter;

/* The deque type object carries its iterator types (one set per VM). */
typedef struct DequeType {
    Type type;
    Type *iter, *rev_iter;
} DequeType;

#define DQ(v) ((Deque *)AS_OBJ(v))
#define AT(d, i) ((d)->items[((d)->head + (i)) & ((d)->cap - 1)])

static Value deque_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs);

/* Deques are never laid out as subclasses (those are boxed), so the
** builtin type's new_ slot identifies them. */
static bool is_deque(Value v) { return IS_OBJ(v) && AS_OBJ(v)->type->new_ == deque_new && !(AS_OBJ(v)->type->flags & TYPE_HEAP); }

static Deque *self_deque(VM *vm, const char *name, int argc, Value *argv) {
    Value self = argc >= 1 ? class_unbox(vm, argv[0]) : NONE_VAL;
    if (!is_deque(self))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a 'collections.deque' object", name);
    return DQ(self);
}

/* Room for one more item: doubles the buffer, unwrapping it to slot 0. */
static void deque_grow(VM *vm, Deque *d) {
    if (d->len < d->cap) return;
    int64_t ncap = d->cap ? d->cap * 2 : 8;
    Value *n = gc_malloc(vm, (size_t)ncap * sizeof(Value));
    for (int64_t i = 0; i < d->len; i++) n[i] = AT(d, i);
    if (d->items) gc_free(vm, d->items, (size_t)d->cap * sizeof(Value));
    d->items = n;
    d->cap = ncap;
    d->head = 0;
}

static Value pop_right(Deque *d) {
    Value v = AT(d, d->len - 1);
    d->len--;
    d->state++;
    return v;
}

static Value pop_left(Deque *d) {
    Value v = AT(d, 0);
    d->head = (d->head + 1) & (d->cap - 1);
    d->len--;
    d->state++;
    return v;
}

static void push_right(VM *vm, Deque *d, Value v) {
    if (d->maxlen == 0) return;
    if (d->maxlen > 0 && d->len == d->maxlen) pop_left(d);
    deque_grow(vm, d);
    AT(d, d->len) = v;
    d->len++;
    d->state++;
}

static void push_left(VM *vm, Deque *d, Value v) {
    if (d->maxlen == 0) return;
    if (d->maxlen > 0 && d->len == d->maxlen) pop_right(d);
    deque_grow(vm, d);
    d->head = (d->head - 1) & (d->cap - 1);
    d->items[d->head] = v;
    d->len++;
    d->state++;
}

static void deque_clear(Deque *d) {
    d->len = 0;
    d->head = 0;
    d->state++;
}

/* extend/extendleft: a snapshot first when extending by itself. */
static void deque_extend(VM *vm, Deque *d, Value iterable, bool left) {
    if (IS_OBJ(iterable) && AS_OBJ(iterable) == &d->obj) {
        List *l = list_new(vm, d->len);
        for (int64_t i = 0; i < d->len; i++) list_append(vm, l, AT(d, i));
        iterable = OBJ_VAL(l);
    }
    vm_push_root(vm, iterable);
    Value it = vm_iter(vm, iterable), v;
    vm_push_root(vm, it);
    while (vm_next(vm, it, &v)) {
        vm_push_root(vm, v); /* growing the buffer may collect */
        if (left) push_left(vm, d, v);
        else push_right(vm, d, v);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 2);
}

static int64_t norm_index(VM *vm, Deque *d, Value key) {
    if (!ctr_index_like(vm, key))
        vm_raise_kind(vm, TypeError, "sequence index must be integer, not '%s'", vm_type_name(vm, key));
    int64_t i = vm_to_index(vm, key);
    if (i < 0) i += d->len;
    if (i < 0 || i >= d->len) vm_raise_kind(vm, IndexError, "deque index out of range");
    return i;
}

/* Moves every item n steps to the right (negative: to the left). */
static void deque_rotate(Deque *d, int64_t n) {
    if (d->len <= 1) return;
    n %= d->len;
    if (n < 0) n += d->len;
    if (n == 0) return;
    d->state++;
    if (d->len == d->cap) { /* full buffer: moving head is the rotation */
        d->head = (d->head - n) & (d->cap - 1);
        return;
    }
    for (int64_t k = 0; k < n; k++) { /* right by n: move the last n to the front */
        Value v = AT(d, d->len - 1);
        d->head = (d->head - 1) & (d->cap - 1);
        d->items[d->head] = v;
    }
}

/* Removes item i, shifting the shorter side. */
static void deque_del_at(Deque *d, int64_t i) {
    if (i < d->len / 2) {
        for (int64_t k = i; k > 0; k--) AT(d, k) = AT(d, k - 1);
        d->head = (d->head + 1) & (d->cap - 1);
    } else {
        for (int64_t k = i; k < d->len - 1; k++) AT(d, k) = AT(d, k + 1);
    }
    d->len--;
    d->state++;
}

/* ---- the type's slots ---- */

/* deque(iterable=(), maxlen=None): (re)fills d. argv excludes self. */
static void deque_init(VM *vm, Deque *d, int argc, Value *argv, Dict *kwargs) {
    Value iterable = argc > 0 ? argv[0] : EMPTY_VAL, maxlen = argc > 1 ? argv[1] : EMPTY_VAL;
    if (argc > 2) vm_raise_kind(vm, TypeError, "deque() takes at most 2 arguments (%d given)", argc);
    Value k = kw_take(vm, kwargs, "iterable");
    if (!IS_EMPTY(k)) iterable = k;
    k = kw_take(vm, kwargs, "maxlen");
    if (!IS_EMPTY(k)) maxlen = k;
    kw_done(vm, "deque", kwargs);
    int64_t ml = -1;
    if (!IS_EMPTY(maxlen) && !IS_NONE(maxlen)) {
        if (!IS_INTLIKE(maxlen)) vm_raise_kind(vm, TypeError, "an integer is required");
        ml = AS_INTLIKE(maxlen);
        if (ml < 0) vm_raise_kind(vm, ValueError, "maxlen must be non-negative");
    }
    d->maxlen = ml;
    if (d->len > 0) deque_clear(d);
    if (!IS_EMPTY(iterable)) deque_extend(vm, d, iterable, false);
}

static Value deque_new(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    Deque *d = gc_alloc_obj(vm, cls, sizeof(Deque));
    d->maxlen = -1;
    vm_push_root(vm, OBJ_VAL(d));
    deque_init(vm, d, argc, argv, kwargs);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(d);
}

static Value m_init(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Deque *d = self_deque(vm, "__init__", argc, argv);
    deque_init(vm, d, argc - 1, argv + 1, kwargs);
    return NONE_VAL;
}

static void deque_mark(VM *vm, Obj *o) {
    Deque *d = (Deque *)o;
    for (int64_t i = 0; i < d->len; i++) gc_mark_value(vm, AT(d, i));
}

static void deque_finalize(VM *vm, Obj *o) {
    Deque *d = (Deque *)o;
    if (d->items) gc_free(vm, d->items, (size_t)d->cap * sizeof(Value));
    d->items = NULL;
}

static int64_t deque_len(VM *vm, Value self) {
    (void)vm;
    return DQ(self)->len;
}

static bool deque_contains(VM *vm, Value self, Value item) {
    Deque *d = DQ(self);
    uint64_t state = d->state;
    for (int64_t i = 0; i < d->len; i++) {
        if (ctr_eq(vm, AT(d, i), item)) return true;
        if (d->state != state) vm_raise_kind(vm, RuntimeError, "deque mutated during iteration");
    }
    return false;
}

static Value deque_getitem(VM *vm, Value self, Value key) {
    Deque *d = DQ(self);
    return AT(d, norm_index(vm, d, key));
}

static void deque_setitem(VM *vm, Value self, Value key, Value value) {
    Deque *d = DQ(self);
    int64_t i = norm_index(vm, d, key);
    if (IS_EMPTY(value)) deque_del_at(d, i);
    else AT(d, i) = value;
}

static List *deque_to_list(VM *vm, Deque *d) {
    List *l = list_new(vm, d->len);
    for (int64_t i = 0; i < d->len; i++) list_append(vm, l, AT(d, i));
    return l;
}

static void repr_body(VM *vm, Value self, StrBuf *sb) {
    Deque *d = DQ(self);
    sb_appends(sb, AS_OBJ(self)->type->name->chars);
    sb_appends(sb, "([");
    for (int64_t i = 0; i < d->len; i++) {
        if (i) sb_appends(sb, ", ");
        ctr_repr_value(vm, sb, AT(d, i));
    }
    sb_putc(sb, ']');
    if (d->maxlen >= 0) sb_printf(sb, ", maxlen=%lld", (long long)d->maxlen);
    sb_putc(sb, ')');
}

static Value deque_repr(VM *vm, Value self) {
    if (AS_OBJ(self)->flags & OBJ_FLAG_REPR_BUSY) return STR_VAL(str_cstr(vm, "[...]"));
    Deque *d = DQ(self);
    bool simple = true;
    for (int64_t i = 0; i < d->len && simple; i++) simple = ctr_simple(vm, AT(d, i));
    return ctr_repr(vm, self, repr_body, simple);
}

/* Lexicographic, as lists compare: both sides are copied to lists. */
static Value deque_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (!is_deque(a) || !is_deque(b)) return EMPTY_VAL;
    List *la = deque_to_list(vm, DQ(a));
    vm_push_root(vm, OBJ_VAL(la));
    List *lb = deque_to_list(vm, DQ(b));
    vm_push_root(vm, OBJ_VAL(lb));
    Value r = vm_compare(vm, op, OBJ_VAL(la), OBJ_VAL(lb));
    vm_pop_roots(vm, 2);
    return r;
}

static Deque *deque_copy_of(VM *vm, Deque *d) {
    Deque *c = gc_alloc_obj(vm, d->obj.type, sizeof(Deque));
    c->maxlen = d->maxlen;
    vm_push_root(vm, OBJ_VAL(c));
    for (int64_t i = 0; i < d->len; i++) push_right(vm, c, AT(d, i));
    vm_pop_roots(vm, 1);
    return c;
}

static void repeat_inplace(VM *vm, Deque *d, int64_t n) {
    if (n <= 0) {
        deque_clear(d);
        return;
    }
    int64_t len = d->len;
    for (int64_t r = 1; r < n; r++) {
        for (int64_t i = 0; i < len; i++) push_right(vm, d, AT(d, d->maxlen >= 0 && d->len == d->maxlen ? i - 1 : i));
        if (d->maxlen >= 0 && r * len > 2 * d->maxlen) break; /* the window holds only repeats now */
    }
}

static Value deque_binop(VM *vm, BinOp op, Value a, Value b) {
    if (op == BINOP_ADD) {
        if (!is_deque(a)) return EMPTY_VAL;
        if (!is_deque(b))
            vm_raise_kind(vm, TypeError, "can only concatenate deque (not \"%s\") to deque", vm_type_name(vm, b));
        Deque *c = deque_copy_of(vm, DQ(a));
        vm_push_root(vm, OBJ_VAL(c));
        deque_extend(vm, c, b, false);
        vm_pop_roots(vm, 1);
        return OBJ_VAL(c);
    }
    if (op == BINOP_MUL) {
        Value d = is_deque(a) ? a : b, n = is_deque(a) ? b : a;
        if (!ctr_index_like(vm, n)) return EMPTY_VAL;
        Deque *c = deque_copy_of(vm, DQ(d));
        vm_push_root(vm, OBJ_VAL(c));
        repeat_inplace(vm, c, vm_to_index(vm, n));
        vm_pop_roots(vm, 1);
        return OBJ_VAL(c);
    }
    return EMPTY_VAL;
}

static Value deque_inplace(VM *vm, BinOp op, Value a, Value b) {
    if (!is_deque(a)) return EMPTY_VAL;
    if (op == BINOP_ADD) {
        deque_extend(vm, DQ(a), b, false);
        return a;
    }
    if (op == BINOP_MUL && ctr_index_like(vm, b)) {
        repeat_inplace(vm, DQ(a), vm_to_index(vm, b));
        return a;
    }
    return EMPTY_VAL;
}

static bool deque_truthy(VM *vm, Value self) {
    (void)vm;
    return DQ(self)->len > 0;
}

/* ---- iterators ---- */

static Value iter_make(VM *vm, Value self, bool reverse) {
    Deque *d = DQ(self);
    DequeType *dt = (DequeType *)d->obj.type;
    DequeIter *it = gc_alloc_obj(vm, reverse ? dt->rev_iter : dt->iter, sizeof(DequeIter));
    it->deque = self;
    it->state = d->state;
    it->reverse = reverse;
    return OBJ_VAL(it);
}

static Value deque_iter(VM *vm, Value self) { return iter_make(vm, self, false); }

static bool iter_next(VM *vm, Value self, Value *out) {
    DequeIter *it = (DequeIter *)AS_OBJ(self);
    if (IS_EMPTY(it->deque)) return false;
    Deque *d = DQ(it->deque);
    if (d->state != it->state) {
        it->deque = EMPTY_VAL;
        vm_raise_kind(vm, RuntimeError, "deque mutated during iteration");
    }
    if (it->index >= d->len) {
        it->deque = EMPTY_VAL;
        return false;
    }
    *out = it->reverse ? AT(d, d->len - 1 - it->index) : AT(d, it->index);
    it->index++;
    return true;
}

static void iter_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((DequeIter *)o)->deque); }

static Value m_iter_self(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)vm;
    (void)argc;
    (void)kwargs;
    return argv[0];
}

static Value m_iter_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)kwargs;
    Value out;
    if (iter_next(vm, argv[0], &out)) return out;
    vm_throw(vm, OBJ_VAL(vm->exc[EXC_StopIteration]));
}

static Value m_iter_length_hint(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)vm;
    (void)argc;
    (void)kwargs;
    DequeIter *it = (DequeIter *)AS_OBJ(argv[0]);
    if (IS_EMPTY(it->deque)) return INT_VAL(0);
    int64_t n = DQ(it->deque)->len - it->index;
    return INT_VAL(n > 0 ? n : 0);
}

/* ---- methods ---- */

#define METHOD(name) static Value m_##name(VM *vm, int argc, Value *argv, Dict *kwargs)
/* The argument checks of CPython's deque methods, by calling convention. */
static Deque *args_o(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs) {
    Deque *d = self_deque(vm, name, argc, argv);
    if (kwargs && kwargs->count) vm_raise_kind(vm, TypeError, "deque.%s() takes no keyword arguments", name);
    if (argc != 2) vm_raise_kind(vm, TypeError, "deque.%s() takes exactly one argument (%d given)", name, argc - 1);
    return d;
}

static Deque *args_none(VM *vm, const char *name, int argc, Value *argv, Dict *kwargs) {
    Deque *d = self_deque(vm, name, argc, argv);
    if (kwargs && kwargs->count) vm_raise_kind(vm, TypeError, "deque.%s() takes no keyword arguments", name);
    if (argc != 1) vm_raise_kind(vm, TypeError, "deque.%s() takes no arguments (%d given)", name, argc - 1);
    return d;
}

#define ARGS_O(pyname) Deque *d = args_o(vm, pyname, argc, argv, kwargs)
#define ARGS_NONE(pyname) Deque *d = args_none(vm, pyname, argc, argv, kwargs)

METHOD(append) {
    ARGS_O("append");
    push_right(vm, d, argv[1]);
    return NONE_VAL;
}

METHOD(appendleft) {
    ARGS_O("appendleft");
    push_left(vm, d, argv[1]);
    return NONE_VAL;
}

METHOD(pop) {
    ARGS_NONE("pop");
    if (d->len == 0) vm_raise_kind(vm, IndexError, "pop from an empty deque");
    return pop_right(d);
}

METHOD(popleft) {
    ARGS_NONE("popleft");
    if (d->len == 0) vm_raise_kind(vm, IndexError, "pop from an empty deque");
    return pop_left(d);
}

METHOD(extend) {
    ARGS_O("extend");
    deque_extend(vm, d, argv[1], false);
    return NONE_VAL;
}

METHOD(extendleft) {
    ARGS_O("extendleft");
    deque_extend(vm, d, argv[1], true);
    return NONE_VAL;
}

METHOD(clear) {
    ARGS_NONE("clear");
    deque_clear(d);
    return NONE_VAL;
}

METHOD(copy) {
    ARGS_NONE("copy");
    return OBJ_VAL(deque_copy_of(vm, d));
}

METHOD(count) {
    ARGS_O("count");
    uint64_t state = d->state;
    int64_t n = 0;
    for (int64_t i = 0; i < d->len; i++) {
        if (ctr_eq(vm, AT(d, i), argv[1])) n++;
        if (d->state != state) vm_raise_kind(vm, RuntimeError, "deque mutated during iteration");
    }
    return INT_VAL(n);
}

static int64_t clamp_bound(VM *vm, Value v, int64_t len) {
    int64_t i = vm_to_index(vm, v);
    if (i < 0) {
        i += len;
        if (i < 0) i = 0;
    }
    return i > len ? len : i;
}

METHOD(index) {
    Deque *d = self_deque(vm, "index", argc, argv);
    kw_none(vm, "index", kwargs);
    if (argc < 2) vm_raise_kind(vm, TypeError, "index() takes at least 1 argument (%d given)", argc - 1);
    if (argc > 4) vm_raise_kind(vm, TypeError, "index() takes at most 3 arguments (%d given)", argc - 1);
    int64_t start = argc > 2 ? clamp_bound(vm, argv[2], d->len) : 0;
    int64_t stop = argc > 3 ? clamp_bound(vm, argv[3], d->len) : d->len;
    uint64_t state = d->state;
    for (int64_t i = start; i < stop && i < d->len; i++) {
        if (ctr_eq(vm, AT(d, i), argv[1])) return INT_VAL(i);
        if (d->state != state) vm_raise_kind(vm, RuntimeError, "deque mutated during iteration");
    }
    Str *r = vm_repr(vm, argv[1]);
    vm_raise_kind(vm, ValueError, "%s is not in deque", r->chars);
}

METHOD(insert) {
    Deque *d = self_deque(vm, "insert", argc, argv);
    kw_none(vm, "insert", kwargs);
    if (argc != 3) vm_raise_kind(vm, TypeError, "insert() takes exactly 2 arguments (%d given)", argc - 1);
    int64_t i = vm_to_index(vm, argv[1]);
    if (d->maxlen >= 0 && d->len >= d->maxlen) vm_raise_kind(vm, IndexError, "deque already at its maximum size");
    if (i < 0) {
        i += d->len;
        if (i < 0) i = 0;
    }
    if (i > d->len) i = d->len;
    push_right(vm, d, argv[2]);
    for (int64_t k = d->len - 1; k > i; k--) AT(d, k) = AT(d, k - 1);
    AT(d, i) = argv[2];
    return NONE_VAL;
}

METHOD(remove) {
    ARGS_O("remove");
    uint64_t state = d->state;
    for (int64_t i = 0; i < d->len; i++) {
        bool eq = ctr_eq(vm, AT(d, i), argv[1]);
        if (d->state != state) vm_raise_kind(vm, IndexError, "deque mutated during remove().");
        if (eq) {
            deque_del_at(d, i);
            return NONE_VAL;
        }
    }
    Str *r = vm_repr(vm, argv[1]);
    vm_raise_kind(vm, ValueError, "%s is not in deque", r->chars);
}

METHOD(reverse) {
    ARGS_NONE("reverse");
    for (int64_t i = 0, j = d->len - 1; i < j; i++, j--) {
        Value t = AT(d, i);
        AT(d, i) = AT(d, j);
        AT(d, j) = t;
    }
    d->state++;
    return NONE_VAL;
}

METHOD(rotate) {
    Deque *d = self_deque(vm, "rotate", argc, argv);
    kw_none(vm, "deque.rotate", kwargs);
    if (argc > 2) vm_raise_kind(vm, TypeError, "deque.rotate expected at most 1 argument, got %d", argc - 1);
    int64_t n = argc > 1 ? vm_to_index(vm, argv[1]) : 1;
    deque_rotate(d, n);
    return NONE_VAL;
}

METHOD(reversed) {
    ARGS_NONE("__reversed__");
    return iter_make(vm, OBJ_VAL(d), true);
}

METHOD(maxlen) {
    ARGS_NONE("maxlen");
    return d->maxlen >= 0 ? INT_VAL(d->maxlen) : NONE_VAL;
}

static Type *make_iter_type(VM *vm, const char *name) {
    Type *t = type_new_builtin(vm, name, vm->t_object, 0);
    t->iter = ctr_iter_self;
    t->next = iter_next;
    t->mark = iter_mark;
    type_add_method(vm, t, "__iter__", m_iter_self);
    type_add_method(vm, t, "__next__", m_iter_next);
    type_add_method(vm, t, "__length_hint__", m_iter_length_hint);
    return t;
}

static Type *deque_type(VM *vm) {
    Type *t = STDLIB_FIND_TYPE(vm, new_, deque_new);
    if (t) return t;
    t = type_new_builtin_sized(vm, "deque", vm->t_object, 0, sizeof(DequeType));
    t->new_ = deque_new;
    t->repr = deque_repr;
    t->hash = ctr_unhashable;
    t->compare = deque_compare;
    t->binop = deque_binop;
    t->inplace = deque_inplace;
    t->truthy = deque_truthy;
    t->iter = deque_iter;
    t->getitem = deque_getitem;
    t->setitem = deque_setitem;
    t->len = deque_len;
    t->contains = deque_contains;
    t->mark = deque_mark;
    t->finalize = deque_finalize;
    static const struct {
        const char *name;
        NativeFn fn;
    } methods[] = {
        {"__init__", m_init},       {"append", m_append},   {"appendleft", m_appendleft},
        {"pop", m_pop},             {"popleft", m_popleft}, {"extend", m_extend},
        {"extendleft", m_extendleft}, {"clear", m_clear},   {"copy", m_copy},
        {"__copy__", m_copy},       {"count", m_count},     {"index", m_index},
        {"insert", m_insert},       {"remove", m_remove},   {"reverse", m_reverse},
        {"rotate", m_rotate},       {"__reversed__", m_reversed},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) type_add_method(vm, t, methods[i].name, methods[i].fn);
    /* maxlen: a read-only property */
    Value getter = native_new(vm, "maxlen", m_maxlen, NONE_VAL);
    vm_push_root(vm, getter);
    Value prop = vm_call(vm, OBJ_VAL(vm->t_property), 1, &getter);
    dict_set_cstr(vm, t->dict, "maxlen", prop);
    vm_pop_roots(vm, 1);
    ((DequeType *)t)->iter = make_iter_type(vm, "_deque_iterator");
    ((DequeType *)t)->rev_iter = make_iter_type(vm, "_deque_reverse_iterator");
    class_allow_subclass(vm, t, false);
    return t;
}

static Module *build_collections_c(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "_collections"));
    vm_push_root(vm, OBJ_VAL(m));
    dict_set_cstr(vm, m->dict, "deque", OBJ_VAL(deque_type(vm)));
    collections_count_add(vm, m);
    vm_pop_roots(vm, 1);
    return m;
}

void collections_deque_register(VM *vm) { module_register_native(vm, "_collections", build_collections_c); }
