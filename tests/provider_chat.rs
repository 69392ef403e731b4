//! The Anthropic and Ollama adapters through `chat()` over real TCP: every
//! fixture of `tests/streams/anthropic/` and `tests/streams/ollama/` served
//! by the scripted server (whole and chunked, in 1-byte writes with
//! Content-Length, in random splits closed by the server), the requests each
//! format sends checked field by field, HTTP 529 retried like 503, and the
//! format chosen by URL or at run time.

#[path = "streams/common.rs"]
mod common;

use common::Json;
use rtt_agent::runtime::chat::*;
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent::runtime::settings::set_format;
use rtt_agent::wire::stream::Format;
use rtt_agent_testkit::chat_call::*;
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::path::PathBuf;

const KEY: &str = "sk-ant-fixture-key-123";

fn configure(url: &str, retries: usize) {
    let url = CString::new(url).unwrap();
    let key = CString::new(KEY).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe { agent_config_set(key.as_ptr(), c"claude-test".as_ptr(), url.as_ptr()) };
    set_overrides(Overrides {
        retries: Some(retries),
        retry_base_ms: Some(10),
        ..Overrides::default()
    });
}

fn url(server: &LlmServer, path: &str) -> String {
    format!("http://{}{path}", server.addr())
}

fn dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/streams")
        .join(sub)
}

fn keys(j: &Json) -> Vec<&str> {
    match j {
        Json::Obj(m) => m.iter().map(|(k, _)| k.as_str()).collect(),
        other => panic!("not an object: {other:?}"),
    }
}

fn has(j: &Json, key: &str) -> bool {
    keys(j).contains(&key)
}

fn expected(path: &PathBuf) -> Option<Answer> {
    let j = Json::parse(&std::fs::read_to_string(path).unwrap());
    if j.get("error").opt_str().is_some() {
        return None;
    }
    Some(Answer {
        content: j.get("content").str().into(),
        reasoning: j.get("reasoning").str().into(),
        calls: j
            .get("tool_calls")
            .arr()
            .iter()
            .map(|c| Call {
                id: if c.get("id_generated").bool() {
                    String::new()
                } else {
                    c.get("id").str().into()
                },
                name: c.get("name").str().into(),
                arguments: c.get("arguments").str().into(),
                too_long: false,
            })
            .collect(),
    })
}

fn fixtures_over_tcp(sub: &str, ext: &str, content_type: &str, path: &str) -> usize {
    let mut names: Vec<String> = std::fs::read_dir(dir(sub))
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.strip_suffix(ext).map(str::to_string)
        })
        .collect();
    names.sort();
    let modes: [(&str, Transfer); 3] = [
        ("whole", Transfer::Chunked),
        ("1-byte", Transfer::ContentLength),
        ("random", Transfer::Close),
    ];
    for name in &names {
        let body = std::fs::read(dir(sub).join(format!("{name}{ext}"))).unwrap();
        let want = expected(&dir(sub).join(format!("{name}.expected.json")));
        for (k, (mode, transfer)) in modes.into_iter().enumerate() {
            let mut resp =
                ScriptedResponse::raw(200, content_type, body.clone()).transfer(transfer);
            resp = match k {
                0 => resp.split(Split::Whole),
                1 => resp.pieces_of(1),
                _ => resp.random_splits(name.len() as u64 + 7),
            };
            let server = LlmServer::start(vec![resp]).unwrap();
            configure(&url(&server, path), 0);
            let mut got = chat_json(r#"[{"role":"user","content":"hi"}]"#, None).ok();
            if let (Some(g), Some(w)) = (got.as_mut(), want.as_ref()) {
                for (call, e) in g.calls.iter_mut().zip(&w.calls) {
                    if e.id.is_empty() {
                        assert!(call.id.starts_with("call_"), "{name}: {}", call.id);
                        call.id.clear();
                    }
                }
            }
            assert_eq!(got, want, "{sub}/{name}: {mode} over {transfer:?}");
            assert_eq!(server.requests()[0].path, path, "{sub}/{name}");
        }
    }
    names.len()
}

#[test]
fn anthropic_fixtures_over_tcp_in_every_split() {
    let _serial = rtt_agent_testkit::agent::lock();
    let n = fixtures_over_tcp("anthropic", ".sse", "text/event-stream", "/v1/messages");
    assert!(n >= 14, "{n}");
}

