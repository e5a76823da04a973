/*
** fuzz_numpy.c — libFuzzer target: the ndarray shape and index machinery.
** The fuzz bytes pick the statements of a short program over four arrays
** (reshape, slicing and indexing, item assignment, repeat, tile,
** broadcasting, transposes, concatenation, reductions, printing) and their
** numbers; the program runs in the VM. Each statement sits in its own
** try/except, so an error only skips it: what must never happen is a crash,
** a sanitizer report or memory corruption.
**
** The numbers are small (shapes that fit) or huge (2**45 and more, which
** any element count or byte size they enter must reject), never in between,
** and an array that grows past 4096 elements (or extents) is replaced by a
** small one after each statement, so a correct gpy never allocates much: a
** huge request fails in malloc (ASAN_OPTIONS=allocator_may_return_null=1)
** and becomes MemoryError, and scripts/fuzz.sh reports any allocation that
** succeeds above 4 GB as a crash.
**
** GPY_FUZZ_SHOW=1 prints each generated program on stderr: that is how a
** crash input becomes a .gpy reproducer.
*/
#include <stdlib.h>

#include "fuzz_vm.h"

#define MAX_STATEMENTS 16

typedef struct Gen {
    const uint8_t *p, *end;
    StrBuf out;
} Gen;

/* The next fuzz byte modulo n (0 once the input is used up). */
static unsigned pick(Gen *g, unsigned n) {
    if (g->p >= g->end) return 0;
    return *g->p++ % n;
}

static bool more(const Gen *g) { return g->p < g->end; }

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Indices, slice bounds and steps: any size is fine, nothing is allocated from them. */
static const char *const index_values[] = {"0", "1", "2", "-1", "3", "-2", "4", "-3", "5", "7", "-7", "None",
                                           "2**31", "-2**31", "2**32+1", "2**62", "2**63-1", "-2**63", "2**64", "-2**64"};
/* Sizes, counts and repeats: small, or so huge that the product must be rejected. */
static const char *const size_values[] = {"0", "1", "2", "3", "4", "-1", "1", "2", "5", "-2",
                                          "2**45+1", "2**62", "2**63-1", "-2**63", "2**64", "7905747460161236407"};
static const char *const dtypes[] = {"np.int64", "np.float64", "np.int32", "np.float32", "np.bool_", "np.uint8",
                                     "np.int8", "np.uint64", "np.int16", "np.float16"};
static const char *const axes[] = {"0", "1", "-1", "2", "None", "3", "-3", "5", "2**63-1"};

static void var(Gen *g) { sb_printf(&g->out, "a%u", pick(g, 4)); }

static void index_value(Gen *g) { sb_appends(&g->out, index_values[pick(g, COUNT(index_values))]); }

static void size_value(Gen *g) { sb_appends(&g->out, size_values[pick(g, COUNT(size_values))]); }

/* "(2, 3)" style: 0 to 4 sizes */
static void shape(Gen *g) {
    unsigned n = pick(g, 5);
    sb_putc(&g->out, '(');
    for (unsigned i = 0; i < n; i++) {
        size_value(g);
        sb_appends(&g->out, ", ");
    }
    sb_putc(&g->out, ')');
}

/* One element of an index: int, slice, None, ..., a list, an array, a mask. */
static void index_item(Gen *g) {
    switch (pick(g, 9)) {
    case 0:
    case 1: index_value(g); break;
    case 2:
    case 3: {
        unsigned parts = pick(g, 8);
        if (parts & 1) index_value(g);
        sb_putc(&g->out, ':');
        if (parts & 2) index_value(g);
        if (parts & 4) {
            sb_putc(&g->out, ':');
            index_value(g);
        }
        break;
    }
    case 4: sb_appends(&g->out, "None"); break;
    case 5: sb_appends(&g->out, "..."); break;
    case 6:
        sb_putc(&g->out, '[');
        index_value(g);
        sb_appends(&g->out, ", ");
        index_value(g);
        sb_putc(&g->out, ']');
        break;
    case 7: var(g); break;
    default:
        var(g);
        sb_appends(&g->out, " > 1");
        break;
    }
}

static void index_expr(Gen *g) {
    unsigned n = 1 + pick(g, 4);
    for (unsigned i = 0; i < n; i++) {
        if (i) sb_appends(&g->out, ", ");
        index_item(g);
    }
}

static void value(Gen *g) {
    switch (pick(g, 4)) {
    case 0: index_value(g); break;
    case 1: sb_appends(&g->out, "1.5"); break;
    case 2: sb_appends(&g->out, "1e300"); break;
    default: var(g); break;
    }
}

/* One statement assigning aD (or printing, or storing into an array). */
/* fn(a<k>, <shape>): a call taking an array and a shape. */
static void var_and_shape(Gen *g, const char *fn) {
    sb_appends(&g->out, fn);
    var(g);
    sb_appends(&g->out, ", ");
    shape(g);
    sb_putc(&g->out, ')');
}

