/*
** infer_names.c — what names that are not locals denote in a kernel:
** globals and closure variables captured at compile time (numbers and
** tuples of numbers become constants), modules, dispatchers of device
** functions, dtypes, builtins; and attributes of modules (cuda.threadIdx.x,
** math.pi, np.float32). Results are memoized per specialization.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "infer_priv.h"
#include "int_literal.h"

static const char *const bi_names[9] = {"range", "len", "min", "max", "abs", "round", "int", "float", "bool"};

static Type *type_of(Value v) { return IS_OBJ(v) ? AS_OBJ(v)->type : NULL; }

/* d[name] without running user code (EMPTY when absent). */
static Value dict_lookup(VM *vm, Dict *d, const char *name) {
    if (!d) return EMPTY_VAL;
    Str *k = str_intern(vm, name, strlen(name));
    return dict_get_str(vm, d, k);
}

/* The builtins kernels understand, fetched once per jit_infer call so that
** globals can be recognized by identity (a shadowed `range` is not range). */
static void load_builtins(Ctx *c) {
    if (c->builtins_loaded) return;
    for (int i = 0; i < 9; i++) c->bi[i] = dict_lookup(c->vm, c->vm->builtins, bi_names[i]);
    c->builtins_loaded = true;
}

/* For `from math import sqrt`: the dotted path of a native function found in
** one of the modules kernels know, by identity; false when none. */
static bool native_path(Ctx *c, Value v, char *out, size_t size) {
    static const char *const mods[] = {"math", "numpy", "numba.cuda", "cuda", "numba", "cmath"};
    for (size_t m = 0; m < sizeof mods / sizeof mods[0]; m++) {
        Value mv = dict_lookup(c->vm, c->vm->modules, mods[m]);
        if (!IS_OBJ(mv) || type_of(mv) != c->vm->t_module) continue;
        Dict *d = ((Module *)AS_OBJ(mv))->dict;
        int64_t pos = 0;
        Value k, val;
        while (d && dict_next(d, &pos, &k, &val)) {
            if (IS_OBJ(val) && AS_OBJ(val) == AS_OBJ(v) && IS_STR(c->vm, k)) {
                char raw[256];
                snprintf(raw, sizeof raw, "%s.%s", mods[m], AS_STR(k)->chars);
                jit_path_normalize(raw, out, size);
                if (jit_path_lookup(out)) return true;
            }
        }
    }
    return false;
}

/* The type of a constant tuple of numbers (nested at most 4 deep), or NULL. */
static const JType *const_tuple_type(Pass *p, Value v, int depth) {
    VM *vm = p->c->vm;
    if (IS_BOOL(v)) return S(p, JK_BOOL);
    if (IS_INT(v)) return S(p, JK_INT64);
    if (IS_FLOAT(v)) return S(p, JK_FLOAT64);
    if (depth > 4 || !IS_TUPLE(vm, v)) return NULL;
    Tuple *t = AS_TUPLE(v);
    if (t->len > 64) return NULL;
    const JType *e[64];
    for (int64_t i = 0; i < t->len; i++)
        if (!(e[i] = const_tuple_type(p, t->items[i], depth + 1))) return NULL;
    return jt_tuple(vm, (int)t->len, e);
}

