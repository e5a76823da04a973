#!/usr/bin/env bash
# Every dtype spelling (contracts/dtype.c, the one table) against its
# oracle: np.dtype(name), np.<name>, numba.<name> and the name inside a
# cuda.jit signature, scalar and array ('void(x)', 'void(x[:])'), for each
# name of the table and a few that numpy 2 and numba refuse ('float_',
# 'int0', ...). The oracle is numpy 2.4 and numba's own signature parser
# (numba.core.sigutils); gpy compiles the signatures eagerly on the CPU device.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GPY=${GPY:-$ROOT/build/gpy}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export GPY_DEVICE=cpu
python3 -c 'import numpy, numba.core.sigutils' 2>/dev/null || { echo "SKIP: numpy and numba are the oracle"; exit 0; }

# names: the table's (read from its source, so a new spelling is tested too)
# plus refused ones
names=$(grep -o '{"[^"]*", [A-Z0-9NO]*, [A-Z0-9NO]*, [a-z]*}' "$ROOT/contracts/dtype.c" | cut -d'"' -f2)
[ "$(echo "$names" | wc -l)" -ge 60 ] || { echo "FAIL: could not read the alias table ($names)"; exit 1; }
{
  echo "NAMES = ["
  for n in $names float_ int0 uint0 bool8 Float32 longfloat double_; do echo "    '$n',"; done
  echo "]"
} > "$tmp/names.py"

cat > "$tmp/body.py" <<'PY'
import numpy as np
import numba

# np.dtype's refusal is compared by exception type; a missing attribute or
# a refused signature as '-' (numba's parser fails with whatever eval() of
# the string raises, gpy with a TypingError)
def show(f, exact=False):
    try:
        return f()
    except Exception as e:
        return type(e).__name__ if exact else '-'

for n in NAMES:
    print(n.ljust(10), 'np.dtype:', show(lambda: np.dtype(n).name, True).ljust(9),
          'np.attr:', show(lambda: np.dtype(getattr(np, n)).name).ljust(9),
          'numba.attr:', show(lambda: np.dtype(numba_attr(n)).name).ljust(9),
          'sig:', show(lambda: sig_arg(n, False)).ljust(9),
          'sig[:]:', show(lambda: sig_arg(n, True)))
PY

cat "$tmp/names.py" - "$tmp/body.py" > "$tmp/oracle.py" <<'PY'
from numba.core import sigutils, types

def numba_attr(n):
    t = getattr(types, n)
    return t.name if isinstance(t, types.Number) or isinstance(t, types.Boolean) else 1 // 0

def sig_arg(n, array):
    args, _ = sigutils.normalize_signature('void(%s%s)' % (n, '[:]' if array else ''))
    t = args[0]
    if array:
        return '%s[%dd]' % (t.dtype, t.ndim)
    return str(t)
PY

cat "$tmp/names.py" - "$tmp/body.py" > "$tmp/prog.gpy" <<'PY'
from numba import cuda

def numba_attr(n):
    return getattr(numba, n)

def k(x):
    pass

def sig_arg(n, array):
    # '(array(float32, 1d, A),)' or '(float32,)'
    key = cuda.jit('void(%s%s)' % (n, '[:]' if array else ''))(k).signatures[0]
    if array:
        inner = key[len('(array('):key.index(')')]
        dt, nd, _ = inner.split(', ')
        return '%s[%s]' % (dt, nd)
    return key.strip('(,)')
PY

python3 "$tmp/oracle.py" > "$tmp/expected" 2>"$tmp/oracle.err" || { echo "FAIL: oracle"; cat "$tmp/oracle.err"; exit 1; }
"$GPY" "$tmp/prog.gpy" > "$tmp/actual" 2>&1 || { echo "FAIL: gpy exited $?"; tail -20 "$tmp/actual"; exit 1; }
if ! diff "$tmp/expected" "$tmp/actual" > "$tmp/diff"; then
  echo "FAIL: dtype spellings differ from numpy/numba (< oracle, > gpy):"; cat "$tmp/diff"; exit 1
fi
exit 0
