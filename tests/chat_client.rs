//! `chat()` end to end over real TCP: the host webclient against the
//! scripted server, checking what the caller gets and what the server got.

mod support;

use rtt_agent::cjson_sys::*;
use rtt_agent::ffi::chat::*;
use rtt_agent::ffi::config::agent_config_set;
use std::ffi::{c_char, CStr, CString};
use std::sync::{Mutex, MutexGuard};
use support::llm_server::*;

/// chat() reads the global configuration: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn point_at(server: &LlmServer) {
    let url = CString::new(server.url()).unwrap();
    agent_config_set(
        c"sk-test-secret-123".as_ptr(),
        c"test-model".as_ptr(),
        url.as_ptr(),
    );
}

fn parse(json: &str) -> *mut cJSON {
    let c = CString::new(json).unwrap();
    unsafe { cJSON_Parse(c.as_ptr()) }
}

/// What a successful chat() returned, copied out.
#[derive(Debug, Default, PartialEq)]
struct Answer {
    reasoning: String,
    content: String,
    calls: Vec<(String, String, String)>,
}

fn ask(messages: &str, tools: Option<&str>) -> Result<Answer, String> {
    let m = parse(messages);
    let t = tools.map_or(std::ptr::null_mut(), parse);
    let resp = chat(m, t, 0, None, None, None);
    unsafe {
        cJSON_Delete(m);
        if !t.is_null() {
            cJSON_Delete(t);
        }
        if resp.is_null() {
            return Err(CStr::from_ptr(agent_chat_last_error())
                .to_string_lossy()
                .into_owned());
        }
        let r = &*resp;
        let s = |p: *const c_char| CStr::from_ptr(p).to_string_lossy().into_owned();
        let mut calls = Vec::new();
        for i in 0..cJSON_GetArraySize(r.tool_call) {
            let call = cJSON_GetArrayItem(r.tool_call, i);
            let f = cJSON_GetObjectItemCaseSensitive(call, c"function".as_ptr());
            let get =
                |o, k: &CStr| s((*cJSON_GetObjectItemCaseSensitive(o, k.as_ptr())).valuestring);
            calls.push((get(call, c"id"), get(f, c"name"), get(f, c"arguments")));
        }
        let a = Answer {
            reasoning: s(r.reasoning),
            content: s(r.context),
            calls,
        };
        chat_response_free(resp);
        Ok(a)
    }
}

const HELLO: &str = r#"[{"role":"user","content":"hello"}]"#;

#[test]
fn text_answer_and_the_request_the_server_saw() {
    let _g = serial();
    let server = LlmServer::start(vec![ScriptedResponse::text(&["Hel", "lo ", "world"])]).unwrap();
    point_at(&server);
    let tools = r#"[{"type":"function","function":{"name":"add","description":"d","parameters":{"type":"object","properties":{"a":{"type":"double","description":"x"},"b":{"type":"int"},"c":{"type":"true"}},"required":["a"]}}}]"#;
    let a = ask(HELLO, Some(tools)).unwrap();
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
    let parsed = parse(&body);
    assert!(!parsed.is_null(), "the body is not JSON: {body}");
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
    let a = ask(HELLO, None).unwrap();
    assert_eq!(
        a.calls,
        vec![("call_1".into(), "add".into(), "{\"a\":1,\"b\":2}".into())]
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
    let failed = ask(HELLO, None);
    let ok = ask(HELLO, None);
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
