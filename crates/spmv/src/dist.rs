//! `y = α A x + β y` with `A` spread over several GPUs by row blocks ([`DistCsr`]), over NCCL
//! ([`Comms`]): [`DistSpmv`].
//!
//! `x` and `y` are distributed too: rank `r` holds the rows `row_starts[r] .. row_starts[r + 1]`
//! of `y` and the entries [`DistSpmv::x_starts`]`[r] .. [r + 1]` of `x` (the row starts again for
//! a square matrix, equal parts of the columns otherwise). Each product
//!
//! 1. all-gathers `x` into a full copy on every rank (one NCCL broadcast per rank's part, all in
//!    one group: an all-gather of unequal parts), then
//! 2. multiplies each rank's block by it with a one-GPU [`Spmv`] plan of the chosen format.
//!
//! Each rank's rows of `y` are computed by the same kernel from the same values as on one GPU,
//! so for the deterministic formats ([`Format::is_deterministic`]) the result equals the
//! one-GPU product bit for bit.
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::Comms;
use sptrans_matrix::dist::DistCsr;

use crate::{Error, Format, Result, Spmv, SpmvValue};

/// A distributed SpMV plan: one [`Spmv`] per rank over its block, and a full-length `x` buffer
/// per rank for the gathered vector (unused with one rank) (see the module docs). Converts once; each
/// [`DistSpmv::apply`] allocates nothing.
pub struct DistSpmv<'a, T: SpmvValue> {
    plans: Vec<Spmv<'a, T>>,
    full: Vec<CudaSlice<T>>,
    row_starts: Vec<u64>,
    x_starts: Vec<u64>,
}

impl<'a, T: SpmvValue> DistSpmv<'a, T> {
    /// Plans the product for `a` over `comms` (block `r` on rank `r`): converts each block to
    /// `format` ([`Spmv::new`]; [`Format::Auto`] chooses per block) and allocates each rank's
    /// gathered `x` (`cols` values). Synchronizes where [`Spmv::new`] does.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `a` has another number of blocks than `comms` has ranks;
    /// as [`Spmv::new`] (a pattern matrix, ELL on uneven rows, out of memory).
    pub fn new(comms: &Comms, a: &'a DistCsr<T>, format: Format) -> Result<Self> {
        let g = comms.len();
        if a.blocks().len() != g {
            return Err(Error::LengthMismatch { what: "blocks of the distributed matrix", expected: g as u64, got: a.blocks().len() as u64 });
        }
        let gpus = comms.gpus();
        let plans = a.blocks().iter().zip(gpus).map(|(b, gpu)| Spmv::new(gpu, b.view(), format)).collect::<Result<Vec<_>>>()?;
        // Every word is written by each product's gather before the product reads it.
        let full =
            if g > 1 { gpus.iter().map(|gpu| gpu.alloc::<T>(a.cols() as usize)).collect::<gpu_runtime::Result<Vec<_>>>()? } else { Vec::new() };
        let x_starts = if a.rows() == a.cols() { a.row_starts().to_vec() } else { even_starts(a.cols(), g) };
        Ok(Self { plans, full, row_starts: a.row_starts().to_vec(), x_starts })
    }

    /// Where each rank's rows of `y` start (`ranks + 1` entries): the matrix's row starts.
    pub fn row_starts(&self) -> &[u64] {
        &self.row_starts
    }

    /// Where each rank's part of `x` starts (`ranks + 1` entries, ending at the column count).
    pub fn x_starts(&self) -> &[u64] {
        &self.x_starts
    }

    /// The format of each rank's plan (for [`Format::Auto`], the one chosen for its block).
    pub fn formats(&self) -> Vec<Format> {
        self.plans.iter().map(Spmv::format).collect()
    }

    /// Device bytes held per rank: the block in its format ([`Spmv::footprint_bytes`]) and the
    /// gathered `x`.
    pub fn footprint_bytes(&self) -> Vec<u64> {
        self.plans.iter().enumerate().map(|(r, p)| p.footprint_bytes() + self.full.get(r).map_or(0, |f| (f.len() * T::BYTES) as u64)).collect()
    }

    /// `y = α A x + β y`: `x[r]` is rank `r`'s part of `x` ([`DistSpmv::x_starts`]), `y[r]` its
    /// rows of `y` ([`DistSpmv::row_starts`]), each on rank `r`'s GPU; with `β == 0`, `y` is not
    /// read. Enqueued on every rank's stream without synchronizing; allocates nothing.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `x` or `y` has another number of parts than there are
    /// ranks, or a part another length than its range; NCCL and launch errors.
    pub fn apply<X: DevicePtr<T>, Y: DevicePtrMut<T>>(&mut self, comms: &Comms, alpha: T, x: &[X], beta: T, y: &mut [Y]) -> Result<()> {
        let g = self.plans.len();
        if comms.len() != g {
            return Err(Error::LengthMismatch { what: "ranks of the communicator", expected: g as u64, got: comms.len() as u64 });
        }
        if x.len() != g {
            return Err(Error::LengthMismatch { what: "parts of x", expected: g as u64, got: x.len() as u64 });
        }
        if y.len() != g {
            return Err(Error::LengthMismatch { what: "parts of y", expected: g as u64, got: y.len() as u64 });
        }
        for r in 0..g {
            let want = self.x_starts[r + 1] - self.x_starts[r];
            if x[r].len() as u64 != want {
                return Err(Error::LengthMismatch { what: "a rank's part of x", expected: want, got: x[r].len() as u64 });
            }
            let want = self.row_starts[r + 1] - self.row_starts[r];
            if y[r].len() as u64 != want {
                return Err(Error::LengthMismatch { what: "a rank's rows of y", expected: want, got: y[r].len() as u64 });
            }
        }
        let gpus = comms.gpus();
        let tb = T::BYTES as u64;
        if g == 1 {
            // One rank: its part is the whole x.
            return self.plans[0].apply(alpha, &x[0], beta, &mut y[0]);
        }
        {
            let starts = &self.x_starts;
            let full = &mut self.full;
            comms.group(|c| {
                for root in 0..g {
                    let len = starts[root + 1] - starts[root];
                    if len == 0 {
                        continue;
                    }
                    let (send, _gs) = x[root].device_ptr(gpus[root].stream());
                    for (r, f) in full.iter_mut().enumerate() {
                        let (fa, _gf) = f.device_ptr_mut(gpus[r].stream());
                        // SAFETY: the root's part holds len values (checked above); each rank's
                        // full x holds cols >= starts[root] + len values; nothing else uses them
                        // until the stream passes the broadcast.
                        unsafe { c.broadcast_bytes(r, send, fa + tb * starts[root], (tb * len) as usize, root)? };
                    }
                }
                Ok(())
            })?;
        }
        for ((p, f), yr) in self.plans.iter_mut().zip(&self.full).zip(y.iter_mut()) {
            p.apply(alpha, f, beta, yr)?;
        }
        Ok(())
    }
}

/// `parts + 1` starts of `parts` nearly equal ranges of `len` (the first ones one longer).
fn even_starts(len: u64, parts: usize) -> Vec<u64> {
    let (q, rem) = (len / parts as u64, len % parts as u64);
    (0..=parts as u64).map(|r| r * q + r.min(rem)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn even_starts_cover_the_range() {
        assert_eq!(super::even_starts(10, 4), vec![0, 3, 6, 8, 10]);
        assert_eq!(super::even_starts(2, 4), vec![0, 1, 2, 2, 2]);
        assert_eq!(super::even_starts(0, 1), vec![0, 0]);
    }
}
