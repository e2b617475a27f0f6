"""sptrans from Python against the peers Python users have, on one GPU, one run.

    python3 python/benchmarks/bench.py [--out results.json] [--quick]

Times (median wall-clock of synchronized calls; every call's result checked once against the
peer's or SciPy's):
* transpose: sptrans.transpose on a CuPy csr_matrix vs CuPy's A.T.tocsr(); on a PyTorch int64
  CSR tensor vs A.t().to_sparse_csr(); and the native call alone with outputs and scratch
  allocated beforehand (the Python layer's share).
* Operator.T @ Y and Operator @ X (k = 1, 4, 16) vs CuPy's A.T @ Y and A @ X, after the plan.
* svds(k=16) vs cupyx.scipy.sparse.linalg.svds, with and without vectors; sigma checked against
  a dense SVD where the matrix is small enough.
Matrices are realistic structures built here with SciPy (27-point stencil in natural and random
order, power-law graph with locality, documents x terms, rectangular LP-like blocks) plus a
uniform random one.
"""

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

import cupy as cp
import cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as csl
import torch

import sptrans
from sptrans import _native


def rng(seed):
    return np.random.default_rng(seed)


def values(r, n):
    return r.standard_normal(n)


def stencil27(n, seed=0, permute=False):
    t = sp.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr")
    a = sp.kron(sp.kron(t, t), t, format="csr")
    a.data = values(rng(seed), a.nnz)
    if permute:
        p = rng(seed + 1).permutation(a.shape[0])
        a = a[p][:, p].tocsr()
    return a


