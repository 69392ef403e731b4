//! Tool calls as real small models write them (issue 26): in text mode a
//! call in `<tool_call>` tags, in a fenced `json` block or as a bare JSON
//! object of a registered tool runs, and JSON that is not such a call stays
//! text; the native-mode fallback (`PKG_AGENT_TEXT_CALL_FALLBACK`) runs an
//! answer that is exactly one call written as text; a repeated identical
//! call within one turn is answered with the earlier result, not run again;
//! the round cap still ends a model that keeps calling.

use rtt_agent::abilities::tools_text::{set_text_call_fallback, set_text_mode};
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use rtt_agent_testkit::web::*;

const ADD: &str = r#"{"name": "add", "arguments": {"a": 1234, "b": 4321}}"#;

/// Ask over the WebNet channel with streaming; the text deltas the user saw,
/// the tool calls shown, and the reply.
fn ask_streamed(agent: &WebAgent, message: &str) -> (String, Vec<String>, String) {
    let body = format!(r#"{{"message":{},"stream":true}}"#, json_string(message));
    let events = post(agent.addr, "/cgi-bin/chat", &body).events();
    let shown: String = events
        .iter()
        .filter(|(e, _)| e == "delta")
        .map(|(_, d)| d.as_str())
        .collect();
    let calls = events
        .iter()
        .filter(|(e, _)| e == "tool_call")
        .map(|(_, d)| d.clone())
        .collect();
    let reply = events
        .iter()
        .filter(|(e, _)| e == "reply" || e == "done")
        .map(|(_, d)| d.clone())
        .collect();
    (shown, calls, reply)
}

/// The pieces of `text`, a few bytes each, as a server streams tokens.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut n = rest.len().min(3);
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        out.push(&rest[..n]);
        rest = &rest[n..];
    }
    out
}

fn last_user(req: &RecordedRequest) -> String {
    let m = messages_of(req);
    m.last().unwrap().content.clone()
}

#[test]
fn a_fenced_call_runs_and_is_not_shown() {
    let _serial = lock();
    let answer = format!("I will add them.\n```json\n{ADD}\n```\n");
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&tokens(&answer)),
        ScriptedResponse::text(&["The sum is ", "5555."]),
    ])
    .unwrap();
    set_text_mode(Some(true));
    let agent = WebAgent::start(&server, Overrides::default());
    let (shown, calls, _) = ask_streamed(&agent, "what is 1234 plus 4321?");
    assert_eq!(shown, "I will add them.\nThe sum is 5555.");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].contains("\"name\":\"add\""), "{calls:?}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        last_user(&reqs[1]),
        "Tool results:\nadd: 1234 + 4321 = 5555\n"
    );
    drop(agent);
    set_text_mode(None);
}

#[test]
fn bare_objects_pretty_printed_calls_and_parameters_run() {
    let _serial = lock();
    let answer = "{\n  \"name\": \"mul\",\n  \"parameters\": {\"a\": 6, \"b\": 7}\n}\nand {\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}";
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&tokens(answer)),
        ScriptedResponse::text(&["42 and 3."]),
    ])
    .unwrap();
    set_text_mode(Some(true));
    let agent = Agent::start(&server, Overrides::default());
    assert_eq!(agent.ask("6*7 and 1+2"), "42 and 3.");
    let reqs = server.requests();
    assert_eq!(
        last_user(&reqs[1]),
        "Tool results:\nmul: 6 * 7 = 42\nadd: 1 + 2 = 3\n"
    );
    drop(agent);
    set_text_mode(None);
}

#[test]
fn wrong_arguments_in_a_text_call_meet_the_schema_check() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&[
            "```json\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": \"two\"}}\n```",
        ]),
        ScriptedResponse::text(&["Sorry."]),
    ])
    .unwrap();
    set_text_mode(Some(true));
    let agent = Agent::start(&server, Overrides::default());
    assert_eq!(agent.ask("1+two"), "Sorry.");
    let results = last_user(&server.requests()[1]);
    assert!(
        results.starts_with(
            "Tool results:\nadd: error: the arguments for \"add\" do not fit its parameters: \"b\" should be double, not string"
        ),
        "{results}"
    );
    drop(agent);
    set_text_mode(None);
}

#[test]
fn json_that_is_not_a_call_of_a_registered_tool_stays_text() {
    let _serial = lock();
    let answers = [
        "Here is the JSON:\n```json\n{\"name\": \"Ann\", \"age\": 3}\n```",
        "```json\n{\"name\": \"reboot\", \"arguments\": {}}\n```",
        "{\"name\": \"add\", \"arguments\": \"1, 2\"}",
        "```python\nprint({\"name\": \"add\", \"arguments\": {\"a\": 1}})\n```",
        "Sets like {1, 2} and an open { brace.",
    ];
    for text_mode in [true, false] {
        for answer in answers {
            let server = LlmServer::start(vec![ScriptedResponse::text(&tokens(answer))]).unwrap();
            set_text_mode(Some(text_mode));
            set_text_call_fallback(Some(true));
            let agent = WebAgent::start(&server, Overrides::default());
            let (shown, calls, _) = ask_streamed(&agent, "json please");
            assert_eq!(shown, answer, "text mode {text_mode}");
            assert!(calls.is_empty(), "{calls:?}");
            assert_eq!(server.requests().len(), 1, "{answer}");
            drop(agent);
        }
    }
    set_text_mode(None);
    set_text_call_fallback(None);
}

