/*
** gen_batch.h — generators consumed in bulk. A builtin that consumes a
** whole generator (list(), tuple(), set(), sum(), "".join() ...) would
** resume it once per item, and a resume from C (a nested interpreter
** entry, the registers copied in and out) costs several times the work of
** a simple generator body. Instead the consumer asks for a batch: the
** generator runs on, and each `yield` of a value the consumer can take
** without any effect a program could see (list.append of anything; a set
** add or a sum of a plain int, float or str...) lands in the batch and the
** generator continues at once, as if resumed with None. A value the
** consumer could not take silently (its __hash__ or __add__ may run code,
** or raise), or a full batch, suspends the generator as usual: it comes last
** in the batch, so the consumer sees every value in order and nothing runs
** ahead of a value whose consumption could be observed.
*/
#ifndef GPY_GEN_BATCH_H
#define GPY_GEN_BATCH_H

#include "vm.h"

#define GEN_BATCH_CAP 64

/* What the consumer takes silently (GenBatch.accept). */
enum {
    GEN_TAKE_ANY = 1,     /* every value: list/tuple building */
    GEN_TAKE_NUMBERS = 2, /* int, bool, float: sums */
    GEN_TAKE_STR = 4,     /* exact str: joins, set adds */
    GEN_TAKE_HASHABLE = 8, /* int, bool, float, None and exact str: set adds */
    GEN_TAKE_FALSY = 16,   /* the falsy ones of those: any() */
    GEN_TAKE_TRUTHY = 32   /* the truthy ones: all() */
};

typedef struct GenBatch {
    int n;      /* values in items, in the order yielded */
    int accept; /* GEN_TAKE_* bits */
    Value items[GEN_BATCH_CAP];
} GenBatch;

/* Whether v is a generator that gen_next_batch can drive (a plain
** generator: not a coroutine, not an async generator). */
bool gen_batchable(VM *vm, Value v);
/* Runs the generator for the next values, into b->items (b->n of them);
** returns b->n, 0 when the generator is exhausted. Exceptions propagate
** as from next(). The values are not rooted: consume them without entering
** the interpreter (the taken ones need nothing more; the last one may be any
** value and is to be handled as vm_next's result is). */
int gen_next_batch(VM *vm, Value gen, GenBatch *b);

/* An iteration that batches when the iterable is a generator: consumers
** loop on gen_iter_next as they would on vm_next, and set it.batch.accept
** before each call to what they take silently at that point. */
typedef struct GenIter {
    Value it;   /* the iterator; the consumer roots it */
    bool gen;   /* batching */
    int i;      /* next item of batch */
    GenBatch batch;
} GenIter;

static inline void gen_iter_init(VM *vm, GenIter *gi, Value iterator) {
    gi->it = iterator;
    gi->gen = gen_batchable(vm, iterator);
    gi->i = 0;
    gi->batch.n = 0;
    gi->batch.accept = 0;
}

static inline bool gen_iter_next(VM *vm, GenIter *gi, Value *out) {
    if (!gi->gen) return vm_next(vm, gi->it, out);
    if (gi->i == gi->batch.n) {
        gi->i = 0;
        if (gen_next_batch(vm, gi->it, &gi->batch) == 0) return false;
    }
    *out = gi->batch.items[gi->i++];
    return true;
}

/* The YIELD opcode's test (interp.c): true when v went into the batch. */
static inline bool gen_batch_take(VM *vm, GenBatch *b, Value v) {
    if (b->n >= GEN_BATCH_CAP - 1) return false;
    if (!(b->accept & GEN_TAKE_ANY)) {
        bool truth;
        int kind;
        if (IS_INT(v) || IS_BOOL(v) || IS_FLOAT(v)) {
            kind = GEN_TAKE_NUMBERS | GEN_TAKE_HASHABLE;
            truth = IS_FLOAT(v) ? AS_FLOAT(v) != 0.0 : IS_BOOL(v) ? AS_BOOL(v) : AS_INT(v) != 0;
        } else if (IS_NONE(v)) {
            kind = GEN_TAKE_HASHABLE;
            truth = false;
        } else if (IS_STR(vm, v)) {
            kind = GEN_TAKE_STR | GEN_TAKE_HASHABLE;
            truth = AS_STR(v)->len > 0;
        } else {
            return false;
        }
        kind |= truth ? GEN_TAKE_TRUTHY : GEN_TAKE_FALSY;
        if (!(b->accept & kind)) return false;
    }
    b->items[b->n++] = v;
    return true;
}

#endif
