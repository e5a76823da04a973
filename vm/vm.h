/*
** vm.h — the interpreter state and every internal API, grouped by the file
** that implements it. All interpreter state lives in one VM struct (no
** mutable globals), so several VMs can live in one process.
**
** Errors: inside the VM a raise unwinds with longjmp to the nearest
** protected call (vm_pcall or an interpreter loop). C code between a raise
** and its catcher must not hold malloc'd memory it still owns.
**
** GC: collection happens only at safepoints (gc_safepoint, called by the
** interpreter at calls and backward jumps), never inside gc_alloc. A native
** that calls back into the VM (vm_call...) must root every temporary object
** it still needs with vm_push_root/vm_pop_roots; its own arguments are
** already rooted.
*/
#ifndef GPY_VM_H
#define GPY_VM_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "gpy.h" /* GPY_VERSION, GpyConfig's callback types */
#include "object.h"

/* ---- per-VM configuration ----
** Everything that decides behaviour an application must be able to set per
** VM. The embedding API (api/) fills it from a GpyConfig; the command-line
** program (repl/main.c) fills it from the environment: nothing in vm/,
** stdlib/, jit/ or gpu/ reads the environment. Strings are owned copies
** (vm_free frees them); NULL means "the default" documented per field. */
typedef struct VMConfig {
    int argc;                /* sys.argv */
    char **argv;
    char *module_path;       /* ':'-separated import directories (GPY_PATH) */
    int device;              /* GpyDevice: auto / cpu / cuda (GPY_DEVICE) */
    int cpu_threads;         /* CPU-device workers; 0: one per core (GPY_CPU_THREADS) */
    size_t cpu_fiber_stack;  /* bytes per CPU-device fiber stack; 0: default (GPY_CPU_FIBER_STACK) */
    char *cache_dir;         /* kernel disk cache; NULL: none (GPY_CACHE_DIR, else XDG/HOME in the CLI) */
    bool cache_stats;        /* print cache hit/miss counts at exit (GPY_CACHE_STATS) */
    char *jit_module;        /* gpy_jit.so; NULL: lib/gpy/ beside libgpy, or the build tree */
    char *cuda_home;         /* CUDA toolkit root; NULL: the build-time default (GPY_CUDA_HOME, CUDA_HOME) */
    char *cuda_arch;         /* PTX target override, e.g. "sm_90" (GPY_CUDA_ARCH) */
    char *libcuda;           /* driver library; NULL: libcuda.so.1 (GPY_LIBCUDA) */
    char *dump_ptx;          /* directory to write generated PTX into (GPY_DUMP_PTX) */
    int cpu_regions;         /* -1: default; 0/1 force CPU-device region lowering off/on (GPY_CPU_REGIONS) */
    bool gc_stress;          /* collect at every safepoint (GPY_GC_STRESS) */
    GpyAllocFn alloc;        /* NULL: malloc/realloc/free */
    size_t memory_limit;     /* 0: none */
    GpyWriteFn write, error; /* NULL: the process's stdout / stderr */
    GpyLoadFn load_module;
    GpyHookFn hook;
    uint64_t hook_every;
    double time_budget;
    void *user_data;         /* the callbacks' `user` */
    /* Registers builtins and the library modules (stdlib_open_libs, like
    ** Lua's luaL_openlibs); NULL: a bare VM with only the core types. */
    void (*open_libs)(VM *vm);
} VMConfig;

/* ---- exceptions: name, base ---- */
#define EXC_LIST(X)                                   \
    X(BaseException, BaseException)                   \
    X(SystemExit, BaseException)                      \
    X(KeyboardInterrupt, BaseException)               \
    X(GeneratorExit, BaseException)                   \
    X(Exception, BaseException)                       \
    X(StopIteration, Exception)                       \
    X(ArithmeticError, Exception)                     \
    X(OverflowError, ArithmeticError)                 \
    X(ZeroDivisionError, ArithmeticError)             \
    X(FloatingPointError, ArithmeticError)            \
    X(AssertionError, Exception)                      \
    X(AttributeError, Exception)                      \
    X(EOFError, Exception)                            \
    X(ImportError, Exception)                         \
    X(ModuleNotFoundError, ImportError)               \
    X(LookupError, Exception)                         \
    X(IndexError, LookupError)                        \
    X(KeyError, LookupError)                          \
    X(MemoryError, Exception)                         \
    X(NameError, Exception)                           \
    X(UnboundLocalError, NameError)                   \
    X(OSError, Exception)                             \
    X(FileNotFoundError, OSError)                     \
    X(FileExistsError, OSError)                       \
    X(PermissionError, OSError)                       \
    X(IsADirectoryError, OSError)                     \
    X(ConnectionError, OSError)                       \
    X(BrokenPipeError, ConnectionError)               \
    X(RuntimeError, Exception)                        \
    X(NotImplementedError, RuntimeError)              \
    X(RecursionError, RuntimeError)                   \
    X(SyntaxError, Exception)                         \
    X(IndentationError, SyntaxError)                  \
    X(TabError, IndentationError)                     \
    X(SystemError, Exception)                         \
    X(TypeError, Exception)                           \
    X(ValueError, Exception)                          \
    X(UnicodeError, ValueError)                       \
    X(UnicodeDecodeError, UnicodeError)               \
    X(UnicodeEncodeError, UnicodeError)               \
    X(StopAsyncIteration, Exception)                  \
    X(TimeoutError, OSError)                          \
    X(Warning, Exception)                             \
    X(UserWarning, Warning)                           \
    X(DeprecationWarning, Warning)                    \
    X(PendingDeprecationWarning, Warning)             \
    X(SyntaxWarning, Warning)                         \
    X(RuntimeWarning, Warning)                        \
    X(FutureWarning, Warning)                         \
    X(ImportWarning, Warning)                         \
    X(UnicodeWarning, Warning)                        \
    X(BytesWarning, Warning)                          \
    X(ResourceWarning, Warning)                       \
    X(EncodingWarning, Warning)

