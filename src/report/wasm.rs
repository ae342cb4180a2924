//! The WebAssembly build of the core, as the report pages embed it.
//!
//! Why this module exists: a page that recomputes carries the core with it. Until the
//! build step of `crates/battlelab-wasm` provides the module, this is empty, and a page
//! shows no "try it" panel (it says why in a comment).

/// The gzip of the core's `.wasm` (see `docs/wasm-api.md`); empty where it was not built.
pub const MODULE_GZ: &[u8] = &[];
