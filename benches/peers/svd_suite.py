#!/usr/bin/env python3
"""The realistic SVD suite (issue 56, item 5): ``sptrans.linalg.svds`` against CuPy's ``svds`` and
``torch.svd_lowrank`` on the same matrices in the same process, every answer measured the same
way, then our scaling in nonzeros up to the device's memory.

Matrices (generated here, seeded; random values of realistic spread, never a handful of distinct
ones): a power-law graph, bag-of-words text (Zipf terms, tf-idf-like weights), a recommender
(long-tailed users and items, ratings 1-5 with noise), single-cell-like counts (log1p of
overdispersed counts). For each and each ``k``: ours by Lanczos (``tol``, default 1e-8) and
randomized (``n_iter`` 4, 10 extra columns), CuPy's ``svds(k)``, ``torch.svd_lowrank(q=k+10,
niter=4)``. Reported per answer: seconds (after a warm-up on a small matrix; median of
``--reps``), the largest residual ``max_i max(|A v_i - s_i u_i|, |A^T u_i - s_i v_i|) / s_1``
and the largest distance of its singular values from our Lanczos answer's, over ``s_1``. A peer
whose run at one ``k`` took longer than ``--peer-budget-s`` is not run at larger ``k`` on that
matrix (the row says so).

Scaling (``--scaling 25,100,250,1000``: millions of nonzeros; ``--scaling-kinds uniform,graph,text``):
uniform matrices of 100 nonzeros a row and rows = 10 x columns (2.5M x 250k at 250M; a flat
Marchenko-Pastur spectrum, Lanczos's hardest case), and the suite's graph and text structures at
that size, generated on the device; ours by Lanczos at
1e-8 and 1e-6 and randomized, ``k`` = ``--scaling-k`` (50); sizes past the device's free memory
are skipped (the row says so).

Usage (the GPU host, the wheel on ``PYTHONPATH``):
    python3 benches/peers/svd_suite.py [--ks 16,50,100,300] [--scale 1] [--reps 1]
        [--scaling 25,100,250,1000] [--csv out.csv] [--svg out.svg] [--only graph,text]
Without a GPU (``--cpu``): SciPy inputs (our host path) against SciPy's ``svds``, small sizes;
a check of this script, not a benchmark.
"""
import argparse
import csv
import math
import sys
import time

import numpy as np
import scipy.sparse as sp

import sptrans.linalg


def _csr(rows, cols, vals, shape):
    """A SciPy CSR with sorted, summed duplicates."""
    a = sp.coo_matrix((vals, (rows, cols)), shape=shape).tocsr()
    a.sum_duplicates()
    a.sort_indices()
    return a


def _lengths(rng, n, mean, tail):
    """Row lengths: Pareto-tailed (shape ``tail``) with mean ``mean``, at least 1."""
    raw = rng.pareto(tail, n) + 1.0
    return np.maximum(1, np.round(raw * mean / raw.mean())).astype(np.int64)


def graph(rng, scale):
    """A power-law graph: out-degrees Pareto-tailed (mean 10), targets drawn toward hubs, labels
    shuffled; weights uniform in (0, 1]."""
    n = int(1_000_000 * scale)
    deg = np.minimum(_lengths(rng, n, 10, 1.8), n)
    rows = np.repeat(np.arange(n), deg)
    perm = rng.permutation(n)
    cols = perm[np.minimum(n - 1, (n * rng.random(rows.size) ** 2.2).astype(np.int64))]
    return _csr(rows, cols, 1.0 - rng.random(rows.size), (n, n))


