//! A three-round tool conversation through the agent loop against the
//! scripted arithmetic model speaking Anthropic Messages and Ollama's native
//! chat (the format follows the URL's path on both sides), with every
//! request checked field by field for its API: the thinking block and its
//! signature go back with the tool calls they came with, results of one
//! round share one user message (Anthropic), arguments travel as objects.

#[path = "streams/common.rs"]
mod common;

use common::Json;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::arith_model::{self, signature_of};
use rtt_agent_testkit::llm_server::*;

fn keys(j: &Json) -> Vec<&str> {
    match j {
        Json::Obj(m) => m.iter().map(|(k, _)| k.as_str()).collect(),
        other => panic!("not an object: {other:?}"),
    }
}

/// `(2+3)*(4+5)`: round 1 adds twice in parallel, round 2 multiplies,
/// round 3 answers.
const QUESTION: &str = "(2+3)*(4+5)";
const ROUND1: &str = "Round 1: 2 operation(s) can run in parallel.";
const ROUND2: &str = "Round 3: 1 operation(s) can run in parallel.";

#[test]
fn three_rounds_against_anthropic() {
    let _serial = lock();
    let server = LlmServer::with_model(arith_model::respond).unwrap();
    let agent = Agent::start_at(
        &format!("http://{}/v1/messages", server.addr()),
        Overrides::default(),
    );
    assert_eq!(agent.ask(QUESTION), "The result is 45.");
    drop(agent);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    for r in &reqs {
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.header("x-api-key"), Some("sk-loop-secret-456"));
        assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(r.header("Authorization"), None);
        assert!(!r.body_text().contains("sk-loop-secret-456"));
        assert!(!r.body_text().contains("x_rtt"));
        let b = Json::parse(&r.body_text());
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
        assert_eq!(b.get("model").str(), "loop-model");
        assert!(b.get("stream").bool());
        assert!(b.get("max_tokens").num() >= 1.0);
        let system = b.get("system").arr();
        assert_eq!(system.len(), 1);
        assert!(!system[0].get("text").str().is_empty());
        let names: Vec<&str> = b
            .get("tools")
            .arr()
            .iter()
            .map(|t| {
                assert_eq!(keys(t), ["name", "description", "input_schema"]);
                assert_eq!(t.get("input_schema").get("type").str(), "object");
                t.get("name").str()
            })
            .collect();
        for tool in ["add", "mul", "compare"] {
            assert!(names.contains(&tool), "{names:?}");
        }
    }
    let messages = |k: usize| Json::parse(&reqs[k].body_text()).get("messages").clone();
    let m1 = messages(0);
    let m1 = m1.arr();
    assert_eq!(m1.len(), 1);
    assert_eq!(m1[0].get("role").str(), "user");
    assert_eq!(m1[0].get("content").str(), QUESTION);

    // Round 2's request: the question, the assistant's thinking (signed)
    // and its two calls, both results in one user message.
    let m2 = messages(1);
    let m2 = m2.arr();
    let roles: Vec<&str> = m2.iter().map(|m| m.get("role").str()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let blocks = m2[1].get("content").arr();
    let types: Vec<&str> = blocks.iter().map(|b| b.get("type").str()).collect();
    assert_eq!(types, ["thinking", "tool_use", "tool_use"]);
    assert_eq!(blocks[0].get("thinking").str(), ROUND1);
    assert_eq!(blocks[0].get("signature").str(), signature_of(ROUND1));
    let mut ids = Vec::new();
    for (b, (a, bb)) in blocks[1..].iter().zip([(2.0, 3.0), (4.0, 5.0)]) {
        assert_eq!(b.get("name").str(), "add");
        assert_eq!(b.get("input").get("a").num(), a);
        assert_eq!(b.get("input").get("b").num(), bb);
        ids.push(b.get("id").str().to_string());
    }
    let results = m2[2].get("content").arr();
    assert_eq!(results.len(), 2);
    for (r, (id, text)) in results
        .iter()
        .zip(ids.iter().zip(["2 + 3 = 5", "4 + 5 = 9"]))
    {
        assert_eq!(r.get("type").str(), "tool_result");
        assert_eq!(r.get("tool_use_id").str(), id);
        assert_eq!(r.get("content").str(), text);
    }

    // Round 3's request: everything before, plus the multiplication.
    let m3 = messages(2);
    let m3 = m3.arr();
    let roles: Vec<&str> = m3.iter().map(|m| m.get("role").str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(m3[1], m2[1], "round 1's assistant message unchanged");
    let blocks = m3[3].get("content").arr();
    let types: Vec<&str> = blocks.iter().map(|b| b.get("type").str()).collect();
    assert_eq!(types, ["thinking", "tool_use"]);
    assert_eq!(blocks[0].get("thinking").str(), ROUND2);
    assert_eq!(blocks[0].get("signature").str(), signature_of(ROUND2));
    assert_eq!(blocks[1].get("name").str(), "mul");
    assert_eq!(blocks[1].get("input").get("a").num(), 5.0);
    assert_eq!(blocks[1].get("input").get("b").num(), 9.0);
    let results = m3[4].get("content").arr();
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0].get("tool_use_id").str(),
        blocks[1].get("id").str()
    );
    assert_eq!(results[0].get("content").str(), "5 * 9 = 45");
}

