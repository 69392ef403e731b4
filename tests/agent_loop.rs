//! The agent loop end to end: the debug channel in (without it, the test
//! kit's messages straight to the hub), the loop, chat() over
//! real TCP to the scripted server, the C tools, and the reply out. The
//! requests the server received are checked message by message.

use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::time::{Duration, Instant};

#[test]
fn three_rounds_with_parallel_calls() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        calls_with_reasoning(
            "plan: add and multiply",
            &[
                ("c1", "add", &["{\"a\":2,", "\"b\":3}"]),
                ("c2", "mul", &["{\"a\":6,\"b\":7}"]),
            ],
        ),
        ScriptedResponse::tool_calls(&[("c3", "compare", &["{\"a\":5,\"b\":42}"])]),
        ScriptedResponse::text(&["5 is less ", "than 42."]),
    ])
    .unwrap();
    let agent = Agent::start(&server, Overrides::default());
    assert_eq!(agent.ask("work it out"), "5 is less than 42.");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let r1 = messages_of(&reqs[0]);
    assert_eq!(roles(&r1), ["system", "user"]);
    assert_eq!(r1[1].content, "work it out");
    let r2 = messages_of(&reqs[1]);
    assert_eq!(roles(&r2), ["system", "user", "assistant", "tool", "tool"]);
    assert_eq!(r2[2].calls, ["c1", "c2"]);
    assert_eq!(r2[2].reasoning.as_deref(), Some("plan: add and multiply"));
    assert_eq!(
        (r2[3].tool_call_id.as_str(), r2[3].content.as_str()),
        ("c1", "2 + 3 = 5")
    );
    assert_eq!(
        (r2[4].tool_call_id.as_str(), r2[4].content.as_str()),
        ("c2", "6 * 7 = 42")
    );
    let r3 = messages_of(&reqs[2]);
    assert_eq!(
        roles(&r3),
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool"
        ]
    );
    assert_eq!(r3[5].calls, ["c3"]);
    assert_eq!(r3[5].reasoning, None);
    assert_eq!(
        (r3[6].tool_call_id.as_str(), r3[6].content.as_str()),
        ("c3", "5 is less than 42")
    );
    // The key only ever travels in the Authorization header.
    for r in &reqs {
        assert!(!r.body_text().contains("sk-loop-secret-456"));
    }
}

#[test]
fn tool_errors_go_back_to_the_model() {
    let _serial = lock();
    let long_args = format!("{{\"a\":1,\"b\":2,\"pad\":\"{}\"}}", "x".repeat(200));
    let server = LlmServer::start(vec![
        ScriptedResponse::tool_calls(&[
            ("e1", "divide", &["{\"a\":1,\"b\":2}"]),
            ("e2", "add", &["{\"a\":"]),
            ("e3", "mul", &[long_args.as_str()]),
            ("e4", "compare", &["{\"a\":1}"]),
            ("e5", "add", &[""]),
        ]),
        ScriptedResponse::text(&["understood"]),
    ])
    .unwrap();
    let agent = Agent::start(
        &server,
        Overrides {
            max_tool_args: Some(128),
            ..Overrides::default()
        },
    );
    assert_eq!(agent.ask("try the tools"), "understood");
    let r2 = messages_of(&server.requests()[1]);
    assert_eq!(
        roles(&r2),
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "tool",
            "tool",
            "tool"
        ]
    );
    let tool = |id: &str| {
        r2.iter()
            .find(|m| m.tool_call_id == id)
            .map(|m| m.content.clone())
            .unwrap()
    };
    assert!(
        tool("e1").contains("no tool named \"divide\"") && tool("e1").contains("add, mul, compare"),
        "{}",
        tool("e1")
    );
    assert!(
        tool("e2").contains("not a valid JSON object"),
        "{}",
        tool("e2")
    );
    assert!(tool("e3").contains("longer than"), "{}", tool("e3"));
    // Checked against compare's schema before the tool runs (without the
    // tool-arg-check part, the tool itself refuses them).
    let (e4, e5) = if cfg!(feature = "tool-arg-check") {
        (
            "\"compare\" do not fit its parameters: the required property \"b\" is missing",
            // Empty arguments are {}: add's required "a" is missing.
            "the required property \"a\" is missing",
        )
    } else {
        (
            "the tool \"compare\" failed (invalid or missing arguments?)",
            "the tool \"add\" failed (invalid or missing arguments?)",
        )
    };
    assert!(tool("e4").contains(e4), "{}", tool("e4"));
    assert!(tool("e5").contains(e5), "{}", tool("e5"));
}

