#!/usr/bin/env bash
# Instructions per embedding operation, gpy beside Lua 5.4, counted by
# valgrind (callgrind): each operation runs N and 2N times and the
# difference is divided by N, so start-up and teardown cancel out. Counts
# do not move with the machine's load, unlike run.sh's wall-clock medians.
#   bash bench/embed/instructions.sh [PREFIX]   (default: installs build/ into a temp prefix)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
command -v valgrind >/dev/null || apt-get install -y valgrind >/dev/null
pkg-config --exists lua5.4 2>/dev/null || apt-get install -y liblua5.4-dev pkg-config >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
PREFIX=${1:-}
if [ -z "$PREFIX" ]; then
  PREFIX="$tmp/prefix"
  cmake --install "$ROOT/build" --prefix "$PREFIX" >/dev/null
fi
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
$CC -std=c17 -O2 -Wall -Wextra -Werror -o "$tmp/embed_ops" "$ROOT/bench/embed/embed_ops.c" \
  $(pkg-config --cflags --libs gpy lua5.4)

# instructions of one run of `embed_ops OP N`
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$tmp/embed_ops" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
per_op() { # OP N
  local a b
  a=$(count "$1" "$2"); b=$(count "$1" $(($2 * 2)))
  echo $(((b - a) / $2))
}
call=$(per_op gpy_call 20000); lcall=$(per_op lua_call 20000); lpcall=$(per_op lua_pcall 20000)
vm=$(per_op gpy_vm 20); lvm=$(per_op lua_vm 20)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-44s %10s %10s %8s\n' "instructions per operation" gpy "Lua 5.4" gpy/Lua
printf '%-44s %10d %10d %8s\n' "call a script function add(a, b) from C" "$call" "$lcall" "$(ratio "$call" "$lcall")"
printf '%-44s %10d %10d %8s\n' "  the same, Lua with lua_pcall" "$call" "$lpcall" "$(ratio "$call" "$lpcall")"
printf '%-44s %10d %10d %8s\n' "create VM + run \`pass\` + free" "$vm" "$lvm" "$(ratio "$vm" "$lvm")"
