"""``sptrans.decomposition``: scikit-learn's own estimator checks, and the results against
scikit-learn's ``TruncatedSVD`` and ``PCA`` (host inputs)."""

import numpy as np
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install scikit-learn)")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from sptrans.decomposition import PCA, TruncatedSVD  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:sptrans. no CUDA GPU found")


@parametrize_with_checks([TruncatedSVD(), PCA(), PCA(n_components=2), TruncatedSVD(algorithm="randomized")])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _data(seed, shape=(300, 40), density=0.1):
    rng = np.random.default_rng(seed)
    return sp.random(*shape, density=density, random_state=rng, format="csr")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_truncated_svd_matches_sklearn(dtype):
    from sklearn.decomposition import TruncatedSVD as SkTruncatedSVD

    X = _data(1).astype(dtype)
    ours = TruncatedSVD(n_components=6, random_state=0)
    ref = SkTruncatedSVD(n_components=6, algorithm="arpack", random_state=0)
    Xt, Rt = ours.fit_transform(X), ref.fit_transform(X)
    tol = 1e-8 if dtype == np.float64 else 1e-4
    assert ours.components_.shape == (6, 40) and Xt.shape == (300, 6)
    assert np.allclose(ours.singular_values_, ref.singular_values_, rtol=tol)
    assert np.allclose(ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=tol * 10, atol=tol)
    # The same components up to sign, and the same signs after svd_flip.
    assert np.allclose(np.abs(ours.components_), np.abs(ref.components_), atol=tol * 10)
    assert np.allclose(ours.transform(X), Xt, atol=tol * 10 * ours.singular_values_[0])
    back = ours.inverse_transform(Xt)
    assert back.shape == X.shape


@pytest.mark.parametrize("sparse", [True, False])
def test_pca_matches_sklearn_and_never_densifies(sparse, monkeypatch):
    from sklearn.decomposition import PCA as SkPCA

    X = _data(2)
    dense = X.toarray()
    ref = SkPCA(n_components=5, svd_solver="full").fit(dense)
    if sparse:
        # Implicit centring: the sparse input is never made dense.
        monkeypatch.setattr(sp.csr_matrix, "toarray", lambda *a, **k: pytest.fail("densified"))
        monkeypatch.setattr(sp.csr_array, "toarray", lambda *a, **k: pytest.fail("densified"))
    ours = PCA(n_components=5, random_state=1)
    scores = ours.fit_transform(X if sparse else dense)
    assert np.allclose(ours.explained_variance_, ref.explained_variance_, rtol=1e-8)
    assert np.allclose(ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-8)
    assert np.allclose(ours.mean_, ref.mean_)
    assert np.allclose(np.abs(ours.components_), np.abs(ref.components_), atol=1e-8)
    assert np.allclose(np.abs(scores), np.abs(ref.transform(dense)), atol=1e-8)
    assert np.allclose(ours.transform(X if sparse else dense), scores, atol=1e-8)


def test_randomized_truncated_svd_matches_sklearn():
    """algorithm="randomized" against scikit-learn's own randomized TruncatedSVD and its exact
    singular values: on a decaying spectrum both reach them."""
    from sklearn.decomposition import TruncatedSVD as SkTruncatedSVD

    rng = np.random.default_rng(5)
    q1, _ = np.linalg.qr(rng.standard_normal((300, 60)))
    q2, _ = np.linalg.qr(rng.standard_normal((60, 60)))
    X = sp.csr_matrix((q1 * 0.6 ** np.arange(60)) @ q2.T)
    ours = TruncatedSVD(n_components=5, algorithm="randomized", random_state=0).fit(X)
    ref = SkTruncatedSVD(n_components=5, algorithm="randomized", random_state=0).fit(X)
    exact = np.linalg.svd(X.toarray(), compute_uv=False)[:5]
    assert np.allclose(ours.singular_values_, exact, rtol=1e-10)
    assert np.allclose(ref.singular_values_, exact, rtol=1e-6)
    assert np.allclose(np.abs(ours.components_), np.abs(ref.components_), atol=1e-6)
