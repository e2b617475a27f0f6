"""Adapters between the caller's arrays (CuPy, PyTorch, NumPy/SciPy) and the native module.

Each adapter gives an array's address, device and dtype, allocates outputs and scratch with the
framework's own allocator (so results belong to the caller's framework and follow its stream
rules), and reads the framework's current stream. Nothing here copies an input unless the
docstring of the public function says so.
"""

import warnings

import numpy as np

from . import _native

#: Device arrays must start at multiples of this many bytes (framework allocations always do;
#: an offset view that does not is copied first).
ALIGN = 16

INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def kind_of(obj):
    """'cupy', 'torch', 'scipy', 'numpy' or None, from the object's module (no imports)."""
    mod = type(obj).__module__ or ""
    for k in ("cupy", "torch", "scipy", "numpy"):
        if mod == k or mod.startswith(k + ".") or mod.startswith(k + "x."):
            return k
    return None


class Numpy:
    """Host arrays (SciPy matrices, NumPy vectors): the serial twins."""

    host = True
    name = "numpy"

    @staticmethod
    def addr(a):
        return a.ctypes.data if a.size else 0

    @staticmethod
    def dtype(a):
        return a.dtype

    @staticmethod
    def device(a):
        return None

    @staticmethod
    def empty(shape, dtype, device, order="C"):
        return np.empty(shape, dtype=dtype, order=order)

    @staticmethod
    def zeros(shape, dtype, device):
        return np.zeros(shape, dtype=dtype)

    @staticmethod
    def contiguous(a, dtype=None, order="C"):
        return np.require(a, dtype=dtype, requirements=[order])

    @staticmethod
    def to_numpy(a):
        return np.asarray(a)

    @staticmethod
    def from_numpy(a, device):
        return a


class Cupy:
    """CuPy arrays on a CUDA device; work on CuPy's current stream of that device."""

    host = False
    name = "cupy"

    def __init__(self):
        import cupy

        self.cp = cupy

    @staticmethod
    def addr(a):
        return a.data.ptr if a.size else 0

    @staticmethod
    def dtype(a):
        return np.dtype(a.dtype)

    @staticmethod
    def device(a):
        return a.device.id

    def stream(self, device):
        with self.cp.cuda.Device(device):
            return self.cp.cuda.get_current_stream().ptr

    def empty(self, shape, dtype, device, order="C"):
        with self.cp.cuda.Device(device):
            return self.cp.empty(shape, dtype=dtype, order=order)

    def zeros(self, shape, dtype, device):
        with self.cp.cuda.Device(device):
            return self.cp.zeros(shape, dtype=dtype)

    def empties(self, specs, device):
        """Several 1-D arrays ``[(length, dtype), ...]`` under one device switch."""
        cp = self.cp
        with cp.cuda.Device(device):
            return [cp.empty(n, dtype=d) for n, d in specs]

    def ready(self, a):
        """``a`` if contiguous and aligned (as the native module takes arrays), else a copy."""
        if a.flags.c_contiguous and (not a.size or a.data.ptr % ALIGN == 0):
            return a
        return self.aligned(self.contiguous(a))

    def scratch(self, nbytes, device):
        """Device bytes from CuPy's pool (stream-ordered by CuPy's rules): (owner, address)."""
        with self.cp.cuda.Device(device):
            mem = self.cp.cuda.alloc(max(nbytes, 1))
        return mem, mem.ptr

    def contiguous(self, a, dtype=None, order="C"):
        with self.cp.cuda.Device(a.device.id):
            if dtype is not None and a.dtype != dtype:
                a = a.astype(dtype)
            return self.cp.asfortranarray(a) if order == "F" else self.cp.ascontiguousarray(a)

    def aligned(self, a):
        return a if (not a.size or a.data.ptr % ALIGN == 0) else a.copy()

    def widen(self, a):
        return a.astype(self.cp.int64)

    def to_numpy(self, a):
        return self.cp.asnumpy(a)

    def from_numpy(self, a, device):
        with self.cp.cuda.Device(device):
            return self.cp.asarray(a)


_TORCH_TO_NUMPY = {}


