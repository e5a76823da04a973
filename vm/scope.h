/*
** scope.h — private to scope.c and compiler.c. The scope pass walks the AST
** once, builds one Scope per module / def / lambda / class body /
** comprehension, and resolves every name (Python 3.11's symtable rules):
** local register, cell register, closure slot, global, or class namespace.
*/
#ifndef GPY_SCOPE_H
#define GPY_SCOPE_H

#include "ast.h"
#include "vm.h"

typedef enum ScopeKind {
    SCOPE_MODULE,
    SCOPE_FUNCTION,      /* def and lambda */
    SCOPE_CLASS,
    SCOPE_COMPREHENSION, /* list/set/dict comprehension, generator expression */
} ScopeKind;

/* How the compiler reaches a name. */
typedef enum SymKind {
    SYM_GLOBAL, /* LOAD_GLOBAL / STORE_GLOBAL (module names, declared or implicit globals) */
    SYM_NAME,   /* class body namespace: LOAD_NAME / STORE_NAME */
    SYM_LOCAL,  /* plain register */
    SYM_CELL,   /* register holding a Cell (captured by an inner function) */
    SYM_FREE,   /* closure slot fn->free[index] */
    SYM_WIDE,   /* local index >= REG_LOCALS: register index + WIDE_SHIFT, via LOAD_WIDE/STORE_WIDE (set by the compiler) */
} SymKind;

/* Flags collected while walking. */
enum {
    DEF_ASSIGNED = 1,  /* bound here: assignment, def, import, for, del, except-as ... */
    DEF_PARAM = 2,
    DEF_USED = 4,
    DEF_GLOBAL = 8,    /* 'global' statement (or walrus in a module-level comprehension) */
    DEF_NONLOCAL = 16, /* 'nonlocal' statement (or walrus in a comprehension) */
    DEF_COMP_ITER = 32, /* iteration variable of a comprehension */
    DEF_IMPORT = 64,    /* bound by an import (a later global/nonlocal declaration is allowed) */
    DEF_ANNOT = 128     /* annotated "x: T" (a later global/nonlocal declaration is an error) */
};

typedef struct Symbol {
    const char *name;
    uint32_t hash;
    int flags;
    SymKind kind;
    int index;      /* SYM_LOCAL/SYM_CELL: register; SYM_FREE: closure slot */
    int free_index; /* slot in the scope's freevars (SYM_FREE, or a class name also passed through), else -1 */
    int line, col, end_line, end_col; /* where a nonlocal declaration was made (errors) */
} Symbol;

typedef struct Scope Scope;
struct Scope {
    ScopeKind kind;
    AstNode *node; /* module, FUNCTIONDEF/LAMBDA, CLASSDEF, or the comprehension node */
    const char *name;
    Scope *parent;
    Scope **children;
    int nchildren, capchildren;
    int child_cursor; /* compiler's guess of the next child */

    Symbol *syms; /* in order of first appearance; parameters first */
    int nsyms, capsyms;
    int *table; /* open-addressing index into syms, -1 empty */
    int tablecap;

    /* Result of the analysis. */
    const char **varnames; /* register i is named varnames[i], i < nlocals */
    int nlocals;
    int *cells; /* registers holding Cells */
    int ncells;
    const char **freevars; /* closure slot i is freevars[i] */
    int nfree;
    int nparams, nkwonly;
    bool varargs, varkw;
    bool generator;
    bool has_walrus; /* a := directly in this scope binds one of its names */
    bool class_cell; /* class body owns the __class__ cell (register 0) */
    bool coroutine;  /* async def, or a comprehension with await / async for:
                      * with generator set, an async generator */

    char **owned; /* strings made by the pass (root scope only), freed with it */
    int nowned;

    /* walker state */
    int comp_iter_expr;
    int comp_iter_target;
};

/* Builds and analyses the scopes of a module. Returns NULL with *err set on
** the first error. vm is used only to raise MemoryError. */
Scope *scope_build(VM *vm, AstNode *module, SyntaxErr *err);
void scope_free(Scope *s);
Symbol *scope_lookup(Scope *s, const char *name);
/* The child scope created for node (a def, lambda, class or comprehension). */
Scope *scope_child(Scope *s, AstNode *node);
/* realloc that raises MemoryError on failure. */
void *comp_xrealloc(VM *vm, void *p, size_t size);

#endif
