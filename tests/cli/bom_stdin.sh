#!/usr/bin/env bash
# A program read from stdin is a file: its UTF-8 byte order mark is dropped
# (CPython: python3 < prog and python3 - < prog print 7), as from a script or
# an imported module's file, but not from -c.
set -u
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '\xef\xbb\xbfprint(7)\n' > "$tmp/prog.gpy"
got=$("$GPY" < "$tmp/prog.gpy" 2>&1); [ "$got" = 7 ] || { echo "FAIL piped: got [$got]"; fail=1; }
got=$("$GPY" - < "$tmp/prog.gpy" 2>&1); [ "$got" = 7 ] || { echo "FAIL stdin '-': got [$got]"; fail=1; }
got=$("$GPY" "$tmp/prog.gpy" 2>&1); [ "$got" = 7 ] || { echo "FAIL file: got [$got]"; fail=1; }
printf '\xef\xbb\xbfy = 5\n' > "$tmp/bommod.gpy"
printf 'import bommod\nprint(bommod.y)\n' > "$tmp/imp.gpy"
got=$(cd "$tmp" && "$GPY" imp.gpy 2>&1); [ "$got" = 5 ] || { echo "FAIL import: got [$got]"; fail=1; }
got=$("$GPY" -c "$(cat "$tmp/prog.gpy")" 2>&1 | tail -1)
[ "$got" = "SyntaxError: invalid non-printable character U+FEFF" ] || { echo "FAIL -c: got [$got]"; fail=1; }
exit $fail
