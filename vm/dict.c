/*
** dict.c — the insertion-ordered hash table (CPython's compact layout: an
** entries array in insertion order plus an index table probed with
** CPython's perturbation), the dict type, its views (dict_keys,
** dict_values, dict_items) and their iterators.
**
** Every insert, delete or value change gives the dict a fresh version from
** vm->dict_version (unique per VM), which inline caches compare.
*/
#include <string.h>

#include "container.h"

#define IX_EMPTY (-1)
#define IX_DUMMY (-2)
#define MIN_INDEX 8
#define PERTURB_SHIFT 5

typedef struct DictView {
    Obj obj;
    Dict *dict;
} DictView;

typedef struct DictIter {
    Obj obj;
    Dict *dict; /* NULL once exhausted */
    int64_t pos;
    int64_t count; /* size when iteration began; -1 after a size change */
} DictIter;

static inline void bump(VM *vm, Dict *d) { d->version = ++vm->dict_version; }

static inline bool is_dict(VM *vm, Value v) { return ctr_is(v, vm->t_dict); }

static int64_t key_hash(VM *vm, Value key) {
    if (IS_STR(vm, key)) return AS_STR(key)->hash;
    return vm_hash(vm, key);
}

static Dict *dict_alloc(VM *vm, Type *t) {
    Dict *d = gc_alloc_obj(vm, t, sizeof(Dict));
    d->version = ++vm->dict_version;
    return d;
}

Dict *dict_new(VM *vm) { return dict_alloc(vm, vm->t_dict); }

/* ============================================================ the table */

/* Index slot of the first free (empty or deleted) position for hash h. */
static uint64_t free_slot(Dict *d, int64_t h) {
    uint64_t mask = (uint64_t)d->index_cap - 1, perturb = (uint64_t)h, i = (uint64_t)h & mask;
    while (d->index[i] >= 0) {
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + perturb + 1) & mask;
    }
    return i;
}

/* Index capacity for n live keys: growth leaves room for 2n (CPython's
** GROWTH_RATE: index size >= 3n); fitting just holds n. */
static int64_t grow_cap(int64_t n) {
    int64_t cap = MIN_INDEX;
    while (cap < n * 3) cap *= 2;
    return cap;
}

static int64_t fit_cap(int64_t n) {
    int64_t cap = MIN_INDEX;
    while (cap * 2 / 3 < n) cap *= 2;
    return cap;
}

/* Rebuilds the table with an index of cap slots (a power of two), dropping
** deleted entries. */
static void dict_resize(VM *vm, Dict *d, int64_t cap) {
    int64_t ecap = cap * 2 / 3;
    /* entries and index share one block: one malloc per resize, which
    ** matters for the many small dicts of instances */
    DictEntry *entries = gc_alloc_block(vm, (size_t)ecap * sizeof(DictEntry) + (size_t)cap * sizeof(int64_t));
    int64_t *index = (int64_t *)(entries + ecap);
    for (int64_t i = 0; i < cap; i++) index[i] = IX_EMPTY;
    int64_t n = 0;
    for (int64_t i = 0; i < d->nentries; i++)
        if (!IS_EMPTY(d->entries[i].key)) entries[n++] = d->entries[i];
    gc_free_block(vm, d->entries, (size_t)d->entries_cap * sizeof(DictEntry) + (size_t)d->index_cap * sizeof(int64_t));
    d->entries = entries;
    d->entries_cap = ecap;
    d->index = index;
    d->index_cap = cap;
    d->nentries = n;
    d->count = n;
    for (int64_t i = 0; i < n; i++) index[free_slot(d, entries[i].hash)] = i;
}

/* Appends a key known to be absent (no comparisons). */
static void insert_new(VM *vm, Dict *d, Value key, int64_t h, Value value) {
    if (d->nentries >= d->entries_cap) dict_resize(vm, d, grow_cap(d->count));
    int64_t ix = d->nentries++;
    d->entries[ix] = (DictEntry){.key = key, .value = value, .hash = h};
    d->index[free_slot(d, h)] = ix;
    d->count++;
}

/* Lookups restarted by key comparisons that keep changing the dict before
** RuntimeError (CPython would retry forever). */
#define MAX_LOOKUP_RESTARTS 1000

