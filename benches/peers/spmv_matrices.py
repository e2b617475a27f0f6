"""The issue-17 SpMV matrices in NumPy/SciPy for the CuPy peers (spmv_floor.py, spmv_colperm.py):
the kinds, sizes and R-MAT parameters of `sptrans gen`'s, drawn with NumPy's generator (so not
the same entries: R-MAT 2^20 has 7,803,706 nonzeros here, 7,803,491 from `sptrans gen`)."""
import numpy as np, scipy.sparse as sp


def rmat(scale, edges, a=0.57, b=0.19, c=0.19, seed=4):
    r = np.random.default_rng(seed); n = 1 << scale
    rows = np.zeros(edges, np.int64); cols = np.zeros(edges, np.int64)
    for bit in range(scale):
        u = r.random(edges)
        down = (u >= a + b); right = ((u >= a) & (u < a + b)) | (u >= a + b + c)
        rows |= down.astype(np.int64) << bit; cols |= right.astype(np.int64) << bit
    m = sp.csr_matrix((r.random(edges), (rows, cols)), shape=(n, n)); m.sum_duplicates(); return m


def uniform(n, nnz, seed=1):
    r = np.random.default_rng(seed)
    m = sp.csr_matrix((r.random(nnz), (r.integers(0, n, nnz), r.integers(0, n, nnz))), shape=(n, n)); m.sum_duplicates(); return m


def laplacian3d(k):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(k, k)); i = sp.identity(k)
    return (sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)).tocsr()


def dense_row(n, nnz, seed=2):
    u = uniform(n, nnz, seed).tocoo(); keep = u.row != n // 2
    rows = np.concatenate([u.row[keep], np.full(n, n // 2)]); cols = np.concatenate([u.col[keep], np.arange(n)])
    vals = np.concatenate([u.data[keep], np.ones(n)])
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))


def issue17():
    """The five matrices of issue 17's SpMV targets as `(name, csr)`, column indices sorted in
    each row, built one at a time."""
    for name, make in [("uniform 100k^2 10M", lambda: uniform(100_000, 10_000_000)), ("R-MAT 2^20 8M", lambda: rmat(20, 8_000_000)),
                       ("R-MAT 2^22 16M", lambda: rmat(22, 16_000_000)), ("3D Laplacian 100^3", lambda: laplacian3d(100)),
                       ("dense row 1M^2 10M + 1M", lambda: dense_row(1_000_000, 10_000_000))]:
        a = make(); a.sort_indices()
        yield name, a
