/*
** ast.h — the syntax tree. Nodes live in an Arena owned by a Source, so the
** tree outlives parsing: the bytecode compiler reads it once, the kernel
** compiler reads it again at a kernel's first launch.
**
** Positions: line and col are 1-based; col counts bytes from the start of
** the line (CPython counts the same way for its carets).
*/
#ifndef GPY_AST_H
#define GPY_AST_H

#include <stdio.h>

#include "object.h"

typedef struct AstList {
    AstNode **items;
    int len;
} AstList;

typedef enum AstKind {
    /* expressions */
    AST_NAME,        /* u.name */
    AST_INT,         /* u.int_ */
    AST_FLOAT,       /* u.float_ */
    AST_IMAG,        /* u.float_: complex literal 1j (rejected by the compiler) */
    AST_STR,         /* u.str (adjacent literals already joined) */
    AST_BYTES,       /* u.str: b'...' (rejected by the compiler) */
    AST_NONE, AST_TRUE, AST_FALSE, AST_ELLIPSIS,
    AST_FSTRING,     /* u.fstring.parts: AST_STR and AST_FORMATTED nodes */
    AST_FORMATTED,   /* u.formatted: {value!conv:spec} */
    AST_BINOP,       /* u.binop */
    AST_UNARYOP,     /* u.unary */
    AST_BOOLOP,      /* u.boolop: values, is_and */
    AST_COMPARE,     /* u.compare: left op0 c0 op1 c1 ... */
    AST_CALL,        /* u.call */
    AST_ATTRIBUTE,   /* u.attr */
    AST_SUBSCRIPT,   /* u.subscript: value[index]; a[1, 2] has an AST_TUPLE index */
    AST_SLICE,       /* u.slice: lower:upper:step, each may be NULL */
    AST_LIST, AST_TUPLE, AST_SET, /* u.seq.elts (may contain AST_STARRED) */
    AST_DICT,        /* u.dict: keys[i] NULL means **values[i] */
    AST_STARRED,     /* u.starred.value */
    AST_LISTCOMP, AST_SETCOMP, AST_GENEXP, AST_DICTCOMP, /* u.comp */
    AST_LAMBDA,      /* u.func (name "<lambda>", body = one AST_RETURN) */
    AST_IFEXP,       /* u.ifexp */
    AST_YIELD,       /* u.yield.value may be NULL */
    AST_YIELDFROM,   /* u.yield.value */
    AST_NAMEDEXPR,   /* u.named: target := value */
    AST_AWAIT,       /* u.yield.value */

    /* statements */
    AST_MODULE,      /* u.module.body */
    AST_EXPR,        /* u.expr.value */
    AST_ASSIGN,      /* u.assign: t1 = t2 = value */
    AST_AUGASSIGN,   /* u.augassign */
    AST_ANNASSIGN,   /* u.annassign: target: annotation [= value] */
    AST_IF,          /* u.if_ */
    AST_WHILE,       /* u.while_ */
    AST_FOR,         /* u.for_ */
    AST_BREAK, AST_CONTINUE, AST_PASS,
    AST_RETURN,      /* u.ret.value may be NULL */
    AST_FUNCTIONDEF, /* u.func */
    AST_CLASSDEF,    /* u.cls */
    AST_TRY,         /* u.try_ */
    AST_EXCEPTHANDLER, /* u.handler */
    AST_RAISE,       /* u.raise */
    AST_WITH,        /* u.with */
    AST_ASSERT,      /* u.assert_ */
    AST_DELETE,      /* u.del.targets */
    AST_GLOBAL, AST_NONLOCAL, /* u.names */
    AST_IMPORT,      /* u.import: names of AST_ALIAS */
    AST_IMPORTFROM,  /* u.import: module, names (one alias "*" for star), level */
    AST_ALIAS,       /* u.alias */
    AST_KEYWORD,     /* u.keyword: name NULL means **value */
    AST_COMPREHENSION, /* u.compfor: for target in iter if ... */
    AST_WITHITEM,    /* u.withitem */
    AST_BIGINT,      /* u.str: raw text of an int literal that does not fit in int64 */

    /* match statements (3.10+): the statement, its cases, then the patterns */
    AST_MATCH,           /* u.match: match subject: cases (AST_MATCH_CASE) */
    AST_MATCH_CASE,      /* u.match_case: case pattern [if guard]: body */
    AST_MATCH_VALUE,     /* u.pat_value: a literal, -1, 1+2j, or a dotted name; compared with == */
    AST_MATCH_SINGLETON, /* u.pat_value: None, True or False; compared with is */
    AST_MATCH_SEQUENCE,  /* u.pat_seq: [p, *rest, q] or (p, q) */
    AST_MATCH_MAPPING,   /* u.pat_map: {key: p, **rest} */
    AST_MATCH_CLASS,     /* u.pat_class: cls(p, attr=q) */
    AST_MATCH_STAR,      /* u.pat_as: *name in a sequence pattern (name NULL for *_) */
    AST_MATCH_AS,        /* u.pat_as: pattern as name; pattern NULL: a capture, or the wildcard _ (name NULL) */
    AST_MATCH_OR,        /* u.pat_seq: p | q | ... */
    AST__COUNT
} AstKind;