#[test]
fn every_failure_gets_a_reply() {
    let _serial = lock();
    let rounds: Vec<ScriptedResponse> = (0..10)
        .map(|i| {
            ScriptedResponse::tool_calls(&[(&*format!("r{i}"), "add", &["{\"a\":1,\"b\":1}"])])
        })
        .collect();
    let mut script = vec![
        ScriptedResponse::error(
            401,
            "Incorrect API key provided",
            "invalid_request_error",
            Some("invalid_api_key"),
        ),
        ScriptedResponse::error(500, "boom", "server_error", None),
        ScriptedResponse::error(500, "boom", "server_error", None),
        ScriptedResponse::error(500, "boom again", "server_error", None),
        ScriptedResponse::sse(sse_text(&["partial"], None)).cut_after(60),
        ScriptedResponse::sse(vec![sse_event(&chunk_json(r#"{"content":"half"}"#, None))])
            .transfer(Transfer::Close),
    ];
    script.extend(rounds);
    let server = LlmServer::start(script).unwrap();
    let agent = Agent::start(
        &server,
        Overrides {
            retries: Some(2),
            ..Overrides::default()
        },
    );

    let r = agent.ask("first");
    assert!(
        r.contains("HTTP 401") && r.contains("Incorrect API key provided"),
        "{r}"
    );
    assert_eq!(server.requests().len(), 1, "401 is not retried");
    let r = agent.ask("second");
    assert!(r.contains("HTTP 500") && r.contains("boom again"), "{r}");
    assert_eq!(server.requests().len(), 4, "500 is retried twice");
    // From here on no retries, so each failure below is seen as it is.
    set_overrides(Overrides {
        retries: Some(0),
        retry_base_ms: Some(10),
        timeout_ms: Some(3000),
        ..Overrides::default()
    });
    let r = agent.ask("third");
    assert!(r.contains("cut off"), "{r}");
    assert_eq!(server.requests().len(), 5);
    let r = agent.ask("fourth");
    assert!(r.contains("cut off"), "{r}");
    let r = agent.ask("fifth");
    assert!(r.contains("round limit reached (10 tool rounds)"), "{r}");
    // The conversation is still valid: every tool call was answered.
    let last = messages_of(server.requests().last().unwrap());
    for (i, m) in last.iter().enumerate() {
        for id in &m.calls {
            assert!(
                last[i + 1..].iter().any(|t| &t.tool_call_id == id),
                "call {id} unanswered"
            );
        }
    }
}

#[test]
fn retry_after_is_honoured() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::error(429, "slow down", "rate_limit", None).retry_after(1),
        ScriptedResponse::text(&["fine"]),
    ])
    .unwrap();
    let agent = Agent::start(&server, Overrides::default());
    let t0 = Instant::now();
    assert_eq!(agent.ask("hi"), "fine");
    assert!(
        t0.elapsed() >= Duration::from_secs(1),
        "the second attempt came before Retry-After"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn trimming_never_starts_with_a_tool_message() {
    let _serial = lock();
    let mut script = Vec::new();
    for i in 0..15 {
        script.push(ScriptedResponse::tool_calls(&[
            (&*format!("t{i}a"), "add", &["{\"a\":1,\"b\":2}"]),
            (&*format!("t{i}b"), "mul", &["{\"a\":1,\"b\":2}"]),
        ]));
        script.push(ScriptedResponse::text(&["done"]));
    }
    let server = LlmServer::start(script).unwrap();
    let agent = Agent::start(&server, Overrides::default());
    for i in 0..15 {
        assert_eq!(agent.ask(&format!("question {i}")), "done");
    }
    let keep = 20; // PKG_AGENT_MESSAGE_TRIM of the host rtconfig.h
    for req in server.requests() {
        let m = messages_of(&req);
        assert_eq!(m[0].role, "system");
        assert!(m.len() <= 1 + keep + 5, "context grew to {}", m.len()); // one exchange on top of the trimmed history
        assert_ne!(m[1].role, "tool");
        for (i, msg) in m.iter().enumerate() {
            if msg.role == "tool" {
                let caller = m[..i].iter().rev().find(|p| p.role != "tool").unwrap();
                assert!(
                    caller.calls.contains(&msg.tool_call_id),
                    "orphaned tool message {}",
                    msg.tool_call_id
                );
            }
        }
    }
}

/// The Debug channel's senders (the exchange): only with it.
#[cfg(feature = "channel-debug")]
#[test]
fn concurrent_senders_each_get_their_own_reply() {
    let _serial = lock();
    let server = LlmServer::with_model(|req| {
        let m = messages_of(req);
        let last = m
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.clone())
            .unwrap_or_default();
        ScriptedResponse::text(&["echo: ", &last])
    })
    .unwrap();
    let _agent = Agent::start(&server, Overrides::default());
    let threads: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                (0..3)
                    .map(|j| {
                        (
                            format!("sender {i} message {j}"),
                            ask(&format!("sender {i} message {j}")),
                        )
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for t in threads {
        for (sent, got) in t.join().unwrap() {
            assert_eq!(got, format!("echo: {sent}"));
        }
    }
}
