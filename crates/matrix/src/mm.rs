//! Matrix Market reading and writing.
//!
//! Reading follows `POLICY.md` of the conformance corpus: accept what real files contain, refuse
//! anything that would lose or invent data, never panic. Every refusal is [`Error::Parse`] with
//! the 1-based line number and what was wrong. Gzip input is detected by its magic bytes.
//!
//! - Banner `%%MatrixMarket matrix coordinate|array real|integer|complex|pattern
//!   general|symmetric|skew-symmetric|hermitian`, case-insensitive, leading spaces and a single
//!   `%` accepted; `vector` objects, unknown words, `hermitian` without `complex`, `pattern` with
//!   `array` or with skew/hermitian symmetry are refused.
//! - Comment (`%`) and blank lines are skipped anywhere after the banner. CRLF is accepted, a
//!   bare CR is refused.
//! - Symmetric files are expanded to general without duplicating the diagonal (mirror: same
//!   value, negated for skew-symmetric, conjugated for hermitian). A nonzero skew-symmetric
//!   diagonal and a hermitian diagonal with a nonzero imaginary part are refused.
//! - `array` files become the sparse matrix of their nonzero values (column-major order).
//! - Extra or missing tokens, index 0 or past the dimension, more or fewer entries than
//!   declared, values that do not fit the requested type (`1E310` into `f64`): refused.
//! - Duplicates are kept in the COO result (summed by [`Coo::to_csr`]).
use std::io::{BufRead, Read, Write};
use std::path::Path;

use crate::formats::{check_fits, coo_unchecked, Coo, Csr, Index};
use crate::value::{Field, Raw, Value};
use crate::{Error, Result};

/// `coordinate` or `array`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Sparse entries `i j [value]`.
    Coordinate,
    /// Dense column-major values.
    Array,
}

/// The symmetry of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symmetry {
    /// Every entry is stored.
    General,
    /// `a(j, i) = a(i, j)`; one triangle stored.
    Symmetric,
    /// `a(j, i) = -a(i, j)`; zero diagonal.
    SkewSymmetric,
    /// `a(j, i) = conj(a(i, j))`; real diagonal.
    Hermitian,
}

/// A parsed banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Storage format.
    pub format: Format,
    /// Value field.
    pub field: Field,
    /// Symmetry.
    pub symmetry: Symmetry,
}

fn perr(line: u64, msg: impl Into<String>) -> Error {
    Error::Parse { line, msg: msg.into() }
}

/// Longest line accepted (a Matrix Market line is a few dozen bytes; this bounds the buffer).
pub const MAX_LINE: usize = 1 << 26;

/// Lines with their 1-based numbers, read in chunks from a stream (the whole input is never held
/// in memory); a trailing CR is dropped, a bare CR is an error.
struct Lines<R> {
    src: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    no: u64,
}

impl<R: Read> Lines<R> {
    /// `hint`: the stream's length when known (a small input gets a small buffer).
    fn new(src: R, hint: Option<u64>) -> Self {
        let cap = hint.map_or(1 << 20, |h| (h as usize).saturating_add(1).clamp(256, 1 << 20));
        Self { src, buf: vec![0; cap], start: 0, end: 0, eof: false, no: 0 }
    }

