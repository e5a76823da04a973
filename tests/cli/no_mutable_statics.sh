#!/usr/bin/env bash
# Many VMs per process need the library free of hidden shared state: every
# mutable variable with static storage in vm/, stdlib/, jit/ and gpu/ (file
# scope or function-local, static or not, thread-local included) must be
# listed, with its reason, in tests/cli/no_mutable_statics.allow. Read from
# the compiled objects (objdump -t: symbols in .data, .bss, .tdata, .tbss;
# const tables live in .rodata or .data.rel.ro), so a multi-line or
# function-local definition cannot slip past a pattern.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GPY=${GPY:-$ROOT/build/gpy}
build=$(cd "$(dirname "$GPY")" && pwd)
allow="$ROOT/tests/cli/no_mutable_statics.allow"
command -v objdump >/dev/null || { echo "FAIL objdump (binutils) is needed"; exit 1; }
[ -f "$allow" ] || { echo "FAIL $allow is missing"; exit 1; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# every object compiled from a library source that still exists, once
find "$build" -name '*.c.o' -path '*/CMakeFiles/*' 2>/dev/null | while read -r o; do
  src=$(sed -E 's|.*/CMakeFiles/[^/]+\.dir/||; s|\.o$||' <<<"$o")
  case "$src" in vm/*|stdlib/*|jit/*|gpu/*) ;; *) continue ;; esac
  [ -f "$ROOT/$src" ] || continue
  # "ADDR flags SECTION SIZE NAME": keep writable data objects; drop section
  # symbols; a function-local static is named by its variable
  objdump -t "$o" | awk -v src="$src" '
    /^[0-9a-f]+ / {
      name = $NF; sec = ""
      for (i = 2; i < NF; i++) if ($i ~ /^\./) { sec = $i; break }
      if (sec !~ /^\.(data|bss|tdata|tbss)/ || sec ~ /^\.data\.rel\.ro/) next
      if (name == sec || name ~ /^\./ || name ~ /^(__odr_asan|__asan|___asan|__ubsan|__tsan|__sancov)/) next  # sanitizer builds
      sub(/\.[0-9]+$/, "", name)      # gcc: var.N
      sub(/^[A-Za-z0-9_]+\./, "", name) # clang: function.var
      print src, name
    }'
done | sort -u >"$tmp/found"
[ -s "$tmp/found" ] || [ -n "$(find "$build" -name '*.c.o' -path '*/vm/*' 2>/dev/null | head -1)" ] ||
  { echo "FAIL no compiled objects under $build (build gpy first)"; exit 1; }

# the allow-list: "path symbol  reason"; comments and blank lines ignored
grep -vE '^\s*(#|$)' "$allow" >"$tmp/entries"
noreason=$(awk 'NF < 3' "$tmp/entries")
[ -z "$noreason" ] || { echo "FAIL no_mutable_statics.allow: entries without a reason:"; echo "$noreason"; exit 1; }
awk '{ print $1, $2 }' "$tmp/entries" | sort -u >"$tmp/allowed"

fail=0
new=$(comm -23 "$tmp/found" "$tmp/allowed")
if [ -n "$new" ]; then
  echo "FAIL mutable static state in the library (make it per-VM, or a thread-safe process-wide"
  echo "     one-time set-up listed with its reason in tests/cli/no_mutable_statics.allow):"
  sed 's/^/  /' <<<"$new"
  fail=1
fi
gone=$(comm -13 "$tmp/found" "$tmp/allowed")
if [ -n "$gone" ]; then
  echo "FAIL no_mutable_statics.allow lists variables that no longer exist (remove them):"
  sed 's/^/  /' <<<"$gone"
  fail=1
fi
exit $fail
