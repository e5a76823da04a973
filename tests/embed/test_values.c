/*
** test_values.c — values through slots: every setter/getter round trip,
** int64 extremes, floats, None, Python truth, UTF-8 text, lists, tuples and
** dicts built and read element by element, nesting, dict order, module
** globals seen by a script, and functions called with positional and
** keyword arguments.
**
** Oracles: hand-checked values, and where noted "CPython:", the result
** CPython 3.11 gives for the same Python code (computed with python3 when
** the test was written and hard-coded here).
*/
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "check.h"

/* The str in slot, or "" (with a failed check) when it holds none. */
static const char *str_in(GpyVM *vm, int slot) {
    const char *s = gpy_get_str(vm, slot, NULL);
    CHECK(s != NULL);
    return s ? s : "";
}

/* repr(expression) evaluated in __main__, as a C string in slot. */
static const char *repr_of(GpyVM *vm, const char *expression, int slot) {
    char buf[256];
    snprintf(buf, sizeof buf, "repr(%s)", expression);
    CHECK_OK(vm, gpy_eval(vm, NULL, buf, slot));
    return str_in(vm, slot);
}

static void scalars(GpyVM *vm) {
    int64_t i = 0;
    double f = 0;
    bool b = false;

    CHECK_OK(vm, gpy_set_int(vm, 0, 42));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_INT);
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 42);
    CHECK_OK(vm, gpy_set_int(vm, 0, INT64_MAX));
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == INT64_MAX);
    CHECK_OK(vm, gpy_set_int(vm, 1, INT64_MIN));
    CHECK_OK(vm, gpy_get_int(vm, 1, &i));
    CHECK(i == INT64_MIN);
    /* the script sees the same extremes. CPython: 2**63-1, -2**63 */
    CHECK_OK(vm, gpy_set_global(vm, NULL, "big", 0));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "small", 1));
    CHECK_STR(repr_of(vm, "big", 2), "9223372036854775807");
    CHECK_STR(repr_of(vm, "small", 2), "-9223372036854775808");
    CHECK_OK(vm, gpy_eval(vm, NULL, "big == 2**62 + (2**62 - 1) and small == -big - 1", 2));
    CHECK_OK(vm, gpy_get_bool(vm, 2, &b));
    CHECK(b);

    CHECK_OK(vm, gpy_set_float(vm, 0, 0.1));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_FLOAT);
    CHECK_OK(vm, gpy_get_float(vm, 0, &f));
    CHECK(f == 0.1);
    CHECK_OK(vm, gpy_set_float(vm, 0, -DBL_MAX));
    CHECK_OK(vm, gpy_get_float(vm, 0, &f));
    CHECK(f == -DBL_MAX);
    CHECK_OK(vm, gpy_set_float(vm, 0, -0.0));
    CHECK_OK(vm, gpy_get_float(vm, 0, &f));
    CHECK(f == 0.0 && signbit(f));
    /* CPython: 0.1 + 0.2 == 0.30000000000000004 */
    CHECK_OK(vm, gpy_eval(vm, NULL, "0.1 + 0.2", 0));
    CHECK_OK(vm, gpy_get_float(vm, 0, &f));
    CHECK(f == 0.30000000000000004);
    /* get_float accepts ints and bools; get_int accepts bools */
    CHECK_OK(vm, gpy_set_int(vm, 0, -7));
    CHECK_OK(vm, gpy_get_float(vm, 0, &f));
    CHECK(f == -7.0);
    CHECK_OK(vm, gpy_set_bool(vm, 0, true));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_BOOL);
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 1);
    CHECK_OK(vm, gpy_get_float(vm, 0, &f));
    CHECK(f == 1.0);
    /* get_int accepts objects with __index__ */
    CHECK_OK(vm, gpy_run_string(vm, NULL, "class Seven:\n    def __index__(self): return 7\n", (size_t)-1, NULL));
    CHECK_OK(vm, gpy_eval(vm, NULL, "Seven()", 0));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_OTHER);
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 7);

    CHECK_OK(vm, gpy_set_none(vm, 0));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_NONE);
    CHECK_OK(vm, gpy_set_global(vm, NULL, "nothing", 0));
    CHECK_OK(vm, gpy_eval(vm, NULL, "nothing is None", 0));
    CHECK_OK(vm, gpy_get_bool(vm, 0, &b));
    CHECK(b);

    /* bool(x) is Python truth, hand-checked (CPython agrees) */
    static const struct {
        const char *expr;
        bool truth;
    } truths[] = {
        {"0", false},   {"7", true},     {"-1", true},   {"0.0", false}, {"0.5", true},     {"None", false},
        {"''", false},  {"'a'", true},   {"[]", false},  {"[0]", true},  {"()", false},     {"(0,)", true},
        {"{}", false},  {"{0: 0}", true}, {"False", false}, {"True", true}, {"range(0)", false}, {"Seven()", true},
    };
    for (size_t k = 0; k < sizeof truths / sizeof truths[0]; k++) {
        CHECK_OK(vm, gpy_eval(vm, NULL, truths[k].expr, 3));
        b = !truths[k].truth;
        CHECK_OK(vm, gpy_get_bool(vm, 3, &b));
        if (b != truths[k].truth) fprintf(stderr, "bool(%s) is %d\n", truths[k].expr, b);
        CHECK(b == truths[k].truth);
    }
    CHECK_OK(vm, gpy_set_bool(vm, 3, false));
    CHECK_OK(vm, gpy_get_bool(vm, 3, &b));
    CHECK(!b);
}

