//! Where a report may be written, and writing it there without losing anything.
//!
//! Why this module exists: `--out` names a path on the user's disk, and a report run
//! replaces what is there. That must never cost the user a file. So the rules live in
//! one place, are checked before any work starts ([`check_target`]) and again at the
//! moment of the swap ([`write_atomically`]):
//!
//! - A report may go where nothing is, into an empty folder, or over a **battlelab
//!   report**: a folder whose `manifest.json` says `"tool": "battlelab"` and lists its
//!   `files`, and which holds nothing but those files. Anything else — a file, a link, a
//!   folder of the user's, a report the user added files to, `.`, `/`, `x/..` — is
//!   refused with a message that says what is there and what to do.
//! - A battlelab report is replaced silently only by a report of the same [`Identity`]:
//!   the same kind (run, shard, compare, value, equilibrium) of the same analysis
//!   (its name; for a comparison, what was compared). Over a report of another analysis
//!   or kind the command is refused before any work (exit 2) unless it was given
//!   `--replace`. (Checked when the command starts; the swap itself re-checks only that
//!   a battlelab report is there.)
//! - A report is written into a staging folder `.<name>.partial-<pid>` beside the target,
//!   locked (`flock`) for as long as its run lives, every file fsynced, and then swapped
//!   into place in one step (`renameat2(RENAME_EXCHANGE)` on Linux: there is no moment
//!   with neither report in place). The old report, now at the staging path, is removed
//!   file by file, only the files its manifest lists, its manifest last. Where that
//!   fails (a file the system will not let go), the new report stands and the command
//!   still succeeds (exit 0), but a warning on stderr names the folder left behind; it
//!   is still a battlelab report, which the next report written to the same place
//!   removes.
//! - Staging folders left by a killed run are removed by the next run, but only when no
//!   live process holds their lock and they are recognisably battlelab's.
//! - A stop request ([`crate::interrupt`]) before the swap removes the staging folder
//!   and writes nothing.

use std::fs::{self, File};
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::report::ReportError;

/// The manifest every report folder holds; it lists the folder's files.
pub const MANIFEST: &str = "manifest.json";
/// The copy of the analysis file in every report.
pub const ANALYSIS_COPY: &str = "analysis.toml";
/// Marks a staging folder while it is being written (removed before the swap).
const STAGING_MARK: &str = ".battlelab-staging";
/// Longest report folder name, in bytes: file systems allow 255 per name, and the
/// staging folder adds a prefix and suffix.
pub const MAX_FOLDER_NAME_BYTES: usize = 200;
/// Largest manifest read when recognising a report.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Why a report cannot be written at a path. Checked before a run starts.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the report to {path}: {reason}")]
pub struct OutputError {
    pub path: String,
    pub reason: String,
}

