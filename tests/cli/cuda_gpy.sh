#!/usr/bin/env bash
# gpy programs (tests/gpu/*.gpy) on the CUDA device through the test driver
# tests/gpu/fake_libcuda.c (GPY_LIBCUDA, GPY_DEVICE=cuda): the exact
# parameter bytes of each launch (FAKE_CUDA_LOG), no contract violation,
# streams/events, device properties, out-of-memory, launch limits checked
# before the driver, a sticky error and reset, a missing driver, a driver
# without devices. The test driver does not run PTX: these tests check the
# calls; the CPU device (the kernels suite) checks the numbers.
set -u
unset GPY_DEVICE GPY_LIBCUDA FAKE_CUDA_DEVICES FAKE_CUDA_MEMORY FAKE_CUDA_FAIL_LAUNCH FAKE_CUDA_STRICT
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GPY=${GPY:-$ROOT/build/gpy}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lib=$(bash "$ROOT/tests/gpu/build-fake.sh" "$tmp") || { echo "FAIL building tests/gpu/fake_libcuda.c"; exit 1; }
T=$ROOT/tests/gpu
fail() { echo "FAIL $*"; exit 1; }
# a check that cannot run here (a missing tool) is skipped, except where CI
# asks for every check (GPY_TEST_STRICT=1): there it fails
skip() { [ "${GPY_TEST_STRICT:-0}" != 1 ] || fail "(GPY_TEST_STRICT=1) cannot check: $*"; echo "SKIP: $*"; }

# run NAME PROG [VAR=value...]: runs PROG on the fake GPU; output in $tmp/NAME.out, log in $tmp/NAME.log
run() {
  local name=$1 prog=$2; shift 2
  env GPY_LIBCUDA="$lib" FAKE_CUDA_LOG="$tmp/$name.log" GPY_DEVICE=cuda "$@" \
    timeout 60 "$GPY" "$prog" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local status=$?
  touch "$tmp/$name.log"
  if grep -q '^violation' "$tmp/$name.log"; then echo "FAIL $name: driver contract violations:"; grep '^violation' "$tmp/$name.log" | head; exit 1; fi
  return $status
}
expect() { # expect NAME EXPECTED-TEXT
  diff <(printf '%s\n' "$2") "$tmp/$1.out" >"$tmp/diff" || { echo "FAIL $1 output:"; cat "$tmp/diff" "$tmp/$1.err"; exit 1; }
}

# ---- launch parameters: device pointers, shapes, strides, scalars, views
run params "$T/launch_params.gpy" || { cat "$tmp/params.err"; fail "launch_params.gpy"; }
P='[0-9a-f]\{10\}d[0-9a-f]0000'   # a device address of the fake (0x0000D0xxxxxxxxxx), little-endian
log=$tmp/params.log
grep -q "^launch scale[^ ]* grid=1,1,1 block=256,1,1 shared=0 params=$P,0300000000000000,0400000000000000,$P,0300000000000000,0400000000000000,00000040\$" "$log" ||
  { cat "$log"; fail "launch_params: n=3 launch line"; }
grep -q "^launch scale[^ ]* grid=3907,1,1 block=256,1,1 shared=0 params=$P,40420f0000000000,0400000000000000,$P,40420f0000000000,0400000000000000,00000040\$" "$log" ||
  { cat "$log"; fail "launch_params: n=1000000 launch line"; }
# a host array is copied to device memory; 1000 as int64
grep -q "^launch fill[^ ]* grid=1,1,1 block=32,1,1 shared=0 params=$P,0500000000000000,0800000000000000,e803000000000000\$" "$log" ||
  { cat "$log"; fail "launch_params: host array launch line"; }
# a 4x6 float64 array, then its rows 1:3 (a view 48 bytes further)
full=$(grep '^launch two' "$log" | sed -n 1p | sed 's/.*params=\([0-9a-f]*\),.*/\1/')
view=$(grep '^launch two' "$log" | sed -n 2p | sed 's/.*params=\([0-9a-f]*\),.*/\1/')
grep -q "^launch two[^ ]* grid=1,1,1 block=4,8,1 shared=0 params=$P,0400000000000000,0600000000000000,3000000000000000,0800000000000000\$" "$log" ||
  { cat "$log"; fail "launch_params: 2-D launch line"; }
