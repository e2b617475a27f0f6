"""SciPy's own svds tests (``scipy/sparse/linalg/_eigen/tests/test_svds.py`` of the installed
SciPy) run against ``sptrans.linalg.svds`` on the GPU: the GPU half of issue 56's item 4.

A second copy of SciPy's test module is loaded (its ``svds`` name pointed at the shim below,
so the host suite's copy, ``test_scipy_svds.py``, keeps its own). The shim only moves data: a
real SciPy sparse matrix or NumPy array becomes a CuPy CSR matrix or array on the device, and
the answer comes back as NumPy arrays for SciPy's assertions; everything else (a
``LinearOperator``, complex values, lists) goes in as it is, as a user's would. The same
classes as the host suite are collected. What the GPU path does not do (``which='SM'``, ``v0``:
host only) is reported as an expected failure with its reason (``conftest.py``); any other
failure fails the suite. Skipped by name without a GPU or CuPy (failed under
``SPTRANS_REQUIRE_GPU=1``).
"""

import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp

import sptrans
import sptrans.linalg
from conftest import cupy_or_skip_module

base = pytest.importorskip("scipy.sparse.linalg._eigen.tests.test_svds", reason="SciPy's svds tests are not installed with this SciPy")

cp, csp = cupy_or_skip_module(__name__)


def _real(dtype):
    return np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_)


def _to_device(A):
    """A real SciPy sparse matrix or NumPy array on the device (integers and booleans as float64,
    as ours converts them); anything else as it is."""
    if sp.issparse(A) and _real(A.dtype):
        a = A.tocsr()
        if not np.issubdtype(a.dtype, np.floating) or a.dtype == np.float16:
            a = a.astype(np.float64)
        return csp.csr_matrix(a)
    if isinstance(A, np.ndarray) and A.ndim == 2 and _real(A.dtype):
        return cp.asarray(A if np.issubdtype(A.dtype, np.floating) and A.dtype != np.float16 else A.astype(np.float64))
    return A


def _to_host(x):
    if isinstance(x, tuple):
        return tuple(_to_host(y) for y in x)
    return cp.asnumpy(x) if isinstance(x, cp.ndarray) else x


def gpu_svds(A, *args, **kwargs):
    return _to_host(sptrans.linalg.svds(_to_device(A), *args, **kwargs))


_spec = importlib.util.spec_from_file_location("sptrans_scipy_test_svds_gpu", base.__file__)
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)
G.svds = gpu_svds

Test_SVDS_once_gpu = G.Test_SVDS_once
Test_SVDS_ARPACK_gpu = G.Test_SVDS_ARPACK
Test_SVDS_PROPACK_gpu = G.Test_SVDS_PROPACK
