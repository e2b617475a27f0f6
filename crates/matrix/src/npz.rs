//! SciPy sparse matrices saved by `scipy.sparse.save_npz`: a zip archive of NumPy `.npy`
//! arrays (`format`, `shape`, and `indptr`/`indices`/`data` for CSR and CSC, `row`/`col`/`data`
//! for COO), read into COO for the same checks and conversions as Matrix Market input.
//!
//! The zip container is read by the `zip` crate; the `.npy` arrays (1-D, little-endian numbers
//! and the short `format` string) by a small parser here: the `npyz` crate's `.npz` support
//! would pin an old `zip` with C compression libraries.
use std::io::{Read, Write};

use crate::value::{Field, Raw};
use crate::{Coo, Error, Index, Result, Value};

/// Whether `head` (a file's first bytes) starts a zip archive (`PK\x03\x04`, or `PK\x05\x06`
/// for an empty one).
pub fn is_zip(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06")
}

fn err(msg: impl Into<String>) -> Error {
    Error::Npz(msg.into())
}

/// One `.npy` array: its element type (NumPy's `descr`), length and raw little-endian bytes.
#[derive(Debug)]
struct Npy {
    descr: String,
    len: usize,
    bytes: Vec<u8>,
}

/// Parses a `.npy` file: magic, version, header dict (`descr`, `fortran_order`, `shape`), data.
fn parse_npy(name: &str, raw: Vec<u8>) -> Result<Npy> {
    let bad = |m: &str| err(format!("{name}: {m}"));
    if raw.len() < 10 || &raw[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy array (no \\x93NUMPY magic)"));
    }
    let (hlen, start) = match raw[6] {
        1 => (u16::from_le_bytes([raw[8], raw[9]]) as usize, 10),
        2 | 3 if raw.len() >= 12 => (u32::from_le_bytes([raw[8], raw[9], raw[10], raw[11]]) as usize, 12),
        v => return Err(bad(&format!(".npy version {v}"))),
    };
    let header = raw.get(start..start + hlen).ok_or_else(|| bad("truncated header"))?;
    let header = String::from_utf8_lossy(header).into_owned();
    let value_of = |key: &str| -> Option<String> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(if let Some(r) = rest.strip_prefix('(') {
            r[..r.find(')')?].to_string()
        } else if let Some(r) = rest.strip_prefix('\'') {
            r[..r.find('\'')?].to_string()
        } else {
            rest[..rest.find([',', '}']).unwrap_or(rest.len())].trim().to_string()
        })
    };
    let descr = value_of("descr").ok_or_else(|| bad("header without 'descr'"))?;
    let shape = value_of("shape").ok_or_else(|| bad("header without 'shape'"))?;
    let dims: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|_| bad(&format!("shape ({shape})"))))
        .collect::<Result<_>>()?;
    if dims.len() > 1 {
        return Err(bad(&format!("a {}-dimensional array; 1-D expected", dims.len())));
    }
    let len = dims.first().copied().unwrap_or(1);
    let mut bytes = raw;
    bytes.drain(..start + hlen);
    Ok(Npy { descr, len, bytes })
}

impl Npy {
    /// Item size and kind (`i`, `u`, `f`, `c`, `b`, `U`, `S`) of a little-endian or
    /// byte-order-free descr.
    fn kind(&self) -> Result<(char, usize)> {
        let d = self.descr.as_str();
        let (order, rest) = d.split_at(1);
        if order == ">" {
            return Err(err(format!("big-endian arrays ({d}) are not read")));
        }
        let (k, size) = rest.split_at(1);
        let size: usize = size.parse().map_err(|_| err(format!("dtype {d}")))?;
        let k = k.chars().next().unwrap_or('?');
        let item = match k {
            'U' => 4 * size,
            _ => size,
        };
        if self.bytes.len() < item * self.len {
            return Err(err(format!("array of {} {d} items holds only {} bytes", self.len, self.bytes.len())));
        }
        Ok((k, size))
    }

