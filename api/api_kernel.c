/*
** api_kernel.c — kernels launched from C: gpy_launch is a script's
** kernel[grid, block, stream, shared_bytes](*args) without the script. It
** calls the cuda module's launch path (cuda_launch) with the arguments
** straight from the slots, so a launch from C shares the dispatcher's
** specializations, compile cache and GPU launch plans, and builds no
** launch-configuration object.
*/
#include <string.h>

#include "api.h"
#include "../stdlib/cuda_embed.h"

#define LAUNCH_MAX_ARGS 64 /* what a kernel takes (cuda_dispatch.c) */

typedef struct LaunchCtx {
    int kernel, first, nargs;
    const GpyLaunch *launch;
} LaunchCtx;

static void launch_body(VM *vm, void *ud) {
    LaunchCtx *c = ud;
    GpyVM *g = api_of(vm);
    const GpyLaunch *l = c->launch;
    if (!l) vm_raise_kind(vm, ValueError, "gpy_launch: launch is NULL");
    if (c->nargs < 0 || c->nargs > LAUNCH_MAX_ARGS)
        vm_raise_kind(vm, ValueError, "gpy_launch: %d arguments (a kernel takes 0 to %d)", c->nargs, LAUNCH_MAX_ARGS);
    if (c->nargs > 0 && (c->first < 0 || c->first > g->count - c->nargs))
        vm_raise_kind(vm, IndexError, "slots %d .. %d are out of range (this call has %d slots; see gpy_ensure_slots)",
                      c->first, c->first + c->nargs - 1, g->count);
    if (l->stream >= g->count) api_bad_slot(vm, l->stream);
    Value stream = l->stream >= 0 ? *api_slot(g, l->stream) : NONE_VAL;
    uint32_t grid[3], block[3];
    for (int i = 0; i < 3; i++) {
        grid[i] = l->grid[i] ? l->grid[i] : 1;
        block[i] = l->block[i] ? l->block[i] : 1;
    }
    /* a copy: the slots stay the roots, and nothing the launch does can
    ** move the argument values under it */
    Value args[LAUNCH_MAX_ARGS];
    if (c->nargs) memcpy(args, api_slot(g, c->first), (size_t)c->nargs * sizeof(Value));
    cuda_launch(vm, *api_slot(g, c->kernel), grid, block, l->shared_bytes, stream, c->nargs, args);
}

GpyStatus gpy_launch(GpyVM *g, int kernel, const GpyLaunch *launch, int first, int nargs) {
    if (!api_slot_ok(g, kernel)) return GPY_RUNTIME_ERROR;
    LaunchCtx c = {.kernel = kernel, .first = first, .nargs = nargs, .launch = launch};
    return api_protect(g, launch_body, &c);
}
