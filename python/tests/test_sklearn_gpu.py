"""``sptrans.decomposition`` on the GPU: scikit-learn's own estimator checks through the GPU path
(``device="cuda"``: every check's host data decomposed on the device, the results copied back),
and CuPy and PyTorch inputs (dense and sparse) against the host path's results. Skipped by name
without a GPU or CuPy (failed under ``SPTRANS_REQUIRE_GPU=1``); the PyTorch cases also without
PyTorch.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import cupy_or_skip_module

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install scikit-learn)")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from sptrans.decomposition import PCA, TruncatedSVD  # noqa: E402

cp, csp = cupy_or_skip_module(__name__)


@parametrize_with_checks(
    [TruncatedSVD(device="cuda"), PCA(device="cuda"), PCA(n_components=2, device="cuda"), TruncatedSVD(algorithm="randomized", device="cuda")]
)
def test_sklearn_estimator_checks_on_the_gpu(estimator, check):
    check(estimator)


def _data(seed, shape=(300, 40), density=0.1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return sp.random(*shape, density=density, random_state=rng, format="csr").astype(dtype)


def _inputs(X, kind, sparse):
    """``X`` (SciPy CSR) as the framework's input and a function bringing results to NumPy."""
    if kind == "cupy":
        return (csp.csr_matrix(X) if sparse else cp.asarray(X.toarray())), cp.asnumpy
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    dense = torch.as_tensor(X.toarray(), device="cuda")
    return (dense.to_sparse_csr() if sparse else dense), lambda t: t.cpu().numpy()


@pytest.mark.parametrize("kind", ["cupy", "torch"])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("Est", [TruncatedSVD, PCA])
def test_device_inputs_match_the_host(Est, dtype, sparse, kind):
    """Fitted on CuPy or PyTorch input: every fitted array in the input's framework, equal to the
    host path's (relative 1e-8 in f64, 1e-4 in f32, components up to the same sign rule), and
    transform / inverse_transform agree with the host's."""
    X = _data(3, dtype=dtype)
    tol = 1e-8 if dtype == np.float64 else 1e-4
    host = Est(n_components=5, random_state=0).fit(X)
    Xd, back = _inputs(X, kind, sparse)
    dev = Est(n_components=5, random_state=0)
    scores = dev.fit_transform(Xd)
    for name in ("components_", "singular_values_", "explained_variance_", "explained_variance_ratio_"):
        got = getattr(dev, name)
        assert type(got).__module__.split(".")[0] == kind, name
        assert np.allclose(back(got), getattr(host, name), rtol=tol * 10, atol=tol * 10 * float(host.singular_values_[0])), name
    assert back(scores).shape == (300, 5)
    assert np.allclose(back(dev.transform(Xd)), host.transform(X), atol=tol * 100 * float(host.singular_values_[0]))
    assert np.allclose(back(dev.inverse_transform(scores)), host.inverse_transform(back(scores)), atol=tol * 100 * float(host.singular_values_[0]))
    if Est is PCA:
        assert np.allclose(back(dev.mean_), host.mean_, atol=tol)


def test_device_inputs_are_checked():
    """The GPU path refuses what scikit-learn refuses on the host: NaN, the wrong feature count at
    transform, an unknown device."""
    X = _data(4)
    bad = cp.asarray(X.toarray())
    bad[0, 0] = cp.nan
    with pytest.raises(ValueError, match="NaN"):
        TruncatedSVD().fit(bad)
    est = TruncatedSVD().fit(csp.csr_matrix(X))
    with pytest.raises(ValueError, match="features"):
        est.transform(cp.zeros((3, 7)))
    with pytest.raises(ValueError, match="device"):
        TruncatedSVD(device="tpu").fit(X)
