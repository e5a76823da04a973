/*
** fuzz_signature.c — libFuzzer target: the kernel signature parser
** (cuda.jit("void(float32[:, ::1], int32)"), stdlib/cuda_dispatch.c), then
** the names of the types it built. Seeds: the signature strings in tests/.
*/
#include <stdlib.h>
#include <string.h>

#include "cuda_priv.h"
#include "fuzz_vm.h"

#define SIG_MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    VM *vm = fuzz_vm();
    /* the parser reads a NUL-terminated string, as a Str's chars are */
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const JType *args[SIG_MAX_ARGS], *ret = NULL;
    char err[512], name[256];
    int n = jit_parse_signature(vm, text, args, SIG_MAX_ARGS, &ret, err, sizeof err);
    if (n >= 0) {
        jt_name(ret, name, sizeof name);
        for (int i = 0; i < n; i++) jt_name(args[i], name, sizeof name);
    }
    free(text);
    return 0;
}
