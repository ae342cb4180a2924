//! Shards: a fixed share of a plan's work units, run on one machine of many, and what
//! proves that a set of shards belongs together.
//!
//! Why this module exists: past one machine, `battlelab run FILE --shard K/N` writes the
//! counts of share K and `battlelab merge` adds them up. The merged report must be the
//! report one machine would have written, byte for byte, so a shard carries everything
//! that decides its counts — the analysis (its text's hash and its validated rules'
//! hash), the seed, the trials, the block size, the split — and the merge refuses any
//! set that differs in one of them, names the odd shard, and refuses a missing or
//! repeated share.
//!
//! The counts file is JSON, versioned by [`FORMAT_VERSION`]: one entry per run in plan
//! order, each the run's histogram as integer counts (its fields by name). A shard from
//! another format version or tool version is refused with a message saying which.
//!
//! A shard also proves its files: its manifest carries the SHA-256 of its counts file
//! (and of its analysis text), and each run's counts must total the trials the shard's
//! blocks of that run cover, so a count edited, moved between outcomes or set past any
//! sum is refused by the merge, which names the shard (the checks on the counts
//! themselves are the merge's, in the `battlelab` crate's `systems` module).

use serde::{Deserialize, Serialize};

/// What a shard folder's manifest says it is.
pub const FORMAT: &str = "battlelab-shard";
/// Bumped whenever the counts file or what decides the counts changes. 2: each run's
/// counts are finished ([`crate::engine::System::finish`]) before they are written (the
/// ratio kernel's signature bins folded), so a shard of version 1 cannot be merged with
/// one of 2. 3: the manifest carries the counts file's SHA-256 (`counts_sha256`).
pub const FORMAT_VERSION: u32 = 3;
/// The counts file in a shard folder.
pub const COUNTS_FILE: &str = "counts.json";

/// Everything that decides a shard's counts, and which share it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardIdentity {
    pub format: String,
    pub format_version: u32,
    pub tool_version: String,
    pub name: String,
    pub system: String,
    /// The analysis file's name as the user gave it (its stem may name the report).
    pub analysis_file: String,
    /// The folder the analysis was in when the shard ran (absolute; empty where unknown),
    /// so that a file it names by a relative path (a rules file) is found again by the
    /// merge. Not compared between shards: machines may mount it differently.
    #[serde(default)]
    pub analysis_dir: String,
    pub analysis_sha256: String,
    /// The SHA-256 of the shard's counts file, as written. Absent (empty) in shards of
    /// format version 2 and older, which are refused by their version first.
    #[serde(default)]
    pub counts_sha256: String,
    pub rules_hash: String,
    pub seed: u64,
    pub trials: u64,
    pub block_trials: u64,
    pub runs: usize,
    /// 1-based.
    pub shard: u64,
    pub shards: u64,
}

impl ShardIdentity {
    /// The fields that must agree between shards of one plan: (name, value) pairs.
    fn agreeing(&self) -> [(&'static str, String); 12] {
        [
            ("format", self.format.clone()),
            ("format version", self.format_version.to_string()),
            ("battlelab version", self.tool_version.clone()),
            ("analysis name", self.name.clone()),
            ("system", self.system.clone()),
            ("analysis file", self.analysis_file.clone()),
            ("analysis text (SHA-256)", self.analysis_sha256.clone()),
            ("validated rules (SHA-256)", self.rules_hash.clone()),
            ("seed", self.seed.to_string()),
            ("trials", self.trials.to_string()),
            ("block size", self.block_trials.to_string()),
            ("number of shards", self.shards.to_string()),
        ]
    }
}

/// Why a set of shards cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("{shard}: {message}")]
    Unreadable { shard: String, message: String },
    #[error("{shard}: its {field} is {theirs}, but {first} has {ours}; merge only the shards of one run of one analysis")]
    Mismatch {
        shard: String,
        first: String,
        field: &'static str,
        theirs: String,
        ours: String,
    },
    #[error(
        "{shard}: shard {index} of {count} was given again (also as {other}); give each shard once"
    )]
    Repeated {
        shard: String,
        other: String,
        index: u64,
        count: u64,
    },
    #[error("shard {index} of {count} is missing; merge needs every shard of the run (run it with --shard {index}/{count})")]
    Missing { index: u64, count: u64 },
    #[error("no shard folders given")]
    Empty,
}

