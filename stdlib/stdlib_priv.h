/*
** stdlib_priv.h — helpers shared by the files of stdlib/ (builtins, the
** iterator types, the standard modules, file objects). Not part of the VM
** contract: nothing outside stdlib/ includes this header.
*/
#ifndef GPY_STDLIB_PRIV_H
#define GPY_STDLIB_PRIV_H

#include "vm.h"

/* ---- the openers stdlib_open_libs (open_libs.c) calls ---- */
void builtins_init(VM *vm);       /* stdlib/builtins.c: fills vm->builtins */
Module *stdlib_math(VM *vm);      /* stdlib/math.c */
Module *stdlib_cmath(VM *vm);     /* stdlib/cmath.c */
Module *stdlib_numpy(VM *vm);     /* stdlib/nd_core.c */
Module *stdlib_time(VM *vm);      /* stdlib/time.c */
Module *stdlib_sys(VM *vm);       /* stdlib/sys.c */
Module *stdlib_os(VM *vm);        /* stdlib/os.c */
Module *stdlib_random(VM *vm);    /* stdlib/random.c */
Module *stdlib_asyncio(VM *vm);   /* stdlib/asyncio.c */
Module *stdlib_future(VM *vm);    /* stdlib/future_module.c: __future__ */
/* stdlib/cuda.c: registers cuda, numba, numba.cuda, numba.core(.errors) */
void cuda_register_modules(VM *vm);
/* stdlib/warnings.c: registers the warnings module */
void warnings_register(VM *vm);
/* stdlib/gc_module.c: registers the gc module */
void gc_module_register(VM *vm);
/* stdlib/json.c: registers json, json.decoder, json.encoder */
void json_register(VM *vm);
/* stdlib/unicodedata.c: registers the unicodedata module */
void unicodedata_register(VM *vm);
/* stdlib/collections_deque.c: registers _collections (deque) */
void collections_deque_register(VM *vm);
/* stdlib/collections_count.c: adds _count_elements to _collections */
void collections_count_add(VM *vm, Module *m);
/* stdlib/itertools.c: registers itertools */
void itertools_register(VM *vm);
/* stdlib/heapq.c: registers _heapq */
void heapq_register(VM *vm);
/* stdlib/bisect.c: registers bisect */
void bisect_register(VM *vm);
void image_register(VM *vm); /* png.c: _gpy_image */
void zlib_register(VM *vm);  /* zlib_module.c */
/* stdlib/gpy_modules.c: registers the modules written in gpy */
void gpy_modules_register(VM *vm);
/* stdlib/re_engine.c: registers _re (PCRE2) */
void re_engine_register(VM *vm);

/* ---- stdlib/file.c: file objects, open() ---- */
void file_init(VM *vm);
Value file_open(VM *vm, Str *path, Str *mode);
/* open() with encoding= / errors= (NULL: utf-8 / strict) */
Value file_open_encoded(VM *vm, Str *path, Str *mode, const char *encoding, const char *errors);
Value file_from_stream(VM *vm, FILE *f, const char *name, const char *mode, bool owned);
void file_write(VM *vm, Value file, Str *s); /* any object with write() */
void file_flush(VM *vm, Value file);

/* ---- stdlib/iterators.c ---- */
/* Creates the enumerate/zip/map/filter/reversed/callable_iterator types and
** binds the public ones in vm->builtins. Called by builtins_init. */
void iterators_init(VM *vm);
/* stdlib/async_builtins.c: aiter() and anext(). Called by builtins_init. */
void async_builtins_init(VM *vm);
/* reversed(seq) */
Value iter_reversed(VM *vm, Value seq);
/* iter(callable, sentinel) */
Value iter_callable(VM *vm, Value callable, Value sentinel);

/* ---- stdlib/file.c ---- */
/* Raises the OSError subclass that CPython raises for errno err
** ("[Errno 2] No such file or directory: 'name'"); filename may be NULL. */
_Noreturn void os_raise_errno(VM *vm, int err, const char *filename);
/* Exception object for errno err (not raised). */
Value os_error_new(VM *vm, int err, const char *filename);
/* True when v is one of our file objects. */
bool file_is_file(VM *vm, Value v);
/* Reads one line (with its "\n") from file, a file object or any object
** with readline(); returns NULL at end of file. */
Str *file_readline(VM *vm, Value file);
/* Writes raw UTF-8 bytes to a file object (or calls write() of any object). */
void file_write_bytes(VM *vm, Value file, const char *s, size_t len);
/* The current sys.stdout / sys.stdin / sys.stderr (the sys module's
** attribute when it exists, so that assignments to sys.stdout are honoured). */
Value file_sys_stream(VM *vm, const char *name);

