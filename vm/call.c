/*
** call.c — calling things: binding a call's arguments to a gpy function's
** parameters (positional, keyword, defaults, keyword-only, *args,
** **kwargs) with CPython's TypeError messages, and vm_call for C code,
** which runs gpy functions in a nested interpreter loop.
*/
#include <string.h>

#include "cstack.h"
#include "interp.h"
#include "signals.h"

const char *interp_fn_name(Function *fn) {
    if (fn->qualname) return fn->qualname->chars;
    if (fn->proto->qualname) return fn->proto->qualname->chars;
    if (fn->name) return fn->name->chars;
    return fn->proto->name ? fn->proto->name->chars : "?";
}

/* ======================================================= binding errors */

static const char *param_name(Proto *p, int64_t i) {
    return i < p->nlocals && p->varnames && p->varnames[i] ? p->varnames[i]->chars : "?";
}

/* "f() missing 2 required positional arguments: 'a' and 'b'" for the
** still-empty registers of [start, end). */
static _Noreturn void missing_args(VM *vm, Function *fn, Value *base, int64_t start, int64_t end, const char *kind) {
    Proto *p = fn->proto;
    int64_t n = 0;
    for (int64_t i = start; i < end; i++)
        if (IS_EMPTY(base[i])) n++;
    StrBuf sb;
    sb_init(&sb);
    int64_t j = 0;
    for (int64_t i = start; i < end; i++) {
        if (!IS_EMPTY(base[i])) continue;
        if (j > 0) sb_appends(&sb, n == 2 ? " and " : j == n - 1 ? ", and " : ", ");
        sb_printf(&sb, "'%s'", param_name(p, i));
        j++;
    }
    Str *names = sb_finish(vm, &sb);
    vm_raise_kind(vm, TypeError, "%s() missing %lld required %s argument%s: %s", interp_fn_name(fn), (long long)n,
                  kind, n == 1 ? "" : "s", names->chars);
}

/* "f() takes 2 positional arguments but 3 were given" and its variants. */
static _Noreturn void too_many_positional(VM *vm, Function *fn, Value *base, int64_t given) {
    Proto *p = fn->proto;
    int64_t nparams = p->nparams;
    int64_t ndef = fn->defaults ? fn->defaults->len : 0;
    int64_t kwonly_given = 0;
    for (int64_t i = nparams; i < nparams + p->nkwonly; i++)
        if (!IS_EMPTY(base[i])) kwonly_given++;
    char sig[64];
    bool plural;
    if (ndef > 0) {
        plural = true;
        snprintf(sig, sizeof sig, "from %lld to %lld", (long long)(nparams - ndef), (long long)nparams);
    } else {
        plural = nparams != 1;
        snprintf(sig, sizeof sig, "%lld", (long long)nparams);
    }
    char kwsig[96] = "";
    if (kwonly_given)
        snprintf(kwsig, sizeof kwsig, " positional argument%s (and %lld keyword-only argument%s)",
                 given != 1 ? "s" : "", (long long)kwonly_given, kwonly_given != 1 ? "s" : "");
    vm_raise_kind(vm, TypeError, "%s() takes %s positional argument%s but %lld%s %s given", interp_fn_name(fn), sig,
                  plural ? "s" : "", (long long)given, kwsig, given == 1 && !kwonly_given ? "was" : "were");
}

/* ============================================================== binding */

/* Register index of the parameter called name, or -1. */
static int64_t param_index(VM *vm, Proto *p, Str *name, int64_t total) {
    (void)vm;
    for (int64_t i = 0; i < total; i++)
        if (p->varnames[i] == name) return i;
    for (int64_t i = 0; i < total; i++)
        if (p->varnames[i] && str_equal(p->varnames[i], name)) return i;
    return -1;
}

/* Binds one keyword argument (see interp_bind). */
static void bind_keyword(VM *vm, Function *fn, Value *base, int64_t total, Dict *varkw, Value key, Value v) {
    Proto *p = fn->proto;
    if (!IS_STR(vm, key)) vm_raise_kind(vm, TypeError, "%s() keywords must be strings", interp_fn_name(fn));
    Str *name = AS_STR(key);
    int64_t j = param_index(vm, p, name, total);
    if (j >= 0) {
        if (!IS_EMPTY(base[j]))
            vm_raise_kind(vm, TypeError, "%s() got multiple values for argument '%s'", interp_fn_name(fn), name->chars);
        base[j] = v;
    } else if (varkw) {
        dict_set_str(vm, varkw, name, v);
    } else {
        vm_raise_kind(vm, TypeError, "%s() got an unexpected keyword argument '%s'", interp_fn_name(fn), name->chars);
    }
}