    /// The array as integers (`what` names it in errors).
    fn ints(&self, what: &str) -> Result<Vec<i64>> {
        let (k, size) = self.kind()?;
        let b = &self.bytes;
        let v: Vec<i64> = match (k, size) {
            ('i', 4) => b.chunks_exact(4).take(self.len).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64).collect(),
            ('i', 8) => b.chunks_exact(8).take(self.len).map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default())).collect(),
            ('u', 4) => b.chunks_exact(4).take(self.len).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64).collect(),
            ('i', 2) => b.chunks_exact(2).take(self.len).map(|c| i16::from_le_bytes([c[0], c[1]]) as i64).collect(),
            _ => return Err(err(format!("{what}: integer array expected, got dtype {}", self.descr))),
        };
        Ok(v)
    }

    /// The `format` string (`'csr'`, stored as a NumPy unicode or bytes scalar).
    fn text(&self) -> Result<String> {
        let (k, size) = self.kind()?;
        Ok(match k {
            'U' => self
                .bytes
                .chunks_exact(4)
                .take(size)
                .filter_map(|c| char::from_u32(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .filter(|&c| c != '\0')
                .collect(),
            'S' => self.bytes[..size.min(self.bytes.len())].iter().filter(|&&c| c != 0).map(|&c| c as char).collect(),
            _ => return Err(err(format!("format: a string expected, got dtype {}", self.descr))),
        })
    }

    /// The field the values are read as.
    fn field(&self) -> Result<Field> {
        Ok(match self.kind()?.0 {
            'f' => Field::Real,
            'i' | 'u' | 'b' => Field::Integer,
            'c' => Field::Complex,
            _ => return Err(err(format!("data: dtype {} is not a number", self.descr))),
        })
    }

    /// The values as `T` (the same rules as Matrix Market fields: complex into a real type is
    /// an error).
    fn values<T: Value>(&self) -> Result<Vec<T>> {
        let (k, size) = self.kind()?;
        let b = &self.bytes;
        let conv = |e: String| err(format!("data: {e}"));
        let out: Vec<T> = match (k, size) {
            ('f', 8) => b
                .chunks_exact(8)
                .take(self.len)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()))
                .map(float::<T>)
                .collect::<std::result::Result<_, _>>()
                .map_err(conv)?,
            ('f', 4) => b
                .chunks_exact(4)
                .take(self.len)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                .map(float::<T>)
                .collect::<std::result::Result<_, _>>()
                .map_err(conv)?,
            ('i' | 'u' | 'b', _) => {
                let ints: Vec<i64> = match (k, size) {
                    ('b', 1) | ('u', 1) => b[..self.len].iter().map(|&x| x as i64).collect(),
                    ('i', 1) => b[..self.len].iter().map(|&x| x as i8 as i64).collect(),
                    _ => self.ints("data")?,
                };
                ints.into_iter().map(|x| T::from_raw(Raw::Integer(&x.to_string()))).collect::<std::result::Result<_, _>>().map_err(conv)?
            }
            ('c', 16) | ('c', 8) => {
                let half = size / 2;
                b.chunks_exact(size)
                    .take(self.len)
                    .map(|c| {
                        let part = |p: &[u8]| {
                            if half == 8 {
                                f64::from_le_bytes(p.try_into().unwrap_or_default())
                            } else {
                                f32::from_le_bytes([p[0], p[1], p[2], p[3]]) as f64
                            }
                        };
                        let (re, im) = (part(&c[..half]), part(&c[half..]));
                        T::from_raw(Raw::Complex(&re.to_string(), &im.to_string()))
                    })
                    .collect::<std::result::Result<_, _>>()
                    .map_err(conv)?
            }
            _ => return Err(err(format!("data: dtype {} is not read", self.descr))),
        };
        Ok(out)
    }
}

/// A real value as `T` through the Matrix Market rules (exact for floats: shortest round-trip
/// text).
fn float<T: Value>(x: f64) -> std::result::Result<T, String> {
    if T::FIELD == Field::Real || T::FIELD == Field::Complex {
        return Ok(T::from_f64(x));
    }
    T::from_raw(Raw::Real(&x.to_string()))
}

/// A SciPy sparse matrix archive, its arrays read (not yet converted).
pub struct Npz {
    format: String,
    rows: u64,
    cols: u64,
    arrays: std::collections::HashMap<String, Npy>,
}

