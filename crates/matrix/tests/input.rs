//! Reading an input once (`mm::Input`): the banner from a stream that delivers one byte at a time
//! (gzip magic split across reads too), the byte-order mark, binary data and corrupt gzip named,
//! long tokens cut, memory refused from the size line; writing floats short and exact; equality
//! of bit patterns with NaN; generator parameters validated.
use std::io::{Read, Write};

use sptrans_matrix::{generate, mm, Csr, Error};

/// Delivers at most one byte per `read`, as a slow pipe may.
struct Trickle(Vec<u8>, usize);

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.1 >= self.0.len() || buf.is_empty() {
            return Ok(0);
        }
        buf[0] = self.0[self.1];
        self.1 += 1;
        Ok(1)
    }
}

const TEXT: &[u8] = b"%%MatrixMarket matrix coordinate real general\n% comment\n3 2 3\n1 1 1.5\n3 2 -2\n2 1 1e-300\n";

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn an_input_is_read_once_from_any_stream() {
    let want = mm::parse::<u32, f64>(TEXT).unwrap().to_csr();
    for (data, gzipped) in [(TEXT.to_vec(), false), (gz(TEXT), true)] {
        let input = mm::Input::from_reader(Box::new(Trickle(data, 0)), None).unwrap();
        assert_eq!(input.header().field, sptrans_matrix::Field::Real);
        assert_eq!(input.is_gzip(), gzipped);
        assert_eq!(input.read_csr::<f64>(None).unwrap(), want);
    }
}

#[test]
fn bom_binary_and_corrupt_gzip() {
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(TEXT);
    assert_eq!(mm::parse::<u32, f64>(&bom).unwrap().to_csr(), mm::parse::<u32, f64>(TEXT).unwrap().to_csr());
    let e = mm::parse::<u32, f64>(b"\x00\x01\x02\r\x7fELF\n").unwrap_err();
    assert!(e.to_string().contains("not a Matrix Market file (binary data)"), "{e}");
    let mut bad = gz(TEXT);
    for b in bad.iter_mut().skip(10).take(12) {
        *b ^= 0x5a;
    }
    let e = mm::Input::from_reader(Box::new(std::io::Cursor::new(bad)), None).and_then(|i| i.read_coo::<f64>().map(|_| ())).unwrap_err();
    assert!(e.to_string().contains("gzip"), "{e}");
}

#[test]
fn long_tokens_are_cut_in_messages() {
    let text = format!("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 {}\n", "7".repeat(1 << 20) + "x");
    let e = mm::parse::<u32, f64>(text.as_bytes()).unwrap_err().to_string();
    assert!(e.len() < 200 && e.contains('…') && e.contains("1048577 bytes"), "{e}");
    assert_eq!(mm::quote("short"), "short");
}

#[test]
fn memory_is_refused_from_the_size_line() {
    let text = b"%%MatrixMarket matrix coordinate real general\n4294967295 4294967295 1\n1 1 1\n";
    let input = mm::Input::from_reader(Box::new(&text[..]), None).unwrap();
    match input.read_coo_limited::<f64>(Some(1 << 30)) {
        Err(Error::MemoryLimit { rows: 4294967295, entries: 1, need, limit, .. }) => assert!(need > limit),
        other => panic!("{other:?}"),
    }
    assert_eq!(mm::read_bytes_estimate::<u32, f64>(9, 10), 10 * 16 + 10 * 12);
}

#[test]
fn floats_are_written_short_and_read_back_exactly() {
    let vals = [5e-324, 1.234e-300, 0.1, -2.5, 1e300, f64::MAX, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0];
    let n = vals.len() as u64;
    let a = Csr::try_new(1, n, vec![0, n as u32], (0..n as u32).collect(), vals.to_vec()).unwrap();
    let mut out = Vec::new();
    mm::write_csr(&mut out, &a).unwrap();
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.contains(" 5e-324\n") && text.contains(" 1.234e-300\n") && text.contains(" nan\n") && text.contains(" -inf\n"), "{text}");
    assert!(text.len() < 300, "{text}");
    let b = mm::parse::<u32, f64>(&out).unwrap().to_csr();
    assert!(b.same_bits(&a));
    assert_ne!(b, a, "`==` says NaN differs; same_bits compares bit patterns");
}

