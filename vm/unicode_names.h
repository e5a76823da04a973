/*
** unicode_names.h — Unicode character names (Unicode 14.0, as CPython
** 3.11): \N{...} escapes and the unicodedata module.
*/
#ifndef GPY_UNICODE_NAMES_H
#define GPY_UNICODE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longer than any name, with its NUL. */
#define UNICODE_NAME_MAX 128

/* The code point named name[0..len) as \N{} accepts it: case-insensitive,
** name aliases included (not named sequences); -1 when none. */
int32_t unicode_lookup_name(const char *name, size_t len);
/* The name of cp (unicodedata.name) into buf; false when cp has none. */
bool unicode_char_name(uint32_t cp, char buf[UNICODE_NAME_MAX]);

#endif