typedef enum ExcKind {
#define EXC_ENUM(name, base) EXC_##name,
    EXC_LIST(EXC_ENUM)
#undef EXC_ENUM
    EXC__COUNT
} ExcKind;

/* ---- builtin types every part of the VM may reference ---- */
#define CORE_TYPES(X)                                                           \
    X(type) X(object) X(NoneType) X(bool) X(int) X(float) X(str) X(list)        \
    X(tuple) X(dict) X(set) X(frozenset) X(range) X(slice) X(function)          \
    X(builtin_function) X(method) X(cell) X(module) X(generator) X(code)        \
    X(source) X(NotImplementedType) X(ellipsis) X(property) X(staticmethod)     \
    X(classmethod) X(super) X(range_iter) X(list_iter) X(tuple_iter)

/* An activation record of a gpy function. Registers live in vm->stack
** starting at base. */
typedef struct Frame {
    Function *fn;
    const uint32_t *pc; /* next instruction (saved when the frame is not running) */
    Value *base;        /* R[0] */
    Dict *globals;
    Dict *locals;       /* class-body namespace for LOAD_NAME/STORE_NAME, else NULL */
    Value handling;     /* exception being handled by an except block, or NONE */
    Value *ret;         /* where the caller wants the result (NULL: entry frame) */
    Generator *gen;     /* generator owning this frame, or NULL */
    int32_t entry;      /* nonzero: returning from this frame returns from vm_run */
} Frame;

/* The VM's own unwinding (vm_rethrow to vm_pcall / the interpreter loop).
** The compiler's builtin setjmp saves only the frame and stack pointers and
** the resume address (the compiler keeps nothing live in registers across
** it): about 25 instructions less per protected call than glibc's, which
** saves every callee-saved register and mangles pointers. AddressSanitizer
** must see the jump (it intercepts longjmp to unpoison the abandoned
** stack), so sanitized builds keep the library's. */
#if defined(__SANITIZE_ADDRESS__)
#define VM_LIBC_JMP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VM_LIBC_JMP 1
#endif
#endif
#if defined(__x86_64__) && !defined(VM_LIBC_JMP)
typedef void *VmJmpBuf[5];
#define VM_SETJMP(b) __builtin_setjmp(b)
#define VM_LONGJMP(b) __builtin_longjmp(b, 1) /* never from the function that set b */
#else
typedef jmp_buf VmJmpBuf;
#define VM_SETJMP(b) setjmp(b)
#define VM_LONGJMP(b) longjmp(b, 1)
#endif

/* Chain of protected-call points (vm_pcall, interpreter loops). */
typedef struct ErrorJmp {
    VmJmpBuf buf;
    struct ErrorJmp *prev;
    int32_t nframes; /* frame depth when the protected region was entered */
    Value *stack_top;
    int32_t nroots;
    int32_t c_depth;
} ErrorJmp;

/* The budget hook's countdown state (signals.c). */
typedef struct VMBudget {
    int64_t armed;      /* what safepoint_countdown was last set to */
    int64_t hook_left;  /* units until the hook is due (hook_every) */
    int64_t clock_left; /* units until the clock is read (time_budget) */
    double start;       /* when the current time budget period began */
    bool in_hook;
} VMBudget;

/* Interned-string table (open addressing over Str*). */
typedef struct StrTable {
    Str **slots;
    int64_t cap, count; /* cap is a power of two; slot NULL empty, (Str*)1 deleted */
} StrTable;

struct VM {
    /* types */
#define TYPE_FIELD(n) Type *t_##n;
    CORE_TYPES(TYPE_FIELD)
#undef TYPE_FIELD
    Type *exc[EXC__COUNT];
    Type **builtin_types; /* every builtin type made by type_new_builtin */
    int32_t nbuiltin_types, builtin_types_cap;
    uint32_t type_version_next;     /* class.c: source of fresh Type.version values (never 0) */
    NativeFunction *current_native; /* set by the caller before invoking a native (vm_current_native) */

    /* singletons */
    Value not_implemented;
    Value ellipsis;
    Value memory_error; /* preallocated MemoryError instance */

