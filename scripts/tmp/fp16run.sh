set -u
BUILD_TARGETS="gemm_bench gemmtune" scripts/gpu-check.sh build >/dev/null 2>&1
export GEMMTUNE_CUTLASS_DIR=$PWD/build-gpu/deps/cutlass/include
G=build-gpu/cli/gemmtune
/usr/bin/time -f "tune %e s" $G tune --db $OUT/t.db --families fp16x3 --sizes ${SIZES:-8192} --strategy exhaustive --precision faithful --no-basis > $OUT/tune.txt 2>&1
tail -3 $OUT/tune.txt
$G results --db $OUT/t.db --family fp16x3 --csv > $OUT/res.csv 2>&1
python3 - <<'P'
import csv,os
rows=list(csv.DictReader(open(os.environ['OUT']+'/res.csv')))
print(list(rows[0].keys()))
P
timeout 200 ncu --kernel-name regex:fp16x3 --launch-skip 8 --launch-count 8 --metrics gpu__time_duration.sum --csv build-gpu/bench/gemm_bench --db $OUT/t.db --precision faithful --columns tuned --sizes ${SIZES:-8192} --rounds 1 --budget-ms 10 > $OUT/ncu.csv 2>$OUT/ncu.err
python3 - <<'P'
import csv,os
rows=list(csv.reader(l for l in open(os.environ['OUT']+'/ncu.csv') if l.startswith('"')))
h=rows[0]
for r in rows[1:]:
  d=dict(zip(h,r)); print(d['ID'], d['Kernel Name'][:50], d['Metric Value'])
P