fn refuse(path: &Path, reason: impl Into<String>) -> OutputError {
    OutputError {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

const PICK_ANOTHER: &str =
    "battlelab only replaces its own report folders or empty ones; give --out a new folder's path";

/// What a report is of: its kind and the analysis (or comparison) it was made from. A
/// report replaces another of the same identity silently, and one of another identity
/// only when asked (`--replace`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `run` (also what `merge` writes: a run's report from its shards), `shard`,
    /// `compare`, `value`, `equilibrium`.
    pub kind: String,
    /// The analysis's name (its `name`, else its file's stem); for a comparison, what was
    /// compared.
    pub name: String,
}

impl Identity {
    pub fn new(kind: &str, name: &str) -> Self {
        Self {
            kind: kind.to_string(),
            name: name.to_string(),
        }
    }

    /// The identity a manifest records. Reports written before identities were recorded
    /// are read as well as they can be: a run report (no `kind`) by its `name`, a shard
    /// by its `shard`, a comparison by what it compared, the others by their analysis
    /// file's stem.
    fn of_manifest(manifest: &serde_json::Value) -> Self {
        let text = |key: &str| manifest.get(key).and_then(|v| v.as_str());
        let kind = match text("kind") {
            Some(kind) => kind,
            None if manifest.get("shard").is_some() => "shard",
            None => "run",
        };
        let name = match (text("name"), kind) {
            (Some(name), _) => name.to_string(),
            (None, "compare") => {
                compared(text("a").unwrap_or_default(), text("b").unwrap_or_default())
            }
            (None, _) => text("analysis")
                .and_then(|a| Path::new(a).file_stem())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        Self::new(kind, &name)
    }

    /// `the run report of "field_combat"`.
    fn describe(&self) -> String {
        let name = crate::limits::echo(&self.name);
        match self.kind.as_str() {
            "compare" => format!("the compare report of {name}"),
            kind => format!("the {kind} report of \"{name}\""),
        }
    }
}

/// The name a comparison's identity carries: `A against B`.
pub fn compared(a: &str, b: &str) -> String {
    format!("{a} against {b}")
}

/// What is at a report path now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Existing {
    Nothing,
    EmptyFolder,
    /// A battlelab report: the files its manifest lists (all it holds), and what it is
    /// of.
    Report {
        files: Vec<String>,
        identity: Identity,
    },
}

/// The folder a report goes into: its parent and its name.
#[derive(Debug, Clone)]
struct Target {
    parent: PathBuf,
    name: String,
}

/// Checks, before any work, that a report of `identity` can be written at `out` without
/// losing anything: see the module docs. `inputs` (the analysis file) must not lie inside
/// it; a report of another identity there is refused unless `replace`.
pub fn check_target(
    out: &Path,
    inputs: &[&Path],
    identity: &Identity,
    replace: bool,
) -> Result<(), OutputError> {
    let target = target(out)?;
    let existing = classify(out)?;
    if let Existing::Report {
        identity: there, ..
    } = &existing
    {
        if there != identity && !replace {
            return Err(refuse(
                out,
                format!(
                    "it holds {}, and this command writes {}; battlelab replaces a report without asking only with a new one of the same analysis and kind. Give --out another folder, or add --replace to replace it",
                    there.describe(),
                    identity.describe()
                ),
            ));
        }
    }
    if existing != Existing::Nothing {
        if let Ok(folder) = out.canonicalize() {
            for input in inputs {
                if input.canonicalize().is_ok_and(|i| i.starts_with(&folder)) {
                    return Err(refuse(
                        out,
                        format!(
                            "it holds the analysis file {} itself; give --out another folder",
                            input.display()
                        ),
                    ));
                }
            }
        }
    }
    parent_can_hold(out, &target.parent)
}

/// The parent and name of `out`, refusing paths that do not end in a plain name.
fn target(out: &Path) -> Result<Target, OutputError> {
    let last = out.components().next_back();
    let Some(Component::Normal(name)) = last else {
        return Err(refuse(
            out,
            "that path does not name a folder battlelab can create or replace (., .., / and the like are refused); give a path such as reports/my_run",
        ));
    };
    let Some(name) = name.to_str() else {
        return Err(refuse(
            out,
            "the folder name is not valid UTF-8; pick a plain name",
        ));
    };
    if name.len() > MAX_FOLDER_NAME_BYTES {
        return Err(refuse(
            out,
            format!(
                "the folder name is {} bytes long; at most {MAX_FOLDER_NAME_BYTES} are allowed",
                name.len()
            ),
        ));
    }
    if staging_owner(name).is_some() {
        return Err(refuse(
            out,
            "names of the form .NAME.partial-N are battlelab's staging folders; pick another name",
        ));
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    Ok(Target {
        parent,
        name: name.to_string(),
    })
}

/// The nearest existing ancestor of the report folder must be a folder.
fn parent_can_hold(out: &Path, parent: &Path) -> Result<(), OutputError> {
    for ancestor in parent.ancestors() {
        let ancestor = if ancestor.as_os_str().is_empty() {
            Path::new(".")
        } else {
            ancestor
        };
        match fs::metadata(ancestor) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(refuse(
                    out,
                    format!(
                        "{} is a file, so no folder can be made inside it",
                        ancestor.display()
                    ),
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(refuse(
                    out,
                    format!("cannot read {}: {e}", ancestor.display()),
                ))
            }
        }
    }
    Ok(())
}

/// What is at `out`, or why it must not be replaced.
fn classify(out: &Path) -> Result<Existing, OutputError> {
    let meta = match fs::symlink_metadata(out) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Nothing),
        Err(e) => return Err(refuse(out, format!("cannot read it: {e}"))),
    };
    if meta.file_type().is_symlink() {
        return Err(refuse(
            out,
            format!("it is a symbolic link; battlelab does not replace links. {PICK_ANOTHER}"),
        ));
    }
    if !meta.is_dir() {
        return Err(refuse(
            out,
            format!("it is a file, not a report folder, and battlelab never replaces a file. {PICK_ANOTHER}"),
        ));
    }
    let mut entries = Vec::new();
    for entry in fs::read_dir(out).map_err(|e| refuse(out, format!("cannot list it: {e}")))? {
        let entry = entry.map_err(|e| refuse(out, format!("cannot list it: {e}")))?;
        // A name that is not UTF-8 cannot be one battlelab wrote: foreign.
        let name = entry.file_name();
        let plain = entry.file_type().is_ok_and(|t| t.is_file()) && name.to_str().is_some();
        entries.push((name.to_string_lossy().into_owned(), plain));
    }
    if entries.is_empty() {
        return Ok(Existing::EmptyFolder);
    }
    entries.sort();
    let listing = |names: &[&str]| {
        let shown: Vec<&str> = names.iter().take(3).copied().collect();
        let more = names.len().saturating_sub(3);
        if more > 0 {
            format!("{} and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        }
    };
    let all: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    let Some((files, identity)) = manifest_files(&out.join(MANIFEST)) else {
        return Err(refuse(
            out,
            format!(
                "it is a folder that is not a battlelab report (it holds {}, and no manifest.json written by battlelab). {PICK_ANOTHER}",
                listing(&all)
            ),
        ));
    };
    let Some(files) = files else {
        return Err(refuse(
            out,
            format!("it is a report written by an older battlelab whose manifest does not list its files, so battlelab cannot tell its files from yours; move or delete that folder yourself, or {}", &PICK_ANOTHER[PICK_ANOTHER.find("give").unwrap_or(0)..]),
        ));
    };
    let foreign: Vec<&str> = entries
        .iter()
        .filter(|(name, plain)| !plain || !files.contains(name))
        .map(|(name, _)| name.as_str())
        .collect();
    if !foreign.is_empty() {
        return Err(refuse(
            out,
            format!(
                "it is a battlelab report, but it also holds {} that battlelab did not write; move {} out first, or give --out another folder",
                listing(&foreign),
                if foreign.len() == 1 { "it" } else { "them" }
            ),
        ));
    }
    Ok(Existing::Report { files, identity })
}

/// The files a battlelab manifest lists (`None` inside if it is one from before
/// manifests listed their files) and the identity it records; `None` if `path` is not a
/// battlelab manifest.
fn manifest_files(path: &Path) -> Option<(Option<Vec<String>>, Identity)> {
    use std::io::Read;
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_MANIFEST_BYTES {
        return None;
    }
    let mut text = String::new();
    File::open(path).ok()?.read_to_string(&mut text).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    if json.get("tool")?.as_str()? != "battlelab" {
        return None;
    }
    let identity = Identity::of_manifest(&json);
    let Some(files) = json.get("files") else {
        return Some((None, identity));
    };
    let files: Option<Vec<String>> = files
        .as_array()?
        .iter()
        .map(|f| f.as_str().map(str::to_string))
        .filter(|f| {
            // A listed name must be a plain file name inside the folder: one normal
            // path component, no separators.
            f.as_deref().is_none_or(|f| {
                !f.contains(['/', '\\'])
                    && matches!(
                        Path::new(f).components().collect::<Vec<_>>()[..],
                        [Component::Normal(_)]
                    )
            })
        })
        .collect();
    Some((Some(files?), identity))
}

/// If `name` is a staging folder name `.<report>.partial-<pid>`, the pid.
fn staging_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (_, pid) = rest.rsplit_once(".partial-")?;
    pid.parse().ok()
}

/// Runs `write` on a fresh staging folder beside `out` and swaps it into place only when
/// `write` succeeds and no stop was requested; see the module docs. Returns the files of
/// the new report, sorted.
pub fn write_atomically(
    out: &Path,
    write: impl FnOnce(&Path) -> Result<(), ReportError>,
) -> Result<Vec<PathBuf>, ReportError> {
    let target = target(out)?;
    // Checked again here: the folder may have changed while the run went on.
    classify(out)?;
    // From before the staging folder exists until it is swapped in or removed, a stop is
    // left to this function (it polls, below and in `write`), so no partial folder stays.
    let _deferral = crate::interrupt::defer();
    let parent = &target.parent;
    fs::create_dir_all(parent).map_err(io_error(parent))?;
    remove_stale_staging(parent, &target.name);
    let staging = parent.join(format!(".{}.partial-{}", target.name, std::process::id()));
    fs::create_dir(&staging).map_err(io_error(&staging))?;
    // Held until this function returns: other runs see the folder as live. Blocking: a
    // cleaner that opened the new folder holds its lock only for a moment, and a run
    // must never go on unlocked.
    let lock = File::open(&staging).map_err(io_error(&staging))?;
    if let Err(e) = lock.lock() {
        let _ = fs::remove_dir(&staging);
        return Err(io_error(&staging)(e));
    }
    let written = File::create(staging.join(STAGING_MARK))
        .map_err(io_error(&staging))
        .and_then(|_| write(&staging))
        .and_then(|()| crate::interrupt::check().map_err(ReportError::from))
        .and_then(|()| seal(&staging));
    if let Err(error) = written {
        let _ = fs::remove_dir_all(&staging);
        return Err(error);
    }
    // The last moment a stop request prevents the report.
    if crate::interrupt::requested() {
        let _ = fs::remove_dir_all(&staging);
        return Err(crate::sim::Interrupted.into());
    }
    let retired = match swap_into_place(&staging, out) {
        Ok(retired) => retired,
        Err(error) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(error);
        }
    };
    sync_dir(parent);
    if let Some((path, files)) = retired {
        if let Err(leftover) = remove_report(&path, &files) {
            // The new report is whole and in place: the command succeeds, and says what
            // it could not clean up.
            eprintln!("{}", leftover_warning(out, &path, &leftover));
        }
    }
    drop(lock);
    let mut files: Vec<PathBuf> = fs::read_dir(out)
        .map_err(io_error(out))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    Ok(files)
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Lists the staging folder's files in its manifest, then fsyncs every file and the
/// folder, so that what is renamed into place is on disk.
fn seal(staging: &Path) -> Result<(), ReportError> {
    fs::remove_file(staging.join(STAGING_MARK)).map_err(io_error(staging))?;
    let mut names: Vec<String> = Vec::new();
    for entry in fs::read_dir(staging).map_err(io_error(staging))? {
        let entry = entry.map_err(io_error(staging))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    let manifest_path = staging.join(MANIFEST);
    let text = fs::read_to_string(&manifest_path).map_err(io_error(&manifest_path))?;
    let mut manifest: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ReportError::Io {
            path: manifest_path.display().to_string(),
            source: io::Error::other(e),
        })?;
    if let Some(object) = manifest.as_object_mut() {
        object.insert("files".into(), serde_json::json!(names));
    }
    let text = serde_json::to_string_pretty(&manifest).expect("JSON values serialise") + "\n";
    fs::write(&manifest_path, text).map_err(io_error(&manifest_path))?;
    for name in &names {
        let path = staging.join(name);
        File::open(&path)
            .and_then(|f| f.sync_all())
            .map_err(io_error(&path))?;
    }
    File::open(staging)
        .and_then(|f| f.sync_all())
        .map_err(io_error(staging))
}

/// Puts the sealed staging folder at `out`. Returns where the replaced report now lies
/// and its files, if one was replaced.
fn swap_into_place(
    staging: &Path,
    out: &Path,
) -> Result<Option<(PathBuf, Vec<String>)>, ReportError> {
    // Two tries: another run may create `out` between the check and the rename.
    for _ in 0..2 {
        match classify(out)? {
            Existing::Nothing => match rename_noreplace(staging, out) {
                Ok(()) => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_error(out)(e)),
            },
            Existing::EmptyFolder => {
                exchange(staging, out).map_err(io_error(out))?;
                // The old empty folder is now at the staging path.
                let _ = fs::remove_dir(staging);
                return Ok(None);
            }
            Existing::Report { files, .. } => {
                exchange(staging, out).map_err(io_error(out))?;
                return Ok(Some((staging.to_path_buf(), files)));
            }
        }
    }
    Err(io_error(out)(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "another process keeps creating this folder",
    )))
}

