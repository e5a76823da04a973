/*
** ast.c — syntax tree utilities: kind names, the child visitor used by
** tree walks, and the s-expression printer behind `gpy --ast`.
*/
#include <stdio.h>
#include <string.h>

#include "lexer.h"

static const char *const kind_names[AST__COUNT] = {
    [AST_NAME] = "Name", [AST_BIGINT] = "Int", [AST_INT] = "Int", [AST_FLOAT] = "Float", [AST_IMAG] = "Imag",
    [AST_STR] = "Str", [AST_BYTES] = "Bytes", [AST_NONE] = "None", [AST_TRUE] = "True",
    [AST_FALSE] = "False", [AST_ELLIPSIS] = "Ellipsis", [AST_FSTRING] = "FString",
    [AST_FORMATTED] = "Formatted", [AST_BINOP] = "BinOp", [AST_UNARYOP] = "UnaryOp",
    [AST_BOOLOP] = "BoolOp", [AST_COMPARE] = "Compare", [AST_CALL] = "Call",
    [AST_ATTRIBUTE] = "Attribute", [AST_SUBSCRIPT] = "Subscript", [AST_SLICE] = "Slice",
    [AST_LIST] = "List", [AST_TUPLE] = "Tuple", [AST_SET] = "Set", [AST_DICT] = "Dict",
    [AST_STARRED] = "Starred", [AST_LISTCOMP] = "ListComp", [AST_SETCOMP] = "SetComp",
    [AST_GENEXP] = "GenExp", [AST_DICTCOMP] = "DictComp", [AST_LAMBDA] = "Lambda",
    [AST_IFEXP] = "IfExp", [AST_YIELD] = "Yield", [AST_YIELDFROM] = "YieldFrom",
    [AST_NAMEDEXPR] = "NamedExpr", [AST_AWAIT] = "Await", [AST_MODULE] = "Module",
    [AST_EXPR] = "Expr", [AST_ASSIGN] = "Assign", [AST_AUGASSIGN] = "AugAssign",
    [AST_ANNASSIGN] = "AnnAssign", [AST_IF] = "If", [AST_WHILE] = "While", [AST_FOR] = "For",
    [AST_BREAK] = "Break", [AST_CONTINUE] = "Continue", [AST_PASS] = "Pass",
    [AST_RETURN] = "Return", [AST_FUNCTIONDEF] = "FunctionDef", [AST_CLASSDEF] = "ClassDef",
    [AST_TRY] = "Try", [AST_EXCEPTHANDLER] = "ExceptHandler", [AST_RAISE] = "Raise",
    [AST_WITH] = "With", [AST_ASSERT] = "Assert", [AST_DELETE] = "Delete",
    [AST_GLOBAL] = "Global", [AST_NONLOCAL] = "Nonlocal", [AST_IMPORT] = "Import",
    [AST_IMPORTFROM] = "ImportFrom", [AST_ALIAS] = "alias", [AST_KEYWORD] = "keyword",
    [AST_COMPREHENSION] = "comprehension", [AST_WITHITEM] = "withitem",
    [AST_MATCH] = "Match", [AST_MATCH_CASE] = "match_case", [AST_MATCH_VALUE] = "MatchValue",
    [AST_MATCH_SINGLETON] = "MatchSingleton", [AST_MATCH_SEQUENCE] = "MatchSequence",
    [AST_MATCH_MAPPING] = "MatchMapping", [AST_MATCH_CLASS] = "MatchClass", [AST_MATCH_STAR] = "MatchStar",
    [AST_MATCH_AS] = "MatchAs", [AST_MATCH_OR] = "MatchOr",
};

const char *ast_kind_name(AstKind k) {
    if ((int)k < 0 || k >= AST__COUNT || !kind_names[k]) return "?";
    return kind_names[k];
}

