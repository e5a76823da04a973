/*
** gen_batch.c — generators consumed in bulk (see gen_batch.h). The YIELD
** opcode (interp.c) does the taking; this file arms it around one resume.
*/
#include "gen_batch.h"

#include "interp.h"

bool gen_batchable(VM *vm, Value v) { return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_generator; }

int gen_next_batch(VM *vm, Value gen, GenBatch *b) {
    Generator *g = (Generator *)AS_OBJ(gen);
    Value v;
    b->n = 0;
    /* gen_resume arms g->batch once its own checks have passed; the batch
    ** is disarmed when the generator yields, returns or raises (gen_finish) */
    bool yielded = gen_resume_batch(vm, g, b, &v);
    g->batch = NULL;
    if (yielded) b->items[b->n++] = v;
    return b->n;
}
