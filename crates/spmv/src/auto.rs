//! [`Format::Auto`]: row-length statistics measured on the GPU and the rule that picks a format
//! from them (fitted to the H100 measurements in BENCHMARKS.md).
use gpu_runtime::Gpu;
use sptrans_matrix::DeviceCsrView;

use crate::launch::Kernels;
use crate::{convert, Format, Result, SpmvValue};

/// Row-length statistics of a matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowStats {
    /// Rows.
    pub rows: u64,
    /// Nonzeros.
    pub nnz: u64,
    /// Mean row length.
    pub mean: f64,
    /// Longest row.
    pub max: u64,
    /// Coefficient of variation of the row lengths (standard deviation / mean; 0 when empty).
    pub cv: f64,
}

impl RowStats {
    /// From the row lengths, on the host.
    ///
    /// ```
    /// let s = gpu_spmv::RowStats::from_lengths([2u64, 2, 2, 2]);
    /// assert_eq!((s.rows, s.nnz, s.max, s.cv), (4, 8, 2, 0.0));
    /// ```
    pub fn from_lengths(lengths: impl IntoIterator<Item = u64>) -> Self {
        Self::from_histogram(lengths.into_iter().map(|l| (l, 1)))
    }

    /// From `(length, rows of that length)` pairs.
    fn from_histogram(h: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let (mut rows, mut nnz, mut sq, mut max) = (0u64, 0u64, 0f64, 0u64);
        for (l, c) in h {
            rows += c;
            nnz += l * c;
            sq += (l as f64) * (l as f64) * c as f64;
            if c > 0 {
                max = max.max(l);
            }
        }
        let mean = if rows == 0 { 0.0 } else { nnz as f64 / rows as f64 };
        let var = if rows == 0 { 0.0 } else { (sq / rows as f64 - mean * mean).max(0.0) };
        let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
        Self { rows, nnz, mean, max, cv }
    }

    /// Measured on the GPU: row lengths, their maximum and histogram (`gpu-histogram`), the
    /// histogram summed on the host.
    pub(crate) fn measure<T: SpmvValue>(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<Self> {
        let h = convert::length_histogram(gpu, k, a)?;
        Ok(Self::from_histogram(h.iter().enumerate().map(|(l, &c)| (l as u64, c as u64))))
    }
}

/// Products a plan is expected to serve when the caller does not say ([`crate::Spmv::new`];
/// [`crate::Spmv::with_products`] says): an iterative solver's or an SVD's worth, past every
/// format's [`Format::break_even_products`], so that [`Format::Auto`] takes the fastest product.
pub const DEFAULT_PRODUCTS: u64 = 1000;

/// Products from which [`Format::Auto`] times its [`Format::candidates`] instead of trusting the
/// rule alone: the trial costs the rivals' conversions (a few ms for JDS or SELL-C-σ) and
/// [`TRIAL_REPS`] + 1 products each, about 40–80 products' time on the realistic suite (H100,
/// RESULTS.md), a few percent of this many products' time and less than a wrong pick costs
/// (cuSPARSE ran 1.15× COO on a community graph and documents × terms).
pub const TRIAL_MIN_PRODUCTS: u64 = 200;

/// Timed products per candidate in [`Format::Auto`]'s trial (after one warm-up; the median kept).
pub const TRIAL_REPS: usize = 5;

/// How much faster than cuSPARSE's CSR (a fraction of its trial time) the fastest of this
/// library's candidates must be for [`Format::Auto`] to keep it: within the margin, cuSPARSE.
/// Timed one after another, the same cuSPARSE plan measured 2–3% apart (H100, realistic suite,
/// `benches/experiments/2026-11-27-sell-vi.md`), so a closer win is noise, and keeping it gave
/// a circuit 0.97× cuSPARSE in one run of two.
pub const TRIAL_MARGIN: f64 = 0.03;

impl Format {
    /// Products past which this format's conversion has paid for itself against the format
    /// [`Format::Auto`] takes instead when fewer products are expected (CSR-adaptive for JDS's
    /// even rows, COO for SCOO's long ones), from the H100 f64 runs of RESULTS.md: each
    /// matrix's `(conversion − the other's conversion) / (the other's product − this product)`,
    /// rounded up past the typical matrix:
    /// - JDS: 78 on the 3D Laplacian 100³ (1.09 − 0.16 ms over 0.0502 − 0.0383 ms a product),
    ///   81 and 70 on the 27-point stencils in natural and RCM numbering, 38 on the 7-point
    ///   stencil of 150³, 34 on the LP staircase; 864 in random numbering, where JDS is hardly
    ///   faster than CSR-adaptive (0.2505 against 0.2541 ms): 80.
    /// - SCOO: 100 and 128 on the uniform 100k² matrix in two runs (4–5 ms of conversion for
    ///   0.036 ms a product less than COO): 130.
    ///
    /// Formats that read the CSR as it is (and COO, CSR-adaptive, merge-path, whose conversions
    /// cost a few products at most) answer 0. `benches/results/2026-11-26-h100-s11-api-spmv/`
    /// and `…-s13-realistic/` hold the runs.
    pub fn break_even_products(self) -> u64 {
        match self {
            Format::Jds => 80,
            Format::Scoo => 130,
            _ => 0,
        }
    }

