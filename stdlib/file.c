/*
** file.c — text file objects (type TextIOWrapper, as CPython's
** _io.TextIOWrapper): open(), sys.stdout/stderr/stdin, reading with
** universal newlines, writing, iteration over lines, context manager.
** Text is UTF-8. Binary modes ('rb', 'wb', 'ab', 'r+b'...) use the same
** object with `binary` set: reads return bytes, writes take any buffer
** (CPython's BufferedReader/Writer/Random, named so in repr).
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "signals.h"
#include "stdlib_priv.h"

typedef struct File {
    Obj obj;
    FILE *fp;
    Str *name;
    Str *mode;
    bool readable, writable;
    bool closed;
    bool owned;    /* fclose on close/collection (false for the std streams) */
    bool seekable; /* lines can be read with getline and a seek back */
    bool tty;      /* a terminal, pipe or socket: Ctrl-C interrupts a read waiting on it */
    char *buf;     /* stdio buffer of files we open (gc_malloc'd: counts toward GC) */
    bool binary;   /* 'b' in the mode: bytes in and out, no newline translation */
    /* open(..., encoding=, errors=) other than utf-8/strict (file_encoding.c):
    ** writes are encoded with `encoding` ("" for utf-8 as is), the first
    ** one with its BOM while bom_pending; reads see the file transcoded */
    char encoding[32], errors[32], encoding_nobom[16];
    char shown_encoding[32]; /* f.encoding as given to open() */
    bool bom_pending;
} File;

#define FILE_BUFSIZE 8192

static void file_finalize(VM *vm, Obj *o);

static Type *file_type(VM *vm) {
    Type *t = STDLIB_FIND_TYPE(vm, finalize, file_finalize);
    if (!t) {
        file_init(vm);
        t = STDLIB_FIND_TYPE(vm, finalize, file_finalize);
    }
    return t;
}

bool file_is_file(VM *vm, Value v) {
    (void)vm;
    return IS_OBJ(v) && AS_OBJ(v)->type->finalize == file_finalize;
}

/* ------------------------------------------------------------------ */
/* OSError from errno                                                  */
/* ------------------------------------------------------------------ */

Value os_error_new(VM *vm, int err, const char *filename) {
    Type *t;
    switch (err) {
    case ENOENT: t = vm->exc[EXC_FileNotFoundError]; break;
    case EEXIST: t = vm->exc[EXC_FileExistsError]; break;
    case EACCES:
    case EPERM: t = vm->exc[EXC_PermissionError]; break;
    case EISDIR: t = vm->exc[EXC_IsADirectoryError]; break;
    case EPIPE: t = vm->exc[EXC_BrokenPipeError]; break;
    default: t = vm->exc[EXC_OSError]; break;
    }
    /* OSError(errno, strerror[, filename]): args are (errno, strerror) and
    ** str() gives "[Errno 2] No such file or directory: 'name'" */
    Value a[3];
    a[0] = INT_VAL(err);
    a[1] = STR_VAL(str_cstr(vm, strerror(err)));
    vm_push_root(vm, a[1]);
    int n = 2;
    if (filename) {
        a[2] = STR_VAL(str_cstr(vm, filename));
        vm_push_root(vm, a[2]);
        n = 3;
    }
    Value exc = exc_new(vm, t, n, a);
    vm_pop_roots(vm, n - 1);
    return exc;
}

_Noreturn void os_raise_errno(VM *vm, int err, const char *filename) {
    vm_throw(vm, os_error_new(vm, err, filename));
}

/* ------------------------------------------------------------------ */
/* creating file objects                                               */
/* ------------------------------------------------------------------ */

