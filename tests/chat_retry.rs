//! Retries that recover what can be recovered, and only that: `chat()` over
//! real TCP against the scripted server (and a TLS server for the
//! certificate case). docs/requests.md states the rules these pin.
//!
//! On the code before: a stream cut before anything reached a callback was
//! never retried (every stream error was final), text without a callback
//! counted as delivered, 408 was final, a refused certificate was retried,
//! `retry-after-ms` and HTTP-date `Retry-After` were ignored, and
//! `agent_chat_last_error()` kept a failed attempt's text after a retry
//! succeeded.
//!
//! The heap after a discarded attempt is checked in `chat_deadline.rs` (a
//! process with one test: exact heap figures need the harness quiet).

use rtt_agent::cjson::sys::*;
use rtt_agent::host::heap;
use rtt_agent::net::transport::unframed_read_size;
use rtt_agent::runtime::chat::{
    agent_chat_last_error, chat, chat_response_free, set_overrides, stream_error_retryable,
    Overrides,
};
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent::wire::deadline::{ms_to_ticks, ticks_to_ms, Deadline};
use rtt_agent::wire::retry::{http_date, retry_after, retry_after_ms, retryable_status};
use rtt_agent::wire::stream::StreamError;
use rtt_agent_testkit::chat_call::chat_json;
use rtt_agent_testkit::llm_server::*;
use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const HI: &str = r#"[{"role":"user","content":"hi"}]"#;

fn configure(url: &str, retries: usize, deadline_ms: usize) {
    let url = CString::new(url).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe { agent_config_set(c"sk-retry".as_ptr(), c"m".as_ptr(), url.as_ptr()) };
    set_overrides(Overrides {
        timeout_ms: Some(3000),
        retries: Some(retries),
        retry_base_ms: Some(10),
        request_timeout_ms: Some(deadline_ms),
        ..Overrides::default()
    });
}

