/*
** os.c — the os module (environment, working directory, files and
** directories, processes) and its path submodule with posixpath's string
** rules (join, split, splitext, normpath, abspath, relpath, ...).
** os.path is registered in sys.modules as "os.path" too.
*/
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bytes.h"
#include "stdlib_priv.h"

extern char **environ;

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static Str *path_arg(VM *vm, Value v, const char *fname) {
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "%s: path should be string, bytes or os.PathLike, not %s", fname,
                      vm_type_name(vm, v));
    Str *s = AS_STR(v);
    if ((size_t)s->len != strlen(s->chars)) vm_raise_kind(vm, ValueError, "%s: embedded null character in path", fname);
    return s;
}

static Str *str_arg(VM *vm, Value v) {
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "expected str, bytes or os.PathLike object, not %s", vm_type_name(vm, v));
    return AS_STR(v);
}

static Value str_val(VM *vm, const char *s, size_t len) { return STR_VAL(str_new(vm, s, len)); }

static Value pair(VM *vm, Value a, Value b) {
    vm_push_root(vm, a);
    vm_push_root(vm, b);
    Tuple *t = tuple_new(vm, 2);
    t->items[0] = a;
    t->items[1] = b;
    vm_pop_roots(vm, 2);
    return OBJ_VAL(t);
}

/* ------------------------------------------------------------------ */
/* environment                                                         */
/* ------------------------------------------------------------------ */

static Dict *environ_of(VM *vm) {
    Value d = vm_current_native(vm)->data;
    return IS_DICT(vm, d) ? AS_DICT(d) : NULL;
}

static Value o_getenv(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value key = argc > 0 ? argv[0] : kw_take(vm, kwargs, "key");
    Value dflt = argc > 1 ? argv[1] : kw_take(vm, kwargs, "default");
    kw_done(vm, "getenv", kwargs);
    if (argc > 2) vm_raise_kind(vm, TypeError, "getenv() takes from 1 to 2 positional arguments but %d were given", argc);
    if (IS_EMPTY(key)) vm_raise_kind(vm, TypeError, "getenv() missing 1 required positional argument: 'key'");
    if (!IS_STR(vm, key)) vm_raise_kind(vm, TypeError, "str expected, not %s", vm_type_name(vm, key));
    Dict *env = environ_of(vm);
    Value v = EMPTY_VAL;
    if (env) v = dict_get_str(vm, env, AS_STR(key));
    else {
        const char *e = getenv(AS_STR(key)->chars);
        if (e) v = STR_VAL(str_cstr(vm, e));
    }
    if (!IS_EMPTY(v)) return v;
    return IS_EMPTY(dflt) ? NONE_VAL : dflt;
}

static Value o_putenv(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "putenv", kwargs);
    arg_between(vm, "putenv", argc, 2, 2);
    Str *k = str_arg(vm, argv[0]), *v = str_arg(vm, argv[1]);
    if (k->len == 0 || strchr(k->chars, '=')) vm_raise_kind(vm, ValueError, "illegal environment variable name");
    if (setenv(k->chars, v->chars, 1) != 0) os_raise_errno(vm, errno, NULL);
    Dict *env = environ_of(vm);
    if (env) dict_set_str(vm, env, k, STR_VAL(v));
    return NONE_VAL;
}

static Value o_unsetenv(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "unsetenv", kwargs);
    arg_between(vm, "unsetenv", argc, 1, 1);
    Str *k = str_arg(vm, argv[0]);
    unsetenv(k->chars);
    Dict *env = environ_of(vm);
    if (env) dict_del(vm, env, STR_VAL(k));
    return NONE_VAL;
}

/* ------------------------------------------------------------------ */
/* files and directories                                               */
/* ------------------------------------------------------------------ */

static Value o_getcwd(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    kw_none(vm, "getcwd", kwargs);
    if (argc) vm_raise_kind(vm, TypeError, "os.getcwd() takes no arguments (%d given)", argc);
    char buf[PATH_MAX];
    if (!getcwd(buf, sizeof buf)) os_raise_errno(vm, errno, NULL);
    return STR_VAL(str_cstr(vm, buf));
}

static Value o_chdir(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "chdir", kwargs);
    arg_between(vm, "chdir", argc, 1, 1);
    Str *p = path_arg(vm, argv[0], "chdir");
    if (chdir(p->chars) != 0) os_raise_errno(vm, errno, p->chars);
    return NONE_VAL;
}