def text(rng, scale):
    """Bag of words: documents of log-normal length (mean ~20 distinct terms), Zipf-like terms,
    tf-idf-like positive weights."""
    docs, terms = int(1_000_000 * scale), int(200_000 * scale)
    lens = np.maximum(1, rng.lognormal(np.log(16), 0.6, docs).astype(np.int64))
    rows = np.repeat(np.arange(docs), lens)
    cols = np.minimum(terms - 1, (terms * rng.random(rows.size) ** 3.0).astype(np.int64))
    idf = np.log(terms / (1.0 + np.arange(terms)) + 1.0)
    vals = np.log1p(rng.geometric(0.6, rows.size)) * idf[cols]
    return _csr(rows, cols, vals, (docs, terms))


def recommender(rng, scale):
    """Users x items: long-tailed activity (mean 25 ratings), long-tailed item popularity
    (shuffled), ratings 1-5 plus small noise."""
    users, items = int(1_000_000 * scale), int(100_000 * scale)
    lens = np.minimum(_lengths(rng, users, 25, 1.5), items)
    rows = np.repeat(np.arange(users), lens)
    perm = rng.permutation(items)
    cols = perm[np.minimum(items - 1, (items * rng.random(rows.size) ** 2.5).astype(np.int64))]
    vals = rng.integers(1, 6, rows.size) + rng.normal(0, 0.05, rows.size)
    return _csr(rows, cols, vals, (users, items))


def single_cell(rng, scale):
    """Cells x genes: ~1500 expressed genes a cell, gene choice weighted by a log-normal mean
    expression, values log1p of overdispersed (negative binomial) counts."""
    cells, genes = int(100_000 * scale), 20_000
    lens = np.maximum(50, rng.normal(1500, 400, cells).astype(np.int64))
    rows = np.repeat(np.arange(cells), np.minimum(lens, genes))
    cols = np.minimum(genes - 1, (genes * rng.random(rows.size) ** 1.6).astype(np.int64))
    counts = rng.negative_binomial(2, 0.4, rows.size) + 1
    return _csr(rows, cols, np.log1p(counts.astype(np.float64)), (cells, genes))


SUITE = {"graph": graph, "text": text, "recommender": recommender, "single-cell": single_cell}


class Gpu:
    """CuPy and PyTorch on the device."""

    name = "gpu"

    def __init__(self):
        import cupy as cp
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as csl

        self.cp, self.csp, self.csl = cp, csp, csl
        self.sparse = csp
        try:
            import torch

            self.torch = torch
        except ImportError:
            self.torch = None
        self.xp = cp

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def put(self, a):
        return self.csp.csr_matrix(a)

    def free_bytes(self):
        # The pools keep freed blocks: hand them back first, so that the free memory is real.
        self.cp.get_default_memory_pool().free_all_blocks()
        if self.torch is not None:
            self.torch.cuda.empty_cache()
        return self.cp.cuda.Device().mem_info[0]

    def peers(self):
        out = {"cupy svds": self._cupy}
        if self.torch is not None:
            out["torch.svd_lowrank"] = self._torch
        return out

    def _cupy(self, a, k):
        return self.csl.svds(a, k=k)

    def _torch(self, a, k):
        t = self.torch
        crow, col, val = (t.from_dlpack(x) for x in (a.indptr.astype(self.cp.int64), a.indices.astype(self.cp.int64), a.data))
        ta = t.sparse_csr_tensor(crow, col, val, size=a.shape)
        u, s, v = t.svd_lowrank(ta, q=min(k + 10, min(a.shape)), niter=4)
        u, s, v = (self.cp.from_dlpack(x.contiguous()) for x in (u[:, :k], s[:k], v[:, :k]))
        return u, s, v.T



class Cpu:
    """SciPy inputs (our host path) and SciPy's svds: a check of this script."""

    name = "cpu"
    xp = np
    sparse = sp

    def sync(self):
        pass

    def put(self, a):
        return a

    def free_bytes(self):
        return 4 << 30

    def peers(self):
        import scipy.sparse.linalg as sl

        return {"scipy svds": lambda a, k: sl.svds(a, k=k)}