/* Position in entries of key (hash h), or -1; *slot gets its index slot.
** A comparison runs user code that may change the dict: when the probed
** slot no longer leads to the same key object in a same-sized index, the
** search starts over, like CPython. Judging by contents rather than by
** where the tables were allocated keeps this independent of address reuse. */
static int64_t find(VM *vm, Dict *d, Value key, int64_t h, uint64_t *slot) {
    int restarts = 0;
restart:
    if (!d->index) return -1;
    uint64_t mask = (uint64_t)d->index_cap - 1, perturb = (uint64_t)h, i = (uint64_t)h & mask;
    for (;;) {
        int64_t ix = d->index[i];
        if (ix == IX_EMPTY) return -1;
        if (ix >= 0 && d->entries[ix].hash == h) {
            Value k = d->entries[ix].key;
            bool decided;
            bool eq = ctr_quick_equal(vm, k, key, &decided);
            if (!decided) {
                int64_t cap = d->index_cap;
                vm_push_root(vm, k);
                eq = vm_equal(vm, k, key);
                vm_pop_roots(vm, 1);
                if (!d->index || d->index_cap != cap || d->index[i] != ix || ix >= d->nentries ||
                    !vm_is(d->entries[ix].key, k)) {
                    if (++restarts > MAX_LOOKUP_RESTARTS)
                        vm_raise_kind(vm, RuntimeError, "dictionary changed during lookup");
                    goto restart;
                }
            }
            if (eq) {
                *slot = i;
                return ix;
            }
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + perturb + 1) & mask;
    }
}

/* Lookup of a str key: pointer, then hash and bytes; never runs user code. */
static int64_t find_str(VM *vm, Dict *d, const char *s, int64_t len, int64_t h, Str *ptr) {
    if (!d->index) return -1;
    uint64_t mask = (uint64_t)d->index_cap - 1, perturb = (uint64_t)h, i = (uint64_t)h & mask;
    for (;;) {
        int64_t ix = d->index[i];
        if (ix == IX_EMPTY) return -1;
        if (ix >= 0) {
            DictEntry *e = &d->entries[ix];
            if (e->key.tag == VAL_OBJ) {
                Obj *o = AS_OBJ(e->key);
                if (o == (Obj *)ptr) return ix;
                if (e->hash == h && o->type == vm->t_str) {
                    Str *k = (Str *)o;
                    if (k->len == len && memcmp(k->chars, s, (size_t)len) == 0) return ix;
                }
            }
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + perturb + 1) & mask;
    }
}

static void insert(VM *vm, Dict *d, Value key, int64_t h, Value value) {
    uint64_t slot;
    int64_t ix = find(vm, d, key, h, &slot);
    if (ix >= 0) d->entries[ix].value = value;
    else insert_new(vm, d, key, h, value);
    bump(vm, d);
}

/* Removes the entry at position ix (index slot slot). */
static void remove_at(VM *vm, Dict *d, int64_t ix, uint64_t slot) {
    d->index[slot] = IX_DUMMY;
    d->entries[ix].key = EMPTY_VAL;
    d->entries[ix].value = EMPTY_VAL;
    d->count--;
    bump(vm, d);
}

bool dict_get(VM *vm, Dict *d, Value key, Value *out) {
    if (d->count == 0) {
        key_hash(vm, key); /* unhashable keys still raise */
        return false;
    }
    uint64_t slot;
    int64_t ix = find(vm, d, key, key_hash(vm, key), &slot);
    if (ix < 0) return false;
    *out = d->entries[ix].value;
    return true;
}

void dict_set(VM *vm, Dict *d, Value key, Value value) { insert(vm, d, key, key_hash(vm, key), value); }

bool dict_del(VM *vm, Dict *d, Value key) {
    int64_t h = key_hash(vm, key);
    uint64_t slot;
    int64_t ix = find(vm, d, key, h, &slot);
    if (ix < 0) return false;
    remove_at(vm, d, ix, slot);
    return true;
}

Value dict_get_str(VM *vm, Dict *d, Str *key) {
    int64_t ix = find_str(vm, d, key->chars, key->len, key->hash, key);
    return ix < 0 ? EMPTY_VAL : d->entries[ix].value;
}

void dict_set_str(VM *vm, Dict *d, Str *key, Value value) {
    int64_t ix = find_str(vm, d, key->chars, key->len, key->hash, key);
    if (ix >= 0) d->entries[ix].value = value;
    else insert_new(vm, d, STR_VAL(key), key->hash, value);
    bump(vm, d);
}

Value dict_get_cstr(VM *vm, Dict *d, const char *key) {
    int64_t len = (int64_t)strlen(key);
    int64_t ix = find_str(vm, d, key, len, str_hash_bytes(key, (size_t)len), NULL);
    return ix < 0 ? EMPTY_VAL : d->entries[ix].value;
}

void dict_set_cstr(VM *vm, Dict *d, const char *key, Value value) {
    dict_set_str(vm, d, str_intern(vm, key, strlen(key)), value);
}

