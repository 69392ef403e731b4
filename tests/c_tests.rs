//! Drives the C tests in `tests/c/`: each is compiled through `tests/host-cc`
//! (so with `-Wall -Wextra -Werror` against `include/` and the host headers),
//! run, and run again under valgrind (when installed) with leak checking.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compile `sources` (relative to the repo) into target/c-tests/<name>.
pub fn host_cc(name: &str, sources: &[&str], extra: &[&str]) -> PathBuf {
    let out_dir = root().join("target/c-tests");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join(name);
    let status = Command::new(root().join("tests/host-cc"))
        .current_dir(root())
        .args(extra)
        .args(sources)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("run tests/host-cc");
    assert!(status.success(), "tests/host-cc failed for {name}");
    exe
}

fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Run the program; it prints "N passed, M failed" and exits 0 when M is 0.
fn run(exe: &Path) {
    run_with(exe, &[]);
}

/// [`run`] with arguments, for both runs.
fn run_with(exe: &Path, args: &[&str]) {
    let out = Command::new(exe).args(args).output().expect("run C test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} failed:\n{stdout}\n{stderr}",
        exe.display()
    );
    assert!(
        stdout.contains(" passed, 0 failed"),
        "no result line from {}:\n{stdout}",
        exe.display()
    );

    if !valgrind_available() {
        eprintln!(
            "valgrind not installed: skipped the memory check of {}",
            exe.display()
        );
        return;
    }
    let vg = Command::new("valgrind")
        .args([
            "-q",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--error-exitcode=99",
        ])
        .arg(exe)
        .args(args)
        .output()
        .expect("run valgrind");
    let vg_err = String::from_utf8_lossy(&vg.stderr);
    assert!(
        vg.status.success(),
        "valgrind found errors in {}:\n{vg_err}",
        exe.display()
    );
}

#[test]
fn c_tools_register_find_and_run() {
    let exe = host_cc(
        "test_tools",
        &[
            "tests/c/test_tools.c",
            "tests/c/tools/tool_mod.c",
            "tests/c/tools/tool_word_count.c",
        ],
        &["-Itests/c/tools"],
    );
    run(&exe);
}

#[test]
fn c_number_format() {
    run(&host_cc(
        "test_number_format",
        &["tests/c/test_number_format.c"],
        &[],
    ));
}

/// `agent_format_number` against RT-Thread's own default `rt_vsnprintf`
/// (`src/klibc/rt_vsnprintf_tiny.c` of `RTT_ROOT`), without and with
/// `RT_KLIBC_USING_VSNPRINTF_LONGLONG`. Opt-in: the test command runs it
/// with `--ignored` when RTT_ROOT is set.
#[test]
#[ignore = "needs RTT_ROOT (an RT-Thread 5.x tree)"]
fn c_number_format_with_rt_threads_tiny_vsnprintf() {
    let rtt = std::env::var("RTT_ROOT").expect("RTT_ROOT: an RT-Thread 5.x tree");
    let tiny = Path::new(&rtt).join("src/klibc/rt_vsnprintf_tiny.c");
    assert!(tiny.is_file(), "{} not found", tiny.display());
    let out = root().join("target/c-tests");
    std::fs::create_dir_all(&out).unwrap();
    for long_long in [false, true] {
        let tag = if long_long { "ll" } else { "l" };
        let mut defines = vec!["-DTINY_VSNPRINTF".to_string()];
        if long_long {
            defines.push("-DRT_KLIBC_USING_VSNPRINTF_LONGLONG".into());
        }
        // RT-Thread's file and ours again, renamed, compiled as they are
        // (their own warnings are not ours to fail on).
        let objects = [
            (tiny.clone(), vec!["-Drt_vsnprintf=tiny_rt_vsnprintf"]),
            (
                root().join("src/tools/number_format.c"),
                vec![
                    "-Drt_snprintf=tiny_rt_snprintf",
                    "-Dagent_format_number=tiny_agent_format_number",
                ],
            ),
        ];
        let mut linked = Vec::new();
        for (i, (src, renames)) in objects.iter().enumerate() {
            let obj = out.join(format!("tiny_{tag}_{i}.o"));
            let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
                .args(["-std=gnu11", "-c", "-w"])
                .args(&defines)
                .args(renames)
                .arg(format!("-I{}", root().join("host/include").display()))
                .arg(format!("-I{}", root().join("include").display()))
                .arg("-I/usr/include/cjson")
                .arg(src)
                .arg("-o")
                .arg(&obj)
                .status()
                .expect("run cc");
            assert!(status.success(), "cc failed for {}", src.display());
            linked.push(obj.display().to_string());
        }
        let mut extra: Vec<&str> = defines.iter().map(String::as_str).collect();
        extra.extend(linked.iter().map(String::as_str));
        run(&host_cc(
            &format!("test_number_format_tiny_{tag}"),
            &["tests/c/test_number_format.c"],
            &extra,
        ));
    }
}

#[test]
fn c_messages() {
    run(&host_cc("test_messages", &["tests/c/test_messages.c"], &[]));
}

#[test]
fn c_message_hub_threads() {
    run(&host_cc("test_hub", &["tests/c/test_hub.c"], &[]));
}

#[test]
fn c_heap_cycles_return_to_baseline() {
    run(&host_cc("test_heap", &["tests/c/test_heap.c"], &[]));
}

