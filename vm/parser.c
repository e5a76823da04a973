/*
** parser.c — recursive descent parser for Python 3.11 syntax, producing the
** AST of ast.h in an Arena.
**
** The token array is built up front (lexer.c), so lookahead is free. Errors
** longjmp to parse_source (the parser owns no memory that a jump could
** leak: lists are built on a scratch stack owned by the Parser, nodes live in
** the arena). Only the first error is reported, chosen the way CPython 3.11
** chooses it, with its wording and location:
**  - a hard tokenizer error (bad character, bad literal, unmatched bracket)
**    anywhere in the file wins over any parser error except "unexpected
**    indent/unindent"; a soft one (an indentation mismatch) is reported only
**    if the parser gets that far;
**  - a generic "invalid syntax" points at the furthest token read; the
**    custom messages of CPython's second pass (its invalid_* rules) are
**    checked here where parsing would fail, some with a speculative parse
**    (try_parse) standing in for PEG backtracking;
**  - errors CPython only finds in its compiler (misused starred targets,
**    repeated keywords, ...) and constructs gpy refuses (except*)
**    are "late": reported only if the whole source parses.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstack.h"
#include "lexer.h"
#include "unicode_names.h"

/* Both limits are placed where CPython 3.11 fails on nested unary operators
** in a statement: its parser stack (MAXSTACK) overflows with a MemoryError,
** its compiler gives RecursionError "during compilation". */
#define MAX_DEPTH 5968     /* parser recursion units */
#define MAX_AST_DEPTH 2992 /* deepest tree the later passes must recurse through */
#define MAX_BLOCKS 20      /* CPython's CO_MAXBLOCKS */
#define MAX_SUBLEX 64      /* live f-string field token arrays */

/* target contexts for validation */
enum { TGT_STAR, TGT_FOR, TGT_DEL };

typedef struct Parser {
    Arena *arena;
    const char *filename;
    ParseMode mode;
    SyntaxErr *err;
    jmp_buf *jb;
    jmp_buf *top_jb; /* parse_source's: anything else is a speculative parse */
    bool no_invalid; /* speculative parse: no custom diagnostics */

    /* current token stream (the file, or one f-string field) */
    Token *toks;
    int ntoks, pos, maxpeek;
    int far; /* furthest token read outside speculative parses (CPython's
             ** first pass): where a generic "invalid syntax" points */
    Token *eofparen; /* main stream's "'(' was never closed" token, or NULL */
    Token *harderr;  /* main stream's hard tokenizer error token, or NULL */
    int fstring;     /* >0 while parsing inside an f-string field */

    int depth;  /* recursion units used (MAX_DEPTH) */
    int blocks; /* loop/try/with blocks open in the current function */

    void **stk; /* scratch stack for building lists */
    int nstk, capstk;
    const char *text;   /* the source (for error underlines) */
    size_t textlen;
    char *buf;  /* string literal decoding buffer */
    size_t nbuf, capbuf;
    Token *subtoks[MAX_SUBLEX]; /* token arrays of f-string fields being parsed */
    int nsub;
    AstNode *last_bare; /* the last tuple built without brackets */
    Token *main_toks;   /* the file's token stream */
    int main_ntoks;
    int main_maxpeek;   /* maxpeek of the file's stream while in an f-string field */
    int fs_line, fs_col; /* start of the innermost f-string field expression */
    bool failing;        /* set by fail() for report(): a generic "invalid syntax" */
    bool has_late;       /* a compile-time style error was found (reported at the end) */
    SyntaxErr late;
    int err_kind;        /* ERR_* of the error being raised (for try_parse) */
} Parser;

/* How an error came about, which decides whether it escapes a speculative
** parse: tokenizer errors always do (CPython raises them when the token is
** read), custom diagnostics when the speculation runs with them enabled,
** generic failures never (the speculation just does not match). */
enum { ERR_GENERIC, ERR_CUSTOM, ERR_TOKEN };

static AstNode *parse_expression(Parser *p);
static AstNode *parse_named_expression(Parser *p, bool check_eq);
static AstNode *parse_star_expressions(Parser *p);
static AstNode *parse_bitor(Parser *p);
static AstNode *parse_disjunction(Parser *p);
static AstNode *parse_yield_expr(Parser *p);
static AstNode *parse_strings(Parser *p);
static void parse_statement(Parser *p);
static AstList parse_block(Parser *p, const char *what, int line);
static const char *expr_name(AstNode *e);

/* ------------------------------------------------------------- errors */

static _Noreturn void bail(Parser *p) {
    longjmp(*p->jb, 1);
}

/* Length of line `line` of the source (without its newline). */
static int line_length(Parser *p, int line) {
    const char *s = p->text, *end = p->text + p->textlen;
    for (int l = 1; l < line && s < end; s++) {
        if (*s == '\n' || (*s == '\r' && !(s + 1 < end && s[1] == '\n'))) l++;
    }
    const char *e = s;
    while (e < end && *e != '\n' && *e != '\r') e++;
    return (int)(e - s);
}

/* Converts a 1-based byte column on `line` to CPython's 1-based character
** column (its SyntaxError offsets count code points). */
static int char_col(Parser *p, int line, int col) {
    if (col <= 1) return col;
    const char *s = p->text, *end = p->text + p->textlen;
    for (int l = 1; l < line && s < end; s++) {
        if (*s == '\n' || (*s == '\r' && !(s + 1 < end && s[1] == '\n'))) l++;
    }
    int chars = 0;
    for (int i = 0; i < col - 1 && s + i < end; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) chars++;
    return chars + 1;
}

/* end_col -1 marks a range that continues on a later line: CPython then
** underlines to the end of the first line. */
static int end_of_range(Parser *p, int line, int col, int end_col) {
    if (end_col != -1) return end_col;
    int n = line_length(p, line) + 1;
    return n > col ? n : 0;
}

/* Final columns of an error in the file: ranges resolved, in characters. */
static void set_cols(Parser *p, SyntaxErr *e, int line, int col, int end_col) {
    end_col = end_of_range(p, line, col, end_col);
    e->col = col < 0 ? 0 : char_col(p, line, col);
    e->end_col = end_col <= 0 ? 0 : char_col(p, line, end_col);
}

static void fill(Parser *p, int line, int col, int end_col, bool indent, const char *msg) {
    SyntaxErr *e = p->err;
    e->line = line;
    set_cols(p, e, line, col, end_col);
    e->indentation = indent;
    if (p->fstring && strncmp(msg, "f-string", 8) != 0) {
        snprintf(e->msg, sizeof e->msg, "f-string: %s", msg);
        /* CPython 3.11 parses "(expr)" on its own: columns on the field's
        ** first line are relative to that text */
        if (line == p->fs_line && col > p->fs_col) {
            e->col = col - p->fs_col + 1;
            e->end_col = end_col > p->fs_col ? end_col - p->fs_col + 1 : 0;
        } else if (end_col < 0) {
            e->end_col = 0;
        }
    } else {
        snprintf(e->msg, sizeof e->msg, "%s", msg);
    }
}

/* Reports a tokenizer error token (the lexer stopped there). */
static _Noreturn void report_errtok(Parser *p, Token *t) {
    p->failing = false;
    p->err_kind = ERR_TOKEN;
    if (t == p->harderr || t == p->eofparen) p->fstring = 0; /* the file's, not a field's */
    fill(p, t->line, TOK_ERR_COL(t), TOK_ERR_END(t), (t->flags & LEXF_INDENTERR) != 0, t->v.msg);
    bail(p);
}

/* Central error exit. CPython gives priority to tokenizer errors the parser
** has already looked at, and to an unclosed bracket opened on an earlier
** line than the error. */
static _Noreturn void report(Parser *p, int line, int col, int end_col, bool indent, const char *msg) {
    bool generic = p->failing;
    p->failing = false;
    Token *last = &p->toks[p->ntoks - 1];
    if (last->kind == TK_ERROR && p->maxpeek >= p->ntoks - 1) report_errtok(p, last);
    p->err_kind = generic ? ERR_GENERIC : ERR_CUSTOM;
    bool speculating = p->jb != p->top_jb;
    /* CPython then tokenizes the rest of the file: a hard tokenizer error
    ** anywhere wins, except over "unexpected indent/unindent" (and a
    ** speculative parse that merely does not match is no error yet) */
    bool exempt = generic && (indent || speculating);
    if (p->harderr && !exempt) report_errtok(p, p->harderr);
    int far = p->fstring ? p->main_maxpeek : p->maxpeek;
    if (far >= p->main_ntoks) far = p->main_ntoks - 1;
    if (p->eofparen && !exempt &&
        (p->eofparen->line < line || p->eofparen->line < p->main_toks[far].line)) {
        Token *t = p->eofparen;
        p->err_kind = ERR_TOKEN;
        p->fstring = 0; /* restored by try_parse if speculative */
        fill(p, t->line, TOK_ERR_COL(t), TOK_ERR_END(t), false, t->v.msg);
        bail(p);
    }
    fill(p, line, col, end_col, indent, msg);
    bail(p);
}

static _Noreturn void reportf(Parser *p, int line, int col, int end_col, bool indent, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    report(p, line, col, end_col, indent, msg);
}

/* 1-based error columns CPython reports for token t (layout tokens have no
** extent there: it reports where its tokenizer stood). */
static int tok_col(Token *t) {
    if (t->kind == TK_INDENT || t->kind == TK_DEDENT) return t->col;
    if (t->kind == TK_ENDMARKER && (t->flags & LEXF_FILEEND)) return t->end_col; /* the file's end */
    return t->col + 1;
}

static int tok_line(Token *t) {
    return t->kind == TK_ENDMARKER && (t->flags & LEXF_FILEEND) ? t->end_line : t->line;
}

static int tok_end(Token *t) {
    if (t->kind == TK_INDENT || t->kind == TK_DEDENT || (t->kind == TK_ENDMARKER && (t->flags & LEXF_FILEEND))) return 0;
    if (t->kind == TK_ENDMARKER) return t->col + 2; /* an f-string field's end: CPython's ')' of "(expr)" */
    return t->end_line == t->line ? t->end_col + 1 : -1;
}

/* Error spanning token t. */
#define RAISE_TOK(p, t, ...) reportf((p), tok_line(t), tok_col(t), tok_end(t), false, __VA_ARGS__)

