/*
** test_memory_limit.c — the allocator hook and the memory limit
** (include/gpy.h: GpyConfig.alloc, memory_limit).
**
** A script that outgrows the limit gets MemoryError (status
** GPY_OUT_OF_MEMORY), never a crash, and the VM goes on: once the script
** drops the big data, programs run as before. A counting allocator hook sees
** every allocation it is asked for freed again, with the size it gave, by
** the time gpy_free returns.
*/
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpy.h"

/* Each block carries a header with its size and a tag, so that a wrong
** old_size, a block freed twice, or one the hook never made is caught. */
typedef struct Header {
    size_t size;
    uint64_t tag;
} Header;
#define LIVE_TAG 0x6770795f6c697665ull /* "gpy_live" */

typedef struct Counter {
    size_t live_bytes;
    long live_blocks;
    long allocations, frees;
    long bad_sizes;
    size_t refuse_above; /* 0: refuse nothing; else refuse requests larger than this */
} Counter;

static void *counting_alloc(void *ptr, size_t old_size, size_t new_size, void *user) {
    Counter *c = user;
    Header *h = ptr ? (Header *)ptr - 1 : NULL;
    if (h && (h->tag != LIVE_TAG || h->size != old_size)) {
        c->bad_sizes++;
        return NULL; /* do not touch a block we cannot trust */
    }
    if (new_size == 0) {
        if (h) {
            c->live_bytes -= h->size;
            c->live_blocks--;
            c->frees++;
            h->tag = 0;
            free(h);
        }
        return NULL;
    }
    if (c->refuse_above && new_size > c->refuse_above) return NULL;
    Header *n = realloc(h, sizeof(Header) + new_size);
    if (!n) return NULL;
    if (!h) {
        n->tag = LIVE_TAG;
        c->live_blocks++;
        c->allocations++;
    } else {
        c->live_bytes -= n->size;
    }
    n->size = new_size;
    c->live_bytes += new_size;
    return n + 1;
}

static void check_out_of_memory(GpyVM *vm, GpyStatus st) {
    CHECK(st == GPY_OUT_OF_MEMORY);
    CHECK_STR(gpy_error_type(vm), "MemoryError");
}

int main(void) {
    Counter counter;
    memset(&counter, 0, sizeof counter);
    GpyConfig config;
    gpy_config_init(&config);
    config.alloc = counting_alloc;
    config.user_data = &counter;
    config.memory_limit = (size_t)64 << 20;
    GpyVM *vm = gpy_new(&config);
    CHECK(vm != NULL);
    if (!vm) return check_done("test_memory_limit");
    CHECK(counter.allocations > 0); /* the VM's objects came from the hook */

    /* 1. a list that grows without end, kept in a global */
    check_out_of_memory(vm, gpy_run_string(vm, NULL,
                                           "big = []\n"
                                           "while True:\n"
                                           "    big.append([1, 2, 3])\n",
                                           (size_t)-1, NULL));
    CHECK(counter.live_bytes <= ((size_t)64 << 20) + ((size_t)8 << 20)); /* the limit held (plus the hook's headers) */
    /* the VM is usable: drop the list, and a program needing many MiB runs */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "n = len(big)\n"
                                "assert n > 100000, n\n"
                                "big = None\n"
                                "squares = [i * i for i in range(200000)]\n"
                                "assert squares[-1] == 199999 * 199999\n"
                                "squares = None\n",
                                (size_t)-1, NULL));

    /* 2. one request larger than the limit */
    check_out_of_memory(vm, gpy_run_string(vm, NULL, "s = 'x' * (100 << 20)\n", (size_t)-1, NULL));
    /* 3. MemoryError is an exception like any other: a script may catch it */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "try:\n"
                                "    s = 'x' * (100 << 20)\n"
                                "except MemoryError:\n"
                                "    s = 'caught'\n"
                                "assert s == 'caught'\n",
                                (size_t)-1, NULL));

    /* 4. the allocator itself refusing (below the limit) is MemoryError too */
    counter.refuse_above = (size_t)1 << 20;
    check_out_of_memory(vm, gpy_run_string(vm, NULL, "t = [0] * (1 << 20)\n", (size_t)-1, NULL));
    counter.refuse_above = 0;
    CHECK_OK(vm, gpy_run_string(vm, NULL, "t = [0] * (1 << 20)\nassert len(t) == 1 << 20\n", (size_t)-1, NULL));

    gpy_free(vm);
    /* everything the hook handed out came back, each block with its own size */
    CHECK(counter.bad_sizes == 0);
    CHECK(counter.live_blocks == 0);
    CHECK(counter.live_bytes == 0);
    CHECK(counter.frees == counter.allocations);
    if (counter.live_blocks || counter.bad_sizes)
        fprintf(stderr, "live blocks %ld (%zu bytes), bad sizes %ld\n", counter.live_blocks, counter.live_bytes,
                counter.bad_sizes);
    return check_done("test_memory_limit");
}