/* A pipe or socket: a read may wait for ever, so Ctrl-C must end it too. */
static bool file_may_block(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

static Value file_make(VM *vm, FILE *fp, Str *name, Str *mode, bool readable, bool writable, bool owned) {
    Type *t = file_type(vm);
    vm_push_root(vm, OBJ_VAL(name));
    vm_push_root(vm, OBJ_VAL(mode));
    File *f = gc_alloc_obj(vm, t, sizeof(File));
    vm_pop_roots(vm, 2);
    f->fp = fp;
    f->name = name;
    f->mode = mode;
    f->readable = readable;
    f->writable = writable;
    f->owned = owned;
    f->seekable = fp && ftell(fp) >= 0;
    f->tty = fp && (isatty(fileno(fp)) || file_may_block(fileno(fp)));
    return OBJ_VAL(f);
}

Value file_from_stream(VM *vm, FILE *fp, const char *name, const char *mode, bool owned) {
    bool r = strchr(mode, 'r') != NULL || strchr(mode, '+') != NULL;
    bool w = strchr(mode, 'w') != NULL || strchr(mode, 'a') != NULL || strchr(mode, 'x') != NULL ||
             strchr(mode, '+') != NULL;
    Str *n = str_cstr(vm, name);
    vm_push_root(vm, OBJ_VAL(n));
    Str *m = str_cstr(vm, mode);
    vm_pop_roots(vm, 1);
    return file_make(vm, fp, n, m, r, w, owned);
}

Value file_open(VM *vm, Str *path, Str *mode) {
    const char *m = mode->chars;
    int nr = 0, nw = 0, na = 0, nx = 0, nplus = 0, nt = 0, nb = 0;
    for (const char *p = m; *p; p++) {
        int *c;
        switch (*p) {
        case 'r': c = &nr; break;
        case 'w': c = &nw; break;
        case 'a': c = &na; break;
        case 'x': c = &nx; break;
        case '+': c = &nplus; break;
        case 't': c = &nt; break;
        case 'b': c = &nb; break;
        default: c = NULL; break;
        }
        if (!c || *c) vm_raise_kind(vm, ValueError, "invalid mode: '%s'", m);
        (*c)++;
    }
    if ((size_t)mode->len != strlen(m)) vm_raise_kind(vm, ValueError, "invalid mode: '%s'", m);
    if (nb && nt) vm_raise_kind(vm, ValueError, "can't have text and binary mode at once");
    if (nr + nw + na + nx != 1)
        vm_raise_kind(vm, ValueError, "must have exactly one of create/read/write/append mode");
    if ((size_t)path->len != strlen(path->chars)) vm_raise_kind(vm, ValueError, "embedded null byte");
    const char *fm;
    if (nr) fm = nplus ? "r+" : "r";
    else if (nw) fm = nplus ? "w+" : "w";
    else if (na) fm = nplus ? "a+" : "a";
    else fm = nplus ? "w+x" : "wx";
    /* CPython closes an unreferenced file at once; here it waits for the
    ** GC, so pending writes of such files are flushed before opening */
    fflush(NULL);
    errno = 0;
    FILE *fp = fopen(path->chars, fm);
    if (!fp && (errno == EMFILE || errno == ENFILE)) {
        /* out of descriptors: collect unreachable file objects and retry */
        gc_collect(vm);
        errno = 0;
        fp = fopen(path->chars, fm);
    }
    if (!fp) os_raise_errno(vm, errno, path->chars);
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        os_raise_errno(vm, EISDIR, path->chars);
    }
    vm_push_root(vm, OBJ_VAL(path));
    vm_push_root(vm, OBJ_VAL(mode));
    if (nb) /* CPython's FileIO spelling of the mode: 'rb', 'wb', 'ab', 'xb', 'rb+'... */
        mode = str_cstr(vm, nplus ? (na ? "ab+" : nx ? "xb+" : "rb+") : nr ? "rb" : nw ? "wb" : na ? "ab" : "xb");
    vm_push_root(vm, OBJ_VAL(mode));
    Value f = file_make(vm, fp, path, mode, nr || nplus, !nr || nplus, true);
    vm_pop_roots(vm, 3);
    File *fo = (File *)AS_OBJ(f);
    fo->binary = nb > 0;
    fo->buf = gc_malloc(vm, FILE_BUFSIZE);
    setvbuf(fp, fo->buf, _IOFBF, FILE_BUFSIZE);
    return f;
}

/* open(path, mode, encoding=, errors=) for a text file whose encoding is
** not plain utf-8/strict. Reading ('r'): the whole file is decoded at open
** (codec_decode) and read back as UTF-8 from an anonymous temporary file,
** so every read method works unchanged; writing ('w', 'a', 'x'): each
** write is encoded (write_text), with a BOM first where the codec has one
** (utf-16/utf-32) and the file is empty, as CPython. */
Value file_open_encoded(VM *vm, Str *path, Str *mode, const char *encoding, const char *errors) {
    bool utf8 = !encoding || codec_is_utf8(vm, encoding);
    bool strict = !errors || strcmp(errors, "strict") == 0;
    if (utf8 && strict) {
        Value fv = file_open(vm, path, mode);
        if (encoding && strlen(encoding) < 32) snprintf(((File *)AS_OBJ(fv))->shown_encoding, 32, "%s", encoding);
        return fv;
    }
    if (encoding && strlen(encoding) >= 32) vm_raise_kind(vm, LookupError, "unknown encoding: %s", encoding);
    if (errors && strlen(errors) >= 32) vm_raise_kind(vm, LookupError, "unknown error handler name '%s'", errors);
    /* an unknown encoding is a LookupError now; the encoding of "" tells
    ** whether it writes a BOM (2 or 4 bytes) */
    Bytes *bom = codec_encode(vm, vm->empty_str, encoding ? encoding : "utf-8", "strict");
    if (strchr(mode->chars, '+') && !utf8)
        vm_raise_kind(vm, ValueError, "gpy supports encoding '%s' only for 'r', 'w', 'a' and 'x' text files", encoding);
    Value fv = file_open(vm, path, mode);
    File *f = (File *)AS_OBJ(fv);
    snprintf(f->encoding, sizeof f->encoding, "%s", encoding && !utf8 ? encoding : "");
    snprintf(f->shown_encoding, sizeof f->shown_encoding, "%s", encoding ? encoding : "");
    snprintf(f->errors, sizeof f->errors, "%s", strict ? "" : errors);
    if (bom->len) snprintf(f->encoding_nobom, sizeof f->encoding_nobom, "%s", bom->len == 2 ? "utf-16-le" : "utf-32-le");
    struct stat st;
    f->bom_pending = bom->len && fstat(fileno(f->fp), &st) == 0 && st.st_size == 0;
    if (!f->readable) return fv;
    /* read it all and decode it (errors raise here) */
    vm_push_root(vm, fv);
    StrBuf raw;
    sb_init(&raw);
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f->fp)) > 0) sb_append(&raw, chunk, got);
    Bytes *rb = bytes_new(vm, raw.data ? raw.data : "", (int64_t)raw.len);
    sb_free(&raw);
    vm_push_root(vm, OBJ_VAL(rb));
    Str *text = codec_decode(vm, rb->data, rb->len, encoding ? encoding : "utf-8", strict ? "strict" : errors);
    vm_push_root(vm, OBJ_VAL(text));
    FILE *tmp = tmpfile();
    if (!tmp) os_raise_errno(vm, errno, NULL);
    fclose(f->fp);
    f->fp = tmp;
    setvbuf(tmp, f->buf, _IOFBF, FILE_BUFSIZE);
    if (text->len && fwrite(text->chars, 1, (size_t)text->len, tmp) != (size_t)text->len) os_raise_errno(vm, errno, NULL);
    rewind(tmp);
    vm_pop_roots(vm, 3);
    return fv;
}