fn last_error() -> String {
    // SAFETY: agent_chat_last_error returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(agent_chat_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// What the content callback received, in order.
static SEEN: Mutex<String> = Mutex::new(String::new());

unsafe extern "C" fn collect(text: *const c_char) {
    // SAFETY: chat() passes a NUL-terminated string valid for the call.
    let t = unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned();
    SEEN.lock().unwrap().push_str(&t);
}

/// `chat()` with a content callback: the answer's content, or the error.
fn chat_with_callback() -> Result<String, String> {
    SEEN.lock().unwrap().clear();
    let m = CString::new(HI).unwrap();
    // SAFETY: a NUL-terminated string.
    let tree = unsafe { cJSON_Parse(m.as_ptr()) };
    // SAFETY: `tree` is a live array borrowed for the call; the callback
    // only reads its argument.
    let resp = unsafe { chat(tree, std::ptr::null_mut(), 0, None, None, Some(collect)) };
    // SAFETY: the tree parsed above, deleted once; `resp` from chat(),
    // freed once.
    unsafe {
        cJSON_Delete(tree);
        if resp.is_null() {
            return Err(last_error());
        }
        let content = CStr::from_ptr((*resp).context)
            .to_string_lossy()
            .into_owned();
        chat_response_free(resp);
        Ok(content)
    }
}

#[test]
fn cut_or_malformed_before_delivery_is_retried_and_answered_once() {
    let _serial = rtt_agent_testkit::agent::lock();
    let answer = ScriptedResponse::text(&["Hel", "lo ", "world"]);
    let cases: Vec<(&str, ScriptedResponse)> = vec![
        ("cut after 0 events", answer.clone().cut_after_events(0)),
        // Text arrived, but no callback took it: nothing was delivered.
        ("cut after 3 events", answer.clone().cut_after_events(3)),
        (
            "cut inside an event",
            ScriptedResponse::text(&["Hello there"]).cut_after(40),
        ),
        (
            "closed without [DONE] or a finish reason",
            ScriptedResponse::sse(sse_content_events(&["Hel"])).transfer(Transfer::Close),
        ),
        (
            "malformed JSON",
            ScriptedResponse::sse(vec![
                b"data: {\"choices\":[{\"delta\":{\"content\":".to_vec(),
                b"}}]}\n\n".to_vec(),
            ]),
        ),
        (
            "a server error inside the stream",
            ScriptedResponse::sse(vec![sse_event(r#"{"error":{"message":"Overloaded"}}"#)]),
        ),
    ];
    for (what, first) in cases {
        let server = LlmServer::start(vec![first, answer.clone()]).unwrap();
        configure(&server.url(), 3, 10_000);
        let got = chat_json(HI, None).map(|a| a.content);
        assert_eq!(got.as_deref(), Ok("Hello world"), "{what}: answered once");
        assert_eq!(server.requests().len(), 2, "{what}: one retry");
        assert_eq!(last_error(), "", "{what}: no error after the success");
    }
    // The same through a callback: it sees the answer exactly once.
    let server =
        LlmServer::start(vec![answer.clone().cut_after_events(0), answer.clone()]).unwrap();
    configure(&server.url(), 3, 10_000);
    assert_eq!(chat_with_callback().as_deref(), Ok("Hello world"));
    assert_eq!(*SEEN.lock().unwrap(), "Hello world");
    assert_eq!(server.requests().len(), 2);
    set_overrides(Overrides::default());
}

#[test]
fn cut_after_text_was_delivered_is_not_retried_and_reported() {
    let _serial = rtt_agent_testkit::agent::lock();
    // Two content events reach the callback, then the connection closes.
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["Hel", "lo ", "world"]).cut_after_events(2),
        ScriptedResponse::text(&["Hello world"]),
    ])
    .unwrap();
    configure(&server.url(), 3, 10_000);
    let err = chat_with_callback().unwrap_err();
    assert!(err.contains("cut off"), "{err}");
    assert_eq!(last_error(), err);
    assert_eq!(*SEEN.lock().unwrap(), "Hello ", "delivered once, not again");
    assert_eq!(server.requests().len(), 1, "not retried");
    set_overrides(Overrides::default());
}

#[test]
fn statuses_408_429_and_5xx_are_retried_others_are_not() {
    let _serial = rtt_agent_testkit::agent::lock();
    for status in [408u16, 429, 500, 502, 503, 504, 529] {
        let server = LlmServer::start(vec![
            ScriptedResponse::error(status, "try again", "server_error", None),
            ScriptedResponse::text(&["recovered"]),
        ])
        .unwrap();
        configure(&server.url(), 3, 10_000);
        let got = chat_json(HI, None).map(|a| a.content);
        assert_eq!(got.as_deref(), Ok("recovered"), "{status}");
        assert_eq!(server.requests().len(), 2, "{status}");
        assert_eq!(last_error(), "", "{status}: cleared after the success");
    }
    for status in [400u16, 401, 403, 404, 409, 413, 422] {
        let server = LlmServer::start(vec![
            ScriptedResponse::error(status, "no", "invalid_request_error", None),
            ScriptedResponse::text(&["never asked for"]),
        ])
        .unwrap();
        configure(&server.url(), 3, 10_000);
        let err = chat_json(HI, None).unwrap_err();
        assert!(err.contains(&format!("HTTP {status}")), "{err}");
        assert_eq!(server.requests().len(), 1, "{status} is final");
    }
    set_overrides(Overrides::default());
}

#[test]
fn limits_of_the_firmware_are_not_retried() {
    let _serial = rtt_agent_testkit::agent::lock();
    // 33 tool calls: one more than a response may carry.
    let calls: Vec<(String, &[&str])> = (0..33).map(|i| (format!("c{i}"), &["{}"][..])).collect();
    let calls: Vec<(&str, &str, &[&str])> = calls
        .iter()
        .map(|(id, args)| (id.as_str(), "add", *args))
        .collect();
    let server = LlmServer::start(vec![
        ScriptedResponse::tool_calls(&calls),
        ScriptedResponse::text(&["never asked for"]),
    ])
    .unwrap();
    configure(&server.url(), 3, 10_000);
    let err = chat_json(HI, None).unwrap_err();
    assert!(err.contains("too many tool calls"), "{err}");
    assert_eq!(server.requests().len(), 1);
    set_overrides(Overrides::default());
}

#[test]
fn retry_after_ms_and_http_dates_are_honoured() {
    let _serial = rtt_agent_testkit::agent::lock();
    let rate_limited = || ScriptedResponse::error(429, "slow down", "rate_limit", None);
    let cases: Vec<(&str, ScriptedResponse, Duration)> = vec![
        (
            "retry-after-ms",
            rate_limited().retry_after_ms(700),
            Duration::from_millis(700),
        ),
        // Both (as OpenAI sends them): the precise one wins, and the
        // `Retry-After` lookup does not take `retry-after-ms` for itself
        // (webclient matches a field name as a prefix).
        (
            "retry-after-ms before Retry-After",
            rate_limited().retry_after_ms(400).retry_after(30),
            Duration::from_millis(400),
        ),
        // An HTTP-date, against the response's own Date (the clock of a
        // board may be unset): 1 s after it.
        (
            "Retry-After as an HTTP-date",
            rate_limited().retry_after_date(784_111_777, 1),
            Duration::from_millis(1000),
        ),
    ];
    for (what, first, wait) in cases {
        let server = LlmServer::start(vec![first, ScriptedResponse::text(&["fine"])]).unwrap();
        configure(&server.url(), 3, 10_000);
        let t0 = Instant::now();
        let got = chat_json(HI, None).map(|a| a.content);
        let took = t0.elapsed();
        assert_eq!(got.as_deref(), Ok("fine"), "{what}");
        assert!(
            took >= wait && took < wait + Duration::from_millis(900),
            "{what}: waited {took:?}, asked for {wait:?}"
        );
        assert_eq!(server.requests().len(), 2, "{what}");
    }
    // A date without the response's Date: the normal backoff (10 ms here).
    let server = LlmServer::start(vec![
        rate_limited().header(
            "Retry-After",
            &rtt_agent_testkit::llm_server::http_date(4_000_000_000),
        ),
        ScriptedResponse::text(&["fine"]),
    ])
    .unwrap();
    configure(&server.url(), 3, 10_000);
    let t0 = Instant::now();
    assert_eq!(
        chat_json(HI, None).map(|a| a.content).as_deref(),
        Ok("fine")
    );
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "{:?}",
        t0.elapsed()
    );
    set_overrides(Overrides::default());
}

