/*
** object.h — every heap object starts with an Obj header; each builtin
** object kind has its struct here so that any part of the VM can read it.
** A Type is itself an object: builtin types and user classes share one
** struct, with C slots that the generic operations in ops.c dispatch on.
*/
#ifndef GPY_OBJECT_H
#define GPY_OBJECT_H

#include "value.h"

typedef struct VM VM;
typedef struct Type Type;
typedef struct Str Str;
typedef struct List List;
typedef struct Tuple Tuple;
typedef struct Dict Dict;
typedef struct Set Set;
typedef struct Proto Proto;
typedef struct Function Function;
typedef struct Generator Generator; /* private to vm/generator.c */
typedef struct Source Source;
typedef struct AstNode AstNode;
typedef struct BufferView BufferView; /* bytes.h: the buffer protocol */

/* Header of every GC object. gc_size is the byte size passed to gc_alloc_obj
** (internal buffers are counted separately by gc_malloc/gc_realloc). */
struct Obj {
    Type *type;
    Obj *gc_next;
    uint32_t gc_size;
    uint8_t marked;
    uint8_t flags; /* per-kind use (e.g. Str: interned) */
    uint16_t reserved;
};

/* ---- operators, shared by the AST, the compiler, the VM and the slots ---- */
typedef enum BinOp {
    BINOP_ADD, BINOP_SUB, BINOP_MUL, BINOP_MATMUL, BINOP_TRUEDIV, BINOP_FLOORDIV,
    BINOP_MOD, BINOP_POW, BINOP_LSHIFT, BINOP_RSHIFT, BINOP_AND, BINOP_OR, BINOP_XOR,
    BINOP__COUNT
} BinOp;

typedef enum UnOp { UNOP_NEG, UNOP_POS, UNOP_INVERT, UNOP_NOT } UnOp;

typedef enum CmpOp {
    CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_IS, CMP_ISNOT, CMP_IN, CMP_NOTIN
} CmpOp;

/* Native (C) function. argv holds argc positional arguments; kwargs is NULL
** when the call passed no keyword arguments. For methods argv[0] is self.
** argv may point into the VM stack: do not keep it across a call back
** into the VM (vm_call), copy what you need first. */
typedef Value (*NativeFn)(VM *vm, int argc, Value *argv, Dict *kwargs);

/* ---- types ---------------------------------------------------------------
** Slot conventions (NULL = the operation is not supported, unless noted):
**  new_      called when the type object is called: int("3"), list(x), MyClass(...)
**  repr/str  return a Str value; str NULL means use repr
**  hash      NULL means identity hash; unhashable types install a slot that raises
**  compare   rich comparison; return EMPTY_VAL for NotImplemented
**  binop     a or b is an instance of this type (check which!); EMPTY_VAL = NotImplemented.
**            In-place operators are tried through inplace first (may be NULL),
**            then through binop.
**  unop      UNOP_NEG/POS/INVERT; EMPTY_VAL = unsupported (NOT never reaches slots)
**  getattr   EMPTY_VAL when the attribute does not exist (caller raises AttributeError)
**  setattr   value EMPTY_VAL means delete; raise on failure
**  iter      return an iterator; next returns false when exhausted
**  getitem/setitem  setitem with value EMPTY_VAL means delete
**  len       NULL: object has no len()
**  contains  NULL: fall back to iteration
**  truthy    NULL: use len if present, else true
**  mark      mark every Value/Obj the object references (GC)
**  finalize  release memory owned by the object (not the object itself)
*/
typedef enum TypeFlags {
    TYPE_HEAP = 1,      /* a class created by a class statement */
    TYPE_BASETYPE = 2,  /* may be subclassed by a class statement */
    TYPE_EXCEPTION = 4, /* BaseException or a subclass: instances are ExcObj */
    TYPE_FOREIGN = 8,   /* a class made by gpy_new_class (api/): GPY_TYPE_FOREIGN */
} TypeFlags;

struct Type {
    Obj obj;
    Str *name;
    const char *cname; /* C name for builtin types, valid before name exists */
    Type *base;        /* single inheritance; NULL only for object */
    Dict *dict;        /* methods and class attributes */
    uint32_t flags;
    uint32_t version;  /* bumped on any change to dict of this type or a base: inline caches */

