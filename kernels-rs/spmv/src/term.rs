//! One nonzero's term `val[k] · x[col[k]]` as every product kernel loads it: through the
//! read-only path with L2 eviction hints, the matrix "evict first" (each product reads it once)
//! and `x` "evict last" (gathered again and again), so that streaming the matrix does not push
//! `x` out of L2. On an H100 (f64, one device session, two runs each) the hints took
//! CSR-adaptive from 0.0625 to 0.052 ms on the 3D Laplacian 100³ and from 0.203 to 0.198 ms on
//! R-MAT 2^22; see BENCHMARKS.md.
use core::ops::Mul;

use gpu_device::mem::{l2_evict_first, l2_evict_last, ldg_hint, GlobalWord, L2Policy};

/// The two L2 policies of a product kernel, made once per thread ([`Hints::new`]).
#[derive(Clone, Copy)]
pub struct Hints {
    once: L2Policy,
    again: L2Policy,
}

impl Hints {
    /// The policies: matrix evict-first, `x` evict-last.
    #[inline(always)]
    pub fn new() -> Self {
        Self { once: l2_evict_first(), again: l2_evict_last() }
    }

    /// A matrix word (value, column, slot) at `p`.
    ///
    /// # Safety
    /// `p` is a valid, aligned global address not written during the kernel.
    #[inline(always)]
    pub unsafe fn matrix<V: GlobalWord>(self, p: *const V) -> V {
        // SAFETY: forwarded.
        unsafe { ldg_hint(p, self.once) }
    }

    /// `x[c]`.
    ///
    /// # Safety
    /// `c` is below `x`'s length; `x` is not written during the kernel.
    #[inline(always)]
    pub unsafe fn x<V: GlobalWord>(self, x: *const V, c: u32) -> V {
        // SAFETY: forwarded.
        unsafe { ldg_hint(x.add(c as usize), self.again) }
    }

    /// `val[k] · x[col[k]]`.
    ///
    /// # Safety
    /// `k` is below `val`'s and `col`'s lengths, `col[k]` below `x`'s; none of them is written
    /// during the kernel.
    #[inline(always)]
    pub unsafe fn term<V: GlobalWord + Mul<Output = V>>(self, val: *const V, col: *const u32, x: *const V, k: usize) -> V {
        // SAFETY: the caller's contract.
        unsafe { self.matrix(val.add(k)) * self.x(x, self.matrix(col.add(k))) }
    }
}