#[test]
fn a_wait_past_the_deadline_is_not_made() {
    let _serial = rtt_agent_testkit::agent::lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::error(429, "slow down", "rate_limit", None).retry_after(30),
        ScriptedResponse::text(&["never asked for"]),
    ])
    .unwrap();
    configure(&server.url(), 3, 5000);
    let t0 = Instant::now();
    let err = chat_json(HI, None).unwrap_err();
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "{:?}",
        t0.elapsed()
    );
    assert!(
        err.contains("HTTP 429") && err.contains("slow down") && err.contains("deadline"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
    set_overrides(Overrides::default());
}

#[test]
fn the_last_error_is_empty_after_a_success_that_needed_retries() {
    let _serial = rtt_agent_testkit::agent::lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::error(503, "busy", "server_error", None),
        ScriptedResponse::error(500, "boom", "server_error", None),
        ScriptedResponse::text(&["third time"]),
    ])
    .unwrap();
    configure(&server.url(), 3, 10_000);
    // A failed chat() first, so there is an old error to clear.
    set_overrides(Overrides {
        retries: Some(0),
        ..Overrides::default()
    });
    assert!(chat_json(HI, None).unwrap_err().contains("HTTP 503"));
    assert!(last_error().contains("HTTP 503"));
    configure(&server.url(), 3, 10_000);
    assert_eq!(
        chat_json(HI, None).map(|a| a.content).as_deref(),
        Ok("third time")
    );
    assert_eq!(last_error(), "");
    set_overrides(Overrides::default());
}