static void strings(GpyVM *vm) {
    /* "héllo → 世界 🐍": 12 code points, 22 UTF-8 bytes (CPython: len(s),
    ** len(s.encode())) */
    const char *text = "h\xc3\xa9llo \xe2\x86\x92 \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x90\x8d";
    CHECK(strlen(text) == 22);
    CHECK_OK(vm, gpy_set_str(vm, 0, text, (size_t)-1));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_STR);
    size_t len = 0;
    const char *got = gpy_get_str(vm, 0, &len);
    CHECK(got && len == 22 && memcmp(got, text, 22) == 0 && got[22] == '\0');
    CHECK_OK(vm, gpy_set_global(vm, NULL, "s", 0));
    CHECK_OK(vm, gpy_eval(vm, NULL, "len(s)", 1));
    int64_t n = 0;
    CHECK_OK(vm, gpy_get_int(vm, 1, &n));
    CHECK(n == 12);
    /* CPython: s.upper() == "HÉLLO → 世界 🐍" */
    CHECK_OK(vm, gpy_call_method(vm, 0, "upper", 0, 1));
    CHECK_STR(str_in(vm, 1), "H\xc3\x89LLO \xe2\x86\x92 \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x90\x8d");

    /* an explicit length: part of a buffer, and an embedded NUL kept */
    CHECK_OK(vm, gpy_set_str(vm, 0, "abcdef", 3));
    CHECK_STR(str_in(vm, 0), "abc");
    CHECK_OK(vm, gpy_set_str(vm, 0, "a\0b", 3));
    got = gpy_get_str(vm, 0, &len);
    CHECK(got && len == 3 && memcmp(got, "a\0b", 3) == 0);
    CHECK_OK(vm, gpy_set_str(vm, 0, "", (size_t)-1));
    got = gpy_get_str(vm, 0, &len);
    CHECK(got && len == 0 && got[0] == '\0');
}

