#!/usr/bin/env python3
"""Peer for gpu-spmv: cuSPARSE CSR SpMV through CuPy (csr_matrix @ x, f64), median of 30
CUDA-event-timed products, on the same .mtx files the Rust bench reads.
Usage: python3 benches/peers/spmv_cupy.py a.mtx b.mtx ..."""
import sys

import cupy as cp
import cupyx.scipy.sparse as csp
import scipy.io
import scipy.sparse as sp

from cupy_timing import median_ms



print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
print("| matrix | nnz | cuSPARSE CSR (CuPy) ms |")
print("|---|---|---|")
for path in sys.argv[1:]:
    a = sp.csr_matrix(scipy.io.mmread(path), dtype="float64")
    a.sum_duplicates()
    d = csp.csr_matrix(a)
    x = cp.ones(a.shape[1], dtype=cp.float64)
    ms = median_ms(lambda: d @ x)
    print(f"| {path.rsplit('/', 1)[-1]} | {a.nnz} | {ms:.4f} |")