class Torch:
    """PyTorch tensors; CUDA tensors work on ``torch.cuda.current_stream(device)``."""

    host = False
    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch
        if not _TORCH_TO_NUMPY:
            for t, n in [
                (torch.float32, np.float32),
                (torch.float64, np.float64),
                (torch.complex64, np.complex64),
                (torch.complex128, np.complex128),
                (torch.float16, np.float16),
                (torch.int8, np.int8),
                (torch.uint8, np.uint8),
                (torch.int16, np.int16),
                (torch.int32, np.int32),
                (torch.int64, np.int64),
                (torch.bool, np.bool_),
            ]:
                _TORCH_TO_NUMPY[t] = np.dtype(n)
        self._to_torch = {v: k for k, v in _TORCH_TO_NUMPY.items()}

    @staticmethod
    def addr(a):
        return a.data_ptr() if a.numel() else 0

    @staticmethod
    def dtype(a):
        try:
            return _TORCH_TO_NUMPY[a.dtype]
        except KeyError:
            raise TypeError(f"sptrans: PyTorch dtype {a.dtype} is not supported") from None

    @staticmethod
    def device(a):
        return a.device.index if a.device.index is not None else 0

    def stream(self, device):
        return self.torch.cuda.current_stream(device).cuda_stream

    def tdtype(self, dtype):
        return self._to_torch[np.dtype(dtype)]

    def empty(self, shape, dtype, device, order="C"):
        dev = self.torch.device("cuda", device)
        if order == "F" and isinstance(shape, tuple) and len(shape) == 2:
            return self.torch.empty((shape[1], shape[0]), dtype=self.tdtype(dtype), device=dev).t()
        return self.torch.empty(shape, dtype=self.tdtype(dtype), device=dev)

    def zeros(self, shape, dtype, device):
        return self.torch.zeros(shape, dtype=self.tdtype(dtype), device=self.torch.device("cuda", device))

    def empties(self, specs, device):
        """Several 1-D tensors ``[(length, dtype), ...]``."""
        dev = self.torch.device("cuda", device)
        return [self.torch.empty(n, dtype=self.tdtype(d), device=dev) for n, d in specs]

    def ready(self, a):
        """``a`` if contiguous and aligned (as the native module takes tensors), else a copy."""
        if a.is_contiguous() and (not a.numel() or a.data_ptr() % ALIGN == 0):
            return a
        return self.aligned(a.contiguous())

    def scratch(self, nbytes, device):
        """Device bytes from PyTorch's caching allocator: (owner, address)."""
        t = self.torch.empty(max(nbytes, 1), dtype=self.torch.uint8, device=self.torch.device("cuda", device))
        return t, t.data_ptr()

    def contiguous(self, a, dtype=None, order="C"):
        if dtype is not None and self.dtype(a) != np.dtype(dtype):
            a = a.to(self.tdtype(dtype))
        if order == "F" and a.dim() == 2:
            if a.stride(0) == 1 and (a.shape[1] <= 1 or a.stride(1) == a.shape[0]):
                return a
            return a.t().contiguous().t()
        return a.contiguous()

    def aligned(self, a):
        return a if (not a.numel() or a.data_ptr() % ALIGN == 0) else a.clone()

    def widen(self, a):
        return a.to(self.torch.int64)

    def to_numpy(self, a):
        return a.detach().cpu().numpy()

    def from_numpy(self, a, device):
        with warnings.catch_warnings():
            # Read-only host buffers (results handed over as bytes) are only read, to copy them up.
            warnings.filterwarnings("ignore", message=".*not writable.*")
            return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.torch.device("cuda", device))


_ADAPTERS = {}


def adapter(kind):
    """The adapter of a framework, created on first use."""
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = {"cupy": Cupy, "torch": Torch, "numpy": Numpy, "scipy": Numpy}[kind]()
    return _ADAPTERS[kind]


_warned = []


def note_host():
    """Says once, through ``warnings``, that no GPU is present and the host twins run."""
    if not _warned and not _native.gpu_available():
        _warned.append(True)
        warnings.warn(
            "sptrans: no CUDA GPU found; SciPy/NumPy inputs run on the serial CPU twins "
            "(CuPy and PyTorch CUDA inputs need a GPU)",
            RuntimeWarning,
            stacklevel=3,
        )


class Matrix:
    """A CSR matrix's arrays as the native module takes them."""

    __slots__ = ("fw", "kind", "rows", "cols", "nnz", "indptr", "indices", "data", "device", "like", "dtypes")

    def __init__(self, fw, kind, shape, indptr, indices, data, like):
        self.fw, self.kind, self.like = fw, kind, like
        self.rows, self.cols = (int(shape[0]), int(shape[1]))
        self.indptr, self.indices, self.data = indptr, indices, data
        self.nnz = int(indices.shape[0])
        self.device = fw.device(data)
        self.dtypes = (fw.dtype(indptr), fw.dtype(indices), fw.dtype(data))
        for what, dt in (("indptr", self.dtypes[0]), ("indices", self.dtypes[1])):
            if dt not in INDEX_DTYPES:
                raise TypeError(f"sptrans: {what} must be int32 or int64, not {dt}")
        if not fw.host:
            for what, a in (("indptr", indptr), ("indices", indices)):
                if fw.device(a) != self.device:
                    raise ValueError(f"sptrans: {what} is on device {fw.device(a)}, the values on {self.device}")
        if int(indptr.shape[0]) != self.rows + 1:
            raise ValueError(f"sptrans: indptr has {indptr.shape[0]} entries, expected rows + 1 = {self.rows + 1}")
        if int(data.shape[0]) != self.nnz:
            raise ValueError(f"sptrans: data has {data.shape[0]} entries, indices {self.nnz}")

    @property
    def dtype(self):
        return self.dtypes[2]

    def addrs(self):
        f = self.fw
        return f.addr(self.indptr), f.addr(self.indices), f.addr(self.data)

    def widths(self):
        p, i, v = self.dtypes
        return p.itemsize, i.itemsize, v.itemsize

    def stream(self):
        return self.fw.stream(self.device)

    def native(self, ptr=None, idx=None, widths=None):
        """The tuple the native module takes: (rows, cols, nnz, ptr, ptr_bytes, idx, idx_bytes,
        vals, val_bytes); ``ptr``/``idx``/``widths`` replace the index arrays (narrowed copies)."""
        p, i, v = self.addrs()
        pb, ib, vb = self.widths()
        if ptr is not None:
            p, i, (pb, ib) = ptr, idx, widths
        return (self.rows, self.cols, self.nnz, p, pb, i, ib, v, vb)


