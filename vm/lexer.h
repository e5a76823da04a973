/*
** lexer.h — private to the front end (lexer.c, parser.c, ast.c): tokens and
** the tokenizer interface. The lexer turns a whole source text into an array
** of tokens up front; the parser then walks the array with free lookahead.
*/
#ifndef GPY_LEXER_H
#define GPY_LEXER_H

#include "ast.h"
#include "vm.h"

/* CPython's limits: bracket nesting (tokenizer) and indentation depth. */
#define LEX_MAX_PAREN 200
#define LEX_MAX_INDENT 100

/* Token kinds. Keywords and operators each get their own kind so the parser
** compares integers only. Keep TK_KW_FIRST..TK_KW_LAST contiguous. */
typedef enum TokKind {
    TK_ENDMARKER,
    TK_NEWLINE,
    TK_INDENT,
    TK_DEDENT,
    TK_NAME,
    TK_INT,     /* v.i; flags LEXF_BIG when it does not fit in int64 */
    TK_FLOAT,   /* v.f */
    TK_IMAG,    /* v.f */
    TK_STRING,  /* raw text in [start, start+len); flags LEXF_* prefix bits */
    TK_ERROR,   /* a tokenizer error, always the stream's last token: a soft one is
                ** reported if the parser reaches it, a hard one (LEXF_HARD) always */

    /* keywords */
    TK_KW_FIRST,
    TK_FALSE = TK_KW_FIRST, TK_NONE, TK_TRUE, TK_AND, TK_AS, TK_ASSERT, TK_ASYNC,
    TK_AWAIT, TK_BREAK, TK_CLASS, TK_CONTINUE, TK_DEF, TK_DEL, TK_ELIF, TK_ELSE,
    TK_EXCEPT, TK_FINALLY, TK_FOR, TK_FROM, TK_GLOBAL, TK_IF, TK_IMPORT, TK_IN,
    TK_IS, TK_LAMBDA, TK_NONLOCAL, TK_NOT, TK_OR, TK_PASS, TK_RAISE, TK_RETURN,
    TK_TRY, TK_WHILE, TK_WITH, TK_YIELD,
    TK_KW_LAST = TK_YIELD,

    /* operators and delimiters */
    TK_LPAR, TK_RPAR, TK_LSQB, TK_RSQB, TK_LBRACE, TK_RBRACE,
    TK_COLON, TK_COMMA, TK_SEMI, TK_DOT, TK_ELLIPSIS, TK_ARROW, TK_WALRUS,
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_VBAR, TK_AMPER, TK_LESS, TK_GREATER,
    TK_EQUAL, TK_PERCENT, TK_TILDE, TK_CIRCUMFLEX, TK_AT,
    TK_DOUBLESTAR, TK_DOUBLESLASH, TK_LSHIFT, TK_RSHIFT,
    TK_EQEQUAL, TK_NOTEQUAL, TK_LESSEQUAL, TK_GREATEREQUAL,
    /* augmented assignment: keep in this order, matching aug_op() in parser.c */
    TK_PLUSEQ, TK_MINUSEQ, TK_STAREQ, TK_SLASHEQ, TK_PERCENTEQ, TK_AMPEREQ,
    TK_VBAREQ, TK_CIRCUMFLEXEQ, TK_LSHIFTEQ, TK_RSHIFTEQ, TK_DOUBLESTAREQ,
    TK_DOUBLESLASHEQ, TK_ATEQ,
    TK_BADOP,  /* '$', '?', '`', a lone '!': a token no rule accepts (CPython's OP) */
    TK__COUNT
} TokKind;

/* Token.flags; their meaning depends on the token kind. */
enum {
    LEXF_RAW = 1,
    LEXF_BYTES = 2,
    LEXF_FSTR = 4,
    LEXF_TRIPLE = 8,
    LEXF_BIG = 16,     /* TK_INT: literal does not fit in int64 */
    LEXF_MINBIG = 32,  /* TK_INT: literal is exactly 2**63 (fits once negated) */
    LEXF_INDENTERR = 64, /* TK_ERROR: the error is an IndentationError */
    LEXF_EOFPAREN = 128, /* TK_ERROR: end of input inside an open bracket */
    LEXF_FILEEND = 1,    /* TK_ENDMARKER: the end of the file (not of an f-string field) */
    LEXF_HARD = 1        /* TK_ERROR: a hard error (wins over parser errors) */
};

typedef struct Token {
    uint8_t kind;      /* TokKind */
    uint8_t flags;
    uint8_t quote_len; /* TK_STRING: prefix + opening quote length (body starts there) */
    uint8_t level;     /* bracket nesting depth after this token */
    int line, col;     /* 1-based line; 0-based byte column */
    int end_line, end_col;
    int len;           /* byte length of the raw text */
    const char *start; /* raw text of the token */
    union {
        int64_t i;
        double f;
        const char *msg; /* TK_ERROR: message, in the lexer's message pool */
    } v;
} Token;

/* TK_ERROR tokens keep the 1-based columns to report in len / end_col. */
#define TOK_ERR_COL(t) ((t)->len)
#define TOK_ERR_END(t) ((t)->end_col)

/* The tokenizer. Input is the byte range [text, text+len); it may contain
** any bytes. Positions start at (line, col) so sub-ranges (f-string fields)
** tokenize with their real source positions. */
typedef struct Lexer {
    const char *text, *end;
    const char *p;          /* cursor */
    const char *line_start; /* start of the current line (col = p - line_start + col_base) */
    int line;
    int col_base;           /* column offset of line_start on its first line (sub-ranges) */
    bool sub;               /* tokenizing an f-string field: no NEWLINE/INDENT, no comments */

    Token *toks;
    int ntoks, cap;

    int indents[LEX_MAX_INDENT + 1];  /* column widths */
    int altindents[LEX_MAX_INDENT + 1]; /* widths with tabs counted as 1 (tab/space mix check) */
    int nindent;
    bool at_bol;            /* at the beginning of a logical line */

    struct { char ch; int line, col; } parens[LEX_MAX_PAREN + 1];
    int level;

    SyntaxErr *err;         /* receives a hard error */
    bool failed;            /* a hard error happened */
    bool oom;
    char msg[256];          /* storage for the TK_ERROR message */
} Lexer;

/* Tokenizes [text, text+len) into lx->toks (malloc'd; free with lex_free).
** Returns false only when out of memory. An error ends the stream with a
** TK_ERROR token: a soft one, or a hard one (LEXF_HARD, also filled in *err
** and lx->failed set). For sub-ranges (f-string fields) pass sub=true with
** the starting line/col. */
bool lex_tokenize(Lexer *lx, const char *text, size_t len, int line, int col, bool sub,
                  SyntaxErr *err);
void lex_free(Lexer *lx);
/* Spelling of a token kind ("'if'", "'('", "NAME"...). */
const char *lex_kind_name(int kind);
/* Keyword text of a keyword kind ("if"), NULL for non-keywords. */
const char *lex_keyword_text(int kind);

/* Decodes UTF-8 at s (at most n bytes): returns the code point and sets
** *used, or -1 (with *used = 1) on an invalid sequence. */
int32_t lex_utf8_decode(const unsigned char *s, size_t n, int *used);
/* Encodes cp as UTF-8 into out (4 bytes room); returns the byte count. */
int lex_utf8_encode(uint32_t cp, char *out);

/* Visits the direct children of a node (ast.c): fn is called for each
** non-NULL child node, in source order where practical. */
void ast_visit_children(AstNode *n, void (*fn)(AstNode *child, void *ud), void *ud);

#endif
