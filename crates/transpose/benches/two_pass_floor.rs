//! `cargo bench -p gpu-transpose --bench two_pass_floor`: the floor of a two-pass transpose
//! (issue 40) measured from the passes' memory traffic before building it, on the default suite
//! (f32 values), against cuSPARSE `csr2cscEx2` and RadixTrans timed in the same run.
//!
//! A two-pass transpose would (1) expand the row of every nonzero, (2) partition the (column,
//! row, value) triples by the high bits of the column into buckets in one stable pass, and (3)
//! sort each bucket by the low bits in shared memory or L2 and write it in column order (plus
//! the column pointer, a histogram and a scan of `n` entries, left out here). The passes are
//! timed with the primitives that move the same bytes:
//!
//! - expand: `gpu-ptr2idx` (reads the row pointer, writes 4 B a nonzero);
//! - partition: one stable `gpu-radix` pass by `B` high column bits (`RadixSort::sort_with`, bits `shift..shift + B`,
//!   keys, rows and values in and out: 24 B a nonzero), for B = 7, 8 and 9 (`gpu_radix::MAX_BITS`:
//!   512 buckets at most, about 20 000 nonzeros each at 10M: sized for L2, not one block's
//!   shared memory);
//! - bucket: `gpu-segsort`'s tile sort of (column, row) pairs in shared memory, 2048 a tile
//!   (16 B a nonzero), plus a copy of the values (8 B a nonzero): the traffic of an in-cache
//!   bucket sort; its comparisons are more than a bucket sort's radix work would be.
//!
//! The prediction is their sum (the best B); the ratio cuSPARSE ÷ prediction is what a two-pass
//! design could reach at best with these passes' efficiency. Median of `SPTRANS_FLOOR_REPS`
//! (default 20) GPU-event timed runs.
use gpu_radix::{DoubleBuffer, RadixSort, Sort};
use gpu_runtime::scratch::ScratchBuf;
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu, GpuTimer};
use gpu_segsort::{Segsort, TileSize};
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::device::DeviceCsr;
use sptrans_report::measure::{paper_suite, time_cusparse, time_gpu};

/// Median milliseconds of `reps` timed calls after one warm-up.
fn median(timer: &GpuTimer, reps: usize, mut f: impl FnMut()) -> f64 {
    timer
        .median_ms(1, reps, || -> gpu_runtime::Result<()> {
            f();
            Ok(())
        })
        .expect("timer")
}

fn main() {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("two_pass_floor bench skipped: {e}"),
    };
    let reps: usize = std::env::var("SPTRANS_FLOOR_REPS").ok().and_then(|s| s.parse().ok()).unwrap_or(20).max(1);
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20).unwrap_or(f64::NAN);
    println!("device: {}; device-to-device copy {copy:.0} GB/s; f32 values; median of {reps}", gpu.props().name);
    println!(
        "\n| matrix | nnz | expand ms | partition ms (B = 7 / 8 / 9) | bucket ms (tiles + values) | predicted ms | % of copy at 16 B/nnz | cuSPARSE ms | RadixTrans ms | cuSPARSE ÷ predicted | RadixTrans ÷ predicted |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut t = Transposer::new(&gpu).expect("transposer");
    let mut peer = gpu_transpose::baselines::CuSparseTranspose::new(&gpu).ok();
    let mut radix = RadixSort::new(&gpu).expect("radix");
    // A partition is one pass by a digit of up to 9 bits.
    radix.set_max_digit_bits(Some(gpu_radix::MAX_BITS));
    let mut segsort = Segsort::new(&gpu).expect("segsort");
    let mut ptr2idx = gpu_ptr2idx::Ptr2Idx::new(&gpu).expect("ptr2idx");
    let mut own = ScratchBuf::default();
    for sm in paper_suite() {
        let a = (sm.build)().expect("generate");
        let (n, nnz) = (a.cols(), a.nnz() as usize);
        if nnz == 0 {
            continue;
        }
        let da = DeviceCsr::upload(&gpu, &a).expect("upload");
        let vals = da.vals().expect("values");
        let mut rows = gpu.alloc::<u32>(nnz).expect("rows");
        let t_expand = median(&timer, reps, || ptr2idx.run(da.ptr(), &mut rows).expect("expand"));
        let (mut keys_out, mut rows_out, mut vals_out) =
            (gpu.alloc::<u32>(nnz).expect("keys"), gpu.alloc::<u32>(nnz).expect("rows"), gpu.alloc::<f32>(nnz).expect("vals"));
        let col_bits = 64 - (n.max(2) - 1).leading_zeros();
        let mut parts = Vec::new();
        for bits in [7u32, 8, gpu_radix::MAX_BITS] {
            let bits = bits.min(col_bits);
            let shift = col_bits - bits;
            let bytes = radix.workspace_bytes(nnz as u64, shift..shift + bits);
            let ms = median(&timer, reps, || {
                let mut scratch = own.scratch(&gpu, bytes).expect("scratch");
                let (mut kb, mut rb, mut vb) = (
                    DoubleBuffer::single(DeviceViewMut::of(&mut keys_out)),
                    DoubleBuffer::single(DeviceViewMut::of(&mut rows_out)),
                    DoubleBuffer::single(DeviceViewMut::of(&mut vals_out)),
                );
                let job = Sort::keys_from(DeviceView::of(da.idx()), &mut kb)
                    .first_from(DeviceView::of(&rows), &mut rb)
                    .second_from(DeviceView::of(vals), &mut vb)
                    .bits(shift..shift + bits);
                radix.sort_with(job, &mut scratch).expect("partition");
            });
            parts.push(ms);
        }
        let best_part = parts.iter().copied().fold(f64::INFINITY, f64::min);
        // The bucket pass's traffic: the partitioned (column, row) pairs sorted in shared-memory
        // tiles in place (their order changes each run; the traffic does not), and the values
        // moved once.
        let t_tiles = median(&timer, reps, || segsort.sort_tiles(TileSize::T2048, &mut keys_out, &mut rows_out).expect("tiles"));
        let mut vals_copy = gpu.alloc::<f32>(nnz).expect("vals");
        let t_vals = median(&timer, reps, || gpu.stream().memcpy_dtod(&vals_out, &mut vals_copy).expect("copy"));
        let t_bucket = t_tiles + t_vals;
        let predicted = t_expand + best_part + t_bucket;
        let pct = 100.0 * (16.0 * nnz as f64) / (predicted * 1e6) / copy;
        let cus = peer.as_mut().and_then(|cs| {
            let out = t.alloc_output(&da).ok()?;
            time_cusparse(cs, &da, out, 2, reps).ok().map(|(st, _)| st.median_ms)
        });
        let out = t.alloc_output(&da).expect("output");
        let (rt, _) = time_gpu(&mut t, Algorithm::RadixTrans, &da, out, 2, reps).expect("radix trans");
        let fmt = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.3}"));
        println!(
            "| {} | {nnz} | {t_expand:.3} | {:.3} / {:.3} / {:.3} | {t_tiles:.3} + {t_vals:.3} | {predicted:.3} | {pct:.0}% | {} | {:.3} | {} | {:.2}× |",
            sm.name,
            parts[0],
            parts[1],
            parts[2],
            fmt(cus),
            rt.median_ms,
            cus.map_or("—".to_string(), |c| format!("{:.2}×", c / predicted)),
            rt.median_ms / predicted
        );
    }
}
