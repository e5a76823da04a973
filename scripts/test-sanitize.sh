#!/usr/bin/env bash
# The sanitizer part of the test command (scripts/test.sh runs it; it also
# runs alone): gpy built with AddressSanitizer and UBSan (-DGPY_SANITIZE=ON,
# in build-san/) runs the host suites (lang, errors, hostile) and the
# kernels suite, then a sample of lang programs under GPY_GC_STRESS=1.
# tests/run_tests.py fails any test whose run prints a sanitizer report.
# Prints a 'N passed, N failed' line per run; the exit status is non-zero on
# any failure. (For a subset: the runner command below, with filters.)
set -uo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DGPY_SANITIZE=ON >/dev/null &&
  cmake --build build-san -j"$(nproc)" >/dev/null || { echo "FAIL building build-san"; echo "0 passed, 1 failed"; exit 1; }

# halt at the first report, with a status (86) that no Python error has; a
# huge allocation returns NULL (MemoryError, as in the Release build) rather
# than aborting. Leaks are not checked: the suites are leak-free, but
# LeakSanitizer's tracer itself crashes now and then (signal 11) at the exit
# of a kernel program (kernels/narrow_divmod_zero.gpy, 1 run in 3)
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:allocator_may_return_null=1:exitcode=86
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86
status=0
# a sanitized gpy runs several times slower than the Release one
python3 tests/run_tests.py --gpy build-san/gpy --timeout 120 --suites lang,errors,hostile,kernels || status=1

# GPY_GC_STRESS=1 collects at every safepoint, so a value the collector
# cannot see is freed at once and its next use is an ASan report: the lang
# suite, but for the programs that allocate millions of objects, keep tens
# of thousands alive or recurse thousands of frames deep (a collection per
# safepoint makes each take minutes; json_deep_nesting builds 100,000-deep
# nests; re_fuzz_differential compiles 10,000 patterns).
GPY_GC_STRESS=1 python3 tests/run_tests.py --gpy build-san/gpy --timeout 120 --suites lang \
  --exclude gc_cycles --exclude numpy_print_generated --exclude many_constants --exclude recursion_messages --exclude unicode_names --exclude async_cancel_storm --exclude json_deep_nesting --exclude re_fuzz_differential || status=1
exit $status