impl std::fmt::Debug for Npz {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Npz").field("format", &self.format).field("rows", &self.rows).field("cols", &self.cols).finish()
    }
}

impl Npz {
    /// Reads the archive `bytes` (all of a `.npz` file).
    ///
    /// # Errors
    /// [`Error::Npz`] naming what is missing or malformed; [`Error::Io`].
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| err(format!("not a readable zip archive: {e}")))?;
        let mut arrays = std::collections::HashMap::new();
        for i in 0..zip.len() {
            let mut f = zip.by_index(i).map_err(|e| err(format!("member {i}: {e}")))?;
            let name = f.name().trim_end_matches(".npy").to_string();
            let mut raw = Vec::new();
            f.read_to_end(&mut raw).map_err(|e| err(format!("{name}.npy: {e}")))?;
            arrays.insert(name.clone(), parse_npy(&format!("{name}.npy"), raw)?);
        }
        let get =
            |k: &str| arrays.get(k).ok_or_else(|| err(format!("no {k}.npy: not a scipy.sparse.save_npz archive (members: {})", names(&arrays))));
        let format = get("format")?.text()?;
        let shape = get("shape")?.ints("shape")?;
        if shape.len() != 2 || shape.iter().any(|&d| d < 0) {
            return Err(err(format!("shape {shape:?}: two non-negative sizes expected")));
        }
        Ok(Self { format, rows: shape[0] as u64, cols: shape[1] as u64, arrays })
    }

    /// `(rows, cols, stored entries)`.
    pub fn dims(&self) -> (u64, u64, u64) {
        (self.rows, self.cols, self.arrays.get("data").map_or(0, |d| d.len as u64))
    }

    /// The field the values are read as (`real`, `integer` or `complex`).
    ///
    /// # Errors
    /// [`Error::Npz`] without a numeric `data` array.
    pub fn field(&self) -> Result<Field> {
        self.arrays.get("data").ok_or_else(|| err("no data.npy"))?.field()
    }

    /// The matrix as COO (entries in the archive's order; CSR and CSC expanded).
    ///
    /// # Errors
    /// [`Error::Npz`] for a format other than `csr`, `csc` or `coo` or arrays of the wrong
    /// lengths; the COO checks ([`Coo::try_new`]): out-of-range indices, sizes past `I`.
    pub fn into_coo<I: Index, T: Value>(self) -> Result<Coo<I, T>> {
        let get = |k: &str| self.arrays.get(k).ok_or_else(|| err(format!("no {k}.npy for format {}", self.format)));
        let vals = get("data")?.values::<T>()?;
        let (r, c) = match self.format.as_str() {
            "coo" => (get("row")?.ints("row")?, get("col")?.ints("col")?),
            "csr" | "csc" => {
                let ptr = get("indptr")?.ints("indptr")?;
                let idx = get("indices")?.ints("indices")?;
                let major = if self.format == "csr" { self.rows } else { self.cols };
                if ptr.len() as u64 != major + 1 {
                    return Err(err(format!("indptr has {} entries, expected {}", ptr.len(), major + 1)));
                }
                if ptr.first() != Some(&0) || ptr.last().copied() != Some(idx.len() as i64) || ptr.windows(2).any(|w| w[1] < w[0]) {
                    return Err(err("indptr does not run from 0 to the number of indices without decreasing"));
                }
                let mut outer = Vec::with_capacity(idx.len());
                for (i, w) in ptr.windows(2).enumerate() {
                    outer.extend(std::iter::repeat_n(i as i64, (w[1] - w[0]) as usize));
                }
                if self.format == "csr" {
                    (outer, idx)
                } else {
                    (idx, outer)
                }
            }
            f => return Err(err(format!("format {f:?}: csr, csc and coo are read (convert with .tocsr() before save_npz)"))),
        };
        if r.len() != vals.len() || c.len() != vals.len() {
            return Err(err(format!("{} row and {} column indices for {} values", r.len(), c.len(), vals.len())));
        }
        let index = |what: &'static str, v: Vec<i64>| -> Result<Vec<I>> {
            v.into_iter()
                .enumerate()
                .map(|(p, x)| {
                    u64::try_from(x).ok().and_then(I::from_u64).ok_or(Error::BadIndexValue { what, position: p as u64, value: x.into(), max: I::MAX })
                })
                .collect()
        };
        Coo::try_new(self.rows, self.cols, index("row index", r)?, index("column index", c)?, vals)
    }
}

