#!/usr/bin/env python3
"""The floor of the SVD's wide products (issue 56, item 1): how fast ``A @ X`` and ``A.T @ U``
of ``k`` = 8 and 16 ``f64`` vectors can go on the device when the blocks are row-major (a
vector's entries of one row contiguous: one 64- or 128-byte line a nonzero) and each row's sum
stays in registers (no atomics), against today's column-major CSRC products and CuPy's.

Variants (CUDA C prototypes through CuPy's RawKernel; a study, not the library):
- ``gather``: a group of ``k`` lanes a row of a CSR (A, or a stored A^T), each lane one vector;
  the group loads ``k`` nonzeros at a time and broadcasts them by shuffles;
- ``gather, P panels``: the same over column panels of the CSR (each panel's rows of the dense
  block fit in L2), summed into the output panel after panel;
- ``scatter``: A^T U from A's CSR, a group a row of A, its U row read once, every nonzero added
  to V's row by ``red.global.add.f64``.

Usage (the GPU host): ``python3 benches/peers/wide_products_floor.py [--nnz-m 250] [--ks 8,16]``.
"""
import argparse
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from svd_suite import Gpu, copy_gbps, event_ms, uniform  # noqa: E402

SRC = r"""
template <int K, bool COLMAJOR_OUT>
__device__ void spmm_rm(int m, const int* __restrict__ ptr, const int* __restrict__ idx,
                        const double* __restrict__ val, const double* __restrict__ x,
                        double* __restrict__ y, long ldy, int accumulate) {
  int lane = threadIdx.x % K;
  long row = ((long)blockIdx.x * blockDim.x + threadIdx.x) / K;
  if (row >= m) return;
  unsigned gmask = (K == 32) ? 0xffffffffu : (((1u << K) - 1) << ((threadIdx.x % 32) & ~(K - 1)));
  int b = ptr[row], e = ptr[row + 1];
  double acc0 = 0.0, acc1 = 0.0;
  for (int p0 = b; p0 < e; p0 += K) {
    int p = p0 + lane;
    int j = 0; double v = 0.0;
    if (p < e) { j = idx[p]; v = val[p]; }
#pragma unroll
    for (int t = 0; t < K; t += 2) {
      int j0 = __shfl_sync(gmask, j, t, K);
      double v0 = __shfl_sync(gmask, v, t, K);
      int j1 = __shfl_sync(gmask, j, t + 1, K);
      double v1 = __shfl_sync(gmask, v, t + 1, K);
      if (p0 + t < e) acc0 += v0 * x[(long)j0 * K + lane];
      if (p0 + t + 1 < e) acc1 += v1 * x[(long)j1 * K + lane];
    }
  }
  double acc = acc0 + acc1;
  double* o = COLMAJOR_OUT ? y + row + (long)lane * ldy : y + row * K + lane;
  *o = accumulate ? *o + acc : acc;
}

template <int K>
__device__ void scatter(int m, const int* __restrict__ ptr, const int* __restrict__ idx,
                        const double* __restrict__ val, const double* __restrict__ u,
                        double* __restrict__ v_out) {
  int lane = threadIdx.x % K;
  long row = ((long)blockIdx.x * blockDim.x + threadIdx.x) / K;
  if (row >= m) return;
  unsigned gmask = (K == 32) ? 0xffffffffu : (((1u << K) - 1) << ((threadIdx.x % 32) & ~(K - 1)));
  int b = ptr[row], e = ptr[row + 1];
  double ur = u[row * K + lane];
  for (int p0 = b; p0 < e; p0 += K) {
    int p = p0 + lane;
    int j = 0; double v = 0.0;
    if (p < e) { j = idx[p]; v = val[p]; }
#pragma unroll
    for (int t = 0; t < K; t++) {
      int jj = __shfl_sync(gmask, j, t, K);
      double vv = __shfl_sync(gmask, v, t, K);
      if (p0 + t < e) atomicAdd(&v_out[(long)jj * K + lane], vv * ur);
    }
  }
}

extern "C" {
__global__ void __launch_bounds__(256) rm8(int m, const int* p, const int* i, const double* v, const double* x, double* y, long ld, int acc) { spmm_rm<8, false>(m, p, i, v, x, y, ld, acc); }
__global__ void __launch_bounds__(256) rm16(int m, const int* p, const int* i, const double* v, const double* x, double* y, long ld, int acc) { spmm_rm<16, false>(m, p, i, v, x, y, ld, acc); }
__global__ void __launch_bounds__(256) cm8(int m, const int* p, const int* i, const double* v, const double* x, double* y, long ld, int acc) { spmm_rm<8, true>(m, p, i, v, x, y, ld, acc); }
__global__ void __launch_bounds__(256) cm16(int m, const int* p, const int* i, const double* v, const double* x, double* y, long ld, int acc) { spmm_rm<16, true>(m, p, i, v, x, y, ld, acc); }
__global__ void __launch_bounds__(256) sc8(int m, const int* p, const int* i, const double* v, const double* u, double* o) { scatter<8>(m, p, i, v, u, o); }
__global__ void __launch_bounds__(256) sc16(int m, const int* p, const int* i, const double* v, const double* u, double* o) { scatter<16>(m, p, i, v, u, o); }
}
"""


