/*
** prompt.c — the interactive prompt on a terminal (see prompt.h), built on
** libedit (BSD editline, Debian's libedit-dev): it is small, keeps emacs and
** vi key maps, incremental search and a history file, and its buffer may
** hold newlines, which is what lets a whole block be one history entry.
**
** Keys gpy adds to libedit's emacs map: Tab completes (or indents at the
** start of a line), Backspace in leading spaces removes one indent level,
** Ctrl-C drops the entry (the terminal's ISIG is off while editing, so it
** is a key, not a signal; while code runs it is SIGINT again and raises
** KeyboardInterrupt), Ctrl-R searches history, and a bracketed paste
** (ESC [200~ ... ESC [201~) lands in the buffer as written, newlines and
** blank lines included, to run as one entry on Enter.
*/
#include "prompt.h"

#include <errno.h>
#include <histedit.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "entry_scan.h"
#include "gpy.h"
#include "repl_helpers.h"
#include "signals.h"

#define INDENT 4
#define HISTORY_SIZE 2000
/* a key sequence no terminal sends: gpy pushes it to have %load's text
** inserted into the next line's buffer */
#define PRELOAD_KEY "\033[9917~"

typedef struct Prompt {
    VM *vm;
    EditLine *el;
    History *hist;
    HistEvent ev;
    char *hist_path;   /* NULL: no history file */
    bool colour;
    bool paste_mode;   /* the terminal speaks bracketed paste */
    bool cancelled;    /* Ctrl-C was pressed in this el_gets */
    bool continuation; /* the prompt is "... " */
    char *preload;     /* %load's text for the next buffer */
    char **session;    /* this session's entries, for %history */
    size_t nsession, session_cap;
} Prompt;

/* ------------------------------------------------------------- helpers */

static Prompt *prompt_of(EditLine *el) {
    void *p = NULL;
    el_get(el, EL_CLIENTDATA, &p);
    return p;
}

static char *prompt_text(EditLine *el) {
    Prompt *p = prompt_of(el);
    if (!p->colour) return p->continuation ? "... " : ">>> ";
    /* \1 brackets the escape sequences, which take no columns (EL_PROMPT_ESC) */
    return p->continuation ? "\1\033[1;32m\1...\1\033[0m\1 " : "\1\033[1;32m\1>>>\1\033[0m\1 ";
}

/* Start of the line holding the cursor, in a buffer that may hold several. */
static const char *line_start(const LineInfo *li) {
    const char *s = li->cursor;
    while (s > li->buffer && s[-1] != '\n') s--;
    return s;
}

static bool only_spaces(const char *s, const char *end) {
    for (; s < end; s++)
        if (*s != ' ' && *s != '\t') return false;
    return true;
}

/* ----------------------------------------------------------------- keys */

static void print_columns(char **names, size_t n) {
    size_t width = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) > width) width = strlen(names[i]);
    width += 2;
    size_t cols = width < 80 ? 80 / width : 1;
    size_t rows = (n + cols - 1) / cols;
    fputc('\n', stdout);
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < cols; c++) {
            size_t i = c * rows + r;
            if (i >= n) break;
            bool last = c + 1 == cols || (c + 1) * rows + r >= n;
            if (last) fputs(names[i], stdout);
            else fprintf(stdout, "%-*s", (int)width, names[i]);
        }
        fputc('\n', stdout);
    }
    fflush(stdout);
}

static unsigned char key_complete(EditLine *el, int ch) {
    (void)ch;
    Prompt *p = prompt_of(el);
    const LineInfo *li = el_line(el);
    const char *start = line_start(li);
    /* at the start of a line Tab indents */
    if (only_spaces(start, li->cursor)) {
        size_t col = (size_t)(li->cursor - start);
        char spaces[INDENT + 1] = "    ";
        spaces[INDENT - col % INDENT] = '\0';
        el_insertstr(el, spaces);
        return CC_REFRESH;
    }
    size_t len = (size_t)(li->cursor - start);
    ReplCompletion c;
    if (!repl_complete(p->vm, start, len, &c) || c.count == 0) {
        if (c.names) repl_completion_free(&c);
        return CC_REFRESH_BEEP;
    }
    size_t typed = len > c.start ? len - c.start : 0;
    /* the longest prefix every candidate shares */
    size_t common = strlen(c.names[0]);
    for (size_t i = 1; i < c.count; i++) {
        size_t k = 0;
        while (k < common && c.names[i][k] == c.names[0][k]) k++;
        common = k;
    }
    unsigned char rc = CC_REFRESH;
    if (common > typed) {
        char *ins = strndup(c.names[0] + typed, common - typed);
        if (ins) el_insertstr(el, ins);
        free(ins);
    } else if (c.count > 1) {
        print_columns(c.names, c.count);
        rc = CC_REDISPLAY;
    }
    repl_completion_free(&c);
    return rc;
}

