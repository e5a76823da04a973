#!/usr/bin/env bash
# C stack exhaustion: recursion through C (reprs, comparisons, hashes, sort
# keys, eval, iterator chains, the parser and compiler) must end in
# RecursionError -- never SIGSEGV -- with a small stack (ulimit -s 256) as
# with the default one. Output is compared with CPython's at its default stack.
set -u
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/repr.gpy" <<'PY'
class A:
    def __repr__(self):
        return repr(A())
class S:
    def __str__(self):
        return str(S())
    def __format__(self, spec):
        return format(S(), spec)
for name, fn in [("repr", lambda: repr(A())), ("str", lambda: str(S())), ("format", lambda: format(S(), "x")),
                 ("print", lambda: print(S())), ("f-string", lambda: f"{A()}")]:
    try:
        fn()
    except RecursionError:
        print(name, "RecursionError")
PY

cat > "$tmp/nested.gpy" <<'PY'
x = []
y = []
d = {}
for i in range(100000):
    x = [x]
    y = [y]
    d = {1: d}
for name, fn in [("repr", lambda: repr(x)), ("str", lambda: str(x)), ("format", lambda: format(x)),
                 ("f-string", lambda: f"{x!r}"), ("percent", lambda: "%s" % (x,)), ("dict repr", lambda: repr(d)),
                 ("eq", lambda: x == y), ("lt", lambda: x < y), ("in", lambda: x in [y]),
                 ("sorted", lambda: sorted([x, y])), ("max", lambda: max(x, y)), ("index", lambda: [x].index(y))]:
    try:
        fn()
        print(name, "no error")
    except RecursionError:
        print(name, "RecursionError")
PY

cat > "$tmp/calls.gpy" <<'PY'
import sys
def key(v):
    return sorted([1, 2], key=key)
def ev():
    return eval("ev()")
def plain(n):
    return plain(n + 1)
class E:
    def __eq__(self, o):
        return E() == E()
    def __hash__(self):
        return hash(E())
class L:
    def __lt__(self, o):
        return sorted([L(), L()])
class G:
    def __getattr__(self, n):
        return getattr(self, n)
class I:
    def __init__(self):
        I()
def gen():
    yield from gen()
for name, fn in [("sort key", lambda: sorted([3, 1], key=key)), ("eval", ev), ("plain", lambda: plain(0)),
                 ("__eq__", lambda: E() == E()), ("__hash__", lambda: hash(E())), ("dict key", lambda: {E(): 1}),
                 ("__lt__", lambda: sorted([L(), L()])), ("__getattr__", lambda: G().x), ("__init__", I),
                 ("yield from", lambda: list(gen()))]:
    try:
        fn()
    except RecursionError:
        print(name, "RecursionError")
sys.setrecursionlimit(100000)
for name, fn in [("plain, limit 100000", lambda: plain(0)), ("repr, limit 100000", lambda: repr(eval("[" * 40 + "]" * 40)))]:
    try:
        fn()
        print(name, "no error")
    except RecursionError:
        print(name, "RecursionError")
PY

for prog in repr nested calls; do
  python3 "$tmp/$prog.gpy" > "$tmp/$prog.expected" 2>&1
  for stack in 256 default; do
    if [ "$stack" = default ]; then
      "$GPY" "$tmp/$prog.gpy" > "$tmp/out" 2>&1; rc=$?
    else
      (ulimit -s "$stack" && exec "$GPY" "$tmp/$prog.gpy") > "$tmp/out" 2>&1; rc=$?
    fi
    [ "$rc" = 0 ] || { echo "FAIL $prog (stack $stack): exit status $rc"; tail -5 "$tmp/out"; fail=1; continue; }
    cmp -s "$tmp/$prog.expected" "$tmp/out" || { echo "FAIL $prog (stack $stack):"; diff "$tmp/$prog.expected" "$tmp/out" | head -10; fail=1; }
  done
done

# Chains CPython itself cannot survive (it crashes): gpy must raise.
cat > "$tmp/chains.gpy" <<'PY'
it = iter([1])
for i in range(100000):
    it = map(lambda v: v, it)
try:
    list(it)
except RecursionError as e:
    print("map chain", e)
t = ()
for i in range(100000):
    t = (t,)
try:
    hash(t)
except RecursionError as e:
    print("tuple hash", e)
PY
printf '%s\n' "map chain maximum recursion depth exceeded" "tuple hash maximum recursion depth exceeded while hashing" > "$tmp/chains.expected"
for stack in 256 default; do
  if [ "$stack" = default ]; then "$GPY" "$tmp/chains.gpy" > "$tmp/out" 2>&1; rc=$?
  else (ulimit -s "$stack" && exec "$GPY" "$tmp/chains.gpy") > "$tmp/out" 2>&1; rc=$?; fi
  [ "$rc" = 0 ] && cmp -s "$tmp/chains.expected" "$tmp/out" || { echo "FAIL chains (stack $stack, status $rc):"; head -5 "$tmp/out"; fail=1; }
done

# Deep syntax trees: with a small stack the parser and compiler stop with
# CPython's "RecursionError: maximum recursion depth exceeded during
# compilation" (or gpy's documented nesting-limit SyntaxError), never a crash.
cat > "$tmp/deep.gpy" <<'PY'
for src in ["-" * 100000 + "1", "(" * 5000 + "1" + ")" * 5000, "[" * 180 + "]" * 180, "not " * 100000 + "1",
            "-" * 2500 + "1", "1" + "+1" * 100000, "x" + ".a" * 100000, "f" + "()" * 100000, "lambda: " * 10000 + "1"]:
    try:
        eval(src)
        print("ok")
    except RecursionError as e:
        print("RecursionError", e)
    except SyntaxError as e:
        print("SyntaxError")
    except NameError:
        print("ok")
PY
(ulimit -s 256 && exec "$GPY" "$tmp/deep.gpy") > "$tmp/out" 2>&1; rc=$?
[ "$rc" = 0 ] || { echo "FAIL deep trees (stack 256): exit status $rc"; tail -5 "$tmp/out"; fail=1; }
[ "$(wc -l < "$tmp/out")" = 9 ] || { echo "FAIL deep trees: $(cat "$tmp/out")"; fail=1; }
grep -q "^RecursionError maximum recursion depth exceeded during compilation$" "$tmp/out" ||
  { echo "FAIL deep trees: no RecursionError during compilation at stack 256"; fail=1; }
grep -v -x -e ok -e SyntaxError -e "RecursionError maximum recursion depth exceeded during compilation" "$tmp/out" &&
  { echo "FAIL deep trees: unexpected line"; fail=1; }
exit $fail
