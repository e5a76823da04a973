/*
** embed_bench.c — what embedding costs, gpy beside Lua 5.4 in the same run.
**
**   call     C calls a script function add(a, b) with two ints and reads the
**            int result (gpy_call vs lua_call)
**   cfunc    a script calls a C function f(a, b) returning a + b, in a loop;
**            the same loop calling nothing is subtracted (both languages)
**   vm       create a VM, run `pass`, free it (gpy_new + gpy_run_string +
**            gpy_free vs luaL_newstate + luaL_openlibs + luaL_dostring +
**            lua_close)
**   launch   (gpy only) host cost of gpy_launch of a kernel with three
**            wrapped application arrays, against the test CUDA driver
**            (GPY_BENCH_LIBCUDA), next to the same launch written in the
**            script; both minus nothing: the driver is a no-op stub
** Each figure is the median of RUNS runs; run.sh builds and runs it.
*/
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpy.h"

#define RUNS 11
#define CALLS 1000000
#define VMS 2000
#define LAUNCHES 200000

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void must(GpyVM *vm, GpyStatus st, const char *what) {
    if (st == GPY_OK) return;
    const char *tb = gpy_error_traceback(vm);
    fprintf(stderr, "embed_bench: %s: %s\n%s", what, gpy_status_name(st), tb ? tb : "");
    exit(1);
}

/* ------------------------------------------------------------------ call */

static double gpy_call_ns(GpyVM *vm) {
    must(vm, gpy_ensure_slots(vm, 4), "slots");
    must(vm, gpy_get_global(vm, NULL, "add", 0), "add");
    int64_t sum = 0;
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++) {
        gpy_set_int(vm, 1, i);
        gpy_set_int(vm, 2, 2);
        gpy_call(vm, 0, 2, -1, 3);
        int64_t r;
        gpy_get_int(vm, 3, &r);
        sum += r;
    }
    double t = (now_ns() - t0) / CALLS;
    if (sum != (int64_t)CALLS * (CALLS - 1) / 2 + 2 * (int64_t)CALLS) {
        fprintf(stderr, "embed_bench: gpy call gave a wrong sum\n");
        exit(1);
    }
    return t;
}

static double lua_call_ns(lua_State *L) {
    int64_t sum = 0;
    lua_getglobal(L, "add");
    int fn = lua_gettop(L);
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++) {
        lua_pushvalue(L, fn);
        lua_pushinteger(L, i);
        lua_pushinteger(L, 2);
        lua_call(L, 2, 1);
        sum += lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    double t = (now_ns() - t0) / CALLS;
    lua_pop(L, 1);
    if (sum != (int64_t)CALLS * (CALLS - 1) / 2 + 2 * (int64_t)CALLS) {
        fprintf(stderr, "embed_bench: lua call gave a wrong sum\n");
        exit(1);
    }
    return t;
}

/* ----------------------------------------------------------------- cfunc */

static GpyStatus c_add(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    int64_t a, b;
    GpyStatus st = gpy_get_int(vm, 1, &a);
    if (st == GPY_OK) st = gpy_get_int(vm, 2, &b);
    if (st != GPY_OK) return st;
    return gpy_set_int(vm, 0, a + b);
}

static int l_add(lua_State *L) {
    lua_pushinteger(L, luaL_checkinteger(L, 1) + luaL_checkinteger(L, 2));
    return 1;
}

/* Runs the script's timed loops; returns ns per call (loop subtracted). */
static double gpy_cfunc_ns(GpyVM *vm) {
    must(vm, gpy_run_string(vm, NULL,
                            "import time\n"
                            "def with_call(n):\n"
                            "    t = time.perf_counter()\n"
                            "    for i in range(n):\n"
                            "        cadd(i, 2)\n"
                            "    return time.perf_counter() - t\n"
                            "def without(n):\n"
                            "    t = time.perf_counter()\n"
                            "    for i in range(n):\n"
                            "        pass\n"
                            "    return time.perf_counter() - t\n",
                            (size_t)-1, "<bench>"),
         "cfunc script");
    must(vm, gpy_ensure_slots(vm, 4), "slots");
    double t[2];
    const char *names[2] = {"with_call", "without"};
    for (int k = 0; k < 2; k++) {
        must(vm, gpy_get_global(vm, NULL, names[k], 0), names[k]);
        must(vm, gpy_set_int(vm, 1, CALLS), "n");
        must(vm, gpy_call(vm, 0, 1, -1, 2), names[k]);
        must(vm, gpy_get_float(vm, 2, &t[k]), "time");
    }
    return (t[0] - t[1]) * 1e9 / CALLS;
}

