//! Too much at once, and retries, against the request deadline
//! (`PKG_AGENT_REQUEST_TIMEOUT_MS`) and the caps: a million tool calls, a
//! `Content-Length` of 2 GB then a close, a 2 MB header, a server that
//! answers 500 for ever, and a stream cut before its first event. Each ends
//! in time with a clear error or a capped answer, heap bounded and back at
//! its baseline (the discarded attempt of a retry included).
//!
//! On the code before: the cut stream was not retried (an error), and the
//! 500s were retried with waits of 300 ms doubling up to a minute, ten
//! times, about five minutes instead of the 2 s deadline.
//!
//! One test function in a process of its own: the heap figures are exact,
//! and the test harness allocates while other tests run.

use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent_testkit::chat_call::chat_json;
use rtt_agent_testkit::deadline_run::{DeadlineRun, GRACE, HI};
use rtt_agent_testkit::llm_server::*;
use std::io::Write;
use std::time::{Duration, Instant};

/// The deadline of every request here.
const DEADLINE: Duration = Duration::from_millis(2000);
static RUN: DeadlineRun = DeadlineRun {
    deadline: DEADLINE,
    key: c"sk-deadline",
};

#[test]
fn too_much_at_once_and_retries_stay_within_the_deadline() {
    let _serial = rtt_agent_testkit::agent::lock();
    RUN.warm_up();
    let quick = Duration::from_millis(1000);

    // A million tool calls: refused at the 33rd, not retried.
    let server = LlmServer::start(vec![
        ScriptedResponse::many_tool_calls(1_000_000),
        ScriptedResponse::text(&["never asked for"]),
    ])
    .unwrap();
    RUN.run("a million tool calls", &server, 3, |outcome, took| {
        let err = outcome.unwrap_err();
        assert!(err.contains("too many tool calls"), "{err}");
        assert!(took < quick, "{took:?}");
    });
    assert_eq!(server.requests().len(), 1);

    // Content-Length: 2 GB, then the body, then a close: the whole answer
    // arrived, and nothing was reserved for the claim.
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["Hello ", "world"]).claimed_length_then_close(2_000_000_000)
    ])
    .unwrap();
    RUN.run(
        "Content-Length 2 GB, then close",
        &server,
        3,
        |outcome, took| {
            assert_eq!(outcome.map(|a| a.content).as_deref(), Ok("Hello world"));
            assert!(took < quick, "{took:?}");
        },
    );
    // The same, cut before the answer finished: retried (nothing reached a
    // caller), cut again, reported.
    let cut = ScriptedResponse::sse(sse_content_events(&["Hel"]))
        .claimed_length_then_close(2_000_000_000);
    let server = LlmServer::start(vec![cut.clone(), cut.clone(), cut]).unwrap();
    RUN.run("Content-Length 2 GB, cut", &server, 2, |outcome, took| {
        let err = outcome.unwrap_err();
        assert!(err.contains("cut off"), "{err}");
        assert!(took < quick, "{took:?}");
    });
    assert_eq!(server.requests().len(), 3, "two retries");

    // A 2 MB header line: webclient keeps the head to its 1 KB buffer and
    // reads the rest as body. With the framing headers after the padding
    // they are lost, and the padding, the rest of the head and the framed
    // body are read as one unframed body (SSE ignores the junk lines): the
    // answer, or the deadline, whichever comes first (2 MB in reads of a
    // byte per second left is slow on purpose: a drip could not hold one).
    for framing in [Transfer::ContentLength, Transfer::Chunked] {
        let what = format!("a 2 MB header before the framing, {framing:?}");
        let script = ScriptedResponse::text(&["Hello ", "world"])
            .transfer(framing)
            .huge_header(2 << 20);
        let server = LlmServer::start(vec![script.clone(), script.clone(), script]).unwrap();
        RUN.run(&what, &server, 2, |outcome, took| {
            match outcome {
                Ok(a) => assert_eq!(a.content, "Hello world"),
                Err(e) => assert!(e.contains("the request timed out"), "{e}"),
            }
            assert!(took < DEADLINE + GRACE, "{took:?}");
        });
    }
    // With Content-Length before the padding, webclient keeps it and reads
    // that many bytes of padding as the body: no event in it, cut off,
    // retried, reported.
    let what = "a 2 MB header after Content-Length";
    let answer = ScriptedResponse::text(&["Hello ", "world"]).transfer(Transfer::ContentLength);
    let length = answer.wire_body().len();
    let script = answer
        .header("Content-Length", &length.to_string())
        .huge_header(2 << 20);
    let server = LlmServer::start(vec![script.clone(), script.clone(), script]).unwrap();
    RUN.run(what, &server, 2, |outcome, took| {
        let err = outcome.unwrap_err();
        assert!(err.contains("cut off"), "{err}");
        assert!(took < quick, "{took:?}");
    });
    assert_eq!(server.requests().len(), 3, "two retries");

    // A server that answers 500 for ever: retried while a wait still ends
    // before the deadline (300 + 600 ms), then reported at once.
    let server = LlmServer::with_model(|_| {
        ScriptedResponse::error(500, "still broken", "server_error", None)
    })
    .unwrap();
    RUN.point_at(&server);
    set_overrides(Overrides {
        retries: Some(10),
        retry_base_ms: Some(300),
        ..RUN.overrides(10)
    });
    let t0 = Instant::now();
    let err = chat_json(HI, None).unwrap_err();
    let took = t0.elapsed();
    let _ = writeln!(std::io::stderr(), "500 for ever: {took:?}: {err}");
    assert!(
        err.contains("HTTP 500: still broken") && err.contains("deadline"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 3);
    assert!(
        took >= Duration::from_millis(900) && took < DEADLINE,
        "{took:?}"
    );

    // Cut before the first event, then answered: the discarded attempt
    // leaves nothing behind.
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["Hello ", "world"]).cut_after_events(0),
        ScriptedResponse::text(&["Hello ", "world"]),
    ])
    .unwrap();
    RUN.run(
        "cut after 0 events, retried",
        &server,
        3,
        |outcome, took| {
            assert_eq!(outcome.map(|a| a.content).as_deref(), Ok("Hello world"));
            assert!(took < quick, "{took:?}");
        },
    );
    assert_eq!(server.requests().len(), 2);
    set_overrides(Overrides::default());
}
