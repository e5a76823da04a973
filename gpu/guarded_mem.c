/*
** guarded_mem.c — buffers fenced by guard regions (see guarded_mem.h).
**
** Big buffers (more than SLOT_MAX_PAGES pages) get a mapping each:
** [guard][data pages][guard], mapped PROT_NONE and then opened for reading
** and writing over the data pages only; freed ones (256 MiB of them at
** most) are kept for the next buffer of the same page count.
**
** Small buffers come from slabs, because a mapping per buffer costs three
** system calls (mmap, mprotect, munmap: tens of microseconds in some
** sandboxes), and to_device or device_array of a few elements in a loop
** would pay them all. A slab of one size class (1, 2, 4, 8 or 16 pages) is
** SLAB_SLOTS slots laid out [guard][slot][guard][slot]...[guard]; a slot is
** opened (one mprotect) the first time it is used and then stays open: a
** freed slot goes to its class's free list and is handed out again with no
** system call. The guard between two slots is shared: a fault in its lower
** half is attributed to the slot below (an index past the end), in its
** upper half to the slot above (an index below the start).
**
** Every open slot and every big mapping costs two or three kernel memory
** areas (vm.max_map_count is 65530 by default, shared with malloc and
** thread stacks), so at most MAX_SLOTS slots are ever opened; past that,
** small buffers fall back to malloc, unguarded.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, MADV_HUGEPAGE */
#endif
#include "guarded_mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
    NCLASSES = 5,        /* slot sizes 1, 2, 4, 8, 16 pages */
    SLOT_MAX_PAGES = 16,
    SLAB_SLOTS = 64,
    MAX_SLOTS = 8192,    /* slots opened, all classes together */
};

/* The bytes below the data checked after each launch (guarded_mem.h). */
#define REDZONE 256
#define SLAB_GUARD ((size_t)1 << 20) /* between slots: overshoots up to 512 KiB are attributed right */