#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: both paths are valid NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether the file system refused the flags themselves (then the portable path is used).
#[cfg(target_os = "linux")]
fn unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::ENOSYS | libc::ENOTSUP)
    )
}

/// Renames `from` to `to`, failing with `AlreadyExists` if `to` exists.
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    match renameat2(from, to, libc::RENAME_NOREPLACE) {
        Err(e) if unsupported(&e) => {}
        other => return other,
    }
    if fs::symlink_metadata(to).is_ok() {
        return Err(io::Error::new(io::ErrorKind::AlreadyExists, "exists"));
    }
    fs::rename(from, to)
}

/// Swaps two folders. On Linux in one step; elsewhere by two renames, undoing the
/// first if the second fails, so that `b` always ends up holding one of the two.
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    match renameat2(a, b, libc::RENAME_EXCHANGE) {
        Err(e) if unsupported(&e) => {}
        other => return other,
    }
    let mut aside = a.as_os_str().to_owned();
    aside.push(".swap");
    let aside = PathBuf::from(aside);
    fs::rename(b, &aside)?;
    if let Err(e) = fs::rename(a, b) {
        let _ = fs::rename(&aside, b);
        return Err(e);
    }
    fs::rename(&aside, a)
}

fn sync_dir(dir: &Path) {
    // Best effort: some file systems refuse fsync on a directory.
    if let Ok(f) = File::open(dir) {
        let _ = f.sync_all();
    }
}

