//! `transpose` and `gen`: Matrix Market in and out.
use std::io::BufWriter;
use std::path::Path;

use gpu_transpose::{serial, Algorithm, Payload, Transposer};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::num_complex::Complex64;
use sptrans_matrix::{gen, mm, Csr, Field, Value};

use crate::cli::{FieldArg, GenArgs, GenKind, TransposeArgs};
use crate::{Error, Result};

fn mat_err(path: &Path) -> impl FnOnce(sptrans_matrix::Error) -> Error + '_ {
    move |source| Error::Matrix { path: path.to_path_buf(), source }
}

/// The field a file declares (its banner), reading through gzip.
fn read_field(path: &Path) -> Result<Field> {
    Ok(mm::read_header(path).map_err(mat_err(path))?.field)
}

/// Writes `a` as Matrix Market to `path`.
pub(crate) fn write<T: Value>(path: &Path, a: &Csr<u32, T>) -> Result<()> {
    let f = std::fs::File::create(path).map_err(|e| Error::Matrix { path: path.to_path_buf(), source: e.into() })?;
    mm::write_csr(BufWriter::new(f), a).map_err(mat_err(path))
}

/// `sptrans transpose`.
pub fn transpose(args: &TransposeArgs) -> Result<()> {
    let field = read_field(&args.input)?;
    let input = &args.input;
    match field {
        Field::Real => run::<f64>(args, mm::read_csr(input).map_err(mat_err(input))?),
        Field::Integer => run::<i64>(args, mm::read_csr(input).map_err(mat_err(input))?),
        Field::Pattern => run_pattern(args, mm::read_csr(input).map_err(mat_err(input))?),
        Field::Complex => {
            // 16-byte values: the GPU transposers move 4- and 8-byte values only.
            let a = mm::read_csr::<Complex64>(input).map_err(mat_err(input))?;
            if args.algo != Algorithm::Serial {
                eprintln!("complex values (16 bytes) are transposed by the serial twin; the GPU transposers move 4- and 8-byte values");
            }
            finish(args, &a, serial::transpose(&a), "serial")
        }
    }
}

/// Transposes on the GPU when there is one (the serial twin otherwise, saying why).
fn gpu_or_serial<T: Payload>(args: &TransposeArgs, upload: impl FnOnce(&gpu_runtime::Gpu) -> Result<DeviceCsr<T>>) -> Result<Option<(DeviceCsr<T>, String, gpu_runtime::Gpu)>> {
    if args.algo == Algorithm::Serial {
        return Ok(None);
    }
    let gpu = match crate::open_gpu() {
        Ok(g) => g,
        Err(why) => {
            eprintln!("no GPU found ({why}): using the serial twin");
            return Ok(None);
        }
    };
    let mut t = Transposer::new(&gpu)?;
    let da = upload(&gpu)?;
    let algo = args.algo.resolve(da.rows(), da.cols(), da.nnz());
    let out = t.transpose_new(algo, &da)?;
    Ok(Some((out, format!("{algo} on {}", gpu.props().name), gpu)))
}

fn run<T: Value + Payload>(args: &TransposeArgs, a: Csr<u32, T>) -> Result<()> {
    let (at, how) = match gpu_or_serial(args, |gpu| Ok(DeviceCsr::upload(gpu, &a)?))? {
        Some((out, how, gpu)) => (out.download(&gpu)?, how),
        None => (serial::transpose(&a), "serial".to_string()),
    };
    finish(args, &a, at, &how)
}

fn run_pattern(args: &TransposeArgs, a: Csr<u32, ()>) -> Result<()> {
    let (at, how) = match gpu_or_serial::<u8>(args, |gpu| Ok(DeviceCsr::upload_pattern(gpu, &a)?))? {
        Some((out, how, gpu)) => {
            let ptr = gpu.download(out.ptr())?;
            let idx = gpu.download(out.idx())?;
            let nnz = idx.len();
            (Csr::try_new(out.rows(), out.cols(), ptr, idx, vec![(); nnz]).map_err(|e| Error::CheckFailed(format!("the GPU result is not a valid CSR: {e}")))?, how)
        }
        None => (serial::transpose(&a), "serial".to_string()),
    };
    finish(args, &a, at, &how)
}

fn finish<T: Value>(args: &TransposeArgs, a: &Csr<u32, T>, at: Csr<u32, T>, how: &str) -> Result<()> {
    // The serial path's result is the twin itself: nothing to recompute.
    if args.check && how != "serial" && at != serial::transpose(a) {
        return Err(Error::CheckFailed(format!("{how} differs from the serial twin")));
    }
    if args.check {
        eprintln!("check: {how} equals the serial twin ({} nonzeros)", a.nnz());
    }
    write(&args.output, &at)?;
    eprintln!("{}: {} x {} with {} nonzeros transposed ({how}) into {}", args.input.display(), a.rows(), a.cols(), a.nnz(), args.output.display());
    Ok(())
}

fn generate<T: Value>(kind: &GenKind, seed: u64) -> sptrans_matrix::Result<Csr<u32, T>> {
    match *kind {
        GenKind::Uniform { m, n, nnz } => gen::uniform(m, n, nnz, seed),
        GenKind::Rmat { scale, edges, a, b, c } => gen::rmat(scale, edges, a, b, c, seed),
        GenKind::Laplacian2d { k } => gen::laplacian_2d(k),
        GenKind::Laplacian3d { k } => gen::laplacian_3d(k),
        GenKind::Banded { n, lower, upper } => gen::banded(n, lower, upper, seed),
        GenKind::TallSkinny { m, n, per_row } => gen::tall_skinny(m, n, per_row, seed),
        GenKind::DenseRow { m, n, nnz } => gen::dense_row(m, n, nnz, seed),
        GenKind::DenseCol { m, n, nnz } => gen::dense_col(m, n, nnz, seed),
    }
}

/// `sptrans gen`.
pub fn gen(args: &GenArgs) -> Result<()> {
    let out = args.output.as_deref().ok_or_else(|| Error::Usage("gen needs an output file: -o OUT.mtx".into()))?;
    // The library clamps nnz to m * n; a user asking for more gets told, not a smaller matrix.
    if let GenKind::Uniform { m, n, nnz } | GenKind::DenseRow { m, n, nnz } | GenKind::DenseCol { m, n, nnz } = args.kind {
        if m.checked_mul(n).is_some_and(|t| nnz > t) {
            return Err(Error::Usage(format!("generating the matrix: nnz = {nnz} is more than m * n = {}", m * n)));
        }
    }
    let (rows, cols, nnz) = match args.field {
        FieldArg::Real => save::<f64>(out, generate(&args.kind, args.seed).map_err(Error::Gen)?)?,
        FieldArg::Integer => save::<i64>(out, generate(&args.kind, args.seed).map_err(Error::Gen)?)?,
        FieldArg::Pattern => save::<()>(out, generate(&args.kind, args.seed).map_err(Error::Gen)?)?,
    };
    eprintln!("wrote {} ({rows} x {cols}, {nnz} nonzeros)", out.display());
    Ok(())
}

fn save<T: Value>(out: &Path, a: Csr<u32, T>) -> Result<(u64, u64, u64)> {
    write(out, &a)?;
    Ok((a.rows(), a.cols(), a.nnz()))
}