struct GuardedBuf {
    char *lo, *hi;  /* addresses attributed to this buffer: its data pages and guards (or halves of them) */
    char *map;      /* a big buffer's own mapping (NULL for slots and the malloc fallback) */
    size_t map_len;
    char *area;     /* the data pages (NULL for the malloc fallback) */
    size_t pages;
    int cls;        /* slot class, or -1 */
    char *data;
    size_t bytes;
    GuardedBuf *prev, *next; /* live buffers, or a class's free list (next only) */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static GuardedBuf *live[2]; /* [0] big buffers, [1] slots */
static GuardedBuf *free_slots[NCLASSES];
static int slots_opened;

/* The page size, looked up once; threads racing at the first call store the
** same value (atomic, so the race is defined). */
static size_t page_size(void) {
    static _Atomic size_t page;
    size_t n = atomic_load_explicit(&page, memory_order_relaxed);
    if (!n) {
        long p = sysconf(_SC_PAGESIZE);
        n = p > 0 ? (size_t)p : 4096;
        atomic_store_explicit(&page, n, memory_order_relaxed);
    }
    return n;
}

/* Freed big mappings kept for a buffer of the same page count: host code
** makes temporaries of one size in a loop, and the collector frees them in
** batches, so a fresh mapping (and fresh page faults) each time made
** `a + b` on 80 KB arrays ten times slower. Kept in BIG_BUCKETS lists by
** page count: as many data pages as are live, plus BIG_CACHE_BYTES. The
** collector runs when the heap has grown by about what is live, so that
** much garbage is freed at once and then made again; malloc
** keeps freed memory for reuse the same way. */
enum { BIG_BUCKETS = 64 };
#define BIG_CACHE_BYTES ((size_t)256 << 20)
static GuardedBuf *big_cache[BIG_BUCKETS];
static size_t big_cached_bytes;
static size_t big_live_bytes; /* data pages of big buffers in use */

/* A cached big mapping of exactly pages data pages, or NULL. */
static GuardedBuf *big_take(size_t pages) {
    GuardedBuf *b = NULL;
    pthread_mutex_lock(&mu);
    for (GuardedBuf **p = &big_cache[pages % BIG_BUCKETS]; *p; p = &(*p)->next)
        if ((*p)->pages == pages) {
            b = *p;
            *p = b->next;
            big_cached_bytes -= pages * page_size();
            break;
        }
    pthread_mutex_unlock(&mu);
    return b;
}

/* Keeps b for reuse if there is room; false when the caller must unmap it. Called with mu held. */
static bool big_keep(GuardedBuf *b) {
    size_t bytes = b->pages * page_size();
    size_t cap = big_live_bytes + BIG_CACHE_BYTES;
    if (big_cached_bytes > cap || bytes > cap - big_cached_bytes) return false;
    b->next = big_cache[b->pages % BIG_BUCKETS];
    big_cache[b->pages % BIG_BUCKETS] = b;
    big_cached_bytes += bytes;
    return true;
}

/* A big buffer's guards: as wide as the buffer (at least 1 MiB, at most
** 256 MiB), so that an overshoot by up to the array's own size (a[i + n], a
** grid twice too big) faults instead of reaching the next mapping. They
** cost address space only (PROT_NONE: no memory, no page tables). */
static size_t guard_for(size_t bytes) {
    size_t lo = (size_t)1 << 20, hi = (size_t)256 << 20, page = page_size();
    size_t g = bytes < lo ? lo : bytes > hi ? hi : bytes;
    return (g + page - 1) / page * page;
}

/* Places the data of b (bytes, align) so that it ends where its pages end. */
static void place(GuardedBuf *b, size_t bytes, size_t align) {
    uintptr_t end = (uintptr_t)b->area + b->pages * page_size();
    b->data = (char *)((end - bytes) & ~(uintptr_t)(align - 1));
    b->bytes = bytes;
}

static GuardedBuf *map_new(size_t bytes, size_t pages) {
    size_t guard = guard_for(bytes), page = page_size();
    if (pages > (SIZE_MAX - 2 * guard) / page) return NULL;
    size_t len = 2 * guard + pages * page;
    GuardedBuf *b = calloc(1, sizeof *b);
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
    b->lo = m;
    b->hi = (char *)m + len;
    b->area = (char *)m + guard;
    b->pages = pages;
    b->cls = -1;
    return b;
}

/* Maps a slab of class cls and puts its (unopened) slots on the free list.
** Called with mu held. */
static bool slab_new(int cls) {
    size_t page = page_size(), slot = ((size_t)1 << cls) * page, stride = slot + SLAB_GUARD;
    size_t len = SLAB_GUARD + SLAB_SLOTS * stride;
    GuardedBuf *bs = calloc(SLAB_SLOTS, sizeof *bs);
    if (!bs) return false;
    char *m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        free(bs);
        return false;
    }
    for (int i = SLAB_SLOTS - 1; i >= 0; i--) {
        GuardedBuf *b = &bs[i];
        b->area = m + SLAB_GUARD + (size_t)i * stride;
        b->lo = b->area - SLAB_GUARD / 2;
        b->hi = b->area + slot + SLAB_GUARD / 2;
        b->pages = (size_t)1 << cls;
        b->cls = cls;
        b->data = NULL; /* not opened yet */
        b->next = free_slots[cls];
        free_slots[cls] = b;
    }
    return true; /* slabs live as long as the process */
}

/* A free slot of class cls, opened; NULL when none can be had. *fresh
** tells whether it was just opened (its pages are zero). */
static GuardedBuf *slot_take(int cls, bool *fresh) {
    *fresh = false;
    pthread_mutex_lock(&mu);
    GuardedBuf *b = free_slots[cls];
    if (!b && slots_opened < MAX_SLOTS && slab_new(cls)) b = free_slots[cls];
    if (b && !b->data) { /* never opened */
        if (slots_opened >= MAX_SLOTS ||
            mprotect(b->area, b->pages * page_size(), PROT_READ | PROT_WRITE) != 0) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        slots_opened++;
        b->data = b->area; /* marks it opened */
        *fresh = true;
        free_slots[cls] = b->next;
        pthread_mutex_unlock(&mu);
        return b;
    }
    if (b) free_slots[cls] = b->next;
    pthread_mutex_unlock(&mu);
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
    b->cls = -1;
    return b;
}

