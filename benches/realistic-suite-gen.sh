#!/usr/bin/env bash
# The realistic suite's twelve matrices (issue 37), generated on the GPU host by `sptrans gen`
# into $M (default /tmp/realistic) with the CLI at $S (default .gpu/sptrans), those already
# there kept: 27-point stencils of 100³ in natural, random and RCM numbering, a 7-point stencil
# of 150³, a community graph, a circuit, bag-of-words text, an LP staircase, a tetrahedral-like
# mesh in natural and RCM numbering, a KKT system, a variable-width skyline. Sourced by the
# device scripts that time the suite (`. benches/realistic-suite-gen.sh`).
S=${S:-.gpu/sptrans}; M=${M:-${REALISTIC_MATRICES:-/tmp/realistic}}; mkdir -p "$M"
# REALISTIC_EXT=npz stores them as SciPy .npz (binary: faster to write and read than .mtx).
EXT=${REALISTIC_EXT:-mtx}
realistic_gen() { local name=$1; shift; [ -f "$M/$name.$EXT" ] || $S gen "$@" -o "$M/$name.$EXT" 2>&1 | tail -1; }
realistic_gen stencil27_100_natural stencil 100 --order natural &
realistic_gen stencil27_100_random stencil 100 --order random --seed 2 &
realistic_gen stencil27_100_rcm stencil 100 --order rcm &
realistic_gen stencil7_150_natural stencil 150 --points 7 &
realistic_gen graph_2M_deg8 graph 2000000 8 1000 --seed 3 &
realistic_gen circuit_3M circuit 3000000 4 --seed 4 &
realistic_gen text_1M_200k text 1000000 200000 20 --seed 5 &
realistic_gen lp_1M_1p2M lp 1000000 1200000 100 12 --seed 6 &
realistic_gen mesh_100_natural mesh 100 --order natural --seed 7 &
realistic_gen mesh_100_rcm mesh 100 --order rcm --seed 7 &
realistic_gen kkt_1M_500k kkt 1000000 500000 8 --seed 8 &
realistic_gen skyline_1M_10 skyline 1000000 10 --seed 9 &
wait
