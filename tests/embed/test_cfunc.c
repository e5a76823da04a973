/*
** test_cfunc.c — C functions called from scripts (gpy.h "C functions,
** modules, classes"): positional and keyword arguments, raising builtin and
** module-defined exceptions, an uncaught raise's traceback (CPython's text),
** a failure status without an exception, and C -> gpy -> C nesting.
*/
#include <stdint.h>

#include "check.h"

/* add(a, b, scale=1) -> (a + b) * scale */
static GpyStatus c_add(GpyVM *vm, int nargs, void *user) {
    (void)user;
    if (nargs != 2) return gpy_raise(vm, "TypeError", "add() takes 2 positional arguments but %d were given", nargs);
    int64_t a, b, scale = 1;
    GpyStatus st;
    if ((st = gpy_get_int(vm, 1, &a)) != GPY_OK) return st;
    if ((st = gpy_get_int(vm, 2, &b)) != GPY_OK) return st;
    int kw = gpy_kwargs_slot(vm);
    if (kw >= 0) {
        CHECK(kw == 3);
        int key = gpy_slot_count(vm), value = key + 1;
        if ((st = gpy_ensure_slots(vm, value + 1)) != GPY_OK) return st;
        int64_t pos = 0;
        while (gpy_dict_next(vm, kw, &pos, key, value)) {
            const char *name = gpy_get_str(vm, key, NULL);
            if (!name) return GPY_RUNTIME_ERROR;
            if (strcmp(name, "scale") != 0)
                return gpy_raise(vm, "TypeError", "add() got an unexpected keyword argument '%s'", name);
            if ((st = gpy_get_int(vm, value, &scale)) != GPY_OK) return st;
        }
    }
    return gpy_set_int(vm, 0, (a + b) * scale);
}

/* parse(text): int(text) for decimal digits, else int()'s ValueError. */
static GpyStatus c_parse(GpyVM *vm, int nargs, void *user) {
    (void)user;
    (void)nargs;
    const char *s = gpy_get_str(vm, 1, NULL);
    if (!s) return GPY_RUNTIME_ERROR; /* the TypeError of gpy_get_str propagates */
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return gpy_raise(vm, "ValueError", "invalid literal for int() with base 10: '%s'", s);
        v = v * 10 + (*p - '0');
    }
    return gpy_set_int(vm, 0, v);
}

/* boom(): raises mymod.MyError */
static GpyStatus c_boom(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    return gpy_raise(vm, "mymod.MyError", "it broke: %s", (const char *)user);
}

/* raise_it(x): raises the exception class or instance x */
static GpyStatus c_raise_it(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    return gpy_raise_slot(vm, 1);
}

/* sloppy(): fails without setting an exception */
static GpyStatus c_sloppy(GpyVM *vm, int nargs, void *user) {
    (void)vm;
    (void)nargs;
    (void)user;
    return GPY_RUNTIME_ERROR;
}