/* Directory entries (without . and ..) in the order the OS returns them. */
static List *list_dir(VM *vm, const char *path) {
    DIR *d = opendir(path);
    if (!d) os_raise_errno(vm, errno, path);
    List *l = list_new(vm, 0);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        list_append(vm, l, STR_VAL(str_cstr(vm, e->d_name)));
    }
    closedir(d);
    return l;
}

static Value o_listdir(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value p = argc > 0 ? argv[0] : kw_take(vm, kwargs, "path");
    kw_done(vm, "listdir", kwargs);
    arg_between(vm, "listdir", argc, 0, 1);
    const char *path = IS_EMPTY(p) || IS_NONE(p) ? "." : path_arg(vm, p, "listdir")->chars;
    return OBJ_VAL(list_dir(vm, path));
}

static int mode_kw(VM *vm, int argc, Value *argv, int idx, Dict *kwargs, int dflt) {
    Value m = argc > idx ? argv[idx] : kw_take(vm, kwargs, "mode");
    return IS_EMPTY(m) ? dflt : (int)vm_to_index(vm, m);
}

static Value o_mkdir(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value p = argc > 0 ? argv[0] : kw_take(vm, kwargs, "path");
    int mode = mode_kw(vm, argc, argv, 1, kwargs, 0777);
    kw_done(vm, "mkdir", kwargs);
    if (IS_EMPTY(p)) vm_raise_kind(vm, TypeError, "mkdir() missing required argument 'path' (pos 1)");
    Str *s = path_arg(vm, p, "mkdir");
    if (mkdir(s->chars, (mode_t)mode) != 0) os_raise_errno(vm, errno, s->chars);
    return NONE_VAL;
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* makedirs(name, mode=0o777, exist_ok=False): every missing parent too */
static Value o_makedirs(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value p = argc > 0 ? argv[0] : kw_take(vm, kwargs, "name");
    int mode = mode_kw(vm, argc, argv, 1, kwargs, 0777);
    Value ok = argc > 2 ? argv[2] : kw_take(vm, kwargs, "exist_ok");
    kw_done(vm, "makedirs", kwargs);
    if (IS_EMPTY(p)) vm_raise_kind(vm, TypeError, "makedirs() missing 1 required positional argument: 'name'");
    Str *s = path_arg(vm, p, "makedirs");
    bool exist_ok = !IS_EMPTY(ok) && vm_truthy(vm, ok);
    size_t len = (size_t)s->len;
    char *buf = gc_malloc(vm, len + 1);
    memcpy(buf, s->chars, len + 1);
    int err = 0;
    for (size_t i = 1; i <= len && !err; i++) {
        if (i == len || buf[i] == '/') {
            char c = buf[i];
            buf[i] = 0;
            if (i == len) {
                if (mkdir(buf, (mode_t)mode) != 0 && !(errno == EEXIST && exist_ok && is_dir(buf))) err = errno;
            } else if (!is_dir(buf) && mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST) {
                err = errno;
            }
            buf[i] = c;
        }
    }
    gc_free(vm, buf, len + 1);
    if (err) os_raise_errno(vm, err, s->chars);
    return NONE_VAL;
}

#define PATH_OP1(cname, pyname, call)                                            \
    static Value cname(VM *vm, int argc, Value *argv, Dict *kwargs) {            \
        Value p = argc > 0 ? argv[0] : kw_take(vm, kwargs, "path");             \
        kw_done(vm, pyname, kwargs);                                             \
        if (IS_EMPTY(p))                                                         \
            vm_raise_kind(vm, TypeError, pyname "() missing required argument 'path' (pos 1)"); \
        Str *s = path_arg(vm, p, pyname);                                        \
        if (call(s->chars) != 0) os_raise_errno(vm, errno, s->chars);            \
        return NONE_VAL;                                                         \
    }

PATH_OP1(o_remove, "remove", unlink)
PATH_OP1(o_unlink, "unlink", unlink)
PATH_OP1(o_rmdir, "rmdir", rmdir)

static Value o_rename(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "rename", kwargs);
    arg_between(vm, "rename", argc, 2, 2);
    Str *a = path_arg(vm, argv[0], "rename"), *b = path_arg(vm, argv[1], "rename");
    if (rename(a->chars, b->chars) != 0) {
        /* OSError(errno, strerror, filename, None, filename2) */
        int err = errno;
        Value args[5] = {INT_VAL(err), STR_VAL(str_cstr(vm, strerror(err))), STR_VAL(a), NONE_VAL, STR_VAL(b)};
        vm_push_root(vm, args[1]);
        Type *t = err == ENOENT   ? vm->exc[EXC_FileNotFoundError]
                  : err == EEXIST ? vm->exc[EXC_FileExistsError]
                  : (err == EACCES || err == EPERM) ? vm->exc[EXC_PermissionError]
                  : err == EISDIR ? vm->exc[EXC_IsADirectoryError]
                                  : vm->exc[EXC_OSError];
        vm_throw(vm, exc_new(vm, t, 5, args));
    }
    return NONE_VAL;
}

