#!/usr/bin/env bash
# gpu-radix against CUB's own DeviceRadixSort, in one device run (issue 55): the same cases
# (keys alone and u32 pairs; 24- and 32-bit keys sorting only those bits; 2^20, 2^24, 2^26; out
# of place, no restoring copy on either side), then ncu pass by pass for one case of each.
# Stage here:
#   cargo bench -p gpu-radix --bench radix_vs_cub --no-run --message-format=json  (the executable
#   to .gpu/radix_vs_cub; or `bash benches/stage-device-bundle.sh radix`)
# Device call, carry [".gpu/radix_vs_cub"]:
#   bash benches/radix-device-run.sh      # PART=time|ncu|stalls|all (default all: time, ncu);
#                                         # CASE=pairs,32,26;
#                                         # BASE=<executable>: an earlier build of the bench,
#                                         # alternated with ours and CUB (its column base_ms)
# Writes $OUT/radix-vs-cub.csv (what,keys_bits,n,ours_ms,cub_ms,speed_vs_cub: CUB's time ÷ ours), the raw CSVs,
# and $OUT/ncu-{ours,cub}.csv (per kernel: duration, DRAM bytes and throughput, warps active).
# PART=stalls: one middle pass of ours and of CUB's onesweep with ncu's warp-state, scheduler
# and source sections (stall reasons by SASS line, $OUT/stalls-{ours,cub}.txt and the
# .ncu-rep reports): where the pass spends its issue slots (issue 55's next step).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PART=${PART:-all}
CASE=${CASE:-pairs,32,26}
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
nvcc -O3 -std=c++17 -arch="$arch" -o /tmp/cub_sort benches/peers/cub_sort.cu 2> "$OUT/nvcc.log" || { cat "$OUT/nvcc.log"; exit 1; }
if [ "$PART" = all ] || [ "$PART" = time ]; then
  # Alternated, twice each: ours, CUB, ours, CUB (the better of each side's two runs is kept).
  for i in 1 2; do
    if [ -n "${BASE:-}" ]; then
      "$BASE" > "$OUT/base-$i.csv" 2> "$OUT/base-$i.err" || { cat "$OUT/base-$i.err"; exit 1; }
    fi
    .gpu/radix_vs_cub > "$OUT/ours-$i.csv" 2> "$OUT/ours-$i.err" || { cat "$OUT/ours-$i.err"; exit 1; }
    /tmp/cub_sort > "$OUT/cub-$i.csv" 2> "$OUT/cub-$i.err" || { cat "$OUT/cub-$i.err"; exit 1; }
  done
  cat "$OUT/ours-1.err" "$OUT/cub-1.err"
  python3 - "$OUT" <<'PY'
import csv, sys, os
out = sys.argv[1]
def best(prefix, col):
    b = {}
    for i in (1, 2):
        for r in csv.DictReader(open(os.path.join(out, f"{prefix}-{i}.csv"))):
            k = (r["what"], r["keys_bits"], r["n"])
            b[k] = min(b.get(k, 1e30), float(r[col]))
    return b
ours, cub = best("ours", "ours_ms"), best("cub", "cub_ms")
base = best("base", "ours_ms") if os.path.exists(os.path.join(out, "base-1.csv")) else None
with open(os.path.join(out, "radix-vs-cub.csv"), "w") as f:
    f.write("what,keys_bits,n,ours_ms,cub_ms,speed_vs_cub" + (",base_ms,base_speed_vs_cub" if base else "") + "\n")
    for k in sorted(ours, key=lambda k: (k[0], int(k[1]), int(k[2]))):
        if k in cub:
            extra = f",{base[k]:.4f},{cub[k] / base[k]:.3f}" if base and k in base else ""
            f.write(f"{k[0]},{k[1]},{k[2]},{ours[k]:.4f},{cub[k]:.4f},{cub[k] / ours[k]:.3f}{extra}\n")
print(open(os.path.join(out, "radix-vs-cub.csv")).read())
PY
fi
if [ "$PART" = all ] || [ "$PART" = ncu ]; then
  IFS=, read -r what bits logn <<< "$CASE"
  m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,launch__registers_per_thread,launch__block_size,launch__grid_size
  RADIX_CASE=$CASE RADIX_REPS=1 ncu --metrics "$m" --csv --kernel-name regex:radix_ --launch-skip 0 --launch-count 12 .gpu/radix_vs_cub > "$OUT/ncu-ours.csv" 2> "$OUT/ncu-ours.err"
  ncu --metrics "$m" --csv --kernel-name regex:'DeviceRadixSort|Onesweep|Histogram|ExclusiveSum' --launch-skip 0 --launch-count 12 /tmp/cub_sort "$what" "$bits" "$logn" > "$OUT/ncu-cub.csv" 2> "$OUT/ncu-cub.err"
  python3 - "$OUT" <<'PY'
import csv, sys, os, io
out = sys.argv[1]
for who in ("ours", "cub"):
    text = open(os.path.join(out, f"ncu-{who}.csv")).read()
    start = text.find('"ID"')
    if start < 0:
        print(who, "no ncu rows"); continue
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    by = {}
    for r in rows:
        by.setdefault((r["ID"], r["Kernel Name"][:60]), {})[r["Metric Name"]] = r["Metric Value"]
    print(f"== {who}")
    for (i, name), m in sorted(by.items(), key=lambda x: int(x[0][0])):
        g = lambda k: m.get(k, "?")
        print(f"{i:>3} {name:<60} {g('gpu__time_duration.sum'):>10} ns  dram {g('dram__throughput.avg.pct_of_peak_sustained_elapsed'):>6}%  "
              f"rd {g('dram__bytes_read.sum')} wr {g('dram__bytes_write.sum')}  warps {g('sm__warps_active.avg.pct_of_peak_sustained_active')}%  "
              f"stall short/bar/long {g('smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio')}/"
              f"{g('smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio')}/{g('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio')}  "
              f"regs {g('launch__registers_per_thread')} block {g('launch__block_size')} grid {g('launch__grid_size')}")
PY
fi
if [ "$PART" = stalls ]; then
  IFS=, read -r what bits logn <<< "$CASE"
  sec=(--section WarpStateStats --section SchedulerStats --section SourceCounters --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis)
  # The third launch of each: a middle pass (after the histogram and a first pass).
  RADIX_CASE=$CASE RADIX_REPS=1 ncu "${sec[@]}" --import-source no --kernel-name regex:radix_onesweep --launch-skip 1 --launch-count 1 -o "$OUT/stalls-ours" -f .gpu/radix_vs_cub > /dev/null 2> "$OUT/stalls-ours.err"
  ncu "${sec[@]}" --kernel-name regex:'Onesweep' --launch-skip 1 --launch-count 1 -o "$OUT/stalls-cub" -f /tmp/cub_sort "$what" "$bits" "$logn" > /dev/null 2> "$OUT/stalls-cub.err"
  for who in ours cub; do
    ncu --import "$OUT/stalls-$who.ncu-rep" --page details > "$OUT/stalls-$who.txt" 2>&1
    ncu --import "$OUT/stalls-$who.ncu-rep" --page source --csv --print-source sass > "$OUT/stalls-$who-sass.csv" 2>&1
    grep -E "Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Stall|No Eligible|Warp Cycles Per Issued" "$OUT/stalls-$who.txt" | head -40
  done
fi
# One archive of everything (the device tool returns a limited number of files).
tar czf /tmp/radix-run.tgz -C "$OUT" . 2>/dev/null && find "$OUT" -maxdepth 1 -type f ! -name radix-vs-cub.csv -delete && mv /tmp/radix-run.tgz "$OUT/"
