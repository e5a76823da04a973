/*
** test_module.c — native modules and the configuration's callbacks:
** `import mymod` / `from mymod import f` of a module made in C, C functions
** added to an existing module (math) and to a script's class, the module
** loader callback (sources, errors named after the module, NULL going on to
** the search path), and the write/error callbacks receiving everything the
** scripts and their kernels print while nothing reaches the process's
** stdout/stderr.
** Expected tracebacks are CPython's (python3 -X no_debug_ranges: gpy prints
** no ^^^ markers) for the same programs, with a meta path loader standing in
** for the callback.
*/
#define _POSIX_C_SOURCE 200809L /* mkstemp, dup */
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "check.h"

static GpyStatus c_twice(GpyVM *vm, int nargs, void *user) {
    (void)user;
    int64_t v;
    if (nargs != 1) return gpy_raise(vm, "TypeError", "twice() takes exactly one argument (%d given)", nargs);
    GpyStatus st = gpy_get_int(vm, 1, &v);
    return st != GPY_OK ? st : gpy_set_int(vm, 0, 2 * v);
}

/* the user pointer: a multiplier */
static GpyStatus c_times(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    int64_t v;
    GpyStatus st = gpy_get_int(vm, 1, &v);
    return st != GPY_OK ? st : gpy_set_int(vm, 0, v * *(int *)user);
}

/* a method: slot 1 is self, whose attribute name it reads */
static GpyStatus c_hello(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    GpyStatus st = gpy_get_attr(vm, 1, "name", 0);
    if (st != GPY_OK) return st;
    const char *name = gpy_get_str(vm, 0, NULL);
    if (!name) return GPY_RUNTIME_ERROR;
    char buf[128];
    snprintf(buf, sizeof buf, "hello %s", name);
    return gpy_set_str(vm, 0, buf, (size_t)-1);
}

static int64_t global_int(GpyVM *vm, const char *name) {
    int64_t v = -999;
    CHECK_OK(vm, gpy_get_global(vm, NULL, name, 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &v));
    return v;
}

static const char *global_str(GpyVM *vm, const char *name) {
    CHECK_OK(vm, gpy_get_global(vm, NULL, name, 0));
    const char *s = gpy_get_str(vm, 0, NULL);
    return s ? s : "(not a str)";
}

/* ------------------------------------------------ native modules */

static void test_native_modules(void) {
    GpyVM *vm = gpy_new(NULL);
    CHECK_OK(vm, gpy_ensure_slots(vm, 3));
    static int three = 3;
    CHECK_OK(vm, gpy_new_module(vm, "mymod", 1));
    CHECK_OK(vm, gpy_add_function(vm, 1, "twice", c_twice, NULL));
    CHECK_OK(vm, gpy_add_function(vm, 1, "times", c_times, &three));
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "import mymod\n"
                                "from mymod import twice\n"
                                "from mymod import times as t3\n"
                                "a = mymod.twice(21) + twice(1) + t3(5)\n"
                                "r = repr(mymod) + ' ' + mymod.__name__ + ' ' + twice.__module__\n",
                                (size_t)-1, NULL));
    CHECK(global_int(vm, "a") == 59);
    CHECK_STR(global_str(vm, "r"), "<module 'mymod' (built-in)> mymod mymod");
    /* the same module object as the application's */
    CHECK_OK(vm, gpy_import(vm, "mymod", 2));
    CHECK_OK(vm, gpy_get_attr(vm, 2, "twice", 0));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_OTHER);

    /* into an existing module: math */
    CHECK_OK(vm, gpy_import(vm, "math", 1));
    CHECK_OK(vm, gpy_add_function(vm, 1, "triple", c_times, &three));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "import math\nm = math.triple(4) + int(math.sqrt(16))\n", (size_t)-1, NULL));
    CHECK(global_int(vm, "m") == 16);

    /* into a script's class: a method with self in slot 1 */
    CHECK_OK(vm, gpy_run_string(vm, NULL, "class K:\n    def __init__(self, n):\n        self.name = n\n", (size_t)-1,
                                NULL));
    CHECK_OK(vm, gpy_get_global(vm, NULL, "K", 1));
    CHECK_OK(vm, gpy_add_function(vm, 1, "hello", c_hello, NULL));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "h = K('ada').hello()\n", (size_t)-1, NULL));
    CHECK_STR(global_str(vm, "h"), "hello ada");
    GpyStatus st = gpy_run_string(vm, NULL, "K.hello(3)\n", (size_t)-1, NULL);
    CHECK(st == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "descriptor 'hello' for 'K' objects doesn't apply to a 'int' object");

    /* not into a builtin type, nor into a value */
    CHECK_OK(vm, gpy_eval(vm, NULL, "int", 1));
    CHECK(gpy_add_function(vm, 1, "hello", c_hello, NULL) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "cannot set 'hello' attribute of immutable type 'int'");
    CHECK_OK(vm, gpy_set_int(vm, 1, 5));
    CHECK(gpy_add_function(vm, 1, "hello", c_hello, NULL) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "gpy_add_function: slot 1 holds a 'int' object, not a module or class");
    CHECK(gpy_new_module(vm, "", 1) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ValueError");
    CHECK(gpy_new_module(vm, "x", 7) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "IndexError");
    gpy_free(vm);
}

