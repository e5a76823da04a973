#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS_PER_TARGET] — libFuzzer run over gpy's input parsers.
#
# Builds the targets of tests/fuzz/ in build-fuzz (clang-19, -DGPY_FUZZ=ON:
# ASan + UBSan + coverage), replays every saved crash input in
# tests/fuzz/regressions/<target>/ once, then fuzzes each target for
# SECONDS_PER_TARGET seconds (default 30: about 3 minutes in all on two
# cores). Seed corpora are built from tests/ each run; the corpora grow in
# build-fuzz/corpus/<target>, so later runs go on from where earlier ones
# stopped. A crash leaves its input in build-fuzz/crashes/ and makes the
# script exit 1, after every target has had its turn.
#
#   fuzz_parse      source text -> lexer, parser, scope pass, compiler, disassembler
#   fuzz_signature  cuda.jit signature strings ("void(float32[:, ::1], int32)")
#   fuzz_numpy      bytes -> a short numpy program (reshape, indexing, repeat, ...) run in the VM
#   fuzz_kernel     source text -> type inference of each function as a kernel
#   kernel_lower    fuzz_kernel with GPY_FUZZ_LOWER=1: what inference accepts
#                   is also lowered and compiled to PTX (slower, deeper)
#   fuzz_cache      bytes -> a disk cache entry read by the kernel cache loader
#
# The longer run (before a release, or overnight): one hour per target,
#   scripts/fuzz.sh 3600
# Rates measured on 2 shared cores (exec/s): parse ~1,100, signature ~33,000,
# numpy 30-140 (each input is a program run in the VM), kernel ~2,100,
# kernel_lower ~950, cache ~1,500; an hour is then ~4M parse inputs, ~300k
# numpy programs.
# To reproduce a crash: build-fuzz/fuzz_<target> build-fuzz/crashes/<file>
# (for fuzz_numpy, GPY_FUZZ_SHOW=1 prints the generated program); minimise it
# with build-fuzz/fuzz_<target> -minimize_crash=1 -runs=10000 <file>. Each
# crash fixed is kept in tests/fuzz/regressions/<target>/ and replayed here.
#
# GPY_FUZZ_SEED=N (scripts/test.sh sets it) makes a run repeatable: libFuzzer
# starts from seed N with empty corpora, so the inputs tried in T seconds
# are the first ones a longer run with the same seed tries. The last line
# is 'N passed, N failed' over the replays and the fuzz runs.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-30}
B=$ROOT/build-fuzz
TARGETS="parse signature numpy kernel cache"
export CC=${CC:-clang-19}
# libFuzzer comes with clang's runtime libraries (Debian: clang-19 and
# libclang-rt-19-dev, which apt installs as a recommendation only)
if ! command -v "$CC" >/dev/null || ! ls /usr/lib/llvm-19/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-19 libclang-rt-19-dev >/dev/null ||
        { echo "fuzz.sh: $CC is missing and could not be installed"; echo "0 passed, 1 failed"; exit 1; }
fi
SEED_ARGS=
CORPUS=$B/corpus
if [ -n "${GPY_FUZZ_SEED:-}" ]; then
    SEED_ARGS=-seed=$GPY_FUZZ_SEED
    CORPUS=$B/corpus-seed$GPY_FUZZ_SEED
    rm -rf "$CORPUS"
fi
# a huge request must come back NULL (gpy raises MemoryError), not abort;
# the VM lives for the whole process, so its memory at exit is no leak
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export GPY_DEVICE=cpu
unset GPY_CACHE_DIR GPY_DUMP_PTX
# inputs that allocate more than this are reported as crashes (libFuzzer)
LIMITS="-rss_limit_mb=3072 -malloc_limit_mb=4096 -timeout=20"

cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
    -DGPY_FUZZ=ON -DGPY_LLVM_STATIC=ON >/dev/null || { echo "fuzz.sh: cmake failed"; echo "0 passed, 1 failed"; exit 1; }
cmake --build "$B" -j"$(nproc)" --target gpy_cli $(for t in $TARGETS; do echo fuzz_$t; done) >/dev/null || {
    echo "fuzz.sh: build failed (cmake --build $B)"; echo "0 passed, 1 failed"; exit 1; }

