"""The package on CuPy and PyTorch CUDA inputs, against SciPy. Skipped by name without a GPU
(failing instead with SPTRANS_REQUIRE_GPU=1)."""

import numpy as np
import pytest
import scipy.sparse

import sptrans
from sptrans import _frameworks, _native
from conftest import SHAPES, parts_of, random_csr, reference_transpose

BIG = [(70001, 50003), (1 << 17, (1 << 16) + 1)]


@pytest.mark.parametrize("shape", SHAPES + BIG)
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_transpose_matches_scipy(gpu_fw, shape, index):
    density = 0.1 if shape[0] * shape[1] < 10**7 else 4e-4
    a = random_csr(*shape, density=density, seed=sum(shape), index=index)
    d = gpu_fw.csr(a)
    t = sptrans.transpose(d)
    r = reference_transpose(a)
    p, i, v = parts_of(gpu_fw, t)
    dp, di, _ = parts_of(gpu_fw, d)
    assert tuple(t.shape) == (shape[1], shape[0])
    # The index dtype the framework holds (CuPy narrows int64 to int32 where it fits).
    assert p.dtype == dp.dtype and i.dtype == di.dtype
    assert np.array_equal(p, r.indptr) and np.array_equal(i, r.indices)
    assert v.tobytes() == r.data.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int8, np.int16])
@pytest.mark.parametrize("algorithm", ["auto", "radix", "scan", "merge", "coo", "serial"])
def test_transpose_value_types_and_algorithms(gpu_fw, dtype, algorithm):
    if gpu_fw.name == "cupy" and np.dtype(dtype).kind not in "fc" and np.dtype(dtype) != np.dtype(np.bool_):
        pytest.skip("CuPy sparse matrices hold float, complex and bool values only")
    a = random_csr(1025, 769, density=0.02, dtype=dtype, seed=37)
    t = sptrans.transpose(gpu_fw.csr(a), algorithm=algorithm)
    r = reference_transpose(a)
    p, i, v = parts_of(gpu_fw, t)
    assert np.array_equal(p, r.indptr) and np.array_equal(i, r.indices)
    assert v.tobytes() == r.data.tobytes()


def test_transpose_borrows_inputs_and_fills_poisoned_outputs(gpu_fw, monkeypatch):
    a = random_csr(3001, 2003, density=0.01, seed=41)
    d = gpu_fw.csr(a)
    seen = {}
    real = _native.transpose_gpu

    def spy(*args):
        a = args[2]
        seen["in"] = a[3], a[5], a[7]
        return real(*args)

    monkeypatch.setattr(_native, "transpose_gpu", spy)
    fw = _frameworks.adapter(gpu_fw.name)
    empty = fw.empty

    def poisoned(shape, dtype, device, order="C"):
        out = empty(shape, dtype, device, order)
        if gpu_fw.name == "cupy":
            out.view(np.uint8)[...] = 0xFF
        else:
            out.view(gpu_fw.m.uint8).fill_(0xFF)
        return out

    monkeypatch.setattr(fw, "empty", poisoned)
    t = sptrans.transpose(d)
    if gpu_fw.name == "cupy":
        own = d.indptr.data.ptr, d.indices.data.ptr, d.data.data.ptr
    else:
        own = d.crow_indices().data_ptr(), d.col_indices().data_ptr(), d.values().data_ptr()
    assert seen["in"] == own, "the input arrays are passed by address, not copied"
    r = reference_transpose(a)
    p, i, v = parts_of(gpu_fw, t)
    assert np.array_equal(p, r.indptr) and np.array_equal(i, r.indices) and np.array_equal(v, r.data)


def test_transpose_on_a_non_default_stream(gpu_fw):
    a = random_csr(20000, 15000, density=0.002, seed=43)
    if gpu_fw.name == "cupy":
        cp = gpu_fw.m
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            d = gpu_fw.csr(a)
            t = sptrans.transpose(d)
            p, i, v = parts_of(gpu_fw, t)
        s.synchronize()
    else:
        torch = gpu_fw.m
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            d = gpu_fw.csr(a)
            t = sptrans.transpose(d)
            p, i, v = parts_of(gpu_fw, t)
    r = reference_transpose(a)
    assert np.array_equal(p, r.indptr) and np.array_equal(i, r.indices) and np.array_equal(v, r.data)