/* What a compile-time value denotes inside a kernel. path: its dotted name
** when reached through a module ("math.sqrt"), else the global's name. */
static Resolved classify(Pass *p, const AstNode *at, Value v, const char *path) {
    Ctx *c = p->c;
    VM *vm = c->vm;
    Resolved r = {NULL, JB_NONE, EMPTY_VAL};
    if (IS_BOOL(v) || IS_INT(v) || IS_FLOAT(v)) {
        r.type = S(p, IS_BOOL(v) ? JK_BOOL : IS_INT(v) ? JK_INT64 : JK_FLOAT64);
        r.builtin = JB_CONST;
        r.constant = v;
        return r;
    }
    if (!IS_OBJ(v)) inf_fail(p, at, "'%s' of type %s cannot be used in a kernel", path, vm_type_name(vm, v));
    uint64_t big;
    if (jit_bigint_u64(vm, v, &big)) { /* MASK = 0xFFFFFFFFFFFFFFFF: a uint64, as a literal would be */
        r.type = S(p, JK_UINT64);
        r.builtin = JB_CONST;
        r.constant = v;
        return r;
    }
    if (bigint_is(vm, v))
        inf_fail(p, at, "Int value is too large: global '%s' does not fit in 64 bits", path);
    Type *ty = type_of(v);
    if (ty == vm->t_tuple) {
        const JType *tt = const_tuple_type(p, v, 0);
        if (!tt)
            inf_fail(p, at, "global tuple '%s' must hold only numbers (or tuples of numbers) to be used in a kernel",
                     path);
        r.type = tt;
        r.builtin = JB_CONST;
        r.constant = v;
        return r;
    }
    JitArrayView a;
    if (inf_device_global(p, at, v, path, &r)) return r; /* a device array: by address (infer_globals.c) */
    if (jit_binding(vm)->array_view(vm, v, false, &a)) { /* a global array: a constant, in constant memory (as in Numba) */
        if (a.ndim < 1 || a.ndim > 3)
            inf_fail(p, at, "global array '%s' must have 1 to 3 dimensions to be used in a kernel", path);
        if ((uint64_t)a.size * dtype_itemsize(a.dtype) > 65536)
            inf_fail(p, at, "global array '%s' is larger than the 64 KiB of constant memory", path);
        r.type = jt_array(vm, a.dtype, a.ndim, 'C');
        r.builtin = JB_CONST;
        r.constant = v;
        return r;
    }
    if (ty == vm->t_module) {
        Module *m = (Module *)AS_OBJ(v);
        char buf[256];
        r.type = jt_module(vm, jit_path_normalize(m->name ? m->name->chars : path, buf, sizeof buf));
        r.constant = v;
        return r;
    }
    load_builtins(c);
    for (int i = 0; i < 9; i++) {
        if (IS_OBJ(c->bi[i]) && AS_OBJ(c->bi[i]) == AS_OBJ(v)) {
            r.type = jt_module(vm, bi_names[i]);
            return r;
        }
    }
    bool is_device = false;
    Function *fn = jit_binding(vm)->dispatcher_function(vm, v, &is_device);
    if (fn) {
        r.type = jt_function(vm, fn);
        r.constant = v;
        return r;
    }
    if (ty != vm->t_str) {
        int dt = jit_binding(vm)->dtype_of(vm, v);
        if (dt >= 0) {
            r.type = jt_dtype(vm, (NDType)dt);
            r.constant = v;
            return r;
        }
    }
    if (ty == vm->t_function)
        inf_fail(p, at, "'%s' is a plain function: decorate it with @cuda.jit(device=True) to call it from a kernel",
                 path);
    /* `from math import sqrt`, `from numba.cuda import threadIdx`, `grid = cuda.grid` */
    char buf[256];
    if (native_path(c, v, buf, sizeof buf)) {
        const JitPath *jp = jit_path_lookup(buf);
        if (jp->kind == JP_CALL || jp->kind == JP_NAMESPACE) {
            r.type = jt_module(vm, buf);
            return r;
        }
        if (jp->kind == JP_SREG) {
            r.type = S(p, JK_INT32);
            r.builtin = jp->builtin;
            return r;
        }
    }
    inf_fail(p, at, "'%s' of type %s cannot be used in a kernel", path, vm_type_name(vm, v));
}

