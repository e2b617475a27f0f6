//! Values by index (CSR-VI: Kourtis, Goumas & Koziris, "Optimizing sparse matrix-vector
//! multiplication using index and value compression", CF 2008) for [`crate::Format::SellVi`]: a
//! matrix of at most [`VI_MAX`] distinct values stores each nonzero's value as one byte, an
//! index into a table of the distinct values (sorted by their bits), which stays in cache. Exact:
//! the product reads the same values. Patterns and counts (graphs, bags of words, incidence
//! matrices) and constant-coefficient stencils have a few values; 47 of the 65 real-valued
//! matrices in `../shared/matrices` hold at most 256, 29 a single one
//! (`benches/experiments/2026-11-27-spmv-index-and-value-bytes.md`).
//!
//! The GPU conversion inserts every value's bits into an open-addressing set
//! (`spmv_dict_insert`), reads the set back (8 KiB), sorts it on the host, and writes each
//! nonzero's index (`spmv_dict_index`); [`value_index`] is its serial twin.
use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu};
use sptrans_matrix::DeviceCsrView;

use crate::{launch, Error, Result, SpmvValue};

/// The most distinct values a matrix may hold for [`crate::Format::SellVi`].
pub const VI_MAX: u64 = spmv_kernels::VI_MAX as u64;

/// The table and the one-byte indices of a matrix's values.
pub(crate) struct ValueIndex<T> {
    /// Each nonzero's index into `table`; empty when the matrix holds a single value (every
    /// nonzero is `table[0]`: a pattern's ones).
    pub idx: CudaSlice<u8>,
    /// The distinct values, sorted by bits, padded with zeros to 256 (so that any byte indexes
    /// it).
    pub table: CudaSlice<T>,
}

impl<T: SpmvValue> ValueIndex<T> {
    /// The value index of `a`'s values on the GPU. Synchronizes (the set is read back).
    ///
    /// # Errors
    /// [`Error::TooManyValues`] past [`VI_MAX`] distinct values; [`Error::NoValues`]; launch
    /// errors, out of memory.
    pub fn convert(gpu: &Gpu, k: &launch::Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<Self> {
        let vals = launch::values(a)?;
        let nnz = a.nnz();
        let slots_len = spmv_kernels::VI_SLOTS as usize;
        let mut slots = gpu.alloc::<u64>(slots_len)?;
        gpu.memset_bytes(&mut slots, 0xFF)?; // VI_EMPTY everywhere
        let mut full = gpu.alloc_zeros::<u32>(1)?;
        launch::dict_insert(gpu, k, vals, &mut DeviceViewMut::of(&mut slots), &mut DeviceViewMut::of(&mut full))?;
        let (full, set) = (gpu.download(&full)?[0], gpu.download(&slots)?);
        let mut bits: Vec<u64> = set.iter().copied().filter(|&b| b != spmv_kernels::VI_EMPTY).collect();
        if full != 0 || bits.len() as u64 > VI_MAX {
            return Err(Error::TooManyValues { at_least: bits.len() as u64 + u64::from(full != 0), max: VI_MAX });
        }
        bits.sort_unstable();
        // map[slot]: the index of the slot's value in the sorted table.
        let map: Vec<u8> = set.iter().map(|b| bits.binary_search(b).map_or(0, |i| i as u8)).collect();
        let mut table: Vec<T> = bits.iter().map(|&b| T::from_bits64(b)).collect();
        table.resize(256, T::default());
        let (table, map) = (gpu.upload(&table)?, gpu.upload(&map)?);
        if bits.len() <= 1 {
            // One value (or none): no index bytes; the kernel reads table[0].
            return Ok(Self { idx: gpu.alloc::<u8>(0)?, table });
        }
        let mut idx = gpu.alloc::<u8>(nnz as usize)?; // written whole by dict_index
        launch::dict_index(gpu, k, vals, &DeviceView::of(&slots), &DeviceView::of(&map), &mut DeviceViewMut::of(&mut idx))?;
        Ok(Self { idx, table })
    }
}

/// The serial twin of the value index: the distinct values of `vals` sorted by their bits, and
/// each value's index among them; `None` past [`VI_MAX`] distinct values.
///
/// ```
/// let (table, idx) = gpu_spmv::vi::value_index(&[2.0f64, -1.0, 2.0, 0.5]).unwrap();
/// assert_eq!(idx.iter().map(|&i| table[i as usize]).collect::<Vec<_>>(), [2.0, -1.0, 2.0, 0.5]);
/// assert_eq!(table.len(), 3);
/// assert!(gpu_spmv::vi::value_index(&(0..300).map(f64::from).collect::<Vec<_>>()).is_none());
/// ```
pub fn value_index<T: SpmvValue>(vals: &[T]) -> Option<(Vec<T>, Vec<u8>)> {
    let mut bits: Vec<u64> = vals.iter().map(|v| v.to_bits64()).collect();
    bits.sort_unstable();
    bits.dedup();
    if bits.len() as u64 > VI_MAX {
        return None;
    }
    let idx = vals.iter().map(|v| bits.binary_search(&v.to_bits64()).map_or(0, |i| i as u8)).collect();
    Some((bits.into_iter().map(T::from_bits64).collect(), idx))
}
