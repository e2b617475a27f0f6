"""CUDA device helpers shared by the CuPy SpMV peers (spmv_floor.py, spmv_seg_proto.py,
spmv_tile_proto.py): the L2 eviction policies and loads through the read-only path under a
policy, as `gpu_device::mem::{l2_evict_first, l2_evict_last, ldg_hint}` do in our kernels.
Prepend `L2_HINTS` to a RawModule's source."""

L2_HINTS = r'''
__device__ __forceinline__ unsigned long long pol_first() { unsigned long long p; asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p)); return p; }
__device__ __forceinline__ unsigned long long pol_last() { unsigned long long p; asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); return p; }
__device__ __forceinline__ double ldd(const double* a, unsigned long long p) { double v; asm volatile("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(a), "l"(p)); return v; }
__device__ __forceinline__ int ldi(const int* a, unsigned long long p) { int v; asm volatile("ld.global.nc.L2::cache_hint.s32 %0, [%1], %2;" : "=r"(v) : "l"(a), "l"(p)); return v; }
__device__ __forceinline__ unsigned ldu(const unsigned* a, unsigned long long p) { unsigned v; asm volatile("ld.global.nc.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(v) : "l"(a), "l"(p)); return v; }
'''
