//! Matrix Market reading and writing.
//!
//! Reading follows `POLICY.md` of the conformance corpus: accept what real files contain, refuse
//! anything that would lose or invent data, never panic. Every refusal is [`Error::Parse`] with
//! the 1-based line number and what was wrong. Compressed input (gzip, zstd, xz, bzip2) is detected by its magic bytes.
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

use crate::compress::Codec;
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

/// Longest token quoted whole in an error message; longer ones are cut with an ellipsis.
pub const QUOTE_MAX: usize = 40;

/// `tok` for an error message: whole when short, else its first [`QUOTE_MAX`] characters and
/// `…` with the length.
pub fn quote(tok: &str) -> String {
    match tok.char_indices().nth(QUOTE_MAX) {
        None => tok.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes)", &tok[..cut], tok.len()),
    }
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

    fn check(&mut self, mut s: usize, mut e: usize) -> Result<(u64, usize, usize)> {
        self.no += 1;
        if self.no == 1 {
            // A UTF-8 byte-order mark before the banner is skipped (editors on Windows write it).
            if self.buf[s..e].starts_with(b"\xEF\xBB\xBF") {
                s += 3;
            }
            // Binary data reaches here as a "line" of control bytes: say so rather than report
            // whatever its bytes happen to look like (a bare CR, an invalid banner).
            let first = &self.buf[s..e];
            if first.iter().any(|&b| b == 0 || (b < 0x20 && !matches!(b, b'\t' | b'\r' | 0x0c))) || std::str::from_utf8(first).is_err() {
                return Err(perr(1, "not a Matrix Market file (binary data)"));
            }
        }
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
        return Err(perr(no, format!("missing or invalid banner `{}` (expected %%MatrixMarket)", quote(first))));
    }
    if toks.len() != 5 {
        return Err(perr(no, format!("banner needs 4 words after %%MatrixMarket (object format field symmetry), found {}", toks.len() - 1)));
    }
    match toks[1].as_str() {
        "matrix" => {}
        "vector" => return Err(perr(no, "`vector` objects are not supported")),
        o => return Err(perr(no, format!("invalid object `{}`", quote(o)))),
    }
    let format = match toks[2].as_str() {
        "coordinate" => Format::Coordinate,
        "array" => Format::Array,
        f => return Err(perr(no, format!("invalid format `{}`", quote(f)))),
    };
    let field = match toks[3].as_str() {
        "real" => Field::Real,
        "integer" => Field::Integer,
        "complex" => Field::Complex,
        "pattern" => Field::Pattern,
        f => return Err(perr(no, format!("invalid field `{}`", quote(f)))),
    };
    let symmetry = match toks[4].as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => Symmetry::Hermitian,
        s => return Err(perr(no, format!("invalid symmetry `{}`", quote(s)))),
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
        return Err(perr(no, format!("{what} `{}` is negative", quote(tok))));
    }
    let digits = b.strip_prefix(b"+").unwrap_or(b);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(perr(no, format!("{what} `{}` is not a non-negative integer", quote(tok))));
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add((d - b'0') as u64))
            .ok_or_else(|| perr(no, format!("{what} `{}` is out of range", quote(tok))))?;
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
            return Err(perr(no, format!("extra token `{}` on {what} line (expected {want} tokens)", quote(t))));
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
    /// Which entries are kept ([`Share`]).
    share: Share,
}

/// What a read keeps: every entry, the entries of some rows (their row numbers made relative to
/// the first), or only the count of each row's entries.
#[derive(Clone, Debug)]
enum Share {
    All,
    Rows(u64, u64),
    Count(Vec<u64>),
}

impl<I: Index, T: Value> Sink<I, T> {
    /// Room for one more entry: grows by doubling, but fallibly (running out of memory is an
    /// error, not an abort).
    fn room(&mut self) -> Result<()> {
        if self.row.len() == self.row.capacity() {
            let more = self.row.len().max(1 << 10);
            let bytes = (more * (2 * std::mem::size_of::<I>() + std::mem::size_of::<T>())) as u64;
            let oom = |_| Error::HostMemory { bytes, what: "coordinate entries" };
            self.row.try_reserve(more).map_err(oom)?;
            self.col.try_reserve(more).map_err(oom)?;
            self.vals.try_reserve(more).map_err(oom)?;
        }
        Ok(())
    }

