//! Tools the tests need from outside Rust, installed by the tests themselves.
//!
//! Why this module exists: README's test command, `cargo test --release`, must pass on a
//! fresh machine exactly as README gives it, and CI calls that same command. A test that
//! needs a program the machine may lack (Chromium for `tests/browser.rs`, Firefox for
//! `tests/firefox.rs`; later, say, the
//! wasm32 target through rustup) declares it as a [`Requirement`] and calls
//! [`Requirement::ensure`] first: if the tool is missing, the requirement's own commands
//! install it, once per test process (a [`OnceLock`] holds the outcome, so every test of
//! the binary waits for the one install and shares its result) and once per machine at a
//! time (an exclusive lock on a file in the temporary directory, so two test binaries
//! running at once do not run `apt-get` together). Where it cannot install (it needs root
//! and the tests are not root, or the commands fail), the test fails with the exact
//! commands to run by hand.
//!
//! A new tool is one more `static`, e.g. the wasm32 target:
//!
//! ```text
//! pub static WASM32: Requirement = Requirement {
//!     name: "wasm32-target",
//!     needed_by: "the wasm build test (tests/wasm.rs)",
//!     present: || rustup_has_target("wasm32-unknown-unknown"),
//!     install: &[&["rustup", "target", "add", "wasm32-unknown-unknown"]],
//!     env: &[],
//!     needs_root: false,
//!     alternative: "or install the target with your toolchain manager",
//!     outcome: OnceLock::new(),
//! };
//! ```
//!
//! and a test calls `common::provision::WASM32.ensure()` before it needs the tool.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Something the tests need that `cargo` does not build: how to tell it is there, and the
/// commands that put it there.
pub struct Requirement {
    /// A short name, also the name of its lock file: `chromium`.
    pub name: &'static str,
    /// What needs it, for messages: "the browser tests (tests/browser.rs)".
    pub needed_by: &'static str,
    /// Whether it is there already.
    pub present: fn() -> bool,
    /// The commands that install it, in order, each as program and arguments.
    pub install: &'static [&'static [&'static str]],
    /// Environment the commands run with (`DEBIAN_FRONTEND=noninteractive`).
    pub env: &'static [(&'static str, &'static str)],
    /// Whether the commands must run as root (a system package manager).
    pub needs_root: bool,
    /// What else a user may do instead of installing it ("or set CHROMIUM=…").
    pub alternative: &'static str,
    /// The outcome of the first `ensure` in this process, shared by every later one.
    pub outcome: OnceLock<Result<(), String>>,
}

impl Requirement {
    /// Makes sure the tool is there, installing it if it is missing; panics with what to
    /// run by hand if it cannot. Installs at most once per test process.
    pub fn ensure(&self) {
        if let Err(message) = self
            .outcome
            .get_or_init(|| provision(self, running_as_root()))
        {
            panic!("{message}");
        }
    }

    /// The commands as a user would type them (`apt-get update && apt-get install -y …`),
    /// with `sudo` in front where they need root.
    pub fn commands(&self) -> String {
        let sudo = if self.needs_root { "sudo " } else { "" };
        self.install
            .iter()
            .map(|argv| format!("{sudo}{}", argv.join(" ")))
            .collect::<Vec<_>>()
            .join(" && ")
    }
}

/// Chromium, for the browser tests: Debian's `chromium` package, from apt.
pub static CHROMIUM: Requirement = Requirement {
    name: "chromium",
    needed_by: "the browser tests (tests/browser.rs)",
    present: chromium_present,
    install: &[
        &["apt-get", "update"],
        &["apt-get", "install", "-y", "chromium"],
    ],
    env: &[("DEBIAN_FRONTEND", "noninteractive")],
    needs_root: true,
    alternative: "or set CHROMIUM to a Chromium binary",
    outcome: OnceLock::new(),
};

/// `CHROMIUM` names a binary, or `chromium` is on `PATH`.
fn chromium_present() -> bool {
    std::env::var_os("CHROMIUM").is_some() || on_path("chromium").is_some()
}

/// Firefox, for the Firefox tests: Debian's `firefox-esr` package, from apt (it puts
/// `firefox-esr` and `firefox` on `PATH`).
pub static FIREFOX: Requirement = Requirement {
    name: "firefox-esr",
    needed_by: "the Firefox tests (tests/firefox.rs)",
    present: firefox_present,
    install: &[
        &["apt-get", "update"],
        &["apt-get", "install", "-y", "firefox-esr"],
    ],
    env: &[("DEBIAN_FRONTEND", "noninteractive")],
    needs_root: true,
    alternative: "or set FIREFOX to a Firefox binary",
    outcome: OnceLock::new(),
};

/// `FIREFOX` names a binary, or `firefox-esr` or `firefox` is on `PATH`.
fn firefox_present() -> bool {
    std::env::var_os("FIREFOX").is_some()
        || on_path("firefox-esr").is_some()
        || on_path("firefox").is_some()
}

/// `program` in a directory of `PATH`, if it is there.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Whether this process runs as root (effective user 0).
pub fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.trim_ascii() == b"0")
}

/// The lock file that keeps two processes from installing `name` at once.
pub fn lock_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("battlelab-tests-provision-{name}.lock"))
}

/// Installs `requirement` if it is missing: under its machine-wide lock, looked for again
/// once the lock is held (another process may have installed it meanwhile), then its
/// commands in order. `as_root` says whether commands that need root may run. The error
/// names what is missing, what failed, and the commands to run by hand.
pub fn provision(requirement: &Requirement, as_root: bool) -> Result<(), String> {
    if (requirement.present)() {
        return Ok(());
    }
    let by_hand = format!(
        "{} need {}, which is not installed. Install it with `{}` ({}), then run the tests again",
        requirement.needed_by,
        requirement.name,
        requirement.commands(),
        requirement.alternative
    );
    let lock_path = lock_path(requirement.name);
    let lock = File::create(&lock_path)
        .map_err(|e| format!("{by_hand}. (Cannot create {}: {e}.)", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("{by_hand}. (Cannot lock {}: {e}.)", lock_path.display()))?;
    if (requirement.present)() {
        return Ok(());
    }
    if requirement.needs_root && !as_root {
        return Err(format!(
            "{by_hand}. (The tests install it themselves only when run as root.)"
        ));
    }
    for argv in requirement.install {
        eprintln!(
            "{} is missing; installing it for {}: {}",
            requirement.name,
            requirement.needed_by,
            argv.join(" ")
        );
        let output = Command::new(argv[0])
            .args(&argv[1..])
            .envs(requirement.env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{by_hand}. (`{}` did not start: {e}.)", argv.join(" ")))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
            return Err(format!(
                "{by_hand}. (`{}` failed with {}:\n{})",
                argv.join(" "),
                output.status,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
    }
    if (requirement.present)() {
        Ok(())
    } else {
        Err(format!(
            "{by_hand}. (`{}` succeeded, yet {} is still missing.)",
            requirement.commands(),
            requirement.name
        ))
    }
}