# ---- seed corpora, rebuilt from tests/ every run
S=$B/seeds
rm -rf "$S"
mkdir -p "$S" "$B/crashes"
for t in $TARGETS; do mkdir -p "$S/$t" "$CORPUS/$t"; done
i=0
for f in $(find "$ROOT/tests" "$ROOT/examples" -name '*.gpy' | sort); do
    i=$((i + 1))
    cp "$f" "$S/parse/$i.gpy"
    case $f in */kernels/*|*/gpu/*|*/examples/*) cp "$f" "$S/kernel/$i.gpy" ;; esac
    # fuzz_numpy reads any bytes as choices; the numpy tests are as good a start as any
    case $f in *numpy*|*nd_*|*hostile*) cp "$f" "$S/numpy/$i.gpy" ;; esac
done
i=0
grep -rhoE "[\"'][a-z0-9_]*\([^\"'()]*\)[\"']" "$ROOT/tests" | sort -u | while read -r sig; do
    i=$((i + 1))
    printf '%s' "${sig:1:${#sig}-2}" > "$S/signature/$i"
done
# cache entries: a kernel test run with cache=True writes them
cdir=$S/cachedir
sed 's/^@cuda\.jit$/@cuda.jit(cache=True)/' "$ROOT/tests/kernels/grid2d.gpy" > "$S/cached_kernel.gpy"
sed 's/^@cuda\.jit$/@cuda.jit(cache=True)/' "$ROOT/tests/kernels/k6_barrier_atomics.gpy" > "$S/cached_kernel2.gpy"
GPY_CACHE_DIR=$cdir "$B/gpy" "$S/cached_kernel.gpy" >/dev/null 2>&1
GPY_CACHE_DIR=$cdir "$B/gpy" "$S/cached_kernel2.gpy" >/dev/null 2>&1
cp "$cdir"/*.gpyk "$S/cache/" 2>/dev/null || {
    echo "fuzz.sh: running a kernel with cache=True wrote no cache entry"; echo "0 passed, 1 failed"; exit 1; }

status=0
passed=0
failed=0
# ---- every crash fixed stays fixed (tests/fuzz/regressions/<target>/);
# crashes handed over to their owner and not fixed yet
# (tests/fuzz/crashes/<target>/) are replayed too, reported but not failed:
# once one passes it belongs in regressions/.
for t in $TARGETS; do
    R=$ROOT/tests/fuzz/regressions/$t
    if [ -d "$R" ] && [ -n "$(ls -A "$R")" ] &&
        ! "$B/fuzz_$t" $LIMITS -runs=0 "$R" >"$B/replay-$t.log" 2>&1; then
        echo "FAIL: fuzz_$t crashes on a saved regression input (see $B/replay-$t.log)"
        status=1
        failed=$((failed + 1))
    elif [ -d "$R" ]; then
        passed=$((passed + 1))
    fi
    K=$ROOT/tests/fuzz/crashes/$t
    [ -d "$K" ] || continue
    for f in "$K"/*; do
        case $f in *.gpy|*.md|*.out) continue ;; esac
        if "$B/fuzz_$t" $LIMITS "$f" >"$B/known-$t.log" 2>&1; then
            echo "note: known crash ${f#$ROOT/} no longer crashes: move it to tests/fuzz/regressions/$t/"
        else
            echo "known: ${f#$ROOT/} still crashes (handed over, not fixed yet)"
        fi
    done
done

# ---- fuzzing (kernel_lower: the fuzz_kernel binary, lowering too)
for t in parse signature numpy kernel kernel_lower cache; do
    log=$B/fuzz-$t.log
    mkdir -p "$CORPUS/$t"
    lower=
    [ $t = kernel_lower ] && lower=1
    GPY_FUZZ_LOWER=$lower "$B/fuzz_${t%_lower}" $LIMITS $SEED_ARGS -max_total_time="$SECS" -print_final_stats=1 \
        -artifact_prefix="$B/crashes/$t-" "$CORPUS/$t" "$S/${t%_lower}" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    if [ $rc -ne 0 ]; then
        echo "FAIL: fuzz_$t crashed after ${runs:-?} runs; input in $B/crashes/, log $log"
        grep -m1 -E "ERROR: |runtime error|SUMMARY" "$log"
        status=1
        failed=$((failed + 1))
    else
        echo "ok: fuzz_$t ${runs:-?} runs, ${rate:-?} exec/s, no crash"
        passed=$((passed + 1))
    fi
done
echo "$passed passed, $failed failed"
exit $status
