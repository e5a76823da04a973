/*
** sort.c — list.sort(): a stable merge sort using only "<", like CPython.
**
** During the sort the list is emptied (its items live in a rooted holder
** list), so user code run by a comparison or the key function sees an
** empty list, and any change it makes is detected afterwards ("list
** modified during sort"). The sort permutes an array of indices, never the
** items themselves, so an exception from a comparison leaves every item in
** place and the list is restored intact.
**
** Keys that are all ints, all floats, all numbers or all strs are compared
** in C, and so are tuples of ints, floats and strs (sorted(key=lambda r:
** (r.year, r.name)) as far as their items are of one kind at each
** position; anything else goes through vm_compare.
*/
#include <math.h>
#include <string.h>

#include "container.h"

#define INSERTION_RUN 24

typedef enum KeyKind { KEYS_GENERIC, KEYS_INT, KEYS_FLOAT, KEYS_NUMBER, KEYS_STR, KEYS_TUPLE } KeyKind;

typedef struct SortCtx {
    List *holder;   /* the items, detached from the list being sorted */
    List *keys;     /* key(item) for each item, or NULL (items are the keys) */
    Value keyfn;
    bool reverse;
    bool reversed; /* the items are currently in reversed order */
    int64_t *perm, *tmp; /* gc_malloc'd index arrays */
    int64_t n;
} SortCtx;

static Value *key_array(SortCtx *c) { return c->keys ? c->keys->items : c->holder->items; }

static KeyKind classify(VM *vm, const Value *k, int64_t n) {
    bool ints = true, floats = true, nums = true, strs = true, tuples = true;
    for (int64_t i = 0; i < n && (nums || strs || tuples); i++) {
        Value v = k[i];
        if (!IS_INTLIKE(v)) ints = false;
        if (!IS_FLOAT(v)) floats = false;
        if (!IS_NUMBER(v)) nums = false;
        if (!IS_STR(vm, v)) strs = false;
        if (!(IS_OBJ(v) && AS_OBJ(v)->type == vm->t_tuple)) tuples = false;
    }
    if (ints) return KEYS_INT;
    if (floats) return KEYS_FLOAT;
    if (nums) return KEYS_NUMBER;
    if (strs) return KEYS_STR;
    if (tuples) return KEYS_TUPLE;
    return KEYS_GENERIC;
}

static bool str_lt(Str *a, Str *b) {
    int64_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->chars, b->chars, (size_t)n);
    return c < 0 || (c == 0 && a->len < b->len);
}

static bool generic_lt(VM *vm, Value a, Value b) {
    Value r = vm_compare(vm, CMP_LT, a, b);
    return IS_BOOL(r) ? AS_BOOL(r) : vm_truthy(vm, r);
}

/* a < b for two tuples: item by item while both items are ints, both
** floats (not NaN) or both strs, which compare in C; at the first other
** pair the whole comparison is vm_compare's (so its errors and its rules
** for mixed kinds are CPython's). */
static bool tuple_lt(VM *vm, Value av, Value bv) {
    Tuple *a = AS_TUPLE(av), *b = AS_TUPLE(bv);
    int64_t n = a->len < b->len ? a->len : b->len;
    for (int64_t i = 0; i < n; i++) {
        Value x = a->items[i], y = b->items[i];
        if (IS_INTLIKE(x) && IS_INTLIKE(y)) {
            if (AS_INTLIKE(x) != AS_INTLIKE(y)) return AS_INTLIKE(x) < AS_INTLIKE(y);
        } else if (IS_FLOAT(x) && IS_FLOAT(y) && !isnan(AS_FLOAT(x)) && !isnan(AS_FLOAT(y))) {
            if (AS_FLOAT(x) != AS_FLOAT(y)) return AS_FLOAT(x) < AS_FLOAT(y);
        } else if (IS_STR(vm, x) && IS_STR(vm, y)) {
            Str *s = AS_STR(x), *t = AS_STR(y);
            if (s != t && (s->len != t->len || memcmp(s->chars, t->chars, (size_t)s->len) != 0)) return str_lt(s, t);
        } else {
            return generic_lt(vm, av, bv);
        }
    }
    return a->len < b->len;
}

/* One merge sort over the index array a, for a given "<" on indices.
** Runs of INSERTION_RUN are insertion-sorted, then merged bottom-up; a
** merge is skipped when the two runs are already in order. */
#define DEFINE_SORT(NAME, LT)                                                       \
    static void NAME(VM *vm, const Value *k, int64_t *a, int64_t *tmp, int64_t n) { \
        (void)vm, (void)k;                                                          \
        for (int64_t lo = 0; lo < n; lo += INSERTION_RUN) {                         \
            int64_t hi = lo + INSERTION_RUN < n ? lo + INSERTION_RUN : n;           \
            for (int64_t i = lo + 1; i < hi; i++) {                                 \
                int64_t x = a[i], j = i;                                            \
                while (j > lo && LT(x, a[j - 1])) {                                 \
                    a[j] = a[j - 1];                                                \
                    j--;                                                            \
                }                                                                   \
                a[j] = x;                                                           \
            }                                                                       \
        }                                                                           \
        for (int64_t w = INSERTION_RUN; w < n; w *= 2) {                            \
            for (int64_t lo = 0; lo + w < n; lo += 2 * w) {                         \
                int64_t mid = lo + w, hi = mid + w < n ? mid + w : n;               \
                if (!LT(a[mid], a[mid - 1])) continue;                              \
                int64_t nl = mid - lo;                                              \
                memcpy(tmp, a + lo, (size_t)nl * sizeof(int64_t));                  \
                int64_t i = 0, j = mid, o = lo;                                     \
                while (i < nl && j < hi) {                                          \
                    if (LT(a[j], tmp[i])) a[o++] = a[j++];                          \
                    else a[o++] = tmp[i++];                                         \
                }                                                                   \
                while (i < nl) a[o++] = tmp[i++];                                   \
            }                                                                       \
        }                                                                           \
    }