le() { python3 -c "import sys; print(int.from_bytes(bytes.fromhex(sys.argv[1]), 'little'))" "$1"; }
[ $(( $(le "$view") - $(le "$full") )) -eq 48 ] || fail "launch_params: view pointer $view is not 48 bytes after $full"
grep -q "^launch two[^ ]* .*params=$view,0200000000000000,0600000000000000,3000000000000000,0800000000000000\$" "$log" ||
  { cat "$log"; fail "launch_params: view launch line"; }
[ "$(grep -c '^launch' "$log")" -eq 5 ] || fail "launch_params: expected 5 launches"
# the same program prints the same on the CPU device
GPY_DEVICE=cpu timeout 60 "$GPY" "$T/launch_params.gpy" >"$tmp/params_cpu.out" 2>&1 || fail "launch_params.gpy on the CPU device"
cmp -s "$tmp/params.out" "$tmp/params_cpu.out" || { diff "$tmp/params.out" "$tmp/params_cpu.out"; fail "launch_params: CPU and CUDA outputs differ"; }
expect params "(3,) float32 (3,) 3 12
(1000000,) float32 (1000000,) 1000000 4000000
(5,)
(4, 6) (2, 6) (48, 8)"

# ---- host access to device arrays: element reads/writes, views, copies (hand-checked)
run access "$T/host_access.gpy" || { cat "$tmp/access.err"; fail "host_access.gpy"; }
expect access "6.0 11.0
[[99.  1.  2.  3.]
 [ 4.  5.  6.  7.]
 [ 8.  9. 10. 11.]]
(4, 3) [ 9. 10. 11.]
(3,) (32,) [1. 5. 9.]
(12,) 99.0
12.0
24.0
(8, 16) True
(4, 3)
(2, 4)
[1. 1. 1. 1.]
3 12 2 float64 96
50.0 1.0 1.0
[7. 7. 7. 7.] [ 1. 50.  7.]
IndexError
[[1. 1.]
 [7. 7.]] [1. 1. 7. 7.]
[1. 2. 3. 4.] 4.0"
GPY_DEVICE=cpu timeout 60 "$GPY" "$T/host_access.gpy" >"$tmp/access_cpu.out" 2>&1 || fail "host_access.gpy on the CPU device"
cmp -s "$tmp/access.out" "$tmp/access_cpu.out" || fail "host_access: CPU and CUDA outputs differ"
# the non-contiguous host array h = zeros((4, 6))[:, ::2] goes in as a contiguous copy
grep -q "^launch k[^ ]* grid=1,1,1 block=4,1,1 shared=0 params=$P,0400000000000000,0300000000000000,1800000000000000,0800000000000000\$" "$tmp/access.log" ||
  { cat "$tmp/access.log"; fail "host_access: launch line"; }

# ---- pinned / mapped / managed arrays
run hostmem "$T/host_memory.gpy" || { cat "$tmp/hostmem.err"; fail "host_memory.gpy"; }
expect hostmem "(3, 4) float32 0.0 0.0 0
24.0
(6,)
ok"

# ---- streams, events, dynamic shared memory
run streams "$T/streams_events.gpy" || { cat "$tmp/streams.err"; fail "streams_events.gpy"; }
expect streams "float True
True
(64,) float64"
grep -q "^launch inc[^ ]* grid=2,1,1 block=32,1,1 shared=0 params=$P,4000000000000000,0800000000000000\$" "$tmp/streams.log" || fail "streams: launch line"
grep -q "^launch inc[^ ]* grid=2,1,1 block=32,1,1 shared=256 params=" "$tmp/streams.log" || fail "streams: dynamic shared memory"
GPY_DEVICE=cpu timeout 60 "$GPY" "$T/streams_events.gpy" >"$tmp/streams_cpu.out" 2>&1 || fail "streams_events.gpy on the CPU device"
cmp -s "$tmp/streams.out" "$tmp/streams_cpu.out" || fail "streams: CPU and CUDA outputs differ"

# ---- devices: the fake's properties (tests/gpu/fake_libcuda.c)
run devices "$T/devices.gpy" || { cat "$tmp/devices.err"; fail "devices.gpy"; }
head -6 "$tmp/devices.out" >"$tmp/devices6.out"; mv "$tmp/devices6.out" "$tmp/devices.out.head"
diff <(printf '%s\n' True 1 "0 gpy fake device (8, 0)" "108 1024 49152" "gpy fake device" 0) "$tmp/devices.out.head" ||
  fail "devices: properties"