static const char *binop_sym(BinOp op) {
    static const char *const s[] = {"+", "-", "*", "@", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"};
    return (int)op >= 0 && op < BINOP__COUNT ? s[op] : "?";
}

static const char *unop_sym(UnOp op) {
    static const char *const s[] = {"-", "+", "~", "not"};
    return (int)op >= 0 && op <= UNOP_NOT ? s[op] : "?";
}

static const char *cmpop_sym(CmpOp op) {
    static const char *const s[] = {"==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in"};
    return (int)op >= 0 && op <= CMP_NOTIN ? s[op] : "?";
}

/* ------------------------------------------------------------ visitor */

static void visit(AstNode *n, void (*fn)(AstNode *, void *), void *ud) {
    if (n) fn(n, ud);
}

static void visit_list(AstList *l, void (*fn)(AstNode *, void *), void *ud) {
    for (int i = 0; i < l->len; i++) visit(l->items[i], fn, ud);
}

static void visit_params(AstParams *ps, void (*fn)(AstNode *, void *), void *ud) {
    int n = ps->nparams + ps->nkwonly;
    for (int i = 0; i < n; i++) {
        visit(ps->params[i].annotation, fn, ud);
        visit(ps->params[i].default_, fn, ud);
    }
    if (ps->vararg) visit(ps->vararg->annotation, fn, ud);
    if (ps->kwarg) visit(ps->kwarg->annotation, fn, ud);
}

void ast_visit_children(AstNode *n, void (*fn)(AstNode *child, void *ud), void *ud) {
    if (!n) return;
    switch (n->kind) {
    case AST_NAME: case AST_INT: case AST_FLOAT: case AST_IMAG: case AST_STR: case AST_BYTES: case AST_BIGINT:
    case AST_NONE: case AST_TRUE: case AST_FALSE: case AST_ELLIPSIS: case AST_BREAK:
    case AST_CONTINUE: case AST_PASS: case AST_GLOBAL: case AST_NONLOCAL: case AST_IMPORT:
    case AST_IMPORTFROM: case AST_ALIAS:
        return;
    case AST_FSTRING: visit_list(&n->u.fstring.parts, fn, ud); return;
    case AST_FORMATTED:
        visit(n->u.formatted.value, fn, ud);
        visit(n->u.formatted.spec, fn, ud);
        return;
    case AST_BINOP:
        visit(n->u.binop.left, fn, ud);
        visit(n->u.binop.right, fn, ud);
        return;
    case AST_UNARYOP: visit(n->u.unary.operand, fn, ud); return;
    case AST_BOOLOP: visit_list(&n->u.boolop.values, fn, ud); return;
    case AST_COMPARE:
        visit(n->u.compare.left, fn, ud);
        visit_list(&n->u.compare.comparators, fn, ud);
        return;
    case AST_CALL:
        visit(n->u.call.func, fn, ud);
        visit_list(&n->u.call.args, fn, ud);
        visit_list(&n->u.call.keywords, fn, ud);
        return;
    case AST_ATTRIBUTE: visit(n->u.attr.value, fn, ud); return;
    case AST_SUBSCRIPT:
        visit(n->u.subscript.value, fn, ud);
        visit(n->u.subscript.index, fn, ud);
        return;
    case AST_SLICE:
        visit(n->u.slice.lower, fn, ud);
        visit(n->u.slice.upper, fn, ud);
        visit(n->u.slice.step, fn, ud);
        return;
    case AST_LIST: case AST_TUPLE: case AST_SET: visit_list(&n->u.seq.elts, fn, ud); return;
    case AST_DICT:
        for (int i = 0; i < n->u.dict.keys.len; i++) {
            visit(n->u.dict.keys.items[i], fn, ud);
            visit(n->u.dict.values.items[i], fn, ud);
        }
        return;
    case AST_STARRED: visit(n->u.starred.value, fn, ud); return;
    case AST_LISTCOMP: case AST_SETCOMP: case AST_GENEXP: case AST_DICTCOMP:
        visit(n->u.comp.elt, fn, ud);
        visit(n->u.comp.value, fn, ud);
        visit_list(&n->u.comp.generators, fn, ud);
        return;
    case AST_LAMBDA: case AST_FUNCTIONDEF:
        visit_list(&n->u.func.decorators, fn, ud);
        visit_params(&n->u.func.params, fn, ud);
        visit(n->u.func.returns, fn, ud);
        visit_list(&n->u.func.body, fn, ud);
        return;
    case AST_IFEXP:
        visit(n->u.ifexp.test, fn, ud);
        visit(n->u.ifexp.body, fn, ud);
        visit(n->u.ifexp.orelse, fn, ud);
        return;
    case AST_YIELD: case AST_YIELDFROM: case AST_AWAIT: visit(n->u.yield.value, fn, ud); return;
    case AST_NAMEDEXPR:
        visit(n->u.named.target, fn, ud);
        visit(n->u.named.value, fn, ud);
        return;
    case AST_MODULE: visit_list(&n->u.module.body, fn, ud); return;
    case AST_EXPR: visit(n->u.expr.value, fn, ud); return;
    case AST_ASSIGN:
        visit_list(&n->u.assign.targets, fn, ud);
        visit(n->u.assign.value, fn, ud);
        return;
    case AST_AUGASSIGN:
        visit(n->u.augassign.target, fn, ud);
        visit(n->u.augassign.value, fn, ud);
        return;
    case AST_ANNASSIGN:
        visit(n->u.annassign.target, fn, ud);
        visit(n->u.annassign.annotation, fn, ud);
        visit(n->u.annassign.value, fn, ud);
        return;
    case AST_IF:
        visit(n->u.if_.test, fn, ud);
        visit_list(&n->u.if_.body, fn, ud);
        visit_list(&n->u.if_.orelse, fn, ud);
        return;
    case AST_WHILE:
        visit(n->u.while_.test, fn, ud);
        visit_list(&n->u.while_.body, fn, ud);
        visit_list(&n->u.while_.orelse, fn, ud);
        return;
    case AST_FOR:
        visit(n->u.for_.target, fn, ud);
        visit(n->u.for_.iter, fn, ud);
        visit_list(&n->u.for_.body, fn, ud);
        visit_list(&n->u.for_.orelse, fn, ud);
        return;
    case AST_RETURN: visit(n->u.ret.value, fn, ud); return;
    case AST_CLASSDEF:
        visit_list(&n->u.cls.decorators, fn, ud);
        visit_list(&n->u.cls.bases, fn, ud);
        visit_list(&n->u.cls.keywords, fn, ud);
        visit_list(&n->u.cls.body, fn, ud);
        return;
    case AST_TRY:
        visit_list(&n->u.try_.body, fn, ud);
        visit_list(&n->u.try_.handlers, fn, ud);
        visit_list(&n->u.try_.orelse, fn, ud);
        visit_list(&n->u.try_.finalbody, fn, ud);
        return;
    case AST_EXCEPTHANDLER:
        visit(n->u.handler.type, fn, ud);
        visit_list(&n->u.handler.body, fn, ud);
        return;
    case AST_RAISE:
        visit(n->u.raise.exc, fn, ud);
        visit(n->u.raise.cause, fn, ud);
        return;
    case AST_WITH:
        visit_list(&n->u.with.items, fn, ud);
        visit_list(&n->u.with.body, fn, ud);
        return;
    case AST_ASSERT:
        visit(n->u.assert_.test, fn, ud);
        visit(n->u.assert_.msg, fn, ud);
        return;
    case AST_DELETE: visit_list(&n->u.del.targets, fn, ud); return;
    case AST_KEYWORD: visit(n->u.keyword.value, fn, ud); return;
    case AST_COMPREHENSION:
        visit(n->u.compfor.target, fn, ud);
        visit(n->u.compfor.iter, fn, ud);
        visit_list(&n->u.compfor.ifs, fn, ud);
        return;
    case AST_WITHITEM:
        visit(n->u.withitem.context, fn, ud);
        visit(n->u.withitem.vars, fn, ud);
        return;
    case AST_MATCH:
        visit(n->u.match.subject, fn, ud);
        visit_list(&n->u.match.cases, fn, ud);
        return;
    case AST_MATCH_CASE:
        visit(n->u.match_case.pattern, fn, ud);
        visit(n->u.match_case.guard, fn, ud);
        visit_list(&n->u.match_case.body, fn, ud);
        return;
    case AST_MATCH_VALUE: case AST_MATCH_SINGLETON: visit(n->u.pat_value.value, fn, ud); return;
    case AST_MATCH_SEQUENCE: case AST_MATCH_OR: visit_list(&n->u.pat_seq.patterns, fn, ud); return;
    case AST_MATCH_MAPPING:
        visit_list(&n->u.pat_map.keys, fn, ud);
        visit_list(&n->u.pat_map.patterns, fn, ud);
        return;
    case AST_MATCH_CLASS:
        visit(n->u.pat_class.cls, fn, ud);
        visit_list(&n->u.pat_class.patterns, fn, ud);
        visit_list(&n->u.pat_class.kwd_patterns, fn, ud);
        return;
    case AST_MATCH_STAR: case AST_MATCH_AS: visit(n->u.pat_as.pattern, fn, ud); return;
    case AST__COUNT:
        return;
    }
}

/* ------------------------------------------------------------ printer */

static void indent(FILE *out, int d) {
    for (int i = 0; i < d; i++) fputs("  ", out);
}

/* Prints s as a Python-style quoted literal. */
static void print_quoted(FILE *out, const char *s, size_t n) {
    fputc('\'', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\'': fputs("\\'", out); break;
        default:
            if (c < 32 || c == 127) fprintf(out, "\\x%02x", c);
            else fputc(c, out);
        }
    }
    fputc('\'', out);
}

