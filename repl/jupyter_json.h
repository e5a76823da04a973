/*
** jupyter_json.h — the little JSON the Jupyter kernel needs: building
** messages into a growing buffer, and reading a top-level key of an object
** (a message header, its content, a connection file). Not a general parser:
** values are located and skipped, never built into a tree.
*/
#ifndef GPY_JUPYTER_JSON_H
#define GPY_JUPYTER_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef struct JBuf {
    char *s;
    size_t len, cap;
} JBuf;

void jb_putn(JBuf *b, const char *s, size_t n);
void jb_puts(JBuf *b, const char *s);
void jb_printf(JBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s[0..n) as a quoted, escaped JSON string */
void jb_str(JBuf *b, const char *s, size_t n);
void jb_free(JBuf *b);

/* Finds key among the top-level members of the object text[0..len); the
** value's raw text is *val[0..*vlen). False when absent or malformed. */
bool json_find(const char *text, size_t len, const char *key, const char **val, size_t *vlen);
/* The decoded string value of key (malloc'd, NUL-terminated), or NULL. */
char *json_find_string(const char *text, size_t len, const char *key);
/* The integer value of key, or dflt. */
long json_find_int(const char *text, size_t len, const char *key, long dflt);
/* The boolean value of key, or dflt. */
bool json_find_bool(const char *text, size_t len, const char *key, bool dflt);

#endif