/* One parameter of a def or lambda. */
typedef struct AstParam {
    const char *name;
    AstNode *default_;    /* NULL if none */
    AstNode *annotation;  /* NULL if none (ignored by the bytecode compiler) */
    int line, col;
} AstParam;

/* Parameters: params[0..nparams) are positional (posonly ones first, ending at
** nposonly), then params[nparams..nparams+nkwonly) keyword-only. */
typedef struct AstParams {
    AstParam *params;
    int nparams;
    int nposonly;
    int nkwonly;
    AstParam *vararg; /* *args, or NULL */
    AstParam *kwarg;  /* **kwargs, or NULL */
} AstParams;

struct AstNode {
    AstKind kind;
    int line, col;         /* start */
    int end_line, end_col; /* one past the end */
    union {
        struct { const char *id; } name;
        int64_t int_;
        double float_;
        struct { const char *s; size_t len; } str;
        struct { AstList parts; } fstring;
        struct { AstNode *value; char conversion; /* 0, 's', 'r', 'a' */ AstNode *spec; /* AST_FSTRING or NULL */ } formatted;
        struct { BinOp op; AstNode *left, *right; } binop;
        struct { UnOp op; AstNode *operand; } unary;
        struct { bool is_and; AstList values; } boolop;
        struct { AstNode *left; CmpOp *ops; AstList comparators; } compare;
        struct { AstNode *func; AstList args; AstList keywords; } call;
        struct { AstNode *value; const char *attr; } attr;
        struct { AstNode *value, *index; } subscript;
        struct { AstNode *lower, *upper, *step; } slice;
        struct { AstList elts; } seq;
        struct { AstList keys; AstList values; } dict;
        struct { AstNode *value; } starred;
        struct { AstNode *elt; AstNode *value; /* DICTCOMP: elt is the key */ AstList generators; } comp;
        struct { AstNode *test, *body, *orelse; } ifexp;
        struct { AstNode *value; } yield;
        struct { AstNode *target, *value; } named;

        struct { AstList body; int future_flags; /* FUTURE_* of future.h, set by the compiler */ } module;
        struct { AstNode *value; } expr;
        struct { AstList targets; AstNode *value; } assign;
        struct { AstNode *target; BinOp op; AstNode *value; } augassign;
        struct { AstNode *target, *annotation, *value; bool simple; } annassign;
        struct { AstNode *test; AstList body, orelse; } if_;
        struct { AstNode *test; AstList body, orelse; } while_;
        struct { AstNode *target, *iter; AstList body, orelse; bool is_async; } for_;
        struct { AstNode *value; } ret;
        struct {
            const char *name;
            AstParams params;
            AstList body;          /* lambda: one AST_RETURN */
            AstList decorators;
            AstNode *returns;      /* annotation or NULL */
            bool is_lambda;
            bool is_async;         /* async def */
        } func;
        struct {
            const char *name;
            AstList bases;
            AstList keywords;
            AstList body;
            AstList decorators;
        } cls;
        struct { AstList body; AstList handlers; AstList orelse; AstList finalbody; } try_;
        struct { AstNode *type; const char *name; AstList body; } handler;
        struct { AstNode *exc, *cause; } raise;
        struct { AstList items; AstList body; bool is_async; } with;
        struct { AstNode *test, *msg; } assert_;
        struct { AstList targets; } del;
        struct { const char **names; int len; } names;
        struct { const char *module; AstList names; int level; } import;
        struct { const char *name; const char *asname; } alias;
        struct { const char *name; AstNode *value; } keyword;
        struct { AstNode *target, *iter; AstList ifs; bool is_async; } compfor;
        struct { AstNode *context, *vars; } withitem;

        struct { AstNode *subject; AstList cases; } match;
        struct { AstNode *pattern, *guard; AstList body; } match_case;
        struct { AstNode *value; } pat_value;
        struct { AstList patterns; } pat_seq;
        struct { AstList keys, patterns; const char *rest; /* NULL if none */ } pat_map;
        struct {
            AstNode *cls;           /* AST_NAME or AST_ATTRIBUTE */
            AstList patterns;       /* positional */
            const char **kwd_attrs; /* kwd_patterns.len names */
            AstList kwd_patterns;
        } pat_class;
        struct { AstNode *pattern; const char *name; } pat_as;
    } u;
};

/* Name of a node kind, for debugging output. */
const char *ast_kind_name(AstKind k);
/* Prints the tree as an indented s-expression (gpy --ast). */
void ast_dump(AstNode *n, FILE *out);

#endif
