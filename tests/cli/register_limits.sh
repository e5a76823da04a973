#!/usr/bin/env bash
# Register limits. Locals past the 128-register window live in wide
# registers, so tests/hostile/many_locals.gpy (2000 locals) runs as in
# CPython. What remains limited (documented differences from CPython, which
# has no such limits) fails to compile with a SyntaxError at the def --
# before any line runs, never a wrong value: more than 256 parameters, and
# more than 128 parameters plus variables captured by inner functions.
set -u
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$GPY" "$ROOT/tests/hostile/many_locals.gpy" >"$tmp/out" 2>"$tmp/err"; rc=$?
python3 "$ROOT/tests/hostile/many_locals.gpy" >"$tmp/pyout" 2>/dev/null; pyrc=$?
[ "$rc" = "$pyrc" ] || { echo "FAIL many_locals: exit status $rc, CPython $pyrc"; fail=1; }
cmp -s "$tmp/out" "$tmp/pyout" || { echo "FAIL many_locals: printed [$(head -c 200 "$tmp/out")], CPython [$(cat "$tmp/pyout")]"; fail=1; }
[ "$(tail -1 "$tmp/err")" = "ValueError: end" ] || { echo "FAIL many_locals: $(tail -1 "$tmp/err")"; fail=1; }

python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
n = 300
open(f"{d}/params.gpy", "w").write("print('ran')\ndef f(" + ", ".join(f"p{i}" for i in range(n)) + "):\n    return p0\n")
open(f"{d}/cells.gpy", "w").write("print('ran')\ndef f():\n" + "".join(f"    c{i} = {i}\n" for i in range(n)) + "    def g():\n        return " + " + ".join(f"c{i}" for i in range(n)) + "\n    return g\n")
PY
check_error() { # program expected-message
  "$GPY" "$tmp/$1.gpy" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" = 1 ] || { echo "FAIL $1: exit status $rc"; fail=1; }
  [ -s "$tmp/out" ] && { echo "FAIL $1: ran before the SyntaxError"; fail=1; }
  [ "$(tail -1 "$tmp/err")" = "$2" ] || { echo "FAIL $1: $(tail -1 "$tmp/err")"; fail=1; }
  grep -q "$1.gpy\", line 2$" "$tmp/err" || { echo "FAIL $1: error not at the def line"; fail=1; }
}
check_error params "SyntaxError: too many parameters in function (limit 256)"
check_error cells "SyntaxError: too many parameters and variables used by inner functions (limit 128): 'c128'"
exit $fail