#[test]
fn native_fallback_runs_an_answer_that_is_one_call() {
    let _serial = lock();
    let block = format!("```json\n{ADD}\n```");
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&tokens(&block)),
        ScriptedResponse::text(&["The sum is 5555."]),
    ])
    .unwrap();
    set_text_mode(Some(false));
    set_text_call_fallback(Some(true));
    let agent = WebAgent::start(&server, Overrides::default());
    let (shown, calls, _) = ask_streamed(&agent, "what is 1234 plus 4321?");
    assert_eq!(shown, "The sum is 5555.", "the block is not shown");
    assert_eq!(calls.len(), 1, "{calls:?}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].body_text().contains("\"tools\""), "still native");
    let m = messages_of(&reqs[1]);
    assert_eq!(roles(&m), ["system", "user", "assistant", "tool"]);
    assert_eq!(m[2].calls, ["call_text_1"]);
    assert_eq!(m[2].content, "");
    assert_eq!(m[3].tool_call_id, "call_text_1");
    assert_eq!(m[3].content, "1234 + 4321 = 5555");
    drop(agent);

    // Text around the call: not exactly one call, so it is the answer.
    let mixed = format!("Let me add. {ADD}");
    let server = LlmServer::start(vec![ScriptedResponse::text(&tokens(&mixed))]).unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let (shown, calls, _) = ask_streamed(&agent, "1234+4321");
    assert_eq!(shown, mixed);
    assert!(calls.is_empty());
    drop(agent);

    // Off (the default): the block is the answer, as before.
    set_text_call_fallback(Some(false));
    let server = LlmServer::start(vec![ScriptedResponse::text(&[&block])]).unwrap();
    let agent = Agent::start(&server, Overrides::default());
    assert_eq!(agent.ask("1234+4321"), block);
    assert_eq!(server.requests().len(), 1);
    drop(agent);
    set_text_call_fallback(None);
    set_text_mode(None);
}

#[test]
fn a_repeated_call_gets_the_earlier_result_with_a_note() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::tool_calls(&[("call_1", "add", &[r#"{"a": 1, "b": 2}"#])]),
        ScriptedResponse::tool_calls(&[
            ("call_2", "add", &[r#"{"a":1,"b":2}"#]),
            ("call_3", "add", &[r#"{"a":2,"b":2}"#]),
        ]),
        ScriptedResponse::text(&["3 and 4."]),
        // The next turn runs it again.
        ScriptedResponse::tool_calls(&[("call_4", "add", &[r#"{"a":1,"b":2}"#])]),
        ScriptedResponse::text(&["3."]),
    ])
    .unwrap();
    set_text_mode(Some(false));
    let agent = Agent::start(&server, Overrides::default());
    assert_eq!(agent.ask("1+2, then 2+2"), "3 and 4.");
    let m = messages_of(&server.requests()[2]);
    let tool = |id: &str| {
        m.iter()
            .find(|x| x.tool_call_id == id)
            .unwrap()
            .content
            .clone()
    };
    assert_eq!(tool("call_1"), "1 + 2 = 3");
    assert_eq!(
        tool("call_2"),
        "note: this exact call (same tool, same arguments) already ran in this turn, so it was not run again; use its result, which was: 1 + 2 = 3"
    );
    assert_eq!(tool("call_3"), "2 + 2 = 4");
    assert_eq!(agent.ask("1+2 again"), "3.");
    let m = messages_of(&server.requests()[4]);
    let last = m.iter().find(|x| x.tool_call_id == "call_4").unwrap();
    assert_eq!(last.content, "1 + 2 = 3");
    drop(agent);
    set_text_mode(None);
}

#[test]
fn the_round_cap_ends_a_model_that_keeps_calling() {
    let _serial = lock();
    // As the real model did for "say hello": add(1, 2), again and again.
    let server = LlmServer::with_model(|_| {
        ScriptedResponse::tool_calls(&[("call_x", "add", &[r#"{"a":1,"b":2}"#])])
    })
    .unwrap();
    set_text_mode(Some(false));
    let agent = Agent::start(&server, Overrides::default());
    let r = agent.ask("say hello");
    assert!(
        r.starts_with("error: round limit reached (")
            && r.ends_with(" tool rounds) before the model gave an answer"),
        "{r}"
    );
    let reqs = server.requests();
    let m = messages_of(reqs.last().unwrap());
    let notes = m
        .iter()
        .filter(|x| x.role == "tool" && x.content.starts_with("note: this exact call"))
        .count();
    assert_eq!(
        notes,
        reqs.len() - 2,
        "every repeat after the first is a note"
    );
    drop(agent);

    // The same in text mode.
    let server = LlmServer::with_model(|_| {
        ScriptedResponse::text(&[
            "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>",
        ])
    })
    .unwrap();
    set_text_mode(Some(true));
    let agent = Agent::start(&server, Overrides::default());
    let r = agent.ask("say hello");
    assert!(r.starts_with("error: round limit reached ("), "{r}");
    let last = last_user(server.requests().last().unwrap());
    assert!(
        last.starts_with("Tool results:\nadd: note: this exact call"),
        "{last}"
    );
    drop(agent);
    set_text_mode(None);
}
