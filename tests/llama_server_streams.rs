//! Bytes recorded from llama.cpp's `llama-server` (tests/streams/llama_server/,
//! see its README): every body read by the stream parser whole, byte by
//! byte and in seeded random splits, and by `chat()` over real TCP, must give
//! its `*.expected.json`; the shapes it covers are checked to be there; the
//! server's HTTP 400 JSON error (sent even to `stream: true`) reaches the
//! caller with its message; and the agent loop completes a tool round on the
//! recorded tool-call stream.

#[path = "streams/common.rs"]
mod common;

use common::*;
use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent_testkit::chat_call::*;
use rtt_agent_testkit::llm_server::{LlmServer, ScriptedResponse, Split, Transfer};
use std::ffi::CString;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/streams/llama_server")
}

fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.strip_suffix(".sse").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

fn body(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(format!("{name}.sse"))).unwrap()
}

fn want(name: &str) -> Json {
    Json::parse(&std::fs::read_to_string(dir().join(format!("{name}.expected.json"))).unwrap())
}

fn same(name: &str, how: &str, got: &Outcome, want: &Json) {
    let at = format!("{name} ({how})");
    assert_eq!(got.content, want.get("content").str(), "{at}: content");
    assert_eq!(
        got.reasoning,
        want.get("reasoning").str(),
        "{at}: reasoning"
    );
    assert_eq!(
        got.finish_reason.as_deref(),
        want.get("finish_reason").opt_str(),
        "{at}: finish_reason"
    );
    assert_eq!(
        got.error.map(error_name),
        want.get("error").opt_str(),
        "{at}: error"
    );
    if want.get("error").opt_str().is_some() {
        assert_eq!(
            got.error_message.as_deref(),
            want.get("error_message").opt_str(),
            "{at}: error_message"
        );
    }
    let calls = want.get("tool_calls").arr();
    assert_eq!(got.calls.len(), calls.len(), "{at}: calls");
    for (g, w) in got.calls.iter().zip(calls) {
        assert_eq!(g.index as f64, w.get("index").num(), "{at}");
        assert_eq!(g.id, w.get("id").str(), "{at}: id");
        assert_eq!(g.name, w.get("name").str(), "{at}: name");
        assert_eq!(g.arguments, w.get("arguments").str(), "{at}: arguments");
        assert!(!g.too_long && !g.id_generated, "{at}");
    }
}

#[test]
fn the_recorded_shapes_are_all_there() {
    let all = names();
    assert_eq!(
        all,
        [
            "fence_then_error_500",
            "own_template_call_as_text",
            "ping_comments",
            "text_answer_timings",
            "tool_call",
            "tool_call_pretty_args",
        ]
    );
    let text = |n: &str| String::from_utf8(body(n)).unwrap();
    let call = text("tool_call");
    // The id has no `call_` prefix; the name comes once; the arguments come
    // a token per chunk; no content chunk; the finish chunk is separate; the
    // usage chunk has `choices: []` and `timings`.
    let id = want("tool_call").get("tool_calls").arr()[0]
        .get("id")
        .str()
        .to_string();
    assert!(!id.starts_with("call_") && !id.is_empty(), "{id}");
    assert_eq!(call.matches("\"name\":\"add\"").count(), 1);
    assert!(call.matches("\"arguments\":").count() > 10);
    assert!(!call.contains("\"content\":\""), "no content chunk");
    assert!(call.contains("\"finish_reason\":\"tool_calls\",\"index\":0,\"delta\":{}"));
    assert!(call.contains("\"choices\":[],") && call.contains("\"timings\":{"));
    assert!(want("tool_call_pretty_args").get("tool_calls").arr()[0]
        .get("arguments")
        .str()
        .contains("\n    \"a\""));
    assert!(text("ping_comments").starts_with(":\n\n:\n\n"));
    assert!(text("fence_then_error_500").contains("data: {\"error\":{\"code\":500"));
}

#[test]
fn every_recorded_body_parses_in_every_split() {
    for name in names() {
        let body = body(&name);
        let want = want(&name);
        same(&name, "whole", &run_whole(&body, HOST), &want);
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        same(&name, "1-byte reads", &run(&bytes, HOST), &want);
        for seed in 0..8 {
            let got = run(&random_split(&body, seed), HOST);
            same(&name, &format!("seed {seed}"), &got, &want);
        }
    }
}

