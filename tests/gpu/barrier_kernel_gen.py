#!/usr/bin/env python3
"""Random barrier kernels for differential testing of the CPU device.

    python3 tests/gpu/barrier_kernel_gen.py SEED > prog.gpy

Prints a gpy program with one kernel built from random statements: uniform
and thread-dependent branches, uniform for/while loops around barriers,
syncthreads_count, early returns, local arrays, tuple assignments, 1-D to 3-D
blocks. It is
race-free by construction (threads write only their own slot of s2, read
other threads' values only from s, which changes only between two
barriers), so its output is defined; tests/cli/barrier_regions.sh checks
that the region path (jit/cpu_regions.c) and the fiber path agree on it.
The last line says whether the kernel ran as fibers ("PATH True").
"""
import random
import sys

NVARS = 4


def program(seed):
    rnd = random.Random(seed)

    def var():
        return "v%d" % rnd.randrange(NVARS)

    def expr():
        c = rnd.randint(1, 9)
        return rnd.choice([
            "(%s + s[(t + %d) %% 64]) %% 1000" % (var(), c),
            "(%s * %d + %s) %% 997" % (var(), c, var()),
            "a[(%s %% 64 + 64) %% 64] + %d" % (var(), c),
            "t + %d" % c,
            "(%s + la[%d]) %% 991" % (var(), c % 3),
            "%s - %s + cuda.threadIdx.y" % (var(), var()),
            "%s + q" % var(),
        ])

    def block(depth, barriers, budget):
        pad = "    " * depth
        out = []
        for _ in range(rnd.randint(1, budget)):
            r = rnd.random()
            deeper = depth < 3
            if barriers and r < 0.15:
                out += [pad + "cuda.syncthreads()", pad + "s[t] = s2[t]", pad + "cuda.syncthreads()"]
            elif r < 0.3:
                out.append(pad + "%s = %s" % (var(), expr()))
            elif r < 0.35:
                x, y = rnd.sample(range(NVARS), 2)
                out.append(pad + "v%d, v%d = %s, %s" % (x, y, expr(), expr()))
            elif r < 0.45:
                out.append(pad + "s2[t] = %s + s2[t] %% 5" % expr())
            elif r < 0.5:
                out.append(pad + "la[%d] = %s" % (rnd.randrange(3), expr()))
            elif r < 0.58 and deeper:
                out.append(pad + "if %s %% %d == %d:" % (var(), rnd.randint(2, 4), rnd.randint(0, 1)))
                out += block(depth + 1, False, 2)
            elif r < 0.64 and deeper and barriers:
                out.append(pad + "if n > %d:" % rnd.randint(0, 6))
                out += block(depth + 1, True, 3)
                if rnd.random() < 0.5:
                    out.append(pad + "else:")
                    out += block(depth + 1, True, 2)
            elif r < 0.72 and deeper and barriers:
                out.append(pad + "for i%d in range(n %% 3 + 1):" % depth)
                out += block(depth + 1, True, 3)
                out.append(pad + "    q, qq = q + i%d, qq * 2 %% 7" % depth)
            elif r < 0.78 and deeper and barriers:
                out += [pad + "kk%d = 4" % depth, pad + "while kk%d > 0:" % depth]
                out += block(depth + 1, True, 3)
                out.append(pad + "    kk%d //= 2" % depth)
            elif r < 0.82 and barriers:
                out.append(pad + "c%d = cuda.syncthreads_count(%s %% 3 == 0)" % (depth, var()))
                out.append(pad + "%s = (%s + c%d) %% 1000" % (var(), var(), depth))
            elif r < 0.85 and deeper:
                out += [pad + "if %s %% 17 == %d:" % (var(), rnd.randint(0, 3)), pad + "    out[b, t, 4] = 7",
                        pad + "    return"]
            elif r < 0.9 and deeper:
                out.append(pad + "for j%d in range(%d):" % (depth, rnd.randint(1, 3)))
                out += block(depth + 1, False, 2)
            else:
                out.append(pad + "%s += %d" % (var(), rnd.randint(1, 5)))
        return out

    body = "\n".join(block(1, True, 8))
    shape = rnd.choice(["(64, 1, 1)", "(16, 4, 1)", "(8, 4, 2)", "(4, 2, 8)"])
    return f"""from numba import cuda, int64
import numpy as np


@cuda.jit
def k(a, out, n):
    s = cuda.shared.array(64, int64)
    s2 = cuda.shared.array(64, int64)
    la = cuda.local.array(3, int64)
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    b = cuda.blockIdx.x
    s[t] = a[t] + b
    s2[t] = 0
    cuda.syncthreads()
    la[0] = t
    la[1] = 1
    la[2] = b
    q = 0
    qq = 1
    v0 = t
    v1 = b
    v2 = 3
    v3 = a[(t * 7) % 64]
{body}
    out[b, t, 0] = v0
    out[b, t, 1] = v1
    out[b, t, 2] = v2 + v3 * 1000
    out[b, t, 3] = s[t] + la[0] + la[1] + la[2] + q + qq * 10000


a = (np.arange(64, dtype=np.int64) * 13) % 29
out = np.zeros((3, 64, 5), dtype=np.int64)
k[3, {shape}](a, out, {rnd.randint(0, 7)})
print(out.sum(axis=1))
print("PATH", "_thread_" in list(k.inspect_llvm().values())[0])
"""


if __name__ == "__main__":
    sys.stdout.write(program(int(sys.argv[1])))
