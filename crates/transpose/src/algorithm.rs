//! The algorithms, their names, and `Auto`'s rule.
use std::str::FromStr;

use crate::{Error, Result};

/// A transposition algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// The CPU twin ([`crate::serial::transpose`]) on downloaded data; the specification.
    Serial,
    /// ptr2idx, partitioned column histograms (`inter`, `(P + 1) × n`) with per-nonzero ranks
    /// (`intra`), vertical scan, exclusive scan of the totals, scatter.
    ScanTrans,
    /// ptr2idx, block sorts of `(column, position)` pairs, merge passes, pointers from the sorted
    /// columns by boundary detection, gather.
    MergeTrans,
    /// NVIDIA cuSPARSE `cusparseCsr2cscEx2` (default algorithm).
    CuSparse,
    /// ScanTrans one digit (up to 9 bits) of the column index at a time (LSD), onesweep: one read
    /// counts every pass's digits; per pass, tiles of 4096 nonzeros rank their columns in shared
    /// memory (`intra`) and find the counts of the tiles before them by decoupled look-back
    /// (`inter`); rows and values travel with the keys, so no gather follows.
    RadixTrans,
    /// The column pointer by index-to-pointers, an MSD partition of the nonzeros by the high
    /// bits of their column (one stable radix pass into buckets of consecutive columns), then one
    /// block per bucket ranks each nonzero in its column and writes its final slot
    /// ([`crate::bucket_plan`] splits the bits). Opt-in, not chosen by `Auto`: on an H100 it is
    /// slower than RadixTrans on every suite matrix but the one with 64 columns, and one block
    /// per bucket makes matrices with concentrated columns (R-MAT, a dense column) about 10×
    /// slower (BENCHMARKS.md); its workspace is the smallest of ours (13 B per nonzero with f32).
    BucketTrans,
    /// CSR → COO (ptr2idx) → swap → stable sort by column → CSR (index-to-pointers by histogram
    /// and scan), gather.
    CooChain,
    /// For square matrices whose pattern is symmetric (rows sorted): the pointer and row indices
    /// are the matrix's own, and each value moves to its mirror's place, found by a binary
    /// search of the mirror's row: one pass. The pass checks the pattern and the host reads the
    /// verdict back (so this one **synchronizes the stream**); any other matrix is then
    /// transposed by RadixTrans, after the failed attempt. Opt-in, not chosen by `Auto`.
    SymTrans,
    /// The fastest for the matrix's size, as measured ([`Algorithm::resolve`]).
    Auto,
}

impl Algorithm {
    /// Every algorithm but `Auto`, in table order.
    pub const ALL: [Algorithm; 8] = [Algorithm::Serial, Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::RadixTrans, Algorithm::BucketTrans, Algorithm::SymTrans, Algorithm::CuSparse, Algorithm::CooChain];

    /// The short name (`serial`, `scan`, `merge`, `radix`, `bucket`, `sym`, `cusparse`, `coo`,
    /// `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Serial => "serial",
            Algorithm::ScanTrans => "scan",
            Algorithm::MergeTrans => "merge",
            Algorithm::CuSparse => "cusparse",
            Algorithm::RadixTrans => "radix",
            Algorithm::BucketTrans => "bucket",
            Algorithm::SymTrans => "sym",
            Algorithm::CooChain => "coo",
            Algorithm::Auto => "auto",
        }
    }

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        self != Algorithm::Serial
    }

    /// `Auto` becomes a concrete algorithm for an `m × n` matrix with `nnz` nonzeros; the others
    /// stay. The rule follows BENCHMARKS.md (H100, 2026-11-24): RadixTrans everywhere. It was
    /// the fastest of ours on every suite matrix (1.24–2.52× cuSPARSE; BucketTrans ties it on
    /// the 64-column matrix only) and on 55 of the 66 small matrices, where ScanTrans took a
    /// median 1.08× RadixTrans's time (0.94× at its best). Until then ScanTrans had the matrices
    /// of up to 100k nonzeros.
    pub fn resolve(self, _m: u64, _n: u64, _nnz: u64) -> Algorithm {
        match self {
            Algorithm::Auto => Algorithm::RadixTrans,
            a => a,
        }
    }
}


impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "serial" => Algorithm::Serial,
            "scan" | "scantrans" => Algorithm::ScanTrans,
            "merge" | "mergetrans" => Algorithm::MergeTrans,
            "cusparse" => Algorithm::CuSparse,
            "radix" | "radixtrans" => Algorithm::RadixTrans,
            "bucket" | "buckettrans" => Algorithm::BucketTrans,
            "sym" | "symtrans" => Algorithm::SymTrans,
            "coo" | "coochain" => Algorithm::CooChain,
            "auto" => Algorithm::Auto,
            _ => return Err(Error::UnknownAlgorithm(s.to_string())),
        })
    }
}
