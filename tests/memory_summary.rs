//! Memory that survives trimming (`PKG_AGENT_SUMMARY`): when the trim to
//! `PKG_AGENT_MESSAGE_TRIM` (20 on the host) drops turns, the loop folds them
//! into one bounded note after the system prompt; a failing summary request
//! changes nothing else.

use rtt_agent::abilities::memory_summary::{set_summary_max_len, NOTE_HEAD};
use rtt_agent::host::heap;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::sync::{Arc, Mutex};

/// What the model does with the next summary request.
#[derive(Clone, Copy, PartialEq)]
enum Summary {
    Long,
    Short,
    Fail,
}

/// Wait until the loop is done with the turn, fold included (it runs after
/// the reply went out).
fn settle() {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while rtt_agent::runtime::agent_loop::is_busy() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn is_summary(req: &RecordedRequest) -> bool {
    messages_of(req).first().is_some_and(|m| {
        m.content
            .starts_with("You keep the memory of a conversation")
    })
}

#[test]
fn trimmed_turns_are_folded_into_one_bounded_note() {
    let _serial = lock();
    let mode = Arc::new(Mutex::new(Summary::Long));
    let m = Arc::clone(&mode);
    heap::exclude_this_thread(true);
    let server = LlmServer::with_model(move |req| {
        if is_summary(req) {
            return match *m.lock().unwrap() {
                Summary::Long => ScriptedResponse::text(&["The user counts. ", &"x".repeat(300)]),
                Summary::Short => ScriptedResponse::text(&["  second note  "]),
                Summary::Fail => {
                    ScriptedResponse::error(500, "no summaries today", "server_error", None)
                }
            };
        }
        let n = messages_of(req).iter().filter(|m| m.role == "user").count();
        ScriptedResponse::text(&[&format!("a{n}")])
    })
    .unwrap();
    heap::exclude_this_thread(false);
    set_summary_max_len(Some(200));
    let agent = Agent::start(
        &server,
        Overrides {
            retries: Some(0),
            ..Overrides::default()
        },
    );
    // Ten turns: system + 20 messages, nothing trimmed, no summary asked.
    for i in 1..=10 {
        assert_eq!(agent.ask(&format!("q{i}")), format!("a{i}"));
    }
    settle();
    assert!(!server.requests().iter().any(is_summary));

    // The eleventh: 22 messages, 2 to drop: the reply first, then the fold.
    assert_eq!(agent.ask("q11"), "a11");
    settle();
    let reqs = server.requests();
    let s = reqs.iter().position(is_summary).expect("a summary request");
    assert_eq!(s, 11, "after the eleventh reply");
    let asked = messages_of(&reqs[s]);
    assert_eq!(roles(&asked), ["system", "user"]);
    assert!(
        asked[0].content.contains("at most 200 characters"),
        "{}",
        asked[0].content
    );
    assert_eq!(asked[1].content, "user: q1\nassistant: a1\n");
    assert!(!reqs[s].body_text().contains("\"tools\""));
    assert!(reqs[s].body_text().contains("\"max_tokens\":100"));

    // The next request: the note right after the system prompt, cut to 200
    // bytes, then the 20 newest messages and the new one.
    assert_eq!(agent.ask("q12"), "a11", "the model counts user messages");
    let r = messages_of(&server.requests()[s + 1]);
    assert_eq!(r.len(), 2 + 20 + 1);
    assert_eq!(r[1].role, "system");
    let note = r[1].content.strip_prefix(NOTE_HEAD).expect("the note");
    assert_eq!(note.len(), 200);
    assert!(note.starts_with("The user counts. xxx"));
    assert_eq!((r[2].content.as_str(), r[3].content.as_str()), ("q2", "a2"));

    // The next fold sees the old note and replaces it: still one note.
    *mode.lock().unwrap() = Summary::Short;
    settle();
    let reqs = server.requests();
    let s2 = reqs.iter().rposition(is_summary).unwrap();
    assert!(s2 > s + 1, "q12's turn was folded too");
    let asked = messages_of(&reqs[s2]);
    assert!(
        asked[1]
            .content
            .starts_with("Earlier notes: The user counts."),
        "{}",
        asked[1].content
    );
    assert!(
        asked[1].content.ends_with("user: q2\nassistant: a2\n"),
        "{}",
        asked[1].content
    );
    agent.ask("q13");
    settle();
    let reqs = server.requests();
    let s3 = reqs.iter().rposition(is_summary).unwrap();
    assert!(s3 > s2);
    agent.ask("q14");
    settle();
    let last_turn = || {
        let reqs = server.requests();
        messages_of(reqs.iter().rev().find(|r| !is_summary(r)).unwrap())
    };
    let r = last_turn();
    let notes: Vec<_> = r
        .iter()
        .filter(|m| m.content.starts_with(NOTE_HEAD))
        .collect();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].content, format!("{NOTE_HEAD}second note"));
    assert_eq!(r.len(), 2 + 20 + 1);

    // A failing summary: the trim goes on as without the option, the note
    // stays as it was, and the replies are unaffected.
    *mode.lock().unwrap() = Summary::Fail;
    assert_eq!(agent.ask("q15"), "a11");
    settle();
    agent.ask("q16");
    // q16's own fold follows its reply: wait for it, then look at q16's
    // turn and the request before it (reading the list right after the
    // reply raced with that fold on a loaded machine).
    settle();
    let reqs = server.requests();
    let turn = reqs.iter().rposition(|r| !is_summary(r)).unwrap();
    let r = messages_of(&reqs[turn]);
    assert!(
        turn > 0 && is_summary(&reqs[turn - 1]),
        "the failed summary was asked"
    );
    assert_eq!(r.len(), 2 + 20 + 1, "trimmed all the same");
    assert_eq!(r[1].content, format!("{NOTE_HEAD}second note"));
    drop(agent);
    set_summary_max_len(None);
}

#[test]
fn off_by_default_on_the_host() {
    let _serial = lock();
    set_summary_max_len(None);
    let server = uncounted_server(|| (0..12).map(|_| ScriptedResponse::text(&["ok"])).collect());
    let agent = Agent::start(&server, Overrides::default());
    for i in 0..12 {
        agent.ask(&format!("q{i}"));
    }
    let reqs = server.requests();
    assert_eq!(reqs.len(), 12, "no summary request");
    let r = messages_of(reqs.last().unwrap());
    assert!(!r.iter().any(|m| m.content.starts_with(NOTE_HEAD)));
    // Trimmed before the last question: system + 20 + the question.
    assert_eq!(r.len(), 1 + 20 + 1);
}
