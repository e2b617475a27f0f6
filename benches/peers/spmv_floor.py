# The floors under f64 SpMV on the issue-17 matrices (H100): how fast can any kernel that reads the
# matrix once in CSR order and gathers x per nonzero go?
#   stream:  sum val[i] * col[i]          (the 12 B/nnz stream alone, no gather: the DRAM floor)
#   gather:  sum val[i] * x[col[i]]        (the stream plus the x gathers, no rows, no y: the floor
#                                          of every CSR-order kernel)
#   hinted:  the same with the matrix loaded evict-first and x evict-last in L2 (createpolicy)
#   sorted:  the gather over the matrix's columns sorted (neighbours share x's sectors: the floor
#            once x locality is perfect)
# and cuSPARSE CSR SpMV through CuPy for reference (CuPy adds its own call overhead).
# Usage: python3 benches/peers/spmv_floor.py
import numpy as np, cupy as cp, cupyx.scipy.sparse as cps, sys, os
sys.path.insert(0, os.path.dirname(__file__))
from cupy_timing import median_ms
from spmv_matrices import issue17
from cuda_hints import L2_HINTS

SRC = L2_HINTS + r'''
extern "C" __global__ void stream(const int* __restrict__ col, const double* __restrict__ val, const double* __restrict__ x, long long nnz, double* out) {
  double s = 0; long long st = (long long)gridDim.x * blockDim.x;
  #pragma unroll 4
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nnz; i += st) s += val[i] * (double)col[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void gather(const int* __restrict__ col, const double* __restrict__ val, const double* __restrict__ x, long long nnz, double* out) {
  double s = 0; long long st = (long long)gridDim.x * blockDim.x;
  #pragma unroll 4
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nnz; i += st) s += val[i] * __ldg(x + col[i]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void hinted(const int* __restrict__ col, const double* __restrict__ val, const double* __restrict__ x, long long nnz, double* out) {
  double s = 0; long long st = (long long)gridDim.x * blockDim.x;
  unsigned long long f = pol_first(), l = pol_last();
  #pragma unroll 4
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nnz; i += st) s += ldd(val + i, f) * ldd(x + ldi(col + i, f), l);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
'''
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
K = {k: mod.get_function(k) for k in ("stream", "gather", "hinted")}
SMS = cp.cuda.Device().attributes["MultiProcessorCount"]


def copy_gbps():
    a = cp.zeros(1 << 28, np.uint8); b = cp.empty_like(a)
    return 2 * a.nbytes / median_ms(lambda: cp.copyto(b, a)) / 1e6


def main():
    bw = copy_gbps(); print(f"copy bandwidth {bw:.0f} GB/s")
    print("| matrix | nnz | model MB | stream us | gather us | hinted us | sorted-cols gather us | cuSPARSE (CuPy) us | gather % of copy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, A in issue17():
        nnz = A.nnz; m, n = A.shape
        col = cp.asarray(A.indices.astype(np.int32)); val = cp.asarray(A.data.astype(np.float64)); x = cp.random.random(n)
        srt = cp.sort(col)
        threads = SMS * 2048; out = cp.empty(threads, np.float64)
        model = (12 * nnz + 4 * (m + 1) + 8 * (m + n)) / 1e6
        t = {}
        for k in ("stream", "gather", "hinted"):
            t[k] = median_ms(lambda: K[k]((threads // 256,), (256,), (col, val, x, np.int64(nnz), out))) * 1e3
        t["sorted"] = median_ms(lambda: K["gather"]((threads // 256,), (256,), (srt, val, x, np.int64(nnz), out))) * 1e3
        dA = cps.csr_matrix(A); t["cusparse"] = median_ms(lambda: dA @ x) * 1e3
        pct = model / (t["gather"] * 1e-6) / 1e3 / bw * 100
        print(f"| {name} | {nnz} | {model:.0f} | {t['stream']:.1f} | {t['gather']:.1f} | {t['hinted']:.1f} | {t['sorted']:.1f} | {t['cusparse']:.1f} | {pct:.0f}% |", flush=True)


main()
