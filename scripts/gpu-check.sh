#!/usr/bin/env bash
# GPU host check: builds gemmtune there, runs every test (the `gpu` label included), the
# benchmarks and a tuning run, keeps logs under $OUT (or /tmp/gemmtune-gpu-check) and prints a
# short summary table last.
#
# Usage: scripts/gpu-check.sh [steps...]   steps: build cpu-tests gpu-tests compile-bench tune bench
#        search-quality (SQ_FAMILIES, SQ_SIZES: exhaustive against model and random; SQ_ARGS adds
#        search_quality options, e.g. "--exhaustive-sizes 8192")
#        fresh (after tune: FRESH_RUNS more `tune --fresh` runs, then each size's winner per run)
#        multi-gpu-one multi-gpu (several GPUs: GPU 0 alone, then all, a worker killed, query --gpu 1)
#        shapes (tune --shapes SHAPES, then gemm_bench --shapes on it and on SHAPES_UNTUNED)
#        untuned (gemm_bench on UNTUNED shapes with the tune step's database: sgemm(), ours only, cuBLAS)
#        model-error (the family model's held-out error on that database) seen-tune (tune --seen on it)
#        dropin-memcheck (compute-sanitizer on a cuBLAS program under the drop-in) dropin-overhead
#        (its host time per call over Library::sgemm) dropin-demo
#        (scripts/dropin-demo.sh: an unchanged PyTorch script recorded, tuned, served)
#        python python-tune python-bench (the Python package: pip install . and pytest; tuning the
#        benchmark MLP's shapes; bench/python/python_bench.py)
#        (BUILD_TARGETS builds only those targets; UNTUNED_DB and UNTUNED_CACHE: another database and compile cache)
#        (GPU_TESTS_RESUME=1: run only the GPU tests that have not passed in an earlier call on the same
#        source tree: on this machine, or, with GPU_TESTS_PASSED=FILE, the passed.txt an earlier call returned)
#        (TUNE_SIZES, TUNE_FAMILIES and GPU_TESTS_REGEX narrow the tune and test steps; TUNE_ARGS
#        adds tune options, e.g. "--carry 0"; TUNE_PASSES=cold skips the warm pass; TUNE_KEEP=1 keeps the
#        database of an earlier tune step; BENCH_ARGS adds gemm_bench options, e.g. "--layouts nn,tn")
#        (default: build gpu-tests — compile-bench compiles every family's whole space, CUTLASS's
#        included, minutes on 16 cores; `build tune bench` gives the tuning cost and the
#        benchmark table: gemm_bench on the database the tune step wrote, CSV kept as bench.csv)
# Hosts without sqlite3.h: put sqlite3.h in .devdeps/include; the runtime libsqlite3.so.0 is used.
# Hosts without network: put the pinned wheels (scripts/fetch-deps.sh names them) in
# .devdeps/wheels; the build step unpacks them into $build/deps. Where the wheels and the tree
# exceed what may be sent (64 MB), send the unpacked build/deps instead, packed tighter:
# `tar -C build -cf - deps | xz -T0 > .devdeps/deps.tar.xz` (about 42 MB); the build step unpacks it.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-/tmp/gemmtune-gpu-check}
build=${GEMMTUNE_BUILD_DIR:-$root/build-gpu}
mkdir -p "$out"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build gpu-tests)
summary=()
note() { summary+=("$(printf '%-16s %s' "$1" "$2")"); }
elapsed() { echo $(( $(date +%s) - $1 ))s; }
# The whole check ends within CHECK_BUDGET seconds (default 560, under the device tool's 600 s
# per command), so that the logs are always packed and the summary printed: every step's timeout
# is cut to what is left, and a step with under 30 s left is skipped.
deadline=$(( $(date +%s) + ${CHECK_BUDGET:-560} ))
# The source tree's contents (build folders, .git and .devdeps aside): what a passed GPU test vouches for.
tree_fingerprint() {
  (cd "$root" && find . \( -path ./.git -o -path ./.devdeps -o -path "./build*" -o -name __pycache__ \) -prune -o \
    -type f -print0 | LC_ALL=C sort -z | xargs -0 sha1sum | sha1sum | cut -c1-40)
}
capped() { local left=$(( deadline - $(date +%s) - 20 )); echo $(( $1 < left ? $1 : left )); }
# The compile cache lives beside the build, never under $OUT: thousands of small files there
# would keep the logs from coming back; the tune step's database too (megabytes of cubins), where
# later commands (a second bench, ncu through gemm_bench) still find it.
cache_home="$build/check-cache"
tune_db="$build/check.db"

