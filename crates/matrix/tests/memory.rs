//! Peak heap of the Matrix Market reader, measured by a counting global allocator (this test
//! binary only): reading a file into CSR stays within twice the resulting arrays.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use sptrans_matrix::{generate, mm, Csr};

struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            PEAK.fetch_max(NOW.fetch_add(l.size(), SeqCst) + l.size(), SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        NOW.fetch_sub(l.size(), SeqCst);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            // Counted as if old and new coexist for a moment (a moved realloc does that).
            PEAK.fetch_max(NOW.load(SeqCst) + new, SeqCst);
            NOW.fetch_add(new, SeqCst);
            NOW.fetch_sub(l.size(), SeqCst);
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

fn bytes(a: &Csr<u32, f64>) -> usize {
    4 * a.ptr().len() + 4 * a.idx().len() + 8 * a.vals().len()
}

/// Peak heap above the level before `f`.
fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = NOW.load(SeqCst);
    PEAK.store(base, SeqCst);
    let r = f();
    (r, PEAK.load(SeqCst) - base)
}

#[test]
fn reading_peaks_below_twice_the_result() {
    let dir = std::env::temp_dir().join(format!("sptrans-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = generate::uniform::<f64>(300_000, 200_000, 2_000_000, 5).unwrap();
    let plain = dir.join("a.mtx");
    mm::write_csr(std::io::BufWriter::new(std::fs::File::create(&plain).unwrap()), &a).unwrap();
    // Rows in reverse order: the in-place permutation has real cycles to follow.
    let text = std::fs::read_to_string(&plain).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2..].reverse();
    let shuffled = dir.join("b.mtx.gz");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&shuffled).unwrap(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, (lines.join("\n") + "\n").as_bytes()).unwrap();
    enc.finish().unwrap();
    drop(text);
    for path in [&plain, &shuffled] {
        let (b, peak) = peak_of(|| mm::read_csr::<f64>(path).unwrap());
        assert_eq!(b, a, "{}", path.display());
        let ratio = peak as f64 / bytes(&b) as f64;
        eprintln!("{}: peak {:.1} MB for {:.1} MB of CSR ({ratio:.2}x)", path.display(), peak as f64 / 1e6, bytes(&b) as f64 / 1e6);
        assert!(ratio <= 2.0, "{}: peak {peak} bytes is {ratio:.2}x the result", path.display());
    }
    std::fs::remove_dir_all(&dir).ok();
}