/// Removes a replaced report: the files its manifest listed, its manifest last (so that
/// a report that could not be removed whole is still one, which the next run to the same
/// place removes), then the folder. Anything else in it stays. The error says what was
/// left.
fn remove_report(folder: &Path, files: &[String]) -> Result<(), String> {
    let mut left: Vec<String> = Vec::new();
    let mut first_error: Option<io::Error> = None;
    let ordered = files
        .iter()
        .filter(|n| *n != MANIFEST)
        .chain(files.iter().filter(|n| *n == MANIFEST));
    for name in ordered {
        if name == MANIFEST && !left.is_empty() {
            // Kept: the folder stays a report the next run can recognise and remove.
            break;
        }
        let path = folder.join(name);
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            if let Err(e) = fs::remove_file(&path) {
                first_error.get_or_insert(e);
                left.push(name.clone());
            }
        }
    }
    match fs::remove_dir(folder) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => {
            let why = first_error.unwrap_or(e);
            Err(if left.is_empty() {
                format!("it still holds files battlelab did not write ({why})")
            } else {
                format!(
                    "{} could not be removed ({why}); it keeps its manifest, so it is still a battlelab report",
                    left.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                        + if left.len() > 3 { " and more" } else { "" }
                )
            })
        }
    }
}

/// The warning printed when a replaced report could not be removed after the swap.
fn leftover_warning(out: &Path, leftover: &Path, why: &str) -> String {
    format!(
        "warning: the new report is complete at {}, but the report it replaced was left behind at {}: {why}. battlelab removes that folder the next time it writes a report to {} (if the system lets it); or delete it yourself",
        out.display(),
        leftover.display(),
        out.display()
    )
}

