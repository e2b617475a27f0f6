"""scikit-learn-compatible estimators on ``sptrans.linalg.svds``: :class:`TruncatedSVD` and
:class:`PCA` (the latter centring sparse input implicitly, never densifying it).

They follow scikit-learn's conventions (``fit``, ``transform``, ``fit_transform``,
``inverse_transform``, fitted attributes ending in ``_``, ``get_params`` / ``set_params``) and
pass ``sklearn.utils.estimator_checks.check_estimator``; scikit-learn must be installed.
Inputs: NumPy arrays and SciPy sparse matrices (host); CuPy and PyTorch inputs are not taken
by the estimators yet (call ``sptrans.linalg.svds`` on them).
"""

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
    from sklearn.utils.extmath import safe_sparse_dot, svd_flip
    from sklearn.utils.sparsefuncs import mean_variance_axis
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as e:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("sptrans.decomposition needs scikit-learn (pip install scikit-learn)") from e

import scipy.sparse as sp

from ._frameworks import kind_of
from .linalg import svds

__all__ = ["PCA", "TruncatedSVD"]

#: ``algorithm`` values: ``"lanczos"`` (this library's block Lanczos), scikit-learn's
#: ``"arpack"``, which runs the same, and ``"randomized"`` (``svds(method="randomized")``:
#: ``n_iter`` power iterations, 10 extra columns, as scikit-learn's).
ALGORITHMS = ("lanczos", "arpack", "randomized")


def _host_only(X, who):
    if kind_of(X) in ("cupy", "torch"):
        raise TypeError(f"sptrans.decomposition.{who}: CuPy and PyTorch inputs are not taken yet; pass NumPy or SciPy input, or call sptrans.linalg.svds")


class _SvdEstimator(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """What both estimators share: the checks of ``algorithm`` and ``n_components`` and
    scikit-learn's tags."""

    def _components(self, X, default):
        """``n_components`` (``default`` when ``None``) checked against ``X``, and ``algorithm``."""
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm={self.algorithm!r}: one of {ALGORITHMS}")
        k = default if self.n_components is None else self.n_components
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= min(X.shape):
            raise ValueError(f"n_components={self.n_components!r} must be an int between 1 and min(X.shape) = {min(X.shape)}")
        return int(k)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class TruncatedSVD(_SvdEstimator):
    """Dimensionality reduction by the ``n_components`` largest singular triplets of ``X``
    (scikit-learn's ``TruncatedSVD``, on ``sptrans.linalg.svds``); no centring (see
    :class:`PCA`).

    Parameters: ``n_components`` (at most ``min(X.shape)``), ``algorithm`` (one of
    :data:`ALGORITHMS`), ``n_iter`` (the randomized solver's power iterations; not used by
    the Lanczos), ``random_state`` (seeds the start block),
    ``tol`` (every residual at most ``tol * s_max``; ``0``: ``1e-10``).

    Fitted attributes: ``components_`` (``n_components x n_features``), ``singular_values_``
    (descending), ``explained_variance_``, ``explained_variance_ratio_``, ``n_features_in_``.
    Signs follow scikit-learn's ``svd_flip`` (the largest entry of each component positive).
    """

    def __init__(self, n_components=2, *, algorithm="lanczos", n_iter=5, random_state=None, tol=0.0):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.random_state = random_state
        self.tol = tol

    def fit(self, X, y=None):
        """Fits the model to ``X``; returns ``self``."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Fits the model to ``X`` and returns ``X`` reduced (``U * Sigma``)."""
        _host_only(X, "TruncatedSVD")
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], ensure_min_features=2)
        k = self._components(X, None)
        u, s, vh = _svd(X, k, self, center=False)
        self.components_ = vh
        self.singular_values_ = s
        Xt = u * s
        self.explained_variance_ = exp = np.var(Xt, axis=0)
        full = mean_variance_axis(X, axis=0)[1].sum() if sp.issparse(X) else np.var(X, axis=0).sum()
        self.explained_variance_ratio_ = exp / full if full > 0 else np.zeros_like(exp)
        self._n_features_out = k
        return Xt

    def transform(self, X):
        """``X`` reduced: ``X @ components_.T``."""
        check_is_fitted(self)
        _host_only(X, "TruncatedSVD")
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=False)
        return safe_sparse_dot(X, self.components_.T)

    def inverse_transform(self, X):
        """Back to the original space: ``X @ components_``."""
        check_is_fitted(self)
        X = np.asarray(X)
        return X @ self.components_


