#!/usr/bin/env bash
# Installs what gpy needs to build (Debian 12 packages) and builds it into
# build/. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)   # test oracle
command -v pkg-config >/dev/null || need+=(pkg-config)   # tests/embed: consumers of the installed gpy.pc
command -v g++ >/dev/null || need+=(g++)   # tests/embed: the C++ consumer
[ -f /usr/lib/llvm-19/cmake/LLVMConfig.cmake ] || need+=(llvm-19-dev)   # kernel compiler
[ -f /usr/include/zstd.h ] || need+=(libzstd-dev)   # LLVM's cmake package requires it
[ -f /usr/include/gmp.h ] || [ -f /usr/include/x86_64-linux-gnu/gmp.h ] || need+=(libgmp-dev)   # big ints (vm/bigint.c)
# zlib: build/gpy_jit.so links LLVM's static components, which need it (and libstdc++); PNG (stdlib/png.c)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
[ -f /usr/include/histedit.h ] || need+=(libedit-dev)   # the interactive prompt's line editor (repl/prompt.c)
[ -f /usr/include/pcre2.h ] || need+=(libpcre2-dev)   # the re module's matcher (stdlib/re_engine.c)
[ -f /usr/include/zmq.h ] || need+=(libzmq3-dev)   # the Jupyter kernel's sockets (repl/jupyter_kernel.c)
[ -f /usr/include/openssl/hmac.h ] || need+=(libssl-dev)   # the Jupyter kernel's message signatures
[ -e "$(cc -print-file-name=libstdc++.so 2>/dev/null)" ] && [ "$(cc -print-file-name=libstdc++.so)" != libstdc++.so ] || need+=(libstdc++-12-dev)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
