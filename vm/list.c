/*
** list.c — the list type and its iterator, plus the helpers every
** container shares (container.h): argument checks, element repr, the
** recursion-safe repr driver.
*/
#include <string.h>

#include "container.h"
#include "gen_batch.h"

#define MAX_ITEMS ((int64_t)1 << 56) /* beyond this, a size is a MemoryError */

/* ================================================== shared container helpers */

void ctr_check_args(VM *vm, const char *name, int n, int min, int max) {
    if (n >= min && (max < 0 || n <= max)) return;
    if (min == max)
        vm_raise_kind(vm, TypeError, "%s expected %d argument%s, got %d", name, min, min == 1 ? "" : "s", n);
    if (n < min)
        vm_raise_kind(vm, TypeError, "%s expected at least %d argument%s, got %d", name, min, min == 1 ? "" : "s", n);
    vm_raise_kind(vm, TypeError, "%s expected at most %d argument%s, got %d", name, max, max == 1 ? "" : "s", n);
}

/* Decimal digits of v, without printf. */
static void put_int(StrBuf *sb, int64_t v) {
    char buf[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        buf[sizeof buf - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) buf[sizeof buf - 1 - n++] = '-';
    sb_append(sb, buf + sizeof buf - n, n);
}

void ctr_repr_value(VM *vm, StrBuf *sb, Value v) {
    switch (v.tag) {
    case VAL_INT: put_int(sb, v.as.i); return;
    case VAL_BOOL: sb_appends(sb, v.as.b ? "True" : "False"); return;
    case VAL_NONE: sb_appends(sb, "None"); return;
    case VAL_FLOAT: {
        char buf[64];
        int n = float_repr(v.as.f, buf, sizeof buf);
        sb_append(sb, buf, (size_t)n);
        return;
    }
    default: sb_append_str(sb, vm_repr(vm, v)); return;
    }
}

typedef struct ReprCall {
    Value self;
    CtrReprBody body;
    StrBuf *sb;
} ReprCall;

static void repr_protected(VM *vm, void *ud) {
    ReprCall *c = ud;
    c->body(vm, c->self, c->sb);
}

Value ctr_repr(VM *vm, Value self, CtrReprBody body, bool simple) {
    StrBuf sb;
    sb_init(&sb);
    if (simple) {
        body(vm, self, &sb);
        return STR_VAL(sb_finish(vm, &sb));
    }
    Obj *o = AS_OBJ(self);
    o->flags |= OBJ_FLAG_REPR_BUSY;
    ReprCall c = {self, body, &sb};
    bool ok = vm_pcall(vm, repr_protected, &c);
    o->flags &= (uint8_t)~OBJ_FLAG_REPR_BUSY;
    if (!ok) {
        sb_free(&sb);
        vm_rethrow(vm, vm->exc_value);
    }
    return STR_VAL(sb_finish(vm, &sb));
}

int64_t ctr_unhashable(VM *vm, Value self) {
    vm_raise_kind(vm, TypeError, "unhashable type: '%s'", vm_type_name(vm, self));
}

/* ============================================================ list basics */

/* Item arrays are gc_alloc_block buffers: those of up to 32 items come
** from the collector's free lists, as CPython's small lists come from
** pymalloc; a malloc and a free per short list dominated slicing. Every
** free gives the exact capacity (l->cap), as gc_free_block requires. */
static List *list_alloc(VM *vm, Type *t, int64_t cap) {
    List *l = gc_alloc_obj(vm, t, sizeof(List));
    if (cap > 0) {
        if (cap > MAX_ITEMS) vm_throw(vm, vm->memory_error);
        l->items = gc_alloc_block(vm, (size_t)cap * sizeof(Value));
        l->cap = cap;
    }
    return l;
}

List *list_new(VM *vm, int64_t cap) { return list_alloc(vm, vm->t_list, cap); }

/* Makes room for at least need items (amortized growth). */
static void list_reserve(VM *vm, List *l, int64_t need) {
    if (need <= l->cap) return;
    if (need > MAX_ITEMS) vm_throw(vm, vm->memory_error);
    int64_t cap = l->cap < 4 ? 4 : l->cap + (l->cap >> 1);
    if (cap < need) cap = need;
    l->items = gc_realloc_block(vm, l->items, (size_t)l->cap * sizeof(Value), (size_t)cap * sizeof(Value));
    l->cap = cap;
}

void list_append(VM *vm, List *l, Value v) {
    if (l->len == l->cap) list_reserve(vm, l, l->len + 1);
    l->items[l->len++] = v;
}

/* Appends n items copied from src (which may alias l's own items). */
static void list_append_array(VM *vm, List *l, const Value *src, int64_t n) {
    if (n <= 0) return;
    if (src >= l->items && src < l->items + l->len) { /* self-extend: the buffer may move */
        int64_t off = src - l->items;
        list_reserve(vm, l, l->len + n);
        src = l->items + off;
    } else {
        list_reserve(vm, l, l->len + n);
    }
    memmove(l->items + l->len, src, (size_t)n * sizeof(Value));
    l->len += n;
}

/* fresh: l is not yet visible to any code (list(), a display's *it), so a
** generator cannot watch it grow and may run ahead in batches. */
static void extend(VM *vm, List *l, Value it, bool fresh) {
    if (ctr_is(it, vm->t_list)) {
        List *o = AS_LIST(it);
        list_append_array(vm, l, o->items, o->len);
        return;
    }
    if (ctr_is(it, vm->t_tuple)) {
        Tuple *t = AS_TUPLE(it);
        list_append_array(vm, l, t->items, t->len);
        return;
    }
    /* a range knows its length: reserve it up front, so an impossible size
    ** is a MemoryError at once instead of a very long loop */
    if (ctr_is(it, vm->t_range)) list_reserve(vm, l, l->len + range_len((Range *)AS_OBJ(it)));
    Value iter = vm_iter(vm, it);
    vm_push_root(vm, iter);
    Value x;
    if (fresh && gen_batchable(vm, iter)) {
        GenIter gi;
        gen_iter_init(vm, &gi, iter);
        gi.batch.accept = GEN_TAKE_ANY; /* an append runs no code */
        while (gen_iter_next(vm, &gi, &x)) list_append(vm, l, x);
    } else {
        while (vm_next(vm, iter, &x)) list_append(vm, l, x);
    }
    vm_pop_roots(vm, 1);
}

void list_extend(VM *vm, List *l, Value it) { extend(vm, l, it, false); }

void list_extend_fresh(VM *vm, List *l, Value it) { extend(vm, l, it, true); }

List *list_from_iterable(VM *vm, Value it) {
    List *l = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(l));
    list_extend_fresh(vm, l, it);
    vm_pop_roots(vm, 1);
    return l;
}

