#!/usr/bin/env bash
# Files flush and close when collected or at exit (issue 14): a program that
# never closes its files leaves their whole contents on disk, whether it ends
# normally, by sys.exit or by an unhandled exception; unreferenced files are
# closed by the collector (so a program can open many more files than the
# descriptor limit); stdout reaching a pipe loses nothing. CPython is the
# oracle: the files' contents, stdout and the exit status must be the same.
set -u
unset PYTHONUNBUFFERED
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# check NAME: runs $tmp/prog.py under gpy and python3, each in a fresh folder
# (the program writes its files into the current directory)
check() {
  local name=$1 who
  for who in gpy py; do
    local x=$GPY; [ $who = py ] && x=python3
    rm -rf "$tmp/$who"; mkdir "$tmp/$who"
    (cd "$tmp/$who" && ulimit -n 64 && "$x" "$tmp/prog.py" 2>/dev/null | cat >stdout.txt; echo "${PIPESTATUS[0]}" >rc.txt)
  done
  if ! diff -r "$tmp/py" "$tmp/gpy" >"$tmp/diff.txt"; then
    echo "FAIL $name: files differ from CPython's"; head -10 "$tmp/diff.txt"; fail=1
  fi
}

cat >"$tmp/prog.py" <<'PY'
f = open("never_closed.txt", "w")
f.write("written but never closed\n")
g = open("appended.txt", "a")
for i in range(1000):
    g.write("line %d\n" % i)
open("one_liner.txt", "w").write("one line")
print(open("one_liner.txt").read())
print("end")
PY
check "unclosed files at a normal exit"

cat >"$tmp/prog.py" <<'PY'
import sys
f = open("exit_code.txt", "w")
f.write("before sys.exit")
print("leaving")
sys.exit(3)
PY
check "unclosed file at sys.exit"

cat >"$tmp/prog.py" <<'PY'
f = open("raised.txt", "w")
f.write("before the exception")
for i in range(5000):
    print("stdout line", i)
raise ValueError("unhandled")
PY
check "unclosed file and piped stdout at an unhandled exception"

cat >"$tmp/prog.py" <<'PY'
# far more files than the descriptor limit (64): each is dropped unclosed
for i in range(300):
    open("many_%03d.txt" % i, "w").write("file %d" % i)
def writer(i):
    f = open("fn_%03d.txt" % i, "w")
    f.write("from a function %d" % i)
for i in range(300):
    writer(i)
print(sum(len(open("many_%03d.txt" % i).read()) for i in range(300)))
PY
check "files dropped unclosed are closed by the collector"
exit $fail
