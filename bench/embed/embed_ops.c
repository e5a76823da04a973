/*
** embed_ops.c — one embedding operation repeated N times, for counting
** instructions under valgrind (instructions.sh): unlike wall-clock time on
** a shared machine, the count does not move with the load, so the
** gpy/Lua ratio it gives is reproducible.
**
**   embed_ops OP N     OP: gpy_call lua_call lua_pcall gpy_vm lua_vm
** The same operations as embed_bench.c's call and vm rows.
*/
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpy.h"

static int gpy_call_n(long n) {
    GpyVM *vm = gpy_new(NULL);
    if (!vm || gpy_run_string(vm, NULL, "def add(a, b):\n    return a + b\n", (size_t)-1, "<ops>") != GPY_OK ||
        gpy_ensure_slots(vm, 4) != GPY_OK || gpy_get_global(vm, NULL, "add", 0) != GPY_OK)
        return 1;
    int64_t sum = 0;
    for (long i = 0; i < n; i++) {
        gpy_set_int(vm, 1, i);
        gpy_set_int(vm, 2, 2);
        gpy_call(vm, 0, 2, -1, 3);
        int64_t r;
        gpy_get_int(vm, 3, &r);
        sum += r;
    }
    gpy_free(vm);
    return sum != n * (n - 1) / 2 + 2 * n;
}

static int lua_call_n(long n, int protected_call) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_dostring(L, "function add(a, b) return a + b end")) return 1;
    lua_getglobal(L, "add");
    int fn = lua_gettop(L);
    int64_t sum = 0;
    for (long i = 0; i < n; i++) {
        lua_pushvalue(L, fn);
        lua_pushinteger(L, i);
        lua_pushinteger(L, 2);
        if (protected_call) lua_pcall(L, 2, 1, 0);
        else lua_call(L, 2, 1);
        sum += lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    lua_close(L);
    return sum != n * (n - 1) / 2 + 2 * n;
}

static int gpy_vm_n(long n) {
    for (long i = 0; i < n; i++) {
        GpyVM *vm = gpy_new(NULL);
        if (!vm || gpy_run_string(vm, NULL, "pass", (size_t)-1, NULL) != GPY_OK) return 1;
        gpy_free(vm);
    }
    return 0;
}

static int lua_vm_n(long n) {
    for (long i = 0; i < n; i++) {
        lua_State *L = luaL_newstate();
        luaL_openlibs(L);
        if (luaL_dostring(L, "")) return 1;
        lua_close(L);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: embed_ops gpy_call|lua_call|lua_pcall|gpy_vm|lua_vm N\n");
        return 2;
    }
    long n = atol(argv[2]);
    const char *op = argv[1];
    if (!strcmp(op, "gpy_call")) return gpy_call_n(n);
    if (!strcmp(op, "lua_call")) return lua_call_n(n, 0);
    if (!strcmp(op, "lua_pcall")) return lua_call_n(n, 1);
    if (!strcmp(op, "gpy_vm")) return gpy_vm_n(n);
    if (!strcmp(op, "lua_vm")) return lua_vm_n(n);
    fprintf(stderr, "embed_ops: unknown operation %s\n", op);
    return 2;
}