def powerlaw_graph(n, avg, seed=0):
    r = rng(seed)
    deg = np.minimum(r.zipf(1.8, n), n // 10) * avg // 3 + 1
    deg = (deg * (avg * n / deg.sum())).astype(np.int64) + 1
    rows = np.repeat(np.arange(n), deg)
    local = r.random(rows.size) < 0.7
    off = (r.standard_cauchy(rows.size) * 50).astype(np.int64)
    hubs = (r.zipf(1.5, rows.size) * 7919) % n
    cols = np.where(local, (rows + off) % n, hubs)
    return csr(rows, cols, (n, n), r)


def text(docs, terms, per_doc, seed=0):
    r = rng(seed)
    deg = np.maximum(1, r.poisson(per_doc, docs))
    rows = np.repeat(np.arange(docs), deg)
    cols = (r.zipf(1.2, rows.size) - 1) % terms
    return csr(rows, cols, (docs, terms), r)


def lp_blocks(m, n, nnz, seed=0):
    r = rng(seed)
    rows = r.integers(0, m, nnz)
    band = (rows * (n / m)).astype(np.int64)
    cols = np.clip(band + r.integers(-2000, 2000, nnz), 0, n - 1)
    linking = r.random(nnz) < 0.05
    cols = np.where(linking, r.integers(0, n, nnz), cols)
    return csr(rows, cols, (m, n), r)


def uniform(m, n, nnz, seed=0):
    r = rng(seed)
    return csr(r.integers(0, m, nnz), r.integers(0, n, nnz), (m, n), r)


def csr(rows, cols, shape, r):
    a = sp.coo_matrix((values(r, rows.size), (rows, cols)), shape=shape).tocsr()
    a.sum_duplicates()
    a.indptr = a.indptr.astype(np.int32)
    a.indices = a.indices.astype(np.int32)
    return a


def suite(quick):
    s = 0.25 if quick else 1.0
    n3 = int(75 * s ** (1 / 3))
    return {
        "stencil27-natural": stencil27(n3),
        "stencil27-random": stencil27(n3, permute=True),
        "powerlaw-graph": powerlaw_graph(int(1_000_000 * s), 10),
        "text-docs-terms": text(int(500_000 * s), 200_000, 20),
        "lp-rectangular": lp_blocks(int(300_000 * s), int(1_200_000 * s), int(10_000_000 * s)),
        "uniform": uniform(int(1_000_000 * s), int(1_000_000 * s), int(10_000_000 * s)),
    }


def timed(f, reps=10, warm=2):
    for _ in range(warm):
        f()
    cp.cuda.Device().synchronize()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        cp.cuda.Device().synchronize()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def to_cupy(a):
    return csp.csr_matrix((cp.asarray(a.data), cp.asarray(a.indices), cp.asarray(a.indptr)), shape=a.shape)


def to_torch64(a):
    return torch.sparse_csr_tensor(
        torch.from_numpy(a.indptr.astype(np.int64)).cuda(),
        torch.from_numpy(a.indices.astype(np.int64)).cuda(),
        torch.from_numpy(a.data).cuda(),
        size=a.shape,
    )


def check_transpose(t, a):
    r = a.T.tocsr()
    r.sort_indices()
    ok = np.array_equal(cp.asnumpy(t.indptr), r.indptr) and np.array_equal(cp.asnumpy(t.indices), r.indices)
    return ok and np.array_equal(cp.asnumpy(t.data), r.data)


def bench_transpose(name, a, out):
    d = to_cupy(a)
    t = sptrans.transpose(d)
    ok = check_transpose(t, a)
    ours = timed(lambda: sptrans.transpose(d))
    peer = timed(lambda: d.T.tocsr())
    # The native call alone: outputs and scratch made beforehand (what the Python layer adds is
    # the difference).
    m, n, nnz = a.shape[0], a.shape[1], a.nnz
    stream = cp.cuda.get_current_stream().ptr
    a_in = (m, n, nnz, d.indptr.data.ptr, 4, d.indices.data.ptr, 4, d.data.data.ptr, 8)
    ws = _native.transpose_workspace(0, stream, a_in, "auto", False)
    scratch, op, oi, ov = cp.empty(ws, cp.uint8), cp.empty(n + 1, cp.int32), cp.empty(nnz, cp.int32), cp.empty(nnz, cp.float64)
    args = (0, stream, a_in, (op.data.ptr, oi.data.ptr, ov.data.ptr), (scratch.data.ptr, ws), "auto", False)
    native = timed(lambda: _native.transpose_gpu(*args, True))
    native_nc = timed(lambda: _native.transpose_gpu(*args, False))
    ours_nc = timed(lambda: sptrans.transpose(d, check=False))
    tt = to_torch64(a)
    tref = tt.t().to_sparse_csr()
    t64 = sptrans.transpose(tt)
    ok64 = torch.equal(t64.crow_indices(), tref.crow_indices()) and torch.equal(t64.col_indices(), tref.col_indices())
    ok64 = ok64 and torch.equal(t64.values(), tref.values())
    ours64 = timed(lambda: sptrans.transpose(tt))
    torch64 = timed(lambda: tt.t().to_sparse_csr())
    row = dict(
        area="transpose", matrix=name, rows=m, cols=n, nnz=nnz, sptrans_ms=ours * 1e3, cupy_ms=peer * 1e3,
        vs_cupy=peer / ours, native_ms=native * 1e3, python_share=ours / native - 1, correct=ok,
        unchecked_ms=ours_nc * 1e3, unchecked_vs_cupy=peer / ours_nc, native_unchecked_ms=native_nc * 1e3,
        sptrans_int64_ms=ours64 * 1e3, torch_int64_ms=torch64 * 1e3, vs_torch=torch64 / ours64, correct_int64=bool(ok64),
    )  # fmt: skip
    out.append(row)
    print(f"transpose {name:20s} nnz {nnz:>9d}  sptrans {ours*1e3:7.2f} ms  cupy {peer*1e3:7.2f} ms  x{peer/ours:5.2f}"
          f"  native {native*1e3:7.2f} ms (python +{(ours/native-1)*100:4.1f}%)  unchecked {ours_nc*1e3:7.2f} x{peer/ours_nc:5.2f}"
          f" native {native_nc*1e3:7.2f}  int64: sptrans {ours64*1e3:7.2f}"
          f"  torch {torch64*1e3:7.2f} x{torch64/ours64:5.2f}  ok {ok} {bool(ok64)}", flush=True)  # fmt: skip


def bench_products(name, a, out):
    d = to_cupy(a)
    op = sptrans.Operator(d)
    dt = d.T
    for k in (1, 4, 16):
        shape_y = (a.shape[0],) if k == 1 else (a.shape[0], k)
        shape_x = (a.shape[1],) if k == 1 else (a.shape[1], k)
        y = cp.asarray(rng(k).standard_normal(shape_y))
        x = cp.asarray(rng(k + 1).standard_normal(shape_x))
        yf = cp.asfortranarray(y)
        xf = cp.asfortranarray(x)
        errs = []
        for got, want in ((op.T @ yf, dt @ y), (op @ xf, d @ x)):
            scale = float(cp.abs(want).max()) or 1.0
            errs.append(float(cp.abs(got - want).max()) / scale)
        ours_t = timed(lambda: op.T @ yf, reps=20)
        peer_t = timed(lambda: dt @ y, reps=20)
        ours_n = timed(lambda: op @ xf, reps=20)
        peer_n = timed(lambda: d @ x, reps=20)
        row = dict(
            area="products", matrix=name, rows=a.shape[0], cols=a.shape[1], nnz=a.nnz, k=k,
            at_sptrans_ms=ours_t * 1e3, at_cupy_ms=peer_t * 1e3, at_vs_cupy=peer_t / ours_t,
            a_sptrans_ms=ours_n * 1e3, a_cupy_ms=peer_n * 1e3, a_vs_cupy=peer_n / ours_n, rel_err=max(errs),
        )  # fmt: skip
        out.append(row)
        print(f"products  {name:20s} k {k:2d}  A.T@Y sptrans {ours_t*1e3:7.3f} cupy {peer_t*1e3:7.3f} x{peer_t/ours_t:5.2f}"
              f"   A@X sptrans {ours_n*1e3:7.3f} cupy {peer_n*1e3:7.3f} x{peer_n/ours_n:5.2f}  err {max(errs):.1e}", flush=True)  # fmt: skip


def svd_suite(quick):
    r = rng(7)
    m, n = (20_000, 1_000) if quick else (40_000, 1_500)
    out = {}
    out["text (decaying)"] = text(m, n, 30, seed=1)
    out["uniform (flat)"] = uniform(m, n, m * 20, seed=2)
    blocks = [sp.random(m // 4, n // 4, density=0.02, random_state=3, format="csr")] * 4
    out["block-diagonal (clustered)"] = sp.block_diag(blocks, format="csr")
    u = sp.random(m, 5, density=0.3, random_state=4, format="csr")
    v = sp.random(5, n, density=0.3, random_state=5, format="csr")
    out["rank-5"] = (u @ v).tocsr()
    out["powerlaw (graph)"] = powerlaw_graph(n * 20, 10, seed=6)[:, :n].tocsr()
    for k, a in out.items():
        a = a.tocsr().astype(np.float64)
        a.indptr, a.indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
        out[k] = a
    del r
    return out


def bench_svds(name, a, out, k=16):
    d = to_cupy(a)
    ref = np.linalg.svd(a.toarray(), compute_uv=False)[:k][::-1] if a.shape[0] * a.shape[1] <= 2e8 else None
    s = cp.asnumpy(sptrans.linalg.svds(d, k=k, return_singular_vectors=False))
    try:
        sc = cp.asnumpy(csl.svds(d, k=k, return_singular_vectors=False))
        sc = np.sort(sc)
    except Exception as e:  # noqa: BLE001 - the peer's failure is a result
        sc = None
        print(f"cupy svds failed on {name}: {e}")
    s1 = ref[-1] if ref is not None else s[-1]
    err = float(np.abs(s - ref).max() / s1) if ref is not None else math.nan
    err_c = float(np.abs(sc - ref).max() / s1) if (ref is not None and sc is not None) else math.nan
    ours = timed(lambda: sptrans.linalg.svds(d, k=k, return_singular_vectors=False), reps=5, warm=1)
    ours_v = timed(lambda: sptrans.linalg.svds(d, k=k), reps=5, warm=1)
    peer = timed(lambda: csl.svds(d, k=k, return_singular_vectors=False), reps=5, warm=1) if sc is not None else math.nan
    peer_v = timed(lambda: csl.svds(d, k=k), reps=5, warm=1) if sc is not None else math.nan
    # Sparse PCA: the centered matrix's SVD, checked against a dense SVD of A - 1 mu^T.
    sc_ = cp.asnumpy(sptrans.linalg.svds(d, k=k, return_singular_vectors=False, center=True))
    if ref is not None:
        dense = a.toarray()
        refc = np.linalg.svd(dense - dense.mean(axis=0), compute_uv=False)[:k][::-1]
        err_center = float(np.abs(sc_ - refc).max() / refc[-1])
    else:
        err_center = math.nan
    ours_center = timed(lambda: sptrans.linalg.svds(d, k=k, center=True), reps=5, warm=1)
    row = dict(
        area="svds", matrix=name, center_vectors_ms=ours_center * 1e3, center_sigma_err=err_center, rows=a.shape[0], cols=a.shape[1], nnz=a.nnz, k=k, sptrans_ms=ours * 1e3, cupy_ms=peer * 1e3,
        vs_cupy=peer / ours, sptrans_vectors_ms=ours_v * 1e3, cupy_vectors_ms=peer_v * 1e3, vs_cupy_vectors=peer_v / ours_v,
        sigma_err=err, cupy_sigma_err=err_c,
    )  # fmt: skip
    out.append(row)
    print(f"svds      {name:26s} sptrans {ours*1e3:8.1f} ms cupy {peer*1e3:8.1f} x{peer/ours:5.2f}  vectors: {ours_v*1e3:8.1f}"
          f" vs {peer_v*1e3:8.1f} x{peer_v/ours_v:5.2f}  err/s1 ours {err:.1e} cupy {err_c:.1e}"
          f"  center: {ours_center*1e3:8.1f} ms err {err_center:.1e}", flush=True)  # fmt: skip


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="python-bench.json")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="transpose,products,svds")
    args = p.parse_args()
    areas = args.only.split(",")
    print(f"device: {torch.cuda.get_device_name(0)}; cupy {cp.__version__}, torch {torch.__version__}, sptrans {sptrans.__version__}")
    rows = []
    if "transpose" in areas or "products" in areas:
        for name, a in suite(args.quick).items():
            if "transpose" in areas:
                bench_transpose(name, a, rows)
            if "products" in areas:
                bench_products(name, a, rows)
    if "svds" in areas:
        for name, a in svd_suite(args.quick).items():
            bench_svds(name, a, rows)
    meta = dict(device=torch.cuda.get_device_name(0), cupy=cp.__version__, torch=torch.__version__, command=" ".join(sys.argv))
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    for area, key in (("transpose", "vs_cupy"), ("transpose", "unchecked_vs_cupy"), ("transpose", "vs_torch"), ("svds", "vs_cupy"), ("svds", "vs_cupy_vectors")):
        xs = [r[key] for r in rows if r["area"] == area and r.get(key) == r.get(key) and r.get(key)]
        if xs:
            print(f"geomean {area} {key}: {math.exp(sum(map(math.log, xs)) / len(xs)):.2f} over {len(xs)}")
    for k in (1, 4, 16):
        xs = [r["at_vs_cupy"] for r in rows if r["area"] == "products" and r["k"] == k]
        if xs:
            print(f"geomean A.T@Y k={k}: {math.exp(sum(map(math.log, xs)) / len(xs)):.2f}")


if __name__ == "__main__":
    main()