/* Is v usable as a repeat count / index: int, bool, or a class with __index__. */
bool ctr_index_like(VM *vm, Value v) {
    if (IS_INTLIKE(v)) return true;
    if (!IS_OBJ(v) || !(AS_OBJ(v)->type->flags & TYPE_HEAP)) return false;
    return !IS_EMPTY(type_lookup(vm, AS_OBJ(v)->type, str_cstr(vm, "__index__")));
}

/* A key of list/tuple subscripts that is not a slice: its integer value. */
int64_t ctr_index_key(VM *vm, Value key, const char *tname) {
    if (IS_INTLIKE(key)) return AS_INTLIKE(key);
    if (IS_OBJ(key) && (AS_OBJ(key)->type->flags & TYPE_HEAP)) return vm_to_index(vm, key);
    if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_int) /* a big int */
        vm_raise_kind(vm, IndexError, "cannot fit 'int' into an index-sized integer");
    vm_raise_kind(vm, TypeError, "%s indices must be integers or slices, not %s", tname, vm_type_name(vm, key));
}

/* ================================================================== slots */

static Value list_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list", kwargs);
    ctr_check_args(vm, "list", argc, 0, 1);
    List *l = list_alloc(vm, cls, 0);
    if (argc == 1) {
        vm_push_root(vm, OBJ_VAL(l));
        list_extend_fresh(vm, l, argv[0]);
        vm_pop_roots(vm, 1);
    }
    return OBJ_VAL(l);
}

