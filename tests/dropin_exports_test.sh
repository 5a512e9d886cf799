#!/usr/bin/env bash
# libgemmtune_cublas.so, as a host program loads it: it defines exactly cuBLAS's six GEMM entry
# points it serves (the library it carries stays private, so nothing clashes with the host's own
# symbols), and has no run path (it never makes the host search a build tree or the current
# directory). Usage: dropin_exports_test.sh PATH_TO_LIBGEMMTUNE_CUBLAS
set -euo pipefail
lib=$1
expected="cublasGemmBatchedEx cublasGemmEx cublasGemmStridedBatchedEx cublasSgemmBatched cublasSgemmStridedBatched cublasSgemm_v2"
got=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$got" != "$expected" ]; then
  echo "exported: $got"
  echo "expected: $expected"
  exit 1
fi
if readelf -d "$lib" | grep -Eq 'RUNPATH|RPATH'; then
  readelf -d "$lib" | grep -E 'RUNPATH|RPATH'
  echo "the drop-in must have no run path"
  exit 1
fi
echo "ok: six entry points, no run path"
