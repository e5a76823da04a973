/*
** set.c — set and frozenset: open addressing with CPython 3.11's exact
** algorithm (9 linear probes, then perturbation; minimum size 8; growth
** when fill*5 >= mask*3; reuse of the last deleted slot met while
** probing; the same copy/merge/resize paths in each operation), so that
** the iteration order of sets of numbers equals CPython's.
**
** Table entries: key EMPTY with aux 0 is unused; key EMPTY with aux 1 is a
** deleted ("dummy") slot, hash -1.
*/
#include <string.h>

#include "container.h"
#include "gen_batch.h"

#define SET_MINSIZE 8
#define LINEAR_PROBES 9
#define PERTURB_SHIFT 5
#define SET_FLAG_HASHED 0x40 /* Obj.flags: frozenset hash cached in finger */

typedef struct SetIter {
    Obj obj;
    Set *set; /* NULL once exhausted */
    int64_t pos;
    int64_t used; /* size when iteration began; -1 after a change */
} SetIter;

static inline bool e_unused(const SetEntry *e) { return e->key.tag == VAL_EMPTY && e->key.aux == 0; }
static inline bool e_active(const SetEntry *e) { return e->key.tag != VAL_EMPTY; }
static inline void e_make_dummy(SetEntry *e) {
    e->key = EMPTY_VAL;
    e->key.aux = 1;
    e->hash = -1;
}

static inline bool is_set(VM *vm, Value v) { return ctr_is(v, vm->t_set); }
static inline bool is_frozen(VM *vm, Value v) { return ctr_is(v, vm->t_frozenset); }
static inline Set *as_set(Value v) { return (Set *)AS_OBJ(v); }

/* set for set and its subclasses, frozenset for the rest. */
static Type *base_type(VM *vm, Set *s) {
    return type_is_subtype(s->obj.type, vm->t_set) ? vm->t_set : vm->t_frozenset;
}

static SetEntry *new_table(VM *vm, int64_t size) { return gc_calloc(vm, (size_t)size, sizeof(SetEntry)); }

static void free_table(VM *vm, Set *s) { gc_free(vm, s->table, (size_t)(s->mask + 1) * sizeof(SetEntry)); }

static Set *set_alloc(VM *vm, Type *type) {
    Set *s = gc_alloc_obj(vm, type, sizeof(Set));
    s->table = new_table(vm, SET_MINSIZE);
    s->mask = SET_MINSIZE - 1;
    return s;
}

Set *set_new(VM *vm, Type *type) { return set_alloc(vm, type); }

/* ============================================================== hashing */

static uint64_t shuffle_bits(uint64_t h) { return ((h ^ 89869747ULL) ^ (h << 16)) * 3644798167ULL; }

/* CPython's frozenset hash (order independent), cached for frozensets. */
static int64_t set_hash_value(Set *s) {
    if (s->obj.flags & SET_FLAG_HASHED) return s->finger;
    uint64_t hash = 0;
    for (int64_t i = 0; i <= s->mask; i++)
        if (e_active(&s->table[i])) hash ^= shuffle_bits((uint64_t)s->table[i].hash);
    hash ^= ((uint64_t)s->used + 1) * 1927868237ULL;
    hash ^= (hash >> 11) ^ (hash >> 25);
    hash = hash * 69069U + 907133923ULL;
    if (hash == (uint64_t)-1) hash = 590923713ULL;
    return (int64_t)hash;
}

static int64_t frozenset_hash(VM *vm, Value self) {
    Set *s = as_set(self);
    int64_t h = set_hash_value(s);
    if (is_frozen(vm, self)) {
        s->finger = h;
        s->obj.flags |= SET_FLAG_HASHED;
    }
    return h;
}

/* Hash of a key being looked up: a set key is hashed as the frozenset it
** equals (so `{1} in s` works when s holds frozenset({1})), like CPython. */
static int64_t lookup_hash(VM *vm, Value key) {
    if (IS_STR(vm, key)) return AS_STR(key)->hash;
    if (is_set(vm, key)) return set_hash_value(as_set(key));
    return vm_hash(vm, key);
}

static int64_t add_hash(VM *vm, Value key) {
    if (IS_STR(vm, key)) return AS_STR(key)->hash;
    return vm_hash(vm, key);
}

/* ============================================================ the table */

/* Lookups restarted by key comparisons that keep changing the set before
** RuntimeError (CPython would retry forever). */
#define MAX_LOOKUP_RESTARTS 1000