/* ------------------------------------------------------------------ */
/* reading                                                             */
/* ------------------------------------------------------------------ */

static File *as_file(VM *vm, Value v, const char *what) {
    if (!file_is_file(vm, v))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a '_io.TextIOWrapper' object but received a '%s'",
                      what, vm_type_name(vm, v));
    return (File *)AS_OBJ(v);
}

static File *open_file(VM *vm, Value v, const char *what) {
    File *f = as_file(vm, v, what);
    if (f->closed) vm_raise_kind(vm, ValueError, "I/O operation on closed file.");
    return f;
}

static File *readable_file(VM *vm, Value v, const char *what) {
    File *f = open_file(vm, v, what);
    if (!f->readable) vm_raise_kind(vm, OSError, "not readable");
    return f;
}

static File *writable_file(VM *vm, Value v, const char *what) {
    File *f = open_file(vm, v, what);
    if (!f->writable) vm_raise_kind(vm, OSError, "not writable");
    return f;
}

/* A StrBuf whose growth failed (strbuf.c: data freed, cap SIZE_MAX): the
** read must stop there and raise MemoryError. */
static bool sb_failed(const StrBuf *sb) {
    return sb->cap == SIZE_MAX;
}

static Str *decode_buffer(VM *vm, StrBuf *sb);

/* The text read so far as a Str: MemoryError (without a message, as in
** CPython) when sb could not grow. */
static Str *finish_read(VM *vm, StrBuf *sb) {
    if (sb_failed(sb)) {
        sb_init(sb);
        vm_throw(vm, vm->memory_error);
    }
    return decode_buffer(vm, sb);
}

/* After a read that stopped early: raises what a read error means
** (KeyboardInterrupt for a Ctrl-C, MemoryError, OSError). Returns false
** at end of file, true when an interrupted read may be retried. The
** caller frees its buffer first or passes it as sb (freed before raising). */
static bool read_failed(VM *vm, FILE *fp, StrBuf *sb) {
    int err = errno;
    bool error = ferror(fp);
    clearerr(fp);
    if (!error && err != ENOMEM) return false;
    if (err == EINTR && !vm_interrupt_pending(vm)) return true;
    if (sb) sb_free(sb);
    if (err == EINTR) vm_check_signals(vm);
    if (err == ENOMEM) vm_throw(vm, vm->memory_error); /* bare, as CPython's */
    os_raise_errno(vm, err ? err : EIO, NULL);
}

/* Around a read from a terminal: Ctrl-C interrupts it (KeyboardInterrupt,
** also for one that came just before the read). */
static void interruptible_read(VM *vm, bool on) {
    if (on) vm_check_signals(vm);
    vm_interruptible_reads(vm, on);
}

/* Length of the UTF-8 sequence that lead byte c starts (0: invalid). */
static int utf8_len(unsigned char c) {
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return 2;
    if (c >= 0xE0 && c <= 0xEF) return 3;
    if (c >= 0xF0 && c <= 0xF4) return 4;
    return 0;
}

/* Offset of the first invalid byte of s, or -1 when s is valid UTF-8;
** *cont tells whether the fault is a bad continuation byte. */
static int64_t utf8_invalid(const unsigned char *s, size_t len, bool *cont) {
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int n = utf8_len(c);
        if (n == 0) {
            *cont = false;
            return (int64_t)i;
        }
        for (int k = 1; k < n; k++) {
            if (i + (size_t)k >= len || (s[i + (size_t)k] & 0xC0) != 0x80) {
                *cont = true;
                return (int64_t)i;
            }
        }
        i += (size_t)n;
    }
    return -1;
}

/* Makes a Str from bytes read from a file (sb is freed in every case). */
static Str *decode_buffer(VM *vm, StrBuf *sb) {
    bool cont = false;
    int64_t bad = utf8_invalid((const unsigned char *)sb->data, sb->len, &cont);
    if (bad >= 0) {
        unsigned char b = (unsigned char)sb->data[bad];
        sb_free(sb);
        vm_raise_kind(vm, UnicodeDecodeError, "'utf-8' codec can't decode byte 0x%02x in position %lld: %s", b,
                      (long long)bad, cont ? "invalid continuation byte" : "invalid start byte");
    }
    return sb_finish(vm, sb);
}

/* Reads one line into sb (universal newlines: \r\n and \r become \n),
** *nchars counting the characters in it; stops after limit characters
** when limit >= 0. Returns true when the line is complete (or sb could
** not grow), false when getc failed: end of file or a read error. */
static bool read_line_into(FILE *fp, StrBuf *sb, int64_t limit, int64_t *nchars) {
    for (;;) {
        if ((limit >= 0 && *nchars >= limit) || sb_failed(sb)) return true;
        int c = getc_unlocked(fp);
        if (c == EOF) return false;
        if (c == '\r') {
            int d = getc_unlocked(fp);
            if (d != '\n' && d != EOF) ungetc(d, fp);
            sb_putc(sb, '\n');
            return true;
        }
        sb_putc(sb, (char)c);
        if ((c & 0xC0) != 0x80) (*nchars)++;
        if (c == '\n') return true;
        /* finish a multi-byte character before checking the limit */
        int n = utf8_len((unsigned char)c);
        for (int k = 1; k < n; k++) {
            int d = getc_unlocked(fp);
            if (d == EOF) break;
            if ((d & 0xC0) != 0x80) {
                ungetc(d, fp);
                break;
            }
            sb_putc(sb, (char)d);
        }
    }
}