    Value (*new_)(VM *vm, Type *cls, int argc, Value *argv, Dict *kwargs);
    Value (*repr)(VM *vm, Value self);
    Value (*str)(VM *vm, Value self);
    int64_t (*hash)(VM *vm, Value self);
    Value (*compare)(VM *vm, CmpOp op, Value a, Value b);
    Value (*binop)(VM *vm, BinOp op, Value a, Value b);
    Value (*inplace)(VM *vm, BinOp op, Value a, Value b);
    Value (*unop)(VM *vm, UnOp op, Value a);
    bool (*truthy)(VM *vm, Value self);
    Value (*getattr)(VM *vm, Value self, Str *name);
    void (*setattr)(VM *vm, Value self, Str *name, Value value);
    Value (*call)(VM *vm, Value self, int argc, Value *argv, Dict *kwargs);
    Value (*iter)(VM *vm, Value self);
    bool (*next)(VM *vm, Value self, Value *out);
    Value (*getitem)(VM *vm, Value self, Value key);
    void (*setitem)(VM *vm, Value self, Value key, Value value);
    int64_t (*len)(VM *vm, Value self);
    bool (*contains)(VM *vm, Value self, Value item);
    void (*mark)(VM *vm, Obj *self);
    void (*finalize)(VM *vm, Obj *self);
    Tuple *mro;   /* heap classes: the C3 method resolution order (self first); NULL: the base chain */
    Tuple *bases; /* heap classes: the bases as written; NULL: (base,) */
    /* buffer protocol (bytes.h): fills *view; NULL = no buffer */
    void (*getbuffer)(VM *vm, Value self, BufferView *view);
};

/* ---- strings: immutable UTF-8; hash computed at creation ---- */
#define STR_FLAG_INTERNED 1
struct Str {
    Obj obj;
    int64_t hash;
    int64_t len;    /* bytes, excluding the terminating NUL */
    int64_t nchars; /* code points */
    bool ascii;     /* len == nchars: O(1) indexing */
    char chars[];   /* NUL-terminated */
};

struct List {
    Obj obj;
    Value *items;
    int64_t len, cap;
};

struct Tuple {
    Obj obj;
    int64_t len;
    Value items[];
};

/* Insertion-ordered hash table (CPython's compact layout): entries in
** insertion order, an index table of positions. A deleted entry has key EMPTY. */
typedef struct DictEntry {
    Value key;
    Value value;
    int64_t hash;
} DictEntry;

struct Dict {
    Obj obj;
    DictEntry *entries;
    int64_t nentries;   /* used slots in entries, deleted ones included */
    int64_t entries_cap;
    int64_t *index;     /* -1 empty, -2 deleted, else position in entries */
    int64_t index_cap;  /* power of two */
    int64_t count;      /* live keys */
    uint64_t version;   /* bumped on every insert/delete (inline caches) */
};

/* Open-addressing set with CPython's probing, so that iteration order of
** sets of ints matches CPython's. key EMPTY = free slot, aux=1 on EMPTY = dummy. */
typedef struct SetEntry {
    Value key;
    int64_t hash;
} SetEntry;

struct Set {
    Obj obj;
    SetEntry *table;
    int64_t mask; /* table size - 1 */
    int64_t fill; /* live + dummy */
    int64_t used; /* live */
    int64_t finger;
};

typedef struct Range {
    Obj obj;
    int64_t start, stop, step;
    struct Tuple *big; /* (start, stop, step) when one is past 64 bits (range_big.c), else NULL */
} Range;

/* Iterators the interpreter's FOR_ITER fast-paths (types t_range_iter,
** t_list_iter in VM). */
typedef struct RangeIter {
    Obj obj;
    int64_t next, stop, step;
} RangeIter;

typedef struct SeqIter { /* list and tuple iterators */
    Obj obj;
    Value seq;
    int64_t index;
} SeqIter;

typedef struct Slice {
    Obj obj;
    Value start, stop, step; /* None when omitted */
} Slice;

typedef struct Cell {
    Obj obj;
    Value value; /* EMPTY while unbound */
} Cell;

/* A method of a builtin type made by type_add_method has obj.flags
** NATIVE_FLAG_METHOD and data = the Type it belongs to. Natives may assume
** argv[0] is an instance of that type, so the CALL PATH MUST CHECK IT:
** when the flag is set, call native_check_self(vm, nf, argc, argv) before
** invoking fn (TypeError "descriptor 'append' for 'list' objects doesn't
** apply to a 'int' object"), because T.method(x, ...) reaches the native
** unbound with any x. Other natives (module functions, plain native_new)
** do not have the flag. */
#define NATIVE_FLAG_METHOD 1
typedef struct NativeFunction {
    Obj obj;
    const char *name;
    NativeFn fn;
    Value data; /* free for the native's use (e.g. a module's state object); EMPTY if unused */
} NativeFunction;

typedef struct BoundMethod {
    Obj obj;
    Value self;
    Value func;
} BoundMethod;

/* staticmethod / classmethod / property wrappers */
typedef struct Wrapper {
    Obj obj;
    Value func;  /* for property: the getter */
    Value fset;  /* property only */
    Value fdel;  /* property only */
} Wrapper;

/* Instances of user classes. */
typedef struct Instance {
    Obj obj;
    Dict *dict;
} Instance;

/* One traceback line: the function's code and the instruction offset. */
typedef struct TraceEntry {
    Proto *proto;
    int32_t line, col;
} TraceEntry;

/* Instances of BaseException and its subclasses (builtin or user). Starts
** like Instance so attribute code treats both alike. */
typedef struct ExcObj {
    Obj obj;
    Dict *dict;
    Tuple *args;
    Value cause;    /* __cause__ (None if unset) */
    Value context;  /* __context__ (None if unset) */
    bool suppress_context;
    TraceEntry *tb; /* innermost first, appended while unwinding */
    int32_t tb_len, tb_cap;
} ExcObj;

