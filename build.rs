//! Builds the WebAssembly module the report page and the playground run
//! (`crates/battlelab-wasm` for `wasm32-unknown-unknown`) and gzips it into `OUT_DIR`,
//! where `report::wasm::MODULE_GZ` includes it.
//!
//! Why a build script: `cargo build` and `cargo test` on a fresh machine must give a page
//! that recomputes, with no other tool. The module is built by a nested `cargo build` into
//! its own target folder (`<target>/wasm`: the outer build holds its own folder's lock),
//! with the size-minded profile below set for that build alone. When it cannot be built
//! (no rustup to add the target, offline) the build goes on with an empty module and a
//! warning saying what to run; the page then shows no panel and says why.

use std::env;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-unknown-unknown";
const MODULE: &str = "battlelab.wasm.gz";

fn main() {
    let root = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets it"));
    for path in [
        "crates/battlelab-core/src",
        "crates/battlelab-core/Cargo.toml",
        "crates/battlelab-wasm/src",
        "crates/battlelab-wasm/Cargo.toml",
        "rules",
        "Cargo.lock",
        "build.rs",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }
    println!("cargo:rerun-if-env-changed=BATTLELAB_NO_WASM");
    let missing = if env::var_os("BATTLELAB_NO_WASM").is_some_and(|v| v != "0") {
        Err("BATTLELAB_NO_WASM is set".to_string())
    } else {
        build_module(&root, &out_dir)
    };
    let (module, why) = match missing {
        Ok(wasm) => (gzip(&wasm), String::new()),
        Err(why) if env::var_os("BATTLELAB_NO_WASM").is_some_and(|v| v != "0") => {
            println!("cargo:warning=the WebAssembly module is left out of the report page: {why}");
            (Vec::new(), why)
        }
        Err(why) => {
            println!(
                "cargo:warning=the report page's recomputing panel is left out: the WebAssembly module was not built ({why}); to build it: `rustup target add {TARGET}`, then build again (online once, for its crates)"
            );
            (Vec::new(), why)
        }
    };
    std::fs::write(out_dir.join(MODULE), module).expect("OUT_DIR is writable");
    // Why the module is empty, for the page's comment ("" when it was built).
    println!(
        "cargo:rustc-env=BATTLELAB_WASM_MISSING={}",
        why.replace(['\n', '\r'], " ")
    );
}

/// The target folder the outer build uses (the module gets `<it>/wasm`).
fn target_dir(root: &Path, out_dir: &Path) -> PathBuf {
    if let Some(dir) = env::var_os("CARGO_TARGET_DIR") {
        let dir = PathBuf::from(dir);
        return if dir.is_relative() {
            root.join(dir)
        } else {
            dir
        };
    }
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    out_dir
        .ancestors()
        .nth(4)
        .map_or_else(|| root.join("target"), Path::to_path_buf)
}

/// Whether the standard library for the target is installed.
fn target_installed(rustc: &str) -> bool {
    Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .is_some_and(|sysroot| {
            Path::new(&sysroot)
                .join("lib/rustlib")
                .join(TARGET)
                .is_dir()
        })
}

fn build_module(root: &Path, out_dir: &Path) -> Result<Vec<u8>, String> {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if !target_installed(&rustc) {
        let added = Command::new("rustup")
            .args(["target", "add", TARGET])
            .status()
            .map_err(|e| {
                format!("the {TARGET} target is not installed and rustup cannot be run: {e}")
            })?;
        if !added.success() || !target_installed(&rustc) {
            return Err(format!(
                "the {TARGET} target is not installed and `rustup target add {TARGET}` failed"
            ));
        }
    }
    let target_dir = target_dir(root, out_dir).join("wasm");
    let mut command = Command::new(&cargo);
    command
        .current_dir(root)
        .args([
            "build",
            "--release",
            "--lib",
            "-p",
            "battlelab-wasm",
            "--target",
            TARGET,
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        // What would leak from the outer build into the module's.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        // `cargo clippy` lints the workspace through a wrapper: not the module's build.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        // The module's profile, for this build alone: small and whole-program optimised
        // (opt-level "z": 1.00 MB gzipped against 1.13 MB at "s" once the pricing was in
        // it, which took the page past its 1.5 MB budget; the page's speed budgets hold
        // with room to spare — docs/reports.md); a panic aborts (wasm32-unknown-unknown
        // cannot unwind), `bl_panic` reports it.
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "z")
        .env("CARGO_PROFILE_RELEASE_LTO", "true")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .env("CARGO_PROFILE_RELEASE_PANIC", "abort")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true");
    let output = command
        .output()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last: Vec<&str> = stderr.lines().rev().take(3).collect();
        return Err(format!(
            "`cargo build -p battlelab-wasm --target {TARGET}` failed: {}",
            last.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    let wasm = target_dir
        .join(TARGET)
        .join("release")
        .join("battlelab_wasm.wasm");
    std::fs::read(&wasm).map_err(|e| format!("cannot read {}: {e}", wasm.display()))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).expect("gzip into memory");
    encoder.finish().expect("gzip into memory")
}