bool dict_next(Dict *d, int64_t *pos, Value *key, Value *value) {
    while (*pos < d->nentries) {
        DictEntry *e = &d->entries[(*pos)++];
        if (!IS_EMPTY(e->key)) {
            if (key) *key = e->key;
            if (value) *value = e->value;
            return true;
        }
    }
    return false;
}

/* Copies src's entries into the empty dict d (no comparisons needed). */
static void copy_into(VM *vm, Dict *d, Dict *src) {
    if (src->count == 0) return;
    dict_resize(vm, d, fit_cap(src->count));
    for (int64_t i = 0; i < src->nentries; i++) {
        DictEntry *e = &src->entries[i];
        if (!IS_EMPTY(e->key)) insert_new(vm, d, e->key, e->hash, e->value);
    }
    bump(vm, d);
}

Dict *dict_copy(VM *vm, Dict *d) {
    Dict *r = dict_new(vm);
    copy_into(vm, r, d);
    return r;
}

static void dict_clear(VM *vm, Dict *d) {
    gc_free_block(vm, d->entries, (size_t)d->entries_cap * sizeof(DictEntry) + (size_t)d->index_cap * sizeof(int64_t));
    d->entries = NULL;
    d->index = NULL;
    d->entries_cap = d->index_cap = d->nentries = d->count = 0;
    bump(vm, d);
}

/* One element of dict(iterable of pairs): a 2-item sequence. */
static void update_pair(VM *vm, Dict *d, Value item, int64_t n) {
    Value k, v;
    if (ctr_is(item, vm->t_tuple) || ctr_is(item, vm->t_list)) {
        int64_t len = ctr_is(item, vm->t_tuple) ? AS_TUPLE(item)->len : AS_LIST(item)->len;
        Value *items = ctr_is(item, vm->t_tuple) ? AS_TUPLE(item)->items : AS_LIST(item)->items;
        if (len != 2)
            vm_raise_kind(vm, ValueError, "dictionary update sequence element #%lld has length %lld; 2 is required",
                          (long long)n, (long long)len);
        k = items[0];
        v = items[1];
    } else {
        Type *t = vm_typeof(vm, item);
        if (!t->iter && !(t->getitem && IS_OBJ(item)))
            vm_raise_kind(vm, TypeError, "cannot convert dictionary update sequence element #%lld to a sequence",
                          (long long)n);
        List *l = list_from_iterable(vm, item);
        if (l->len != 2)
            vm_raise_kind(vm, ValueError, "dictionary update sequence element #%lld has length %lld; 2 is required",
                          (long long)n, (long long)l->len);
        k = l->items[0];
        v = l->items[1];
        vm_push_root(vm, OBJ_VAL(l));
        dict_set(vm, d, k, v);
        vm_pop_roots(vm, 1);
        return;
    }
    dict_set(vm, d, k, v);
}

void dict_update(VM *vm, Dict *d, Value other) {
    if (is_dict(vm, other)) {
        Dict *o = AS_DICT(other);
        if (d->count == 0 && o != d) {
            dict_clear(vm, d);
            copy_into(vm, d, o);
            return;
        }
        for (int64_t i = 0; i < o->nentries; i++) {
            DictEntry e = o->entries[i];
            if (!IS_EMPTY(e.key)) insert(vm, d, e.key, e.hash, e.value);
        }
        return;
    }
    Value keys = vm_getattr_opt(vm, other, str_cstr(vm, "keys"));
    if (!IS_EMPTY(keys)) { /* a mapping: d[k] = other[k] for k in other.keys() */
        vm_push_root(vm, keys);
        Value ks = vm_call(vm, keys, 0, NULL);
        vm_push_root(vm, ks);
        Value it = vm_iter(vm, ks);
        vm_push_root(vm, it);
        Value k;
        while (vm_next(vm, it, &k)) {
            vm_push_root(vm, k);
            Value v = vm_getitem(vm, other, k);
            vm_push_root(vm, v);
            dict_set(vm, d, k, v);
            vm_pop_roots(vm, 2);
        }
        vm_pop_roots(vm, 3);
        return;
    }
    Value it = vm_iter(vm, other);
    vm_push_root(vm, it);
    Value item;
    for (int64_t n = 0; vm_next(vm, it, &item); n++) {
        vm_push_root(vm, item);
        update_pair(vm, d, item, n);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
}

/* d.update(**kwargs) */
static void update_kwargs(VM *vm, Dict *d, Dict *kwargs) {
    if (!kwargs) return;
    for (int64_t i = 0; i < kwargs->nentries; i++) {
        DictEntry e = kwargs->entries[i];
        if (!IS_EMPTY(e.key)) insert(vm, d, e.key, e.hash, e.value);
    }
}

static _Noreturn void key_error(VM *vm, Value key) {
    vm_throw(vm, exc_new(vm, vm->exc[EXC_KeyError], 1, &key));
}

/* ================================================================= slots */

static Value dict_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    ctr_check_args(vm, "dict", argc, 0, 1);
    Dict *d = dict_alloc(vm, cls);
    if (argc == 1 || (kwargs && kwargs->count)) {
        vm_push_root(vm, OBJ_VAL(d));
        if (argc == 1) dict_update(vm, d, argv[0]);
        update_kwargs(vm, d, kwargs);
        vm_pop_roots(vm, 1);
    }
    return OBJ_VAL(d);
}