def ms(f):
    return event_ms(cp, f)


def agree(got, want):
    """The prototype's answer equals CuPy's within rounding (1e-9 of the largest entry)."""
    assert float(cp.abs(got - want).max()) < 1e-9 * float(cp.abs(want).max() + 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nnz-m", type=int, default=250)
    ap.add_argument("--ks", default="8,16")
    ap.add_argument("--panels", default="1,2,4,8")
    args = ap.parse_args()
    mod = cp.RawModule(code=SRC, options=("-std=c++17",))
    dev = Gpu()
    nnz = args.nnz_m * 1_000_000
    m = nnz // 100
    n = m // 10
    a = uniform(dev, m, n, 100, 11)
    at = a.T.tocsr()
    mat_bytes = a.data.nbytes + a.indices.nbytes + a.indptr.nbytes
    gbps = copy_gbps(cp, mat_bytes)
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}: A {m} x {n}, {a.nnz} nonzeros, {mat_bytes / 1e9:.2f} GB; copy {gbps:.0f} GB/s (matrix read alone {mat_bytes / gbps / 1e6:.3f} ms)")
    print("| k | product | variant | ms | share of copy (matrix bytes) | effective gather GB/s (8 k B a nonzero) |")
    print("|---|---|---|---|---|---|")

    def row(k, what, variant, t):
        print(f"| {k} | {what} | {variant} | {t:.3f} | {100 * mat_bytes / t / 1e6 / gbps:.0f}% | {a.nnz * 8 * k / t / 1e6:.0f} |", flush=True)

    import sptrans

    op = sptrans.Operator(a)
    for k in [int(x) for x in args.ks.split(",")]:
        x_cm = cp.random.random_sample((n, k)) - 0.5
        u_cm = cp.random.random_sample((m, k)) - 0.5
        x_rm = cp.ascontiguousarray(x_cm)  # row-major n x k
        u_rm = cp.ascontiguousarray(u_cm)
        x_f = cp.asfortranarray(x_cm)
        u_f = cp.asfortranarray(u_cm)
        ref_y = a @ x_rm
        ref_v = a.T @ u_rm
        row(k, "A@X", "ours today (CSRC, column-major)", ms(lambda: op @ x_f))
        row(k, "A@X", "cupy (cuSPARSE SpMM)", ms(lambda: a @ x_f))
        row(k, "A.T@U", "ours today (CSRC, column-major)", ms(lambda: op.T @ u_f))
        rm = mod.get_function(f"rm{k}")
        cm = mod.get_function(f"cm{k}")
        sc = mod.get_function(f"sc{k}")
        threads = 256

        def gather(kern, mat, xin, out, ld, acc=0, rows=None):
            r = mat.shape[0] if rows is None else rows
            grid = (r * k + threads - 1) // threads
            kern((grid,), (threads,), (np.int32(r), mat.indptr, mat.indices, mat.data, xin, out, np.int64(ld), np.int32(acc)))

        y = cp.empty((m, k))
        t = ms(lambda: gather(rm, a, x_rm, y, m))
        agree(y, ref_y)
        row(k, "A@X", "gather, row-major out", t)
        yc = cp.empty((k, m))
        t = ms(lambda: gather(cm, a, x_rm, yc, m))
        agree(yc.T, ref_y)
        row(k, "A@X", "gather, column-major out", t)
        t = ms(lambda: cp.ascontiguousarray(x_f))
        row(k, "X", "column-major to row-major copy", t)
        v = cp.empty((n, k))
        t = ms(lambda: gather(rm, at, u_rm, v, n))
        agree(v, ref_v)
        row(k, "A.T@U", "gather over stored A^T", t)

        def panelled(parts, cuts, dense, out, ld):
            """out = the sum over panels of part i times rows cuts[i].. of dense."""
            for i, pt in enumerate(parts):
                gather(rm, pt, dense[cuts[i] :], out, ld, acc=1 if i else 0)

        for panels in [int(x) for x in args.panels.split(",") if int(x) > 1]:
            cuts = [m * i // panels for i in range(panels + 1)]
            parts = [a[cuts[i] : cuts[i + 1]].T.tocsr() for i in range(panels)]
            t = ms(lambda: panelled(parts, cuts, u_rm, v, n))
            agree(v, ref_v)
            row(k, "A.T@U", f"gather over stored A^T, {panels} row panels of A", t)
            cuts = [n * i // panels for i in range(panels + 1)]
            parts = [a[:, cuts[i] : cuts[i + 1]].tocsr() for i in range(panels)]
            t = ms(lambda: panelled(parts, cuts, x_rm, y, m))
            agree(y, ref_y)
            row(k, "A@X", f"gather, {panels} column panels", t)
            del parts

        def scat():
            v.fill(0)
            grid = (m * k + threads - 1) // threads
            sc((grid,), (threads,), (np.int32(m), a.indptr, a.indices, a.data, u_rm, v))

        t = ms(scat)
        agree(v, ref_v)
        row(k, "A.T@U", "scatter (red.global.add.f64)", t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