def matrix(A):
    """The caller's sparse matrix as a :class:`Matrix` (CSR; other formats converted, a copy)."""
    kind = kind_of(A)
    if kind == "scipy":
        import scipy.sparse as sp

        if not sp.issparse(A):
            raise TypeError(f"sptrans: expected a sparse matrix, got {type(A).__name__}")
        if A.ndim != 2:
            raise ValueError("sptrans: only 2-D sparse matrices")
        if A.format != "csr":
            A = A.tocsr()
        ip, ix = A.indptr, A.indices
        if ip.dtype != ix.dtype:
            ip, ix = ip.astype(np.int64), ix.astype(np.int64)
        fw = adapter("numpy")
        data = np.ascontiguousarray(A.data)
        return Matrix(fw, "scipy", A.shape, np.ascontiguousarray(ip), np.ascontiguousarray(ix), data, A)
    if kind == "cupy":
        import cupyx.scipy.sparse as csp

        if not csp.issparse(A):
            raise TypeError(f"sptrans: expected a sparse matrix, got {type(A).__name__}")
        if A.format != "csr":
            A = A.tocsr()
        fw = adapter("cupy")
        return Matrix(fw, "cupy", A.shape, fw.ready(A.indptr), fw.ready(A.indices), fw.ready(A.data), A)
    if kind == "torch":
        import torch

        if not isinstance(A, torch.Tensor):
            raise TypeError(f"sptrans: expected a sparse tensor, got {type(A).__name__}")
        if A.dim() != 2:
            raise ValueError(f"sptrans: only 2-D sparse tensors (got {A.dim()} dimensions)")
        if A.layout == torch.sparse_coo:
            A = A.coalesce().to_sparse_csr()
        elif A.layout in (torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc):
            A = A.to_sparse_coo().coalesce().to_sparse_csr()
        elif A.layout != torch.sparse_csr:
            raise TypeError("sptrans: expected a sparse tensor (torch.sparse_csr or sparse_coo), got a strided one")
        ip, ix, d = A.crow_indices(), A.col_indices(), A.values()
        if ip.dtype != ix.dtype:
            ip, ix = ip.to(torch.int64), ix.to(torch.int64)
        if A.device.type == "cpu":
            fw = adapter("numpy")
            return Matrix(fw, "torch-cpu", A.shape, ip.numpy(), ix.numpy(), d.contiguous().numpy(), A)
        if A.device.type != "cuda":
            raise ValueError(f"sptrans: tensors on {A.device} are not supported (CUDA or CPU)")
        fw = adapter("torch")
        return Matrix(fw, "torch", A.shape, fw.ready(ip), fw.ready(ix), fw.ready(d), A)
    raise TypeError(
        f"sptrans: unsupported input {type(A).__module__}.{type(A).__name__} "
        "(CuPy or SciPy sparse matrices, PyTorch sparse tensors)"
    )


def make_csr(m, data, indices, indptr, shape):
    """A CSR matrix of the caller's own type from the result arrays."""
    if m.kind == "scipy":
        r = type(m.like)((data, indices, indptr), shape=shape) if m.like.format == "csr" else _scipy_csr(data, indices, indptr, shape, m.like)
        if r.indices.dtype != indices.dtype:
            # SciPy's constructor narrows int64 indices that fit int32; the result keeps the
            # caller's index dtype instead (the arrays are valid: the transpose of a valid CSR).
            r.indices, r.indptr = indices, indptr
        return r
    if m.kind == "cupy":
        import cupyx.scipy.sparse as csp

        # CuPy's tuple constructor reads the index arrays back to pick their dtype (a
        # synchronization and ~75 us); recent CuPy has a constructor for arrays already known
        # valid, which ours are (sorted indices, the input's index dtype).
        parts = getattr(csp.csr_matrix, "_from_parts", None)
        if parts is not None:
            try:
                return parts(data, indices, indptr, shape, has_sorted_indices=True)
            except TypeError:
                pass
        return csp.csr_matrix((data, indices, indptr), shape=shape)
    import torch

    if m.kind == "torch-cpu":
        return torch.sparse_csr_tensor(torch.from_numpy(indptr), torch.from_numpy(indices), torch.from_numpy(data), size=shape)
    return torch.sparse_csr_tensor(indptr, indices, data, size=shape)


def _scipy_csr(data, indices, indptr, shape, like):
    import scipy.sparse as sp

    cls = sp.csr_array if isinstance(like, getattr(sp, "sparray", ())) else sp.csr_matrix
    return cls((data, indices, indptr), shape=shape)
