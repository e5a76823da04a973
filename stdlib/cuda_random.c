/*
** cuda_random.c — the `numba.cuda.random` module: xoroshiro128+ generators
** for kernels, giving the same numbers as Numba's module of that name.
**
** The device functions (xoroshiro128p_next, _uniform_float32, _normal_float64
** ...) are ordinary @cuda.jit(device=True) functions written in gpy and run
** into the module at import, so the kernel compiler specializes and inlines
** them like any user device function. Seeding (splitmix64, then one jump of
** 2**64 steps per generator) runs here in C on the host, as Numba also seeds
** on the CPU, and the states go to the device with cuda.to_device.
**
** gpy has no record dtypes: where Numba's states array holds n records
** (s0, s1) of uint64, ours is a uint64 array of shape (n, 2). Programs that
** only pass it to these functions, index it by generator and ask its
** len()/shape[0] see no difference.
*/
#include <stdint.h>
#include <string.h>

#include "cuda_priv.h"

/* ------------------------------------------------------- host generator */

typedef struct Xoro {
    uint64_t s0, s1;
} Xoro;

static uint64_t rotl64(uint64_t x, unsigned k) { return (x << k) | (x >> (64 - k)); }

/* splitmix64 of the seed, used for both words (as Numba does) so that small
** seeds still start far apart in the sequence. */
static Xoro xoro_seeded(uint64_t seed) {
    uint64_t z = seed + UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return (Xoro){z, z};
}

static void xoro_step(Xoro *g) {
    uint64_t s0 = g->s0, s1 = g->s1 ^ g->s0;
    g->s0 = rotl64(s0, 55) ^ s1 ^ (s1 << 14);
    g->s1 = rotl64(s1, 36);
}

/* Advances by 2**64 steps: the state after the jump is the xor of the
** states at the set bits of the jump polynomial. */
static void xoro_jump(Xoro *g) {
    static const uint64_t poly[2] = {UINT64_C(0xbeac0467eba5facb), UINT64_C(0xd86b048b86aa9922)};
    Xoro acc = {0, 0};
    for (int w = 0; w < 2; w++)
        for (unsigned b = 0; b < 64; b++) {
            if (poly[w] & (UINT64_C(1) << b)) {
                acc.s0 ^= g->s0;
                acc.s1 ^= g->s1;
            }
            xoro_step(g);
        }
    *g = acc;
}

/* The seed as Numba's uint64(seed): integers wrap modulo 2**64. */
static uint64_t seed_arg(VM *vm, Value v) {
    if (IS_FLOAT(v) || IS_NONE(v) || IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "the seed of the random states must be an integer, not %s", vm_type_name(vm, v));
    return (uint64_t)arg_int(vm, "seed", v);
}

/* _host_states(n, seed, subsequence_start): a host uint64 array of shape
** (n, 2) holding the (s0, s1) of n generators, each 2**64 steps after the
** previous one, the first subsequence_start jumps after the seed's. */
static Value f_host_states(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    if (argc != 3) vm_raise_kind(vm, TypeError, "_host_states() takes 3 arguments, got %d", argc);
    if (!IS_INTLIKE(argv[0]))
        vm_raise_kind(vm, TypeError, "the number of random states must be an integer, not %s",
                      vm_type_name(vm, argv[0]));
    int64_t n = arg_int(vm, "n", argv[0]);
    if (n < 0) vm_raise_kind(vm, ValueError, "the number of random states must be >= 0, got %lld", (long long)n);
    uint64_t seed = seed_arg(vm, argv[1]);
    if (!IS_INTLIKE(argv[2]))
        vm_raise_kind(vm, TypeError, "subsequence_start must be an integer, not %s", vm_type_name(vm, argv[2]));
    int64_t skip = arg_int(vm, "subsequence_start", argv[2]);
    if (skip < 0) vm_raise_kind(vm, ValueError, "subsequence_start must be >= 0, got %lld", (long long)skip);
    int64_t shape[2] = {n, 2};
    NDArray *a = nd_new(vm, ND_UINT64, 2, shape);
    uint64_t *out = (uint64_t *)a->data;
    Xoro g = xoro_seeded(seed);
    if (n > 0)
        for (int64_t k = 0; k < skip; k++) xoro_jump(&g);
    for (int64_t i = 0; i < n; i++) {
        if (i > 0) xoro_jump(&g);
        out[2 * i] = g.s0;
        out[2 * i + 1] = g.s1;
    }
    return OBJ_VAL(a);
}

/* ------------------------------------------------------ device functions */

