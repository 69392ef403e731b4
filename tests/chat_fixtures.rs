//! Every stream shape of `tests/streams/` served by the scripted server over
//! real TCP (whole, in 1-byte writes, and in random splits; chunked,
//! Content-Length and close-delimited) and read by `chat()` through the host
//! webclient: what the caller gets must be what the fixture expects, byte for
//! byte.

#[path = "streams/common.rs"]
mod common;

use common::Json;
use rtt_agent::runtime::chat::*;
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent_testkit::chat_call::*;
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;

/// What `chat()` gave (`None`: it failed), as the fixture expects it.
type Got = Option<Answer>;

fn chat_once(server: &LlmServer) -> Got {
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
    // which copies them.
    unsafe { agent_config_set(c"sk-fixture-key-789".as_ptr(), c"m".as_ptr(), url.as_ptr()) };
    set_overrides(Overrides {
        retries: Some(0),
        ..Overrides::default()
    });
    chat_json(r#"[{"role":"user","content":"hi"}]"#, None).ok()
}

fn expected(name: &str) -> Got {
    let text = std::fs::read_to_string(format!(
        "{}/tests/streams/{name}.expected.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let j = Json::parse(&text);
    if j.get("error").opt_str().is_some() {
        return None;
    }
    let calls = j
        .get("tool_calls")
        .arr()
        .iter()
        .map(|c| Call {
            // Generated ids are unique but not fixed: compared by presence.
            id: if c.get("id_generated").bool() {
                String::new()
            } else {
                c.get("id").str().to_string()
            },
            name: c.get("name").str().to_string(),
            arguments: c.get("arguments").str().to_string(),
            too_long: c.get("too_long").bool(),
        })
        .collect();
    Some(Answer {
        content: j.get("content").str().into(),
        reasoning: j.get("reasoning").str().into(),
        calls,
    })
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
        match &want {
            Some(w) => {
                with_text += usize::from(!w.content.is_empty() || !w.reasoning.is_empty());
                with_calls += usize::from(!w.calls.is_empty());
            }
            None => failing += 1,
        }
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
            if let (Some(g), Some(w)) = (got.as_mut(), want.as_ref()) {
                for (call, expected) in g.calls.iter_mut().zip(&w.calls) {
                    if expected.id.is_empty() {
                        assert!(
                            call.id.starts_with("call_"),
                            "{name}/{mode}: generated id {}",
                            call.id
                        );
                        call.id.clear();
                    }
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
