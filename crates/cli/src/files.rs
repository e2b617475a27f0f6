//! `transpose` and `gen`: Matrix Market in and out. Every input is read exactly once, streaming
//! (`-` is standard input), and refused before anything large is allocated when it would not fit
//! the memory allowed; every output goes where [`crate::output`] says (regular files through a
//! temporary file renamed into place; devices, FIFOs and standard output streamed; a name ending
//! in `.gz`, `.zst`, `.xz` or `.bz2` is written compressed so).
use std::io::{BufWriter, Write};
use std::path::Path;

use sptrans::matrix::device::DeviceCsr;
use sptrans::matrix::generate::Spec;
use sptrans::matrix::num_complex::Complex64;
use sptrans::matrix::{human_bytes, mm, Csr, Field, Value};
use sptrans::transpose::{Algorithm, Payload, Transposer};

use crate::cli::{FieldArg, GenArgs, IndexBits, TransposeArgs};
use crate::{Error, Result};
use sptrans::matrix::device64::DeviceCsr64;

fn mat_err(path: &Path) -> impl FnOnce(sptrans::matrix::Error) -> Error + '_ {
    move |source| Error::Matrix { path: path.to_path_buf(), source }
}

/// Writes `a` to `path` ([`write_with`]): as SciPy's `save_npz` when the name ends in `.npz`,
/// else as Matrix Market.
pub(crate) fn write<I: sptrans::matrix::Index, T: Value>(path: &Path, a: &Csr<I, T>) -> Result<()> {
    if path.to_string_lossy().ends_with(".npz") {
        return write_with(path, |w| sptrans::matrix::npz::write_csr(w, a).map_err(|e| e.to_string()));
    }
    write_with(path, |w| mm::write_csr(w, a).map_err(|e| e.to_string()))
}

/// Writes what `body` produces to `path`, harming nothing ([`crate::output`]): standard output
/// for `-`; a character device, FIFO or socket (or a symlink to one) written directly, streaming;
/// a regular file or a new path through a temporary file beside it, renamed into place when
/// complete (an interrupted or failed run leaves an earlier file untouched and no temporary file
/// behind), with the existing file's mode or `0666 & !umask`; a symlink is written through to its
/// target. Compressed when the name ends in `.gz`, `.zst`, `.xz` or `.bz2`
/// ([`sptrans::matrix::compress::Codec::from_path`]).
pub(crate) fn write_with(path: &Path, body: impl Fn(&mut dyn Write) -> std::result::Result<(), String>) -> Result<()> {
    let out_err = |msg: String| Error::Output { path: path.to_path_buf(), msg };
    let codec = sptrans::matrix::compress::Codec::from_path(path);
    let stream = |w: &mut dyn Write| -> Result<()> {
        // The body reports errors as text: the watch remembers whether the reader closed the pipe.
        let mut w = crate::output::Watch::new(w);
        let done = if let Some(codec) = codec {
            let mut z = codec.encoder(&mut w).map_err(|e| crate::output::io_error(path, e))?;
            body(&mut z).map_err(out_err).and_then(|()| z.finish().and_then(|f| f.flush()).map_err(|e| crate::output::io_error(path, e)))
        } else {
            body(&mut w).map_err(out_err).and_then(|()| w.flush().map_err(|e| crate::output::io_error(path, e)))
        };
        if w.broken() {
            return Err(Error::BrokenPipe);
        }
        done
    };
    match crate::output::Destination::of(path)? {
        crate::output::Destination::Stdout => {
            let stdout = std::io::stdout();
            let mut w = BufWriter::new(stdout.lock());
            stream(&mut w)
        }
        crate::output::Destination::Special(target) => {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|e| out_err(format!("cannot open {} for writing: {e}", target.display())))?;
            let mut w = BufWriter::with_capacity(1 << 20, f);
            stream(&mut w)
        }
        crate::output::Destination::Regular { target, mode, owner } => {
            let tmp = crate::output::Temporary::beside(&target, mode)?;
            {
                let mut w = BufWriter::with_capacity(1 << 20, tmp.file());
                stream(&mut w)?;
            }
            tmp.persist(&target, owner)
        }
    }
}

