//! Values of the widths the kernels do not carry (1 and 2 bytes: `u8`, `i8`, `u16`, `i16`, `f16`,
//! `bf16`; 16 bytes, `u128`, `i128`), except in RadixTrans, whose sort carries 1 and 2 bytes, and
//! 16 when it is one pass: the algorithm transposes the matrix with each nonzero's
//! position (`0..nnz`, a `u32`) as its value, so that the output's "values" are the permutation;
//! one gather kernel (`transpose_permute_v{1,2,16}`) then moves the real values by it. Every
//! GPU algorithm gets these widths this way, at the price of `8·nnz` bytes of workspace and one
//! gather.
use gpu_radix::{bits_below, RadixSort};
use gpu_runtime::scratch::{Carver, Measure};
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};

use crate::{launch, Algorithm, Dims, Error, Result, Transposer};

/// Whether values of `bytes` bytes take this path with `algo` (resolved) on `n` columns: 4 and 8
/// bytes move with the keys everywhere; RadixTrans's sort also carries 1 and 2 bytes, and 16
/// bytes (two 8-byte halves a pass) when it is one pass, since each pass moves them twice (on
/// the H100 the 64-column matrix took 0.43 ms against 0.68 by positions, the 3-pass uniform
/// 100k² 1.06 against 0.79); the serial twin takes every width itself; 0 is a
/// pattern.
pub(crate) fn by_positions(radix: &RadixSort, algo: Algorithm, bytes: usize, n: u64) -> bool {
    match bytes {
        0 | 4 | 8 => false,
        1 | 2 if algo == Algorithm::RadixTrans => false,
        16 if algo == Algorithm::RadixTrans && radix.passes(0..bits_below(n)).0 == 1 => false,
        _ => algo != Algorithm::Serial,
    }
}

/// Refuses widths the permute kernels do not move (1, 2 and 16 bytes), before any work.
fn check_width(bytes: usize) -> Result<()> {
    match bytes {
        1 | 2 | 16 => Ok(()),
        _ => Err(Error::UnsupportedValue { bytes }),
    }
}

/// The scratch of one call, in carving order: the positions, the permutation, then the
/// algorithm's own for 4-byte values (`inner` bytes).
struct Regions<C: Carver> {
    pos: C::Slice<u32>,
    perm: C::Slice<u32>,
    inner: C::Sub,
}

/// The one description of [`Regions`], measured or carved.
fn regions<C: Carver>(c: &mut C, nnz: u64, inner: u64) -> Result<Regions<C>> {
    Ok(Regions { pos: c.slice(nnz as usize)?, perm: c.slice(nnz as usize)?, inner: c.sub(inner)? })
}

/// [`Regions`], measured.
pub(crate) fn workspace_bytes(nnz: u64, inner: u64) -> u64 {
    Measure::bytes_of(|m| regions(m, nnz, inner)).unwrap_or(u64::MAX)
}

/// Transposes `a`, whose values are `T::BYTES` = 1, 2 or 16 bytes wide, with `algo` (a GPU
/// algorithm, resolved) into `out`.
pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    algo: Algorithm,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    check_width(T::BYTES)?;
    let Some(vals) = a.vals() else {
        return Err(Error::Runtime(gpu_runtime::Error::Internal("wide values path without values")));
    };
    let inner_bytes = t.workspace_bytes(algo, d.m, d.n, d.nnz, 4)?;
    let Regions { mut pos, mut perm, mut inner } = regions(scratch, d.nnz, inner_bytes)?;
    launch::iota(&t.gpu, &t.k, &mut pos.view_mut())?;
    // The same matrix with each nonzero's position as its value, and an output whose values
    // are the permutation: borrowed views, nothing forged.
    let a32 = a.with_values(pos.view())?;
    let mut o32 = DeviceCsrPartsMut { ptr: out.ptr.reborrow(), idx: out.idx.reborrow(), vals: Some(perm.view_mut()) };
    t.run_algorithm(algo, &a32, &mut o32, d, &mut inner)?;
    drop(o32);
    let Some(out_vals) = out.vals.as_mut() else {
        return Err(Error::Runtime(gpu_runtime::Error::Internal("wide values path without output values")));
    };
    // SAFETY: perm holds a permutation of 0..nnz (the positions, transposed); vals and out hold
    // nnz items of this width and do not overlap (a shared and a mutable borrow).
    unsafe { launch::permute(&t.gpu, &t.k, &perm.view(), vals, out_vals)? };
    Ok(())
}