static void list_repr_body(VM *vm, Value self, StrBuf *sb) {
    List *l = AS_LIST(self);
    sb_putc(sb, '[');
    for (int64_t i = 0; i < l->len; i++) {
        if (i) sb_appends(sb, ", ");
        ctr_repr_value(vm, sb, l->items[i]);
    }
    sb_putc(sb, ']');
}

static Value list_repr(VM *vm, Value self) {
    List *l = AS_LIST(self);
    if (l->len == 0) return STR_VAL(str_cstr(vm, "[]"));
    if (AS_OBJ(self)->flags & OBJ_FLAG_REPR_BUSY) return STR_VAL(str_cstr(vm, "[...]"));
    bool simple = true;
    for (int64_t i = 0; i < l->len && simple; i++) simple = ctr_simple(vm, l->items[i]);
    return ctr_repr(vm, self, list_repr_body, simple);
}

/* Lexicographic comparison of two item arrays that may change under user
** code (re-read through the owners each step). */
typedef struct SeqRef {
    Value owner;
    bool is_list;
} SeqRef;

static int64_t ref_len(SeqRef r) { return r.is_list ? AS_LIST(r.owner)->len : AS_TUPLE(r.owner)->len; }
static Value ref_at(SeqRef r, int64_t i) { return r.is_list ? AS_LIST(r.owner)->items[i] : AS_TUPLE(r.owner)->items[i]; }

static Value seq_compare(VM *vm, CmpOp op, SeqRef a, SeqRef b) {
    if ((op == CMP_EQ || op == CMP_NE) && ref_len(a) != ref_len(b)) return BOOL_VAL(op == CMP_NE);
    int64_t i = 0;
    for (; i < ref_len(a) && i < ref_len(b); i++) {
        if (!ctr_eq(vm, ref_at(a, i), ref_at(b, i))) break;
    }
    int64_t la = ref_len(a), lb = ref_len(b);
    if (i >= la || i >= lb) {
        int c = la < lb ? -1 : la > lb ? 1 : 0;
        switch (op) {
        case CMP_EQ: return BOOL_VAL(c == 0);
        case CMP_NE: return BOOL_VAL(c != 0);
        case CMP_LT: return BOOL_VAL(c < 0);
        case CMP_LE: return BOOL_VAL(c <= 0);
        case CMP_GT: return BOOL_VAL(c > 0);
        case CMP_GE: return BOOL_VAL(c >= 0);
        default: return EMPTY_VAL;
        }
    }
    if (op == CMP_EQ) return BOOL_VAL(false);
    if (op == CMP_NE) return BOOL_VAL(true);
    return vm_compare(vm, op, ref_at(a, i), ref_at(b, i));
}

Value ctr_seq_compare(VM *vm, CmpOp op, Value a, Value b, bool is_list) {
    return seq_compare(vm, op, (SeqRef){a, is_list}, (SeqRef){b, is_list});
}

static Value list_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (!ctr_is(a, vm->t_list) || !ctr_is(b, vm->t_list) || op > CMP_GE) return EMPTY_VAL;
    return seq_compare(vm, op, (SeqRef){a, true}, (SeqRef){b, true});
}

