/*
** typeof.c — the kernel type of a host value passed as an argument
** (numba.typeof's role): Python int → int64, float → float64, bool → bool,
** numpy scalars → their dtype, arrays (numpy or device, as the host sees
** them) → array(dtype, ndim, 'C' when C-contiguous else 'A'), tuples of those.
*/
#include <stdio.h>

#include "binding.h"
#include "complex_num.h"

const JType *jt_of_value(VM *vm, Value v, char *err, size_t errsize) {
    if (IS_NONE(v)) return jt_scalar(vm, JK_NONE); /* Numba's none: no parameters; `x is None` folds */
    if (IS_BOOL(v)) return jt_scalar(vm, JK_BOOL);
    if (IS_INT(v)) return jt_scalar(vm, JK_INT64);
    if (IS_FLOAT(v)) return jt_scalar(vm, JK_FLOAT64);
    if (IS_COMPLEX(vm, v)) return jt_scalar(vm, JK_COMPLEX128);
    if (IS_OBJ(v) && AS_OBJ(v)->type == vm->t_int) { /* a big int: kernel ints are fixed-width, as in Numba */
        snprintf(err, errsize, "Python int too large to convert to int64");
        return NULL;
    }
    const JitBinding *host = jit_binding(vm);
    JitArrayView a;
    if (host->array_view(vm, v, true, &a)) {
        if (a.dtype == ND_FLOAT16) {
            snprintf(err, errsize, "float16 arrays cannot be passed to kernels yet");
            return NULL;
        }
        return jt_array(vm, a.dtype, a.ndim, a.c_contiguous ? 'C' : 'A');
    }
    if (IS_TUPLE(vm, v)) {
        Tuple *t = AS_TUPLE(v);
        if (t->len > JIT_MAX_TUPLE_ARG) {
            snprintf(err, errsize, "tuple of %lld elements is too long for a kernel argument", (long long)t->len);
            return NULL;
        }
        const JType *elems[JIT_MAX_TUPLE_ARG];
        for (int64_t i = 0; i < t->len; i++) {
            elems[i] = jt_of_value(vm, t->items[i], err, errsize);
            if (!elems[i]) return NULL;
        }
        return jt_tuple(vm, (int)t->len, elems);
    }
    err[0] = 0;
    const JType *named = jt_of_namedtuple(vm, v, err, errsize); /* typeof_named.c */
    if (named || err[0]) return named;
    int dt = host->scalar_dtype(vm, v);
    if (dt >= 0 && dt != ND_FLOAT16) return jt_scalar(vm, (JKind)dt);
    snprintf(err, errsize, "cannot pass a value of type '%s' to a kernel", vm_type_name(vm, v));
    return NULL;
}
