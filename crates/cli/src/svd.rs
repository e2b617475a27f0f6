//! `sptrans svd`: the k largest singular values of a Matrix Market matrix with their residuals,
//! by block Lanczos on CSRC on the GPU (`gpu-svd`), or by the CPU fallback (`sptrans::svd::cpu`) without one (said so).
use std::io::Write;

use sptrans::matrix::device::DeviceCsr;
use sptrans::matrix::{mm, Csr};
use sptrans::svd::{Config, Event, Observer};

use crate::cli::SvdArgs;
use crate::files::{host_limit, write_with};
use crate::{Error, Result};

/// Runs the command.
///
/// # Errors
/// Unreadable or malformed files, bad settings (k > min(rows, cols), block, tolerance), GPU
/// errors, and [`Error::NotConverged`] at the restart cap (after printing what it has).
pub fn svd(args: &SvdArgs) -> Result<()> {
    // Settings that no matrix can make valid are refused before the file is read.
    if args.rank == 0 {
        return Err(Error::Usage("-k 0: ask for at least one singular value".into()));
    }
    if let Some(b) = args.block.filter(|&b| b == 0 || b > sptrans::csrc::MAX_K as usize) {
        return Err(Error::Usage(format!("--block {b}: 1 to {}", sptrans::csrc::MAX_K)));
    }
    if !(args.tol > 0.0 && args.tol.is_finite()) {
        return Err(Error::Usage(format!("--tol {}: a positive number", args.tol)));
    }
    let stdouts = [&args.output, &args.left, &args.right].iter().filter(|o| o.as_ref().is_some_and(|p| p.as_os_str() == "-")).count();
    if stdouts > 1 {
        return Err(Error::Usage("only one of -o, --left and --right can be `-` (standard output)".into()));
    }
    // Under a launcher (torchrun, mpirun, srun: one process per GPU) every rank reads the
    // matrix and keeps its rows; rank 0 alone reports.
    let launch = sptrans::dist::RankEnv::from_env()?.filter(|e| e.world > 1);
    if let Some(env) = launch {
        if args.gpus > 1 {
            return Err(Error::Usage(format!(
                "--gpus {} under a launcher of {} processes: each process drives one GPU (leave --gpus out)",
                args.gpus, env.world
            )));
        }
        if args.left.is_some() || args.right.is_some() || args.vectors.is_some() || args.center {
            return Err(Error::Usage("--left, --right, --vectors and --center need one process (use --gpus N instead of a launcher)".into()));
        }
    }
    let quiet = launch.is_some_and(|e| e.rank > 0);
    let path = &args.input;
    // Under a launcher each rank reads only its share of the file (`DistCsr::read_ranks`, below);
    // the whole matrix is then never read here, and this empty one is used by no later step (the
    // vectors, which would need its shape, were refused above).
    let a: Csr<u32, f64> = if launch.is_some() {
        Csr::try_new(0, 0, vec![0], vec![], vec![])?
    } else {
        let a: Csr<u32, f64> = mm::Input::open(path)
            .and_then(|i| i.read_csr(host_limit(args.max_memory)))
            .map_err(|source| Error::Matrix { path: path.clone(), source })?;
        say!("A: {} × {}, {} nonzeros", a.rows(), a.cols(), a.nnz());
        a
    };
    // Progress on standard error; the profile's operations kept for the table after the run.
    let ops = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = ops.clone();
    let progress = Observer::new(move |e: Event<'_>| match e {
        _ if quiet => {}
        Event::Cycle { restart, residual } => say!("  cycle {}: largest residual / σ₁ = {residual:.2e}", restart + 1),
        Event::HostQr { restart } => say!("  cycle {}: dependent columns (or a block over 4 wide); redone with host QR decisions", restart + 1),
        Event::Phase { what, seconds } => say!("  {what}: {:.2} ms", seconds * 1e3),
        Event::Operation { what, seconds, calls } => {
            if let Ok(mut ops) = seen.lock() {
                ops.push((what.to_string(), seconds, calls));
            }
        }
        _ => {}
    });
    let cfg = Config {
        rank: args.rank,
        block: args.block,
        tol: args.tol,
        max_restarts: args.max_iter.max(1) as usize - 1,
        krylov: args.krylov,
        profile: args.profile,
        vectors: args.left.is_some() || args.right.is_some() || args.vectors.is_some(),
        center: args.center,
        method: match args.method {
            crate::cli::SvdMethod::Lanczos => sptrans::svd::Method::Lanczos,
            crate::cli::SvdMethod::Randomized => sptrans::svd::Method::Randomized { oversample: args.oversample, power_iters: args.power_iters },
        },
        observer: progress,
        layout: match args.layout {
            crate::cli::SvdLayout::Auto => sptrans::svd::Layout::Auto,
            crate::cli::SvdLayout::Csrc => sptrans::svd::Layout::Csrc,
            crate::cli::SvdLayout::Pair => sptrans::svd::Layout::CsrPair,
        },
        ..Config::default()
    };
    if args.gpus > 1 && args.center {
        return Err(Error::Usage("--center is not available with --gpus above 1 yet".into()));
    }
    let t0 = std::time::Instant::now();
    let (s, on) = if let Some(env) = launch {
        let comms = sptrans::dist::Comms::from_env()?;
        let d = sptrans::matrix::dist::DistCsr::<f64>::read_ranks(path, comms.gpus(), comms.first_rank(), comms.world(), host_limit(args.max_memory))
            .map_err(|source| Error::Matrix { path: path.clone(), source })?;
        if !quiet {
            say!("A: {} × {}, read in {} shares by rows (rank 0: {} nonzeros)", d.rows(), d.cols(), env.world, d.nnz());
        }
        let s = sptrans::svd::dist::svd(&comms, &d, &cfg)?;
        if quiet {
            return Ok(());
        }
        (s, format!("on {} processes of one GPU each (NCCL; rank 0 on {})", env.world, comms.gpus()[0].props().name))
    } else if args.gpus > 1 {
        // Row blocks over GPUs 0 .. N (`sptrans::svd::dist`); the vectors come back to the host.
        let comms = sptrans::dist::Comms::local(args.gpus as usize)?;
        let d = sptrans::matrix::dist::DistCsr::scatter(comms.gpus(), &a)?;
        let s = sptrans::svd::dist::svd(&comms, &d, &cfg)?;
        (s, format!("on {} × {} (NCCL)", comms.len(), comms.gpus()[0].props().name))
    } else {
        match crate::open_gpu() {
            Ok(gpu) => {
                let da = DeviceCsr::upload(&gpu, &a)?;
                let s = if cfg.vectors {
                    // The vectors into device blocks (one small GEMM a chunk), then one copy each.
                    let (m, n, k) = (a.rows(), a.cols(), cfg.rank as u64);
                    let mut du = gpu.alloc_zeros::<f64>((m * k) as usize)?;
                    let mut dv = gpu.alloc_zeros::<f64>((n * k) as usize)?;
                    let mut s = {
                        use sptrans::runtime::{DenseViewMut, DeviceViewMut};
                        let mut uv = DenseViewMut::new(DeviceViewMut::of(&mut du), m, k, m.max(1))?;
                        let mut vv = DenseViewMut::new(DeviceViewMut::of(&mut dv), n, k, n.max(1))?;
                        sptrans::svd::svd_into(&gpu, &da, &cfg, &mut uv, &mut vv)?
                    };
                    (s.u, s.v) = (gpu.download(&du)?, gpu.download(&dv)?);
                    s
                } else {
                    sptrans::svd::svd(&gpu, &da, &cfg)?
                };
                (s, format!("on {}", gpu.props().name))
            }
            Err(why) => {
                let threads = rayon::current_num_threads();
                say!("no GPU ({why}): the CPU fallback computes the SVD on {threads} threads");
                (sptrans::svd::cpu::svd(&a, &cfg)?, format!("on the CPU ({threads} threads)"))
            }
        }
    };
    let ops = ops.lock().map(|o| o.clone()).unwrap_or_default();
    if !ops.is_empty() {
        let total: f64 = ops.iter().map(|o| o.1).sum();
        say!("svd profile ({total:.3} s in GPU operations):");
        for (op, secs, calls) in &ops {
            say!("  {op:>14}: {secs:.4} s in {calls} calls ({:.1} µs each)", 1e6 * secs / *calls as f64);
        }
    }
    say!(
        "{} cycles ({} restarts), {} block products of {} vectors, Krylov dimension {}, {:.3} s {on}",
        s.restarts + 1,
        s.restarts,
        s.products,
        s.block,
        s.block * s.steps,
        t0.elapsed().as_secs_f64()
    );
    // The table goes to standard output unless a file is written there.
    let table = |w: &mut dyn Write| -> std::io::Result<()> {
        writeln!(w, "{:>4}  {:>24}  {:>10}  {:>12}", "i", "sigma", "residual", "residual/σ₁")?;
        for (i, (sg, r)) in s.sigma.iter().zip(&s.residual).enumerate() {
            writeln!(w, "{:>4}  {sg:>24.16e}  {r:>10.2e}  {:>12.2e}", i + 1, if s.sigma[0] > 0.0 { r / s.sigma[0] } else { 0.0 })?;
        }
        Ok(())
    };
    let shown = if stdouts > 0 { table(&mut std::io::stderr().lock()) } else { table(&mut std::io::stdout().lock()) };
    if let Err(e) = shown {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Err(Error::BrokenPipe);
        }
        return Err(Error::Output { path: "-".into(), msg: e.to_string() });
    }
    let k = s.sigma.len();
    let (left, right) = vector_paths(args);
    for (file, v, rows, what) in [(&left, &s.u, a.rows(), "left singular vectors U"), (&right, &s.v, a.cols(), "right singular vectors V")] {
        if let Some(out) = file {
            if out.to_string_lossy().ends_with(".npy") {
                write_with(out, |w: &mut dyn Write| sptrans::matrix::npz::write_npy_matrix(w, rows as usize, k, v).map_err(|e| e.to_string()))?;
                say!("wrote {} ({what}, {rows} x {k})", out.display());
                continue;
            }
            write_with(out, |w: &mut dyn Write| {
                let e = |e: std::io::Error| e.to_string();
                writeln!(w, "%%MatrixMarket matrix array real general").map_err(e)?;
                writeln!(w, "% sptrans svd: {what} ({rows} x {k}, column-major){}", if args.center { " of the column-centered matrix" } else { "" })
                    .map_err(e)?;
                writeln!(w, "{rows} {k}").map_err(e)?;
                for x in v {
                    writeln!(w, "{x:.17e}").map_err(e)?;
                }
                Ok(())
            })?;
            if out.as_os_str() != "-" {
                say!("wrote {} ({what})", out.display());
            }
        }
    }
    if let Some(out) = &args.output {
        write_with(out, |w: &mut dyn Write| {
            for sg in &s.sigma {
                writeln!(w, "{sg:.17e}").map_err(|e| e.to_string())?;
            }
            Ok(())
        })?;
        if out.as_os_str() != "-" {
            say!("wrote {}", out.display());
        }
    }
    if !s.converged && args.method == crate::cli::SvdMethod::Randomized {
        let worst = s.residual.iter().cloned().fold(0.0, f64::max);
        say!(
            "randomized: the largest residual is {worst:.2e} = {:.2e} σ₁, above --tol {:e} (raise --power-iters or --oversample for more accuracy)",
            if s.sigma[0] > 0.0 { worst / s.sigma[0] } else { 0.0 },
            args.tol
        );
    } else if !s.converged {
        let worst = s.estimate.iter().cloned().fold(0.0, f64::max);
        return Err(Error::NotConverged(format!(
            "did not converge in {} cycles: the largest residual estimate is {worst:.2e} = {:.2e} σ₁, above --tol {:e} (raise --max-iter or --krylov, or loosen --tol)",
            s.restarts + 1,
            if s.sigma[0] > 0.0 { worst / s.sigma[0] } else { 0.0 },
            args.tol
        )));
    }
    Ok(())
}

/// Where U and V go: `--vectors PREFIX` (`PREFIX.U.npy`, `PREFIX.V.npy`), else `--left`/`--right`.
pub(crate) fn vector_paths(args: &SvdArgs) -> (Option<std::path::PathBuf>, Option<std::path::PathBuf>) {
    match &args.vectors {
        Some(p) => {
            let with = |suffix: &str| {
                let mut s = p.clone().into_os_string();
                s.push(suffix);
                Some(std::path::PathBuf::from(s))
            };
            (with(".U.npy"), with(".V.npy"))
        }
        None => (args.left.clone(), args.right.clone()),
    }
}