    /// The byte range of the next line (validated: no bare CR, UTF-8), with its number.
    fn next_range(&mut self) -> Result<Option<(u64, usize, usize)>> {
        loop {
            if let Some(p) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let (s, e) = (self.start, self.start + p);
                self.start = e + 1;
                return self.check(s, e).map(Some);
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let (s, e) = (self.start, self.end);
                self.start = self.end;
                return self.check(s, e).map(Some);
            }
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buf.len() {
                if self.buf.len() >= MAX_LINE {
                    return Err(perr(self.no + 1, format!("line longer than {MAX_LINE} bytes")));
                }
                self.buf.resize(self.buf.len() * 2, 0);
            }
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::Io(e)),
            }
        }
    }

    fn check(&mut self, s: usize, mut e: usize) -> Result<(u64, usize, usize)> {
        self.no += 1;
        if e > s && self.buf[e - 1] == b'\r' {
            e -= 1;
        }
        let line = &self.buf[s..e];
        if memchr::memchr(b'\r', line).is_some() {
            return Err(perr(self.no, "bare CR line ending (use LF or CRLF)"));
        }
        std::str::from_utf8(line).map_err(|_| perr(self.no, "line is not valid UTF-8"))?;
        Ok((self.no, s, e))
    }

    fn text(&self, s: usize, e: usize) -> &str {
        // Checked in `check`; an empty string cannot be reached.
        std::str::from_utf8(&self.buf[s..e]).unwrap_or_default()
    }

    fn next_line(&mut self) -> Result<Option<(u64, &str)>> {
        Ok(match self.next_range()? {
            Some((no, s, e)) => Some((no, self.text(s, e))),
            None => None,
        })
    }

    /// The next line that is neither blank nor a comment.
    fn next_data(&mut self) -> Result<Option<(u64, &str)>> {
        while let Some((no, s, e)) = self.next_range()? {
            let t = self.text(s, e).trim_start();
            if t.is_empty() || t.starts_with('%') {
                continue;
            }
            return Ok(Some((no, self.text(s, e))));
        }
        Ok(None)
    }
}

/// Parses the banner line.
///
/// # Errors
/// [`Error::Parse`] with the line number and what is wrong.
pub fn parse_banner(line: &str, no: u64) -> Result<Header> {
    let toks: Vec<String> = line.split_ascii_whitespace().map(|t| t.to_ascii_lowercase()).collect();
    let Some(first) = toks.first() else { return Err(perr(no, "missing %%MatrixMarket banner")) };
    if first != "%%matrixmarket" && first != "%matrixmarket" {
        return Err(perr(no, format!("missing or invalid banner `{}` (expected %%MatrixMarket)", first)));
    }
    if toks.len() != 5 {
        return Err(perr(no, format!("banner needs 4 words after %%MatrixMarket (object format field symmetry), found {}", toks.len() - 1)));
    }
    match toks[1].as_str() {
        "matrix" => {}
        "vector" => return Err(perr(no, "`vector` objects are not supported")),
        o => return Err(perr(no, format!("invalid object `{o}`"))),
    }
    let format = match toks[2].as_str() {
        "coordinate" => Format::Coordinate,
        "array" => Format::Array,
        f => return Err(perr(no, format!("invalid format `{f}`"))),
    };
    let field = match toks[3].as_str() {
        "real" => Field::Real,
        "integer" => Field::Integer,
        "complex" => Field::Complex,
        "pattern" => Field::Pattern,
        f => return Err(perr(no, format!("invalid field `{f}`"))),
    };
    let symmetry = match toks[4].as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => Symmetry::Hermitian,
        s => return Err(perr(no, format!("invalid symmetry `{s}`"))),
    };
    if symmetry == Symmetry::Hermitian && field != Field::Complex {
        return Err(perr(no, format!("`hermitian` needs a complex field, not `{}`", field.name())));
    }
    if field == Field::Pattern && format == Format::Array {
        return Err(perr(no, "`pattern` is not valid with `array`"));
    }
    if field == Field::Pattern && matches!(symmetry, Symmetry::SkewSymmetric | Symmetry::Hermitian) {
        return Err(perr(no, "`pattern` is only valid with general or symmetric"));
    }
    Ok(Header { format, field, symmetry })
}

/// A non-negative integer token (dimension, count or index).
fn parse_u64(tok: &str, no: u64, what: &str) -> Result<u64> {
    let b = tok.as_bytes();
    if b.first() == Some(&b'-') {
        return Err(perr(no, format!("{what} `{tok}` is negative")));
    }
    let digits = b.strip_prefix(b"+").unwrap_or(b);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(perr(no, format!("{what} `{tok}` is not a non-negative integer")));
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10).and_then(|v| v.checked_add((d - b'0') as u64)).ok_or_else(|| perr(no, format!("{what} `{tok}` is out of range")))?;
    }
    Ok(v)
}

fn raw<'a>(field: Field, toks: &[&'a str]) -> Raw<'a> {
    match field {
        Field::Real => Raw::Real(toks[0]),
        Field::Integer => Raw::Integer(toks[0]),
        Field::Complex => Raw::Complex(toks[0], toks[1]),
        Field::Pattern => Raw::Pattern,
    }
}

