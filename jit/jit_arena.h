/*
** jit_arena.h — memory of one inference result (private to jit/).
**
** Every JFunc of one jit_infer call (the kernel and all device-function
** specializations it reaches) lives in one JitArena; the root JFunc owns it
** and jf_free(root) releases all of it at once. JInfoMap maps AST nodes to
** their JInfo (open addressing on the node address).
*/
#ifndef GPY_JIT_ARENA_H
#define GPY_JIT_ARENA_H

#include "jit.h"

typedef struct JitArena JitArena;
struct JitArena {
    Arena *arena;        /* bump memory for JFuncs, JVars, JInfos, names */
    struct JFunc *root;  /* the JFunc jit_infer returned (owner) */
    struct JFunc **funcs; /* every specialization made (malloc'd), for cleanup and the cache */
    int nfuncs, funcs_cap;
};

typedef struct JInfoSlot {
    const AstNode *key;
    JInfo *info;
} JInfoSlot;

struct JInfoMap {
    JInfoSlot *slots; /* malloc'd; cap is a power of two */
    uint32_t cap, count;
};

/* NULL on out-of-memory. */
JitArena *ja_new(void);
void ja_free(JitArena *a);
/* Zeroed memory from the arena; NULL on out-of-memory. */
void *ja_alloc(JitArena *a, size_t size);
char *ja_strdup(JitArena *a, const char *s);
/* Records f in a->funcs; false on out-of-memory. */
bool ja_add_func(JitArena *a, struct JFunc *f);

/* The info of n, NULL when absent. */
JInfo *jim_get(const struct JInfoMap *m, const AstNode *n);
/* The info of n, created (zeroed, arena-allocated) when absent; NULL on OOM. */
JInfo *jim_put(struct JInfoMap *m, JitArena *a, const AstNode *n);
void jim_free(struct JInfoMap *m);

#endif