/* guarded_alloc; small buffers come from slots when slots is set. */
static GuardedBuf *alloc_buf(size_t bytes, size_t align, bool zero, bool slots) {
    if (align == 0 || (align & (align - 1)) || align > 4096) align = 16;
    size_t page = page_size();
    if (bytes > SIZE_MAX - 2 * page) return NULL;
    size_t pages = (bytes + align - 1 + page - 1) / page;
    if (pages == 0) pages = 1;
    GuardedBuf *b = NULL;
    bool fresh = true;
    if (slots && pages <= SLOT_MAX_PAGES) {
        int cls = 0;
        while (((size_t)1 << cls) < pages) cls++;
        b = slot_take(cls, &fresh);
    } else {
        b = big_take(pages);
        fresh = !b;
        if (!b) b = map_new(bytes, pages);
    }
    if (!b) return heap_new(bytes, align, zero);
    place(b, bytes, align);
    if (!fresh) { /* reused: its redzone starts clean, its data when asked */
        char *rz = b->data - b->area > REDZONE ? b->data - REDZONE : b->area;
        memset(rz, 0, (size_t)(b->data - rz));
        if (zero) memset(b->data, 0, bytes);
    }
    GuardedBuf **head = &live[b->cls >= 0];
    pthread_mutex_lock(&mu);
    if (b->cls < 0) big_live_bytes += b->pages * page;
    b->prev = NULL;
    b->next = *head;
    if (*head) (*head)->prev = b;
    *head = b;
    pthread_mutex_unlock(&mu);
    return b;
}

GuardedBuf *guarded_alloc(size_t bytes, size_t align, bool zero) { return alloc_buf(bytes, align, zero, true); }

void guarded_free(GuardedBuf *b) {
    if (!b) return;
    if (!b->area) {
        free(b->data);
        free(b);
        return;
    }
    pthread_mutex_lock(&mu);
    if (b->prev) b->prev->next = b->next;
    else live[b->cls >= 0] = b->next;
    if (b->next) b->next->prev = b->prev;
    bool kept = true;
    if (b->cls >= 0) {
        b->prev = NULL;
        b->next = free_slots[b->cls];
        free_slots[b->cls] = b;
    } else {
        big_live_bytes -= b->pages * page_size();
        kept = big_keep(b);
    }
    pthread_mutex_unlock(&mu);
    if (kept) return;
    munmap(b->map, b->map_len);
    free(b);
}

void *guarded_data(const GuardedBuf *b) { return b->data; }

bool guarded_is_fenced(const GuardedBuf *b) { return b->area != NULL; }

bool guarded_redzone_clean(GuardedBuf *b) {
    static const char zeros[REDZONE];
    if (!b->area) return true;
    char *rz = b->data - b->area > REDZONE ? b->data - REDZONE : b->area;
    size_t n = (size_t)(b->data - rz);
    if (memcmp(rz, zeros, n) == 0) return true;
    memset(rz, 0, n);
    return false;
}

bool guarded_find(const void *addr, void **data, size_t *bytes) {
    const char *a = addr;
    bool found = false;
    pthread_mutex_lock(&mu);
    for (int k = 0; k < 2 && !found; k++)
        for (GuardedBuf *b = live[k]; b; b = b->next)
            if (a >= b->lo && a < b->hi) {
                *data = b->data;
                *bytes = b->bytes;
                found = true;
                break;
            }
    pthread_mutex_unlock(&mu);
    return found;
}

void *guarded_host_alloc(size_t bytes, size_t align) {
    if (bytes <= GUARDED_HOST_MIN) return NULL;
    GuardedBuf *b = alloc_buf(bytes, align, false, false); /* a mapping of its own: guarded_host_free finds it */
    if (b && !b->area) { /* no mapping to be had: let the caller's malloc report it */
        guarded_free(b);
        return NULL;
    }
    return b ? b->data : NULL;
}

bool guarded_host_free(void *data) {
    GuardedBuf *found = NULL;
    pthread_mutex_lock(&mu);
    for (GuardedBuf *b = live[0]; b && !found; b = b->next)
        if (b->data == data) found = b;
    pthread_mutex_unlock(&mu);
    if (found) guarded_free(found);
    return found != NULL;
}