static Value o_getpid(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)argv;
    (void)kwargs;
    (void)vm;
    return INT_VAL(getpid());
}

/* os.urandom(n): n bytes from the kernel's generator (getrandom). */
static Value o_urandom(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "urandom", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "urandom() takes exactly one argument (%d given)", argc);
    int64_t n = vm_to_index(vm, argv[0]);
    if (n < 0) vm_raise_kind(vm, ValueError, "negative argument not allowed");
    Bytes *b = bytes_alloc(vm, n);
    for (int64_t got = 0; got < n;) {
        ssize_t r = getrandom(b->data + got, (size_t)(n - got), 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            os_raise_errno(vm, errno, NULL);
        }
        got += r;
    }
    return OBJ_VAL(b);
}

static Value o_getppid(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)argv;
    (void)kwargs;
    (void)vm;
    return INT_VAL(getppid());
}

static Value o_getuid(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)argv;
    (void)kwargs;
    (void)vm;
    return INT_VAL(getuid());
}

static Value o_cpu_count(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argc;
    (void)argv;
    (void)kwargs;
    (void)vm;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? INT_VAL(n) : NONE_VAL;
}

static Value o_system(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "system", kwargs);
    arg_between(vm, "system", argc, 1, 1);
    Str *cmd = str_arg(vm, argv[0]);
    fflush(stdout);
    fflush(stderr);
    int st = system(cmd->chars);
    return INT_VAL(st);
}

static Value o_exit_now(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "_exit", kwargs);
    arg_between(vm, "_exit", argc, 1, 1);
    _exit((int)vm_to_index(vm, argv[0]));
}

static Value o_access(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "access", kwargs);
    arg_between(vm, "access", argc, 2, 2);
    Str *p = path_arg(vm, argv[0], "access");
    return BOOL_VAL(access(p->chars, (int)vm_to_index(vm, argv[1])) == 0);
}

static Value o_fspath(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "fspath", kwargs);
    arg_between(vm, "fspath", argc, 1, 1);
    str_arg(vm, argv[0]);
    return argv[0];
}

