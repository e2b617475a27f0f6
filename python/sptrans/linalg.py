"""``sptrans.linalg.svds``: the truncated SVD with SciPy's signature and return order."""

import warnings

import numpy as np

from . import _native
from ._frameworks import FLOAT_DTYPES, kind_of, matrix, note_host
from ._operator_svd import operator_svds

__all__ = ["svds"]


#: Solvers accepted for SciPy's signature: ``"lanczos"`` (this library's), or SciPy's names,
#: which run the same block Lanczos (``"propack"`` also allows ``k = min(A.shape)``, as SciPy's).
SOLVERS = ("lanczos", "arpack", "lobpcg", "propack")

#: ``method`` values: ``"lanczos"`` (restarted block Lanczos to ``tol``) and ``"randomized"``.
METHODS = ("lanczos", "randomized")
#: ``layout`` values: how the GPU stores the matrix for its products (``"auto"``: the
#: library's choice; ``"csrc"``: one copy; ``"pair"``: ``A`` and ``A^T`` in CSR).
LAYOUTS = ("auto", "csrc", "pair")


def svds(
    A,
    k=6,
    ncv=None,
    tol=0,
    which="LM",
    v0=None,
    maxiter=None,
    return_singular_vectors=True,
    solver="lanczos",
    random_state=None,
    options=None,
    *,
    rng=None,
    block=None,
    center=False,
    method="lanczos",
    n_oversamples=10,
    n_iter=4,
    layout="auto",
):
    """The ``k`` largest singular values of ``A`` and, by default, their vectors.

    Block Golub-Kahan-Lanczos with restarts on the CSRC products, in double precision on the
    GPU for CuPy and PyTorch CUDA inputs (float32 values are widened on the device), on the host
    twin for SciPy inputs. On the host, SciPy ``LinearOperator`` inputs, complex values, a start
    vector ``v0`` and ``which="SM"`` run a thick-restarted Lanczos on the operator's products
    (``sptrans._operator_svd``; ``"SM"`` by a full bidiagonalization, up to
    ``SM_MAX_DIM`` columns). Returns ``(u, s, vh)`` like SciPy: ``s`` ascending, ``u`` of shape
    ``(m, k)``, ``vh`` of shape ``(k, n)``, arrays of ``A``'s framework with ``A``'s dtype; with
    ``return_singular_vectors=False`` only ``s``; ``"u"`` or ``"vh"`` give ``None`` for the
    other.

    ``A``: a sparse matrix (SciPy, CuPy, PyTorch) or a dense 2-D array of real numbers (NumPy,
    CuPy, PyTorch; converted to CSR, a copy; integers become float64).

    Arguments as SciPy's (validated with SciPy's messages), with these differences: ``tol``
    bounds every wanted residual ``||A^T u - s v||`` by ``tol * s_max`` (``0``: ``1e-10``);
    ``maxiter`` counts restarts (default 100); ``ncv`` is validated as SciPy does for ARPACK
    and otherwise chosen by the library (``max(6k, 96)`` on the GPU, ``max(2k + 4, 20)`` on the
    host); ``rng`` (SciPy's name) or ``random_state`` (an int, a NumPy ``Generator`` or
    ``RandomState``) seeds the start block; ``solver`` is one of :data:`SOLVERS`, all the same
    method (``k`` may equal ``min(A.shape)`` for ``"lanczos"`` and ``"propack"``, else it must be
    smaller, as SciPy's); ``options`` is not used. GPU inputs take neither ``which="SM"``, ``v0``
    nor complex values (``NotImplementedError``), nor ``center`` with the host operator path.
    ``block`` is the number of vectors per product (1 to 16; default on the GPU 2, or 8 for
    matrices of 20M nonzeros or more when ``k >= 32``; 1 on the host). ``center=True`` decomposes the column-centered matrix ``A - 1 mu^T`` (``mu`` the
    column means) without forming it: sparse PCA, the principal axes in ``vh`` and the scores
    in ``u * s`` (each product adds a rank-one correction; the matrix stays sparse).

    ``layout`` is how the GPU stores the matrix for its products (one of :data:`LAYOUTS`):
    ``"auto"`` (``"pair"`` for blocks of 3 or more vectors where three copies of the matrix fit
    in half the free device memory, else ``"csrc"``), ``"csrc"`` (one copy, the least memory) or
    ``"pair"`` (``A`` and ``A^T`` in CSR, twice the memory; blocks of 3 or more vectors copied
    row-major, each nonzero reading one line of them; a side whose dense operand outgrows the L2
    cut into column panels). The host paths ignore it.

    ``method="randomized"`` runs the randomized SVD (Halko, Martinsson & Tropp 2011) instead:
    a sketch of ``k + n_oversamples`` columns, ``n_iter`` power iterations and one small SVD
    (scikit-learn's names), a fixed amount of work for answers of moderate accuracy in fewer
    products; ``maxiter`` and ``ncv`` are then not used, and ``tol`` is a check, not a
    stopping test: when ``tol > 0`` is given and a residual misses it, a ``RuntimeWarning``
    names the largest residual reached (with ``tol=0`` nothing is checked).

    Raises ``ValueError`` for the arguments SciPy refuses (with its messages), NaN or infinite
    values and malformed structure; ``TypeError`` for values other than real numbers;
    ``RuntimeError`` when the iteration does not converge within ``maxiter`` restarts.
    """
    if method not in METHODS:
        raise ValueError(f"sptrans.linalg.svds: method={method!r} (one of {', '.join(METHODS)})")
    if layout not in LAYOUTS:
        raise ValueError(f"sptrans.linalg.svds: layout={layout!r} (one of {', '.join(LAYOUTS)})")
    randomized = None
    if method == "randomized":
        for name, value in (("n_oversamples", n_oversamples), ("n_iter", n_iter)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
                raise ValueError(f"sptrans.linalg.svds: {name}={value!r} must be a non-negative int")
        randomized = (int(n_oversamples), int(n_iter))
    checked_tol = tol
    A, k, tol, maxiter, random_state, which = _validate(A, k, ncv, tol, which, v0, maxiter, return_singular_vectors, solver, random_state, rng)
    if _on_host_operator_path(A, which, v0):
        if randomized is not None:
            raise NotImplementedError("sptrans.linalg.svds: method='randomized' with a LinearOperator, complex values, v0 or which='SM' is not implemented")
        if center:
            raise NotImplementedError("sptrans.linalg.svds: center=True with a LinearOperator, complex values, v0 or which='SM' is not implemented")
        from scipy.sparse.linalg import aslinearoperator

        out = operator_svds(aslinearoperator(A), k, tol, maxiter, which, v0, _generator(random_state), return_singular_vectors is not False)
        if return_singular_vectors is False:
            return out
        u, s_, vh = out
        return (u if return_singular_vectors != "vh" else None), s_, (vh if return_singular_vectors != "u" else None)
    m = matrix(A)
    if m.dtype not in FLOAT_DTYPES:
        raise TypeError(f"sptrans.linalg.svds: values must be float32 or float64, not {m.dtype}")
    tol = tol if tol else 1e-10
    restarts = 100 if maxiter is None else maxiter
    seed = _seed(random_state)
    vectors = return_singular_vectors is not False
    # (k, tol, block, seed, max_restarts, vectors, center, randomized, layout), as the native
    # module takes them.
    settings = lambda vec: (k, tol, None if block is None else int(block), seed, restarts, vec, bool(center), randomized, LAYOUTS.index(layout))  # noqa: E731
    if m.fw.host:
        note_host()
        out = _native.svds_cpu(m.native(), settings(vectors))
    else:
        # The vectors are written on the device into blocks of the caller's framework (k rows
        # of m and of n: column-major m × k and n × k), never through host memory.
        blocks = m.fw.empties([(k * m.rows, np.float64), (k * m.cols, np.float64)], m.device) if vectors else None
        dest = (m.fw.addr(blocks[0]), m.fw.addr(blocks[1])) if vectors else None
        out = _native.svds_gpu(m.device, m.stream(), m.native(), settings(False), dest)
    sigma, u, v, converged, used, _products, residual = out
    if randomized is not None:
        if not converged and checked_tol:
            res = np.frombuffer(residual, dtype=np.float64)
            s1 = np.frombuffer(sigma, dtype=np.float64)[0]
            warnings.warn(f"sptrans.linalg.svds: the randomized SVD's largest residual is {res.max() / s1 if s1 > 0 else 0.0:.2e} * s_max, above tol={tol:g} (raise n_iter or n_oversamples)", RuntimeWarning, stacklevel=2)
    elif not converged:
        raise RuntimeError(f"sptrans.linalg.svds: no convergence to tol={tol:g} within {used} restarts (raise maxiter or tol)")
    s = np.frombuffer(sigma, dtype=np.float64)[::-1].astype(m.dtype)
    if m.fw.host:
        back = (lambda a: a) if m.kind != "torch-cpu" else _torch_from_numpy
        if not vectors:
            return back(s)
        uu = np.frombuffer(u, dtype=np.float64).reshape(k, m.rows)[::-1].T.astype(m.dtype)
        vh = np.frombuffer(v, dtype=np.float64).reshape(k, m.cols)[::-1].astype(m.dtype)
        uu = back(np.ascontiguousarray(uu)) if return_singular_vectors != "vh" else None
        vh = back(np.ascontiguousarray(vh)) if return_singular_vectors != "u" else None
        return uu, back(s), vh
    # Device inputs: the vectors are already there (k rows of m), flipped and cast on the device.
    s_dev = m.fw.from_numpy(np.ascontiguousarray(s), m.device)
    if not vectors:
        return s_dev
    ub, vb = (b.reshape(k, n) for b, n in zip(blocks, (m.rows, m.cols)))
    uu = _flip_cast(m, ub).T if return_singular_vectors != "vh" else None
    vh = _flip_cast(m, vb) if return_singular_vectors != "u" else None
    return uu, s_dev, vh


def _flip_cast(m, rows_block):
    """The k rows in reverse order, cast to the matrix's dtype, on the device."""
    if m.fw.name == "cupy":
        return rows_block[::-1].astype(m.dtype)
    return rows_block.flip(0).to(m.fw.tdtype(m.dtype))


def _torch_from_numpy(a):
    import torch

    return torch.from_numpy(np.ascontiguousarray(a))


def _validate(A, k, ncv, tol, which, v0, maxiter, rsv, solver, random_state, rng):
    """SciPy's argument checks, in SciPy's order and with its messages; dense arrays become
    sparse (``LinearOperator``s stay as they are). Returns ``(A, k, tol, maxiter, seed source,
    which)``."""
    solver = str(solver).lower()
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {set(SOLVERS)}.")
    A = _as_sparse(A)
    shape = tuple(int(d) for d in A.shape)
    if len(shape) != 2:
        raise ValueError("Only 2-D input: array must have ndim <= 2" if len(shape) > 2 else "sptrans.linalg.svds: A must be 2-D")
    if shape[0] * shape[1] == 0:
        raise ValueError("`A` must not be empty.")
    kmax = min(shape) if solver in ("lanczos", "propack") else min(shape) - 1
    if int(k) != k or not 0 < k <= kmax:
        raise ValueError("`k` must be an integer satisfying `0 < k < min(A.shape)`." if kmax < min(shape) else "`k` must be an integer satisfying `0 < k <= min(A.shape)`.")
    k = int(k)
    if solver == "arpack" and ncv is not None and (int(ncv) != ncv or not k < ncv < min(shape)):
        raise ValueError("`ncv` must be an integer satisfying `k < ncv < min(A.shape)`.")
    if tol < 0 or not np.isfinite(tol):
        raise ValueError("`tol` must be a non-negative floating point value.")
    tol = float(tol)
    which = str(which).upper()
    if which not in ("LM", "SM"):
        raise ValueError("`which` must be in {'LM', 'SM'}.")
    if v0 is not None:
        v = np.atleast_1d(v0) if not hasattr(v0, "__cuda_array_interface__") and type(v0).__module__.split(".")[0] != "torch" else v0
        dt = np.dtype(str(v.dtype).replace("torch.", ""))
        if not (np.issubdtype(dt, np.floating) or np.issubdtype(dt, np.complexfloating)):
            raise ValueError("`v0` must be of floating or complex floating data type.")
        want = (shape[0],) if solver == "propack" else (min(shape),)
        if tuple(v.shape) != want:
            raise ValueError(f"`v0` must have shape {want}.")
    if maxiter is not None and (int(maxiter) != maxiter or maxiter <= 0):
        raise ValueError("`maxiter` must be a positive integer.")
    maxiter = int(maxiter) if maxiter is not None else None
    if rsv not in (True, False, "u", "vh"):
        raise ValueError("`return_singular_vectors` must be in {True, False, 'vh', 'u'}.")
    seed_from = rng if rng is not None else random_state
    if seed_from is not None and not isinstance(seed_from, (int, np.integer, np.random.Generator, np.random.RandomState)):
        raise ValueError(f"'{seed_from}' is neither a NumPy Generator nor an integer seed to instantiate one.")
    return A, k, tol, maxiter, seed_from, which


def _on_host_operator_path(A, which, v0):
    """Whether the host operator Lanczos (``_operator_svd``) serves this call: a SciPy
    ``LinearOperator``, or a host matrix with complex values, a start vector or
    ``which="SM"``. The same on a GPU input is refused (``NotImplementedError``)."""
    import scipy.sparse as sp

    if not sp.issparse(A):
        if kind_of(A) in ("cupy", "torch"):
            complex_ = str(getattr(A, "dtype", "")).startswith(("complex", "torch.complex"))
            if complex_ or v0 is not None or which == "SM":
                raise NotImplementedError(
                    "sptrans.linalg.svds: complex values, v0 and which='SM' run on the host only (pass SciPy or NumPy input); the GPU computes the largest values of real matrices"
                )
            return False
        return True
    return np.iscomplexobj(A.data) or v0 is not None or which == "SM"


def _generator(seed_from):
    """A NumPy ``Generator`` from ``rng`` / ``random_state`` (``None``: a fixed seed, so calls
    repeat)."""
    if isinstance(seed_from, np.random.Generator):
        return seed_from
    if isinstance(seed_from, np.random.RandomState):
        return np.random.default_rng(seed_from.randint(0, 2**31))
    return np.random.default_rng(0x5EED if seed_from is None else int(seed_from))


def _as_sparse(A):
    """``A`` as a sparse matrix of its framework: sparse inputs as they are, dense 2-D arrays of
    real numbers converted to CSR (integers and booleans to float64), with SciPy's messages for
    what SciPy refuses."""
    try:
        import scipy.sparse as sp
        from scipy.sparse.linalg import LinearOperator
    except ImportError:  # pragma: no cover - SciPy is a dependency
        sp, LinearOperator = None, ()
    if sp is not None and sp.issparse(A):
        return A
    if LinearOperator and isinstance(A, LinearOperator):
        return A
    mod = type(A).__module__.split(".")[0]
    if mod == "cupyx":
        return A
    if mod == "cupy":
        import cupyx.scipy.sparse as csp

        _check_dense(A.ndim, A.dtype, A.size)
        return csp.csr_matrix(A if A.dtype.kind in "fc" else A.astype("float64"))
    if mod == "torch":
        import torch

        if A.layout != torch.strided:
            return A
        _check_dense(A.dim(), np.dtype(str(A.dtype).replace("torch.", "")), A.numel())
        return (A if A.is_floating_point() else A.to(torch.float64)).to_sparse_csr()
    if isinstance(A, str) or not hasattr(A, "__len__") and not hasattr(A, "__array__"):
        raise TypeError(f"type not understood: {type(A).__name__}")
    a = np.asarray(A)
    _check_dense(a.ndim, a.dtype, a.size)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    return sp.csr_array(a)


def _check_dense(ndim, dtype, size):
    if ndim > 2:
        # Both SciPy's messages (older SciPy says "Only 2-D input", newer "array must have ndim <= 2").
        raise ValueError("Only 2-D input: array must have ndim <= 2")
    if ndim < 2:
        raise ValueError(f"sptrans.linalg.svds: A must be 2-D, not {ndim}-D")
    if not (np.issubdtype(dtype, np.number) or dtype == np.bool_):
        raise ValueError("`A` must be of numeric data type.")
    if size == 0:
        raise ValueError("`A` must not be empty.")


def _seed(random_state):
    if random_state is None:
        return 0x5EED
    if isinstance(random_state, (int, np.integer)):
        return int(random_state) & (2**64 - 1)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31))
    raise TypeError(f"sptrans.linalg.svds: random_state {type(random_state).__name__} (an int or a NumPy generator)")
