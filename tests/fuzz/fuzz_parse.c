/*
** fuzz_parse.c — libFuzzer target: source text through the lexer, parser,
** scope pass and bytecode compiler (then the disassembler), as a file and
** as an eval() expression. Nothing runs: a fuzzed program may loop forever.
** Seeds: the .gpy programs under tests/ (scripts/fuzz.sh).
*/
#include "fuzz_vm.h"

typedef struct Input {
    const uint8_t *data;
    size_t size;
    ParseMode mode;
} Input;

static void compile_input(VM *vm, void *ud) {
    Input *in = ud;
    Source *src = source_new(vm, str_cstr(vm, "<fuzz>"), (const char *)in->data, in->size);
    vm_push_root(vm, OBJ_VAL(src));
    Proto *p = vm_compile_source(vm, src, in->mode);
    vm_push_root(vm, OBJ_VAL(p));
    comp_disassemble(vm, p, fuzz_null_file());
    vm_pop_roots(vm, 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    VM *vm = fuzz_vm();
    Input in = {data, size, PARSE_FILE};
    fuzz_pcall(vm, compile_input, &in);
    in.mode = PARSE_EVAL;
    fuzz_pcall(vm, compile_input, &in);
    fuzz_collect(vm);
    return 0;
}
