#!/usr/bin/env bash
# On the GPU machine: install the wheel carried in .whl/ (with pytest), run the package's tests
# with SPTRANS_REQUIRE_GPU=1, a compute-sanitizer memcheck of a small session, then the
# benchmark. Usage: bash python/benchmarks/device-run.sh [bench args...]; writes under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
# The machine's python has pytest (with plugins): install only our wheel unless pytest is missing.
if python3 -c "import pytest" 2>/dev/null; then WHEELS=".whl/sptrans_gpu-*.whl"; else WHEELS=".whl/*.whl"; fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $WHEELS || exit 1
export PYTHONPATH=/tmp/site NCCL_NVLS_ENABLE=0
rm -rf /tmp/pytests && cp -r python/tests /tmp/pytests
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
(cd /tmp/pytests && SPTRANS_REQUIRE_GPU=1 python3 -m pytest -q -rs -p no:cacheprovider . 2>&1) | tee "$OUT/pytest.log" | tail -25
if [ "${SANITIZE:-1}" = 1 ]; then
  cat > /tmp/pytests/small.py <<'PY'
import numpy as np, cupy as cp, cupyx.scipy.sparse as csp, scipy.sparse as sp, sptrans
a = sp.random(3001, 2003, density=0.01, random_state=1, format="csr")
d = csp.csr_matrix(a)
t = sptrans.transpose(d)
op = sptrans.Operator(d)
y = op.T @ cp.ones((3001, 4), order="F")
s = sptrans.linalg.svds(d, k=4, return_singular_vectors=False)
cp.cuda.Device().synchronize()
print("ok", float(s[-1]))
PY
  (cd /tmp/pytests && compute-sanitizer --tool memcheck --report-api-errors no python3 small.py 2>&1) | tee "$OUT/memcheck.log" | tail -4
fi
if [ "${OVERHEAD:-1}" = 1 ]; then
  python3 python/benchmarks/overhead.py 2>&1 | tee "$OUT/overhead.log" | head -60
fi
if [ "${BENCH:-1}" = 1 ]; then
  PYTHONUNBUFFERED=1 python3 python/benchmarks/bench.py --out "$OUT/python-bench.json" "$@" 2>&1 | tee "$OUT/bench.log"
fi
