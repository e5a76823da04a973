#!/usr/bin/env bash
# The gpy command: options, exit statuses, sys.argv, stdin programs, REPL.
set -u
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
out_of() { # name expected command...: the command prints expected and exits 0
  local name=$1 want=$2 got status; shift 2
  got=$("$@"); status=$?
  check "$name" "$want" "$got"
  check "$name: exit status" 0 $status
}

out_of "-c" "3" "$GPY" -c 'print(1 + 2)'
out_of "-c argv" "['-c', 'a', 'b']" "$GPY" -c 'import sys; print(sys.argv)' a b
out_of "stdin" "hi" "$GPY" - <<<'print("hi")'
"$GPY" --version | grep -q '^gpy [0-9]' || { echo "FAIL --version"; fail=1; }
"$GPY" --help | grep -qi 'usage' || { echo "FAIL --help"; fail=1; }
"$GPY" --no-such-option >/dev/null 2>&1; check "bad option status" 2 $?
"$GPY" "$tmp/missing.gpy" >/dev/null 2>"$tmp/err"; check "missing file status" 2 $?
grep -q "can't open file" "$tmp/err" || { echo "FAIL missing file message"; fail=1; }
"$GPY" -c 'raise ValueError("x")' >/dev/null 2>&1; check "uncaught status" 1 $?
"$GPY" -c 'import sys; sys.exit(7)'; check "sys.exit status" 7 $?
"$GPY" -c 'pass'; check "ok status" 0 $?

printf '#!/usr/bin/env gpy\nimport sys\nprint(sys.argv[1:])\n' > "$tmp/script.gpy"
out_of "shebang + argv" "['x', '--y']" "$GPY" "$tmp/script.gpy" x --y

printf 'def helper(x):\n    return x * 2\nVALUE = 21\n' > "$tmp/mymod.gpy"
printf 'import mymod\nfrom mymod import helper as h\nprint(mymod.helper(mymod.VALUE), h(1))\n' > "$tmp/main.gpy"
out_of "import next to file" "42 2" "$GPY" "$tmp/main.gpy"
mkdir -p "$tmp/lib"; printf 'NAME = "from path"\n' > "$tmp/lib/pathmod.gpy"
check "GPY_PATH" "from path" "$(cd /tmp && GPY_PATH="$tmp/lib" "$GPY" -c 'import pathmod; print(pathmod.NAME)')"
printf 'print("once")\n' > "$tmp/once.gpy"
check "module runs once" "once" "$("$GPY" -c 'import sys; sys.path.insert(0, "'"$tmp"'"); import once; import once')"

# the REPL: a piped session evaluates each entry, prints expression values,
# survives errors and continues.
out=$(printf 'x = 6\nx * 7\ndef f(a):\n    return a + 1\n\nf(x)\n1/0\nprint("still alive")\nundefined\n"done"\n' | "$GPY" 2>"$tmp/repl_err")
check "repl" "$(printf "42\n7\nstill alive\n'done'")" "$out"
grep -q ZeroDivisionError "$tmp/repl_err" || { echo "FAIL repl error shown"; fail=1; }
grep -q NameError "$tmp/repl_err" || { echo "FAIL repl NameError shown"; fail=1; }
# a syntax error inside an open bracket is reported at once, and the
# session goes on; an unfinished entry at end of input still reports
out=$(printf 'def f(:\nprint("next")\nx = (1,\n' | "$GPY" 2>"$tmp/repl_err2")
check "repl early syntax error" "next" "$out"
grep -q "invalid syntax" "$tmp/repl_err2" || { echo "FAIL repl early syntax error shown"; fail=1; }
grep -q "never closed" "$tmp/repl_err2" || { echo "FAIL repl unfinished entry at EOF"; fail=1; }

# decorated definitions at the prompt: a kernel typed at the REPL compiles
# and runs (expected values: 1 + 2 for each element, by hand)
out=$(printf 'from numba import cuda\nimport numpy as np\n@cuda.jit\ndef k(a):\n    a[cuda.grid(1)] += 2\n\na = np.ones(4)\nk[1, 4](a)\nprint(a)\n' | "$GPY" 2>&1)
check "repl kernel" "[3. 3. 3. 3.]" "$out"
exit $fail