grep -q "^id 0 .*gpy fake device.*SUPPORTED" "$tmp/devices.out" || fail "devices: detect()"
grep -q "^gpy runs kernels on CUDA device 0" "$tmp/devices.out" || fail "devices: detect() names the device"
GPY_LIBCUDA="$lib" "$GPY" --version | grep -q "device: CUDA device 0: gpy fake device" || fail "--version with a GPU"
GPY_DEVICE=cpu "$GPY" --version | grep -q "device: gpy CPU device" || fail "--version with GPY_DEVICE=cpu"

# ---- the runtime API: context memory info, streams, `with cuda.gpus[i]`, device views and copies
run runtime "$T/runtime_api.gpy" FAKE_CUDA_DEVICES=2 || { cat "$tmp/runtime.err"; fail "runtime_api.gpy"; }
[ "$(grep -c '^launch' "$tmp/runtime.log")" -eq 3 ] || fail "runtime_api: expected 3 launches (legacy, per-thread, default streams)"
GPY_DEVICE=cpu timeout 60 "$GPY" "$T/runtime_api.gpy" >"$tmp/runtime_cpu.out" 2>&1 || fail "runtime_api.gpy on the CPU device"
diff <(sed '12,13d;17d' "$tmp/runtime.out") <(sed '12,13d;17d' "$tmp/runtime_cpu.out") || fail "runtime_api: CPU and CUDA outputs differ"
sed -n '12,13p;17p' "$tmp/runtime.out" >"$tmp/runtime.out.gpu"; mv "$tmp/runtime.out.gpu" "$tmp/runtime.out"
expect runtime "2 0
inside 1
this device array belongs to a CUDA context that was reset or replaced"

# ---- errors: out of memory (after a collection), limits before the driver
run errors "$T/errors.gpy" FAKE_CUDA_MEMORY=4000000 || { cat "$tmp/errors.err"; fail "errors.gpy"; }
expect errors "40 allocations of 2 MB in 4 MB
CudaAPIError: CUDA_ERROR_OUT_OF_MEMORY: out of memory (allocating 8000000 bytes of device memory)
CudaAPIError: [1] Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE: blockdim (2048, 1, 1) exceeds the limits of a block (1024 threads; z ≤ 64)
CudaAPIError: [1] Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE: blockdim (32, 32, 2) exceeds the limits of a block (1024 threads; z ≤ 64)
6
ValueError: launch of kernel 'inc' failed: kernel 'inc_kernel_$(grep -o 'inc_kernel_[0-9a-f]*' "$tmp/errors.out" | head -1 | sed 's/inc_kernel_//')': 200000 bytes of shared memory per block (0 static + 200000 dynamic) exceed the device's limit of 166912
0.0
CudaAPIError: kernel 'inc' argument 1: CUDA_ERROR_OUT_OF_MEMORY: out of memory (allocating 8000000 bytes of device memory)
done"
grep -q '^launch' "$tmp/errors.log" && fail "errors: a launch over the limits reached the driver"

# ---- a sticky error (the first launch hits an illegal address), then reset
run sticky "$T/sticky.gpy" FAKE_CUDA_FAIL_LAUNCH=1 || { cat "$tmp/sticky.err"; fail "sticky.gpy"; }
expect sticky "CudaAPIError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered (copying device to host) (a sticky error: the CUDA context is unusable until it is reset; device memory, modules, streams and events made before are lost)
again: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal m
the VM still works: 42
(8,)"

# ---- the same where the driver cannot recover in-process (as an H200 with driver 580): reset() says restart
run stickyfatal "$T/sticky.gpy" FAKE_CUDA_FAIL_LAUNCH=1 FAKE_CUDA_STICKY_FATAL=1 && fail "sticky fatal: exit status 0"
grep -q "^CudaAPIError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered (the CUDA driver cannot clear this error inside a running process: restart the program)" "$tmp/stickyfatal.err" ||
  { cat "$tmp/stickyfatal.err"; fail "sticky fatal: message"; }
[ "$(tail -1 "$tmp/stickyfatal.out")" = "the VM still works: 42" ] || fail "sticky fatal: output before reset"

# ---- a launch the driver refuses (not sticky): an exception, and the next launch works
run launcherr "$T/launch_error.gpy" FAKE_CUDA_FAIL_LAUNCH=1 FAKE_CUDA_FAIL_CODE=701 || { cat "$tmp/launcherr.err"; fail "launch_error.gpy"; }
grep -q "^CudaAPIError: launch of kernel 'inc' failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch" "$tmp/launcherr.out" ||
  { cat "$tmp/launcherr.out"; fail "launch_error: message"; }
