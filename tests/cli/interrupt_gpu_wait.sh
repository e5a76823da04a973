#!/usr/bin/env bash
# SIGINT during a wait on a GPU (issue 13, "Interrupt and budgets"), on the
# test-only driver tests/gpu/fake_libcuda.c with FAKE_CUDA_BUSY=1: stream and
# event queries answer "not ready" forever, so cuda.synchronize(),
# stream.synchronize() and event.synchronize() can only end by an interrupt.
# gpy polls while it waits (a blocking driver call cannot be cut short): the
# wait raises KeyboardInterrupt and the device stays usable. Expected output
# is hand-written; without FAKE_CUDA_BUSY the same waits end at once.
set -u
unset GPY_DEVICE GPY_LIBCUDA FAKE_CUDA_DEVICES FAKE_CUDA_MEMORY FAKE_CUDA_FAIL_LAUNCH FAKE_CUDA_STRICT FAKE_CUDA_BUSY
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GPY=${GPY:-$ROOT/build/gpy}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lib=$(bash "$ROOT/tests/gpu/build-fake.sh" "$tmp") || { echo "FAIL building tests/gpu/fake_libcuda.c"; exit 1; }
fail=0

cat >"$tmp/wait.py" <<'PROG'
import sys
from numba import cuda
import numpy as np
kind = sys.argv[2]
s = cuda.stream()
e = cuda.event()
e.record(s)
try:
    open(sys.argv[1], "w").close()
    if kind == "context":
        cuda.synchronize()
    elif kind == "stream":
        s.synchronize()
    else:
        e.synchronize()
    print("wait ended")
except KeyboardInterrupt:
    print("interrupted")
d = cuda.to_device(np.arange(3))
print("device usable:", [int(v) for v in d.copy_to_host()])
PROG

# wait KIND BUSY: runs the program, sends SIGINT once it is about to wait
# (set -m: a background job of a script would start with SIGINT ignored)
wait_for() {
  set -m
  rm -f "$tmp/ready"
  env GPY_LIBCUDA="$lib" GPY_DEVICE=cuda FAKE_CUDA_BUSY=$2 FAKE_CUDA_LOG="$tmp/log" \
    "$GPY" "$tmp/wait.py" "$tmp/ready" "$1" >"$tmp/out" 2>"$tmp/err" & local pid=$!
  for i in $(seq 150); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
  sleep 0.2
  kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null; echo $? >>"$tmp/out"
  set +m
  if grep -q '^violation' "$tmp/log" 2>/dev/null; then echo "FAIL $1: driver contract violations:"; grep '^violation' "$tmp/log" | head; fail=1; fi
}

for kind in context stream event; do
  wait_for $kind 1
  want="interrupted
device usable: [0, 1, 2]
0"
  [ "$(cat "$tmp/out")" = "$want" ] || { echo "FAIL $kind.synchronize() interrupted: got [$(cat "$tmp/out")]"; tail -n 5 "$tmp/err"; fail=1; }
done
# the same wait on work that is done ends by itself
GPY_LIBCUDA="$lib" GPY_DEVICE=cuda "$GPY" "$tmp/wait.py" "$tmp/ready" stream >"$tmp/out" 2>"$tmp/err"
[ "$(cat "$tmp/out")" = "wait ended
device usable: [0, 1, 2]" ] || { echo "FAIL stream.synchronize() on finished work: got [$(cat "$tmp/out")]"; fail=1; }
exit $fail
