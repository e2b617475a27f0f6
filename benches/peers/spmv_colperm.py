# Does ordering columns by degree (hub columns first) speed up cuSPARSE SpMV on power-law matrices?
# CuPy's csr @ x calls cuSPARSE SpMV; the permuted product also pays x[perm].
import numpy as np, cupy as cp, cupyx.scipy.sparse as cps, scipy.sparse as sp, time, sys, os
sys.path.insert(0, os.path.dirname(__file__))
from spmv_matrices import rmat, uniform
def timeit(f, reps=50):
    for _ in range(5): f()
    s, e = cp.cuda.Event(), cp.cuda.Event(); ts = []
    for _ in range(reps):
        s.record(); f(); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))
for name, A in [("rmat 2^20 8M", rmat(20, 8_000_000)), ("rmat 2^22 16M", rmat(22, 16_000_000)), ("uniform 100k 10M", uniform(100_000, 10_000_000))]:
    deg = np.bincount(A.indices, minlength=A.shape[1])
    perm = np.argsort(-deg, kind="stable")            # new column j holds old column perm[j]
    inv = np.empty_like(perm); inv[perm] = np.arange(len(perm))
    Ap = sp.csr_matrix((A.data, inv[A.indices], A.indptr), shape=A.shape)
    dA, dAp = cps.csr_matrix(A), cps.csr_matrix(Ap)
    x = cp.random.random(A.shape[1]); dperm = cp.asarray(perm)
    y0 = dA @ x; y1 = dAp @ x[dperm]
    err = float(cp.max(cp.abs(y0 - y1)) / cp.max(cp.abs(y0)))
    t0 = timeit(lambda: dA @ x); t1 = timeit(lambda: dAp @ x[dperm]); t2 = timeit(lambda: dAp @ x)
    print(f"{name}: nnz {A.nnz}: cuSPARSE {t0*1e3:.1f} us; degree-ordered columns {t2*1e3:.1f} us (x1 {t0/t2:.2f}), with the x gather {t1*1e3:.1f} us (x{t0/t1:.2f}); rel diff {err:.1e}")