static void dict_repr_body(VM *vm, Value self, StrBuf *sb) {
    Dict *d = AS_DICT(self);
    sb_putc(sb, '{');
    bool first = true;
    for (int64_t i = 0; i < d->nentries; i++) {
        DictEntry e = d->entries[i];
        if (IS_EMPTY(e.key)) continue;
        if (!first) sb_appends(sb, ", ");
        first = false;
        vm_push_root(vm, e.key);
        vm_push_root(vm, e.value);
        ctr_repr_value(vm, sb, e.key);
        sb_appends(sb, ": ");
        ctr_repr_value(vm, sb, e.value);
        vm_pop_roots(vm, 2);
    }
    sb_putc(sb, '}');
}

static Value dict_repr(VM *vm, Value self) {
    Dict *d = AS_DICT(self);
    if (d->count == 0) return STR_VAL(str_cstr(vm, "{}"));
    if (AS_OBJ(self)->flags & OBJ_FLAG_REPR_BUSY) return STR_VAL(str_cstr(vm, "{...}"));
    bool simple = true;
    for (int64_t i = 0; i < d->nentries && simple; i++)
        simple = ctr_simple(vm, d->entries[i].key) && ctr_simple(vm, d->entries[i].value);
    return ctr_repr(vm, self, dict_repr_body, simple);
}

/* a == b for two dicts: same size, and each key of a maps to an equal value in b. */
static bool dict_equal(VM *vm, Dict *a, Dict *b) {
    if (a->count != b->count) return false;
    for (int64_t i = 0; i < a->nentries; i++) {
        DictEntry e = a->entries[i];
        if (IS_EMPTY(e.key)) continue;
        vm_push_root(vm, e.key);
        vm_push_root(vm, e.value);
        uint64_t slot;
        int64_t ix = find(vm, b, e.key, e.hash, &slot);
        bool eq = ix >= 0;
        if (eq) {
            Value bv = b->entries[ix].value;
            vm_push_root(vm, bv);
            eq = ctr_eq(vm, e.value, bv);
            vm_pop_roots(vm, 1);
        }
        vm_pop_roots(vm, 2);
        if (!eq) return false;
    }
    return true;
}

static Value dict_compare(VM *vm, CmpOp op, Value a, Value b) {
    if ((op != CMP_EQ && op != CMP_NE) || !is_dict(vm, a) || !is_dict(vm, b)) return EMPTY_VAL;
    bool eq = dict_equal(vm, AS_DICT(a), AS_DICT(b));
    return BOOL_VAL(op == CMP_EQ ? eq : !eq);
}

