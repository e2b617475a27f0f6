"""scikit-learn-compatible estimators on ``sptrans.linalg.svds``: :class:`TruncatedSVD` and
:class:`PCA` (the latter centring sparse input implicitly, never densifying it).

They follow scikit-learn's conventions (``fit``, ``transform``, ``fit_transform``,
``inverse_transform``, fitted attributes ending in ``_``, ``get_params`` / ``set_params``) and
pass ``sklearn.utils.estimator_checks.check_estimator``, on the host and (``device="cuda"``)
on the GPU; scikit-learn must be installed.

Inputs: NumPy arrays and SciPy sparse matrices (computed on the host twin, or on the GPU with
``device="cuda"``, the results copied back to NumPy), CuPy arrays and ``cupyx`` sparse
matrices, PyTorch CUDA tensors, dense or sparse CSR/COO (computed on their GPU, the fitted
attributes and the results in the input's framework). The GPU path needs CuPy (PyTorch
tensors are shared with it through DLPack, not copied).
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


#: ``device`` values: ``None`` (the input's: the host for NumPy and SciPy input, its GPU for
#: CuPy and PyTorch CUDA input), ``"cpu"`` (the same) and ``"cuda"`` (host input moved to the
#: current CUDA device first).
DEVICES = (None, "cpu", "cuda")


def _on_gpu(X, est):
    """Whether ``est`` works on ``X`` on the GPU (and ``device`` checked)."""
    if est.device not in DEVICES:
        raise ValueError(f"device={est.device!r}: one of {DEVICES}")
    kind = kind_of(X)
    if kind == "torch" and X.device.type != "cuda":
        raise TypeError("sptrans.decomposition: PyTorch tensors must be on a CUDA device (or pass X.numpy())")
    return kind in ("cupy", "torch") or est.device == "cuda"


class _Host:
    """The host path's arrays: NumPy and SciPy, validated by scikit-learn."""

    xp, sps = np, sp

    def validate(self, est, X, reset, min_samples=1, min_features=1):
        """``X`` after ``validate_data`` (CSR or CSC kept, float32 or float64)."""
        minimums = {"ensure_min_samples": min_samples, "ensure_min_features": min_features} if reset else {}
        return validate_data(est, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=reset, **minimums)

    @staticmethod
    def array(a):
        return np.asarray(a)

    @staticmethod
    def out(a):
        return a

    @staticmethod
    def column_variances(X):
        """Each column's population variance (sparse ``X`` not densified)."""
        return mean_variance_axis(X, axis=0)[1] if sp.issparse(X) else np.var(X, axis=0)


def _ops(X, est):
    """The arrays ``est`` works with on ``X``: :class:`_Gpu` or :class:`_Host`."""
    return _Gpu(X) if _on_gpu(X, est) else _Host()


