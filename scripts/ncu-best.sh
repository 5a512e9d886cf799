#!/usr/bin/env bash
# Profiles the tuned best of one shape with Nsight Compute: looks the best configuration up in a
# results database (`gemmtune query`), finds its kernel's mangled name (`gemmtune ptx --json`) and
# runs `gemm_bench` on that one shape under ncu, capturing one launch of that kernel (the
# gemm_bench column "tuned", after verification) with the sections that say what limits it:
# speed of light, occupancy, launch statistics, warp stall reasons, memory workload, and the
# FMA pipe's use and shared-memory bank conflicts as single metrics.
#
# Usage: scripts/ncu-best.sh DB MxNxK [FAMILY]   (a GPU host with ncu; GEMMTUNE_BUILD_DIR, default
#        build-gpu, holds the built gemmtune and gemm_bench; OUT, default ., receives the report)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${GEMMTUNE_BUILD_DIR:-$root/build-gpu}
[ $# -ge 2 ] || { echo "usage: scripts/ncu-best.sh DB MxNxK [FAMILY]" >&2; exit 2; }
db=$1 shape=$2 family=${3:-}
out=${OUT:-.}

query=("$build/cli/gemmtune" query --db "$db" --mnk "$shape" --json)
[ -n "$family" ] && query+=(--family "$family")
instance=$("${query[@]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["instance"])')
kernel=$("$build/cli/gemmtune" ptx "$instance" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["lowered_name"])')
echo "$shape: $instance ($kernel)"

printf '%s\n' "$shape" >"$out/ncu-shape.txt"
# gemm_bench verifies a column before timing it: skipping the first few launches of the kernel
# lands past (most of) the verification runs; every launch has the shape's own grid either way.
ncu --kernel-name-base mangled --kernel-name "$kernel" --launch-skip 4 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section SchedulerStats \
  --metrics sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum \
  "$build/bench/gemm_bench" --db "$db" --shapes "$out/ncu-shape.txt" --rounds 1 --budget-ms 5 \
  >"$out/ncu-$shape.txt" 2>&1 || true
grep -E "sgemm_|pipe_fma|bank_conflicts|wavefronts_mem_shared|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Waves Per SM|Stall|Issued Warp|No Eligible|L1/TEX Hit|L2 Hit|Bank" \
  "$out/ncu-$shape.txt" | head -60
