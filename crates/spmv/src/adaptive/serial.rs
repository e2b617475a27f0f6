//! CSR-adaptive's row blocks on the host (the matrix itself is the CSR).
use spmv_kernels::{adaptive_entries, ADAPTIVE_LONG};
use sptrans_matrix::Csr;

/// CSR-adaptive's row blocks: entry `i` starts at row `block_row[i]` and nonzero `block_nz[i]`;
/// block `i` spans entries `i .. i + 1` (the last entry closes the last block). See
/// [`spmv_kernels::adaptive_entries`] for the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowBlocks {
    block_row: Vec<u32>,
    block_nz: Vec<u32>,
}

impl RowBlocks {
    /// The twin conversion: the row blocks of `a`'s pointer array.
    pub fn from_csr<T: sptrans_matrix::Value>(a: &Csr<u32, T>) -> Self {
        let ptr = a.ptr();
        let (mut block_row, mut block_nz) = (vec![], vec![]);
        for r in 0..=a.rows() {
            for j in 0..adaptive_entries(r, a.rows(), |i| ptr[i as usize] as u64) {
                block_row.push(r as u32);
                block_nz.push(ptr[r as usize] + (j * ADAPTIVE_LONG) as u32);
            }
        }
        Self { block_row, block_nz }
    }

    /// Blocks (entries − 1).
    pub fn blocks(&self) -> u64 {
        self.block_row.len() as u64 - 1
    }
    /// First row of each entry.
    pub fn block_row(&self) -> &[u32] {
        &self.block_row
    }
    /// First nonzero of each entry.
    pub fn block_nz(&self) -> &[u32] {
        &self.block_nz
    }
    /// Bytes beyond the CSR: 8 per entry.
    pub fn footprint_bytes(&self) -> u64 {
        8 * self.block_row.len() as u64
    }
    pub(crate) fn from_parts(block_row: Vec<u32>, block_nz: Vec<u32>) -> Self {
        Self { block_row, block_nz }
    }
}