static unsigned char key_backspace(EditLine *el, int ch) {
    (void)ch;
    const LineInfo *li = el_line(el);
    if (li->cursor == li->buffer) return CC_ERROR;
    const char *start = line_start(li);
    size_t col = (size_t)(li->cursor - start);
    size_t n = 1;
    /* in the indentation, one level at a time */
    if (col > 0 && only_spaces(start, li->cursor)) n = col % INDENT ? col % INDENT : INDENT;
    el_deletestr(el, (int)n);
    return CC_REFRESH;
}

/* libedit's character reader, with one addition: a SIGINT pending when a key
** is due counts as the Ctrl-C key. Between two reads the terminal is cooked,
** with ISIG on, so a Ctrl-C typed there (while a block's next line is being
** set up, or as code ends) is a signal; reads are interruptible while at the
** prompt (prompt_repl), so one that comes during a read lands here too. */
static int read_key(EditLine *el, wchar_t *wc) {
    Prompt *p = prompt_of(el);
    char buf[MB_LEN_MAX];
    size_t n = 0;
    mbstate_t state;
    memset(&state, 0, sizeof state);
    for (;;) {
        if (n == 0 && vm_interrupt_pending(p->vm)) {
            vm_clear_interrupt(p->vm);
            *wc = 3; /* Ctrl-C */
            return 1;
        }
        ssize_t r = read(STDIN_FILENO, buf + n, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return (int)r;
        size_t k = mbrtowc(wc, buf + n, 1, &state);
        n++;
        if (k == (size_t)-2 && n < sizeof buf) continue; /* more bytes to come */
        if (k == (size_t)-1 || k == (size_t)-2) *wc = (unsigned char)buf[0]; /* not in the locale's encoding: the byte */
        return 1;
    }
}

static unsigned char key_interrupt(EditLine *el, int ch) {
    (void)ch;
    Prompt *p = prompt_of(el);
    p->cancelled = true;
    return CC_NEWLINE;
}

/* Reads the pasted text up to ESC [201~ and inserts it as it is. */
static unsigned char key_paste(EditLine *el, int ch) {
    (void)ch;
    static const char end_mark[] = "\033[201~";
    size_t cap = 256, len = 0, matched = 0;
    char *buf = malloc(cap);
    if (!buf) return CC_ERROR;
    char c;
    while (el_getc(el, &c) == 1) {
        if (c == end_mark[matched]) {
            if (++matched == sizeof end_mark - 1) break;
            continue;
        }
        /* a partial end mark was text after all */
        for (size_t i = 0; i < matched + 1; i++) {
            if (len + 2 > cap) {
                char *nb = realloc(buf, cap *= 2);
                if (!nb) {
                    free(buf);
                    return CC_ERROR;
                }
                buf = nb;
            }
            char k = i < matched ? end_mark[i] : c;
            buf[len++] = k == '\r' ? '\n' : k; /* terminals send Enter as CR */
        }
        matched = 0;
    }
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) len--;
    buf[len] = '\0';
    if (len) el_insertstr(el, buf);
    free(buf);
    return CC_REFRESH;
}

static unsigned char key_preload(EditLine *el, int ch) {
    (void)ch;
    Prompt *p = prompt_of(el);
    if (p->preload && *p->preload) el_insertstr(el, p->preload);
    free(p->preload);
    p->preload = NULL;
    return CC_REFRESH;
}

/* -------------------------------------------------------------- history */

static char *history_path(void) {
    const char *env = getenv("GPY_HISTORY");
    if (env) return *env ? strdup(env) : NULL;
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    size_t n = strlen(home) + sizeof "/.gpy_history";
    char *path = malloc(n);
    if (path) snprintf(path, n, "%s/.gpy_history", home);
    return path;
}

static void remember(Prompt *p, const char *entry, size_t len) {
    while (len > 0 && (entry[len - 1] == '\n' || entry[len - 1] == ' ' || entry[len - 1] == '\t')) len--;
    if (len == 0) return;
    char *e = strndup(entry, len);
    if (!e) return;
    history(p->hist, &p->ev, H_ENTER, e);
    /* saved at once, so a crash or a kill loses nothing; silently none
    ** where the file cannot be written */
    if (p->hist_path) history(p->hist, &p->ev, H_SAVE, p->hist_path);
    if (p->nsession == p->session_cap) {
        size_t cap = p->session_cap ? p->session_cap * 2 : 16;
        char **ns = realloc(p->session, cap * sizeof *ns);
        if (!ns) {
            free(e);
            return;
        }
        p->session = ns;
        p->session_cap = cap;
    }
    p->session[p->nsession++] = e;
}

/* --------------------------------------------------------------- magics */

