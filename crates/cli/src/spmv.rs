//! `sptrans spmv`: y = A·x in a chosen format on the GPU (or GPUs, `--gpus`), or by the threaded CPU fallback without one;
//! vectors in Matrix Market array format; `--check` against the twin within its error bound.
use std::io::Write;
use std::path::Path;

use sptrans::matrix::device::DeviceCsr;
use sptrans::matrix::{mm, Csr};
use sptrans::spmv::{serial, Format, Spmv, SpmvValue};

use crate::cli::{Precision, SpmvArgs};
use crate::files::{host_limit, write_with};
use crate::{Error, Result};

/// Runs the command.
///
/// # Errors
/// Unreadable or malformed files, an `x` that is not an array of `cols` entries, GPU errors,
/// `--check` differences.
pub fn spmv(args: &SpmvArgs) -> Result<()> {
    match args.precision {
        Precision::F64 => run::<f64>(args),
        Precision::F32 => run::<f32>(args),
    }
}

/// Reads `path` as a dense vector of `n` entries from a Matrix Market `array` file (n × 1 or
/// 1 × n).
pub(crate) fn read_vector<T: SpmvValue>(path: &Path, n: u64) -> Result<Vec<T>> {
    let err = |source| Error::Matrix { path: path.to_path_buf(), source };
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
    } else {
        std::fs::File::open(path).and_then(|mut f| std::io::Read::read_to_end(&mut f, &mut bytes))
    };
    read.map_err(|e| err(sptrans::matrix::Error::Io(e)))?;
    let check_len = |x: Vec<T>| -> Result<Vec<T>> {
        if x.len() as u64 != n {
            return Err(Error::Usage(format!("{}: x has {} entries; the matrix has {n} columns", path.display(), x.len())));
        }
        Ok(x)
    };
    // A NumPy .npy vector, or plain text (numbers separated by white space), or Matrix Market.
    if sptrans::matrix::npz::is_npy(&bytes) {
        return check_len(sptrans::matrix::npz::read_npy_vector(bytes).map_err(err)?);
    }
    if !bytes.starts_with(b"%%MatrixMarket") && !bytes.starts_with(&[0x1f, 0x8b]) {
        let text = String::from_utf8_lossy(&bytes);
        let x = text
            .split_whitespace()
            .enumerate()
            .map(|(i, t)| {
                t.parse::<f64>().map(T::from_f64).map_err(|_| Error::Usage(format!("{}: entry {} ({t:?}) is not a number", path.display(), i + 1)))
            })
            .collect::<Result<Vec<T>>>()?;
        return check_len(x);
    }
    let input = mm::Input::from_reader(Box::new(std::io::Cursor::new(bytes)), None).map_err(err)?;
    if input.header().format != mm::Format::Array {
        return Err(Error::Usage(format!("{}: a vector must be a Matrix Market `array` file, not `coordinate`", path.display())));
    }
    let v: Csr<u32, T> = input.read_csr(None).map_err(err)?;
    let (rows, cols) = (v.rows(), v.cols());
    if !((rows == n && cols == 1) || (rows == 1 && cols == n)) {
        return Err(Error::Usage(format!("{}: x is {rows} × {cols}; the matrix has {n} columns, so x must be {n} × 1", path.display())));
    }
    let mut x = vec![T::default(); n as usize];
    for r in 0..rows as usize {
        for p in v.ptr()[r] as usize..v.ptr()[r + 1] as usize {
            x[if cols == 1 { r } else { v.idx()[p] as usize }] = v.vals()[p];
        }
    }
    Ok(x)
}

/// Writes `y` as a Matrix Market `array real general` file of `y.len()` × 1 (shortest
/// round-trip decimal of each value: read back, the same bits).
pub(crate) fn write_vector<T: SpmvValue + std::fmt::Display>(path: &Path, y: &[T]) -> Result<()> {
    if path.to_string_lossy().ends_with(".npy") {
        return write_with(path, |w: &mut dyn Write| sptrans::matrix::npz::write_npy_vector(w, y).map_err(|e| e.to_string()));
    }
    write_with(path, |w: &mut dyn Write| {
        let e = |e: std::io::Error| e.to_string();
        writeln!(w, "%%MatrixMarket matrix array real general").map_err(e)?;
        writeln!(w, "% y = A x, written by sptrans spmv").map_err(e)?;
        writeln!(w, "{} 1", y.len()).map_err(e)?;
        for v in y {
            writeln!(w, "{v}").map_err(e)?;
        }
        Ok(())
    })
}