static void lists_tuples(GpyVM *vm) {
    int64_t n = 0, i = 0;
    double f = 0;
    /* [1, 'two', 3.5, None], then L[0] = 10 */
    CHECK_OK(vm, gpy_new_list(vm, 0));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_LIST);
    CHECK_OK(vm, gpy_len(vm, 0, &n));
    CHECK(n == 0);
    CHECK_OK(vm, gpy_set_int(vm, 1, 1));
    CHECK_OK(vm, gpy_list_append(vm, 0, 1));
    CHECK_OK(vm, gpy_set_str(vm, 1, "two", (size_t)-1));
    CHECK_OK(vm, gpy_list_append(vm, 0, 1));
    CHECK_OK(vm, gpy_set_float(vm, 1, 3.5));
    CHECK_OK(vm, gpy_list_append(vm, 0, 1));
    CHECK_OK(vm, gpy_set_none(vm, 1));
    CHECK_OK(vm, gpy_list_append(vm, 0, 1));
    CHECK_OK(vm, gpy_set_int(vm, 1, 10));
    CHECK_OK(vm, gpy_set_index(vm, 0, 0, 1));
    CHECK_OK(vm, gpy_len(vm, 0, &n));
    CHECK(n == 4);
    CHECK_OK(vm, gpy_get_index(vm, 0, 0, 2));
    CHECK_OK(vm, gpy_get_int(vm, 2, &i));
    CHECK(i == 10);
    CHECK_OK(vm, gpy_get_index(vm, 0, 1, 2));
    CHECK_STR(str_in(vm, 2), "two");
    CHECK_OK(vm, gpy_get_index(vm, 0, -2, 2));
    CHECK_OK(vm, gpy_get_float(vm, 2, &f));
    CHECK(f == 3.5);
    CHECK_OK(vm, gpy_get_index(vm, 0, -1, 2));
    CHECK(gpy_slot_type(vm, 2) == GPY_TYPE_NONE);
    CHECK_OK(vm, gpy_set_global(vm, NULL, "L", 0));
    CHECK_STR(repr_of(vm, "L", 2), "[10, 'two', 3.5, None]"); /* CPython */

    /* a tuple of slots 1..3: (10, 'x', L) */
    CHECK_OK(vm, gpy_set_int(vm, 1, 10));
    CHECK_OK(vm, gpy_set_str(vm, 2, "x", (size_t)-1));
    CHECK_OK(vm, gpy_copy_slot(vm, 3, 0));
    CHECK_OK(vm, gpy_new_tuple(vm, 4, 1, 3));
    CHECK(gpy_slot_type(vm, 4) == GPY_TYPE_TUPLE);
    CHECK_OK(vm, gpy_len(vm, 4, &n));
    CHECK(n == 3);
    CHECK_OK(vm, gpy_get_index(vm, 4, 1, 5));
    CHECK_STR(str_in(vm, 5), "x");
    CHECK_OK(vm, gpy_set_global(vm, NULL, "T", 4));
    CHECK_OK(vm, gpy_eval(vm, NULL, "T[2] is L", 5));
    bool b = false;
    CHECK_OK(vm, gpy_get_bool(vm, 5, &b));
    CHECK(b);
    CHECK_OK(vm, gpy_new_tuple(vm, 5, 0, 0));
    CHECK_STR(repr_of(vm, "()", 6), "()");
    CHECK_OK(vm, gpy_len(vm, 5, &n));
    CHECK(n == 0);
}

