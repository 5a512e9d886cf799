#!/usr/bin/env bash
# The Python package on a GPU host without network (scripts/gpu-check.sh's python steps):
#   python:       `pip install .` into BUILD/python-root, the build requirements from .devdeps/pywheels
#                 and no run-time dependencies (NVRTC 13.5 and CUTLASS come from BUILD/deps, unpacked
#                 by the build step), then every test under python/tests, CPU and GPU, and the
#                 README's example (examples/python/matmul_example.py)
#   tune:         `gemmtune tune` (the installed command) of bench/python's MLP shapes: 1024 and
#                 4096 cubed, 8192x1024x1024 and 1024x1024x8192, each nn, nt and tn (TUNE_ARGS adds options)
#   bench:        bench/python/python_bench.py (PYTHON_BENCH_ARGS adds its options, e.g. "--only-mlp")
# All three use BUILD/python.db, a copy of the carried main-job database where there is one.
# Usage: scripts/python-check.sh python|tune|bench BUILD OUT SECONDS
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
step=$1 build=$2 out=$3 seconds=$4
deadline=$(( $(date +%s) + seconds ))
left() { echo $(( deadline - $(date +%s) )); }
target="$build/python-root"
export PYTHONPATH="$target" PATH="$target/bin:$PATH"
export GEMMTUNE_NVRTC="$build/deps/nvrtc/lib/libnvrtc.so.13" GEMMTUNE_CUTLASS_DIR="$build/deps/cutlass/include"
export GEMMTUNE_DB="$build/python.db" GEMMTUNE_SYSTEM_DB="" GEMMTUNE_OFFLINE_INSTALL=1
mkdir -p "$build"
[ -f "$GEMMTUNE_DB" ] || [ ! -f "$root/.devdeps/main-job.db" ] || cp "$root/.devdeps/main-job.db" "$GEMMTUNE_DB"

install() {
  local args=(--no-index --find-links "$root/.devdeps/pywheels" --no-deps --target "$target") t0
  # The build requirements beside, not in an isolated environment: there pip would want a cmake
  # wheel, where this host's cmake is the one in python3's own environment.
  python3 -m pip install -q --no-index --find-links "$root/.devdeps/pywheels" --target "$build/python-build-deps" \
    scikit-build-core nanobind >"$out/pip.log" 2>&1 || { echo "pip install FAILED (build requirements): $(tail -3 "$out/pip.log")"; return 1; }
  args+=(--no-build-isolation)
  python3 -m pip install --help | grep -q -- --break-system-packages && args+=(--break-system-packages)
  if [ ! -f /usr/include/sqlite3.h ] && [ -f "$root/.devdeps/include/sqlite3.h" ]; then
    args+=(--config-settings=cmake.define.SQLite3_INCLUDE_DIR="$root/.devdeps/include"
           --config-settings=cmake.define.SQLite3_LIBRARY="$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so* | head -1)")
  fi
  rm -rf "$target"
  # CUTLASS is in BUILD/deps already: the package's own fetch finds no wheel here and stops at once.
  [ -f "$build/deps/xla-ffi/.pinned" ] || [ ! -f "$root/.devdeps/deps.tar.xz" ] ||
    { mkdir -p "$build" && tar -xJf "$root/.devdeps/deps.tar.xz" -C "$build"; }
  # XLA's FFI headers: the pinned copy (what `pip install .` fetches), else the installed JAX's.
  local ffi="$build/deps/xla-ffi/include"
  [ -f "$ffi/xla/ffi/api/ffi.h" ] || ffi=$(python3 -c "import jax.ffi; print(jax.ffi.include_dir())" 2>/dev/null)
  [ -z "$ffi" ] || args+=(--config-settings=cmake.define.GEMMTUNE_XLA_FFI_INCLUDE="$ffi")
  t0=$(date +%s)
  if ! PYTHONPATH="$build/python-build-deps" GEMMTUNE_WHEELS="$root/.devdeps/pywheels" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
       timeout "$(left)" python3 -m pip install "${args[@]}" "$root" >>"$out/pip.log" 2>&1; then
    echo "pip install FAILED ($(( $(date +%s) - t0 )) s): $(tail -5 "$out/pip.log")"
    return 1
  fi
  echo "pip install ok ($(( $(date +%s) - t0 )) s)"
  python3 -c "import pytest" 2>/dev/null ||
    python3 -m pip install -q --no-index --find-links "$root/.devdeps/pywheels" --target "$target" pytest >>"$out/pip.log" 2>&1
}

case "$step" in
  python)
    install || exit 1
    cd "$root" && timeout "$(left)" python3 -m pytest -q -rfE --tb=short -p no:cacheprovider python/tests 2>&1 | tail -150
    rc=${PIPESTATUS[0]}
    echo "== examples/python/matmul_example.py (the README's example)"
    timeout "$(left)" python3 examples/python/matmul_example.py 2>&1 | tail -5
    example=${PIPESTATUS[0]}
    echo "example rc=$example"
    [ "$rc" -eq 0 ] && exit "$example"
    exit "$rc" ;;
  python-install-only)
    install ;;
  tune)
    timeout "$(left)" gemmtune tune --sizes 1024,4096,8192x1024x1024,1024x1024x8192 --layouts nn,nt,tn --no-basis \
      ${TUNE_ARGS:-} 2>&1 | tail -60 ;;
  bench)
    timeout "$(left)" python3 "$root/bench/python/python_bench.py" ${PYTHON_BENCH_ARGS:-} 2>&1 ;;
  *) echo "usage: scripts/python-check.sh python|tune|bench BUILD OUT SECONDS" >&2; exit 2 ;;
esac