static void dump(AstNode *n, FILE *out, int d);

static void dump_child(const char *label, AstNode *n, FILE *out, int d) {
    if (!n) return;
    fputc('\n', out);
    indent(out, d);
    if (label) fprintf(out, "%s: ", label);
    dump(n, out, d);
}

static void dump_list(const char *label, AstList *l, FILE *out, int d) {
    if (!l->len) return;
    fputc('\n', out);
    indent(out, d);
    fprintf(out, "%s:", label);
    for (int i = 0; i < l->len; i++) {
        fputc('\n', out);
        indent(out, d + 1);
        if (l->items[i]) dump(l->items[i], out, d + 1);
        else fputs("<none>", out);
    }
}

static void dump_param(const char *prefix, AstParam *a, FILE *out, int d) {
    fputc('\n', out);
    indent(out, d);
    fprintf(out, "(param %s%s", prefix, a->name);
    if (a->annotation) dump_child("annotation", a->annotation, out, d + 1);
    if (a->default_) dump_child("default", a->default_, out, d + 1);
    fputc(')', out);
}

static void dump_params(AstParams *ps, FILE *out, int d) {
    for (int i = 0; i < ps->nparams + ps->nkwonly; i++) {
        const char *pre = i < ps->nposonly ? "posonly " : i >= ps->nparams ? "kwonly " : "";
        dump_param(pre, &ps->params[i], out, d);
    }
    if (ps->vararg) dump_param("*", ps->vararg, out, d);
    if (ps->kwarg) dump_param("**", ps->kwarg, out, d);
}

