//! Scheduled prompts (`PKG_AGENT_SCHEDULE`): entries added with the C API
//! and the `agent_schedule` command, kept in a real file
//! (RTT_AGENT_SCHEDULE_FILE), run by the agent's scheduler thread against
//! the scripted model; replies to the log, the sink, and never taken by a
//! channel for its own; a busy loop gets no pile-up; entries survive a
//! restart; the heap is back after cleanup.
#![cfg(feature = "schedule")]

use rtt_agent::abilities::mcp_client::servers;
use rtt_agent::ffi::schedule::{
    agent_schedule, agent_schedule_add, agent_schedule_del, agent_schedule_set_sink,
};
use rtt_agent::host::console;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What the sink received: (id, reply).
static SUNK: Mutex<Vec<(i32, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn sink(id: c_int, reply: *const c_char) {
    // SAFETY: the library hands a NUL-terminated reply for the call.
    let text = unsafe { CStr::from_ptr(reply) }
        .to_string_lossy()
        .into_owned();
    SUNK.lock().unwrap().push((id, text));
}

fn sunk() -> Vec<(i32, String)> {
    SUNK.lock().unwrap().clone()
}

/// How long the model takes for a scheduled prompt (ms).
static SLOW_MS: AtomicU64 = AtomicU64::new(0);

/// The model: "what is 2+3?" is answered "5"; anything else "echo: <it>".
fn model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = messages_of(req);
    let last = msgs.last().unwrap().content.clone();
    if last == "what is 2+3?" {
        let slow = SLOW_MS.load(Ordering::SeqCst);
        return ScriptedResponse::text(&["5"]).first_byte_after(Duration::from_millis(slow));
    }
    ScriptedResponse::text(&["echo: ", &last])
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn scheduled_prompts() {
    let _serial = lock();
    servers::reset();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("schedule-test");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("agent_sched.txt");
    let _ = std::fs::remove_file(&file);
    // SAFETY: set before the agent's threads read it, under the tests' lock.
    unsafe { std::env::set_var("RTT_AGENT_SCHEDULE_FILE", &file) };
    let llm = LlmServer::with_model(model).unwrap();
    let baseline = settled_used();
    agent_schedule_set_sink(Some(sink));
    // The steps' own texts are freed before the heap is compared.
    steps(&llm, &file);
    agent_schedule_set_sink(None);
    *SUNK.lock().unwrap() = Vec::new();
    assert_eq!(settled_used(), baseline, "heap not back after the schedule");
    // SAFETY: as above.
    unsafe { std::env::remove_var("RTT_AGENT_SCHEDULE_FILE") };
}

fn steps(llm: &LlmServer, file: &PathBuf) {
    let agent = Agent::start(llm, Overrides::default());
    // Refused: a bad when, no prompt.
    let (rc, out) = msh(&["add", "every", "2x", "hello"]);
    assert_eq!(
        (rc, out.as_str()),
        (
            -1,
            "agent_schedule: every needs <N>s, <N>m or <N>h (N at least 1, at most 24 days)\n"
        )
    );
    let (rc, out) = msh(&["add", "every", "2s"]);
    assert_eq!((rc, out.as_str()), (-1, "agent_schedule: no prompt\n"));
    let (rc, out) = msh(&["add", "61 * * * *", "x"]);
    assert_eq!(
        (rc, out.as_str()),
        (
            -1,
            "agent_schedule: the cron minute field (0-59) is not valid\n"
        )
    );
    // every 1s, by the command (the prompt in quotes, as typed).
    let (rc, out) = msh(&["add", "every", "1s", "\"what is 2+3?\""]);
    assert_eq!((rc, out.as_str()), (0, "scheduled #1\n"));
    // Replies come, to the sink and the log.
    console::rt_host_console_capture(1);
    wait_until("two scheduled replies", Duration::from_secs(5), || {
        sunk().len() >= 2
    });
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(
        sunk().iter().all(|(id, r)| *id == 1 && r == "5"),
        "{:?}",
        sunk()
    );
    assert!(log.contains("schedule #1: 5"), "{log}");
    // A question of the channel's gets its own answer, not a scheduled one.
    for i in 0..5 {
        assert_eq!(agent.ask(&format!("q{i}")), format!("echo: q{i}"));
    }
    // del stops them.
    let (rc, out) = msh(&["del", "1"]);
    assert_eq!((rc, out.as_str()), (0, "deleted #1\n"));
    std::thread::sleep(Duration::from_millis(300));
    let after_del = sunk().len();
    std::thread::sleep(Duration::from_millis(2200));
    assert_eq!(sunk().len(), after_del, "a deleted entry ran");
    let (rc, out) = msh(&["del", "1"]);
    assert_eq!((rc, out.as_str()), (-1, "agent_schedule: no entry #1\n"));

    // A busy loop: the model takes 2.5 s, the prompt is due every second.
    // At most one run waits; the rest are counted as missed, not queued.
    SLOW_MS.store(2500, Ordering::SeqCst);
    SUNK.lock().unwrap().clear();
    let before = llm.requests().len();
    let when = CString::new("every 1s").unwrap();
    let prompt = CString::new("what is 2+3?").unwrap();
    // SAFETY: two NUL-terminated strings (copied).
    let id = unsafe { agent_schedule_add(when.as_ptr(), prompt.as_ptr()) };
    assert_eq!(id, 2, "numbers are not reused");
    std::thread::sleep(Duration::from_millis(6300));
    let (rc, listed) = msh(&["list"]);
    assert_eq!(rc, 0);
    // SAFETY: a plain call.
    assert_eq!(agent_schedule_del(id), 0);
    wait_until("the last scheduled reply", Duration::from_secs(5), || {
        !rtt_agent::runtime::agent_loop::is_busy()
    });
    let asked = llm.requests().len() - before;
    assert!(
        (2..=3).contains(&asked),
        "{asked} requests in 6.3 s at 2.5 s each: {listed}"
    );
    let missed: usize = listed
        .split("missed ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(missed >= 2, "{listed}");
    assert!(
        listed.starts_with("#2 every 1s: what is 2+3? (runs "),
        "{listed}"
    );
    SLOW_MS.store(0, Ordering::SeqCst);

    // Kept across a restart: the entry is in the file and runs again.
    let (rc, _) = msh(&["add", "every", "1s", "what", "is", "2+3?"]);
    assert_eq!(rc, 0);
    let (_, listed) = msh(&["add", "*/5 9-17 * * 1-5", "standup notes?"]);
    assert_eq!(listed, "scheduled #4\n");
    drop(agent);
    let kept = std::fs::read_to_string(file).unwrap();
    assert!(kept.starts_with("rtt-agent schedule 1\ns\t5\nn\t3 every 1s\twhat is 2+3?\nn\t4 */5 9-17 * * 1-5\tstandup notes?\nend\t"), "{kept}");
    drop(kept);
    SUNK.lock().unwrap().clear();
    let agent = Agent::start(llm, Overrides::default());
    wait_until("a reply after the restart", Duration::from_secs(5), || {
        !sunk().is_empty()
    });
    assert_eq!(sunk()[0], (3, "5".to_string()));
    let (_, listed) = msh(&["list"]);
    assert!(
        listed.contains("#4 */5 9-17 * * 1-5: standup notes?"),
        "{listed}"
    );
    assert_eq!(msh(&["del", "3"]).0, 0);
    assert_eq!(msh(&["del", "4"]).0, 0);
    drop(agent);
}

/// Run the `agent_schedule` command with `args`: its result and output.
fn msh(args: &[&str]) -> (i32, String) {
    rtt_agent_testkit::shell::msh_argv(agent_schedule, "agent_schedule", args)
}