/* l * n as a new list of type t. */
static List *list_repeat(VM *vm, List *l, int64_t n) {
    if (n <= 0 || l->len == 0) return list_new(vm, 0);
    if (n > MAX_ITEMS / l->len) vm_throw(vm, vm->memory_error);
    int64_t len = l->len;
    List *r = list_new(vm, len * n);
    if (len == 1) {
        for (int64_t i = 0; i < n; i++) r->items[i] = l->items[0];
    } else {
        for (int64_t i = 0; i < n; i++) memcpy(r->items + i * len, l->items, (size_t)len * sizeof(Value));
    }
    r->len = len * n;
    return r;
}

static Value list_binop(VM *vm, BinOp op, Value a, Value b) {
    bool al = ctr_is(a, vm->t_list), bl = ctr_is(b, vm->t_list);
    if (op == BINOP_ADD && al && bl) {
        List *x = AS_LIST(a), *y = AS_LIST(b);
        if (x->len + y->len > MAX_ITEMS) vm_throw(vm, vm->memory_error);
        List *r = list_new(vm, x->len + y->len);
        if (x->len) memcpy(r->items, x->items, (size_t)x->len * sizeof(Value));
        if (y->len) memcpy(r->items + x->len, y->items, (size_t)y->len * sizeof(Value));
        r->len = x->len + y->len;
        return OBJ_VAL(r);
    }
    if (op == BINOP_MUL) {
        if (al && ctr_index_like(vm, b)) return OBJ_VAL(list_repeat(vm, AS_LIST(a), vm_to_index(vm, b)));
        if (bl && ctr_index_like(vm, a)) return OBJ_VAL(list_repeat(vm, AS_LIST(b), vm_to_index(vm, a)));
    }
    return EMPTY_VAL;
}

static Value list_inplace(VM *vm, BinOp op, Value a, Value b) {
    if (!ctr_is(a, vm->t_list)) return EMPTY_VAL;
    List *l = AS_LIST(a);
    if (op == BINOP_ADD) {
        list_extend(vm, l, b);
        return a;
    }
    if (op == BINOP_MUL && ctr_index_like(vm, b)) {
        int64_t n = vm_to_index(vm, b);
        if (n <= 0 || l->len == 0) {
            gc_free_block(vm, l->items, (size_t)l->cap * sizeof(Value));
            l->items = NULL;
            l->len = l->cap = 0;
            return a;
        }
        int64_t len = l->len;
        if (n > MAX_ITEMS / len) vm_throw(vm, vm->memory_error);
        list_reserve(vm, l, len * n);
        for (int64_t i = 1; i < n; i++) memcpy(l->items + i * len, l->items, (size_t)len * sizeof(Value));
        l->len = len * n;
        return a;
    }
    return EMPTY_VAL;
}

static Value list_slice(VM *vm, List *l, Slice *s) {
    int64_t start, stop, step;
    int64_t n = slice_indices(vm, s, l->len, &start, &stop, &step);
    List *r = list_new(vm, n);
    if (step == 1) {
        if (n > 0) memcpy(r->items, l->items + start, (size_t)n * sizeof(Value));
    } else {
        for (int64_t i = 0, j = start; i < n; i++, j += step) r->items[i] = l->items[j];
    }
    r->len = n;
    return OBJ_VAL(r);
}

static Value list_getitem(VM *vm, Value self, Value key) {
    List *l = AS_LIST(self);
    if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice) return list_slice(vm, l, (Slice *)AS_OBJ(key));
    int64_t i = ctr_index_key(vm, key, "list");
    if (i < 0) i += l->len;
    if (i < 0 || i >= l->len) vm_raise_kind(vm, IndexError, "list index out of range");
    return l->items[i];
}

/* Removes the count items start, start+step, ... (step may be negative). */
static void list_delete_slice(VM *vm, List *l, int64_t start, int64_t step, int64_t count) {
    (void)vm;
    if (count <= 0) return;
    if (step < 0) { /* same items, walked upward */
        start = start + step * (count - 1);
        step = -step;
    }
    if (step == 1) {
        memmove(l->items + start, l->items + start + count, (size_t)(l->len - start - count) * sizeof(Value));
    } else {
        int64_t w = start, next_del = start, deleted = 0;
        for (int64_t r = start; r < l->len; r++) {
            if (r == next_del && deleted < count) {
                deleted++;
                next_del += step;
                continue;
            }
            l->items[w++] = l->items[r];
        }
    }
    l->len -= count;
}

