/*
** guarded_mem.c — buffers fenced by guard regions (see guarded_mem.h).
**
** One mapping per buffer: [guard][data pages][guard], mapped PROT_NONE and
** then opened for reading and writing over the data pages only. Freed
** small buffers go to a per-size cache, because to_device and device_array
** of a few elements in a loop would otherwise pay an mmap, an mprotect and
** a munmap each (several microseconds with worker threads alive).
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, MADV_HUGEPAGE */
#endif
#include "guarded_mem.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
    CACHE_PAGES = 16, /* buffers of up to this many data pages are cached when freed */
    CACHE_DEPTH = 64, /* at most this many per page count */
};

struct GuardedBuf {
    char *map;      /* the whole mapping; NULL for the malloc fallback */
    size_t map_len;
    size_t guard;   /* bytes of each guard */
    size_t pages;   /* data pages between the guards */
    char *data;
    size_t bytes;
    GuardedBuf *prev, *next; /* live buffers, or the cache list (next only) */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static GuardedBuf *live;
static GuardedBuf *cache[CACHE_PAGES + 1];
static int cached[CACHE_PAGES + 1];

static size_t page_size(void) {
    static size_t page;
    if (!page) {
        long p = sysconf(_SC_PAGESIZE);
        page = p > 0 ? (size_t)p : 4096;
    }
    return page;
}

/* Guards as wide as the buffer (at least 1 MiB, at most 256 MiB): an
** overshoot by up to the array's own size (a[i + n], a grid twice too big)
** faults instead of reaching the next mapping. They cost address space
** only (PROT_NONE, no memory, no page tables). */
static size_t guard_for(size_t bytes) {
    size_t lo = (size_t)1 << 20, hi = (size_t)256 << 20, page = page_size();
    size_t g = bytes < lo ? lo : bytes > hi ? hi : bytes;
    return (g + page - 1) / page * page;
}

/* Places the data of b (bytes, align) so that it ends where the upper guard begins. */
static void place(GuardedBuf *b, size_t bytes, size_t align) {
    uintptr_t end = (uintptr_t)b->map + b->guard + b->pages * page_size();
    b->data = (char *)((end - bytes) & ~(uintptr_t)(align - 1));
    b->bytes = bytes;
}

static GuardedBuf *map_new(size_t bytes, size_t pages) {
    size_t guard = guard_for(bytes), page = page_size();
    if (pages > (SIZE_MAX - 2 * guard) / page) return NULL;
    size_t len = 2 * guard + pages * page;
    GuardedBuf *b = malloc(sizeof *b);
    if (!b) return NULL;
    void *m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        free(b);
        return NULL;
    }
    if (mprotect((char *)m + guard, pages * page, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, len);
        free(b);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    if (pages * page >= ((size_t)4 << 20)) madvise((char *)m + guard, pages * page, MADV_HUGEPAGE);
#endif
    b->map = m;
    b->map_len = len;
    b->guard = guard;
    b->pages = pages;
    return b;
}

/* The unguarded fallback: plain heap memory. */
static GuardedBuf *heap_new(size_t bytes, size_t align, bool zero) {
    GuardedBuf *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, bytes ? bytes : 1) != 0) {
        free(b);
        return NULL;
    }
    if (zero) memset(p, 0, bytes);
    b->data = p;
    b->bytes = bytes;
    return b;
}

GuardedBuf *guarded_alloc(size_t bytes, size_t align, bool zero) {
    if (align == 0 || (align & (align - 1)) || align > 4096) align = 16;
    size_t page = page_size();
    if (bytes > SIZE_MAX - page) return NULL;
    size_t pages = (bytes + align + page - 1) / page;
    pthread_mutex_lock(&mu);
    GuardedBuf *b = NULL;
    bool reused = false;
    if (pages <= CACHE_PAGES && cache[pages]) {
        b = cache[pages];
        cache[pages] = b->next;
        cached[pages]--;
        reused = true;
    }
    pthread_mutex_unlock(&mu);
    if (!b) b = map_new(bytes, pages);
    if (!b) return heap_new(bytes, align, zero);
    place(b, bytes, align);
    if (reused) { /* the redzone must start clean; a fresh mapping is zeroed */
        memset(b->map + b->guard, 0, (size_t)(b->data - (b->map + b->guard)));
        if (zero) memset(b->data, 0, bytes);
    }
    pthread_mutex_lock(&mu);
    b->prev = NULL;
    b->next = live;
    if (live) live->prev = b;
    live = b;
    pthread_mutex_unlock(&mu);
    return b;
}

void guarded_free(GuardedBuf *b) {
    if (!b) return;
    if (!b->map) {
        free(b->data);
        free(b);
        return;
    }
    pthread_mutex_lock(&mu);
    if (b->prev) b->prev->next = b->next;
    else live = b->next;
    if (b->next) b->next->prev = b->prev;
    bool keep = b->pages <= CACHE_PAGES && cached[b->pages] < CACHE_DEPTH;
    if (keep) {
        b->next = cache[b->pages];
        cache[b->pages] = b;
        cached[b->pages]++;
    }
    pthread_mutex_unlock(&mu);
    if (keep) return;
    munmap(b->map, b->map_len);
    free(b);
}

void *guarded_data(const GuardedBuf *b) { return b->data; }

bool guarded_redzone_clean(GuardedBuf *b) {
    static const char zeros[4096];
    if (!b->map) return true;
    char *lo = b->map + b->guard;
    size_t n = (size_t)(b->data - lo);
    for (size_t k = 0; k < n; k += sizeof zeros) {
        size_t m = n - k < sizeof zeros ? n - k : sizeof zeros;
        if (memcmp(lo + k, zeros, m) != 0) {
            memset(lo, 0, n);
            return false;
        }
    }
    return true;
}

bool guarded_is_fenced(const GuardedBuf *b) { return b->map != NULL; }

bool guarded_find(const void *addr, void **data, size_t *bytes) {
    uintptr_t a = (uintptr_t)addr;
    bool found = false;
    pthread_mutex_lock(&mu);
    for (GuardedBuf *b = live; b; b = b->next)
        if (a >= (uintptr_t)b->map && a - (uintptr_t)b->map < b->map_len) {
            *data = b->data;
            *bytes = b->bytes;
            found = true;
            break;
        }
    pthread_mutex_unlock(&mu);
    return found;
}
