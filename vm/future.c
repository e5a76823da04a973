/*
** future.c — `from __future__ import feature` statements. Every feature
** CPython 3.11 knows is accepted; all but `annotations` describe what gpy
** (Python 3 semantics) always does, and gpy never evaluates annotations
** anyway. The statement also runs as an ordinary import of the __future__
** module (stdlib/), binding the _Feature objects, as in CPython.
*/
#include <stdio.h>
#include <string.h>

#include "future.h"
#include "lexer.h" /* ast_visit_children */

static const struct {
    const char *name;
    int flag;
} features[] = {
    {"nested_scopes", 0x10},
    {"generators", 0},
    {"division", FUTURE_DIVISION},
    {"absolute_import", FUTURE_ABSOLUTE_IMPORT},
    {"with_statement", FUTURE_WITH_STATEMENT},
    {"print_function", FUTURE_PRINT_FUNCTION},
    {"unicode_literals", FUTURE_UNICODE_LITERALS},
    {"barry_as_FLUFL", FUTURE_BARRY_AS_BDFL},
    {"generator_stop", FUTURE_GENERATOR_STOP},
    {"annotations", FUTURE_ANNOTATIONS},
};

static bool is_future_import(AstNode *s)
{
    return s->kind == AST_IMPORTFROM && s->u.import.level == 0 && s->u.import.module &&
           strcmp(s->u.import.module, "__future__") == 0;
}

static void fail(SyntaxErr *err, AstNode *at, bool whole, const char *fmt, const char *arg)
{
    memset(err, 0, sizeof *err);
    err->line = at->line;
    err->col = at->col;
    err->end_col = whole && at->end_line == at->line ? at->end_col : 0;
    snprintf(err->msg, sizeof err->msg, fmt, arg);
}

typedef struct Misplaced {
    int last_line; /* line of the last future import of the file's prologue */
    AstNode *found;
} Misplaced;

/* Finds a __future__ import past the prologue, anywhere in the tree. */
static void find_misplaced(AstNode *n, void *ud)
{
    Misplaced *m = ud;
    if (m->found)
        return;
    if (is_future_import(n) && n->line > m->last_line) {
        m->found = n;
        return;
    }
    ast_visit_children(n, find_misplaced, ud);
}

int future_features(AstNode *module, SyntaxErr *err)
{
    if (module->kind != AST_MODULE)
        return 0;
    AstList *body = &module->u.module.body;
    int flags = 0, last_line = 0, i = 0;
    if (body->len > 0 && body->items[0]->kind == AST_EXPR && body->items[0]->u.expr.value->kind == AST_STR)
        i = 1; /* a docstring may come first */
    for (; i < body->len && is_future_import(body->items[i]); i++) {
        AstNode *s = body->items[i];
        for (int j = 0; j < s->u.import.names.len; j++) {
            const char *name = s->u.import.names.items[j]->u.alias.name;
            if (strcmp(name, "braces") == 0) {
                fail(err, s, false, "not a chance%s", "");
                return -1;
            }
            size_t k = 0;
            while (k < sizeof features / sizeof features[0] && strcmp(features[k].name, name) != 0)
                k++;
            if (k == sizeof features / sizeof features[0]) {
                fail(err, s, false, "future feature %s is not defined", name);
                return -1;
            }
            flags |= features[k].flag;
        }
        last_line = s->line;
    }
    Misplaced m = {last_line, NULL};
    for (int j = 0; j < body->len && !m.found; j++)
        find_misplaced(body->items[j], &m);
    if (m.found) {
        fail(err, m.found, true, "from __future__ imports must occur at the beginning of the file%s", "");
        return -1;
    }
    return flags;
}
