#!/usr/bin/env bash
# Barrier kernels on the CPU device: which run as thread loops between
# barriers (jit/cpu_regions.c) and which keep one fiber per thread, and the
# two paths giving the same results (GPY_CPU_REGIONS=0 forces fibers).
set -u
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export GPY_DEVICE=cpu
unset GPY_DUMP_PTX # inspect_llvm must show the CPU code, not the GPU's
here=$(cd "$(dirname "$0")" && pwd)

cat > "$tmp/paths.gpy" <<'GPY'
# Which barrier kernels the CPU device runs as per-region thread loops
# (jit/cpu_regions.c) and which keep one fiber per thread: a kernel run as
# regions has a block entry and no thread entry in its CPU code. Results of
# both kinds are checked against the simulator in barrier_regions.gpy.
from numba import cuda, int32
import numpy as np


def path(k):
    ir = list(k.inspect_llvm().values())[0]
    return "fibers" if "_thread_" in ir else "regions"


@cuda.jit
def uniform_loops(a, n):
    s = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    k = 16
    while k > 0:
        if t < k:
            s[t] = t + k
        cuda.syncthreads()
        k //= 2
    for r in range(n):
        cuda.syncthreads()
    if cuda.gridDim.x > 1:
        cuda.syncthreads()
    a[t] = s[t]


@cuda.jit
def tail_return(a):
    s = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    if t > 20:
        return
    a[t] = s[31 - t]


@cuda.jit
def early_return(a):
    t = cuda.threadIdx.x
    if t > 20:
        return
    cuda.syncthreads()
    a[t] = t


@cuda.jit
def divergent_barrier(a):
    t = cuda.threadIdx.x
    if t < 64:
        cuda.syncthreads()
    a[t] = t


@cuda.jit
def loop_from_memory(a):
    for r in range(a[0]):
        cuda.syncthreads()


@cuda.jit
def thread_loop_count(a):
    t = cuda.threadIdx.x
    k = t
    while k > 0:
        cuda.syncthreads()
        k //= 2


@cuda.jit
def break_out(a):
    for r in range(4):
        cuda.syncthreads()
        if a[0] == r:
            break


@cuda.jit
def barrier_vote(a):
    t = cuda.threadIdx.x
    n = cuda.syncthreads_count(t > 3)
    a[t] = n


@cuda.jit
def barrier_count(a):
    a[cuda.threadIdx.x] = cuda.syncthreads_count(cuda.threadIdx.x > 3)


@cuda.jit
def with_print(a):
    cuda.syncthreads()
    print(cuda.threadIdx.x)


@cuda.jit(debug=True)
def debug_mode(a):
    cuda.syncthreads()
    a[cuda.threadIdx.x] = 1


a = np.zeros(32, dtype=np.int32)
for k, args in ((uniform_loops, (a, 2)), (tail_return, (a,)), (early_return, (a,)),
                (divergent_barrier, (a,)), (loop_from_memory, (a,)), (thread_loop_count, (a,)),
                (break_out, (a,)), (barrier_vote, (a,)), (barrier_count, (a,)), (debug_mode, (a,))):
    k[1, 32](*args)
    print(k.__name__, path(k))
with_print[1, 1](a)
print("with_print", path(with_print))
GPY
expected="uniform_loops regions
tail_return regions
early_return regions
divergent_barrier fibers
loop_from_memory fibers
thread_loop_count fibers
break_out fibers
barrier_vote regions
barrier_count fibers
debug_mode fibers
0
with_print fibers"
# output of a run, without the warning an ASan build prints once it switches
# fibers with swapcontext (only the fiber runs switch, so it would differ)
clean() { grep -v '^==[0-9]*==WARNING: ASan doesn.t fully support makecontext'; }
# gpy_run [VAR=value...] GPY PROG: sets $out (stdout and stderr, cleaned) and $status
gpy_run() {
  env "$@" >"$tmp/run.out" 2>&1
  status=$?
  out=$(clean <"$tmp/run.out")
}

gpy_run "$GPY" "$tmp/paths.gpy"; got=$out
if [ $status -ne 0 ] || [ "$got" != "$expected" ]; then echo "FAIL paths (status $status): got [$got]"; fail=1; fi
# GPY_CPU_REGIONS=0: the same kernels, every one on fibers
gpy_run GPY_CPU_REGIONS=0 "$GPY" "$tmp/paths.gpy"; got=$out
if [ $status -ne 0 ] || [ "$got" != "${expected//regions/fibers}" ]; then
  echo "FAIL GPY_CPU_REGIONS=0 (status $status): got [$got]"; fail=1
fi

# cache=True: a region kernel (block entry only) is written and read back
cat > "$tmp/cached.gpy" <<'GPY'
from numba import cuda, int32
import numpy as np


@cuda.jit(cache=True)
def rev(a):
    s = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    a[t] = s[63 - t]


a = np.arange(64, dtype=np.int32)
rev[1, 64](a)
print(a[:3], "_thread_" in list(rev.inspect_llvm().values())[0])
GPY
for want in "0 hits, 1 misses, 1 writes" "1 hits, 0 misses, 0 writes"; do
  got=$(GPY_CACHE_DIR="$tmp/cache" GPY_CACHE_STATS=1 "$GPY" "$tmp/cached.gpy" 2>"$tmp/err")
  if [ "$got" != "[63 62 61] False" ]; then echo "FAIL cached region kernel: got [$got]"; fail=1; fi
  grep -qx "gpy cache: $want" "$tmp/err" || { echo "FAIL cache stats: want '$want', got '$(cat "$tmp/err")'"; fail=1; }
done

# random race-free barrier kernels (tests/gpu/barrier_kernel_gen.py): regions == fibers
nreg=0
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
  python3 "$here/../gpu/barrier_kernel_gen.py" $seed > "$tmp/gen.gpy"
  gpy_run "$GPY" "$tmp/gen.gpy"; r=$out; rs=$status
  gpy_run GPY_CPU_REGIONS=0 "$GPY" "$tmp/gen.gpy"; f=$out; fs=$status
  if [ $rs -ne 0 ] || [ $fs -ne 0 ] || ! grep -q "^PATH " <<<"$r"; then
    echo "FAIL generated kernel $seed: status $rs (regions), $fs (fibers): [$r] [$f]"; fail=1
  fi
  grep -q "PATH False" <<<"$r" && nreg=$((nreg + 1))
  if [ "$(grep -v PATH <<<"$r")" != "$(grep -v PATH <<<"$f")" ]; then
    echo "FAIL generated kernel $seed: regions and fibers differ"; fail=1
  fi
done
if [ $nreg -lt 8 ]; then echo "FAIL only $nreg of 12 generated kernels ran as regions"; fail=1; fi

gpy_run "$GPY" "$here/../kernels/barrier_regions.gpy"; regions=$out; rs=$status
gpy_run GPY_CPU_REGIONS=0 "$GPY" "$here/../kernels/barrier_regions.gpy"; fibers=$out; fs=$status
if [ $rs -ne 0 ] || [ $fs -ne 0 ] || [ -z "$regions" ] || [ "$regions" != "$fibers" ]; then
  echo "FAIL barrier_regions.gpy: status $rs (regions), $fs (fibers), outputs differ or are empty"; fail=1
fi
exit $fail
