"""sptrans: GPU sparse matrices from CuPy, PyTorch and SciPy.

* :func:`transpose` -- the CSR of ``A.T`` (the CSC of ``A``), sorted indices, bit-exact.
* :class:`Operator` -- a plan of ``A`` with fast ``A @ X`` and ``A.T @ Y`` (1 to 16 columns
  per product, more in chunks).
* :func:`sptrans.linalg.svds` -- the truncated SVD, with SciPy's signature and return order.

CuPy matrices and PyTorch CUDA tensors are borrowed, never copied (except where a conversion is
documented), and all work is ordered by the caller's current stream; results come back as the
caller's own type, allocated by the caller's framework. SciPy matrices run on the serial twins
on the host.
"""

from ._native import __version__
from ._api import Operator, gpu_available, transpose
from . import linalg

__all__ = ["Operator", "gpu_available", "linalg", "transpose", "__version__"]
