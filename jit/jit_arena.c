/*
** jit_arena.c — the arena and the node→info map behind a JFunc.
*/
#include <stdlib.h>
#include <string.h>

#include "jit_arena.h"

JitArena *ja_new(void) {
    JitArena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->arena = arena_new();
    if (!a->arena) {
        free(a);
        return NULL;
    }
    return a;
}

/* Frees the info maps of every specialization, then the arena itself. */
void ja_free(JitArena *a) {
    if (!a) return;
    for (int i = 0; i < a->nfuncs; i++) {
        if (a->funcs[i]->infos) jim_free(a->funcs[i]->infos);
    }
    free(a->funcs);
    arena_free(a->arena);
    free(a);
}

void *ja_alloc(JitArena *a, size_t size) {
    return arena_alloc(a->arena, size);
}

char *ja_strdup(JitArena *a, const char *s) {
    size_t n = strlen(s);
    char *d = ja_alloc(a, n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

bool ja_add_func(JitArena *a, JFunc *f) {
    if (a->nfuncs == a->funcs_cap) {
        int cap = a->funcs_cap ? a->funcs_cap * 2 : 8;
        JFunc **p = realloc(a->funcs, (size_t)cap * sizeof *p);
        if (!p) return false;
        a->funcs = p;
        a->funcs_cap = cap;
    }
    a->funcs[a->nfuncs++] = f;
    return true;
}

/* Fibonacci hashing of the node address (nodes are 8-byte aligned). */
static uint32_t slot_of(const AstNode *n, uint32_t mask) {
    uint64_t h = (uint64_t)(uintptr_t)n * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & mask;
}

JInfo *jim_get(const struct JInfoMap *m, const AstNode *n) {
    if (!m || !m->cap) return NULL;
    uint32_t mask = m->cap - 1;
    for (uint32_t i = slot_of(n, mask);; i = (i + 1) & mask) {
        if (m->slots[i].key == n) return m->slots[i].info;
        if (!m->slots[i].key) return NULL;
    }
}

/* Doubles the table (load factor stays below one half). */
static bool grow(struct JInfoMap *m) {
    uint32_t cap = m->cap ? m->cap * 2 : 64;
    JInfoSlot *s = calloc(cap, sizeof *s);
    if (!s) return false;
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key) continue;
        uint32_t j = slot_of(m->slots[i].key, cap - 1);
        while (s[j].key) j = (j + 1) & (cap - 1);
        s[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = s;
    m->cap = cap;
    return true;
}

JInfo *jim_put(struct JInfoMap *m, JitArena *a, const AstNode *n) {
    JInfo *found = jim_get(m, n);
    if (found) return found;
    if ((m->count + 1) * 2 > m->cap && !grow(m)) return NULL;
    JInfo *info = ja_alloc(a, sizeof *info);
    if (!info) return NULL;
    uint32_t mask = m->cap - 1;
    uint32_t i = slot_of(n, mask);
    while (m->slots[i].key) i = (i + 1) & mask;
    m->slots[i].key = n;
    m->slots[i].info = info;
    m->count++;
    return info;
}

void jim_free(struct JInfoMap *m) {
    if (!m) return;
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}
