#!/usr/bin/env bash
# Signals and I/O errors (issue 12, items 6 and 7): SIGINT, closed pipes,
# a full device, a file-size limit and an address-space limit. CPython is
# the oracle: every scenario runs under gpy and under python3, and the exit
# status, stdout and the last line of stderr must be the same. The kernel
# cache writer (gpy only) is checked against hand-written expectations.
set -u
# CPython buffers stdout like gpy only when this is unset
unset PYTHONUNBUFFERED
PY=python3
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# compare NAME CMD: runs the bash command CMD with $X set to gpy, then to
# python3 ($T is the scratch folder); CMD's own exit status is compared.
compare() {
  local name=$1 cmd=$2 who
  for who in gpy py; do
    local x=$GPY; [ $who = py ] && x=$PY
    X="$x" T="$tmp" bash -c "$cmd" >"$tmp/$who.out" 2>"$tmp/$who.err"
    echo $? >"$tmp/$who.rc"
    tail -n 1 "$tmp/$who.err" >"$tmp/$who.last"
  done
  local ok=1
  cmp -s "$tmp/gpy.rc" "$tmp/py.rc" || { echo "FAIL $name: exit status $(cat "$tmp/gpy.rc"), CPython $(cat "$tmp/py.rc")"; ok=0; }
  cmp -s "$tmp/gpy.out" "$tmp/py.out" || { echo "FAIL $name: stdout differs"; diff "$tmp/py.out" "$tmp/gpy.out" | head -5; ok=0; }
  cmp -s "$tmp/gpy.last" "$tmp/py.last" || { echo "FAIL $name: last stderr line [$(cat "$tmp/gpy.last")], CPython [$(cat "$tmp/py.last")]"; ok=0; }
  [ $ok = 1 ] || { echo "  gpy stderr:"; tail -n 5 "$tmp/gpy.err"; fail=1; }
}

# expect NAME WANTED FILE: FILE must hold exactly WANTED (the oracle's result was checked by hand)
expect() {
  [ "$(cat "$3")" = "$2" ] || { echo "FAIL $1: expected [$2] got [$(cat "$3")]"; fail=1; }
}

# ---------------------------------------------------------------- SIGINT
# The program creates $T/ready once inside its try block, then gets SIGINT.
# set -m: a background job of a script would start with SIGINT ignored;
# bash's own "Interrupt" job report goes to /dev/null (fd 3 is the real
# stderr). The programs' loops are finite: a gpy that ignored the signal
# ends normally, which does not match CPython's status.
interrupt='set -m; exec 3>&2 2>/dev/null; rm -f $T/ready
"$X" $T/prog.py $T/ready 2>$T/prog.err & pid=$!
for i in $(seq 1200); do [ -e $T/ready ] && break; sleep 0.1; done
kill -INT $pid; wait $pid; rc=$?
cat $T/prog.err >&3; exit $rc'

cat >"$tmp/prog.py" <<'EOF'
import sys
print("start")
try:
    open(sys.argv[1], "w").close()
    for i in range(10**10):
        pass
finally:
    print("finally ran")
EOF
compare "SIGINT in a loop: finally, flushed stdout, status 130" "$interrupt"
expect "SIGINT status (CPython)" 130 "$tmp/py.rc"
expect "SIGINT last line (CPython)" KeyboardInterrupt "$tmp/py.last"

cat >"$tmp/prog.py" <<'EOF'
import sys, time
def work(n):
    s = 0
    for i in range(n):
        s += i
    return s
try:
    open(sys.argv[1], "w").close()
    for i in range(10**8):
        work(100)
except KeyboardInterrupt:
    print("caught KeyboardInterrupt")
print("still running")
EOF
compare "SIGINT caught in a call" "$interrupt"
expect "caught SIGINT status (CPython)" 0 "$tmp/py.rc"

cat >"$tmp/prog.py" <<'EOF'
import sys, time
print("before sleep")
try:
    open(sys.argv[1], "w").close()
    time.sleep(200)
finally:
    print("after sleep")
EOF
compare "SIGINT in time.sleep" "$interrupt"

# ---------------------------------------------------------------- pipes
compare "output into head -1" '"$X" -c "for i in range(10**6): print(i)" | head -1; exit ${PIPESTATUS[0]}'
expect "head -1 last line (CPython)" "BrokenPipeError: [Errno 32] Broken pipe" "$tmp/py.last"
# a pipe whose reader is gone before anything is written (fd 6: the write
# end of a FIFO whose only reader, fd 5, was closed): the error comes with
# the flush at exit
mkfifo "$tmp/fifo"
closed_pipe='exec 5<>$T/fifo 6>$T/fifo 5<&-; "$X"'
compare "flush at exit into a closed pipe" "$closed_pipe"' -c "print(\"x\")" >&6'
expect "closed pipe status (CPython)" 120 "$tmp/py.rc"
compare "BrokenPipeError caught" "$closed_pipe"' -c "
import sys
try:
    for i in range(10**5): print(i)
