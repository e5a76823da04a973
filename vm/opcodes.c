/*
** opcodes.c — the name and operand-mode tables generated from the X-macro
** list in opcodes.h (the disassembler and the interpreter's checks use them).
*/
#include "opcodes.h"

const char *const opcode_names[OP__COUNT] = {
#define OP_NAME(name, mode) #name,
    OPCODES(OP_NAME)
#undef OP_NAME
};

const uint8_t opcode_modes[OP__COUNT] = {
#define OP_MODE(name, mode) MODE_##mode,
    OPCODES(OP_MODE)
#undef OP_MODE
};
