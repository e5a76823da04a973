#!/usr/bin/env bash
# SIGINT while a program waits reading stdin from a pipe that stays open
# (issue 14): the read ends with KeyboardInterrupt, finally blocks run and
# the process dies by SIGINT (status 130), or `except KeyboardInterrupt`
# catches it. CPython is the oracle: exit status, stdout and the last line
# of stderr must be the same. (signals_io.sh covers loops and time.sleep.)
set -u
unset PYTHONUNBUFFERED
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/fifo"

# run X: prog.py reads from the FIFO (held open for writing on fd 7, so no
# end of file comes), creates $tmp/ready before the read, then gets SIGINT.
# set -m: a background job of a script would start with SIGINT ignored.
run() {
  local x=$1 who=$2
  ( set -m; exec 7<>"$tmp/fifo"; rm -f "$tmp/ready"
    "$x" "$tmp/prog.py" "$tmp/ready" <"$tmp/fifo" >"$tmp/$who.out" 2>"$tmp/$who.err" & pid=$!
    for i in $(seq 1200); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
    sleep 0.2; kill -INT $pid; wait $pid; echo $? >"$tmp/$who.rc" ) 2>/dev/null
  tail -n 1 "$tmp/$who.err" >"$tmp/$who.last"
}

compare() {
  local name=$1 ok=1
  run "$GPY" gpy
  run python3 py
  cmp -s "$tmp/gpy.rc" "$tmp/py.rc" || { echo "FAIL $name: exit status $(cat "$tmp/gpy.rc"), CPython $(cat "$tmp/py.rc")"; ok=0; }
  cmp -s "$tmp/gpy.out" "$tmp/py.out" || { echo "FAIL $name: stdout differs"; diff "$tmp/py.out" "$tmp/gpy.out" | head -5; ok=0; }
  cmp -s "$tmp/gpy.last" "$tmp/py.last" || { echo "FAIL $name: last stderr line [$(cat "$tmp/gpy.last")], CPython [$(cat "$tmp/py.last")]"; ok=0; }
  [ $ok = 1 ] || { tail -n 5 "$tmp/gpy.err"; fail=1; }
}

cat >"$tmp/prog.py" <<'PY'
import sys
print("start")
try:
    open(sys.argv[1], "w").close()
    line = sys.stdin.readline()
    print("read", repr(line))
finally:
    print("finally ran")
PY
compare "SIGINT in readline from a pipe"
[ "$(cat "$tmp/py.rc")" = 130 ] || { echo "FAIL CPython's status was $(cat "$tmp/py.rc"), not 130"; fail=1; }

cat >"$tmp/prog.py" <<'PY'
import sys
try:
    open(sys.argv[1], "w").close()
    data = sys.stdin.read()
except KeyboardInterrupt:
    print("caught KeyboardInterrupt")
print("still running")
PY
compare "SIGINT in read() caught"

cat >"$tmp/prog.py" <<'PY'
import sys
open(sys.argv[1], "w").close()
for line in sys.stdin:
    print(line)
PY
compare "SIGINT iterating stdin"
exit $fail
