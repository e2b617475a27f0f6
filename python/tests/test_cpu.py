"""The package on SciPy inputs (the host twins), against SciPy itself. Runs without a GPU."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import sptrans
from conftest import SHAPES, random_csr, reference_transpose

pytestmark = pytest.mark.filterwarnings("ignore:sptrans. no CUDA GPU found")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_transpose_matches_scipy(shape, index):
    a = random_csr(*shape, density=0.1, seed=sum(shape), index=index)
    t = sptrans.transpose(a)
    r = reference_transpose(a)
    assert t.shape == (shape[1], shape[0])
    assert np.array_equal(t.indptr, r.indptr)
    assert np.array_equal(t.indices, r.indices)
    assert np.array_equal(t.data, r.data)
    # The caller's index dtype is kept (SciPy's own constructor would narrow int64 that fits).
    assert t.indices.dtype == np.dtype(index) and t.indptr.dtype == np.dtype(index)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int8, np.uint16, np.int16, np.longdouble])
def test_transpose_value_types(dtype):
    a = random_csr(200, 300, density=0.05, dtype=dtype, seed=3)
    t = sptrans.transpose(a)
    r = reference_transpose(a)
    assert t.dtype == np.dtype(dtype)
    assert np.array_equal(t.indices, r.indices)
    if np.dtype(dtype) == np.dtype(np.longdouble):
        # x87 long double: 10 value bytes in 16, padding not kept by SciPy's copy.
        assert np.array_equal(t.data, r.data)
    else:
        # Bit-exact: compare the raw bytes.
        assert t.data.tobytes() == r.data.tobytes()


def test_transpose_keeps_type_and_sorts_unsorted_input():
    a = random_csr(50, 40, density=0.2, seed=5)
    # Reverse the column order inside each row (an unsorted, valid CSR).
    for r in range(a.shape[0]):
        s, e = a.indptr[r], a.indptr[r + 1]
        a.indices[s:e] = a.indices[s:e][::-1].copy()
        a.data[s:e] = a.data[s:e][::-1].copy()
    a.has_sorted_indices = False
    t = sptrans.transpose(a)
    assert isinstance(t, sp.csr_matrix)
    assert t.has_sorted_indices or all(np.all(np.diff(t.indices[t.indptr[i] : t.indptr[i + 1]]) > 0) for i in range(t.shape[0]))
    assert (t != a.T.tocsr()).nnz == 0
    if hasattr(sp, "csr_array"):
        b = sp.csr_array(a)
        assert isinstance(sptrans.transpose(b), sp.csr_array)


def test_transpose_converts_other_formats():
    a = random_csr(60, 70, density=0.1, seed=7)
    for other in (a.tocoo(), a.tocsc()):
        t = sptrans.transpose(other)
        assert (t != a.T.tocsr()).nnz == 0


@pytest.mark.parametrize("algorithm", ["auto", "radix", "scan", "merge", "coo", "serial"])
def test_transpose_algorithms_named(algorithm):
    a = random_csr(100, 80, density=0.1, seed=11)
    t = sptrans.transpose(a, algorithm=algorithm)
    assert (t != a.T.tocsr()).nnz == 0


def malformed():
    a = random_csr(20, 30, density=0.2, seed=13)
    cases = []
    b = a.copy()
    b.indices[5] = 30
    cases.append(("index past the columns", b, "position 5"))
    b = a.copy()
    b.indices[3] = -1
    cases.append(("negative index", b, "position 3"))
    b = a.copy()
    b.indptr[4], b.indptr[5] = b.indptr[5], b.indptr[4] - 1 if b.indptr[4] > 0 else 0
    b.indptr[4] = b.indptr[6] + 1
    cases.append(("decreasing pointer", b, "position"))
    return cases


@pytest.mark.parametrize("what,bad,where", malformed(), ids=[c[0] for c in malformed()])
def test_malformed_structure_is_a_value_error_naming_the_position(what, bad, where):
    # Build without SciPy's own checks so that sptrans sees the bad arrays.
    m = sp.csr_matrix(bad.shape)
    m.indptr, m.indices, m.data = bad.indptr, bad.indices, bad.data
    with pytest.raises(ValueError, match=where):
        sptrans.transpose(m)
    with pytest.raises(ValueError):
        sptrans.linalg.svds(m.astype(np.float64), k=2)


def test_bad_arguments():
    a = random_csr(10, 10, density=0.3)
    with pytest.raises(ValueError, match="algorithm"):
        sptrans.transpose(a, algorithm="fastest")
    with pytest.raises(TypeError, match="unsupported input"):
        sptrans.transpose(np.eye(3))
    with pytest.raises(TypeError, match="unsupported input"):
        sptrans.transpose([[1, 0], [0, 1]])
    with pytest.raises(TypeError, match="float32 or float64"):
        sptrans.Operator(random_csr(10, 10, dtype=np.complex128))
    with pytest.raises(ValueError, match="format"):
        sptrans.Operator(a, format="dense")
    with pytest.raises(TypeError, match="unsupported input"):
        sptrans.transpose(object())


@pytest.mark.parametrize("shape", [(1, 1), (31, 33), (33, 31), (500, 300), (300, 500)])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_operator_products_match_scipy(shape, dtype, tol):
    a = random_csr(*shape, density=0.1, dtype=dtype, seed=17)
    op = sptrans.Operator(a)
    rng = np.random.default_rng(1)
    for k in (None, 1, 4, 16, 20):
        xs = (shape[1],) if k is None else (shape[1], k)
        ys = (shape[0],) if k is None else (shape[0], k)
        x = rng.standard_normal(xs).astype(dtype)
        y = rng.standard_normal(ys).astype(dtype)
        scale = max(1.0, float(np.abs(a).sum()))
        got, want = op @ x, a @ x
        assert got.shape == want.shape and got.dtype == np.dtype(dtype)
        assert np.abs(got - want).max(initial=0) <= tol * scale
        got, want = op.T @ y, a.T @ y
        assert got.shape == want.shape
        assert np.abs(got - want).max(initial=0) <= tol * scale


def test_operator_errors_and_linear_operator():
    a = random_csr(40, 30, density=0.2, seed=19)
    for bad in [0, -3, 2.5, True, "10"]:
        with pytest.raises(ValueError, match="products"):
            sptrans.Operator(a, format="auto", products=bad)
    # SciPy input runs the host twin: no format is timed.
    assert sptrans.Operator(a, format="auto").trials == []
    op = sptrans.Operator(a)
    with pytest.raises(ValueError, match=r"shape \(30,\)"):
        op @ np.ones(40)
    with pytest.raises(ValueError):
        op.T @ np.ones(30)
    lo = op.aslinearoperator()
    x = np.arange(30.0)
    assert np.allclose(lo.matvec(x), a @ x, rtol=1e-12, atol=1e-12)
    assert np.allclose(lo.rmatvec(np.arange(40.0)), a.T @ np.arange(40.0), rtol=1e-12, atol=1e-12)
    assert op.T.shape == (30, 40)


def spectra():
    rng = np.random.default_rng(23)
    out = []
    m, n = 300, 120
    q1, _ = np.linalg.qr(rng.standard_normal((m, n)))
    q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
    for name, s in [
        ("decaying", 0.8 ** np.arange(n)),
        ("flat", np.ones(n) + 1e-3 * np.arange(n)[::-1]),
        ("clustered", np.repeat([5.0, 4.99, 1.0], [4, 4, n - 8])),
        ("rank-deficient", np.concatenate([np.arange(5, 0, -1.0), np.zeros(n - 5)])),
    ]:
        d = (q1 * s) @ q2.T
        out.append((name, sp.csr_matrix(d)))
    out.append(("sparse", random_csr(400, 250, density=0.03, seed=29)))
    return out


@pytest.mark.parametrize("name,a", spectra(), ids=[s[0] for s in spectra()])
def test_svds_matches_dense_svd(name, a):
    k = 6
    ref = np.linalg.svd(a.toarray(), compute_uv=False)
    u, s, vh = sptrans.linalg.svds(a, k=k, random_state=1)
    assert np.all(np.diff(s) >= 0), "ascending, as SciPy returns them"
    assert np.abs(s - ref[:k][::-1]).max() <= 1e-10 * ref[0]
    assert u.shape == (a.shape[0], k) and vh.shape == (k, a.shape[1])
    # Triplets: A v = s u for each nonzero s.
    res = np.abs(a @ vh.T - u * s).max()
    assert res <= 1e-8 * ref[0]
    only = sptrans.linalg.svds(a, k=k, return_singular_vectors=False, random_state=1)
    assert np.abs(only - s).max() <= 1e-10 * ref[0]


@pytest.mark.parametrize("name,a", spectra(), ids=[s[0] for s in spectra()])
def test_svds_randomized(name, a):
    """method="randomized": exact where the sketch spans the smaller dimension; on the decaying
    spectrum to 1e-8 of s_max in the default sketch; a missed tol only warns, naming the residual."""
    k = 6
    ref = np.linalg.svd(a.toarray(), compute_uv=False)
    u, s, vh = sptrans.linalg.svds(a, k=k, random_state=1, method="randomized", n_oversamples=min(a.shape))
    assert np.abs(s - ref[:k][::-1]).max() <= 1e-10 * ref[0], name
    assert np.abs(a @ vh.T - u * s).max() <= 1e-8 * ref[0], name
    if name == "decaying":
        s = sptrans.linalg.svds(a, k=k, random_state=1, method="randomized", return_singular_vectors=False, tol=1e-8)
        assert np.abs(s - ref[:k][::-1]).max() <= 1e-8 * ref[0]
    if name == "flat":
        with pytest.warns(RuntimeWarning, match="largest residual is"):
            sptrans.linalg.svds(a, k=k, random_state=1, method="randomized", n_oversamples=2, n_iter=0, tol=1e-12)


def test_svds_randomized_errors():
    a = random_csr(100, 60, density=0.1, seed=37)
    with pytest.raises(ValueError, match="method="):
        sptrans.linalg.svds(a, k=3, method="power")
    with pytest.raises(ValueError, match="layout="):
        sptrans.linalg.svds(a, k=3, layout="coo")
    # The host paths take any valid layout and ignore it: the same answer.
    s0 = sptrans.linalg.svds(a, k=3, random_state=1, return_singular_vectors=False)
    s1 = sptrans.linalg.svds(a, k=3, random_state=1, return_singular_vectors=False, layout="pair")
    assert np.array_equal(s0, s1)
    with pytest.raises(ValueError, match="n_iter"):
        sptrans.linalg.svds(a, k=3, method="randomized", n_iter=-1)
    with pytest.raises(ValueError, match="n_oversamples"):
        sptrans.linalg.svds(a, k=3, method="randomized", n_oversamples=1.5)
    with pytest.raises(NotImplementedError):
        sptrans.linalg.svds(a, k=3, method="randomized", v0=np.ones(60))


def test_svds_options_and_errors():
    a = random_csr(100, 60, density=0.1, seed=31)
    u, s, vh = sptrans.linalg.svds(a, k=3, return_singular_vectors="u")
    assert vh is None and u.shape == (100, 3)
    u, s, vh = sptrans.linalg.svds(a, k=3, return_singular_vectors="vh")
    assert u is None and vh.shape == (3, 60)
    s32 = sptrans.linalg.svds(a.astype(np.float32), k=3, return_singular_vectors=False)
    assert s32.dtype == np.float32
    ref = np.linalg.svd(a.toarray(), compute_uv=False)[:3][::-1]
    assert np.abs(s32 - ref).max() <= 1e-5 * ref[-1]
    # SciPy's messages (its own tests run against ours in test_scipy_svds.py).
    with pytest.raises(ValueError, match="`k` must be an integer satisfying"):
        sptrans.linalg.svds(a, k=0)
    with pytest.raises(ValueError, match="`k` must be an integer satisfying"):
        sptrans.linalg.svds(a, k=61)
    with pytest.raises(ValueError, match="`which` must be in"):
        sptrans.linalg.svds(a, k=2, which="XX")
    # The smallest values, a start vector, complex values and LinearOperators: the host
    # operator Lanczos, against the dense SVD.
    dense = np.linalg.svd(a.toarray(), compute_uv=False)
    s_sm = sptrans.linalg.svds(a, k=2, which="SM", return_singular_vectors=False)
    assert np.abs(s_sm - np.sort(dense)[:2]).max() <= 1e-10 * dense[0]
    s_v0 = sptrans.linalg.svds(a, k=2, v0=np.ones(min(a.shape)), return_singular_vectors=False)
    assert np.abs(s_v0 - dense[:2][::-1]).max() <= 1e-10 * dense[0]
    c = a.astype(np.complex128) * (1 + 2j)
    u_c, s_c, vh_c = sptrans.linalg.svds(c, k=3)
    assert np.abs(s_c - np.linalg.svd(c.toarray(), compute_uv=False)[:3][::-1]).max() <= 1e-10 * dense[0] * 3
    assert np.abs((u_c * s_c) @ vh_c - c.toarray()).max() <= np.abs(c.toarray()).max()  # a rank-3 part, no blow-up
    from scipy.sparse.linalg import aslinearoperator

    s_op = sptrans.linalg.svds(aslinearoperator(a), k=3, return_singular_vectors=False)
    assert np.abs(s_op - dense[:3][::-1]).max() <= 1e-10 * dense[0]
    # Dense arrays (integers too) are taken, as SciPy takes them.
    d = np.asarray(a.toarray() * 4, dtype=np.int64)
    sd = sptrans.linalg.svds(d, k=3, return_singular_vectors=False, rng=1)
    ref_d = np.linalg.svd(d.astype(np.float64), compute_uv=False)[:3][::-1]
    assert np.abs(sd - ref_d).max() <= 1e-9 * ref_d[-1]
    b = a.copy()
    b.data[3] = np.nan
    with pytest.raises(ValueError, match="(?i)nan|finite"):
        sptrans.linalg.svds(b, k=2)


def test_no_gpu_notice_is_a_warning_once(monkeypatch):
    from sptrans import _frameworks

    monkeypatch.setattr(_frameworks, "_warned", [])
    monkeypatch.setattr(_frameworks._native, "gpu_available", lambda: False)
    a = random_csr(10, 10, density=0.3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sptrans.transpose(a)
        sptrans.transpose(a)
    notes = [x for x in w if "no CUDA GPU" in str(x.message)]
    assert len(notes) == 1


@pytest.mark.parametrize("shape", [(300, 60), (60, 300), (500, 40)])
def test_svds_center_is_pca(shape):
    a = random_csr(*shape, density=0.1, seed=67)
    d = a.toarray()
    c = d - d.mean(axis=0)
    ref = np.linalg.svd(c, compute_uv=False)
    k = 5
    u, s, vh = sptrans.linalg.svds(a, k=k, center=True, random_state=3)
    assert np.abs(s - ref[:k][::-1]).max() <= 1e-10 * ref[0]
    assert np.abs(c @ vh.T - u * s).max() <= 1e-8 * ref[0]


@pytest.mark.parametrize("shape", [(1, 40), (40, 1), (7, 7), (30, 12), (12, 30)])
@pytest.mark.parametrize("kind", ["operator", "complex", "sm"])
def test_host_operator_svds_awkward_shapes(shape, kind):
    # The host operator Lanczos against the dense SVD: a row, a column, square, tall, wide;
    # k up to min(m, n) (solver "lanczos" allows it); rank-deficient and repeated values.
    from scipy.sparse.linalg import aslinearoperator

    rng = np.random.default_rng(sum(shape))
    m, n = shape
    a = rng.standard_normal(shape)
    if min(shape) > 4:
        a[:, -1] = a[:, 0]  # rank-deficient
        a[0] *= 0
    if kind == "complex":
        a = a + 1j * rng.standard_normal(shape)
    ref = np.linalg.svd(a, compute_uv=False)
    for k in sorted({1, min(shape)}):
        which = "SM" if kind == "sm" else "LM"
        arg = aslinearoperator(a) if kind == "operator" else (a if kind == "complex" else sp.csr_array(a))
        u, s, vh = sptrans.linalg.svds(arg, k=k, which=which, solver="lanczos", rng=3)
        want = np.sort(ref)[:k] if which == "SM" else np.sort(ref)[-k:]
        assert np.abs(s - want).max() <= 1e-10 * max(ref[0], 1.0), (shape, kind, k)
        assert u.shape == (m, k) and vh.shape == (k, n)
        # Orthonormal vectors, and A v = s u.
        assert np.abs(u.conj().T @ u - np.eye(k)).max() <= 1e-9
        assert np.abs(vh @ vh.conj().T - np.eye(k)).max() <= 1e-9
        assert np.abs(a @ vh.conj().T - u * s).max() <= 1e-9 * max(ref[0], 1.0)