static bool is_magic(const char *line) {
    while (*line == ' ' || *line == '\t') line++;
    return line[0] == '%' && ((line[1] >= 'a' && line[1] <= 'z') || (line[1] >= 'A' && line[1] <= 'Z'));
}

static const char *magic_arg(const char *line, const char *name) {
    const char *s = strstr(line, name) + strlen(name);
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

static bool magic_named(const char *line, const char *name) {
    while (*line == ' ' || *line == '\t') line++;
    size_t n = strlen(name);
    return strncmp(line + 1, name, n) == 0 && (line[1 + n] == '\0' || line[1 + n] == ' ' || line[1 + n] == '\n');
}

/* %load FILE: the file's text becomes the next buffer, to edit or run. */
static void magic_load(Prompt *p, const char *line) {
    char path[4096];
    snprintf(path, sizeof path, "%s", magic_arg(line, "load"));
    size_t n = strlen(path);
    while (n > 0 && (path[n - 1] == '\n' || path[n - 1] == ' ')) path[--n] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "FileNotFoundError: [Errno %d] %s: '%s'\n", errno, strerror(errno), path);
        return;
    }
    size_t cap = 4096, len = 0, got;
    char *text = malloc(cap);
    while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 >= cap) {
            char *nt = realloc(text, cap *= 2);
            if (!nt) {
                free(text);
                text = NULL;
            }
            text = nt;
        }
    }
    fclose(f);
    if (!text) return;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ')) len--;
    text[len] = '\0';
    free(p->preload);
    p->preload = text;
}

static void magic_history(Prompt *p) {
    for (size_t i = 0; i < p->nsession; i++) printf("%s\n", p->session[i]);
    fflush(stdout);
}

static int run_magic(Prompt *p, const char *line) {
    if (magic_named(line, "load")) {
        magic_load(p, line);
        return 0;
    }
    if (magic_named(line, "history")) {
        magic_history(p);
        return 0;
    }
    return repl_run_magic(p->vm, line);
}

/* ------------------------------------------------------------ the loop */

/* The indentation of the next line of a block: that of the last line, one
** level more after ':', one less after return/pass/break/continue/raise. */
static size_t next_indent(const char *entry, size_t len) {
    while (len > 0 && entry[len - 1] == '\n') len--;
    size_t s = len;
    while (s > 0 && entry[s - 1] != '\n') s--;
    size_t ind = 0;
    while (s + ind < len && entry[s + ind] == ' ') ind++;
    const char *text = entry + s + ind;
    size_t tl = len - s - ind;
    while (tl > 0 && (text[tl - 1] == ' ' || text[tl - 1] == '\t')) tl--;
    if (tl > 0 && text[tl - 1] == ':') return ind + INDENT;
    static const char *const enders[] = {"return", "pass", "break", "continue", "raise"};
    for (size_t i = 0; i < sizeof enders / sizeof enders[0]; i++) {
        size_t n = strlen(enders[i]);
        if (tl >= n && strncmp(text, enders[i], n) == 0 && (tl == n || text[n] == ' ' || text[n] == '('))
            return ind >= INDENT ? ind - INDENT : 0;
    }
    return ind;
}

static bool append(char **entry, size_t *len, size_t *cap, const char *s, size_t n) {
    if (*len + n + 1 > *cap) {
        size_t nc = (*len + n + 1) * 2;
        char *ne = realloc(*entry, nc);
        if (!ne) return false;
        *entry = ne;
        *cap = nc;
    }
    memcpy(*entry + *len, s, n);
    *len += n;
    (*entry)[*len] = '\0';
    return true;
}

static void setup_editor(Prompt *p) {
    EditLine *el = p->el;
    el_set(el, EL_CLIENTDATA, p);
    el_set(el, EL_EDITOR, "emacs");
    el_set(el, EL_PROMPT_ESC, prompt_text, '\1');
    el_set(el, EL_GETCFN, read_key);
    el_set(el, EL_HIST, history, p->hist);
    /* Ctrl-C is a key while editing (key_interrupt), SIGINT while running */
    el_set(el, EL_SETTY, "-d", "-isig", NULL);
    el_set(el, EL_ADDFN, "gpy-complete", "complete a name, an attribute, a module or a file", key_complete);
    el_set(el, EL_ADDFN, "gpy-backspace", "delete left, an indent level in leading spaces", key_backspace);
    el_set(el, EL_ADDFN, "gpy-interrupt", "drop the entry", key_interrupt);
    el_set(el, EL_ADDFN, "gpy-paste", "insert a bracketed paste as written", key_paste);
    el_set(el, EL_ADDFN, "gpy-preload", "insert %load's text", key_preload);
    el_set(el, EL_BIND, "^I", "gpy-complete", NULL);
    el_set(el, EL_BIND, "^?", "gpy-backspace", NULL);
    el_set(el, EL_BIND, "^H", "gpy-backspace", NULL);
    el_set(el, EL_BIND, "^C", "gpy-interrupt", NULL);
    el_set(el, EL_BIND, "^R", "em-inc-search-prev", NULL);
    el_set(el, EL_BIND, "\033[200~", "gpy-paste", NULL);
    el_set(el, EL_BIND, PRELOAD_KEY, "gpy-preload", NULL);
    /* ~/.editrc (or $EDITRC) may rebind keys, as in other libedit programs */
    el_source(el, NULL);
}

