#!/usr/bin/env bash
# A damaged or tampered @cuda.jit(cache=True) entry is a miss, never a
# crash or a wrong result: the loader (jit/disk_cache.c, then
# jit/jit_cache.c) validates every field it reads. Each case below damages
# one kernel's entry from a first run, then a second run must print the hand-checked
# result (block b of block_sum = 4096*b + 2016; saxpy out[i] = 2*i + 1) and
# count no hit for the damaged kernel. Cases with a valid checksum
# (recomputed after the change) test the field checks behind it: a
# shared-memory size of 2^62 bytes, of 0 bytes for a kernel with a shared
# array, string lengths pointing past the end, entry names the object lacks.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GPY=${GPY:-$ROOT/build/gpy}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export GPY_DEVICE=cpu
unset GPY_DUMP_PTX GPY_CACHE_DIR
fail() { echo "FAIL: $*"; exit 1; }

cat > "$tmp/prog.gpy" <<'GPY'
import numpy as np
from numba import cuda

@cuda.jit(cache=True)
def block_sum(out, x):
    buf = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.blockIdx.x * 64 + t]
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]

@cuda.jit(cache=True)
def saxpy(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2.0 * x[i] + 1.0

xs = np.arange(256, dtype=np.float32)
sums = np.zeros(4, dtype=np.float32)
block_sum[4, 64](sums, xs)
print([float(v) for v in sums])
out = np.zeros(100)
saxpy[1, 128](out, np.arange(100, dtype=np.float64))
print(float(out[0]), float(out[99]), float(out.sum()))
GPY
want='[2016.0, 6112.0, 10208.0, 14304.0]
1.0 199.0 10000.0'

# The entry layout (jit/disk_cache.c): header magic[8] u32 format
# u32 target u64 key u64 len u64 sum (40 bytes), payload u64 shared_bytes,
# then five u64-length-prefixed strings. tamper.py FILE CASE rewrites FILE.
cat > "$tmp/tamper.py" <<'PY'
import struct, sys
path, case = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
H = 40
def fnv(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h
def fix_sum():
    struct.pack_into("<QQ", data, 24, len(data) - H, fnv(bytes(data[H:])))
if case == "truncate":
    del data[len(data) // 2:]
elif case == "flip":
    data[len(data) // 3] ^= 0x40
elif case == "shared_huge":
    struct.pack_into("<Q", data, H, 1 << 62); fix_sum()
elif case == "shared_zero":
    struct.pack_into("<Q", data, H, 0); fix_sum()
elif case == "shared_odd":
    struct.pack_into("<Q", data, H, struct.unpack_from("<Q", data, H)[0] + 16); fix_sum()
elif case == "strlen_huge":
    struct.pack_into("<Q", data, H + 8, 1 << 63); fix_sum()
elif case == "entry_names":  # the object's entry names (strings 0 and 3) made unknown
    pos = H + 8
    for i in range(4):
        n = struct.unpack_from("<Q", data, pos)[0]
        if i in (0, 3):
            data[pos + 8:pos + 8 + n] = b"x" * n
        pos += 8 + n
    fix_sum()
elif case == "len_huge":
    struct.pack_into("<Q", data, 24, 1 << 62)
elif case == "format":
    struct.pack_into("<I", data, 8, 999)
elif case == "empty":
    data = bytearray()
else:
    sys.exit("unknown case " + case)
open(path, "wb").write(bytes(data))
PY

run() { # run DIR: the program's stdout must be right; prints the stats line
  local out status
  out=$(GPY_CACHE_DIR="$1" GPY_CACHE_STATS=1 timeout 120 "$GPY" "$tmp/prog.gpy" 2>"$tmp/err")
  status=$?
  [ $status -eq 0 ] || fail "status $status: $(cat "$tmp/err")"
  [ "$out" = "$want" ] || fail "stdout: got '$out', want '$want' (stderr: $(cat "$tmp/err"))"
  grep '^gpy cache:' "$tmp/err"
}

dir="$tmp/c0"
stats=$(run "$dir") || fail "$stats"
[ "$stats" = "gpy cache: 0 hits, 2 misses, 2 writes" ] || fail "first run: $stats"
stats=$(run "$dir") || fail "$stats"
[ "$stats" = "gpy cache: 2 hits, 0 misses, 0 writes" ] || fail "clean second run: $stats"
ls "$dir"/block_sum-*.gpyk "$dir"/saxpy-*.gpyk >/dev/null 2>&1 || fail "no cache files in $dir"

# CASE:KERNEL pairs (the shared-memory cases on the kernel that has shared memory)
for pair in truncate:block_sum flip:saxpy shared_huge:block_sum shared_huge:saxpy shared_zero:block_sum \
            shared_odd:block_sum strlen_huge:block_sum entry_names:block_sum entry_names:saxpy len_huge:saxpy \
            format:block_sum empty:saxpy; do
  case=${pair%%:*} kernel=${pair#*:}
  d="$tmp/$case-$kernel"
  cp -r "$dir" "$d"
  python3 "$tmp/tamper.py" "$d"/$kernel-*.gpyk "$case" || fail "tamper.py $case"
  cmp -s "$d"/$kernel-*.gpyk "$dir"/$kernel-*.gpyk && fail "$case did not change $kernel's entry"
  stats=$(run "$d") || fail "$case on $kernel: $stats"
  # the damaged entry misses and is rewritten; the other one still hits
  [ "$stats" = "gpy cache: 1 hits, 1 misses, 1 writes" ] || fail "$case on $kernel: $stats"
done
# the rewritten entry is good again
stats=$(run "$tmp/shared_huge-block_sum") || fail "rewritten: $stats"
[ "$stats" = "gpy cache: 2 hits, 0 misses, 0 writes" ] || fail "rewritten: $stats"
echo "ok"
