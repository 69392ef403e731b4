//! `chat()` end to end over real TCP: the host webclient against the
//! scripted server, checking what the caller gets and what the server got.

use rtt_agent::cjson::sys::*;
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent_testkit::chat_call::*;
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::sync::{Mutex, MutexGuard};

/// chat() reads the global configuration: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn point_at(server: &LlmServer) {
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
    // which copies them.
    unsafe {
        agent_config_set(
            c"sk-test-secret-123".as_ptr(),
            c"test-model".as_ptr(),
            url.as_ptr(),
        )
    };
}

const HELLO: &str = r#"[{"role":"user","content":"hello"}]"#;

#[test]
fn text_answer_and_the_request_the_server_saw() {
    let _g = serial();
    let server = LlmServer::start(vec![ScriptedResponse::text(&["Hel", "lo ", "world"])]).unwrap();
    point_at(&server);
    let tools = r#"[{"type":"function","function":{"name":"add","description":"d","parameters":{"type":"object","properties":{"a":{"type":"double","description":"x"},"b":{"type":"int"},"c":{"type":"true"}},"required":["a"]}}}]"#;
    let a = chat_json(HELLO, Some(tools)).unwrap();
    assert_eq!(a.content, "Hello world");
    assert!(a.calls.is_empty());

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(
        req.header("authorization"),
        Some("Bearer sk-test-secret-123")
    );
    assert_eq!(
        req.header("content-length")
            .unwrap()
            .parse::<usize>()
            .unwrap(),
        req.body.len()
    );
    let body = req.body_text();
    let text = CString::new(body.clone()).unwrap();
    // SAFETY: a NUL-terminated string that outlives the call.
    let parsed = unsafe { cJSON_Parse(text.as_ptr()) };
    assert!(!parsed.is_null(), "the body is not JSON: {body}");
    // SAFETY: the tree parsed above, deleted once.
    unsafe { cJSON_Delete(parsed) };
    assert!(body.starts_with(
        r#"{"model":"test-model","messages":[{"role":"user","content":"hello"}],"tools":"#
    ));
    assert!(
        body.contains(r#""a":{"type":"number","description":"x"}"#),
        "{body}"
    );
    assert!(body.contains(r#""b":{"type":"integer"}"#));
    assert!(body.contains(r#""c":{"type":"boolean"}"#));
    assert!(
        body.ends_with(r#","max_tokens":4096,"stream":true}"#),
        "{body}"
    );
}

#[test]
fn tool_call_with_id_only_in_the_first_fragment() {
    let _g = serial();
    let server = LlmServer::start(vec![ScriptedResponse::tool_calls(&[(
        "call_1",
        "add",
        &["{\"a\"", ":1,", "\"b\":2}"],
    )])])
    .unwrap();
    point_at(&server);
    let a = chat_json(HELLO, None).unwrap();
    assert_eq!(
        a.calls,
        vec![Call {
            id: "call_1".into(),
            name: "add".into(),
            arguments: "{\"a\":1,\"b\":2}".into(),
            too_long: false
        }]
    );
}

#[test]
fn the_api_key_never_reaches_the_log() {
    let _g = serial();
    let server = LlmServer::start(vec![
        ScriptedResponse::error(
            401,
            "Incorrect API key provided: sk-tes***123",
            "invalid_request_error",
            None,
        ),
        ScriptedResponse::tool_calls(&[("call_9", "add", &["{\"a\":1,\"b\":2}"])]),
    ])
    .unwrap();
    point_at(&server);
    rtt_agent::host::console::rt_host_console_capture(1);
    let failed = chat_json(HELLO, None);
    let ok = chat_json(HELLO, None);
    let log = rtt_agent::host::console::take_captured();
    rtt_agent::host::console::rt_host_console_capture(0);
    assert!(failed.unwrap_err().contains("HTTP 401"));
    assert!(ok.is_ok());
    assert!(log.contains("HTTP 401"), "the failure was logged: {log}");
    assert!(
        !log.contains("sk-test-secret-123"),
        "the key leaked into the log: {log}"
    );
}