static Value stat_result(VM *vm, const struct stat *st) {
    static const char *const fields[] = {"st_mode",     "st_ino",      "st_dev",     "st_nlink", "st_uid",
                                         "st_gid",      "st_size",     "st_atime",   "st_mtime", "st_ctime",
                                         "st_atime",    "st_mtime",    "st_ctime",   "st_atime_ns",
                                         "st_mtime_ns", "st_ctime_ns", "st_blksize", "st_blocks"};
    Value v[18];
    v[0] = INT_VAL(st->st_mode);
    v[1] = INT_VAL((int64_t)st->st_ino);
    v[2] = INT_VAL((int64_t)st->st_dev);
    v[3] = INT_VAL((int64_t)st->st_nlink);
    v[4] = INT_VAL(st->st_uid);
    v[5] = INT_VAL(st->st_gid);
    v[6] = INT_VAL(st->st_size);
    v[7] = INT_VAL(st->st_atim.tv_sec);
    v[8] = INT_VAL(st->st_mtim.tv_sec);
    v[9] = INT_VAL(st->st_ctim.tv_sec);
    v[10] = FLOAT_VAL((double)st->st_atim.tv_sec + st->st_atim.tv_nsec * 1e-9);
    v[11] = FLOAT_VAL((double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec * 1e-9);
    v[12] = FLOAT_VAL((double)st->st_ctim.tv_sec + st->st_ctim.tv_nsec * 1e-9);
    v[13] = INT_VAL((int64_t)st->st_atim.tv_sec * 1000000000 + st->st_atim.tv_nsec);
    v[14] = INT_VAL((int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec);
    v[15] = INT_VAL((int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec);
    v[16] = INT_VAL(st->st_blksize);
    v[17] = INT_VAL(st->st_blocks);
    return structseq_new(vm, "os.stat_result", fields, 18, 10, v);
}

static Value o_stat(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value p = argc > 0 ? argv[0] : kw_take(vm, kwargs, "path");
    kw_done(vm, "stat", kwargs);
    if (IS_EMPTY(p)) vm_raise_kind(vm, TypeError, "stat() missing required argument 'path' (pos 1)");
    Str *s = path_arg(vm, p, "stat");
    struct stat st;
    fflush(NULL); /* unclosed files: their data first (CPython would have closed them) */
    if (stat(s->chars, &st) != 0) os_raise_errno(vm, errno, s->chars);
    return stat_result(vm, &st);
}

/* ------------------------------------------------------------------ */
/* os.path (posixpath)                                                 */
/* ------------------------------------------------------------------ */

/* index just after the last '/' (0 when none) */
static size_t tail_start(const char *p, size_t len) {
    size_t i = len;
    while (i > 0 && p[i - 1] != '/') i--;
    return i;
}

/* split(p): head without trailing slashes (unless it is all slashes) */
static size_t head_len(const char *p, size_t len) {
    size_t i = tail_start(p, len);
    size_t h = i;
    bool all_slash = true;
    for (size_t k = 0; k < i; k++)
        if (p[k] != '/') all_slash = false;
    if (!all_slash)
        while (h > 0 && p[h - 1] == '/') h--;
    return h;
}

static Value p_split(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "split", kwargs);
    arg_between(vm, "split", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    size_t t = tail_start(s->chars, (size_t)s->len), h = head_len(s->chars, (size_t)s->len);
    Value head = str_val(vm, s->chars, h);
    vm_push_root(vm, head);
    Value tail = str_val(vm, s->chars + t, (size_t)s->len - t);
    vm_pop_roots(vm, 1);
    return pair(vm, head, tail);
}

static Value p_basename(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "basename", kwargs);
    arg_between(vm, "basename", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    size_t t = tail_start(s->chars, (size_t)s->len);
    return str_val(vm, s->chars + t, (size_t)s->len - t);
}

static Value p_dirname(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "dirname", kwargs);
    arg_between(vm, "dirname", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    return str_val(vm, s->chars, head_len(s->chars, (size_t)s->len));
}

/* splitext: the extension starts at the last dot of the last component,
** unless the component is only leading dots before it */
static size_t ext_start(const char *p, size_t len) {
    size_t sep = tail_start(p, len); /* first index of the last component */
    const char *dot = NULL;
    for (size_t i = sep; i < len; i++)
        if (p[i] == '.') dot = p + i;
    if (!dot) return len;
    size_t d = (size_t)(dot - p);
    for (size_t i = sep; i < d; i++)
        if (p[i] != '.') return d;
    return len;
}

static Value p_splitext(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "splitext", kwargs);
    arg_between(vm, "splitext", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    size_t e = ext_start(s->chars, (size_t)s->len);
    Value root = str_val(vm, s->chars, e);
    vm_push_root(vm, root);
    Value ext = str_val(vm, s->chars + e, (size_t)s->len - e);
    vm_pop_roots(vm, 1);
    return pair(vm, root, ext);
}

static Value p_join(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "join", kwargs);
    if (argc < 1) vm_raise_kind(vm, TypeError, "join() missing 1 required positional argument: 'a'");
    for (int i = 0; i < argc; i++) str_arg(vm, argv[i]);
    StrBuf sb;
    sb_init(&sb);
    sb_append_str(&sb, AS_STR(argv[0]));
    for (int i = 1; i < argc; i++) {
        Str *b = AS_STR(argv[i]);
        if (b->len > 0 && b->chars[0] == '/') {
            sb.len = 0;
        } else if (sb.len > 0 && sb.data[sb.len - 1] != '/') {
            sb_putc(&sb, '/');
        }
        sb_append_str(&sb, b);
    }
    return STR_VAL(sb_finish(vm, &sb));
}

/* posixpath.normpath into sb */
static void normpath_into(VM *vm, StrBuf *sb, const char *p, size_t len) {
    if (len == 0) {
        sb_putc(sb, '.');
        return;
    }
    int initial = 0;
    if (p[0] == '/') {
        initial = 1;
        if (len >= 2 && p[1] == '/' && !(len >= 3 && p[2] == '/')) initial = 2;
    }
    /* component boundaries as (start, length) pairs; a component and its
    ** slash take two bytes at least, so len / 2 + 1 of them fit */
    size_t ncomp = 0, cap = len / 2 + 1;
    size_t *starts = malloc(2 * cap * sizeof(size_t));
    if (!starts) {
        sb_free(sb);
        vm_raise_kind(vm, MemoryError, "out of memory normalizing a path");
    }
    size_t *lens = starts + cap;
    size_t i = 0;
    while (i <= len) {
        size_t j = i;
        while (j < len && p[j] != '/') j++;
        size_t n = j - i;
        const char *c = p + i;
        if (!(n == 0 || (n == 1 && c[0] == '.'))) {
            bool dotdot = n == 2 && c[0] == '.' && c[1] == '.';
            bool last_dotdot = ncomp > 0 && lens[ncomp - 1] == 2 && p[starts[ncomp - 1]] == '.' &&
                               p[starts[ncomp - 1] + 1] == '.';
            if (!dotdot || (!initial && ncomp == 0) || last_dotdot) {
                starts[ncomp] = i;
                lens[ncomp] = n;
                ncomp++;
            } else if (ncomp > 0) {
                ncomp--;
            }
        }
        i = j + 1;
    }
    for (int k = 0; k < initial; k++) sb_putc(sb, '/');
    for (size_t k = 0; k < ncomp; k++) {
        if (k) sb_putc(sb, '/');
        sb_append(sb, p + starts[k], lens[k]);
    }
    free(starts);
    if (sb->len == 0) sb_putc(sb, '.');
}

static Value p_normpath(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "normpath", kwargs);
    arg_between(vm, "normpath", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    StrBuf sb;
    sb_init(&sb);
    normpath_into(vm, &sb, s->chars, (size_t)s->len);
    return STR_VAL(sb_finish(vm, &sb));
}

/* abspath(p) as a malloc'd StrBuf content */
static void abspath_into(VM *vm, StrBuf *sb, Str *s) {
    char cwd[PATH_MAX];
    if (s->len > 0 && s->chars[0] == '/') {
        normpath_into(vm, sb, s->chars, (size_t)s->len);
        return;
    }
    if (!getcwd(cwd, sizeof cwd)) os_raise_errno(vm, errno, NULL);
    StrBuf tmp;
    sb_init(&tmp);
    sb_appends(&tmp, cwd);
    if (s->len > 0) {
        if (tmp.len == 0 || tmp.data[tmp.len - 1] != '/') sb_putc(&tmp, '/');
        sb_append_str(&tmp, s);
    }
    Str *joined = sb_finish(vm, &tmp); /* a Str, so that a MemoryError below leaks nothing */
    normpath_into(vm, sb, joined->chars, (size_t)joined->len);
}

static Value p_abspath(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "abspath", kwargs);
    arg_between(vm, "abspath", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    StrBuf sb;
    sb_init(&sb);
    abspath_into(vm, &sb, s);
    return STR_VAL(sb_finish(vm, &sb));
}

static Value p_realpath(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value strict = kw_take(vm, kwargs, "strict");
    (void)strict;
    kw_done(vm, "realpath", kwargs);
    arg_between(vm, "realpath", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    char buf[PATH_MAX];
    if (realpath(s->chars, buf)) return STR_VAL(str_cstr(vm, buf));
    return p_abspath(vm, argc, argv, NULL);
}

static Value p_relpath(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value start = argc > 1 ? argv[1] : kw_take(vm, kwargs, "start");
    kw_done(vm, "relpath", kwargs);
    arg_between(vm, "relpath", argc, 1, 2);
    Str *s = str_arg(vm, argv[0]);
    if (s->len == 0) vm_raise_kind(vm, ValueError, "no path specified");
    Str *st = IS_EMPTY(start) || IS_NONE(start) ? str_cstr(vm, ".") : str_arg(vm, start);
    vm_push_root(vm, OBJ_VAL(st));
    StrBuf a, b, out;
    sb_init(&a);
    abspath_into(vm, &a, s);
    sb_init(&b);
    abspath_into(vm, &b, st);
    vm_pop_roots(vm, 1);
    sb_putc(&a, 0);
    sb_putc(&b, 0);
    /* components of both absolute paths; count the common prefix */
    const char *pa = a.data, *pb = b.data;
    size_t common_end_a = 0, common_end_b = 0;
    size_t ia = 0, ib = 0;
    for (;;) {
        while (pa[ia] == '/') ia++;
        while (pb[ib] == '/') ib++;
        if (!pa[ia] || !pb[ib]) break;
        size_t ja = ia, jb = ib;
        while (pa[ja] && pa[ja] != '/') ja++;
        while (pb[jb] && pb[jb] != '/') jb++;
        if (ja - ia != jb - ib || memcmp(pa + ia, pb + ib, ja - ia) != 0) break;
        ia = common_end_a = ja;
        ib = common_end_b = jb;
    }
    (void)common_end_a;
    sb_init(&out);
    /* one ".." per remaining component of start */
    size_t k = common_end_b;
    bool first = true;
    for (;;) {
        while (pb[k] == '/') k++;
        if (!pb[k]) break;
        while (pb[k] && pb[k] != '/') k++;
        if (!first) sb_putc(&out, '/');
        sb_appends(&out, "..");
        first = false;
    }
    const char *rest = pa + common_end_a;
    while (*rest == '/') rest++;
    if (*rest) {
        if (!first) sb_putc(&out, '/');
        sb_appends(&out, rest);
        first = false;
    }
    sb_free(&a);
    sb_free(&b);
    if (first) sb_putc(&out, '.');
    return STR_VAL(sb_finish(vm, &out));
}

static Value p_expanduser(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "expanduser", kwargs);
    arg_between(vm, "expanduser", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    if (s->len == 0 || s->chars[0] != '~') return argv[0];
    const char *p = s->chars;
    size_t i = 1;
    while (p[i] && p[i] != '/') i++;
    const char *home = NULL;
    /* the _r lookups: another VM's thread may be looking up a user too */
    struct passwd pwbuf, *pw = NULL;
    char pwtext[4096];
    if (i == 1) {
        home = getenv("HOME");
        if (!home && getpwuid_r(getuid(), &pwbuf, pwtext, sizeof pwtext, &pw) == 0 && pw) home = pw->pw_dir;
    } else {
        char name[256];
        size_t n = i - 1 < sizeof name - 1 ? i - 1 : sizeof name - 1;
        memcpy(name, p + 1, n);
        name[n] = 0;
        if (getpwnam_r(name, &pwbuf, pwtext, sizeof pwtext, &pw) == 0 && pw) home = pw->pw_dir;
    }
    if (!home) return argv[0];
    size_t hl = strlen(home);
    while (hl > 1 && home[hl - 1] == '/') hl--;
    if (strcmp(home, "/") == 0 && p[i] == '/') hl = 0;
    StrBuf sb;
    sb_init(&sb);
    sb_append(&sb, home, hl);
    sb_appends(&sb, p + i);
    if (sb.len == 0) sb_putc(&sb, '/');
    return STR_VAL(sb_finish(vm, &sb));
}

static Value p_isabs(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "isabs", kwargs);
    arg_between(vm, "isabs", argc, 1, 1);
    Str *s = str_arg(vm, argv[0]);
    return BOOL_VAL(s->len > 0 && s->chars[0] == '/');
}

/* exists/isfile/isdir/islink never raise for bad paths: they answer False */
static bool stat_of(VM *vm, Value v, struct stat *st, bool link) {
    if (!IS_STR(vm, v)) {
        if (IS_INTLIKE(v)) return fstat((int)AS_INTLIKE(v), st) == 0;
        vm_raise_kind(vm, TypeError, "stat: path should be string, bytes, os.PathLike or integer, not %s",
                      vm_type_name(vm, v));
    }
    Str *s = AS_STR(v);
    if ((size_t)s->len != strlen(s->chars)) return false;
    return (link ? lstat(s->chars, st) : stat(s->chars, st)) == 0;
}

#define PATH_TEST(cname, pyname, link, test)                                     \
    static Value cname(VM *vm, int argc, Value *argv, Dict *kwargs) {            \
        kw_none(vm, pyname, kwargs);                                             \
        arg_between(vm, pyname, argc, 1, 1);                                     \
        struct stat st;                                                          \
        if (!stat_of(vm, argv[0], &st, link)) return BOOL_VAL(false);            \
        return BOOL_VAL(test);                                                   \
    }

PATH_TEST(p_exists, "exists", false, true)
PATH_TEST(p_lexists, "lexists", true, true)
PATH_TEST(p_isfile, "isfile", false, S_ISREG(st.st_mode))
PATH_TEST(p_isdir, "isdir", false, S_ISDIR(st.st_mode))
PATH_TEST(p_islink, "islink", true, S_ISLNK(st.st_mode))

static struct stat stat_or_raise(VM *vm, Value v, const char *fname) {
    Str *s = path_arg(vm, v, fname);
    struct stat st;
    fflush(NULL); /* unclosed files: their data first (CPython would have closed them) */
    if (stat(s->chars, &st) != 0) os_raise_errno(vm, errno, s->chars);
    return st;
}

static Value p_getsize(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "getsize", kwargs);
    arg_between(vm, "getsize", argc, 1, 1);
    return INT_VAL(stat_or_raise(vm, argv[0], "stat").st_size);
}

static Value p_getmtime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "getmtime", kwargs);
    arg_between(vm, "getmtime", argc, 1, 1);
    struct stat st = stat_or_raise(vm, argv[0], "stat");
    return FLOAT_VAL((double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9);
}

