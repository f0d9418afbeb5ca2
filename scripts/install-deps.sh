#!/usr/bin/env bash
# Install what the build and the tests need on a fresh Debian 12 machine:
# Debian packages (only those missing) and the npm dev dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v emcc >/dev/null 2>&1 || need+=(emscripten)
# the relaxed-SIMD builds (attnlab-relaxed*.wasm): emcc 3.1.6's clang 14 cannot emit relaxed_madd
command -v clang-19 >/dev/null 2>&1 || need+=(clang-19)
command -v wasm-ld-19 >/dev/null 2>&1 || need+=(lld-19)
[ -f /usr/include/cmocka.h ] || need+=(libcmocka-dev)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v firefox-esr >/dev/null 2>&1 || need+=(firefox-esr)  # tests/firefox (make test-firefox)
[ -d /usr/share/fonts/opentype/noto ] && ls /usr/share/fonts/opentype/noto/NotoSansCJK* >/dev/null 2>&1 || need+=(fonts-noto-cjk)  # Chinese figure labels
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v node >/dev/null 2>&1 || need+=(nodejs npm)
# fuzzing and sanitizers (make test-asan, test-fuzz-smoke, test-valgrind)
command -v clang >/dev/null 2>&1 || need+=(clang)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need+=(libclang-rt-14-dev)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "install-deps: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
