#!/usr/bin/env bash
# The 2% rule of a refactor (issue 57: benches within 2% of before, same device run, alternating
# binaries): every criterion bench of .gpu/ab.txz (`BASE_REV=<rev> bash
# benches/stage-device-bundle.sh ab`, carry [".gpu/ab.txz"]) run from the base revision's
# build and this one's, alternated ROUNDS times (default 2), then benches/ab_compare.py: each
# benchmark's median time now ÷ base, the geomean per bench, and the ones past LIMIT (2%).
# Knobs: ONLY=<regex of bench names>, FILTER=<criterion id regex> (criterion benches only run
# the ids it matches; the table-printing benches of spmv, csrc and svd ignore it), ROUNDS, LIMIT
# (percent), MEASURE_S (criterion measurement time, default 1.5), PER_RUN_S (timeout of one
# bench run, default 120). Raw output and the table in $OUT (ab.tgz); ab_compare.py reads
# criterion's estimates and the other benches' markdown tables alike.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd "$(dirname "$0")/.."
[ -d .gpu/ab/new ] || tar xJf .gpu/ab.txz -C .gpu || exit 1
[ -d .gpu/ab/base ] || { echo "no base build in .gpu/ab.txz (stage it with BASE_REV=<rev>)" >&2; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
echo "base $(cat .gpu/ab/base/REV), new $(cat .gpu/ab/new/REV)" | tee "$OUT/revisions.txt"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for b in .gpu/ab/new/*; do
    name=$(basename "$b")
    [ "$name" = REV ] && continue
    [ -n "${ONLY:-}" ] && ! echo "$name" | grep -qE "$ONLY" && continue
    for side in base new; do
      timeout "${PER_RUN_S:-120}" ".gpu/ab/$side/$name" --bench --noplot --warm-up-time 0.5 --measurement-time "${MEASURE_S:-1.5}" ${FILTER:+"$FILTER"} \
        > "$OUT/$name-$side-$round.txt" 2>&1
      echo "$name $side round $round rc=$?"
    done
  done
done
python3 benches/ab_compare.py --limit "${LIMIT:-2}" "$OUT" | tee "$OUT/ab.md"
tar czf "$OUT/ab.tgz" -C "$OUT" --exclude ab.tgz . 2>/dev/null && find "$OUT" -maxdepth 1 -name '*-base-*.txt' -delete && find "$OUT" -maxdepth 1 -name '*-new-*.txt' -delete