    fn push(&mut self, i: u64, j: u64, r: Raw<'_>, no: u64) -> Result<()> {
        if let Share::Count(c) = &mut self.share {
            // Counting only: the values are read (and checked) by the pass that keeps them.
            c[i as usize] += 1;
            if i != j && self.sym != Symmetry::General {
                c[j as usize] += 1;
            }
            return Ok(());
        }
        let v = T::from_raw(r).map_err(|m| perr(no, m))?;
        let mirror = if i == j {
            if self.sym == Symmetry::SkewSymmetric && !raw_is_zero(r) {
                return Err(perr(no, "skew-symmetric matrix with a nonzero diagonal entry"));
            }
            if self.sym == Symmetry::Hermitian && !raw_imag_is_zero(r) {
                return Err(perr(no, "hermitian matrix with a non-real diagonal entry"));
            }
            None
        } else {
            match self.sym {
                Symmetry::General => None,
                Symmetry::Symmetric => Some(v),
                Symmetry::SkewSymmetric => Some(v.neg()),
                Symmetry::Hermitian => Some(v.conj()),
            }
        };
        // Every row from 0, or a share's rows, numbered from its first.
        let (first, end) = if let Share::Rows(r0, r1) = self.share { (r0, r1) } else { (0, u64::MAX) };
        for (a, b, x) in std::iter::once((i, j, v)).chain(mirror.map(|m| (j, i, m))) {
            if a < first || a >= end {
                continue;
            }
            self.room()?;
            // Dimensions (a share's rows) were checked to fit I, so these conversions cannot fail.
            self.row.push(I::from_u64(a - first).unwrap_or_default());
            self.col.push(I::from_u64(b).unwrap_or_default());
            self.vals.push(x);
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
    parse_limited(src, size_hint, None)
}

/// Host bytes that reading a matrix of `rows` rows and `entries` stored entries (after symmetric
/// expansion) into CSR takes at its peak, with index type `I` and values `T`: the coordinate
/// arrays, then the counting sort's offsets (`u64`) and the row pointer beside them
/// ([`Coo::try_into_csr`]).
pub fn read_bytes_estimate<I: Index, T: Value>(rows: u64, entries: u64) -> u64 {
    let (i, v) = (std::mem::size_of::<I>() as u64, std::mem::size_of::<T>() as u64);
    entries.saturating_mul(2 * i + v).saturating_add(rows.saturating_add(1).saturating_mul(8 + i))
}

/// [`parse_reader`] that refuses, right after the size line and before reserving anything, a
/// matrix whose reading would need more than `limit` bytes of host memory
/// ([`read_bytes_estimate`]); reservations are fallible throughout.
fn parse_limited<I: Index, T: Value>(src: impl Read, size_hint: Option<u64>, limit: Option<u64>) -> Result<Coo<I, T>> {
    let mut check = |rows: u64, cols: u64, entries: u64| -> Result<()> {
        let need = read_bytes_estimate::<I, T>(rows, entries);
        match limit {
            Some(limit) if need > limit => Err(Error::MemoryLimit { rows, cols, entries, need, limit }),
            _ => Ok(()),
        }
    };
    parse_checked(src, size_hint, &mut check)
}

/// The reader, with `check(rows, cols, entries)` called right after the size line, before
/// anything is reserved; its error stops the read.
fn parse_checked<I: Index, T: Value>(
    src: impl Read,
    size_hint: Option<u64>,
    check: &mut dyn FnMut(u64, u64, u64) -> Result<()>,
) -> Result<Coo<I, T>> {
    parse_share(src, size_hint, check, Share::All).map(|(c, _)| c)
}

/// [`parse_checked`] keeping what `share` says: for [`Share::Rows`] a matrix of the share's rows
/// (`check` then sees the share's row count and the whole file's entries), for [`Share::Count`]
/// an empty matrix and the counts.
fn parse_share<I: Index, T: Value>(
    src: impl Read,
    size_hint: Option<u64>,
    check: &mut dyn FnMut(u64, u64, u64) -> Result<()>,
    mut share: Share,
) -> Result<(Coo<I, T>, Share)> {
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
    // A share keeps its own rows (relative), any number of the file's entries up to I's range.
    let kept_rows = match &mut share {
        Share::All => rows,
        Share::Rows(r0, r1) => {
            if *r0 > *r1 || *r1 > rows {
                return Err(Error::InvalidParameter { what: "rows to read", msg: format!("{r0} .. {r1} of {rows}") });
            }
            *r1 - *r0
        }
        Share::Count(c) => {
            let n = usize::try_from(rows).map_err(|_| perr(no, "row count past this machine's memory"))?;
            c.try_reserve_exact(n).map_err(|_| Error::HostMemory { bytes: rows.saturating_mul(8), what: "row counts" })?;
            c.resize(n, 0);
            0
        }
    };
    let whole = matches!(share, Share::All);
    let fits_entries = if h.format == Format::Coordinate && whole { stored_max } else { 0 };
    check_fits::<I>(kept_rows, cols, fits_entries).map_err(|e| perr(no, e.to_string()))?;
    // Array files store their nonzeros only: their declared count is a bound, not a need.
    check(kept_rows, cols, if h.format == Format::Coordinate { stored_max } else { 0 })?;
    // Reserve no more than the input can hold (a line is at least 4 bytes), and without a size
    // hint no more than 2^24 entries (growing past that doubles in place); a share grows as it
    // goes.
    let cap = if whole { (stored_max as usize).min(expand as usize * size_hint.map_or(1 << 24, |b| b as usize / 4 + 1)) } else { 0 };
    let mut sink = Sink::<I, T> { sym: h.symmetry, row: Vec::new(), col: Vec::new(), vals: Vec::new(), share };
    let bytes = (cap * (2 * std::mem::size_of::<I>() + std::mem::size_of::<T>())) as u64;
    let oom = |_| Error::HostMemory { bytes, what: "coordinate entries" };
    sink.row.try_reserve_exact(cap).map_err(oom)?;
    sink.col.try_reserve_exact(cap).map_err(oom)?;
    sink.vals.try_reserve_exact(cap).map_err(oom)?;
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
    check_fits::<I>(kept_rows, cols, sink.row.len() as u64)?;
    let kept = coo_unchecked(kept_rows, cols, sink.row, sink.col, sink.vals);
    Ok((kept, sink.share))
}

/// `reader`, decompressed when it starts with a compressed format's magic bytes (gzip, zstd,
/// xz, bzip2: [`crate::compress::Codec::detect`], the one place that decides), and the format.
fn decompress<'a, R: BufRead + 'a>(mut reader: R) -> Result<(Box<dyn Read + 'a>, Option<Codec>)> {
    // The first bytes, however the source delivers them (a pipe may give one at a time).
    let mut magic = Vec::with_capacity(crate::compress::MAGIC_LEN);
    while magic.len() < crate::compress::MAGIC_LEN {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::Io(e)),
        };
        if buf.is_empty() {
            break;
        }
        let take = buf.len().min(crate::compress::MAGIC_LEN - magic.len());
        magic.extend_from_slice(&buf[..take]);
        reader.consume(take);
    }
    let codec = Codec::detect(&magic);
    let whole = std::io::BufReader::new(std::io::Cursor::new(magic).chain(reader));
    match codec {
        Some(c) => Ok((c.decoder(whole).map_err(|e| compressed_context(Error::Io(e), codec))?, codec)),
        None => Ok((Box::new(whole), None)),
    }
}

