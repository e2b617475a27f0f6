# Prototype (issue 17): does computing each nonzero's row from the CSR row pointer (a warp loads 32
# row ends and each lane finds its row by a 5-step search across the lanes) beat reading COO's row
# array (4 B/nnz) in the warp-segmented product that `spmv_coo` uses? Both kernels are the same
# otherwise: chunks of 256 nonzeros per warp, turns of 4 runs of 32 with every load in flight before
# the x gathers, warp-segmented sums, one atomic per segment with the run's last segment carried,
# L2 hints (matrix evict-first, x evict-last). f64, median of 30 event-timed products (the y = 0
# scale included), cuSPARSE CSR through CuPy for reference and for the check.
# Usage: python3 benches/peers/spmv_seg_proto.py
import numpy as np, cupy as cp, cupyx.scipy.sparse as cps, sys, os
sys.path.insert(0, os.path.dirname(__file__))
from cupy_timing import median_ms
from spmv_matrices import issue17
from cuda_hints import L2_HINTS

SRC = L2_HINTS + r'''
#define CHUNK 256
#define VT 4

// Segmented sums of one run, the carry in (crow, csum) updated; ROW = the run's rows per lane.
__device__ __forceinline__ void segment(unsigned r, double v, double alpha, double* y, unsigned lane, unsigned& crow, double& csum) {
  if (crow != 0xffffffffu) {
    if (__shfl_sync(~0u, r, 0) == crow) { if (lane == 0) v += csum; }
    else if (lane == 0) atomicAdd(y + crow, alpha * csum);
    crow = 0xffffffffu;
  }
  unsigned prev = __shfl_up_sync(~0u, r, 1);
  bool head = lane == 0 || prev != r;
  double s = v;
  #pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    double t = __shfl_down_sync(~0u, s, d);
    unsigned o = __shfl_down_sync(~0u, r, d);
    if (lane + d < 32 && o == r) s += t;
  }
  unsigned tail = __shfl_sync(~0u, r, 31);
  unsigned heads = __ballot_sync(~0u, head && r == tail);
  unsigned th = 31 - __clz(heads);
  if (tail != 0xffffffffu) { crow = tail; csum = __shfl_sync(~0u, s, th); }
  if (head && r != 0xffffffffu && !(r == tail && lane == th)) atomicAdd(y + r, alpha * s);
}

extern "C" __global__ void coo_seg(long long nnz, const unsigned* __restrict__ row, const unsigned* __restrict__ col, const double* __restrict__ val,
                                   const double* __restrict__ x, double alpha, double* y) {
  unsigned long long f = pol_first(), l = pol_last();
  unsigned lane = threadIdx.x & 31;
  long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long lo = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32 * CHUNK; lo < nnz; lo += warps * CHUNK) {
    long long hi = min(lo + CHUNK, nnz);
    unsigned crow = 0xffffffffu; double csum = 0;
    for (long long base = lo; base < hi; base += 32 * VT) {
      unsigned r[VT], c[VT]; double v[VT];
      #pragma unroll
      for (int j = 0; j < VT; j++) { long long k = base + 32 * j + lane; r[j] = 0xffffffffu; v[j] = 0;
        if (k < hi) { r[j] = ldu(row + k, f); c[j] = ldu(col + k, f); v[j] = ldd(val + k, f); } }
      #pragma unroll
      for (int j = 0; j < VT; j++) if (r[j] != 0xffffffffu) v[j] *= ldd(x + c[j], l);
      #pragma unroll
      for (int j = 0; j < VT; j++) segment(r[j], v[j], alpha, y, lane, crow, csum);
    }
    if (crow != 0xffffffffu && lane == 0) atomicAdd(y + crow, alpha * csum);
  }
}

// The row of nonzero k for each lane, given rb = the row of the run's first nonzero: a window of 32
// row ends ptr[rb + 1 ..] across the lanes, searched in 5 shuffles; more windows while some lane's k
// is past the window (empty rows).
__device__ __forceinline__ unsigned row_of(const unsigned* __restrict__ ptr, long long rows, unsigned rb, long long k, bool live, unsigned lane) {
  unsigned r = rb;
  bool more = live;
  while (__any_sync(~0u, more)) {
    long long q = (long long)rb + 1 + lane;
    unsigned w = q <= rows ? __ldg(ptr + q) : 0xffffffffu;
    unsigned cnt = 0;
    #pragma unroll
    for (unsigned s = 16; s >= 1; s /= 2) { unsigned t = __shfl_sync(~0u, w, cnt + s - 1); if (more && (long long)t <= k) cnt += s; }
    unsigned last = __shfl_sync(~0u, w, 31);
    if (more) { r += cnt; if (cnt == 31 && (long long)last <= k) { r += 1; } else more = false; }
    rb += 32;
  }
  return r;
}

extern "C" __global__ void csr_seg(long long nnz, long long rows, const unsigned* __restrict__ ptr, const unsigned* __restrict__ chunk_row, const unsigned* __restrict__ col,
                                   const double* __restrict__ val, const double* __restrict__ x, double alpha, double* y) {
  unsigned long long f = pol_first(), l = pol_last();
  unsigned lane = threadIdx.x & 31;
  long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long lo = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32 * CHUNK; lo < nnz; lo += warps * CHUNK) {
    long long hi = min(lo + CHUNK, nnz);
    unsigned crow = 0xffffffffu; double csum = 0;
    unsigned rb = chunk_row[lo / CHUNK];
    for (long long base = lo; base < hi; base += 32 * VT) {
      unsigned r[VT], c[VT]; double v[VT];
      #pragma unroll
      for (int j = 0; j < VT; j++) { long long k = base + 32 * j + lane; v[j] = 0;
        if (k < hi) { c[j] = ldu(col + k, f); v[j] = ldd(val + k, f); } }
      #pragma unroll
      for (int j = 0; j < VT; j++) { long long k = base + 32 * j + lane; bool live = k < hi;
        unsigned rr = row_of(ptr, rows, rb, k, live, lane); r[j] = live ? rr : 0xffffffffu;
        unsigned top = __shfl_sync(~0u, rr, 31); rb = top; }
      #pragma unroll
      for (int j = 0; j < VT; j++) if (r[j] != 0xffffffffu) v[j] *= ldd(x + c[j], l);
      #pragma unroll
      for (int j = 0; j < VT; j++) segment(r[j], v[j], alpha, y, lane, crow, csum);
    }
    if (crow != 0xffffffffu && lane == 0) atomicAdd(y + crow, alpha * csum);
  }
}
'''
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
COO, CSR = mod.get_function("coo_seg"), mod.get_function("csr_seg")
CHUNK = 256