/// Whether a value token (pair) is numerically zero, whatever type is requested.
fn raw_is_zero(r: Raw<'_>) -> bool {
    let z = |t: &str| t.parse::<f64>().is_ok_and(|v| v == 0.0);
    match r {
        Raw::Real(t) | Raw::Integer(t) => z(t),
        Raw::Complex(a, b) => z(a) && z(b),
        Raw::Pattern => false,
    }
}

fn raw_imag_is_zero(r: Raw<'_>) -> bool {
    match r {
        Raw::Complex(_, b) => b.parse::<f64>().is_ok_and(|v| v == 0.0),
        _ => true,
    }
}

fn value_tokens(field: Field) -> usize {
    match field {
        Field::Real | Field::Integer => 1,
        Field::Complex => 2,
        Field::Pattern => 0,
    }
}

/// Splits a line into exactly `N <= 4` tokens, or says how many there were.
fn tokens<'a>(line: &'a str, want: usize, no: u64, what: &str) -> Result<[&'a str; 4]> {
    let mut out = [""; 4];
    let mut k = 0;
    for t in line.split_ascii_whitespace() {
        if k == want {
            return Err(perr(no, format!("extra token `{t}` on {what} line (expected {want} tokens)")));
        }
        out[k] = t;
        k += 1;
    }
    if k < want {
        return Err(perr(no, format!("{what} line has {k} tokens, expected {want}")));
    }
    Ok(out)
}

/// Collects entries, expanding symmetry.
struct Sink<I, T> {
    sym: Symmetry,
    row: Vec<I>,
    col: Vec<I>,
    vals: Vec<T>,
}

impl<I: Index, T: Value> Sink<I, T> {
    fn push(&mut self, i: u64, j: u64, r: Raw<'_>, no: u64) -> Result<()> {
        let v = T::from_raw(r).map_err(|m| perr(no, m))?;
        // Dimensions were checked to fit I, so these conversions cannot fail.
        let (ii, jj) = (I::from_u64(i).unwrap_or_default(), I::from_u64(j).unwrap_or_default());
        self.row.push(ii);
        self.col.push(jj);
        self.vals.push(v);
        if i != j {
            let m = match self.sym {
                Symmetry::General => return Ok(()),
                Symmetry::Symmetric => v,
                Symmetry::SkewSymmetric => v.neg(),
                Symmetry::Hermitian => v.conj(),
            };
            self.row.push(jj);
            self.col.push(ii);
            self.vals.push(m);
        } else if self.sym == Symmetry::SkewSymmetric && !raw_is_zero(r) {
            return Err(perr(no, "skew-symmetric matrix with a nonzero diagonal entry"));
        } else if self.sym == Symmetry::Hermitian && !raw_imag_is_zero(r) {
            return Err(perr(no, "hermitian matrix with a non-real diagonal entry"));
        }
        Ok(())
    }
}

/// Parses a whole Matrix Market text (already decompressed) into COO with index type `I`.
///
/// # Errors
/// [`Error::Parse`] with the line number and what is wrong (see `POLICY.md` of the conformance corpus), [`Error::TooLarge`] past the index type.
pub fn parse<I: Index, T: Value>(data: &[u8]) -> Result<Coo<I, T>> {
    parse_reader(data, Some(data.len() as u64))
}

