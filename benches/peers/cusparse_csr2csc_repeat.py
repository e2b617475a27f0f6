#!/usr/bin/env python3
"""Issue 34, item 9: does cuSPARSE's csr2cscEx2 alone (through CuPy, no sptrans code) ever return
a result that differs from SciPy's on a skewed matrix? R-MAT 2^20 with 8M edges drawn (a, b, c =
0.57, 0.19, 0.19), f32 values, transposed N times on CuPy's current stream; each result compared
with SciPy's CSC (sorted rows in every column, as sptrans's twin) bit for bit.

    python3 benches/peers/cusparse_csr2csc_repeat.py [N] [SCALE] [EDGES]
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
for t in range(n_trials):
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
print(f"{n_trials} csr2csc calls: {n_trials - sum(bad.values())} equal to SciPy; differing: {bad}")
