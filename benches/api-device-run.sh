#!/usr/bin/env bash
# The device run behind RESULTS.md's "API on views: no slower" check (issue 34: `sptrans bench`
# and `sptrans spmv-bench` within 2% of before on the default suite, same device run,
# alternating binaries). Stage here:
#   cargo build --release -p sptrans-cli; mkdir -p .gpu; cp target/release/sptrans .gpu/sptrans
#   cp <the sptrans binary of the commit to compare with> .gpu/sptrans-head
# run: bash benches/api-device-run.sh transpose|spmv   (results packed into $OUT/api-<what>.tgz)
set -u
what=${1:-transpose}
O=/tmp/api-out-$what; mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/device.txt"
for i in 1 2; do
  for b in sptrans-head sptrans; do
    if [ "$what" = transpose ]; then
      /usr/bin/time -f "%e s" timeout 140 .gpu/$b bench --algos radix,scan,merge,coo,auto,cusparse --reps 10 --quiet --csv "$O/bench-$b-$i.csv" > "$O/bench-$b-$i.md" 2> "$O/bench-$b-$i.err"
    else
      /usr/bin/time -f "%e s" timeout 140 .gpu/$b spmv-bench --precision f64 --reps 30 --quiet --csv "$O/spmv-$b-$i.csv" > "$O/spmv-$b-$i.md" 2> "$O/spmv-$b-$i.err"
    fi
    echo "$b round $i: rc $? $(tail -1 "$O/"*-$b-$i.err)"
  done
done
mkdir -p "${OUT:-.gpu/out}"; tar czf "${OUT:-.gpu/out}/api-$what.tgz" -C "$O" .
