//! Gives the shared library an ELF SONAME derived from the crate version, so
//! that programs linked against it record a versioned name and an ABI break
//! (a new SONAME) cannot be loaded by mistake.
//!
//! The rule is cargo-c's: `libcapstan.so.MAJOR` from 1.0 on, and
//! `libcapstan.so.0.MINOR` before it, since every 0.x minor may break the ABI.
//! `make lib` adds the matching link in `target/release` so that in-tree
//! programs linked with `-Ltarget/release -lcapstan` still find the library at
//! run time; `make install` installs the file under its full version with the
//! usual links. Under cargo-c (`cargo cinstall`, which enables the `capi`
//! feature) cargo-c passes the same SONAME itself, so nothing is added here.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_CAPI").is_some() {
        return;
    }
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // Not Android: an app ships libcapstan.so in its APK under that name,
    // and the loader looks libraries up by the names programs record (their
    // NEEDED entries, taken from the SONAME), so a versioned SONAME would
    // name a file the APK does not have.
    let elf = matches!(
        os.as_str(),
        "linux" | "freebsd" | "netbsd" | "openbsd" | "dragonfly"
    );
    if !elf {
        return;
    }
    let major = env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    let minor = env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
    let soname = if major == "0" {
        format!("libcapstan.so.0.{minor}")
    } else {
        format!("libcapstan.so.{major}")
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
}
