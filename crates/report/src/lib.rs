#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
pub mod measure;

use std::fmt::Write as _;

use crate::measure::{bytes_moved, Stats};
use gpu_transpose::Algorithm;

/// What a benchmark runs: one of our algorithms, or the cuSPARSE peer
/// ([`gpu_transpose::baselines::CuSparseTranspose`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// One of this project's algorithms.
    Ours(Algorithm),
    /// cuSPARSE's `csr2cscEx2`, the peer of every ratio.
    CuSparse,
    /// The distributed transpose over several GPUs (`sptrans bench --gpus N`; `Auto` on each).
    Dist,
}

impl Target {
    /// The short name (`radix`, …, `cusparse`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Ours(a) => a.name(),
            Target::CuSparse => "cusparse",
            Target::Dist => "dist",
        }
    }

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        !matches!(self, Target::Ours(Algorithm::Serial))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Target {
    type Err = gpu_transpose::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("cusparse") {
            return Ok(Target::CuSparse);
        }
        if s.eq_ignore_ascii_case("dist") {
            return Ok(Target::Dist);
        }
        s.parse().map(Target::Ours)
    }
}

/// One measurement: a matrix, an algorithm, its timings or why there are none.
#[derive(Clone, Debug)]
pub struct Record {
    /// Matrix name.
    pub matrix: String,
    /// Rows, columns, nonzeros.
    pub shape: (u64, u64, u64),
    /// The algorithm, or the peer.
    pub algo: Target,
    /// Timings, or the error that stopped it.
    pub result: std::result::Result<Stats, String>,
    /// Workspace bytes (device), when known.
    pub workspace: Option<u64>,
    /// Whether its output equalled the serial twin's (always for the twin itself).
    pub checked: bool,
}

/// The record of `matrix` and `algo`, if any.
pub fn find<'a>(records: &'a [Record], matrix: &str, algo: Target) -> Option<&'a Record> {
    records.iter().find(|r| r.matrix == matrix && r.algo == algo)
}

/// The matrices of `records`, in first-seen order, with their shapes.
pub fn matrices(records: &[Record]) -> Vec<(String, (u64, u64, u64))> {
    let mut out: Vec<(String, (u64, u64, u64))> = Vec::new();
    for r in records {
        if !out.iter().any(|(m, _)| *m == r.matrix) {
            out.push((r.matrix.clone(), r.shape));
        }
    }
    out
}

/// The median time of a record that has timings.
pub fn median(r: Option<&Record>) -> Option<f64> {
    r.and_then(|r| r.result.as_ref().ok()).map(|s| s.median_ms)
}

