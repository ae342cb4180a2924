//! battlelab's core as a WebAssembly module: one function, JSON in and JSON out.
//!
//! Why this crate exists: the report page and the playground recompute an analysis in
//! the browser, and their numbers must be the command line's. This crate is the only
//! thing between the page and `battlelab-core`: it applies the page's edits to the
//! analysis text (comments kept), parses it with the parser the command line runs (the
//! core's registry, companion files handed over in memory), and runs the plan block by
//! block through the driver's own block loop. [`call`] is the whole API; the C-ABI
//! exports below hand it the request and hand back the response, so native tests
//! exercise exactly what the page runs. The API is written down in `docs/wasm-api.md`.
//!
//! Why a C ABI with JSON and not wasm-bindgen: one export and a string each way is all
//! the page needs, it builds with `cargo` alone (no wasm-bindgen CLI to match to the
//! crate's version), and the JavaScript side is twenty lines the page owns.

mod answer;
mod describe;
mod edit;
mod run;
mod value;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use battlelab_core::engine::dynamic::AnyStudy;
use battlelab_core::files::InMemory;
use battlelab_core::toml_input::AnalysisError;
use serde::Deserialize;
use serde_json::{json, Value};

/// One request, as the page sends it (`op` picks what to do).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    op: String,
    #[serde(default)]
    analysis: Option<AnalysisText>,
    /// Companion files (a rules file) by the path the analysis gives.
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// Dotted key path → TOML value as JSON; `rules:` paths edit the rules file.
    #[serde(default)]
    edits: serde_json::Map<String, Value>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    trials: Option<u64>,
    #[serde(default)]
    exact_only: bool,
    /// `step`: how many blocks to run.
    #[serde(default)]
    blocks: Option<u64>,
    /// `value`: the modifiers to price (`battlelab value --modifier`; none: the file's
    /// `[value]`, else the system's own list).
    #[serde(default)]
    modifiers: Vec<String>,
    /// `value`: the headline (`--headline`: a key, or `all`).
    #[serde(default)]
    headline: Option<String>,
    /// `compare`: the two variants compared (`--variants A,B`).
    #[serde(default)]
    variants: Option<String>,
    /// `compare`: Benjamini–Hochberg rather than Holm (`--fdr`).
    #[serde(default)]
    fdr: bool,
    /// `compare`: the significance level (`--alpha`; 0.05 when absent).
    #[serde(default)]
    alpha: Option<f64>,
    /// `compare`: the most battles to simulate (none: no limit).
    #[serde(default)]
    max_battles: Option<u64>,
    /// `equilibrium`: the payoff (`--payoff`; none: the file's own).
    #[serde(default)]
    payoff: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalysisText {
    name: String,
    text: String,
}

/// Why a request was refused: the command line's message, and where it points.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub message: String,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub key: Option<String>,
}

impl Refusal {
    /// A refusal of the request itself (not of the analysis).
    fn request(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            file: None,
            line: None,
            key: None,
        }
    }

    /// A refusal of the analysis file `file` as a whole (no one line or key).
    pub(crate) fn of_file(file: &str, message: impl Into<String>) -> Self {
        Self {
            file: Some(file.to_string()),
            ..Self::request(message)
        }
    }

    fn to_json(&self) -> Value {
        json!({"error": {
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "key": self.key,
        }})
    }
}

impl From<AnalysisError> for Refusal {
    /// The text `battlelab` prints after `error: ` (and its cause, for a file it could
    /// not read), with the file, line and key.
    fn from(error: AnalysisError) -> Self {
        match &error {
            AnalysisError::Read { file, source } => Self {
                message: format!("{error}: {source}"),
                file: Some(file.clone()),
                line: None,
                key: None,
            },
            AnalysisError::Syntax { file, .. } => Self {
                message: error.to_string(),
                file: Some(file.clone()),
                line: None,
                key: None,
            },
            AnalysisError::Invalid {
                file, line, field, ..
            } => Self {
                message: error.to_string(),
                file: Some(file.clone()),
                line: *line,
                key: Some(field.clone()),
            },
        }
    }
}