    /// [`Format::choose`] for a plan expected to serve `products` products: its pick when
    /// `products` reaches the pick's [`Format::break_even_products`], else the format that
    /// needs no sorting conversion (CSR-adaptive instead of JDS, COO instead of SCOO).
    ///
    /// ```
    /// use gpu_spmv::{Format, RowStats};
    /// let laplacian = RowStats::from_lengths((0..1000).map(|i| 5 + i % 3));
    /// assert_eq!(Format::choose_for(&laplacian, 1000), Format::Jds);
    /// assert_eq!(Format::choose_for(&laplacian, 10), Format::CsrAdaptive);
    /// assert_eq!(Format::choose_for(&RowStats::from_lengths([100u64; 64]), 10), Format::Coo);
    /// ```
    pub fn choose_for(s: &RowStats, products: u64) -> Format {
        let pick = Self::choose(s);
        if products >= pick.break_even_products() {
            return pick;
        }
        match pick {
            Format::Jds => Format::CsrAdaptive,
            Format::Scoo => Format::Coo,
            other => other,
        }
    }

    /// The formats [`Format::Auto`] converts and times for a plan expected to serve `products`
    /// products, the rule's pick ([`Format::choose_for`]) first; [`crate::Spmv`] keeps the
    /// fastest. Row statistics cannot tell a matrix whose gathers of `x` scatter (R-MAT: COO
    /// 1.26–1.48× cuSPARSE) from one whose gathers hit the cache (a graph with community
    /// locality, documents × terms, a circuit: COO 0.87–0.97×, CSR-adaptive 0.84–0.98×), nor the
    /// meshes where SELL-C-σ wins (1.12–1.16× against JDS's 1.03–1.12×) from the stencils and
    /// KKT matrices where JDS does (1.16–1.31× against 1.12–1.18×; H100, f64, RESULTS.md); a
    /// few timed products can. So from [`TRIAL_MIN_PRODUCTS`] products on:
    /// - JDS's even rows: JDS, SELL-C-σ, SELL-VI and cuSPARSE's CSR ([`Format::CuSparse`]);
    /// - COO's uneven rows: COO, CSR-adaptive and cuSPARSE;
    /// - CSR-adaptive's (one very long row) and SCOO's (long even rows): the pick and cuSPARSE.
    ///
    /// SELL-VI ([`Format::SellVi`]) is refused by its conversion, and left out of the trial, for
    /// a matrix of more than [`crate::vi::VI_MAX`] distinct values. cuSPARSE comes last: the
    /// trial keeps it unless another candidate beats it by [`TRIAL_MARGIN`].
    ///
    /// Fewer products, or no nonzeros: the pick alone. Below
    /// [`crate::baselines::CUSPARSE_SMALL_ROWS`] rows, no cuSPARSE: where a product takes a few
    /// microseconds there is nothing to win, and there cuSPARSE's products can go wrong under
    /// concurrent use.
    ///
    /// ```
    /// use gpu_spmv::{Format, RowStats};
    /// let laplacian = RowStats::from_lengths((0..2000).map(|i| 5 + i % 3));
    /// assert_eq!(Format::candidates(&laplacian, 1000), [Format::Jds, Format::Sell, Format::SellVi, Format::CuSparse]);
    /// assert_eq!(Format::candidates(&laplacian, 10), [Format::CsrAdaptive]);
    /// let small = RowStats::from_lengths((0..100).map(|i| 5 + i % 3));
    /// assert_eq!(Format::candidates(&small, 1000), [Format::Jds, Format::Sell, Format::SellVi]);
    /// ```
    pub fn candidates(s: &RowStats, products: u64) -> Vec<Format> {
        let pick = Self::choose_for(s, products);
        if products < TRIAL_MIN_PRODUCTS || s.nnz == 0 {
            return vec![pick];
        }
        let mut out = match pick {
            Format::Jds => vec![Format::Jds, Format::Sell, Format::SellVi, Format::CuSparse],
            Format::Coo => vec![Format::Coo, Format::CsrAdaptive, Format::CuSparse],
            Format::CsrAdaptive | Format::Scoo => vec![pick, Format::CuSparse],
            other => vec![other],
        };
        if s.rows < crate::baselines::CUSPARSE_SMALL_ROWS {
            out.retain(|&f| f != Format::CuSparse);
        }
        out
    }