/* Records an error that CPython finds only after parsing (in its compiler),
** or a construct gpy refuses: parsing goes on, and it is reported only if
** the whole source parses (a real syntax error anywhere wins, as there). */
static void late_error(Parser *p, int line, int col, int end_col, const char *fmt, ...) {
    if (p->has_late) return;
    p->has_late = true;
    SyntaxErr *e = &p->late;
    e->line = line;
    set_cols(p, e, line, col, end_col);
    e->indentation = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

#define LATE_TOK(p, t, ...) late_error((p), tok_line(t), tok_col(t), tok_end(t), __VA_ARGS__)
#define LATE_NODE(p, n, ...) \
    late_error((p), (n)->line, (n)->col, (n)->end_line == (n)->line ? (n)->end_col : -1, __VA_ARGS__)
/* Error spanning node n. */
#define RAISE_NODE(p, n, ...) \
    reportf((p), (n)->line, (n)->col, (n)->end_line == (n)->line ? (n)->end_col : -1, false, __VA_ARGS__)
/* Error from the start of node a to the end of node b. */
#define RAISE_RANGE(p, a, b, ...) \
    reportf((p), (a)->line, (a)->col, (b)->end_line == (a)->line ? (b)->end_col : -1, false, __VA_ARGS__)

static Token *peek(Parser *p);

/* The generic "invalid syntax" at the current token. */
static _Noreturn void fail(Parser *p) {
    Token *t = peek(p);
    if (p->far > p->pos && p->jb == p->top_jb) t = &p->toks[p->far]; /* CPython's last token read */
    if (t->kind == TK_ERROR) report_errtok(p, t);
    p->failing = true;
    if (t->kind == TK_INDENT) report(p, t->line, t->col, 0, true, "unexpected indent");
    if (t->kind == TK_DEDENT) report(p, t->line, t->col, 0, true, "unexpected unindent");
    if (t->kind == TK_ENDMARKER && (t->flags & LEXF_FILEEND)) report(p, t->line, 0, 0, false, "invalid syntax");
    RAISE_TOK(p, t, "invalid syntax");
}

static _Noreturn void oom(Parser *p) {
    Token *t = &p->toks[p->pos];
    p->err_kind = ERR_TOKEN;
    fill(p, t->line, t->col + 1, 0, false, "out of memory");
    bail(p);
}

/* ------------------------------------------------------------- tokens */

static Token *peek(Parser *p) {
    if (p->pos > p->maxpeek) p->maxpeek = p->pos;
    if (p->pos > p->far && p->jb == p->top_jb) p->far = p->pos;
    return &p->toks[p->pos];
}

static Token *peek_at(Parser *p, int n) {
    int i = p->pos + n;
    if (i >= p->ntoks) i = p->ntoks - 1;
    if (i > p->maxpeek) p->maxpeek = i;
    if (i > p->far && p->jb == p->top_jb) p->far = i;
    return &p->toks[i];
}

static int kind(Parser *p) {
    return peek(p)->kind;
}

static Token *advance(Parser *p) {
    Token *t = peek(p);
    if (t->kind != TK_ENDMARKER && t->kind != TK_ERROR) p->pos++;
    return t;
}

static bool accept(Parser *p, int k) {
    if (kind(p) != k) return false;
    advance(p);
    return true;
}

static Token *expect(Parser *p, int k) {
    if (kind(p) != k) fail(p);
    return advance(p);
}

static Token *prev(Parser *p) {
    return &p->toks[p->pos > 0 ? p->pos - 1 : 0];
}

/* At 'for' or 'async for' (a comprehension clause). */
static bool at_comp_for(Parser *p) {
    return kind(p) == TK_FOR || (kind(p) == TK_ASYNC && peek_at(p, 1)->kind == TK_FOR);
}

/* Tokens that can begin an expression. */
static bool starts_expr(int k) {
    switch (k) {
    case TK_NAME: case TK_INT: case TK_FLOAT: case TK_IMAG: case TK_STRING:
    case TK_LPAR: case TK_LSQB: case TK_LBRACE: case TK_MINUS: case TK_PLUS:
    case TK_TILDE: case TK_NOT: case TK_LAMBDA: case TK_AWAIT: case TK_NONE:
    case TK_TRUE: case TK_FALSE: case TK_ELLIPSIS:
        return true;
    default:
        return false;
    }
}

/* ------------------------------------------------------ memory helpers */

static void *alloc(Parser *p, size_t n) {
    void *m = arena_alloc(p->arena, n);
    if (!m) oom(p);
    return m;
}

static const char *copy_str(Parser *p, const char *s, size_t n) {
    char *d = alloc(p, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static void spush(Parser *p, void *x) {
    if (p->nstk == p->capstk) {
        int ncap = p->capstk ? p->capstk * 2 : 256;
        void **n = realloc(p->stk, (size_t)ncap * sizeof(void *));
        if (!n) oom(p);
        p->stk = n;
        p->capstk = ncap;
    }
    p->stk[p->nstk++] = x;
}

/* Pops the scratch items pushed since mark into an arena list. */
static AstList spop_list(Parser *p, int mark) {
    AstList l = {NULL, 0};
    int n = p->nstk - mark;
    if (n > 0) {
        l.items = alloc(p, (size_t)n * sizeof(AstNode *));
        memcpy(l.items, p->stk + mark, (size_t)n * sizeof(AstNode *));
        l.len = n;
    }
    p->nstk = mark;
    return l;
}

static void buf_add(Parser *p, const char *s, size_t n) {
    if (p->nbuf + n + 1 > p->capbuf) {
        size_t ncap = p->capbuf ? p->capbuf * 2 : 256;
        while (ncap < p->nbuf + n + 1) ncap *= 2;
        char *b = realloc(p->buf, ncap);
        if (!b) oom(p);
        p->buf = b;
        p->capbuf = ncap;
    }
    memcpy(p->buf + p->nbuf, s, n);
    p->nbuf += n;
}

static void buf_addc(Parser *p, char c) {
    buf_add(p, &c, 1);
}

/* ------------------------------------------------------- node helpers */

static AstNode *new_node(Parser *p, AstKind k) {
    AstNode *n = alloc(p, sizeof(AstNode));
    n->kind = k;
    return n;
}

/* Node starting and ending at token t. */
static AstNode *node_tok(Parser *p, AstKind k, Token *t) {
    AstNode *n = new_node(p, k);
    n->line = t->line;
    n->col = t->col + 1;
    n->end_line = t->end_line;
    n->end_col = t->end_col + 1;
    return n;
}

/* Node starting where node s starts. */
static AstNode *node_from(Parser *p, AstKind k, AstNode *s) {
    AstNode *n = new_node(p, k);
    n->line = s->line;
    n->col = s->col;
    n->end_line = s->end_line;
    n->end_col = s->end_col;
    return n;
}

static void end_node(AstNode *n, AstNode *last) {
    n->end_line = last->end_line;
    n->end_col = last->end_col;
}

static void end_tok(AstNode *n, Token *t) {
    n->end_line = t->end_line;
    n->end_col = t->end_col + 1;
}

/* Ends n at the last consumed token. */
static void end_prev(Parser *p, AstNode *n) {
    end_tok(n, prev(p));
}

/* Copies an identifier. Non-ASCII identifiers are NFKC-normalized in
** Python; only the common case, fullwidth ASCII forms (U+FF01..U+FF5E), is
** folded here. */
static const char *ident(Parser *p, Token *t) {
    const unsigned char *s = (const unsigned char *)t->start;
    int n = t->len;
    bool ascii = true;
    for (int i = 0; i < n; i++)
        if (s[i] >= 0x80) ascii = false;
    if (ascii) return copy_str(p, t->start, (size_t)n);
    char *d = alloc(p, (size_t)n + 1);
    int o = 0;
    for (int i = 0; i < n;) {
        int used;
        int32_t cp = lex_utf8_decode(s + i, (size_t)(n - i), &used);
        if (cp >= 0xFF01 && cp <= 0xFF5E) {
            d[o++] = (char)(cp - 0xFF01 + 0x21);
        } else if (cp == 0xB5) { /* MICRO SIGN -> GREEK SMALL LETTER MU */
            o += lex_utf8_encode(0x3BC, d + o);
        } else {
            memcpy(d + o, s + i, (size_t)used);
            o += used;
        }
        i += used;
    }
    d[o] = 0;
    return d;
}

static AstNode *name_node(Parser *p, Token *t) {
    AstNode *n = node_tok(p, AST_NAME, t);
    n->u.name.id = ident(p, t);
    return n;
}

static void enter(Parser *p) {
    if (c_stack_exhausted()) {
        /* no room to go deeper: give up the whole parse, speculative or not */
        p->err->recursion = true;
        snprintf(p->err->msg, sizeof p->err->msg, "maximum recursion depth exceeded during compilation");
        longjmp(*p->top_jb, 1);
    }
    if (++p->depth > MAX_DEPTH) {
        /* CPython's parser overflows its stack here with a bare MemoryError
        ** (the tokenizer has already bounded parentheses at 200) */
        Token *t = peek(p);
        p->err->line = t->line;
        p->err->col = t->col + 1;
        p->err->memory = true;
        snprintf(p->err->msg, sizeof p->err->msg, "parser stack overflow");
        longjmp(*p->top_jb, 1);
    }
}

static void leave(Parser *p) {
    p->depth--;
}

/* Runs fn speculatively: when it does not match, restores the parser state
** and returns NULL. With with_invalid, custom diagnostics stay as enabled
** as they are and escape (CPython's second pass raises them from inside
** its invalid_* rules); otherwise they are off. Tokenizer errors always
** escape. */
static AstNode *try_parse(Parser *p, AstNode *(*fn)(Parser *), bool with_invalid) {
    jmp_buf jb;
    jmp_buf *saved_jb = p->jb;
    int pos = p->pos, nstk = p->nstk, depth = p->depth, blocks = p->blocks, nsub = p->nsub;
    int fstring = p->fstring, ntoks = p->ntoks, maxpeek = p->maxpeek, far = p->far;
    int fs_line = p->fs_line, fs_col = p->fs_col, main_maxpeek = p->main_maxpeek;
    bool has_late = p->has_late;
    Token *toks = p->toks;
    bool no_invalid = p->no_invalid;
    SyntaxErr saved = *p->err;
    AstNode *res = NULL;
    p->jb = &jb;
    if (!with_invalid) p->no_invalid = true;
    if (setjmp(jb) == 0) {
        res = fn(p);
    } else {
        if (p->err_kind == ERR_TOKEN || (p->err_kind == ERR_CUSTOM && with_invalid)) {
            p->jb = saved_jb;
            p->no_invalid = no_invalid;
            bail(p);
        }
        while (p->nsub > nsub) free(p->subtoks[--p->nsub]);
        p->pos = pos;
        p->nstk = nstk;
        p->depth = depth;
        p->blocks = blocks;
        p->fstring = fstring;
        if (p->toks != toks) p->maxpeek = maxpeek; /* failed inside an f-string field */
        p->far = far;
        p->toks = toks;
        p->ntoks = ntoks;
        p->fs_line = fs_line;
        p->fs_col = fs_col;
        p->main_maxpeek = main_maxpeek;
        p->has_late = has_late;
        *p->err = saved;
        res = NULL;
    }
    p->jb = saved_jb;
    p->no_invalid = no_invalid;
    return res;
}

/* CPython's name for an expression kind in error messages. */
static const char *expr_name(AstNode *e) {
    switch (e->kind) {
    case AST_ATTRIBUTE: return "attribute";
    case AST_SUBSCRIPT: return "subscript";
    case AST_STARRED: return "starred";
    case AST_NAME: return "name";
    case AST_LIST: return "list";
    case AST_TUPLE: return "tuple";
    case AST_LAMBDA: return "lambda";
    case AST_CALL: return "function call";
    case AST_BOOLOP: case AST_BINOP: case AST_UNARYOP: return "expression";
    case AST_GENEXP: return "generator expression";
    case AST_YIELD: case AST_YIELDFROM: return "yield expression";
    case AST_AWAIT: return "await expression";
    case AST_LISTCOMP: return "list comprehension";
    case AST_SETCOMP: return "set comprehension";
    case AST_DICTCOMP: return "dict comprehension";
    case AST_DICT: return "dict literal";
    case AST_SET: return "set display";
    case AST_FSTRING: case AST_FORMATTED: return "f-string expression";
    case AST_NONE: return "None";
    case AST_TRUE: return "True";
    case AST_FALSE: return "False";
    case AST_ELLIPSIS: return "ellipsis";
    case AST_COMPARE: return "comparison";
    case AST_IFEXP: return "conditional expression";
    case AST_NAMEDEXPR: return "named expression";
    case AST_SLICE: return "slice";
    default: return "literal";
    }
}

/* First sub-expression that cannot be a target (CPython's
** _PyPegen_get_invalid_target), or NULL. */
static AstNode *invalid_target(AstNode *e, int ctx) {
    switch (e->kind) {
    case AST_LIST:
    case AST_TUPLE:
        for (int i = 0; i < e->u.seq.elts.len; i++) {
            AstNode *r = invalid_target(e->u.seq.elts.items[i], ctx);
            if (r) return r;
        }
        return NULL;
    case AST_STARRED:
        if (ctx == TGT_DEL) return e;
        return invalid_target(e->u.starred.value, ctx);
    case AST_COMPARE:
        /* "for a in b" reads as a comparison: look left of the 'in' */
        if (ctx == TGT_FOR) return e->u.compare.ops[0] == CMP_IN ? invalid_target(e->u.compare.left, ctx) : NULL;
        return e;
    case AST_NAME:
    case AST_SUBSCRIPT:
    case AST_ATTRIBUTE:
        return NULL;
    default:
        return e;
    }
}

/* Starred-target rules the compiler would otherwise enforce. */
static void check_starred_targets(Parser *p, AstNode *t, bool top) {
    if (t->kind == AST_STARRED) {
        if (top) LATE_NODE(p, t, "starred assignment target must be in a list or tuple");
        check_starred_targets(p, t->u.starred.value, false);
        return;
    }
    if (t->kind != AST_TUPLE && t->kind != AST_LIST) return;
    int nstar = 0;
    for (int i = 0; i < t->u.seq.elts.len; i++) {
        AstNode *e = t->u.seq.elts.items[i];
        if (e->kind == AST_STARRED && ++nstar == 2) LATE_NODE(p, t, "multiple starred expressions in assignment");
        check_starred_targets(p, e, false);
    }
}

/* Validates a for/with/comprehension target. */
static void check_target(Parser *p, AstNode *t, int ctx) {
    AstNode *bad = invalid_target(t, ctx);
    if (bad) {
        if (ctx == TGT_DEL) RAISE_NODE(p, bad, "cannot delete %s", expr_name(bad));
        RAISE_NODE(p, bad, "cannot assign to %s", expr_name(bad));
    }
    if (ctx != TGT_DEL) check_starred_targets(p, t, true);
}

/* ------------------------------------------------- custom diagnostics */

static AstNode *spec_bitor(Parser *p) {
    return parse_bitor(p);
}

/* Index of the '(' matching the ')' at index close, or -1. */
static int matching_open(Parser *p, int close) {
    int depth = 0;
    for (int i = close; i >= 0; i--) {
        int k = p->toks[i].kind;
        if (k == TK_RPAR || k == TK_RSQB || k == TK_RBRACE) depth++;
        else if (k == TK_LPAR || k == TK_LSQB || k == TK_LBRACE) {
            if (--depth == 0) return k == TK_LPAR ? i : -1;
        }
    }
    return -1;
}

/* CPython's invalid_named_expression: called when expression e is followed
** by '=' where a named expression was expected. Raises the custom message,
** or returns (the caller then fails with "invalid syntax"). */
static void invalid_named_assign(Parser *p, AstNode *e, bool parenthesized) {
    /* inside a speculative parse nothing is raised, but the right side is
    ** still explored: CPython's nested invalid_* rules read ahead that far
    ** (which decides whether a later tokenizer error wins) */
    bool speculative = p->no_invalid;
    bool name = e->kind == AST_NAME && !parenthesized;
    if (parenthesized) {
        if (e->kind == AST_TUPLE || e->kind == AST_GENEXP) return;
    } else if (!name) {
        switch (e->kind) {
        case AST_LIST: case AST_TUPLE: case AST_GENEXP: case AST_TRUE: case AST_NONE: case AST_FALSE:
        case AST_COMPARE: case AST_BOOLOP: case AST_IFEXP: case AST_LAMBDA: case AST_STARRED:
        case AST_YIELD: case AST_YIELDFROM:
            return;
        case AST_UNARYOP:
            if (e->u.unary.op == UNOP_NOT) return;
            break;
        default:
            break;
        }
    }
    int save = p->pos;
    advance(p); /* '=' */
    AstNode *b = try_parse(p, spec_bitor, true);
    if (b && !speculative && kind(p) != TK_EQUAL && kind(p) != TK_WALRUS) {
        if (name) RAISE_RANGE(p, e, b, "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
        RAISE_NODE(p, e, "cannot assign to %s here. Maybe you meant '==' instead of '='?", expr_name(e));
    }
    p->pos = save;
}

static AstNode *spec_expression(Parser *p) {
    return parse_expression(p);
}

/* CPython's invalid_expression / invalid_legacy_expression: an expression
** directly followed by another one. start is a's first token index. */
static void invalid_expression(Parser *p, AstNode *a, int start) {
    if (p->no_invalid || !starts_expr(kind(p))) return;
    int save = p->pos;
    if (a->kind == AST_NAME && (strcmp(a->u.name.id, "print") == 0 || strcmp(a->u.name.id, "exec") == 0)) {
        AstNode *b = try_parse(p, parse_star_expressions, true);
        if (b)
            RAISE_RANGE(p, a, b, "Missing parentheses in call to '%s'. Did you mean %s(...)?", a->u.name.id,
                        a->u.name.id);
        p->pos = save;
        return;
    }
    Token *t0 = &p->toks[start];
    if (t0->kind == TK_NAME) {
        if (start + 1 < p->ntoks && p->toks[start + 1].kind == TK_STRING) return;
        if ((t0->len == 5 && memcmp(t0->start, "match", 5) == 0) || (t0->len == 4 && memcmp(t0->start, "case", 4) == 0) ||
            (t0->len == 1 && t0->start[0] == '_'))
            return;
    }
    AstNode *b = try_parse(p, spec_expression, false);
    if (b && prev(p)->level > 0) RAISE_RANGE(p, a, b, "invalid syntax. Perhaps you forgot a comma?");
    p->pos = save;
}

/* ---------------------------------------------------------- expressions */

static AstNode *parse_atom(Parser *p);
static AstNode *parse_factor(Parser *p);
static AstList parse_comp_for(Parser *p);
static void parse_params(Parser *p, AstParams *out, bool is_lambda);

static AstNode *parse_lambda(Parser *p) {
    Token *t = advance(p);
    AstNode *n = node_tok(p, AST_LAMBDA, t);
    n->u.func.name = "<lambda>";
    n->u.func.is_lambda = true;
    parse_params(p, &n->u.func.params, true);
    expect(p, TK_COLON);
    AstNode *body = parse_expression(p);
    AstNode *ret = node_from(p, AST_RETURN, body);
    ret->u.ret.value = body;
    n->u.func.body.items = alloc(p, sizeof(AstNode *));
    n->u.func.body.items[0] = ret;
    n->u.func.body.len = 1;
    end_prev(p, n);
    return n;
}

/* expression: lambda | disjunction ['if' disjunction 'else' expression] */
static AstNode *parse_expression(Parser *p) {
    if (kind(p) == TK_LAMBDA) {
        enter(p);
        AstNode *l = parse_lambda(p);
        leave(p);
        return l;
    }
    enter(p);
    int start = p->pos;
    AstNode *a = parse_disjunction(p);
    if (kind(p) == TK_IF) {
        int if_pos = p->pos;
        advance(p);
        AstNode *test = parse_disjunction(p);
        if (kind(p) != TK_ELSE) {
            if (!p->no_invalid && kind(p) != TK_COLON)
                RAISE_RANGE(p, a, test, "expected 'else' after 'if' expression");
            /* PEG: the conditional alternative fails, the plain disjunction
            ** matches; the caller then stops at the 'if' */
            p->pos = if_pos;
            leave(p);
            return a;
        }
        advance(p);
        AstNode *orelse = parse_expression(p);
        AstNode *n = node_tok(p, AST_IFEXP, &p->toks[start]);
        n->u.ifexp.test = test;
        n->u.ifexp.body = a;
        n->u.ifexp.orelse = orelse;
        end_prev(p, n);
        leave(p);
        return n;
    }
    invalid_expression(p, a, start);
    leave(p);
    return a;
}

/* named_expression: NAME ':=' expression | expression */
static AstNode *parse_named_expression(Parser *p, bool check_eq) {
    Token *t = peek(p);
    if (t->kind == TK_NAME && peek_at(p, 1)->kind == TK_WALRUS) {
        advance(p);
        advance(p);
        AstNode *target = name_node(p, t);
        AstNode *v = parse_expression(p);
        AstNode *n = node_tok(p, AST_NAMEDEXPR, t);
        n->u.named.target = target;
        n->u.named.value = v;
        end_prev(p, n);
        return n;
    }
    int start = p->pos;
    AstNode *e = parse_expression(p);
    if (kind(p) == TK_WALRUS && !p->no_invalid) {
        int save = p->pos;
        advance(p);
        if (try_parse(p, spec_expression, true))
            RAISE_NODE(p, e, "cannot use assignment expressions with %s", expr_name(e));
        p->pos = save;
    }
    if (check_eq && kind(p) == TK_EQUAL)
        invalid_named_assign(p, e, prev(p)->kind == TK_RPAR && matching_open(p, p->pos - 1) == start);
    return e;
}

static AstNode *starred(Parser *p) {
    Token *t = advance(p); /* '*' */
    AstNode *v = parse_bitor(p);
    AstNode *n = node_tok(p, AST_STARRED, t);
    n->u.starred.value = v;
    end_prev(p, n);
    return n;
}

/* star_named_expression: '*' bitwise_or | named_expression */
static AstNode *parse_star_named(Parser *p) {
    if (kind(p) == TK_STAR) return starred(p);
    return parse_named_expression(p, true);
}

/* star_expression: '*' bitwise_or | expression */
static AstNode *parse_star_expression(Parser *p) {
    if (kind(p) == TK_STAR) return starred(p);
    return parse_expression(p);
}

/* Builds an unbracketed tuple from the items pushed since mark. */
static AstNode *bare_tuple_from(Parser *p, int mark, Token *start) {
    AstNode *n = node_tok(p, AST_TUPLE, start);
    n->u.seq.elts = spop_list(p, mark);
    end_prev(p, n);
    p->last_bare = n;
    return n;
}

/* star_expressions: star_expression (',' star_expression)* [','] */
static AstNode *parse_star_expressions(Parser *p) {
    Token *st = peek(p);
    AstNode *first = parse_star_expression(p);
    if (kind(p) != TK_COMMA) return first;
    int m = p->nstk;
    spush(p, first);
    while (accept(p, TK_COMMA)) {
        if (!starts_expr(kind(p)) && kind(p) != TK_STAR) break;
        spush(p, parse_star_expression(p));
    }
    return bare_tuple_from(p, m, st);
}

static AstNode *parse_conjunction(Parser *p);
static AstNode *parse_inversion(Parser *p);

static AstNode *boolop_chain(Parser *p, int tok, AstNode *(*sub)(Parser *)) {
    Token *st = peek(p);
    AstNode *a = sub(p);
    if (kind(p) != tok) return a;
    int m = p->nstk;
    spush(p, a);
    while (accept(p, tok)) spush(p, sub(p));
    AstNode *n = node_tok(p, AST_BOOLOP, st);
    n->u.boolop.is_and = tok == TK_AND;
    n->u.boolop.values = spop_list(p, m);
    end_prev(p, n);
    return n;
}

static AstNode *parse_disjunction(Parser *p) {
    return boolop_chain(p, TK_OR, parse_conjunction);
}

static AstNode *parse_conjunction(Parser *p) {
    return boolop_chain(p, TK_AND, parse_inversion);
}

static AstNode *parse_comparison(Parser *p);

static AstNode *parse_inversion(Parser *p) {
    if (kind(p) == TK_NOT) {
        Token *t = advance(p);
        enter(p);
        AstNode *o = parse_inversion(p);
        leave(p);
        AstNode *n = node_tok(p, AST_UNARYOP, t);
        n->u.unary.op = UNOP_NOT;
        n->u.unary.operand = o;
        end_prev(p, n);
        return n;
    }
    return parse_comparison(p);
}

/* Reads a comparison operator at the current token (consuming it). */
static bool comp_op(Parser *p, CmpOp *op) {
    switch (kind(p)) {
    case TK_EQEQUAL: *op = CMP_EQ; break;
    case TK_NOTEQUAL: *op = CMP_NE; break;
    case TK_LESS: *op = CMP_LT; break;
    case TK_LESSEQUAL: *op = CMP_LE; break;
    case TK_GREATER: *op = CMP_GT; break;
    case TK_GREATEREQUAL: *op = CMP_GE; break;
    case TK_IN: *op = CMP_IN; break;
    case TK_IS:
        advance(p);
        *op = accept(p, TK_NOT) ? CMP_ISNOT : CMP_IS;
        return true;
    case TK_NOT:
        if (peek_at(p, 1)->kind != TK_IN) return false;
        advance(p);
        *op = CMP_NOTIN;
        break;
    default:
        return false;
    }
    advance(p);
    return true;
}

static AstNode *parse_comparison(Parser *p) {
    Token *st = peek(p);
    AstNode *a = parse_bitor(p);
    CmpOp op;
    if (!comp_op(p, &op)) return a;
    int m = p->nstk;
    /* operators go on the scratch stack too, as small integers, one
    ** before each comparator */
    for (;;) {
        spush(p, (void *)(intptr_t)op);
        spush(p, parse_bitor(p));
        if (!comp_op(p, &op)) break;
    }
    int n = (p->nstk - m) / 2;
    AstNode *node = node_tok(p, AST_COMPARE, st);
    node->u.compare.left = a;
    node->u.compare.ops = alloc(p, sizeof(CmpOp) * (size_t)n);
    AstList comps = {alloc(p, sizeof(AstNode *) * (size_t)n), n};
    for (int i = 0; i < n; i++) {
        node->u.compare.ops[i] = (CmpOp)(intptr_t)p->stk[m + 2 * i];
        comps.items[i] = p->stk[m + 2 * i + 1];
    }
    p->nstk = m;
    node->u.compare.comparators = comps;
    end_prev(p, node);
    return node;
}

/* Binary operator precedence (0 = not a binary operator). */
static int binop_prec(int k, BinOp *op) {
    switch (k) {
    case TK_VBAR: *op = BINOP_OR; return 1;
    case TK_CIRCUMFLEX: *op = BINOP_XOR; return 2;
    case TK_AMPER: *op = BINOP_AND; return 3;
    case TK_LSHIFT: *op = BINOP_LSHIFT; return 4;
    case TK_RSHIFT: *op = BINOP_RSHIFT; return 4;
    case TK_PLUS: *op = BINOP_ADD; return 5;
    case TK_MINUS: *op = BINOP_SUB; return 5;
    case TK_STAR: *op = BINOP_MUL; return 6;
    case TK_SLASH: *op = BINOP_TRUEDIV; return 6;
    case TK_DOUBLESLASH: *op = BINOP_FLOORDIV; return 6;
    case TK_PERCENT: *op = BINOP_MOD; return 6;
    case TK_AT: *op = BINOP_MATMUL; return 6;
    default: return 0;
    }
}

/* Precedence climbing over | ^ & << >> + - * / // % @ (all left-assoc). */
static AstNode *parse_binary(Parser *p, int min_prec) {
    Token *st = peek(p);
    AstNode *left = parse_factor(p);
    for (;;) {
        BinOp op;
        int prec = binop_prec(kind(p), &op);
        if (prec == 0 || prec < min_prec) return left;
        advance(p);
        AstNode *right = parse_binary(p, prec + 1);
        AstNode *n = node_tok(p, AST_BINOP, st);
        n->u.binop.op = op;
        n->u.binop.left = left;
        n->u.binop.right = right;
        end_prev(p, n);
        left = n;
    }
}

static AstNode *parse_bitor(Parser *p) {
    return parse_binary(p, 1);
}

static AstNode *parse_primary(Parser *p);

/* power: await_primary ['**' factor] */
static AstNode *parse_power(Parser *p) {
    Token *st = peek(p);
    AstNode *a;
    if (kind(p) == TK_AWAIT) {
        Token *t = advance(p);
        AstNode *v = parse_primary(p);
        a = node_tok(p, AST_AWAIT, t);
        a->u.yield.value = v;
        end_prev(p, a);
    } else {
        a = parse_primary(p);
    }
    if (kind(p) != TK_DOUBLESTAR) return a;
    advance(p);
    enter(p);
    AstNode *b = parse_factor(p);
    leave(p);
    AstNode *n = node_tok(p, AST_BINOP, st);
    n->u.binop.op = BINOP_POW;
    n->u.binop.left = a;
    n->u.binop.right = b;
    end_prev(p, n);
    return n;
}

/* factor: ('+' | '-' | '~') factor | power */
static AstNode *parse_factor(Parser *p) {
    int k = kind(p);
    if (k != TK_PLUS && k != TK_MINUS && k != TK_TILDE) return parse_power(p);
    Token *t = advance(p);
    if (k == TK_MINUS && kind(p) == TK_INT && (peek(p)->flags & LEXF_MINBIG)) {
        /* -9223372036854775808: the one literal that only fits negated */
        int nk = peek_at(p, 1)->kind;
        if (nk != TK_DOUBLESTAR && nk != TK_DOT && nk != TK_LPAR && nk != TK_LSQB) {
            Token *lit = advance(p);
            AstNode *n = node_tok(p, AST_INT, t);
            n->u.int_ = INT64_MIN;
            end_tok(n, lit);
            return n;
        }
    }
    enter(p);
    AstNode *o = parse_factor(p);
    leave(p);
    AstNode *n = node_tok(p, AST_UNARYOP, t);
    n->u.unary.op = k == TK_PLUS ? UNOP_POS : k == TK_MINUS ? UNOP_NEG : UNOP_INVERT;
    n->u.unary.operand = o;
    end_prev(p, n);
    return n;
}

/* for_if_clauses for try_parse. */
static AstNode *spec_comp_for(Parser *p) {
    AstList l = parse_comp_for(p);
    return l.items[0];
}

/* Parses call arguments up to (not including) ')'; pushes positional
** arguments and AST_KEYWORD nodes in source order onto the scratch stack.
** Returns the number of items. lp is the '(' token. */
static int parse_arguments(Parser *p, Token *lp, AstNode **sole_genexp, bool allow_genexp) {
    int m = p->nstk;
    bool seen_kw = false, seen_dstar = false;
    int count = 0;
    *sole_genexp = NULL;
    AstNode *genexp = NULL;
    const char *misplaced = NULL;
    while (kind(p) != TK_RPAR) {
        Token *t = peek(p);
        /* look past a name only (as CPython's kwarg rule): reading further
        ** ahead would change which error wins */
        int nk = t->kind == TK_NAME || t->kind == TK_TRUE || t->kind == TK_FALSE || t->kind == TK_NONE
                     ? peek_at(p, 1)->kind
                     : TK_ENDMARKER;
        if (genexp && !p->no_invalid) RAISE_NODE(p, genexp, "Generator expression must be parenthesized");
        if (t->kind == TK_STAR) {
            if (seen_dstar) RAISE_TOK(p, t, "iterable argument unpacking follows keyword argument unpacking");
            advance(p);
            AstNode *v = parse_expression(p);
            AstNode *n = node_tok(p, AST_STARRED, t);
            n->u.starred.value = v;
            end_prev(p, n);
            spush(p, n);
        } else if (t->kind == TK_DOUBLESTAR) {
            advance(p);
            AstNode *v = parse_expression(p);
            AstNode *n = node_tok(p, AST_KEYWORD, t);
            n->u.keyword.name = NULL;
            n->u.keyword.value = v;
            end_prev(p, n);
            seen_dstar = true;
            spush(p, n);
        } else if (t->kind == TK_NAME && nk == TK_EQUAL) {
            advance(p);
            advance(p);
            AstNode *v = parse_expression(p);
            AstNode *n = node_tok(p, AST_KEYWORD, t);
            n->u.keyword.name = ident(p, t);
            n->u.keyword.value = v;
            end_prev(p, n);
            if (at_comp_for(p) && !p->no_invalid) {
                int save = p->pos;
                Token *eq = t + 1;
                if (try_parse(p, spec_comp_for, true))
                    reportf(p, t->line, t->col + 1, eq->end_col + 1, false,
                            "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
                p->pos = save;
            }
            for (int i = m; i < p->nstk; i++) {
                AstNode *o = p->stk[i];
                if (o->kind == AST_KEYWORD && o->u.keyword.name && strcmp(o->u.keyword.name, n->u.keyword.name) == 0)
                    LATE_NODE(p, n, "keyword argument repeated: %s", n->u.keyword.name);
            }
            seen_kw = true;
            spush(p, n);
        } else if ((t->kind == TK_TRUE || t->kind == TK_FALSE || t->kind == TK_NONE) && nk == TK_EQUAL) {
            Token *eq = peek_at(p, 1);
            reportf(p, t->line, t->col + 1, eq->end_col + 1, false, "cannot assign to %s", lex_keyword_text(t->kind));
        } else {
            Token *est = peek(p);
            AstNode *e = parse_named_expression(p, false);
            if (kind(p) == TK_EQUAL) {
                Token *eq = peek(p);
                if (!p->no_invalid)
                    reportf(p, e->line, e->col, eq->line == e->line ? eq->end_col + 1 : -1, false,
                            "expression cannot contain assignment, perhaps you meant \"==\"?");
                fail(p);
            }
            if (at_comp_for(p)) {
                if (!allow_genexp) fail(p);
                AstList gens = parse_comp_for(p);
                AstNode *g = node_tok(p, AST_GENEXP, est);
                g->u.comp.elt = e;
                g->u.comp.generators = gens;
                end_prev(p, g);
                if (count > 0 && !p->no_invalid) RAISE_NODE(p, g, "Generator expression must be parenthesized");
                genexp = g;
                e = g;
            }
            /* CPython reports these where its first pass stopped: after
            ** the remaining arguments */
            if (!misplaced && (seen_dstar || seen_kw))
                misplaced = seen_dstar ? "positional argument follows keyword argument unpacking"
                                       : "positional argument follows keyword argument";
            spush(p, e);
        }
        count++;
        if (!accept(p, TK_COMMA)) break;
        if (misplaced && !starts_expr(kind(p)) && kind(p) != TK_STAR && kind(p) != TK_DOUBLESTAR) break;
    }
    if (misplaced && !p->no_invalid) RAISE_TOK(p, peek(p), "%s", misplaced);
    if (genexp && count == 1 && kind(p) == TK_RPAR && prev(p)->kind != TK_COMMA) {
        /* f(x for x in y): the genexp spans the call's parentheses */
        genexp->line = lp->line;
        genexp->col = lp->col + 1;
        end_tok(genexp, peek(p));
        *sole_genexp = genexp;
    } else if (genexp && !p->no_invalid && (kind(p) == TK_COMMA || prev(p)->kind == TK_COMMA)) {
        RAISE_NODE(p, genexp, "Generator expression must be parenthesized");
    }
    return count;
}

/* Splits the scratch items since mark into positional args and keywords. */
static void split_args(Parser *p, int mark, AstList *args, AstList *keywords) {
    int n = p->nstk - mark;
    int nkw = 0;
    for (int i = 0; i < n; i++)
        if (((AstNode *)p->stk[mark + i])->kind == AST_KEYWORD) nkw++;
    args->len = n - nkw;
    keywords->len = nkw;
    args->items = args->len ? alloc(p, sizeof(AstNode *) * (size_t)args->len) : NULL;
    keywords->items = nkw ? alloc(p, sizeof(AstNode *) * (size_t)nkw) : NULL;
    int a = 0, k = 0;
    for (int i = 0; i < n; i++) {
        AstNode *x = p->stk[mark + i];
        if (x->kind == AST_KEYWORD) keywords->items[k++] = x;
        else args->items[a++] = x;
    }
    p->nstk = mark;
}

/* slice: [expression] ':' [expression] [':' [expression]] | named_expression
** (or a starred expression inside a tuple of slices) */
static AstNode *parse_slice(Parser *p) {
    if (kind(p) == TK_STAR) return starred(p);
    Token *start = peek(p);
    AstNode *lower = NULL;
    if (kind(p) != TK_COLON) {
        lower = parse_named_expression(p, true);
        if (kind(p) != TK_COLON) return lower;
    }
    advance(p); /* ':' */
    AstNode *n = node_tok(p, AST_SLICE, start);
    n->u.slice.lower = lower;
    int k = kind(p);
    if (k != TK_COLON && k != TK_COMMA && k != TK_RSQB) n->u.slice.upper = parse_expression(p);
    if (accept(p, TK_COLON)) {
        k = kind(p);
        if (k != TK_COMMA && k != TK_RSQB) n->u.slice.step = parse_expression(p);
    }
    end_prev(p, n);
    return n;
}

static AstNode *parse_slices(Parser *p) {
    Token *st = peek(p);
    AstNode *first = parse_slice(p);
    if (kind(p) != TK_COMMA && first->kind != AST_STARRED) return first;
    int m = p->nstk;
    spush(p, first);
    while (accept(p, TK_COMMA)) {
        if (kind(p) == TK_RSQB) break;
        spush(p, parse_slice(p));
    }
    return bare_tuple_from(p, m, st);
}

/* primary: atom trailers ('.' NAME | '(' args ')' | '[' slices ']')* */
static AstNode *parse_primary(Parser *p) {
    Token *st = peek(p);
    AstNode *a = parse_atom(p);
    for (;;) {
        switch (kind(p)) {
        case TK_DOT: {
            advance(p);
            Token *nt = expect(p, TK_NAME);
            AstNode *n = node_tok(p, AST_ATTRIBUTE, st);
            n->u.attr.value = a;
            n->u.attr.attr = ident(p, nt);
            end_tok(n, nt);
            a = n;
            break;
        }
        case TK_LPAR: {
            Token *lp = advance(p);
            int m = p->nstk;
            AstNode *g;
            enter(p);
            parse_arguments(p, lp, &g, true);
            leave(p);
            expect(p, TK_RPAR);
            AstNode *n = node_tok(p, AST_CALL, st);
            n->u.call.func = a;
            split_args(p, m, &n->u.call.args, &n->u.call.keywords);
            end_prev(p, n);
            a = n;
            break;
        }
        case TK_LSQB: {
            advance(p);
            enter(p);
            AstNode *idx = parse_slices(p);
            leave(p);
            expect(p, TK_RSQB);
            AstNode *n = node_tok(p, AST_SUBSCRIPT, st);
            n->u.subscript.value = a;
            n->u.subscript.index = idx;
            end_prev(p, n);
            a = n;
            break;
        }
        default:
            return a;
        }
    }
}

/* for_if_clauses: ('for' star_targets 'in' disjunction ('if' disjunction)*)+ */
static AstNode *parse_target_list(Parser *p, int ctx);

static AstList parse_comp_for(Parser *p) {
    int m = p->nstk;
    while (at_comp_for(p)) {
        bool is_async = accept(p, TK_ASYNC);
        if (is_async && kind(p) != TK_FOR) fail(p);
        Token *f = advance(p);
        AstNode *target = parse_target_list(p, TGT_FOR);
        expect(p, TK_IN);
        AstNode *iter = parse_disjunction(p);
        int mi = p->nstk;
        while (accept(p, TK_IF)) spush(p, parse_disjunction(p));
        AstNode *c = node_tok(p, AST_COMPREHENSION, f);
        c->u.compfor.target = target;
        c->u.compfor.iter = iter;
        c->u.compfor.is_async = is_async;
        c->u.compfor.ifs = spop_list(p, mi);
        end_prev(p, c);
        spush(p, c);
    }
    return spop_list(p, m);
}

static AstNode *comp_node(Parser *p, AstKind k, Token *open, AstNode *elt) {
    if (elt->kind == AST_STARRED && !p->no_invalid)
        RAISE_NODE(p, elt, "iterable unpacking cannot be used in comprehension");
    AstList gens = parse_comp_for(p);
    AstNode *n = node_tok(p, k, open);
    n->u.comp.elt = elt;
    n->u.comp.generators = gens;
    return n;
}

static AstNode *parse_paren(Parser *p) {
    Token *lp = advance(p);
    AstNode *n;
    if (kind(p) == TK_RPAR) {
        advance(p);
        n = node_tok(p, AST_TUPLE, lp);
        end_prev(p, n);
        return n;
    }
    if (kind(p) == TK_YIELD) {
        n = parse_yield_expr(p);
        expect(p, TK_RPAR);
        return n;
    }
    if (kind(p) == TK_DOUBLESTAR && !p->no_invalid) {
        Token *t = advance(p);
        parse_bitor(p);
        RAISE_TOK(p, t, "cannot use double starred expression here");
    }
    AstNode *first = parse_star_named(p);
    if (at_comp_for(p)) {
        n = comp_node(p, AST_GENEXP, lp, first);
        expect(p, TK_RPAR);
        end_prev(p, n);
        return n;
    }
    if (kind(p) == TK_COMMA) {
        int m = p->nstk;
        spush(p, first);
        while (accept(p, TK_COMMA)) {
            if (kind(p) == TK_RPAR) break;
            spush(p, parse_star_named(p));
        }
        expect(p, TK_RPAR);
        n = node_tok(p, AST_TUPLE, lp);
        n->u.seq.elts = spop_list(p, m);
        end_prev(p, n);
        return n;
    }
    if (first->kind == AST_STARRED && kind(p) == TK_RPAR && !p->no_invalid)
        RAISE_NODE(p, first, "cannot use starred expression here");
    expect(p, TK_RPAR);
    return first;
}

/* '[' ... ']' list display or comprehension. */
static AstNode *parse_list(Parser *p) {
    Token *lb = advance(p);
    AstNode *n;
    if (kind(p) == TK_RSQB) {
        advance(p);
        n = node_tok(p, AST_LIST, lb);
        end_prev(p, n);
        return n;
    }
    AstNode *first = parse_star_named(p);
    if (at_comp_for(p)) {
        n = comp_node(p, AST_LISTCOMP, lb, first);
        expect(p, TK_RSQB);
        end_prev(p, n);
        return n;
    }
    int m = p->nstk;
    spush(p, first);
    while (accept(p, TK_COMMA)) {
        if (kind(p) == TK_RSQB) break;
        spush(p, parse_star_named(p));
    }
    if (at_comp_for(p) && p->nstk - m >= 2 && prev(p)->kind != TK_COMMA && !p->no_invalid)
        RAISE_RANGE(p, first, (AstNode *)p->stk[p->nstk - 1], "did you forget parentheses around the comprehension target?");
    expect(p, TK_RSQB);
    n = node_tok(p, AST_LIST, lb);
    n->u.seq.elts = spop_list(p, m);
    end_prev(p, n);
    return n;
}

/* Parses a dict value after ':' with CPython's diagnostics. */
static AstNode *dict_value(Parser *p, Token *colon) {
    if (!p->no_invalid) {
        if (kind(p) == TK_STAR) {
            AstNode *s = starred(p);
            RAISE_NODE(p, s, "cannot use a starred expression in a dictionary value");
        }
        if (kind(p) == TK_RBRACE || kind(p) == TK_COMMA)
            RAISE_TOK(p, colon, "expression expected after dictionary key and ':'");
    }
    return parse_expression(p);
}

/* '{' ... '}' dict/set display or comprehension. */
static AstNode *parse_brace(Parser *p) {
    Token *lb = advance(p);
    AstNode *n;
    if (kind(p) == TK_RBRACE) {
        advance(p);
        n = node_tok(p, AST_DICT, lb);
        end_prev(p, n);
        return n;
    }
    int m = p->nstk;
    bool is_dict;
    if (kind(p) == TK_DOUBLESTAR) {
        Token *t = advance(p);
        AstNode *v = parse_bitor(p);
        if (at_comp_for(p) && !p->no_invalid) RAISE_TOK(p, t, "dict unpacking cannot be used in dict comprehension");
        spush(p, NULL);
        spush(p, v);
        is_dict = true;
    } else {
        AstNode *first = parse_star_named(p);
        if (kind(p) == TK_COLON && first->kind != AST_STARRED) {
            Token *colon = advance(p);
            AstNode *v = dict_value(p, colon);
            if (at_comp_for(p)) {
                AstList gens = parse_comp_for(p);
                n = node_tok(p, AST_DICTCOMP, lb);
                n->u.comp.elt = first;
                n->u.comp.value = v;
                n->u.comp.generators = gens;
                expect(p, TK_RBRACE);
                end_prev(p, n);
                return n;
            }
            spush(p, first);
            spush(p, v);
            is_dict = true;
        } else {
            if (at_comp_for(p)) {
                n = comp_node(p, AST_SETCOMP, lb, first);
                expect(p, TK_RBRACE);
                end_prev(p, n);
                return n;
            }
            spush(p, first);
            is_dict = false;
        }
    }
    while (accept(p, TK_COMMA)) {
        if (kind(p) == TK_RBRACE) break;
        if (is_dict) {
            if (kind(p) == TK_DOUBLESTAR) {
                advance(p);
                spush(p, NULL);
                spush(p, parse_bitor(p));
                continue;
            }
            /* a key not followed by ':' is reported as such before any
            ** "forgot a comma" diagnosis (CPython's invalid_kvpair) */
            bool saved_ni = p->no_invalid;
            p->no_invalid = true;
            AstNode *k = parse_expression(p);
            p->no_invalid = saved_ni;
            if (kind(p) != TK_COLON) {
                if (!p->no_invalid)
                    reportf(p, k->end_line, k->end_col - 1, 0, false, "':' expected after dictionary key");
                fail(p);
            }
            Token *colon = advance(p);
            spush(p, k);
            spush(p, dict_value(p, colon));
        } else {
            spush(p, parse_star_named(p));
        }
    }
    if (!is_dict && at_comp_for(p) && p->nstk - m >= 2 && prev(p)->kind != TK_COMMA && !p->no_invalid)
        RAISE_RANGE(p, (AstNode *)p->stk[m], (AstNode *)p->stk[p->nstk - 1],
                    "did you forget parentheses around the comprehension target?");
    expect(p, TK_RBRACE);
    if (!is_dict) {
        n = node_tok(p, AST_SET, lb);
        n->u.seq.elts = spop_list(p, m);
        end_prev(p, n);
        return n;
    }
    n = node_tok(p, AST_DICT, lb);
    int cnt = (p->nstk - m) / 2;
    AstList keys = {alloc(p, sizeof(AstNode *) * (size_t)cnt), cnt};
    AstList vals = {alloc(p, sizeof(AstNode *) * (size_t)cnt), cnt};
    for (int i = 0; i < cnt; i++) {
        keys.items[i] = p->stk[m + 2 * i];
        vals.items[i] = p->stk[m + 2 * i + 1];
    }
    p->nstk = m;
    n->u.dict.keys = keys;
    n->u.dict.values = vals;
    end_prev(p, n);
    return n;
}

static AstNode *parse_atom(Parser *p) {
    Token *t = peek(p);
    AstNode *n;
    switch (t->kind) {
    case TK_NAME:
        advance(p);
        return name_node(p, t);
    case TK_TRUE: advance(p); return node_tok(p, AST_TRUE, t);
    case TK_FALSE: advance(p); return node_tok(p, AST_FALSE, t);
    case TK_NONE: advance(p); return node_tok(p, AST_NONE, t);
    case TK_ELLIPSIS: advance(p); return node_tok(p, AST_ELLIPSIS, t);
    case TK_INT:
        if (t->flags & LEXF_BIG) {
            advance(p);
            n = node_tok(p, AST_BIGINT, t);
            n->u.str.s = copy_str(p, t->start, (size_t)t->len);
            n->u.str.len = (size_t)t->len;
            return n;
        }
        advance(p);
        n = node_tok(p, AST_INT, t);
        n->u.int_ = t->v.i;
        return n;
    case TK_FLOAT:
    case TK_IMAG:
        advance(p);
        n = node_tok(p, t->kind == TK_FLOAT ? AST_FLOAT : AST_IMAG, t);
        n->u.float_ = t->v.f;
        return n;
    case TK_STRING:
        return parse_strings(p);
    case TK_LPAR:
    case TK_LSQB:
    case TK_LBRACE:
        enter(p);
        n = t->kind == TK_LPAR ? parse_paren(p) : t->kind == TK_LSQB ? parse_list(p) : parse_brace(p);
        leave(p);
        return n;
    default:
        fail(p);
    }
}

/* yield_expr: 'yield' 'from' expression | 'yield' [star_expressions] */
static AstNode *parse_yield_expr(Parser *p) {
    Token *t = advance(p);
    AstNode *n;
    if (accept(p, TK_FROM)) {
        n = node_tok(p, AST_YIELDFROM, t);
        n->u.yield.value = parse_expression(p);
        end_prev(p, n);
        return n;
    }
    n = node_tok(p, AST_YIELD, t);
    if (starts_expr(kind(p)) || kind(p) == TK_STAR) {
        n->u.yield.value = parse_star_expressions(p);
        end_prev(p, n);
    }
    return n;
}

/* A target element: '*' target | bitwise_or (validated by the caller). */
static AstNode *parse_target_elem(Parser *p) {
    if (kind(p) == TK_STAR) return starred(p);
    return parse_bitor(p);
}

/* star_targets for 'for' and comprehensions: stops before 'in'. */
static AstNode *parse_target_list(Parser *p, int ctx) {
    int start = p->pos;
    Token *st = peek(p);
    AstNode *first = parse_target_elem(p);
    AstNode *t = first;
    if (kind(p) == TK_COMMA) {
        int m = p->nstk;
        spush(p, first);
        while (accept(p, TK_COMMA)) {
            if (!starts_expr(kind(p)) && kind(p) != TK_STAR) break;
            spush(p, parse_target_elem(p));
        }
        t = bare_tuple_from(p, m, st);
    }
    if (kind(p) == TK_IN) {
        check_target(p, t, ctx);
    } else if (!p->no_invalid) {
        int save = p->pos;
        p->pos = start;
        AstNode *a = try_parse(p, parse_star_expressions, true);
        AstNode *bad = a ? invalid_target(a, TGT_FOR) : NULL;
        if (bad) RAISE_NODE(p, bad, "cannot assign to %s", expr_name(bad));
        p->pos = save;
    }
    return t;
}

/* ------------------------------------------------------------ strings */

/* Reports a string decoding error at the end of token t (where CPython
** points for errors raised while building the literal). */
static _Noreturn void string_error(Parser *p, Token *t, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int col = t->end_col + 1;
    report(p, t->end_line, col, col, false, msg);
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void buf_add_cp(Parser *p, uint32_t cp) {
    char tmp[4];
    int n;
    if (cp >= 0xD800 && cp <= 0xDFFF) {
        /* lone surrogate: encoded like any other BMP code point */
        tmp[0] = (char)(0xE0 | (cp >> 12));
        tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        tmp[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        n = lex_utf8_encode(cp, tmp);
    }
    buf_add(p, tmp, (size_t)n);
}

/* Decodes one escape sequence at q (a backslash) into the buffer. seg is
** the start of the literal segment (for error positions). Returns the
** position after the escape. */
static const char *decode_escape(Parser *p, Token *t, const char *q, const char *e, bool bytes, const char *seg) {
    if (q + 1 >= e) {
        buf_addc(p, '\\');
        return e;
    }
    char c = q[1];
    const char *r = q + 2;
    switch (c) {
    case '\n': return r;
    case '\r': return (r < e && *r == '\n') ? r + 1 : r;
    case '\\': buf_addc(p, '\\'); return r;
    case '\'': buf_addc(p, '\''); return r;
    case '"': buf_addc(p, '"'); return r;
    case 'a': buf_addc(p, '\a'); return r;
    case 'b': buf_addc(p, '\b'); return r;
    case 'f': buf_addc(p, '\f'); return r;
    case 'n': buf_addc(p, '\n'); return r;
    case 'r': buf_addc(p, '\r'); return r;
    case 't': buf_addc(p, '\t'); return r;
    case 'v': buf_addc(p, '\v'); return r;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
        uint32_t v = (uint32_t)(c - '0');
        for (int i = 0; i < 2 && r < e && *r >= '0' && *r <= '7'; i++) v = v * 8 + (uint32_t)(*r++ - '0');
        if (bytes) buf_addc(p, (char)(v & 0xFF));
        else buf_add_cp(p, v);
        return r;
    }
    case 'x':
    case 'u':
    case 'U': {
        if (bytes && c != 'x') break;
        int need = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        uint32_t v = 0;
        int got = 0;
        while (got < need && r < e && hexval((unsigned char)*r) >= 0) {
            v = v * 16 + (uint32_t)hexval((unsigned char)*r++);
            got++;
        }
        int start = (int)(q - seg), end = (int)(r - seg) - 1;
        if (got < need) {
            if (bytes) string_error(p, t, "(value error) invalid \\x escape at position %d", start);
            string_error(p, t, "(unicode error) 'unicodeescape' codec can't decode bytes in position %d-%d: truncated %s escape",
                         start, end, c == 'x' ? "\\xXX" : c == 'u' ? "\\uXXXX" : "\\UXXXXXXXX");
        }
        if (bytes) {
            buf_addc(p, (char)v);
            return r;
        }
        if (v > 0x10FFFF)
            string_error(p, t, "(unicode error) 'unicodeescape' codec can't decode bytes in position %d-%d: illegal Unicode character",
                         start, end);
        buf_add_cp(p, v);
        return r;
    }
    case 'N': {
        if (bytes) break;
        /* \N{name}: the scan position s decides the error's end as CPython's */
        const char *s = r;
        int32_t cp = -1;
        bool named = false;
        if (s < e && *s == '{') {
            const char *start = ++s;
            while (s < e && *s != '}') s++;
            if (s < e && s > start) {
                named = true;
                cp = unicode_lookup_name(start, (size_t)(s - start));
                s++;
            }
        }
        if (cp < 0)
            string_error(p, t, "(unicode error) 'unicodeescape' codec can't decode bytes in position %d-%d: %s",
                         (int)(q - seg), (int)(s - seg) - 1,
                         named ? "unknown Unicode character name" : "malformed \\N character escape");
        buf_add_cp(p, (uint32_t)cp);
        return s;
    }
    default:
        break;
    }
    /* unknown escape: kept as is (the next character is read normally) */
    buf_addc(p, '\\');
    return q + 1;
}

/* Appends the decoded body [s, e) of a non-f string token to the buffer. */
static void decode_body(Parser *p, Token *t, const char *s, const char *e, bool raw, bool bytes) {
    const char *seg = s;
    while (s < e) {
        char c = *s;
        if (c == '\r') {
            buf_addc(p, '\n');
            s += (s + 1 < e && s[1] == '\n') ? 2 : 1;
            continue;
        }
        if (bytes && (unsigned char)c >= 0x80)
            reportf(p, t->line, t->col + 1, t->end_line == t->line ? t->end_col + 1 : -1, false,
                    "bytes can only contain ASCII literal characters");
        if (c != '\\' || raw) {
            const char *q = s + 1;
            while (q < e && *q != '\\' && *q != '\r' && (!bytes || (unsigned char)*q < 0x80)) q++;
            if (raw) while (q < e && *q != '\r' && (!bytes || (unsigned char)*q < 0x80)) q++;
            buf_add(p, s, (size_t)(q - s));
            s = q;
            continue;
        }
        s = decode_escape(p, t, s, e, bytes, seg);
    }
}

/* Line/column tracker for positions inside a multi-line string token. */
typedef struct PosTrack {
    const char *at;
    const char *line_start;
    int line;
} PosTrack;

static void track_to(PosTrack *tr, const char *q) {
    for (const char *c = tr->at; c < q; c++) {
        if (*c == '\n' || (*c == '\r' && !(c + 1 < q && c[1] == '\n'))) {
            tr->line++;
            tr->line_start = c + 1;
        }
    }
    if (q > tr->at) tr->at = q;
}

/* Moves the pending literal text into an AST_STR part on the scratch. */
static void flush_literal(Parser *p, Token *t) {
    if (p->nbuf == 0) return;
    AstNode *s = node_tok(p, AST_STR, t);
    s->u.str.s = copy_str(p, p->buf, p->nbuf);
    s->u.str.len = p->nbuf;
    p->nbuf = 0;
    spush(p, s);
}

static const char *fstring_body(Parser *p, Token *t, PosTrack *tr, const char *s, const char *e, int lvl, bool raw);
static void merge_parts(Parser *p, AstList *parts);

/* Error at the token after the string group (CPython's location for
** f-string scanning errors). */
static _Noreturn void fstr_error(Parser *p, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    Token *t = &p->toks[p->pos];
    report(p, t->line, t->col + 1, t->col + 1, false, msg);
}

/* Parses the expression text [s, e) of an f-string field (positions from
** tr) and returns its node. */
static AstNode *fstring_expr(Parser *p, PosTrack *tr, const char *s, const char *e) {
    track_to(tr, s);
    Lexer *lx = malloc(sizeof(Lexer));
    if (!lx) oom(p);
    SyntaxErr lerr;
    memset(&lerr, 0, sizeof lerr);
    bool ok = lex_tokenize(lx, s, (size_t)(e - s), tr->line, (int)(s - tr->line_start), true, &lerr);
    Token *toks = lx->toks;
    bool hard = lx->failed;
    free(lx);
    if (!ok || hard) {
        free(toks);
        if (!ok) oom(p);
        p->fstring++;
        report(p, lerr.line, lerr.col, lerr.end_col, lerr.indentation, lerr.msg);
    }
    if (p->nsub >= MAX_SUBLEX) {
        free(toks);
        fstr_error(p, "f-string: expressions nested too deeply");
    }
    p->subtoks[p->nsub++] = toks;
    /* a soft error token keeps its message in the freed Lexer: copy it */
    int nt = 0;
    while (toks[nt].kind != TK_ENDMARKER && toks[nt].kind != TK_ERROR) nt++;
    if (toks[nt].kind == TK_ERROR) toks[nt].v.msg = "invalid syntax";
    nt++;

    Token *saved_toks = p->toks;
    int saved_n = p->ntoks, saved_pos = p->pos, saved_peek = p->maxpeek;
    int saved_fs_line = p->fs_line, saved_fs_col = p->fs_col, saved_far = p->far;
    if (!p->fstring) p->main_maxpeek = p->maxpeek;
    p->fs_line = tr->line;
    p->fs_col = (int)(s - tr->line_start);
    p->toks = toks;
    p->ntoks = nt;
    p->pos = 0;
    p->maxpeek = 0;
    p->far = 0;
    p->fstring++;
    AstNode *v;
    if (kind(p) == TK_YIELD) v = parse_yield_expr(p);
    else v = parse_star_expressions(p);
    if (v->kind == AST_STARRED) RAISE_NODE(p, v, "cannot use starred expression here");
    if (kind(p) != TK_ENDMARKER) fail(p);
    p->fstring--;
    p->toks = saved_toks;
    p->ntoks = saved_n;
    p->pos = saved_pos;
    p->maxpeek = saved_peek;
    p->fs_line = saved_fs_line;
    p->fs_col = saved_fs_col;
    p->far = saved_far;
    free(p->subtoks[--p->nsub]);
    return v;
}

/* Parses one replacement field; q points just after '{'. Pushes the parts
** (self-documenting text, AST_FORMATTED) and returns the position after
** the closing '}'. */
static const char *fstring_field(Parser *p, Token *t, PosTrack *tr, const char *q, const char *e, int lvl, bool raw) {
    const char *open = q - 1;
    if (lvl >= 2) fstr_error(p, "f-string: expressions nested too deeply");
    const char *s = q;
    char quote = 0;
    int qsize = 0, depth = 0;
    char parens[LEX_MAX_PAREN];
    while (q < e) {
        char ch = *q;
        if (ch == '\\') fstr_error(p, "f-string expression part cannot include a backslash");
        if (quote) {
            if (ch == quote) {
                if (qsize == 3) {
                    if (q + 2 < e && q[1] == ch && q[2] == ch) {
                        q += 3;
                        quote = 0;
                        continue;
                    }
                } else {
                    quote = 0;
                }
            }
            q++;
            continue;
        }
        if (ch == '\'' || ch == '"') {
            qsize = (q + 2 < e && q[1] == ch && q[2] == ch) ? 3 : 1;
            quote = ch;
            q += qsize;
            continue;
        }
        if (ch == '[' || ch == '(' || ch == '{') {
            if (depth >= LEX_MAX_PAREN) fstr_error(p, "f-string: too many nested parenthesis");
            parens[depth++] = ch;
            q++;
            continue;
        }
        if (ch == '#') fstr_error(p, "f-string expression part cannot include '#'");
        if (depth == 0 && (ch == '!' || ch == ':' || ch == '}' || ch == '=' || ch == '>' || ch == '<')) {
            if (q + 1 < e && q[1] == '=' && ch != ':' && ch != '}') {
                q += 2;
                continue;
            }
            if (ch == '>' || ch == '<') {
                q++;
                continue;
            }
            break;
        }
        if (ch == ']' || ch == ')' || ch == '}') {
            if (depth == 0) fstr_error(p, "f-string: unmatched '%c'", ch);
            char o = parens[--depth];
            if ((o == '(' && ch != ')') || (o == '[' && ch != ']') || (o == '{' && ch != '}'))
                fstr_error(p, "f-string: closing parenthesis '%c' does not match opening parenthesis '%c'", ch, o);
            q++;
            continue;
        }
        q++;
    }
    if (quote) fstr_error(p, "f-string: unterminated string");
    if (depth) fstr_error(p, "f-string: unmatched '%c'", parens[depth - 1]);
    if (q >= e) fstr_error(p, "f-string: expecting '}'");
    const char *expr_end = q;
    bool blank = true;
    for (const char *c = s; c < expr_end; c++)
        if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r' && *c != '\f') blank = false;
    if (blank) {
        if (*q == '!' || *q == ':' || *q == '=') fstr_error(p, "f-string: expression required before '%c'", *q);
        fstr_error(p, "f-string: empty expression not allowed");
    }
    track_to(tr, open);
    int fline = tr->line, fcol = (int)(open - tr->line_start) + 1;
    AstNode *value = fstring_expr(p, tr, s, expr_end);

    const char *doc_end = NULL;
    if (*q == '=') {
        q++;
        while (q < e && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '\f')) q++;
        doc_end = q;
        if (q >= e) fstr_error(p, "f-string: expecting '}'");
    }
    char conv = 0;
    if (*q == '!') {
        q++;
        if (q >= e) fstr_error(p, "f-string: expecting '}'");
        conv = *q++;
        if (conv != 's' && conv != 'r' && conv != 'a')
            fstr_error(p, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
    }
    if (q >= e) fstr_error(p, "f-string: expecting '}'");
    AstNode *spec = NULL;
    if (*q == ':') {
        q++;
        if (q >= e) fstr_error(p, "f-string: expecting '}'");
        int m = p->nstk;
        q = fstring_body(p, t, tr, q, e, lvl + 1, raw);
        flush_literal(p, t);
        spec = node_tok(p, AST_FSTRING, t);
        spec->u.fstring.parts = spop_list(p, m);
        merge_parts(p, &spec->u.fstring.parts);
    }
    if (q >= e || *q != '}') fstr_error(p, "f-string: expecting '}'");
    q++;
    if (doc_end) {
        AstNode *txt = node_tok(p, AST_STR, t);
        txt->u.str.s = copy_str(p, s, (size_t)(doc_end - s));
        txt->u.str.len = (size_t)(doc_end - s);
        spush(p, txt);
        if (!conv && !spec) conv = 'r';
    }
    AstNode *f = new_node(p, AST_FORMATTED);
    f->line = fline;
    f->col = fcol;
    track_to(tr, q);
    f->end_line = tr->line;
    f->end_col = (int)(q - tr->line_start) + 1;
    f->u.formatted.value = value;
    f->u.formatted.conversion = conv;
    f->u.formatted.spec = spec;
    spush(p, f);
    return q;
}

/* Parses f-string text [s, e) at nesting level lvl (0 = the string itself,
** 1+ = a format spec, which ends at an unmatched '}'). Literal text goes to
** the buffer, fields become parts on the scratch. Returns where it stopped. */
static const char *fstring_body(Parser *p, Token *t, PosTrack *tr, const char *s, const char *e, int lvl, bool raw) {
    const char *seg = s;
    while (s < e) {
        char c = *s;
        if (c == '{') {
            if (lvl == 0 && s + 1 < e && s[1] == '{') {
                buf_addc(p, '{');
                s += 2;
                continue;
            }
            flush_literal(p, t);
            s = fstring_field(p, t, tr, s + 1, e, lvl, raw);
            seg = s;
            continue;
        }
        if (c == '}') {
            if (lvl > 0) return s;
            if (s + 1 < e && s[1] == '}') {
                buf_addc(p, '}');
                s += 2;
                continue;
            }
            fstr_error(p, "f-string: single '}' is not allowed");
        }
        if (c == '\r') {
            buf_addc(p, '\n');
            s += (s + 1 < e && s[1] == '\n') ? 2 : 1;
            continue;
        }
        if (c == '\\' && !raw) {
            s = decode_escape(p, t, s, e, false, seg);
            continue;
        }
        buf_addc(p, c);
        s++;
    }
    return s;
}

/* Merges adjacent AST_STR parts of an f-string (CPython joins them). */
static void merge_parts(Parser *p, AstList *parts) {
    int out = 0;
    for (int i = 0; i < parts->len; i++) {
        AstNode *x = parts->items[i];
        if (x->kind == AST_STR && out > 0 && parts->items[out - 1]->kind == AST_STR) {
            AstNode *prevs = parts->items[out - 1];
            size_t n = prevs->u.str.len + x->u.str.len;
            char *d = alloc(p, n + 1);
            memcpy(d, prevs->u.str.s, prevs->u.str.len);
            memcpy(d + prevs->u.str.len, x->u.str.s, x->u.str.len);
            d[n] = 0;
            AstNode *m = node_from(p, AST_STR, prevs);
            end_node(m, x);
            m->u.str.s = d;
            m->u.str.len = n;
            parts->items[out - 1] = m;
            continue;
        }
        parts->items[out++] = x;
    }
    parts->len = out;
}

/* STRING+ : adjacent literals joined into one AST_STR / AST_BYTES /
** AST_FSTRING. */
static AstNode *parse_strings(Parser *p) {
    int i0 = p->pos;
    bool any_bytes = false, any_str = false, any_f = false;
    while (kind(p) == TK_STRING) {
        Token *t = advance(p);
        if (t->flags & LEXF_BYTES) any_bytes = true;
        else any_str = true;
        if (t->flags & LEXF_FSTR) any_f = true;
    }
    int i1 = p->pos;
    Token *first = &p->toks[i0], *last = &p->toks[i1 - 1];
    if (any_bytes && any_str) {
        Token *nt = peek(p);
        report(p, nt->line, nt->col + 1, nt->col + 1, false, "cannot mix bytes and nonbytes literals");
    }
    AstNode *n;
    p->nbuf = 0;
    if (!any_f) {
        for (int i = i0; i < i1; i++) {
            Token *t = &p->toks[i];
            int ql = t->quote_len, qs = (t->flags & LEXF_TRIPLE) ? 3 : 1;
            decode_body(p, t, t->start + ql, t->start + t->len - qs, (t->flags & LEXF_RAW) != 0,
                        (t->flags & LEXF_BYTES) != 0);
        }
        n = node_tok(p, any_bytes ? AST_BYTES : AST_STR, first);
        n->u.str.s = copy_str(p, p->buf ? p->buf : "", p->nbuf);
        n->u.str.len = p->nbuf;
        p->nbuf = 0;
    } else {
        int m = p->nstk;
        for (int i = i0; i < i1; i++) {
            Token *t = &p->toks[i];
            int ql = t->quote_len, qs = (t->flags & LEXF_TRIPLE) ? 3 : 1;
            const char *s = t->start + ql, *e = t->start + t->len - qs;
            bool raw = (t->flags & LEXF_RAW) != 0;
            if (!(t->flags & LEXF_FSTR)) {
                decode_body(p, t, s, e, raw, false);
                continue;
            }
            PosTrack tr = {t->start, t->start - t->col, t->line};
            fstring_body(p, t, &tr, s, e, 0, raw);
            flush_literal(p, t);
        }
        flush_literal(p, last);
        n = node_tok(p, AST_FSTRING, first);
        n->u.fstring.parts = spop_list(p, m);
        merge_parts(p, &n->u.fstring.parts);
    }
    end_tok(n, last);
    return n;
}

/* --------------------------------------------------------- parameters */

/* Parses def/lambda parameters up to ')' (def) or ':' (lambda). */
static void parse_params(Parser *p, AstParams *out, bool is_lambda) {
    int end = is_lambda ? TK_COLON : TK_RPAR;
    int m = p->nstk;
    int npos = 0, nkw = 0;
    bool seen_slash = false, seen_default = false;
    Token *star = NULL; /* '*' or '*args' seen */
    memset(out, 0, sizeof *out);
    while (kind(p) != end) {
        Token *t = peek(p);
        if (t->kind == TK_SLASH) {
            if (seen_slash) RAISE_TOK(p, t, "/ may appear only once");
            if (star) RAISE_TOK(p, t, "/ must be ahead of *");
            if (npos == 0) fail(p);
            advance(p);
            seen_slash = true;
            out->nposonly = npos;
        } else if (t->kind == TK_STAR) {
            if (out->kwarg) RAISE_TOK(p, t, "arguments cannot follow var-keyword argument");
            if (star) RAISE_TOK(p, t, "* argument may appear only once");
            advance(p);
            star = t;
            if (kind(p) == TK_NAME) {
                Token *nt = advance(p);
                AstParam *a = alloc(p, sizeof(AstParam));
                a->name = ident(p, nt);
                a->line = nt->line;
                a->col = nt->col + 1;
                if (!is_lambda && accept(p, TK_COLON))
                    a->annotation = kind(p) == TK_STAR ? starred(p) : parse_expression(p); /* *args: *Ts */
                if (kind(p) == TK_EQUAL) RAISE_TOK(p, peek(p), "var-positional argument cannot have default value");
                out->vararg = a;
            } else if (kind(p) == TK_COMMA) {
                if (peek_at(p, 1)->kind == end || peek_at(p, 1)->kind == TK_DOUBLESTAR) {
                    if (is_lambda) RAISE_TOK(p, peek_at(p, 1), "named arguments must follow bare *");
                    RAISE_TOK(p, t, "named arguments must follow bare *");
                }
            } else if (kind(p) == end) {
                if (is_lambda) RAISE_TOK(p, peek(p), "named arguments must follow bare *");
                RAISE_TOK(p, t, "named arguments must follow bare *");
            } else {
                fail(p);
            }
        } else if (t->kind == TK_DOUBLESTAR) {
            if (out->kwarg) RAISE_TOK(p, t, "arguments cannot follow var-keyword argument");
            advance(p);
            Token *nt = expect(p, TK_NAME);
            AstParam *a = alloc(p, sizeof(AstParam));
            a->name = ident(p, nt);
            a->line = nt->line;
            a->col = nt->col + 1;
            if (!is_lambda && accept(p, TK_COLON)) a->annotation = parse_expression(p);
            if (kind(p) == TK_EQUAL) RAISE_TOK(p, peek(p), "var-keyword argument cannot have default value");
            out->kwarg = a;
        } else if (t->kind == TK_LPAR && !is_lambda && !p->no_invalid) {
            /* "(a, b)" of plain names: CPython's invalid_parameters */
            int i = p->pos + 1;
            while (i < p->ntoks - 1 && p->toks[i].kind == TK_NAME) {
                i++;
                if (p->toks[i].kind != TK_COMMA) break;
                i++;
            }
            if (i == p->pos + 1 || p->toks[i].kind != TK_RPAR) fail(p);
            Token *c = &p->toks[i];
            reportf(p, t->line, t->col + 1, c->line == t->line ? c->end_col + 1 : -1, false,
                    "Function parameters cannot be parenthesized");
        } else if (t->kind == TK_NAME) {
            if (out->kwarg) RAISE_TOK(p, t, "arguments cannot follow var-keyword argument");
            advance(p);
            AstParam *a = alloc(p, sizeof(AstParam));
            a->name = ident(p, t);
            a->line = t->line;
            a->col = t->col + 1;
            if (!is_lambda && accept(p, TK_COLON)) a->annotation = parse_expression(p);
            if (kind(p) == TK_EQUAL) {
                Token *eq = advance(p);
                if (!is_lambda && (kind(p) == TK_COMMA || kind(p) == TK_RPAR) && !p->no_invalid)
                    RAISE_TOK(p, eq, "expected default value expression");
                a->default_ = parse_expression(p);
            }
            if (star) {
                nkw++;
            } else {
                if (a->default_) seen_default = true;
                else if (seen_default && (kind(p) == TK_COMMA || kind(p) == end))
                    RAISE_TOK(p, t, "non-default argument follows default argument");
                npos++;
            }
            spush(p, a);
        } else {
            fail(p);
        }
        if (!accept(p, TK_COMMA)) break;
    }
    int n = p->nstk - m;
    out->nparams = npos;
    out->nkwonly = nkw;
    if (n > 0) {
        out->params = alloc(p, sizeof(AstParam) * (size_t)n);
        for (int i = 0; i < n; i++) out->params[i] = *(AstParam *)p->stk[m + i];
    }
    p->nstk = m;
}

/* --------------------------------------------------------- statements */

/* ':' that CPython only diagnoses when a NEWLINE follows the header. */
static void expect_colon(Parser *p) {
    if (accept(p, TK_COLON)) return;
    Token *t = peek(p);
    if (t->kind == TK_NEWLINE) RAISE_TOK(p, t, "expected ':'");
    fail(p);
}

/* ':' that CPython requires unconditionally ("&&':'"). */
static void expect_colon_forced(Parser *p) {
    if (accept(p, TK_COLON)) return;
    Token *t = peek(p);
    if (t->kind == TK_ERROR || t->kind == TK_INDENT || t->kind == TK_DEDENT) fail(p);
    RAISE_TOK(p, t, "expected ':'");
}

/* Opens n loop/try/with blocks (CPython's static block limit). */
static void push_blocks(Parser *p, Token *t, int n) {
    p->blocks += n;
    if (p->blocks > MAX_BLOCKS) late_error(p, t->line, t->col + 1, 0, "too many statically nested blocks");
}

/* Ends a compound statement at its last token other than NEWLINE, INDENT
** or DEDENT (so a trailing ';' counts, as in CPython). */
static void end_stmt(Parser *p, AstNode *n) {
    for (int i = p->pos - 1; i >= 0; i--) {
        int k = p->toks[i].kind;
        if (k != TK_NEWLINE && k != TK_INDENT && k != TK_DEDENT) {
            end_tok(n, &p->toks[i]);
            return;
        }
    }
}

/* if/elif/else; an elif chain becomes nested If nodes in orelse (built
** iteratively so long chains do not recurse). */
static AstNode *parse_if(Parser *p) {
    int m = p->nstk;
    do {
        Token *t = advance(p);
        AstNode *n = node_tok(p, AST_IF, t);
        n->u.if_.test = parse_named_expression(p, true);
        expect_colon(p);
        n->u.if_.body = parse_block(p, t->kind == TK_ELIF ? "'elif' statement" : "'if' statement", t->line);
        spush(p, n);
    } while (kind(p) == TK_ELIF);
    AstList orelse = {NULL, 0};
    if (kind(p) == TK_ELSE) {
        Token *et = advance(p);
        expect_colon_forced(p);
        orelse = parse_block(p, "'else' statement", et->line);
    }
    /* all the chain ends where the statement ends */
    for (int i = p->nstk - 1; i >= m; i--) {
        AstNode *n = p->stk[i];
        n->u.if_.orelse = orelse;
        end_stmt(p, n);
        orelse.items = alloc(p, sizeof(AstNode *));
        orelse.items[0] = n;
        orelse.len = 1;
    }
    p->nstk = m;
    return orelse.items[0];
}

/* Optional 'else' block of for/while. */
static void loop_else(Parser *p, AstNode *n, AstList *orelse) {
    if (kind(p) != TK_ELSE) return;
    Token *et = advance(p);
    expect_colon_forced(p);
    *orelse = parse_block(p, "'else' statement", et->line);
    end_stmt(p, n);
}

static AstNode *parse_while(Parser *p) {
    Token *t = advance(p);
    AstNode *n = node_tok(p, AST_WHILE, t);
    n->u.while_.test = parse_named_expression(p, true);
    expect_colon(p);
    push_blocks(p, t, 1);
    n->u.while_.body = parse_block(p, "'while' statement", t->line);
    p->blocks -= 1;
    end_stmt(p, n);
    loop_else(p, n, &n->u.while_.orelse);
    return n;
}

static AstNode *parse_for(Parser *p) {
    Token *t = advance(p);
    AstNode *n = node_tok(p, AST_FOR, t);
    n->u.for_.target = parse_target_list(p, TGT_FOR);
    expect(p, TK_IN);
    n->u.for_.iter = parse_star_expressions(p);
    expect_colon(p);
    push_blocks(p, t, 1);
    n->u.for_.body = parse_block(p, "'for' statement", t->line);
    p->blocks -= 1;
    end_stmt(p, n);
    loop_else(p, n, &n->u.for_.orelse);
    return n;
}

/* with_item: expression ['as' star_target] */
static AstNode *parse_with_item(Parser *p) {
    Token *st = peek(p);
    AstNode *ctx = parse_expression(p);
    AstNode *n = node_tok(p, AST_WITHITEM, st);
    end_prev(p, n);
    n->u.withitem.context = ctx;
    if (accept(p, TK_AS)) {
        AstNode *v = parse_target_elem(p);
        int k = kind(p);
        if (k != TK_COMMA && k != TK_RPAR && k != TK_COLON) fail(p);
        check_target(p, v, TGT_STAR);
        n->u.withitem.vars = v;
        end_prev(p, n);
    }
    return n;
}

/* '(' with_item (',' with_item)* [','] ')' ':' — pushes the items. Used
** speculatively: "with (a, b):" is two items, "with (a, b) as c:" is not. */
static AstNode *with_paren_items(Parser *p) {
    expect(p, TK_LPAR);
    AstNode *first = NULL;
    for (;;) {
        AstNode *it = parse_with_item(p);
        if (!first) first = it;
        spush(p, it);
        if (!accept(p, TK_COMMA)) break;
        if (kind(p) == TK_RPAR) break;
    }
    expect(p, TK_RPAR);
    if (kind(p) != TK_COLON) fail(p);
    return first;
}

static AstNode *parse_with(Parser *p) {
    Token *t = advance(p);
    AstNode *n = node_tok(p, AST_WITH, t);
    int m = p->nstk;
    bool done = false;
    if (kind(p) == TK_LPAR) done = try_parse(p, with_paren_items, true) != NULL;
    if (!done) {
        for (;;) {
            spush(p, parse_with_item(p));
            if (!accept(p, TK_COMMA)) break;
        }
    }
    n->u.with.items = spop_list(p, m);
    expect_colon(p);
    push_blocks(p, t, 1);
    n->u.with.body = parse_block(p, "'with' statement", t->line);
    p->blocks -= 1;
    end_stmt(p, n);
    return n;
}

static AstNode *parse_try(Parser *p) {
    Token *t = advance(p);
    AstNode *n = node_tok(p, AST_TRY, t);
    expect_colon_forced(p);
    push_blocks(p, t, 1);
    n->u.try_.body = parse_block(p, "'try' statement", t->line);
    p->blocks -= 1;
    end_stmt(p, n);
    int m = p->nstk;
    AstNode *bare = NULL;
    while (kind(p) == TK_EXCEPT) {
        Token *et = advance(p);
        if (kind(p) == TK_STAR) {
            LATE_TOK(p, peek(p), "'except*' is not supported by gpy");
            advance(p);
        }
        AstNode *h = node_tok(p, AST_EXCEPTHANDLER, et);
        if (bare) LATE_NODE(p, bare, "default 'except:' must be last");
        if (kind(p) != TK_COLON) {
            AstNode *type = parse_expression(p);
            if (kind(p) == TK_COMMA && !p->no_invalid) {
                AstNode *last = type;
                while (accept(p, TK_COMMA)) {
                    if (!starts_expr(kind(p))) break;
                    last = parse_expression(p);
                }
                RAISE_RANGE(p, type, last, "multiple exception types must be parenthesized");
            }
            h->u.handler.type = type;
            if (accept(p, TK_AS)) {
                Token *nt = expect(p, TK_NAME);
                h->u.handler.name = ident(p, nt);
            }
        }
        expect_colon(p);
        push_blocks(p, et, 2);
        h->u.handler.body = parse_block(p, "'except' statement", et->line);
        p->blocks -= 2;
        end_stmt(p, h);
        if (!h->u.handler.type) bare = h;
        spush(p, h);
    }
    n->u.try_.handlers = spop_list(p, m);
    if (n->u.try_.handlers.len) {
        end_stmt(p, n);
        if (kind(p) == TK_ELSE) {
            Token *et = advance(p);
            expect_colon_forced(p);
            n->u.try_.orelse = parse_block(p, "'else' statement", et->line);
            end_stmt(p, n);
        }
    }
    if (kind(p) == TK_FINALLY) {
        Token *ft = advance(p);
        expect_colon_forced(p);
        push_blocks(p, ft, 1);
        n->u.try_.finalbody = parse_block(p, "'finally' statement", ft->line);
        p->blocks -= 1;
        end_stmt(p, n);
    }
    if (!n->u.try_.handlers.len && !n->u.try_.finalbody.len) RAISE_TOK(p, peek(p), "expected 'except' or 'finally' block");
    return n;
}

static AstNode *parse_def(Parser *p, AstList decorators) {
    Token *t = advance(p);
    Token *nt = expect(p, TK_NAME);
    AstNode *n = node_tok(p, AST_FUNCTIONDEF, t);
    n->u.func.name = ident(p, nt);
    n->u.func.decorators = decorators;
    if (kind(p) != TK_LPAR) {
        Token *x = peek(p);
        if (x->kind == TK_ERROR) fail(p);
        RAISE_TOK(p, x, "expected '('");
    }
    advance(p);
    enter(p);
    parse_params(p, &n->u.func.params, false);
    leave(p);
    expect(p, TK_RPAR);
    if (accept(p, TK_ARROW)) n->u.func.returns = parse_expression(p);
    expect_colon_forced(p);
    int saved = p->blocks;
    p->blocks = 0;
    n->u.func.body = parse_block(p, "function definition", t->line);
    p->blocks = saved;
    end_stmt(p, n);
    return n;
}

static AstNode *parse_class(Parser *p, AstList decorators) {
    Token *t = advance(p);
    Token *nt = expect(p, TK_NAME);
    AstNode *n = node_tok(p, AST_CLASSDEF, t);
    n->u.cls.name = ident(p, nt);
    n->u.cls.decorators = decorators;
    if (kind(p) == TK_LPAR) {
        Token *lp = advance(p);
        int m = p->nstk;
        AstNode *g;
        enter(p);
        parse_arguments(p, lp, &g, false);
        leave(p);
        expect(p, TK_RPAR);
        split_args(p, m, &n->u.cls.bases, &n->u.cls.keywords);
    }
    expect_colon(p);
    int saved = p->blocks;
    p->blocks = 0;
    n->u.cls.body = parse_block(p, "class definition", t->line);
    p->blocks = saved;
    end_stmt(p, n);
    return n;
}

/* 'async def/for/with': the plain statement (just pushed at stack index m),
** marked async and starting at the 'async' token, as CPython's nodes do. */
static void mark_async(Parser *p, int m, Token *at) {
    AstNode *n = p->stk[m];
    if (n->kind == AST_FUNCTIONDEF) n->u.func.is_async = true;
    else if (n->kind == AST_FOR) n->u.for_.is_async = true;
    else if (n->kind == AST_WITH) n->u.with.is_async = true;
    n->line = tok_line(at);
    n->col = tok_col(at);
}

static AstNode *parse_decorated(Parser *p) {
    int m = p->nstk;
    while (kind(p) == TK_AT) {
        advance(p);
        spush(p, parse_named_expression(p, true));
        expect(p, TK_NEWLINE);
    }
    AstList decos = spop_list(p, m);
    if (kind(p) == TK_ASYNC && peek_at(p, 1)->kind == TK_DEF) {
        Token *at = advance(p);
        AstNode *d = parse_def(p, decos);
        d->u.func.is_async = true;
        d->line = tok_line(at);
        d->col = tok_col(at);
        return d;
    }
    if (kind(p) == TK_DEF) return parse_def(p, decos);
    if (kind(p) == TK_CLASS) return parse_class(p, decos);
    fail(p);
}

/* Joins NAME ('.' NAME)* into one arena string. */
static const char *dotted_name(Parser *p, Token **last) {
    Token *t = expect(p, TK_NAME);
    *last = t;
    p->nbuf = 0;
    buf_add(p, t->start, (size_t)t->len);
    while (accept(p, TK_DOT)) {
        Token *n = expect(p, TK_NAME);
        buf_addc(p, '.');
        buf_add(p, n->start, (size_t)n->len);
        *last = n;
    }
    const char *r = copy_str(p, p->buf, p->nbuf);
    p->nbuf = 0;
    return r;
}

static AstNode *parse_import(Parser *p) {
    Token *t = advance(p);
    AstNode *n = node_tok(p, AST_IMPORT, t);
    int m = p->nstk;
    do {
        Token *first = peek(p), *last;
        AstNode *a = node_tok(p, AST_ALIAS, first);
        a->u.alias.name = dotted_name(p, &last);
        if (accept(p, TK_AS)) last = expect(p, TK_NAME), a->u.alias.asname = ident(p, last);
        end_tok(a, last);
        spush(p, a);
    } while (accept(p, TK_COMMA));
    n->u.import.names = spop_list(p, m);
    end_prev(p, n);
    return n;
}

static AstNode *parse_from_import(Parser *p) {
    Token *t = advance(p);
    AstNode *n = node_tok(p, AST_IMPORTFROM, t);
    int level = 0;
    for (;;) {
        if (accept(p, TK_DOT)) level++;
        else if (accept(p, TK_ELLIPSIS)) level += 3;
        else break;
    }
    if (kind(p) == TK_NAME) {
        Token *last;
        n->u.import.module = dotted_name(p, &last);
    } else if (level == 0) {
        fail(p);
    }
    n->u.import.level = level;
    expect(p, TK_IMPORT);
    int m = p->nstk;
    if (kind(p) == TK_STAR) {
        Token *st = advance(p);
        AstNode *a = node_tok(p, AST_ALIAS, st);
        a->u.alias.name = "*";
        spush(p, a);
    } else {
        bool paren = accept(p, TK_LPAR);
        for (;;) {
            Token *nt = expect(p, TK_NAME);
            AstNode *a = node_tok(p, AST_ALIAS, nt);
            a->u.alias.name = ident(p, nt);
            if (accept(p, TK_AS)) {
                Token *as = expect(p, TK_NAME);
                a->u.alias.asname = ident(p, as);
                end_tok(a, as);
            }
            spush(p, a);
            if (!accept(p, TK_COMMA)) break;
            if (paren && kind(p) == TK_RPAR) break;
            if (!paren && kind(p) != TK_NAME) {
                Token *x = peek(p);
                if (!p->no_invalid && (x->kind == TK_NEWLINE || x->kind == TK_SEMI))
                    report(p, x->line, x->col + 1, x->col + 1, false,
                           "trailing comma not allowed without surrounding parentheses");
                fail(p);
            }
        }
        if (paren) expect(p, TK_RPAR);
    }
    n->u.import.names = spop_list(p, m);
    end_prev(p, n);
    return n;
}

static AstNode *parse_names_stmt(Parser *p, AstKind k) {
    Token *t = advance(p);
    AstNode *n = node_tok(p, k, t);
    int m = p->nstk;
    do {
        Token *nt = expect(p, TK_NAME);
        spush(p, (void *)ident(p, nt));
    } while (accept(p, TK_COMMA));
    int cnt = p->nstk - m;
    n->u.names.names = alloc(p, sizeof(char *) * (size_t)cnt);
    for (int i = 0; i < cnt; i++) n->u.names.names[i] = p->stk[m + i];
    n->u.names.len = cnt;
    p->nstk = m;
    end_prev(p, n);
    return n;
}

/* Validates the targets of "t1 = t2 = ... = value" with CPython's messages.
** eq is the token index of the first '='. */
/* Validates assignment target t (the i-th of a chain) when the '=' after it
** is the current token; like CPython this does not need a right side. */
static void check_assign_target(Parser *p, AstNode *t, int i, bool first_bare, int stmt_start) {
    if ((t->kind == AST_YIELD || t->kind == AST_YIELDFROM) && !(i == 0 && p->toks[stmt_start].kind == TK_LPAR))
        RAISE_NODE(p, t, "assignment to yield expression not possible");
    AstNode *bad = invalid_target(t, TGT_STAR);
    if (bad) {
        if (i == 0) {
            /* CPython re-reads the last element before '=' as a named
            ** expression: "x = 1" in a condition-like position */
            AstNode *last = first_bare ? t->u.seq.elts.items[t->u.seq.elts.len - 1] : t;
            int eq = p->pos;
            bool paren = false;
            if (p->toks[eq - 1].kind == TK_RPAR) {
                int o = matching_open(p, eq - 1);
                paren = first_bare ? o > 0 && p->toks[o - 1].kind == TK_COMMA : o == stmt_start;
            }
            invalid_named_assign(p, last, paren);
            p->pos = eq;
        }
        RAISE_NODE(p, bad, "cannot assign to %s", expr_name(bad));
    }
    check_starred_targets(p, t, true);
}

/* star_named_expression (',' star_named_expression)* [','] for try_parse. */
static AstNode *spec_star_named_group(Parser *p) {
    AstNode *first = parse_star_named(p);
    while (accept(p, TK_COMMA) && (starts_expr(kind(p)) || kind(p) == TK_STAR)) parse_star_named(p);
    return first;
}

static AstNode *assign_rhs(Parser *p) {
    AstNode *v = kind(p) == TK_YIELD ? parse_yield_expr(p) : parse_star_expressions(p);
    return v;
}

static BinOp aug_op(int k) {
    static const BinOp ops[] = {BINOP_ADD, BINOP_SUB, BINOP_MUL, BINOP_TRUEDIV, BINOP_MOD, BINOP_AND, BINOP_OR,
                                BINOP_XOR, BINOP_LSHIFT, BINOP_RSHIFT, BINOP_POW, BINOP_FLOORDIV, BINOP_MATMUL};
    return ops[k - TK_PLUSEQ];
}

/* Expression statement, assignment, augmented or annotated assignment. */
static AstNode *parse_expr_stmt(Parser *p) {
    Token *start = peek(p);
    p->last_bare = NULL;
    AstNode *e = kind(p) == TK_YIELD ? parse_yield_expr(p) : parse_star_expressions(p);
    bool e_bare = e == p->last_bare;
    int k = kind(p);
    int stmt_start = (int)(start - p->toks);
    if (e_bare && starts_expr(k) && !p->no_invalid) {
        /* CPython's invalid_assignment reads "a, b c = 1" as groups of
        ** named expressions, so "c = 1" gets the '==' hint */
        int save = p->pos;
        while (starts_expr(kind(p)) && try_parse(p, spec_star_named_group, true)) {
        }
        p->pos = save;
    }
    if (k == TK_EQUAL) {
        int m = p->nstk;
        check_assign_target(p, e, 0, e_bare, stmt_start);
        spush(p, e);
        AstNode *value = NULL;
        while (accept(p, TK_EQUAL)) {
            AstNode *v = assign_rhs(p);
            if (kind(p) == TK_EQUAL) {
                check_assign_target(p, v, 1, false, stmt_start);
                spush(p, v);
                continue;
            }
            value = v;
        }
        if (value->kind == AST_STARRED) LATE_NODE(p, value, "can't use starred expression here");
        AstNode *n = node_tok(p, AST_ASSIGN, start);
        n->u.assign.targets = spop_list(p, m);
        n->u.assign.value = value;
        end_prev(p, n);
        return n;
    }
    if (k >= TK_PLUSEQ && k <= TK_ATEQ) {
        if (e->kind != AST_NAME && e->kind != AST_ATTRIBUTE && e->kind != AST_SUBSCRIPT)
            RAISE_NODE(p, e, "'%s' is an illegal expression for augmented assignment", expr_name(e));
        advance(p);
        AstNode *v = assign_rhs(p);
        if (v->kind == AST_STARRED) LATE_NODE(p, v, "can't use starred expression here");
        AstNode *n = node_tok(p, AST_AUGASSIGN, start);
        n->u.augassign.target = e;
        n->u.augassign.op = aug_op(k);
        n->u.augassign.value = v;
        end_prev(p, n);
        return n;
    }
    if (k == TK_COLON) {
        if (e->kind != AST_NAME && e->kind != AST_ATTRIBUTE && e->kind != AST_SUBSCRIPT) {
            /* CPython names a bad target only when an annotation follows;
            ** otherwise the error is "invalid syntax" at the ':' */
            Token *colon = advance(p);
            if (p->no_invalid || e->kind == AST_STARRED || !try_parse(p, spec_expression, true)) {
                p->pos = (int)(colon - p->toks);
                fail(p);
            }
            if (e->kind == AST_TUPLE) RAISE_NODE(p, e, "only single target (not tuple) can be annotated");
            if (e->kind == AST_LIST) RAISE_NODE(p, e, "only single target (not list) can be annotated");
            RAISE_NODE(p, e, "illegal target for annotation");
        }
        advance(p);
        AstNode *n = node_tok(p, AST_ANNASSIGN, start);
        n->u.annassign.target = e;
        n->u.annassign.annotation = parse_expression(p);
        n->u.annassign.simple = e->kind == AST_NAME && start->kind == TK_NAME;
        if (accept(p, TK_EQUAL)) n->u.annassign.value = assign_rhs(p);
        end_prev(p, n);
        return n;
    }
    if (e->kind == AST_STARRED) LATE_NODE(p, e, "can't use starred expression here");
    AstNode *n = node_tok(p, AST_EXPR, start);
    n->u.expr.value = e;
    end_prev(p, n);
    return n;
}

static AstNode *parse_simple_stmt(Parser *p) {
    Token *t = peek(p);
    AstNode *n;
    switch (t->kind) {
    case TK_PASS: advance(p); return node_tok(p, AST_PASS, t);
    case TK_BREAK: advance(p); return node_tok(p, AST_BREAK, t);
    case TK_CONTINUE: advance(p); return node_tok(p, AST_CONTINUE, t);
    case TK_RETURN:
        advance(p);
        n = node_tok(p, AST_RETURN, t);
        if (starts_expr(kind(p)) || kind(p) == TK_STAR) {
            n->u.ret.value = parse_star_expressions(p);
            if (n->u.ret.value->kind == AST_STARRED) LATE_NODE(p, n->u.ret.value, "can't use starred expression here");
            end_prev(p, n);
        }
        return n;
    case TK_RAISE:
        advance(p);
        n = node_tok(p, AST_RAISE, t);
        if (starts_expr(kind(p))) {
            n->u.raise.exc = parse_expression(p);
            if (accept(p, TK_FROM)) n->u.raise.cause = parse_expression(p);
            end_prev(p, n);
        }
        return n;
    case TK_GLOBAL: return parse_names_stmt(p, AST_GLOBAL);
    case TK_NONLOCAL: return parse_names_stmt(p, AST_NONLOCAL);
    case TK_DEL: {
        advance(p);
        n = node_tok(p, AST_DELETE, t);
        p->last_bare = NULL;
        AstNode *e = parse_star_expressions(p);
        int m = p->nstk;
        if (e == p->last_bare) {
            for (int i = 0; i < e->u.seq.elts.len; i++) spush(p, e->u.seq.elts.items[i]);
        } else {
            spush(p, e);
        }
        for (int i = m; i < p->nstk; i++) check_target(p, p->stk[i], TGT_DEL);
        n->u.del.targets = spop_list(p, m);
        end_prev(p, n);
        return n;
    }
    case TK_ASSERT:
        advance(p);
        n = node_tok(p, AST_ASSERT, t);
        n->u.assert_.test = parse_expression(p);
        if (accept(p, TK_COMMA)) n->u.assert_.msg = parse_expression(p);
        end_prev(p, n);
        return n;
    case TK_IMPORT: return parse_import(p);
    case TK_FROM: return parse_from_import(p);
    default:
        return parse_expr_stmt(p);
    }
}

/* simple_stmts: simple_stmt (';' simple_stmt)* [';'] NEWLINE — pushes each. */
static void parse_simple_stmts(Parser *p) {
    for (;;) {
        spush(p, parse_simple_stmt(p));
        if (!accept(p, TK_SEMI)) break;
        if (kind(p) == TK_NEWLINE) break;
    }
    expect(p, TK_NEWLINE);
}

static void parse_simple_stmts(Parser *p);

/* parse_simple_stmts for try_parse (the statements stay on the scratch). */
static AstNode *spec_simple_stmts(Parser *p) {
    parse_simple_stmts(p);
    return p->stk[p->nstk - 1];
}

/* ------------------------------------------------------ match statements */

/* 'match', 'case' and '_' are soft keywords: NAME tokens with that text. */
static bool is_soft(Token *t, const char *kw) {
    return t->kind == TK_NAME && (size_t)t->len == strlen(kw) && memcmp(t->start, kw, (size_t)t->len) == 0;
}

static AstNode *parse_pattern(Parser *p);

static bool is_number(int k) {
    return k == TK_INT || k == TK_FLOAT || k == TK_IMAG;
}

/* signed_number: NUMBER | '-' NUMBER (no power, call or subscript after it). */
static AstNode *signed_number(Parser *p) {
    int off = kind(p) == TK_MINUS ? 1 : 0;
    if (!is_number(peek_at(p, off)->kind)) fail(p);
    int nk = peek_at(p, off + 1)->kind;
    if (nk == TK_DOUBLESTAR || nk == TK_DOT || nk == TK_LPAR || nk == TK_LSQB) {
        p->pos += off + 1;
        fail(p);
    }
    return off ? parse_factor(p) : parse_atom(p);
}

/* literal_expr: a signed number, a complex literal (real +/- imaginary), strings, None, True, False. */
static AstNode *literal_expr(Parser *p) {
    int k = kind(p);
    if (k == TK_STRING) return parse_strings(p);
    if (k == TK_NONE || k == TK_TRUE || k == TK_FALSE) return parse_atom(p);
    AstNode *n = signed_number(p);
    k = kind(p);
    if (k != TK_PLUS && k != TK_MINUS) return n;
    AstNode *real = n->kind == AST_UNARYOP ? n->u.unary.operand : n;
    if (real->kind == AST_IMAG) RAISE_NODE(p, real, "real number required in complex literal");
    advance(p);
    if (!is_number(kind(p))) fail(p);
    AstNode *imag = parse_atom(p);
    if (imag->kind != AST_IMAG) RAISE_NODE(p, imag, "imaginary number required in complex literal");
    AstNode *b = node_from(p, AST_BINOP, n);
    b->u.binop.op = k == TK_PLUS ? BINOP_ADD : BINOP_SUB;
    b->u.binop.left = n;
    b->u.binop.right = imag;
    end_node(b, imag);
    return b;
}

/* name_or_attr: NAME ('.' NAME)* as a Name or Attribute chain. */
static AstNode *name_or_attr(Parser *p) {
    AstNode *n = name_node(p, expect(p, TK_NAME));
    while (accept(p, TK_DOT)) {
        Token *a = expect(p, TK_NAME);
        AstNode *at = node_from(p, AST_ATTRIBUTE, n);
        at->u.attr.value = n;
        at->u.attr.attr = ident(p, a);
        end_tok(at, a);
        n = at;
    }
    return n;
}

/* pattern_capture_target: !"_" NAME !('.' | '(' | '='). */
static const char *capture_target(Parser *p) {
    Token *t = peek(p);
    if (t->kind != TK_NAME || is_soft(t, "_")) fail(p);
    int nk = peek_at(p, 1)->kind;
    if (nk == TK_DOT || nk == TK_LPAR || nk == TK_EQUAL) fail(p);
    advance(p);
    return ident(p, t);
}

/* star_pattern: '*' NAME | '*' '_' (anything else: a pattern). */
static AstNode *maybe_star_pattern(Parser *p) {
    if (kind(p) != TK_STAR) return parse_pattern(p);
    Token *s = advance(p);
    AstNode *n = node_tok(p, AST_MATCH_STAR, s);
    if (is_soft(peek(p), "_")) advance(p);
    else n->u.pat_as.name = capture_target(p);
    end_prev(p, n);
    return n;
}

static bool starts_pattern(int k) {
    switch (k) {
    case TK_NAME: case TK_INT: case TK_FLOAT: case TK_IMAG: case TK_STRING: case TK_MINUS:
    case TK_LPAR: case TK_LSQB: case TK_LBRACE: case TK_NONE: case TK_TRUE: case TK_FALSE: case TK_STAR:
        return true;
    default:
        return false;
    }
}

/* Items of a sequence pattern up to the closing token (or, for an open
** sequence, up to what cannot start a pattern). */
static AstNode *sequence_items(Parser *p, Token *start, int close, AstNode *first) {
    int m = p->nstk;
    if (first) spush(p, first);
    while (first ? accept(p, TK_COMMA) : true) {
        first = (AstNode *)1;
        if (close ? kind(p) == close : !starts_pattern(kind(p))) break;
        spush(p, maybe_star_pattern(p));
    }
    AstNode *n = node_tok(p, AST_MATCH_SEQUENCE, start);
    if (close) expect(p, close);
    n->u.pat_seq.patterns = spop_list(p, m);
    end_prev(p, n);
    return n;
}

/* mapping_pattern: '{' [key: pattern, ...] [**rest] [','] '}' */
static AstNode *mapping_pattern(Parser *p) {
    Token *open = advance(p);
    AstNode *n = node_tok(p, AST_MATCH_MAPPING, open);
    int m = p->nstk;
    while (kind(p) != TK_RBRACE) {
        if (accept(p, TK_DOUBLESTAR)) {
            n->u.pat_map.rest = capture_target(p);
            accept(p, TK_COMMA);
            break;
        }
        AstNode *key = kind(p) == TK_NAME ? name_or_attr(p) : literal_expr(p);
        if (key->kind == AST_NAME) {
            p->pos--;
            fail(p);
        }
        expect(p, TK_COLON);
        spush(p, key);
        spush(p, parse_pattern(p));
        if (!accept(p, TK_COMMA)) break;
    }
    expect(p, TK_RBRACE);
    int cnt = (p->nstk - m) / 2;
    AstList keys = {alloc(p, sizeof(AstNode *) * (size_t)(cnt + 1)), cnt};
    AstList pats = {alloc(p, sizeof(AstNode *) * (size_t)(cnt + 1)), cnt};
    for (int i = 0; i < cnt; i++) {
        keys.items[i] = p->stk[m + 2 * i];
        pats.items[i] = p->stk[m + 2 * i + 1];
    }
    p->nstk = m;
    n->u.pat_map.keys = keys;
    n->u.pat_map.patterns = pats;
    end_prev(p, n);
    return n;
}

/* class_pattern: cls '(' [positional, ...] [attr=pattern, ...] [','] ')' */
static AstNode *class_pattern(Parser *p, AstNode *cls) {
    advance(p); /* '(' */
    AstNode *n = node_from(p, AST_MATCH_CLASS, cls);
    n->u.pat_class.cls = cls;
    int m = p->nstk;
    int npos = 0;
    while (kind(p) != TK_RPAR) {
        if (kind(p) == TK_NAME && peek_at(p, 1)->kind == TK_EQUAL) {
            Token *a = advance(p);
            advance(p);
            spush(p, (void *)ident(p, a));
            spush(p, parse_pattern(p));
        } else if (p->nstk > m + npos) {
            /* positional patterns after keyword ones: CPython underlines that run */
            AstNode *first = parse_pattern(p), *last = first;
            while (kind(p) == TK_COMMA && starts_pattern(peek_at(p, 1)->kind) &&
                   !(peek_at(p, 1)->kind == TK_NAME && peek_at(p, 2)->kind == TK_EQUAL)) {
                advance(p);
                last = parse_pattern(p);
            }
            if (p->no_invalid) fail(p);
            RAISE_RANGE(p, first, last, "positional patterns follow keyword patterns");
        } else {
            spush(p, parse_pattern(p));
            npos++;
        }
        if (!accept(p, TK_COMMA)) break;
    }
    expect(p, TK_RPAR);
    int nkw = (p->nstk - m - npos) / 2;
    n->u.pat_class.kwd_attrs = alloc(p, sizeof(char *) * (size_t)(nkw + 1));
    AstList kp = {alloc(p, sizeof(AstNode *) * (size_t)(nkw + 1)), nkw};
    for (int i = 0; i < nkw; i++) {
        n->u.pat_class.kwd_attrs[i] = p->stk[m + npos + 2 * i];
        kp.items[i] = p->stk[m + npos + 2 * i + 1];
    }
    p->nstk = m + npos;
    n->u.pat_class.kwd_patterns = kp;
    n->u.pat_class.patterns = spop_list(p, m);
    end_prev(p, n);
    return n;
}

static AstNode *closed_pattern(Parser *p) {
    Token *t = peek(p);
    AstNode *n;
    switch (t->kind) {
    case TK_NONE: case TK_TRUE: case TK_FALSE:
        n = node_tok(p, AST_MATCH_SINGLETON, t);
        n->u.pat_value.value = parse_atom(p);
        return n;
    case TK_INT: case TK_FLOAT: case TK_IMAG: case TK_MINUS: case TK_STRING: {
        AstNode *v = literal_expr(p);
        n = node_from(p, AST_MATCH_VALUE, v);
        n->u.pat_value.value = v;
        return n;
    }
    case TK_NAME: {
        if (peek_at(p, 1)->kind != TK_DOT && peek_at(p, 1)->kind != TK_LPAR) {
            n = node_tok(p, AST_MATCH_AS, t);
            if (is_soft(t, "_")) advance(p);
            else n->u.pat_as.name = capture_target(p);
            return n;
        }
        AstNode *v = name_or_attr(p);
        if (kind(p) == TK_LPAR) return class_pattern(p, v);
        if (kind(p) == TK_EQUAL) fail(p);
        n = node_from(p, AST_MATCH_VALUE, v);
        n->u.pat_value.value = v;
        return n;
    }
    case TK_LPAR: {
        advance(p);
        if (kind(p) == TK_RPAR) return sequence_items(p, t, TK_RPAR, NULL);
        AstNode *first = maybe_star_pattern(p);
        if (kind(p) == TK_COMMA) return sequence_items(p, t, TK_RPAR, first);
        if (first->kind == AST_MATCH_STAR) fail(p);
        expect(p, TK_RPAR);
        return first; /* a group: the pattern itself */
    }
    case TK_LSQB:
        advance(p);
        return sequence_items(p, t, TK_RSQB, NULL);
    case TK_LBRACE:
        return mapping_pattern(p);
    default:
        fail(p);
    }
}

/* or_pattern: closed_pattern ('|' closed_pattern)* */
static AstNode *or_pattern(Parser *p) {
    enter(p);
    AstNode *first = closed_pattern(p);
    if (kind(p) != TK_VBAR) {
        leave(p);
        return first;
    }
    int m = p->nstk;
    spush(p, first);
    while (accept(p, TK_VBAR)) spush(p, closed_pattern(p));
    AstNode *n = node_from(p, AST_MATCH_OR, first);
    n->u.pat_seq.patterns = spop_list(p, m);
    end_prev(p, n);
    leave(p);
    return n;
}

/* pattern: or_pattern ['as' capture_target] */
static AstNode *parse_pattern(Parser *p) {
    AstNode *pat = or_pattern(p);
    if (kind(p) != TK_AS) return pat;
    advance(p);
    Token *t = peek(p);
    if (is_soft(t, "_") && !p->no_invalid) RAISE_TOK(p, t, "cannot use '_' as a target");
    if (t->kind != TK_NAME && !p->no_invalid && starts_expr(t->kind)) {
        AstNode *e = try_parse(p, spec_expression, false);
        if (e) RAISE_NODE(p, e, "invalid pattern target");
    }
    AstNode *n = node_from(p, AST_MATCH_AS, pat);
    n->u.pat_as.pattern = pat;
    n->u.pat_as.name = capture_target(p);
    end_prev(p, n);
    return n;
}

/* patterns: an open sequence "a, *b" or one pattern. */
static AstNode *parse_patterns(Parser *p) {
    Token *start = peek(p);
    AstNode *first = maybe_star_pattern(p);
    if (kind(p) == TK_COMMA) return sequence_items(p, start, 0, first);
    if (first->kind == AST_MATCH_STAR) fail(p);
    return first;
}

/* subject_expr: star_named_expression ',' [star_named_expressions] | named_expression */
static AstNode *match_subject(Parser *p) {
    Token *st = peek(p);
    AstNode *e = kind(p) == TK_STAR ? starred(p) : parse_named_expression(p, false);
    if (kind(p) != TK_COMMA) {
        if (e->kind == AST_STARRED) fail(p);
        return e;
    }
    int m = p->nstk;
    spush(p, e);
    while (accept(p, TK_COMMA) && (starts_expr(kind(p)) || kind(p) == TK_STAR)) spush(p, parse_star_named(p));
    return bare_tuple_from(p, m, st);
}

/* "match" subject ':' — a match statement when NEWLINE follows. */
static AstNode *spec_match_head(Parser *p) {
    advance(p);
    AstNode *s = match_subject(p);
    expect(p, TK_COLON);
    return s;
}

/* "match" subject NEWLINE — CPython's "expected ':'". */
static AstNode *spec_match_no_colon(Parser *p) {
    advance(p);
    AstNode *s = match_subject(p);
    if (kind(p) != TK_NEWLINE) fail(p);
    return s;
}

static AstNode *parse_case(Parser *p) {
    Token *c = peek(p);
    if (!is_soft(c, "case")) fail(p);
    advance(p);
    AstNode *n = node_tok(p, AST_MATCH_CASE, c);
    n->u.match_case.pattern = parse_patterns(p);
    if (accept(p, TK_IF)) n->u.match_case.guard = parse_named_expression(p, true);
    expect_colon(p);
    n->u.match_case.body = parse_block(p, "'case' statement", c->line);
    end_stmt(p, n);
    return n;
}

static AstNode *parse_match(Parser *p) {
    Token *t = peek(p);
    advance(p);
    AstNode *n = node_tok(p, AST_MATCH, t);
    n->u.match.subject = match_subject(p);
    expect_colon(p);
    expect(p, TK_NEWLINE);
    if (kind(p) != TK_INDENT) {
        Token *b = peek(p);
        if (b->kind == TK_ERROR) report_errtok(p, b);
        reportf(p, tok_line(b), tok_col(b), 0, true, "expected an indented block after 'match' statement on line %d",
                t->line);
    }
    advance(p);
    enter(p);
    int m = p->nstk;
    do spush(p, parse_case(p));
    while (kind(p) != TK_DEDENT);
    advance(p);
    leave(p);
    n->u.match.cases = spop_list(p, m);
    end_stmt(p, n);
    return n;
}

/* A line starting with the NAME 'match': a match statement when its head
** parses as one (CPython tries match_stmt before simple statements), else
** ordinary statements ("match = 3", "match(x)"). */
static void parse_match_or_simple(Parser *p) {
    int start = p->pos, far = -1;
    if (try_parse(p, spec_match_head, false)) {
        bool newline = kind(p) == TK_NEWLINE;
        far = p->pos; /* CPython's generic error then points past the ':' */
        p->pos = start;
        if (newline) {
            spush(p, parse_match(p));
            return;
        }
    }
    if (try_parse(p, spec_simple_stmts, false)) return;
    if (!p->no_invalid && try_parse(p, spec_match_no_colon, false)) RAISE_TOK(p, peek(p), "expected ':'");
    if (far > p->far && p->jb == p->top_jb) p->far = far;
    parse_simple_stmts(p);
}

/* Pushes the statement(s) at the current token onto the scratch stack. */
static void parse_statement(Parser *p) {
    if (is_soft(peek(p), "match")) {
        parse_match_or_simple(p);
        return;
    }
    switch (kind(p)) {
    case TK_IF: spush(p, parse_if(p)); return;
    case TK_WHILE: spush(p, parse_while(p)); return;
    case TK_FOR: spush(p, parse_for(p)); return;
    case TK_WITH: spush(p, parse_with(p)); return;
    case TK_TRY: spush(p, parse_try(p)); return;
    case TK_DEF: spush(p, parse_def(p, (AstList){NULL, 0})); return;
    case TK_CLASS: spush(p, parse_class(p, (AstList){NULL, 0})); return;
    case TK_AT: spush(p, parse_decorated(p)); return;
    case TK_ASYNC: {
        int nk = peek_at(p, 1)->kind;
        if (nk != TK_DEF && nk != TK_FOR && nk != TK_WITH) fail(p);
        Token *at = advance(p);
        int m = p->nstk;
        parse_statement(p);
        if (p->nstk > m) mark_async(p, m, at);
        return;
    }
    default:
        parse_simple_stmts(p);
    }
}

/* block: NEWLINE INDENT statements DEDENT | simple_stmts */
static AstList parse_block(Parser *p, const char *what, int line) {
    int m = p->nstk;
    if (kind(p) != TK_NEWLINE) {
        parse_simple_stmts(p);
        return spop_list(p, m);
    }
    advance(p); /* NEWLINE */
    if (kind(p) != TK_INDENT) {
        Token *t = peek(p);
        if (t->kind == TK_ERROR) report_errtok(p, t);
        if (t->kind == TK_ENDMARKER || t->kind == TK_DEDENT)
            reportf(p, tok_line(t), tok_col(t), 0, true, "expected an indented block after %s on line %d", what, line);
        reportf(p, t->line, t->col + 1, 0, true, "expected an indented block after %s on line %d", what, line);
    }
    advance(p);
    enter(p);
    while (kind(p) != TK_DEDENT) parse_statement(p);
    advance(p);
    leave(p);
    return spop_list(p, m);
}

/* ------------------------------------------------------ entry points */

static AstNode *parse_file_input(Parser *p) {
    AstNode *mod = new_node(p, AST_MODULE);
    mod->line = 1;
    mod->col = 1;
    int m = p->nstk;
    while (kind(p) != TK_ENDMARKER) parse_statement(p);
    mod->u.module.body = spop_list(p, m);
    Token *e = peek(p);
    mod->end_line = e->line;
    mod->end_col = e->col + 1;
    return mod;
}

/* eval input: expressions NEWLINE* ENDMARKER (leading indentation ok). */
static AstNode *parse_eval_input(Parser *p) {
    AstNode *mod = new_node(p, AST_MODULE);
    mod->line = 1;
    mod->col = 1;
    accept(p, TK_INDENT);
    Token *st = peek(p);
    AstNode *e = parse_expression(p);
    if (kind(p) == TK_COMMA) {
        int m = p->nstk;
        spush(p, e);
        while (accept(p, TK_COMMA)) {
            if (!starts_expr(kind(p))) break;
            spush(p, parse_expression(p));
        }
        e = bare_tuple_from(p, m, st);
    }
    while (accept(p, TK_NEWLINE) || accept(p, TK_DEDENT)) {
    }
    if (kind(p) != TK_ENDMARKER) fail(p);
    AstNode *es = node_from(p, AST_EXPR, e);
    es->u.expr.value = e;
    mod->u.module.body.items = alloc(p, sizeof(AstNode *));
    mod->u.module.body.items[0] = es;
    mod->u.module.body.len = 1;
    end_node(mod, e);
    return mod;
}

/* Depth-first walk with an explicit stack: rejects trees deeper than
** MAX_AST_DEPTH (e.g. "1+1+...+1" 100000 times), which the recursive
** compiler passes could not handle. */
typedef struct DepthWalk {
    AstNode **nodes;
    int *depths;
    int n, cap;
    int cur;
    bool oom;
} DepthWalk;

static void depth_push(AstNode *child, void *ud) {
    DepthWalk *w = ud;
    if (w->oom) return;
    if (w->n == w->cap) {
        int ncap = w->cap ? w->cap * 2 : 256;
        AstNode **nn = realloc(w->nodes, sizeof(AstNode *) * (size_t)ncap);
        if (!nn) {
            w->oom = true;
            return;
        }
        w->nodes = nn;
        int *nd = realloc(w->depths, sizeof(int) * (size_t)ncap);
        if (!nd) {
            w->oom = true;
            return;
        }
        w->depths = nd;
        w->cap = ncap;
    }
    w->nodes[w->n] = child;
    w->depths[w->n] = w->cur + 1;
    w->n++;
}

static void check_depth(Parser *p, AstNode *root) {
    DepthWalk w = {0};
    w.cur = 0;
    depth_push(root, &w);
    AstNode *deep = NULL;
    while (w.n > 0 && !w.oom) {
        w.n--;
        AstNode *n = w.nodes[w.n];
        int d = w.depths[w.n];
        if (d > MAX_AST_DEPTH) {
            deep = n;
            break;
        }
        w.cur = d;
        ast_visit_children(n, depth_push, &w);
    }
    bool was_oom = w.oom;
    free(w.nodes);
    free(w.depths);
    if (was_oom) oom(p);
    if (deep) {
        /* where CPython's compiler runs out of recursion depth */
        p->err->line = deep->line;
        p->err->col = deep->col + 1;
        p->err->recursion = true;
        snprintf(p->err->msg, sizeof p->err->msg, "maximum recursion depth exceeded during compilation");
        longjmp(*p->top_jb, 1);
    }
}

/* Checks the source is valid UTF-8 without NUL bytes; reports the first
** bad byte like CPython does for files without an encoding declaration. */
static bool check_utf8(const char *filename, const char *text, size_t len, SyntaxErr *err) {
    const unsigned char *s = (const unsigned char *)text;
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] < 0x80) {
            if (s[i] == 0) {
                err->line = line;
                err->col = err->end_col = (int)(i - line_start) + 1;
                err->indentation = false;
                snprintf(err->msg, sizeof err->msg, "source code cannot contain null bytes");
                return false;
            }
            if (s[i] == '\n') line++, line_start = i + 1;
            i++;
            continue;
        }
        int used;
        if (lex_utf8_decode(s + i, len - i, &used) < 0) {
            err->line = line;
            err->col = (int)(i - line_start) + 1;
            err->end_col = 0;
            err->indentation = false;
            snprintf(err->msg, sizeof err->msg,
                     "Non-UTF-8 code starting with '\\x%02x' in file %s on line %d, but no encoding declared; "
                     "see https://peps.python.org/pep-0263/ for details",
                     s[i], filename ? filename : "<string>", line);
            return false;
        }
        i += (size_t)used;
    }
    return true;
}

AstNode *parse_source(Arena *arena, const char *filename, const char *text, size_t len, ParseMode mode,
                      SyntaxErr *err) {
    memset(err, 0, sizeof *err);
    if (!text) {
        text = "";
        len = 0;
    }
    if (len > (size_t)0x7FFFFFF0) {
        err->line = 1;
        err->col = 1;
        snprintf(err->msg, sizeof err->msg, "source code too large");
        return NULL;
    }
    if (!check_utf8(filename, text, len, err)) return NULL;

    Lexer *lx = malloc(sizeof(Lexer));
    Parser *p = calloc(1, sizeof(Parser));
    if (!lx || !p || !arena) {
        free(lx);
        free(p);
        err->line = 1;
        err->col = 1;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    if (!lex_tokenize(lx, text, len, 1, 0, false, err)) {
        err->line = lx->line;
        err->col = 1;
        err->end_col = 0;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        lex_free(lx);
        free(lx);
        free(p);
        return NULL;
    }
    p->arena = arena;
    p->text = text;
    p->textlen = len;
    p->filename = filename;
    p->mode = mode;
    p->err = err;
    p->toks = p->main_toks = lx->toks;
    p->ntoks = p->main_ntoks = lx->ntoks;
    Token *last = &p->toks[p->ntoks - 1];
    if (last->kind == TK_ERROR && (last->flags & LEXF_EOFPAREN)) p->eofparen = last;
    if (last->kind == TK_ERROR && (last->flags & LEXF_HARD)) p->harderr = last;

    jmp_buf jb;
    p->jb = p->top_jb = &jb;
    AstNode *volatile result = NULL;
    if (setjmp(jb) == 0) {
        AstNode *mod = mode == PARSE_EVAL ? parse_eval_input(p) : parse_file_input(p);
        if (p->has_late) {
            *err = p->late;
        } else {
            check_depth(p, mod);
            result = mod;
        }
    }
    while (p->nsub > 0) free(p->subtoks[--p->nsub]);
    free(p->stk);
    free(p->buf);
    free(p);
    lex_free(lx);
    free(lx);
    return result;
}