/// Host memory a command may use: `--max-memory`, else what the system reports as available
/// (`MemAvailable` of `/proc/meminfo`), else no limit.
pub(crate) fn host_limit(max: Option<u64>) -> Option<u64> {
    max.or_else(|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb.saturating_mul(1024))
    })
}

/// Where a transposition runs: the serial twin, or a GPU algorithm with its plan, or (while the
/// input is read) a GPU still being opened on a helper thread.
enum Target {
    Serial(&'static str),
    Gpu {
        gpu: sptrans::runtime::Gpu,
        plan: Box<Transposer>,
        algo: Algorithm,
    },
    Opening {
        opening: std::thread::JoinHandle<std::result::Result<(sptrans::runtime::Gpu, Box<Transposer>), String>>,
        algo: Algorithm,
        /// The file stores one triangle (symmetric, skew-symmetric, Hermitian), so its pattern is
        /// symmetric: the plan is told ([`sptrans::transpose::PatternHint::Symmetric`]), and `auto`
        /// takes SymTrans, one pass where RadixTrans takes three or four (the pass checks the
        /// pattern itself and hands anything else to RadixTrans).
        symmetric: bool,
    },
}

impl Target {
    /// `serial` runs the twin; a GPU algorithm starts opening the GPU and building the plan (with
    /// its modules) on a helper thread, so that the context's creation overlaps reading the input
    /// ([`Target::resolve`] joins it).
    fn start(algo: Algorithm, symmetric: bool) -> Target {
        if algo == Algorithm::Serial {
            return Target::Serial("serial twin (requested)");
        }
        let opening = std::thread::spawn(|| {
            let gpu = crate::open_gpu()?;
            let plan = Transposer::new(&gpu).map_err(|e| e.to_string())?;
            Ok((gpu, Box::new(plan)))
        });
        Target::Opening { opening, algo, symmetric }
    }

    /// Whether the GPU (if any) is open, so [`Target::resolve`] will not wait.
    fn ready(&self) -> bool {
        match self {
            Target::Opening { opening, .. } => opening.is_finished(),
            _ => true,
        }
    }

