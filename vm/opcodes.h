/*
** opcodes.h — the instruction set, defined once. Each X(name, mode) line
** generates the enum, the name table and the dispatch table.
**
** Instructions are 32 bits: op in bits 0-7, then either
**   ABC:  A (8) B (8) C (8)
**   ABx:  A (8) Bx (16, unsigned)
**   AsBx: A (8) sBx (16, signed)
**   sJ:   sJ (24, signed)
** Jump offsets are relative to the instruction after the jump (after its
** extra word, if any). Modes ending in X take one extra 32-bit word that
** follows the instruction (EXT below); the pc steps over it.
** R[x] is register x of the running frame; K[x] constant x of its proto.
*/
#ifndef GPY_OPCODES_H
#define GPY_OPCODES_H

#include <stdint.h>

#define OPCODES(X)                                                                 \
    X(NOP, ABC)            /* nothing */                                           \
    X(MOVE, ABC)           /* R[A] = R[B] */                                       \
    X(LOADK, ABx)          /* R[A] = K[Bx] */                                      \
    X(LOADI, AsBx)         /* R[A] = int sBx */                                    \
    X(LOADNONE, ABC)       /* R[A] = None */                                       \
    X(LOADTRUE, ABC)       /* R[A] = True */                                       \
    X(LOADFALSE, ABC)      /* R[A] = False */                                      \
    X(CHECK_LOCAL, ABC)    /* UnboundLocalError "cannot access local variable 'varnames[A]' where it is not associated with a value" if R[A] is EMPTY */ \
    X(DEL_LOCAL, ABC)      /* CHECK_LOCAL A, then R[A] = EMPTY */                 \
    X(LOAD_GLOBAL, ABCX)   /* R[A] = globals[K[EXT]] or builtins[K[EXT]], else NameError */ \
    X(STORE_GLOBAL, ABCX)  /* globals[K[EXT]] = R[A] */                            \
    X(DEL_GLOBAL, ABCX)    /* del globals[K[EXT]] (NameError if absent) */         \
    X(LOAD_NAME, ABCX)     /* class body: R[A] = frame->locals[K[EXT]], else globals, else builtins */ \
    X(STORE_NAME, ABCX)    /* class body: frame->locals[K[EXT]] = R[A] */          \
    X(DEL_NAME, ABCX)      /* class body: del frame->locals[K[EXT]] */             \
    X(MAKE_CELL, ABC)      /* R[A] = Cell(R[A]) (EMPTY stays unbound); emitted at function entry for each cell_regs entry */ \
    X(LOAD_DEREF, ABC)     /* R[A] = R[B]->cell.value; unbound: NameError "cannot access free variable..." / UnboundLocalError naming varnames[B] */ \
    X(STORE_DEREF, ABC)    /* R[A]->cell.value = R[B] */                           \
    X(DEL_DEREF, ABC)      /* R[A]->cell.value = EMPTY (error if already unbound) */ \
    X(LOAD_FREE, ABC)      /* R[A] = fn->free[B]->value; unbound: NameError naming freenames[B] */ \
    X(STORE_FREE, ABC)     /* fn->free[A]->value = R[B] */                         \
    X(LOAD_FREECELL, ABC)  /* R[A] = fn->free[B] (the Cell itself: class body __class__) */ \
    X(MAKE_FUNCTION, ABx)  /* R[A] = Function(K[Bx] proto, frame globals), closure from proto->freevars */ \
    X(SET_DEFAULTS, ABC)   /* R[A].defaults = R[B] (a Tuple) */                    \
    X(SET_KWDEFAULTS, ABC) /* R[A].kwdefaults = R[B] (a Dict) */                   \
    X(GET_ATTR, ABCX)      /* R[A] = R[B].K[EXT] */                                \
    X(SET_ATTR, ABCX)      /* R[A].K[EXT] = R[B] */                                \
    X(DEL_ATTR, ABCX)      /* del R[A].K[EXT] */                                   \
    X(LOAD_METHOD, ABCX)   /* method lookup of K[EXT] on R[B]: either R[A] = function found on the type, R[A+1] = R[B]; or R[A] = attribute value, R[A+1] = EMPTY */ \
    X(CALL, ABCX)          /* R[A] = R[A](R[A+1..A+B], kw: names K[EXT] (Tuple of Str) = R[A+B+1..A+B+C]); EXT unused when C = 0 */ \
    X(CALL_METHOD, ABCX)   /* after LOAD_METHOD A: like CALL with args at R[A+2..]; if R[A+1] is not EMPTY it is passed first (self). Result in R[A] */ \
    X(CALL_EX, ABC)        /* R[A] = R[A](*R[A+1], **R[A+2]); R[A+1] a Tuple, R[A+2] a Dict or None */ \
    X(RETURN, ABC)         /* return R[A] */                                       \
    X(RETURN_NONE, ABC)    /* return None */                                       \
    X(BINOP, ABCX)         /* R[A] = R[B] (BinOp EXT) R[C] */                      \
    X(ADD, ABC)            /* R[A] = R[B] + R[C] (fast paths for int/float) */     \
    X(SUB, ABC)            /* R[A] = R[B] - R[C] */                                \
    X(MUL, ABC)            /* R[A] = R[B] * R[C] */                                \
    X(TRUEDIV, ABC)        /* R[A] = R[B] / R[C] */                                \
    X(FLOORDIV, ABC)       /* R[A] = R[B] // R[C] */                               \
    X(MOD, ABC)            /* R[A] = R[B] % R[C] */                                \
    X(INPLACE, ABCX)       /* R[A] = R[B] (BinOp EXT)= R[C]  (augmented assignment) */ \
    X(NEG, ABC)            /* R[A] = -R[B] */                                      \
    X(POS, ABC)            /* R[A] = +R[B] */                                      \
    X(INVERT, ABC)         /* R[A] = ~R[B] */                                      \
    X(NOT, ABC)            /* R[A] = not R[B] */                                   \
    X(EQ, ABC)             /* R[A] = R[B] == R[C] */                               \
    X(NE, ABC)             /* R[A] = R[B] != R[C] */                               \
    X(LT, ABC)             /* R[A] = R[B] < R[C] */                                \
    X(LE, ABC)             /* R[A] = R[B] <= R[C] */                               \
    X(GT, ABC)             /* R[A] = R[B] > R[C] */                                \
    X(GE, ABC)             /* R[A] = R[B] >= R[C] */                               \
    X(IS, ABC)             /* R[A] = R[B] is R[C] */                               \
    X(ISNOT, ABC)          /* R[A] = R[B] is not R[C] */                           \
    X(IN, ABC)             /* R[A] = R[B] in R[C] */                               \
    X(NOTIN, ABC)          /* R[A] = R[B] not in R[C] */                           \
    X(JMP, sJ)             /* pc += sJ */                                          \
    X(JMP_IF_FALSE, AsBx)  /* if not truthy(R[A]): pc += sBx */                    \
    X(JMP_IF_TRUE, AsBx)   /* if truthy(R[A]): pc += sBx */                        \
    X(JMP_IF_NOT_LT, ABCX) /* if not (R[A] < R[B]): pc += (int32)EXT  (fused loop test) */ \
    X(GET_ITER, ABC)       /* R[A] = iter(R[B]) */                                 \
    X(FOR_ITER, AsBx)      /* R[A+1] = next(R[A]); when exhausted pc += sBx (R[A+1] untouched) */ \
    X(BUILD_LIST, ABC)     /* R[A] = [R[B], ..., R[B+C-1]] */                      \
    X(BUILD_TUPLE, ABC)    /* R[A] = (R[B], ..., R[B+C-1]) */                      \
    X(BUILD_SET, ABC)      /* R[A] = {R[B], ..., R[B+C-1]} */                      \
    X(BUILD_DICT, ABC)     /* R[A] = {R[B]: R[B+1], ...} with C pairs */           \
    X(BUILD_SLICE, ABC)    /* R[A] = slice(R[B], R[B+1], R[B+2]) (C = 2: step None) */ \
    X(BUILD_STRING, ABC)   /* R[A] = "".join of the Strs R[B..B+C-1] */            \
    X(FORMAT, ABCX)        /* R[A] = format(conv(R[B]), spec); EXT: conversion in bits 0-7 (0, 's', 'r', 'a'), bit 8 set: spec is R[C] */ \
    X(LIST_APPEND, ABC)    /* R[A].append(R[B]) */                                 \
    X(LIST_EXTEND, ABC)    /* R[A].extend(R[B]) */                                 \
    X(LIST_TO_TUPLE, ABC)  /* R[A] = tuple(R[B]) (R[B] a list) */                  \
    X(SET_ADD, ABC)        /* R[A].add(R[B]) */                                    \
    X(SET_UPDATE, ABC)     /* R[A].update(R[B]) */                                 \
    X(DICT_SET, ABC)       /* R[A][R[B]] = R[C] (R[A] a dict) */                   \
    X(DICT_UPDATE, ABC)    /* R[A].update(R[B]) (dict displays with **) */         \
    X(DICT_MERGE, ABC)     /* like DICT_UPDATE for call **kwargs: keys must be str, TypeError on duplicates */ \
    X(GETITEM, ABC)        /* R[A] = R[B][R[C]] */                                 \
    X(SETITEM, ABC)        /* R[A][R[B]] = R[C] */                                 \
    X(DELITEM, ABC)        /* del R[A][R[B]] */                                    \
    X(UNPACK, ABC)         /* R[A..A+C-1] = R[B] (exactly C items, else ValueError) */ \
    X(UNPACK_EX, ABCX)     /* starred unpack of R[B]: EXT = before | after << 16; R[A..] = before items, a list, after items */ \
    X(RAISE, ABC)          /* raise R[A] (instance or class); B = 1: from R[C] */  \
    X(RERAISE, ABC)        /* re-raise R[A] unchanged (no new traceback line) */   \
    X(RAISE_CURRENT, ABC)  /* bare raise: frame->handling, or RuntimeError "No active exception to reraise" */ \
    X(EXC_MATCH, ABC)      /* R[A] = exception R[B] matches class or tuple R[C] (TypeError if not classes) */ \
    X(ENTER_EXCEPT, ABC)   /* R[B] = frame->handling; frame->handling = R[A] */    \
    X(LEAVE_EXCEPT, ABC)   /* frame->handling = R[A] */                            \
    X(ASSERT_FAIL, ABC)    /* raise AssertionError (B = 1: with message R[A]) */   \
    X(WITH_ENTER, ABC)     /* R[A] = bound R[B].__exit__, R[A+1] = R[B].__enter__() */ \
    X(WITH_EXIT, ABC)      /* normal exit: R[A](None, None, None) */               \
    X(WITH_EXIT_EXC, ABC)  /* R[A] = truthy(R[A](type(R[B]), R[B], None)) as a bool */ \
    X(YIELD, ABC)          /* suspend yielding R[B]; on resume R[A] = sent value (None for next()) */ \
    X(IMPORT, ABCX)        /* R[A] = import K[EXT] (dotted; B = 1: the top-level package, as "import a.b" binds a) */ \
    X(IMPORT_FROM, ABCX)   /* R[A] = R[B].K[EXT], else ImportError "cannot import name 'x' from 'm'" */ \
    X(IMPORT_STAR, ABC)    /* copy public names of module R[A] into globals (or class locals) */ \
    X(BUILD_CLASS, ABC)    /* R[A] = class: body function R[A], name R[A+1], bases R[A+2..A+1+C]; the body runs with a fresh namespace as frame->locals; if it returns a Cell, the Cell gets the class (__class__ for super()) */ \
    X(PRINT_EXPR, ABC)     /* interactive mode: print repr(R[A]) unless None; builtins._ = R[A] */ \
    X(SAFEPOINT, ABC)      /* GC safepoint (emitted at loop back edges if the interpreter does not do it in JMP) */ \
    X(LOAD_WIDE, ABx)      /* R[A] = R[Bx], a local past the 8-bit window (see REG_LOCALS); UnboundLocalError naming varnames[Bx - WIDE_SHIFT] if EMPTY */ \
    X(STORE_WIDE, ABx)     /* R[Bx] = R[A] */                                      \
    X(DEL_WIDE, ABx)       /* like DEL_LOCAL for R[Bx] */                          \
    X(GET_AWAITABLE, ABC)  /* R[A] = the iterator that await R[B] drives; C: 0 await, 1 __aenter__, 2 __aexit__, 3 __anext__ result (for the TypeError) */ \
    X(SEND, AsBx)          /* resume R[A] with R[A+1] (or throw R[A+2] into it if not None, then R[A+2] = None): yielded: R[A+1] = value; finished: R[A+1] = result, pc += sBx */ \
    X(GET_AITER, ABC)      /* R[A] = R[B].__aiter__() */                           \
    X(GET_ANEXT, ABC)      /* R[A] = R[B].__anext__() */                           \
    X(END_ASYNC_FOR, ABC)  /* R[A] is the exception that ended an __anext__ await: StopAsyncIteration goes on, anything else is re-raised */ \
    X(ASYNC_GEN_WRAP, ABC) /* R[A] = R[B] wrapped as an async generator's yielded value */ \
    X(ASYNC_WITH_ENTER, ABC) /* R[A] = bound R[B].__aexit__, R[A+1] = R[B].__aenter__() (not yet awaited) */ \
    X(ASYNC_WITH_EXIT, ABC)  /* R[A] = R[B](None, None, None) when C = B, else R[B](type(R[C]), R[C], None) (not yet awaited) */ \
    X(MATCH_SEQ, ABCX)     /* R[A] = R[B] is a sequence (not str/bytes/bytearray) with len == EXT & 0x7fffffff, or >= it if EXT bit 31 is set (a star) */ \
    X(MATCH_STAR, ABCX)    /* R[A] = list(R[B][EXT & 0xffff : len - (EXT >> 16)]) (a sequence pattern's *name) */ \
    X(MATCH_MAP, ABCX)     /* R[A] = R[B] is a mapping with len >= EXT */ \
    X(MATCH_KEYS, ABC)     /* R[A] = R[B] has every key of tuple R[C]; if so R[A+1] = tuple of their values (ValueError on a repeated key) */ \
    X(MATCH_REST, ABC)     /* R[A] = dict(R[B]) without the keys of tuple R[C] (a mapping pattern's **rest) */ \
    X(MATCH_CLASS, ABC)    /* class pattern: class R[A], keyword names R[A+1] (tuple or None), C positional, subject R[B]: R[A] = matched; if so R[A+1] = tuple of the attributes */