/// `y = A x` over GPUs `0 .. --gpus` ([`sptrans::spmv::dist::DistSpmv`]): row blocks balanced by
/// nonzeros, `x` exchanged as the plan chooses; `y` gathered back.
fn distributed<T: SpmvValue>(args: &SpmvArgs, a: &Csr<u32, T>, x: &[T]) -> Result<Vec<T>> {
    let comms = sptrans::dist::Comms::local(args.gpus as usize)?;
    let gpus = comms.gpus();
    let plan_start = std::time::Instant::now();
    let d = sptrans::matrix::dist::DistCsr::scatter(gpus, a)?;
    let mut plan = sptrans::spmv::dist::DistSpmv::new(&comms, &d, args.format)?;
    let dx = plan.scatter_x(&comms, x)?;
    let mut dy = plan.alloc_y(&comms)?;
    comms.synchronize()?;
    let convert = plan_start.elapsed();
    let start = std::time::Instant::now();
    plan.apply(&comms, T::from_f64(1.0), &dx, T::default(), &mut dy)?;
    comms.synchronize()?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let formats: Vec<String> = plan.formats().iter().map(|f| f.to_string()).collect();
    say!(
        "distributed over {} GPUs (formats {}; x by {:?}, at most {} entries received a rank): upload and conversion {:.2} ms, product {ms:.3} ms (wall, first call)",
        gpus.len(),
        formats.join(" "),
        plan.gather(),
        plan.received().iter().max().unwrap_or(&0),
        convert.as_secs_f64() * 1e3
    );
    Ok(plan.gather_y(&comms, &dy)?)
}

fn run<T: SpmvValue + std::fmt::Display>(args: &SpmvArgs) -> Result<()> {
    let path = &args.input;
    let a: Csr<u32, T> =
        mm::Input::open(path).and_then(|i| i.read_csr(host_limit(args.max_memory))).map_err(|source| Error::Matrix { path: path.clone(), source })?;
    let x: Vec<T> = match &args.x {
        Some(p) => read_vector(p, a.cols())?,
        None => vec![T::from_f64(1.0); a.cols() as usize],
    };
    say!("A: {} × {}, {} nonzeros ({})", a.rows(), a.cols(), a.nnz(), T::NAME);
    let y = if args.gpus > 1 {
        distributed(args, &a, &x)?
    } else {
        match crate::open_gpu() {
            Ok(gpu) => {
                let plan_start = std::time::Instant::now();
                let da = DeviceCsr::upload(&gpu, &a)?;
                // One product: `auto` weighs the conversion against it (no sorting conversion).
                let mut plan = Spmv::with_products(&gpu, da.view(), args.format, 1)?;
                gpu.synchronize()?;
                let convert = plan_start.elapsed();
                let dx = gpu.upload(&x)?;
                let mut dy = gpu.alloc_zeros::<T>(a.rows() as usize)?;
                let timer = sptrans::runtime::GpuTimer::new(&gpu)?;
                timer.start()?;
                plan.apply(T::from_f64(1.0), &dx, T::default(), &mut dy)?;
                let ms = timer.stop_ms()?;
                let chosen = if args.format == Format::Auto { format!("auto → {}", plan.format()) } else { plan.format().to_string() };
                say!(
                    "format {chosen}: conversion {:.2} ms, product {ms:.3} ms on {}, footprint {:.1} MB",
                    convert.as_secs_f64() * 1e3,
                    gpu.props().name,
                    plan.footprint_bytes() as f64 / 1e6
                );
                gpu.download(&dy)?
            }
            Err(why) if args.format != Format::Auto => {
                return Err(Error::Usage(format!("--format {} needs a GPU ({why}); --format auto runs the CPU fallback without one", args.format)));
            }
            Err(why) => {
                let start = std::time::Instant::now();
                let mut y = vec![T::default(); a.rows() as usize];
                sptrans::spmv::cpu::spmv(&a, T::from_f64(1.0), &x, T::default(), &mut y)?;
                say!(
                    "no GPU ({why}): y by the CPU fallback on {} threads in {:.3} ms",
                    rayon::current_num_threads(),
                    start.elapsed().as_secs_f64() * 1e3
                );
                y
            }
        }
    };
    if args.check {
        let mut want = vec![T::default(); a.rows() as usize];
        serial::spmv(&a, T::from_f64(1.0), &x, T::default(), &mut want);
        let bound = serial::error_bound(&a, T::from_f64(1.0), &x, T::default(), &want);
        serial::within(&y, &want, &bound).map_err(|e| Error::CheckFailed(format!("y differs from the serial twin beyond the bound: {e}")))?;
        say!("check: y agrees with the serial twin within 2·γ_(k+2)·|A|·|x| on all {} rows", y.len());
    }
    write_vector(&args.output, &y)?;
    if args.output.as_os_str() != "-" {
        say!("wrote {}", args.output.display());
    }
    Ok(())
}