/// A TLS server with a certificate nobody trusts (self-signed, made here):
/// counts the connections it accepts until dropped.
struct UntrustedTls {
    port: u16,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl UntrustedTls {
    fn start() -> UntrustedTls {
        use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .unwrap();
        let cert = params.self_signed(&key).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = Arc::new(
            rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(
                    vec![cert.der().clone()],
                    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
                )
                .unwrap(),
        );
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, s) = (accepted.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            heap::exclude_this_thread(true);
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut tcp, _)) => {
                        a.fetch_add(1, Ordering::SeqCst);
                        tcp.set_nonblocking(false).unwrap();
                        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                        let mut conn = rustls::ServerConnection::new(config.clone()).unwrap();
                        // The client aborts the handshake with an alert.
                        while conn.is_handshaking() {
                            if conn.complete_io(&mut tcp).is_err() {
                                break;
                            }
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        UntrustedTls {
            port,
            accepted,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for UntrustedTls {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_refused_certificate_is_not_retried() {
    let _serial = rtt_agent_testkit::agent::lock();
    let server = UntrustedTls::start();
    configure(
        &format!("https://localhost:{}/v1/chat/completions", server.port),
        3,
        10_000,
    );
    let t0 = Instant::now();
    let err = chat_json(HI, None).unwrap_err();
    assert!(
        err.contains("TLS") && err.contains("certificate") && err.contains("not retried"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    // Room for a retry to show up (the backoff is 10 ms).
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        1,
        "one attempt only"
    );
    // The same failure over plain HTTP is a connection failure, retried:
    // a port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    configure(&format!("http://127.0.0.1:{port}/v1"), 2, 10_000);
    rtt_agent::host::console::rt_host_console_capture(1);
    let err = chat_json(HI, None).unwrap_err();
    let log = rtt_agent::host::console::take_captured();
    rtt_agent::host::console::rt_host_console_capture(0);
    assert!(err.contains("cannot connect"), "{err}");
    assert!(log.contains("retry 2 of 2"), "{log}");
    set_overrides(Overrides::default());
}

#[test]
fn retry_rules_in_isolation() {
    for s in [408, 429, 500, 502, 503, 504, 529, 599] {
        assert!(retryable_status(s), "{s}");
    }
    for s in [
        100, 200, 204, 301, 302, 400, 401, 403, 404, 409, 413, 422, 600,
    ] {
        assert!(!retryable_status(s), "{s}");
    }
    for e in [
        StreamError::Truncated,
        StreamError::InvalidJson,
        StreamError::InvalidUtf8,
        StreamError::TooDeep,
        StreamError::Unexpected,
        StreamError::ServerError,
    ] {
        assert!(stream_error_retryable(e), "{e:?}");
    }
    for e in [
        StreamError::TokenTooLong,
        StreamError::TooManyToolCalls,
        StreamError::OutOfMemory,
    ] {
        assert!(!stream_error_retryable(e), "{e:?}");
    }

    assert_eq!(retry_after_ms(b"20"), Some(20));
    assert_eq!(retry_after_ms(b" 1500 "), Some(1500));
    assert_eq!(retry_after_ms(b"20.25"), Some(21));
    assert_eq!(retry_after_ms(b"20.0"), Some(20));
    assert_eq!(retry_after_ms(b"99999999999"), Some(u32::MAX));
    for bad in [&b""[..], b"-5", b"soon", b"1.", b"1.5s", b"0x10"] {
        assert_eq!(retry_after_ms(bad), None, "{bad:?}");
    }

    let date = b"Sun, 06 Nov 1994 08:49:37 GMT";
    assert_eq!(retry_after(b"120", None), Some(120_000));
    assert_eq!(retry_after(b"0", None), Some(0));
    assert_eq!(
        retry_after(b"Sun, 06 Nov 1994 08:49:39 GMT", Some(date)),
        Some(2000)
    );
    // RFC 850 and asctime forms are dates too.
    assert_eq!(
        retry_after(b"Sunday, 06-Nov-94 08:50:37 GMT", Some(date)),
        Some(60_000)
    );
    assert_eq!(
        retry_after(b"Sun Nov  6 08:49:47 1994", Some(date)),
        Some(10_000)
    );
    // A date in the past: at once.
    assert_eq!(
        retry_after(b"Sat, 05 Nov 1994 08:49:37 GMT", Some(date)),
        Some(0)
    );
    // No clock to compare with, or nonsense: the normal backoff.
    assert_eq!(retry_after(b"Sun, 06 Nov 1994 08:49:39 GMT", None), None);
    assert_eq!(
        retry_after(b"Sun, 06 Nov 1994 08:49:39 GMT", Some(b"yesterday")),
        None
    );
    assert_eq!(retry_after(b"soon", Some(date)), None);
    assert_eq!(retry_after(b"-1", None), None);

    assert_eq!(http_date(b"Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
    assert_eq!(http_date(date), Some(784_111_777));
    assert_eq!(
        http_date(b"Sunday, 06-Nov-94 08:49:37 GMT"),
        Some(784_111_777)
    );
    assert_eq!(http_date(b"Sun Nov  6 08:49:37 1994"), Some(784_111_777));
    assert_eq!(
        http_date(b"Tue, 29 Feb 2000 12:00:00 GMT"),
        Some(951_825_600)
    );
    assert_eq!(
        http_date(b"Thu, 01 Jan 2026 00:00:00 GMT"),
        Some(1_767_225_600)
    );
    for bad in [
        &b"Mon, 29 Feb 2100 00:00:00 GMT"[..],
        b"Sun, 06 Nov 1994 24:00:00 GMT",
        b"Sun, 06 Nov 1994 08:49:37 CET",
        b"Sun, 06 Nox 1994 08:49:37 GMT",
        b"Sun, 32 Dec 1994 08:49:37 GMT",
        b"Wed, 31 Dec 1969 23:59:59 GMT",
        b"06 Nov 1994 08:49:37 GMT",
        b"",
        b"Sun, 06 Nov 2107 08:49:37 GMT",
        // The time has two digits per field; asctime's year has four.
        b"Sun, 06 Nov 1994 8:49:37 GMT",
        b"Sun, 06 Nov 1994 008:49:37 GMT",
        b"Sun Nov  6 08:49:37 94",
    ] {
        assert_eq!(http_date(bad), None, "{}", String::from_utf8_lossy(bad));
    }
    // The test kit's formatter and this parser agree.
    for secs in [0u64, 784_111_777, 951_825_600, 1_767_225_600, 4_102_444_799] {
        let text = rtt_agent_testkit::llm_server::http_date(secs);
        assert_eq!(http_date(text.as_bytes()), Some(secs as u32), "{text}");
    }
}

#[test]
fn deadline_arithmetic_and_tick_wraparound() {
    assert_eq!(ms_to_ticks(1000, 1000), 1000);
    assert_eq!(ms_to_ticks(1000, 100), 100);
    assert_eq!(ms_to_ticks(1, 100), 1, "rounded up");
    assert_eq!(ms_to_ticks(120_000, 100), 12_000);
    assert_eq!(ms_to_ticks(u32::MAX, 1_000_000), i32::MAX as u32, "capped");
    assert_eq!(ticks_to_ms(12_000, 100), 120_000);
    assert_eq!(ticks_to_ms(1, 1000), 1);

    // A body without chunked framing is read a byte per second left at
    // most (webclient receives until the buffer is full).
    assert_eq!(unframed_read_size(120_000, 4096), 120);
    assert_eq!(unframed_read_size(1999, 4096), 1);
    assert_eq!(unframed_read_size(500, 4096), 1);
    assert_eq!(unframed_read_size(u32::MAX, 4096), 4096);
    assert_eq!(unframed_read_size(5000, 0), 1);

    for hz in [100u32, 1000, 1024] {
        // Started just before the counter wraps: the time left is the same
        // as anywhere else.
        for start in [0u32, 12_345, u32::MAX - 10, u32::MAX] {
            let d = Deadline::new(start, 2000, hz);
            let ticks = ms_to_ticks(2000, hz);
            assert_eq!(d.ms(), 2000);
            assert_eq!(d.remaining_ticks(start), ticks, "{hz} Hz from {start}");
            assert_eq!(d.remaining_ms(start), ticks_to_ms(ticks, hz));
            let half = start.wrapping_add(ticks / 2);
            assert_eq!(d.remaining_ticks(half), ticks - ticks / 2);
            assert!(!d.expired(half));
            let end = start.wrapping_add(ticks);
            assert!(d.expired(end), "{hz} Hz from {start}");
            assert!(d.expired(end.wrapping_add(1)));
            assert!(d.expired(end.wrapping_add(1_000_000)));
        }
    }
}
