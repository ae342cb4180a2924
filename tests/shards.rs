//! Shards and merge (issue 12): any split of a plan's work, merged, writes the report one
//! machine writes, byte for byte; a set that does not belong together is refused with a
//! message naming the odd shard.

use std::fs;
use std::path::{Path, PathBuf};

mod common;

use battlelab::engine::shard::FORMAT_VERSION;
use common::{battlelab, shipped};

/// Every file of a report but `run_info.json` (wall time, threads, how it was made),
/// with its bytes.
fn report_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "run_info.json")
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// Runs `analysis` as `count` shards and merges them (the shards given in reverse order,
/// which must not matter) into `out`.
fn sharded(cwd: &Path, analysis: &str, trials: &str, count: u64, out: &str) -> Vec<PathBuf> {
    let mut shards = Vec::new();
    for k in 1..=count {
        let dir = cwd.join(format!("{out}.shards/shard-{k}"));
        let (code, _, stderr) = battlelab(
            cwd,
            &[
                "run",
                analysis,
                "--trials",
                trials,
                "--shard",
                &format!("{k}/{count}"),
                "--out",
                dir.to_str().unwrap(),
                "--threads",
                "1",
                "-q",
            ],
        );
        assert_eq!(code, Some(0), "shard {k}/{count}: {stderr}");
        shards.push(dir);
    }
    let mut args = vec!["merge".to_string()];
    args.extend(shards.iter().rev().map(|d| d.display().to_string()));
    args.extend(["--out".to_string(), out.to_string(), "-q".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, stderr) = battlelab(cwd, &args);
    assert_eq!(code, Some(0), "merge of {count}: {stderr}");
    shards
}

#[test]
fn any_split_merges_to_the_bytes_of_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    // A field analysis (56 runs of 2 blocks); a melee one: 4 runs of 1 block, so 7 shards
    // are more than its work units and some shards hold nothing; and a ratio one, whose
    // runs count signatures (with and without reserves) that each shard folds.
    for (analysis, trials) in [
        (shipped("field_combat.toml"), "70000"),
        (shipped("melee_engagement.toml"), "20000"),
        (shipped("ratio_line.toml"), "70000"),
        // A rules analysis: its rules file, named by a path relative to the analysis, is
        // found again by the merge.
        (shipped("risk.toml"), "30000"),
    ] {
        let analysis = analysis.to_str().unwrap();
        let (code, _, stderr) = battlelab(
            dir.path(),
            &["run", analysis, "--trials", trials, "--out", "plain", "-q"],
        );
        assert_eq!(code, Some(0), "{stderr}");
        let plain = report_bytes(&dir.path().join("plain"));
        assert!(plain.iter().any(|(n, _)| n == "results.parquet"));
        for count in [1, 3, 7] {
            let out = format!("merged{count}");
            sharded(dir.path(), analysis, trials, count, &out);
            let merged = report_bytes(&dir.path().join(&out));
            assert_eq!(
                merged.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                plain.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                "{analysis}, {count} shards: different files"
            );
            for ((name, a), (_, b)) in plain.iter().zip(&merged) {
                assert!(a == b, "{analysis}, {count} shards: {name} differs");
            }
            fs::remove_dir_all(dir.path().join(&out)).unwrap();
            fs::remove_dir_all(dir.path().join(format!("{out}.shards"))).unwrap();
        }
        fs::remove_dir_all(dir.path().join("plain")).unwrap();
    }
}