fn names(a: &std::collections::HashMap<String, Npy>) -> String {
    let mut v: Vec<&str> = a.keys().map(String::as_str).collect();
    v.sort();
    v.join(", ")
}

/// NumPy's dtype for `T` (little-endian), or `None` for a type NumPy lacks (`bf16`, 128-bit
/// integers). Told apart by field, size and, where those tie, by the bits of `1` and `-1`.
fn npy_descr<T: Value>() -> Option<String> {
    let size = std::mem::size_of::<T>();
    Some(match (T::FIELD, size) {
        (Field::Pattern, _) => "|b1".to_string(),
        (Field::Real, 2) if T::one().bit_pattern() == 0x3C00 => "<f2".to_string(),
        (Field::Real, 4 | 8) => format!("<f{size}"),
        (Field::Complex, 8 | 16) => format!("<c{size}"),
        (Field::Integer, 1 | 2 | 4 | 8) => {
            let signed = T::from_f64(-1.0).bit_pattern() != 0;
            format!("{}{}{size}", if size == 1 { '|' } else { '<' }, if signed { 'i' } else { 'u' })
        }
        _ => return None,
    })
}

/// A 1-D `.npy` file of `len` items of `descr` (`shape` `()` when `len` is `None`: a scalar).
fn npy(descr: &str, len: Option<usize>, data: &[u8]) -> Vec<u8> {
    let shape = len.map_or("()".to_string(), |n| format!("({n},)"));
    npy_shaped(descr, &shape, false, data)
}

/// An `.npy` file of the given shape text (`"(3, 2)"`) and memory order.
fn npy_shaped(descr: &str, shape: &str, fortran: bool, data: &[u8]) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to a multiple of 64.
    let total = (10 + header.len() + 1).next_multiple_of(64);
    header.push_str(&" ".repeat(total - 10 - header.len() - 1));
    header.push('\n');
    let mut out = Vec::with_capacity(total + data.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// Writes `a` as `scipy.sparse.save_npz` does (format `csr`, deflate-compressed members
/// `indices`, `indptr`, `format`, `shape`, `data`; int32 index arrays when every index and the
/// nonzero count fit, else int64), readable by `scipy.sparse.load_npz` and by [`Npz`].
///
/// # Errors
/// [`Error::Npz`] for a value type NumPy lacks (`bf16`, 128-bit integers); [`Error::Io`].
pub fn write_csr<I: Index, T: Value>(mut w: impl std::io::Write, a: &crate::Csr<I, T>) -> Result<()> {
    let descr = npy_descr::<T>().ok_or_else(|| err(format!("values of {} bytes ({:?}) have no NumPy dtype", std::mem::size_of::<T>(), T::FIELD)))?;
    let narrow = a.nnz() <= i32::MAX as u64 && a.rows().max(a.cols()) <= i32::MAX as u64;
    let index = |v: &[I]| -> Vec<u8> {
        if narrow {
            v.iter().flat_map(|x| (x.to_u64() as i32).to_le_bytes()).collect()
        } else {
            v.iter().flat_map(|x| (x.to_u64() as i64).to_le_bytes()).collect()
        }
    };
    let idescr = if narrow { "<i4" } else { "<i8" };
    let size = std::mem::size_of::<T>();
    let data: Vec<u8> = match T::FIELD {
        Field::Pattern => vec![1u8; a.nnz() as usize],
        // `bit_pattern` holds the real part's bits above bit 64 and the imaginary part's below;
        // NumPy stores the real part first.
        Field::Complex => a
            .vals()
            .iter()
            .flat_map(|v| {
                let b = v.bit_pattern();
                let (re, im) = ((b >> 64) as u64, b as u64);
                re.to_le_bytes().into_iter().take(size / 2).chain(im.to_le_bytes().into_iter().take(size / 2))
            })
            .collect(),
        _ => a.vals().iter().flat_map(|v| v.bit_pattern().to_le_bytes().into_iter().take(size)).collect(),
    };
    let shape: Vec<u8> = [a.rows() as i64, a.cols() as i64].iter().flat_map(|x| x.to_le_bytes()).collect();
    let members: [(&str, Vec<u8>); 5] = [
        ("indices.npy", npy(idescr, Some(a.idx().len()), &index(a.idx()))),
        ("indptr.npy", npy(idescr, Some(a.ptr().len()), &index(a.ptr()))),
        ("format.npy", npy("<U3", None, &"csr".chars().flat_map(|c| (c as u32).to_le_bytes()).collect::<Vec<u8>>())),
        ("shape.npy", npy("<i8", Some(2), &shape)),
        ("data.npy", npy(&descr, Some(a.nnz() as usize), &data)),
    ];
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated).large_file(true);
    for (name, bytes) in &members {
        zip.start_file(*name, opts).map_err(|e| err(format!("{name}: {e}")))?;
        zip.write_all(bytes)?;
    }
    let bytes = zip.finish().map_err(|e| err(e.to_string()))?.into_inner();
    w.write_all(&bytes)?;
    Ok(())
}