#[test]
fn c_builders_roles_and_config() {
    run(&host_cc(
        "test_utils_config",
        &["tests/c/test_utils_config.c"],
        &[],
    ));
}

#[test]
fn c_context_messages_and_trimming() {
    run(&host_cc("test_context", &["tests/c/test_context.c"], &[]));
}

#[test]
fn c_runtime_api_through_a_real_turn() {
    use rtt_agent_testkit::llm_server::{LlmServer, ScriptedResponse};
    use std::time::Duration;
    // Two runs (plain, then under valgrind when installed), each two turns:
    // a delayed tool call of the C test's `probe`, then the answer; then a
    // second message queued meanwhile, answered after a delay. The model
    // answers by what it is asked (not from a queue), so a retried request
    // or a second run reads the same script.
    let server = LlmServer::with_model(|req| {
        let msgs = rtt_agent_testkit::agent::messages_of(req);
        match msgs.last() {
            Some(m) if m.role == "tool" => ScriptedResponse::text(&["state ", "checked"]),
            Some(m) if m.content == "what is your state?" => {
                ScriptedResponse::tool_calls(&[("call_1", "probe", &["{}"])])
                    .first_byte_after(Duration::from_millis(300))
            }
            // The moment between the two turns must not read idle.
            Some(m) if m.content == "and again?" => {
                ScriptedResponse::text(&["again"]).first_byte_after(Duration::from_millis(200))
            }
            _ => ScriptedResponse::text(&["unexpected"]),
        }
    })
    .unwrap();
    let exe = host_cc("test_runtime", &["tests/c/test_runtime.c"], &[]);
    run_with(&exe, &[&server.url()]);
    // The injected text reached the model as the user's next message, after
    // the turn it waited behind (each run: tool round, answer, injected).
    let requests = server.requests();
    let last_user = |i: usize| rtt_agent_testkit::agent::last_user_message(&requests[i]);
    assert!(requests.len() >= 3, "{} requests", requests.len());
    assert_eq!(last_user(0).as_deref(), Some("what is your state?"));
    assert_eq!(last_user(2).as_deref(), Some("and again?"));
}

/// AgentExt.h's abilities from C (tests/c/test_abilities.c): a direct-output
/// tool and a tool's deadline through the real loop, the schedule's C API
/// with its sink, profiles and options by name; plain, then under valgrind.
#[cfg(all(feature = "tool-options", feature = "schedule", feature = "sub-agents"))]
#[test]
fn c_abilities_through_the_real_loop() {
    use rtt_agent_testkit::llm_server::{LlmServer, ScriptedResponse};
    let server = LlmServer::with_model(|req| {
        let msgs = rtt_agent_testkit::agent::messages_of(req);
        match msgs.last() {
            Some(m) if m.role == "tool" => ScriptedResponse::text(&["Result: ", &m.content]),
            Some(m) if m.content == "state?" => {
                ScriptedResponse::tool_calls(&[("c1", "board_state", &["{}"])])
            }
            Some(m) if m.content == "timed?" => {
                ScriptedResponse::tool_calls(&[("c2", "timed", &["{}"])])
            }
            Some(m) if m.content == "tick?" => ScriptedResponse::text(&["tock"]),
            _ => ScriptedResponse::text(&["unexpected"]),
        }
    })
    .unwrap();
    let dir = root().join("target/c-tests/abilities");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sched.txt");
    let _ = std::fs::remove_file(&file);
    // SAFETY: read only by the C test's process, which inherits it.
    unsafe { std::env::set_var("RTT_AGENT_SCHEDULE_FILE", &file) };
    let exe = host_cc("test_abilities", &["tests/c/test_abilities.c"], &[]);
    run_with(&exe, &[&server.url()]);
    // The direct answer took one request: the "state?" question was asked
    // once per run, and no request carried its tool's result.
    let requests = server.requests();
    let carried = requests
        .iter()
        .filter(|r| {
            let msgs = rtt_agent_testkit::agent::messages_of(r);
            msgs.last()
                .is_some_and(|m| m.role == "tool" && m.content == "LED on, 23.5 C")
        })
        .count();
    assert_eq!(
        carried, 0,
        "the model was asked with the direct tool's result"
    );
}

/// The seed file that gives TLS keys entropy across boots on a board
/// without a hardware RNG (glue/agent_tls_seed.c, run as the board runs it,
/// over a stand-in DRBG): read, mixed, rewritten; missing, short,
/// unreadable, unwritable; one log line each, never the seed; heap back.
#[cfg(feature = "tls")]
#[test]
fn c_tls_seed_file() {
    let dir = root().join("target/c-tests/tls-seed");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = host_cc("test_tls_seed", &["tests/c/test_tls_seed.c"], &["-Iglue"]);
    run_with(&exe, &[dir.to_str().unwrap()]);
}

#[test]
fn c_multimodal_file_operations() {
    use rtt_agent_testkit::file_server::FileServer;
    let files = FileServer::start(vec![]).unwrap();
    let exe = host_cc("test_multimodal", &["tests/c/test_multimodal.c"], &[]);
    run_with(&exe, &[&files.upload_url(), &files.download_url()]);
    assert!(files.errors().is_empty(), "{:?}", files.errors());
}