    /// Waits for the GPU being opened: an explicit GPU algorithm needs one (no GPU is an error
    /// naming the cause); `auto` falls back to the twin and says so.
    fn resolve(&mut self) -> Result<()> {
        if !matches!(self, Target::Opening { .. }) {
            return Ok(());
        }
        let Target::Opening { opening, algo, symmetric } = std::mem::replace(self, Target::Serial("")) else { return Ok(()) };
        let opened = opening.join().unwrap_or_else(|_| Err("opening the GPU panicked".to_string()));
        *self = match opened {
            Ok((gpu, mut plan)) => {
                if symmetric {
                    plan.set_pattern_hint(sptrans::transpose::PatternHint::Symmetric);
                }
                Target::Gpu { gpu, plan, algo }
            }
            Err(why) if algo == Algorithm::Auto => {
                say!("no GPU found ({why}): auto uses the serial twin");
                Target::Serial("serial twin (no GPU)")
            }
            Err(why) => return Err(Error::NoGpu { algo: algo.name(), why }),
        };
        Ok(())
    }
}

/// Host bytes of a CSR with `rows` rows, `nnz` entries, indices of `ib` bytes and values of `vb`.
fn csr_bytes(rows: u64, nnz: u64, ib: u64, vb: u64) -> u64 {
    rows.saturating_add(1).saturating_mul(ib).saturating_add(nnz.saturating_mul(ib + vb))
}

/// An index width `transpose` runs with (`--index`): the host matrix's index type, and how the
/// GPU takes it (`DeviceCsr` for `u32`, `DeviceCsr64` for `u64`: files of more than `u32::MAX`
/// entries are read, and transposed, with the latter).
trait GpuIndex: sptrans::matrix::Index {
    /// What the "transposed by" line adds.
    const NOTE: &'static str;
    /// Device bytes of the input or output (pointer and indices), values apart.
    fn device_bytes(rows: u64, nnz: u64) -> u64;
    /// The plan's workspace for this width.
    fn workspace(plan: &mut Transposer, algo: Algorithm, rows: u64, cols: u64, nnz: u64, vb: usize) -> sptrans::transpose::Result<u64>;
    /// `a` transposed on the GPU.
    fn on_gpu<T: Value + Payload>(gpu: &sptrans::runtime::Gpu, plan: &mut Transposer, algo: Algorithm, a: &Csr<Self, T>) -> Result<Csr<Self, T>>;
    /// A pattern matrix transposed on the GPU.
    fn on_gpu_pattern(gpu: &sptrans::runtime::Gpu, plan: &mut Transposer, algo: Algorithm, a: &Csr<Self, ()>) -> Result<Csr<Self, ()>>;
}

fn invalid(e: impl std::fmt::Display) -> Error {
    Error::CheckFailed(format!("the GPU result is not a valid CSR: {e}"))
}

/// The transpose of the pattern matrix `a` from the GPU's pointer and indices, validated.
fn pattern_transposed<I: sptrans::matrix::Index>(a: &Csr<I, ()>, ptr: Vec<I>, idx: Vec<I>) -> Result<Csr<I, ()>> {
    let nnz = idx.len();
    Csr::try_new(a.cols(), a.rows(), ptr, idx, vec![(); nnz]).map_err(invalid)
}

impl GpuIndex for u32 {
    const NOTE: &'static str = "";
    fn device_bytes(rows: u64, nnz: u64) -> u64 {
        csr_bytes(rows, nnz, 4, 0)
    }
    fn workspace(plan: &mut Transposer, algo: Algorithm, rows: u64, cols: u64, nnz: u64, vb: usize) -> sptrans::transpose::Result<u64> {
        plan.workspace_bytes(algo, rows, cols, nnz, vb)
    }
    fn on_gpu<T: Value + Payload>(gpu: &sptrans::runtime::Gpu, plan: &mut Transposer, algo: Algorithm, a: &Csr<u32, T>) -> Result<Csr<u32, T>> {
        plan.transpose_new(algo, &DeviceCsr::upload(gpu, a)?)?.download(gpu).map_err(invalid)
    }
    fn on_gpu_pattern(gpu: &sptrans::runtime::Gpu, plan: &mut Transposer, algo: Algorithm, a: &Csr<u32, ()>) -> Result<Csr<u32, ()>> {
        let out = plan.transpose_new(algo, &DeviceCsr::upload_pattern(gpu, a)?)?;
        pattern_transposed(a, gpu.download(out.ptr())?, gpu.download(out.idx())?)
    }
}

impl GpuIndex for u64 {
    const NOTE: &'static str = ", 64-bit row pointer";
    fn device_bytes(rows: u64, nnz: u64) -> u64 {
        rows.saturating_add(1).saturating_mul(8).saturating_add(nnz.saturating_mul(4))
    }
    fn workspace(plan: &mut Transposer, algo: Algorithm, rows: u64, cols: u64, nnz: u64, vb: usize) -> sptrans::transpose::Result<u64> {
        plan.workspace64_bytes(algo, rows, cols, nnz, vb)
    }
    fn on_gpu<T: Value + Payload>(gpu: &sptrans::runtime::Gpu, plan: &mut Transposer, algo: Algorithm, a: &Csr<u64, T>) -> Result<Csr<u64, T>> {
        plan.transpose64_new(algo, &DeviceCsr64::upload(gpu, a)?)?.download(gpu).map_err(invalid)
    }
    fn on_gpu_pattern(gpu: &sptrans::runtime::Gpu, plan: &mut Transposer, algo: Algorithm, a: &Csr<u64, ()>) -> Result<Csr<u64, ()>> {
        let out = plan.transpose64_new(algo, &DeviceCsr64::upload_pattern(gpu, a)?)?;
        pattern_transposed(a, gpu.download(out.ptr())?, gpu.download(out.idx())?.into_iter().map(u64::from).collect())
    }
}

/// The check run right after the input's size line: the host memory the whole command needs
/// (reading, the transposed copy and its counting offsets, a `--check` copy) against
/// `host_limit`, and for a GPU algorithm the device memory (input, output, workspace) against
/// what the device has free. Refuses with the sizes, before anything large is allocated. When
/// the GPU is still being opened, the device check waits for the end of the reading: `deferred`
/// keeps the sizes for [`device_check`] then.
fn memory_check<'a, I: GpuIndex, T: Value>(
    args: &'a TransposeArgs,
    target: &'a mut Target,
    deferred: &'a mut Deferred,
    vb: u64,
) -> impl FnMut(u64, u64, u64) -> sptrans::matrix::Result<()> + 'a {
    let limit = host_limit(args.max_memory);
    let ib = std::mem::size_of::<I>() as u64;
    move |rows, cols, entries| {
        let read = mm::read_bytes_estimate::<I, T>(rows, entries);
        let transposed = csr_bytes(cols, entries, ib, vb) + cols.saturating_add(1).saturating_mul(8);
        let checked = if args.check { csr_bytes(cols, entries, ib, vb) + read } else { 0 };
        let need = read.saturating_add(transposed).saturating_add(checked);
        if let Some(limit) = limit {
            if need > limit {
                return Err(sptrans::matrix::Error::MemoryLimit { rows, cols, entries, need, limit });
            }
        }
        if !target.ready() {
            deferred.sizes = Some((rows, cols, entries));
            return Ok(());
        }
        if let Err(e) = target.resolve() {
            // Stops the reading; `ready` reports this error rather than the reader's.
            let msg = e.to_string();
            deferred.error = Some(e);
            return Err(device_refusal(msg));
        }
        device_check::<I>(target, rows, cols, entries, vb)
    }
}