@pytest.mark.parametrize("algorithm", ["auto", "radix", "scan"])
def test_malformed_device_structure_is_a_value_error(gpu_fw, algorithm):
    # "auto" and "radix" run beside the check and read its verdict after; "scan" waits for it.
    a = random_csr(200, 100, density=0.05, seed=47)
    b = a.copy()
    b.indices[17] = 100
    with pytest.raises(ValueError, match="position 17"):
        sptrans.transpose(gpu_fw.csr(b), algorithm)
    b = a.copy()
    b.indices[9] = -3
    with pytest.raises(ValueError, match="position 9"):
        sptrans.transpose(gpu_fw.csr(b), algorithm)
    for index in (np.int32, np.int64):
        b = random_csr(200, 100, density=0.05, seed=47, index=index)
        b.indptr[50] = b.indptr[49] - 1 if b.indptr[49] > 0 else b.indptr[51] + 5
        with pytest.raises(ValueError, match="indptr"):
            sptrans.transpose(gpu_fw.csr(b), algorithm)
    # The same arrays, repaired, transpose correctly afterwards (nothing left poisoned).
    t = sptrans.transpose(gpu_fw.csr(a), algorithm)
    p, i, v = parts_of(gpu_fw, t)
    r = reference_transpose(a)
    assert np.array_equal(p, r.indptr) and np.array_equal(i, r.indices) and v.tobytes() == r.data.tobytes()


@pytest.mark.parametrize("shape", [(1, 1), (33, 31), (31, 33), (5000, 3000), (3000, 5000)])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_operator_products_match_scipy(gpu_fw, shape, dtype, tol):
    a = random_csr(*shape, density=0.01 if shape[0] > 100 else 0.2, dtype=dtype, seed=53)
    op = sptrans.Operator(gpu_fw.csr(a))
    rng = np.random.default_rng(3)
    scale = max(1.0, float(np.abs(a).sum(axis=1).max()), float(np.abs(a).sum(axis=0).max()))
    for k in (None, 1, 2, 4, 16, 21):
        xs = (shape[1],) if k is None else (shape[1], k)
        ys = (shape[0],) if k is None else (shape[0], k)
        x = rng.standard_normal(xs).astype(dtype)
        y = rng.standard_normal(ys).astype(dtype)
        got = gpu_fw.host(op @ gpu_fw.dense(x))
        assert got.shape == (a @ x).shape
        assert np.abs(got - a @ x).max(initial=0) <= tol * scale * 4
        got = gpu_fw.host(op.T @ gpu_fw.dense(y))
        assert np.abs(got - a.T @ y).max(initial=0) <= tol * scale * 4


def test_operator_rejects_foreign_operands(gpu_fw):
    a = random_csr(50, 40, density=0.1, seed=59)
    op = sptrans.Operator(gpu_fw.csr(a))
    with pytest.raises(TypeError):
        op @ np.ones(40)
    with pytest.raises(ValueError):
        op @ gpu_fw.dense(np.ones(41))


@pytest.mark.parametrize("layout,block", [("auto", None), ("pair", 4), ("pair", 16)])
def test_svds_matches_dense_svd(gpu_fw, layout, block):
    from test_cpu import spectra

    for name, a in spectra():
        ref = np.linalg.svd(a.toarray(), compute_uv=False)
        u, s, vh = sptrans.linalg.svds(gpu_fw.csr(a), k=6, random_state=1, layout=layout, block=block)
        s, u, vh = gpu_fw.host(s), gpu_fw.host(u), gpu_fw.host(vh)
        assert np.abs(s - ref[:6][::-1]).max() <= 1e-10 * ref[0], (name, layout, block)
        assert np.abs(a @ vh.T - u * s).max() <= 1e-8 * ref[0], (name, layout, block)