static void dicts(GpyVM *vm) {
    int64_t i = 0;
    /* d['b'] = 2; d['a'] = 1; d['c'] = 3; d[10] = 'ten' */
    CHECK_OK(vm, gpy_new_dict(vm, 0));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_DICT);
    const char *keys[] = {"b", "a", "c"};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(vm, gpy_set_str(vm, 1, keys[k], (size_t)-1));
        CHECK_OK(vm, gpy_set_int(vm, 2, keys[k][0] - 'a' + 1));
        CHECK_OK(vm, gpy_set_item(vm, 0, 1, 2));
    }
    CHECK_OK(vm, gpy_set_int(vm, 1, 10));
    CHECK_OK(vm, gpy_set_str(vm, 2, "ten", (size_t)-1));
    CHECK_OK(vm, gpy_set_item(vm, 0, 1, 2));
    CHECK_OK(vm, gpy_set_str(vm, 1, "a", (size_t)-1));
    CHECK_OK(vm, gpy_get_item(vm, 0, 1, 2));
    CHECK_OK(vm, gpy_get_int(vm, 2, &i));
    CHECK(i == 1);
    /* iteration in insertion order. CPython: list(d) == ['b', 'a', 'c', 10] */
    int64_t pos = 0;
    int seen = 0;
    while (gpy_dict_next(vm, 0, &pos, 3, 4)) {
        if (seen < 3) {
            CHECK_STR(str_in(vm, 3), keys[seen]);
            CHECK_OK(vm, gpy_get_int(vm, 4, &i));
            CHECK(i == keys[seen][0] - 'a' + 1);
        } else {
            CHECK_OK(vm, gpy_get_int(vm, 3, &i));
            CHECK(i == 10);
            CHECK_STR(str_in(vm, 4), "ten");
        }
        seen++;
    }
    CHECK(seen == 4);
    CHECK_OK(vm, gpy_set_global(vm, NULL, "d", 0));
    CHECK_STR(repr_of(vm, "d", 5), "{'b': 2, 'a': 1, 'c': 3, 10: 'ten'}"); /* CPython */
    /* a deleted key is skipped, a re-added one goes last */
    CHECK_OK(vm, gpy_run_string(vm, NULL, "del d['a']\nd['a'] = 0\n", (size_t)-1, NULL));
    pos = 0;
    const char *order[] = {"b", "c", "?", "a"};
    seen = 0;
    while (gpy_dict_next(vm, 0, &pos, 3, 4)) {
        if (seen != 2) CHECK_STR(str_in(vm, 3), order[seen]);
        seen++;
    }
    CHECK(seen == 4);
}

static void nested(GpyVM *vm) {
    /* [{'k': (1, 'é', [2.5])}, 7] built from the inside out */
    CHECK_OK(vm, gpy_new_list(vm, 0)); /* [2.5] */
    CHECK_OK(vm, gpy_set_float(vm, 1, 2.5));
    CHECK_OK(vm, gpy_list_append(vm, 0, 1));
    CHECK_OK(vm, gpy_set_int(vm, 1, 1));
    CHECK_OK(vm, gpy_set_str(vm, 2, "\xc3\xa9", (size_t)-1));
    CHECK_OK(vm, gpy_copy_slot(vm, 3, 0));
    CHECK_OK(vm, gpy_new_tuple(vm, 4, 1, 3)); /* (1, 'é', [2.5]) */
    CHECK_OK(vm, gpy_new_dict(vm, 5));
    CHECK_OK(vm, gpy_set_str(vm, 6, "k", (size_t)-1));
    CHECK_OK(vm, gpy_set_item(vm, 5, 6, 4));
    CHECK_OK(vm, gpy_new_list(vm, 7));
    CHECK_OK(vm, gpy_list_append(vm, 7, 5));
    CHECK_OK(vm, gpy_set_int(vm, 8, 7));
    CHECK_OK(vm, gpy_list_append(vm, 7, 8));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "n", 7));
    CHECK_STR(repr_of(vm, "n", 9), "[{'k': (1, '\xc3\xa9', [2.5])}, 7]"); /* CPython */
    /* and read back down: n[0]['k'][2][0] */
    for (int s = 0; s < 7; s++) CHECK_OK(vm, gpy_set_none(vm, s));
    CHECK_OK(vm, gpy_get_index(vm, 7, 0, 0));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_DICT);
    CHECK_OK(vm, gpy_set_str(vm, 1, "k", (size_t)-1));
    CHECK_OK(vm, gpy_get_item(vm, 0, 1, 2));
    CHECK(gpy_slot_type(vm, 2) == GPY_TYPE_TUPLE);
    CHECK_OK(vm, gpy_get_index(vm, 2, 1, 3));
    CHECK_STR(str_in(vm, 3), "\xc3\xa9");
    CHECK_OK(vm, gpy_get_index(vm, 2, 2, 3));
    CHECK(gpy_slot_type(vm, 3) == GPY_TYPE_LIST);
    CHECK_OK(vm, gpy_get_index(vm, 3, 0, 4));
    double f = 0;
    CHECK_OK(vm, gpy_get_float(vm, 4, &f));
    CHECK(f == 2.5);
    /* writes through C are seen by the script: n[0]['k'][2].append(9) */
    CHECK_OK(vm, gpy_set_int(vm, 4, 9));
    CHECK_OK(vm, gpy_list_append(vm, 3, 4));
    CHECK_STR(repr_of(vm, "n[0]['k'][2]", 5), "[2.5, 9]");
}

