//! The project's own documentation holds together: every relative link in README.md and
//! the other Markdown pages reaches a file of the repository (and the heading an anchor
//! names), and nothing points outside the repository — to the rules texts and notes that
//! sit beside a developer's checkout but not a user's.
//!
//! Why this test exists: pages move (README's sections went to `docs/`, two readings pages
//! were folded into `docs/systems/`), and a link left behind is only found by a reader.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Folders no page lives in: build output, version control, and what runs write.
fn skipped(dir: &Path) -> bool {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "target" || name.starts_with('.') || {
        let rel = dir.strip_prefix(root()).unwrap_or(dir);
        // Run output: reports/<name>/ and shards/ are generated, reports/examples is not.
        (rel.starts_with("reports") && rel != Path::new("reports") && !rel.ends_with("examples"))
            || rel == Path::new("shards")
    }
}

/// Every file under `dir` whose name ends in `ext`, sorted.
fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if !skipped(&path) {
                files(&path, ext, out);
            }
        } else if path.to_string_lossy().ends_with(ext) {
            out.push(path);
        }
    }
}

/// The Markdown pages of the repository.
fn pages() -> Vec<PathBuf> {
    let mut out = Vec::new();
    files(&root(), ".md", &mut out);
    out
}

/// The text outside fenced code blocks and inline code spans, where links live.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced {
            out.push('\n');
            continue;
        }
        // Drop inline code spans: text between backticks.
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the inline links and images of `markdown`: `[text](target)`.
fn links(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split_whitespace().next().unwrap_or("");
        out.push(target.to_string());
        rest = &rest[end..];
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, letters, digits, `-` and `_` kept,
/// spaces to `-`, everything else dropped; link text kept, link targets dropped.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](url)` → `text`.
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|close| {
            after[close + 2..]
                .find(')')
                .map(|end| (close, close + 2 + end + 1))
        }) {
            Some((close, next)) => {
                text.push_str(&after[..close]);
                rest = &after[next..];
            }
            None => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_lowercase().collect::<String>())
            } else if c == ' ' {
                Some("-".to_string())
            } else {
                None
            }
        })
        .collect()
}

/// The anchors of a page's headings, with GitHub's `-1`, `-2` … for repeated ones.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if fenced || hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes + 1..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// `path` with `.` and `..` resolved in words (the file need not exist).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What is wrong with `target`, a link on `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    if target.contains("shared/") {
        return Some("points at the shared folder beside the checkout".into());
    }
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        page.to_path_buf()
    } else if path.starts_with('/') {
        return Some("is absolute; links must be relative to the page".into());
    } else {
        normalise(&page.parent().unwrap().join(path))
    };
    if !file.starts_with(root()) {
        return Some(format!("leaves the repository ({})", file.display()));
    }
    if !file.exists() {
        return Some(format!("no such file: {}", file.display()));
    }
    if let Some(fragment) = fragment {
        if file.extension().is_some_and(|e| e == "md") {
            let headings = anchors(&fs::read_to_string(&file).unwrap());
            if !headings.contains(fragment) {
                return Some(format!(
                    "no heading #{fragment} in {}",
                    file.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    None
}

#[test]
fn the_slugs_are_githubs() {
    assert_eq!(slug("What is a +1 worth?"), "what-is-a-1-worth");
    assert_eq!(slug("The page: `index.html`"), "the-page-indexhtml");
    assert_eq!(
        slug("`[[expect]]`: what the rulebook promises"),
        "expect-what-the-rulebook-promises"
    );
    assert_eq!(
        slug("Blockade, pursuit, transport, storm"),
        "blockade-pursuit-transport-storm"
    );
    assert_eq!(
        slug("Field battles (`system = \"field\"`)"),
        "field-battles-system--field"
    );
    assert_eq!(slug("See [the CRT](x.md#crt) here"), "see-the-crt-here");
    let twice = anchors("# A\n## Notes\n```\n## not a heading\n```\n### Notes\n");
    assert_eq!(
        twice,
        BTreeSet::from(["a".into(), "notes".into(), "notes-1".into()])
    );
}

#[test]
fn links_are_found_outside_code_only() {
    let page = "See [a](a.md) and ![b](img/b.png \"title\").\n\
                `[not](a link)` and\n```\n[nor](this)\n```\n[c](#here)";
    assert_eq!(links(page), ["a.md", "img/b.png", "#here"]);
}

#[test]
fn a_broken_link_is_caught() {
    let readme = root().join("README.md");
    assert!(broken(&readme, "docs/README.md").is_none());
    assert!(broken(&readme, "docs/no-such-page.md").is_some());
    assert!(broken(&readme, "docs/README.md#the-rules-systems").is_none());
    assert!(broken(&readme, "docs/README.md#no-such-heading").is_some());
    let outside = ["../", "shared/", "RULES", ".md"].concat();
    assert!(broken(&readme, &outside).is_some());
    assert!(broken(&readme, "../../etc/passwd").is_some());
}

#[test]
fn every_relative_link_in_the_docs_reaches_a_file_of_the_repository() {
    let pages = pages();
    let names: Vec<String> = pages
        .iter()
        .map(|p| p.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    for must in ["README.md", "docs/README.md", "docs/systems/field.md"] {
        assert!(
            names.iter().any(|n| n == must),
            "{must} not found in {names:?}"
        );
    }
    let mut faults = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = fs::read_to_string(page).unwrap();
        for target in links(&text) {
            checked += 1;
            if let Some(why) = broken(page, &target) {
                faults.push(format!(
                    "{}: ({target}) {why}",
                    page.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser right?"
    );
    assert!(faults.is_empty(), "broken links:\n{}", faults.join("\n"));
}

#[test]
fn every_docs_page_is_listed_in_the_docs_index() {
    let index = fs::read_to_string(root().join("docs/README.md")).unwrap();
    let listed: BTreeSet<String> = links(&index)
        .into_iter()
        .map(|l| l.split('#').next().unwrap().to_string())
        .collect();
    let mut pages = Vec::new();
    files(&root().join("docs"), ".md", &mut pages);
    let missing: Vec<String> = pages
        .iter()
        .map(|p| {
            p.strip_prefix(root().join("docs"))
                .unwrap()
                .display()
                .to_string()
        })
        .filter(|p| p != "README.md" && !listed.contains(p))
        .collect();
    assert!(missing.is_empty(), "not in docs/README.md: {missing:?}");
}

#[test]
fn nothing_the_project_ships_refers_to_files_outside_it() {
    // Built here so that this file does not match itself.
    let needles = [
        ["RULES", ".md"].concat(),
        ["../", "shared"].concat(),
        ["seeds", "/"].concat(),
        ["frontier-", "readings.md"].concat(),
        ["melee-", "readings.md"].concat(),
    ];
    let mut sources = Vec::new();
    for ext in [".md", ".rs", ".toml", ".sh", ".yaml", ".sbatch"] {
        files(&root(), ext, &mut sources);
    }
    sources.push(root().join(".ci/run"));
    let mut faults = Vec::new();
    for file in &sources {
        let Ok(text) = fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for needle in &needles {
                if line.contains(needle.as_str()) {
                    faults.push(format!(
                        "{}:{}: {needle}",
                        file.strip_prefix(root()).unwrap().display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(sources.len() > 100, "only {} files searched", sources.len());
    assert!(
        faults.is_empty(),
        "references to files a user's checkout does not have (point at docs/ instead):\n{}",
        faults.join("\n")
    );
}