/// The controls of one long call (`value` or `compare` simulating): after every block the
/// trials done so far go to the page's progress bar through the import
/// `env.bl_progress(done)` (the Worker posts them to the page while the call runs);
/// natively, nowhere.
pub(crate) fn reporting() -> battlelab_core::sim::RunControl {
    battlelab_core::sim::RunControl {
        on_progress: Some(report_progress),
        ..Default::default()
    }
}

#[cfg(target_arch = "wasm32")]
fn report_progress(done: u64) {
    #[link(wasm_import_module = "env")]
    extern "C" {
        fn bl_progress(done: f64);
    }
    // SAFETY: the page's Worker provides `env.bl_progress`, which takes one number and
    // only posts it to the page.
    unsafe { bl_progress(done as f64) }
}

#[cfg(not(target_arch = "wasm32"))]
fn report_progress(_done: u64) {}

/// An analysis after the edits, parsed: what every op works on.
pub(crate) struct Parsed {
    /// The analysis's name (its file name, no folder: companion paths are relative to it).
    pub name: String,
    /// The edited analysis text.
    pub text: String,
    /// The companion files, edited.
    pub files: InMemory,
    pub study: Arc<dyn AnyStudy>,
}

/// Runs one request and returns its response, both JSON text. Never panics: a panic is
/// reported as an error naming a bug.
pub fn call(request: &str) -> String {
    let response = std::panic::catch_unwind(|| respond(request)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        bug(&what)
    });
    response.to_string()
}

/// The response to a panic: a bug in battlelab, not in the analysis.
fn bug(what: &str) -> Value {
    Refusal::request(format!(
        "internal error (a bug in battlelab, please report it with the analysis): {what}"
    ))
    .to_json()
}

fn respond(request: &str) -> Value {
    let request: Request = match serde_json::from_str(request) {
        Ok(r) => r,
        Err(e) => return Refusal::request(format!("the request is not valid: {e}")).to_json(),
    };
    match dispatch(request) {
        Ok(ok) => json!({ "ok": ok }),
        Err(refusal) => refusal.to_json(),
    }
}

fn dispatch(request: Request) -> Result<Value, Refusal> {
    match request.op.as_str() {
        "describe" => describe::describe(&parse(&request)?),
        "run" => {
            let parsed = parse(&request)?;
            run::run(&parsed, request.seed, request.trials, request.exact_only)
        }
        "start" => {
            let parsed = parse(&request)?;
            run::start(&parsed, request.seed, request.trials)
        }
        "step" => run::step(request.blocks.unwrap_or(1)),
        "value" => {
            let parsed = parse(&request)?;
            value::value(
                &parsed,
                value::ValueRequest {
                    seed: request.seed,
                    trials: request.trials,
                    exact_only: request.exact_only,
                    asked: battlelab_core::pricing::Asked {
                        modifiers: request.modifiers.clone(),
                        headline: request.headline.clone(),
                    },
                },
            )
        }
        "compare" => {
            let parsed = parse(&request)?;
            answer::compare(
                &parsed,
                answer::CompareRequest {
                    variants: request.variants.clone(),
                    seed: request.seed,
                    trials: request.trials,
                    fdr: request.fdr,
                    alpha: request.alpha,
                    max_battles: request.max_battles,
                },
            )
        }
        "equilibrium" => answer::equilibrium(&parse(&request)?, request.payoff.as_deref()),
        "finish" => run::finish(),
        "download" => {
            let parsed = parse(&request)?;
            let mut files = serde_json::Map::new();
            files.insert(parsed.name.clone(), Value::String(parsed.text.clone()));
            for (name, text) in parsed.files.files() {
                files.insert(name.clone(), Value::String(text.clone()));
            }
            Ok(json!({ "files": files }))
        }
        other => Err(Refusal::request(format!(
            "unknown op \"{}\"; one of: describe, run, start, step, finish, value, compare, equilibrium, download",
            battlelab_core::limits::echo(other)
        ))),
    }
}