#[test]
fn ollama_fixtures_over_tcp_in_every_split() {
    let _serial = rtt_agent_testkit::agent::lock();
    let n = fixtures_over_tcp("ollama", ".ndjson", "application/x-ndjson", "/api/chat");
    assert!(n >= 13, "{n}");
}

/// A context with every kind of message, as the loop and C callers build
/// it: a system prompt, a question, an assistant round with reasoning, its
/// thinking signature and two tool calls (one with arguments that are no
/// JSON object), both results, and the next question.
const CONTEXT: &str = r#"[
 {"role":"system","content":"You are a calculator."},
 {"role":"system","content":""},
 {"role":"user","content":"2+3 and 4*5?"},
 {"role":"assistant","content":"Computing.","tool_calls":[
   {"id":"toolu_1","type":"function","function":{"name":"tool_add","arguments":"{\"a\": 2, \"b\": 3}"}},
   {"id":"toolu_2","type":"function","function":{"name":"tool_mul","arguments":"not json"}}],
  "reasoning_content":"Two independent operations.",
  "x_rtt_thinking_signature":"sig-abc/123=="},
 {"role":"tool","tool_call_id":"toolu_1","content":"2 + 3 = 5"},
 {"role":"tool","tool_call_id":"toolu_2","content":"4 * 5 = 20"},
 {"role":"user","content":"thanks"}
]"#;

const TOOLS: &str = r#"[{"type":"function","function":{"name":"tool_add","description":"Add two numbers",
 "parameters":{"type":"object","properties":{"a":{"type":"double"},"b":{"type":"int"}},"required":["a","b"]}}},
 {"type":"function","function":{"name":"tool_mul","description":"Multiply",
 "parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}}]"#;

fn one_request(path: &str, answer: ScriptedResponse) -> RecordedRequest {
    let server = LlmServer::start(vec![answer]).unwrap();
    configure(&url(&server, path), 0);
    chat_json(CONTEXT, Some(TOOLS)).expect("an answer");
    let mut reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    reqs.remove(0)
}

fn anthropic_ok() -> ScriptedResponse {
    ScriptedResponse::sse(anthropic_text("", "", &["ok"], "end_turn"))
}

#[test]
fn anthropic_request_field_by_field() {
    let _serial = rtt_agent_testkit::agent::lock();
    let req = one_request("/v1/messages", anthropic_ok());
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some(KEY));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("Authorization"), None, "no Bearer for Anthropic");
    assert_eq!(req.header("Content-Type"), Some("application/json"));
    assert_eq!(
        req.header("Content-Length")
            .map(|v| v.parse::<usize>().unwrap()),
        Some(req.body.len())
    );
    let text = req.body_text();
    assert!(!text.contains("x_rtt"), "{text}");
    let b = Json::parse(&text);
    assert_eq!(
        keys(&b),
        [
            "model",
            "max_tokens",
            "stream",
            "system",
            "messages",
            "tools"
        ]
    );
    assert_eq!(b.get("model").str(), "claude-test");
    assert!(b.get("max_tokens").num() >= 1.0);
    assert!(b.get("stream").bool());
    let system = b.get("system").arr();
    assert_eq!(system.len(), 1);
    assert_eq!(system[0].get("type").str(), "text");
    assert_eq!(system[0].get("text").str(), "You are a calculator.");

    let m = b.get("messages").arr();
    let roles: Vec<&str> = m.iter().map(|x| x.get("role").str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "user"]);
    assert_eq!(m[0].get("content").str(), "2+3 and 4*5?");
    for x in m {
        assert_eq!(keys(x), ["role", "content"]);
    }
    let blocks = m[1].get("content").arr();
    let types: Vec<&str> = blocks.iter().map(|x| x.get("type").str()).collect();
    assert_eq!(types, ["thinking", "text", "tool_use", "tool_use"]);
    assert_eq!(keys(&blocks[0]), ["type", "thinking", "signature"]);
    assert_eq!(
        blocks[0].get("thinking").str(),
        "Two independent operations."
    );
    assert_eq!(blocks[0].get("signature").str(), "sig-abc/123==");
    assert_eq!(blocks[1].get("text").str(), "Computing.");
    assert_eq!(keys(&blocks[2]), ["type", "id", "name", "input"]);
    assert_eq!(blocks[2].get("id").str(), "toolu_1");
    assert_eq!(blocks[2].get("name").str(), "tool_add");
    assert_eq!(blocks[2].get("input").get("a").num(), 2.0);
    assert_eq!(blocks[2].get("input").get("b").num(), 3.0);
    // Arguments that hold no JSON object are sent as an empty input.
    assert_eq!(keys(blocks[3].get("input")), Vec::<&str>::new());
    // Both results of the round in one user message, in order.
    let results = m[2].get("content").arr();
    assert_eq!(results.len(), 2);
    for (r, (id, content)) in results
        .iter()
        .zip([("toolu_1", "2 + 3 = 5"), ("toolu_2", "4 * 5 = 20")])
    {
        assert_eq!(keys(r), ["type", "tool_use_id", "content"]);
        assert_eq!(r.get("type").str(), "tool_result");
        assert_eq!(r.get("tool_use_id").str(), id);
        assert_eq!(r.get("content").str(), content);
    }
    assert_eq!(m[3].get("content").str(), "thanks");

    let tools = b.get("tools").arr();
    assert_eq!(tools.len(), 2);
    assert_eq!(keys(&tools[0]), ["name", "description", "input_schema"]);
    assert_eq!(tools[0].get("name").str(), "tool_add");
    assert_eq!(tools[0].get("description").str(), "Add two numbers");
    let schema = tools[0].get("input_schema");
    assert_eq!(schema.get("type").str(), "object");
    let props = schema.get("properties");
    assert_eq!(props.get("a").get("type").str(), "number", "double mapped");
    assert_eq!(props.get("b").get("type").str(), "integer", "int mapped");
    assert_eq!(schema.get("required").arr().len(), 2);
}

