#!/usr/bin/env bash
# SIGINT during a wait on a GPU (issue 13, "Interrupt and budgets"), on the
# test-only driver tests/gpu/fake_libcuda.c with FAKE_CUDA_BUSY=1: stream and
# event queries answer "not ready" forever, so cuda.synchronize(),
# stream.synchronize() and event.synchronize() can only end by an interrupt.
# gpy polls while it waits (a blocking driver call cannot be cut short): the
# wait raises KeyboardInterrupt and the device stays usable. Expected output
# is hand-written (the other CLI tests run the same waits on finished work).
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
s = cuda.stream()
e = cuda.event()
e.record(s)
for kind in ["context", "stream", "event"]:
    try:
        open(sys.argv[1] + "." + kind, "w").close()
        if kind == "context":
            cuda.synchronize()
        elif kind == "stream":
            s.synchronize()
        else:
            e.synchronize()
        print(kind, "wait ended")
    except KeyboardInterrupt:
        print(kind, "wait interrupted")
d = cuda.to_device(np.arange(3))
print("device usable:", [int(v) for v in d.copy_to_host()])
PROG

# one SIGINT per wait, each sent once the program is about to wait
# (set -m: a background job of a script would start with SIGINT ignored)
set -m
env GPY_LIBCUDA="$lib" GPY_DEVICE=cuda FAKE_CUDA_BUSY=1 FAKE_CUDA_LOG="$tmp/log" \
  "$GPY" "$tmp/wait.py" "$tmp/ready" >"$tmp/out" 2>"$tmp/err" & pid=$!
for kind in context stream event; do
  for i in $(seq 150); do [ -e "$tmp/ready.$kind" ] && break; sleep 0.1; done
  sleep 0.2
  kill -INT $pid 2>/dev/null
done
wait $pid 2>/dev/null; echo $? >>"$tmp/out"
set +m
if grep -q '^violation' "$tmp/log" 2>/dev/null; then echo "FAIL driver contract violations:"; grep '^violation' "$tmp/log" | head; fail=1; fi
want="context wait interrupted
stream wait interrupted
event wait interrupted
device usable: [0, 1, 2]
0"
[ "$(cat "$tmp/out")" = "$want" ] || { echo "FAIL waits interrupted: got [$(cat "$tmp/out")]"; tail -n 5 "$tmp/err"; fail=1; }
exit $fail