except BrokenPipeError as e:
    sys.stderr.write(\"caught %d %s\\n\" % (e.errno, isinstance(e, OSError)))
" >&6'
expect "BrokenPipeError caught (CPython)" "caught 32 True" "$tmp/py.last"

# ---------------------------------------------------------------- /dev/full
if [ -w /dev/full ]; then
  compare "/dev/full, flushed at exit" '"$X" -c "print(1)" >/dev/full'
  expect "/dev/full at exit status (CPython)" 120 "$tmp/py.rc"
  compare "/dev/full, sys.exit(3)" '"$X" -c "import sys; print(1); sys.exit(3)" >/dev/full'
  compare "/dev/full, long output" '"$X" -c "for i in range(10**5): print(i)" >/dev/full'
  expect "/dev/full long status (CPython)" 1 "$tmp/py.rc"
  compare "/dev/full, open()" '"$X" -c "
f = open(\"/dev/full\", \"w\")
try:
    f.write(\"x\" * 100000)
except OSError as e:
    print(\"write:\", e.errno, e.strerror)
f.write(\"abc\")
try:
    f.close()
except OSError as e:
    print(\"close:\", e.errno, f.closed)
"'
else
  echo "FAIL /dev/full is missing"; fail=1
fi

# ---------------------------------------------------------------- ulimit -f
cat >"$tmp/fsize.py" <<'EOF'
import sys
try:
    with open(sys.argv[1], "w") as f:
        for i in range(10000):
            f.write("0123456789" * 10)
except OSError as e:
    print("caught", type(e).__name__, e.errno, e)
f = open(sys.argv[1], "w")
f.write("x" * 100000)
f.close()
EOF
compare "ulimit -f: write past the limit" 'ulimit -f 8; "$X" $T/fsize.py $T/big.txt'
expect "ulimit -f last line (CPython)" "OSError: [Errno 27] File too large" "$tmp/py.last"

# the kernel cache: a failed write leaves nothing behind and raises nothing
cat >"$tmp/cached.py" <<'EOF'
from numba import cuda
import numpy as np

@cuda.jit(cache=True)
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]

a = np.arange(8, dtype=np.float64)
out = np.zeros(8)
add[1, 8](a, a, out)
print(out)
EOF
want='[ 0.  2.  4.  6.  8. 10. 12. 14.]'
(ulimit -f 2; GPY_CACHE_DIR="$tmp/kc" GPY_CACHE_STATS=1 timeout 300 "$GPY" "$tmp/cached.py" >"$tmp/kc.out" 2>"$tmp/kc.err")
rc=$?
[ $rc = 0 ] || { echo "FAIL cache under ulimit -f: exit status $rc"; cat "$tmp/kc.err"; fail=1; }
expect "cache under ulimit -f: output" "$want" "$tmp/kc.out"
expect "cache under ulimit -f: stats" "gpy cache: 0 hits, 1 misses, 0 writes" "$tmp/kc.err"
left=$(find "$tmp/kc" -type f 2>/dev/null | wc -l)
[ "$left" = 0 ] || { echo "FAIL cache under ulimit -f left files: $(find "$tmp/kc" -type f)"; fail=1; }
# without the limit the same program does write its entry (the check above is not vacuous)
GPY_CACHE_DIR="$tmp/kc" GPY_CACHE_STATS=1 timeout 300 "$GPY" "$tmp/cached.py" >"$tmp/kc.out" 2>"$tmp/kc.err" ||
  { echo "FAIL cache without a limit: exit status $?"; fail=1; }
expect "cache without a limit: stats" "gpy cache: 0 hits, 1 misses, 1 writes" "$tmp/kc.err"
left=$(find "$tmp/kc" -type f | wc -l)
[ "$left" = 1 ] || { echo "FAIL cache without a limit: $left files"; fail=1; }

# ---------------------------------------------------------------- ulimit -v
cat >"$tmp/oom.py" <<'EOF'
import sys
f = open("/dev/zero")
for what, call in [("read()", lambda: f.read()), ("readline()", lambda: f.readline()),
                   ("read(n)", lambda: f.read(10**12)), ("stdin.readline()", lambda: sys.stdin.readline()),
                   ("stdin.read()", lambda: sys.stdin.read())]:
    try:
        s = call()
        print(what, "returned", len(s))
    except MemoryError:
        print(what, "MemoryError")
s = open("/dev/zero").read()
EOF
# (before the fix, read() spun forever: timeout turns that into a failure)
compare "ulimit -v: reads raise MemoryError" 'ulimit -v 100000; head -c 200000000 /dev/zero | timeout 300 "$X" $T/oom.py'
expect "ulimit -v last line (CPython)" MemoryError "$tmp/py.last"

exit $fail