/* d1 | d2 (3.9+): a new dict. */
static Value dict_binop(VM *vm, BinOp op, Value a, Value b) {
    if (op != BINOP_OR || !is_dict(vm, a) || !is_dict(vm, b)) return EMPTY_VAL;
    Dict *r = dict_copy(vm, AS_DICT(a));
    vm_push_root(vm, OBJ_VAL(r));
    dict_update(vm, r, b);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

static Value dict_inplace(VM *vm, BinOp op, Value a, Value b) {
    if (op != BINOP_OR || !is_dict(vm, a)) return EMPTY_VAL;
    dict_update(vm, AS_DICT(a), b);
    return a;
}

static Value dict_getitem(VM *vm, Value self, Value key) {
    Dict *d = AS_DICT(self);
    Value v;
    if (dict_get(vm, d, key, &v)) return v;
    if (AS_OBJ(self)->type != vm->t_dict) {
        Value m = type_lookup(vm, AS_OBJ(self)->type, str_cstr(vm, "__missing__"));
        if (!IS_EMPTY(m)) {
            Value args[2] = {self, key};
            return vm_call(vm, m, 2, args);
        }
    }
    key_error(vm, key);
}

static void dict_setitem(VM *vm, Value self, Value key, Value value) {
    Dict *d = AS_DICT(self);
    if (IS_EMPTY(value)) {
        if (!dict_del(vm, d, key)) key_error(vm, key);
        return;
    }
    dict_set(vm, d, key, value);
}

static int64_t dict_len(VM *vm, Value self) {
    (void)vm;
    return AS_DICT(self)->count;
}

static bool dict_contains(VM *vm, Value self, Value key) {
    Value v;
    return dict_get(vm, AS_DICT(self), key, &v);
}

static bool dict_truthy(VM *vm, Value self) {
    (void)vm;
    return AS_DICT(self)->count > 0;
}

static void dict_mark(VM *vm, Obj *o) {
    Dict *d = (Dict *)o;
    for (int64_t i = 0; i < d->nentries; i++) {
        DictEntry *e = &d->entries[i];
        if (IS_EMPTY(e->key)) continue;
        gc_mark_value(vm, e->key);
        gc_mark_value(vm, e->value);
    }
}

static void dict_finalize(VM *vm, Obj *o) {
    Dict *d = (Dict *)o;
    gc_free_block(vm, d->entries, (size_t)d->entries_cap * sizeof(DictEntry) + (size_t)d->index_cap * sizeof(int64_t));
    d->entries = NULL;
    d->index = NULL;
    d->entries_cap = d->index_cap = d->nentries = d->count = 0;
}

/* ============================================================ iterators */

static Value iter_new(VM *vm, Type *t, Dict *d) {
    DictIter *it = gc_alloc_obj(vm, t, sizeof(DictIter));
    it->dict = d;
    it->pos = 0;
    it->count = d->count;
    return OBJ_VAL(it);
}

static Value dict_iter(VM *vm, Value self) { return iter_new(vm, vm->t_dict_keyiter, AS_DICT(self)); }

/* Next live entry of the iterator's dict, or NULL at the end. */
static DictEntry *iter_entry(VM *vm, DictIter *it) {
    Dict *d = it->dict;
    if (!d) return NULL;
    if (d->count != it->count) {
        it->count = -1;
        vm_raise_kind(vm, RuntimeError, "dictionary changed size during iteration");
    }
    while (it->pos < d->nentries) {
        DictEntry *e = &d->entries[it->pos++];
        if (!IS_EMPTY(e->key)) return e;
    }
    it->dict = NULL;
    return NULL;
}

static bool keyiter_next(VM *vm, Value self, Value *out) {
    DictEntry *e = iter_entry(vm, (DictIter *)AS_OBJ(self));
    if (!e) return false;
    *out = e->key;
    return true;
}

static bool valueiter_next(VM *vm, Value self, Value *out) {
    DictEntry *e = iter_entry(vm, (DictIter *)AS_OBJ(self));
    if (!e) return false;
    *out = e->value;
    return true;
}

static bool itemiter_next(VM *vm, Value self, Value *out) {
    DictEntry *e = iter_entry(vm, (DictIter *)AS_OBJ(self));
    if (!e) return false;
    Value kv[2] = {e->key, e->value};
    *out = OBJ_VAL(tuple_from_array(vm, 2, kv));
    return true;
}

static void dictiter_mark(VM *vm, Obj *o) { gc_mark_obj(vm, (Obj *)((DictIter *)o)->dict); }

/* ================================================================ views */

static Value view_new(VM *vm, Type *t, Dict *d) {
    DictView *v = gc_alloc_obj(vm, t, sizeof(DictView));
    v->dict = d;
    return OBJ_VAL(v);
}

static Dict *view_dict(Value v) { return ((DictView *)AS_OBJ(v))->dict; }

static bool is_view(VM *vm, Value v, bool values_too) {
    if (!IS_OBJ(v)) return false;
    Type *t = AS_OBJ(v)->type;
    return t == vm->t_dict_keys || t == vm->t_dict_items || (values_too && t == vm->t_dict_values);
}

static int64_t view_len(VM *vm, Value self) {
    (void)vm;
    return view_dict(self)->count;
}

static Value keys_iter(VM *vm, Value self) { return iter_new(vm, vm->t_dict_keyiter, view_dict(self)); }
static Value values_iter(VM *vm, Value self) { return iter_new(vm, vm->t_dict_valueiter, view_dict(self)); }
static Value items_iter(VM *vm, Value self) { return iter_new(vm, vm->t_dict_itemiter, view_dict(self)); }

static bool keys_contains(VM *vm, Value self, Value key) {
    Value v;
    return dict_get(vm, view_dict(self), key, &v);
}

static bool items_contains(VM *vm, Value self, Value item) {
    if (!ctr_is(item, vm->t_tuple) || AS_TUPLE(item)->len != 2) return false;
    Value v;
    if (!dict_get(vm, view_dict(self), AS_TUPLE(item)->items[0], &v)) return false;
    vm_push_root(vm, v);
    bool eq = ctr_eq(vm, v, AS_TUPLE(item)->items[1]);
    vm_pop_roots(vm, 1);
    return eq;
}

static bool values_contains(VM *vm, Value self, Value x) {
    Dict *d = view_dict(self);
    for (int64_t i = 0; i < d->nentries; i++) {
        DictEntry e = d->entries[i];
        if (!IS_EMPTY(e.key) && ctr_eq(vm, e.value, x)) return true;
    }
    return false;
}

/* "dict_keys(['a', 'b'])": the type name around the repr of a list. */
static Value view_repr(VM *vm, Value self) {
    List *l = list_from_iterable(vm, self);
    vm_push_root(vm, OBJ_VAL(l));
    Str *r = vm_repr(vm, OBJ_VAL(l));
    vm_pop_roots(vm, 1);
    return STR_VAL(str_printf(vm, "%s(%s)", vm_type_name(vm, self), r->chars));
}

static bool view_truthy(VM *vm, Value self) {
    (void)vm;
    return view_dict(self)->count > 0;
}

static void view_mark(VM *vm, Obj *o) { gc_mark_obj(vm, (Obj *)((DictView *)o)->dict); }

/* Is every element of a in b? (set-like views and sets) */
static bool all_contained(VM *vm, Value a, Value b) {
    Value it = vm_iter(vm, a);
    vm_push_root(vm, it);
    Value x;
    bool ok = true;
    while (ok && vm_next(vm, it, &x)) {
        vm_push_root(vm, x);
        ok = vm_contains(vm, b, x);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return ok;
}

/* keys/items views compare like sets with sets and other such views. */
static Value view_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (!is_view(vm, a, false) || (!is_view(vm, b, false) && !ctr_is_anyset(vm, b))) return EMPTY_VAL;
    int64_t la = vm_len(vm, a), lb = vm_len(vm, b);
    bool r;
    switch (op) {
    case CMP_EQ:
    case CMP_NE: r = la == lb && all_contained(vm, a, b); return BOOL_VAL(op == CMP_EQ ? r : !r);
    case CMP_LT: return BOOL_VAL(la < lb && all_contained(vm, a, b));
    case CMP_LE: return BOOL_VAL(la <= lb && all_contained(vm, a, b));
    case CMP_GT: return BOOL_VAL(la > lb && all_contained(vm, b, a));
    case CMP_GE: return BOOL_VAL(la >= lb && all_contained(vm, b, a));
    default: return EMPTY_VAL;
    }
}

/* Set operators on keys/items views (either operand), results are sets,
** built in CPython's order. */
static Value view_binop(VM *vm, BinOp op, Value a, Value b) {
    if (op != BINOP_AND && op != BINOP_OR && op != BINOP_SUB && op != BINOP_XOR) return EMPTY_VAL;
    Type *ta = vm_typeof(vm, a), *tb = vm_typeof(vm, b);
    if (!ta->iter || !tb->iter) return EMPTY_VAL;
    if (op == BINOP_AND) {
        if (!is_view(vm, a, false)) {
            Value t = a;
            a = b;
            b = t;
        }
        if (IS_OBJ(b) && AS_OBJ(b)->type == vm->t_set && vm_len(vm, a) <= vm_len(vm, b)) {
            Set *bs = (Set *)AS_OBJ(b);
            return OBJ_VAL(set_intersect(vm, bs, a));
        }
        if (is_view(vm, b, false) && vm_len(vm, b) > vm_len(vm, a)) {
            Value t = a;
            a = b;
            b = t;
        }
        Set *r = set_new(vm, vm->t_set);
        vm_push_root(vm, OBJ_VAL(r));
        Value it = vm_iter(vm, b);
        vm_push_root(vm, it);
        Value x;
        bool keys = AS_OBJ(a)->type == vm->t_dict_keys;
        while (vm_next(vm, it, &x)) {
            vm_push_root(vm, x);
            if (keys ? keys_contains(vm, a, x) : items_contains(vm, a, x)) set_add(vm, r, x);
            vm_pop_roots(vm, 1);
        }
        vm_pop_roots(vm, 2);
        return OBJ_VAL(r);
    }
    Set *r = set_from(vm, vm->t_set, a);
    vm_push_root(vm, OBJ_VAL(r));
    if (op == BINOP_OR) set_update(vm, r, b);
    else if (op == BINOP_SUB) set_diff_update(vm, r, b);
    else set_symdiff_update(vm, r, b);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

static Value view_isdisjoint(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "isdisjoint", kwargs);
    arg_count(vm, "isdisjoint", argc - 1, 1, 1);
    Value it = vm_iter(vm, argv[1]);
    vm_push_root(vm, it);
    Value x;
    bool disjoint = true;
    while (disjoint && vm_next(vm, it, &x)) {
        vm_push_root(vm, x);
        disjoint = !vm_contains(vm, argv[0], x);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return BOOL_VAL(disjoint);
}

/* ============================================================== methods */

static Dict *self_dict(Value *argv) { return AS_DICT(argv[0]); }

static Value m_keys(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.keys", kwargs);
    arg_count(vm, "dict.keys", argc - 1, 0, 0);
    return view_new(vm, vm->t_dict_keys, self_dict(argv));
}

static Value m_values(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.values", kwargs);
    arg_count(vm, "dict.values", argc - 1, 0, 0);
    return view_new(vm, vm->t_dict_values, self_dict(argv));
}

static Value m_items(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.items", kwargs);
    arg_count(vm, "dict.items", argc - 1, 0, 0);
    return view_new(vm, vm->t_dict_items, self_dict(argv));
}

static Value m_get(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.get", kwargs);
    ctr_check_args(vm, "get", argc - 1, 1, 2);
    Value v;
    if (dict_get(vm, self_dict(argv), argv[1], &v)) return v;
    return argc > 2 ? argv[2] : NONE_VAL;
}

static Value m_pop(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.pop", kwargs);
    ctr_check_args(vm, "pop", argc - 1, 1, 2);
    Dict *d = self_dict(argv);
    Value key = argv[1];
    uint64_t slot;
    int64_t h = key_hash(vm, key);
    int64_t ix = d->count ? find(vm, d, key, h, &slot) : -1;
    if (ix < 0) {
        if (argc > 2) return argv[2];
        key_error(vm, key);
    }
    Value v = d->entries[ix].value;
    remove_at(vm, d, ix, slot);
    return v;
}

static Value m_popitem(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.popitem", kwargs);
    arg_count(vm, "dict.popitem", argc - 1, 0, 0);
    Dict *d = self_dict(argv);
    if (d->count == 0) {
        Value msg = STR_VAL(str_cstr(vm, "popitem(): dictionary is empty"));
        vm_throw(vm, exc_new(vm, vm->exc[EXC_KeyError], 1, &msg));
    }
    int64_t ix = d->nentries - 1;
    while (IS_EMPTY(d->entries[ix].key)) ix--;
    DictEntry e = d->entries[ix];
    Value kv[2] = {e.key, e.value};
    Tuple *t = tuple_from_array(vm, 2, kv);
    /* find its index slot: probe by identity */
    uint64_t mask = (uint64_t)d->index_cap - 1, perturb = (uint64_t)e.hash, i = (uint64_t)e.hash & mask;
    while (d->index[i] != ix) {
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + perturb + 1) & mask;
    }
    remove_at(vm, d, ix, i);
    d->nentries = ix;
    return OBJ_VAL(t);
}

static Value m_setdefault(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.setdefault", kwargs);
    ctr_check_args(vm, "setdefault", argc - 1, 1, 2);
    Dict *d = self_dict(argv);
    Value key = argv[1], dflt = argc > 2 ? argv[2] : NONE_VAL;
    int64_t h = key_hash(vm, key);
    uint64_t slot;
    int64_t ix = find(vm, d, key, h, &slot);
    if (ix >= 0) return d->entries[ix].value;
    insert_new(vm, d, key, h, dflt);
    bump(vm, d);
    return dflt;
}

static Value m_update(VM *vm, int argc, Value *argv, Dict *kwargs) {
    ctr_check_args(vm, "update", argc - 1, 0, 1);
    Dict *d = self_dict(argv);
    if (argc > 1) dict_update(vm, d, argv[1]);
    update_kwargs(vm, d, kwargs);
    return NONE_VAL;
}

static Value m_clear(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.clear", kwargs);
    arg_count(vm, "dict.clear", argc - 1, 0, 0);
    dict_clear(vm, self_dict(argv));
    return NONE_VAL;
}

static Value m_copy(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.copy", kwargs);
    arg_count(vm, "dict.copy", argc - 1, 0, 0);
    return OBJ_VAL(dict_copy(vm, self_dict(argv)));
}

/* dict.fromkeys(iterable, value=None): a classmethod (argv[0] is the class). */
static Value m_fromkeys(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "fromkeys", kwargs);
    Value cls = OBJ_VAL(vm->t_dict);
    if (argc > 0 && IS_OBJ(argv[0]) && type_is_subtype(AS_OBJ(argv[0])->type, vm->t_type)) {
        cls = argv[0];
        argv++;
        argc--;
    }
    ctr_check_args(vm, "fromkeys", argc, 1, 2);
    Value value = argc > 1 ? argv[1] : NONE_VAL;
    Value iterable = argv[0];
    bool plain = AS_OBJ(cls) == (Obj *)vm->t_dict;
    Value r = plain ? OBJ_VAL(dict_new(vm)) : vm_call(vm, cls, 0, NULL);
    vm_push_root(vm, r);
    Value it = vm_iter(vm, iterable);
    vm_push_root(vm, it);
    Value k;
    while (vm_next(vm, it, &k)) {
        if (plain) dict_set(vm, AS_DICT(r), k, value);
        else vm_setitem(vm, r, k, value);
    }
    vm_pop_roots(vm, 2);
    return r;
}