/// Reads all of `reader`, decompressing it when it starts with a compressed format's magic bytes
/// (gzip, zstd, xz, bzip2).
///
/// # Errors
/// [`Error::Io`] when reading or decompressing fails.
pub fn read_bytes(reader: impl Read) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    decompress(std::io::BufReader::new(reader))?.0.read_to_end(&mut data)?;
    Ok(data)
}

/// A Matrix Market input opened once: a file, or standard input for `-`; decompressed when it
/// starts with the magic bytes of gzip, zstd, xz or bzip2; the `NAME/NAME.mtx` member of a tar archive (SuiteSparse's
/// `NAME.tar.gz`); or a SciPy `.npz` archive (`scipy.sparse.save_npz`: CSR, CSC or COO, read
/// whole, its header made `coordinate <field> general`); its banner already parsed (so the value type can be chosen)
/// while the stream still starts at the banner. Pipes, FIFOs and process substitutions work: the
/// input is read exactly once, in chunks.
pub struct Input {
    header: Header,
    codec: Option<Codec>,
    /// The archive member read, for a tar archive (SuiteSparse's `NAME.tar.gz`).
    member: Option<String>,
    size_hint: Option<u64>,
    stream: Source,
}

/// Where the entries come from: Matrix Market text, or a SciPy `.npz` archive read whole.
enum Source {
    Text(Box<dyn Read>),
    Npz(crate::npz::Npz),
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input").field("header", &self.header).field("compression", &self.codec).finish()
    }
}

