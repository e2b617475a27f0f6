"""The truncated SVD of any operator on the host: thick-restarted Golub-Kahan-Lanczos with full
reorthogonalization (Baglama and Reichel's IRLBA, 2005), in NumPy.

``svds`` runs it for what the library's native Lanczos (real CSR, the largest values, a random
start block) does not take: SciPy ``LinearOperator`` inputs, complex values, a start vector
``v0``, and ``which="SM"`` (by a full bidiagonalization, so only up to :data:`SM_MAX_DIM`
columns). Every product goes through the operator's ``matmat`` / ``rmatmat`` (or ``matvec``).
"""

import numpy as np

#: The smallest singular values are found from a full bidiagonalization (a Krylov space of every
#: dimension, where small values converge at once): operators of at most this many columns (or
#: rows, whichever is fewer).
SM_MAX_DIM = 4000


def operator_svds(op, k, tol, maxiter, which, v0, rng, vectors):
    """``(u, s, vh)`` of the ``k`` largest (``"LM"``) or smallest (``"SM"``) singular values of
    ``op`` (``s`` ascending), or ``s`` alone when ``vectors`` is false.

    ``op`` has ``shape``, ``dtype``, ``matvec`` and ``rmatvec`` (a SciPy ``LinearOperator``);
    ``tol`` bounds every wanted residual ``||op^H u - s v||`` by ``tol * s_max`` (``0``:
    ``1e-12``); ``maxiter`` counts restarts (``None``: 100); ``v0`` the start vector (of the
    smaller side's length, as SciPy's ARPACK takes it) or ``None`` for a random one from
    ``rng`` (a NumPy ``Generator``). Raises ``RuntimeError`` without convergence.
    """
    m, n = (int(d) for d in op.shape)
    dtype = np.result_type(op.dtype, np.float64)
    # Work on the side with fewer columns: op itself, or its adjoint (vectors swapped at the end).
    flip = n > m
    if flip:
        mv, rmv, rows, cols = op.rmatvec, op.matvec, n, m
    else:
        mv, rmv, rows, cols = op.matvec, op.rmatvec, m, n
    if which == "SM" and cols > SM_MAX_DIM:
        raise NotImplementedError(
            f"sptrans.linalg.svds: which='SM' on an operator with {cols} columns (and rows); the smallest values are found for at most {SM_MAX_DIM}"
        )
    p = cols if which == "SM" else min(cols, max(2 * k + 10, 20))
    tol = tol if tol else 1e-12
    restarts = 100 if maxiter is None else int(maxiter)

    def col(x):
        return np.asarray(x, dtype=dtype).reshape(-1)

    def rand(size):
        x = rng.standard_normal(size)
        if np.iscomplexobj(np.empty(0, dtype)):
            x = x + 1j * rng.standard_normal(size)
        return x.astype(dtype)

    def orthonormal_against(basis, x):
        # Twice (classical Gram-Schmidt, repeated): the coefficients and the rest's norm.
        c = basis.conj().T @ x
        x = x - basis @ c
        c2 = basis.conj().T @ x
        x = x - basis @ c2
        return c + c2, x, np.linalg.norm(x)

    V = np.zeros((cols, p + 1), dtype)
    U = np.zeros((rows, p), dtype)
    B = np.zeros((p, p), dtype)
    if v0 is not None:
        start = col(v0)
        # SciPy's ARPACK takes v0 on the smaller side: on the columns' side it is the start, on
        # the rows' side the start is op^H v0.
        start = start if start.shape[0] == cols else col(rmv(start))
    else:
        start = rand(cols)
    norm = np.linalg.norm(start)
    V[:, 0] = start / norm if norm > 0 else rand(cols) / np.sqrt(cols)
    kept = 0
    scale = 0.0
    for restart in range(restarts + 1):
        for j in range(kept, p):
            w = col(mv(V[:, j]))
            c, w, alpha = orthonormal_against(U[:, :j], w)
            B[:j, j] = c
            scale = max(scale, alpha)
            if alpha <= 1e-14 * max(scale, 1.0):
                # op V_j lies in the span of U: continue from a fresh direction.
                _, w, alpha0 = orthonormal_against(U[:, :j], rand(rows))
                U[:, j] = w / alpha0
                B[j, j] = 0.0
            else:
                U[:, j] = w / alpha
                B[j, j] = alpha
            z = col(rmv(U[:, j]))
            _, z, beta = orthonormal_against(V[:, : j + 1], z)
            if beta <= 1e-14 * max(scale, 1.0) and j + 1 < cols:
                _, z, beta0 = orthonormal_against(V[:, : j + 1], rand(cols))
                V[:, j + 1] = z / beta0
                beta = 0.0
            elif j + 1 < cols:
                V[:, j + 1] = z / beta
            else:
                beta = 0.0
        P, s, Qh = np.linalg.svd(B)
        # The wanted Ritz values: the k largest (svd sorts descending) or the k smallest.
        idx = np.arange(k) if which == "LM" else np.arange(p - k, p)
        resid = np.abs(beta) * np.abs(P[p - 1, idx])
        smax = s[0] if s.size else 0.0
        if np.all(resid <= tol * max(smax, np.finfo(float).tiny)) or p == cols and beta == 0.0:
            break
        if restart == restarts:
            raise RuntimeError(f"sptrans.linalg.svds: no convergence to tol={tol:g} within {restarts} restarts (raise maxiter or tol)")
        # Thick restart: keep the wanted Ritz vectors and a few more, then the residual
        # direction V_p; the next columns of B come from projections as before.
        keep = min(p - 1, k + max(2, (p - k) // 2)) if which == "LM" else min(p - 1, k)
        order = np.arange(keep) if which == "LM" else np.arange(p - keep, p)
        Q = Qh.conj().T
        V[:, :keep] = V[:, :p] @ Q[:, order]
        U[:, :keep] = U @ P[:, order]
        V[:, keep] = V[:, p]
        B[:] = 0
        B[:keep, :keep] = np.diag(s[order])
        kept = keep
    # Ascending, as SciPy returns them.
    sel = idx[::-1]
    sigma = s[sel]
    out_dtype = np.result_type(op.dtype, np.float32)
    real = np.dtype(out_dtype).kind != "c"
    s_out = sigma.astype(np.float64 if np.dtype(out_dtype).itemsize >= 8 or not real else np.float32)
    if not vectors:
        return s_out
    Qh_sel = Qh[sel]
    left = U @ P[:, sel]
    right_h = Qh_sel @ V[:, :p].conj().T
    if flip:
        # op^H = U S V^H  =>  op = V S U^H.
        left, right_h = right_h.conj().T, left.conj().T
    if real:
        left, right_h = left.real, right_h.real
    return left.astype(out_dtype), s_out, right_h.astype(out_dtype)