static Value p_getatime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "getatime", kwargs);
    arg_between(vm, "getatime", argc, 1, 1);
    struct stat st = stat_or_raise(vm, argv[0], "stat");
    return FLOAT_VAL((double)st.st_atim.tv_sec + st.st_atim.tv_nsec * 1e-9);
}

static Value p_getctime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "getctime", kwargs);
    arg_between(vm, "getctime", argc, 1, 1);
    struct stat st = stat_or_raise(vm, argv[0], "stat");
    return FLOAT_VAL((double)st.st_ctim.tv_sec + st.st_ctim.tv_nsec * 1e-9);
}

static Value p_commonprefix(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "commonprefix", kwargs);
    arg_between(vm, "commonprefix", argc, 1, 1);
    int base = vm->nroots;
    List *l = list_from_iterable(vm, argv[0]);
    vm_push_root(vm, OBJ_VAL(l));
    if (l->len == 0) {
        vm_pop_roots(vm, vm->nroots - base);
        return STR_VAL(vm->empty_str);
    }
    Str *first = str_arg(vm, l->items[0]);
    size_t n = (size_t)first->len;
    for (int64_t i = 1; i < l->len; i++) {
        Str *s = str_arg(vm, l->items[i]);
        size_t k = 0;
        while (k < n && k < (size_t)s->len && s->chars[k] == first->chars[k]) k++;
        n = k;
    }
    /* do not cut a UTF-8 sequence */
    while (n > 0 && n < (size_t)first->len && ((unsigned char)first->chars[n] & 0xC0) == 0x80) n--;
    Value r = str_val(vm, first->chars, n);
    vm_pop_roots(vm, vm->nroots - base);
    return r;
}