def test_svds_float32_and_errors(gpu_fw):
    a = random_csr(3000, 800, density=0.01, dtype=np.float32, seed=61)
    s = gpu_fw.host(sptrans.linalg.svds(gpu_fw.csr(a), k=4, return_singular_vectors=False))
    ref = np.linalg.svd(a.toarray().astype(np.float64), compute_uv=False)[:4][::-1]
    assert s.dtype == np.float32 and np.abs(s - ref).max() <= 1e-6 * ref[-1]
    b = a.copy()
    b.data[5] = np.inf
    with pytest.raises(ValueError):
        sptrans.linalg.svds(gpu_fw.csr(b), k=2)
    with pytest.raises(ValueError):
        sptrans.linalg.svds(gpu_fw.csr(a), k=801)


def test_svds_takes_dense_arrays(gpu_fw):
    # A dense array of the framework (as SciPy's svds takes NumPy arrays) is converted to CSR
    # on the device; integers become float64.
    a = random_csr(500, 300, density=0.05, seed=7)
    ref = np.linalg.svd(a.toarray(), compute_uv=False)[:4][::-1]
    s = gpu_fw.host(sptrans.linalg.svds(gpu_fw.dense(a.toarray()), k=4, return_singular_vectors=False, rng=3))
    assert np.abs(s - ref).max() <= 1e-9 * ref[-1]
    ints = np.rint(a.toarray() * 10)
    ref_i = np.linalg.svd(ints, compute_uv=False)[:2][::-1]
    s_i = gpu_fw.host(sptrans.linalg.svds(gpu_fw.dense(ints.astype(np.int64)), k=2, return_singular_vectors=False))
    assert np.abs(s_i - ref_i).max() <= 1e-9 * ref_i[-1]


def test_svds_host_only_options_are_refused_on_the_gpu(gpu_fw):
    # v0 and which='SM' run on the host operator Lanczos only: a GPU input says so.
    a = gpu_fw.csr(random_csr(300, 200, density=0.05, seed=9))
    with pytest.raises(NotImplementedError, match="host only"):
        sptrans.linalg.svds(a, k=2, which="SM")
    with pytest.raises(NotImplementedError, match="host only"):
        sptrans.linalg.svds(a, k=2, v0=np.ones(200))


def test_svds_randomized_matches_dense_svd(gpu_fw):
    from test_cpu import spectra

    for name, a in spectra():
        ref = np.linalg.svd(a.toarray(), compute_uv=False)
        u, s, vh = sptrans.linalg.svds(gpu_fw.csr(a), k=6, random_state=1, method="randomized", n_oversamples=min(a.shape))
        s, u, vh = gpu_fw.host(s), gpu_fw.host(u), gpu_fw.host(vh)
        assert np.abs(s - ref[:6][::-1]).max() <= 1e-10 * ref[0], name
        assert np.abs(a @ vh.T - u * s).max() <= 1e-8 * ref[0], name


def test_svds_center_is_pca(gpu_fw):
    for shape in [(3000, 200), (200, 3000)]:
        a = random_csr(*shape, density=0.02, seed=71)
        c = a.toarray() - a.toarray().mean(axis=0)
        ref = np.linalg.svd(c, compute_uv=False)
        u, s, vh = sptrans.linalg.svds(gpu_fw.csr(a), k=6, center=True, random_state=5)
        s, u, vh = gpu_fw.host(s), gpu_fw.host(u), gpu_fw.host(vh)
        assert np.abs(s - ref[:6][::-1]).max() <= 1e-10 * ref[0]
        assert np.abs(c @ vh.T - u * s).max() <= 1e-8 * ref[0]


@pytest.mark.parametrize("format", ["auto", "csr-vector", "merge-path", "hyb", "jds", "sell", "csr-adaptive"])
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_operator_spmv_formats(gpu_fw, format, index):
    a = random_csr(4099, 3001, density=0.003, seed=73, index=index)
    op = sptrans.Operator(gpu_fw.csr(a), format=format)
    assert op.format != "csrc" and (format == "auto" or op.format == format)
    rng = np.random.default_rng(9)
    for shape in [(3001,), (3001, 3)]:
        x = rng.standard_normal(shape)
        got = gpu_fw.host(op @ gpu_fw.dense(x))
        assert np.abs(got - a @ x).max() <= 1e-12 * max(1.0, float(np.abs(a).sum(axis=1).max()))
    with pytest.raises(ValueError, match="transposed"):
        op.T @ gpu_fw.dense(np.ones(4099))