    /// The format [`Format::Auto`] picks for a matrix with these statistics, fitted to the
    /// H100 f64 measurements in BENCHMARKS.md (`benches/results/2026-11-23-h100-spmv-formats.txt`,
    /// `benches/results/2026-11-24-h100-spmv-bench-coo-final.csv`):
    /// - no nonzeros: CSR-scalar (it only scales `y`);
    /// - uneven rows (longest row above 4 × the mean + 32, or a coefficient of variation above
    ///   0.5) with no row holding more than 1/32 of the nonzeros: COO, whose warps take equal
    ///   chunks of nonzeros and add one atomic per row and chunk (R-MAT 2^20, longest row 0.3%
    ///   of the nonzeros: 0.076 ms against CSR-adaptive's 0.091 and cuSPARSE's 0.097; R-MAT
    ///   2^22, 0.2%: 0.163 against 0.186 and 0.241);
    /// - uneven rows with one row of more than 1/32 of the nonzeros: CSR-adaptive, which cuts
    ///   that row into blocks (a dense row of 1M in 11M nonzeros, 9%: 0.112 ms against COO's
    ///   0.117 and merge-path's 0.144);
    /// - even rows of mean length ≥ 64: SCOO (uniform 100k², 100 per row: 0.070 ms, against
    ///   COO's 0.106 and cuSPARSE's 0.113: the column-sorted slices reuse `x`);
    /// - other even rows: JDS (3D Laplacian: 0.038 ms against CSR-scalar's 0.049 and
    ///   cuSPARSE's 0.056), deterministic. The realistic suite moved the SCOO bound from 16 to
    ///   64: on 27-point stencils of 100³ (26 per row; natural, random and RCM numbering, H100,
    ///   `benches/realistic-device-run.sh`) SCOO ran at 0.50–0.61× cuSPARSE and JDS at
    ///   1.07–1.17×.
    ///
    /// Never chosen: merge-path, which ran at 0.48–0.90× cuSPARSE CSR on six realistic matrices
    /// (issue 37's survey) and 1.2–1.9× the time of COO or CSR-adaptive on each matrix of the
    /// default suite (H100, f64, `benches/results/2026-11-26-h100-s11-api-spmv/`: R-MAT 2^22
    /// 0.307 ms against COO's 0.162, the Laplacian 0.060 against CSR-adaptive's 0.050; its
    /// balance costs the merge's extra reads and the atomic completion of split rows); CSR-scalar and CSR-vector,
    /// which JDS and COO beat on their own ground; ELL, which JDS matches without the padding
    /// risk. SELL-C-σ and cuSPARSE's CSR are not the rule's picks but rivals in
    /// [`Format::candidates`]' trial.
    ///
    /// ```
    /// use gpu_spmv::{Format, RowStats};
    /// let laplacian = RowStats::from_lengths((0..1000).map(|i| 5 + i % 3));
    /// assert_eq!(Format::choose(&laplacian), Format::Jds);
    /// // A 27-point stencil's rows (8 to 27): JDS; 100 a row: SCOO.
    /// let stencil = RowStats::from_lengths((0..1000).map(|i| if i % 50 == 0 { 12 } else { 27 }));
    /// assert_eq!(Format::choose(&stencil), Format::Jds);
    /// assert_eq!(Format::choose(&RowStats::from_lengths([100u64; 64])), Format::Scoo);
    /// // Rows of 3 with a hub row of 500 every 1000 (each 0.14% of the nonzeros).
    /// let power_law = RowStats::from_lengths((0..100_000u64).map(|i| if i % 1000 == 0 { 500 } else { 3 }));
    /// assert_eq!(Format::choose(&power_law), Format::Coo);
    /// // One row of 100,000 among 999 rows of 10.
    /// let dense_row = RowStats::from_lengths((0..1000u64).map(|i| if i == 7 { 100_000 } else { 10 }));
    /// assert_eq!(Format::choose(&dense_row), Format::CsrAdaptive);
    /// ```
    pub fn choose(s: &RowStats) -> Format {
        if s.nnz == 0 {
            Format::CsrScalar
        } else if s.max as f64 > 4.0 * s.mean + 32.0 || s.cv > 0.5 {
            if s.max.saturating_mul(32) > s.nnz {
                Format::CsrAdaptive
            } else {
                Format::Coo
            }
        } else if s.mean >= 64.0 {
            Format::Scoo
        } else {
            Format::Jds
        }
    }
}
