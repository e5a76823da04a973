/*
** strbuf.c — growable byte buffer for building strings. The sb_* calls
** have no VM, so they cannot raise: an allocation failure frees the buffer
** and leaves it in a sticky "failed" state (data NULL, cap SIZE_MAX) in
** which appends are ignored; sb_finish then raises MemoryError.
*/
#include <stdlib.h>
#include <string.h>

#include "vm.h"

#define SB_FAILED ((size_t)-1)

void sb_init(StrBuf *sb) {
    sb->data = NULL;
    sb->len = 0;
    sb->cap = 0;
}

/* Makes room for extra more bytes (plus a NUL); false once failed. */
static bool sb_reserve(StrBuf *sb, size_t extra) {
    if (sb->cap == SB_FAILED)
        return false;
    size_t need = sb->len + extra + 1;
    if (need < sb->len) /* overflow */
        goto fail;
    if (need <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *p = realloc(sb->data, cap);
    if (!p)
        goto fail;
    sb->data = p;
    sb->cap = cap;
    return true;
fail:
    free(sb->data);
    sb->data = NULL;
    sb->len = 0;
    sb->cap = SB_FAILED;
    return false;
}

void sb_putc(StrBuf *sb, char c) {
    if ((sb->len + 1 < sb->cap && sb->cap != SB_FAILED) || sb_reserve(sb, 1))
        sb->data[sb->len++] = c;
}

void sb_append(StrBuf *sb, const char *s, size_t len) {
    if (len == 0 || !sb_reserve(sb, len))
        return;
    memcpy(sb->data + sb->len, s, len);
    sb->len += len;
}

void sb_appends(StrBuf *sb, const char *s) {
    sb_append(sb, s, strlen(s));
}

void sb_append_str(StrBuf *sb, Str *s) {
    sb_append(sb, s->chars, (size_t)s->len);
}

void sb_printf(StrBuf *sb, const char *fmt, ...) {
    va_list ap;
    char small[128];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sb_append(sb, small, (size_t)n);
        return;
    }
    if (!sb_reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

/* Turns the contents into a Str and frees the buffer (also on failure). */
Str *sb_finish(VM *vm, StrBuf *sb) {
    if (sb->cap == SB_FAILED) {
        sb_init(sb);
        vm_raise_kind(vm, MemoryError, "out of memory building a string");
    }
    if (sb->len == 0) {
        free(sb->data);
        sb_init(sb);
        return str_new(vm, "", 0);
    }
    char *data = sb->data;
    size_t len = sb->len;
    sb_init(sb);
    /* (only an out-of-memory raise inside str_new could leak data) */
    Str *s = str_new(vm, data, len);
    free(data);
    return s;
}

void sb_free(StrBuf *sb) {
    if (sb->cap != SB_FAILED)
        free(sb->data);
    sb_init(sb);
}