/* A global (or closure variable, or builtin) name, memoized per function. */
Resolved inf_resolve_global(Pass *p, const AstNode *at, const char *name) {
    FuncX *fx = p->fx;
    for (int i = 0; i < fx->nmemo; i++)
        if (strcmp(fx->memo[i].name, name) == 0) return fx->memo[i].r;
    VM *vm = p->c->vm;
    Function *fn = fx->f.fn;
    Value v = EMPTY_VAL;
    Proto *pr = fn->proto;
    for (int i = 0; i < pr->nfree && i < fn->nfree; i++) {
        if (pr->freenames && pr->freenames[i] && strcmp(pr->freenames[i]->chars, name) == 0) {
            v = fn->free[i] ? fn->free[i]->value : EMPTY_VAL;
            if (IS_EMPTY(v)) inf_fail(p, at, "free variable '%s' is not bound", name);
            break;
        }
    }
    if (IS_EMPTY(v)) v = dict_lookup(vm, fn->globals, name);
    if (IS_EMPTY(v)) v = dict_lookup(vm, vm->builtins, name);
    if (IS_EMPTY(v)) inf_fail(p, at, "NameError: name '%s' is not defined", name); /* Numba's words */
    Resolved r = classify(p, at, v, name);
    if (fx->nmemo == fx->memo_cap) {
        int cap = fx->memo_cap ? fx->memo_cap * 2 : 8;
        GlobalMemo *m = inf_alloc(p, (size_t)cap * sizeof *m);
        if (fx->nmemo) memcpy(m, fx->memo, (size_t)fx->nmemo * sizeof *m);
        fx->memo = m;
        fx->memo_cap = cap;
    }
    fx->memo[fx->nmemo].name = name;
    fx->memo[fx->nmemo].r = r;
    fx->nmemo++;
    return r;
}

/* Records a Resolved on node n. */
const JType *inf_apply(Pass *p, const AstNode *n, Resolved r) {
    JInfo *i = inf_info(p, n);
    i->type = r.type;
    i->builtin = r.builtin;
    i->constant = r.constant;
    return r.type;
}

/* Attribute `attr` of the module/namespace held by node base (type bt). */
Resolved inf_module_attr(Pass *p, const AstNode *at, const JType *bt, const JInfo *bi, const char *attr) {
    VM *vm = p->c->vm;
    char raw[320], path[320];
    snprintf(raw, sizeof raw, "%s.%s", bt->path, attr);
    jit_path_normalize(raw, path, sizeof path);
    Resolved r = {NULL, JB_NONE, EMPTY_VAL};
    const JitPath *jp = jit_path_lookup(path);
    if (jp) {
        switch (jp->kind) {
        case JP_NAMESPACE: r.type = jt_module(vm, path); break;
        case JP_CALL: r.type = jt_module(vm, path); break;
        case JP_SREG:
            r.type = S(p, JK_INT32);
            r.builtin = jp->builtin;
            break;
        case JP_CONST:
            r.type = S(p, JK_FLOAT64);
            r.builtin = JB_CONST;
            r.constant = FLOAT_VAL(jp->value);
            break;
        case JP_DTYPE: r.type = jt_dtype(vm, jp->dtype); break;
        }
        if (jp->kind == JP_NAMESPACE && bi && IS_OBJ(bi->constant) && type_of(bi->constant) == vm->t_module) {
            Value v = dict_lookup(vm, ((Module *)AS_OBJ(bi->constant))->dict, attr);
            if (IS_OBJ(v) && type_of(v) == vm->t_module) r.constant = v;
        }
        return r;
    }
    /* not a name we know: the module's own attribute (constants, dtypes,
       submodules, dispatchers of user modules) */
    if (bi && IS_OBJ(bi->constant) && type_of(bi->constant) == vm->t_module && strncmp(path, "cuda", 4) != 0) {
        Value v = dict_lookup(vm, ((Module *)AS_OBJ(bi->constant))->dict, attr);
        if (!IS_EMPTY(v)) return classify(p, at, v, path);
    }
    inf_fail(p, at, "'%s' is not supported in kernels", path);
}
