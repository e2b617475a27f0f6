#!/usr/bin/env python3
"""Issue 34, item 9: does cuSPARSE's csr2cscEx2 alone (through CuPy, no sptrans code) ever return
a result that differs from SciPy's on a skewed matrix? R-MAT 2^20 with 8M edges drawn (a, b, c =
0.57, 0.19, 0.19), f32 values, transposed N times on CuPy's current stream; each result compared
with SciPy's CSC (sorted rows in every column, as sptrans's twin) bit for bit.

    python3 benches/peers/cusparse_csr2csc_repeat.py [N] [SCALE] [EDGES] [MODE] [DUMP_DIR]

DUMP_DIR: take the matrix the Rust diagnostic wrote (SPTRANS_ANOMALY_DUMP=DIR: shape.txt,
ptr.u32, idx.u32, vals.f32) instead of generating one, so both run on the very same matrix.

MODE `interleaved` runs, as sptrans's plan does between its cuSPARSE calls, a CUB radix sort
(`cupy.argsort` of 8M keys) and stream-ordered frees and allocations of varying sizes
(`cudaMallocAsync` pool) between conversions.
"""
import sys
import numpy as np
import scipy.sparse as sp
import cupy as cp
import cupyx.scipy.sparse as csp
from cupyx import cusparse

n_trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200
scale = int(sys.argv[2]) if len(sys.argv) > 2 else 20
edges = int(sys.argv[3]) if len(sys.argv) > 3 else 8_000_000
mode = sys.argv[4] if len(sys.argv) > 4 else "plain"
if mode == "interleaved":
    cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
rng = np.random.default_rng(4)
rows = np.zeros(edges, np.int64)
cols = np.zeros(edges, np.int64)
for level in range(scale):
    u = rng.random(edges)
    right = (u >= 0.57) & (u < 0.76) | (u >= 0.95)  # quadrants b and d
    down = (u >= 0.76)                              # quadrants c and d
    rows |= down.astype(np.int64) << level
    cols |= right.astype(np.int64) << level
n = 1 << scale
dump = sys.argv[5] if len(sys.argv) > 5 else None
if dump:
    m_, n_, nnz_ = map(int, open(f"{dump}/shape.txt").read().split())
    a = sp.csr_matrix((np.fromfile(f"{dump}/vals.f32", np.float32), np.fromfile(f"{dump}/idx.u32", np.uint32).astype(np.int32),
                       np.fromfile(f"{dump}/ptr.u32", np.uint32).astype(np.int32)), shape=(m_, n_))
else:
    a = sp.coo_matrix((np.ones(edges, np.float32), (rows, cols)), shape=(n, n)).tocsr()
    a.sum_duplicates()
    a.data = rng.random(a.nnz, dtype=np.float32) + 0.5
want = a.tocsc()
want.sort_indices()
try:
    from cupy_backends.cuda.libs import cusparse as _lib
    version = _lib.getVersion(_lib.create())
except Exception as e:  # only for the report
    version = f"? ({e})"
print(f"R-MAT 2^{scale}: {a.nnz} nonzeros; cuSPARSE {version}; CuPy {cp.__version__}; {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
da = csp.csr_matrix(a)
w_ptr, w_idx, w_val = want.indptr.astype(np.int32), want.indices.astype(np.int32), want.data
bad = {"pointer": 0, "order only": 0, "wrong entries": 0}
convert = getattr(cusparse, "csr2cscEx2", None) if cusparse.check_availability("csr2cscEx2") else None
convert = convert or (lambda x: x.tocsc())  # CuPy's tocsc calls csr2cscEx2 on CUDA 11+
keys = cp.random.random(8_000_000, dtype=cp.float32)
for t in range(n_trials):
    if mode == "interleaved":
        junk = [cp.empty(int(s), cp.uint8) for s in rng.integers(1 << 20, 1 << 27, 3)]
        order = cp.argsort(keys)
        del junk, order
    c = convert(da)
    ptr, idx, val = cp.asnumpy(c.indptr), cp.asnumpy(c.indices), cp.asnumpy(c.data)
    if np.array_equal(ptr, w_ptr) and np.array_equal(idx, w_idx) and np.array_equal(val.view(np.uint32), w_val.view(np.uint32)):
        continue
    if not np.array_equal(ptr, w_ptr):
        bad["pointer"] += 1
        continue
    got = sp.csc_matrix((val, idx, ptr), shape=want.shape)
    got.sort_indices()
    if np.array_equal(got.indices, w_idx) and np.array_equal(got.data.view(np.uint32), w_val.view(np.uint32)):
        bad["order only"] += 1
    else:
        bad["wrong entries"] += 1
        diff = np.nonzero((idx != w_idx) | (val.view(np.uint32) != w_val.view(np.uint32)))[0]
        cols_ = np.unique(np.searchsorted(w_ptr, diff, side="right") - 1)
        print(f"  call {t}: {diff.size} entries differ in columns {cols_[:8].tolist()}")
print(f"mode {mode}: {n_trials} csr2csc calls: {n_trials - sum(bad.values())} equal to SciPy; differing: {bad}")
