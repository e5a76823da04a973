/*
** error.c — exceptions: the builtin hierarchy, exception objects, raising
** (longjmp to the nearest protected call), protected calls, tracebacks
** printed exactly as CPython 3.11 prints them, and the argument checks
** natives use to raise TypeError with Python's wording.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "signals.h"
#include "vm.h"

#define TB_RECURSIVE_CUTOFF 3 /* CPython: identical traceback lines shown before "[Previous line repeated" */
#define TB_LIMIT 1000         /* CPython's default sys.tracebacklimit */
#define CHAIN_MAX 64          /* chained exceptions printed at most */

static Str *intern(VM *vm, const char *s) { return str_intern(vm, s, strlen(s)); }

static _Noreturn void fatal(const char *what) {
    fflush(stdout);
    fprintf(stderr, "gpy: fatal error: %s\n", what);
    abort();
}

/* ------------------------------------------------------------ predicates */

static bool is_type_obj(VM *vm, Value v) {
    if (!IS_OBJ(v)) return false;
    Type *mt = AS_OBJ(v)->type;
    return mt == vm->t_type || (mt && type_is_subtype(mt, vm->t_type));
}

static bool is_exc_class(VM *vm, Value v) {
    return is_type_obj(vm, v) && type_is_subtype((Type *)AS_OBJ(v), vm->exc[EXC_BaseException]);
}

static bool is_exc_instance(VM *vm, Value v) {
    return IS_OBJ(v) && AS_OBJ(v)->type && vm->exc[EXC_BaseException] &&
           type_is_subtype(AS_OBJ(v)->type, vm->exc[EXC_BaseException]);
}

static bool exc_is(VM *vm, ExcObj *e, ExcKind k) { return type_is_subtype(e->obj.type, vm->exc[k]); }

static Dict *exc_dict(VM *vm, ExcObj *e) {
    if (!e->dict) e->dict = dict_new(vm);
    return e->dict;
}

/* An attribute stored in the exception's dict; EMPTY if not set. */
static Value exc_attr(VM *vm, ExcObj *e, const char *name) {
    if (!e->dict) return EMPTY_VAL;
    return dict_get_cstr(vm, e->dict, name);
}

static const char *type_cname(Type *t) {
    if (t->name) return t->name->chars;
    return t->cname ? t->cname : "?";
}

/* The name CPython prints for an exception's class in a traceback:
** "module.QualName" except for builtins and __main__. */
static void sb_exc_type_name(VM *vm, StrBuf *sb, Type *t) {
    if (t->dict && !(t->flags & TYPE_HEAP)) { /* a built-in type of a module that names its own (zlib.error) */
        Value mod = dict_get_str(vm, t->dict, vm->sym_module);
        if (IS_STR(vm, mod) && strcmp(AS_STR(mod)->chars, "builtins") != 0) {
            sb_append_str(sb, AS_STR(mod));
            sb_putc(sb, '.');
        }
    }
    if ((t->flags & TYPE_HEAP) && t->dict) {
        Value mod = dict_get_str(vm, t->dict, vm->sym_module);
        Value qn = dict_get_str(vm, t->dict, vm->sym_qualname);
        if (IS_STR(vm, mod) && strcmp(AS_STR(mod)->chars, "__main__") != 0 &&
            strcmp(AS_STR(mod)->chars, "builtins") != 0) {
            sb_append_str(sb, AS_STR(mod));
            sb_putc(sb, '.');
        }
        if (IS_STR(vm, qn)) {
            sb_append_str(sb, AS_STR(qn));
            return;
        }
    }
    sb_appends(sb, type_cname(t));
}

/* ------------------------------------------------------ creating instances */

/* Fills args and the per-kind attributes (OSError errno/strerror/filename,
** SyntaxError details) from constructor arguments. */
static void exc_set_args(VM *vm, ExcObj *e, int argc, Value *argv) {
    e->args = tuple_from_array(vm, argc, argv);
    if (exc_is(vm, e, EXC_OSError) && argc >= 2 && argc <= 5) {
        Dict *d = exc_dict(vm, e);
        dict_set_cstr(vm, d, "errno", argv[0]);
        dict_set_cstr(vm, d, "strerror", argv[1]);
        dict_set_cstr(vm, d, "filename", argc >= 3 ? argv[2] : NONE_VAL);
        if (argc >= 3) e->args = tuple_from_array(vm, 2, argv);
    } else if (exc_is(vm, e, EXC_SyntaxError) && argc >= 1) {
        Dict *d = exc_dict(vm, e);
        dict_set_cstr(vm, d, "msg", argv[0]);
        if (argc == 2 && IS_TUPLE(vm, argv[1])) {
            Tuple *t = AS_TUPLE(argv[1]);
            static const char *const names[] = {"filename", "lineno", "offset", "text", "end_lineno",
                                                "end_offset"};
            if (t->len < 4 || t->len > 6) vm_raise_kind(vm, IndexError, "tuple index out of range");
            for (int64_t i = 0; i < t->len; i++) dict_set_cstr(vm, d, names[i], t->items[i]);
        }
    }
}

