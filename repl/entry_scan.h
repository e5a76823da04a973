/*
** entry_scan.h — deciding, from the text typed so far, whether a REPL entry
** is complete: open brackets or strings, compound statements (ended by an
** empty line), and errors that more input cannot fix. Shared by the plain
** line reader (a pipe) and the line editor (a terminal).
*/
#ifndef GPY_ENTRY_SCAN_H
#define GPY_ENTRY_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* What the text typed so far needs before it can be compiled. */
typedef struct EntryState {
    bool open;  /* inside brackets, a triple-quoted string, or after a backslash */
    bool block; /* a compound statement: ends with an empty line */
    bool blank; /* nothing but whitespace and comments */
} EntryState;

EntryState scan_entry(const char *s, size_t len);

/* True when line holds only whitespace. */
bool is_blank_line(const char *line);

/* True when the entry already holds a syntax error that more lines cannot fix. */
bool has_final_error(const char *entry, size_t len);

#endif