#[test]
fn ollama_request_field_by_field() {
    let _serial = rtt_agent_testkit::agent::lock();
    let req = one_request(
        "/api/chat",
        ScriptedResponse::ndjson(ollama_text("", &["ok"])),
    );
    assert_eq!(req.path, "/api/chat");
    assert_eq!(
        req.header("Authorization").map(str::to_string),
        Some(format!("Bearer {KEY}"))
    );
    assert_eq!(req.header("x-api-key"), None);
    assert_eq!(req.header("Accept"), Some("application/x-ndjson"));
    let text = req.body_text();
    assert!(!text.contains("x_rtt"), "{text}");
    let b = Json::parse(&text);
    assert_eq!(
        keys(&b),
        ["model", "messages", "tools", "stream", "options"]
    );
    assert!(b.get("stream").bool());
    assert!(b.get("options").get("num_predict").num() >= 1.0);
    let m = b.get("messages").arr();
    let roles: Vec<&str> = m.iter().map(|x| x.get("role").str()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "user"
        ]
    );
    assert_eq!(m[0].get("content").str(), "You are a calculator.");
    let m = &m[1..];
    assert_eq!(keys(&m[2]), ["role", "content", "thinking", "tool_calls"]);
    assert_eq!(m[2].get("content").str(), "Computing.");
    assert_eq!(m[2].get("thinking").str(), "Two independent operations.");
    let calls = m[2].get("tool_calls").arr();
    assert_eq!(calls.len(), 2);
    assert_eq!(keys(&calls[0]), ["function"]);
    let f = calls[0].get("function");
    assert_eq!(keys(f), ["name", "arguments"]);
    assert_eq!(f.get("name").str(), "tool_add");
    // An object, not a string.
    assert_eq!(f.get("arguments").get("a").num(), 2.0);
    assert_eq!(f.get("arguments").get("b").num(), 3.0);
    assert_eq!(
        keys(calls[1].get("function").get("arguments")),
        Vec::<&str>::new()
    );
    for (k, (name, content)) in [
        (3, ("tool_add", "2 + 3 = 5")),
        (4, ("tool_mul", "4 * 5 = 20")),
    ] {
        assert_eq!(keys(&m[k]), ["role", "content", "tool_name"]);
        assert_eq!(m[k].get("content").str(), content);
        assert_eq!(m[k].get("tool_name").str(), name);
    }
    let tools = b.get("tools").arr();
    assert_eq!(tools[0].get("type").str(), "function");
    let f = tools[0].get("function");
    assert_eq!(f.get("name").str(), "tool_add");
    let props = f.get("parameters").get("properties");
    assert_eq!(props.get("a").get("type").str(), "number");
    assert_eq!(props.get("b").get("type").str(), "integer");
}

