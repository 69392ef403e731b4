//! `chat()` against what the real webclient 2.3.0 does (and the host port
//! now does too, see docs/host-port.md), where it says less than it should:
//! a server that closes before its status line gives status 0, a timeout
//! between two chunks shows up as a disconnect on the read after, and an
//! error body of `Content-Length: 0` reads as "length unknown".

use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent_testkit::chat_call::chat_json;
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

const HI: &str = r#"[{"role":"user","content":"hi"}]"#;

fn configure(url: &str, timeout_ms: usize, retries: usize) {
    let url = CString::new(url).unwrap();
    // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
    // which copies them.
    unsafe { agent_config_set(c"sk-quirks".as_ptr(), c"m".as_ptr(), url.as_ptr()) };
    set_overrides(Overrides {
        timeout_ms: Some(timeout_ms),
        retries: Some(retries),
        retry_base_ms: Some(10),
        ..Overrides::default()
    });
}

#[test]
fn webclient_quirks() {
    let _serial = rtt_agent_testkit::agent::lock();
    closed_before_the_status_line_is_a_connection_failure_and_retried();
    a_stall_between_chunks_is_a_timeout();
    an_empty_error_body_is_not_waited_for();
    set_overrides(Overrides::default());
}

fn closed_before_the_status_line_is_a_connection_failure_and_retried() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/v1/chat/completions",
        listener.local_addr().unwrap().port()
    );
    let server = std::thread::spawn(move || {
        let mut served = 0;
        listener.set_nonblocking(false).unwrap();
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            // Take the whole request (unread bytes would turn the close
            // into a reset), answer nothing, close.
            s.set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            while matches!(s.read(&mut [0u8; 4096]), Ok(n) if n > 0) {}
            served += 1;
        }
        served
    });
    configure(&url, 3000, 1);
    let err = chat_json(HI, None).unwrap_err();
    assert!(
        err.contains("closed the connection without answering"),
        "{err}"
    );
    assert_eq!(server.join().unwrap(), 2, "retried once");
}

fn a_stall_between_chunks_is_a_timeout() {
    let events = sse_text(&["first ", "second"], Some("stop"));
    // The stall starts right after the first chunk (size line, data, CRLF).
    let first_chunk = format!("{:x}\r\n", events[0].len()).len() + events[0].len() + 2;
    let server = LlmServer::start(vec![
        ScriptedResponse::sse(events).pause_at(first_chunk, Duration::from_secs(4))
    ])
    .unwrap();
    configure(&server.url(), 1000, 0);
    let started = Instant::now();
    let err = chat_json(HI, None).unwrap_err();
    assert!(err.contains("read timeout"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

fn an_empty_error_body_is_not_waited_for() {
    let server =
        LlmServer::start(vec![ScriptedResponse::raw(500, "application/json", "")]).unwrap();
    configure(&server.url(), 3000, 0);
    let started = Instant::now();
    let err = chat_json(HI, None).unwrap_err();
    assert!(err.contains("500"), "{err}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "waited {:?} for an empty body",
        started.elapsed()
    );
}
