#!/usr/bin/env bash
# Fetches the pinned run-time dependencies into DESTDIR (scripts/build.sh calls it with
# "$build/deps" before configuring):
#   nvrtc/lib/        libnvrtc.so.13 + libnvrtc-builtins.so.13.5 from nvidia-cuda-nvrtc 13.5.37
#                     (x86_64 Linux only). NVRTC 13.0 addresses shared memory with 64-bit
#                     arithmetic: measured on an H100, a CUTLASS SIMT kernel ran at 0.86x cuBLAS
#                     through it and 1.00-1.06x through 13.5, which works with the CUDA 13.0 driver.
#   cutlass/include/  CUTLASS 4.2.0 headers from nvidia-cutlass 4.2.0.0.
#   xla-ffi/include/  XLA's FFI headers (xla/ffi/api/*.h) from jaxlib 0.6.0, for the Python package's
#                     JAX support only (asked for by name). FFI API 0.1: every later jaxlib runs
#                     handlers built against it. Any platform's wheel holds them: the smallest is pinned.
# Each keeps its wheel's license file(s) next to it (nvrtc/License.txt, cutlass/LICENSE.txt).
# Each wheel's sha256 is pinned and checked. Wheels come from $GEMMTUNE_WHEELS (a directory
# holding the .whl files, for hosts without network) or else from PyPI (curl, jq, unzip).
# Idempotent: a dependency whose stamp names the pinned wheel is left alone. Never fails the
# build: a dependency that cannot be fetched is one line on stderr and gemmtune falls back (the
# toolkit's NVRTC; no CUTLASS family).
#
# Usage: scripts/fetch-deps.sh DESTDIR [nvrtc] [cutlass] [xla-ffi]   (default: nvrtc cutlass; the Python
# package's build fetches cutlass and xla-ffi: its NVRTC is the nvidia-cuda-nvrtc wheel, a package dependency)
set -uo pipefail

