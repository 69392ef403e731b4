//! Every build: gzip the WebNet channel's page (`web/agent.html`) into
//! `OUT_DIR`, where `src/ffi/channels/web.rs` takes it from; a browser
//! inflates it (`Content-Encoding: gzip`), the board keeps a third of it.
//!
//! Host builds (feature `host`): compile the C half of the host port, the C
//! glue, the tool files under `src/tools/` and `src/tool_func.c` into the
//! library, as SConscript does on the device, and link Debian's cJSON.
//! Device builds compile nothing here: the board's SCons build compiles the
//! C files with the board's flags.

use std::path::{Path, PathBuf};

fn c_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "c"));
    files.sort();
    files
}

/// Where Debian/Ubuntu (libcjson-dev) or a source install put cJSON.h.
fn cjson_include_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("CJSON_INCLUDE_DIR") {
        return PathBuf::from(dir);
    }
    for dir in [
        "/usr/include/cjson",
        "/usr/local/include/cjson",
        "/usr/include",
        "/usr/local/include",
    ] {
        if Path::new(dir).join("cJSON.h").exists() {
            return PathBuf::from(dir);
        }
    }
    panic!("cJSON.h not found: install libcjson-dev (apt-get install libcjson-dev) or set CJSON_INCLUDE_DIR");
}

fn gzip_page(root: &Path) {
    use std::io::Write;
    let page = root.join("web/agent.html");
    println!("cargo:rerun-if-changed={}", page.display());
    let html = std::fs::read(&page).expect("web/agent.html");
    // No file name, mtime 0: the same bytes from every build.
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::best());
    gz.write_all(&html).unwrap();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("agent.html.gz");
    std::fs::write(out, gz.finish().unwrap()).unwrap();
}

/// Thumb-2 builds for Cortex-A and Cortex-R hand the kernel an A32 thread
/// entry (`src/rtt/thread.rs` says why).
fn thread_entry_cfg() {
    println!("cargo::rustc-check-cfg=cfg(thread_entry_a32)");
    let target = std::env::var("TARGET").unwrap_or_default();
    if ["thumbv7a", "thumbv7r", "thumbv8r"]
        .iter()
        .any(|t| target.starts_with(t))
    {
        println!("cargo:rustc-cfg=thread_entry_a32");
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=CJSON_INCLUDE_DIR");
    thread_entry_cfg();
    gzip_page(&PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()));
    if std::env::var_os("CARGO_FEATURE_HOST").is_none() {
        return;
    }
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    for dir in ["host/port", "host/include", "glue", "include", "src/tools"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        root.join("src/tool_func.c").display()
    );

    let mut build = cc::Build::new();
    for dir in [
        "include",
        "include/tools",
        "include/channels",
        "host/include",
        "glue",
    ] {
        build.include(root.join(dir));
    }
    build.include(cjson_include_dir());
    for dir in ["host/port", "glue", "src/tools"] {
        for f in c_files(&root.join(dir)) {
            println!("cargo:rerun-if-changed={}", f.display());
            build.file(f);
        }
    }
    build.file(root.join("src/tool_func.c"));
    build.flag("-std=gnu11").warnings(true).extra_warnings(true);
    build.compile("rtt_agent_c");
    println!("cargo:rustc-link-lib=cjson");
}