    /* value stack (fixed capacity, never moves) and frames */
    Value *stack;
    Value *stack_top; /* first free slot above the running frame's registers */
    Value *stack_end;
    Frame *frames;
    int32_t nframes, frames_cap;
    int32_t recursion_limit; /* max frames, like sys.setrecursionlimit */
    int32_t c_depth;         /* nested C-level interpreter entries */

    /* errors */
    ErrorJmp *err;
    Value exc_value; /* exception being propagated / last caught by vm_pcall */

    /* GC */
    Obj *objects;
    size_t bytes_allocated;
    size_t next_gc;
    Obj **gray;
    int64_t ngray, gray_cap;
    Value *roots;
    int32_t nroots, roots_cap;
    bool gc_running;
    Obj *obj_freelist[16]; /* freed objects by 16-byte size class (gc.c) */
    void *block_freelist[33]; /* freed gc_alloc_block buffers by 16-byte class */
    struct Slab *slabs;       /* the slabs small objects and blocks are carved from (gc.c) */
    char *slab_next;          /* the unused rest of the newest slab */
    size_t slab_left;
    bool gc_stress; /* collect at every safepoint (GPY_GC_STRESS=1) */
    bool budget_plain; /* no hook, no time budget, no GC stress: vm_budget_reset's inline case */
    bool gc_gray_overflow; /* gc.c: the gray stack could not grow; rescan marked objects */
    bool gc_limit_grace;   /* gc.c: the memory limit was hit; headroom until live memory is under it again */

    /* strings */
    StrTable strings;
    Str *empty_str;
    Str *single_chars[128]; /* one-character ASCII strings */
    Type *t_str_iter;       /* str.c: iter("...") */
    Str *sym_init, *sym_new, *sym_repr, *sym_str, *sym_call, *sym_name, *sym_class,
        *sym_dict, *sym_doc, *sym_module, *sym_qualname, *sym_main;
    Str *dunder_binop[BINOP__COUNT];  /* __add__ ...      */
    Str *dunder_rbinop[BINOP__COUNT]; /* __radd__ ...     */
    Str *dunder_ibinop[BINOP__COUNT]; /* __iadd__ ...     */

    /* modules */
    Dict *builtins;     /* the builtins namespace */
    Dict *modules;      /* sys.modules: name -> Module */
    Module *sys_module;
    Dict *native_modules; /* name -> NativeFunction that builds the module */
    List *sys_path;
    List *sys_argv;
    Str *main_file;

    /* files */
    Value sys_stdout, sys_stderr, sys_stdin;

    /* containers (list.c, dict.c, set.c): helper types and state */
    Type *t_dict_keys, *t_dict_values, *t_dict_items;          /* views */
    Type *t_dict_keyiter, *t_dict_valueiter, *t_dict_itemiter; /* iterators */
    Type *t_set_iter;
    uint64_t dict_version; /* last Dict.version handed out: versions are unique per VM */

    /* interactive / embedding hooks */
    bool interactive;
    uint8_t prompt_tracebacks; /* the terminal prompt's VM_TB_* bits (error.c) */
    void *user_data;
    /* signals.c: interrupts and the budget hook */
    atomic_int interrupt_requested;       /* vm_request_interrupt: any thread, signal handlers */
    int64_t safepoint_countdown;          /* interp.c's safepoints: slow path (vm_safepoint) at <= 0 */
    VMBudget budget;
    void (*interruptible_reads)(bool on); /* the gpy command: let SIGINT end blocking reads */
    VMConfig config;       /* see VMConfig; set once by vm_new */
    struct GpyVM *api;     /* api/: the embedding API's state for this VM, or NULL */
    void (*api_mark)(VM *vm); /* api/: marks the API's slots and handles (gc.c calls it with the roots) */

    /* interpreter (interp.c) private state */
    int32_t interp_nframes;  /* nframes as the interpreter last set it (survives vm_throw) */
    struct InterpCtorEntry {  /* class -> __init__ run inline by CALL (weak, version-checked) */
        Type *type;
        uint32_t version;
        Function *init;
    } interp_ctor[32];
    /* vm.c: set when SystemExit ended a run (the REPL / embedder then exits) */
    bool exit_requested;
    int exit_code;
    /* coroutine.c: coroutines, async generators and their awaitables */
    Type *t_coroutine, *t_async_generator, *t_coroutine_wrapper, *t_async_asend, *t_async_athrow,
        *t_async_wrapped;

