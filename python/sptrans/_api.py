"""``sptrans.transpose`` and ``sptrans.Operator``."""

import numpy as np

from . import _native
from ._frameworks import FLOAT_DTYPES, adapter, kind_of, make_csr, matrix, note_host

#: Nonzeros from which the 64-bit row-pointer path runs (int32 pointers end there).
WIDE_NNZ = 2**31
ALGORITHMS = ("auto", "radix", "scan", "merge", "coo", "sym", "serial")
#: Columns per product (more are done in chunks of this many).
MAX_K = 16
#: Operator formats: the CSRC plan, or one of the SpMV formats (``A @ x`` only).
FORMATS = ("csrc", "auto", "csr-scalar", "csr-vector", "csr-adaptive", "coo", "ell", "hyb", "scoo", "jds", "sell", "sell-vi", "merge-path")


def gpu_available():
    """Whether a CUDA driver and at least one GPU are present."""
    return _native.gpu_available()


def transpose(A, algorithm="auto", *, check=True):
    """The CSR of ``A.T`` (the CSC of ``A``), with sorted indices, bit-exact.

    ``A`` is a CuPy ``csr_matrix`` (on its device, ordered by CuPy's current stream), a PyTorch
    sparse CSR or COO tensor (CUDA: ordered by ``torch.cuda.current_stream()``; CPU: the host
    twin), or a SciPy sparse matrix or array (the host twin). Other formats are converted to CSR
    first (a copy). Index arrays of int32 or int64, values of any 1-, 2-, 4-, 8- or 16-byte
    dtype (float32/64, complex64/128, ...). The result has ``A``'s type, index dtype and value
    dtype, allocated by ``A``'s framework.

    The result equals SciPy's ``A.T.tocsr()`` bit for bit (indices sorted in every row,
    duplicates kept, not summed). int64 index arrays on the GPU are narrowed to 32 bits on the
    device while checked, and the result's widened back (copies).

    ``algorithm``: ``"auto"`` (RadixTrans; on square matrices SymTrans first, kept when the GPU
    finds the pattern symmetric, decided on the device), ``"radix"``, ``"scan"``, ``"merge"``,
    ``"coo"``, ``"sym"`` (for a symmetric pattern) or ``"serial"``.

    ``check``: the structure (row pointer from 0 to nnz, never decreasing; every index below the
    column count) is validated on the GPU, which costs one read of the index arrays and one
    synchronization. With ``"auto"`` and ``"radix"`` (whose kernels stay in bounds on any
    structure) the check runs beside the transpose and its verdict is read once at the end;
    the other algorithms wait for it before any kernel indexes with the arrays. ``check=False``
    skips it for int32 arrays on your promise that they are valid (as PyTorch's sparse
    constructors do by default): a malformed structure may then make kernels read or write out
    of bounds. int64 arrays are always checked (while they are narrowed).

    Raises ``TypeError`` (unsupported input or dtype), ``ValueError`` (malformed structure, with
    the position), ``MemoryError`` (device out of memory), ``RuntimeError`` (no GPU for a
    device input, driver errors).
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"sptrans.transpose: algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
    m = matrix(A)
    shape = (m.cols, m.rows)
    fw = m.fw
    pb, ib, vb = m.widths()
    if vb not in (1, 2, 4, 8, 16):
        raise TypeError(f"sptrans.transpose: values of dtype {m.dtype} ({vb} bytes) are not supported")
    if fw.host:
        note_host()
        index = m.indices.dtype
        out_ptr = np.empty(m.cols + 1, dtype=index)
        out_idx = np.empty(m.nnz, dtype=index)
        out_vals = np.empty(m.nnz, dtype=m.data.dtype)
        _native.transpose_cpu(m.native(), (fw.addr(out_ptr), fw.addr(out_idx), fw.addr(out_vals)))
        return make_csr(m, out_vals, out_idx, out_ptr, shape)
    if m.rows >= 2**31:
        raise ValueError(f"sptrans.transpose: {m.rows} rows; the result's indices hold at most 2^31 - 1")
    wide = m.nnz >= WIDE_NNZ
    dev, stream = m.device, m.stream()
    a = m.native()
    ws = _native.transpose_workspace(dev, stream, a, algorithm, wide)
    scratch, scratch_addr = fw.scratch(int(ws), dev)
    out_ptr, out_idx, out_vals = fw.empties([(m.cols + 1, np.int64 if wide else np.int32), (m.nnz, np.int32), (m.nnz, m.dtype)], dev)
    out = (fw.addr(out_ptr), fw.addr(out_idx), fw.addr(out_vals))
    _native.transpose_gpu(dev, stream, a, out, (scratch_addr, int(ws)), algorithm, wide, bool(check))
    if pb == 8 and not wide:
        out_ptr = fw.widen(out_ptr)
    if ib == 8:
        out_idx = fw.widen(out_idx)
    return make_csr(m, out_vals, out_idx, out_ptr, shape)


class Operator:
    """A plan of a sparse matrix ``A`` for repeated products ``A @ X`` and ``A.T @ Y``.

    On the GPU (CuPy or PyTorch CUDA input) the plan is the CSRC layout of ``A``: one private
    copy of its structure and values (the input is read once, then not needed), with direct and
    transposed products of 1 to 16 columns per launch (more columns run in chunks of 16). For
    SciPy input the products run on the host twin. Values float32 or float64; the operand is
    cast to that dtype.

    ``op @ x`` and ``op.T @ y`` take a vector (1-D) or a block (2-D, ``n × k``) of ``A``'s
    framework on ``A``'s device and return one of the same framework (a block in column-major
    order), ordered by the framework's current stream at the call.

    ``format``: ``"csrc"`` (default: the CSRC plan above) or a sparse-matrix-vector format of
    the library (``"auto"``, ``"csr-scalar"``, ``"csr-vector"``, ``"csr-adaptive"``, ``"coo"``,
    ``"ell"``, ``"hyb"``, ``"scoo"``, ``"jds"``, ``"sell"``, ``"sell-vi"`` (values by index:
    matrices of at most 256 distinct values), ``"merge-path"``): those keep a private int32 copy
    of ``A``'s structure (checked on the device as it is copied, so changing ``A.indices`` or
    ``A.indptr`` afterwards changes nothing they index with) and borrow its values (kept alive by
    the operator: changed values change later products), convert to the format on the GPU, and compute ``A @ x``
    only (a column at a time for blocks); ``op.T @ y`` then raises ``ValueError``. For SciPy
    input the host twin runs whatever the format. ``products``: how many products the operator
    is expected to serve (default 1000): ``"auto"`` takes a format whose conversion sorts
    (``"jds"``, ``"scoo"``) only when that many products repay it, and from 200 products on
    converts and times its candidates on that class of matrix and keeps the fastest, which may
    be cuSPARSE's own CSR product (``op.format == "cusparse"``); ``op.trials`` lists what it
    timed, as ``(format, milliseconds a product)``.

    Differences from SciPy: no dtype promotion (the result has ``A``'s dtype); sums are in a
    different order than SciPy's, so results agree to rounding, not bit for bit.
    """

    def __init__(self, A, format="csrc", products=1000):
        if format not in FORMATS:
            raise ValueError(f"sptrans.Operator: format {format!r} (one of {', '.join(FORMATS)})")
        if not isinstance(products, int) or isinstance(products, bool) or products < 1:
            raise ValueError(f"sptrans.Operator: products must be a positive int, not {products!r}")
        m = matrix(A)
        if m.dtype not in FLOAT_DTYPES:
            raise TypeError(f"sptrans.Operator: values must be float32 or float64, not {m.dtype}")
        self.shape = (m.rows, m.cols)
        self.dtype = m.dtype
        self._fw = m.fw
        self._device = m.device
        self._kind = m.kind
        self._keep = None
        if m.fw.host:
            note_host()
            self._host = m
            self._plan = None
            self.format = "serial"
            self.trials = []
        else:
            self._host = None
            fw, dev, stream = m.fw, m.device, m.stream()
            pb, ib, _ = m.widths()
            a = m.native()
            if format != "csrc":
                # The SpMV formats (and cuSPARSE's product, which "auto" may keep) index with the
                # structure for the plan's whole life, so they take a private int32 copy of it,
                # checked on the device as it is made, never the caller's arrays: a caller who
                # later changes ``A.indices`` changes nothing the kernels index with.
                if m.rows >= 2**31 or m.cols >= 2**31 or m.nnz >= 2**31:
                    raise ValueError(f"sptrans.Operator: {m.rows}x{m.cols} with {m.nnz} nonzeros does not fit int32 indices (use format='csrc')")
                nptr, nidx = fw.empties([(m.rows + 1, np.int32), (m.nnz, np.int32)], dev)
                flags, flags_addr = fw.scratch(4096, dev)
                _native.narrow_csr(dev, stream, a, (fw.addr(nptr), fw.addr(nidx)), (flags_addr, 4096))
                a = m.native(fw.addr(nptr), fw.addr(nidx), (4, 4))
                self._keep = (nptr, nidx, m.data)
            ws = _native.Operator.build_workspace(a)
            scratch, scratch_addr = fw.scratch(int(ws), dev)
            self._plan = _native.Operator(dev, stream, a, (scratch_addr, int(ws)), format, products)
            self.format = self._plan.format
            self.trials = list(self._plan.trials)
        self.nnz = m.nnz

    @property
    def T(self):
        """The transposed operator (the same plan)."""
        return _Transposed(self)

    def __matmul__(self, x):
        return self._apply("N", x)

    def matvec(self, x):
        return self._apply("N", x)

    def rmatvec(self, y):
        return self._apply("T", y)

    def matmat(self, x):
        return self._apply("N", x)

    def rmatmat(self, y):
        return self._apply("T", y)

    def aslinearoperator(self):
        """A ``scipy.sparse.linalg.LinearOperator`` (SciPy input) or a CuPy one (CuPy input)."""
        if self._kind == "cupy":
            from cupyx.scipy.sparse.linalg import LinearOperator
        else:
            from scipy.sparse.linalg import LinearOperator
        return LinearOperator(
            self.shape, matvec=self.matvec, rmatvec=self.rmatvec, matmat=self.matmat, rmatmat=self.rmatmat, dtype=self.dtype
        )

    def __repr__(self):
        where = "host" if self._plan is None else f"{self._fw.name} device {self._device}"
        return f"<sptrans.Operator {self.shape[0]}x{self.shape[1]}, {self.nnz} nonzeros, {self.dtype}, {self.format}, {where}>"

    def _apply(self, op, x):
        fw = self._fw
        kind = kind_of(x)
        expected = "numpy" if fw.host else fw.name
        if kind != expected and not (fw.host and kind is None):
            raise TypeError(f"sptrans.Operator: operand of {type(x).__module__}.{type(x).__name__}; this operator takes {expected} arrays")
        if fw.host:
            x = np.asarray(x)
        elif fw.device(x) != self._device:
            raise ValueError(f"sptrans.Operator: operand on device {fw.device(x)}, the operator on {self._device}")
        rows, cols = self.shape
        n_in, n_out = (cols, rows) if op == "N" else (rows, cols)
        ndim = len(x.shape)
        if ndim not in (1, 2) or int(x.shape[0]) != n_in:
            what = "A" if op == "N" else "A.T"
            raise ValueError(f"sptrans.Operator: {what} @ x needs x of shape ({n_in},) or ({n_in}, k), got {tuple(x.shape)}")
        if fw.dtype(x).kind not in "fiub":
            raise TypeError(f"sptrans.Operator: operand dtype {fw.dtype(x)} (real numbers only)")
        k = 1 if ndim == 1 else int(x.shape[1])
        if n_in == 0 or n_out == 0 or k == 0 or self.nnz == 0:
            out = fw.zeros((n_out, k), self.dtype, self._device)
            return out[:, 0] if ndim == 1 else out
        x2 = x.reshape(n_in, 1) if ndim == 1 else x
        out = fw.empty((n_out, k), self.dtype, self._device, order="F")
        stream = None if fw.host else fw.stream(self._device)
        for j in range(0, k, MAX_K):
            kc = min(MAX_K, k - j)
            xc = fw.contiguous(x2[:, j : j + kc], dtype=self.dtype, order="F")
            yc = out[:, j : j + kc]
            if fw.host:
                _native.multiply_cpu(op, self._host.native(), fw.addr(xc), kc, fw.addr(yc))
            else:
                ws = int(self._plan.workspace(op, kc))
                scratch, scratch_addr = fw.scratch(ws, self._device)
                self._plan.multiply(stream, op, fw.addr(xc), kc, fw.addr(yc), (scratch_addr, ws))
        return out[:, 0] if ndim == 1 else out


class _Transposed:
    """``op.T``: the same plan with the products swapped."""

    def __init__(self, op):
        self._op = op
        self.shape = (op.shape[1], op.shape[0])
        self.dtype = op.dtype

    @property
    def T(self):
        return self._op

    def __matmul__(self, y):
        return self._op._apply("T", y)

    def matvec(self, y):
        return self._op._apply("T", y)

    def rmatvec(self, x):
        return self._op._apply("N", x)

    matmat = matvec
    rmatmat = rmatvec
