/*
** compile.c — the compile() builtin: source text to a code object (the
** module Proto the VM runs), which exec() and eval() accept in place of a
** string. Modes as CPython: 'exec' (a module), 'eval' (one expression; the
** code returns its value), 'single' (one interactive statement: expression
** values are printed like at the REPL).
*/
#include <string.h>

#include "ast.h"
#include "stdlib_priv.h"

/* CPython 3.11's accepted flag bits: the __future__ features
** (CO_FUTURE_*, also CO_NESTED) and the PyCF_* compiler switches. */
#define FUTURE_FLAGS (0x10 | 0x20000 | 0x40000 | 0x80000 | 0x100000 | 0x200000 | 0x400000 | 0x800000 | 0x1000000)
#define PYCF_FLAGS (0x100 | 0x200 | 0x400 | 0x800 | 0x1000 | 0x2000 | 0x4000)
#define PYCF_ONLY_AST 0x400

/* Positional-or-keyword argument i called name. */
static Value arg_at(VM *vm, int argc, Value *argv, Dict *kwargs, int i, const char *name) {
    Value kv = kw_take(vm, kwargs, name);
    if (i < argc) {
        if (!IS_EMPTY(kv))
            vm_raise_kind(vm, TypeError, "argument for compile() given by name ('%s') and position (%d)", name, i + 1);
        return argv[i];
    }
    return kv;
}

static int64_t int_arg(VM *vm, Value v, int64_t dflt) {
    if (IS_EMPTY(v)) return dflt;
    if (!IS_INT(v) && !IS_BOOL(v))
        vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", vm_type_name(vm, v));
    return IS_BOOL(v) ? (int64_t)v.as.b : v.as.i;
}

Value builtin_compile(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"source", "filename", "mode", "flags", "dont_inherit", "optimize"};
    if (argc > 6) vm_raise_kind(vm, TypeError, "compile() takes at most 6 arguments (%d given)", argc);
    Value a[6];
    for (int i = 0; i < 6; i++) a[i] = arg_at(vm, argc, argv, kwargs, i, names[i]);
    kw_take(vm, kwargs, "_feature_version");
    kw_done(vm, "compile", kwargs);
    for (int i = 0; i < 3; i++)
        if (IS_EMPTY(a[i]))
            vm_raise_kind(vm, TypeError, "compile() missing required argument '%s' (pos %d)", names[i], i + 1);
    Value src = a[0], filename = a[1], mode = a[2];
    if (!IS_STR(vm, filename))
        vm_raise_kind(vm, TypeError, "expected str, bytes or os.PathLike object, not %s", vm_type_name(vm, filename));
    if (!IS_STR(vm, mode)) vm_raise_kind(vm, TypeError, "compile() argument 'mode' must be str, not %s", vm_type_name(vm, mode));
    const char *m = AS_STR(mode)->chars;
    ParseMode pm;
    if (strcmp(m, "exec") == 0) pm = PARSE_FILE;
    else if (strcmp(m, "eval") == 0) pm = PARSE_EVAL;
    else if (strcmp(m, "single") == 0) pm = PARSE_INTERACTIVE;
    else vm_raise_kind(vm, ValueError, "compile() mode must be 'exec', 'eval' or 'single'");
    int64_t flags = int_arg(vm, a[3], 0);
    int_arg(vm, a[4], 0); /* dont_inherit: gpy code inherits no future flags anyway */
    int64_t optimize = int_arg(vm, a[5], -1);
    if (flags & ~(int64_t)(FUTURE_FLAGS | PYCF_FLAGS)) vm_raise_kind(vm, ValueError, "compile(): unrecognised flags");
    if (optimize < -1 || optimize > 2) vm_raise_kind(vm, ValueError, "compile(): invalid optimize value");
    if (flags & PYCF_ONLY_AST)
        vm_raise_kind(vm, NotImplementedError, "compile() cannot return an AST: gpy has no ast module");
    if (!IS_STR(vm, src)) vm_raise_kind(vm, TypeError, "compile() arg 1 must be a string, bytes or AST object");
    Str *text = AS_STR(src);
    if (memchr(text->chars, 0, (size_t)text->len))
        vm_raise_kind(vm, SyntaxError, "source code string cannot contain null bytes");
    int base = vm->nroots;
    Source *s = source_new(vm, AS_STR(filename), text->chars, (size_t)text->len);
    vm_push_root(vm, OBJ_VAL(s));
    if (flags & 0x1000000) s->obj.flags |= SOURCE_FUTURE_ANNOTATIONS; /* CO_FUTURE_ANNOTATIONS */
    Proto *p = vm_compile_source(vm, s, pm);
    vm_push_root(vm, OBJ_VAL(p));
    if (pm == PARSE_INTERACTIVE && p->ast && p->ast->kind == AST_MODULE) {
        /* 'single' compiles one statement: a second line is an error */
        AstList *body = &p->ast->u.module.body;
        for (int i = 1; i < body->len; i++)
            if (body->items[i]->line != body->items[0]->end_line) {
                SyntaxErr err;
                memset(&err, 0, sizeof err);
                AstNode *first = body->items[0];
                err.line = first->line;
                err.col = first->end_col;
                snprintf(err.msg, sizeof err.msg, "multiple statements found while compiling a single statement");
                vm_throw(vm, exc_syntax_error(vm, s, &err));
            }
    }
    vm_pop_roots(vm, vm->nroots - base);
    return OBJ_VAL(p);
}