impl Input {
    /// Opens `path` (`-`: standard input) and reads its banner.
    ///
    /// # Errors
    /// [`Error::Open`] when the file cannot be opened, [`Error::Parse`] for a missing or bad
    /// banner (binary data and corrupt compressed streams are named as such), [`Error::Io`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        if path.as_os_str() == "-" {
            return Self::from_reader(Box::new(std::io::stdin()), None);
        }
        let f = std::fs::File::open(path).map_err(|source| Error::Open { path: path.to_path_buf(), source })?;
        let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
        Self::from_reader(Box::new(f), len)
    }

    /// An input from any reader (`len`: its length when known, for plain text).
    ///
    /// # Errors
    /// As [`Input::open`], without the opening.
    pub fn from_reader(src: Box<dyn Read>, len: Option<u64>) -> Result<Self> {
        let (reader, codec) = decompress(std::io::BufReader::with_capacity(1 << 16, src))?;
        // A tar archive (SuiteSparse's NAME.tar.gz, or a plain .tar): its NAME/NAME.mtx member.
        let mut first = [0u8; 512];
        let mut got = 0;
        let mut reader = reader;
        while got < 512 {
            match reader.read(&mut first[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(compressed_context(Error::Io(e), codec)),
            }
        }
        if crate::npz::is_zip(&first[..got]) {
            // A SciPy .npz archive (zip needs the whole file: read it, from a file or a pipe).
            let mut bytes = first[..got].to_vec();
            reader.read_to_end(&mut bytes).map_err(|e| compressed_context(Error::Io(e), codec))?;
            let npz = crate::npz::Npz::from_bytes(bytes)?;
            let header = Header { format: Format::Coordinate, field: npz.field()?, symmetry: Symmetry::General };
            return Ok(Self { header, codec, member: None, size_hint: None, stream: Source::Npz(npz) });
        }
        let (mut reader, member, len): (Box<dyn Read>, _, _) = if got == 512 && crate::archive::is_tar_header(&first) {
            let (r, name, size) = crate::archive::matrix_member(first, reader).map_err(|e| compressed_context(e, codec))?;
            (r, Some(name), Some(size))
        } else {
            (Box::new(std::io::Cursor::new(first[..got].to_vec()).chain(reader)), None, if codec.is_some() { None } else { len })
        };
        // The banner: bytes up to the first newline (at most 4 KiB), kept to be replayed.
        let mut head = Vec::with_capacity(256);
        let mut byte = [0u8; 256];
        while !head.contains(&b'\n') && head.len() < 4096 {
            let n = match reader.read(&mut byte) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(compressed_context(Error::Io(e), codec)),
            };
            if n == 0 {
                break;
            }
            head.extend_from_slice(&byte[..n]);
        }
        let header = {
            let mut lines = Lines::new(&head[..], Some(head.len() as u64));
            match lines.next_line() {
                Ok(Some((no, banner))) => parse_banner(banner, no),
                Ok(None) => Err(perr(1, "empty input: missing %%MatrixMarket banner")),
                Err(e) => Err(e),
            }
        }
        .map_err(|e| compressed_context(e, codec))?;
        let stream = Source::Text(Box::new(std::io::Cursor::new(head).chain(reader)));
        Ok(Self { header, codec, member, size_hint: len, stream })
    }

    /// The parsed banner.
    pub fn header(&self) -> Header {
        self.header
    }

    /// Whether the input was gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.codec == Some(Codec::Gzip)
    }

    /// The compressed format the input came in, if any.
    pub fn compression(&self) -> Option<Codec> {
        self.codec
    }

    /// The member read when the input was a tar archive (`NAME/NAME.mtx`).
    pub fn member(&self) -> Option<&str> {
        self.member.as_deref()
    }

    /// Reads the matrix into COO (32-bit indices), streaming.
    ///
    /// # Errors
    /// As [`parse_reader`].
    pub fn read_coo<T: Value>(self) -> Result<Coo<u32, T>> {
        self.read_coo_limited(None)
    }

    /// [`Input::read_coo`], refusing before reserving anything a matrix whose reading needs more
    /// than `limit` bytes of host memory ([`read_bytes_estimate`]).
    ///
    /// # Errors
    /// As [`parse_reader`], and [`Error::MemoryLimit`].
    pub fn read_coo_limited<T: Value>(self, limit: Option<u64>) -> Result<Coo<u32, T>> {
        let codec = self.codec;
        match self.stream {
            Source::Text(s) => parse_limited(s, self.size_hint, limit).map_err(|e| compressed_context(e, codec)),
            Source::Npz(npz) => {
                let (rows, cols, entries) = npz.dims();
                let need = read_bytes_estimate::<u32, T>(rows, entries);
                match limit {
                    Some(limit) if need > limit => Err(Error::MemoryLimit { rows, cols, entries, need, limit }),
                    _ => npz.into_coo(),
                }
            }
        }
    }

    /// Reads the matrix into CSR, calling `check(rows, cols, entries)` right after the size line
    /// and before anything is reserved (entries counted after symmetric expansion; 0 for array
    /// files): a caller that needs more memory for what follows (a transpose, a device copy)
    /// refuses there, with [`Error::MemoryLimit`] or any error of its own.
    ///
    /// # Errors
    /// As [`Input::read_csr`], and `check`'s.
    pub fn read_csr_checked<T: Value>(self, check: &mut dyn FnMut(u64, u64, u64) -> Result<()>) -> Result<Csr<u32, T>> {
        self.read_csr_checked_as::<u32, T>(check)
    }

    /// [`Input::read_csr_checked`] into index type `I`: with `u64`, files of more than
    /// `u32::MAX` entries are read (streaming, as always).
    ///
    /// # Errors
    /// As [`Input::read_csr_checked`]; [`Error::TooLarge`] for sizes past `I`.
    pub fn read_csr_checked_as<I: Index, T: Value>(self, check: &mut dyn FnMut(u64, u64, u64) -> Result<()>) -> Result<Csr<I, T>> {
        let codec = self.codec;
        match self.stream {
            Source::Text(s) => parse_checked::<I, T>(s, self.size_hint, check).map_err(|e| compressed_context(e, codec))?.try_into_csr(),
            Source::Npz(npz) => {
                let (rows, cols, entries) = npz.dims();
                check(rows, cols, entries)?;
                npz.into_coo::<I, T>()?.try_into_csr()
            }
        }
    }

    /// The number of entries of each row (after symmetric expansion; duplicates counted once
    /// each), streaming, nothing else kept: the first pass of reading a share
    /// ([`Input::read_csr_rows`]), to cut the rows by nonzeros. Returns `(rows, cols, counts)`.
    ///
    /// # Errors
    /// As [`parse_reader`]; [`Error::HostMemory`] when the counts do not fit.
    pub fn row_counts(self) -> Result<(u64, u64, Vec<u64>)> {
        let codec = self.codec;
        match self.stream {
            Source::Text(s) => {
                let (c, share) = parse_share::<u32, f64>(s, self.size_hint, &mut |_, _, _| Ok(()), Share::Count(Vec::new()))
                    .map_err(|e| compressed_context(e, codec))?;
                let Share::Count(counts) = share else { return Err(Error::InvalidParameter { what: "row counts", msg: "not counted".into() }) };
                Ok((counts.len() as u64, c.cols(), counts))
            }
            Source::Npz(npz) => {
                let coo = npz.into_coo::<u64, f64>()?;
                let mut counts = vec![0u64; coo.rows() as usize];
                for &r in coo.row() {
                    counts[r as usize] += 1;
                }
                Ok((coo.rows(), coo.cols(), counts))
            }
        }
    }

    /// Reads rows `r0 .. r1` only, streaming, as a CSR of `r1 − r0` rows (row `r0` first) and
    /// every column (duplicates summed, columns sorted in each row): one rank's share of a
    /// matrix too large for one host's memory. The file's total entries may pass `u32::MAX`;
    /// the share's may not. `limit` bounds the host memory of the share, checked once its
    /// entries are read (the size line gives only the whole file's count), before the CSR is
    /// built.
    ///
    /// # Errors
    /// As [`parse_reader`]; [`Error::InvalidParameter`] for rows outside the matrix;
    /// [`Error::TooLarge`] for a share past 32-bit sizes; [`Error::MemoryLimit`] past `limit`.
    pub fn read_csr_rows<T: Value>(self, r0: u64, r1: u64, limit: Option<u64>) -> Result<Csr<u32, T>> {
        let codec = self.codec;
        match self.stream {
            Source::Text(s) => {
                let (c, _) =
                    parse_share::<u32, T>(s, self.size_hint, &mut |_, _, _| Ok(()), Share::Rows(r0, r1)).map_err(|e| compressed_context(e, codec))?;
                let need = read_bytes_estimate::<u32, T>(c.rows(), c.nnz());
                if let Some(limit) = limit.filter(|&l| need > l) {
                    return Err(Error::MemoryLimit { rows: c.rows(), cols: c.cols(), entries: c.nnz(), need, limit });
                }
                c.try_into_csr()
            }
            Source::Npz(npz) => {
                let coo = npz.into_coo::<u64, T>()?;
                if r0 > r1 || r1 > coo.rows() {
                    return Err(Error::InvalidParameter { what: "rows to read", msg: format!("{r0} .. {r1} of {}", coo.rows()) });
                }
                let keep: Vec<usize> = (0..coo.nnz() as usize).filter(|&k| (r0..r1).contains(&coo.row()[k])).collect();
                let narrow = |v: u64| u32::try_from(v).map_err(|_| Error::TooLarge { what: "index of a share", len: v, max: u32::MAX as u64 });
                let row = keep.iter().map(|&k| narrow(coo.row()[k] - r0)).collect::<Result<Vec<_>>>()?;
                let col = keep.iter().map(|&k| narrow(coo.col()[k])).collect::<Result<Vec<_>>>()?;
                let vals = keep.iter().map(|&k| coo.vals()[k]).collect();
                check_fits::<u32>(r1 - r0, coo.cols(), row.len() as u64)?;
                coo_unchecked(r1 - r0, coo.cols(), row, col, vals).try_into_csr()
            }
        }
    }

    /// Reads the matrix into CSR (duplicates summed, columns sorted in each row); running out of
    /// host memory is an error.
    ///
    /// # Errors
    /// As [`Input::read_coo_limited`], and [`Error::HostMemory`].
    pub fn read_csr<T: Value>(self, limit: Option<u64>) -> Result<Csr<u32, T>> {
        self.read_coo_limited::<T>(limit)?.try_into_csr()
    }
}