/* os.walk(top): the (dirpath, dirnames, filenames) triples, top-down,
** built eagerly into a list */
static void walk_into(VM *vm, List *out, Str *top, int depth) {
    DIR *d = opendir(top->chars);
    if (!d || depth > 256) {
        if (d) closedir(d);
        return;
    }
    List *dirs = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(dirs));
    List *files = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(files));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        Str *full = str_printf(vm, "%s%s%s", top->chars, top->len && top->chars[top->len - 1] == '/' ? "" : "/",
                               e->d_name);
        Str *name = str_cstr(vm, e->d_name);
        list_append(vm, is_dir(full->chars) ? dirs : files, STR_VAL(name));
    }
    closedir(d);
    Tuple *t = tuple_new(vm, 3);
    t->items[0] = STR_VAL(top);
    t->items[1] = OBJ_VAL(dirs);
    t->items[2] = OBJ_VAL(files);
    list_append(vm, out, OBJ_VAL(t));
    for (int64_t i = 0; i < dirs->len; i++) {
        Str *sub = str_printf(vm, "%s%s%s", top->chars, top->len && top->chars[top->len - 1] == '/' ? "" : "/",
                              AS_STR(dirs->items[i])->chars);
        vm_push_root(vm, OBJ_VAL(sub));
        walk_into(vm, out, sub, depth + 1);
        vm_pop_roots(vm, 1);
    }
    vm_pop_roots(vm, 2);
}

