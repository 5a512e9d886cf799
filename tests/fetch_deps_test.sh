#!/usr/bin/env bash
# scripts/fetch-deps.sh DEST [nvrtc] [cutlass] [xla-ffi] fetches only what it is asked for (the
# Python package's build asks for cutlass, and for xla-ffi, separately; the default is nvrtc cutlass). Offline: an empty GEMMTUNE_WHEELS folder, so every
# fetch fails at once and says which dependency it tried; the script never fails the build.
set -uo pipefail
script=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/wheels"
fail() { echo "FAIL: $*"; exit 1; }
tried() { GEMMTUNE_WHEELS="$work/wheels" bash "$script" "$work/deps" "$@" 2>&1; }

out=$(tried cutlass) || fail "exit status $? for cutlass"
grep -q "CUTLASS 4.2.0 not fetched" <<<"$out" || fail "cutlass alone did not try CUTLASS: $out"
grep -q "NVRTC" <<<"$out" && fail "cutlass alone tried NVRTC: $out"

out=$(tried xla-ffi) || fail "exit status $? for xla-ffi"
grep -q "XLA FFI headers (jaxlib 0.6.0) not fetched" <<<"$out" || fail "xla-ffi alone did not try the XLA FFI headers: $out"
grep -q "CUTLASS\|NVRTC" <<<"$out" && fail "xla-ffi alone tried another dependency: $out"

out=$(tried) || fail "exit status $? for the default"
grep -q "XLA FFI" <<<"$out" && fail "the default tried the XLA FFI headers: $out"
grep -q "CUTLASS 4.2.0 not fetched" <<<"$out" || fail "the default did not try CUTLASS: $out"
if [ "$(uname -m)" = x86_64 ]; then
  grep -q "NVRTC 13.5 not fetched" <<<"$out" || fail "the default did not try NVRTC: $out"
fi
echo ok