/* OSError(errno, ...) picks the subclass matching errno, as CPython does. */
static Type *oserror_subclass(VM *vm, Type *cls, int argc, Value *argv) {
    if (cls != vm->exc[EXC_OSError] || argc < 2 || !IS_INT(argv[0])) return cls;
    switch (AS_INT(argv[0])) {
    case ENOENT: return vm->exc[EXC_FileNotFoundError];
    case EEXIST: return vm->exc[EXC_FileExistsError];
    case EACCES:
    case EPERM: return vm->exc[EXC_PermissionError];
    case EISDIR: return vm->exc[EXC_IsADirectoryError];
    default: return cls;
    }
}

static ExcObj *exc_alloc(VM *vm, Type *type, int argc, Value *argv) {
    type = oserror_subclass(vm, type, argc, argv);
    ExcObj *e = gc_alloc_obj(vm, type, sizeof(ExcObj));
    e->cause = NONE_VAL;
    e->context = NONE_VAL;
    Value self = OBJ_VAL(e);
    vm_push_root(vm, self);
    exc_set_args(vm, e, argc, argv);
    vm_pop_roots(vm, 1);
    return e;
}

Value exc_new(VM *vm, Type *type, int argc, Value *argv) {
    return OBJ_VAL(exc_alloc(vm, type, argc, argv));
}

Value exc_new_msg(VM *vm, Type *type, const char *msg) {
    Value m = STR_VAL(str_cstr(vm, msg));
    return exc_new(vm, type, 1, &m);
}

/* ---------------------------------------------------------------- raising */

_Noreturn void vm_rethrow(VM *vm, Value exc) {
    vm->exc_value = exc;
    if (!vm->err) {
        fflush(stdout);
        fprintf(stderr, "gpy: fatal error: exception raised outside any protected call\n");
        if (is_exc_instance(vm, exc)) {
            Type *t = AS_OBJ(exc)->type;
            ExcObj *e = (ExcObj *)AS_OBJ(exc);
            fprintf(stderr, "%s", type_cname(t));
            if (e->args && e->args->len == 1 && IS_STR(vm, e->args->items[0]))
                fprintf(stderr, ": %s", AS_STR(e->args->items[0])->chars);
            fputc('\n', stderr);
        }
        abort();
    }
    VM_LONGJMP(vm->err->buf);
}

/* The exception being handled by the innermost frame in an except block:
** it becomes __context__ of a newly raised exception. */
static void set_context(VM *vm, ExcObj *e) {
    Value h = EMPTY_VAL;
    for (int32_t i = vm->nframes - 1; i >= 0; i--) {
        Value fh = vm->frames[i].handling;
        if (IS_OBJ(fh)) {
            h = fh;
            break;
        }
    }
    if (!IS_OBJ(h) || AS_OBJ(h) == &e->obj || !is_exc_instance(vm, h)) return;
    /* break a cycle: if e is already in h's context chain, cut it there */
    ExcObj *o = (ExcObj *)AS_OBJ(h);
    for (int guard = 0; guard < 10000; guard++) {
        if (!is_exc_instance(vm, o->context)) break;
        if (AS_OBJ(o->context) == &e->obj) {
            o->context = NONE_VAL;
            break;
        }
        o = (ExcObj *)AS_OBJ(o->context);
    }
    e->context = h;
}

_Noreturn void vm_throw(VM *vm, Value exc) {
    if (is_exc_class(vm, exc)) {
        Type *cls = (Type *)AS_OBJ(exc);
        exc = (cls->flags & TYPE_HEAP) ? vm_call(vm, exc, 0, NULL) : exc_new(vm, cls, 0, NULL);
        if (!is_exc_instance(vm, exc))
            vm_raise_kind(vm, TypeError, "calling %s should have returned an instance of BaseException, not %s",
                          type_cname(cls), vm_type_name(vm, exc));
    } else if (!is_exc_instance(vm, exc)) {
        if (!vm->exc[EXC_TypeError]) fatal("raise during bootstrap");
        vm_raise_kind(vm, TypeError, "exceptions must derive from BaseException");
    }
    ExcObj *e = (ExcObj *)AS_OBJ(exc);
    if (exc.as.obj == vm->memory_error.as.obj) {
        /* the shared instance: start a fresh traceback, allocate nothing */
        e->tb_len = 0;
        e->context = NONE_VAL;
        e->cause = NONE_VAL;
        e->suppress_context = false;
    } else {
        set_context(vm, e);
    }
    vm_rethrow(vm, exc);
}

