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

use rtt_agent::ffi::chat::{set_overrides, Overrides};
use rtt_agent::ffi::config::agent_config_set;
use rtt_agent::host::heap;
use rtt_agent_testkit::chat_call::{chat_json, Answer};
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::io::Write;
use std::time::{Duration, Instant};

const HI: &str = r#"[{"role":"user","content":"hi"}]"#;
/// The deadline of every request here.
const DEADLINE: Duration = Duration::from_millis(2000);
/// How late after the deadline a request may end: webclient's socket
/// timeouts have whole seconds, and one read may be under way.
const GRACE: Duration = Duration::from_millis(1200);
/// Heap a request may take above its baseline here: the session and its
/// 1 KB header buffer, the 4 KB read buffer (or the 2 KB error body), the
/// stream's state, the answer and one tool call's arguments up to their
/// caps (4 KB each, see `overrides`), with room to spare (measured: 1.6 to
/// 11.7 KB). Nothing grows with how long or how much a server sends.
const HEAP_BOUND: usize = 24 * 1024;

fn overrides(retries: usize) -> Overrides {
    Overrides {
        // Longer than the deadline: only the deadline can end these.
        timeout_ms: Some(10_000),
        retries: Some(retries),
        retry_base_ms: Some(10),
        request_timeout_ms: Some(DEADLINE.as_millis() as usize),
        max_content: Some(4096),
        max_reasoning: Some(4096),
        max_tool_args: Some(4096),
        max_token: Some(1024),
    }
}

fn point_at(server: &LlmServer) {
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe { agent_config_set(c"sk-deadline".as_ptr(), c"m".as_ptr(), url.as_ptr()) };
}

/// One `chat()` against `server`, its outcome and duration handed to
/// `check`; fails if the heap went more than [`HEAP_BOUND`] above its
/// baseline meanwhile, or is not back at it once `check` is done.
fn run(
    what: &str,
    server: &LlmServer,
    retries: usize,
    check: impl FnOnce(Result<Answer, String>, Duration),
) {
    point_at(server);
    set_overrides(overrides(retries));
    let baseline = heap::used();
    heap::rt_host_heap_reset_max_used();
    let t0 = Instant::now();
    let outcome = chat_json(HI, None);
    let took = t0.elapsed();
    let peak = heap::max_used() - baseline;
    // Straight to stderr: the harness's capture of `eprintln!` grows a
    // buffer on this thread's heap, inside the figures.
    let mut err = std::io::stderr();
    let _ = match &outcome {
        Ok(a) => writeln!(
            err,
            "{what}: {took:?}, heap peak +{peak} B, answered ({} bytes)",
            a.content.len()
        ),
        Err(e) => writeln!(err, "{what}: {took:?}, heap peak +{peak} B, error: {e}"),
    };
    assert!(peak < HEAP_BOUND, "{what}: heap peak +{peak} B");
    check(outcome, took);
    assert_eq!(heap::used(), baseline, "{what}: heap back at its baseline");
}

#[test]
fn too_much_at_once_and_retries_stay_within_the_deadline() {
    let _serial = rtt_agent_testkit::agent::lock();
    // Warm up: anything allocated once per process is allocated now.
    let warm = LlmServer::start(vec![ScriptedResponse::text(&["warm"])]).unwrap();
    point_at(&warm);
    set_overrides(overrides(0));
    assert_eq!(
        chat_json(HI, None).map(|a| a.content).as_deref(),
        Ok("warm")
    );
    drop(warm);
    let quick = Duration::from_millis(1000);

    // A million tool calls: refused at the 33rd, not retried.
    let server = LlmServer::start(vec![
        ScriptedResponse::many_tool_calls(1_000_000),
        ScriptedResponse::text(&["never asked for"]),
    ])
    .unwrap();
    run("a million tool calls", &server, 3, |outcome, took| {
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
    run(
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
    run("Content-Length 2 GB, cut", &server, 2, |outcome, took| {
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
        run(&what, &server, 2, |outcome, took| {
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
    run(what, &server, 2, |outcome, took| {
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
    point_at(&server);
    set_overrides(Overrides {
        retries: Some(10),
        retry_base_ms: Some(300),
        ..overrides(10)
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
    run(
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