/// Applies the request's edits and parses the analysis as `battlelab run` does (its
/// `[[expect]]` entries checked against the plan).
fn parse(request: &Request) -> Result<Parsed, Refusal> {
    let analysis = request
        .analysis
        .as_ref()
        .ok_or_else(|| Refusal::request("this op needs \"analysis\": {\"name\", \"text\"}"))?;
    // Companion paths are relative to the analysis: name it by its file name alone, as
    // `battlelab run` is given it from its own folder.
    let name = analysis
        .name
        .rsplit(['/', '\\'])
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or("analysis.toml")
        .to_string();
    let files: BTreeMap<String, String> = request
        .files
        .iter()
        .map(|(k, v)| (battlelab_core::files::normalise(k), v.clone()))
        .collect();
    let (text, files) = edit::apply(&name, &analysis.text, files, &request.edits)?;
    let files = InMemory::new(files);
    let path = Path::new(&name);
    let study = battlelab_core::systems::parse(path, &text, &files)?;
    battlelab_core::engine::expect::parse(&name, &text, &study.plan(), &|run| {
        study.run_names(run)
    })?;
    Ok(Parsed {
        name,
        text,
        files,
        study,
    })
}

// ---------------------------------------------------------------------------------------
// The C ABI the page calls.

/// The last response, kept until the next call.
static RESPONSE: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// A panic's message, kept for [`bl_panic`] (on wasm32 a panic aborts the call).
static PANIC: Mutex<Option<String>> = Mutex::new(None);

fn keep(response: String) -> u32 {
    let mut kept = RESPONSE.lock().unwrap_or_else(|p| p.into_inner());
    *kept = response.into_bytes();
    kept.len() as u32
}

/// Memory for a request of `len` bytes.
#[no_mangle]
pub extern "C" fn bl_alloc(len: u32) -> *mut u8 {
    let mut buffer = Vec::<u8>::with_capacity(len as usize);
    let ptr = buffer.as_mut_ptr();
    std::mem::forget(buffer);
    ptr
}

/// Frees memory [`bl_alloc`] gave.
///
/// # Safety
/// `ptr` and `len` must be what one earlier `bl_alloc(len)` returned and was given.
#[no_mangle]
pub unsafe extern "C" fn bl_free(ptr: *mut u8, len: u32) {
    if !ptr.is_null() {
        drop(Vec::from_raw_parts(ptr, 0, len as usize));
    }
}

/// Runs the request at `ptr..ptr+len` (UTF-8 JSON); returns the response's length. The
/// response starts at [`bl_response`] and is valid until the next call.
///
/// # Safety
/// `ptr..ptr+len` must be readable memory (a buffer from [`bl_alloc`]).
#[no_mangle]
pub unsafe extern "C" fn bl_call(ptr: *const u8, len: u32) -> u32 {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            *PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some(info.to_string());
        }));
    });
    let bytes = std::slice::from_raw_parts(ptr, len as usize);
    let response = match std::str::from_utf8(bytes) {
        Ok(request) => call(request),
        Err(e) => Refusal::request(format!("the request is not UTF-8: {e}"))
            .to_json()
            .to_string(),
    };
    keep(response)
}

/// Where the last response starts.
#[no_mangle]
pub extern "C" fn bl_response() -> *const u8 {
    RESPONSE.lock().unwrap_or_else(|p| p.into_inner()).as_ptr()
}

/// After a call that trapped (a panic aborts on wasm32): keeps the error response naming
/// the bug and returns its length (read it at [`bl_response`]); 0 when no call panicked.
#[no_mangle]
pub extern "C" fn bl_panic() -> u32 {
    match PANIC.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(what) => keep(bug(&what).to_string()),
        None => 0,
    }
}
