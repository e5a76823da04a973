#!/usr/bin/env bash
# The embedding tests, run against an INSTALLED gpy, as an application sees it:
#   bash tests/embed/run.sh [BUILD_DIR [SANITIZER_BUILD_DIR]]
# (defaults build and build-san; each is configured first when it has no
# CMakeCache.txt, and brought up to date). It installs BUILD_DIR into a
# temporary prefix and checks:
#   - include/ holds gpy.h alone; libgpy.so exports only gpy_* names and
#     lib/gpy/gpy_jit.so only gpy_jit_entry (nm -D)
#   - every tests/embed/test_*.c, compiled with
#       cc -std=c17 -Wall -Wextra -Werror test.c $(pkg-config --cflags --libs gpy)
#     exits 0 (each under a timeout; its output is shown when it fails)
#   - a C++ program including gpy.h (g++ -std=c++17 -Wall -Wextra -Werror),
#     and a CMake project using find_package(gpy CONFIG) / gpy::gpy
#   - bin/gpy runs a @cuda.jit kernel on the CPU device; a compiler module
#     of another ABI version is refused with an ImportError naming both
#   - the prefix moved elsewhere (mv) still runs kernels: bin/gpy, and every
#     test program built against the moved prefix
#   - every test program again against a sanitizer build (-DGPY_SANITIZE=ON,
#     installed into a second prefix) with ASan + UBSan and leak checking.
# Ends with 'N passed, N failed'; the exit status is non-zero on any failure.
# GPY_EMBED_NO_SAN=1 skips the sanitizer pass (a quick run while editing).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${1:-build}
san_build=${2:-build-san}
jobs=2
test_timeout=120

pass=0
fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { # bad NAME [OUTPUT-FILE]
  echo "FAIL $1"
  [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/    /' "$2" | tail -n 40
  fail=$((fail + 1))
}
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit $?
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out.txt
# test_kernel_driver launches through the test-only CUDA driver
GPY_TEST_FAKE_LIBCUDA=$(bash tests/gpu/build-fake.sh "$tmp") || { echo "FAIL building tests/gpu/fake_libcuda.c"; exit 1; }
export GPY_TEST_FAKE_LIBCUDA

# build_dir DIR CMAKE-ARGS...: configure when new, then build
build_dir() {
  local dir=$1
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "$@" >"$out" 2>&1 || return 1
  fi
  cmake --build "$dir" -j"$jobs" >"$out" 2>&1
}

# install_to DIR PREFIX
install_to() { cmake --install "$1" --prefix "$2" >"$out" 2>&1; }

# run_tests LABEL PREFIX [EXTRA-CFLAGS]: compiles every test_*.c against
# PREFIX through its pkg-config file and runs it
run_tests() {
  local label=$1 prefix=$2 extra=${3:-}
  local flags
  flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs gpy) || {
    bad "$label: pkg-config gpy"
    return
  }
  for src in tests/embed/test_*.c; do
    [ -e "$src" ] || continue
    local name exe
    name=$(basename "$src" .c)
    exe=$tmp/$label-$name
    # -lm: a test may use <math.h> itself (libgpy's own libm is its business)
    # shellcheck disable=SC2086
    if ! cc -std=c17 -Wall -Wextra -Werror $extra "$src" $flags -lm -o "$exe" >"$out" 2>&1; then
      bad "$label: $name (compile)" "$out"
    elif timeout "$test_timeout" "$exe" >"$out" 2>&1; then
      ok "$label: $name"
    else
      local rc=$?
      [ "$rc" -eq 124 ] && echo "(timed out after ${test_timeout}s)" >>"$out"
      echo "(exit status $rc)" >>"$out"
      bad "$label: $name" "$out"
    fi
  done
}

