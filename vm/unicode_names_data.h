/*
** unicode_names_data.h — the tables scripts/gen_unicode_names.py generates
** into unicode_names_data.c (its docstring describes the layout); only
** unicode_names.c reads them.
*/
#ifndef GPY_UNICODE_NAMES_DATA_H
#define GPY_UNICODE_NAMES_DATA_H

#include <stdint.h>

/* names PREFIX + "%04X" % cp for cp in [first, last] */
typedef struct UnicodeNameRange {
    const char *prefix;
    uint32_t first, last;
} UnicodeNameRange;

typedef struct UnicodeNameAlias {
    const char *name;
    uint32_t cp;
} UnicodeNameAlias;

extern const uint32_t un_nentries, un_block, un_nwords, un_nranges, un_naliases;
extern const uint8_t un_block_offset[]; /* per block: byte offset in un_data (4 bytes LE) */
extern const uint8_t un_block_first[];  /* per block: its first code point (3 bytes LE) */
extern const uint8_t un_data[];         /* the entries, sorted by code point */
extern const uint8_t un_sorted[];       /* entry numbers in name order (2 bytes LE) */
extern const uint8_t un_word_offset[];  /* per word: offset in un_words (4 bytes LE), then the end */
extern const uint8_t un_words[];
extern const UnicodeNameRange un_ranges[];
extern const UnicodeNameAlias un_aliases[]; /* sorted by name */

#endif