/* Reads up to n characters (all when n < 0) into sb, translating
** newlines; true when done (or sb could not grow), false when a read
** stopped: end of file or a read error. */
static bool read_chars_into(FILE *fp, StrBuf *sb, int64_t n, int64_t *nchars) {
    if (n < 0) {
        char buf[65536];
        size_t got;
        while (!sb_failed(sb) && (got = fread(buf, 1, sizeof buf, fp)) > 0) sb_append(sb, buf, got);
        return sb_failed(sb);
    }
    while (*nchars < n && !sb_failed(sb)) {
        int c = getc_unlocked(fp);
        if (c == EOF) return false;
        if (c == '\r') {
            int d = getc_unlocked(fp);
            if (d != '\n' && d != EOF) ungetc(d, fp);
            c = '\n';
        }
        sb_putc(sb, (char)c);
        (*nchars)++;
        int len = utf8_len((unsigned char)c);
        for (int k = 1; k < len; k++) {
            int d = getc_unlocked(fp);
            if (d == EOF) break;
            if ((d & 0xC0) != 0x80) {
                ungetc(d, fp);
                break;
            }
            sb_putc(sb, (char)d);
        }
    }
    return true;
}

/* Runs reader (read_chars_into or read_line_into) until it is done, at end
** of file, or read_failed has raised; a read from a terminal can be
** interrupted by Ctrl-C, and an EINTR in between retries. */
static void read_until_done(VM *vm, File *f, StrBuf *sb, bool (*reader)(FILE *, StrBuf *, int64_t, int64_t *),
                            int64_t limit) {
    int64_t nchars = 0;
    for (;;) {
        errno = 0;
        if (f->tty) interruptible_read(vm, true);
        bool done = reader(f->fp, sb, limit, &nchars);
        if (f->tty) interruptible_read(vm, false);
        if (done || !read_failed(vm, f->fp, sb)) break;
    }
}

/* Reads up to n characters (all when n < 0). */
static Str *read_chars(VM *vm, File *f, int64_t n) {
    StrBuf sb;
    sb_init(&sb);
    read_until_done(vm, f, &sb, read_chars_into, n);
    if (n < 0 && !sb_failed(&sb)) {
        /* translate \r\n and \r to \n in place */
        size_t j = 0;
        for (size_t i = 0; i < sb.len; i++) {
            char c = sb.data[i];
            if (c == '\r') {
                if (i + 1 < sb.len && sb.data[i + 1] == '\n') i++;
                c = '\n';
            }
            sb.data[j++] = c;
        }
        sb.len = j;
    }
    return finish_read(vm, &sb);
}

/* Str from bytes that must be UTF-8 (buf is free()d in every case). */
static Str *decode_malloced(VM *vm, char *buf, size_t len) {
    bool cont = false;
    int64_t bad = utf8_invalid((const unsigned char *)buf, len, &cont);
    if (bad >= 0) {
        unsigned char b = (unsigned char)buf[bad];
        free(buf);
        vm_raise_kind(vm, UnicodeDecodeError, "'utf-8' codec can't decode byte 0x%02x in position %lld: %s", b,
                      (long long)bad, cont ? "invalid continuation byte" : "invalid start byte");
    }
    Str *s = str_new(vm, buf, len);
    free(buf);
    return s;
}

static Str *readline_file(VM *vm, File *f, int64_t limit) {
    if (limit < 0 && f->seekable) {
        /* fast path: getline, then fix up a carriage return (a lone \r ends
        ** the line: seek back to just after it) */
        char *buf = NULL;
        size_t cap = 0;
        ssize_t n;
        do {
            errno = 0;
            n = getdelim(&buf, &cap, '\n', f->fp);
            if (n < 0) {
                /* getdelim fails with ENOMEM, without the error flag, on a line too long */
                free(buf);
                buf = NULL;
                cap = 0;
            }
        } while (n < 0 && read_failed(vm, f->fp, NULL));
        if (n <= 0) {
            free(buf);
            return vm->empty_str;
        }
        char *cr = memchr(buf, '\r', (size_t)n);
        if (cr) {
            size_t i = (size_t)(cr - buf);
            size_t consumed = i + 1 < (size_t)n && buf[i + 1] == '\n' ? i + 2 : i + 1;
            if (consumed < (size_t)n) fseek(f->fp, -(long)((size_t)n - consumed), SEEK_CUR);
            buf[i] = '\n';
            n = (ssize_t)i + 1;
        }
        return decode_malloced(vm, buf, (size_t)n);
    }
    StrBuf sb;
    sb_init(&sb);
    read_until_done(vm, f, &sb, read_line_into, limit);
    if (sb.len == 0 && !sb_failed(&sb)) {
        sb_free(&sb);
        return vm->empty_str;
    }
    return finish_read(vm, &sb);
}

Str *file_readline(VM *vm, Value file) {
    if (file_is_file(vm, file)) {
        File *f = readable_file(vm, file, "readline");
        /* prompts written to stdout must appear before we block on input */
        fflush(stdout);
        Str *s = readline_file(vm, f, -1);
        return s->len ? s : NULL;
    }
    Value r = vm_call_method(vm, file, cstr_name(vm, "readline"), 0, NULL);
    if (!IS_STR(vm, r))
        vm_raise_kind(vm, TypeError, "object.readline() returned non-string");
    return AS_STR(r)->len ? AS_STR(r) : NULL;
}

/* optional size argument: None or negative means "all" */
static int64_t size_arg(VM *vm, int argc, Value *argv, int idx) {
    if (argc <= idx || IS_NONE(argv[idx])) return -1;
    if (!IS_INTLIKE(argv[idx]))
        vm_raise_kind(vm, TypeError, "argument should be integer or None, not '%s'", vm_type_name(vm, argv[idx]));
    return AS_INTLIKE(argv[idx]);
}

/* ---- binary mode: bytes as they are in the file ---- */

static Value bin_finish(VM *vm, StrBuf *sb) {
    if (sb_failed(sb)) {
        sb_init(sb);
        vm_throw(vm, vm->memory_error);
    }
    Bytes *b = bytes_new(vm, sb->data, (int64_t)sb->len);
    sb_free(sb);
    return OBJ_VAL(b);
}