fn configure(server: &LlmServer) {
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe { agent_config_set(c"no-key".as_ptr(), c"m".as_ptr(), url.as_ptr()) };
    set_overrides(Overrides {
        retries: Some(0),
        ..Overrides::default()
    });
}

#[test]
fn every_recorded_body_over_tcp() {
    let _serial = rtt_agent_testkit::agent::lock();
    for name in names() {
        let want = want(&name);
        for (how, transfer) in [
            ("whole", Transfer::Chunked),
            ("1-byte", Transfer::ContentLength),
        ] {
            let mut resp =
                ScriptedResponse::raw(200, "text/event-stream", body(&name)).transfer(transfer);
            resp = if how == "whole" {
                resp.split(Split::Whole)
            } else {
                resp.pieces_of(1)
            };
            let server = LlmServer::start(vec![resp]).unwrap();
            configure(&server);
            let got = chat_json(r#"[{"role":"user","content":"hi"}]"#, None);
            match want.get("error").opt_str() {
                Some(_) => {
                    let why = got.unwrap_err();
                    assert!(
                        why.contains(want.get("error_message").str()),
                        "{name}/{how}: {why}"
                    );
                }
                None => {
                    let got = got.unwrap_or_else(|e| panic!("{name}/{how}: {e}"));
                    assert_eq!(got.content, want.get("content").str(), "{name}/{how}");
                    let calls: Vec<(String, String, String)> = got
                        .calls
                        .into_iter()
                        .map(|c| (c.id, c.name, c.arguments))
                        .collect();
                    let expected: Vec<(String, String, String)> = want
                        .get("tool_calls")
                        .arr()
                        .iter()
                        .map(|c| {
                            (
                                c.get("id").str().into(),
                                c.get("name").str().into(),
                                c.get("arguments").str().into(),
                            )
                        })
                        .collect();
                    assert_eq!(calls, expected, "{name}/{how}");
                }
            }
        }
    }
    set_overrides(Overrides::default());
}

#[test]
fn an_http_400_json_error_to_a_streamed_request_is_reported() {
    let _serial = rtt_agent_testkit::agent::lock();
    let body = std::fs::read(dir().join("error_400_stream_true.json")).unwrap();
    let server = LlmServer::start(vec![ScriptedResponse::raw(
        400,
        "application/json; charset=utf-8",
        body,
    )])
    .unwrap();
    configure(&server);
    let why = chat_json(r#"[{"role":"user","content":"hi"}]"#, None).unwrap_err();
    assert!(
        why.contains("400") && why.contains("Invalid tool_choice: sometimes"),
        "{why}"
    );
    set_overrides(Overrides::default());
}

#[test]
fn the_loop_runs_the_recorded_tool_call() {
    // Native mode (the only one without the tools-as-text part).
    #[cfg(feature = "tools-text")]
    use rtt_agent::abilities::tools_text::set_text_mode;
    use rtt_agent_testkit::agent::*;
    let _serial = lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::raw(200, "text/event-stream", body("tool_call")),
        ScriptedResponse::raw(200, "text/event-stream", body("text_answer_timings")),
    ])
    .unwrap();
    #[cfg(feature = "tools-text")]
    set_text_mode(Some(false));
    let agent = Agent::start(&server, Overrides::default());
    let r = agent.ask("what is 1234 plus 4321?");
    assert_eq!(r, want("text_answer_timings").get("content").str());
    let m = messages_of(&server.requests()[1]);
    assert_eq!(roles(&m), ["system", "user", "assistant", "tool"]);
    let id = want("tool_call").get("tool_calls").arr()[0]
        .get("id")
        .str()
        .to_string();
    assert_eq!(m[2].calls, std::slice::from_ref(&id));
    assert_eq!(m[3].tool_call_id, id);
    assert_eq!(m[3].content, "1234 + 4321 = 5555");
    drop(agent);
    #[cfg(feature = "tools-text")]
    set_text_mode(None);
}
