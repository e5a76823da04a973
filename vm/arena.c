/*
** arena.c — bump allocator for syntax trees. A Source's whole AST lives in
** one Arena and is freed at once, so nodes never need individual frees.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

#define ARENA_ALIGN 16
#define ARENA_CHUNK (64 * 1024)

typedef struct Chunk {
    struct Chunk *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    /* payload follows, 16-byte aligned (header padded below) */
} Chunk;

/* Header size rounded up so the payload starts 16-byte aligned. */
#define CHUNK_HDR ((sizeof(Chunk) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

struct Arena {
    Chunk *head;  /* current chunk (allocations bump here) */
    size_t total; /* bytes malloc'd, for arena_bytes */
};

Arena *arena_new(void) {
    Arena *a = calloc(1, sizeof(Arena));
    return a;
}

/* Allocates a fresh chunk holding at least size bytes and links it in. Big
** requests get a chunk of their own placed behind the current one, so the
** free tail of the current chunk stays usable. */
static Chunk *new_chunk(Arena *a, size_t size) {
    size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
    if (cap > SIZE_MAX - CHUNK_HDR - ARENA_ALIGN) return NULL;
    /* aligned_alloc needs a size that is a multiple of the alignment */
    size_t bytes = (CHUNK_HDR + cap + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    Chunk *c = aligned_alloc(ARENA_ALIGN, bytes);
    if (!c) return NULL;
    c->size = bytes - CHUNK_HDR;
    c->used = 0;
    a->total += bytes;
    if (a->head && size > ARENA_CHUNK / 4) {
        c->next = a->head->next;
        a->head->next = c;
    } else {
        c->next = a->head;
        a->head = c;
    }
    return c;
}

void *arena_alloc(Arena *a, size_t size) {
    if (!a) return NULL;
    if (size == 0) size = 1;
    if (size > SIZE_MAX - ARENA_ALIGN) return NULL;
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    Chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        c = new_chunk(a, size);
        if (!c) return NULL;
    }
    char *p = (char *)c + CHUNK_HDR + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

void arena_free(Arena *a) {
    if (!a) return;
    Chunk *c = a->head;
    while (c) {
        Chunk *n = c->next;
        free(c);
        c = n;
    }
    free(a);
}

size_t arena_bytes(Arena *a) {
    return a ? a->total : 0;
}