    /* Per-VM state of the layers above vm/ (no globals: several VMs may live
    ** in one process). Opaque to vm/: each is an incomplete struct that only
    ** its owner defines, creates on first use and releases by the hook it
    ** registers with vm_on_free; vm/ never reads them. A slot per subsystem
    ** rather than a lookup table: nd_state(vm) sits on hot paths. */
    struct NDState *nd;     /* stdlib/nd_core.c: array, dtype and scalar types */
    struct CudaState *cuda; /* stdlib/cuda.c: the cuda module's types and device arrays */
    struct JitState *jit;   /* jit/jit.c: LLVM targets, ORC, libdevice */
    struct JitTypes *jit_types; /* jit/types.c: interned kernel types */
    void (*free_hooks[8])(VM *vm);
    int32_t nfree_hooks;
    Type *t_complex; /* vm/complex_num.c */
    int64_t int_max_str_digits; /* vm/bigint.c: 0 = default (4300), -1 = no limit */
    /* gen_finalize.c / gc.c: unreachable generators a collection kept alive
    ** for their close() to run at the next safepoint (malloc'd, roots) */
    Obj **finalize_queue;
    int32_t nfinalize, finalize_cap;
    bool finalizing; /* gen_run_finalizers is running */
    bool generators_made; /* a generator was ever created: collections look for abandoned ones */
    /* bytes.c / memoryview.c (declared in bytes.h) */
    Type *t_bytes, *t_bytearray, *t_memoryview, *t_bytes_iter;
    Type *t_union; /* vm/union_type.c: made by the first X | Y of types */
    Type *t_longrange_iter; /* range_big.c */
    /* repl/jupyter_kernel.c: an interactive expression's repr goes here instead of sys.stdout */
    void (*print_expr_hook)(VM *vm, Str *repr);
};

/* ================= vm.c: creating and destroying a VM ================= */
/* Fills config with the defaults (everything off / NULL / automatic). */
void vm_config_defaults(VMConfig *config);
/* A VM configured by config (copied: its strings and argv are duplicated);
** NULL when memory runs out or the libraries fail to open. */
VM *vm_new(const VMConfig *config);
void vm_free(VM *vm);
/* Registers a function vm_free calls (newest first) before objects are freed. */
void vm_on_free(VM *vm, void (*hook)(VM *vm));
/* Compiles and runs source text as module __main__ (or name). Returns 0 on
** success; on an uncaught exception prints the traceback to stderr and
** returns 1; SystemExit returns its code. */
int vm_run_source(VM *vm, const char *filename, const char *text, size_t len);
int vm_run_file(VM *vm, const char *path);
/* Runs one REPL entry in __main__: expression statements print their repr. */
int vm_run_interactive(VM *vm, const char *text, size_t len);
/* VM.prompt_tracebacks: at a terminal prompt, tracebacks show the lines of
** the entries typed (CPython 3.13's REPL does) and, where the terminal
** takes colour, colour them as CPython 3.13 does. */
#define VM_TB_ENTRY_LINES 1
#define VM_TB_COLOUR 2

/* ================= gc.c ================= */
void *gc_alloc_obj(VM *vm, Type *type, size_t size); /* zeroed, header set */
void *gc_malloc(VM *vm, size_t size);                /* counted; raises MemoryError */
void *gc_try_malloc(VM *vm, size_t size);            /* gc_malloc that returns NULL instead of raising */
void *gc_calloc(VM *vm, size_t n, size_t size);
void *gc_realloc(VM *vm, void *p, size_t old_size, size_t new_size);
void gc_free(VM *vm, void *p, size_t size);
/* Counts memory the GC does not hold (e.g. GPU device memory owned by an
** object): +bytes when acquired, -bytes when its finalizer releases it. */
void gc_account_external(VM *vm, ptrdiff_t bytes);
/* Like gc_malloc/gc_free for buffers whose exact size the caller always
** knows when freeing (small ones are recycled through free lists): a wrong
** size given to gc_free_block corrupts memory, so use them only there. */
void *gc_alloc_block(VM *vm, size_t size);
void gc_free_block(VM *vm, void *p, size_t size);
/* gc_realloc for a gc_alloc_block buffer (either size may be a block's). */
void *gc_realloc_block(VM *vm, void *p, size_t old_size, size_t new_size);
void gc_mark_value(VM *vm, Value v);
void gc_mark_obj(VM *vm, Obj *o);
void gc_safepoint_slow(VM *vm);
/* Collects when the allocation budget is spent (and runs pending
** finalizers); inline, because every call boundary passes one. */
static inline void gc_safepoint(VM *vm) {
    if (vm->bytes_allocated > vm->next_gc || vm->gc_stress || vm->nfinalize > 0) gc_safepoint_slow(vm);
}
void gc_collect(VM *vm);
void gc_free_all(VM *vm); /* vm_free: finalizes and frees every object */
void vm_push_root(VM *vm, Value v);
void vm_pop_roots(VM *vm, int n);