static Value o_walk(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value top = argc > 0 ? argv[0] : kw_take(vm, kwargs, "top");
    kw_take(vm, kwargs, "topdown");
    kw_take(vm, kwargs, "onerror");
    kw_take(vm, kwargs, "followlinks");
    kw_done(vm, "walk", kwargs);
    if (IS_EMPTY(top)) vm_raise_kind(vm, TypeError, "walk() missing 1 required positional argument: 'top'");
    Str *t = str_arg(vm, top);
    List *out = list_new(vm, 0);
    vm_push_root(vm, OBJ_VAL(out));
    walk_into(vm, out, t, 0);
    Value it = vm_iter(vm, OBJ_VAL(out));
    vm_pop_roots(vm, 1);
    return it;
}

/* ------------------------------------------------------------------ */
/* modules                                                             */
/* ------------------------------------------------------------------ */

static void set_str(VM *vm, Module *m, const char *name, const char *v) {
    dict_set_cstr(vm, m->dict, name, STR_VAL(str_cstr(vm, v)));
}

static Module *build_path(VM *vm) {
    Module *p = module_new(vm, str_cstr(vm, "posixpath"));
    vm_push_root(vm, OBJ_VAL(p));
    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"exists", p_exists},     {"lexists", p_lexists},         {"isfile", p_isfile},
        {"isdir", p_isdir},       {"islink", p_islink},           {"isabs", p_isabs},
        {"join", p_join},         {"split", p_split},             {"basename", p_basename},
        {"dirname", p_dirname},   {"splitext", p_splitext},       {"normpath", p_normpath},
        {"abspath", p_abspath},   {"realpath", p_realpath},       {"relpath", p_relpath},
        {"expanduser", p_expanduser}, {"getsize", p_getsize},     {"getmtime", p_getmtime},
        {"getatime", p_getatime}, {"getctime", p_getctime},       {"commonprefix", p_commonprefix},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, p, fns[i].name, fns[i].fn);
    set_str(vm, p, "sep", "/");
    set_str(vm, p, "curdir", ".");
    set_str(vm, p, "pardir", "..");
    set_str(vm, p, "extsep", ".");
    set_str(vm, p, "pathsep", ":");
    set_str(vm, p, "defpath", "/bin:/usr/bin");
    set_str(vm, p, "devnull", "/dev/null");
    dict_set_cstr(vm, p->dict, "altsep", NONE_VAL);
    vm_pop_roots(vm, 1);
    return p;
}