typedef enum Opcode {
#define OP_ENUM(name, mode) OP_##name,
    OPCODES(OP_ENUM)
#undef OP_ENUM
    OP__COUNT
} Opcode;

typedef enum OpMode { MODE_ABC, MODE_ABx, MODE_AsBx, MODE_sJ, MODE_ABCX } OpMode;

extern const char *const opcode_names[OP__COUNT];
extern const uint8_t opcode_modes[OP__COUNT];

#define INS_OP(i) ((Opcode)((i) & 0xff))
#define INS_A(i) (((i) >> 8) & 0xff)
#define INS_B(i) (((i) >> 16) & 0xff)
#define INS_C(i) (((i) >> 24) & 0xff)
/* BUILD_CLASS with C = BUILD_CLASS_EX: R[A+2] is the bases tuple, R[A+3] the keywords dict */
#define BUILD_CLASS_EX 255
#define INS_BX(i) ((uint32_t)(i) >> 16)
#define INS_SBX(i) ((int32_t)(i) >> 16)
#define INS_SJ(i) ((int32_t)(i) >> 8)

#define MK_ABC(op, a, b, c) ((uint32_t)(op) | ((uint32_t)(a) << 8) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 24))
#define MK_ABX(op, a, bx) ((uint32_t)(op) | ((uint32_t)(a) << 8) | ((uint32_t)(bx) << 16))
#define MK_ASBX(op, a, sbx) ((uint32_t)(op) | ((uint32_t)(a) << 8) | ((uint32_t)((sbx) & 0xffff) << 16))
#define MK_SJ(op, sj) ((uint32_t)(op) | ((uint32_t)((sj) & 0xffffff) << 8))

#define SBX_MAX 32767
#define SBX_MIN (-32768)
#define MAX_REGS 250 /* registers an 8-bit field may name; the compiler reports "too many ..." above */
/* Locals 0..REG_LOCALS-1 are registers; local i >= REG_LOCALS lives in
** register i + WIDE_SHIFT (past 255), reached only by the *_WIDE
** instructions, so temporaries keep registers REG_LOCALS..MAX_REGS-1. */
#define REG_LOCALS 128
#define WIDE_SHIFT (256 - REG_LOCALS)
/* The register holding local variable i (varnames[i]). */
#define LOCAL_REGISTER(i) ((i) < REG_LOCALS ? (i) : (i) + WIDE_SHIFT)

#endif
