# Prototype (CuPy raw kernels): CSR SpMV in tiles of equal nonzeros (the products staged in shared
# memory, a thread per row of the tile, split rows added atomically), against the gather floor,
# on the issue-17 matrices. f64, y = A x. Usage: python3 benches/peers/spmv_tile_proto.py
import numpy as np, cupy as cp, sys, os
sys.path.insert(0, os.path.dirname(__file__))
from cupy_timing import median_ms
from spmv_matrices import issue17
from cuda_hints import L2_HINTS

SRC = L2_HINTS + r'''
template <int NT, int VT>
__device__ void tile_body(const int* __restrict__ ptr, const int* __restrict__ col, const double* __restrict__ val, const double* __restrict__ x, const int* __restrict__ tile_row, long long nnz, double* y, int rows) {
  __shared__ double prod[NT * VT];
  __shared__ int sptr[NT + 1];
  unsigned long long f = pol_first(), l = pol_last();
  long long t = blockIdx.x; long long z0 = t * NT * VT; long long z1 = min(z0 + NT * VT, nnz);
  for (long long k = z0 + threadIdx.x; k < z1; k += NT) prod[k - z0] = ldd(val + k, f) * __ldg(x + ldi(col + k, f));
  int ra = tile_row[t], rb = tile_row[t + 1];   // rows ra ..= rb touch the tile (rb: the row of nonzero z1 - 1)
  for (int r0 = ra; r0 <= rb; r0 += NT) {
    int n = min(NT, rb - r0 + 1);
    __syncthreads();
    for (int i = threadIdx.x; i <= n; i += NT) sptr[i] = (r0 + i <= rows) ? ptr[r0 + i] : (int)nnz;
    __syncthreads();
    if (threadIdx.x < n) {
      int r = r0 + threadIdx.x;
      long long b = sptr[threadIdx.x], e = sptr[threadIdx.x + 1];
      long long bb = max(b, z0), ee = min(e, z1);
      double s = 0; for (long long k = bb; k < ee; ++k) s += prod[k - z0];
      if (b >= z0 && e <= z1) y[r] = s; else atomicAdd(y + r, s);
    }
  }
}
extern "C" __global__ void __launch_bounds__(256) tile8(const int* ptr, const int* col, const double* val, const double* x, const int* tile_row, long long nnz, double* y, int rows) { tile_body<256, 8>(ptr, col, val, x, tile_row, nnz, y, rows); }
extern "C" __global__ void __launch_bounds__(256) tile4(const int* ptr, const int* col, const double* val, const double* x, const int* tile_row, long long nnz, double* y, int rows) { tile_body<256, 4>(ptr, col, val, x, tile_row, nnz, y, rows); }
extern "C" __global__ void __launch_bounds__(256) tile16(const int* ptr, const int* col, const double* val, const double* x, const int* tile_row, long long nnz, double* y, int rows) { tile_body<256, 16>(ptr, col, val, x, tile_row, nnz, y, rows); }
// Split rows (touching two tiles or more) are zeroed first (y = 0 * y for beta = 0).
extern "C" __global__ void zero_split(const int* ptr, const int* tile_row, long long tiles, int NV, double* y) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t < tiles) { int r = tile_row[t]; if ((long long)ptr[r] < t * NV) y[r] = 0; int rb = tile_row[t + 1]; (void)rb; }
}
extern "C" __global__ void gather(const int* __restrict__ col, const double* __restrict__ val, const double* __restrict__ x, long long nnz, double* out) {
  double s = 0; long long st = (long long)gridDim.x * blockDim.x;
  #pragma unroll 4
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nnz; i += st) s += val[i] * __ldg(x + col[i]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
'''
mod = cp.RawModule(code=SRC, options=("-std=c++17",), name_expressions=None)
SMS = cp.cuda.Device().attributes["MultiProcessorCount"]


def main():
    print("| matrix | gather floor us | tile VT=4 us | tile VT=8 us | tile VT=16 us | max rel err |")
    print("|---|---|---|---|---|---|")
    for name, A in issue17():
        nnz = A.nnz; m, n = A.shape
        ptr_h = A.indptr.astype(np.int64)
        ptr = cp.asarray(A.indptr.astype(np.int32)); col = cp.asarray(A.indices.astype(np.int32)); val = cp.asarray(A.data)
        x = cp.random.random(n); yref = cp.asarray(A @ cp.asnumpy(x))
        out = cp.empty(SMS * 2048, np.float64)
        res = {"floor": median_ms(lambda: mod.get_function("gather")((SMS * 8,), (256,), (col, val, x, np.int64(nnz), out))) * 1e3}
        err = 0.0
        for vt in (4, 8, 16):
            nv = 256 * vt; tiles = max(1, -(-nnz // nv))
            starts = np.minimum(np.arange(tiles + 1, dtype=np.int64) * nv, nnz)
            # tile_row[t] = the row of nonzero t*NV (the last row holding an entry at or before it); tile_row[tiles] = row of nnz-1
            tr = np.searchsorted(ptr_h, starts, side="right") - 1
            tr[tiles] = np.searchsorted(ptr_h, nnz - 1, side="right") - 1
            tr = np.clip(tr, 0, m - 1).astype(np.int32)
            tile_row = cp.asarray(tr); y = cp.zeros(m)
            k = mod.get_function(f"tile{vt}"); z = mod.get_function("zero_split")
            def run():
                z((-(-tiles // 256),), (256,), (ptr, tile_row, np.int64(tiles), np.int32(nv), y))
                k((tiles,), (256,), (ptr, col, val, x, tile_row, np.int64(nnz), y, np.int32(m)))
            run(); cp.cuda.Device().synchronize()
            err = max(err, float(cp.max(cp.abs(y - yref)) / cp.max(cp.abs(yref))))
            res[vt] = median_ms(run) * 1e3
        print(f"| {name} | {res['floor']:.1f} | {res[4]:.1f} | {res[8]:.1f} | {res[16]:.1f} | {err:.1e} |", flush=True)


main()
