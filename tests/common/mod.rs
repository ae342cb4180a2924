//! Helpers shared by the integration tests (each test binary uses some of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The `.toml` files directly in `dir`, sorted.
pub fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Every shipped analysis under `analyses/`, sorted.
pub fn shipped_analyses() -> Vec<PathBuf> {
    toml_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("analyses"))
}