typedef struct Module {
    Obj obj;
    Str *name;
    Dict *dict;
    Str *file;            /* NULL for builtin modules */
    void *cstate;         /* C module state, or NULL */
    void (*cstate_free)(void *cstate);
} Module;

/* Source text of one file / -c string / REPL entry, plus the arena holding
** its AST. Functions keep their Proto, protos keep their Source, so the AST
** stays alive as long as any function defined in it (kernels compile from it). */
typedef struct Arena Arena;
struct Source {
    Obj obj;
    Str *filename;
    char *text; /* NUL-terminated copy */
    size_t len;
    Arena *arena;
};
/* Source.obj.flags bit: library code whose frames tracebacks leave out, as
** CPython's tracebacks show no frames of its C-implemented modules (the
** warnings module). Bit 1 is module.c's SOURCE_FROM_FILE. */
#define SOURCE_HIDDEN_FRAMES 2
/* Source.obj.flags bit: an entry typed at the terminal prompt, whose lines
** tracebacks show although its name is "<stdin>" */
#define SOURCE_PROMPT_ENTRY 4
/* Source.obj.flags bit: compiled under `from __future__ import annotations`
** (annotations are kept as their source text, never evaluated). */
#define SOURCE_FUTURE_ANNOTATIONS 4

/* Exception handler table entry: an exception raised at an instruction
** in [start, end) jumps to target with the exception object in reg. Entries
** are ordered innermost first; the first match wins. */
typedef struct Handler {
    uint32_t start, end, target;
    uint32_t reg;
} Handler;

/* How a nested function's free variable is found when MAKE_FUNCTION runs:
** from a register of the enclosing frame (holding a Cell) or from the
** enclosing function's own free variables. */
typedef struct FreeVarDesc {
    uint8_t from_parent_free; /* 0: parent register; 1: parent free index */
    uint16_t index;
} FreeVarDesc;

typedef enum ProtoFlags {
    PROTO_VARARGS = 1,   /* has *args (its register follows the kw-only params) */
    PROTO_VARKW = 2,     /* has **kwargs (its register follows *args, or kw-only params) */
    PROTO_GENERATOR = 4, /* contains yield: calling it makes a generator */
    PROTO_MODULE = 8,    /* module body: names are globals */
    PROTO_CLASS = 16,    /* class body: LOAD_NAME/STORE_NAME use frame->locals */
    PROTO_LAMBDA = 32,
    PROTO_COROUTINE = 64,  /* async def (with PROTO_GENERATOR): calling it makes a coroutine */
    PROTO_ASYNC_GEN = 128, /* async def with yield (with PROTO_GENERATOR): an async generator */
} ProtoFlags;

/* Compiled code of one module body, class body, def, lambda or comprehension. */
struct Proto {
    Obj obj;
    Str *name;      /* "f", "<lambda>", "<module>", "<listcomp>", class name */
    Str *qualname;  /* "C.f", "f.<locals>.g" */
    Source *source;
    AstNode *ast;   /* the def/lambda/module node (for kernels, inspect) */
    uint32_t *code;
    int32_t ncode;
    Value *consts;  /* constants: ints, floats, Strs, Tuples of Strs (kw names), nested Protos */
    int32_t nconsts;
    int32_t nregs;  /* registers needed by a frame (locals first, then temporaries) */
    int32_t nparams;  /* positional parameters (registers 0..nparams-1) */
    int32_t nkwonly;  /* keyword-only parameters (registers nparams..nparams+nkwonly-1) */
    int32_t flags;    /* ProtoFlags */
    int32_t nlocals;  /* named locals; varnames[i] names register i */
    Str **varnames;
    int32_t *cell_regs;   /* registers that hold Cells (captured locals), created at entry */
    int32_t ncells;
    FreeVarDesc *freevars; /* how MAKE_FUNCTION fills this proto's closure */
    Str **freenames;       /* names of free variables, for errors */
    int32_t nfree;
    Handler *handlers;
    int32_t nhandlers;
    int32_t *lines;        /* source line of each instruction */
    int32_t *cols;         /* source column (1-based) of each instruction */
    int32_t firstline;
    void *caches;          /* interpreter-owned inline caches (lazily allocated) */
};

struct Function {
    Obj obj;
    Proto *proto;
    Dict *globals;
    Tuple *defaults;   /* defaults of the last positional parameters, or NULL */
    Dict *kwdefaults;  /* defaults of keyword-only parameters, or NULL */
    Dict *dict;        /* function attributes, NULL until set */
    Str *name;
    Str *qualname;
    Value module;      /* __module__ name (Str) */
    int32_t nfree;
    Cell *free[];      /* closure cells */
};

/* Prototypes of the per-kind APIs live in their own headers:
** str.h list.h tuple.h dict.h set.h ... all gathered in vm.h. */

#endif
