"""Where the Python layer's time goes in sptrans.transpose (CuPy input): cProfile of many calls
on a small matrix (where the GPU work is negligible), then the phases timed one by one.

    python3 python/benchmarks/overhead.py
"""

import cProfile
import pstats
import time

import cupy as cp
import cupyx.scipy.sparse as csp
import scipy.sparse as sp

import sptrans
from sptrans import _frameworks, _native

a = sp.random(2000, 2000, density=0.005, random_state=1, format="csr")
d = csp.csr_matrix(a)
for _ in range(20):
    sptrans.transpose(d)
cp.cuda.Device().synchronize()


def per_call(f, n=2000):
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    cp.cuda.Device().synchronize()
    return (time.perf_counter() - t0) / n * 1e6


fw = _frameworks.adapter("cupy")
m = _frameworks.matrix(d)
stream = m.stream()
ws = _native.transpose_workspace(0, stream, m.native(), "auto", False)
mem, addr = fw.scratch(ws, 0)
op, oi, ov = fw.empty(m.cols + 1, "int32", 0), fw.empty(m.nnz, "int32", 0), fw.empty(m.nnz, "float64", 0)
args = [0, stream, m.native(), (fw.addr(op), fw.addr(oi), fw.addr(ov)), (addr, ws), "auto", False]
print(f"sptrans.transpose           {per_call(lambda: sptrans.transpose(d)):8.1f} us/call")
print(f"sptrans.transpose(check=F)  {per_call(lambda: sptrans.transpose(d, check=False)):8.1f} us/call")
print(f"native (checked)            {per_call(lambda: _native.transpose_gpu(*args, True)):8.1f} us/call")
print(f"native (check=False)        {per_call(lambda: _native.transpose_gpu(*args, False)):8.1f} us/call")
print(f"matrix(A)                   {per_call(lambda: _frameworks.matrix(d)):8.1f} us/call")
print(f"stream()                    {per_call(lambda: m.stream()):8.1f} us/call")
print(f"transpose_workspace         {per_call(lambda: _native.transpose_workspace(0, stream, m.native(), 'auto', False)):8.1f} us/call")
print(f"fw.empty x1                 {per_call(lambda: fw.empty(m.nnz, 'int32', 0)):8.1f} us/call")
print(f"fw.scratch                  {per_call(lambda: fw.scratch(ws, 0)):8.1f} us/call")
print(f"make_csr                    {per_call(lambda: _frameworks.make_csr(m, ov, oi, op, (m.cols, m.rows))):8.1f} us/call")
print(f"cupy A.T.tocsr()            {per_call(lambda: d.T.tocsr()):8.1f} us/call")
pr = cProfile.Profile()
pr.enable()
for _ in range(2000):
    sptrans.transpose(d)
pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats(18)