/* Does p[0..n) overlap [lo, hi)? (compared as addresses: p may be a heap
** pointer unrelated to the stack) */
static bool overlaps(const Value *p, int64_t n, const Value *lo, const Value *hi) {
    if (n <= 0 || !p) return false;
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)(p + n);
    return a < (uintptr_t)hi && b > (uintptr_t)lo;
}

void interp_bind(VM *vm, Function *fn, Value *base, int64_t npos, const Value *pos, int64_t nkw, Tuple *kwnames,
                 const Value *kwvals, Dict *kwdict) {
    Proto *p = fn->proto;
    int64_t nparams = p->nparams, nkwonly = p->nkwonly, nregs = p->nregs;
    int64_t total = nparams + nkwonly;
    bool varargs = (p->flags & PROTO_VARARGS) != 0, varkw = (p->flags & PROTO_VARKW) != 0;
    if (kwdict) nkw = 0;

    /* Inputs that sit where the registers go (CALL passes them in place)
    ** move above the frame first. */
    Value *fend = base + nregs;
    if (fend > vm->stack_end) interp_recursion_error(vm);
    bool mv_pos = overlaps(pos, npos, base, fend), mv_kw = overlaps(kwvals, nkw, base, fend);
    if (mv_pos || mv_kw) {
        Value *scratch = fend;
        if (mv_pos && pos + npos > scratch) scratch = (Value *)pos + npos;
        if (mv_kw && kwvals + nkw > scratch) scratch = (Value *)kwvals + nkw;
        if (scratch + npos + nkw > vm->stack_end) interp_recursion_error(vm);
        if (mv_pos) {
            memmove(scratch, pos, (size_t)npos * sizeof(Value));
            pos = scratch;
            scratch += npos;
        }
        if (mv_kw) {
            memmove(scratch, kwvals, (size_t)nkw * sizeof(Value));
            kwvals = scratch;
        }
    }

    for (int64_t i = 0; i < nregs; i++) base[i] = EMPTY_VAL;
    int64_t n = npos < nparams ? npos : nparams;
    for (int64_t i = 0; i < n; i++) base[i] = pos[i];
    if (varargs) {
        Tuple *rest = npos > nparams ? tuple_from_array(vm, npos - nparams, pos + nparams) : tuple_new(vm, 0);
        base[total] = OBJ_VAL(rest);
    }
    Dict *kwd = NULL;
    if (varkw) {
        kwd = dict_new(vm);
        base[total + (varargs ? 1 : 0)] = OBJ_VAL(kwd);
    }
    if (kwdict) {
        int64_t it = 0;
        Value key, v;
        while (dict_next(kwdict, &it, &key, &v)) bind_keyword(vm, fn, base, total, kwd, key, v);
    } else {
        for (int64_t i = 0; i < nkw; i++) bind_keyword(vm, fn, base, total, kwd, kwnames->items[i], kwvals[i]);
    }
    if (npos > nparams && !varargs) too_many_positional(vm, fn, base, npos);
    if (npos < nparams) {
        int64_t ndef = fn->defaults ? fn->defaults->len : 0;
        if (ndef > nparams) ndef = nparams;
        int64_t firstdef = nparams - ndef;
        for (int64_t i = npos; i < firstdef; i++)
            if (IS_EMPTY(base[i])) missing_args(vm, fn, base, npos, firstdef, "positional");
        for (int64_t i = firstdef > npos ? firstdef : npos; i < nparams; i++)
            if (IS_EMPTY(base[i])) base[i] = fn->defaults->items[i - firstdef + (fn->defaults->len - ndef)];
    }
    if (nkwonly) {
        bool missing = false;
        for (int64_t i = nparams; i < total; i++) {
            if (!IS_EMPTY(base[i])) continue;
            Value d = fn->kwdefaults && p->varnames[i] ? dict_get_str(vm, fn->kwdefaults, p->varnames[i]) : EMPTY_VAL;
            if (IS_EMPTY(d)) missing = true;
            else base[i] = d;
        }
        if (missing) missing_args(vm, fn, base, nparams, total, "keyword-only");
    }
}

