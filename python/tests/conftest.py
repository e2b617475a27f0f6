"""Shared fixtures: random matrices of awkward shapes, and the GPU frameworks present.

GPU tests are skipped by name when no GPU (or neither CuPy nor PyTorch) is present; with
SPTRANS_REQUIRE_GPU=1 a missing GPU or framework fails them instead.
"""

import os

import numpy as np
import pytest
import scipy.sparse as sp

import sptrans

REQUIRE_GPU = os.environ.get("SPTRANS_REQUIRE_GPU") == "1"

# Shapes: empty, single, warp edges, 2^k +- 1, a tile edge, a few thousand rows.
SHAPES = [(0, 0), (0, 5), (5, 0), (1, 1), (31, 33), (32, 32), (33, 31), (127, 129), (1023, 1025), (4097, 2049)]


def random_csr(rows, cols, density=0.05, dtype=np.float64, seed=0, index=np.int32):
    """A random CSR with values of `dtype` and index arrays of `index`."""
    rng = np.random.default_rng(seed)
    nnz = int(rows * cols * density)
    r = rng.integers(0, max(rows, 1), nnz) if rows else np.zeros(0, np.int64)
    c = rng.integers(0, max(cols, 1), nnz) if cols else np.zeros(0, np.int64)
    if rows == 0 or cols == 0:
        r = c = np.zeros(0, np.int64)
    if np.dtype(dtype).kind == "c":
        v = rng.standard_normal(len(r)) + 1j * rng.standard_normal(len(r))
    elif np.dtype(dtype).kind == "f":
        v = rng.standard_normal(len(r))
    else:
        v = rng.integers(-100, 100, len(r))
    a = sp.coo_matrix((v.astype(dtype), (r, c)), shape=(rows, cols)).tocsr()
    a.sum_duplicates()
    a.indptr = a.indptr.astype(index)
    a.indices = a.indices.astype(index)
    return a


def cupy_or_skip_module(module):
    """``(cupy, cupyx.scipy.sparse)`` for the module of GPU tests named ``module`` (its
    ``__name__``), or the whole module skipped, by that name, without a GPU or CuPy (failed under
    ``SPTRANS_REQUIRE_GPU=1``)."""
    try:
        import cupy
        import cupyx.scipy.sparse as csp

        why = None if sptrans.gpu_available() else "no CUDA GPU"
    except Exception as e:  # noqa: BLE001 - any import failure means "not here"
        why = f"CuPy not importable ({type(e).__name__})"
    if why is not None:
        if REQUIRE_GPU:
            pytest.fail(f"{module}: SPTRANS_REQUIRE_GPU=1 but {why}", pytrace=False)
        pytest.skip(f"GPU test skipped ({module}): {why}", allow_module_level=True)
    return cupy, csp


def reference_transpose(a):
    """SciPy's transpose as CSR with sorted indices."""
    t = a.T.tocsr()
    t.sort_indices()
    return t


def frameworks():
    """The GPU frameworks to test: (name, module) for CuPy and PyTorch when importable."""
    out = []
    try:
        import cupy

        out.append(("cupy", cupy))
    except Exception:  # noqa: BLE001 - any import failure means "not here"
        out.append(("cupy", None))
    try:
        import torch

        out.append(("torch", torch))
    except Exception:  # noqa: BLE001
        out.append(("torch", None))
    return out


@pytest.fixture(params=[f[0] for f in frameworks()])
def gpu_fw(request):
    """A GPU framework adapter for tests: to_device(scipy csr), to_device_dense, to_host."""
    name = request.param
    module = dict(frameworks())[name]
    if module is None or not sptrans.gpu_available():
        why = "no CUDA GPU" if not sptrans.gpu_available() else f"{name} not importable"
        if REQUIRE_GPU:
            pytest.fail(f"SPTRANS_REQUIRE_GPU=1 but {why}")
        pytest.skip(f"GPU test skipped: {why}")
    return Device(name, module)


class Device:
    """Moves SciPy/NumPy data to a framework's device and back."""

    def __init__(self, name, module):
        self.name, self.m = name, module

    def csr(self, a):
        if self.name == "cupy":
            import cupyx.scipy.sparse as csp

            cp = self.m
            return csp.csr_matrix((cp.asarray(a.data), cp.asarray(a.indices), cp.asarray(a.indptr)), shape=a.shape)
        t = self.m
        return t.sparse_csr_tensor(
            t.from_numpy(a.indptr).cuda(), t.from_numpy(a.indices).cuda(), t.from_numpy(a.data).cuda(), size=a.shape
        )

    def dense(self, x):
        if self.name == "cupy":
            return self.m.asarray(x)
        return self.m.from_numpy(np.ascontiguousarray(x)).cuda()

    def host(self, x):
        if self.name == "cupy":
            return self.m.asnumpy(x)
        return x.detach().cpu().numpy()

    def host_csr(self, t):
        """A SciPy CSR of a result."""
        if self.name == "cupy":
            return sp.csr_matrix((self.host(t.data), self.host(t.indices), self.host(t.indptr)), shape=t.shape)
        return sp.csr_matrix(
            (self.host(t.values()), self.host(t.col_indices()), self.host(t.crow_indices())), shape=tuple(t.shape)
        )


def parts_of(fw, t):
    """(indptr, indices, data) of a framework's CSR result as NumPy arrays (no conversion)."""
    if fw.name == "cupy":
        return fw.host(t.indptr), fw.host(t.indices), fw.host(t.data)
    return fw.host(t.crow_indices()), fw.host(t.col_indices()), fw.host(t.values())


# SciPy's own svds tests (test_scipy_svds.py): the cases ours does not support yet, by the
# exception they end in (or the test's name), reported as expected failures with the reason.
# (On SciPy 1.17.1 only the two named below remain; the exception table covers what GPU inputs
# and other SciPy versions may bring.)
SCIPY_SVDS_UNSUPPORTED = [
    ("TypeError", "not complex", "complex values are not supported (real float32/float64 only)"),
    ("NotImplementedError", "which='SM'", "which='SM' (the smallest singular values) is not implemented"),
    ("NotImplementedError", "v0", "a start vector v0 is not implemented"),
    ("NotImplementedError", "LinearOperator", "LinearOperator inputs are not implemented"),
    ("NotImplementedError", "host only", "on GPU inputs: which='SM' and v0 run on the host path only"),
]
SCIPY_SVDS_BY_NAME = {
    "test_svd_maxiter": "expects the named solver's own exception after one iteration (ARPACK's ArpackNoConvergence, PROPACK's LinAlgError); ours counts restarts and raises RuntimeError",
    "test_svds_parameter_tol": "expects the named solver's accuracy steps at each tol (ARPACK: 2.5e-15 at tol=1e-4); ours stops at the residual asked",
}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if "test_scipy_svds.py" not in item.nodeid and "test_scipy_svds_gpu.py" not in item.nodeid:
        return
    if rep.when != "call" or not rep.failed:
        return
    name = item.name.split("[")[0]
    reason = SCIPY_SVDS_BY_NAME.get(name)
    if reason is None and call.excinfo is not None:
        kind, text = call.excinfo.typename, str(call.excinfo.value)
        reason = next((why for k, needle, why in SCIPY_SVDS_UNSUPPORTED if k == kind and needle in text), None)
    if reason is not None:
        rep.outcome = "skipped"
        rep.wasxfail = f"not like SciPy's: {reason}"
