//! The host simulator driven through a pseudo-terminal (sim/tests/sim_pty.py):
//! the prompt, the agent answering with tool calls, line editing, history,
//! Ctrl-D, cleanup and exit; with the built-in model in each wire format;
//! with `--abilities`, the optional parts (sim/tests/abilities_pty.py); with
//! the flags that start the agent at once, who gets what is typed
//! (sim/tests/flags_pty.py).

use std::process::Command;

fn run_pty(format: Option<&str>) {
    let exe = env!("CARGO_BIN_EXE_rtt-agent-sim");
    let mut cmd = Command::new("python3");
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sim_pty.py"))
        .arg(exe);
    if let Some(f) = format {
        cmd.env("AGENT_BUILTIN_FORMAT", f);
    }
    let out = cmd.output().expect("python3 runs sim/tests/sim_pty.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{format:?}: {stdout}\n{stderr}"
    );
}

#[test]
fn simulator_through_a_pty() {
    run_pty(None);
}

/// The agent's URL is the built-in model's `/v1/messages`: Anthropic
/// Messages, chosen by the URL.
#[test]
fn simulator_with_anthropic_messages() {
    run_pty(Some("anthropic"));
}

/// `/api/chat`: Ollama's native NDJSON.
#[test]
fn simulator_with_ollama_native_chat() {
    run_pty(Some("ollama"));
}

/// `--abilities` (sim/tests/abilities_pty.py): scheduled prompts (replies
/// in the log and the chat, no pile-up while the loop is busy, `del` stops
/// them), notes across a restart of the simulator, a direct-output tool's
/// result as the reply, a remote MCP tool past its timeout.
#[test]
fn simulator_abilities_through_a_pty() {
    let exe = env!("CARGO_BIN_EXE_rtt-agent-sim");
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/abilities_pty.py"
        ))
        .arg(exe)
        .output()
        .expect("python3 runs sim/tests/abilities_pty.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{stdout}\n{stderr}"
    );
}

/// `--mcp` without `--web` (sim/tests/flags_pty.py): the chat it opens on
/// the console gets what is typed, not msh; with `--web` the console stays
/// the shell's.
#[test]
fn simulator_flags_through_a_pty() {
    let exe = env!("CARGO_BIN_EXE_rtt-agent-sim");
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/flags_pty.py"))
        .arg(exe)
        .output()
        .expect("python3 runs sim/tests/flags_pty.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{stdout}\n{stderr}"
    );
}

/// The host version of the real firmware's load run (sim/tests/mix.py):
/// the console chat, the WebNet page next to it, MCP calls and a token
/// guesser, a scheduled prompt, all at once for 90 s (MIX_SECONDS) while
/// the built-in model fails on purpose (5 % HTTP 500, 2 % cut streams, 1 %
/// 20 s stalls); lost 0, misdelivered 0, the heap back.
#[test]
fn simulator_under_a_mixed_load() {
    let exe = env!("CARGO_BIN_EXE_rtt-agent-sim");
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mix.py"))
        .arg(exe)
        .output()
        .expect("python3 runs sim/tests/mix.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The counts, in the test's output.
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{stdout}\n{stderr}"
    );
}