/* Compares start, found in the table at *entry, with key. The comparison runs
** user code that may change the set: the search must start over unless the
** table is the same size and the same slot still holds start. Judging by
** contents rather than by where the table was allocated keeps this independent
** of address reuse (and never reads a freed table). On success *entry is
** re-pointed into the current table; on a needed restart *restart is set. */
static bool compare_in_place(VM *vm, Set *so, SetEntry **entry, Value start, Value key, int *restarts,
                             bool *restart) {
    int64_t mask = so->mask;
    ptrdiff_t at = *entry - so->table;
    vm_push_root(vm, start);
    bool eq = vm_equal(vm, start, key);
    vm_pop_roots(vm, 1);
    if (so->mask != mask || !e_active(&so->table[at]) || !vm_is(so->table[at].key, start)) {
        if (++*restarts > MAX_LOOKUP_RESTARTS) vm_raise_kind(vm, RuntimeError, "set changed during lookup");
        *restart = true;
        return false;
    }
    *entry = &so->table[at];
    return eq;
}

/* The entry holding key, or the unused entry that ends its probe chain.
** A comparison that changes the table restarts the search. */
static SetEntry *lookkey(VM *vm, Set *so, Value key, int64_t hash) {
    int restarts = 0;
restart:;
    uint64_t mask = (uint64_t)so->mask, perturb = (uint64_t)hash, i = (uint64_t)hash & mask;
    for (;;) {
        SetEntry *entry = &so->table[i];
        int probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0;
        do {
            if (e_unused(entry)) return entry;
            if (entry->hash == hash && e_active(entry)) {
                Value start = entry->key;
                bool decided;
                bool eq = ctr_quick_equal(vm, start, key, &decided);
                if (!decided) {
                    bool again = false;
                    eq = compare_in_place(vm, so, &entry, start, key, &restarts, &again);
                    if (again) goto restart;
                }
                if (eq) return entry;
            }
            entry++;
        } while (probes--);
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
}

/* Inserts into a table known to hold no dummies and not the key. */
static void insert_clean(SetEntry *table, uint64_t mask, Value key, int64_t hash) {
    uint64_t perturb = (uint64_t)hash, i = (uint64_t)hash & mask;
    for (;;) {
        SetEntry *entry = &table[i];
        if (e_unused(entry)) goto found;
        if (i + LINEAR_PROBES <= mask) {
            for (int j = 0; j < LINEAR_PROBES; j++) {
                entry++;
                if (e_unused(entry)) goto found;
            }
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
        continue;
    found:
        entry->key = key;
        entry->hash = hash;
        return;
    }
}

/* Rebuilds the table with the smallest size > minused, dropping dummies. */
static void table_resize(VM *vm, Set *so, int64_t minused) {
    int64_t newsize = SET_MINSIZE;
    while (newsize <= minused) newsize <<= 1;
    if (newsize == SET_MINSIZE && so->mask == SET_MINSIZE - 1 && so->fill == so->used) return;
    SetEntry *old = so->table;
    int64_t oldsize = so->mask + 1;
    SetEntry *table = new_table(vm, newsize);
    for (int64_t i = 0; i < oldsize; i++)
        if (e_active(&old[i])) insert_clean(table, (uint64_t)newsize - 1, old[i].key, old[i].hash);
    gc_free(vm, old, (size_t)oldsize * sizeof(SetEntry));
    so->table = table;
    so->mask = newsize - 1;
    so->fill = so->used;
}

/* CPython's set_add_entry: a new key goes into the last dummy met on its
** probe path, if any, else into the unused slot that ends it. */
static void add_entry(VM *vm, Set *so, Value key, int64_t hash) {
    int restarts = 0;
restart:;
    uint64_t mask = (uint64_t)so->mask, perturb = (uint64_t)hash, i = (uint64_t)hash & mask;
    SetEntry *entry;
    ptrdiff_t freeslot = -1; /* an index: comparisons may move the table */
    for (;;) {
        entry = &so->table[i];
        int probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0;
        do {
            if (e_unused(entry)) goto found_unused_or_dummy;
            if (entry->hash == hash && e_active(entry)) {
                Value start = entry->key;
                bool decided;
                bool eq = ctr_quick_equal(vm, start, key, &decided);
                if (!decided) {
                    bool again = false;
                    eq = compare_in_place(vm, so, &entry, start, key, &restarts, &again);
                    if (again) goto restart;
                }
                if (eq) return; /* already present */
            } else if (!e_active(entry)) {
                freeslot = entry - so->table; /* a dummy: CPython keeps the last one met */
            }
            entry++;
        } while (probes--);
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
found_unused_or_dummy:
    if (freeslot >= 0) {
        SetEntry *dummy = &so->table[freeslot];
        /* a comparison after it was met may have rebuilt the table */
        if (e_active(dummy) || e_unused(dummy)) {
            if (++restarts > MAX_LOOKUP_RESTARTS) vm_raise_kind(vm, RuntimeError, "set changed during lookup");
            goto restart;
        }
        so->used++;
        dummy->key = key;
        dummy->hash = hash;
        return;
    }
    so->fill++;
    so->used++;
    entry->key = key;
    entry->hash = hash;
    if ((uint64_t)so->fill * 5 < mask * 3) return;
    table_resize(vm, so, so->used > 50000 ? so->used * 2 : so->used * 4);
}

static bool contains_entry(VM *vm, Set *so, Value key, int64_t hash) {
    return e_active(lookkey(vm, so, key, hash));
}

/* Returns true when key was present (and is now a dummy). */
static bool discard_entry(VM *vm, Set *so, Value key, int64_t hash) {
    SetEntry *e = lookkey(vm, so, key, hash);
    if (!e_active(e)) return false;
    e_make_dummy(e);
    so->used--;
    return true;
}

static void clear_internal(VM *vm, Set *so) {
    free_table(vm, so);
    so->table = new_table(vm, SET_MINSIZE);
    so->mask = SET_MINSIZE - 1;
    so->fill = so->used = 0;
}

void set_add(VM *vm, Set *s, Value v) { add_entry(vm, s, v, add_hash(vm, v)); }

bool set_contains(VM *vm, Set *s, Value v) { return contains_entry(vm, s, v, lookup_hash(vm, v)); }

bool set_discard(VM *vm, Set *s, Value v) { return discard_entry(vm, s, v, lookup_hash(vm, v)); }

bool set_next(Set *s, int64_t *pos, Value *key) {
    int64_t i = *pos;
    while (i <= s->mask && !e_active(&s->table[i])) i++;
    *pos = i + 1;
    if (i > s->mask) return false;
    *key = s->table[i].key;
    return true;
}

/* Entry-level iteration (keeps the stored hash). */
static SetEntry *next_entry(Set *s, int64_t *pos) {
    int64_t i = *pos;
    while (i <= s->mask && !e_active(&s->table[i])) i++;
    *pos = i + 1;
    return i > s->mask ? NULL : &s->table[i];
}

/* ======================================================= bulk operations */

/* so |= other, for a set other (CPython's set_merge). */
static void merge(VM *vm, Set *so, Set *other) {
    if (other == so || other->used == 0) return;
    if ((so->fill + other->used) * 5 >= so->mask * 3) table_resize(vm, so, (so->used + other->used) * 2);
    if (so->fill == 0 && so->mask == other->mask && other->fill == other->used) {
        memcpy(so->table, other->table, (size_t)(other->mask + 1) * sizeof(SetEntry));
        so->fill = other->fill;
        so->used = other->used;
        return;
    }
    if (so->fill == 0) {
        so->fill = so->used = other->used;
        for (int64_t i = 0; i <= other->mask; i++)
            if (e_active(&other->table[i]))
                insert_clean(so->table, (uint64_t)so->mask, other->table[i].key, other->table[i].hash);
        return;
    }
    for (int64_t i = 0; i <= other->mask; i++) {
        if (i > other->mask) break;
        SetEntry e = other->table[i];
        if (e_active(&e)) add_entry(vm, so, e.key, e.hash);
    }
}

/* so |= iterable (CPython's set_update_internal). */
/* A key whose hashing and comparing run no code of the program. */
static bool plain_key(VM *vm, Value x) { return IS_INT(x) || IS_BOOL(x) || IS_FLOAT(x) || IS_NONE(x) || IS_STR(vm, x); }

/* fresh: so is empty and not yet visible to any code (set(), frozenset()),
** so a generator may run ahead in batches (gen_batch.h) while every key
** added so far is plain: adding a plain key to such a set runs no code. */
static void update(VM *vm, Set *so, Value other, bool fresh) {
    if (ctr_is_anyset(vm, other)) {
        merge(vm, so, as_set(other));
        return;
    }
    if (ctr_is(other, vm->t_dict)) {
        Dict *d = AS_DICT(other);
        if ((so->fill + d->count) * 5 >= so->mask * 3) table_resize(vm, so, (so->used + d->count) * 2);
        for (int64_t i = 0; i < d->nentries; i++) {
            DictEntry e = d->entries[i];
            if (!IS_EMPTY(e.key)) add_entry(vm, so, e.key, e.hash);
        }
        return;
    }
    if (ctr_is(other, vm->t_list) || ctr_is(other, vm->t_tuple)) {
        bool lst = ctr_is(other, vm->t_list);
        for (int64_t i = 0;; i++) {
            int64_t n = lst ? AS_LIST(other)->len : AS_TUPLE(other)->len;
            if (i >= n) break;
            Value x = lst ? AS_LIST(other)->items[i] : AS_TUPLE(other)->items[i];
            add_entry(vm, so, x, add_hash(vm, x));
        }
        return;
    }
    Value it = vm_iter(vm, other);
    vm_push_root(vm, it);
    vm_push_root(vm, NONE_VAL);
    int32_t slot = vm->nroots - 1;
    Value x;
    if (fresh && gen_batchable(vm, it)) {
        GenIter gi;
        gen_iter_init(vm, &gi, it);
        bool plain = true;
        for (;;) {
            gi.batch.accept = plain ? GEN_TAKE_HASHABLE : 0;
            if (!gen_iter_next(vm, &gi, &x)) break;
            vm->roots[slot] = x;
            if (plain && !plain_key(vm, x)) plain = false;
            add_entry(vm, so, x, add_hash(vm, x));
        }
    } else {
        while (vm_next(vm, it, &x)) {
            vm->roots[slot] = x;
            add_entry(vm, so, x, add_hash(vm, x));
        }
    }
    vm_pop_roots(vm, 2);
}

void set_update(VM *vm, Set *so, Value other) { update(vm, so, other, false); }

Set *set_from(VM *vm, Type *type, Value iterable) {
    Set *s = set_alloc(vm, type);
    vm_push_root(vm, OBJ_VAL(s));
    update(vm, s, iterable, true);
    vm_pop_roots(vm, 1);
    return s;
}

Set *set_const_frozen(VM *vm, int64_t n, const Value *items) {
    Set *f0 = set_alloc(vm, vm->t_frozenset);
    for (int64_t i = 0; i < n; i++) add_entry(vm, f0, items[i], add_hash(vm, items[i]));
    Set *f = set_alloc(vm, vm->t_frozenset);
    int64_t pos = 0;
    SetEntry *e;
    while ((e = next_entry(f0, &pos))) add_entry(vm, f, e->key, e->hash);
    return f;
}

/* A copy of so with the base type (set / frozenset) of so. */
static Set *copy_base(VM *vm, Set *so) {
    Set *r = set_alloc(vm, base_type(vm, so));
    merge(vm, r, so);
    return r;
}

/* Calls fn(vm, so, x, hash) for each element of any iterable other (sets
** and dicts reuse their stored hashes). */
typedef void (*ElemFn)(VM *vm, Set *so, Value x, int64_t hash, void *ud);

static void for_each(VM *vm, Set *so, Value other, ElemFn fn, void *ud, bool lookup) {
    if (ctr_is_anyset(vm, other)) {
        Set *o = as_set(other);
        int64_t pos = 0;
        SetEntry *e;
        while ((e = next_entry(o, &pos))) {
            SetEntry copy = *e;
            vm_push_root(vm, copy.key);
            fn(vm, so, copy.key, copy.hash, ud);
            vm_pop_roots(vm, 1);
        }
        return;
    }
    if (ctr_is(other, vm->t_dict)) {
        Dict *d = AS_DICT(other);
        for (int64_t i = 0; i < d->nentries; i++) {
            DictEntry e = d->entries[i];
            if (IS_EMPTY(e.key)) continue;
            vm_push_root(vm, e.key);
            fn(vm, so, e.key, e.hash, ud);
            vm_pop_roots(vm, 1);
        }
        return;
    }
    Value it = vm_iter(vm, other);
    vm_push_root(vm, it);
    vm_push_root(vm, NONE_VAL);
    int32_t slot = vm->nroots - 1;
    Value x;
    while (vm_next(vm, it, &x)) {
        vm->roots[slot] = x;
        fn(vm, so, x, lookup ? lookup_hash(vm, x) : add_hash(vm, x), ud);
    }
    vm_pop_roots(vm, 2);
}

static void add_if_in(VM *vm, Set *so, Value x, int64_t hash, void *ud) {
    Set *result = ud;
    if (contains_entry(vm, so, x, hash)) add_entry(vm, result, x, hash);
}

/* so & other (CPython's set_intersection): iterates the smaller set. */
Set *set_intersect(VM *vm, Set *so, Value other) {
    if (IS_OBJ(other) && AS_OBJ(other) == &so->obj) return copy_base(vm, so);
    Set *result = set_alloc(vm, base_type(vm, so));
    vm_push_root(vm, OBJ_VAL(result));
    vm_push_root(vm, OBJ_VAL(so));
    if (ctr_is_anyset(vm, other) && as_set(other)->used > so->used) {
        Set *t = so;
        so = as_set(other);
        other = OBJ_VAL(t);
    }
    if (ctr_is_anyset(vm, other)) {
        for_each(vm, so, other, add_if_in, result, true);
    } else {
        /* a non-set iterable: hashes computed by add_hash semantics */
        for_each(vm, so, other, add_if_in, result, false);
    }
    vm_pop_roots(vm, 2);
    return result;
}

static void discard_cb(VM *vm, Set *so, Value x, int64_t hash, void *ud) {
    (void)ud;
    discard_entry(vm, so, x, hash);
}

/* so -= other (CPython's set_difference_update_internal). */
void set_diff_update(VM *vm, Set *so, Value other) {
    if (IS_OBJ(other) && AS_OBJ(other) == &so->obj) {
        clear_internal(vm, so);
        return;
    }
    if (ctr_is_anyset(vm, other)) {
        Set *o = as_set(other);
        if ((o->used >> 3) > so->used) other = OBJ_VAL(set_intersect(vm, so, other));
        vm_push_root(vm, other);
        for_each(vm, so, other, discard_cb, NULL, true);
        vm_pop_roots(vm, 1);
    } else {
        for_each(vm, so, other, discard_cb, NULL, true);
    }
    if ((uint64_t)(so->fill - so->used) <= (uint64_t)so->mask / 4) return;
    table_resize(vm, so, so->used > 50000 ? so->used * 2 : so->used * 4);
}

static void symdiff_cb(VM *vm, Set *so, Value x, int64_t hash, void *ud) {
    (void)ud;
    if (!discard_entry(vm, so, x, hash)) add_entry(vm, so, x, hash);
}

/* so ^= other (CPython's set_symmetric_difference_update). */
void set_symdiff_update(VM *vm, Set *so, Value other) {
    if (IS_OBJ(other) && AS_OBJ(other) == &so->obj) {
        clear_internal(vm, so);
        return;
    }
    if (ctr_is(other, vm->t_dict) || ctr_is_anyset(vm, other)) {
        for_each(vm, so, other, symdiff_cb, NULL, false);
        return;
    }
    Set *o = set_from(vm, base_type(vm, so), other);
    vm_push_root(vm, OBJ_VAL(o));
    for_each(vm, so, OBJ_VAL(o), symdiff_cb, NULL, false);
    vm_pop_roots(vm, 1);
}

/* so - other (CPython's set_difference). */
static Set *difference(VM *vm, Set *so, Value other) {
    int64_t other_size;
    if (ctr_is_anyset(vm, other)) other_size = as_set(other)->used;
    else if (ctr_is(other, vm->t_dict)) other_size = AS_DICT(other)->count;
    else other_size = -1;
    if (other_size < 0 || (so->used >> 2) > other_size) {
        Set *r = copy_base(vm, so);
        vm_push_root(vm, OBJ_VAL(r));
        set_diff_update(vm, r, other);
        vm_pop_roots(vm, 1);
        return r;
    }
    Set *result = set_alloc(vm, base_type(vm, so));
    vm_push_root(vm, OBJ_VAL(result));
    int64_t pos = 0;
    SetEntry *e;
    while ((e = next_entry(so, &pos))) {
        SetEntry c = *e;
        vm_push_root(vm, c.key);
        bool in;
        if (ctr_is(other, vm->t_dict)) {
            Value v;
            in = dict_get(vm, AS_DICT(other), c.key, &v);
        } else {
            in = contains_entry(vm, as_set(other), c.key, c.hash);
        }
        if (!in) add_entry(vm, result, c.key, c.hash);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return result;
}

/* Swaps the contents of two sets (intersection_update). */
static void swap_bodies(Set *a, Set *b) {
    Set t = *a;
    a->table = b->table;
    a->mask = b->mask;
    a->fill = b->fill;
    a->used = b->used;
    b->table = t.table;
    b->mask = t.mask;
    b->fill = t.fill;
    b->used = t.used;
}

static bool issubset(VM *vm, Set *so, Value other) {
    if (!ctr_is_anyset(vm, other)) {
        Set *tmp = set_from(vm, vm->t_set, other);
        vm_push_root(vm, OBJ_VAL(tmp));
        bool r = issubset(vm, so, OBJ_VAL(tmp));
        vm_pop_roots(vm, 1);
        return r;
    }
    Set *o = as_set(other);
    if (so->used > o->used) return false;
    int64_t pos = 0;
    SetEntry *e;
    while ((e = next_entry(so, &pos))) {
        SetEntry c = *e;
        vm_push_root(vm, c.key);
        bool in = contains_entry(vm, o, c.key, c.hash);
        vm_pop_roots(vm, 1);
        if (!in) return false;
    }
    return true;
}

static bool issuperset(VM *vm, Set *so, Value other) {
    if (ctr_is_anyset(vm, other)) return issubset(vm, as_set(other), OBJ_VAL(so));
    Value it = vm_iter(vm, other);
    vm_push_root(vm, it);
    Value x;
    bool ok = true;
    while (ok && vm_next(vm, it, &x)) {
        vm_push_root(vm, x);
        ok = set_contains(vm, so, x);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return ok;
}

static bool isdisjoint(VM *vm, Set *so, Value other) {
    if (ctr_is_anyset(vm, other)) {
        Set *o = as_set(other);
        if (o->used > so->used) {
            Set *t = so;
            so = o;
            o = t;
        }
        int64_t pos = 0;
        SetEntry *e;
        while ((e = next_entry(o, &pos))) {
            SetEntry c = *e;
            vm_push_root(vm, c.key);
            bool in = contains_entry(vm, so, c.key, c.hash);
            vm_pop_roots(vm, 1);
            if (in) return false;
        }
        return true;
    }
    Value it = vm_iter(vm, other);
    vm_push_root(vm, it);
    Value x;
    bool ok = true;
    while (ok && vm_next(vm, it, &x)) {
        vm_push_root(vm, x);
        ok = !set_contains(vm, so, x);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 1);
    return ok;
}

/* ================================================================= slots */

static Value set_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    bool frozen = type_is_subtype(cls, vm->t_frozenset);
    const char *name = frozen ? "frozenset" : "set";
    arg_no_kwargs(vm, name, kwargs);
    ctr_check_args(vm, name, argc, 0, 1);
    if (frozen && cls == vm->t_frozenset && argc == 1 && IS_OBJ(argv[0]) &&
        AS_OBJ(argv[0])->type == vm->t_frozenset)
        return argv[0];
    Set *s = set_alloc(vm, cls);
    if (argc == 1) {
        vm_push_root(vm, OBJ_VAL(s));
        update(vm, s, argv[0], true);
        vm_pop_roots(vm, 1);
    }
    return OBJ_VAL(s);
}

static void set_repr_body(VM *vm, Value self, StrBuf *sb) {
    Set *s = as_set(self);
    bool exact = AS_OBJ(self)->type == vm->t_set;
    if (!exact) sb_printf(sb, "%s(", vm_type_name(vm, self));
    List *keys = list_new(vm, s->used);
    int64_t pos = 0;
    Value k;
    while (set_next(s, &pos, &k)) list_append(vm, keys, k);
    vm_push_root(vm, OBJ_VAL(keys));
    sb_putc(sb, '{');
    for (int64_t i = 0; i < keys->len; i++) {
        if (i) sb_appends(sb, ", ");
        ctr_repr_value(vm, sb, keys->items[i]);
    }
    sb_putc(sb, '}');
    vm_pop_roots(vm, 1);
    if (!exact) sb_putc(sb, ')');
}

static Value set_repr(VM *vm, Value self) {
    Set *s = as_set(self);
    if (AS_OBJ(self)->flags & OBJ_FLAG_REPR_BUSY) return STR_VAL(str_printf(vm, "%s(...)", vm_type_name(vm, self)));
    if (s->used == 0) return STR_VAL(str_printf(vm, "%s()", vm_type_name(vm, self)));
    bool simple = true;
    for (int64_t i = 0; i <= s->mask && simple; i++)
        if (e_active(&s->table[i])) simple = ctr_simple(vm, s->table[i].key);
    return ctr_repr(vm, self, set_repr_body, simple);
}

static Value set_compare(VM *vm, CmpOp op, Value a, Value b) {
    if (!ctr_is_anyset(vm, a) || !ctr_is_anyset(vm, b)) return EMPTY_VAL;
    Set *x = as_set(a), *y = as_set(b);
    switch (op) {
    case CMP_EQ:
    case CMP_NE: {
        bool eq = x->used == y->used && issubset(vm, x, b);
        return BOOL_VAL(op == CMP_EQ ? eq : !eq);
    }
    case CMP_LE: return BOOL_VAL(issubset(vm, x, b));
    case CMP_GE: return BOOL_VAL(issuperset(vm, x, b));
    case CMP_LT: return BOOL_VAL(x->used < y->used && issubset(vm, x, b));
    case CMP_GT: return BOOL_VAL(x->used > y->used && issuperset(vm, x, b));
    default: return EMPTY_VAL;
    }
}

static Value set_binop_slot(VM *vm, BinOp op, Value a, Value b) {
    if (!ctr_is_anyset(vm, a) || !ctr_is_anyset(vm, b)) return EMPTY_VAL;
    Set *so = as_set(a);
    Set *r;
    switch (op) {
    case BINOP_OR:
        r = copy_base(vm, so);
        if (AS_OBJ(a) != AS_OBJ(b)) {
            vm_push_root(vm, OBJ_VAL(r));
            set_update(vm, r, b);
            vm_pop_roots(vm, 1);
        }
        return OBJ_VAL(r);
    case BINOP_AND: return OBJ_VAL(set_intersect(vm, so, b));
    case BINOP_SUB: return OBJ_VAL(difference(vm, so, b));
    case BINOP_XOR:
        r = set_alloc(vm, base_type(vm, so));
        vm_push_root(vm, OBJ_VAL(r));
        set_update(vm, r, b);
        set_symdiff_update(vm, r, a);
        vm_pop_roots(vm, 1);
        return OBJ_VAL(r);
    default: return EMPTY_VAL;
    }
}

static void intersection_update(VM *vm, Set *so, Value other) {
    Set *tmp = set_intersect(vm, so, other);
    swap_bodies(so, tmp);
}

static Value set_inplace(VM *vm, BinOp op, Value a, Value b) {
    if (!is_set(vm, a) || !ctr_is_anyset(vm, b)) return EMPTY_VAL;
    Set *so = as_set(a);
    switch (op) {
    case BINOP_OR: set_update(vm, so, b); return a;
    case BINOP_AND: intersection_update(vm, so, b); return a;
    case BINOP_SUB: set_diff_update(vm, so, b); return a;
    case BINOP_XOR: set_symdiff_update(vm, so, b); return a;
    default: return EMPTY_VAL;
    }
}

static int64_t set_len(VM *vm, Value self) {
    (void)vm;
    return as_set(self)->used;
}

static bool set_contains_slot(VM *vm, Value self, Value item) { return set_contains(vm, as_set(self), item); }

static bool set_truthy(VM *vm, Value self) {
    (void)vm;
    return as_set(self)->used > 0;
}

static void set_mark(VM *vm, Obj *o) {
    Set *s = (Set *)o;
    for (int64_t i = 0; i <= s->mask; i++)
        if (e_active(&s->table[i])) gc_mark_value(vm, s->table[i].key);
}

static void set_finalize(VM *vm, Obj *o) {
    Set *s = (Set *)o;
    free_table(vm, s);
    s->table = NULL;
    s->mask = -1;
    s->fill = s->used = 0;
}

static Value set_iter(VM *vm, Value self) {
    SetIter *it = gc_alloc_obj(vm, vm->t_set_iter, sizeof(SetIter));
    it->set = as_set(self);
    it->pos = 0;
    it->used = it->set->used;
    return OBJ_VAL(it);
}

static bool setiter_next(VM *vm, Value self, Value *out) {
    SetIter *it = (SetIter *)AS_OBJ(self);
    Set *s = it->set;
    if (!s) return false;
    if (it->used != s->used) {
        it->used = -1;
        vm_raise_kind(vm, RuntimeError, "Set changed size during iteration");
    }
    if (set_next(s, &it->pos, out)) return true;
    it->set = NULL;
    return false;
}

static void setiter_mark(VM *vm, Obj *o) { gc_mark_obj(vm, (Obj *)((SetIter *)o)->set); }

/* ============================================================== methods */

static Set *self_set(Value *argv) { return as_set(argv[0]); }

static Value m_add(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.add", kwargs);
    arg_count(vm, "set.add", argc - 1, 1, 1);
    set_add(vm, self_set(argv), argv[1]);
    return NONE_VAL;
}

static Value m_remove(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.remove", kwargs);
    arg_count(vm, "set.remove", argc - 1, 1, 1);
    if (!set_discard(vm, self_set(argv), argv[1])) vm_throw(vm, exc_new(vm, vm->exc[EXC_KeyError], 1, &argv[1]));
    return NONE_VAL;
}

static Value m_discard(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.discard", kwargs);
    arg_count(vm, "set.discard", argc - 1, 1, 1);
    set_discard(vm, self_set(argv), argv[1]);
    return NONE_VAL;
}

/* CPython's set_pop: scans from the finger left by the previous pop. */
static Value m_pop(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.pop", kwargs);
    arg_count(vm, "set.pop", argc - 1, 0, 0);
    Set *so = self_set(argv);
    if (so->used == 0) {
        Value msg = STR_VAL(str_cstr(vm, "pop from an empty set"));
        vm_throw(vm, exc_new(vm, vm->exc[EXC_KeyError], 1, &msg));
    }
    int64_t i = so->finger & so->mask;
    while (!e_active(&so->table[i])) {
        i++;
        if (i > so->mask) i = 0;
    }
    Value key = so->table[i].key;
    e_make_dummy(&so->table[i]);
    so->used--;
    so->finger = i + 1;
    return key;
}

static Value m_clear(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.clear", kwargs);
    arg_count(vm, "set.clear", argc - 1, 0, 0);
    clear_internal(vm, self_set(argv));
    return NONE_VAL;
}

static Value m_copy(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "copy", kwargs);
    arg_count(vm, "copy", argc - 1, 0, 0);
    if (IS_OBJ(argv[0]) && AS_OBJ(argv[0])->type == vm->t_frozenset) return argv[0];
    return OBJ_VAL(copy_base(vm, self_set(argv)));
}

static Value m_update(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.update", kwargs);
    Set *so = self_set(argv);
    for (int i = 1; i < argc; i++) set_update(vm, so, argv[i]);
    return NONE_VAL;
}

static Value m_union(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "union", kwargs);
    Set *so = self_set(argv);
    Set *r = copy_base(vm, so);
    vm_push_root(vm, OBJ_VAL(r));
    for (int i = 1; i < argc; i++)
        if (!(IS_OBJ(argv[i]) && AS_OBJ(argv[i]) == &so->obj)) set_update(vm, r, argv[i]);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

/* so.intersection(*others): chained pairwise intersections. */
static Set *intersection_multi(VM *vm, Set *so, int n, Value *others) {
    if (n == 0) return copy_base(vm, so);
    Set *r = so;
    for (int i = 0; i < n; i++) {
        vm_push_root(vm, OBJ_VAL(r));
        Set *nr = set_intersect(vm, r, others[i]);
        vm_pop_roots(vm, 1);
        r = nr;
    }
    return r;
}

static Value m_intersection(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "intersection", kwargs);
    return OBJ_VAL(intersection_multi(vm, self_set(argv), argc - 1, argv + 1));
}

static Value m_intersection_update(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.intersection_update", kwargs);
    Set *so = self_set(argv);
    swap_bodies(so, intersection_multi(vm, so, argc - 1, argv + 1));
    return NONE_VAL;
}

static Value m_difference(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "difference", kwargs);
    Set *so = self_set(argv);
    if (argc == 1) return OBJ_VAL(copy_base(vm, so));
    Set *r = difference(vm, so, argv[1]);
    vm_push_root(vm, OBJ_VAL(r));
    for (int i = 2; i < argc; i++) set_diff_update(vm, r, argv[i]);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

static Value m_difference_update(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.difference_update", kwargs);
    Set *so = self_set(argv);
    for (int i = 1; i < argc; i++) set_diff_update(vm, so, argv[i]);
    return NONE_VAL;
}

static Value m_symmetric_difference(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "symmetric_difference", kwargs);
    arg_count(vm, "symmetric_difference", argc - 1, 1, 1);
    Set *so = self_set(argv);
    Set *r = set_from(vm, base_type(vm, so), argv[1]);
    vm_push_root(vm, OBJ_VAL(r));
    set_symdiff_update(vm, r, argv[0]);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(r);
}

static Value m_symmetric_difference_update(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "set.symmetric_difference_update", kwargs);
    arg_count(vm, "set.symmetric_difference_update", argc - 1, 1, 1);
    set_symdiff_update(vm, self_set(argv), argv[1]);
    return NONE_VAL;
}

