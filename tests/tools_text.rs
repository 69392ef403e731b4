//! Tools for models without function calling (`PKG_AGENT_TOOLS_TEXT`): the
//! scripted arithmetic model in its mode without function calling (it
//! refuses any request with `tools`) completes a two-round tool
//! conversation; the calls never reach the user as text.

use rtt_agent::abilities::tools_text::set_text_mode;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::arith_model;
use rtt_agent_testkit::llm_server::*;
use rtt_agent_testkit::web::*;

#[test]
fn a_two_round_tool_conversation_without_function_calling() {
    let _serial = lock();
    let server = LlmServer::with_model(arith_model::respond_text_tools).unwrap();
    set_text_mode(Some(true));
    let agent = Agent::start(&server, Overrides::default());
    assert_eq!(agent.ask("what is (2+3)*4?"), "The result is 20.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "two tool rounds and the answer");
    for r in &reqs {
        assert!(
            !r.body_text().contains("\"tools\""),
            "no tools in the request"
        );
    }
    let first = messages_of(&reqs[0]);
    assert_eq!(roles(&first), ["system", "user"]);
    let system = &first[0].content;
    assert!(
        system.contains("<tool_call>{\"name\": \"TOOL\""),
        "{system}"
    );
    for tool in ["- add: ", "- mul: ", "- compare: "] {
        assert!(system.contains(tool), "{tool} in {system}");
    }
    assert!(system.contains("\"required\":[\"a\",\"b\"]"), "{system}");
    let second = messages_of(&reqs[1]);
    assert_eq!(roles(&second), ["system", "user", "assistant", "user"]);
    assert!(second[2].content.contains("<tool_call>{\"name\": \"add\""));
    assert_eq!(second[3].content, "Tool results:\nadd: 2 + 3 = 5\n");
    let third = messages_of(&reqs[2]);
    assert_eq!(third[5].content, "Tool results:\nmul: 5 * 4 = 20\n");
    drop(agent);

    // Back to native calls: the same model now gets tools and refuses.
    set_text_mode(Some(false));
    let agent = Agent::start(&server, Overrides::default());
    let r = agent.ask("what is 1+1?");
    assert!(
        r.contains("HTTP 400") && r.contains("does not support tools"),
        "{r}"
    );
    drop(agent);
    set_text_mode(None);
}

#[test]
fn the_calls_are_not_shown_and_bad_calls_are_answered() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&[
            "Checking.\n<tool_",
            "call>{\"name\": \"mul\", \"arguments\": {\"a\": 6, \"b\": \"7\"}}</tool_call>\n<tool_call>{\"name\": \"nope\"}</tool_call>\n<tool_call>not json</tool_call>",
        ]),
        ScriptedResponse::text(&["Done: ", "42."]),
    ])
    .unwrap();
    set_text_mode(Some(true));
    let agent = WebAgent::start(&server, Overrides::default());
    let r = post(
        agent.addr,
        "/cgi-bin/chat",
        r#"{"message":"6*7","stream":true}"#,
    );
    let events = r.events();
    let shown: String = events
        .iter()
        .filter(|(e, _)| e == "delta")
        .map(|(_, d)| d.as_str())
        .collect();
    assert_eq!(shown, "Checking.\nDone: 42.", "{events:?}");
    let calls: Vec<&String> = events
        .iter()
        .filter(|(e, _)| e == "tool_call")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(calls.len(), 2, "{events:?}");
    assert!(calls[0].contains("\"name\":\"mul\""), "{}", calls[0]);
    let results = messages_of(&server.requests()[1]);
    let results = &results.last().unwrap().content;
    assert!(results.starts_with("Tool results:\nmul: error: the arguments for \"mul\" do not fit its parameters: \"b\" should be double, not string"), "{results}");
    assert!(
        results.contains("\nnope: error: there is no tool named \"nope\""),
        "{results}"
    );
    assert!(
        results.contains("\n(unreadable call): error: a call must be"),
        "{results}"
    );
    drop(agent);
    set_text_mode(None);
}