# a kernel on the CPU device through bin/gpy
kernel_src='from numba import cuda
import numpy as np
@cuda.jit
def twice(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = 2 * a[i]
a = np.arange(5.0)
twice[1, 8](a)
print(a)'
# cli_kernel LABEL PREFIX
cli_kernel() {
  if GPY_DEVICE=cpu timeout "$test_timeout" "$2/bin/gpy" -c "$kernel_src" >"$out" 2>&1 &&
    [ "$(cat "$out")" = "[0. 2. 4. 6. 8.]" ]; then
    ok "$1: bin/gpy runs a kernel"
  else
    bad "$1: bin/gpy runs a kernel (expected [0. 2. 4. 6. 8.])" "$out"
  fi
}

# ------------------------------------------------------------ the install
if ! build_dir "$build" -DCMAKE_BUILD_TYPE=Release; then
  bad "build $build" "$out"
  finish
fi
prefix=$tmp/prefix
if ! install_to "$build" "$prefix"; then
  bad "cmake --install $build" "$out"
  finish
fi
ok "cmake --install $build"

for f in bin/gpy include/gpy.h lib/libgpy.so lib/libgpy.a lib/gpy/gpy_jit.so lib/pkgconfig/gpy.pc \
  lib/cmake/gpy/gpyConfig.cmake lib/cmake/gpy/gpyConfigVersion.cmake; do
  [ -e "$prefix/$f" ] || bad "installed: $f is missing"
done
soname=$(objdump -p "$prefix/lib/libgpy.so" | awk '/SONAME/ { print $2 }')
if [ -n "$soname" ] && [ -e "$prefix/lib/$soname" ]; then ok "libgpy.so has soname $soname"; else bad "libgpy.so soname ($soname)"; fi
headers=$(cd "$prefix/include" && find . -type f | sort | tr '\n' ' ')
if [ "$headers" = "./gpy.h " ]; then ok "include/ holds gpy.h alone"; else
  echo "include/: $headers" >"$out"
  bad "include/ holds gpy.h alone" "$out"
fi

# only gpy_* in libgpy.so's dynamic symbol table
nm -D --defined-only "$prefix/lib/libgpy.so" | awk '$3 !~ /^gpy_/ { print $3 }' >"$out"
if [ ! -s "$out" ] && nm -D --defined-only "$prefix/lib/libgpy.so" | grep -q ' gpy_new$'; then
  ok "nm -D libgpy.so: only gpy_* names"
else
  echo "(names other than gpy_* exported above)" >>"$out"
  bad "nm -D libgpy.so: only gpy_* names" "$out"
fi

# the compiler module exports its entry point alone (it reaches libgpy through JitHost)
nm -D --defined-only "$prefix/lib/gpy/gpy_jit.so" | awk '{ print $3 }' >"$out"
if [ "$(cat "$out")" = gpy_jit_entry ]; then ok "nm -D gpy_jit.so: gpy_jit_entry alone"; else
  bad "nm -D gpy_jit.so: gpy_jit_entry alone" "$out"
fi

run_tests installed "$prefix"

# C++
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs gpy)
# shellcheck disable=SC2086
if g++ -std=c++17 -Wall -Wextra -Werror tests/embed/cxx_consumer.cpp $flags -o "$tmp/cxx" >"$out" 2>&1 &&
  timeout "$test_timeout" "$tmp/cxx" >"$out" 2>&1; then
  ok "C++ consumer"
else
  bad "C++ consumer" "$out"
fi

# CMake
if cmake -S tests/embed/cmake_consumer -B "$tmp/cmake_consumer" -DCMAKE_PREFIX_PATH="$prefix" >"$out" 2>&1 &&
  cmake --build "$tmp/cmake_consumer" >"$out" 2>&1 && timeout "$test_timeout" "$tmp/cmake_consumer/consumer" >"$out" 2>&1; then
  ok "CMake consumer (find_package(gpy CONFIG), gpy::gpy)"
else
  bad "CMake consumer (find_package(gpy CONFIG), gpy::gpy)" "$out"
fi

# docs/embedding.md's quick start, built exactly as the docs say; it scales
# 0..999 by 2.5 in a script-defined kernel: 999 * 2.5 = 2497.5
# shellcheck disable=SC2086
if cc examples/embed/app.c $flags -o "$tmp/app" >"$out" 2>&1 && timeout "$test_timeout" "$tmp/app" >"$out" 2>&1 &&
  grep -qx 'data\[999\] = 2497.5' "$out"; then
  ok "quick start (examples/embed/app.c)"
else
  bad "quick start (examples/embed/app.c)" "$out"
fi

cli_kernel installed "$prefix"

# a compiler module of another ABI version: refused, with both versions and paths named
cat >"$tmp/other_abi.c" <<'EOF'
/* a stand-in for a gpy_jit.so from another gpy: it reports ABI version 999 */
__attribute__((visibility("default"))) const void *gpy_jit_entry(int host_abi, const void *host, int *module_abi) {
    (void)host_abi, (void)host;
    *module_abi = 999;
    return 0;
}
EOF
cc -shared -fPIC "$tmp/other_abi.c" -o "$tmp/other_abi.so"
abi=$(sed -n 's/^#define GPY_ABI_VERSION \([0-9]*\).*/\1/p' include/gpy.h)
GPY_JIT_MODULE=$tmp/other_abi.so GPY_DEVICE=cpu timeout "$test_timeout" "$prefix/bin/gpy" -c "$kernel_src" >"$out" 2>&1
want="ImportError: the kernel compiler $tmp/other_abi.so has ABI version 999, but libgpy ($prefix/bin/gpy) has ABI version $abi"
if grep -qF "$want" "$out"; then ok "a module of another ABI version is refused"; else
  echo "expected: $want" >>"$out"
  bad "a module of another ABI version is refused" "$out"
fi

# ------------------------------------------------------------ a moved prefix
moved=$tmp/elsewhere/gpy
mkdir -p "$tmp/elsewhere"
mv "$prefix" "$moved"
cli_kernel moved "$moved"
run_tests moved "$moved"

# ------------------------------------------------------------ sanitizers
if [ "${GPY_EMBED_NO_SAN:-0}" != 1 ]; then
  if ! build_dir "$san_build" -DCMAKE_BUILD_TYPE=Debug -DGPY_SANITIZE=ON; then
    bad "build $san_build" "$out"
  elif ! grep -q '^GPY_SANITIZE:BOOL=ON' "$san_build/CMakeCache.txt"; then
    echo "$san_build is not a -DGPY_SANITIZE=ON build" >"$out"
    bad "sanitizer build" "$out"
  elif ! install_to "$san_build" "$tmp/san"; then
    bad "cmake --install $san_build" "$out"
  else
    # halt at the first report with a status (86) no test uses; leaks are reported
    export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:exitcode=86
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86
    run_tests sanitized "$tmp/san" "-fsanitize=address,undefined -fno-omit-frame-pointer -g"
    unset ASAN_OPTIONS UBSAN_OPTIONS
  fi
fi

finish