int prompt_repl(VM *vm) {
    Prompt p = {.vm = vm};
    const char *term = getenv("TERM");
    bool dumb = term && strcmp(term, "dumb") == 0;
    const char *no_colour = getenv("NO_COLOR");
    p.colour = !dumb && !(no_colour && *no_colour);
    p.paste_mode = !dumb;
    p.hist = history_init();
    p.el = el_init("gpy", stdin, stdout, stderr);
    if (!p.hist || !p.el) {
        fprintf(stderr, "gpy: cannot start the line editor\n");
        if (p.hist) history_end(p.hist);
        return 1;
    }
    history(p.hist, &p.ev, H_SETSIZE, HISTORY_SIZE);
    history(p.hist, &p.ev, H_SETUNIQUE, 1);
    p.hist_path = history_path();
    if (p.hist_path) history(p.hist, &p.ev, H_LOAD, p.hist_path);
    setup_editor(&p);
    repl_helpers_load(vm);
    vm->prompt_tracebacks = VM_TB_ENTRY_LINES | (p.colour ? VM_TB_COLOUR : 0);

    printf("gpy %s\nType Ctrl-D to exit, %%magics as in IPython (docs/repl.md).\n", GPY_VERSION);
    fflush(stdout);
    char *entry = NULL;
    size_t entry_len = 0, entry_cap = 0;
    int rc = 0;
    for (;;) {
        p.continuation = entry_len > 0;
        p.cancelled = false;
        if (entry_len > 0) {
            size_t ind = next_indent(entry, entry_len);
            char spaces[129];
            if (ind > 128) ind = 128;
            memset(spaces, ' ', ind);
            spaces[ind] = '\0';
            if (ind) el_push(p.el, spaces);
        } else if (p.preload) {
            el_push(p.el, PRELOAD_KEY);
        }
        if (p.paste_mode) fputs("\033[?2004h", stdout);
        fflush(stdout);
        fflush(stderr);
        int count = 0;
        vm_interruptible_reads(vm, true);
        const char *line = el_gets(p.el, &count);
        vm_interruptible_reads(vm, false);
        if (p.paste_mode) fputs("\033[?2004l", stdout);
        fflush(stdout);
        if (p.cancelled) {
            fputs("\nKeyboardInterrupt\n", stdout);
            entry_len = 0;
            continue;
        }
        if (!line || count <= 0) {
            fputc('\n', stdout);
            if (entry_len > 0 && !scan_entry(entry, entry_len).blank) {
                remember(&p, entry, entry_len);
                vm_run_interactive(vm, entry, entry_len);
                if (vm->exit_requested) rc = vm->exit_code;
            }
            break;
        }
        if (entry_len == 0 && is_magic(line)) {
            remember(&p, line, strlen(line));
            run_magic(&p, line);
            vm_clear_interrupt(vm);
            fflush(stdout);
            if (vm->exit_requested) {
                rc = vm->exit_code;
                break;
            }
            continue;
        }
        size_t n = strlen(line);
        /* a recalled block or a paste: several lines in one buffer */
        const char *nl = memchr(line, '\n', n);
        bool unit = nl && nl + 1 < line + n;
        if (!append(&entry, &entry_len, &entry_cap, line, n) ||
            (n > 0 && line[n - 1] != '\n' && !append(&entry, &entry_len, &entry_cap, "\n", 1))) {
            fprintf(stderr, "gpy: out of memory\n");
            rc = 1;
            break;
        }
        EntryState st = scan_entry(entry, entry_len);
        if (st.blank && !st.open) {
            entry_len = 0;
            continue;
        }
        bool waiting = st.open || (st.block && !is_blank_line(line) && !unit);
        if (waiting && !has_final_error(entry, entry_len)) continue;
        remember(&p, entry, entry_len);
        vm_run_interactive(vm, entry, entry_len);
        entry_len = 0;
        /* a Ctrl-C that came after the code ended must not hit the next entry */
        vm_clear_interrupt(vm);
        fflush(stdout);
        if (vm->exit_requested) {
            rc = vm->exit_code;
            break;
        }
    }
    free(entry);
    free(p.preload);
    for (size_t i = 0; i < p.nsession; i++) free(p.session[i]);
    free(p.session);
    free(p.hist_path);
    el_end(p.el);
    history_end(p.hist);
    return rc;
}