/// The device memory a GPU algorithm needs for the matrix (input, output, workspace) against what
/// the device has free; nothing for the twin.
fn device_check<I: GpuIndex>(target: &mut Target, rows: u64, cols: u64, entries: u64, vb: u64) -> sptrans::matrix::Result<()> {
    if let Target::Gpu { gpu, plan, algo } = target {
        let algo = plan.resolve(*algo, rows, cols, entries, vb as usize);
        let ws = I::workspace(plan, algo, rows, cols, entries, vb as usize).map_err(|e| device_refusal(e.to_string()))?;
        let dev = I::device_bytes(rows, entries)
            .saturating_add(I::device_bytes(cols, entries))
            .saturating_add(entries.saturating_mul(2 * vb))
            .saturating_add(ws);
        let (free, _) = gpu.memory_info().map_err(sptrans::matrix::Error::Runtime)?;
        if dev > free {
            return Err(device_refusal(format!(
                "{rows} x {cols} with {entries} entries needs about {} of GPU memory with {algo} (input, output and {} of workspace), more than the {} free on {}",
                human_bytes(dev),
                human_bytes(ws),
                human_bytes(free),
                gpu.props().name
            )));
        }
    }
    Ok(())
}

/// What the size line's check left for after the reading.
#[derive(Default)]
struct Deferred {
    /// The sizes, when the GPU was still being opened at the size line.
    sizes: Option<(u64, u64, u64)>,
    /// Opening the GPU failed at the size line (the reading stopped there).
    error: Option<Error>,
}

/// After the reading (`read`, the reader's result): the GPU opened (waiting for it if need be)
/// and, if the size line came before it was, the device memory checked.
fn ready<I: GpuIndex, T>(args: &TransposeArgs, target: &mut Target, deferred: Deferred, vb: u64, read: sptrans::matrix::Result<T>) -> Result<T> {
    if let Some(e) = deferred.error {
        return Err(e);
    }
    let a = read.map_err(mat_err(&args.input))?;
    target.resolve()?;
    if let Some((rows, cols, entries)) = deferred.sizes {
        device_check::<I>(target, rows, cols, entries, vb).map_err(mat_err(&args.input))?;
    }
    Ok(a)
}