#[test]
fn three_rounds_against_ollama() {
    let _serial = lock();
    let server = LlmServer::with_model(arith_model::respond).unwrap();
    let agent = Agent::start_at(
        &format!("http://{}/api/chat", server.addr()),
        Overrides::default(),
    );
    assert_eq!(agent.ask(QUESTION), "The result is 45.");
    drop(agent);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    for r in &reqs {
        assert_eq!(r.path, "/api/chat");
        assert_eq!(r.header("Authorization"), Some("Bearer sk-loop-secret-456"));
        assert_eq!(r.header("Accept"), Some("application/x-ndjson"));
        let b = Json::parse(&r.body_text());
        assert_eq!(
            keys(&b),
            ["model", "messages", "tools", "stream", "options"]
        );
        assert!(b.get("stream").bool());
        assert!(b.get("options").get("num_predict").num() >= 1.0);
        for t in b.get("tools").arr() {
            assert_eq!(t.get("type").str(), "function");
            assert_eq!(
                t.get("function").get("parameters").get("type").str(),
                "object"
            );
        }
    }
    let m3 = Json::parse(&reqs[2].body_text()).get("messages").clone();
    let m3 = m3.arr();
    let roles: Vec<&str> = m3.iter().map(|m| m.get("role").str()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool"
        ]
    );
    assert_eq!(m3[1].get("content").str(), QUESTION);
    for (k, reasoning, calls) in [
        (2, ROUND1, vec![("add", 2.0, 3.0), ("add", 4.0, 5.0)]),
        (5, ROUND2, vec![("mul", 5.0, 9.0)]),
    ] {
        let a = &m3[k];
        assert_eq!(keys(a), ["role", "content", "thinking", "tool_calls"]);
        assert_eq!(a.get("thinking").str(), reasoning);
        let got = a.get("tool_calls").arr();
        assert_eq!(got.len(), calls.len());
        for (c, (name, x, y)) in got.iter().zip(calls) {
            let f = c.get("function");
            assert_eq!(f.get("name").str(), name);
            assert_eq!(f.get("arguments").get("a").num(), x);
            assert_eq!(f.get("arguments").get("b").num(), y);
        }
    }
    for (k, name, content) in [
        (3, "add", "2 + 3 = 5"),
        (4, "add", "4 + 5 = 9"),
        (6, "mul", "5 * 9 = 45"),
    ] {
        assert_eq!(keys(&m3[k]), ["role", "content", "tool_name"]);
        assert_eq!(m3[k].get("tool_name").str(), name);
        assert_eq!(m3[k].get("content").str(), content);
    }
}