if [ $# -lt 1 ] || [ -z "$1" ]; then
  echo "usage: scripts/fetch-deps.sh DESTDIR [nvrtc] [cutlass] [xla-ffi]" >&2
  exit 2
fi
dest=$1
shift
wanted=" ${*:-nvrtc cutlass} "
mkdir -p "$dest" || { echo "gemmtune: cannot create $dest; pinned dependencies not fetched" >&2; exit 0; }
dest=$(cd "$dest" && pwd)

# name version wheel sha256
nvrtc_pin=(nvidia-cuda-nvrtc 13.5.37 nvidia_cuda_nvrtc-13.5.37-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl
           86b4d68058807988b7d9af5b44917a0601e9c337f35ccd657bfb3c759ff8d8bc)
cutlass_pin=(nvidia-cutlass 4.2.0.0 nvidia_cutlass-4.2.0.0-py3-none-any.whl
             f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6)
# name version wheel sha256 license-prefix (the wheel's own layout: no licenses/ folder)
xla_ffi_pin=(jaxlib 0.6.0 jaxlib-0.6.0-cp310-cp310-macosx_11_0_arm64.whl
             64a82f8eb40fdb7ba1d46ef907300d42e4f98cbda9602a2ed8e70db1a9ac4a60 jaxlib-0.6.0.dist-info/LICENSE)

work=$(mktemp -d "${TMPDIR:-/tmp}/gemmtune-deps.XXXXXX") || exit 0
trap 'rm -rf "$work" "$dest"/.*.partial' EXIT

# An absolute URL for `url` as found in the document at `base` (PyPI mirrors give relative ones).
absolute_url() {
  local base=$1 url=$2 path
  case $url in
    http://* | https://*) echo "$url" ;;
    //*) echo "https:$url" ;;
    /*) echo "$(sed -E 's#^(https?://[^/]+).*#\1#' <<<"$base")$url" ;;
    *)
      path="${base%/*}/$url"
      while [[ $path == */../* ]]; do path=$(sed -E 's#/[^/.][^/]*/\.\./#/#' <<<"$path"); done
      echo "${path//\/.\//\/}"
      ;;
  esac
}

# Puts the wheel `file` of `name` `version` at $work/$file: from $GEMMTUNE_WHEELS, else PyPI.
get_wheel() {
  local name=$1 version=$2 file=$3 index json="" url=""
  if [ -n "${GEMMTUNE_WHEELS:-}" ]; then
    [ -f "$GEMMTUNE_WHEELS/$file" ] || { echo "$file is not in GEMMTUNE_WHEELS=$GEMMTUNE_WHEELS"; return 1; }
    cp "$GEMMTUNE_WHEELS/$file" "$work/$file" || { echo "cannot copy $GEMMTUNE_WHEELS/$file"; return 1; }
    return 0
  fi
  for tool in curl jq; do
    command -v $tool >/dev/null || { echo "$tool is not installed (scripts/build.sh installs it)"; return 1; }
  done
  # The release's own document first; some mirrors serve only the project's, with every release.
  for index in "https://pypi.org/pypi/$name/$version/json" "https://pypi.org/pypi/$name/json"; do
    json=$(curl -fsSL --retry 3 --connect-timeout 20 "$index" 2>/dev/null) || { json=""; continue; }
    url=$(jq -r --arg v "$version" --arg f "$file" \
      '[(.urls // [])[], (.releases[$v] // [])[]] | map(select(.filename == $f)) | .[0].url // empty' <<<"$json" 2>/dev/null)
    [ -n "$url" ] && break
  done
  [ -n "$json" ] || { echo "cannot reach $index"; return 1; }
  [ -n "$url" ] || { echo "PyPI lists no $file"; return 1; }
  url=$(absolute_url "$index" "$url")
  echo "gemmtune: downloading $file" >&2
  curl -fsSL --retry 3 --connect-timeout 20 -o "$work/$file" "$url" 2>/dev/null || { echo "download of $url failed"; return 1; }
}

# Extracts the members of `wheel` under `prefix` into `to`, keeping their paths.
extract() {
  local wheel=$1 prefix=$2 to=$3
  if command -v unzip >/dev/null; then
    unzip -q -o "$wheel" "$prefix*" -d "$to"
  elif command -v python3 >/dev/null; then
    python3 - "$wheel" "$prefix" "$to" <<'EOF'
import sys, zipfile
wheel, prefix, to = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    z.extractall(to, [m for m in z.namelist() if m.startswith(prefix)])
EOF
  else
    echo "neither unzip nor python3 is installed" >&2
    return 1
  fi
}

# fetch LABEL TARGET FALLBACK pin... -- installs into $dest/TARGET through install_<TARGET>.
fetch() {
  local label=$1 target=$2 fallback=$3 name=$4 version=$5 file=$6 sha=$7 why got
  local licenses=${8:-"${name//-/_}-$version.dist-info/licenses/"}
  local stamp="$dest/$target/.pinned"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$file $sha" ]; then return 0; fi
  if ! why=$(get_wheel "$name" "$version" "$file"); then
    echo "gemmtune: $label not fetched ($why); $fallback" >&2
    return 0
  fi
  got=$(sha256sum "$work/$file" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "gemmtune: $label not fetched ($file has sha256 $got, pinned $sha); $fallback" >&2
    return 0
  fi
  # Unpacked next to the old copy and swapped in whole, the stamp last: an interrupted run
  # leaves either the previous copy or none, never a mix.
  local new="$dest/.$target.partial"
  rm -rf "$new" && mkdir -p "$new" "$work/x-$target"
  if ! why=$("install_$target" "$work/$file" "$work/x-$target" "$new" 2>&1 &&
             extract "$work/$file" "$licenses" "$work/x-$target" 2>&1 && mv "$work/x-$target/$licenses"* "$new/" 2>&1); then
    echo "gemmtune: $label not fetched (unpacking $file: $why); $fallback" >&2
    return 0
  fi
  echo "$file $sha" >"$new/.pinned"
  rm -rf "$dest/$target" && mv "$new" "$dest/$target"
  rm -f "$work/$file"
  echo "gemmtune: $label fetched into $dest/$target" >&2
}

install_nvrtc() {
  local wheel=$1 tmp=$2 to=$3
  extract "$wheel" nvidia/cu13/lib/ "$tmp" && mkdir -p "$to/lib" &&
    mv "$tmp/nvidia/cu13/lib/libnvrtc.so.13" "$tmp/nvidia/cu13/lib/libnvrtc-builtins.so.13.5" "$to/lib/"
}

install_cutlass() {
  local wheel=$1 tmp=$2 to=$3
  extract "$wheel" cutlass_library/source/include/ "$tmp" &&
    [ -f "$tmp/cutlass_library/source/include/cutlass/version.h" ] && mv "$tmp/cutlass_library/source/include" "$to/include"
}

if [[ $wanted != *" nvrtc "* ]]; then
  :
elif [ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ]; then
  fetch "NVRTC 13.5" nvrtc "the toolkit's NVRTC will be used (kernels may run slower)" "${nvrtc_pin[@]}"
else
  echo "gemmtune: no pinned NVRTC for $(uname -s) $(uname -m); the toolkit's NVRTC will be used" >&2
fi
install_xla-ffi() {
  local wheel=$1 tmp=$2 to=$3
  extract "$wheel" jaxlib/include/xla/ffi/api/ "$tmp" &&
    [ -f "$tmp/jaxlib/include/xla/ffi/api/ffi.h" ] && mv "$tmp/jaxlib/include" "$to/include"
}

[[ $wanted != *" xla-ffi "* ]] || fetch "XLA FFI headers (jaxlib 0.6.0)" xla-ffi "the Python package will have no JAX support" "${xla_ffi_pin[@]}"
[[ $wanted != *" cutlass "* ]] || fetch "CUTLASS 4.2.0" cutlass "gemmtune will have no CUTLASS family" "${cutlass_pin[@]}"
exit 0