static void globals_and_calls(GpyVM *vm) {
    int64_t i = 0;
    const char *script = "x = 5\n"
                         "def f(a, b=2, *, c=10):\n"
                         "    return a*100 + b*10 + c\n"
                         "def g(*a, **k):\n"
                         "    return (a, sorted(k.items()))\n"
                         "def total():\n"
                         "    return x + y\n";
    CHECK_OK(vm, gpy_run_string(vm, "lib", script, (size_t)-1, "lib.py"));
    CHECK_OK(vm, gpy_get_global(vm, "lib", "x", 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 5);
    /* a global written from C is seen by the script's function */
    CHECK_OK(vm, gpy_set_int(vm, 0, 7));
    CHECK_OK(vm, gpy_set_global(vm, "lib", "y", 0));
    CHECK_OK(vm, gpy_get_global(vm, "lib", "total", 1));
    CHECK(gpy_slot_type(vm, 1) == GPY_TYPE_OTHER);
    CHECK_OK(vm, gpy_call(vm, 1, 0, -1, 2));
    CHECK_OK(vm, gpy_get_int(vm, 2, &i));
    CHECK(i == 12);
    /* and by a script run later in that module */
    CHECK_OK(vm, gpy_run_string(vm, "lib", "z = x * y\n", (size_t)-1, NULL));
    CHECK_OK(vm, gpy_get_global(vm, "lib", "z", 2));
    CHECK_OK(vm, gpy_get_int(vm, 2, &i));
    CHECK(i == 35);
    /* gpy_import finds the module by its name */
    CHECK_OK(vm, gpy_import(vm, "lib", 3));
    CHECK_OK(vm, gpy_get_attr(vm, 3, "z", 4));
    CHECK_OK(vm, gpy_get_int(vm, 4, &i));
    CHECK(i == 35);

    /* CPython: f(1) == 130, f(1, 3) == 140, f(1, c=4) == 124,
    ** f(1, **{'b': 5, 'c': 6}) == 156 */
    CHECK_OK(vm, gpy_get_global(vm, "lib", "f", 10));
    CHECK_OK(vm, gpy_set_int(vm, 11, 1));
    CHECK_OK(vm, gpy_call(vm, 10, 1, -1, 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 130);
    CHECK_OK(vm, gpy_set_int(vm, 12, 3));
    CHECK_OK(vm, gpy_call(vm, 10, 2, -1, 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 140);
    CHECK_OK(vm, gpy_new_dict(vm, 5));
    CHECK_OK(vm, gpy_set_str(vm, 6, "c", (size_t)-1));
    CHECK_OK(vm, gpy_set_int(vm, 7, 4));
    CHECK_OK(vm, gpy_set_item(vm, 5, 6, 7));
    CHECK_OK(vm, gpy_call(vm, 10, 1, 5, 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 124);
    CHECK_OK(vm, gpy_set_int(vm, 7, 6));
    CHECK_OK(vm, gpy_set_item(vm, 5, 6, 7));
    CHECK_OK(vm, gpy_set_str(vm, 6, "b", (size_t)-1));
    CHECK_OK(vm, gpy_set_int(vm, 7, 5));
    CHECK_OK(vm, gpy_set_item(vm, 5, 6, 7));
    CHECK_OK(vm, gpy_call(vm, 10, 1, 5, 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 156);
    /* the keyword dict is the caller's: the call leaves it as it was */
    int64_t n = 0;
    CHECK_OK(vm, gpy_len(vm, 5, &n));
    CHECK(n == 2);
    /* the result may go to the function's own slot */
    CHECK_OK(vm, gpy_call(vm, 10, 1, -1, 10));
    CHECK_OK(vm, gpy_get_int(vm, 10, &i));
    CHECK(i == 130);

    /* CPython: repr(g(1, 'x', 2.5, z=None, y=[1])) ==
    ** "((1, 'x', 2.5), [('y', [1]), ('z', None)])" */
    CHECK_OK(vm, gpy_get_global(vm, "lib", "g", 10));
    CHECK_OK(vm, gpy_set_int(vm, 11, 1));
    CHECK_OK(vm, gpy_set_str(vm, 12, "x", (size_t)-1));
    CHECK_OK(vm, gpy_set_float(vm, 13, 2.5));
    CHECK_OK(vm, gpy_new_dict(vm, 5));
    CHECK_OK(vm, gpy_set_str(vm, 6, "z", (size_t)-1));
    CHECK_OK(vm, gpy_set_none(vm, 7));
    CHECK_OK(vm, gpy_set_item(vm, 5, 6, 7));
    CHECK_OK(vm, gpy_set_str(vm, 6, "y", (size_t)-1));
    CHECK_OK(vm, gpy_eval(vm, NULL, "[1]", 7));
    CHECK_OK(vm, gpy_set_item(vm, 5, 6, 7));
    CHECK_OK(vm, gpy_call(vm, 10, 3, 5, 0));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "r", 0));
    CHECK_STR(repr_of(vm, "r", 1), "((1, 'x', 2.5), [('y', [1]), ('z', None)])");

    /* builtins are globals too, as in a script. CPython: max(3, 9, 4) == 9 */
    CHECK_OK(vm, gpy_get_global(vm, NULL, "max", 10));
    CHECK_OK(vm, gpy_set_int(vm, 11, 3));
    CHECK_OK(vm, gpy_set_int(vm, 12, 9));
    CHECK_OK(vm, gpy_set_int(vm, 13, 4));
    CHECK_OK(vm, gpy_call(vm, 10, 3, -1, 0));
    CHECK_OK(vm, gpy_get_int(vm, 0, &i));
    CHECK(i == 9);

    /* methods. CPython: "a,b,,c".split(",") == ['a', 'b', '', 'c'] */
    CHECK_OK(vm, gpy_set_str(vm, 10, "a,b,,c", (size_t)-1));
    CHECK_OK(vm, gpy_set_str(vm, 11, ",", (size_t)-1));
    CHECK_OK(vm, gpy_call_method(vm, 10, "split", 1, 0));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "parts", 0));
    CHECK_STR(repr_of(vm, "parts", 1), "['a', 'b', '', 'c']");
    CHECK_OK(vm, gpy_set_str(vm, 11, "tail", (size_t)-1));
    CHECK_OK(vm, gpy_copy_slot(vm, 10, 0));
    CHECK_OK(vm, gpy_call_method(vm, 10, "append", 1, 1));
    CHECK(gpy_slot_type(vm, 1) == GPY_TYPE_NONE);
    CHECK_OK(vm, gpy_len(vm, 0, &n));
    CHECK(n == 5);

    /* a module attribute. CPython: repr(math.pi) == '3.141592653589793' */
    CHECK_OK(vm, gpy_import(vm, "math", 0));
    CHECK_OK(vm, gpy_get_attr(vm, 0, "pi", 1));
    double f = 0;
    CHECK_OK(vm, gpy_get_float(vm, 1, &f));
    CHECK(f == 3.141592653589793);
    CHECK_OK(vm, gpy_set_int(vm, 1, 99));
    CHECK_OK(vm, gpy_set_attr(vm, 0, "answer", 1));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "import math\nseen = math.answer\n", (size_t)-1, NULL));
    CHECK_OK(vm, gpy_get_global(vm, NULL, "seen", 2));
    CHECK_OK(vm, gpy_get_int(vm, 2, &i));
    CHECK(i == 99);
}

int main(void) {
    GpyVM *vm = gpy_new(NULL);
    CHECK(vm != NULL);
    if (!vm) return check_done("test_values");
    CHECK_OK(vm, gpy_ensure_slots(vm, 16));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "pass\n", (size_t)-1, NULL)); /* __main__ exists */
    scalars(vm);
    strings(vm);
    lists_tuples(vm);
    dicts(vm);
    nested(vm);
    globals_and_calls(vm);
    gpy_free(vm);
    return check_done("test_values");
}
