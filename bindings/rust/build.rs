//! Finds libkwire and tells cargo how to link it. It never writes outside `OUT_DIR`.
//!
//! 1. `KWIRE_LIB_DIR`: a folder holding libkwire.a (libkwire.so with feature `dynamic`).
//! 2. pkg-config: `kwire-static` (static) or `kwire` (dynamic), at least the ABI version
//!    this crate needs; `make capi` writes both `.pc` files into the repository's build/
//!    (`PKG_CONFIG_PATH=<checkout>/build`), `make c-install` into `<prefix>/lib/pkgconfig`.
//! 3. Only then, when this crate sits in a kwire checkout (bindings/rust) and Go is on
//!    the PATH: `go build` of the library (package ./capi of the checkout) into
//!    `OUT_DIR`, with a cargo warning. The checkout is only read; Go's build cache makes
//!    a rebuild quick. `KWIRE_NO_BUILD=1` makes this step fail instead, naming steps 1 and 2.
//!
//! Feature `static` (default) links libkwire.a; feature `dynamic` links libkwire.so and
//! records its folder as the run path of this package's own binaries and tests.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The ABI version the crate is written against (kwire.pc's Version is major.minor),
/// read from the generated src/abi.rs.
fn abi() -> String {
    let text = include_str!("src/abi.rs");
    let get = |name: &str| {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("pub const {}: i32 = ", name)))
            .unwrap_or_else(|| panic!("src/abi.rs has no {}", name));
        line.trim_end_matches(';').to_string()
    };
    format!("{}.{}", get("KW_ABI_MAJOR"), get("KW_ABI_MINOR"))
}

fn main() {
    for v in [
        "KWIRE_LIB_DIR",
        "KWIRE_NO_BUILD",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "GO",
    ] {
        println!("cargo:rerun-if-env-changed={}", v);
    }
    println!("cargo:rerun-if-changed=build.rs");
    let dynamic = env::var_os("CARGO_FEATURE_DYNAMIC").is_some();
    let file = if dynamic { "libkwire.so" } else { "libkwire.a" };

    let dir = if let Some(d) = env::var_os("KWIRE_LIB_DIR") {
        let d = PathBuf::from(d);
        if !d.join(file).is_file() {
            panic!("KWIRE_LIB_DIR={}: no {} there", d.display(), file);
        }
        d
    } else if let Some(d) = from_pkg_config(dynamic, file) {
        d
    } else {
        build_into_out_dir(dynamic, file)
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

/// The library's folder according to pkg-config, when it knows the package at a version
/// this crate can use and the folder holds the file.
fn from_pkg_config(dynamic: bool, file: &str) -> Option<PathBuf> {
    let pc = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let name = if dynamic { "kwire" } else { "kwire-static" };
    let ok = Command::new(&pc)
        .arg(format!("--atleast-version={}", abi()))
        .arg(name)
        .status()
        .ok()?;
    if !ok.success() {
        if Command::new(&pc)
            .arg("--exists")
            .arg(name)
            .status()
            .is_ok_and(|s| s.success())
        {
            println!(
                "cargo:warning=pkg-config finds {} older than ABI {}: not used",
                name,
                abi()
            );
        }
        return None;
    }
    let out = Command::new(&pc).arg("--variable=libdir").arg(name).output().ok()?;
    let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    if !out.status.success() || !dir.join(file).is_file() {
        println!(
            "cargo:warning=pkg-config's {} names libdir {}, which holds no {}",
            name,
            dir.display(),
            file
        );
        return None;
    }
    Some(dir)
}

/// Builds libkwire from the checkout this crate sits in, into OUT_DIR.
fn build_into_out_dir(dynamic: bool, file: &str) -> PathBuf {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let repo = manifest.join("..").join("..");
    let help = format!(
        "set KWIRE_LIB_DIR to a folder holding {file}, or let pkg-config find {pc} >= {ABI} \
         (PKG_CONFIG_PATH=<kwire checkout>/build after `make capi` there, or the prefix of `make c-install`)",
        pc = if dynamic { "kwire" } else { "kwire-static" },
        ABI = abi(),
    );
    if !is_checkout(&repo) {
        panic!("libkwire not found: {}", help);
    }
    if env::var_os("KWIRE_NO_BUILD").is_some_and(|v| !v.is_empty() && v != "0") {
        panic!("libkwire not found and KWIRE_NO_BUILD is set: {}", help);
    }
    let host = env::var("HOST").unwrap_or_default();
    let target = env::var("TARGET").unwrap_or_default();
    if host != target {
        panic!(
            "libkwire not found, and building it here is for the host only (target {}): {}",
            target, help
        );
    }
    for d in ["abi", "capi", "codec", "go.mod", "go.sum"] {
        println!("cargo:rerun-if-changed={}", repo.join(d).display());
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR")).join("libkwire");
    std::fs::create_dir_all(&out).expect("creating OUT_DIR/libkwire");
    let go = env::var("GO").unwrap_or_else(|_| "go".to_string());
    println!(
        "cargo:warning=libkwire not found ({}): building {} from {} with `{} build` into OUT_DIR",
        help,
        file,
        repo.canonicalize().unwrap_or(repo.clone()).display(),
        go
    );
    let mode = if dynamic {
        "-buildmode=c-shared"
    } else {
        "-buildmode=c-archive"
    };
    let status = Command::new(&go)
        .current_dir(&repo)
        .args(["build", mode, "-trimpath", "-o"])
        .arg(out.join(file))
        .arg("./capi")
        .env("CGO_ENABLED", "1")
        .env_remove("GOOS")
        .env_remove("GOARCH")
        .status()
        .unwrap_or_else(|e| panic!("running `{} build` ({}): {}", go, e, help));
    if !status.success() {
        panic!(
            "`{} build {} ./capi` in {} failed ({}): {}",
            go,
            mode,
            repo.display(),
            status,
            help
        );
    }
    out
}

/// Whether dir is the root of a kwire checkout: the Go module and the C ABI's package.
fn is_checkout(dir: &Path) -> bool {
    let gomod = std::fs::read_to_string(dir.join("go.mod")).unwrap_or_default();
    gomod
        .lines()
        .next()
        .is_some_and(|l| l.trim() == "module github.com/kwire/kwire")
        && dir.join("capi").join("kwire.h").is_file()
}