/* Up to n bytes (all when n < 0): stops early only at end of file. */
static Value bin_read(VM *vm, File *f, int64_t n) {
    StrBuf sb;
    sb_init(&sb);
    char buf[65536];
    while (!sb_failed(&sb) && (n < 0 || (int64_t)sb.len < n)) {
        size_t want = sizeof buf;
        if (n >= 0 && (uint64_t)(n - (int64_t)sb.len) < want) want = (size_t)(n - (int64_t)sb.len);
        errno = 0;
        if (f->tty) interruptible_read(vm, true);
        size_t got = fread(buf, 1, want, f->fp);
        if (f->tty) interruptible_read(vm, false);
        sb_append(&sb, buf, got);
        if (got < want && !read_failed(vm, f->fp, &sb)) break;
    }
    return bin_finish(vm, &sb);
}

/* One line through its b'\n' (at most limit bytes when limit >= 0). */
static Value bin_readline(VM *vm, File *f, int64_t limit) {
    StrBuf sb;
    sb_init(&sb);
    while (!sb_failed(&sb) && (limit < 0 || (int64_t)sb.len < limit)) {
        errno = 0;
        int c = getc_unlocked(f->fp);
        if (c == EOF) {
            if (read_failed(vm, f->fp, &sb)) continue;
            break;
        }
        sb_putc(&sb, (char)c);
        if (c == '\n') break;
    }
    return bin_finish(vm, &sb);
}

/* f.readinto(buffer): fills a writable buffer; the count read. */
static Value m_readinto(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "readinto", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "readinto() takes exactly one argument (%d given)", argc - 1);
    File *f = readable_file(vm, argv[0], "readinto");
    BufferView bv;
    buffer_need(vm, argv[1], &bv);
    if (bv.readonly) vm_raise_kind(vm, TypeError, "readinto() argument must be read-write bytes-like object, not %s",
                                   vm_type_name(vm, argv[1]));
    errno = 0;
    size_t got = fread(bv.buf, 1, (size_t)bv.len, f->fp);
    if (got < (size_t)bv.len) read_failed(vm, f->fp, NULL);
    return INT_VAL((int64_t)got);
}

static Value m_read(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value sz = kw_take(vm, kwargs, "size");
    kw_done(vm, "read", kwargs);
    File *f = readable_file(vm, argv[0], "read");
    if (argc > 2) vm_raise_kind(vm, TypeError, "read expected at most 1 argument, got %d", argc - 1);
    int64_t n = size_arg(vm, argc, argv, 1);
    if (!IS_EMPTY(sz)) n = size_arg(vm, 1, &sz, 0);
    if (f->binary) return bin_read(vm, f, n);
    return STR_VAL(read_chars(vm, f, n));
}

static Value m_readline(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value sz = kw_take(vm, kwargs, "size");
    kw_done(vm, "readline", kwargs);
    File *f = readable_file(vm, argv[0], "readline");
    if (argc > 2) vm_raise_kind(vm, TypeError, "readline expected at most 1 argument, got %d", argc - 1);
    int64_t n = size_arg(vm, argc, argv, 1);
    if (!IS_EMPTY(sz)) n = size_arg(vm, 1, &sz, 0);
    if (f->binary) return bin_readline(vm, f, n);
    return STR_VAL(readline_file(vm, f, n));
}

static Value m_readlines(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_done(vm, "readlines", kwargs);
    File *f = readable_file(vm, argv[0], "readlines");
    int64_t hint = size_arg(vm, argc, argv, 1);
    List *l = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(l));
    int64_t total = 0;
    for (;;) {
        if (f->binary) {
            Value b = bin_readline(vm, f, -1);
            if (AS_BYTES(b)->len == 0) break;
            list_append(vm, l, b);
            total += AS_BYTES(b)->len;
        } else {
            Str *s = readline_file(vm, f, -1);
            if (s->len == 0) break;
            list_append(vm, l, STR_VAL(s));
            total += s->nchars;
        }
        if (hint > 0 && total >= hint) break;
    }
    vm_pop_roots(vm, 1);
    return OBJ_VAL(l);
}

/* ------------------------------------------------------------------ */
/* writing                                                             */
/* ------------------------------------------------------------------ */

/* Raises the OSError for a failed write or flush of fp (stdio drops the
** buffered bytes it could not write, as CPython's stdout does). */
static _Noreturn void write_failed(VM *vm, FILE *fp, int err) {
    clearerr(fp);
    os_raise_errno(vm, err ? err : EIO, NULL);
}

static void write_raw(VM *vm, File *f, const char *s, size_t len) {
    errno = 0;
    if (len && fwrite(s, 1, len, f->fp) != len) write_failed(vm, f->fp, errno);
}

/* Text out: UTF-8 as is, or encoded with the file's encoding and errors. */
static void write_text(VM *vm, File *f, Str *s) {
    if (!f->encoding[0] && !f->errors[0]) {
        write_raw(vm, f, s->chars, (size_t)s->len);
        return;
    }
    const char *enc = f->bom_pending || !f->encoding_nobom[0] ? f->encoding : f->encoding_nobom;
    Bytes *b = codec_encode(vm, s, enc[0] ? enc : "utf-8", f->errors[0] ? f->errors : "strict");
    if (s->len) f->bom_pending = false;
    write_raw(vm, f, (const char *)b->data, (size_t)b->len);
}

static void flush_raw(VM *vm, FILE *fp) {
    errno = 0;
    if (fflush(fp) != 0) write_failed(vm, fp, errno);
}

