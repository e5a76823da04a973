/*
** entry_scan.c — when is a REPL entry complete (see entry_scan.h).
*/
#include "entry_scan.h"

#include <string.h>

#include "ast.h"
#include "vm.h"

static bool starts_with_word(const char *s, const char *w) {
    size_t n = strlen(w);
    return strncmp(s, w, n) == 0 && !(s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
                                      (s[n] >= '0' && s[n] <= '9'));
}

/* A small scanner: brackets, strings, comments, and lines ending in ':'. */
EntryState scan_entry(const char *s, size_t len) {
    EntryState st = {.open = false, .block = false, .blank = true};
    int depth = 0;
    char quote = 0;
    bool triple = false, backslash = false, colon_line = false;
    char last = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (quote) {
            if (c == '\\') {
                i++;
                continue;
            }
            if (triple) {
                if (c == quote && i + 2 < len && s[i + 1] == quote && s[i + 2] == quote) {
                    quote = 0;
                    i += 2;
                    last = c;
                }
            } else if (c == quote || c == '\n') {
                quote = 0;
                last = c;
            }
            continue;
        }
        backslash = false;
        if (c == '#') {
            while (i + 1 < len && s[i + 1] != '\n') i++;
            continue;
        }
        if (c == '\n') {
            if (depth == 0 && last == ':') colon_line = true;
            if (depth == 0) last = 0;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f') continue;
        st.blank = false;
        if (c == '\\' && i + 1 < len && s[i + 1] == '\n') {
            backslash = true;
            i++;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            triple = i + 2 < len && s[i + 1] == c && s[i + 2] == c;
            if (triple) i += 2;
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth > 0) depth--;
        }
        last = c;
    }
    if (backslash && len > 0 && s[len - 1] != '\n') backslash = false;
    st.open = depth > 0 || (quote && triple) || backslash;
    const char *p = s;
    while (*p == ' ' || *p == '\t') p++;
    static const char *const kws[] = {"if", "for", "while", "def", "class", "with", "try", "async"};
    for (size_t k = 0; k < sizeof kws / sizeof kws[0]; k++)
        if (starts_with_word(p, kws[k])) st.block = true;
    if (*p == '@' || colon_line) st.block = true;
    return st;
}

bool is_blank_line(const char *line) {
    for (; *line; line++)
        if (*line != ' ' && *line != '\t' && *line != '\n' && *line != '\r' && *line != '\f') return false;
    return true;
}

/* True when every non-blank line of the entry is a decorator ("@cuda.jit"). */
static bool only_decorators(const char *s, size_t len) {
    bool any = false, at_line_start = true;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\n') {
            at_line_start = true;
            continue;
        }
        if (!at_line_start || c == ' ' || c == '\t' || c == '\r') continue;
        if (c != '@') return false;
        any = true;
        at_line_start = false;
    }
    return any;
}

/* An entry that is still open (a bracket, a block) may already hold a
** syntax error that more input cannot fix, e.g. "def f(:". Report it at
** once, like CPython's prompt, instead of waiting for more lines. */
bool has_final_error(const char *entry, size_t len) {
    if (only_decorators(entry, len)) return false; /* the def or class comes next */
    Arena *a = arena_new();
    if (!a) return false;
    SyntaxErr err;
    memset(&err, 0, sizeof err);
    AstNode *m = parse_source(a, "<stdin>", entry, len, PARSE_INTERACTIVE, &err);
    arena_free(a);
    if (m) return false;
    static const char *const waiting[] = {"never closed", "unterminated triple-quoted", "expected an indented block",
                                          "unexpected EOF", "unexpected end", "incomplete"};
    for (size_t i = 0; i < sizeof waiting / sizeof waiting[0]; i++)
        if (strstr(err.msg, waiting[i])) return false;
    return true;
}