#[test]
fn openai_request_leaves_the_signature_out() {
    let _serial = rtt_agent_testkit::agent::lock();
    let req = one_request("/v1/chat/completions", ScriptedResponse::text(&["ok"]));
    let text = req.body_text();
    assert!(!text.contains("x_rtt"), "{text}");
    assert!(!text.contains("sig-abc"), "{text}");
    let b = Json::parse(&text);
    let m = b.get("messages").arr();
    assert_eq!(
        keys(&m[3]),
        ["role", "content", "tool_calls", "reasoning_content"]
    );
    assert_eq!(
        req.header("Authorization").map(str::to_string),
        Some(format!("Bearer {KEY}"))
    );
    assert_eq!(req.header("anthropic-version"), None);
}

#[test]
fn anthropic_529_is_retried_like_503() {
    let _serial = rtt_agent_testkit::agent::lock();
    let overloaded =
        || ScriptedResponse::json(529, &anthropic_error_body("overloaded_error", "Overloaded"));
    let server = LlmServer::start(vec![overloaded(), anthropic_ok()]).unwrap();
    configure(&url(&server, "/v1/messages"), 2);
    let got = chat_json(r#"[{"role":"user","content":"hi"}]"#, None).expect("retried");
    assert_eq!(got.content, "ok");
    assert_eq!(server.requests().len(), 2);
    // Without retries the server's message is the error.
    let server = LlmServer::start(vec![overloaded()]).unwrap();
    configure(&url(&server, "/v1/messages"), 0);
    let err = chat_json(r#"[{"role":"user","content":"hi"}]"#, None).unwrap_err();
    assert_eq!(err, "HTTP 529: Overloaded");
    // An error event after the 200 is retried as a server error too.
    let body = std::fs::read(dir("anthropic").join("error_before_content.sse")).unwrap();
    let server = LlmServer::start(vec![
        ScriptedResponse::raw(200, "text/event-stream", body),
        anthropic_ok(),
    ])
    .unwrap();
    configure(&url(&server, "/v1/messages"), 1);
    let got = chat_json(r#"[{"role":"user","content":"hi"}]"#, None).expect("retried");
    assert_eq!(got.content, "ok");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_run_time_choice_overrides_the_url() {
    let _serial = rtt_agent_testkit::agent::lock();
    set_format(Some(Format::Anthropic));
    let server = LlmServer::start(vec![anthropic_ok()]).unwrap();
    configure(&server.url(), 0);
    let got = chat_json(r#"[{"role":"user","content":"hi"}]"#, None);
    set_format(None);
    assert_eq!(got.expect("an answer").content, "ok");
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert!(has(&Json::parse(&req.body_text()), "max_tokens"));
    // Back to the URL's choice: OpenAI.
    let server = LlmServer::start(vec![ScriptedResponse::text(&["x"])]).unwrap();
    configure(&server.url(), 0);
    assert_eq!(
        chat_json(r#"[{"role":"user","content":"hi"}]"#, None)
            .unwrap()
            .content,
        "x"
    );
    assert_eq!(server.requests()[0].header("anthropic-version"), None);
}

#[test]
fn agent_config_format_command() {
    use rtt_agent::runtime::commands::agent_config;
    use rtt_agent::runtime::settings::format_setting;
    let _serial = rtt_agent_testkit::agent::lock();
    let run = |name: &str| {
        let words = [
            c"agent_config".to_owned(),
            c"format".to_owned(),
            CString::new(name).unwrap(),
        ];
        let mut argv: Vec<*mut std::ffi::c_char> =
            words.iter().map(|w| w.as_ptr() as *mut _).collect();
        // SAFETY: three NUL-terminated words that outlive the call.
        unsafe { agent_config(3, argv.as_mut_ptr()) }
    };
    assert_eq!(run("ollama"), 0);
    assert_eq!(format_setting(), Some(Format::Ollama));
    assert_eq!(run("Anthropic"), 0);
    assert_eq!(format_setting(), Some(Format::Anthropic));
    assert_eq!(run("gemini"), -1);
    assert_eq!(format_setting(), Some(Format::Anthropic), "unchanged");
    assert_eq!(run("openai"), 0);
    assert_eq!(format_setting(), Some(Format::OpenAi));
    assert_eq!(run("auto"), 0);
    assert_eq!(format_setting(), None);
}