static void dump(AstNode *n, FILE *out, int d) {
    fprintf(out, "(%s", ast_kind_name(n->kind));
    int c = d + 1;
    switch (n->kind) {
    case AST_NAME: fprintf(out, " %s", n->u.name.id); break;
    case AST_INT: fprintf(out, " %lld", (long long)n->u.int_); break;
    case AST_FLOAT: case AST_IMAG: fprintf(out, " %.17g", n->u.float_); break;
    case AST_STR: case AST_BYTES: case AST_BIGINT:
        fputc(' ', out);
        print_quoted(out, n->u.str.s, n->u.str.len);
        break;
    case AST_NONE: case AST_TRUE: case AST_FALSE: case AST_ELLIPSIS: case AST_BREAK:
    case AST_CONTINUE: case AST_PASS:
        break;
    case AST_FSTRING: dump_list("parts", &n->u.fstring.parts, out, c); break;
    case AST_FORMATTED:
        if (n->u.formatted.conversion) fprintf(out, " !%c", n->u.formatted.conversion);
        dump_child(NULL, n->u.formatted.value, out, c);
        dump_child("spec", n->u.formatted.spec, out, c);
        break;
    case AST_BINOP:
        fprintf(out, " %s", binop_sym(n->u.binop.op));
        dump_child(NULL, n->u.binop.left, out, c);
        dump_child(NULL, n->u.binop.right, out, c);
        break;
    case AST_UNARYOP:
        fprintf(out, " %s", unop_sym(n->u.unary.op));
        dump_child(NULL, n->u.unary.operand, out, c);
        break;
    case AST_BOOLOP:
        fprintf(out, " %s", n->u.boolop.is_and ? "and" : "or");
        for (int i = 0; i < n->u.boolop.values.len; i++) dump_child(NULL, n->u.boolop.values.items[i], out, c);
        break;
    case AST_COMPARE:
        dump_child(NULL, n->u.compare.left, out, c);
        for (int i = 0; i < n->u.compare.comparators.len; i++) {
            fputc('\n', out);
            indent(out, c);
            fprintf(out, "%s ", cmpop_sym(n->u.compare.ops[i]));
            dump(n->u.compare.comparators.items[i], out, c);
        }
        break;
    case AST_CALL:
        dump_child(NULL, n->u.call.func, out, c);
        dump_list("args", &n->u.call.args, out, c);
        dump_list("keywords", &n->u.call.keywords, out, c);
        break;
    case AST_ATTRIBUTE:
        fprintf(out, " .%s", n->u.attr.attr);
        dump_child(NULL, n->u.attr.value, out, c);
        break;
    case AST_SUBSCRIPT:
        dump_child(NULL, n->u.subscript.value, out, c);
        dump_child("index", n->u.subscript.index, out, c);
        break;
    case AST_SLICE:
        dump_child("lower", n->u.slice.lower, out, c);
        dump_child("upper", n->u.slice.upper, out, c);
        dump_child("step", n->u.slice.step, out, c);
        break;
    case AST_LIST: case AST_TUPLE: case AST_SET:
        for (int i = 0; i < n->u.seq.elts.len; i++) dump_child(NULL, n->u.seq.elts.items[i], out, c);
        break;
    case AST_DICT:
        for (int i = 0; i < n->u.dict.keys.len; i++) {
            if (n->u.dict.keys.items[i]) dump_child("key", n->u.dict.keys.items[i], out, c);
            dump_child(n->u.dict.keys.items[i] ? "value" : "**", n->u.dict.values.items[i], out, c);
        }
        break;
    case AST_STARRED: dump_child(NULL, n->u.starred.value, out, c); break;
    case AST_LISTCOMP: case AST_SETCOMP: case AST_GENEXP: case AST_DICTCOMP:
        dump_child(n->kind == AST_DICTCOMP ? "key" : "elt", n->u.comp.elt, out, c);
        dump_child("value", n->u.comp.value, out, c);
        dump_list("generators", &n->u.comp.generators, out, c);
        break;
    case AST_LAMBDA: case AST_FUNCTIONDEF:
        if (n->kind == AST_FUNCTIONDEF) fprintf(out, " %s", n->u.func.name);
        dump_list("decorators", &n->u.func.decorators, out, c);
        dump_params(&n->u.func.params, out, c);
        dump_child("returns", n->u.func.returns, out, c);
        dump_list("body", &n->u.func.body, out, c);
        break;
    case AST_IFEXP:
        dump_child("test", n->u.ifexp.test, out, c);
        dump_child("body", n->u.ifexp.body, out, c);
        dump_child("orelse", n->u.ifexp.orelse, out, c);
        break;
    case AST_YIELD: case AST_YIELDFROM: case AST_AWAIT: dump_child(NULL, n->u.yield.value, out, c); break;
    case AST_NAMEDEXPR:
        dump_child(NULL, n->u.named.target, out, c);
        dump_child(NULL, n->u.named.value, out, c);
        break;
    case AST_MODULE:
        for (int i = 0; i < n->u.module.body.len; i++) dump_child(NULL, n->u.module.body.items[i], out, c);
        break;
    case AST_EXPR: dump_child(NULL, n->u.expr.value, out, c); break;
    case AST_ASSIGN:
        dump_list("targets", &n->u.assign.targets, out, c);
        dump_child("value", n->u.assign.value, out, c);
        break;
    case AST_AUGASSIGN:
        fprintf(out, " %s=", binop_sym(n->u.augassign.op));
        dump_child(NULL, n->u.augassign.target, out, c);
        dump_child(NULL, n->u.augassign.value, out, c);
        break;
    case AST_ANNASSIGN:
        if (n->u.annassign.simple) fputs(" simple", out);
        dump_child("target", n->u.annassign.target, out, c);
        dump_child("annotation", n->u.annassign.annotation, out, c);
        dump_child("value", n->u.annassign.value, out, c);
        break;
    case AST_IF:
        dump_child("test", n->u.if_.test, out, c);
        dump_list("body", &n->u.if_.body, out, c);
        dump_list("orelse", &n->u.if_.orelse, out, c);
        break;
    case AST_WHILE:
        dump_child("test", n->u.while_.test, out, c);
        dump_list("body", &n->u.while_.body, out, c);
        dump_list("orelse", &n->u.while_.orelse, out, c);
        break;
    case AST_FOR:
        dump_child("target", n->u.for_.target, out, c);
        dump_child("iter", n->u.for_.iter, out, c);
        dump_list("body", &n->u.for_.body, out, c);
        dump_list("orelse", &n->u.for_.orelse, out, c);
        break;
    case AST_RETURN: dump_child(NULL, n->u.ret.value, out, c); break;
    case AST_CLASSDEF:
        fprintf(out, " %s", n->u.cls.name);
        dump_list("decorators", &n->u.cls.decorators, out, c);
        dump_list("bases", &n->u.cls.bases, out, c);
        dump_list("keywords", &n->u.cls.keywords, out, c);
        dump_list("body", &n->u.cls.body, out, c);
        break;
    case AST_TRY:
        dump_list("body", &n->u.try_.body, out, c);
        dump_list("handlers", &n->u.try_.handlers, out, c);
        dump_list("orelse", &n->u.try_.orelse, out, c);
        dump_list("finalbody", &n->u.try_.finalbody, out, c);
        break;
    case AST_EXCEPTHANDLER:
        if (n->u.handler.name) fprintf(out, " as %s", n->u.handler.name);
        dump_child("type", n->u.handler.type, out, c);
        dump_list("body", &n->u.handler.body, out, c);
        break;
    case AST_RAISE:
        dump_child(NULL, n->u.raise.exc, out, c);
        dump_child("cause", n->u.raise.cause, out, c);
        break;
    case AST_WITH:
        dump_list("items", &n->u.with.items, out, c);
        dump_list("body", &n->u.with.body, out, c);
        break;
    case AST_ASSERT:
        dump_child(NULL, n->u.assert_.test, out, c);
        dump_child("msg", n->u.assert_.msg, out, c);
        break;
    case AST_DELETE:
        for (int i = 0; i < n->u.del.targets.len; i++) dump_child(NULL, n->u.del.targets.items[i], out, c);
        break;
    case AST_GLOBAL: case AST_NONLOCAL:
        for (int i = 0; i < n->u.names.len; i++) fprintf(out, " %s", n->u.names.names[i]);
        break;
    case AST_IMPORT: case AST_IMPORTFROM:
        if (n->kind == AST_IMPORTFROM)
            fprintf(out, " %.*s%s", n->u.import.level, "..........................................................",
                    n->u.import.module ? n->u.import.module : "");
        if (n->kind == AST_IMPORTFROM && n->u.import.level > 58) fprintf(out, " (level %d)", n->u.import.level);
        for (int i = 0; i < n->u.import.names.len; i++) dump_child(NULL, n->u.import.names.items[i], out, c);
        break;
    case AST_ALIAS:
        fprintf(out, " %s", n->u.alias.name);
        if (n->u.alias.asname) fprintf(out, " as %s", n->u.alias.asname);
        break;
    case AST_KEYWORD:
        fprintf(out, " %s", n->u.keyword.name ? n->u.keyword.name : "**");
        dump_child(NULL, n->u.keyword.value, out, c);
        break;
    case AST_COMPREHENSION:
        dump_child("target", n->u.compfor.target, out, c);
        dump_child("iter", n->u.compfor.iter, out, c);
        dump_list("ifs", &n->u.compfor.ifs, out, c);
        break;
    case AST_WITHITEM:
        dump_child(NULL, n->u.withitem.context, out, c);
        dump_child("as", n->u.withitem.vars, out, c);
        break;
    case AST_MATCH:
        dump_child("subject", n->u.match.subject, out, c);
        dump_list("cases", &n->u.match.cases, out, c);
        break;
    case AST_MATCH_CASE:
        dump_child("pattern", n->u.match_case.pattern, out, c);
        dump_child("guard", n->u.match_case.guard, out, c);
        dump_list("body", &n->u.match_case.body, out, c);
        break;
    case AST_MATCH_VALUE: case AST_MATCH_SINGLETON: dump_child(NULL, n->u.pat_value.value, out, c); break;
    case AST_MATCH_SEQUENCE: case AST_MATCH_OR:
        for (int i = 0; i < n->u.pat_seq.patterns.len; i++) dump_child(NULL, n->u.pat_seq.patterns.items[i], out, c);
        break;
    case AST_MATCH_MAPPING:
        if (n->u.pat_map.rest) fprintf(out, " **%s", n->u.pat_map.rest);
        for (int i = 0; i < n->u.pat_map.keys.len; i++) {
            dump_child("key", n->u.pat_map.keys.items[i], out, c);
            dump_child("value", n->u.pat_map.patterns.items[i], out, c);
        }
        break;
    case AST_MATCH_CLASS:
        dump_child("cls", n->u.pat_class.cls, out, c);
        dump_list("patterns", &n->u.pat_class.patterns, out, c);
        for (int i = 0; i < n->u.pat_class.kwd_patterns.len; i++)
            dump_child(n->u.pat_class.kwd_attrs[i], n->u.pat_class.kwd_patterns.items[i], out, c);
        break;
    case AST_MATCH_STAR: case AST_MATCH_AS:
        if (n->u.pat_as.name) fprintf(out, " %s", n->u.pat_as.name);
        dump_child(NULL, n->u.pat_as.pattern, out, c);
        break;
    case AST__COUNT:
        break;
    }
    fprintf(out, " @%d:%d-%d:%d)", n->line, n->col, n->end_line, n->end_col);
}

void ast_dump(AstNode *n, FILE *out) {
    if (!n) {
        fputs("(null)\n", out);
        return;
    }
    dump(n, out, 0);
    fputc('\n', out);
}
