/*
** check.h — the tiny assertion kit of the embedding tests (tests/embed/).
** Each test is a standalone C program: it exits 0 when every CHECK held,
** and otherwise prints each failed check (file:line, the expression, and
** the VM's last error when there is one) to stderr and exits 1.
*/
#ifndef GPY_EMBED_CHECK_H
#define GPY_EMBED_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpy.h"

static int check_failures;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);  \
            check_failures++;                                                         \
        }                                                                             \
    } while (0)

/* An API call that must succeed; on failure shows the VM's exception. */
#define CHECK_OK(vm, call)                                                                            \
    do {                                                                                              \
        GpyStatus check_st_ = (call);                                                                 \
        if (check_st_ != GPY_OK) {                                                                    \
            const char *tb_ = gpy_error_traceback(vm);                                                \
            fprintf(stderr, "%s:%d: %s returned %s\n%s", __FILE__, __LINE__, #call,                  \
                    gpy_status_name(check_st_), tb_ ? tb_ : "");                                      \
            check_failures++;                                                                         \
        }                                                                                             \
    } while (0)

#define CHECK_STR(got, want)                                                                          \
    do {                                                                                              \
        const char *check_g_ = (got), *check_w_ = (want);                                             \
        if (!check_g_ || strcmp(check_g_, check_w_) != 0) {                                           \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #got,       \
                    check_g_ ? check_g_ : "(null)", check_w_);                                        \
            check_failures++;                                                                         \
        }                                                                                             \
    } while (0)

static inline int check_done(const char *name) {
    if (check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

#endif