static void statement(Gen *g) {
    StrBuf *o = &g->out;
    sb_appends(o, "try:\n    ");
    unsigned what = pick(g, 20);
    int target = -1;
    if (what < 15) {
        target = (int)pick(g, 4);
        sb_printf(o, "a%d = ", target);
    }
    switch (what) {
    case 0:
        var(g);
        sb_appends(o, ".reshape");
        shape(g);
        break;
    case 1:
    case 2:
        var(g);
        sb_putc(o, '[');
        index_expr(g);
        sb_putc(o, ']');
        break;
    case 3:
        sb_appends(o, "np.repeat(");
        var(g);
        sb_appends(o, ", ");
        if (pick(g, 3) == 0) shape(g);
        else size_value(g);
        sb_appends(o, ", axis=");
        sb_appends(o, axes[pick(g, COUNT(axes))]);
        sb_putc(o, ')');
        break;
    case 4:
        var_and_shape(g, "np.broadcast_to(");
        break;
    case 5: {
        static const char *const ops[] = {" + ", " * ", " - ", " < ", " // ", " == "};
        var(g);
        sb_appends(o, ops[pick(g, COUNT(ops))]);
        var(g);
        break;
    }
    case 6: {
        static const char *const forms[] = {".T", ".ravel()", ".flatten()", ".copy()", ".squeeze()"};
        var(g);
        sb_appends(o, forms[pick(g, COUNT(forms))]);
        break;
    }
    case 7:
        var_and_shape(g, "np.transpose(");
        break;
    case 8:
        var_and_shape(g, "np.tile(");
        break;
    case 9: {
        static const char *const makers[] = {"np.zeros(", "np.ones(", "np.empty(", "np.full("};
        unsigned m = pick(g, COUNT(makers));
        if (m == 3) {
            sb_appends(o, "np.full(");
            shape(g);
            sb_appends(o, ", 7");
        } else {
            sb_appends(o, makers[m]);
            shape(g);
        }
        sb_appends(o, ", dtype=");
        sb_appends(o, dtypes[pick(g, COUNT(dtypes))]);
        sb_putc(o, ')');
        break;
    }
    case 10:
        sb_appends(o, pick(g, 2) ? "np.concatenate((" : "np.stack((");
        var(g);
        sb_appends(o, ", ");
        var(g);
        sb_appends(o, "), axis=");
        sb_appends(o, axes[pick(g, COUNT(axes))]);
        sb_putc(o, ')');
        break;
    case 11: {
        static const char *const reds[] = {".sum", ".max", ".min", ".argmax", ".cumsum", ".mean", ".prod"};
        var(g);
        sb_appends(o, reds[pick(g, COUNT(reds))]);
        sb_appends(o, "(axis=");
        sb_appends(o, axes[pick(g, COUNT(axes))]);
        sb_putc(o, ')');
        break;
    }
    case 12: {
        bool swap = pick(g, 2);
        sb_appends(o, swap ? "np.swapaxes(" : "np.expand_dims(");
        var(g);
        sb_appends(o, ", ");
        sb_appends(o, axes[pick(g, COUNT(axes))]);
        if (swap) {
            sb_appends(o, ", ");
            sb_appends(o, axes[pick(g, COUNT(axes))]);
        }
        sb_putc(o, ')');
        break;
    }
    case 13:
        var(g);
        sb_appends(o, ".astype(");
        sb_appends(o, dtypes[pick(g, COUNT(dtypes))]);
        sb_putc(o, ')');
        break;
    case 14:
        sb_appends(o, "np.arange(");
        size_value(g);
        if (pick(g, 2)) { /* huge / huge is a middling count: keep the step small */
            sb_appends(o, ", ");
            size_value(g);
            sb_appends(o, ", ");
            sb_appends(o, pick(g, 2) ? "1" : "-1");
        }
        sb_putc(o, ')');
        break;
    case 15:
    case 16:
        var(g);
        sb_putc(o, '[');
        index_expr(g);
        sb_appends(o, "] = ");
        value(g);
        break;
    case 17:
        sb_appends(o, "print(");
        var(g);
        sb_putc(o, ')');
        break;
    case 18:
        sb_appends(o, "print(");
        var(g);
        sb_appends(o, ".shape, ");
        var(g);
        sb_appends(o, ".strides, ");
        var(g);
        sb_appends(o, ".dtype, len(");
        var(g);
        sb_appends(o, "))");
        break;
    default:
        sb_appends(o, "print(");
        var(g);
        sb_appends(o, ".tolist())");
        break;
    }
    sb_appends(o, "\nexcept Exception:\n    pass\n");
    /* Keep every array small, so that a chain of statements (tile after
    ** tile, or a loop over a huge extent of an empty array, which numpy
    ** does too) cannot make a correct gpy slow. */
    if (target >= 0)
        sb_printf(o,
                  "try:\n    if a%d.size > 4096 or max(a%d.shape + (0,)) > 4096:\n        a%d = np.arange(3)\n"
                  "except Exception:\n    a%d = np.arange(3)\n",
                  target, target, target, target);
}

/* The four arrays every program starts from: small, of fuzzed dtypes. */
static void prologue(Gen *g) {
    static const char *const starts[] = {"np.arange(24).reshape(2, 3, 4)", "np.arange(6)", "np.zeros((3, 1))",
                                         "np.arange(12).reshape(3, 4).T", "np.ones((2, 1, 3))", "np.arange(5)[::2]",
                                         "np.array(3)", "np.arange(0)"};
    sb_appends(&g->out, "import numpy as np\n");
    for (int i = 0; i < 4; i++) {
        sb_printf(&g->out, "a%d = %s.astype(%s)\n", i, starts[pick(g, COUNT(starts))], dtypes[pick(g, COUNT(dtypes))]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    VM *vm = fuzz_vm();
    Gen g = {.p = data, .end = data + size};
    sb_init(&g.out);
    prologue(&g);
    for (int i = 0; i < MAX_STATEMENTS && more(&g); i++) statement(&g);
    if (getenv("GPY_FUZZ_SHOW")) fprintf(stderr, "%.*s", (int)g.out.len, g.out.data);
    vm_run_source(vm, "<fuzz>", g.out.data, g.out.len);
    sb_free(&g.out);
    return 0;
}