/// Removes staging folders of the report `name` that no live run holds: still marked
/// as staging (a run killed while writing), or a replaced report a run was killed
/// before removing. A folder a live run has locked is left alone.
fn remove_stale_staging(parent: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let prefix = format!(".{name}.partial-");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let Some(rest) = file_name.strip_prefix(&prefix) else {
            continue;
        };
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        // A report set aside by the portable swap of a run killed in the middle: put it
        // back where it was if nothing took its place, else it was replaced.
        if let Some(pid) = rest.strip_suffix(".swap") {
            if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) {
                if let Ok(Existing::Report { files, .. }) = classify(&path) {
                    let out = parent.join(name);
                    if fs::symlink_metadata(&out).is_err() {
                        let _ = rename_noreplace(&path, &out);
                    } else {
                        let _ = remove_report(&path, &files);
                    }
                }
            }
            continue;
        }
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(handle) = File::open(&path) else {
            continue;
        };
        if handle.try_lock().is_err() {
            continue; // a live run is writing it
        }
        if path.join(STAGING_MARK).is_file() {
            let _ = fs::remove_dir_all(&path);
        } else if let Ok(Existing::Report { files, .. }) = classify(&path) {
            let _ = remove_report(&path, &files);
        } else {
            // Killed before it wrote anything (or after an empty folder was swapped out):
            // only an empty folder goes, and a PID reused later can stage again.
            let _ = fs::remove_dir(&path);
        }
    }
}