def uniform(dev, rows, cols, per_row, seed):
    """A rows x cols CSR of about per_row nonzeros a row at distinct random columns (random gaps
    between sorted columns), values uniform in [-0.5, 0.5), made by the device's array module
    (CuPy: on the GPU)."""
    xp = dev.xp
    rs = xp.random.RandomState(seed)
    step = max(2, 2 * (cols // per_row))
    c = xp.cumsum(rs.randint(1, step, size=(rows, per_row), dtype=xp.int64), axis=1) - 1
    keep = c < cols
    indptr = xp.zeros(rows + 1, dtype=xp.int64)
    xp.cumsum(keep.sum(axis=1), out=indptr[1:])
    idx = c[keep].astype(xp.int32)
    del c, keep
    vals = rs.random_sample(idx.size) - 0.5
    return dev.sparse.csr_matrix((vals, idx, indptr.astype(xp.int32)), shape=(rows, cols))


def _device_csr(dev, indptr, cols, vals, shape):
    """A CSR of the device's sparse module from sorted rows (``indptr``) whose columns may be
    unsorted and repeated: sorted, duplicates summed."""
    xp = dev.xp
    rows = (xp.searchsorted(indptr[1:], xp.arange(int(indptr[-1]), dtype=xp.int64), side="right")).astype(xp.int32)
    a = dev.sparse.coo_matrix((vals, (rows, cols.astype(xp.int32))), shape=shape).tocsr()
    a.sum_duplicates()
    a.sort_indices()
    return a


def scaled_graph(dev, nnz, seed):
    """The suite's power-law graph (Pareto out-degrees of mean 10, targets drawn toward hubs,
    labels shuffled, weights in (0, 1]) at about ``nnz`` nonzeros, made by the device's array
    module (CuPy: on the GPU)."""
    xp = dev.xp
    rs = xp.random.RandomState(seed)
    n = max(2, nnz // 10)
    raw = rs.pareto(1.8, n) + 1.0
    deg = xp.minimum(xp.maximum(1, xp.around(raw * 10 / raw.mean())), n).astype(xp.int64)
    indptr = xp.zeros(n + 1, dtype=xp.int64)
    xp.cumsum(deg, out=indptr[1:])
    total = int(indptr[-1])
    perm = rs.permutation(n)
    cols = perm[xp.minimum(n - 1, (n * rs.random_sample(total) ** 2.2).astype(xp.int64))]
    return _device_csr(dev, indptr, cols, 1.0 - rs.random_sample(total), (n, n))


def scaled_text(dev, nnz, seed):
    """The suite's bag of words (log-normal document lengths, Zipf-like terms, tf-idf-like
    weights; 5 documents a term) at about ``nnz`` nonzeros, made by the device's array module."""
    xp = dev.xp
    rs = xp.random.RandomState(seed)
    docs = max(2, nnz // 19)
    terms = max(2, docs // 5)
    lens = xp.maximum(1, rs.lognormal(math.log(16), 0.6, docs).astype(xp.int64))
    indptr = xp.zeros(docs + 1, dtype=xp.int64)
    xp.cumsum(lens, out=indptr[1:])
    total = int(indptr[-1])
    cols = xp.minimum(terms - 1, (terms * rs.random_sample(total) ** 3.0).astype(xp.int64))
    idf = xp.log(terms / (1.0 + xp.arange(terms)) + 1.0)
    vals = xp.log1p(rs.geometric(0.6, total).astype(xp.float64)) * idf[cols]
    return _device_csr(dev, indptr, cols, vals, (docs, terms))


def scaled(dev, kind, nnz, k):
    """The scaling matrix of ``kind`` (uniform, graph, text) at about ``nnz`` nonzeros:
    ``(name, matrix)``."""
    if kind == "uniform":
        m = nnz // 100
        n = max(k + 1, m // 10)
        return f"uniform {m} x {n}", uniform(dev, m, n, 100, 11)
    a = {"graph": scaled_graph, "text": scaled_text}[kind](dev, nnz, 11)
    return f"{kind} {a.shape[0]} x {a.shape[1]}", a


def descending(s):
    """Singular values on the host, largest first."""
    return np.sort(np.asarray(s.get() if hasattr(s, "get") else s))[::-1]


def timed(dev, f, reps):
    """(median seconds, last result) of ``reps`` synchronized calls."""
    ts, out = [], None
    for _ in range(reps):
        dev.sync()
        t0 = time.perf_counter()
        out = f()
        dev.sync()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), out


def quality(dev, a, u, s, vt, ref):
    """(largest residual / s1, largest |s - s_ref| / s1) of an answer (u m x k, s, vt k x n)."""
    xp = dev.xp
    order = xp.argsort(-s)
    s, u, vt = s[order], u[:, order], vt[order, :]
    v = vt.T
    s1 = float(s[0])
    r1 = xp.linalg.norm(a @ v - u * s[None, :], axis=0)
    r2 = xp.linalg.norm(a.T @ u - v * s[None, :], axis=0)
    res = float(xp.maximum(r1, r2).max()) / s1 if s1 > 0 else math.nan
    off = math.nan
    if ref is not None:
        off = float(np.abs(descending(s) - ref[: s.size]).max()) / ref[0]
    return res, off


def ours(kind, tol, block=None, layout="auto"):
    def run(a, k):
        if kind == "randomized":
            u, s, vt = sptrans.linalg.svds(a, k=k, method="randomized", n_iter=4, n_oversamples=10, layout=layout)
        else:
            u, s, vt = sptrans.linalg.svds(a, k=k, tol=tol, block=block, layout=layout)
        return u, s, vt

    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ks", default="16,50,100,300")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--peer-budget-s", type=float, default=60.0)
    ap.add_argument("--scaling", default="")
    ap.add_argument("--scaling-k", type=int, default=50)
    ap.add_argument("--scaling-kinds", default="uniform", help="structures of the scaling matrices: uniform, graph, text")
    ap.add_argument("--scaling-blocks", default="", help="Lanczos block sizes to try at 1e-8 besides the default, each optionally with a layout (e.g. 8,16,8:pair,16:pair)")
    ap.add_argument("--products", default="", help="k values: time A@X and A.T@Y of each scaling matrix (ours, CuPy) and a copy")
    ap.add_argument("--csv", default="")
    ap.add_argument("--svg", default="")
    ap.add_argument("--cpu", action="store_true")
    args = ap.parse_args()
    dev = Cpu() if args.cpu else Gpu()
    ks = [int(x) for x in args.ks.split(",") if x]
    rows = []
    fields = ["part", "matrix", "rows", "cols", "nnz", "k", "method", "seconds", "max_residual_over_s1", "max_sigma_distance_over_s1", "note"]

    def emit(**r):
        r = {f: r.get(f, "") for f in fields}
        rows.append(r)
        sec = f"{r['seconds']:.3f}" if isinstance(r["seconds"], float) else r["seconds"]
        res = f"{r['max_residual_over_s1']:.1e}" if isinstance(r["max_residual_over_s1"], float) else ""
        off = f"{r['max_sigma_distance_over_s1']:.1e}" if isinstance(r["max_sigma_distance_over_s1"], float) else ""
        print(f"| {r['matrix']} | {r['nnz']} | {r['k']} | {r['method']} | {sec} | {res} | {off} | {r['note']} |", flush=True)

    def measure(base, f, a, k, reps, ref, is_ref):
        """Times ``f(a, k)``, measures its answer against ``ref`` (the reference itself when
        ``is_ref``) and emits its row: ``(seconds, s descending)``, or None when it failed."""
        try:
            secs, (u, s, vt) = timed(dev, lambda: f(a, k), reps)
        except Exception as e:  # noqa: BLE001 (reported in the row)
            emit(**base, seconds="failed", note=f"{type(e).__name__}: {str(e)[:80]}")
            return None
        res, off = quality(dev, a, u, s, vt, None if is_ref else ref)
        emit(**base, seconds=secs, max_residual_over_s1=res, max_sigma_distance_over_s1=0.0 if is_ref else off)
        return secs, descending(s)

    print(f"device: {dev.name}; sptrans {getattr(sptrans, '__version__', '?')}")
    print("| matrix | nnz | k | method | seconds | max residual / s1 | max abs(s - s Lanczos) / s1 | note |")
    print("|---|---|---|---|---|---|---|---|")
    # Warm-up: every method once on a small matrix (module loads, handles, kernels).
    warm = dev.put(text(np.random.default_rng(0), 0.01))
    methods = {"ours, Lanczos": ours("lanczos", args.tol), "ours, randomized": ours("randomized", args.tol)}
    methods.update(dev.peers())
    for f in methods.values():
        try:
            f(warm, 4)
        except Exception:  # noqa: BLE001 (a peer that fails here fails again below, reported)
            pass
    only = [x for x in args.only.split(",") if x]
    for name, gen in SUITE.items():
        if only and name not in only:
            continue
        host = gen(np.random.default_rng(7), args.scale)
        a = dev.put(host)
        shape, nnz = host.shape, host.nnz
        del host
        slow = {}
        for k in ks:
            if k >= min(shape):
                continue
            ref = None
            for method, f in methods.items():
                base = dict(part="suite", matrix=name, rows=shape[0], cols=shape[1], nnz=nnz, k=k, method=method)
                if method in slow:
                    emit(**base, seconds="skipped", note=f"k={slow[method][0]} took {slow[method][1]:.1f} s")
                    continue
                is_ref = method == "ours, Lanczos"
                got = measure(base, f, a, k, args.reps, ref, is_ref)
                if got is None:
                    continue
                if is_ref:
                    ref = got[1]
                if not method.startswith("ours") and got[0] > args.peer_budget_s:
                    slow[method] = (k, got[0])
        del a
    for kind, millions in [(kd, int(x)) for kd in args.scaling_kinds.split(",") if kd for x in args.scaling.split(",") if x]:
        nnz = millions * 1_000_000
        # Generation takes about 3x the matrix's bytes again (CuPy's COO to CSR).
        need = nnz * (40 if kind == "uniform" else 64)
        free = dev.free_bytes()
        if need > free:
            emit(part="scaling", matrix=f"{kind} ~{nnz}", nnz=nnz, k=args.scaling_k, method="-", seconds="skipped", note=f"needs ~{need / 2**30:.0f} GiB, {free / 2**30:.0f} free")
            continue
        name, a = scaled(dev, kind, nnz, args.scaling_k)
        m, n = a.shape
        if args.products and not args.cpu:
            products(dev, a, name, [int(x) for x in args.products.split(",") if x], emit)
        ref = None
        runs = [("ours, Lanczos 1e-8", ours("lanczos", 1e-8)), ("ours, Lanczos 1e-6", ours("lanczos", 1e-6)), ("ours, randomized", ours("randomized", 0))]
        for b in [x for x in args.scaling_blocks.split(",") if x]:
            size, _, layout = b.partition(":")
            runs.append((f"ours, Lanczos 1e-8 block {size}" + (f" ({layout})" if layout else ""), ours("lanczos", 1e-8, int(size), layout or "auto")))
        if "pair" in args.scaling_blocks:
            runs.append(("ours, randomized (pair)", ours("randomized", 0, layout="pair")))
        for method, f in runs:
            base = dict(part="scaling", matrix=name, rows=m, cols=n, nnz=int(a.nnz), k=args.scaling_k, method=method)
            got = measure(base, f, a, args.scaling_k, 1, ref, ref is None)
            if got is not None and ref is None:
                ref = got[1]
        del a
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
    if args.svg:
        plot(rows, args.svg)
    return 0


def event_ms(cp, f, reps=10):
    """Median milliseconds of ``reps`` calls of ``f`` timed by CUDA events (after one warm-up)."""
    f()
    ts = []
    for _ in range(reps):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record()
        f()
        e1.record()
        e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1))
    return float(np.median(ts))


def copy_gbps(cp, nbytes):
    """GB/s of a device copy of ``nbytes`` (bytes read plus bytes written)."""
    src = cp.empty(nbytes // 8, dtype=cp.float64)
    dst = cp.empty_like(src)
    copy_ms = event_ms(cp, lambda: dst.__setitem__(Ellipsis, src))
    return 2 * nbytes / copy_ms / 1e6


def products(dev, a, name, ks, emit):
    """Times (median of 10, CUDA events) our ``Operator``'s ``A @ X`` and ``A.T @ Y`` against
    CuPy's (cuSPARSE SpMM) for each ``k`` and a device copy of the matrix's bytes; the rows
    carry milliseconds and the share of that copy's bandwidth (matrix bytes over the time)."""
    cp = dev.cp
    m, n = a.shape
    mat_bytes = a.data.nbytes + a.indices.nbytes + a.indptr.nbytes
    gbps = copy_gbps(cp, mat_bytes)
    copy_ms = 2 * mat_bytes / gbps / 1e6

    def ms(f):
        return event_ms(cp, f)

    base = dict(part="products", matrix=name, rows=m, cols=n, nnz=int(a.nnz))
    emit(**base, method="copy (read + write the matrix's bytes)", seconds=copy_ms / 1e3, note=f"{gbps:.0f} GB/s")
    op = sptrans.Operator(a)
    at = a.T.tocsr()
    for k in ks:
        x = cp.random.random_sample((n, k)) - 0.5
        y = cp.random.random_sample((m, k)) - 0.5
        for what, f in [
            ("ours A@X", lambda: op @ x),
            ("cupy A@X", lambda: a @ x),
            ("ours A.T@Y", lambda: op.T @ y),
            ("cupy A.T@Y", lambda: a.T @ y),
            ("cupy (stored A.T)@Y", lambda: at @ y),
        ]:
            t = ms(f)
            emit(**base, k=k, method=what, seconds=t / 1e3, note=f"{100 * (mat_bytes / t / 1e6) / gbps:.0f}% of copy")
    del op, at


def plot(rows, path):
    """Seconds against k per matrix and method (log scale), one panel per matrix, and the
    scaling in nonzeros."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no matplotlib: no plot)", file=sys.stderr)
        return
    timed_rows = [r for r in rows if isinstance(r["seconds"], float)]
    mats = sorted({(r["part"], r["matrix"]) for r in timed_rows if r["part"] == "suite"})
    scaling = [r for r in timed_rows if r["part"] == "scaling"]
    panels = len(mats) + (1 if scaling else 0)
    if panels == 0:
        return
    fig, axes = plt.subplots(1, panels, figsize=(4 * panels, 3.5), squeeze=False)
    for ax, (_, mat) in zip(axes[0], mats):
        for method in sorted({r["method"] for r in timed_rows if r["matrix"] == mat}):
            pts = sorted((r["k"], r["seconds"]) for r in timed_rows if r["matrix"] == mat and r["method"] == method)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=method)
        ax.set(title=mat, xlabel="k", ylabel="seconds", xscale="log", yscale="log")
        ax.legend(fontsize=7)
    if scaling:
        ax = axes[0][-1]
        for kind, method in sorted({(r["matrix"].split()[0], r["method"]) for r in scaling}):
            pts = sorted((r["nnz"], r["seconds"]) for r in scaling if r["method"] == method and r["matrix"].split()[0] == kind)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{kind}: {method}")
        ax.set(title=f"scaling, k = {scaling[0]['k']}", xlabel="nonzeros", ylabel="seconds", xscale="log", yscale="log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    sys.exit(main())