fn device_refusal(msg: String) -> sptrans::matrix::Error {
    sptrans::matrix::Error::Refused(msg)
}

/// `sptrans transpose`.
pub fn transpose(args: &TransposeArgs) -> Result<()> {
    if args.gpus > 1 {
        return transpose_dist(args);
    }
    match args.index {
        IndexBits::I32 => transpose_as::<u32>(args).map_err(|e| match e {
            // More entries than u32 holds: say how to take them.
            Error::Matrix { path, source: sptrans::matrix::Error::Parse { line, msg } } if msg.contains("too large for the index type") => {
                Error::Matrix { path, source: sptrans::matrix::Error::Parse { line, msg: format!("{msg}; --index 64 reads it with 64-bit indices") } }
            }
            e => e,
        }),
        IndexBits::I64 => transpose_as::<u64>(args),
    }
}

fn transpose_as<I: GpuIndex>(args: &TransposeArgs) -> Result<()> {
    let input = mm::Input::open(&args.input).map_err(mat_err(&args.input))?;
    let header = input.header();
    let field = header.field;
    let mut target = Target::start(args.algo, header.symmetry != mm::Symmetry::General);
    let mut deferred = Deferred::default();
    match field {
        Field::Real => {
            let read = input.read_csr_checked_as::<I, f64>(&mut memory_check::<I, f64>(args, &mut target, &mut deferred, 8));
            let a = ready::<I, _>(args, &mut target, deferred, 8, read)?;
            run(args, a, target)
        }
        Field::Integer => {
            let read = input.read_csr_checked_as::<I, i64>(&mut memory_check::<I, i64>(args, &mut target, &mut deferred, 8));
            let a = ready::<I, _>(args, &mut target, deferred, 8, read)?;
            run(args, a, target)
        }
        Field::Pattern => {
            let read = input.read_csr_checked_as::<I, ()>(&mut memory_check::<I, ()>(args, &mut target, &mut deferred, 0));
            let a = ready::<I, _>(args, &mut target, deferred, 0, read)?;
            run_pattern(args, a, target)
        }
        Field::Complex => {
            let read = input.read_csr_checked_as::<I, Complex64>(&mut memory_check::<I, Complex64>(args, &mut target, &mut deferred, 16));
            let a = ready::<I, _>(args, &mut target, deferred, 16, read)?;
            run_complex(args, a, target)
        }
    }
}

/// `sptrans transpose --gpus N` (N > 1): the distributed transpose over GPUs `0 .. N`.
fn transpose_dist(args: &TransposeArgs) -> Result<()> {
    let n = args.gpus as usize;
    if args.index == IndexBits::I64 {
        return Err(Error::Usage("--gpus with --index 64: the distributed transpose takes 32-bit indices for now".into()));
    }
    if args.algo == Algorithm::Serial {
        return Err(Error::Usage("--gpus with --algo serial: the serial twin runs on the CPU; drop --gpus".into()));
    }
    let comms = sptrans::dist::Comms::local(n)?;
    let input = mm::Input::open(&args.input).map_err(mat_err(&args.input))?;
    match input.header().field {
        Field::Real => dist_run(args, &comms, input.read_csr::<f64>(host_limit(args.max_memory)).map_err(mat_err(&args.input))?),
        Field::Integer => dist_run(args, &comms, input.read_csr::<i64>(host_limit(args.max_memory)).map_err(mat_err(&args.input))?),
        f => Err(Error::Usage(format!("--gpus: {f:?} values are not taken yet (real or integer)"))),
    }
}

fn dist_run<T: Value + Payload>(args: &TransposeArgs, comms: &sptrans::dist::Comms, a: Csr<u32, T>) -> Result<()> {
    let d = sptrans::matrix::dist::DistCsr::scatter(comms.gpus(), &a)?;
    let mut dt = sptrans::transpose::dist::DistTransposer::new(comms)?;
    let (t, ex) = dt.transpose(comms, args.algo, &d)?;
    let at = t.gather(comms.gpus())?;
    let how = format!("distributed over {} GPUs ({} each; column cuts {:?})", comms.len(), args.algo, ex.cuts);
    finish(args, &a, at, &how, true)
}