/* l[start:stop] = items (plain slice: the list may grow or shrink). */
static void list_replace_range(VM *vm, List *l, int64_t lo, int64_t hi, const Value *items, int64_t n) {
    if (hi < lo) hi = lo;
    int64_t old = hi - lo;
    int64_t newlen = l->len - old + n;
    if (n > old) list_reserve(vm, l, newlen);
    memmove(l->items + lo + n, l->items + hi, (size_t)(l->len - hi) * sizeof(Value));
    if (n > 0) memcpy(l->items + lo, items, (size_t)n * sizeof(Value));
    l->len = newlen;
}

static void list_set_slice(VM *vm, List *l, Slice *s, Value value) {
    int64_t start, stop, step;
    int64_t count = slice_indices(vm, s, l->len, &start, &stop, &step);
    if (IS_EMPTY(value)) {
        list_delete_slice(vm, l, start, step, count);
        return;
    }
    /* the new items, as a private copy (value may be l itself) */
    Type *vt = vm_typeof(vm, value);
    if (!vt->iter && !(vt->getitem && IS_OBJ(value))) {
        if (step == 1) vm_raise_kind(vm, TypeError, "can only assign an iterable");
        vm_raise_kind(vm, TypeError, "must assign iterable to extended slice");
    }
    List *src;
    src = list_from_iterable(vm, value);
    /* user code in the iteration may have changed l: resolve again */
    count = slice_indices(vm, s, l->len, &start, &stop, &step);
    if (step == 1) {
        list_replace_range(vm, l, start, stop, src->items, src->len);
        return;
    }
    if (src->len != count)
        vm_raise_kind(vm, ValueError, "attempt to assign sequence of size %lld to extended slice of size %lld",
                      (long long)src->len, (long long)count);
    for (int64_t i = 0, j = start; i < count; i++, j += step) l->items[j] = src->items[i];
}

static void list_setitem(VM *vm, Value self, Value key, Value value) {
    List *l = AS_LIST(self);
    if (IS_OBJ(key) && AS_OBJ(key)->type == vm->t_slice) {
        list_set_slice(vm, l, (Slice *)AS_OBJ(key), value);
        return;
    }
    int64_t i = ctr_index_key(vm, key, "list");
    if (i < 0) i += l->len;
    if (i < 0 || i >= l->len) vm_raise_kind(vm, IndexError, "list assignment index out of range");
    if (IS_EMPTY(value)) {
        memmove(l->items + i, l->items + i + 1, (size_t)(l->len - i - 1) * sizeof(Value));
        l->len--;
    } else {
        l->items[i] = value;
    }
}

static int64_t list_len(VM *vm, Value self) {
    (void)vm;
    return AS_LIST(self)->len;
}

static bool list_contains(VM *vm, Value self, Value item) {
    List *l = AS_LIST(self);
    for (int64_t i = 0; i < l->len; i++)
        if (ctr_eq(vm, l->items[i], item)) return true;
    return false;
}

static bool list_truthy(VM *vm, Value self) {
    (void)vm;
    return AS_LIST(self)->len > 0;
}

static void list_mark(VM *vm, Obj *o) {
    List *l = (List *)o;
    for (int64_t i = 0; i < l->len; i++) gc_mark_value(vm, l->items[i]);
}

static void list_finalize(VM *vm, Obj *o) {
    List *l = (List *)o;
    gc_free_block(vm, l->items, (size_t)l->cap * sizeof(Value));
    l->items = NULL;
    l->len = l->cap = 0;
}

