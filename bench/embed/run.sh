#!/usr/bin/env bash
# Builds embed_bench.c against an installed gpy prefix and Lua 5.4, and runs
# it (see embed_bench.c). The kernel-launch figures use the test CUDA driver.
#   bash bench/embed/run.sh [PREFIX]     (default: installs build/ into a temp prefix)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if ! pkg-config --exists lua5.4 2>/dev/null; then
  apt-get install -y liblua5.4-dev pkg-config >/dev/null
fi
PREFIX=${1:-}
if [ -z "$PREFIX" ]; then
  PREFIX="$tmp/prefix"
  cmake --install "$ROOT/build" --prefix "$PREFIX" >/dev/null
fi
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
$CC -std=c17 -O2 -Wall -Wextra -Werror -o "$tmp/embed_bench" "$ROOT/bench/embed/embed_bench.c" \
  $(pkg-config --cflags --libs gpy lua5.4)
lib=$(bash "$ROOT/tests/gpu/build-fake.sh" "$tmp")
FAKE_CUDA_NO_PROBE=1 "$tmp/embed_bench" "$lib"