void file_write(VM *vm, Value file, Str *s) {
    if (file_is_file(vm, file)) {
        File *f = writable_file(vm, file, "write");
        if (f->binary) vm_raise_kind(vm, TypeError, "a bytes-like object is required, not 'str'");
        write_text(vm, f, s);
        return;
    }
    if (IS_EMPTY(file)) {
        errno = 0;
        if (s->len && fwrite(s->chars, 1, (size_t)s->len, stdout) != (size_t)s->len) write_failed(vm, stdout, errno);
        return;
    }
    if (IS_NONE(file)) return;
    Value a = STR_VAL(s);
    vm_call_method(vm, file, cstr_name(vm, "write"), 1, &a);
}

void file_write_bytes(VM *vm, Value file, const char *s, size_t len) {
    if (file_is_file(vm, file)) {
        File *f = writable_file(vm, file, "write");
        if (f->encoding[0] || f->errors[0]) write_text(vm, f, str_new(vm, s, len));
        else write_raw(vm, f, s, len);
        return;
    }
    file_write(vm, file, str_new(vm, s, len));
}

void file_flush(VM *vm, Value file) {
    if (file_is_file(vm, file)) {
        File *f = (File *)AS_OBJ(file);
        if (!f->closed && f->fp) flush_raw(vm, f->fp);
        return;
    }
    if (IS_EMPTY(file)) {
        flush_raw(vm, stdout);
        return;
    }
    if (IS_NONE(file)) return;
    Value m = vm_getattr_opt(vm, file, cstr_name(vm, "flush"));
    if (!IS_EMPTY(m)) vm_call(vm, m, 0, NULL);
}

static Value m_write(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "write", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "write() takes exactly one argument (%d given)", argc - 1);
    File *f = as_file(vm, argv[0], "write");
    if (f->binary) {
        if (f->closed) vm_raise_kind(vm, ValueError, "write to closed file");
        if (!f->writable) vm_raise_kind(vm, OSError, "write");
        BufferView bv;
        buffer_need(vm, argv[1], &bv);
        write_raw(vm, f, (const char *)bv.buf, (size_t)bv.len);
        return INT_VAL(bv.len);
    }
    f = writable_file(vm, argv[0], "write");
    if (!IS_STR(vm, argv[1]))
        vm_raise_kind(vm, TypeError, "write() argument must be str, not %s", vm_type_name(vm, argv[1]));
    Str *s = AS_STR(argv[1]);
    write_text(vm, f, s);
    return INT_VAL(s->nchars);
}

static Value m_writelines(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "writelines", kwargs);
    if (argc != 2) vm_raise_kind(vm, TypeError, "writelines() takes exactly one argument (%d given)", argc - 1);
    Value self = argv[0];
    writable_file(vm, self, "writelines");
    int base = vm->nroots;
    vm_push_root(vm, self);
    Value it = vm_iter(vm, argv[1]);
    vm_push_root(vm, it);
    Value line;
    while (vm_next(vm, it, &line)) {
        if (((File *)AS_OBJ(self))->binary) {
            BufferView bv;
            buffer_need(vm, line, &bv);
            write_raw(vm, writable_file(vm, self, "writelines"), (const char *)bv.buf, (size_t)bv.len);
            continue;
        }
        if (!IS_STR(vm, line))
            vm_raise_kind(vm, TypeError, "write() argument must be str, not %s", vm_type_name(vm, line));
        File *f = writable_file(vm, self, "writelines");
        write_text(vm, f, AS_STR(line));
    }
    vm_pop_roots(vm, vm->nroots - base);
    return NONE_VAL;
}

/* ------------------------------------------------------------------ */
/* other methods                                                       */
/* ------------------------------------------------------------------ */

/* Closes f; a failed final flush raises, but the file is closed all the
** same (as in CPython). */
static void close_file(VM *vm, File *f) {
    if (f->closed) return;
    f->closed = true;
    if (!f->fp) return;
    errno = 0;
    int failed;
    if (f->owned) {
        failed = fclose(f->fp);
        f->fp = NULL;
    } else {
        failed = fflush(f->fp);
        if (failed) clearerr(f->fp);
    }
    int err = errno;
    if (f->buf) gc_free(vm, f->buf, FILE_BUFSIZE);
    f->buf = NULL;
    if (failed) os_raise_errno(vm, err ? err : EIO, NULL);
}

static Value m_close(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    kw_none(vm, "close", kwargs);
    close_file(vm, as_file(vm, argv[0], "close"));
    return NONE_VAL;
}

static Value m_flush(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    kw_none(vm, "flush", kwargs);
    File *f = open_file(vm, argv[0], "flush");
    if (f->writable) flush_raw(vm, f->fp);
    return NONE_VAL;
}

static Value m_enter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)kwargs;
    open_file(vm, argv[0], "__enter__");
    return argv[0];
}

static Value m_exit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)kwargs;
    close_file(vm, as_file(vm, argv[0], "__exit__"));
    return NONE_VAL;
}

static Value m_fileno(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    kw_none(vm, "fileno", kwargs);
    return INT_VAL(fileno(open_file(vm, argv[0], "fileno")->fp));
}

static Value m_isatty(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    kw_none(vm, "isatty", kwargs);
    return BOOL_VAL(isatty(fileno(open_file(vm, argv[0], "isatty")->fp)));
}

static Value m_readable(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    kw_none(vm, "readable", kwargs);
    return BOOL_VAL(open_file(vm, argv[0], "readable")->readable);
}

static Value m_writable(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    kw_none(vm, "writable", kwargs);
    return BOOL_VAL(open_file(vm, argv[0], "writable")->writable);
}

static Value m_seekable(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    kw_none(vm, "seekable", kwargs);
    File *f = open_file(vm, argv[0], "seekable");
    return BOOL_VAL(ftell(f->fp) >= 0);
}