static double lua_cfunc_ns(lua_State *L) {
    if (luaL_dostring(L, "function with_call(n) local t = os.clock() for i = 1, n do cadd(i, 2) end return os.clock() - t end\n"
                         "function without(n) local t = os.clock() for i = 1, n do end return os.clock() - t end\n")) {
        fprintf(stderr, "embed_bench: %s\n", lua_tostring(L, -1));
        exit(1);
    }
    double t[2];
    const char *names[2] = {"with_call", "without"};
    for (int k = 0; k < 2; k++) {
        lua_getglobal(L, names[k]);
        lua_pushinteger(L, CALLS);
        lua_call(L, 1, 1);
        t[k] = lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    return (t[0] - t[1]) * 1e9 / CALLS;
}

/* -------------------------------------------------------------------- vm */

static double gpy_vm_ns(void) {
    double t0 = now_ns();
    for (int i = 0; i < VMS; i++) {
        GpyVM *vm = gpy_new(NULL);
        if (!vm) exit(1);
        must(vm, gpy_run_string(vm, NULL, "pass", (size_t)-1, NULL), "pass");
        gpy_free(vm);
    }
    return (now_ns() - t0) / VMS;
}

static double lua_vm_ns(void) {
    double t0 = now_ns();
    for (int i = 0; i < VMS; i++) {
        lua_State *L = luaL_newstate();
        luaL_openlibs(L);
        if (luaL_dostring(L, "")) exit(1);
        lua_close(L);
    }
    return (now_ns() - t0) / VMS;
}

/* ---------------------------------------------------------------- launch */

static const char kernel_src[] =
    "from numba import cuda\n"
    "import time\n"
    "@cuda.jit\n"
    "def add(x, y, out):\n"
    "    i = cuda.grid(1)\n"
    "    if i < out.size:\n"
    "        out[i] = x[i] + y[i]\n"
    "def script_launches(x, y, out, n):\n"
    "    launch = add[4, 256]\n"
    "    t = time.perf_counter()\n"
    "    for i in range(n):\n"
    "        launch(x, y, out)\n"
    "    t1 = time.perf_counter()\n"
    "    for i in range(n):\n"
    "        pass\n"
    "    return (t1 - t) - (time.perf_counter() - t1)\n";

/* Host cost of one gpy_launch and of one launch in the script, in ns. */
static void launch_ns(const char *libcuda, double *from_c, double *from_script) {
    GpyConfig cfg;
    gpy_config_init(&cfg);
    cfg.device = GPY_DEVICE_CUDA;
    cfg.libcuda = libcuda;
    GpyVM *vm = gpy_new(&cfg);
    if (!vm) exit(1);
    must(vm, gpy_run_string(vm, NULL, kernel_src, (size_t)-1, "<bench>"), "kernel script");
    must(vm, gpy_ensure_slots(vm, 8), "slots");
    /* three application buffers: "device pointers" of the test driver's
    ** address space are not needed, the stub driver never dereferences */
    enum { N = 1024 };
    static float bufs[3][N];
    int64_t shape[1] = {N};
    for (int k = 0; k < 3; k++) {
        GpyArray a = {.data = bufs[k], .dtype = GPY_FLOAT32, .ndim = 1, .shape = shape};
        must(vm, gpy_wrap_device_array(vm, 1 + k, &a), "wrap");
    }
    must(vm, gpy_get_global(vm, NULL, "add", 0), "add");
    GpyLaunch l = {.grid = {4, 1, 1}, .block = {256, 1, 1}, .stream = -1};
    must(vm, gpy_launch(vm, 0, &l, 1, 3), "first launch");
    double t0 = now_ns();
    for (int i = 0; i < LAUNCHES; i++) gpy_launch(vm, 0, &l, 1, 3);
    *from_c = (now_ns() - t0) / LAUNCHES;
    must(vm, gpy_get_global(vm, NULL, "script_launches", 0), "script_launches");
    must(vm, gpy_set_int(vm, 4, LAUNCHES), "n");
    must(vm, gpy_call(vm, 0, 4, -1, 5), "script launches");
    double s;
    must(vm, gpy_get_float(vm, 5, &s), "seconds");
    *from_script = s * 1e9 / LAUNCHES;
    gpy_free(vm);
}

int main(int argc, char **argv) {
    const char *libcuda = argc > 1 ? argv[1] : NULL;
    GpyVM *vm = gpy_new(NULL);
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (!vm || !L) return 1;
    must(vm, gpy_run_string(vm, NULL, "def add(a, b):\n    return a + b\n", (size_t)-1, "<bench>"), "add");
    if (luaL_dostring(L, "function add(a, b) return a + b end")) return 1;
    must(vm, gpy_ensure_slots(vm, 2), "slots");
    must(vm, gpy_import(vm, "builtins", 0), "builtins");
    must(vm, gpy_add_function(vm, 0, "cadd", c_add, NULL), "cadd");
    lua_register(L, "cadd", l_add);

    double r[RUNS][7];
    for (int k = 0; k < RUNS; k++) {
        r[k][0] = gpy_call_ns(vm);
        r[k][1] = lua_call_ns(L);
        r[k][2] = gpy_cfunc_ns(vm);
        r[k][3] = lua_cfunc_ns(L);
        r[k][4] = gpy_vm_ns();
        r[k][5] = lua_vm_ns();
    }
    double m[6];
    for (int j = 0; j < 6; j++) {
        double col[RUNS];
        for (int k = 0; k < RUNS; k++) col[k] = r[k][j];
        m[j] = median(col, RUNS);
    }
    printf("medians of %d runs (ns per operation)\n", RUNS);
    printf("%-44s %10s %10s %8s\n", "", "gpy", "Lua 5.4", "gpy/Lua");
    printf("%-44s %10.1f %10.1f %8.2f\n", "call a script function add(a, b) from C", m[0], m[1], m[0] / m[1]);
    printf("%-44s %10.1f %10.1f %8.2f\n", "call a C function f(a, b) from a script", m[2], m[3], m[2] / m[3]);
    printf("%-44s %10.1f %10.1f %8.2f\n", "create VM + run `pass` + free", m[4], m[5], m[4] / m[5]);
    if (libcuda) {
        double c[RUNS], s[RUNS];
        for (int k = 0; k < RUNS; k++) launch_ns(libcuda, &c[k], &s[k]);
        double mc = median(c, RUNS), ms = median(s, RUNS);
        printf("%-44s %10.1f\n", "kernel launch from C (3 wrapped arrays)", mc);
        printf("%-44s %10.1f %8s %.2f\n", "the same launch from the script", ms, "C/script", mc / ms);
    }
    lua_close(L);
    gpy_free(vm);
    return 0;
}