/* ------------------------------------------------ loader callback */

static int loads;
static GpyVM *loader_vm;

static char *load_module(GpyVM *vm, const char *name, size_t *len, void *user) {
    CHECK(vm == loader_vm);
    CHECK(user == (void *)&loads);
    const char *src = strcmp(name, "virt") == 0     ? "value = 41 + 1\n"
                      : strcmp(name, "badmod") == 0 ? "x = 1\ny = x / 0\n"
                      : strcmp(name, "badsyn") == 0 ? "def f(:\n    pass\n"
                      /* a package the loader serves: its submodules and relative imports */
                      : strcmp(name, "vpkg") == 0     ? "import vpkg.leaf\nbase = vpkg.leaf.n * 10\n"
                      : strcmp(name, "vpkg.leaf") == 0 ? "n = 4\n"
                      : strcmp(name, "vpkg.other") == 0 ? "from .leaf import n\ntwice = 2 * n\n"
                                                    : NULL;
    if (!src) return NULL;
    loads++;
    *len = strlen(src);
    char *copy = malloc(*len + 1); /* the VM frees it */
    memcpy(copy, src, *len + 1);
    return copy;
}

static void test_loader(void) {
    GpyConfig config;
    gpy_config_init(&config);
    config.load_module = load_module;
    config.user_data = &loads;
    GpyVM *vm = gpy_new(&config);
    loader_vm = vm;
    CHECK_OK(vm, gpy_ensure_slots(vm, 2));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "import virt\nimport virt\nfrom virt import value\nv = virt.value + value\n",
                                (size_t)-1, "main.py"));
    CHECK(global_int(vm, "v") == 84);
    CHECK(loads == 1); /* then from sys.modules */
    CHECK_OK(vm, gpy_run_string(vm, NULL, "import math\nm = int(math.pi)\n", (size_t)-1, "main.py")); /* NULL: searched */
    CHECK_OK(vm, gpy_run_string(vm, NULL, "import vpkg.other\nfrom vpkg import leaf\np = vpkg.base + vpkg.other.twice + leaf.n\n",
                                (size_t)-1, "main.py"));
    CHECK(global_int(vm, "p") == 52);
    loads -= 3;
    CHECK(global_int(vm, "m") == 3);

    GpyStatus st = gpy_run_string(vm, NULL, "import badmod\n", (size_t)-1, "main.py");
    CHECK(st == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_traceback(vm), "Traceback (most recent call last):\n"
                                       "  File \"main.py\", line 1, in <module>\n"
                                       "    import badmod\n"
                                       "  File \"badmod\", line 2, in <module>\n"
                                       "    y = x / 0\n"
                                       "ZeroDivisionError: division by zero\n");
    /* a failed module is not left in sys.modules: the loader is asked again */
    st = gpy_run_string(vm, NULL, "import badmod\n", (size_t)-1, "main.py");
    CHECK(st == GPY_RUNTIME_ERROR);
    CHECK(loads == 3);

    st = gpy_run_string(vm, NULL, "import badsyn\n", (size_t)-1, "main.py");
    CHECK(st == GPY_SYNTAX_ERROR);
    CHECK_STR(gpy_error_traceback(vm), "Traceback (most recent call last):\n"
                                       "  File \"main.py\", line 1, in <module>\n"
                                       "    import badsyn\n"
                                       "  File \"badsyn\", line 1\n"
                                       "    def f(:\n"
                                       "          ^\n"
                                       "SyntaxError: invalid syntax\n");

    st = gpy_run_string(vm, NULL, "import nothere\n", (size_t)-1, "main.py");
    CHECK(st == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ModuleNotFoundError");
    CHECK_STR(gpy_error_message(vm), "No module named 'nothere'");
    gpy_free(vm);
}