class _Gpu:
    """The GPU path's arrays: everything in CuPy (``xp``), the results handed back in the
    input's framework (``out``)."""

    def __init__(self, X):
        try:
            import cupy
            import cupyx.scipy.sparse as cps
        except ImportError as e:
            raise ImportError("sptrans.decomposition: the GPU path needs CuPy (pip install cupy-cuda12x)") from e
        self.xp, self.sps, self.kind = cupy, cps, kind_of(X)

    def matrix(self, X):
        """``X`` in CuPy: dense arrays as they are, sparse ones as CSR (PyTorch's shared by
        DLPack; a COO tensor converted first)."""
        xp, sps = self.xp, self.sps
        if self.kind == "torch":
            import torch

            if X.layout == torch.sparse_coo:
                X = X.to_sparse_csr()
            if X.layout == torch.sparse_csr:
                parts = (xp.from_dlpack(X.values().detach()), xp.from_dlpack(X.col_indices()), xp.from_dlpack(X.crow_indices()))
                return sps.csr_matrix(parts, shape=tuple(X.shape))
            if X.layout != torch.strided:
                raise TypeError(f"sptrans.decomposition: PyTorch layout {X.layout} is not taken (dense, sparse CSR or COO)")
            return xp.from_dlpack(X.detach())
        if self.kind == "cupy":
            return X.tocsr() if sps.issparse(X) else X
        # Host input, validated by scikit-learn already.
        return sps.csr_matrix(X) if sp.issparse(X) else xp.asarray(X)

    def array(self, a):
        """A fitted attribute (NumPy, CuPy or PyTorch) as a CuPy array."""
        k = kind_of(a)
        if k == "torch":
            return self.xp.from_dlpack(a.detach())
        return self.xp.asarray(a)

    def out(self, a):
        """A CuPy result in the input's framework: NumPy for host input."""
        if self.kind == "torch":
            import torch

            return torch.from_dlpack(a)
        return a if self.kind == "cupy" else self.xp.asnumpy(a)

    def validate(self, est, X, reset, min_samples=1, min_features=1):
        """The working matrix in CuPy, after scikit-learn's checks: host input by
        ``validate_data`` itself, device input by the same rules (2-D, real floating values,
        integers and booleans becoming float64, finite, not empty, ``n_features_in_`` set
        (``reset``) or matched)."""
        if self.kind not in ("cupy", "torch"):
            return self.matrix(_Host().validate(est, X, reset, min_samples, min_features))
        xp, sps = self.xp, self.sps
        X = self.matrix(X)
        if X.ndim != 2:
            raise ValueError(f"Expected 2D array, got {X.ndim}D array instead")
        if X.dtype.kind in "biu":
            X = X.astype(xp.float64)
        if X.dtype not in (xp.float32, xp.float64):
            raise ValueError(f"dtype {X.dtype} is not taken: real float32 or float64 values")
        n, m = X.shape
        if n < min_samples or m < min_features:
            raise ValueError(f"Found array with {n} sample(s) and {m} feature(s) (shape={X.shape}) while a minimum of {min_samples} sample(s) and {min_features} feature(s) are required.")
        values = X.data if sps.issparse(X) else X
        if not bool(xp.isfinite(values).all()):
            raise ValueError("Input X contains NaN or infinity.")
        if reset:
            est.n_features_in_ = m
        elif m != est.n_features_in_:
            raise ValueError(f"X has {m} features, but {type(est).__name__} is expecting {est.n_features_in_} features as input.")
        return X

    def column_variances(self, X):
        """Each column's population variance (sparse ``X`` not densified)."""
        xp, sps = self.xp, self.sps
        if sps.issparse(X):
            mean = xp.asarray(X.mean(axis=0)).reshape(-1)
            return xp.asarray(X.multiply(X).mean(axis=0)).reshape(-1) - mean**2
        return xp.var(X, axis=0)


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
    ``tol`` (every residual at most ``tol * s_max``; ``0``: ``1e-10``), ``device`` (one of
    :data:`DEVICES`: where host input is decomposed).

    Fitted attributes: ``components_`` (``n_components x n_features``), ``singular_values_``
    (descending), ``explained_variance_``, ``explained_variance_ratio_``, ``n_features_in_``,
    in the framework of the input to ``fit`` (NumPy for host input). Signs follow
    scikit-learn's ``svd_flip`` (the largest entry of each component positive).
    """

    def __init__(self, n_components=2, *, algorithm="lanczos", n_iter=5, random_state=None, tol=0.0, device=None):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.random_state = random_state
        self.tol = tol
        self.device = device

    def fit(self, X, y=None):
        """Fits the model to ``X``; returns ``self``."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Fits the model to ``X`` and returns ``X`` reduced (``U * Sigma``)."""
        ops = _ops(X, self)
        X = ops.validate(self, X, reset=True, min_features=2)
        xp = ops.xp
        k = self._components(X, None)
        u, s, vh = _svd(ops, X, k, self, center=False)
        Xt = u * s
        exp = xp.var(Xt, axis=0)
        full = float(ops.column_variances(X).sum())
        ratio = exp / full if full > 0 else xp.zeros_like(exp)
        self.components_, self.singular_values_ = ops.out(vh), ops.out(s)
        self.explained_variance_, self.explained_variance_ratio_ = ops.out(exp), ops.out(ratio)
        self._n_features_out = k
        return ops.out(Xt)

    def transform(self, X):
        """``X`` reduced: ``X @ components_.T``."""
        check_is_fitted(self)
        ops = _ops(X, self)
        X = ops.validate(self, X, reset=False)
        return ops.out(_product(ops, X, ops.array(self.components_).T))

    def inverse_transform(self, X):
        """Back to the original space: ``X @ components_``."""
        check_is_fitted(self)
        ops = _ops(X, self)
        return ops.out(_dense(ops, X) @ ops.array(self.components_))