/* nest(depth, acc): depth 0 gives acc (or raises when acc is negative);
** otherwise the script's step(depth, acc), which calls nest(depth - 1, ...). */
static int max_depth_seen;
static GpyStatus c_nest(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    int64_t depth, acc;
    GpyStatus st;
    if ((st = gpy_get_int(vm, 1, &depth)) != GPY_OK) return st;
    if ((st = gpy_get_int(vm, 2, &acc)) != GPY_OK) return st;
    if (depth == 0) {
        if (acc < 0) return gpy_raise(vm, "KeyError", "deepest");
        return gpy_copy_slot(vm, 0, 2);
    }
    /* slots 3..5: step, depth, acc; each level sees its own fresh slots */
    if ((st = gpy_ensure_slots(vm, 6)) != GPY_OK) return st;
    if (gpy_slot_count(vm) != 6) return gpy_raise(vm, "RuntimeError", "slot count %d", gpy_slot_count(vm));
    if ((st = gpy_get_global(vm, NULL, "step", 3)) != GPY_OK) return st;
    if ((st = gpy_copy_slot(vm, 4, 1)) != GPY_OK) return st;
    if ((st = gpy_copy_slot(vm, 5, 2)) != GPY_OK) return st;
    if ((int)depth > max_depth_seen) max_depth_seen = (int)depth;
    if ((st = gpy_call(vm, 3, 2, -1, 0)) != GPY_OK) return st; /* the failure propagates as is */
    /* our own slots survived the nested calls */
    int64_t again;
    if ((st = gpy_get_int(vm, 1, &again)) != GPY_OK) return st;
    if (again != depth) return gpy_raise(vm, "RuntimeError", "slot 1 changed to %lld", (long long)again);
    return GPY_OK;
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

int main(void) {
    GpyVM *vm = gpy_new(NULL);
    CHECK(vm != NULL);
    CHECK_OK(vm, gpy_ensure_slots(vm, 4));
    CHECK_OK(vm, gpy_new_module(vm, "mymod", 0));
    CHECK_OK(vm, gpy_add_function(vm, 0, "add", c_add, NULL));
    CHECK_OK(vm, gpy_add_function(vm, 0, "parse", c_parse, NULL));
    CHECK_OK(vm, gpy_add_function(vm, 0, "boom", c_boom, "details"));
    CHECK_OK(vm, gpy_add_function(vm, 0, "raise_it", c_raise_it, NULL));
    CHECK_OK(vm, gpy_add_function(vm, 0, "sloppy", c_sloppy, NULL));
    CHECK_OK(vm, gpy_add_function(vm, 0, "nest", c_nest, NULL));
    CHECK_OK(vm, gpy_new_exception(vm, 0, "MyError", "ValueError", 1));
    CHECK(gpy_kwargs_slot(vm) == -1);

    /* positional and keyword arguments */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "import mymod\n"
                                "r1 = mymod.add(2, 3)\n"
                                "r2 = mymod.add(2, 3, scale=10)\n"
                                "r3 = mymod.add(*[4, 5], **{'scale': 3})\n"
                                "r4 = mymod.parse('1234')\n"
                                "name = mymod.add.__name__ + ' ' + repr(mymod.add)\n",
                                (size_t)-1, NULL));
    CHECK(global_int(vm, "r1") == 5);
    CHECK(global_int(vm, "r2") == 50);
    CHECK(global_int(vm, "r3") == 27);
    CHECK(global_int(vm, "r4") == 1234);
    CHECK_STR(global_str(vm, "name"), "add <built-in function add>");

    /* a ValueError raised in C, caught by the script with its message */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "try:\n"
                                "    mymod.parse('12z')\n"
                                "    msg = 'no error'\n"
                                "except ValueError as e:\n"
                                "    msg = type(e).__name__ + ': ' + str(e)\n"
                                "try:\n"
                                "    mymod.add(1, 2, size=3)\n"
                                "except TypeError as e:\n"
                                "    msg2 = str(e)\n"
                                "try:\n"
                                "    mymod.parse(5)\n"
                                "except TypeError as e:\n"
                                "    msg3 = 'TypeError'\n",
                                (size_t)-1, NULL));
    CHECK_STR(global_str(vm, "msg"), "ValueError: invalid literal for int() with base 10: '12z'");
    CHECK_STR(global_str(vm, "msg2"), "add() got an unexpected keyword argument 'size'");
    CHECK_STR(global_str(vm, "msg3"), "TypeError");

    /* an exception class the module defines */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "try:\n"
                                "    mymod.boom()\n"
                                "except mymod.MyError as e:\n"
                                "    caught = type(e).__name__ + '|' + str(e) + '|' + type(e).__module__\n"
                                "sub = issubclass(mymod.MyError, ValueError) and 1 or 0\n"
                                "try:\n"
                                "    mymod.boom()\n"
                                "except ValueError:\n"
                                "    sub += 10\n",
                                (size_t)-1, NULL));
    CHECK_STR(global_str(vm, "caught"), "MyError|it broke: details|mymod");
    CHECK(global_int(vm, "sub") == 11);
    GpyStatus st = gpy_run_string(vm, NULL, "mymod.boom()\n", (size_t)-1, "boom.py");
    CHECK(st == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "MyError");
    /* CPython prints a module's exception class as module.Name */
    CHECK_STR(gpy_error_traceback(vm), "Traceback (most recent call last):\n"
                                       "  File \"boom.py\", line 1, in <module>\n"
                                       "    mymod.boom()\n"
                                       "mymod.MyError: it broke: details\n");

    /* gpy_raise_slot: a class (instantiated) or an instance */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "try:\n"
                                "    mymod.raise_it(KeyError)\n"
                                "except KeyError as e:\n"
                                "    k1 = repr(e)\n"
                                "try:\n"
                                "    mymod.raise_it(OSError(2, 'gone'))\n"
                                "except OSError as e:\n"
                                "    k2 = str(e)\n"
                                "try:\n"
                                "    mymod.raise_it(42)\n"
                                "except TypeError as e:\n"
                                "    k3 = str(e)\n",
                                (size_t)-1, NULL));
    CHECK_STR(global_str(vm, "k1"), "KeyError()");
    CHECK_STR(global_str(vm, "k2"), "[Errno 2] gone");
    CHECK_STR(global_str(vm, "k3"), "exceptions must derive from BaseException");

    /* an uncaught raise from C: the traceback CPython prints for the same
    ** script with mymod.parse = int (python3 -X no_debug_ranges: gpy prints
    ** no ^^^ position markers; linecache holding the source):
    **   import mymod
    **
    **   def load(text):
    **       return mymod.parse(text)
    **
    **   load("x1")
    */
    st = gpy_run_string(vm, NULL,
                        "import mymod\n"
                        "\n"
                        "def load(text):\n"
                        "    return mymod.parse(text)\n"
                        "\n"
                        "load(\"x1\")\n",
                        (size_t)-1, "script.py");
    CHECK(st == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ValueError");
    CHECK_STR(gpy_error_message(vm), "invalid literal for int() with base 10: 'x1'");
    CHECK_STR(gpy_error_traceback(vm), "Traceback (most recent call last):\n"
                                       "  File \"script.py\", line 6, in <module>\n"
                                       "    load(\"x1\")\n"
                                       "  File \"script.py\", line 4, in load\n"
                                       "    return mymod.parse(text)\n"
                                       "ValueError: invalid literal for int() with base 10: 'x1'\n");

    /* a failure status without an exception: SystemError, as CPython's
    ** "returned NULL without setting an exception" */
    st = gpy_run_string(vm, NULL, "mymod.sloppy()\n", (size_t)-1, NULL);
    CHECK(st == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "SystemError");
    CHECK_STR(gpy_error_message(vm), "sloppy() returned an error status without setting an exception");

    /* gpy_raise outside any C function: statuses and an unknown name */
    CHECK(gpy_raise(vm, "ZeroDivisionError", "%d/%d", 1, 0) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ZeroDivisionError");
    CHECK_STR(gpy_error_message(vm), "1/0");
    CHECK(gpy_raise(vm, "MemoryError", NULL) == GPY_OUT_OF_MEMORY);
    CHECK(gpy_raise(vm, "KeyboardInterrupt", NULL) == GPY_INTERRUPTED);
    CHECK(gpy_raise(vm, "mymod.MyError", "x") == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "MyError");
    CHECK(gpy_raise(vm, "NoSuchError", "x") == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "SystemError");
    CHECK_STR(gpy_error_message(vm), "unknown exception type 'NoSuchError' (expected a builtin exception name such "
                                     "as 'ValueError', or 'module.Name' of a class made by gpy_new_exception)");
    CHECK(gpy_raise(vm, "othermod.MyError", "x") == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "SystemError");
    {
        /* a long message is not truncated */
        char big[1000];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        CHECK(gpy_raise(vm, "ValueError", "<%s>", big) == GPY_RUNTIME_ERROR);
        const char *m = gpy_error_message(vm);
        CHECK(m && strlen(m) == 1001 && m[0] == '<' && m[1000] == '>');
    }

    /* C -> gpy -> C three levels deep, then an error from the deepest C level
    ** crossing every level back to the script */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "def step(depth, acc):\n"
                                "    return mymod.nest(depth - 1, acc * 10 + depth)\n"
                                "deep = mymod.nest(3, 0)\n"
                                "try:\n"
                                "    mymod.nest(3, -10000)\n"
                                "except KeyError as e:\n"
                                "    deep_err = repr(e)\n",
                                (size_t)-1, "steps.py"));
    CHECK(max_depth_seen == 3);
    CHECK(global_int(vm, "deep") == 321);
    CHECK_STR(global_str(vm, "deep_err"), "KeyError('deepest')");
    st = gpy_run_string(vm, NULL, "mymod.nest(2, -10000)\n", (size_t)-1, "deep.py");
    CHECK(st == GPY_RUNTIME_ERROR);
    /* the gpy frames between the C levels are in the traceback; C levels are not */
    CHECK_STR(gpy_error_traceback(vm), "Traceback (most recent call last):\n"
                                       "  File \"deep.py\", line 1, in <module>\n"
                                       "    mymod.nest(2, -10000)\n"
                                       "  File \"steps.py\", line 2, in step\n"
                                       "    return mymod.nest(depth - 1, acc * 10 + depth)\n"
                                       "  File \"steps.py\", line 2, in step\n"
                                       "    return mymod.nest(depth - 1, acc * 10 + depth)\n"
                                       "KeyError: 'deepest'\n");

    /* the application's own slots are intact after all that */
    CHECK(gpy_slot_count(vm) == 4);
    CHECK(gpy_kwargs_slot(vm) == -1);
    CHECK_OK(vm, gpy_eval(vm, NULL, "mymod.add(20, 22)", 2));
    int64_t v = 0;
    CHECK_OK(vm, gpy_get_int(vm, 2, &v));
    CHECK(v == 42);
    gpy_free(vm);
    return check_done("test_cfunc");
}
