//! Every stream shape of `tests/streams/` served by the scripted server over
//! real TCP (whole, in 1-byte writes, and in random splits; chunked,
//! Content-Length and close-delimited) and read by `chat()` through the host
//! webclient: what the caller gets must be what the fixture expects, byte for
//! byte.

mod support;

#[path = "streams/common.rs"]
#[allow(dead_code)]
mod common;

use common::Json;
use rtt_agent::cjson_sys::*;
use rtt_agent::ffi::chat::*;
use rtt_agent::ffi::config::agent_config_set;
use std::ffi::{c_char, CStr, CString};
use support::llm_server::*;

#[derive(Debug, PartialEq)]
struct Got {
    content: String,
    reasoning: String,
    calls: Vec<(String, String, String, bool)>,
    failed: bool,
}

fn chat_once(server: &LlmServer) -> Got {
    let url = CString::new(server.url()).unwrap();
    agent_config_set(c"sk-fixture-key-789".as_ptr(), c"m".as_ptr(), url.as_ptr());
    set_overrides(Overrides {
        retries: Some(0),
        ..Overrides::default()
    });
    unsafe {
        let m = cJSON_Parse(c"[{\"role\":\"user\",\"content\":\"hi\"}]".as_ptr());
        let resp = chat(m, std::ptr::null_mut(), 0, None, None, None);
        cJSON_Delete(m);
        if resp.is_null() {
            return Got {
                content: String::new(),
                reasoning: String::new(),
                calls: vec![],
                failed: true,
            };
        }
        let r = &*resp;
        let s = |p: *const c_char| CStr::from_ptr(p).to_string_lossy().into_owned();
        let mut calls = Vec::new();
        for i in 0..cJSON_GetArraySize(r.tool_call) {
            let call = cJSON_GetArrayItem(r.tool_call, i);
            let f = cJSON_GetObjectItemCaseSensitive(call, c"function".as_ptr());
            let get =
                |o, k: &CStr| s((*cJSON_GetObjectItemCaseSensitive(o, k.as_ptr())).valuestring);
            let too_long = !cJSON_GetObjectItemCaseSensitive(call, TOO_LONG_KEY.as_ptr()).is_null();
            calls.push((
                get(call, c"id"),
                get(f, c"name"),
                get(f, c"arguments"),
                too_long,
            ));
        }
        let got = Got {
            content: s(r.context),
            reasoning: s(r.reasoning),
            calls,
            failed: false,
        };
        chat_response_free(resp);
        got
    }
}

fn expected(name: &str) -> Got {
    let text = std::fs::read_to_string(format!(
        "{}/tests/streams/{name}.expected.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let j = Json::parse(&text);
    let failed = j.get("error").opt_str().is_some();
    let calls = j
        .get("tool_calls")
        .arr()
        .iter()
        .map(|c| {
            let id = if c.get("id_generated").bool() {
                String::new()
            } else {
                c.get("id").str().to_string()
            };
            (
                id,
                c.get("name").str().to_string(),
                c.get("arguments").str().to_string(),
                c.get("too_long").bool(),
            )
        })
        .collect();
    if failed {
        return Got {
            content: String::new(),
            reasoning: String::new(),
            calls: vec![],
            failed,
        };
    }
    Got {
        content: j.get("content").str().into(),
        reasoning: j.get("reasoning").str().into(),
        calls,
        failed,
    }
}

#[test]
fn every_fixture_over_tcp_in_every_split() {
    let dir = format!("{}/tests/streams", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .into_string()
                .ok()?
                .strip_suffix(".sse")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 30);
    let modes: [(&str, Transfer); 3] = [
        ("whole", Transfer::Chunked),
        ("1-byte", Transfer::ContentLength),
        ("random", Transfer::Close),
    ];
    let (mut with_text, mut with_calls, mut failing) = (0, 0, 0);
    for name in &names {
        let body = std::fs::read(format!("{dir}/{name}.sse")).unwrap();
        let want = expected(name);
        with_text += usize::from(!want.content.is_empty() || !want.reasoning.is_empty());
        with_calls += usize::from(!want.calls.is_empty());
        failing += usize::from(want.failed);
        for (mode, transfer) in modes {
            let mut resp =
                ScriptedResponse::raw(200, "text/event-stream", body.clone()).transfer(transfer);
            resp = match mode {
                "whole" => resp.split(Split::Whole),
                "1-byte" => resp.pieces_of(1),
                _ => resp.random_splits(name.len() as u64),
            };
            let server = LlmServer::start(vec![resp]).unwrap();
            let mut got = chat_once(&server);
            // Generated ids are unique but not fixed: compare their presence.
            for (call, w) in got.calls.iter_mut().zip(&want.calls) {
                if w.0.is_empty() {
                    assert!(
                        call.0.starts_with("call_"),
                        "{name}/{mode}: generated id {}",
                        call.0
                    );
                    call.0.clear();
                }
            }
            assert_eq!(got, want, "{name}: {mode} over {transfer:?}");
        }
    }
    // The comparisons above covered every kind of outcome.
    assert!(
        with_text >= 10 && with_calls >= 8 && failing >= 4,
        "{with_text} {with_calls} {failing}"
    );
}