/* ============================================================== iterator */

static Value list_iter(VM *vm, Value self) {
    SeqIter *it = gc_alloc_obj(vm, vm->t_list_iter, sizeof(SeqIter));
    it->seq = self;
    it->index = 0;
    return OBJ_VAL(it);
}

Value ctr_iter_self(VM *vm, Value self) {
    (void)vm;
    return self;
}

static bool list_iter_next(VM *vm, Value self, Value *out) {
    (void)vm;
    SeqIter *it = (SeqIter *)AS_OBJ(self);
    if (!IS_OBJ(it->seq)) return false;
    List *l = AS_LIST(it->seq);
    if (it->index < l->len) {
        *out = l->items[it->index++];
        return true;
    }
    it->seq = NONE_VAL; /* exhausted for good, like CPython */
    return false;
}

void ctr_seqiter_mark(VM *vm, Obj *o) { gc_mark_value(vm, ((SeqIter *)o)->seq); }

/* ================================================================ methods */

static Value m_append(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.append", kwargs);
    arg_count(vm, "list.append", argc - 1, 1, 1);
    list_append(vm, AS_LIST(argv[0]), argv[1]);
    return NONE_VAL;
}

static Value m_extend(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.extend", kwargs);
    arg_count(vm, "list.extend", argc - 1, 1, 1);
    list_extend(vm, AS_LIST(argv[0]), argv[1]);
    return NONE_VAL;
}

static Value m_insert(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.insert", kwargs);
    ctr_check_args(vm, "insert", argc - 1, 2, 2);
    List *l = AS_LIST(argv[0]);
    Value v = argv[2];
    int64_t i = vm_to_index(vm, argv[1]);
    if (i < 0) {
        i += l->len;
        if (i < 0) i = 0;
    }
    if (i > l->len) i = l->len;
    list_reserve(vm, l, l->len + 1);
    memmove(l->items + i + 1, l->items + i, (size_t)(l->len - i) * sizeof(Value));
    l->items[i] = v;
    l->len++;
    return NONE_VAL;
}

static Value m_pop(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.pop", kwargs);
    ctr_check_args(vm, "pop", argc - 1, 0, 1);
    List *l = AS_LIST(argv[0]);
    int64_t i = argc > 1 ? vm_to_index(vm, argv[1]) : -1;
    if (l->len == 0) vm_raise_kind(vm, IndexError, "pop from empty list");
    if (i < 0) i += l->len;
    if (i < 0 || i >= l->len) vm_raise_kind(vm, IndexError, "pop index out of range");
    Value v = l->items[i];
    memmove(l->items + i, l->items + i + 1, (size_t)(l->len - i - 1) * sizeof(Value));
    l->len--;
    return v;
}

static Value m_remove(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.remove", kwargs);
    arg_count(vm, "list.remove", argc - 1, 1, 1);
    List *l = AS_LIST(argv[0]);
    for (int64_t i = 0; i < l->len; i++) {
        if (ctr_eq(vm, l->items[i], argv[1])) {
            if (i < l->len) {
                memmove(l->items + i, l->items + i + 1, (size_t)(l->len - i - 1) * sizeof(Value));
                l->len--;
            }
            return NONE_VAL;
        }
    }
    vm_raise_kind(vm, ValueError, "list.remove(x): x not in list");
}

/* start/stop arguments of index(): clamped like slice bounds. */
static int64_t clamp_bound(VM *vm, Value v, int64_t len, int64_t dflt) {
    if (IS_EMPTY(v) || IS_NONE(v)) return dflt;
    int64_t i = vm_to_index(vm, v);
    if (i < 0) {
        i += len;
        if (i < 0) i = 0;
    }
    return i;
}