/// Checks that `write_owned_file(path, …, marker)` may write `path`: nothing is there, or
/// a file battlelab wrote (one whose start contains `marker`), not a link or a folder.
pub fn check_owned_file(path: &Path, marker: &str) -> Result<(), OutputError> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(refuse(path, format!("cannot read it: {e}"))),
        Ok(meta) if !meta.is_file() => {
            return Err(refuse(
                path,
                "it is not a plain file (a folder or a link); give a new file's path",
            ))
        }
        Ok(_) => {
            // Only its start: a page battlelab wrote may be megabytes (the playground).
            let mut head = Vec::new();
            if let Ok(file) = File::open(path) {
                use std::io::Read;
                let _ = file.take(4096).read_to_end(&mut head);
            }
            let head = String::from_utf8_lossy(&head);
            if !head.chars().take(400).collect::<String>().contains(marker) {
                return Err(refuse(
                    path,
                    "it is a file battlelab did not write, and battlelab never replaces a file of yours; give a new file's path",
                ));
            }
        }
    }
    Ok(())
}

/// Writes `text` to the file `path`, atomically (a temporary file beside it, fsynced, then
/// renamed), refusing before anything is written where [`check_owned_file`] refuses.
pub fn write_owned_file(path: &Path, text: &str, marker: &str) -> Result<(), OutputError> {
    use std::io::Write;
    check_owned_file(path, marker)?;
    let name = path
        .file_name()
        .ok_or_else(|| refuse(path, "that path does not name a file"))?
        .to_string_lossy()
        .into_owned();
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let temporary = parent.join(format!(".{name}.partial-{}", std::process::id()));
    // A stop waits until the temporary file is renamed or removed (a moment).
    let _deferral = crate::interrupt::defer();
    // `create_new`: a file already at the temporary name is not ours to truncate.
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .map_err(|e| {
            refuse(
                path,
                format!("could not create {}: {e}", temporary.display()),
            )
        })?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&temporary, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&temporary);
        return Err(refuse(path, format!("could not write it: {e}")));
    }
    Ok(())
}