/* ---- stdlib/compile.c: the compile() builtin ---- */
Value builtin_compile(VM *vm, int argc, Value *argv, Dict *kwargs);

/* ---- stdlib/structseq.c: named tuples of the C modules ---- */
/* A struct sequence (like time.struct_time): nfields named values, the
** first nvisible of which form the tuple part. */
Value structseq_new(VM *vm, const char *qualname, const char *const *fields, int nfields, int nvisible,
                    const Value *values);
/* True when v is a struct sequence (of that qualname when not NULL). */
bool structseq_check(VM *vm, Value v, const char *qualname);
/* Field i of a struct sequence (hidden fields included). */
Value structseq_field(VM *vm, Value v, int i);

/* ---- small argument helpers (CPython's wording) ---- */

/* Keyword argument name, removed from kwargs; EMPTY when absent. */
static inline Value kw_take(VM *vm, Dict *kwargs, const char *name) {
    return kwargs ? kwarg_take(vm, kwargs, name) : EMPTY_VAL;
}

/* TypeError for keywords left over after the accepted ones were taken. */
static inline void kw_done(VM *vm, const char *fname, Dict *kwargs) {
    if (kwargs && kwargs->count > 0) {
        int64_t pos = 0;
        Value k, v;
        while (dict_next(kwargs, &pos, &k, &v)) {
            if (IS_STR(vm, k))
                vm_raise_kind(vm, TypeError, "'%s' is an invalid keyword argument for %s()",
                              AS_STR(k)->chars, fname);
        }
        kwargs_check_empty(vm, fname, kwargs);
    }
}

/* "len() takes exactly one argument (2 given)" (METH_O functions) */
static inline void arg_one(VM *vm, const char *fname, int argc) {
    if (argc != 1)
        vm_raise_kind(vm, TypeError, "%s() takes exactly one argument (%d given)", fname, argc);
}

/* "getattr expected at least 2 arguments, got 1" (METH_VARARGS functions) */
static inline void arg_between(VM *vm, const char *fname, int argc, int min, int max) {
    if (argc < min) {
        if (min == max)
            vm_raise_kind(vm, TypeError, "%s expected %d argument%s, got %d", fname, min,
                          min == 1 ? "" : "s", argc);
        vm_raise_kind(vm, TypeError, "%s expected at least %d argument%s, got %d", fname, min,
                      min == 1 ? "" : "s", argc);
    }
    if (max >= 0 && argc > max) {
        if (min == max)
            vm_raise_kind(vm, TypeError, "%s expected %d argument%s, got %d", fname, max,
                          max == 1 ? "" : "s", argc);
        vm_raise_kind(vm, TypeError, "%s expected at most %d argument%s, got %d", fname, max,
                      max == 1 ? "" : "s", argc);
    }
}

/* "f() takes no keyword arguments" */
static inline void kw_none(VM *vm, const char *fname, Dict *kwargs) {
    if (kwargs && kwargs->count > 0)
        vm_raise_kind(vm, TypeError, "%s() takes no keyword arguments", fname);
}

/* A float argument: int, bool or float, else "must be real number, not str". */
static inline double num_arg(VM *vm, Value v) {
    if (IS_FLOAT(v)) return AS_FLOAT(v);
    if (IS_INTLIKE(v)) return (double)AS_INTLIKE(v);
    vm_raise_kind(vm, TypeError, "must be real number, not %s", vm_type_name(vm, v));
}

/* Interned Str for a C string (attribute / method names). */
static inline Str *cstr_name(VM *vm, const char *s) {
    return str_intern(vm, s, __builtin_strlen(s));
}

/* Adds a native with data (e.g. the module's state object) to a module. */
static inline void module_add_native_data(VM *vm, Module *m, const char *name, NativeFn fn,
                                          Value data) {
    dict_set_cstr(vm, m->dict, name, native_new(vm, name, fn, data));
}

/* Finds the builtin type whose slot matches (types are not kept in
** globals: the VM struct owns every type through builtin_types). */
#define STDLIB_FIND_TYPE(vm, slot, fnptr)                                  \
    ({                                                                     \
        Type *found_ = NULL;                                               \
        for (int32_t i_ = 0; i_ < (vm)->nbuiltin_types; i_++)              \
            if ((vm)->builtin_types[i_]->slot == (fnptr)) {                \
                found_ = (vm)->builtin_types[i_];                          \
                break;                                                     \
            }                                                              \
        found_;                                                            \
    })

#endif