/* ------------------------------------------------ output callbacks */

typedef struct Captured {
    char out[4096], err[4096];
    size_t nout, nerr;
    GpyVM *vm;
    int bad_vm;
} Captured;

static void append(char *buf, size_t *n, const char *text, size_t len) {
    if (*n + len >= 4096) len = 4095 - *n;
    memcpy(buf + *n, text, len);
    *n += len;
    buf[*n] = '\0';
}

static void on_write(GpyVM *vm, const char *text, size_t len, void *user) {
    Captured *c = user;
    if (c->vm && vm != c->vm) c->bad_vm++;
    append(c->out, &c->nout, text, len);
}

static void on_error(GpyVM *vm, const char *text, size_t len, void *user) {
    Captured *c = user;
    if (c->vm && vm != c->vm) c->bad_vm++;
    append(c->err, &c->nerr, text, len);
}

static void test_output(void) {
    /* the process's stdout and stderr go to a file while the VM lives */
    fflush(stdout);
    fflush(stderr);
    char path[] = "/tmp/gpy_test_module_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fd, 1);
    dup2(fd, 2);

    static Captured cap;
    GpyConfig config;
    gpy_config_init(&config);
    config.write = on_write;
    config.error = on_error;
    config.user_data = &cap;
    GpyVM *vm = gpy_new(&config);
    cap.vm = vm;
    CHECK_OK(vm, gpy_ensure_slots(vm, 1));
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "print('hello', 42)\n"
                                "import sys\n"
                                "sys.stdout.write('out\\n')\n"
                                "print('oops', 1.5, file=sys.stderr)\n"
                                "sys.stderr.write('err\\n')\n",
                                (size_t)-1, "main.py"));
    CHECK_STR(cap.out, "hello 42\nout\n");
    CHECK_STR(cap.err, "oops 1.5\nerr\n");
    /* an uncaught error is the caller's to report: its traceback is CPython's */
    GpyStatus st = gpy_run_string(vm, NULL, "def f(d):\n    return d['missing']\n\nf({})\n", (size_t)-1, "main.py");
    CHECK(st == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_traceback(vm), "Traceback (most recent call last):\n"
                                       "  File \"main.py\", line 4, in <module>\n"
                                       "    f({})\n"
                                       "  File \"main.py\", line 2, in f\n"
                                       "    return d['missing']\n"
                                       "KeyError: 'missing'\n");
    CHECK_STR(cap.err, "oops 1.5\nerr\n");
    CHECK_OK(vm, gpy_run_string(vm, NULL, "print(sys.stdout.name, sys.stderr.name, sys.stdout.writable())\n",
                                (size_t)-1, NULL));
    CHECK_STR(cap.out, "hello 42\nout\n<stdout> <stderr> True\n");
    /* kernels' print() too (on the CPU device here: no GPU is needed) */
    cap.nout = 0;
    cap.out[0] = '\0';
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "from numba import cuda\n"
                                "@cuda.jit\n"
                                "def k():\n"
                                "    print('thread', cuda.grid(1))\n"
                                "k[1, 2]()\n"
                                "cuda.synchronize()\n",
                                (size_t)-1, NULL));
    CHECK_STR(cap.out, "thread 0\nthread 1\n");
    gpy_free(vm);
    CHECK(cap.bad_vm == 0);

    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    /* nothing reached the process's own streams (but a sanitizer's "==pid==" notes) */
    char leaked[4096];
    ssize_t n = pread(fd, leaked, sizeof leaked - 1, 0);
    leaked[n > 0 ? n : 0] = '\0';
    char own[4096];
    size_t nown = 0;
    for (char *line = leaked; *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line + 1) : strlen(line);
        if (strncmp(line, "==", 2) != 0) {
            memcpy(own + nown, line, len);
            nown += len;
        }
        line += len;
    }
    own[nown] = '\0';
    CHECK_STR(own, ""); /* failed checks above show up here too */
    close(fd);
    unlink(path);
}

int main(void) {
    test_native_modules();
    test_loader();
    test_output();
    return check_done("test_module");
}
