//! The parts of the rtt-agent this kit is linked with (its build script
//! says, DEP_RTT_AGENT_PARTS), as `cfg(agent_part = "...")`: the kit's
//! helpers for a part (the debug channel's `ask`, the WebNet agent) exist
//! only with it, so that the tests build with any set of parts.

/// Every optional part of the library (its Cargo.toml).
const PARTS: [&str; 19] = [
    "channel-cli",
    "cli-history",
    "channel-debug",
    "channel-webnet",
    "msh-extras",
    "tool-arg-check",
    "memory-summary",
    "tools-text",
    "text-call-fallback",
    "multimodal",
    "provider-anthropic",
    "provider-ollama",
    "mcp-server",
    "mcp-client",
    "tls",
    "tool-options",
    "notes",
    "schedule",
    "sub-agents",
];

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_RTT_AGENT_PARTS");
    let values: Vec<String> = PARTS.iter().map(|p| format!("\"{p}\"")).collect();
    println!(
        "cargo::rustc-check-cfg=cfg(agent_part, values({}))",
        values.join(", ")
    );
    let parts =
        std::env::var("DEP_RTT_AGENT_PARTS").expect("rtt-agent's build script tells its parts");
    // For the tests' check that the kit sees the library's parts (tests/parts.rs).
    println!("cargo:rustc-env=RTT_AGENT_PARTS={parts}");
    for part in parts.split(',').filter(|p| !p.is_empty()) {
        assert!(
            PARTS.contains(&part),
            "unknown part {part:?}: add it to PARTS"
        );
        println!("cargo:rustc-cfg=agent_part=\"{part}\"");
    }
}
