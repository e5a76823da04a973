#!/usr/bin/env bash
# The layers (docs/architecture.md): every #include "..." in the library's
# sources points down or sideways, never up. Lists each offender as
#   file:line: includes target (layer may include: ...)
# Allowed, by the including file's folder:
#   contracts/  contracts/
#   vm/         vm/ contracts/ include/
#   gpu/        gpu/ contracts/
#   jit/        jit/ vm/ gpu/ contracts/ include/
#   stdlib/     stdlib/ jit/ gpu/ vm/ contracts/ include/
#   api/        everything but repl/
#   repl/       everything but api/
# A quoted include resolves as the compiler resolves it: relative to the
# file, then the library's include path (include/, vm/).
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT" || exit 1

allowed() {
  case $1 in
    contracts) echo "contracts" ;;
    vm) echo "vm contracts include" ;;
    gpu) echo "gpu contracts" ;;
    jit) echo "jit vm gpu contracts include" ;;
    stdlib) echo "stdlib jit gpu vm contracts include" ;;
    api) echo "api stdlib jit gpu vm contracts include" ;;
    repl) echo "repl stdlib jit gpu vm contracts include" ;;
  esac
}

# Known exceptions ("file:target" pairs), each with its reason; remove the
# line when it is fixed. None today.
exceptions=" "

bad=0
checked=0
for dir in contracts vm gpu jit stdlib api repl; do
  [ -d "$dir" ] || continue
  ok=" $(allowed $dir) "
  for f in "$dir"/*.c "$dir"/*.h; do
    [ -e "$f" ] || continue
    checked=$((checked + 1))
    while IFS=: read -r line inc; do
      # where the compiler finds it
      if [ -e "$dir/$inc" ]; then target=$(realpath -m --relative-to=. "$dir/$inc")
      elif [ -e "include/$inc" ]; then target=include/$inc
      elif [ -e "vm/$inc" ]; then target=vm/$inc
      else continue # generated or not ours
      fi
      tdir=${target%%/*}
      case $exceptions in *" $f:$target "*) continue ;; esac
      case $ok in *" $tdir "*) ;; *)
        echo "$f:$line: includes $target ($dir/ may include:$(printf ' %s/' $(allowed $dir)))"
        bad=$((bad + 1)) ;;
      esac
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/')
  done
done
[ "$checked" -gt 50 ] || { echo "FAIL: only $checked files found under $ROOT"; exit 1; }
if [ "$bad" -gt 0 ]; then
  echo "FAIL: $bad include(s) point up a layer"
  exit 1
fi
exit 0
