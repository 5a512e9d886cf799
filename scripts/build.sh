#!/usr/bin/env bash
# Installs what is missing (Debian/Ubuntu packages), fetches the pinned NVRTC 13.5 and CUTLASS
# headers into build/deps (scripts/fetch-deps.sh: faster kernels than the toolkit's NVRTC 13.0),
# then configures and builds gemmtune into build/ (or $GEMMTUNE_BUILD_DIR). Idempotent: a second
# run only rebuilds what changed.
# --deps-only: install the packages and stop (scripts/fuzz and scripts/test-sanitized build
# their own trees).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${GEMMTUNE_BUILD_DIR:-$root/build}

packages=(build-essential cmake ninja-build pkg-config libsqlite3-dev libspdlog-dev libfmt-dev
          libcli11-dev nlohmann-json3-dev libgtest-dev curl ca-certificates jq unzip libpq-dev postgresql
          python3 python3-dev python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gemmtune: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ "${1:-}" = "--deps-only" ] && exit 0

# The CUDA toolkit (NVRTC, headers) is expected under /usr/local/cuda unless nvcc is on PATH.
cuda_args=()
if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    cuda_args=(-DCUDAToolkit_ROOT=/usr/local/cuda)
  else
    echo "gemmtune: the CUDA toolkit (12 or newer, with NVRTC) is required: nvcc not found" >&2
    exit 69
  fi
fi

# Never fails: without them gemmtune uses the toolkit's NVRTC and builds no CUTLASS family.
"$root/scripts/fetch-deps.sh" "$build/deps"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cuda_args[@]}" >/dev/null
fi
cmake --build "$build" --parallel "$(nproc)" >/dev/null