class PCA(_SvdEstimator):
    """Principal component analysis (scikit-learn's ``PCA``) by the truncated SVD of the
    column-centred ``X``: dense input is centred, sparse input is centred implicitly
    (``svds(center=True)``: each product adds a rank-one correction; the matrix stays sparse).

    Parameters: ``n_components`` (``None``: ``min(X.shape)``), ``algorithm``, ``n_iter``,
    ``random_state``, ``tol``, ``device`` as in :class:`TruncatedSVD`.

    Fitted attributes: ``components_``, ``singular_values_``, ``explained_variance_``
    (``s**2 / (n_samples - 1)``), ``explained_variance_ratio_``, ``mean_``,
    ``n_components_``, ``n_samples_``, ``noise_variance_``, ``n_features_in_`` (arrays in the
    framework of the input to ``fit``).
    """

    def __init__(self, n_components=None, *, algorithm="lanczos", n_iter=5, random_state=None, tol=0.0, device=None):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.random_state = random_state
        self.tol = tol
        self.device = device

    def fit(self, X, y=None):
        """Fits the model to ``X``; returns ``self``."""
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fits the model to ``X`` and returns the scores (``U * Sigma``)."""
        ops, u, s = self._fit(X)
        return ops.out(u * s)

    def _fit(self, X):
        ops = _ops(X, self)
        X = ops.validate(self, X, reset=True, min_samples=2)
        xp = ops.xp
        n, m = X.shape
        k = self._components(X, min(n, m))
        if ops.sps.issparse(X):
            mean = xp.asarray(X.mean(axis=0)).reshape(-1)
            u, s, vh = _svd(ops, X, k, self, center=True)
            total = float(ops.column_variances(X).sum()) * n / max(n - 1, 1)
        else:
            mean = X.mean(axis=0)
            Xc = X - mean
            u, s, vh = _svd(ops, Xc, k, self, center=False)
            total = float(xp.var(Xc, axis=0, ddof=1).sum()) if n > 1 else 0.0
        exp = (s**2 / max(n - 1, 1)).astype(X.dtype, copy=False)
        ratio = exp / total if total > 0 else xp.zeros_like(exp)
        rest = total - float(exp.sum())
        self.mean_ = ops.out(mean.astype(X.dtype, copy=False))
        self.components_, self.singular_values_ = ops.out(vh), ops.out(s)
        self.explained_variance_, self.explained_variance_ratio_ = ops.out(exp), ops.out(ratio)
        self.noise_variance_ = float(max(rest, 0.0) / (min(n, m) - k)) if k < min(n, m) else 0.0
        self.n_components_ = k
        self.n_samples_ = n
        self._n_features_out = k
        return ops, u, s

    def transform(self, X):
        """The scores of ``X``: ``(X - mean_) @ components_.T`` (sparse ``X`` is not densified)."""
        check_is_fitted(self)
        ops = _ops(X, self)
        X = ops.validate(self, X, reset=False)
        C = ops.array(self.components_).T
        return ops.out(_product(ops, X, C) - ops.array(self.mean_) @ C)

    def inverse_transform(self, X):
        """Back to the original space: ``X @ components_ + mean_``."""
        check_is_fitted(self)
        ops = _ops(X, self)
        return ops.out(_dense(ops, X) @ ops.array(self.components_) + ops.array(self.mean_))


def _product(ops, X, C):
    """``X @ C`` for sparse or dense ``X`` and dense ``C``, dense."""
    return safe_sparse_dot(X, C) if ops.xp is np else (X @ C if not ops.sps.issparse(X) else X.dot(C))


def _dense(ops, X):
    """Reduced data handed to ``inverse_transform`` as an array of the working framework."""
    return np.asarray(X) if ops.xp is np else ops.matrix(X)


def _svd(ops, X, k, est, center):
    """``(u, s, vh)`` of the ``k`` largest triplets by the estimator ``est``'s algorithm,
    ``tol``, ``n_iter`` and ``random_state``, ``s`` descending, signs by ``svd_flip`` (each row
    of ``vh``'s largest entry positive), in ``X``'s dtype and ``ops``' framework. ``X`` comes
    from ``ops.validate`` (finite, not empty); ``center`` only with sparse ``X``."""
    xp, sps = ops.xp, ops.sps
    A = sps.csr_matrix(X) if sps.issparse(X) else xp.ascontiguousarray(X)
    if (A.nnz if sps.issparse(A) else int(xp.count_nonzero(A))) == 0:
        # The zero matrix: zero values, the leading unit vectors (as a full SVD gives).
        n, m = A.shape
        return xp.eye(n, k, dtype=A.dtype), xp.zeros(k, A.dtype), xp.eye(k, m, dtype=A.dtype)
    if xp is np:
        A = sp.csr_array(A) if sp.issparse(A) else A
    extra = {"method": "randomized", "n_iter": est.n_iter} if est.algorithm == "randomized" else {}
    u, s, vh = svds(A, k=k, tol=est.tol, rng=est.random_state, center=center, **extra)
    u, s, vh = u[:, ::-1], s[::-1], vh[::-1]
    if xp is np:
        u, vh = svd_flip(np.ascontiguousarray(u), np.ascontiguousarray(vh), u_based_decision=False)
        return u, np.ascontiguousarray(s), vh
    # scikit-learn's svd_flip (u_based_decision=False) on the device: each row of vh's largest
    # entry in absolute value made positive.
    signs = xp.sign(vh[xp.arange(k), xp.argmax(xp.abs(vh), axis=1)])
    signs[signs == 0] = 1
    return xp.ascontiguousarray(u * signs), xp.ascontiguousarray(s), xp.ascontiguousarray(vh * signs[:, None])