class PCA(_SvdEstimator):
    """Principal component analysis (scikit-learn's ``PCA``) by the truncated SVD of the
    column-centred ``X``: dense input is centred, sparse input is centred implicitly
    (``svds(center=True)``: each product adds a rank-one correction; the matrix stays sparse).

    Parameters: ``n_components`` (``None``: ``min(X.shape)``), ``algorithm``, ``n_iter``,
    ``random_state``, ``tol`` as in :class:`TruncatedSVD`.

    Fitted attributes: ``components_``, ``singular_values_``, ``explained_variance_``
    (``s**2 / (n_samples - 1)``), ``explained_variance_ratio_``, ``mean_``,
    ``n_components_``, ``n_samples_``, ``noise_variance_``, ``n_features_in_``.
    """

    def __init__(self, n_components=None, *, algorithm="lanczos", n_iter=5, random_state=None, tol=0.0):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.random_state = random_state
        self.tol = tol

    def fit(self, X, y=None):
        """Fits the model to ``X``; returns ``self``."""
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fits the model to ``X`` and returns the scores (``U * Sigma``)."""
        u, s = self._fit(X)
        return u * s

    def _fit(self, X):
        _host_only(X, "PCA")
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], ensure_min_samples=2)
        n, m = X.shape
        k = self._components(X, min(n, m))
        if sp.issparse(X):
            mean = np.asarray(X.mean(axis=0)).reshape(-1)
            u, s, vh = _svd(X, k, self, center=True)
            total = mean_variance_axis(X, axis=0)[1].sum() * n / max(n - 1, 1)
        else:
            mean = X.mean(axis=0)
            Xc = X - mean
            u, s, vh = _svd(Xc, k, self, center=False)
            total = np.var(Xc, axis=0, ddof=1).sum() if n > 1 else 0.0
        self.mean_ = mean.astype(X.dtype, copy=False)
        self.components_ = vh
        self.singular_values_ = s
        self.explained_variance_ = (s**2 / max(n - 1, 1)).astype(X.dtype, copy=False)
        self.explained_variance_ratio_ = self.explained_variance_ / total if total > 0 else np.zeros_like(self.explained_variance_)
        rest = total - self.explained_variance_.sum()
        self.noise_variance_ = float(max(rest, 0.0) / (min(n, m) - k)) if k < min(n, m) else 0.0
        self.n_components_ = k
        self.n_samples_ = n
        self._n_features_out = k
        return u, s

    def transform(self, X):
        """The scores of ``X``: ``(X - mean_) @ components_.T`` (sparse ``X`` is not densified)."""
        check_is_fitted(self)
        _host_only(X, "PCA")
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=False)
        return safe_sparse_dot(X, self.components_.T) - self.mean_ @ self.components_.T

    def inverse_transform(self, X):
        """Back to the original space: ``X @ components_ + mean_``."""
        check_is_fitted(self)
        return np.asarray(X) @ self.components_ + self.mean_


def _svd(X, k, est, center):
    """``(u, s, vh)`` of the ``k`` largest triplets by the estimator ``est``'s algorithm,
    ``tol``, ``n_iter`` and ``random_state``, ``s`` descending, signs by ``svd_flip`` (each row
    of ``vh``'s largest entry positive), in ``X``'s dtype. ``X`` comes from ``validate_data``
    (finite, not empty); ``center`` only with sparse ``X``."""
    A = sp.csr_array(X) if sp.issparse(X) else np.ascontiguousarray(X)
    if (A.nnz if sp.issparse(A) else np.count_nonzero(A)) == 0:
        # The zero matrix: zero values, the leading unit vectors (as a full SVD gives).
        n, m = A.shape
        u = np.eye(n, k, dtype=A.dtype)
        vh = np.eye(k, m, dtype=A.dtype)
        return u, np.zeros(k, A.dtype), vh
    if est.algorithm == "randomized":
        u, s, vh = svds(A, k=k, tol=est.tol, rng=est.random_state, center=center, method="randomized", n_iter=est.n_iter)
    else:
        u, s, vh = svds(A, k=k, tol=est.tol, rng=est.random_state, center=center)
    u, s, vh = u[:, ::-1], s[::-1], vh[::-1]
    u, vh = svd_flip(np.ascontiguousarray(u), np.ascontiguousarray(vh), u_based_decision=False)
    return u, np.ascontiguousarray(s), vh