static Value m_contains(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.__contains__", kwargs);
    arg_count(vm, "dict.__contains__", argc - 1, 1, 1);
    return BOOL_VAL(dict_contains(vm, argv[0], argv[1]));
}

static Value m_getitem(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "dict.__getitem__", kwargs);
    arg_count(vm, "dict.__getitem__", argc - 1, 1, 1);
    return dict_getitem(vm, argv[0], argv[1]);
}

/* ================================================================= init */

static Type *make_type(VM *vm, const char *name) { return type_new_builtin(vm, name, vm->t_object, 0); }

void dict_init(VM *vm) {
    Type *t = vm->t_dict;
    t->new_ = dict_new_slot;
    t->repr = dict_repr;
    t->hash = ctr_unhashable;
    t->compare = dict_compare;
    t->binop = dict_binop;
    t->inplace = dict_inplace;
    t->getitem = dict_getitem;
    t->setitem = dict_setitem;
    t->len = dict_len;
    t->contains = dict_contains;
    t->iter = dict_iter;
    t->truthy = dict_truthy;
    t->mark = dict_mark;
    t->finalize = dict_finalize;

    type_add_method(vm, t, "keys", m_keys);
    type_add_method(vm, t, "values", m_values);
    type_add_method(vm, t, "items", m_items);
    type_add_method(vm, t, "get", m_get);
    type_add_method(vm, t, "pop", m_pop);
    type_add_method(vm, t, "popitem", m_popitem);
    type_add_method(vm, t, "setdefault", m_setdefault);
    type_add_method(vm, t, "update", m_update);
    type_add_method(vm, t, "clear", m_clear);
    type_add_method(vm, t, "copy", m_copy);
    type_add_method(vm, t, "__contains__", m_contains);
    type_add_method(vm, t, "__getitem__", m_getitem);
    Wrapper *w = gc_alloc_obj(vm, vm->t_classmethod, sizeof(Wrapper));
    w->func = native_new(vm, "fromkeys", m_fromkeys, EMPTY_VAL);
    w->fset = w->fdel = NONE_VAL;
    dict_set_cstr(vm, t->dict, "fromkeys", OBJ_VAL(w));

    vm->t_dict_keys = make_type(vm, "dict_keys");
    vm->t_dict_values = make_type(vm, "dict_values");
    vm->t_dict_items = make_type(vm, "dict_items");
    Type *views[3] = {vm->t_dict_keys, vm->t_dict_values, vm->t_dict_items};
    for (int i = 0; i < 3; i++) {
        Type *v = views[i];
        v->len = view_len;
        v->repr = view_repr;
        v->truthy = view_truthy;
        v->mark = view_mark;
        if (i != 1) {
            v->compare = view_compare;
            v->binop = view_binop;
            type_add_method(vm, v, "isdisjoint", view_isdisjoint);
        }
    }
    vm->t_dict_keys->iter = keys_iter;
    vm->t_dict_keys->contains = keys_contains;
    vm->t_dict_values->iter = values_iter;
    vm->t_dict_values->contains = values_contains;
    vm->t_dict_items->iter = items_iter;
    vm->t_dict_items->contains = items_contains;

    vm->t_dict_keyiter = make_type(vm, "dict_keyiterator");
    vm->t_dict_valueiter = make_type(vm, "dict_valueiterator");
    vm->t_dict_itemiter = make_type(vm, "dict_itemiterator");
    Type *iters[3] = {vm->t_dict_keyiter, vm->t_dict_valueiter, vm->t_dict_itemiter};
    for (int i = 0; i < 3; i++) {
        iters[i]->iter = ctr_iter_self;
        iters[i]->mark = dictiter_mark;
    }
    vm->t_dict_keyiter->next = keyiter_next;
    vm->t_dict_valueiter->next = valueiter_next;
    vm->t_dict_itemiter->next = itemiter_next;
}
