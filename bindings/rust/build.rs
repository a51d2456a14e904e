//! Finds libkwire and tells cargo how to link it.
//!
//! - `KWIRE_LIB_DIR`: a folder holding libkwire.a (and/or libkwire.so) to link; nothing is
//!   built then.
//! - Otherwise the repository's `build/` folder (this crate lives in bindings/rust of the
//!   kwire repository). When the library is missing there, `make capi` builds it (Go and
//!   make needed), and says so: a `cargo:warning` before and after, since the nested make
//!   writes into the repository's build/ and takes a minute. `KWIRE_NO_MAKE=1` turns that
//!   into a failure that names the missing file, for builds that must not run make.
//!
//! Building it rather than failing keeps `cargo test` in a fresh checkout working, as the
//! repository's `make test` does; the warning keeps it from being silent.
//!
//! Feature `static` (default) links libkwire.a; feature `dynamic` links libkwire.so and
//! records its folder as the run path of this package's own binaries and tests.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=KWIRE_LIB_DIR");
    println!("cargo:rerun-if-env-changed=KWIRE_NO_MAKE");
    println!("cargo:rerun-if-changed=build.rs");
    let dynamic = env::var_os("CARGO_FEATURE_DYNAMIC").is_some();
    let file = if dynamic { "libkwire.so" } else { "libkwire.a" };

    let dir = match env::var_os("KWIRE_LIB_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            if !d.join(file).is_file() {
                panic!("KWIRE_LIB_DIR={}: no {} there", d.display(), file);
            }
            d
        }
        None => {
            let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
            let repo = manifest.join("..").join("..");
            let build = repo.join("build");
            if !build.join(file).is_file() {
                make_capi(&repo, file);
            }
            build
        }
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    let lib = dir.join(file);
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    if dynamic {
        println!("cargo:rustc-link-lib=dylib=kwire");
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    } else {
        println!("cargo:rustc-link-lib=static=kwire");
        // The Go runtime inside libkwire.a needs the threads library.
        println!("cargo:rustc-link-lib=dylib=pthread");
    }
    // Tell crates that depend on this one where the library is (DEP_KWIRE_LIB_DIR).
    println!("cargo:lib_dir={}", dir.display());
}

fn make_capi(repo: &Path, file: &str) {
    if !repo.join("Makefile").is_file() || !repo.join("capi").join("kwire.h").is_file() {
        panic!(
            "{} not found: set KWIRE_LIB_DIR to a folder holding it (this crate builds it itself \
             only inside the kwire repository)",
            file
        );
    }
    let missing = repo.join("build").join(file);
    if env::var_os("KWIRE_NO_MAKE").is_some_and(|v| !v.is_empty() && v != "0") {
        panic!(
            "{} is missing and KWIRE_NO_MAKE is set: run `make capi` in {}, or set KWIRE_LIB_DIR",
            missing.display(),
            repo.display()
        );
    }
    let make = env::var("MAKE").unwrap_or_else(|_| "make".to_string());
    println!(
        "cargo:warning={} is missing: running `{} -C {} capi` to build it (set KWIRE_LIB_DIR to use a built library, KWIRE_NO_MAKE=1 to fail instead)",
        missing.display(),
        make,
        repo.display()
    );
    // A `make` running this build passes its job server and flags down: drop them, the
    // nested make is a separate build.
    let status = Command::new(&make)
        .arg("-C")
        .arg(repo)
        .arg("capi")
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL")
        .status()
        .unwrap_or_else(|e| panic!("running `{} capi`: {}", make, e));
    if !status.success() {
        panic!("`{} -C {} capi` failed ({})", make, repo.display(), status);
    }
    println!("cargo:warning=built {} with `{} capi`", missing.display(), make);
}
