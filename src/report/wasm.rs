//! The WebAssembly module the report page and the playground run (`crates/battlelab-wasm`,
//! API in `docs/wasm-api.md`), as `build.rs` built and gzipped it.
//!
//! Why this module exists: the page inlines the module so that `index.html` stays one
//! offline file; the bytes come from the build, not from a download.

/// The gzipped `.wasm`; empty when it could not be built (then [`MISSING`] says why).
pub static MODULE_GZ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/battlelab.wasm.gz"));

/// Why [`MODULE_GZ`] is empty ("" when the module was built).
pub const MISSING: &str = env!("BATTLELAB_WASM_MISSING");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_is_gzip_of_a_wasm_module_or_says_why_it_is_missing() {
        if MODULE_GZ.is_empty() {
            assert!(!MISSING.is_empty(), "an empty module says why");
            return;
        }
        assert!(MISSING.is_empty());
        let mut wasm = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(MODULE_GZ), &mut wasm)
            .expect("gzip");
        assert_eq!(&wasm[..4], b"\0asm", "a WebAssembly module");
    }
}
