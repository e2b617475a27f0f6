#!/usr/bin/env bash
# The truncated SVD on the GPU host, one call (issue 56): the realistic suite against CuPy's
# `svds` and `torch.svd_lowrank` and the scaling in nonzeros (`benches/peers/svd_suite.py`,
# through the Python package), and optionally the Rust bench's methods table.
# Here: `(cd python && maturin build --release -o ../.whl)`; carry [".whl"] (ignored, so named);
# for PART=rust also `bash benches/stage-device-bundle.sh svd` and carry ".gpu/bundle.tgz"
# (BASE=<an earlier build's bench executable, carried too>: the two alternated, twice).
# There: `bash benches/svd-device-run.sh`; knobs: PART (suite,scaling,floor,rust; default
# suite,scaling), KS (default 16,50,100,300), SCALE (the suite's size factor, default 1),
# ONLY (suite matrices), SCALING (millions of nonzeros, default 25,100,250,1000), SCALING_KINDS
# (structures: uniform, graph, text; default uniform), SCALING_K (50), SCALING_BLOCKS (Lanczos block sizes tried besides the default, each optionally with a
# layout: 8,16,8:pair,16:pair; any pair adds the randomized method on the pair), PRODUCTS (k
# values: A@X and A.T@Y of each scaling matrix, ours against CuPy, and a copy), PEER_BUDGET_S
# (60). PART=floor adds the wide-products floor study (benches/peers/wide_products_floor.py;
# FLOOR_NNZ_M (250), FLOOR_KS (8,16), FLOOR_PANELS (2,4)). PART=profile runs the CLI's
# `svd --profile` (time per phase and per GPU operation) on the scaling matrix of PROFILE_NNZ_M
# millions of nonzeros (250) written as .npz, once per PROFILE_RUNS entry `block:layout`
# `block:layout[:krylov]` (default 8:pair,8:csrc; needs the CLI: carry .gpu/tests.txz too). Tables, CSV and the SVG plot
# in $OUT (svd.tgz).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PART=${PART:-suite,scaling}
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/sptrans_gpu-*.whl || exit 1
export PYTHONPATH=/tmp/site
args=(--ks "${KS:-16,50,100,300}" --scale "${SCALE:-1}" --peer-budget-s "${PEER_BUDGET_S:-60}" --scaling-k "${SCALING_K:-50}")
[[ ,$PART, == *,suite,* ]] || args+=(--only none)
[ -n "${ONLY:-}" ] && args+=(--only "$ONLY")
[[ ,$PART, == *,scaling,* ]] && args+=(--scaling "${SCALING:-25,100,250,1000}" --scaling-kinds "${SCALING_KINDS:-uniform}" --scaling-blocks "${SCALING_BLOCKS:-}" --products "${PRODUCTS:-}")
if [[ ,$PART, == *,suite,* || ,$PART, == *,scaling,* ]]; then
  python3 benches/peers/svd_suite.py "${args[@]}" --csv "$OUT/svd-suite.csv" --svg "$OUT/svd-suite.svg" 2>&1 | tee "$OUT/svd-suite.md"
fi
if [[ ,$PART, == *,floor,* ]]; then
  python3 benches/peers/wide_products_floor.py --nnz-m "${FLOOR_NNZ_M:-250}" --ks "${FLOOR_KS:-8,16}" --panels "${FLOOR_PANELS:-2,4}" 2>&1 | grep -v Warning | tee "$OUT/wide-floor.md"
fi
if [[ ,$PART, == *,profile,* ]]; then
  [ -x .gpu/t/sptrans ] || { mkdir -p .gpu/t && tar xJf .gpu/tests.txz -C .gpu/t; } || exit 1
  mtx=/tmp/svd-profile-${PROFILE_NNZ_M:-250}m.npz
  [ -f "$mtx" ] || python3 - "$mtx" "${PROFILE_NNZ_M:-250}" <<'PY' || exit 1
import sys
import scipy.sparse as sp
sys.path.insert(0, "benches/peers")
from svd_suite import Gpu, uniform
nnz = int(sys.argv[2]) * 1_000_000
m = nnz // 100
sp.save_npz(sys.argv[1], uniform(Gpu(), m, max(51, m // 10), 100, 11).get(), compressed=False)
PY
  for run in ${PROFILE_RUNS:-8:pair 8:csrc}; do
    IFS=: read -r blk lay kry <<< "$run"
    extra=(); [ -n "$kry" ] && extra=(--krylov "$kry")
    echo "## sptrans svd -k ${SCALING_K:-50} --block $blk --layout $lay ${extra[*]} --profile"
    t0=$(date +%s.%N)
    .gpu/t/sptrans svd "$mtx" -k "${SCALING_K:-50}" --block "$blk" --layout "$lay" "${extra[@]}" --profile -o /dev/null 2>&1 | grep -vE "^ +[0-9]+ +[0-9]"
    echo "the whole command (reading the .npz included): $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s"
  done 2>&1 | tee "$OUT/svd-profile.md"
fi
if [[ ,$PART, == *,rust,* ]]; then
  [ -x .gpu/svd ] || tar xzf .gpu/bundle.tgz -C .gpu
  if [ -n "${BASE:-}" ]; then
    # A/B against an earlier build of the bench (BASE=<its executable>), alternated twice.
    for i in 1 2; do
      SPTRANS_SVD_SUITE=methods "$BASE" > "$OUT/svd-methods-base-$i.md" 2>&1
      SPTRANS_SVD_SUITE=methods .gpu/svd > "$OUT/svd-methods-$i.md" 2>&1
    done
    tail -n 30 "$OUT"/svd-methods-*.md
  else
    SPTRANS_SVD_SUITE=methods .gpu/svd 2>&1 | tee "$OUT/svd-methods.md"
  fi
fi
tar czf "$OUT/svd.tgz" -C "$OUT" --exclude svd.tgz . 2>/dev/null