/// Largest file battlelab reads back from a folder it wrote (a shard's counts).
pub const MAX_READ_BACK_BYTES: u64 = 1 << 30;

/// Reads a UTF-8 file of at most `cap` bytes.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    File::open(path)?.take(cap + 1).read_to_string(&mut text)?;
    if text.len() as u64 > cap {
        return Err(io::Error::other(format!("larger than {} KiB", cap >> 10)));
    }
    Ok(text)
}

/// Reads a UTF-8 file of at most [`MAX_READ_BACK_BYTES`].
pub fn read_small_file(path: &Path) -> io::Result<String> {
    read_capped(path, MAX_READ_BACK_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_names_are_recognised() {
        assert_eq!(staging_owner(".field.partial-123"), Some(123));
        assert_eq!(staging_owner(".a.b.partial-7"), Some(7));
        assert_eq!(staging_owner("field.partial-123"), None);
        assert_eq!(staging_owner(".field.partial-x"), None);
    }

    #[test]
    fn exchange_swaps_two_folders_and_noreplace_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::create_dir(&a).unwrap();
        fs::create_dir(&b).unwrap();
        fs::write(a.join("new"), "").unwrap();
        fs::write(b.join("old"), "").unwrap();
        exchange(&a, &b).unwrap();
        assert!(b.join("new").is_file() && a.join("old").is_file());
        let err = rename_noreplace(&a, &b).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(b.join("new").is_file() && a.join("old").is_file());
        let c = dir.path().join("c");
        rename_noreplace(&a, &c).unwrap();
        assert!(c.join("old").is_file() && !a.exists());
    }

    #[test]
    fn a_replaced_report_loses_only_the_files_its_manifest_listed() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old");
        fs::create_dir(&old).unwrap();
        fs::write(old.join("results.csv"), "").unwrap();
        fs::write(old.join("mine.txt"), "").unwrap();
        let left = remove_report(&old, &["results.csv".to_string()]).unwrap_err();
        assert!(old.join("mine.txt").is_file() && !old.join("results.csv").exists());
        assert!(left.contains("did not write"), "{left}");
        // The whole report goes, and the folder with it.
        fs::remove_file(old.join("mine.txt")).unwrap();
        fs::write(old.join("results.csv"), "").unwrap();
        fs::write(old.join(MANIFEST), "{}").unwrap();
        remove_report(&old, &[MANIFEST.to_string(), "results.csv".to_string()]).unwrap();
        assert!(!old.exists());
    }

    #[test]
    fn identities_are_read_from_manifests_old_and_new() {
        let of = |text: &str| Identity::of_manifest(&serde_json::from_str(text).unwrap());
        assert_eq!(
            of(r#"{"tool": "battlelab", "name": "field_combat", "system": "field"}"#),
            Identity::new("run", "field_combat")
        );
        assert_eq!(
            of(r#"{"tool": "battlelab", "name": "x", "shard": 2, "shards": 3}"#),
            Identity::new("shard", "x")
        );
        assert_eq!(
            of(r#"{"tool": "battlelab", "kind": "compare", "a": "p", "b": "q"}"#),
            Identity::new("compare", &compared("p", "q"))
        );
        assert_eq!(
            of(r#"{"tool": "battlelab", "kind": "value", "analysis": "analyses/melee.toml"}"#),
            Identity::new("value", "melee")
        );
        assert_eq!(
            of(
                r#"{"tool": "battlelab", "kind": "equilibrium", "name": "g", "analysis": "x.toml"}"#
            ),
            Identity::new("equilibrium", "g")
        );
    }

    #[test]
    fn paths_without_a_final_name_are_refused() {
        for path in [".", "/", "x/..", ".."] {
            assert!(target(Path::new(path)).is_err(), "{path}");
        }
        assert_eq!(target(Path::new("reports/x")).unwrap().name, "x");
        assert_eq!(target(Path::new("x")).unwrap().parent, PathBuf::from("."));
    }
}