/// Complex values: on the GPU as their bits (16-byte values), checked and written as complex.
fn run_complex<I: GpuIndex>(args: &TransposeArgs, a: Csr<I, Complex64>, target: Target) -> Result<()> {
    match target {
        Target::Opening { .. } => Err(sptrans::runtime::Error::Internal("transposing before the GPU was opened").into()),
        Target::Serial(how) => {
            let at = a.try_transpose().map_err(mat_err(&args.input))?;
            finish(args, &a, at, how, false)
        }
        Target::Gpu { gpu, mut plan, algo } => {
            let algo = plan.resolve(algo, a.rows(), a.cols(), a.nnz(), 16);
            let bits = a.clone().map_values(sptrans::matrix::device::complex_bits);
            let at = I::on_gpu(&gpu, &mut plan, algo, &bits)?.map_values(sptrans::matrix::device::complex_from_bits);
            finish(args, &a, at, &format!("{algo} on {}{} (complex values as 16-byte bits)", gpu.props().name, I::NOTE), true)
        }
    }
}

fn run<I: GpuIndex, T: Value + Payload>(args: &TransposeArgs, a: Csr<I, T>, target: Target) -> Result<()> {
    match target {
        Target::Opening { .. } => Err(sptrans::runtime::Error::Internal("transposing before the GPU was opened").into()),
        Target::Serial(how) => {
            let at = a.try_transpose().map_err(mat_err(&args.input))?;
            finish(args, &a, at, how, false)
        }
        Target::Gpu { gpu, mut plan, algo } => {
            let algo = plan.resolve(algo, a.rows(), a.cols(), a.nnz(), T::BYTES);
            let at = I::on_gpu(&gpu, &mut plan, algo, &a)?;
            finish(args, &a, at, &format!("{algo} on {}{}", gpu.props().name, I::NOTE), true)
        }
    }
}

fn run_pattern<I: GpuIndex>(args: &TransposeArgs, a: Csr<I, ()>, target: Target) -> Result<()> {
    match target {
        Target::Opening { .. } => Err(sptrans::runtime::Error::Internal("transposing before the GPU was opened").into()),
        Target::Serial(how) => {
            let at = a.try_transpose().map_err(mat_err(&args.input))?;
            finish(args, &a, at, how, false)
        }
        Target::Gpu { gpu, mut plan, algo } => {
            let algo = plan.resolve(algo, a.rows(), a.cols(), a.nnz(), 0);
            let at = I::on_gpu_pattern(&gpu, &mut plan, algo, &a)?;
            finish(args, &a, at, &format!("{algo} on {}{}", gpu.props().name, I::NOTE), true)
        }
    }
}

/// An independent transpose for `--check`: the entries' coordinates swapped and compressed by
/// sorting (COO → CSR), not the counting sort of the serial twin.
fn independent_transpose<I: GpuIndex, T: Value>(a: &Csr<I, T>) -> sptrans::matrix::Result<Csr<I, T>> {
    let coo = a.to_coo();
    sptrans::matrix::Coo::try_new(a.cols(), a.rows(), coo.col().to_vec(), coo.row().to_vec(), coo.vals().to_vec())?.try_into_csr()
}

fn finish<I: GpuIndex, T: Value>(args: &TransposeArgs, a: &Csr<I, T>, at: Csr<I, T>, how: &str, on_gpu: bool) -> Result<()> {
    if args.check {
        // The GPU result is compared with the serial twin; the twin's own result with an
        // independent method (swap coordinates, sort), so --check never compares a result with
        // itself.
        let (what, reference) = if on_gpu {
            ("the serial twin", a.try_transpose().map_err(mat_err(&args.input))?)
        } else {
            ("an independent COO sort transpose", independent_transpose(a).map_err(mat_err(&args.input))?)
        };
        if !at.same_bits(&reference) {
            return Err(Error::CheckFailed(format!("the result of {how} differs from {what}")));
        }
        say!("check: the result of {how} equals {what}, bit for bit ({} nonzeros)", a.nnz());
    }
    write(&args.output, &at)?;
    let shown = |p: &Path| if p.as_os_str() == "-" { "standard output".to_string() } else { p.display().to_string() };
    say!(
        "{}: {} x {} with {} nonzeros transposed by {how} into {}",
        shown(&args.input).replace("standard output", "standard input"),
        a.rows(),
        a.cols(),
        a.nnz(),
        shown(&args.output)
    );
    Ok(())
}

