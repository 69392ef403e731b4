//! The simulator's MCP server driven by the official MCP Python SDK
//! (tests/mcp/sdk_server_check.py) in each of its modes: 2026-07-28
//! (stateless), auto (discovers 2026-07-28) and legacy (initialize,
//! 2025-11-25): tools/list against the registrations, tools/call with a
//! result, with a missing argument (isError) and of an unknown tool
//! (JSON-RPC error), the token refused without it; and raw 2026-07-28
//! requests on the revision's error paths. The SDK is installed into target/mcp-venv when missing
//! (tests/mcp/venv.sh, every licence checked).

use std::path::Path;
use std::process::Command;

#[test]
fn mcp_server_with_the_official_python_sdk() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let venv = Command::new("bash")
        .arg("-c")
        .arg(". tests/mcp/venv.sh")
        .current_dir(root)
        .output()
        .expect("bash runs tests/mcp/venv.sh");
    assert!(
        venv.status.success(),
        "installing the MCP SDK failed:\n{}{}",
        String::from_utf8_lossy(&venv.stdout),
        String::from_utf8_lossy(&venv.stderr)
    );
    let out = Command::new(root.join("target/mcp-venv/bin/python"))
        .arg(root.join("tests/mcp/sdk_server_check.py"))
        .arg(env!("CARGO_BIN_EXE_rtt-agent-sim"))
        .output()
        .expect("the venv's python runs tests/mcp/sdk_server_check.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all checks passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