[ "$(tail -1 "$tmp/launcherr.out")" = "(8,)" ] || fail "launch_error: the next launch"
[ "$(grep -c '^launch' "$tmp/launcherr.log")" -eq 1 ] || fail "launch_error: expected 1 recorded launch"

# ---- a kernel that launches kernels: its PTX calls the device runtime, so it
# is linked with libcudadevrt (the test driver refuses to load it unlinked);
# one launch is the host's (the child grids are the GPU's own)
devrt=${GPY_CUDA_HOME:-${CUDA_HOME:-/usr/local/cuda}}/lib64/libcudadevrt.a
if [ ! -f "$devrt" ]; then
  skip "no $devrt: a kernel launching kernels is not checked"
else
  run child "$T/launch_child.gpy" || { cat "$tmp/child.err"; fail "launch_child.gpy"; }
  grep -q "^launch parent[^ ]* grid=2,1,1 block=32,1,1 shared=0 params=" "$tmp/child.log" ||
    { cat "$tmp/child.log"; fail "launch_child: launch line"; }
  [ "$(grep -c '^launch' "$tmp/child.log")" -eq 1 ] || fail "launch_child: expected 1 recorded launch"
fi

# ---- GPY_DEVICE=cuda without a driver: an error that says why
GPY_LIBCUDA=/nonexistent GPY_DEVICE=cuda timeout 20 "$GPY" "$ROOT/examples/vector_add.gpy" >"$tmp/nolib.out" 2>&1 && fail "no driver: exit status 0"
grep -q '^CudaAPIError: GPY_DEVICE=cuda: /nonexistent not found: ' "$tmp/nolib.out" || { cat "$tmp/nolib.out"; fail "no driver: message"; }

# ---- a driver without devices: is_available() False, the CPU device runs the program
out=$(GPY_LIBCUDA="$lib" FAKE_CUDA_DEVICES=0 timeout 20 "$GPY" -c 'from numba import cuda; print(cuda.is_available())' 2>&1)
[ "$out" = False ] || fail "FAKE_CUDA_DEVICES=0: is_available() printed '$out'"
out=$(GPY_LIBCUDA="$lib" FAKE_CUDA_DEVICES=0 timeout 60 "$GPY" "$ROOT/examples/vector_add.gpy" 2>&1)
[ "$out" = "[ 0.  3.  6.  9. 12. 15. 18. 21. 24. 27.]" ] || fail "FAKE_CUDA_DEVICES=0: vector_add printed '$out'"
GPY_LIBCUDA="$lib" FAKE_CUDA_DEVICES=0 GPY_DEVICE=cuda timeout 20 "$GPY" "$ROOT/examples/vector_add.gpy" >"$tmp/nodev.out" 2>&1 && fail "FAKE_CUDA_DEVICES=0 GPY_DEVICE=cuda: exit 0"
grep -q 'GPY_DEVICE=cuda: the CUDA driver (.*) reports no device' "$tmp/nodev.out" || { cat "$tmp/nodev.out"; fail "no device: message"; }

# a redefined kernel (as at the prompt): the new one runs, and the old one's
# module is unloaded once its dispatcher is collected, before the next launch
run redefine "$T/redefine_kernel.gpy" || { cat "$tmp/redefine.err"; fail "redefine_kernel: exit status"; }
[ "$(cat "$tmp/redefine.out")" = "first launched
redefined, collected
launched again" ] || fail "redefine_kernel: output $(cat "$tmp/redefine.out")"
seq=$(sed -E 's/^(load|unload) module ([0-9]+) entries=.*/\1 \2/; s/^launch ([^ ]*) .*/launch \1/' "$tmp/redefine.log" | tr '\n' ';')
old=$(sed -n 's/^load module 1 entries=//p' "$tmp/redefine.log"); new=$(sed -n 's/^load module 2 entries=//p' "$tmp/redefine.log")
[ -n "$old" ] && [ "$old" != "$new" ] || fail "redefine_kernel: two modules with distinct entries expected: $seq"
[ "$seq" = "load 1;launch $old;load 2;launch $new;unload 1;launch $new;unload 2;" ] ||
  fail "redefine_kernel: driver calls $seq"
exit 0
