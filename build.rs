//! Link settings that shorten the time from process start to the first answer.
//!
//! A stdio MCP server is started for every client session, and on Linux with glibc most
//! of its own start-up work is the dynamic loader's: mapping each shared library and
//! applying the executable's relocations. Two settings cut that without giving up
//! address randomization (the executable stays position-independent):
//!
//! - The unwinder is linked from `libgcc_eh.a`, as `gcc -static-libgcc` does, so
//!   `libgcc_s.so.1` is not loaded at start. Naming it here, on the library, puts it on
//!   the link line ahead of the `-lgcc_s` that std asks for; the linker then finds every
//!   `_Unwind_*` symbol already defined, and `--as-needed` drops `libgcc_s` from the
//!   binary. A build with `crt-static` already links it statically.
//! - Relative relocations are packed (`DT_RELR`): a few kilobytes instead of 360 KB of
//!   table to read at start. glibc's loader reads them from 2.36 on, and the binary then
//!   names that requirement, so an older loader refuses it with a clear message rather
//!   than running it half relocated. The flag is given only when the glibc the binary is
//!   built against is that new.
//!
//! `scripts/bench.sh` measures the effect (start to answered `initialize`, beside
//! `head -1`).

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let cfg = |key: &str| env::var(format!("CARGO_CFG_{key}")).unwrap_or_default();
    if cfg("TARGET_OS") != "linux" || cfg("TARGET_ENV") != "gnu" {
        return;
    }
    let crt_static = cfg("TARGET_FEATURE").split(',').any(|f| f == "crt-static");
    if !crt_static {
        println!("cargo::rustc-link-lib=static:-bundle=gcc_eh");
    }
    if std::path::Path::new(FEATURES_H).exists() {
        println!("cargo::rerun-if-changed={FEATURES_H}");
    }
    if native_build() && host_glibc_minor().is_some_and(|minor| minor >= 36) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The header that names the glibc version a native build links against.
const FEATURES_H: &str = "/usr/include/features.h";

/// Whether the binary is built for the machine that builds it, so the host's glibc is the
/// one it is linked against.
fn native_build() -> bool {
    env::var("HOST")
        .ok()
        .is_some_and(|host| env::var("TARGET").ok() == Some(host))
}

/// glibc's minor version (2.x), from its `features.h`.
fn host_glibc_minor() -> Option<u32> {
    let header = std::fs::read_to_string(FEATURES_H).ok()?;
    let mut major = None;
    let mut minor = None;
    for line in header.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        match (words.next(), words.next().map(str::parse::<u32>)) {
            (Some("__GLIBC__"), Some(Ok(n))) => major = Some(n),
            (Some("__GLIBC_MINOR__"), Some(Ok(n))) => minor = Some(n),
            _ => {}
        }
    }
    (major? == 2).then_some(minor?)
}