#[test]
fn a_set_that_does_not_belong_together_is_refused_naming_the_odd_shard() {
    let dir = tempfile::tempdir().unwrap();
    let analysis = shipped("storm.toml");
    let analysis = analysis.to_str().unwrap();
    let shard = |k: u64, seed: &str, out: &str| {
        let (code, _, stderr) = battlelab(
            dir.path(),
            &[
                "run",
                analysis,
                "--trials",
                "5000",
                "--seed",
                seed,
                "--shard",
                &format!("{k}/3"),
                "--out",
                out,
                "-q",
            ],
        );
        assert_eq!(code, Some(0), "{stderr}");
    };
    shard(1, "1", "s1");
    shard(2, "1", "s2");
    shard(3, "1", "s3");
    shard(2, "9", "other_seed");
    let merge = |shards: &[&str]| {
        let mut args = vec!["merge"];
        args.extend(shards);
        args.extend(["--out", "report"]);
        let (code, _, stderr) = battlelab(dir.path(), &args);
        (code, stderr)
    };
    for (shards, needle) in [
        (vec!["s1", "s3"], "shard 2 of 3 is missing"),
        (
            vec!["s1", "s2", "s2", "s3"],
            "s2: shard 2 of 3 was given again",
        ),
        (
            vec!["s1", "other_seed", "s3"],
            "other_seed: its seed is 9, but s1 has 1",
        ),
        (
            vec!["s1", "s2", "nowhere"],
            "nowhere: cannot read its manifest.json",
        ),
    ] {
        let (code, stderr) = merge(&shards);
        assert_eq!(code, Some(2), "{shards:?}: {stderr}");
        assert!(
            stderr.contains(needle),
            "{shards:?}: `{needle}` not in {stderr}"
        );
        assert!(
            !dir.path().join("report").exists(),
            "{shards:?} wrote a report"
        );
    }
    // A shard from another format version is refused with what to do.
    let manifest = dir.path().join("s1/manifest.json");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace(
            &format!("\"format_version\": {FORMAT_VERSION}"),
            "\"format_version\": 99",
        ),
    )
    .unwrap();
    let (code, stderr) = merge(&["s1", "s2", "s3"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("version 99"), "{stderr}");
    fs::write(&manifest, &text).unwrap();
    // A split no run makes (in every shard alike) is refused, not allocated.
    let originals: Vec<(std::path::PathBuf, String)> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| {
            let m = dir.path().join(s).join("manifest.json");
            let t = fs::read_to_string(&m).unwrap();
            (m, t)
        })
        .collect();
    for (m, t) in &originals {
        fs::write(
            m,
            t.replace("\"shards\": 3", "\"shards\": 18446744073709551615"),
        )
        .unwrap();
    }
    let (code, stderr) = merge(&["s1", "s2", "s3"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("a run is split into 1 to"), "{stderr}");
    for (m, t) in &originals {
        fs::write(m, t).unwrap();
    }
    // Counts of another shape (a tampered file, its hash made to match) are refused,
    // naming the shard.
    let counts = dir.path().join("s2/counts.json");
    let manifest = dir.path().join("s2/manifest.json");
    let (good, good_manifest) = (
        fs::read_to_string(&counts).unwrap(),
        fs::read_to_string(&manifest).unwrap(),
    );
    let mut json: serde_json::Value = serde_json::from_str(&good).unwrap();
    // (A table study's counts are one list per run.)
    json[0].as_array_mut().unwrap().pop();
    write_counts(&dir.path().join("s2"), &json, Sign::Again);
    let (code, stderr) = merge(&["s1", "s2", "s3"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("s2: its counts of run 1 do not have the shape"),
        "{stderr}"
    );
    fs::write(&counts, good).unwrap();
    fs::write(&manifest, good_manifest).unwrap();
    // The complete set merges.
    let (code, stderr) = merge(&["s3", "s1", "s2"]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_bad_split_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["0/3", "4/3", "3", "1/0", "a/b"] {
        let (code, _, stderr) = battlelab(
            dir.path(),
            &[
                "run",
                shipped("storm.toml").to_str().unwrap(),
                "--shard",
                bad,
                "--out",
                "s",
            ],
        );
        assert_eq!(code, Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("K/N"), "{bad}: {stderr}");
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Whether a tampered counts file gets a manifest hash to match (as a careful forger
/// would) or keeps the old one.
#[derive(Clone, Copy, PartialEq)]
enum Sign {
    Again,
    Not,
}

/// Writes `counts` as the shard folder's counts file; with [`Sign::Again`] its manifest's
/// `counts_sha256` is made to match.
fn write_counts(shard: &Path, counts: &serde_json::Value, sign: Sign) {
    let text = counts.to_string() + "\n";
    fs::write(shard.join("counts.json"), &text).unwrap();
    if sign == Sign::Again {
        let path = shard.join("manifest.json");
        let mut manifest: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        manifest["counts_sha256"] = battlelab::pipeline::sha256(text.as_bytes()).into();
        fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    }
}

/// Issue 40: `merge` trusted counts.json. Each tampering the red team tried — one count
/// +1, counts moved between outcomes, a count set to 2^64 − 1, shard 2's analysis.toml
/// edited — merged with exit 0 into a report with a count of −1 and a probability of
/// 1.8e16. Each is refused now (exit 2, nothing written), naming the shard.
#[test]
fn tampered_shards_are_refused_naming_the_shard() {
    let dir = tempfile::tempdir().unwrap();
    let analysis = shipped("storm.toml");
    for k in 1..=3 {
        let (code, _, stderr) = battlelab(
            dir.path(),
            &[
                "run",
                analysis.to_str().unwrap(),
                "--trials",
                "5000",
                "--shard",
                &format!("{k}/3"),
                "--out",
                &format!("s{k}"),
                "-q",
            ],
        );
        assert_eq!(code, Some(0), "{stderr}");
    }
    let s2 = dir.path().join("s2");
    let pristine: Vec<(PathBuf, Vec<u8>)> = ["counts.json", "manifest.json", "analysis.toml"]
        .iter()
        .map(|f| (s2.join(f), fs::read(s2.join(f)).unwrap()))
        .collect();
    let restore = || {
        for (path, bytes) in &pristine {
            fs::write(path, bytes).unwrap();
        }
    };
    let counts: serde_json::Value =
        serde_json::from_slice(&fs::read(s2.join("counts.json")).unwrap()).unwrap();
    // Shard 2 of 3 holds work units 2..5 of 8 (one block per run): all of run 3.
    let run3 = counts[2].as_array().unwrap();
    assert_eq!(
        run3.iter().map(|c| c.as_u64().unwrap()).sum::<u64>(),
        5000,
        "{counts}"
    );
    let (at, other) = (
        run3.iter().position(|c| c.as_u64().unwrap() > 0).unwrap(),
        run3.iter().rposition(|c| c.as_u64().unwrap() > 0).unwrap(),
    );
    assert_ne!(at, other, "run 3 needs two outcomes drawn: {counts}");
    let with = |edit: &dyn Fn(&mut Vec<serde_json::Value>)| {
        let mut c = counts.clone();
        edit(c[2].as_array_mut().unwrap());
        c
    };
    let plus_one = with(&|run| run[at] = (run[at].as_u64().unwrap() + 1).into());
    let moved = with(&|run| {
        run[at] = (run[at].as_u64().unwrap() - 1).into();
        run[other] = (run[other].as_u64().unwrap() + 1).into();
    });
    let huge = with(&|run| run[at] = u64::MAX.into());
    let not_the_file = "s2: its counts.json is not the file its manifest.json records";
    let cases: Vec<(&str, serde_json::Value, Sign, String)> = vec![
        (
            "one count +1",
            plus_one.clone(),
            Sign::Not,
            not_the_file.into(),
        ),
        (
            "counts moved between outcomes",
            moved,
            Sign::Not,
            not_the_file.into(),
        ),
        (
            "a count set to 2^64 - 1",
            huge.clone(),
            Sign::Not,
            not_the_file.into(),
        ),
        (
            "one count +1, hash made to match",
            plus_one,
            Sign::Again,
            "s2: its counts of run 3 total 5001 rolls, but its blocks of that run hold 5000".into(),
        ),
        (
            "a count set to 2^64 - 1, hash made to match",
            huge,
            Sign::Again,
            format!(
                "s2: its counts of run 3 total {} rolls, but its blocks of that run hold 5000",
                u128::from(u64::MAX) + 5000 - run3[at].as_u64().unwrap() as u128
            ),
        ),
    ];
    let merge = || {
        battlelab(
            dir.path(),
            &["merge", "s1", "s2", "s3", "--out", "report", "-q"],
        )
    };
    for (what, tampered, sign, needle) in cases {
        write_counts(&s2, &tampered, sign);
        let (code, _, stderr) = merge();
        assert_eq!(code, Some(2), "{what}: {stderr}");
        assert!(
            stderr.contains(&needle),
            "{what}: `{needle}` not in {stderr}"
        );
        assert!(
            !dir.path().join("report").exists(),
            "{what}: wrote a report"
        );
        restore();
    }
    // Shard 2's own analysis.toml edited (shard 1's is the one parsed).
    let text = fs::read_to_string(s2.join("analysis.toml")).unwrap();
    fs::write(
        s2.join("analysis.toml"),
        text.replace("trials", "# edited\ntrials"),
    )
    .unwrap();
    let (code, _, stderr) = merge();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("s2: its analysis.toml is not the analysis its manifest.json records"),
        "{stderr}"
    );
    assert!(!dir.path().join("report").exists());
    restore();
    // A shard of the previous format (no counts hash) is refused by its version.
    let manifest = fs::read_to_string(s2.join("manifest.json")).unwrap();
    let mut old: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    old["format_version"] = 2.into();
    old.as_object_mut().unwrap().remove("counts_sha256");
    fs::write(s2.join("manifest.json"), old.to_string()).unwrap();
    let (code, _, stderr) = merge();
    assert_eq!(code, Some(2), "{stderr}");
    let needle = format!(
        "s2: a shard of format battlelab-shard version 2; this battlelab reads battlelab-shard version {FORMAT_VERSION}"
    );
    assert!(stderr.contains(&needle), "{stderr}");
    restore();
    // Untouched, the set merges.
    let (code, _, stderr) = merge();
    assert_eq!(code, Some(0), "{stderr}");
}
