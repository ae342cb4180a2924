//! Where the files an analysis names (a rules file) are read from: the disk for the
//! command line, memory for the WebAssembly module.
//!
//! Why this module exists: a rules-file analysis names its rules file by a path relative
//! to itself. The command line reads it from disk; the page's module is handed it in a
//! request. Both go through one [`Files`] provider, so the one parser
//! (`RulesStudy::parse_with`) and its error texts serve both.

use std::collections::BTreeMap;
use std::path::Path;

use crate::limits::MAX_FILE_BYTES;
use crate::toml_input::{read_analysis_file, AnalysisError};

/// Reads the companion files an analysis names.
pub trait Files: Sync {
    /// The text of the file at `path` (the analysis's folder joined with the path it
    /// gives), with the caps and errors of [`read_analysis_file`].
    fn read(&self, path: &Path) -> Result<String, AnalysisError>;
}

/// The disk, as the command line reads it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Result<String, AnalysisError> {
        read_analysis_file(path)
    }
}

/// Files handed over in memory, by the path the analysis gives (`../rules/crt.toml`,
/// relative to the analysis). A path not given reads as a file not found.
#[derive(Clone, Debug, Default)]
pub struct InMemory {
    files: BTreeMap<String, String>,
}

impl InMemory {
    pub fn new(files: BTreeMap<String, String>) -> Self {
        Self { files }
    }

    /// The files, by name.
    pub fn files(&self) -> &BTreeMap<String, String> {
        &self.files
    }
}

/// A path as a key: `/` separators, no leading `./`.
pub fn normalise(path: &str) -> String {
    let path = path.replace('\\', "/");
    let mut path = path.as_str();
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path.to_string()
}

impl Files for InMemory {
    fn read(&self, path: &Path) -> Result<String, AnalysisError> {
        let file = path.display().to_string();
        let Some(text) = self.files.get(&normalise(&file)) else {
            return Err(AnalysisError::Read {
                file,
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not among the files given with the analysis (add it to the request's files)",
                ),
            });
        };
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(AnalysisError::Syntax {
                file,
                message: format!(
                    "the file is larger than {} KiB; an analysis file is a few kilobytes of TOML — is this the right file?",
                    MAX_FILE_BYTES / 1024
                ),
            });
        }
        Ok(text.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reads_by_the_given_path_and_refuses_what_it_was_not_given() {
        let files = InMemory::new(BTreeMap::from([(
            "../rules/a.toml".to_string(),
            "x = 1".to_string(),
        )]));
        assert_eq!(files.read(Path::new("./../rules/a.toml")).unwrap(), "x = 1");
        let e = files.read(Path::new("b.toml")).unwrap_err();
        assert!(e.to_string().contains("b.toml"), "{e}");
        let big = InMemory::new(BTreeMap::from([(
            "big.toml".to_string(),
            "#".repeat(MAX_FILE_BYTES as usize + 1),
        )]));
        assert!(big
            .read(Path::new("big.toml"))
            .unwrap_err()
            .to_string()
            .contains("KiB"));
    }
}
