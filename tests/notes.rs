//! Notes on the file system (`PKG_AGENT_NOTES`): the model's `remember`,
//! `recall` and `forget` against a real file (RTT_AGENT_NOTES_FILE, the
//! host's stand-in for PKG_AGENT_NOTES_FILE), across the agent's restarts;
//! a damaged or foreign file set aside; the bound; the summary note kept
//! there and back at the next start.
#![cfg(feature = "notes")]

use rtt_agent::abilities::mcp_client::servers;
use rtt_agent::abilities::memory_summary::{set_summary_max_len, NOTE_HEAD};
use rtt_agent::host::console;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::path::PathBuf;

/// The model: "remember K T" calls remember(K, T), "recall Q" recall(Q),
/// "forget K" forget(K); after a tool result it answers `Result: <it>`;
/// anything else is answered "ok <n>" (n: the user messages it saw).
fn model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = messages_of(req);
    if msgs
        .first()
        .is_some_and(|m| m.content.starts_with("You keep the memory"))
    {
        return ScriptedResponse::text(&["the user set up the lab wifi"]);
    }
    let last = msgs.last().cloned().unwrap();
    if last.role == "tool" {
        return ScriptedResponse::text(&["Result: ", &last.content]);
    }
    let words: Vec<&str> = last.content.splitn(3, ' ').collect();
    let args = match words.as_slice() {
        ["remember", k, t] => Some(("remember", format!(r#"{{"key":"{k}","text":"{t}"}}"#))),
        ["recall", q] => Some(("recall", format!(r#"{{"query":"{q}"}}"#))),
        ["recall"] => Some(("recall", r#"{"query":""}"#.to_string())),
        ["forget", k] => Some(("forget", format!(r#"{{"key":"{k}"}}"#))),
        _ => None,
    };
    match args {
        Some((tool, a)) => ScriptedResponse::tool_calls(&[("n1", tool, &[&a])]),
        None => {
            let n = msgs.iter().filter(|m| m.role == "user").count();
            ScriptedResponse::text(&[&format!("ok {n}")])
        }
    }
}

fn file() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("notes-test");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("agent_notes.txt")
}

fn settle() {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while rtt_agent::runtime::agent_loop::is_busy() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn notes_on_the_file_system() {
    let _serial = lock();
    servers::reset();
    let path = file();
    let bad = PathBuf::from(format!("{}.bad", path.display()));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir_all(&path);
    let _ = std::fs::remove_file(&bad);
    let _ = std::fs::remove_dir_all(&bad);
    // SAFETY: set before the agent's threads read it, under the tests' lock.
    unsafe { std::env::set_var("RTT_AGENT_NOTES_FILE", &path) };
    let llm = LlmServer::with_model(model).unwrap();
    let baseline = settled_used();

    // Written in one run...
    let agent = Agent::start(&llm, Overrides::default());
    assert_eq!(
        agent.ask("remember wifi lab-ssid"),
        "Result: remembered \"wifi\""
    );
    assert_eq!(
        agent.ask("remember led pin-13"),
        "Result: remembered \"led\""
    );
    drop(agent);
    assert_eq!(settled_used(), baseline, "heap not back after the notes");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.starts_with("rtt-agent notes 1\nn\twifi\tlab-ssid\nn\tled\tpin-13\nend\t"),
        "{written}"
    );
    assert!(!PathBuf::from(format!("{}.tmp", path.display())).exists());
    drop(written);

    // ...recalled in the next.
    let agent = Agent::start(&llm, Overrides::default());
    assert_eq!(agent.ask("recall wifi"), "Result: wifi: lab-ssid");
    assert_eq!(agent.ask("recall"), "Result: led: pin-13\nwifi: lab-ssid");
    assert_eq!(agent.ask("forget led"), "Result: forgot \"led\"");
    assert_eq!(
        agent.ask("forget led"),
        "Result: error: there is no note named \"led\""
    );
    assert_eq!(agent.ask("recall led"), "Result: no note matches \"led\"");
    // The bound (PKG_AGENT_NOTES_MAX, 2048 here): the oldest give way.
    let long = "x".repeat(600);
    for k in ["a", "b", "c"] {
        assert_eq!(
            agent.ask(&format!("remember {k} {long}")),
            format!("Result: remembered \"{k}\"")
        );
    }
    assert_eq!(
        agent.ask(&format!("remember d {long}")),
        "Result: remembered \"d\"; 2 oldest note(s) removed for room"
    );
    assert!(std::fs::metadata(&path).unwrap().len() <= 2048);
    let too_long = "y".repeat(2100);
    assert!(agent.ask(&format!("remember big {too_long}")).starts_with(
        "Result: error: the note is too long (the notes file holds at most 2048 bytes)"
    ));
    drop(agent);
    // The test's own texts count in the heap figures too.
    drop((long, too_long));
    assert_eq!(settled_used(), baseline, "heap not back after the bound");

    // A foreign file at the path: set aside with a log line, a new one begun.
    std::fs::write(&path, "not the agent's\n").unwrap();
    console::rt_host_console_capture(1);
    let agent = Agent::start(&llm, Overrides::default());
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(
        log.contains(&format!(
            "notes: {}: not the agent's (its first line differs); set aside as .bad, a new file is started",
            path.display()
        )),
        "{log}"
    );
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), "not the agent's\n");
    assert_eq!(agent.ask("recall"), "Result: no note matches \"\"");
    assert_eq!(
        agent.ask("remember door 4711"),
        "Result: remembered \"door\""
    );
    drop(agent);
    drop(log);

    // A damaged one (a changed byte): the same.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(4).position(|w| w == b"4711").unwrap();
    bytes[at] = b'5';
    std::fs::write(&path, &bytes).unwrap();
    console::rt_host_console_capture(1);
    let agent = Agent::start(&llm, Overrides::default());
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(
        log.contains("its check value differs (changed or damaged); set aside"),
        "{log}"
    );
    assert_eq!(agent.ask("recall door"), "Result: no note matches \"door\"");
    drop(agent);
    drop((log, bytes));
    assert_eq!(
        settled_used(),
        baseline,
        "heap not back after the damaged files"
    );

    // A file that cannot be read (here: a folder at its path, whose read
    // fails as a card's I/O error does): set aside, not taken for empty.
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir_all(&bad);
    let _ = std::fs::remove_file(&bad);
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("inside"), "kept").unwrap();
    console::rt_host_console_capture(1);
    let agent = Agent::start(&llm, Overrides::default());
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(
        log.contains("it cannot be read (an I/O error); set aside as .bad"),
        "{log}"
    );
    assert_eq!(std::fs::read_to_string(bad.join("inside")).unwrap(), "kept");
    assert_eq!(
        agent.ask("remember door 1234"),
        "Result: remembered \"door\""
    );
    drop(agent);
    drop(log);
    assert!(std::fs::metadata(&path).unwrap().is_file());
    std::fs::remove_dir_all(&bad).unwrap();

    // The summary note of trimmed turns is kept with the notes and is back
    // after a restart.
    set_summary_max_len(Some(200));
    let agent = Agent::start(&llm, Overrides::default());
    for i in 1..=11 {
        agent.ask(&format!("q{i}"));
    }
    settle();
    drop(agent);
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.contains("\ns\tthe user set up the lab wifi\n"),
        "{written}"
    );
    drop(written);
    let agent = Agent::start(&llm, Overrides::default());
    let before = llm.requests().len();
    agent.ask("hello");
    let first = messages_of(&llm.requests()[before]);
    assert_eq!(first[1].role, "system");
    assert_eq!(
        first[1].content,
        format!("{NOTE_HEAD}the user set up the lab wifi")
    );
    drop(first);
    drop(agent);
    set_summary_max_len(None);
    assert_eq!(settled_used(), baseline, "heap not back after the summary");
    // SAFETY: as above.
    unsafe { std::env::remove_var("RTT_AGENT_NOTES_FILE") };
}