@pytest.mark.parametrize("format", ["csr-vector", "merge-path", "csr-scalar", "auto"])
def test_operator_survives_changes_to_the_callers_arrays(gpu_fw, format):
    # The SpMV formats index with a private, checked copy of the structure: a caller who
    # rewrites A's index arrays after building the operator (an out-of-range column, a pointer
    # past the end) gets the products of the matrix the operator was built from, and the
    # process's GPU context stays usable.
    a = random_csr(4099, 3001, density=0.003, seed=79)
    d = gpu_fw.csr(a)
    op = sptrans.Operator(d, format=format, products=1000)
    if gpu_fw.name == "cupy":
        d.indices[5] = 2_000_000_000
        d.indptr[7] = 2_000_000_000
    else:
        d.col_indices()[5] = 2_000_000_000
        d.crow_indices()[7] = 2_000_000_000
    x = np.random.default_rng(3).standard_normal(3001)
    got = gpu_fw.host(op @ gpu_fw.dense(x))
    assert np.abs(got - a @ x).max() <= 1e-12 * max(1.0, float(np.abs(a).sum(axis=1).max()))
    # The context is alive: a later product and a framework operation both run.
    assert float(gpu_fw.host(gpu_fw.dense(np.ones(4)) * 2).sum()) == 8.0


def sptrans_margin():
    # gpu_spmv::TRIAL_MARGIN: Auto keeps cuSPARSE unless another format beats it by this much.
    return 0.03


def test_operator_sell_vi(gpu_fw):
    # SELL-VI: a matrix of few values (a 2D Laplacian: 4 and -1) by a byte a value, the product
    # SciPy's; random values (more than 256) refused with ValueError.
    n = 90
    t = scipy.sparse.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    lap = (scipy.sparse.kron(scipy.sparse.identity(n), t) + scipy.sparse.kron(t, scipy.sparse.identity(n))).tocsr()
    op = sptrans.Operator(gpu_fw.csr(lap), format="sell-vi")
    assert op.format == "sell-vi"
    x = np.random.default_rng(5).standard_normal(n * n)
    assert np.abs(gpu_fw.host(op @ gpu_fw.dense(x)) - lap @ x).max() <= 1e-12 * 8
    with pytest.raises(ValueError, match="distinct values"):
        sptrans.Operator(gpu_fw.csr(random_csr(3000, 2000, density=0.01, seed=3)), format="sell-vi")


def test_operator_auto_for_few_products(gpu_fw):
    # A 2D Laplacian (even rows, two values): "auto" times JDS, SELL-C-σ, SELL-VI and cuSPARSE
    # for many products and keeps one of them, takes CSR-adaptive (no sort, no trial) for a few;
    # both products agree with SciPy.
    n = 120
    t = scipy.sparse.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    lap = (scipy.sparse.kron(scipy.sparse.identity(n), t) + scipy.sparse.kron(t, scipy.sparse.identity(n))).tocsr()
    x = np.random.default_rng(4).standard_normal(n * n)
    for products, want in [(1000, ("jds", "sell", "sell-vi", "cusparse")), (2, ("csr-adaptive",))]:
        op = sptrans.Operator(gpu_fw.csr(lap), format="auto", products=products)
        assert op.format in want
        # The trial (many products): what it timed, the kept format the fastest of them.
        if products >= 200:
            assert [f for f, _ in op.trials][:3] == ["jds", "sell", "sell-vi"] and all(ms > 0 for _, ms in op.trials)
            # The fastest of ours, unless cuSPARSE (timed last) is within the trial's margin.
            ours = min((t for t in op.trials if t[0] != "cusparse"), key=lambda t: t[1])
            peer = [ms for f, ms in op.trials if f == "cusparse"]
            keep_peer = peer and peer[0] * (1 - sptrans_margin()) < ours[1]
            assert op.format == ("cusparse" if keep_peer else ours[0])
        else:
            assert op.trials == []
        assert np.abs(gpu_fw.host(op @ gpu_fw.dense(x)) - lap @ x).max() <= 1e-12 * 4