#define LT_INT(x, y) (AS_INTLIKE(k[x]) < AS_INTLIKE(k[y]))
#define LT_FLOAT(x, y) (AS_FLOAT(k[x]) < AS_FLOAT(k[y]))
#define LT_NUMBER(x, y) (AS_BOOL(num_compare(vm, CMP_LT, k[x], k[y])))
#define LT_STR(x, y) (str_lt(AS_STR(k[x]), AS_STR(k[y])))
#define LT_GENERIC(x, y) (generic_lt(vm, k[x], k[y]))
#define LT_TUPLE(x, y) (tuple_lt(vm, k[x], k[y]))

DEFINE_SORT(sort_int, LT_INT)
DEFINE_SORT(sort_float, LT_FLOAT)
DEFINE_SORT(sort_number, LT_NUMBER)
DEFINE_SORT(sort_str, LT_STR)
DEFINE_SORT(sort_generic, LT_GENERIC)
DEFINE_SORT(sort_tuple, LT_TUPLE)

static void reverse_values(Value *v, int64_t n) {
    for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
        Value t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* The protected part: keys, then the index sort, then the permutation. */
static void sort_body(VM *vm, void *ud) {
    SortCtx *c = ud;
    int64_t n = c->n;
    if (c->keys) {
        for (int64_t i = 0; i < n; i++) {
            Value item = c->holder->items[i];
            Value k = vm_call(vm, c->keyfn, 1, &item);
            list_append(vm, c->keys, k);
        }
    }
    if (n < 2) return;
    if (c->reverse) {
        reverse_values(c->holder->items, n);
        if (c->keys) reverse_values(c->keys->items, n);
        c->reversed = true;
    }
    c->perm = gc_malloc(vm, (size_t)n * sizeof(int64_t));
    c->tmp = gc_malloc(vm, (size_t)n * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) c->perm[i] = i;
    const Value *k = key_array(c);
    switch (classify(vm, k, n)) {
    case KEYS_INT: sort_int(vm, k, c->perm, c->tmp, n); break;
    case KEYS_FLOAT: sort_float(vm, k, c->perm, c->tmp, n); break;
    case KEYS_NUMBER: sort_number(vm, k, c->perm, c->tmp, n); break;
    case KEYS_STR: sort_str(vm, k, c->perm, c->tmp, n); break;
    case KEYS_TUPLE: sort_tuple(vm, k, c->perm, c->tmp, n); break;
    default: sort_generic(vm, k, c->perm, c->tmp, n); break;
    }
    /* apply the permutation (no user code from here on) */
    Value *sorted = gc_malloc(vm, (size_t)n * sizeof(Value));
    for (int64_t i = 0; i < n; i++) sorted[i] = c->holder->items[c->perm[i]];
    memcpy(c->holder->items, sorted, (size_t)n * sizeof(Value));
    gc_free(vm, sorted, (size_t)n * sizeof(Value));
    if (c->reversed) reverse_values(c->holder->items, n);
    c->reversed = false;
}

void list_sort(VM *vm, List *l, Value key, bool reverse) {
    bool has_key = !IS_EMPTY(key) && !IS_NONE(key);
    if (l->len < 2 && !has_key) return;
    SortCtx c = {0};
    c.n = l->len;
    c.keyfn = key;
    c.reverse = reverse;
    c.holder = list_new(vm, 0);
    c.holder->items = l->items;
    c.holder->len = l->len;
    c.holder->cap = l->cap;
    l->items = NULL;
    l->len = l->cap = 0;
    vm_push_root(vm, OBJ_VAL(c.holder));
    vm_push_root(vm, OBJ_VAL(l));
    if (has_key) {
        vm_push_root(vm, key);
        c.keys = list_new(vm, c.n);
        vm_push_root(vm, OBJ_VAL(c.keys));
    }
    bool ok = vm_pcall(vm, sort_body, &c);
    gc_free(vm, c.perm, (size_t)c.n * sizeof(int64_t));
    gc_free(vm, c.tmp, (size_t)c.n * sizeof(int64_t));
    if (c.reversed) reverse_values(c.holder->items, c.holder->len); /* failed midway */
    bool modified = l->items != NULL || l->len != 0;
    gc_free_block(vm, l->items, (size_t)l->cap * sizeof(Value)); /* list.c's item arrays */
    l->items = c.holder->items;
    l->len = c.holder->len;
    l->cap = c.holder->cap;
    c.holder->items = NULL;
    c.holder->len = c.holder->cap = 0;
    vm_pop_roots(vm, has_key ? 4 : 2);
    if (!ok) vm_rethrow(vm, vm->exc_value);
    if (modified) vm_raise_kind(vm, ValueError, "list modified during sort");
}