/// The geometric mean of positive ratios (NaN for none).
pub fn geomean(ratios: &[f64]) -> f64 {
    (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp()
}

/// The text tables: times, speedups (with their geomean over the matrices), bandwidth (values
/// of `value_bytes` bytes) and workspace.
pub fn tables(records: &[Record], algos: &[Target], copy: Option<f64>, value_bytes: usize) -> String {
    let mut s = String::new();
    let mats = matrices(records);
    let head = |s: &mut String, first: &str, cols: &[String]| {
        let _ = writeln!(s, "| {first} | {} |", cols.join(" | "));
        let _ = writeln!(s, "|---|{}", "---|".repeat(cols.len()));
    };
    let _ = writeln!(s, "\nTime, ms: median [min–max]");
    let mut cols = vec!["nnz".to_string()];
    cols.extend(algos.iter().map(|a| a.name().to_string()));
    head(&mut s, "matrix", &cols);
    for (m, shape) in &mats {
        let cells: Vec<String> = algos
            .iter()
            .map(|&a| match find(records, m, a).map(|r| &r.result) {
                Some(Ok(st)) => format!("{:.3} [{:.3}–{:.3}]", st.median_ms, st.min_ms, st.max_ms),
                Some(Err(_)) => "failed".into(),
                None => "—".into(),
            })
            .collect();
        let _ = writeln!(s, "| {m} | {} | {} |", shape.2, cells.join(" | "));
    }
    let gpu_algos: Vec<Target> = algos.iter().copied().filter(|a| a.is_gpu()).collect();
    if !gpu_algos.is_empty() {
        let _ = writeln!(s, "\nSpeedup over the serial twin / over cuSPARSE (time of the other ÷ this one's)");
        head(&mut s, "matrix", &gpu_algos.iter().map(|a| a.name().to_string()).collect::<Vec<_>>());
        for (m, _) in &mats {
            let ser = median(find(records, m, Target::Ours(Algorithm::Serial)));
            let cus = median(find(records, m, Target::CuSparse));
            let cells: Vec<String> = gpu_algos
                .iter()
                .map(|&a| match median(find(records, m, a)) {
                    Some(t) => {
                        format!("{} / {}", ser.map_or("—".into(), |x| format!("{:.1}×", x / t)), cus.map_or("—".into(), |x| format!("{:.2}×", x / t)))
                    }
                    None => "—".into(),
                })
                .collect();
            let _ = writeln!(s, "| {m} | {} |", cells.join(" | "));
        }
        if mats.len() > 1 {
            // The geomean of each ratio over the matrices where both times exist (their count
            // said when some lack one).
            let cells: Vec<String> = gpu_algos
                .iter()
                .map(|&a| {
                    let ratios = |peer: Target| -> Vec<f64> {
                        mats.iter().filter_map(|(m, _)| Some(median(find(records, m, peer))? / median(find(records, m, a))?)).collect()
                    };
                    let shown = |q: Vec<f64>, digits: usize| match q.len() {
                        0 => "—".to_string(),
                        n if n == mats.len() => format!("{:.*}×", digits, geomean(&q)),
                        n => format!("{:.*}× ({n})", digits, geomean(&q)),
                    };
                    format!("{} / {}", shown(ratios(Target::Ours(Algorithm::Serial)), 1), shown(ratios(Target::CuSparse), 2))
                })
                .collect();
            let _ = writeln!(s, "| **geomean** | {} |", cells.join(" | "));
        }
        let _ = writeln!(
            s,
            "\nEffective bandwidth GB/s ({} B per nonzero + pointers), % of copy ({}), workspace MB",
            2 * (4 + value_bytes),
            copy.map_or("not measured".into(), |c| format!("{c:.0} GB/s"))
        );
        head(&mut s, "matrix", &gpu_algos.iter().map(|a| a.name().to_string()).collect::<Vec<_>>());
        for (m, shape) in &mats {
            let bytes = bytes_moved(shape.0, shape.1, shape.2, value_bytes) as f64;
            let cells: Vec<String> = gpu_algos
                .iter()
                .map(|&a| match find(records, m, a) {
                    Some(r) => {
                        let ws = r.workspace.map_or("—".into(), |w| format!("{:.0}", w as f64 / 1e6));
                        match &r.result {
                            Ok(st) => {
                                let gbs = bytes / (st.median_ms * 1e-3) / 1e9;
                                format!("{gbs:.0} ({}) {ws} MB", copy.map_or("—".into(), |c| format!("{:.0}%", 100.0 * gbs / c)))
                            }
                            Err(_) => "failed".into(),
                        }
                    }
                    None => "—".into(),
                })
                .collect();
            let _ = writeln!(s, "| {m} | {} |", cells.join(" | "));
        }
    }
    s
}

/// Every record as a CSV line (with a header).
pub fn csv(records: &[Record], copy: Option<f64>, value_bytes: usize) -> String {
    let mut s = String::from("matrix,rows,cols,nnz,algorithm,median_ms,min_ms,max_ms,reps,gb_per_s,copy_fraction,speedup_vs_serial,speedup_vs_cusparse,workspace_bytes,checked,error\n");
    for r in records {
        let (m, n, nnz) = r.shape;
        let ser = median(find(records, &r.matrix, Target::Ours(Algorithm::Serial)));
        let cus = median(find(records, &r.matrix, Target::CuSparse));
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6}"));
        let name = r.matrix.replace('"', "'");
        match &r.result {
            Ok(st) => {
                let gbs = bytes_moved(m, n, nnz, value_bytes) as f64 / (st.median_ms * 1e-3) / 1e9;
                let _ = writeln!(
                    s,
                    "\"{name}\",{m},{n},{nnz},{},{:.6},{:.6},{:.6},{},{gbs:.3},{},{},{},{},{},",
                    r.algo,
                    st.median_ms,
                    st.min_ms,
                    st.max_ms,
                    st.reps,
                    opt(copy.filter(|_| r.algo.is_gpu()).map(|c| gbs / c)),
                    opt(ser.map(|x| x / st.median_ms)),
                    opt(cus.map(|x| x / st.median_ms)),
                    r.workspace.map_or(String::new(), |w| w.to_string()),
                    r.checked
                );
            }
            Err(e) => {
                let _ = writeln!(
                    s,
                    "\"{name}\",{m},{n},{nnz},{},,,,,,,,,{},false,\"{}\"",
                    r.algo,
                    r.workspace.map_or(String::new(), |w| w.to_string()),
                    e.replace('"', "'")
                );
            }
        }
    }
    s
}

