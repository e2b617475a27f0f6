"""``sptrans.linalg.svds``: the truncated SVD with SciPy's signature and return order."""

import numpy as np

from . import _native
from ._frameworks import FLOAT_DTYPES, matrix, note_host

__all__ = ["svds"]


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
    block=None,
    center=False,
):
    """The ``k`` largest singular values of ``A`` and, by default, their vectors.

    Block Golub-Kahan-Lanczos with restarts on the CSRC products, in double precision on the
    GPU for CuPy and PyTorch CUDA inputs (float32 values are widened on the device), on the host
    twin for SciPy inputs. Returns ``(u, s, vh)`` like SciPy: ``s`` ascending, ``u`` of shape
    ``(m, k)``, ``vh`` of shape ``(k, n)``, arrays of ``A``'s framework with ``A``'s dtype; with
    ``return_singular_vectors=False`` only ``s``; ``"u"`` or ``"vh"`` give ``None`` for the
    other.

    Arguments as SciPy's, with these differences: ``tol`` bounds every wanted residual
    ``||A^T u - s v||`` by ``tol * s_max`` (``0``: ``1e-10``); ``maxiter`` counts restarts
    (default 100); ``ncv`` is the Krylov dimension per cycle (default ``max(6k, 96)`` on the GPU, ``max(2k + 4, 20)`` on the host);
    ``random_state`` (an int) seeds the start block; ``which`` must be ``"LM"``; ``v0``,
    ``solver`` and ``options`` are not used (``solver`` is accepted for SciPy's signature).
    ``block`` is the number of vectors per product (1 to 16; default 2 on the GPU, 1 on the host). ``center=True`` decomposes the
    column-centered matrix ``A - 1 mu^T`` (``mu`` the column means) without forming it: sparse
    PCA, the principal axes in ``vh`` and the scores in ``u * s`` (each product adds a rank-one
    correction; the matrix stays sparse).

    Raises ``ValueError`` for ``k`` outside ``1..min(m, n)``, bad settings, NaN or infinite
    values and malformed structure; ``TypeError`` for values other than float32/float64;
    ``RuntimeError`` when the iteration does not converge within ``maxiter`` restarts.
    """
    if which != "LM":
        raise ValueError(f"sptrans.linalg.svds: which={which!r}; only the largest ('LM') are computed")
    if v0 is not None:
        raise ValueError("sptrans.linalg.svds: v0 is not supported (the start block is random, seeded by random_state)")
    if return_singular_vectors not in (True, False, "u", "vh"):
        raise ValueError(f"sptrans.linalg.svds: return_singular_vectors={return_singular_vectors!r} (True, False, 'u' or 'vh')")
    m = matrix(A)
    if m.dtype not in FLOAT_DTYPES:
        raise TypeError(f"sptrans.linalg.svds: values must be float32 or float64, not {m.dtype}")
    k = int(k)
    if not 1 <= k <= min(m.rows, m.cols):
        raise ValueError(f"sptrans.linalg.svds: k={k} must be between 1 and min(A.shape) = {min(m.rows, m.cols)}")
    tol = float(tol) if tol else 1e-10
    restarts = 100 if maxiter is None else int(maxiter)
    seed = _seed(random_state)
    vectors = return_singular_vectors is not False
    if ncv is not None:
        raise ValueError("sptrans.linalg.svds: ncv is chosen by the library (max(6k, 96) on the GPU, max(2k + 4, 20) on the host)")
    # (k, tol, block, seed, max_restarts, vectors, center), as the native module takes them.
    settings = lambda vec: (k, tol, None if block is None else int(block), seed, restarts, vec, bool(center))  # noqa: E731
    if m.fw.host:
        note_host()
        out = _native.svds_cpu(m.native(), settings(vectors))
    else:
        # The vectors are written on the device into blocks of the caller's framework (k rows
        # of m and of n: column-major m × k and n × k), never through host memory.
        blocks = m.fw.empties([(k * m.rows, np.float64), (k * m.cols, np.float64)], m.device) if vectors else None
        dest = (m.fw.addr(blocks[0]), m.fw.addr(blocks[1])) if vectors else None
        out = _native.svds_gpu(m.device, m.stream(), m.native(), settings(False), dest)
    sigma, u, v, converged, used, _products = out
    if not converged:
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
