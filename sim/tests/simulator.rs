//! The host simulator driven through a pseudo-terminal (sim/tests/sim_pty.py):
//! the prompt, the agent answering with tool calls, line editing, history,
//! Ctrl-D, cleanup and exit.

use std::process::Command;

#[test]
fn simulator_through_a_pty() {
    let exe = env!("CARGO_BIN_EXE_rtt-agent-sim");
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sim_pty.py"))
        .arg(exe)
        .output()
        .expect("python3 runs sim/tests/sim_pty.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{stdout}\n{stderr}"
    );
}
