//! The host simulator driven through a pseudo-terminal (sim/tests/sim_pty.py):
//! the prompt, the agent answering with tool calls, line editing, history,
//! Ctrl-D, cleanup and exit; with the built-in model in each wire format;
//! with `--abilities`, the optional parts (sim/tests/abilities_pty.py); with
//! the flags that start the agent at once, who gets what is typed
//! (sim/tests/flags_pty.py); every channel at once under a mixed load
//! (sim/tests/mix.py).

use std::process::Command;

/// Run `sim/tests/<script>` on the simulator (with `env` set), which ends
/// with a `N passed, M failed` line; its output is returned.
fn run_script(script: &str, env: &[(&str, &str)]) -> String {
    let exe = env!("CARGO_BIN_EXE_rtt-agent-sim");
    let path = format!("{}/tests/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(&path)
        .arg(exe)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("python3 runs {path}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{script} {env:?}: {stdout}\n{stderr}"
    );
    stdout
}

#[test]
fn simulator_through_a_pty() {
    run_script("sim_pty.py", &[]);
}

/// The agent's URL is the built-in model's `/v1/messages`: Anthropic
/// Messages, chosen by the URL.
#[test]
fn simulator_with_anthropic_messages() {
    run_script("sim_pty.py", &[("AGENT_BUILTIN_FORMAT", "anthropic")]);
}

/// `/api/chat`: Ollama's native NDJSON.
#[test]
fn simulator_with_ollama_native_chat() {
    run_script("sim_pty.py", &[("AGENT_BUILTIN_FORMAT", "ollama")]);
}

/// `--abilities` (sim/tests/abilities_pty.py): scheduled prompts (replies
/// in the log and the chat, no pile-up while the loop is busy, `del` stops
/// them), notes across a restart of the simulator, a direct-output tool's
/// result as the reply, a remote MCP tool past its timeout.
#[test]
fn simulator_abilities_through_a_pty() {
    run_script("abilities_pty.py", &[]);
}

/// `--mcp` without `--web` (sim/tests/flags_pty.py): the chat it opens on
/// the console gets what is typed, not msh; with `--web` the console stays
/// the shell's.
#[test]
fn simulator_flags_through_a_pty() {
    run_script("flags_pty.py", &[]);
}

/// The host version of the real firmware's load run (sim/tests/mix.py):
/// the console chat, the WebNet page next to it, MCP calls and a token
/// guesser, a scheduled prompt, all at once for 90 s (MIX_SECONDS) while
/// the built-in model fails on purpose (5 % HTTP 500, 2 % cut streams, 1 %
/// 20 s stalls); lost 0, misdelivered 0, the heap back.
#[test]
fn simulator_under_a_mixed_load() {
    // The counts, in the test's output.
    println!("{}", run_script("mix.py", &[]));
}