static Value m_tell(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    kw_none(vm, "tell", kwargs);
    File *f = open_file(vm, argv[0], "tell");
    long pos = ftell(f->fp);
    if (pos < 0) os_raise_errno(vm, errno, NULL);
    return INT_VAL(pos);
}

static Value m_seek(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "seek", kwargs);
    if (argc < 2 || argc > 3) vm_raise_kind(vm, TypeError, "seek expected at least 1 argument, got %d", argc - 1);
    File *f = open_file(vm, argv[0], "seek");
    int64_t off = arg_int(vm, "seek", argv[1]);
    int64_t whence = argc > 2 ? arg_int(vm, "seek", argv[2]) : 0;
    if (whence != 0 && off != 0 && !f->binary)
        vm_raise_kind(vm, OSError, whence == 2 ? "can't do nonzero end-relative seeks" : "can't do nonzero cur-relative seeks");
    int w = whence == 0 ? SEEK_SET : whence == 1 ? SEEK_CUR : SEEK_END;
    if (whence < 0 || whence > 2) vm_raise_kind(vm, ValueError, "invalid whence (%lld, should be 0, 1 or 2)", (long long)whence);
    if (fseek(f->fp, (long)off, w) != 0) os_raise_errno(vm, errno, NULL);
    return INT_VAL(ftell(f->fp));
}

static Value m_truncate(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "truncate", kwargs);
    File *f = writable_file(vm, argv[0], "truncate");
    flush_raw(vm, f->fp);
    int64_t size = argc > 1 && !IS_NONE(argv[1]) ? arg_int(vm, "truncate", argv[1]) : ftell(f->fp);
    if (ftruncate(fileno(f->fp), (off_t)size) != 0) os_raise_errno(vm, errno, NULL);
    return INT_VAL(size);
}

static Value m_iter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)kwargs;
    open_file(vm, argv[0], "__iter__");
    return argv[0];
}

static bool file_next_slot(VM *vm, Value self, Value *out) {
    File *f = readable_file(vm, self, "__next__");
    if (f->binary) {
        Value b = bin_readline(vm, f, -1);
        if (AS_BYTES(b)->len == 0) return false;
        *out = b;
        return true;
    }
    Str *s = readline_file(vm, f, -1);
    if (s->len == 0) return false;
    *out = STR_VAL(s);
    return true;
}

static Value m_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)kwargs;
    Value out;
    if (file_next_slot(vm, argv[0], &out)) return out;
    vm_throw(vm, OBJ_VAL(vm->exc[EXC_StopIteration]));
}

/* ------------------------------------------------------------------ */
/* slots                                                               */
/* ------------------------------------------------------------------ */

static Value file_iter_slot(VM *vm, Value self) {
    open_file(vm, self, "__iter__");
    return self;
}

/* CPython names the encoding of the standard streams 'utf-8' and that of
** open() files (the locale's) 'UTF-8'. */
static const char *file_encoding(const File *f) {
    return f->owned ? "UTF-8" : "utf-8";
}

static Value file_repr(VM *vm, Value self) {
    File *f = (File *)AS_OBJ(self);
    if (f->binary) {
        const char *kind = f->readable && f->writable ? "BufferedRandom" : f->readable ? "BufferedReader" : "BufferedWriter";
        Str *n = str_repr(vm, f->name);
        return STR_VAL(str_printf(vm, "<_io.%s name=%s>", kind, n->chars));
    }
    if (f->closed) return STR_VAL(str_cstr(vm, "<_io.TextIOWrapper name=<closed>>"));
    Str *n = str_repr(vm, f->name);
    vm_push_root(vm, OBJ_VAL(n));
    Str *m = str_repr(vm, f->mode);
    vm_pop_roots(vm, 1);
    return STR_VAL(str_printf(vm, "<_io.TextIOWrapper name=%s mode=%s encoding='%s'>", n->chars, m->chars,
                              f->shown_encoding[0] ? f->shown_encoding : file_encoding(f)));
}

static Value file_getattr(VM *vm, Value self, Str *name) {
    File *f = (File *)AS_OBJ(self);
    const char *n = name->chars;
    if (n[0] != '_' || n[1] == '_') {
        if (strcmp(n, "closed") == 0) return BOOL_VAL(f->closed);
        if (strcmp(n, "name") == 0) return STR_VAL(f->name);
        if (strcmp(n, "mode") == 0) return STR_VAL(f->mode);
        if (f->binary && (strcmp(n, "encoding") == 0 || strcmp(n, "errors") == 0 || strcmp(n, "newlines") == 0 ||
                          strcmp(n, "line_buffering") == 0))
            return EMPTY_VAL;
        if (strcmp(n, "encoding") == 0) return STR_VAL(str_cstr(vm, f->shown_encoding[0] ? f->shown_encoding : file_encoding(f)));
        if (strcmp(n, "buffer") == 0 && !f->binary && !f->closed && f->fp) {
            /* the binary layer: a binary file object over the same stream (so
            ** text and bytes written through both keep their order) */
            Str *bm = str_cstr(vm, f->readable && f->writable ? "rb+" : f->readable ? "rb" : "wb");
            vm_push_root(vm, OBJ_VAL(bm));
            Value b = file_make(vm, f->fp, f->name, bm, f->readable, f->writable, false);
            vm_pop_roots(vm, 1);
            ((File *)AS_OBJ(b))->binary = true;
            return b;
        }
        if (strcmp(n, "errors") == 0) return STR_VAL(str_cstr(vm, f->errors[0] ? f->errors : "strict"));
        if (strcmp(n, "newlines") == 0) return NONE_VAL;
        if (strcmp(n, "line_buffering") == 0) return BOOL_VAL(false);
        if (strcmp(n, "__class__") == 0) return OBJ_VAL(AS_OBJ(self)->type);
    }
    Value m = type_lookup(vm, AS_OBJ(self)->type, name);
    if (IS_EMPTY(m)) return EMPTY_VAL;
    if (IS_OBJ(m) && (AS_OBJ(m)->type == vm->t_builtin_function || AS_OBJ(m)->type == vm->t_function))
        return bound_method_new(vm, self, m);
    return m;
}

