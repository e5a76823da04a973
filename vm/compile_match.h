/*
** compile_match.h — private to compiler.c and compile_match.c. The match
** statement is compiled in a file of its own; these are the few compiler
** services it needs, defined in compiler.c as thin wrappers over its
** static helpers (FuncState stays opaque outside compiler.c).
*/
#ifndef GPY_COMPILE_MATCH_H
#define GPY_COMPILE_MATCH_H

#include "ast.h"
#include "opcodes.h"
#include "vm.h"

typedef struct FuncState FuncState;

/* compile_match.c: compiles an AST_MATCH statement. */
void comp_match(FuncState *fs, AstNode *s);

/* compiler.c: */
VM *comp_vm(FuncState *fs);
bool comp_failed(FuncState *fs);
void comp_error(FuncState *fs, AstNode *at, const char *fmt, const char *arg); /* fmt has one %s */
void comp_set_pos(FuncState *fs, AstNode *at);
int comp_emit_abc(FuncState *fs, Opcode op, int a, int b, int c);
int comp_emit_x(FuncState *fs, Opcode op, int a, int b, int c, uint32_t ext);
int comp_emit_jump(FuncState *fs, Opcode op, int a); /* forward; patch with comp_patch_here */
void comp_patch_here(FuncState *fs, int pc);
int comp_alloc_regs(FuncState *fs, int n);
int comp_freereg(FuncState *fs);
void comp_set_freereg(FuncState *fs, int r);
void comp_load_const(FuncState *fs, Value v, int target);
void comp_expr_to(FuncState *fs, AstNode *e, int target);
void comp_store_name(FuncState *fs, const char *name, int src);
/* Compiles statements one nesting level deeper (bindings there are conditional). */
void comp_nested_stmts(FuncState *fs, AstList *body);
void comp_nest(FuncState *fs, int delta);

#endif