/// Checks that `shards` (a label for messages, and the identity each carries) are the
/// complete set of one plan's shards, each once.
pub fn check_complete(shards: &[(String, ShardIdentity)]) -> Result<(), ShardError> {
    let Some((first_label, first)) = shards.first() else {
        return Err(ShardError::Empty);
    };
    // Every shard's format first: another version's manifest means other fields.
    for (label, identity) in shards {
        if identity.format != FORMAT || identity.format_version != FORMAT_VERSION {
            return Err(ShardError::Unreadable {
                shard: label.clone(),
                message: format!(
                    "a shard of format {} version {}; this battlelab reads {FORMAT} version {FORMAT_VERSION} (run the shards again with this battlelab)",
                    crate::limits::echo(&identity.format),
                    identity.format_version
                ),
            });
        }
        if identity.tool_version != env!("CARGO_PKG_VERSION") {
            return Err(ShardError::Unreadable {
                shard: label.clone(),
                message: format!(
                    "made by battlelab {}; merge shards with the version that made them (this is {})",
                    crate::limits::echo(&identity.tool_version),
                    env!("CARGO_PKG_VERSION")
                ),
            });
        }
    }
    let ours = first.agreeing();
    for (label, identity) in &shards[1..] {
        for ((field, theirs), (_, mine)) in identity.agreeing().into_iter().zip(&ours) {
            if &theirs != mine {
                return Err(ShardError::Mismatch {
                    shard: label.clone(),
                    first: first_label.clone(),
                    field,
                    theirs: crate::limits::echo(&theirs),
                    ours: crate::limits::echo(mine),
                });
            }
        }
    }
    let count = first.shards;
    if count == 0 || count > MAX_SHARDS {
        return Err(ShardError::Unreadable {
            shard: first_label.clone(),
            message: format!("it claims {count} shards; a run is split into 1 to {MAX_SHARDS}"),
        });
    }
    let mut seen: Vec<Option<&str>> = vec![None; count as usize];
    for (label, identity) in shards {
        let index = identity.shard;
        if index == 0 || index > count {
            return Err(ShardError::Unreadable {
                shard: label.clone(),
                message: format!("shard {index} of {count} does not exist"),
            });
        }
        let slot = &mut seen[index as usize - 1];
        if let Some(other) = slot {
            return Err(ShardError::Repeated {
                shard: label.clone(),
                other: other.to_string(),
                index,
                count,
            });
        }
        *slot = Some(label);
    }
    if let Some(missing) = seen.iter().position(Option::is_none) {
        return Err(ShardError::Missing {
            index: missing as u64 + 1,
            count,
        });
    }
    Ok(())
}

/// Parses `K/N` (1-based K): the form `--shard` takes.
pub fn parse_share(text: &str) -> Result<(u64, u64), String> {
    let (k, n) = text.split_once('/').ok_or_else(|| {
        format!("write the shard as K/N, e.g. 2/8 (shard 2 of 8), got \"{text}\"")
    })?;
    let k: u64 = k
        .trim()
        .parse()
        .map_err(|_| format!("K in K/N is a whole number, got \"{k}\""))?;
    let n: u64 = n
        .trim()
        .parse()
        .map_err(|_| format!("N in K/N is a whole number, got \"{n}\""))?;
    if n == 0 || n > MAX_SHARDS {
        return Err(format!("N in K/N is 1 to {MAX_SHARDS}, got {n}"));
    }
    if k == 0 || k > n {
        return Err(format!("K in K/N is 1 to N ({n}), got {k}"));
    }
    Ok((k, n))
}

/// Most shards one run may be split into.
pub const MAX_SHARDS: u64 = 100_000;

#[cfg(test)]
mod tests {
    use super::*;

    fn id(shard: u64, shards: u64, seed: u64) -> ShardIdentity {
        ShardIdentity {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            name: "x".into(),
            system: "field".into(),
            analysis_file: "x.toml".into(),
            analysis_dir: String::new(),
            analysis_sha256: "a".into(),
            counts_sha256: format!("c{shard}"),
            rules_hash: "r".into(),
            seed,
            trials: 10,
            block_trials: 65536,
            runs: 3,
            shard,
            shards,
        }
    }

    #[test]
    fn a_complete_set_passes_and_each_fault_is_named() {
        let set = |ids: Vec<ShardIdentity>| -> Vec<(String, ShardIdentity)> {
            ids.into_iter()
                .enumerate()
                .map(|(i, id)| (format!("s{i}"), id))
                .collect()
        };
        check_complete(&set(vec![id(2, 3, 1), id(1, 3, 1), id(3, 3, 1)])).unwrap();
        let e = check_complete(&set(vec![id(1, 3, 1), id(3, 3, 1)])).unwrap_err();
        assert!(e.to_string().contains("shard 2 of 3 is missing"), "{e}");
        let e = check_complete(&set(vec![id(1, 3, 1), id(1, 3, 1), id(2, 3, 1)])).unwrap_err();
        assert!(
            e.to_string().contains("s1") && e.to_string().contains("given again"),
            "{e}"
        );
        let e = check_complete(&set(vec![id(1, 3, 1), id(2, 3, 7), id(3, 3, 1)])).unwrap_err();
        assert!(e.to_string().starts_with("s1: its seed is 7"), "{e}");
        // Another format version is named as such in any shard, not as a mismatch.
        let mut old = id(3, 3, 1);
        old.format_version = 2;
        let e = check_complete(&set(vec![id(1, 3, 1), id(2, 3, 1), old])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s2: a shard of format battlelab-shard version 2"),
            "{e}"
        );
    }

    #[test]
    fn shares_parse_as_k_of_n() {
        assert_eq!(parse_share("2/8"), Ok((2, 8)));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(parse_share(bad).is_err(), "{bad}");
        }
    }
}
