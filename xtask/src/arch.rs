//! ARCHITECTURE.md's dependency block, checked against `cargo metadata`: every workspace crate
//! with exactly its normal (non-dev) dependencies on other workspace crates.
use std::collections::{BTreeMap, BTreeSet};

use crate::{root, Res};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The ```deps block of ARCHITECTURE.md: `crate -> a, b, c` per line.
fn documented() -> Res<Graph> {
    let path = root().join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let block = text.split("```deps\n").nth(1).and_then(|t| t.split("```").next()).ok_or("ARCHITECTURE.md has no ```deps block")?;
    let mut g = Graph::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let (name, deps) = line.split_once("->").ok_or_else(|| format!("ARCHITECTURE.md deps line without ->: {line}"))?;
        let deps = deps.split(',').map(str::trim).filter(|d| !d.is_empty()).map(String::from).collect();
        g.insert(name.trim().to_string(), deps);
    }
    Ok(g)
}

/// What `cargo metadata --no-deps` says.
fn actual() -> Res<Graph> {
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata output: {e}"))?;
    let pkgs = m["packages"].as_array().ok_or("cargo metadata: no packages")?;
    let names: BTreeSet<String> = pkgs.iter().filter_map(|p| p["name"].as_str().map(String::from)).collect();
    let mut g = Graph::new();
    for p in pkgs {
        let name = p["name"].as_str().unwrap_or_default().to_string();
        let deps = p["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| names.contains(*d))
            .map(String::from)
            .collect();
        g.insert(name, deps);
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_md_lists_the_real_dependencies() {
        let (doc, real) = (documented().unwrap(), actual().unwrap());
        for (name, deps) in &real {
            match doc.get(name) {
                None => panic!("ARCHITECTURE.md's deps block lacks `{name} -> {}`", deps.iter().cloned().collect::<Vec<_>>().join(", ")),
                Some(d) => assert_eq!(d, deps, "ARCHITECTURE.md: dependencies of {name}"),
            }
        }
        for name in doc.keys() {
            assert!(real.contains_key(name), "ARCHITECTURE.md lists {name}, which is not a workspace crate");
        }
    }
}
