#!/usr/bin/env bash
# The GPU check of fltheory, one command on a machine with CuPy and a GPU (about 7 minutes; BUDGET=seconds, 420, of which
# pytest may use all but RESERVE=270 and the benchmarks share the rest, each cut at its own limit or the budget's end):
#   1. every test that runs on a backend, on CuPy (the xp fixture's cupy cases);
#   2. the GPU benchmarks beside NumPy on the same machine: the batched simulator, the closed-form fixed
#      points, keyed noise, statement grids and one batched deep search (FedDelAvg's asymptotic_gap).
# It runs where no package can be downloaded: array-api-compat, the one requirement such a machine may lack,
# is installed from wheels in .whl/ when that folder exists (see benchmarks/README.md, "GPU check").
# Logs go to $OUT (default: a temporary folder); the summary is printed at the end.
set -u
start=$(date +%s)
OUT=${OUT:-$(mktemp -d)}
cd "$(dirname "$0")/.."
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/fltheory-site .whl/*.whl || exit 3
    export PYTHONPATH=/tmp/fltheory-site:$PWD/src
else
    export PYTHONPATH=$PWD/src
fi
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import cupy, numpy, scipy, sympy, array_api_compat; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'sympy', sympy.__version__, 'array-api-compat', array_api_compat.__version__)" || exit 3
left() { echo $(( ${BUDGET:-420} - ($(date +%s) - start) )); }
# cap N: N seconds, or what is left of the budget if less (at least 1): the steps after pytest share the rest
cap() { local l=$(( $(left) - 2 )); if [ "$l" -lt "$1" ]; then echo $(( l > 1 ? l : 1 )); else echo "$1"; fi; }

echo "=== pytest on CuPy (the xp fixture's cupy cases)"
# in parallel where pytest-xdist is there (compiling CuPy's kernels is CPU work); SIGINT at the deadline, so pytest
# still prints what passed and failed
if python3 -c "import xdist" 2>/dev/null; then par="-n 8"; else par=""; fi
# (test_notebooks.py needs nbformat, which such a machine may lack; it has no CuPy case)
timeout -s INT $(( $(left) - ${RESERVE:-270} )) python3 -m pytest tests -k cupy -q -rA -p no:cacheprovider -o addopts="" $par \
    --ignore=tests/test_notebooks.py -W ignore::DeprecationWarning > "$OUT/pytest_cupy.log" 2>&1
echo "pytest exit $?"; grep -E "^(FAILED|ERROR)" "$OUT/pytest_cupy.log" | head -30; tail -1 "$OUT/pytest_cupy.log"

cd benchmarks
echo "=== keyed noise, statement grids, the simulator three ways (whole-round kernel, one kernel per round, array code)"
timeout $(cap 200) python3 bench_gpu.py --B 100000 --n 1000000 --repeats 3 2>&1 | tee "$OUT/bench_gpu.log"
echo "=== closed-form fixed points"
timeout $(cap 50) python3 bench_fixed_points.py --backend cupy --B 100000 --repeats 2 --profile 2>&1 | tee "$OUT/bench_fp.log"
timeout $(cap 30) python3 bench_fixed_points.py --backend numpy --B 10000 --repeats 2 2>&1 \
    | tee -a "$OUT/bench_fp.log"
echo "=== the simulator against its loop; NumPy on this machine's CPUs"
timeout $(cap 40) python3 bench_simulator.py --backend cupy --B 100000 --M 10 --d 16 --tau 5 --rounds 20 --client-opt sgd \
    --correction none --sigma2 0.1 --loop-configs 1 --repeats 3 2>&1 | tee "$OUT/bench_sim.log"
timeout $(cap 40) python3 bench_simulator.py --backend numpy --B 2000 --M 10 --d 16 --tau 5 --rounds 20 --client-opt sgd \
    --correction none --sigma2 0.1 --loop-configs 1 --repeats 2 2>&1 | tee -a "$OUT/bench_sim.log"
echo "=== the batched deep search of one check on CuPy, then on NumPy (each beside the search one instance at a time)"
timeout $(cap 60) python3 bench_deep_search.py --backend cupy --only asymptotic_gap 2>&1 | tee "$OUT/bench_deep.log"
timeout $(cap 40) python3 bench_deep_search.py --backend numpy --only asymptotic_gap 2>&1 | tee -a "$OUT/bench_deep.log"
echo "=== done in $(( $(date +%s) - start )) s"