static void file_mark(VM *vm, Obj *o) {
    File *f = (File *)o;
    if (f->name) gc_mark_obj(vm, (Obj *)f->name);
    if (f->mode) gc_mark_obj(vm, (Obj *)f->mode);
}

static void file_finalize(VM *vm, Obj *o) {
    File *f = (File *)o;
    if (f->fp && f->owned && !f->closed) fclose(f->fp);
    else if (f->fp && !f->closed) fflush(f->fp);
    f->fp = NULL;
    if (f->buf) gc_free(vm, f->buf, FILE_BUFSIZE);
    f->buf = NULL;
}

/* ------------------------------------------------------------------ */
/* an embedding application's output (VMConfig.write / .error)         */
/* ------------------------------------------------------------------ */

/* When the configuration has a write (error) callback, sys.stdout
** (sys.stderr) is a stdio stream made with glibc's fopencookie whose every
** write calls it: the rest of file.c treats it as any other stream, and none
** of the VM's output reaches the process's own. Unbuffered, so the
** application sees stdout and stderr text at once and in order. */
typedef struct CallbackStream {
    VM *vm;
    GpyWriteFn fn;
} CallbackStream;

static ssize_t callback_write(void *cookie, const char *buf, size_t size) {
    CallbackStream *cs = cookie;
    cs->fn(cs->vm->api, buf, size, cs->vm->config.user_data);
    return (ssize_t)size;
}

static int callback_close(void *cookie) {
    free(cookie);
    return 0;
}

typedef struct StreamCtx {
    FILE *fp;
    const char *name;
    Value file;
} StreamCtx;

static void make_stream_file(VM *vm, void *ud) {
    StreamCtx *c = ud;
    c->file = file_from_stream(vm, c->fp, c->name, "w", true);
}

static Value file_from_callback(VM *vm, GpyWriteFn fn, const char *name) {
    CallbackStream *cs = malloc(sizeof *cs);
    if (!cs) vm_throw(vm, vm->memory_error);
    cs->vm = vm;
    cs->fn = fn;
    cookie_io_functions_t io = {.read = NULL, .write = callback_write, .seek = NULL, .close = callback_close};
    FILE *fp = fopencookie(cs, "w", io);
    if (!fp) {
        free(cs);
        vm_throw(vm, vm->memory_error);
    }
    setvbuf(fp, NULL, _IONBF, 0);
    StreamCtx c = {.fp = fp, .name = name, .file = NONE_VAL};
    if (!vm_pcall(vm, make_stream_file, &c)) {
        fclose(fp); /* the File object owns fp only once it exists */
        vm_rethrow(vm, vm->exc_value);
    }
    return c.file;
}

/* sys.stdout (err false) or sys.stderr as the VM starts. */
static Value std_output(VM *vm, bool err) {
    GpyWriteFn fn = err ? vm->config.error : vm->config.write;
    const char *name = err ? "<stderr>" : "<stdout>";
    if (fn) return file_from_callback(vm, fn, name);
    return file_from_stream(vm, err ? stderr : stdout, name, "w", false);
}

Value file_sys_stream(VM *vm, const char *name) {
    if (vm->sys_module && vm->sys_module->dict) {
        Value v = dict_get_cstr(vm, vm->sys_module->dict, name);
        if (!IS_EMPTY(v)) return v;
    }
    Value *slot = strcmp(name, "stdout") == 0 ? &vm->sys_stdout
                  : strcmp(name, "stderr") == 0 ? &vm->sys_stderr
                                                : &vm->sys_stdin;
    if (IS_EMPTY(*slot)) {
        if (slot == &vm->sys_stdout) *slot = std_output(vm, false);
        else if (slot == &vm->sys_stderr) *slot = std_output(vm, true);
        else *slot = file_from_stream(vm, stdin, "<stdin>", "r", false);
    }
    return *slot;
}

void file_init(VM *vm) {
    if (STDLIB_FIND_TYPE(vm, finalize, file_finalize)) return;
    Type *t = type_new_builtin(vm, "TextIOWrapper", vm->t_object, 0);
    t->repr = file_repr;
    t->getattr = file_getattr;
    t->iter = file_iter_slot;
    t->next = file_next_slot;
    t->mark = file_mark;
    t->finalize = file_finalize;
    static const struct {
        const char *name;
        NativeFn fn;
    } methods[] = {
        {"read", m_read},         {"readline", m_readline}, {"readlines", m_readlines},
        {"write", m_write},       {"writelines", m_writelines}, {"close", m_close},
        {"flush", m_flush},       {"__enter__", m_enter},   {"__exit__", m_exit},
        {"fileno", m_fileno},     {"isatty", m_isatty},     {"readable", m_readable},
        {"writable", m_writable}, {"seekable", m_seekable}, {"tell", m_tell},
        {"seek", m_seek},         {"truncate", m_truncate}, {"__iter__", m_iter},
        {"__next__", m_next},     {"readinto", m_readinto},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        type_add_method(vm, t, methods[i].name, methods[i].fn);
    if (t->dict) dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, "_io")));
    if (IS_EMPTY(vm->sys_stdout)) vm->sys_stdout = std_output(vm, false);
    if (IS_EMPTY(vm->sys_stderr)) vm->sys_stderr = std_output(vm, true);
    if (IS_EMPTY(vm->sys_stdin)) vm->sys_stdin = file_from_stream(vm, stdin, "<stdin>", "r", false);
}