def main():
    print("| matrix | nnz | cuSPARSE CSR (CuPy) us | COO-seg us | CSR-seg us | CSR-seg / COO-seg | max rel. diff COO, CSR |")
    print("|---|---|---|---|---|---|---|")
    for name, A in issue17():
        m, n = A.shape; nnz = A.nnz
        ptr = cp.asarray(A.indptr.astype(np.uint32)); col = cp.asarray(A.indices.astype(np.uint32)); val = cp.asarray(A.data.astype(np.float64))
        row = cp.asarray(np.repeat(np.arange(m, dtype=np.uint32), np.diff(A.indptr)))
        chunks = (nnz + CHUNK - 1) // CHUNK
        # A chunk whose first nonzero starts a row after empty rows: the last row with ptr <= lo.
        chunk_row = (cp.searchsorted(ptr, cp.arange(chunks, dtype=cp.int64) * CHUNK, side="right") - 1).astype(cp.uint32)
        x = cp.random.random(n); y = cp.zeros(m)
        blocks = max(1, min((chunks + 7) // 8, 132 * 64))
        def coo():
            y.fill(0); COO((blocks,), (256,), (np.int64(nnz), row, col, val, x, np.float64(1.0), y))
        def csr():
            y.fill(0); CSR((blocks,), (256,), (np.int64(nnz), np.int64(m), ptr, chunk_row, col, val, x, np.float64(1.0), y))
        dA = cps.csr_matrix(A); want = dA @ x; scale = float(cp.max(cp.abs(want))) or 1.0
        coo(); d1 = float(cp.max(cp.abs(y - want))) / scale
        csr(); d2 = float(cp.max(cp.abs(y - want))) / scale
        t0 = median_ms(lambda: dA @ x) * 1e3; t1 = median_ms(coo) * 1e3; t2 = median_ms(csr) * 1e3
        print(f"| {name} | {nnz} | {t0:.1f} | {t1:.1f} | {t2:.1f} | {t2 / t1:.3f} | {d1:.1e}, {d2:.1e} |", flush=True)


main()