/// Whether `head` starts a NumPy `.npy` file.
pub fn is_npy(head: &[u8]) -> bool {
    head.starts_with(b"\x93NUMPY")
}

/// A 1-D `.npy` array of real or integer numbers (NumPy's `np.save` of a vector) as `T`
/// (`T::from_f64`; complex arrays refused).
///
/// # Errors
/// [`Error::Npz`] for a malformed file, another dtype or more than one dimension.
pub fn read_npy_vector<T: Value>(bytes: Vec<u8>) -> Result<Vec<T>> {
    let a = parse_npy("the .npy vector", bytes)?;
    match a.kind()?.0 {
        'f' | 'i' | 'u' | 'b' => a.values::<f64>().map(|v| v.into_iter().map(T::from_f64).collect()),
        _ => Err(err(format!("the .npy vector: dtype {} (real or integer numbers expected)", a.descr))),
    }
}

/// Writes a `rows × cols` matrix stored column-major in `values` as a 2-D `.npy` array in
/// Fortran order (`np.load` gives the `(rows, cols)` array).
///
/// # Errors
/// [`Error::LengthMismatch`] unless `values` holds `rows · cols` entries; [`Error::Npz`] for a
/// value type NumPy lacks; [`Error::Io`].
pub fn write_npy_matrix<T: Value>(mut w: impl std::io::Write, rows: usize, cols: usize, values: &[T]) -> Result<()> {
    if rows.checked_mul(cols) != Some(values.len()) {
        return Err(Error::LengthMismatch {
            what: "npy matrix values",
            expected: (rows as u64).saturating_mul(cols as u64),
            got: values.len() as u64,
        });
    }
    let descr = npy_descr::<T>().ok_or_else(|| err("values with no NumPy dtype"))?;
    let size = std::mem::size_of::<T>();
    let data: Vec<u8> = values.iter().flat_map(|v| v.bit_pattern().to_le_bytes().into_iter().take(size)).collect();
    w.write_all(&npy_shaped(&descr, &format!("({rows}, {cols})"), true, &data))?;
    Ok(())
}

/// Writes `values` as a 1-D `.npy` array (`np.load` reads it).
///
/// # Errors
/// [`Error::Npz`] for a value type NumPy lacks; [`Error::Io`].
pub fn write_npy_vector<T: Value>(mut w: impl std::io::Write, values: &[T]) -> Result<()> {
    let descr = npy_descr::<T>().ok_or_else(|| err("values with no NumPy dtype"))?;
    let size = std::mem::size_of::<T>();
    let data: Vec<u8> = values.iter().flat_map(|v| v.bit_pattern().to_le_bytes().into_iter().take(size)).collect();
    w.write_all(&npy(&descr, Some(values.len()), &data))?;
    Ok(())
}
