/*
** jit_launch.c — the kernels a kernel launches (child[grid, block](args)),
** for the CPU device.
**
** On the GPU the children are .entry functions of the parent's PTX module.
** On the CPU device each launched kernel specialization is compiled as a
** kernel of its own (its own shared-memory layout, block loop or fibers),
** before the parent, whose code then names the child's JitKernel
** (lower_launch.c). The parent owns those JitKernels. A kernel that launches
** itself, or a kernel up the chain of compiles in progress (A launches B
** launches A), gets the JitKernel already being built, so recursion ends.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit_arena.h"
#include "target.h"

#define MAX_CHAIN 64 /* distinct kernels launching one another, one compile inside the next */

static bool push(void ***arr, int *n, int *cap, void *v) {
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 8;
        void **na = realloc(*arr, (size_t)nc * sizeof *na);
        if (!na) return false;
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = v;
    return true;
}

static bool same_spec(const JFunc *a, const JFunc *b) {
    if (a->fn != b->fn || a->nargs != b->nargs) return false;
    for (int i = 0; i < a->nargs; i++)
        if (a->argtypes[i] != b->argtypes[i]) return false; /* interned */
    return true;
}

/* Every function reachable from root by calls, and what they launch. */
static bool collect(JFunc *f, JFunc ***seen, int *nseen, int *capseen, JFunc ***launched, int *nl, int *capl) {
    for (int i = 0; i < *nseen; i++)
        if ((*seen)[i] == f) return true;
    if (!push((void ***)seen, nseen, capseen, f)) return false;
    for (int i = 0; i < f->nlaunches; i++) {
        bool have = false;
        for (int j = 0; j < *nl; j++)
            if ((*launched)[j] == f->launches[i]) have = true;
        if (!have && !push((void ***)launched, nl, capl, f->launches[i])) return false;
    }
    for (int i = 0; i < f->ncallees; i++)
        if (!collect(f->callees[i], seen, nseen, capseen, launched, nl, capl)) return false;
    return true;
}

bool jit_launches_kernels(JFunc *root) {
    JFunc **seen = NULL, **launched = NULL;
    int nseen = 0, capseen = 0, nl = 0, capl = 0;
    bool ok = collect(root, &seen, &nseen, &capseen, &launched, &nl, &capl);
    free(seen);
    free(launched);
    return !ok || nl > 0; /* out of memory: say yes, the safe answer */
}

bool jit_compile_children(VM *vm, JitKernel *k, const JitOptions *opts, JitChildMap *map, char *err,
                          size_t errsize) {
    JFunc **seen = NULL, **launched = NULL;
    int nseen = 0, capseen = 0, nl = 0, capl = 0;
    bool ok = collect(k->func, &seen, &nseen, &capseen, &launched, &nl, &capl);
    free(seen);
    if (!ok) {
        free(launched);
        snprintf(err, errsize, "out of memory");
        return false;
    }
    if (!nl) {
        free(launched);
        return true;
    }
    struct JitState *js = vm->jit; /* jit_compile_opts made it */
    const JitCompileChain *outer = js->compiling;
    JitCompileChain me = {k, outer};
    const JitCompileChain *chain = &me;
    int depth = 0;
    for (const JitCompileChain *c = chain; c; c = c->up) depth++;
    js->compiling = chain; /* the nested compiles below see k in progress */
    for (int i = 0; ok && i < nl; i++) {
        JFunc *child = launched[i];
        JitKernel *ck = NULL;
        for (const JitCompileChain *c = chain; c && !ck; c = c->up)
            if (same_spec(c->k->func, child)) ck = c->k;
        if (!ck) {
            if (depth >= MAX_CHAIN) {
                snprintf(err, errsize, "kernel '%s': kernels launching kernels nest more than %d distinct "
                         "specializations deep", k->func->name, MAX_CHAIN);
                ok = false;
                break;
            }
            /* a child's grid is never checked against 2^31 threads: general variant */
            JitOptions copts = opts ? *opts : (JitOptions){0};
            copts.narrow_index = false;
            ck = jit_compile_opts(vm, child->fn, child->nargs, child->argtypes, JIT_TARGET_CPU, 0, &copts, err,
                                  errsize);
            if (!ck) {
                ok = false;
                break;
            }
            int cap = k->nchildren; /* the capacity is not kept: push regrows (children are few) */
            if (!push((void ***)&k->children, &k->nchildren, &cap, ck)) {
                jit_kernel_free(vm, ck);
                ok = false;
                snprintf(err, errsize, "out of memory");
                break;
            }
        }
        int capf = map->cap, capk = map->cap, nf = map->n, nk = map->n;
        if (!push((void ***)&map->f, &nf, &capf, child) || !push((void ***)&map->k, &nk, &capk, ck)) {
            ok = false;
            snprintf(err, errsize, "out of memory");
            break;
        }
        map->n = nf;
        map->cap = capf;
    }
    js->compiling = outer;
    free(launched);
    return ok;
}
