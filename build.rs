//! Every build: gzip the WebNet channel's page (`web/agent.html`) into
//! `OUT_DIR`, where `src/channels/web.rs` takes it from; a browser
//! inflates it (`Content-Encoding: gzip`), the board keeps a third of it.
//!
//! Host builds (feature `host-port`): compile the C half of the host port, the C
//! glue, the tool files under `src/tools/` and `src/tool_func.c` into the
//! library, as SConscript does on the device, and link Debian's cJSON; with
//! the options of the parts built when not every part is.
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

/// The optional parts (cargo features) and the menuconfig option of each,
/// as the SConscript maps them (its FEATURE_OPTIONS).
const PARTS: [(&str, &str); 19] = [
    ("channel-cli", "PKG_AGENT_CLI_CHANNEL"),
    ("cli-history", "PKG_AGENT_CLI_HISTORY"),
    ("channel-debug", "PKG_AGENT_DEBUG_CHANNEL"),
    ("channel-webnet", "PKG_AGENT_WEBNET_CHANNEL"),
    ("msh-extras", "PKG_AGENT_MSH_EXTRAS"),
    ("tool-arg-check", "PKG_AGENT_CHECK_TOOL_ARGS"),
    ("memory-summary", "PKG_AGENT_SUMMARY"),
    ("tools-text", "PKG_AGENT_TOOLS_TEXT"),
    ("text-call-fallback", "PKG_AGENT_TEXT_CALL_FALLBACK"),
    ("multimodal", "PKG_AGENT_MULTIMODAL_ENABLE"),
    ("provider-anthropic", "PKG_AGENT_PROVIDER_ANTHROPIC"),
    ("provider-ollama", "PKG_AGENT_PROVIDER_OLLAMA"),
    ("mcp-server", "PKG_AGENT_MCP_SERVER"),
    ("mcp-client", "PKG_AGENT_MCP_CLIENT"),
    ("tls", "PKG_AGENT_TLS_MBEDTLS"),
    ("tool-options", "PKG_AGENT_TOOL_OPTIONS"),
    ("notes", "PKG_AGENT_NOTES"),
    ("schedule", "PKG_AGENT_SCHEDULE"),
    ("sub-agents", "PKG_AGENT_SUBAGENTS"),
];

fn has_feature(name: &str) -> bool {
    let var = format!("CARGO_FEATURE_{}", name.to_uppercase().replace('-', "_"));
    std::env::var_os(var).is_some()
}

fn main() {
    println!("cargo:rerun-if-env-changed=CJSON_INCLUDE_DIR");
    thread_entry_cfg();
    gzip_page(&PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()));
    // The parts this build has, for the build scripts of crates that depend
    // on this one (testkit/build.rs: DEP_RTT_AGENT_PARTS), whose helpers for
    // a part exist only with it.
    let parts: Vec<&str> = PARTS
        .iter()
        .map(|&(part, _)| part)
        .filter(|part| has_feature(part))
        .collect();
    println!("cargo:parts={}", parts.join(","));
    if !has_feature("host-port") {
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
    // Fewer parts than every one: the C built as for a board with just
    // those options (host/include/rtconfig.h has every part otherwise).
    if !has_feature("all-parts") {
        build.define("AGENT_HOST_PARTS", None);
        for (part, option) in PARTS {
            if has_feature(part) {
                build.define(option, None);
            }
        }
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