for step in "${steps[@]}"; do
  t0=$(date +%s)
  if [ "$(capped 1000)" -lt 30 ]; then
    note "$step" "skipped: CHECK_BUDGET spent"
    continue
  fi
  case "$step" in
    dropin-*)
      if [ ! -f "$build/dropin/libgemmtune_cublas.so" ]; then
        why=$(grep -m1 'drop-in' "$out/configure.log" 2>/dev/null)
        note "$step" "FAILED: the drop-in was not built (${why:-no $build/dropin/libgemmtune_cublas.so; run the build step})"
        continue
      fi ;;&
    build)
      args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
      if [ ! -f /usr/include/sqlite3.h ] && [ -f "$root/.devdeps/include/sqlite3.h" ]; then
        lib=$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so* 2>/dev/null | head -1)
        args+=(-DSQLite3_INCLUDE_DIR="$root/.devdeps/include" -DSQLite3_LIBRARY="$lib")
      fi
      command -v nvcc >/dev/null || args+=(-DCUDAToolkit_ROOT=/usr/local/cuda)
      # No network here: the pinned NVRTC 13.5 and CUTLASS come from wheels carried along, or from
      # a build tree's deps folder packed with xz.
      if [ -f "$root/.devdeps/deps.tar.xz" ] && [ ! -f "$build/deps/nvrtc/.pinned" ]; then
        mkdir -p "$build" && tar -xJf "$root/.devdeps/deps.tar.xz" -C "$build"
      fi
      if [ -d "$root/.devdeps/wheels" ]; then
        GEMMTUNE_WHEELS="$root/.devdeps/wheels" "$root/scripts/fetch-deps.sh" "$build/deps" 2>&1 | tee "$out/fetch-deps.log"
      fi
      if cmake -S "$root" -B "$build" -G Ninja "${args[@]}" >"$out/configure.log" 2>&1 &&
         timeout "$(capped 600)" cmake --build "$build" --parallel "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} >"$out/build.log" 2>&1; then
        note build "ok ($(elapsed $t0))"
      else
        tail -30 "$out/configure.log" "$out/build.log"
        note build "FAILED (see build.log)"
        break
      fi
      # Which NVRTC compiles the kernels (the pinned 13.5, or a fallback), into the summary.
      note nvrtc "$("$build/cli/gemmtune" --version 2>&1 | grep -m1 '^NVRTC' || echo 'gemmtune --version failed')"
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$out/gpu.txt" 2>&1
      ;;
    cpu-tests)
      (cd "$build" && ctest --no-tests=error -LE gpu --parallel "$(nproc)" --timeout 900 --output-on-failure >"$out/ctest-cpu.log" 2>&1)
      note cpu-tests "$(grep -E 'tests passed|tests failed' "$out/ctest-cpu.log" | tail -1) ($(elapsed $t0))"
      ;;
    gpu-tests)
      # One at a time: GPU tests time kernels and must not share the GPU. The suite (about 430 s)
      # and a fresh machine's build (about 130 s) do not fit one call's budget: the names of the
      # tests that passed stay in $build (and come back as passed.txt), and GPU_TESTS_RESUME=1 on
      # the next call runs only the others (on a fresh machine: GPU_TESTS_PASSED=that passed.txt).
      passed="$build/gpu-tests-passed.txt"
      [ "${GPU_TESTS_RESUME:-0}" = 1 ] || rm -f "$passed"
      # Tests that passed on another source tree do not count for this one. A list carried from an
      # earlier call (GPU_TESTS_PASSED: its passed.txt from logs.tgz) counts on a fresh machine too,
      # whose build has work to do from scratch: the tree decides, not the build.
      tree=$(tree_fingerprint)
      if [ "${GPU_TESTS_RESUME:-0}" = 1 ] && [ -s "${GPU_TESTS_PASSED:-}" ] && [ ! -s "$passed" ]; then
        cp "$GPU_TESTS_PASSED" "$passed"
      fi
      [ -s "$passed" ] && [ "$(head -1 "$passed")" != "# tree $tree" ] && rm -f "$passed"
      [ -s "$passed" ] || echo "# tree $tree" >"$passed"
      skip=$(sed '1d; s/[][\\.*^$+?(){}|]/\\&/g' "$passed" | paste -sd'|')
      (cd "$build" && timeout "$(capped "${GPU_TESTS_TIMEOUT:-900}")" ctest --no-tests=error -L gpu -R "${GPU_TESTS_REGEX:-.}" \
        ${skip:+-E "^(${skip})\$"} --timeout 300 --output-on-failure >"$out/ctest-gpu.log" 2>&1)
      before=$(( $(wc -l <"$passed") - 1 ))
      sed -nE 's/.*Test +#[0-9]+: ([^ ]+) \.+ +Passed.*/\1/p' "$out/ctest-gpu.log" >>"$passed"
      cp "$passed" "$out/passed.txt"
      if [ -n "$skip" ] && grep -q 'No tests were found' "$out/ctest-gpu.log"; then
        note gpu-tests "none left: all $before passed in earlier calls"
      else
        note gpu-tests "$(grep -E 'tests passed|tests failed' "$out/ctest-gpu.log" | tail -1 || echo 'cut short:'); $(( $(wc -l <"$passed") - 1 )) passed over the calls ($before before this one) ($(elapsed $t0))"
      fi
      grep -E '^\s+[0-9]+ - .*\(Failed|Timeout|SEGFAULT|Subprocess' "$out/ctest-gpu.log" | head -20
      ;;
    compile-bench)
      timeout "$(capped 300)" "$build/bench/compile_throughput" --jobs "$(nproc)" >"$out/compile-bench.txt" 2>&1
      cat "$out/compile-bench.txt"
      note compile-bench "$(tail -2 "$out/compile-bench.txt" | awk '{printf "%s %s/s  ", $1, $6}')"
      ;;
    tune)
      export GEMMTUNE_DB="$tune_db" XDG_CACHE_HOME="$cache_home"
      # A database or compile cache kept from an earlier check would make the cold pass warm.
      # TUNE_KEEP=1 adds to the database of an earlier tune step (another layout or batch).
      [ -n "${TUNE_KEEP:-}" ] || rm -rf "$tune_db" "$tune_db-wal" "$tune_db-shm" "$cache_home"
      for pass in ${TUNE_PASSES:-cold warm}; do
        t1=$(date +%s)
        timeout "$(capped "${TUNE_TIMEOUT:-300}")" "$build/cli/gemmtune" tune --gpu auto --sizes "${TUNE_SIZES:-1024..8192}" \
          --families "${TUNE_FAMILIES:-all}" ${TUNE_ARGS:-} >"$out/tune-$pass.txt" \
          2> >(while IFS= read -r l; do echo "$EPOCHREALTIME $l"; done >"$out/tune-$pass.log")  # when each line came
        rc=$?
        note "tune ($pass)" "rc=$rc $(elapsed $t1)"
      done
      cat "$out/tune-cold.txt"; tail -5 "$out/tune-cold.log"
      # Wrong results are recorded, never best; their details say which layout and element failed.
      "$build/cli/gemmtune" results --db "$tune_db" --status wrong_result --json >"$out/tune-wrong.txt" 2>&1
      grep -oE "\"(instance|error_text|max_error)\": *\"[^\"]*\"|\"max_error\": *[0-9.e+-]*" "$out/tune-wrong.txt" | head -40
      ;;
    fresh)
      # Issue 11's reproducibility: FRESH_RUNS (default 2) more `tune --fresh` runs on the tune
      # step's database and compile cache (every candidate timed again), then each size's winner
      # per run, the tune step's cold run first.
      export GEMMTUNE_DB="$tune_db" XDG_CACHE_HOME="$cache_home"
      runs=("$out/tune-cold.txt")
      for i in $(seq 1 "${FRESH_RUNS:-2}"); do
        t1=$(date +%s)
        timeout "$(capped "${TUNE_TIMEOUT:-300}")" "$build/cli/gemmtune" tune --gpu auto --sizes "${TUNE_SIZES:-1024..8192}" \
          --families "${TUNE_FAMILIES:-all}" --fresh ${TUNE_ARGS:-} >"$out/tune-fresh$i.txt" 2>"$out/tune-fresh$i.log"
        note "tune --fresh $i" "rc=$? $(elapsed $t1)"
        runs+=("$out/tune-fresh$i.txt")
      done
      python3 "$root/scripts/tune-winners.py" "${runs[@]}" | tee "$out/fresh-winners.txt"
      ;;
    bench)
      # Needs the tune step's database (this run's, or the one a previous check kept).
      if [ ! -x "$build/bench/gemm_bench" ]; then
        note bench "not built"
      elif [ ! -f "$tune_db" ]; then
        note bench "skipped: no $tune_db (run the tune step first)"
      else
        XDG_CACHE_HOME="$cache_home" timeout "$(capped "${BENCH_TIMEOUT:-900}")" "$build/bench/gemm_bench" --db "$tune_db" \
          --csv "$out/bench.csv" ${BENCH_ARGS:-} >"$out/bench.txt" 2>"$out/bench.log"
        rc=$?
        cat "$out/bench.txt"; tail -5 "$out/bench.log"
        note bench "rc=$rc ($(elapsed $t0))"
      fi
      ;;
    search-quality)
      timeout "$(capped "${SQ_TIMEOUT:-900}")" "$build/bench/search_quality" --families "${SQ_FAMILIES:-blocktile1d}" \
        --sizes "${SQ_SIZES:-1024..8192}" ${SQ_ARGS:-} >"$out/search-quality.txt" 2>&1
      note search-quality "rc=$? ($(elapsed $t0))"
      cat "$out/search-quality.txt"
      ;;
    multi-gpu-one|multi-gpu)
      # Issue 15, on a host with several GPUs: `multi-gpu-one` tunes GPU 0 alone from an empty
      # cache and database (the baseline); `multi-gpu` tunes every GPU the same way (identical
      # GPUs split the candidates), then kill -9s GPU 1's worker mid-run in a third run (warm
      # cache, new database) and asks `query --gpu 1`. MG_SIZES, MG_FAMILIES narrow them.
      gpus=$([ "$step" = multi-gpu-one ] && echo 0 || echo all)
      mg="$build/mg-$gpus"
      rm -rf "$mg" && mkdir -p "$mg"
      t1=$(date +%s)
      XDG_CACHE_HOME="$mg/cache" timeout "$(capped 540)" "$build/cli/gemmtune" tune --gpu "$gpus" \
        --sizes "${MG_SIZES:-1024..8192}" --families "${MG_FAMILIES:-all}" --db "$mg/tune.db" \
        >"$out/mg-$gpus.txt" 2> >(while IFS= read -r l; do echo "$EPOCHREALTIME $l"; done >"$out/mg-$gpus.log")
      note "tune --gpu $gpus" "rc=$? $(elapsed $t1) cold"
      cat "$out/mg-$gpus.txt"
      if [ "$step" = multi-gpu ]; then
        "$build/cli/gemmtune" results --db "$mg/tune.db" --status ok --json >"$out/mg-results.json" 2>&1
        python3 -c 'import json,sys,collections; rows=json.load(open(sys.argv[1])); print("ok rows per GPU:", dict(collections.Counter(r["gpu_uuid"][:12] for r in rows)))' "$out/mg-results.json" | tee "$out/mg-per-gpu.txt"
        note "rows per GPU" "$(cat "$out/mg-per-gpu.txt")"
        "$build/cli/gemmtune" results --db "$mg/tune.db" --status ok | head -12
        for g in 0 1; do
          "$build/cli/gemmtune" query --db "$mg/tune.db" --gpu $g --size 4096 >"$out/mg-query-$g.txt" 2>&1
          note "query --gpu $g" "rc=$? $(head -1 "$out/mg-query-$g.txt")"
        done
        # kill -9 of one worker mid-run: its GPU's worker restarts, the other GPU goes on.
        [ "${MG_KILL:-1}" = 1 ] || continue
        t1=$(date +%s)
        XDG_CACHE_HOME="$mg/cache" timeout "$(capped 300)" "$build/cli/gemmtune" tune --gpu all \
          --sizes "${MG_SIZES:-1024..8192}" --families "${MG_FAMILIES:-all}" --db "$mg/kill.db" \
          >"$out/mg-kill.txt" 2>"$out/mg-kill.log" &
        tunepid=$!
        sleep "${MG_KILL_AFTER:-20}"
        victim=$(pgrep -f "worker --gpu 1" | head -1)
        [ -n "$victim" ] && kill -9 "$victim"
        wait $tunepid
        note "kill -9 worker" "pid ${victim:-none}: tune rc=$? $(elapsed $t1); $(grep -c 'measuring it again' "$out/mg-kill.log") re-measured"
        grep -E "worker|again|dropped" "$out/mg-kill.log" | head -5
        grep -E "size\(s\) in" "$out/mg-kill.txt"
        "$build/cli/gemmtune" results --db "$mg/kill.db" --status worker_died 2>&1 | head -3
      fi
      ;;
    shapes)
      # Issue 12: tune a workload (SHAPES, default bench/shapes/mixed.txt; SHAPES_FAMILIES), then
      # gemm_bench on it and on SHAPES_UNTUNED (lists the tune never saw: the library chooses
      # from the tuned shapes). The database stays beside the build (shapes.db).
      export XDG_CACHE_HOME="$cache_home"
      shapes_file=${SHAPES:-$root/bench/shapes/mixed.txt}
      sdb="$build/shapes.db"
      rm -f "$sdb" "$sdb-wal" "$sdb-shm"
      t1=$(date +%s)
      timeout "$(capped "${SHAPES_TIMEOUT:-300}")" "$build/cli/gemmtune" tune --gpu auto --shapes "$shapes_file" \
        --families "${SHAPES_FAMILIES:-all}" --db "$sdb" ${TUNE_ARGS:-} >"$out/shapes-tune.txt" \
        2> >(while IFS= read -r l; do echo "$EPOCHREALTIME $l"; done >"$out/shapes-tune.log")
      note "tune --shapes" "rc=$? $(elapsed $t1) $(basename "$shapes_file")"
      tail -n 80 "$out/shapes-tune.txt"; tail -3 "$out/shapes-tune.log"
      for list in "$shapes_file" ${SHAPES_UNTUNED:-}; do
        name=$(basename "$list" .txt)
        t1=$(date +%s)
        XDG_CACHE_HOME="$cache_home" timeout "$(capped "${BENCH_TIMEOUT:-400}")" "$build/bench/gemm_bench" --db "$sdb" \
          --shapes "$list" --rounds "${SHAPES_ROUNDS:-3}" --budget-ms "${SHAPES_BUDGET_MS:-40}" --csv "$out/shapes-$name.csv" >"$out/shapes-bench-$name.txt" \
          2>"$out/shapes-bench-$name.log"
        note "bench $name" "rc=$? $(elapsed $t1) $(grep -o 'geometric mean.*' "$out/shapes-bench-$name.txt")"
        cat "$out/shapes-bench-$name.txt"; tail -3 "$out/shapes-bench-$name.log"
      done
      ;;
    untuned)
      # Issue 28: sgemm() on shapes the tune step never measured (UNTUNED, default
      # bench/shapes/untuned-28.txt), beside cuBLAS and beside sgemm() with cuBLAS excluded.
      list=${UNTUNED:-$root/bench/shapes/untuned-28.txt}
      untuned_runs=$(( ${untuned_runs:-0} + 1 ))  # a second run (after seen-tune) keeps its own files
      name=$(basename "$list" .txt)-$untuned_runs
      XDG_CACHE_HOME="${UNTUNED_CACHE:-$cache_home}" timeout "$(capped "${BENCH_TIMEOUT:-400}")" "$build/bench/gemm_bench" \
        --db "${UNTUNED_DB:-$tune_db}" --shapes "$list" --columns cublas,library,ours --rounds "${SHAPES_ROUNDS:-3}" --budget-ms "${SHAPES_BUDGET_MS:-40}" \
        --csv "$out/untuned-$name.csv" >"$out/untuned-$name.txt" 2>"$out/untuned-$name.log"
      note "untuned $name" "rc=$? $(elapsed $t0)"
      while IFS= read -r l; do note "" "${l#  geometric mean }"; done < <(grep -E 'geometric mean' "$out/untuned-$name.txt")
      cat "$out/untuned-$name.txt"; tail -3 "$out/untuned-$name.log"
      ;;
    model-error)
      # Issue 28: the family model's error on held-out rows of the tune step's database.
      "$build/bench/model_error" "$tune_db" >"$out/model-error.txt" 2>&1
      note model-error "rc=$? $(grep -m1 -F '(all families)' "$out/model-error.txt")"
      cat "$out/model-error.txt"
      ;;
    seen-tune)
      # Issue 28: tune what the library recorded as served without a tuned row (an untuned step
      # before records its shapes), SEEN_FAMILIES (default cutlass,thin,cublas), SEEN_ARGS.
      export XDG_CACHE_HOME="$cache_home"
      "$build/cli/gemmtune" seen --db "$tune_db" --limit 5 >"$out/seen.txt" 2>&1
      t1=$(date +%s)
      timeout "$(capped "${SEEN_TIMEOUT:-420}")" "$build/cli/gemmtune" tune --gpu auto --seen --db "$tune_db" \
        --families "${SEEN_FAMILIES:-cutlass,thin,cublas}" ${SEEN_ARGS:-} >"$out/seen-tune.txt" \
        2> >(while IFS= read -r l; do echo "$EPOCHREALTIME $l"; done >"$out/seen-tune.log")
      note "tune --seen" "rc=$? $(elapsed $t1) $(grep -c . "$out/seen.txt") lines of seen"
      cat "$out/seen.txt"; tail -4 "$out/seen-tune.txt"
      ;;
    dropin-memcheck)
      # Issue 30: compute-sanitizer memcheck on a program written against cuBLAS with the drop-in
      # preloaded and serving every call it can (GEMMTUNE_CUBLAS=always).
      GEMMTUNE_DB="$build/dropin-memcheck.db" GEMMTUNE_SYSTEM_DB="" GEMMTUNE_CUBLAS=always \
        LD_PRELOAD="$build/dropin/libgemmtune_cublas.so" timeout "$(capped 300)" \
        compute-sanitizer --tool memcheck "$build/tests/gemmtune_dropin_cublas_program" >"$out/dropin-memcheck.txt" 2>&1
      note dropin-memcheck "rc=$? $(grep -m1 'ERROR SUMMARY' "$out/dropin-memcheck.txt") $(grep -m1 'served by' "$out/dropin-memcheck.txt" | sed 's/.*calls, //')"
      ;;
    python | python-tune | python-bench)
      # Issue 31 (scripts/python-check.sh): python: `pip install .` offline and every test under
      # python/tests; python-tune: tune bench/python's MLP shapes; python-bench: its targets.
      "$root/scripts/python-check.sh" "${step#python-}" "$build" "$out" "$(capped 500)" >"$out/$step.txt" 2>&1
      note "$step" "rc=$?"
      while IFS= read -r l; do note "" "$l"; done < <(grep -E '^(=+ .* in |pip install|example rc|overhead|4096:|MLP|NVIDIA.*wall)' "$out/$step.txt")
      tail -50 "$out/$step.txt"
      ;;
    dropin-overhead)
      # Issue 30: host time per call of the drop-in over Library::sgemm() (target: at most 1 us).
      GEMMTUNE_DB="$build/dropin-overhead.db" GEMMTUNE_SYSTEM_DB="" timeout "$(capped 120)" \
        "$build/bench/dropin_overhead" >"$out/dropin-overhead.txt" 2>&1
      note dropin-overhead "rc=$? $(grep -m1 'overhead' "$out/dropin-overhead.txt")"
      cat "$out/dropin-overhead.txt"
      ;;
    dropin-demo)
      # Issue 30: the unchanged PyTorch training script through the drop-in (scripts/dropin-demo.sh).
      OUT="$out/dropin-demo" timeout "$(capped 500)" "$root/scripts/dropin-demo.sh" "$build" >"$out/dropin-demo.txt" 2>&1
      note dropin-demo "rc=$?"
      while IFS= read -r l; do note "" "$l"; done < <(grep -E '^(off|measured|step time|tune|gemmtune drop-in)' "$out/dropin-demo.txt")
      cat "$out/dropin-demo.txt"
      ;;
    report)
      "$build/cli/gemmtune" report --db "$tune_db" -o "$out/report.html" >"$out/report.log" 2>&1
      note report "rc=$? ($(wc -c <"$out/report.html" 2>/dev/null || echo 0) bytes)"
      ;;
    *) echo "unknown step $step" >&2 ;;
  esac
done

gpuline=$(head -2 "$out/gpu.txt" 2>/dev/null | tail -1)
# Everything but the summary goes into one archive (fewer files to carry back).
(cd "$out" && tar czf logs.tgz --exclude=logs.tgz ./* 2>/dev/null &&
  find . -maxdepth 1 -type f ! -name logs.tgz ! -name bench.csv -delete)
echo
echo "== summary ($gpuline) =="
printf '%s\n' "${summary[@]}"