static Value m_index(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.index", kwargs);
    ctr_check_args(vm, "index", argc - 1, 1, 3);
    List *l = AS_LIST(argv[0]);
    Value x = argv[1];
    int64_t start = clamp_bound(vm, argc > 2 ? argv[2] : EMPTY_VAL, l->len, 0);
    int64_t stop = clamp_bound(vm, argc > 3 ? argv[3] : EMPTY_VAL, l->len, INT64_MAX);
    for (int64_t i = start; i < stop && i < l->len; i++)
        if (ctr_eq(vm, l->items[i], x)) return INT_VAL(i);
    Str *r = vm_repr(vm, x);
    vm_raise_kind(vm, ValueError, "%s is not in list", r->chars);
}

static Value m_count(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.count", kwargs);
    arg_count(vm, "list.count", argc - 1, 1, 1);
    List *l = AS_LIST(argv[0]);
    int64_t n = 0;
    for (int64_t i = 0; i < l->len; i++)
        if (ctr_eq(vm, l->items[i], argv[1])) n++;
    return INT_VAL(n);
}

static Value m_clear(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.clear", kwargs);
    arg_count(vm, "list.clear", argc - 1, 0, 0);
    List *l = AS_LIST(argv[0]);
    gc_free_block(vm, l->items, (size_t)l->cap * sizeof(Value));
    l->items = NULL;
    l->len = l->cap = 0;
    return NONE_VAL;
}

static Value m_copy(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.copy", kwargs);
    arg_count(vm, "list.copy", argc - 1, 0, 0);
    List *l = AS_LIST(argv[0]);
    List *r = list_new(vm, l->len);
    if (l->len) memcpy(r->items, l->items, (size_t)l->len * sizeof(Value));
    r->len = l->len;
    return OBJ_VAL(r);
}

static Value m_reverse(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "list.reverse", kwargs);
    arg_count(vm, "list.reverse", argc - 1, 0, 0);
    List *l = AS_LIST(argv[0]);
    for (int64_t i = 0, j = l->len - 1; i < j; i++, j--) {
        Value t = l->items[i];
        l->items[i] = l->items[j];
        l->items[j] = t;
    }
    return NONE_VAL;
}

static Value m_sort(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (argc > 1) vm_raise_kind(vm, TypeError, "sort() takes no positional arguments");
    Value key = kwarg_take(vm, kwargs, "key");
    Value rev = kwarg_take(vm, kwargs, "reverse");
    kwargs_check_empty(vm, "sort", kwargs);
    if (IS_EMPTY(key)) key = NONE_VAL;
    bool reverse = !IS_EMPTY(rev) && vm_to_index(vm, rev) != 0;
    list_sort(vm, AS_LIST(argv[0]), key, reverse);
    return NONE_VAL;
}

/* ================================================================== init */

void list_init(VM *vm) {
    Type *t = vm->t_list;
    t->new_ = list_new_slot;
    t->repr = list_repr;
    t->hash = ctr_unhashable;
    t->compare = list_compare;
    t->binop = list_binop;
    t->inplace = list_inplace;
    t->getitem = list_getitem;
    t->setitem = list_setitem;
    t->len = list_len;
    t->contains = list_contains;
    t->iter = list_iter;
    t->truthy = list_truthy;
    t->mark = list_mark;
    t->finalize = list_finalize;

    type_add_method(vm, t, "append", m_append);
    type_add_method(vm, t, "extend", m_extend);
    type_add_method(vm, t, "insert", m_insert);
    type_add_method(vm, t, "pop", m_pop);
    type_add_method(vm, t, "remove", m_remove);
    type_add_method(vm, t, "index", m_index);
    type_add_method(vm, t, "count", m_count);
    type_add_method(vm, t, "clear", m_clear);
    type_add_method(vm, t, "copy", m_copy);
    type_add_method(vm, t, "reverse", m_reverse);
    type_add_method(vm, t, "sort", m_sort);

    Type *it = vm->t_list_iter;
    it->iter = ctr_iter_self;
    it->next = list_iter_next;
    it->mark = ctr_seqiter_mark;
}
