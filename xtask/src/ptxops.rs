//! `cargo xtask ptx-ops [--base REV] [MODULE...]`: the memory instructions of each kernel of the
//! committed PTX (loads, stores, atomics by state space and width), and with `--base` the
//! kernels whose counts differ from the PTX committed at `REV`. The check of a conversion that
//! must not change what a kernel touches (an argument struct: a struct-held pointer is generic
//! to rustc, so a plain dereference turns `ld.global` into a generic `ld`).
use std::collections::BTreeMap;
use std::process::Command;

use crate::ptx::kernel_crates;
use crate::{root, Res};

/// Per kernel, each memory instruction's count (`ld.global.nc.u32` → n), widths normalized
/// (`.b32`, `.u32`, `.s32`, `.f32` all `.32`) so that a typed and an untyped access compare equal.
pub fn memory_ops(ptx: &str) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in ptx.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix(".visible .entry ").or_else(|| t.strip_prefix(".entry ")) {
            let name = rest.split(['(', ' ']).next().unwrap_or_default().to_string();
            out.insert(name.clone(), BTreeMap::new());
            current = Some(name);
            continue;
        }
        if t.starts_with(".func") || t.starts_with(".visible .func") {
            current = None;
        }
        let Some(k) = &current else { continue };
        // A predicated instruction: "@%p1 ld.global.u32 ..." or "@!%p1 ...".
        let ins = if t.starts_with('@') { t.split_once(char::is_whitespace).map_or("", |(_, r)| r.trim_start()) } else { t };
        let op = ins.split(|c: char| c.is_whitespace()).next().unwrap_or_default();
        if !["ld.", "st.", "red.", "atom."].iter().any(|p| op.starts_with(p)) || op.starts_with("ld.param") {
            continue;
        }
        let norm = op.split('.').map(normalize).collect::<Vec<_>>().join(".");
        *out.get_mut(k).expect("inserted at its entry").entry(norm).or_insert(0) += 1;
    }
    out
}

/// `b32`, `u32`, `s32`, `f32` → `32` (and the other widths alike); anything else unchanged.
fn normalize(part: &str) -> String {
    let mut c = part.chars();
    match (c.next(), c.as_str()) {
        (Some('b' | 'u' | 's' | 'f'), w @ ("8" | "16" | "32" | "64")) => w.to_string(),
        _ => part.to_string(),
    }
}

fn show(ops: &BTreeMap<String, usize>) -> String {
    ops.iter().map(|(op, n)| format!("{op}×{n}")).collect::<Vec<_>>().join(" ")
}

pub fn run(args: &[String]) -> Res {
    let (mut base, mut wanted) = (None, vec![]);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--base" => base = Some(it.next().ok_or("--base needs a git revision")?.clone()),
            s if s.starts_with("--base=") => base = Some(s["--base=".len()..].to_string()),
            s => wanted.push(s.to_string()),
        }
    }
    let mut differ = 0;
    for k in kernel_crates()? {
        if !wanted.is_empty() && !wanted.contains(&k.module) {
            continue;
        }
        let text = std::fs::read_to_string(&k.dest).map_err(|e| format!("{}: {e}", k.dest.display()))?;
        let positional = positional_entries(&text);
        if !positional.is_empty() {
            println!("{}: kernels with positional parameters (not one argument struct): {}", k.module, positional.join(" "));
        }
        let now = memory_ops(&text);
        let Some(rev) = &base else {
            println!("== {}", k.module);
            for (name, ops) in &now {
                println!("{name}: {}", show(ops));
            }
            continue;
        };
        let rel = k.dest.strip_prefix(root()).map_err(|e| e.to_string())?;
        let out =
            Command::new("git").args(["show", &format!("{rev}:{}", rel.display())]).current_dir(root()).output().map_err(|e| format!("git: {e}"))?;
        if !out.status.success() {
            println!("{}: not in {rev}", k.module);
            continue;
        }
        let then = memory_ops(&String::from_utf8_lossy(&out.stdout));
        let names: std::collections::BTreeSet<_> = now.keys().chain(then.keys()).collect();
        let changed: Vec<_> = names.into_iter().filter(|n| now.get(*n) != then.get(*n)).collect();
        if changed.is_empty() {
            println!("{}: every kernel's memory instructions as in {rev}", k.module);
        }
        for name in changed {
            differ += 1;
            let side = |m: &BTreeMap<String, BTreeMap<String, usize>>| m.get(name).map_or("(absent)".to_string(), show);
            println!("{}: {name}\n  {rev}: {}\n  now: {}", k.module, side(&then), side(&now));
        }
    }
    if differ > 0 {
        println!("{differ} kernel(s) differ");
    }
    Ok(())
}

/// Each entry of `ptx` whose parameters are not exactly one aggregate (`.param .align A .b8
/// NAME[N]`): a kernel launched with positional arguments.
pub fn positional_entries(ptx: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        let tail = &rest[at + ".entry ".len()..];
        let name = tail.split(['(', ' ', '\n']).next().unwrap_or_default().to_string();
        let params = tail.find('(').and_then(|open| tail[open + 1..].find(')').map(|close| &tail[open + 1..open + 1 + close])).unwrap_or("");
        let decls: Vec<&str> = params.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
        if decls.len() != 1 || !decls[0].contains('[') {
            out.push(name);
        }
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{memory_ops, positional_entries};

    /// Kernel arguments as data (issue 57): every kernel of every committed module takes one
    /// argument struct; a new kernel with positional parameters fails here, without a GPU.
    #[test]
    fn every_kernel_takes_one_argument_struct() {
        let mut positional = vec![];
        for k in crate::ptx::kernel_crates().unwrap() {
            let ptx = std::fs::read_to_string(&k.dest).unwrap();
            positional.extend(positional_entries(&ptx).into_iter().map(|e| format!("{}: {e}", k.module)));
        }
        assert!(positional.is_empty(), "kernels with positional parameters: {positional:?}");
    }

    #[test]
    fn positional_entries_are_found() {
        let ptx = ".visible .entry s(\n\t.param .align 8 .b8 s_param_0[16]\n)\n{\n}\n\
                   .visible .entry p(\n\t.param .u64 .ptr .align 1 p_param_0,\n\t.param .u32 p_param_1\n)\n{\n}\n\
                   .visible .entry e()\n{\n}\n";
        assert_eq!(positional_entries(ptx), ["p", "e"]);
    }

    #[test]
    fn counts_each_kernels_memory_instructions_with_widths_normalized() {
        let ptx = "\
.visible .entry k1(
\t.param .align 8 .b8 k1_param_0[16]
)
{
\tld.param.b64 \t%rd1, [k1_param_0];
\tld.global.nc.u32 \t%r1, [%rd1];
\t@%p1 ld.global.b32 \t%r2, [%rd1];
\tst.global.u32 \t[%rd1], %r1;
\tred.add.f64 \t[%rd1], %fd1;
}
.visible .entry k2()
{
\tld.global.f32 \t%f1, [%rd1];
}
";
        let ops = memory_ops(ptx);
        assert_eq!(ops.len(), 2);
        let k1 = &ops["k1"];
        assert_eq!(k1.get("ld.global.nc.32"), Some(&1));
        assert_eq!(k1.get("ld.global.32"), Some(&1));
        assert_eq!(k1.get("st.global.32"), Some(&1));
        assert_eq!(k1.get("red.add.64"), Some(&1));
        assert!(!k1.keys().any(|k| k.starts_with("ld.param")));
        assert_eq!(ops["k2"].get("ld.global.32"), Some(&1));
    }
}
