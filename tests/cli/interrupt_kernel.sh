#!/usr/bin/env bash
# SIGINT while a CPU-device kernel runs (issue 13, "Interrupt and budgets"):
# the gpy command's handler forwards to its VM, the CPU device stops taking
# blocks, and the launch raises KeyboardInterrupt. Uncaught, the program dies
# like CPython does of a Ctrl-C (finally blocks run, exit status 130, the
# traceback ends in KeyboardInterrupt); caught, the device runs the next
# launch normally. The launches would run for minutes: a gpy that missed the
# signal fails by the runner's timeout. Expected results are hand-checked
# (CPython runs no kernels): 1 + sum(k % 7 for k in range(10)) = 25. The
# second program loads the kernel from the disk cache the first one wrote.
set -u
GPY=${GPY:-gpy}
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# interrupt PROG: runs PROG (which creates $tmp/ready just before its long
# launch) in the background, sends SIGINT once the launch has started.
# set -m: a background job of a script would start with SIGINT ignored.
interrupt() {
  set -m
  rm -f "$tmp/ready"
  GPY_DEVICE=cpu GPY_CACHE_DIR="$tmp/cache" "$GPY" "$1" "$tmp/ready" >"$tmp/out" 2>"$tmp/err" & local pid=$!
  for i in $(seq 150); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
  sleep 0.3
  kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null; echo $? >"$tmp/rc"
  set +m
}

# expect NAME WANTED FILE: FILE must hold exactly WANTED
expect() {
  [ "$(cat "$3")" = "$2" ] || { echo "FAIL $1: expected [$2] got [$(cat "$3")]"; tail -n 5 "$tmp/err"; fail=1; }
}

cat >"$tmp/kernel.py" <<'PROG'
import sys
from numba import cuda
import numpy as np

@cuda.jit(cache=True)
def spin(out, n):
    i = cuda.grid(1)
    s = 1
    for k in range(n):
        s += k % 7
    out[i] = s

out = cuda.to_device(np.zeros(64 * 2000, dtype=np.int64))
warm = cuda.to_device(np.zeros(64, dtype=np.int64))
spin[1, 64](warm, 10)  # compiled before the long launch
print("start")
PROG

cp "$tmp/kernel.py" "$tmp/uncaught.py"
cat >>"$tmp/uncaught.py" <<'PROG'
try:
    open(sys.argv[1], "w").close()
    spin[2000, 64](out, 10**7)
finally:
    print("finally ran")
print("not reached")
PROG
interrupt "$tmp/uncaught.py"
expect "SIGINT in a kernel: exit status" 130 "$tmp/rc"
expect "SIGINT in a kernel: stdout" "start
finally ran" "$tmp/out"
tail -n 1 "$tmp/err" >"$tmp/last"
expect "SIGINT in a kernel: last stderr line" KeyboardInterrupt "$tmp/last"

cp "$tmp/kernel.py" "$tmp/caught.py"
cat >>"$tmp/caught.py" <<'PROG'
try:
    open(sys.argv[1], "w").close()
    spin[2000, 64](out, 10**7)
    print("kernel finished")
except KeyboardInterrupt:
    print("interrupted")
done = int((out.copy_to_host() != 0).sum())
print("stopped early:", done < 64 * 2000)
small = cuda.to_device(np.zeros(64, dtype=np.int64))
spin[1, 64](small, 10)
print([int(v) for v in small.copy_to_host()[:3]])
PROG
interrupt "$tmp/caught.py"
expect "SIGINT caught in a kernel: exit status" 0 "$tmp/rc"
expect "SIGINT caught in a kernel: stdout" "start
interrupted
stopped early: True
[25, 25, 25]" "$tmp/out"

exit $fail