_Noreturn void vm_raise(VM *vm, Type *exc_type, const char *fmt, ...) {
    if (!exc_type) {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        fatal(buf);
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    Str *msg;
    if ((size_t)n < sizeof buf) {
        msg = str_new(vm, buf, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big) vm_throw(vm, vm->memory_error);
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        msg = str_new(vm, big, (size_t)n);
        free(big);
    }
    Value m = STR_VAL(msg);
    vm_throw(vm, exc_new(vm, exc_type, 1, &m));
}

bool vm_pcall(VM *vm, void (*fn)(VM *vm, void *ud), void *ud) {
    ErrorJmp ej;
    ej.prev = vm->err;
    ej.nframes = vm->nframes;
    ej.stack_top = vm->stack_top;
    ej.nroots = vm->nroots;
    ej.c_depth = vm->c_depth;
    if (!ej.prev) vm_budget_reset(vm); /* an outermost run: a fresh budget */
    vm->err = &ej;
    if (VM_SETJMP(ej.buf) == 0) {
        fn(vm, ud);
        vm->err = ej.prev;
        return true;
    }
    vm->err = ej.prev;
    vm->nframes = ej.nframes;
    vm->stack_top = ej.stack_top;
    vm->nroots = ej.nroots;
    vm->c_depth = ej.c_depth;
    return false;
}

/* Validates one except-clause entry (CPython checks every tuple member). */
static void check_exc_class(VM *vm, Value cls, int depth) {
    if (IS_TUPLE(vm, cls) && depth < 100) {
        Tuple *t = AS_TUPLE(cls);
        for (int64_t i = 0; i < t->len; i++) check_exc_class(vm, t->items[i], depth + 1);
        return;
    }
    if (!is_exc_class(vm, cls))
        vm_raise_kind(vm, TypeError, "catching classes that do not inherit from BaseException is not allowed");
}

static bool matches(VM *vm, Type *t, Value cls, int depth) {
    if (IS_TUPLE(vm, cls) && depth < 100) {
        Tuple *tu = AS_TUPLE(cls);
        for (int64_t i = 0; i < tu->len; i++)
            if (matches(vm, t, tu->items[i], depth + 1)) return true;
        return false;
    }
    return type_is_subtype(t, (Type *)AS_OBJ(cls));
}

bool vm_exc_matches(VM *vm, Value exc, Value cls_or_tuple) {
    check_exc_class(vm, cls_or_tuple, 0);
    Type *t;
    if (is_type_obj(vm, exc)) t = (Type *)AS_OBJ(exc);
    else if (IS_OBJ(exc)) t = AS_OBJ(exc)->type;
    else return false;
    return matches(vm, t, cls_or_tuple, 0);
}

/* Appends a traceback line. Uses plain realloc and silently drops the line
** when memory is short: this runs while an exception (maybe MemoryError)
** is already propagating. */
void exc_add_trace(VM *vm, Value exc, Proto *proto, int32_t pc) {
    if (!is_exc_instance(vm, exc) || !proto) return;
    if (proto->source && (proto->source->obj.flags & SOURCE_HIDDEN_FRAMES)) return;
    ExcObj *e = (ExcObj *)AS_OBJ(exc);
    if (e->tb_len == e->tb_cap) {
        int32_t cap = e->tb_cap ? e->tb_cap * 2 : 8;
        TraceEntry *tb = realloc(e->tb, (size_t)cap * sizeof(TraceEntry));
        if (!tb) return;
        e->tb = tb;
        e->tb_cap = cap;
    }
    int32_t line = proto->firstline, col = 0;
    if (pc >= 0 && pc < proto->ncode) {
        if (proto->lines) line = proto->lines[pc];
        if (proto->cols) col = proto->cols[pc];
    }
    e->tb[e->tb_len++] = (TraceEntry){.proto = proto, .line = line, .col = col};
}

/* ------------------------------------------------------------ type slots */

static Value exc_str_impl(VM *vm, Value self) {
    ExcObj *e = (ExcObj *)AS_OBJ(self);
    Tuple *args = e->args;
    int64_t n = args ? args->len : 0;
    if (exc_is(vm, e, EXC_OSError)) {
        Value en = exc_attr(vm, e, "errno"), se = exc_attr(vm, e, "strerror");
        Value fn = exc_attr(vm, e, "filename");
        if (!IS_EMPTY(en) && !IS_NONE(en) && !IS_EMPTY(se) && !IS_NONE(se)) {
            StrBuf sb;
            sb_init(&sb);
            sb_appends(&sb, "[Errno ");
            sb_append_str(&sb, vm_str(vm, en));
            sb_appends(&sb, "] ");
            sb_append_str(&sb, vm_str(vm, se));
            if (!IS_EMPTY(fn) && !IS_NONE(fn)) {
                sb_appends(&sb, ": ");
                sb_append_str(&sb, vm_repr(vm, fn));
            }
            return STR_VAL(sb_finish(vm, &sb));
        }
    }
    if (exc_is(vm, e, EXC_SyntaxError)) {
        Value msg = exc_attr(vm, e, "msg");
        if (IS_EMPTY(msg)) msg = n >= 1 ? args->items[0] : NONE_VAL;
        Value fn = exc_attr(vm, e, "filename"), ln = exc_attr(vm, e, "lineno");
        bool have_fn = IS_STR(vm, fn), have_ln = IS_INT(ln);
        StrBuf sb;
        sb_init(&sb);
        sb_append_str(&sb, vm_str(vm, msg));
        if (have_fn || have_ln) {
            sb_appends(&sb, " (");
            if (have_fn) {
                const char *f = AS_STR(fn)->chars, *slash = strrchr(f, '/');
                sb_appends(&sb, slash ? slash + 1 : f);
                if (have_ln) sb_appends(&sb, ", ");
            }
            if (have_ln) sb_printf(&sb, "line %lld", (long long)AS_INT(ln));
            sb_putc(&sb, ')');
        }
        return STR_VAL(sb_finish(vm, &sb));
    }
    if (n == 0) return STR_VAL(vm->empty_str);
    if (n == 1) {
        if (exc_is(vm, e, EXC_KeyError)) return STR_VAL(vm_repr(vm, args->items[0]));
        return STR_VAL(vm_str(vm, args->items[0]));
    }
    return STR_VAL(vm_str(vm, OBJ_VAL(args)));
}

static Value exc_repr_impl(VM *vm, Value self) {
    ExcObj *e = (ExcObj *)AS_OBJ(self);
    StrBuf sb;
    sb_init(&sb);
    Str *args_repr;
    if (e->args && e->args->len == 1) {
        args_repr = vm_repr(vm, e->args->items[0]);
        sb_appends(&sb, type_cname(e->obj.type));
        sb_putc(&sb, '(');
        sb_append_str(&sb, args_repr);
        sb_putc(&sb, ')');
    } else if (e->args && e->args->len > 1) {
        args_repr = vm_repr(vm, OBJ_VAL(e->args));
        sb_appends(&sb, type_cname(e->obj.type));
        sb_append_str(&sb, args_repr);
    } else {
        sb_appends(&sb, type_cname(e->obj.type));
        sb_appends(&sb, "()");
    }
    return STR_VAL(sb_finish(vm, &sb));
}

static Value exc_new_slot(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs) {
    /* class.c passes kwargs only when no user __init__ will take them */
    if (kwargs && kwargs->count > 0)
        vm_raise_kind(vm, TypeError, "%s() takes no keyword arguments", type_cname(cls));
    return exc_new(vm, cls, argc, argv);
}

static Value exc_getattr(VM *vm, Value self, Str *name) {
    ExcObj *e = (ExcObj *)AS_OBJ(self);
    const char *n = name->chars;
    if (n[0] == '_' && n[1] == '_') {
        if (!strcmp(n, "__cause__")) return e->cause;
        if (!strcmp(n, "__context__")) return e->context;
        if (!strcmp(n, "__traceback__")) return NONE_VAL;
        if (!strcmp(n, "__suppress_context__")) return BOOL_VAL(e->suppress_context);
    } else if (!strcmp(n, "args")) {
        return e->args ? OBJ_VAL(e->args) : OBJ_VAL(tuple_new(vm, 0));
    }
    Value v = generic_getattr(vm, self, name);
    if (!IS_EMPTY(v)) return v;
    /* per-kind attributes not set explicitly: derived from args */
    int64_t nargs = e->args ? e->args->len : 0;
    if (exc_is(vm, e, EXC_SystemExit) && !strcmp(n, "code"))
        return nargs == 0 ? NONE_VAL : nargs == 1 ? e->args->items[0] : OBJ_VAL(e->args);
    if (exc_is(vm, e, EXC_StopIteration) && !strcmp(n, "value"))
        return nargs >= 1 ? e->args->items[0] : NONE_VAL;
    if (exc_is(vm, e, EXC_OSError) &&
        (!strcmp(n, "errno") || !strcmp(n, "strerror") || !strcmp(n, "filename") || !strcmp(n, "filename2")))
        return NONE_VAL;
    if (exc_is(vm, e, EXC_SyntaxError)) {
        static const char *const names[] = {"msg",  "filename",   "lineno",     "offset",
                                            "text", "end_lineno", "end_offset", "print_file_and_line"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (!strcmp(n, names[i])) return NONE_VAL;
    }
    if ((exc_is(vm, e, EXC_NameError) || exc_is(vm, e, EXC_ImportError) || exc_is(vm, e, EXC_AttributeError)) &&
        (!strcmp(n, "name") || !strcmp(n, "obj") || !strcmp(n, "path")))
        return NONE_VAL;
    return EMPTY_VAL;
}

static void exc_setattr(VM *vm, Value self, Str *name, Value value) {
    ExcObj *e = (ExcObj *)AS_OBJ(self);
    const char *n = name->chars;
    if (!strcmp(n, "__cause__") || !strcmp(n, "__context__")) {
        bool cause = n[2] == 'c' && n[3] == 'a';
        if (IS_EMPTY(value)) vm_raise_kind(vm, TypeError, "%s may not be deleted", n);
        if (!IS_NONE(value) && !is_exc_instance(vm, value))
            vm_raise_kind(vm, TypeError, "exception %s must be None or derive from BaseException",
                          cause ? "cause" : "context");
        if (cause) {
            e->cause = value;
            e->suppress_context = true;
        } else {
            e->context = value;
        }
        return;
    }
    if (!strcmp(n, "__suppress_context__")) {
        if (IS_EMPTY(value)) vm_raise_kind(vm, TypeError, "__suppress_context__ may not be deleted");
        e->suppress_context = vm_truthy(vm, value);
        return;
    }
    if (!strcmp(n, "__traceback__")) {
        if (!IS_NONE(value) && !IS_EMPTY(value))
            vm_raise_kind(vm, TypeError, "__traceback__ must be a traceback or None");
        e->tb_len = 0;
        return;
    }
    if (!strcmp(n, "args")) {
        if (IS_EMPTY(value)) vm_raise_kind(vm, TypeError, "args may not be deleted");
        e->args = tuple_from_iterable(vm, value);
        return;
    }
    exc_dict(vm, e);
    generic_setattr(vm, self, name, value);
}

static void exc_mark(VM *vm, Obj *o) {
    ExcObj *e = (ExcObj *)o;
    gc_mark_obj(vm, (Obj *)e->dict);
    gc_mark_obj(vm, (Obj *)e->args);
    gc_mark_value(vm, e->cause);
    gc_mark_value(vm, e->context);
    for (int32_t i = 0; i < e->tb_len; i++) gc_mark_obj(vm, (Obj *)e->tb[i].proto);
}

static void exc_finalize(VM *vm, Obj *o) {
    (void)vm;
    ExcObj *e = (ExcObj *)o;
    free(e->tb);
    e->tb = NULL;
    e->tb_len = e->tb_cap = 0;
}

/* ---------------------------------------------------------------- methods */

static void check_self(VM *vm, const char *fname, int argc, Value *argv) {
    if (argc < 1 || !is_exc_instance(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "descriptor '%s' requires a 'BaseException' object", fname);
}

static Value m_init(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_self(vm, "__init__", argc, argv);
    if (kwargs && kwargs->count > 0)
        vm_raise_kind(vm, TypeError, "%s() takes no keyword arguments", type_cname(AS_OBJ(argv[0])->type));
    exc_set_args(vm, (ExcObj *)AS_OBJ(argv[0]), argc - 1, argv + 1);
    return NONE_VAL;
}

static Value m_str(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_self(vm, "__str__", argc, argv);
    arg_no_kwargs(vm, "__str__", kwargs);
    return exc_str_impl(vm, argv[0]);
}

static Value m_repr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_self(vm, "__repr__", argc, argv);
    arg_no_kwargs(vm, "__repr__", kwargs);
    return exc_repr_impl(vm, argv[0]);
}

static Value m_with_traceback(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_self(vm, "with_traceback", argc, argv);
    arg_no_kwargs(vm, "with_traceback", kwargs);
    arg_count(vm, "with_traceback", argc - 1, 1, 1);
    return argv[0];
}

static Value m_add_note(VM *vm, int argc, Value *argv, Dict *kwargs) {
    check_self(vm, "add_note", argc, argv);
    arg_no_kwargs(vm, "add_note", kwargs);
    arg_count(vm, "add_note", argc - 1, 1, 1);
    if (!IS_STR(vm, argv[1]))
        vm_raise_kind(vm, TypeError, "note must be a str, not '%s'", vm_type_name(vm, argv[1]));
    ExcObj *e = (ExcObj *)AS_OBJ(argv[0]);
    Dict *d = exc_dict(vm, e);
    Value notes = dict_get_cstr(vm, d, "__notes__");
    if (!IS_LIST(vm, notes)) {
        notes = OBJ_VAL(list_new(vm, 0));
        dict_set_cstr(vm, d, "__notes__", notes);
    }
    list_append(vm, AS_LIST(notes), argv[1]);
    return NONE_VAL;
}

static void set_slots(Type *t) {
    t->new_ = exc_new_slot;
    t->repr = exc_repr_impl;
    t->str = exc_str_impl;
    t->getattr = exc_getattr;
    t->setattr = exc_setattr;
    t->mark = exc_mark;
    t->finalize = exc_finalize;
}

/* Builds the exception hierarchy and puts every class into builtins. */
void error_init(VM *vm) {
    if (!vm->builtins) vm->builtins = dict_new(vm);
    static const char *const names[EXC__COUNT] = {
#define EXC_NAME(name, base) #name,
        EXC_LIST(EXC_NAME)
#undef EXC_NAME
    };
    static const int bases[EXC__COUNT] = {
#define EXC_BASE(name, base) EXC_##base,
        EXC_LIST(EXC_BASE)
#undef EXC_BASE
    };
    for (int i = 0; i < EXC__COUNT; i++) {
        Type *base = i == EXC_BaseException ? vm->t_object : vm->exc[bases[i]];
        Type *t = type_new_builtin(vm, names[i], base, TYPE_EXCEPTION | TYPE_BASETYPE);
        set_slots(t);
        vm->exc[i] = t;
        dict_set_str(vm, vm->builtins, t->name ? t->name : intern(vm, names[i]), OBJ_VAL(t));
    }
    Type *be = vm->exc[EXC_BaseException];
    type_add_method(vm, be, "__init__", m_init);
    type_add_method(vm, be, "__str__", m_str);
    type_add_method(vm, be, "__repr__", m_repr);
    type_add_method(vm, be, "with_traceback", m_with_traceback);
    type_add_method(vm, be, "add_note", m_add_note);
    dict_set_cstr(vm, vm->builtins, "EnvironmentError", OBJ_VAL(vm->exc[EXC_OSError]));
    dict_set_cstr(vm, vm->builtins, "IOError", OBJ_VAL(vm->exc[EXC_OSError]));
    vm->memory_error = exc_new(vm, vm->exc[EXC_MemoryError], 0, NULL);
}

/* ---------------------------------------------------- syntax error objects */

/* Line `line` (1-based) of text, with its newline; NULL when out of range. */
static const char *find_line(const char *text, size_t len, int line, size_t *out_len) {
    if (!text || line < 1) return NULL;
    const char *p = text, *end = text + len;
    for (int i = 1; i < line; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return NULL;
        p = nl + 1;
    }
    if (p > end) return NULL;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *out_len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
    if (*out_len == 0 && p == end) return NULL;
    return p;
}

Value exc_syntax_error(VM *vm, Source *src, const SyntaxErr *err) {
    if (err->memory) return vm->memory_error;
    if (err->recursion) {
        Value msg = STR_VAL(str_cstr(vm, "maximum recursion depth exceeded during compilation"));
        vm_push_root(vm, msg);
        Value e = exc_new(vm, vm->exc[EXC_RecursionError], 1, &msg);
        vm_pop_roots(vm, 1);
        return e;
    }
    /* CPython raises TabError exactly for its E_TABSPACE tokenizer error,
    ** which is the one carrying this message */
    ExcKind kind = EXC_SyntaxError;
    if (err->indentation)
        kind = strcmp(err->msg, "inconsistent use of tabs and spaces in indentation") == 0 ? EXC_TabError
                                                                                           : EXC_IndentationError;
    Type *t = vm->exc[kind];
    size_t ll = 0;
    const char *lp = src ? find_line(src->text, src->len, err->line, &ll) : NULL;
    Value items[6];
    items[0] = src && src->filename ? STR_VAL(src->filename) : NONE_VAL;
    items[1] = INT_VAL(err->line);
    items[2] = INT_VAL(err->col);
    items[3] = lp ? STR_VAL(str_new(vm, lp, ll)) : NONE_VAL;
    vm_push_root(vm, items[3]);
    items[4] = INT_VAL(err->line);
    items[5] = INT_VAL(err->end_col > err->col ? err->end_col : err->col);
    Value args[2];
    args[0] = STR_VAL(str_cstr(vm, err->msg));
    vm_push_root(vm, args[0]);
    args[1] = OBJ_VAL(tuple_from_array(vm, 6, items));
    vm_push_root(vm, args[1]);
    Value e = exc_new(vm, t, 2, args);
    vm_pop_roots(vm, 3);
    return e;
}

/* -------------------------------------------------------------- printing */

static void put_str(Str *s, FILE *out) { fwrite(s->chars, 1, (size_t)s->len, out); }

/* Prints the source line of a traceback entry stripped of surrounding
** whitespace, as CPython does (nothing for <string>/<stdin> sources, but
** for the entries of the terminal prompt). */
static void print_source_line(Source *src, int line, FILE *out) {
    if (!src || !src->text) return;
    if (src->filename && src->filename->chars[0] == '<' && !(src->obj.flags & SOURCE_PROMPT_ENTRY)) return;
    size_t ll;
    const char *p = find_line(src->text, src->len, line, &ll);
    if (!p) return;
    const char *e = p + ll;
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\f')) p++;
    while (e > p && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\f')) e--;
    if (e == p) return;
    fputs("    ", out);
    fwrite(p, 1, (size_t)(e - p), out);
    fputc('\n', out);
}

static void print_repeated(int64_t cnt, FILE *out) {
    cnt -= TB_RECURSIVE_CUTOFF;
    fprintf(out, "  [Previous line repeated %lld more time%s]\n", (long long)cnt, cnt > 1 ? "s" : "");
}

static bool same_name(Str *a, Str *b) { return a == b || (a && b && str_equal(a, b)); }

/* CPython 3.13's traceback colours: names and numbers magenta, the
** exception's type bold magenta */
#define TB_MAGENTA "\033[35m"
#define TB_BOLD_MAGENTA "\033[1;35m"
#define TB_RESET "\033[0m"

static void put_coloured(const char *colour, Str *s, const char *fallback, bool on, FILE *out) {
    if (on) fputs(colour, out);
    if (s) put_str(s, out);
    else fputs(fallback, out);
    if (on) fputs(TB_RESET, out);
}

static void print_traceback(ExcObj *e, FILE *out, bool colour) {
    if (e->tb_len <= 0) return;
    fputs("Traceback (most recent call last):\n", out);
    int32_t first = e->tb_len - 1; /* outermost */
    if (e->tb_len > TB_LIMIT) first = TB_LIMIT - 1;
    Source *last_src = NULL;
    int32_t last_line = -1;
    Str *last_name = NULL;
    int64_t cnt = 0;
    for (int32_t i = first; i >= 0; i--) {
        TraceEntry *te = &e->tb[i];
        Proto *p = te->proto;
        Source *src = p->source;
        if (cnt == 0 || src != last_src || te->line != last_line || !same_name(p->name, last_name)) {
            if (cnt > TB_RECURSIVE_CUTOFF) print_repeated(cnt, out);
            last_src = src;
            last_line = te->line;
            last_name = p->name;
            cnt = 0;
        }
        cnt++;
        if (cnt > TB_RECURSIVE_CUTOFF) continue;
        fputs("  File \"", out);
        put_coloured(TB_MAGENTA, src ? src->filename : NULL, "<unknown>", colour, out);
        fputs("\", line ", out);
        if (colour) fputs(TB_MAGENTA, out);
        fprintf(out, "%d", (int)te->line);
        if (colour) fputs(TB_RESET, out);
        fputs(", in ", out);
        put_coloured(TB_MAGENTA, p->name, "<module>", colour, out);
        fputc('\n', out);
        print_source_line(src, te->line, out);
    }
    if (cnt > TB_RECURSIVE_CUTOFF) print_repeated(cnt, out);
}

/* The "  File ..., line N / text / caret" block of a SyntaxError
** (CPython's print_error_text). */
static void print_syntax_error_block(VM *vm, ExcObj *e, FILE *out) {
    Value fn = exc_attr(vm, e, "filename"), ln = exc_attr(vm, e, "lineno");
    Value off = exc_attr(vm, e, "offset"), eoff = exc_attr(vm, e, "end_offset");
    Value text = exc_attr(vm, e, "text");
    if (!IS_INT(ln)) return;
    fputs("  File \"", out);
    if (IS_STR(vm, fn)) put_str(AS_STR(fn), out);
    else fputs("<string>", out);
    fprintf(out, "\", line %lld\n", (long long)AS_INT(ln));
    if (!IS_STR(vm, text)) return;
    const char *t = AS_STR(text)->chars;
    int64_t offset = IS_INT(off) ? AS_INT(off) : -1;
    int64_t end_offset = IS_INT(eoff) ? AS_INT(eoff) : 0;
    int64_t reps = (end_offset > offset + 1 && offset > 0) ? end_offset - offset : 1;
    offset--; /* 0-based */
    while (*t == ' ' || *t == '\t' || *t == '\f') {
        t++;
        offset--;
    }
    int64_t len = (int64_t)strlen(t);
    if (len > 0 && t[len - 1] == '\n') len--;
    if (len > 0 && t[len - 1] == '\r') len--;
    if (offset > len) offset = len;
    fputs("    ", out);
    fwrite(t, 1, (size_t)len, out);
    fputc('\n', out);
    if (offset < 0 || !IS_INT(off)) return;
    if (offset + reps > len + 1) reps = len + 1 - offset > 0 ? len + 1 - offset : 1;
    fputs("    ", out);
    for (int64_t i = 0; i < offset; i++) fputc(' ', out);
    for (int64_t i = 0; i < reps; i++) fputc('^', out);
    fputc('\n', out);
}

typedef struct StrCall {
    Value exc;
    Str *result;
} StrCall;

static void do_str(VM *vm, void *ud) {
    StrCall *c = ud;
    c->result = vm_str(vm, c->exc);
}

static void print_one(VM *vm, Value exc, FILE *out) {
    ExcObj *e = (ExcObj *)AS_OBJ(exc);
    bool colour = (vm->prompt_tracebacks & VM_TB_COLOUR) && out == stderr;
    print_traceback(e, out, colour);
    bool syntax = exc_is(vm, e, EXC_SyntaxError);
    if (syntax) print_syntax_error_block(vm, e, out);
    StrBuf sb;
    sb_init(&sb);
    sb_exc_type_name(vm, &sb, e->obj.type);
    if (colour) fputs(TB_BOLD_MAGENTA, out);
    /* out of memory the buffer is gone (data NULL): the bare name will do */
    if (sb.data) fwrite(sb.data, 1, sb.len, out);
    else if (e->obj.type->name) put_str(e->obj.type->name, out);
    if (colour) fputs(TB_RESET, out);
    sb_free(&sb);
    Value msgattr = syntax ? exc_attr(vm, e, "msg") : EMPTY_VAL;
    if (IS_STR(vm, msgattr)) {
        if (AS_STR(msgattr)->len > 0) {
            fputs(": ", out);
            put_str(AS_STR(msgattr), out);
        }
    } else {
        StrCall c = {.exc = exc, .result = NULL};
        vm_push_root(vm, exc);
        if (vm_pcall(vm, do_str, &c)) {
            if (c.result && c.result->len > 0) {
                fputs(": ", out);
                put_coloured(TB_MAGENTA, c.result, "", colour, out);
            }
        } else {
            fputs(": <exception str() failed>", out);
        }
        vm_pop_roots(vm, 1);
    }
    fputc('\n', out);
    Value notes = exc_attr(vm, e, "__notes__");
    if (IS_LIST(vm, notes)) {
        List *l = AS_LIST(notes);
        for (int64_t i = 0; i < l->len; i++)
            if (IS_STR(vm, l->items[i])) {
                put_str(AS_STR(l->items[i]), out);
                fputc('\n', out);
            }
    }
}

static bool seen_has(Obj **seen, int n, Obj *o) {
    for (int i = 0; i < n; i++)
        if (seen[i] == o) return true;
    return false;
}

/* Causes and contexts first, then the exception itself (CPython order). */
static void print_chain(VM *vm, Value exc, FILE *out, Obj **seen, int *nseen) {
    ExcObj *e = (ExcObj *)AS_OBJ(exc);
    if (*nseen < CHAIN_MAX) seen[(*nseen)++] = &e->obj;
    if (*nseen < CHAIN_MAX) {
        if (is_exc_instance(vm, e->cause)) {
            if (!seen_has(seen, *nseen, AS_OBJ(e->cause))) {
                print_chain(vm, e->cause, out, seen, nseen);
                fputs("\nThe above exception was the direct cause of the following exception:\n\n", out);
            }
        } else if (is_exc_instance(vm, e->context) && !e->suppress_context) {
            if (!seen_has(seen, *nseen, AS_OBJ(e->context))) {
                print_chain(vm, e->context, out, seen, nseen);
                fputs("\nDuring handling of the above exception, another exception occurred:\n\n", out);
            }
        }
    }
    print_one(vm, exc, out);
}

void exc_print(VM *vm, Value exc, FILE *out) {
    if (!is_exc_instance(vm, exc)) {
        fputs("gpy: non-exception object raised\n", out);
        return;
    }
    Obj *seen[CHAIN_MAX];
    int nseen = 0;
    print_chain(vm, exc, out, seen, &nseen);
    fflush(out);
}

Str *exc_message(VM *vm, Value exc) { return vm_str(vm, exc); }

/* ------------------------------------------------------- argument checks */

/* "len()" from "len"; names already ending in ')' are kept. */
static const char *fname_paren(const char *fname, char *buf, size_t size) {
    size_t n = strlen(fname);
    if (n > 0 && fname[n - 1] == ')') return fname;
    snprintf(buf, size, "%s()", fname);
    return buf;
}

void arg_count(VM *vm, const char *fname, int argc, int min, int max) {
    if (argc >= min && (max < 0 || argc <= max)) return;
    char buf[128];
    const char *f = fname_paren(fname, buf, sizeof buf);
    if (min == max) {
        if (min == 0) vm_raise_kind(vm, TypeError, "%s takes no arguments (%d given)", f, argc);
        if (min == 1) vm_raise_kind(vm, TypeError, "%s takes exactly one argument (%d given)", f, argc);
        vm_raise_kind(vm, TypeError, "%s takes exactly %d arguments (%d given)", f, min, argc);
    }
    if (argc < min)
        vm_raise_kind(vm, TypeError, "%s takes at least %d argument%s (%d given)", f, min, min == 1 ? "" : "s",
                      argc);
    vm_raise_kind(vm, TypeError, "%s takes at most %d argument%s (%d given)", f, max, max == 1 ? "" : "s", argc);
}

void arg_no_kwargs(VM *vm, const char *fname, Dict *kwargs) {
    if (!kwargs || kwargs->count == 0) return;
    char buf[128];
    vm_raise_kind(vm, TypeError, "%s takes no keyword arguments", fname_paren(fname, buf, sizeof buf));
}

int64_t arg_int(VM *vm, const char *fname, Value v) {
    (void)fname;
    if (IS_INT(v)) return AS_INT(v);
    if (IS_BOOL(v)) return AS_BOOL(v) ? 1 : 0;
    return vm_to_index(vm, v);
}

double arg_float(VM *vm, const char *fname, Value v) {
    (void)fname;
    if (IS_NUMBER(v)) return AS_NUMBER(v);
    if (IS_OBJ(v)) {
        Value m = type_lookup(vm, vm_typeof(vm, v), intern(vm, "__float__"));
        if (!IS_EMPTY(m)) {
            vm_push_root(vm, v);
            Value r = vm_call(vm, m, 1, &v);
            vm_pop_roots(vm, 1);
            if (IS_FLOAT(r)) return AS_FLOAT(r);
            vm_raise_kind(vm, TypeError, "%s.__float__ returned non-float (type %s)", vm_type_name(vm, v),
                          vm_type_name(vm, r));
        }
        m = type_lookup(vm, vm_typeof(vm, v), intern(vm, "__index__"));
        if (!IS_EMPTY(m)) return (double)vm_to_index(vm, v);
    }
    vm_raise_kind(vm, TypeError, "must be real number, not %s", vm_type_name(vm, v));
}

Str *arg_str(VM *vm, const char *fname, Value v) {
    if (IS_STR(vm, v)) return AS_STR(v);
    char buf[128];
    vm_raise_kind(vm, TypeError, "%s argument must be str, not %s", fname_paren(fname, buf, sizeof buf),
                  vm_type_name(vm, v));
}

Value kwarg_take(VM *vm, Dict *kwargs, const char *name) {
    if (!kwargs || kwargs->count == 0) return EMPTY_VAL;
    Str *key = intern(vm, name);
    Value v = dict_get_str(vm, kwargs, key);
    if (!IS_EMPTY(v)) dict_del(vm, kwargs, STR_VAL(key));
    return v;
}

void kwargs_check_empty(VM *vm, const char *fname, Dict *kwargs) {
    if (!kwargs || kwargs->count == 0) return;
    int64_t pos = 0;
    Value k, v;
    char buf[128];
    const char *f = fname_paren(fname, buf, sizeof buf);
    while (dict_next(kwargs, &pos, &k, &v)) {
        if (IS_STR(vm, k)) vm_raise_kind(vm, TypeError, "'%s' is an invalid keyword argument for %s", AS_STR(k)->chars, f);
    }
    vm_raise_kind(vm, TypeError, "keywords must be strings");
}
