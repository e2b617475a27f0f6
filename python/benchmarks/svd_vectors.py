"""The cost of singular vectors (issue 38's target: with vectors <= 1.5x the sigma-only time
on a 1M x 4284 matrix of 11M nonzeros, k = 16), through sptrans.linalg.svds on a CuPy matrix.

    python3 python/benchmarks/svd_vectors.py
"""

import statistics
import time

import cupy as cp
import cupyx.scipy.sparse as csp
import numpy as np
import scipy.sparse as sp

import sptrans

rng = np.random.default_rng(11)
m, n, nnz = 1_000_000, 4284, 11_000_000
rows = rng.integers(0, m, nnz)
cols = (rng.zipf(1.3, nnz) - 1) % n
a = sp.coo_matrix((rng.standard_normal(nnz), (rows, cols)), shape=(m, n)).tocsr()
a.sum_duplicates()
d = csp.csr_matrix(a)
print(f"A: {m} x {n}, {a.nnz} nonzeros", flush=True)


def timed(f, reps=5):
    f()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


s_only = timed(lambda: sptrans.linalg.svds(d, k=16, return_singular_vectors=False))
with_v = timed(lambda: sptrans.linalg.svds(d, k=16))
u, s, vh = sptrans.linalg.svds(d, k=16)
res = float(cp.abs(d @ vh.T - u * s).max() / s[-1])
print(f"sigma only {s_only*1e3:.1f} ms; with vectors {with_v*1e3:.1f} ms; ratio {with_v/s_only:.2f}; max |AV - US| / sigma_1 {res:.1e}")