/// `sptrans gen`.
pub fn gen(args: &GenArgs) -> Result<()> {
    let out = args.output.as_deref().ok_or_else(|| Error::Usage("gen needs an output file: -o OUT.mtx (or - for standard output)".into()))?;
    // The library clamps nnz to m * n; a user asking for more gets told, not a smaller matrix.
    if let Spec::Uniform { m, n, nnz } | Spec::DenseRow { m, n, nnz } | Spec::DenseCol { m, n, nnz } = args.kind {
        if m.checked_mul(n).is_some_and(|t| nnz > t) {
            return Err(Error::Usage(format!("generating the matrix: nnz = {nnz} is more than m * n = {}", m * n)));
        }
    }
    // Checked before anything is allocated: the generator's positions (8 bytes each, sorted with
    // a copy) and the matrix (index and value of each entry, the row pointer).
    if let Some((rows, cols, entries)) = args.kind.estimate() {
        gen_memory_check(args, rows, cols, entries)?;
    }
    let (rows, cols, nnz) = match args.index {
        IndexBits::I32 => gen_as::<u32>(out, args)?,
        IndexBits::I64 => gen_as::<u64>(out, args)?,
    };
    if out.as_os_str() != "-" {
        say!("wrote {} ({rows} x {cols}, {nnz} nonzeros)", out.display());
    }
    Ok(())
}

/// Refuses a generated matrix of `entries` (at most) that would not fit the host memory allowed.
fn gen_memory_check(args: &GenArgs, rows: u64, cols: u64, entries: u64) -> Result<()> {
    let ib: u64 = match args.index {
        IndexBits::I32 => 4,
        IndexBits::I64 => 8,
    };
    let vb: u64 = match args.field {
        FieldArg::Pattern => 0,
        FieldArg::Complex => 16,
        _ => 8,
    };
    let need = entries.saturating_mul(16 + ib + vb).saturating_add(rows.saturating_add(1).saturating_mul(ib));
    if let Some(limit) = host_limit(args.max_memory) {
        if need > limit {
            return Err(Error::Gen(sptrans::matrix::Error::MemoryLimit { rows, cols, entries, need, limit }));
        }
    }
    Ok(())
}

/// Generates with index type `I` and writes; `(rows, cols, nonzeros)`.
fn gen_as<I: sptrans::matrix::Index>(out: &Path, args: &GenArgs) -> Result<(u64, u64, u64)> {
    let spec = args.kind;
    match args.field {
        FieldArg::Real => save::<I, f64>(out, spec.build(args.seed).map_err(Error::Gen)?),
        FieldArg::Integer => save::<I, i64>(out, spec.build(args.seed).map_err(Error::Gen)?),
        FieldArg::Pattern => save::<I, ()>(out, spec.build(args.seed).map_err(Error::Gen)?),
        FieldArg::Complex => {
            let mut k = 0u64;
            let a = spec.build::<I, f64>(args.seed).map_err(Error::Gen)?.map_values(|re| {
                k += 1;
                Complex64::new(re, ((k - 1) as f64 * 0.618_033_988_75).fract() - 0.5)
            });
            save::<I, Complex64>(out, a)
        }
    }
}

fn save<I: sptrans::matrix::Index, T: Value>(out: &Path, a: Csr<I, T>) -> Result<(u64, u64, u64)> {
    write(out, &a)?;
    Ok((a.rows(), a.cols(), a.nnz()))
}