/* Kernel-side code, run into the module at import. Numba's typing is kept
** where it decides the result: float32 uniforms go through float64, and
** both normals take float32 uniforms (log/cos of float32 are float32). */
static const char random_source[] =
    "from numba import cuda, uint64, float32, float64\n"
    "import math\n"
    "\n"
    "\n"
    "def _check_states(states, where):\n"
    "    shape = getattr(states, 'shape', None)\n"
    "    dtype = getattr(states, 'dtype', None)\n"
    "    if shape is None or len(shape) != 2 or shape[1] != 2 or str(dtype) != 'uint64':\n"
    "        raise TypeError(where + '(): states must be a uint64 array of shape (n, 2), as made by '\n"
    "                        'create_xoroshiro128p_states, not ' + type(states).__name__ +\n"
    "                        ('' if shape is None else ' of dtype ' + str(dtype) + ' and shape ' + str(shape)))\n"
    "\n"
    "\n"
    "def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):\n"
    "    return cuda.to_device(_host_states(n, seed, subsequence_start), stream=stream)\n"
    "\n"
    "\n"
    "def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):\n"
    "    _check_states(states, 'init_xoroshiro128p_states')\n"
    "    host = _host_states(states.shape[0], seed, subsequence_start)\n"
    "    if hasattr(states, 'copy_to_device'):\n"
    "        states.copy_to_device(host, stream=stream)\n"
    "    else:\n"
    "        states[:] = host\n"
    "\n"
    "\n"
    "@cuda.jit(device=True)\n"
    "def _u64(hi, lo):\n"
    "    return (uint64(hi) << uint64(32)) | uint64(lo)\n"
    "\n"
    "\n"
    "@cuda.jit(device=True)\n"
    "def _rotl(x, k):\n"
    "    return (x << uint64(k)) | (x >> uint64(64 - k))\n"
    "\n"
    "\n"
    "@cuda.jit('void(uint64[:, :], int64, uint64)', device=True)\n"
    "def init_xoroshiro128p_state(states, index, seed):\n"
    "    z = uint64(seed) + _u64(0x9E3779B9, 0x7F4A7C15)\n"
    "    z = (z ^ (z >> uint64(30))) * _u64(0xBF58476D, 0x1CE4E5B9)\n"
    "    z = (z ^ (z >> uint64(27))) * _u64(0x94D049BB, 0x133111EB)\n"
    "    z = z ^ (z >> uint64(31))\n"
    "    states[index, 0] = z\n"
    "    states[index, 1] = z\n"
    "\n"
    "\n"
    "@cuda.jit('uint64(uint64[:, :], int64)', device=True)\n"
    "def xoroshiro128p_next(states, index):\n"
    "    s0 = states[index, 0]\n"
    "    s1 = states[index, 1]\n"
    "    result = s0 + s1\n"
    "    s1 ^= s0\n"
    "    states[index, 0] = _rotl(s0, 55) ^ s1 ^ (s1 << uint64(14))\n"
    "    states[index, 1] = _rotl(s1, 36)\n"
    "    return result\n"
    "\n"
    "\n"
    "@cuda.jit(device=True)\n"
    "def _jump_word(states, index, word, acc0, acc1):\n"
    "    for b in range(64):\n"
    "        if (word >> uint64(b)) & uint64(1) != uint64(0):\n"
    "            acc0 ^= states[index, 0]\n"
    "            acc1 ^= states[index, 1]\n"
    "        xoroshiro128p_next(states, index)\n"
    "    return acc0, acc1\n"
    "\n"
    "\n"
    "@cuda.jit('void(uint64[:, :], int64)', device=True)\n"
    "def xoroshiro128p_jump(states, index):\n"
    "    acc0, acc1 = _jump_word(states, index, _u64(0xbeac0467, 0xeba5facb), uint64(0), uint64(0))\n"
    "    acc0, acc1 = _jump_word(states, index, _u64(0xd86b048b, 0x86aa9922), acc0, acc1)\n"
    "    states[index, 0] = acc0\n"
    "    states[index, 1] = acc1\n"
    "\n"
    "\n"
    "@cuda.jit(device=True)\n"
    "def uint64_to_unit_float64(x):\n"
    "    return float64(uint64(x) >> uint64(11)) * (1.0 / 9007199254740992.0)\n"
    "\n"
    "\n"
    "@cuda.jit(device=True)\n"
    "def uint64_to_unit_float32(x):\n"
    "    return float32(uint64_to_unit_float64(x))\n"
    "\n"
    "\n"
    "@cuda.jit('float32(uint64[:, :], int64)', device=True)\n"
    "def xoroshiro128p_uniform_float32(states, index):\n"
    "    return uint64_to_unit_float32(xoroshiro128p_next(states, index))\n"
    "\n"
    "\n"
    "@cuda.jit('float64(uint64[:, :], int64)', device=True)\n"
    "def xoroshiro128p_uniform_float64(states, index):\n"
    "    return uint64_to_unit_float64(xoroshiro128p_next(states, index))\n"
    "\n"
    "\n"
    "@cuda.jit('float32(uint64[:, :], int64)', device=True)\n"
    "def xoroshiro128p_normal_float32(states, index):\n"
    "    u1 = xoroshiro128p_uniform_float32(states, index)\n"
    "    u2 = xoroshiro128p_uniform_float32(states, index)\n"
    "    return math.sqrt(float32(-2.0) * math.log(u1)) * math.cos(float32(6.2831855) * u2)\n"
    "\n"
    "\n"
    "@cuda.jit('float64(uint64[:, :], int64)', device=True)\n"
    "def xoroshiro128p_normal_float64(states, index):\n"
    "    u1 = xoroshiro128p_uniform_float32(states, index)\n"
    "    u2 = xoroshiro128p_uniform_float32(states, index)\n"
    "    return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)\n";

Module *cuda_random_build_module(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "numba.cuda.random"));
    vm_push_root(vm, OBJ_VAL(m));
    dict_set_cstr(vm, m->dict, "__package__", STR_VAL(str_cstr(vm, "numba.cuda")));
    module_add_function(vm, m, "_host_states", f_host_states);
    module_exec_source(vm, m, "<numba.cuda.random>", random_source, sizeof random_source - 1);
    vm_pop_roots(vm, 1);
    return m;
}