Module *stdlib_os(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "os"));
    vm_push_root(vm, OBJ_VAL(m));
    Dict *env = dict_new(vm);
    dict_set_cstr(vm, m->dict, "environ", OBJ_VAL(env));
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq) continue;
        Str *k = str_new(vm, *e, (size_t)(eq - *e));
        vm_push_root(vm, OBJ_VAL(k));
        dict_set_str(vm, env, k, STR_VAL(str_cstr(vm, eq + 1)));
        vm_pop_roots(vm, 1);
    }
    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"getcwd", o_getcwd},   {"chdir", o_chdir},       {"listdir", o_listdir}, {"mkdir", o_mkdir},
        {"makedirs", o_makedirs}, {"remove", o_remove},   {"unlink", o_unlink},   {"rmdir", o_rmdir},
        {"rename", o_rename},   {"replace", o_rename},    {"getpid", o_getpid},   {"getppid", o_getppid},
        {"getuid", o_getuid},   {"cpu_count", o_cpu_count}, {"system", o_system}, {"_exit", o_exit_now},
        {"access", o_access},   {"fspath", o_fspath},     {"stat", o_stat},       {"walk", o_walk},
        {"urandom", o_urandom},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);
    /* environment functions share the environ dict */
    module_add_native_data(vm, m, "getenv", o_getenv, OBJ_VAL(env));
    module_add_native_data(vm, m, "putenv", o_putenv, OBJ_VAL(env));
    module_add_native_data(vm, m, "unsetenv", o_unsetenv, OBJ_VAL(env));
    set_str(vm, m, "name", "posix");
    set_str(vm, m, "sep", "/");
    set_str(vm, m, "linesep", "\n");
    set_str(vm, m, "curdir", ".");
    set_str(vm, m, "pardir", "..");
    set_str(vm, m, "extsep", ".");
    set_str(vm, m, "pathsep", ":");
    set_str(vm, m, "devnull", "/dev/null");
    dict_set_cstr(vm, m->dict, "altsep", NONE_VAL);
    dict_set_cstr(vm, m->dict, "F_OK", INT_VAL(F_OK));
    dict_set_cstr(vm, m->dict, "R_OK", INT_VAL(R_OK));
    dict_set_cstr(vm, m->dict, "W_OK", INT_VAL(W_OK));
    dict_set_cstr(vm, m->dict, "X_OK", INT_VAL(X_OK));
    dict_set_cstr(vm, m->dict, "error", OBJ_VAL(vm->exc[EXC_OSError]));
    Module *path = build_path(vm);
    dict_set_cstr(vm, m->dict, "path", OBJ_VAL(path));
    if (vm->modules) {
        dict_set_cstr(vm, vm->modules, "os.path", OBJ_VAL(path));
        dict_set_cstr(vm, vm->modules, "posixpath", OBJ_VAL(path));
    }
    vm_pop_roots(vm, 1);
    return m;
}