/* ================= error.c: exceptions ================= */
_Noreturn void vm_raise(VM *vm, Type *exc_type, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#define vm_raise_kind(vm, kind, ...) vm_raise((vm), (vm)->exc[EXC_##kind], __VA_ARGS__)
_Noreturn void vm_throw(VM *vm, Value exc); /* exc: an exception instance or class */
/* Re-raises an exception instance as is: no __context__ change, no
** instantiation (propagating an exception caught by vm_pcall). */
_Noreturn void vm_rethrow(VM *vm, Value exc);
Value exc_new(VM *vm, Type *type, int argc, Value *argv); /* instantiate without raising */
Value exc_new_msg(VM *vm, Type *type, const char *msg);
bool vm_exc_matches(VM *vm, Value exc, Value cls_or_tuple);
/* Runs fn(vm, ud) protected. Returns true on success; on an exception
** returns false with the exception in vm->exc_value, frames unwound. */
bool vm_pcall(VM *vm, void (*fn)(VM *vm, void *ud), void *ud);
/* Adds a traceback line for proto at instruction index pc. */
void exc_add_trace(VM *vm, Value exc, Proto *proto, int32_t pc);
/* Prints "Traceback (most recent call last): ..." with source lines, chained
** causes/contexts, then "ValueError: msg", like CPython. */
void exc_print(VM *vm, Value exc, FILE *out);
Str *exc_message(VM *vm, Value exc); /* str(exc) */
/* Argument checks for natives, raising TypeError with Python's wording. */
void arg_count(VM *vm, const char *fname, int argc, int min, int max);
void arg_no_kwargs(VM *vm, const char *fname, Dict *kwargs);
int64_t arg_int(VM *vm, const char *fname, Value v);   /* int/bool or __index__ */
double arg_float(VM *vm, const char *fname, Value v);  /* int/bool/float */
Str *arg_str(VM *vm, const char *fname, Value v);
/* Looks up and removes keyword name from kwargs; EMPTY if absent. */
Value kwarg_take(VM *vm, Dict *kwargs, const char *name);
void kwargs_check_empty(VM *vm, const char *fname, Dict *kwargs);

/* A syntax error found by the parser or compiler. */
typedef struct SyntaxErr {
    int line, col;        /* 1-based */
    int end_col;          /* for the ^^^ underline; 0 = single caret */
    bool indentation;     /* IndentationError */
    bool recursion;       /* too deep (C stack or tree depth): CPython's RecursionError "during compilation" */
    bool memory;          /* the parser's depth limit: a bare MemoryError, as CPython's parser stack overflow */
    char msg[256];
} SyntaxErr;
/* Builds a SyntaxError instance (filename, lineno, offset, text) */
Value exc_syntax_error(VM *vm, Source *src, const SyntaxErr *err);

/* ================= ops.c: generic operations ================= */
Type *vm_typeof(VM *vm, Value v);
const char *vm_type_name(VM *vm, Value v);
bool type_is_subtype(Type *t, Type *base);
bool vm_isinstance(VM *vm, Value v, Type *t);
bool vm_truthy(VM *vm, Value v);
Value vm_binop(VM *vm, BinOp op, Value a, Value b);
Value vm_inplace(VM *vm, BinOp op, Value a, Value b);
Value vm_unop(VM *vm, UnOp op, Value a);
Value vm_compare(VM *vm, CmpOp op, Value a, Value b); /* IS/IN too */
bool vm_equal(VM *vm, Value a, Value b);
bool vm_is(Value a, Value b);
/* union_type.c: X | Y of classes and None (PEP 604). union_or is EMPTY
** when an operand cannot be in a union (the caller raises TypeError). */
Value union_or(VM *vm, Value a, Value b);
bool union_is(VM *vm, Value v);
Tuple *union_args(Value v); /* the members of a union (union_is) */
int64_t vm_hash(VM *vm, Value v); /* CPython's numeric hash for numbers */
Str *vm_repr(VM *vm, Value v);
Str *vm_str(VM *vm, Value v);
Str *vm_format(VM *vm, Value v, Str *spec); /* format(v, spec); spec may be NULL */
Value vm_getattr(VM *vm, Value obj, Str *name);     /* raises AttributeError */
Value vm_getattr_opt(VM *vm, Value obj, Str *name); /* EMPTY if missing */
void vm_setattr(VM *vm, Value obj, Str *name, Value v);
void vm_delattr(VM *vm, Value obj, Str *name);
Value vm_getitem(VM *vm, Value obj, Value key);
void vm_setitem(VM *vm, Value obj, Value key, Value v);
void vm_delitem(VM *vm, Value obj, Value key);
Value vm_iter(VM *vm, Value v);
bool vm_next(VM *vm, Value iter, Value *out);
int64_t vm_len(VM *vm, Value v);
bool vm_contains(VM *vm, Value container, Value item);
int64_t vm_to_index(VM *vm, Value v); /* int, bool, or __index__; TypeError otherwise */
/* Normalizes a Python index against len (negative from the end); raises
** IndexError "<what> index out of range" when outside [0, len). */
int64_t vm_index_check(VM *vm, int64_t idx, int64_t len, const char *what);
/* Resolves a Slice against len: start, stop, step and the element count. */
int64_t slice_indices(VM *vm, Slice *s, int64_t len, int64_t *start, int64_t *stop, int64_t *step);

/* ================= number.c: int, float, bool, None ================= */
Value int_from_str(VM *vm, const char *s, size_t len, int base); /* int("..") rules */
Value float_from_str(VM *vm, const char *s, size_t len);
bool int_add_overflow(int64_t a, int64_t b, int64_t *r);
Value num_binop(VM *vm, BinOp op, Value a, Value b); /* both numbers; raises */
Value num_compare(VM *vm, CmpOp op, Value a, Value b);
int64_t num_floordiv(VM *vm, int64_t a, int64_t b); /* raises ZeroDivisionError */
int64_t num_mod(VM *vm, int64_t a, int64_t b);
double float_mod(double a, double b);
Value num_pow(VM *vm, Value a, Value b);

/* ================= format.c ================= */
/* repr of a float exactly as CPython prints it (shortest round-trip). */
int float_repr(double d, char *buf, size_t size);
Str *format_float_spec(VM *vm, double d, Str *spec);
Str *format_int_spec(VM *vm, int64_t i, Str *spec);
Str *format_str_spec(VM *vm, Str *s, Str *spec);
Str *str_percent_format(VM *vm, Str *fmt, Value args); /* "..." % args */
Str *str_format_method(VM *vm, Str *fmt, int argc, Value *argv, Dict *kwargs);

/* ================= str.c ================= */
Str *str_new(VM *vm, const char *s, size_t len); /* short strings are interned */
Str *str_new_data(VM *vm, const char *s, size_t len); /* never interned: bulk data */
Str *str_cstr(VM *vm, const char *s);
Str *str_intern(VM *vm, const char *s, size_t len);
Str *str_printf(VM *vm, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
Str *str_concat(VM *vm, Str *a, Str *b);
bool str_equal(Str *a, Str *b);
Str *str_repr(VM *vm, Str *s); /* 'it''s' quoting like CPython */
int64_t str_hash_bytes(const char *s, size_t len);
/* GC (gc.c, before sweeping): drops interned strings that are unmarked;
** the intern table holds its strings weakly. */
void str_table_sweep(VM *vm);
/* ascii(): escapes every non-ASCII character of s as \xNN, \uNNNN or
** \UNNNNNNNN (s is usually a repr). Returns s itself when it is ASCII. */
Str *str_to_ascii(VM *vm, Str *s);
/* chr(cp): the one-character string (cp < 0x110000, checked by the caller). */
Str *str_from_codepoint(VM *vm, uint32_t cp);
#define STR_VAL(s) OBJ_VAL(s)
#define IS_STR(vm, v) (IS_OBJ(v) && AS_OBJ(v)->type == (vm)->t_str)
#define AS_STR(v) ((Str *)AS_OBJ(v))

/* Growable byte buffer for building strings (malloc'd; sb_finish frees it). */
typedef struct StrBuf {
    char *data;
    size_t len, cap;
} StrBuf;
void sb_init(StrBuf *sb);
void sb_putc(StrBuf *sb, char c);
void sb_append(StrBuf *sb, const char *s, size_t len);
void sb_appends(StrBuf *sb, const char *s);
void sb_append_str(StrBuf *sb, Str *s);
void sb_printf(StrBuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
Str *sb_finish(VM *vm, StrBuf *sb);
void sb_free(StrBuf *sb);

/* ================= list.c / tuple.c ================= */
List *list_new(VM *vm, int64_t cap);
void list_append(VM *vm, List *l, Value v);
List *list_from_iterable(VM *vm, Value it);
void list_extend(VM *vm, List *l, Value iterable); /* l += iterable */
/* list_extend onto a list no code can see yet (see list.c) */
void list_extend_fresh(VM *vm, List *l, Value iterable);
void list_sort(VM *vm, List *l, Value key, bool reverse); /* stable */
Tuple *tuple_new(VM *vm, int64_t len); /* items set to None */
Tuple *tuple_from_array(VM *vm, int64_t len, const Value *items);
Tuple *tuple_from_iterable(VM *vm, Value it);
#define IS_LIST(vm, v) (IS_OBJ(v) && AS_OBJ(v)->type == (vm)->t_list)
#define IS_TUPLE(vm, v) (IS_OBJ(v) && AS_OBJ(v)->type == (vm)->t_tuple)
#define AS_LIST(v) ((List *)AS_OBJ(v))
#define AS_TUPLE(v) ((Tuple *)AS_OBJ(v))

/* ================= dict.c ================= */
Dict *dict_new(VM *vm);
bool dict_get(VM *vm, Dict *d, Value key, Value *out);
void dict_set(VM *vm, Dict *d, Value key, Value value);
bool dict_del(VM *vm, Dict *d, Value key); /* false if absent */
Value dict_get_str(VM *vm, Dict *d, Str *key); /* EMPTY if absent; no user code runs */
void dict_set_str(VM *vm, Dict *d, Str *key, Value value);
Value dict_get_cstr(VM *vm, Dict *d, const char *key);
void dict_set_cstr(VM *vm, Dict *d, const char *key, Value value);
/* Iteration: *pos starts at 0; returns false at the end. */
bool dict_next(Dict *d, int64_t *pos, Value *key, Value *value);
Dict *dict_copy(VM *vm, Dict *d);
void dict_update(VM *vm, Dict *d, Value other); /* dict or iterable of pairs */
#define IS_DICT(vm, v) (IS_OBJ(v) && AS_OBJ(v)->type == (vm)->t_dict)
#define AS_DICT(v) ((Dict *)AS_OBJ(v))

/* ================= set.c ================= */
Set *set_new(VM *vm, Type *type); /* t_set or t_frozenset */
void set_add(VM *vm, Set *s, Value v);
bool set_contains(VM *vm, Set *s, Value v);
bool set_discard(VM *vm, Set *s, Value v);
bool set_next(Set *s, int64_t *pos, Value *key);
void set_update(VM *vm, Set *s, Value iterable); /* s |= iterable (any iterable) */
/* The frozenset constant CPython's compiler makes for a set display whose
** items are all constants (after folding: numbers, -numbers, strs, None,
** True/False, tuples of those): frozenset(items), rebuilt once more in its
** own iteration order (CPython's constant merging does that). To get
** CPython's iteration order for sets of numbers, a compiler should emit such
** a display with more than 2 items, used as a value, as
** BUILD_SET 0 + SET_UPDATE(K) (CPython: BUILD_SET/LOAD_CONST/SET_UPDATE),
** and `for x in {...}` / a comprehension over {...} (any count) should
** iterate K itself (CPython's AST optimizer does that). */
Set *set_const_frozen(VM *vm, int64_t n, const Value *items);

/* ================= range.c / slice.c ================= */
Value range_new(VM *vm, int64_t start, int64_t stop, int64_t step);
int64_t range_len(Range *r);
/* Iterator over r from its last element to its first (builtins.reversed). */
Value range_reversed(VM *vm, Range *r);
Value slice_new(VM *vm, Value start, Value stop, Value step);

/* ================= function.c: functions, methods, cells, natives ================= */
Function *function_new(VM *vm, Proto *proto, Dict *globals);
Proto *proto_new(VM *vm);
Cell *cell_new(VM *vm, Value v);
Value native_new(VM *vm, const char *name, NativeFn fn, Value data);
Value bound_method_new(VM *vm, Value self, Value func);
void type_add_method(VM *vm, Type *t, const char *name, NativeFn fn);
void module_add_function(VM *vm, Module *m, const char *name, NativeFn fn);
int32_t proto_line_at(Proto *p, int32_t pc);
/* The native currently executing (for NativeFunction.data): set by the
** caller before invoking fn. */
NativeFunction *vm_current_native(VM *vm);
/* For natives with NATIVE_FLAG_METHOD (object.h): raises TypeError unless
** argv[0] exists and is an instance of the type in nf->data. */
void native_check_self(VM *vm, NativeFunction *nf, int argc, Value *argv);
/* Bytes of p->caches (interp.c), so that Proto's finalizer can gc_free them. */
size_t interp_caches_size(Proto *p);

/* ================= class.c: type objects, instances, super ================= */
/* A builtin type, allocated and registered; usable after vm bootstrap. */
Type *type_new_builtin(VM *vm, const char *name, Type *base, uint32_t flags);
/* The same with a type object of size bytes (>= sizeof(Type)): room after
** the Type for its maker's data (api/'s foreign classes). */
Type *type_new_builtin_sized(VM *vm, const char *name, Type *base, uint32_t flags, size_t size);
/* class statement: name, bases tuple, namespace dict -> new class */
Value class_new(VM *vm, Str *name, Tuple *bases, Dict *ns);
/* class statement with metaclass and keywords: class_prepare picks the
** metaclass (*meta, keyword "metaclass" taken out of kwargs) and returns the
** namespace (its __prepare__); class_build makes the class from it. */
Dict *class_prepare(VM *vm, Value *meta, Str *name, Tuple *bases, Dict *kwargs);
/* class_mro_entries.c: the bases with each __mro_entries__ applied (PEP 560); bases itself when none has one */
Tuple *class_mro_entries(VM *vm, Tuple *bases);
Value class_build(VM *vm, Value meta, Str *name, Tuple *bases, Dict *ns, Dict *kwargs);
/* A builtin type opts in to subclassing by class statements (list, int ...):
** instances of such subclasses carry the builtin value and a __dict__.
** init_fills: a mutable container whose __init__ (re)fills the value
** (list, dict, set); otherwise the value is fixed by __new__ (int, str ...). */
void class_allow_subclass(VM *vm, Type *t, bool init_fills);
/* isinstance/issubclass with a metaclass's __instancecheck__/__subclasscheck__. */
bool class_isinstance(VM *vm, Value obj, Type *cls);
bool class_issubclass(VM *vm, Type *c, Type *cls);
/* Looks name up in t and its bases; EMPTY if absent. */
Value type_lookup(VM *vm, Type *t, Str *name);
/* The builtin value an instance of a user subclass of a builtin type
** stands for (class Point(tuple): its tuple); v itself otherwise. */
Value class_unbox(VM *vm, Value v);
/* object's generic attribute protocol (instance dict, then class, binding
** functions to methods; property/staticmethod/classmethod handled). */
Value generic_getattr(VM *vm, Value self, Str *name);
void generic_setattr(VM *vm, Value self, Str *name, Value value);
void class_init(VM *vm);

/* ================= interp.c / call.c / generator.c ================= */
/* Calls any callable from C. argv may point anywhere below vm->stack_top
** (or off the VM stack); gpy functions run in a nested interpreter loop. */
Value vm_call(VM *vm, Value callee, int argc, Value *argv);
Value vm_call_kw(VM *vm, Value callee, int argc, Value *argv, Dict *kwargs);
/* Calls obj.name(*argv); raises AttributeError if missing. */
Value vm_call_method(VM *vm, Value obj, Str *name, int argc, Value *argv);
/* Runs a module/REPL body proto with globals; returns its result. */
Value vm_exec_proto(VM *vm, Proto *p, Dict *globals);
/* A generator for generator function fn; args holds its fn->proto->nregs
** registers with the arguments already bound (copied). */
Value generator_new(VM *vm, Function *fn, Value *args);
void generator_init(VM *vm);
void coroutine_init(VM *vm);
/* gen_finalize.c: abandoned generators run their finally blocks. */
bool generator_needs_close(VM *vm, Obj *o); /* suspended inside a try block */
void gen_run_finalizers(VM *vm);            /* closes the generators gc.c queued */
void gen_close_all(VM *vm);                 /* at vm_free: closes every suspended one */
void function_init(VM *vm);

/* ================= lexer.c / parser.c / ast.c ================= */
typedef enum ParseMode { PARSE_FILE, PARSE_INTERACTIVE, PARSE_EVAL } ParseMode;
/* Parses text into an AST (AST_MODULE) allocated in arena. On a syntax error
** returns NULL and fills *err (the first error, like CPython). The arena
** holds all identifiers and strings (NUL-terminated); free it to discard.
** PARSE_EVAL: the module's body is exactly one AST_EXPR (the expression;
**   leading spaces/tabs are allowed, as eval() strips them).
** PARSE_INTERACTIVE: parsed exactly like a file (one complete REPL entry).
** Guarantees for later passes: tree depth <= 3000 (deeper input is a
** SyntaxError), err->col may be 0 when CPython reports no column. */
AstNode *parse_source(Arena *arena, const char *filename, const char *text, size_t len,
                      ParseMode mode, SyntaxErr *err);
Arena *arena_new(void);
void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned; aborts never: returns NULL on OOM */
void arena_free(Arena *a);
size_t arena_bytes(Arena *a);

/* ================= scope.c / compiler.c ================= */
/* Compiles a parsed module into a Proto. mode PARSE_INTERACTIVE makes
** expression statements print their value. Returns NULL with *err filled on
** a compile-time error (e.g. 'return' outside function). */
Proto *comp_module(VM *vm, Source *src, AstNode *module, ParseMode mode, SyntaxErr *err);
/* Prints the bytecode (gpy --dis). */
void comp_disassemble(VM *vm, Proto *p, FILE *out);

/* ================= module.c ================= */
Module *module_new(VM *vm, Str *name);
/* import name (dotted): returns the module (the top-level one for a.b when
** top is true). Searches next to the importer, GPY_PATH, sys.path, builtins. */
Value vm_import(VM *vm, Str *name, bool top);
/* from .name import x (level 1), from ..name (level 2): name resolved
** against the importer's package (globals' __package__ / __name__). */
Value vm_import_relative(VM *vm, Str *name, int level, Dict *globals);
/* from pkg import sub: imports pkg.sub (full) if pkg has it; else EMPTY. */
Value module_import_submodule(VM *vm, Module *pkg, Str *full);
void module_register_native(VM *vm, const char *name, Module *(*build)(VM *vm));
Source *source_new(VM *vm, Str *filename, const char *text, size_t len);
/* Parses + compiles source; raises SyntaxError on failure. */
Proto *vm_compile_source(VM *vm, Source *src, ParseMode mode);
/* Runs gpy source text into m's namespace (native modules partly written in
** gpy: numba.cuda.random, the ufunc wrappers). */
void module_exec_source(VM *vm, Module *m, const char *filename, const char *text, size_t len);
/* Reads a file into a new Source named filename. Returns NULL with *err set
** to an errno value when the file cannot be read (raises only MemoryError). */
Source *source_from_file(VM *vm, Str *filename, const char *path, int *err);
/* Length of the UTF-8 byte order mark that starts text (3), or 0. A file's
** (or stdin's) text drops it, as CPython's decoding does; exec/eval/compile
** of a str keep it, and the lexer rejects U+FEFF like CPython. */
size_t source_bom_length(const char *text, size_t len);
/* The text of src to compile: a file's without its byte order mark. */
const char *source_code(Source *src, size_t *len);

/* ================= vm.c: the standard streams =================
** vm/ knows no file type (that is stdlib/file.c): it writes to sys.stdout
** and flushes through the stream object's own write() / flush() methods.
** EMPTY (no library opened) means the process's stdout; None, nowhere.
** vm_stream_flush skips a stream whose `closed` is true (as CPython). */
void vm_stream_write(VM *vm, Value stream, Str *s);
void vm_stream_flush(VM *vm, Value stream);

/* Per-type init: fill slots and methods of the core types. Called by vm_new
** after the core type objects and the string/dict machinery exist. */
void str_init(VM *vm);
void list_init(VM *vm);
void tuple_init(VM *vm);
void dict_init(VM *vm);
void set_init(VM *vm);
void range_init(VM *vm);
void slice_init(VM *vm);
void number_init(VM *vm); /* int, float, bool, NoneType, NotImplemented, ellipsis */
void error_init(VM *vm);  /* exception hierarchy */
void module_init(VM *vm);
void bytes_init(VM *vm); /* bytes.c: bytes, bytearray, memoryview */

#endif
