//! The built module in Chromium answers as `battlelab_wasm::call` does natively.
//!
//! Why this test exists: `tests/wasm_api.rs` holds `call` to the command line natively;
//! this holds the `.wasm` the build embeds (`report::wasm::MODULE_GZ`, unpacked here) to
//! `call`. A page under the report's Content-Security-Policy plus `'wasm-unsafe-eval'`
//! compiles the inlined module with its one import (`env.bl_progress`, which records the
//! progress a long call reports), runs requests through the C ABI and writes the
//! responses (and each one's progress reports) into the page; headless Chromium dumps the page and each response
//! must equal the native one. The page works synchronously (`new WebAssembly.Module`), so
//! the dump holds its answers: `--dump-dom` does not wait for promises that are not
//! timers or loads. It prints the page's timings for the budgets of issue 43 (not
//! asserted: machines differ).

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The page: the module inlined, the requests run in order, the responses and the time
/// each took written into `<pre id="out">` as JSON.
fn page(module: &[u8], requests: &[Value]) -> String {
    // `</` cannot close the script from inside a JSON string written as `<\/`.
    let requests = serde_json::to_string(requests)
        .unwrap()
        .replace("</", "<\\/");
    format!(
        r#"<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; base-uri 'none'; form-action 'none'">
</head><body><pre id="out">pending</pre>
<script>
(() => {{
  const out = document.getElementById("out");
  try {{
    const t0 = performance.now();
    const bytes = Uint8Array.from(atob("{module}"), c => c.charCodeAt(0));
    let progress = [];
    const imports = {{ env: {{ bl_progress: (done) => {{ progress.push(done); }} }} }};
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), imports);
    const load = performance.now() - t0;
    const m = instance.exports, enc = new TextEncoder(), dec = new TextDecoder();
    const call = (request) => {{
      const input = enc.encode(request);
      const ptr = m.bl_alloc(input.length);
      new Uint8Array(m.memory.buffer, ptr, input.length).set(input);
      const len = m.bl_call(ptr, input.length);
      m.bl_free(ptr, input.length);
      return dec.decode(new Uint8Array(m.memory.buffer, m.bl_response(), len));
    }};
    const results = [];
    for (const request of {requests}) {{
      const t = performance.now();
      progress = [];
      const response = call(JSON.stringify(request));
      results.push({{ ms: performance.now() - t, response, progress }});
    }}
    out.textContent = JSON.stringify({{ load, results }});
  }} catch (e) {{
    out.textContent = "FAILED " + e;
  }}
}})();
</script></body></html>
"#,
        module = base64(module),
    )
}

/// Headless Chromium's dump of the page once its script has run.
fn dump(page: &Path) -> String {
    common::provision::CHROMIUM.ensure();
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::provision::on_path("chromium").expect("chromium"));
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium)
        .args(common::HEADLESS_CHROMIUM)
        .args(["--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("Chromium took more than two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    reader.join().unwrap()
}

#[test]
fn the_built_module_in_chromium_answers_as_call_does_natively() {
    let packed = battlelab::report::wasm::MODULE_GZ;
    assert!(
        !packed.is_empty(),
        "the build embedded no module: {}",
        battlelab::report::wasm::MISSING
    );
    let mut module = Vec::new();
    flate2::read::GzDecoder::new(packed)
        .read_to_end(&mut module)
        .expect("gzip");
    let crt = std::fs::read_to_string(root().join("analyses/classic_crt.toml")).unwrap();
    let rules = std::fs::read_to_string(root().join("rules/classic_crt.toml")).unwrap();
    let files = json!({"../rules/classic_crt.toml": rules});
    let analysis = json!({"name": "classic_crt.toml", "text": crt});
    let field = "name = \"field12v8\"\nsystem = \"field\"\nseed = 1815\ntrials = 1_000_000\n\n[side.a]\nsp = 12\nmorale = 2\nleader = 1\ntactic = { mix = { charge = 2, envelop = 1, bombard = 1 } }\n\n[side.b]\nsp = 8\nmorale = 2\nleader = 1\ntactic = { mix = { skirmish = 2, square = 1, refuse = 1 } }\n";
    let field_analysis = json!({"name": "field12v8.toml", "text": field});
    // The same battle simulated, with a second variant whose DRM is capped at 1.
    let variants = field.replace("trials = 1_000_000\n", "trials = 1_000_000\nexact = false\n")
        + "\n[battle]\nterrain_drm = 2\n\n[[variant]]\nname = \"printed\"\n\n[[variant]]\nname = \"DRM cap 1\"\nrules = { drm_cap = 1 }\n";
    let variants_analysis = json!({"name": "field_variants.toml", "text": variants});
    let requests = vec![
        json!({"op": "describe", "analysis": analysis, "files": files}),
        json!({"op": "run", "analysis": analysis, "files": files}),
        json!({"op": "run", "analysis": analysis, "files": files, "trials": 70_000, "seed": 3,
               "edits": {"sides.attacker.leader": 2}}),
        json!({"op": "describe", "analysis": analysis, "files": files,
               "edits": {"sides.attacker.leader": 7}}),
        json!({"op": "run", "analysis": field_analysis, "exact_only": true,
               "edits": {"side.a.drm": 1}}),
        json!({"op": "run", "analysis": field_analysis, "trials": 1_000_000}),
        json!({"op": "start", "analysis": field_analysis, "trials": 200_000, "seed": 4}),
        json!({"op": "step", "blocks": 2}),
        json!({"op": "finish"}),
        json!({"op": "compare", "analysis": variants_analysis, "variants": "printed,DRM cap 1",
               "trials": 140_000}),
    ];
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("module.html");
    std::fs::write(&html, page(&module, &requests)).unwrap();
    let dom = dump(&html);
    let start = dom.find("<pre id=\"out\">").expect("the page") + "<pre id=\"out\">".len();
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    assert!(!text.starts_with("FAILED") && text != "pending", "{text}");
    let page: Value = serde_json::from_str(&text).unwrap();
    let results = page["results"].as_array().unwrap();
    assert_eq!(results.len(), requests.len());
    let names = [
        "describe classic_crt",
        "run classic_crt (the file's 200,000 trials, 36 runs)",
        "run classic_crt, leader edited, 70,000 trials",
        "describe with a bad value",
        "exact field battle 12 v 8, DRM +1",
        "10^6 simulated field battles 12 v 8",
        "start",
        "step 2 blocks",
        "finish",
        "compare two variants, 2 × 140,000 simulated field battles",
    ];
    println!(
        "module: {} bytes, {} gzipped; compiled and instantiated in {:.0} ms",
        module.len(),
        packed.len(),
        page["load"].as_f64().unwrap()
    );
    for ((request, result), name) in requests.iter().zip(results).zip(names) {
        let browser: Value = serde_json::from_str(result["response"].as_str().unwrap()).unwrap();
        let native: Value =
            serde_json::from_str(&battlelab_wasm::call(&request.to_string())).unwrap();
        assert_eq!(browser, native, "{name}");
        println!(
            "{name}: {:.1} ms in Chromium",
            result["ms"].as_f64().unwrap()
        );
    }
    assert!(results[3]["response"]
        .as_str()
        .unwrap()
        .contains("\"error\""));
    // The comparison told its progress block by block, up to every battle it simulated
    // (two variants, three blocks of 2^16 and the rest each).
    let told: Vec<u64> = serde_json::from_value(results[9]["progress"].clone()).unwrap();
    assert_eq!(told.len(), 6, "{told:?}");
    assert!(told.windows(2).all(|w| w[0] < w[1]), "{told:?}");
    assert_eq!(told.last(), Some(&280_000));
}