/// Adds "the input was compressed" to the errors a corrupt compressed stream causes: I/O errors
/// of the decoder, and garbage where the banner should be.
fn compressed_context(e: Error, codec: Option<Codec>) -> Error {
    let Some(codec) = codec else { return e };
    let name = codec.name();
    match e {
        Error::Parse { line: 1, msg } => {
            Error::Parse { line: 1, msg: format!("{msg}; the input is {name}-compressed: the compressed stream may be corrupt") }
        }
        Error::Io(io) => {
            Error::Io(std::io::Error::new(io.kind(), format!("{io} (reading the {name}-compressed input: the stream may be corrupt or truncated)")))
        }
        e => e,
    }
}

/// Reads a `.mtx` or `.mtx.gz` file (`-`: standard input) into COO (32-bit indices),
/// streaming: the input is never held in memory whole.
///
/// # Errors
/// As [`parse_reader`]; [`Error::Open`] when the file cannot be opened.
pub fn read_coo<T: Value>(path: impl AsRef<Path>) -> Result<Coo<u32, T>> {
    Input::open(path)?.read_coo()
}

/// Reads a `.mtx` or `.mtx.gz` file into CSR (duplicates summed, columns sorted in each row).
/// Streams the file and compresses in place ([`Coo::try_into_csr`]): peak memory is the
/// coordinate arrays, about 1.3 times the resulting CSR for u32 indices and f64 values.
///
/// # Errors
/// As [`read_coo`], and [`Error::HostMemory`].
pub fn read_csr<T: Value>(path: impl AsRef<Path>) -> Result<Csr<u32, T>> {
    Input::open(path)?.read_csr(None)
}

/// The banner of a `.mtx` or `.mtx.gz` file (its first line).
///
/// # Errors
/// As [`Input::open`].
pub fn read_header(path: impl AsRef<Path>) -> Result<Header> {
    Ok(Input::open(path)?.header())
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
    let entries = (0..a.rows() as usize)
        .flat_map(move |i| (a.ptr()[i].to_usize()..a.ptr()[i + 1].to_usize()).map(move |k| (i as u64, a.idx()[k].to_u64(), a.vals()[k])));
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
