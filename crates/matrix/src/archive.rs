//! Matrices inside tar archives, as SuiteSparse distributes them: `NAME.tar.gz` holding
//! `NAME/NAME.mtx` (beside right-hand sides and coordinates such as `NAME/NAME_b.mtx`).
//!
//! A minimal streaming reader of the tar format (ustar and GNU headers, GNU long names, pax
//! `path` records), hand-written rather than taken from the `tar` crate because the matrix
//! member must be handed on as an owned `Read` over a stream read once (standard input, a
//! pipe): the `tar` crate's entries borrow their archive.
use std::io::Read;

use crate::{Error, Result};

/// Whether `block` (the first 512 bytes of a stream) is a tar header: the ustar magic at
/// offset 257 (POSIX `ustar\0` or GNU `ustar  `).
pub fn is_tar_header(block: &[u8]) -> bool {
    block.len() >= 263 && &block[257..262] == b"ustar"
}

/// A NUL-terminated header field as text.
fn field(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// A numeric header field: octal text, or GNU base-256 (high bit of the first byte set).
fn number(b: &[u8]) -> Result<u64> {
    if b.first().is_some_and(|c| c & 0x80 != 0) {
        let mut v: u64 = (b[0] & 0x7f) as u64;
        for &c in &b[1..] {
            v = v.checked_mul(256).and_then(|v| v.checked_add(c as u64)).ok_or_else(|| archive_err("member size overflows"))?;
        }
        return Ok(v);
    }
    let t = field(b);
    let t = t.trim_matches(|c: char| c == ' ' || c == '\0');
    if t.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(t, 8).map_err(|_| archive_err(&format!("bad size field {t:?}")))
}

fn archive_err(msg: &str) -> Error {
    Error::Archive(msg.to_string())
}

/// Whether `name` is the matrix of its folder: `D/D.mtx` (SuiteSparse's layout).
fn is_main_matrix(name: &str) -> bool {
    let path = std::path::Path::new(name);
    let (Some(stem), Some(dir)) = (path.file_stem(), path.parent().and_then(|p| p.file_name())) else { return false };
    path.extension().is_some_and(|e| e == "mtx") && stem == dir
}

/// Reads `n` bytes and drops them (a member's data with its padding).
fn skip(r: &mut dyn Read, n: u64) -> Result<()> {
    let got = std::io::copy(&mut r.take(n), &mut std::io::sink())?;
    if got < n {
        return Err(archive_err("truncated member"));
    }
    Ok(())
}

/// Reads a member's data (a long name or pax records) whole, skipping its padding.
fn data(r: &mut dyn Read, size: u64) -> Result<Vec<u8>> {
    if size > 1 << 20 {
        return Err(archive_err("a name record larger than 1 MiB"));
    }
    let mut v = vec![0u8; size as usize];
    r.read_exact(&mut v).map_err(|_| archive_err("truncated member"))?;
    skip(r, size.next_multiple_of(512) - size)?;
    Ok(v)
}

/// The matrix member of the tar stream `r`, whose first header block `first` was already read:
/// the first `D/D.mtx` member, as a reader of its bytes, with its name and size. Other members
/// are skipped.
///
/// # Errors
/// [`Error::Archive`] naming the `.mtx` members found when none is `D/D.mtx`, or a malformed
/// or truncated archive; [`Error::Io`].
pub fn matrix_member(first: [u8; 512], mut r: Box<dyn Read>) -> Result<(Box<dyn Read>, String, u64)> {
    let mut header = first;
    let mut long_name: Option<String> = None;
    let mut seen = Vec::new();
    loop {
        if header.iter().all(|&b| b == 0) {
            let found = if seen.is_empty() { "none".to_string() } else { seen.join(", ") };
            return Err(archive_err(&format!("no NAME/NAME.mtx member (the SuiteSparse layout); .mtx members: {found}")));
        }
        let size = number(&header[124..136])?;
        let kind = header[156];
        let name = long_name.take().unwrap_or_else(|| {
            let (prefix, name) = (field(&header[345..500]), field(&header[0..100]));
            if is_tar_header(&header) && !prefix.is_empty() {
                format!("{prefix}/{name}")
            } else {
                name
            }
        });
        match kind {
            b'L' => long_name = Some(field(&data(&mut r, size)?)),
            b'x' => {
                let records = data(&mut r, size)?;
                long_name = String::from_utf8_lossy(&records)
                    .lines()
                    .find_map(|l| l.split_once(' ').and_then(|(_, kv)| kv.strip_prefix("path=")).map(String::from));
            }
            b'0' | 0 if is_main_matrix(&name) => return Ok((Box::new(r.take(size)), name, size)),
            _ => {
                if name.ends_with(".mtx") {
                    seen.push(name);
                }
                skip(&mut r, size.next_multiple_of(512))?;
            }
        }
        r.read_exact(&mut header).map_err(|_| archive_err("truncated: no end-of-archive blocks"))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ustar header for `name` of `size` bytes (checksum not needed by this reader).
    fn header(name: &str, size: usize, kind: u8) -> [u8; 512] {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        let s = format!("{size:011o}\0");
        h[124..136].copy_from_slice(s.as_bytes());
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h
    }

    fn member_of(out: &mut Vec<u8>, name: &str, body: &[u8], kind: u8) {
        out.extend_from_slice(&header(name, body.len(), kind));
        out.extend_from_slice(body);
        out.resize(out.len().next_multiple_of(512), 0);
    }

    fn member(out: &mut Vec<u8>, name: &str, body: &[u8]) {
        member_of(out, name, body, b'0');
    }

    fn open(bytes: Vec<u8>) -> Result<(Vec<u8>, String)> {
        let mut first = [0u8; 512];
        first.copy_from_slice(&bytes[..512]);
        let (mut r, name, _) = matrix_member(first, Box::new(std::io::Cursor::new(bytes[512..].to_vec())))?;
        let mut v = Vec::new();
        r.read_to_end(&mut v)?;
        Ok((v, name))
    }

    #[test]
    fn finds_the_folders_matrix_past_other_members() {
        let mut t = Vec::new();
        member(&mut t, "M/README.txt", b"hello");
        member(&mut t, "M/M_b.mtx", b"%%MatrixMarket matrix array real general\n1 1\n1\n");
        member(&mut t, "M/M.mtx", b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n");
        t.extend_from_slice(&[0u8; 1024]);
        let (body, name) = open(t).unwrap();
        assert_eq!(name, "M/M.mtx");
        assert!(body.starts_with(b"%%MatrixMarket matrix coordinate") && body.ends_with(b"1 1 2\n"));
    }

    #[test]
    fn gnu_long_names_and_pax_paths() {
        let long = format!("{0}/{0}.mtx", "x".repeat(80));
        let mut t = Vec::new();
        member_of(&mut t, "././@LongLink", long.as_bytes(), b'L');
        member(&mut t, "short", b"body");
        t.extend_from_slice(&[0u8; 1024]);
        let (body, name) = open(t).unwrap();
        assert_eq!((body.as_slice(), name.as_str()), (&b"body"[..], long.as_str()));
        let mut t = Vec::new();
        member_of(&mut t, "pax", b"20 path=P/P.mtx\n", b'x');
        member(&mut t, "ignored-name", b"data");
        t.extend_from_slice(&[0u8; 1024]);
        assert_eq!(open(t).unwrap().1, "P/P.mtx");
    }

    #[test]
    fn a_missing_matrix_or_truncation_is_named() {
        let mut t = Vec::new();
        member(&mut t, "M/M_b.mtx", b"x");
        t.extend_from_slice(&[0u8; 1024]);
        let e = open(t).unwrap_err().to_string();
        assert!(e.contains("no NAME/NAME.mtx") && e.contains("M/M_b.mtx"), "{e}");
        let mut t = Vec::new();
        member(&mut t, "M/README", b"hello");
        t.truncate(700);
        let e = open(t).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
    }
}