/// A CSV of this crate's or the CLI's tables (a header line, then rows) as JSON for other tools
/// (Ginkgo-style consumers): `{"meta": meta, "records": [{column: value, ...}, ...]}`, each value
/// a number where it parses as one, `true`/`false` as booleans, empty fields as `null`, the rest
/// as strings.
///
/// # Errors
/// A message when the CSV cannot be parsed.
pub fn json_from_csv(csv_text: &str, meta: serde_json::Value) -> Result<String, String> {
    let mut rd = csv::ReaderBuilder::new().has_headers(true).from_reader(csv_text.as_bytes());
    let header: Vec<String> = rd.headers().map_err(|e| e.to_string())?.iter().map(String::from).collect();
    let mut rows = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| e.to_string())?;
        let mut obj = serde_json::Map::new();
        for (k, v) in header.iter().zip(rec.iter()) {
            let value = if v.is_empty() {
                serde_json::Value::Null
            } else if let Ok(b) = v.parse::<bool>() {
                serde_json::Value::Bool(b)
            } else if let Some(n) = v.parse::<f64>().ok().filter(|x| x.is_finite()).and_then(serde_json::Number::from_f64) {
                if let Ok(i) = v.parse::<i64>() {
                    serde_json::Value::from(i)
                } else {
                    serde_json::Value::Number(n)
                }
            } else {
                serde_json::Value::String(v.to_string())
            };
            obj.insert(k.clone(), value);
        }
        rows.push(serde_json::Value::Object(obj));
    }
    serde_json::to_string_pretty(&serde_json::json!({ "meta": meta, "records": rows })).map_err(|e| e.to_string())
}

#[cfg(test)]
mod json_tests {
    #[test]
    fn csv_rows_become_typed_records() {
        let text = "matrix,nnz,median_ms,checked,error\n\"a, b\",12,0.5,true,\n\"c\",3,,false,\"no GPU\"\n";
        let j: serde_json::Value = serde_json::from_str(&super::json_from_csv(text, serde_json::json!({"device": "x"})).unwrap()).unwrap();
        assert_eq!(j["meta"]["device"], "x");
        let r = &j["records"];
        assert_eq!(r[0]["matrix"], "a, b");
        assert_eq!(r[0]["nnz"], 12);
        assert_eq!(r[0]["median_ms"], 0.5);
        assert_eq!(r[0]["checked"], true);
        assert!(r[0]["error"].is_null());
        assert!(r[1]["median_ms"].is_null());
        assert_eq!(r[1]["error"], "no GPU");
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;

    fn rec(matrix: &str, algo: Target, ms: Option<f64>) -> Record {
        let result = ms.map(|t| Stats::from_times(vec![t])).ok_or_else(|| "failed".to_string());
        Record { matrix: matrix.into(), shape: (10, 10, 10), algo, result, workspace: None, checked: true }
    }

    #[test]
    fn speedups_end_with_their_geomean() {
        let (radix, ser) = (Target::Ours(Algorithm::RadixTrans), Target::Ours(Algorithm::Serial));
        let records = vec![
            rec("a", ser, Some(8.0)),
            rec("a", Target::CuSparse, Some(2.0)),
            rec("a", radix, Some(1.0)),
            rec("b", ser, Some(2.0)),
            rec("b", Target::CuSparse, Some(1.0)),
            rec("b", radix, Some(2.0)),
            rec("c", ser, Some(1.0)),
            rec("c", Target::CuSparse, None),
            rec("c", radix, Some(1.0)),
        ];
        let t = tables(&records, &[ser, Target::CuSparse, radix], None, 4);
        // cuSPARSE (where it ran): over the twin 4 and 2; radix: over the twin 8, 1, 1 (geomean
        // 2), over cuSPARSE 2 and 0.5 on two of the three matrices.
        assert!(t.contains("| **geomean** | 2.8× (2) / 1.00× (2) | 2.0× / 1.00× (2) |"), "{t}");
        assert!((geomean(&[2.0, 8.0]) - 4.0).abs() < 1e-12);
    }
}
