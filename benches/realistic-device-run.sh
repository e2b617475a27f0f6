#!/usr/bin/env bash
# The realistic suite (issue 37; also issue 40's realistic transposes): generated on the GPU host
# by `sptrans gen` (stencils in three numberings, an unstructured mesh in two, a community graph,
# a circuit, text, an LP staircase, a KKT system, a variable band; 8–27M nonzeros each), then
# `sptrans spmv-bench` (every format against cuSPARSE, f64) and `sptrans bench` (transposers against cuSPARSE csr2cscEx2, f32) over them.
# Here: `cargo build --release -p sptrans-cli && mkdir -p .gpu && cp target/release/sptrans .gpu/`;
# there: `bash benches/realistic-device-run.sh` (tables and CSV in $OUT).
set -u
S=.gpu/sptrans; M=${REALISTIC_MATRICES:-/tmp/realistic}; O=${OUT:-.gpu/out}; mkdir -p "$M" "$O"
gen() { local name=$1; shift; [ -f "$M/$name.mtx" ] || $S gen "$@" -o "$M/$name.mtx" 2>&1 | tail -1; }
gen stencil27_100_natural stencil 100 --order natural &
gen stencil27_100_random stencil 100 --order random --seed 2 &
gen stencil27_100_rcm stencil 100 --order rcm &
gen stencil7_150_natural stencil 150 --points 7 &
gen graph_2M_deg8 graph 2000000 8 1000 --seed 3 &
gen circuit_3M circuit 3000000 4 --seed 4 &
gen text_1M_200k text 1000000 200000 20 --seed 5 &
gen lp_1M_1p2M lp 1000000 1200000 100 12 --seed 6 &
gen mesh_100_natural mesh 100 --order natural --seed 7 &
gen mesh_100_rcm mesh 100 --order rcm --seed 7 &
gen kkt_1M_500k kkt 1000000 500000 8 --seed 8 &
gen skyline_1M_10 skyline 1000000 10 --seed 9 &
wait
ls "$M" > "$M/list.txt"; sed -i '/list.txt/d' "$M/list.txt"
$S spmv-bench --suite "$M" --precision f64 --reps ${REPS:-20} --quiet --csv "$O/realistic-spmv.csv" > "$O/realistic-spmv.md" 2> "$O/realistic-spmv.err"
tail -5 "$O/realistic-spmv.err"
$S bench --suite "$M" --algos radix,auto,cusparse --reps ${REPS:-10} --quiet --csv "$O/realistic-transpose.csv" > "$O/realistic-transpose.md" 2> "$O/realistic-transpose.err"
tail -5 "$O/realistic-transpose.err"
cat "$O/realistic-spmv.md" "$O/realistic-transpose.md"
