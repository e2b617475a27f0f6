//! The dense operands of a product: blocks of `k` vectors as [`DenseView`] / [`DenseViewMut`]
//! (column-major, any leading dimension). The kernels read and write packed blocks
//! (`ld == rows`); a block with gaps between its columns is packed into the plan's scratch by
//! one 2-D copy before the product (and `out` copied back after it): two extra passes over that
//! block, taken only when the caller's block is strided. Scratch is carved in this order: the
//! packed `x` (when strided), the packed `out` (when strided), then the product's own.
use gpu_runtime::scratch::{Carver, Measure};
use gpu_runtime::{DenseView, DenseViewMut, DeviceView, DeviceViewMut, Gpu, Scratch};

use crate::{Error, Op, Result, SpmvValue, MAX_K};

/// The packed operands handed to a kernel: `x` and `out` as packed blocks of `k` vectors.
pub(crate) struct Packed<'p, T> {
    pub(crate) x: DeviceView<'p, T>,
    pub(crate) out: DeviceViewMut<'p, T>,
    pub(crate) k: usize,
}

/// `(x rows, out rows)` of `op(A)` for `A` `rows × cols`.
pub(crate) fn operand_rows(rows: u64, cols: u64, op: Op) -> (u64, u64) {
    if op == Op::NoTranspose {
        (cols, rows)
    } else {
        (rows, cols)
    }
}

/// The packed copies of strided operands, in carving order: `x`'s (when strided), `out`'s
/// (when strided); the product's own regions follow.
pub(crate) struct Packing<C: Carver, T: SpmvValue> {
    pub(crate) x: Option<C::Slice<T>>,
    pub(crate) out: Option<C::Slice<T>>,
}

/// The one description of [`Packing`] for `op(A)` of `A` `rows × cols` and `k` vectors, with
/// `x` and `out` packed or not: measured by the size queries (both strided unless `packed`),
/// carved by [`with_packed`] (as the operands are).
pub(crate) fn packing<C: Carver, T: SpmvValue>(
    c: &mut C,
    (rows, cols): (u64, u64),
    op: Op,
    k: usize,
    x_packed: bool,
    out_packed: bool,
) -> Result<Packing<C, T>> {
    let (xn, on) = operand_rows(rows, cols, op);
    let x = if x_packed { None } else { Some(c.slice::<T>((xn * k as u64) as usize)?) };
    let out = if out_packed { None } else { Some(c.slice::<T>((on * k as u64) as usize)?) };
    Ok(Packing { x, out })
}

/// Scratch bytes of a product: the packing ([`packing`], both operands strided unless `packed`)
/// then the product's own regions, as `own` describes them on the measuring carver.
pub(crate) fn product_bytes<T: SpmvValue, R>(shape: (u64, u64), op: Op, k: usize, packed: bool, own: impl FnOnce(&mut Measure) -> Result<R>) -> u64 {
    Measure::bytes_of(|m| {
        packing::<_, T>(m, shape, op, k, packed, packed)?;
        own(m)
    })
    .unwrap_or(u64::MAX)
}

/// Checks `x` and `out` against `op(A)` for `A` `rows × cols`: `k = x.cols()` vectors
/// (`1..=MAX_K`), `out` of as many, each of the operand's length.
pub(crate) fn check<T>(rows: u64, cols: u64, op: Op, x: &DenseView<'_, T>, out: &DenseViewMut<'_, T>) -> Result<usize> {
    let k = x.cols() as usize;
    if k == 0 || k > MAX_K as usize {
        return Err(Error::BadVectorCount { k });
    }
    if out.cols() != x.cols() {
        return Err(Error::LengthMismatch { what: "out vectors", expected: x.cols(), got: out.cols() });
    }
    let (xn, on) = operand_rows(rows, cols, op);
    if x.rows() != xn {
        return Err(Error::LengthMismatch { what: "x rows", expected: xn, got: x.rows() });
    }
    if out.rows() != on {
        return Err(Error::LengthMismatch { what: "out rows", expected: on, got: out.rows() });
    }
    Ok(k)
}

/// Runs `product` on packed operands: the caller's blocks when packed, otherwise copies in
/// `scratch` (`out`'s read in only when `beta != 0`, and copied back after). `product` gets
/// the rest of the scratch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn with_packed<T: SpmvValue>(
    gpu: &Gpu,
    (rows, cols): (u64, u64),
    op: Op,
    x: &DenseView<'_, T>,
    beta: T,
    out: &mut DenseViewMut<'_, T>,
    scratch: &mut Scratch<'_>,
    product: impl FnOnce(Packed<'_, T>, &mut Scratch<'_>) -> Result<()>,
) -> Result<()> {
    let k = check(rows, cols, op, x, out)?;
    let (xn, on) = operand_rows(rows, cols, op);
    let Packing { x: mut xbuf, out: obuf } = packing::<_, T>(scratch, (rows, cols), op, k, x.is_packed(), out.is_packed())?;
    let xv = match xbuf.as_mut() {
        None => x.data().clone(),
        Some(buf) => {
            let mut dst = DenseViewMut::packed(buf.view_mut(), xn)?;
            gpu.copy_dense(x, &mut dst)?;
            buf.view()
        }
    };
    let Some(mut buf) = obuf else {
        return product(Packed { x: xv, out: out.data_mut().reborrow(), k }, scratch);
    };
    if beta != T::default() {
        let mut dst = DenseViewMut::packed(buf.view_mut(), on)?;
        gpu.copy_dense(&out.as_view(), &mut dst)?;
    }
    product(Packed { x: xv, out: buf.view_mut(), k }, scratch)?;
    let src = DenseView::packed(buf.view(), on)?;
    gpu.copy_dense(&src, out)?;
    Ok(())
}