/// Parses a Matrix Market stream (already decompressed) into COO, reading it in chunks.
/// `size_hint` (the stream's length, when known) bounds what is reserved up front, so a size line
/// that lies costs nothing.
///
/// # Errors
/// As [`parse`], and [`Error::Io`] when reading fails.
pub fn parse_reader<I: Index, T: Value>(src: impl Read, size_hint: Option<u64>) -> Result<Coo<I, T>> {
    let mut lines = Lines::new(src, size_hint);
    let Some((no, banner)) = lines.next_line()? else { return Err(perr(1, "empty input: missing %%MatrixMarket banner")) };
    let h = parse_banner(banner, no)?;
    let size_toks = if h.format == Format::Coordinate { 3 } else { 2 };
    let Some((no, size)) = lines.next_data()? else { return Err(perr(lines.no + 1, "premature end of file: missing size line")) };
    let t = tokens(size, size_toks, no, "size")?;
    let rows = parse_u64(t[0], no, "row count")?;
    let cols = parse_u64(t[1], no, "column count")?;
    if h.symmetry != Symmetry::General && rows != cols {
        return Err(perr(no, format!("{:?} matrix must be square, not {rows} x {cols}", h.symmetry)));
    }
    let declared = match h.format {
        Format::Coordinate => parse_u64(t[2], no, "entry count")?,
        Format::Array => match h.symmetry {
            Symmetry::General => rows.checked_mul(cols),
            Symmetry::Symmetric | Symmetry::Hermitian => rows.checked_mul(rows + 1).map(|x| x / 2),
            Symmetry::SkewSymmetric => rows.checked_mul(rows.saturating_sub(1)).map(|x| x / 2),
        }
        .ok_or_else(|| perr(no, "array dimensions overflow"))?,
    };
    let expand = if h.symmetry == Symmetry::General { 1 } else { 2 };
    let stored_max = declared.checked_mul(expand).ok_or_else(|| perr(no, "entry count overflows"))?;
    check_fits::<I>(rows, cols, if h.format == Format::Coordinate { stored_max } else { 0 }).map_err(|e| perr(no, e.to_string()))?;
    // Reserve no more than the input can hold (a line is at least 4 bytes), and without a size
    // hint no more than 2^24 entries (growing past that doubles in place).
    let cap = (stored_max as usize).min(expand as usize * size_hint.map_or(1 << 24, |b| b as usize / 4 + 1));
    let mut sink = Sink::<I, T> { sym: h.symmetry, row: Vec::with_capacity(cap), col: Vec::with_capacity(cap), vals: Vec::with_capacity(cap) };
    let nv = value_tokens(h.field);
    let mut count = 0u64;
    match h.format {
        Format::Coordinate => {
            while let Some((no, line)) = lines.next_data()? {
                if count == declared {
                    return Err(perr(no, format!("more entries than the {declared} the size line declares")));
                }
                let t = tokens(line, 2 + nv, no, "entry")?;
                let i = parse_u64(t[0], no, "row index")?;
                let j = parse_u64(t[1], no, "column index")?;
                if i == 0 || i > rows {
                    return Err(perr(no, format!("row index {i} out of range 1..={rows}")));
                }
                if j == 0 || j > cols {
                    return Err(perr(no, format!("column index {j} out of range 1..={cols}")));
                }
                sink.push(i - 1, j - 1, raw(h.field, &t[2..]), no)?;
                count += 1;
            }
        }
        Format::Array => {
            let (mut i, mut j) = (0u64, 0u64);
            let first_row = |j: u64| match h.symmetry {
                Symmetry::General => 0,
                Symmetry::Symmetric | Symmetry::Hermitian => j,
                Symmetry::SkewSymmetric => j + 1,
            };
            i = i.max(first_row(0));
            while let Some((no, line)) = lines.next_data()? {
                if count == declared {
                    return Err(perr(no, format!("more values than the {declared} the size line implies")));
                }
                let t = tokens(line, nv, no, "value")?;
                let r = raw(h.field, &t);
                if raw_is_zero(r) {
                    T::from_raw(r).map_err(|m| perr(no, m))?; // still type-checked
                } else {
                    sink.push(i, j, r, no)?;
                }
                count += 1;
                i += 1;
                while i >= rows && j + 1 < cols {
                    j += 1;
                    i = first_row(j);
                }
            }
        }
    }
    if count < declared {
        return Err(perr(lines.no + 1, format!("premature end of file: {count} of {declared} entries")));
    }
    check_fits::<I>(rows, cols, sink.row.len() as u64)?;
    Ok(coo_unchecked(rows, cols, sink.row, sink.col, sink.vals))
}

/// `reader`, gunzipped when it starts with the gzip magic bytes (the one place that decides),
/// and whether it was.
fn gunzip_if_gzip<'a, R: BufRead + 'a>(mut reader: R) -> Result<(Box<dyn Read + 'a>, bool)> {
    if reader.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
        return Ok((Box::new(flate2::bufread::MultiGzDecoder::new(reader)), true));
    }
    Ok((Box::new(reader), false))
}