#[test]
fn generator_parameters_are_checked() {
    for (a, b, c) in [(1.5, 0.1, 0.1), (-0.1, 0.1, 0.1), (0.6, 0.3, 0.3), (f64::NAN, 0.1, 0.1)] {
        assert!(matches!(generate::rmat::<f64>(5, 100, a, b, c, 1), Err(Error::InvalidParameter { .. })), "{a} {b} {c}");
    }
    let e = generate::rmat::<f64>(64, 10, 0.57, 0.19, 0.19, 1).unwrap_err().to_string();
    assert!(e.contains("64") && !e.contains("9223372036854775808"), "{e}");
    assert!(matches!(generate::tall_skinny::<f64>(10, 3, 4, 1), Err(Error::InvalidParameter { what: "per_row", .. })));
    assert_eq!(generate::tall_skinny::<f64>(10, 3, 3, 1).unwrap().nnz(), 30);
}

/// A share of the rows (`Input::read_csr_rows`) equals those rows of the whole read, for every
/// cut of random general, symmetric, skew-symmetric and pattern files with duplicates, plain and
/// gzip; the row counts (`Input::row_counts`) are the whole read's row lengths where there are no
/// duplicates; rows outside the matrix are an error.
#[test]
fn shares_of_rows_equal_the_whole_read() {
    use rand::{Rng, SeedableRng};
    let seed: u64 = rand::random();
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let open = |b: &[u8]| mm::Input::from_reader(Box::new(std::io::Cursor::new(b.to_vec())), None).unwrap();
    for (kind, field) in [("general", "real"), ("symmetric", "real"), ("skew-symmetric", "real"), ("general", "pattern"), ("symmetric", "integer")] {
        for dups in [false, true] {
            let n = r.random_range(1..40u64);
            let mut lines = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for _ in 0..r.random_range(0..120) {
                let (mut i, mut j) = (r.random_range(1..=n), r.random_range(1..=n));
                if kind != "general" && i < j {
                    std::mem::swap(&mut i, &mut j);
                }
                if kind == "skew-symmetric" && i == j {
                    continue;
                }
                if !seen.insert((i, j)) && !dups {
                    continue;
                }
                let v = if field == "pattern" { String::new() } else { format!(" {}", r.random_range(-9..10)) };
                lines.push(format!("{i} {j}{v}"));
            }
            let text = format!("%%MatrixMarket matrix coordinate {field} {kind}\n{n} {n} {}\n{}\n", lines.len(), lines.join("\n"));
            let what = format!("{kind} {field}, duplicates {dups}, seed {seed}");
            let whole: Csr<u32, f64> = open(text.as_bytes()).read_csr(None).unwrap();
            let (rows, cols, counts) = open(text.as_bytes()).row_counts().unwrap();
            assert_eq!((rows, cols, counts.len() as u64), (n, n, n), "{what}");
            if !dups {
                let lens: Vec<u64> = whole.ptr().windows(2).map(|w| (w[1] - w[0]) as u64).collect();
                assert_eq!(counts, lens, "{what}");
            }
            for bytes in [text.as_bytes().to_vec(), gz(text.as_bytes())] {
                let (x, y) = (r.random_range(0..=n), r.random_range(0..=n));
                let (a, b) = (x.min(y), x.max(y));
                for (r0, r1) in [(0, a), (a, b), (b, n), (0, n), (b, b)] {
                    let part: Csr<u32, f64> = open(&bytes).read_csr_rows(r0, r1, None).unwrap();
                    let (k0, k1) = (whole.ptr()[r0 as usize] as usize, whole.ptr()[r1 as usize] as usize);
                    let want_ptr: Vec<u32> = whole.ptr()[r0 as usize..=r1 as usize].iter().map(|p| p - k0 as u32).collect();
                    assert_eq!((part.rows(), part.cols()), (r1 - r0, n), "{what} rows {r0}..{r1}");
                    assert_eq!(part.ptr(), &want_ptr[..], "{what} rows {r0}..{r1}");
                    assert_eq!(part.idx(), &whole.idx()[k0..k1], "{what} rows {r0}..{r1}");
                    assert_eq!(part.vals(), &whole.vals()[k0..k1], "{what} rows {r0}..{r1}");
                }
            }
            assert!(matches!(open(text.as_bytes()).read_csr_rows::<f64>(0, n + 1, None), Err(Error::InvalidParameter { .. })), "{what}");
        }
    }
}

/// `DistCsr::read_ranks` refuses standard input (it reads twice) and an empty or out-of-world
/// set of GPUs before reading anything.
#[test]
fn distributed_reads_refuse_stdin_and_bad_ranks() {
    use sptrans_matrix::dist::DistCsr;
    let stdin = DistCsr::<f64>::read_ranks(std::path::Path::new("-"), &[], 0, 1, None);
    assert!(matches!(stdin, Err(Error::InvalidParameter { what: "input", .. })));
    let none = DistCsr::<f64>::read_ranks(std::path::Path::new("no-such.mtx"), &[], 0, 2, None);
    assert!(matches!(none, Err(Error::InvalidParameter { what: "GPUs", .. })));
}
