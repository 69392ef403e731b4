//! The parts the library under test was built with: the ones asked for.
//! `RTT_AGENT_EXPECT_PARTS` (comma-separated; tests/run-all sets it for its
//! run of the old feature set) names them; unset, a build with `all-parts`
//! must have every one. So a smaller set cannot quietly get more parts
//! (cargo's feature unification through the test kit), and the test kit
//! sees the same parts as the tests.

/// Every optional part, in build.rs's order, and whether this build has it.
const PARTS: [(&str, bool); 19] = [
    ("channel-cli", cfg!(feature = "channel-cli")),
    ("cli-history", cfg!(feature = "cli-history")),
    ("channel-debug", cfg!(feature = "channel-debug")),
    ("channel-webnet", cfg!(feature = "channel-webnet")),
    ("msh-extras", cfg!(feature = "msh-extras")),
    ("tool-arg-check", cfg!(feature = "tool-arg-check")),
    ("memory-summary", cfg!(feature = "memory-summary")),
    ("tools-text", cfg!(feature = "tools-text")),
    ("text-call-fallback", cfg!(feature = "text-call-fallback")),
    ("multimodal", cfg!(feature = "multimodal")),
    ("provider-anthropic", cfg!(feature = "provider-anthropic")),
    ("provider-ollama", cfg!(feature = "provider-ollama")),
    ("mcp-server", cfg!(feature = "mcp-server")),
    ("mcp-client", cfg!(feature = "mcp-client")),
    ("tls", cfg!(feature = "tls")),
    ("tool-options", cfg!(feature = "tool-options")),
    ("notes", cfg!(feature = "notes")),
    ("schedule", cfg!(feature = "schedule")),
    ("sub-agents", cfg!(feature = "sub-agents")),
];

#[test]
fn the_library_has_the_parts_asked_for() {
    let have: Vec<&str> = PARTS.iter().filter(|p| p.1).map(|p| p.0).collect();
    assert_eq!(
        have.join(","),
        rtt_agent_testkit::LIBRARY_PARTS,
        "the tests and the test kit see different parts"
    );
    match std::env::var("RTT_AGENT_EXPECT_PARTS") {
        Ok(expected) => assert_eq!(have.join(","), expected, "RTT_AGENT_EXPECT_PARTS"),
        Err(_) if cfg!(feature = "all-parts") => assert_eq!(have.len(), PARTS.len()),
        Err(_) => eprintln!("parts: {have:?} (RTT_AGENT_EXPECT_PARTS not set: not checked)"),
    }
}