/// Reads all of `reader`, gunzipping when it starts with the gzip magic bytes.
///
/// # Errors
/// [`Error::Io`] when reading or decompressing fails.
pub fn read_bytes(reader: impl Read) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    gunzip_if_gzip(std::io::BufReader::new(reader))?.0.read_to_end(&mut data)?;
    Ok(data)
}

/// Opens `path` as a stream, gunzipping when it starts with the gzip magic bytes; with the
/// uncompressed length when it is known (plain files).
fn open(path: &Path) -> Result<(Box<dyn Read>, Option<u64>)> {
    let f = std::fs::File::open(path).map_err(|e| Error::Io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?;
    let len = f.metadata().ok().map(|m| m.len());
    let (r, gz) = gunzip_if_gzip(std::io::BufReader::with_capacity(1 << 16, f))?;
    Ok((r, if gz { None } else { len }))
}

/// Reads a `.mtx` or `.mtx.gz` file into COO (32-bit indices), streaming: the file is never
/// held in memory whole.
///
/// # Errors
/// As [`parse_reader`]; [`Error::Io`] when the file cannot be opened.
pub fn read_coo<T: Value>(path: impl AsRef<Path>) -> Result<Coo<u32, T>> {
    let (r, hint) = open(path.as_ref())?;
    parse_reader(r, hint)
}

/// Reads a `.mtx` or `.mtx.gz` file into CSR (duplicates summed, columns sorted in each row).
/// Streams the file and compresses in place ([`Coo::into_csr`]): peak memory is the coordinate
/// arrays, about 1.3 times the resulting CSR for u32 indices and f64 values.
///
/// # Errors
/// As [`read_coo`].
pub fn read_csr<T: Value>(path: impl AsRef<Path>) -> Result<Csr<u32, T>> {
    Ok(read_coo::<T>(path)?.into_csr())
}

/// The banner of a `.mtx` or `.mtx.gz` file (its first line).
///
/// # Errors
/// [`Error::Io`], or [`Error::Parse`] for a bad banner or size line.
pub fn read_header(path: impl AsRef<Path>) -> Result<Header> {
    let (r, _) = open(path.as_ref())?;
    let mut lines = Lines::new(r, Some(4096));
    match lines.next_line()? {
        Some((no, banner)) => parse_banner(banner, no),
        None => Err(perr(1, "empty input: missing %%MatrixMarket banner")),
    }
}

fn write_entries<T: Value>(mut w: impl Write, rows: u64, cols: u64, entries: impl Iterator<Item = (u64, u64, T)>, nnz: u64) -> Result<()> {
    let mut buf = String::with_capacity(1 << 16);
    buf.push_str(&format!("%%MatrixMarket matrix coordinate {} general\n{rows} {cols} {nnz}\n", T::FIELD.name()));
    for (i, j, v) in entries {
        use std::fmt::Write as _;
        let _ = write!(buf, "{} {}", i + 1, j + 1);
        if T::FIELD != Field::Pattern {
            buf.push(' ');
            v.write_tokens(&mut buf);
        }
        buf.push('\n');
        if buf.len() > 1 << 16 {
            w.write_all(buf.as_bytes())?;
            buf.clear();
        }
    }
    w.write_all(buf.as_bytes())?;
    w.flush()?;
    Ok(())
}

/// Writes `a` as Matrix Market coordinate general (values print so they read back bit-identical).
///
/// # Errors
/// [`Error::Io`] when writing fails.
pub fn write_csr<I: Index, T: Value>(w: impl Write, a: &Csr<I, T>) -> Result<()> {
    let entries = (0..a.rows() as usize).flat_map(move |i| (a.ptr()[i].to_usize()..a.ptr()[i + 1].to_usize()).map(move |k| (i as u64, a.idx()[k].to_u64(), a.vals()[k])));
    write_entries(w, a.rows(), a.cols(), entries, a.nnz())
}

/// Writes `a` as Matrix Market coordinate general, entries in stored order.
///
/// # Errors
/// [`Error::Io`] when writing fails.
pub fn write_coo<I: Index, T: Value>(w: impl Write, a: &Coo<I, T>) -> Result<()> {
    let entries = (0..a.nnz() as usize).map(|k| (a.row()[k].to_u64(), a.col()[k].to_u64(), a.vals()[k]));
    write_entries(w, a.rows(), a.cols(), entries, a.nnz())
}
