/*
** disasm.c — human-readable listing of a Proto's bytecode (gpy --dis):
** header, one line per instruction with decoded operands and constant
** comments, the exception handler table, then every nested Proto.
*/
#include "vm.h"
#include "opcodes.h"

static const char *const binop_names[BINOP__COUNT] = {
    "+", "-", "*", "@", "/", "//", "%", "**", "<<", ">>", "&", "|", "^",
};

/* Writes a Str's bytes (NULL prints "?"). */
static void put_str(Str *s, FILE *out) {
    if (s) fwrite(s->chars, 1, (size_t)s->len, out);
    else fputc('?', out);
}

static bool is_code(VM *vm, Value v) { return IS_OBJ(v) && AS_OBJ(v)->type == vm->t_code; }

/* Prints "  ; K[k] = repr" for constant k, or a note when k is out of range.
** Constants are ints, floats, Strs, Tuples of Strs and Protos: no user code runs. */
static void put_const(VM *vm, Proto *p, uint32_t k, FILE *out) {
    fprintf(out, "  ; K[%u] = ", k);
    if (!p->consts || k >= (uint32_t)p->nconsts) {
        fputs("<bad constant index>", out);
        return;
    }
    Value v = p->consts[k];
    if (is_code(vm, v)) {
        fputs("<code ", out);
        put_str(((Proto *)AS_OBJ(v))->name, out);
        fputc('>', out);
    } else {
        put_str(vm_repr(vm, v), out);
    }
}

/* Does this opcode's EXT word (ABCX) or Bx (ABx) name a constant? */
static bool ext_is_const(Opcode op, uint32_t ins) {
    switch (op) {
    case OP_LOAD_GLOBAL: case OP_STORE_GLOBAL: case OP_DEL_GLOBAL:
    case OP_LOAD_NAME: case OP_STORE_NAME: case OP_DEL_NAME:
    case OP_GET_ATTR: case OP_SET_ATTR: case OP_DEL_ATTR: case OP_LOAD_METHOD:
    case OP_IMPORT: case OP_IMPORT_FROM:
        return true;
    case OP_CALL: case OP_CALL_METHOD:
        return INS_C(ins) != 0; /* kw-names tuple only when there are keywords */
    default:
        return false;
    }
}

/* Prints one instruction at index i; returns the number of words it used. */
static int32_t dis_one(VM *vm, Proto *p, int32_t i, FILE *out) {
    uint32_t ins = p->code[i];
    Opcode op = INS_OP(ins);
    fprintf(out, "%6d %5d  ", (int)i, p->lines ? (int)p->lines[i] : 0);
    if ((unsigned)op >= OP__COUNT) {
        fprintf(out, "??? 0x%08x\n", ins);
        return 1;
    }
    fprintf(out, "%-16s", opcode_names[op]);
    int32_t used = 1;
    switch (opcode_modes[op]) {
    case MODE_ABC:
        fprintf(out, "%u %u %u", INS_A(ins), INS_B(ins), INS_C(ins));
        break;
    case MODE_ABx:
        fprintf(out, "%u %u", INS_A(ins), INS_BX(ins));
        if (op == OP_LOADK || op == OP_MAKE_FUNCTION) put_const(vm, p, INS_BX(ins), out);
        break;
    case MODE_AsBx:
        fprintf(out, "%u %d", INS_A(ins), (int)INS_SBX(ins));
        if (op != OP_LOADI) fprintf(out, "  ; to %d", (int)(i + 1 + INS_SBX(ins)));
        break;
    case MODE_sJ:
        fprintf(out, "%d  ; to %d", (int)INS_SJ(ins), (int)(i + 1 + INS_SJ(ins)));
        break;
    case MODE_ABCX: {
        fprintf(out, "%u %u %u", INS_A(ins), INS_B(ins), INS_C(ins));
        if (i + 1 >= p->ncode) {
            fputs("  ; <missing EXT word>", out);
            break;
        }
        uint32_t ext = p->code[i + 1];
        used = 2;
        fprintf(out, " %u", ext);
        if (ext_is_const(op, ins)) put_const(vm, p, ext, out);
        else if ((op == OP_BINOP || op == OP_INPLACE) && ext < BINOP__COUNT)
            fprintf(out, "  ; %s%s", binop_names[ext], op == OP_INPLACE ? "=" : "");
        else if (op == OP_JMP_IF_NOT_LT)
            fprintf(out, "  ; to %d", (int)(i + 2 + (int32_t)ext));
        else if (op == OP_UNPACK_EX)
            fprintf(out, "  ; before %u after %u", ext & 0xffff, ext >> 16);
        else if (op == OP_FORMAT && (ext & 0xff))
            fprintf(out, "  ; !%c%s", (int)(ext & 0xff), (ext & 0x100) ? " spec" : "");
        break;
    }
    }
    fputc('\n', out);
    return used;
}

static void put_flags(int32_t f, FILE *out) {
    static const char *const names[] = {"varargs", "varkw", "generator", "module", "class", "lambda"};
    fprintf(out, "0x%x", (unsigned)f);
    for (int b = 0; b < 6; b++)
        if (f & (1 << b)) fprintf(out, " %s", names[b]);
}

/* Prints p, then recursively every Proto among its constants. */
void comp_disassemble(VM *vm, Proto *p, FILE *out) {
    if (!p) return;
    fputs("== code ", out);
    put_str(p->name, out);
    fputs(" (", out);
    put_str(p->qualname, out);
    fprintf(out, ") nparams=%d nkwonly=%d nregs=%d nlocals=%d nconsts=%d flags=",
            (int)p->nparams, (int)p->nkwonly, (int)p->nregs, (int)p->nlocals, (int)p->nconsts);
    put_flags(p->flags, out);
    fputc('\n', out);
    for (int32_t i = 0; i < p->ncode;) i += dis_one(vm, p, i, out);
    if (p->nhandlers > 0) {
        fputs("  handlers (start end target reg):\n", out);
        for (int32_t h = 0; h < p->nhandlers; h++) {
            Handler *e = &p->handlers[h];
            fprintf(out, "    [%u, %u) -> %u  R[%u]\n", e->start, e->end, e->target, e->reg);
        }
    }
    fputc('\n', out);
    for (int32_t k = 0; k < p->nconsts; k++)
        if (is_code(vm, p->consts[k])) comp_disassemble(vm, (Proto *)AS_OBJ(p->consts[k]), out);
}