Dict *interp_kwargs_dict(VM *vm, Tuple *kwnames, const Value *kwvals, int64_t nkw) {
    Dict *d = dict_new(vm);
    for (int64_t i = 0; i < nkw; i++) dict_set(vm, d, kwnames->items[i], kwvals[i]);
    return d;
}

/* =============================================================== calls */

/* Runs a gpy function from C: its frame goes at stack_top. */
static Value call_function(VM *vm, Function *fn, int argc, Value *argv, Dict *kwargs) {
    Proto *p = fn->proto;
    Value *base = vm->stack_top;
    interp_check_room(vm, base, p->nregs);
    if (!kwargs && argc == p->nparams && p->nkwonly == 0 &&
        (p->flags & (PROTO_VARARGS | PROTO_VARKW | PROTO_GENERATOR)) == 0) {
        /* callers that pushed the arguments at stack_top (gpy_call) pass argv == base */
        if (argc > 0 && argv != base) memmove(base, argv, (size_t)argc * sizeof(Value));
        for (int32_t i = argc; i < p->nregs; i++) base[i] = EMPTY_VAL;
    } else {
        interp_bind(vm, fn, base, argc, argv, 0, NULL, NULL, kwargs);
        if (p->flags & PROTO_GENERATOR) return generator_new(vm, fn, base);
    }
    interp_enter(vm);
    interp_push_entry(vm, fn, base);
    return interp_run(vm, EMPTY_VAL);
}

static Value call_native_c(VM *vm, NativeFunction *nf, int argc, Value *argv, Dict *kwargs) {
    if (nf->obj.flags & NATIVE_FLAG_METHOD) native_check_self(vm, nf, argc, argv);
    NativeFunction *prev = vm->current_native;
    vm->current_native = nf;
    Value r = nf->fn(vm, argc, argv, kwargs);
    vm->current_native = prev;
    return r;
}

Value vm_call_kw(VM *vm, Value callee, int argc, Value *argv, Dict *kwargs) {
    if (kwargs && kwargs->count == 0) kwargs = NULL;
    if (IS_OBJ(callee)) {
        Obj *o = AS_OBJ(callee);
        Type *t = o->type;
        if (t == vm->t_function) return call_function(vm, (Function *)o, argc, argv, kwargs);
        if (t == vm->t_builtin_function) return call_native_c(vm, (NativeFunction *)o, argc, argv, kwargs);
        if (t == vm->t_method) {
            BoundMethod *bm = (BoundMethod *)o;
            return interp_call_with_self(vm, bm->func, bm->self, argc, argv, kwargs);
        }
        if (t->call) return t->call(vm, callee, argc, argv, kwargs);
    }
    vm_raise_kind(vm, TypeError, "'%s' object is not callable", vm_type_name(vm, callee));
}

Value vm_call(VM *vm, Value callee, int argc, Value *argv) {
    return vm_call_kw(vm, callee, argc, argv, NULL);
}

Value interp_call_with_self(VM *vm, Value func, Value self, int argc, const Value *argv, Dict *kwargs) {
    Value *s = vm->stack_top;
    if (s + argc + 1 > vm->stack_end) interp_recursion_error(vm);
    if (argc > 0) memmove(s + 1, argv, (size_t)argc * sizeof(Value));
    s[0] = self;
    vm->stack_top = s + argc + 1;
    Value r = vm_call_kw(vm, func, argc + 1, s, kwargs);
    vm->stack_top = s;
    return r;
}

Value vm_call_method(VM *vm, Value obj, Str *name, int argc, Value *argv) {
    Value m;
    if (interp_find_method(vm, obj, name, &m)) return interp_call_with_self(vm, m, obj, argc, argv, NULL);
    Value f = vm_getattr(vm, obj, name);
    vm_push_root(vm, f);
    Value r = vm_call(vm, f, argc, argv);
    vm_pop_roots(vm, 1);
    return r;
}

Value vm_exec_proto(VM *vm, Proto *p, Dict *globals) {
    Function *fn = function_new(vm, p, globals);
    vm_push_root(vm, OBJ_VAL(fn));
    Value r = vm_call(vm, OBJ_VAL(fn), 0, NULL);
    vm_pop_roots(vm, 1);
    return r;
}
