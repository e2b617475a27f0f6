#!/usr/bin/env python3
"""Peers of gpu-svd's bench, on the matrices it dumped (SPTRANS_SVD_DUMP=dir):
CuPy `cupyx.scipy.sparse.linalg.svds(k=16)` and `torch.svd_lowrank(q=16, niter=2)` (f64, on the
GPU, wall time after one warm-up, median of 3), and the reference: the eigenvalues of the Gram
matrix AᵀA (n × n, dense, `cupy.linalg.eigvalsh` in f64; the top 16 σ have relative errors near
1e-15 there) for n ≤ 40 000, else CuPy's own σ (the graphs: the errors are then the methods'
distance from CuPy). Our σ (`<name>.ours.txt`) and time are measured against the same reference.
Usage: python3 benches/peers/svd_peers.py DIR [NAME ...]; SPTRANS_SVD_PEERS_CSV=path also writes
the rows as CSV."""
import os
import sys
import time

import cupy as cp
import cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as csl
import numpy as np
import torch

K = 16


def load(d, name):
    m, n, nnz = (int(x) for x in open(f"{d}/{name}.meta").read().split())
    ptr = np.fromfile(f"{d}/{name}.ptr.u32", dtype=np.uint32).astype(np.int64)
    idx = np.fromfile(f"{d}/{name}.idx.u32", dtype=np.uint32).astype(np.int64)
    vals = np.fromfile(f"{d}/{name}.vals.f64", dtype=np.float64)
    assert len(vals) == nnz and len(ptr) == m + 1
    return m, n, ptr, idx, vals


def timed(f, reps=3):
    f()
    cp.cuda.Device().synchronize()
    torch.cuda.synchronize()
    ts, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        cp.cuda.Device().synchronize()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2], out


def errors(sig, ref):
    sig = np.sort(np.asarray(sig))[::-1][:K]
    return np.max(np.abs(sig - ref) / ref)


d = sys.argv[1]
names = sys.argv[2:] or sorted({f.split(".")[0] for f in os.listdir(d) if f.endswith(".meta")})
print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}; cupy {cp.__version__}; torch {torch.__version__}")
results = []
print("| matrix | method | seconds | max relative σ error (top 16) | sptrans faster by |")
print("|---|---|---|---|---|")
for name in names:
    m, n, ptr, idx, vals = load(d, name)
    a = csp.csr_matrix((cp.asarray(vals), cp.asarray(idx.astype(np.int32)), cp.asarray(ptr.astype(np.int32))), shape=(m, n))
    if n <= 40000:
        g = (a.T @ a).toarray()
        ev = cp.linalg.eigvalsh(g)
        ref = np.sqrt(np.sort(cp.asnumpy(ev))[::-1][:K])
        del g
    else:
        # Too wide for a dense Gram matrix (the graphs): CuPy's σ are the reference, and the
        # errors say how far each method is from the other.
        ref = np.sort(cp.asnumpy(csl.svds(a, k=K)[1]))[::-1][:K]
    ours = np.array([float(x) for x in open(f"{d}/{name}.ours.txt")])
    ours_s = float(open(f"{d}/{name}.ours-seconds.txt").read())
    print(f"| {name} | sptrans (block 2, tol 1e-10) | {ours_s:.3f} | {errors(ours, ref):.1e} | 1 |")
    results.append((name, "sptrans", ours_s, errors(ours, ref)))
    t, (_, s, _) = timed(lambda: csl.svds(a, k=K))
    print(f"| {name} | CuPy svds(k=16) | {t:.3f} | {errors(cp.asnumpy(s), ref):.1e} | {t / ours_s:.1f}× |")
    results.append((name, "cupy-svds", t, errors(cp.asnumpy(s), ref)))
    rows = torch.repeat_interleave(torch.arange(m, device="cuda"), torch.from_numpy(np.diff(ptr)).cuda())
    at = torch.sparse_coo_tensor(torch.stack([rows, torch.from_numpy(idx).cuda()]), torch.from_numpy(vals).cuda(), (m, n)).coalesce()
    t, (_, s, _) = timed(lambda: torch.svd_lowrank(at, q=K, niter=2))
    print(f"| {name} | torch.svd_lowrank(q=16, niter=2) | {t:.3f} | {errors(s.cpu().numpy(), ref):.1e} | {t / ours_s:.1f}× |")
    results.append((name, "torch-svd-lowrank", t, errors(s.cpu().numpy(), ref)))
    print(f"| {name} | reference σ₁, σ₁₆ | | {ref[0]:.12e}, {ref[-1]:.12e} | |")

if os.environ.get("SPTRANS_SVD_PEERS_CSV"):
    with open(os.environ["SPTRANS_SVD_PEERS_CSV"], "w") as f:
        f.write("matrix,method,seconds,max_relative_sigma_error\n")
        for r in results:
            f.write(f"{r[0]},{r[1]},{r[2]:.6f},{r[3]:.3e}\n")
