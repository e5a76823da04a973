#!/usr/bin/env bash
# Register limits (documented difference from CPython, which has none):
# a function with more locals than gpy's register window fails to compile
# with a SyntaxError at its def -- before any line runs, never a wrong value.
set -u
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# tests/hostile/many_locals.gpy: 2000 locals, then print(f())
"$GPY" "$ROOT/tests/hostile/many_locals.gpy" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || { echo "FAIL many_locals: exit status $rc, expected 1"; fail=1; }
[ -s "$tmp/out" ] && { echo "FAIL many_locals: printed [$(head -c 200 "$tmp/out")] (nothing may run)"; fail=1; }
tail -1 "$tmp/err" | grep -qx "SyntaxError: too many local variables in function (limit 200)" ||
  { echo "FAIL many_locals message: $(tail -3 "$tmp/err")"; fail=1; }
grep -q 'many_locals.gpy", line 1$' "$tmp/err" || { echo "FAIL many_locals: error not at the def line"; fail=1; }

# 300 locals, 300 parameters, 300 closure cells: the same clean error
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
n = 300
open(f"{d}/locals.gpy", "w").write("print('ran')\ndef f():\n" + "".join(f"    v{i} = {i}\n" for i in range(n)) + "    return v0\nprint(f())\n")
open(f"{d}/params.gpy", "w").write("print('ran')\ndef f(" + ", ".join(f"p{i}" for i in range(n)) + "):\n    return p0\n")
open(f"{d}/cells.gpy", "w").write("print('ran')\ndef f():\n" + "".join(f"    c{i} = {i}\n" for i in range(n)) + "    def g():\n        return " + " + ".join(f"c{i}" for i in range(n)) + "\n    return g\n")
PY
for p in locals params cells; do
  "$GPY" "$tmp/$p.gpy" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = 1 ] || { echo "FAIL $p: exit status $rc"; fail=1; }
  [ -s "$tmp/out" ] && { echo "FAIL $p: ran before the SyntaxError"; fail=1; }
  tail -1 "$tmp/err" | grep -q "^SyntaxError: too many local variables in function" || { echo "FAIL $p: $(tail -1 "$tmp/err")"; fail=1; }
done

# exactly 200 locals still work, with CPython's result
python3 -c "print('def f():\n' + ''.join(f'    v{i} = {i}\n' for i in range(200)) + '    return v199 - v0\nprint(f())')" > "$tmp/ok.gpy"
[ "$("$GPY" "$tmp/ok.gpy" 2>&1)" = "$(python3 "$tmp/ok.gpy")" ] || { echo "FAIL 200 locals"; fail=1; }
exit $fail
