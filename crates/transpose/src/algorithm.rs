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
    /// ScanTrans one digit (up to 9 bits) of the column index at a time (LSD), onesweep: one read
    /// counts every pass's digits; per pass, tiles of `gpu_radix::NV` nonzeros rank their columns in shared
    /// memory (`intra`) and find the counts of the tiles before them by decoupled look-back
    /// (`inter`); rows and values travel with the keys, so no gather follows.
    RadixTrans,
    /// CSR → COO (ptr2idx) → swap → stable sort by column → CSR (index-to-pointers by histogram
    /// and scan), gather.
    CooChain,
    /// For square matrices whose pattern is symmetric (rows sorted): the pointer and row indices
    /// are the matrix's own, and each value moves to its mirror's place, found by a binary
    /// search of the mirror's row: one pass. A probe first looks for mirrors of a sample of
    /// nonzeros ([`crate::Transposer::probe_symmetric`]) on a second stream, beside ptr2idx; a
    /// pattern it refuses goes to RadixTrans at once, keeping the rows. The pass then checks
    /// every nonzero, and any other matrix goes to RadixTrans after it. The host reads both
    /// verdicts back, so this one **synchronizes the stream**. `Auto` takes it only on a plan
    /// told that the pattern is symmetric ([`PatternHint::Symmetric`]).
    SymTrans,
    /// The fastest that never synchronizes ([`Algorithm::resolve`]): RadixTrans; on a square
    /// matrix whose values SymTrans moves (0, 4 or 8 bytes) and whose sort takes an odd number of
    /// passes (at most 2^8 or 2^16 + 1 to 2^24 columns), SymTrans first and RadixTrans after it
    /// only when SymTrans's verdict, read on the device, says the pattern is not symmetric (one
    /// launch sequence either way, no synchronization); SymTrans's synchronizing path on a plan
    /// given [`PatternHint::Symmetric`].
    Auto,
}

impl Algorithm {
    /// Every algorithm but `Auto`, in table order (cuSPARSE, the peer, is
    /// [`crate::baselines::CuSparseTranspose`]).
    pub const ALL: [Algorithm; 6] =
        [Algorithm::Serial, Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::RadixTrans, Algorithm::SymTrans, Algorithm::CooChain];

    /// The short name (`serial`, `scan`, `merge`, `radix`, `sym`, `coo`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Serial => "serial",
            Algorithm::ScanTrans => "scan",
            Algorithm::MergeTrans => "merge",
            Algorithm::RadixTrans => "radix",
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
    /// stay. `Auto` is RadixTrans, which never reads back to the host, so an `Auto` call can be
    /// captured into a CUDA graph: RadixTrans was the fastest of the algorithms that do not
    /// synchronize on every suite matrix (1.24–2.52× cuSPARSE on an H100) and on 55 of the 66 small matrices, where ScanTrans took a
    /// median 1.08× RadixTrans's time (0.94× at its best). SymTrans, about 2× RadixTrans on
    /// symmetric patterns (the 3D Laplacian 100³: 0.18 against 0.38 ms) but synchronizing, is
    /// taken by name or through [`Algorithm::resolve_hinted`].
    pub fn resolve(self, m: u64, n: u64, nnz: u64) -> Algorithm {
        self.resolve_for(m, n, nnz, 4)
    }

    /// [`Algorithm::resolve`] for values of `value_bytes` bytes (0 for a pattern); the rule does
    /// not depend on the width today.
    pub fn resolve_for(self, m: u64, n: u64, nnz: u64, value_bytes: usize) -> Algorithm {
        self.resolve_hinted(m, n, nnz, value_bytes, PatternHint::Unknown)
    }

    /// [`Algorithm::resolve_for`] knowing what the caller knows of the pattern: with
    /// [`PatternHint::Symmetric`], `Auto` takes SymTrans for square matrices with values of 0, 4
    /// or 8 bytes (which it moves itself; other widths would move by positions and a gather,
    /// where RadixTrans carries 1 and 2 bytes with the keys). SymTrans checks the pattern itself
    /// and hands any other matrix to RadixTrans, so a wrong hint costs time, never correctness.
    pub fn resolve_hinted(self, m: u64, n: u64, nnz: u64, value_bytes: usize, hint: PatternHint) -> Algorithm {
        let _ = nnz;
        match self {
            Algorithm::Auto if hint == PatternHint::Symmetric && m == n && matches!(value_bytes, 0 | 4 | 8) => Algorithm::SymTrans,
            Algorithm::Auto => Algorithm::RadixTrans,
            a => a,
        }
    }
}

/// What a caller knows of a matrix's pattern ([`crate::Transposer::set_pattern_hint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PatternHint {
    /// Nothing: `Auto` never synchronizes.
    #[default]
    Unknown,
    /// The pattern is symmetric (a matrix stored as one triangle, a mesh's or an undirected
    /// graph's): `Auto` takes SymTrans for square matrices, which **synchronizes the stream**
    /// (it reads its pattern checks back).
    Symmetric,
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
            "radix" | "radixtrans" => Algorithm::RadixTrans,
            "sym" | "symtrans" => Algorithm::SymTrans,
            "coo" | "coochain" => Algorithm::CooChain,
            "auto" => Algorithm::Auto,
            _ => return Err(Error::UnknownAlgorithm(s.to_string())),
        })
    }
}
