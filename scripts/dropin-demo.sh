#!/usr/bin/env bash
# The cuBLAS drop-in on an unchanged PyTorch program (docs/dropin.md), on a GPU host:
#   1. examples/dropin/train_fp32.py as it is, and preloaded with GEMMTUNE_CUBLAS=off: the losses
#      must match bit for bit;
#   2. recorded (GEMMTUNE_RECORD), its shapes tuned (`tune --shapes`), run again under `measured`:
#      losses within FP32 tolerance, and the drop-in's line of what it served;
#   3. the step time without the drop-in, with it passing through (off) and serving (measured),
#      ROUNDS interleaved runs each (medians); PROFILE=1 adds each kernel's GPU time in the program.
#   GEMMTUNE_PRECISION=faithful with DEMO_FAMILIES=tf32x3,cublas DEMO_TUNE_ARGS="--precision faithful":
#      the same with tensor-core kernels verified at FP32 accuracy allowed (docs/dropin.md).
# Usage: scripts/dropin-demo.sh [BUILD_DIR]   env: OUT (logs), STEPS, ROUNDS, PROFILE, DEMO_FAMILIES (default
#        cutlass,thin,cublas), DEMO_TUNE_ARGS
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${GEMMTUNE_BUILD_DIR:-$root/build}}
out=${OUT:-/tmp/gemmtune-dropin-demo}
mkdir -p "$out"
shim="$build/dropin/libgemmtune_cublas.so"
train=(python3 "$root/examples/dropin/train_fp32.py" --steps "${STEPS:-20}")
export GEMMTUNE_DB="$out/dropin.db" GEMMTUNE_SYSTEM_DB=""
# nn.Linear's forward fuses its bias through cublasLt, which the drop-in does not intercept; this
# PyTorch switch sends it through cublasSgemm (an environment setting: the program is unchanged).
export DISABLE_ADDMM_CUDA_LT=1
losses() { grep '^step ' "$1"; }

"${train[@]}" >"$out/plain.txt" 2>&1 || { echo "train_fp32.py failed: $(tail -3 "$out/plain.txt")"; exit 1; }
LD_PRELOAD="$shim" GEMMTUNE_CUBLAS=off "${train[@]}" >"$out/off.txt" 2>&1
if diff <(losses "$out/plain.txt") <(losses "$out/off.txt") >/dev/null; then off="identical"; else off="DIFFER"; fi
echo "off: losses $off bit for bit; $(grep 'drop-in' "$out/off.txt")"
failed=0
[ "$off" = identical ] || failed=1

rm -f "$out/recorded.txt"
LD_PRELOAD="$shim" GEMMTUNE_CUBLAS=off GEMMTUNE_RECORD="$out/recorded.txt" "${train[@]}" >"$out/record.txt" 2>&1
echo "recorded $(grep -vc '^#' "$out/recorded.txt") problems:"; grep -v '^#' "$out/recorded.txt" | sort -t' ' -k4 -g -r | head -12
t0=$(date +%s)
"$build/cli/gemmtune" tune --gpu auto --shapes "$out/recorded.txt" --families "${DEMO_FAMILIES:-cutlass,thin,cublas}" \
  ${DEMO_TUNE_ARGS:-} >"$out/tune.txt" 2>"$out/tune.log"
rc=$?
echo "tune --shapes: rc=$rc in $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || failed=1

LD_PRELOAD="$shim" GEMMTUNE_CUBLAS=measured "${train[@]}" >"$out/measured.txt" 2>&1
python3 - "$out/plain.txt" "$out/measured.txt" <<'PY'
import sys
def losses(p): return [float.fromhex(l.split()[3]) for l in open(p) if l.startswith("step ")]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
worst = max(abs(x - y) / max(abs(x), 1e-30) for x, y in zip(a, b))
print(f"measured: {len(b)} steps, largest relative loss difference {worst:.2e} (FP32 tolerance: 1e-4)")
sys.exit(0 if len(a) == len(b) and worst <= 1e-4 else 1)
PY
[ $? -eq 0 ] || failed=1
grep 'drop-in' "$out/measured.txt"
# Nothing served would make the comparison above say nothing.
grep -Eq ' [1-9][0-9]* served by gemmtune' "$out/measured.txt" || { echo "measured: nothing served"; failed=1; }

# Interleaved: plain, the drop-in passing everything through (its own cost), the drop-in serving.
rm -f "$out/time-plain.txt" "$out/time-off.txt" "$out/time-shim.txt"
for r in $(seq "${ROUNDS:-5}"); do
  "${train[@]}" | sed -n 's/^step_ms //p' >>"$out/time-plain.txt"
  LD_PRELOAD="$shim" GEMMTUNE_CUBLAS=off GEMMTUNE_CUBLAS_REPORT=0 "${train[@]}" | sed -n 's/^step_ms //p' >>"$out/time-off.txt"
  LD_PRELOAD="$shim" GEMMTUNE_CUBLAS=measured GEMMTUNE_CUBLAS_REPORT=0 "${train[@]}" | sed -n 's/^step_ms //p' >>"$out/time-shim.txt"
done
python3 - "$out/time-plain.txt" "$out/time-off.txt" "$out/time-shim.txt" <<'PY'
import statistics, sys
p, o, s = (statistics.median(float(x) for x in open(f)) for f in sys.argv[1:4])
print(f"step time, median of interleaved runs: plain {p:.3f} ms, drop-in off {o:.3f} ms ({p / o:.3f}x), "
      f"drop-in measured {s:.3f} ms: {p / s:.3f}x")
PY
# PROFILE=1: each kernel's GPU time in the program, plain and served (bench/dropin/profile_step.py).
if [ "${PROFILE:-0}" = 1 ]; then
  python3 "$root/bench/dropin/profile_step.py" --top 25 >"$out/profile-plain.txt" 2>&1
  LD_PRELOAD="$shim" GEMMTUNE_CUBLAS=measured GEMMTUNE_CUBLAS_REPORT=0 \
    python3 "$root/bench/dropin/profile_step.py" --top 25 >"$out/profile-shim.txt" 2>&1
fi
exit $failed