static Value m_issubset(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "issubset", kwargs);
    arg_count(vm, "issubset", argc - 1, 1, 1);
    return BOOL_VAL(issubset(vm, self_set(argv), argv[1]));
}

static Value m_issuperset(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "issuperset", kwargs);
    arg_count(vm, "issuperset", argc - 1, 1, 1);
    return BOOL_VAL(issuperset(vm, self_set(argv), argv[1]));
}

static Value m_isdisjoint(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "isdisjoint", kwargs);
    arg_count(vm, "isdisjoint", argc - 1, 1, 1);
    return BOOL_VAL(isdisjoint(vm, self_set(argv), argv[1]));
}

/* ================================================================= init */

static void common_slots(Type *t) {
    t->new_ = set_new_slot;
    t->repr = set_repr;
    t->compare = set_compare;
    t->binop = set_binop_slot;
    t->len = set_len;
    t->contains = set_contains_slot;
    t->iter = set_iter;
    t->truthy = set_truthy;
    t->mark = set_mark;
    t->finalize = set_finalize;
}

static void common_methods(VM *vm, Type *t) {
    type_add_method(vm, t, "copy", m_copy);
    type_add_method(vm, t, "union", m_union);
    type_add_method(vm, t, "intersection", m_intersection);
    type_add_method(vm, t, "difference", m_difference);
    type_add_method(vm, t, "symmetric_difference", m_symmetric_difference);
    type_add_method(vm, t, "issubset", m_issubset);
    type_add_method(vm, t, "issuperset", m_issuperset);
    type_add_method(vm, t, "isdisjoint", m_isdisjoint);
}

void set_init(VM *vm) {
    Type *s = vm->t_set, *f = vm->t_frozenset;
    common_slots(s);
    s->hash = ctr_unhashable;
    s->inplace = set_inplace;
    common_slots(f);
    f->hash = frozenset_hash;

    common_methods(vm, s);
    common_methods(vm, f);
    type_add_method(vm, s, "add", m_add);
    type_add_method(vm, s, "remove", m_remove);
    type_add_method(vm, s, "discard", m_discard);
    type_add_method(vm, s, "pop", m_pop);
    type_add_method(vm, s, "clear", m_clear);
    type_add_method(vm, s, "update", m_update);
    type_add_method(vm, s, "intersection_update", m_intersection_update);
    type_add_method(vm, s, "difference_update", m_difference_update);
    type_add_method(vm, s, "symmetric_difference_update", m_symmetric_difference_update);

    Type *it = vm->t_set_iter = type_new_builtin(vm, "set_iterator", vm->t_object, 0);
    it->iter = ctr_iter_self;
    it->next = setiter_next;
    it->mark = setiter_mark;
}
