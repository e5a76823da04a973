#!/bin/bash
# Runs the kernel tests and the bench kernels on a real GPU and compares each
# output with the CPU device's (both from the same gpy binary), so the
# 32-bit index variant and everything else in PTX is checked against the
# CPU device's results.  Usage (on the GPU machine, from the repo root):
#   bash bench/kernels/gpu_check.sh path/to/gpy      # e.g. a GPY_LLVM_STATIC build
# Prints "same: N, different: M" and the first lines of each difference
# (a difference is not necessarily a bug: libdevice math may round
# differently from the host's libm).
G=${1:-build/gpy}
tmp=$(mktemp -d)
nvidia-smi -L 2>/dev/null | head -1
same=0; diff=0
for f in tests/kernels/*.gpy bench/kernels/*.gpy; do
  name=$(echo "$f" | tr / -)
  GPY_DEVICE=cpu timeout 120 "$G" "$f" > "$tmp/$name.cpu" 2>&1
  GPY_DEVICE=cuda timeout 120 "$G" "$f" > "$tmp/$name.gpu" 2>&1
  if cmp -s "$tmp/$name.cpu" "$tmp/$name.gpu"; then same=$((same + 1)); else
    diff=$((diff + 1)); echo "== $f"; diff "$tmp/$name.cpu" "$tmp/$name.gpu" | head -8; fi
done
echo "same: $same, different: $diff"
rm -rf "$tmp"
