//! Sub-agents (`PKG_AGENT_SUBAGENTS`): a profile declared in C
//! (`agent_profile_add`) with its own endpoint (a second scripted server),
//! model and tools, and one from the profiles file (RTT_AGENT_PROFILES_FILE)
//! on the agent's endpoint. The main model calls them as tools and sees
//! only their final answers; depth 1; tools outside the profile refused;
//! a tool timeout ends a slow sub-agent; the heap is back.
#![cfg(all(feature = "sub-agents", feature = "tool-options"))]

use rtt_agent::abilities::mcp_client::servers;
use rtt_agent::abilities::tool_options::AgentToolOptions;
use rtt_agent::ffi::subagent::{agent_profile_add, agent_profile_del, AgentProfile};
use rtt_agent::ffi::tools::agent_tool_set_options;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The main model: "ask <profile> <task>" calls that profile's tool; after
/// a tool result it answers `Main: <result>`.
fn main_model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = messages_of(req);
    if msgs[0].content == "You research." {
        // The file's profile runs on this endpoint: it answers itself.
        let task = &msgs.last().unwrap().content;
        return ScriptedResponse::text(&["researched: ", task]);
    }
    let last = msgs.last().unwrap().clone();
    if last.role == "tool" {
        return ScriptedResponse::text(&["Main: ", &last.content]);
    }
    let mut words = last.content.splitn(3, ' ');
    let (_, profile, task) = (
        words.next(),
        words.next().unwrap_or(""),
        words.next().unwrap_or(""),
    );
    let args = format!(r#"{{"task":"{task}"}}"#);
    ScriptedResponse::tool_calls(&[("m1", profile, &[&args])])
}

/// The calc profile's own model (its own server): adds then multiplies;
/// "forbidden" tries compare and the researcher; "slow" takes 3 s.
fn calc_model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = messages_of(req);
    let task = msgs.get(1).map(|m| m.content.clone()).unwrap_or_default();
    let tools_done: Vec<&Msg> = msgs.iter().filter(|m| m.role == "tool").collect();
    if task == "slow" {
        return ScriptedResponse::text(&["too late"]).first_byte_after(Duration::from_secs(3));
    }
    if task == "forbidden" {
        return match tools_done.len() {
            0 => ScriptedResponse::tool_calls(&[
                ("c1", "compare", &[r#"{"a":1,"b":2}"#]),
                ("c2", "researcher", &[r#"{"task":"x"}"#]),
            ]),
            _ => ScriptedResponse::text(&[&tools_done
                .iter()
                .map(|m| m.content.as_str())
                .collect::<Vec<_>>()
                .join(" | ")]),
        };
    }
    match tools_done.len() {
        0 => ScriptedResponse::tool_calls(&[("c1", "add", &[r#"{"a":2,"b":3}"#])]),
        1 => ScriptedResponse::tool_calls(&[("c2", "mul", &[r#"{"a":5,"b":4}"#])]),
        _ => ScriptedResponse::text(&["20"]),
    }
}

#[test]
fn sub_agents() {
    let _serial = lock();
    servers::reset();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("subagents-test");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("profiles.txt");
    std::fs::write(
        &file,
        "# the file's profile\n[researcher]\ndescription = Looks things up.\nsystem = You research.\n",
    )
    .unwrap();
    // SAFETY: set before the agent's threads read it, under the tests' lock.
    unsafe { std::env::set_var("RTT_AGENT_PROFILES_FILE", &file) };
    let main = LlmServer::with_model(main_model).unwrap();
    let calc = LlmServer::with_model(calc_model).unwrap();
    let calc_url = CString::new(calc.url()).unwrap();
    let baseline = settled_used();
    steps(&main, &calc, &calc_url);
    assert_eq!(
        settled_used(),
        baseline,
        "heap not back after the sub-agents"
    );
    // SAFETY: as above.
    unsafe { std::env::remove_var("RTT_AGENT_PROFILES_FILE") };
}

fn steps(main: &LlmServer, calc: &LlmServer, calc_url: &CString) {
    let profile = AgentProfile {
        name: c"calc".as_ptr(),
        description: c"Does arithmetic step by step.".as_ptr(),
        system_prompt: c"You are calc.".as_ptr(),
        api_url: calc_url.as_ptr(),
        api_key: std::ptr::null(),
        model: c"calc-model".as_ptr(),
        tools: c"add, mul, researcher".as_ptr(),
    };
    // SAFETY: a valid profile of NUL-terminated strings (copied).
    assert_eq!(unsafe { agent_profile_add(&profile) }, 0);
    let bad = AgentProfile {
        name: c"two words".as_ptr(),
        ..profile
    };
    // SAFETY: as above.
    assert!(unsafe { agent_profile_add(&bad) } < 0);

    let agent = Agent::start(main, Overrides::default());
    // Both offered to the main model, each with its `task`.
    let names: Vec<String> = offered_tools_now(main, &agent);
    assert!(
        names.contains(&"calc".to_string()) && names.contains(&"researcher".to_string()),
        "{names:?}"
    );

    let main_before = main.requests().len();
    assert_eq!(agent.ask("ask calc (2+3)*4"), "Main: 20");
    // The sub-agent's own requests went to its own endpoint and model,
    // without the agent's key, with its own system prompt and only the
    // tools of its profile (the other sub-agent left out: depth 1).
    let reqs = calc.requests();
    assert_eq!(reqs.len(), 3);
    let first = &reqs[0];
    assert!(first.body_text().contains(r#""model":"calc-model""#));
    assert_eq!(
        first.header("Authorization"),
        None,
        "the agent's key went to another URL"
    );
    let msgs = messages_of(first);
    assert_eq!(
        (msgs[0].role.as_str(), msgs[0].content.as_str()),
        ("system", "You are calc.")
    );
    assert_eq!(msgs[1].content, "(2+3)*4");
    let offered: Vec<String> = offered_tools(&first.body)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(offered, ["add", "mul"]);
    // The main model saw only the sub-agent's final answer.
    let main_reqs = main.requests();
    assert_eq!(main_reqs.len() - main_before, 2);
    let seen = messages_of(&main_reqs[main_before + 1]);
    assert_eq!(seen.last().unwrap().content, "20");
    assert!(!main_reqs[main_before + 1]
        .body_text()
        .contains("You are calc."));

    // Tools outside its profile are refused, and so is a sub-agent.
    let reply = agent.ask("ask calc forbidden");
    assert_eq!(
        reply,
        "Main: error: the tool \"compare\" is not one this agent may use; the tool was not run | error: the tool \"researcher\" is not one this agent may use; the tool was not run"
    );

    // The file's profile runs on the agent's endpoint.
    assert_eq!(
        agent.ask("ask researcher the tides"),
        "Main: researched: the tides"
    );

    // A timeout for the sub-agent's tool ends its slow request; the turn
    // goes on.
    let o = AgentToolOptions {
        timeout_ms: 500,
        retries: 0,
        direct: 0,
        reserved: [0; 2],
    };
    // SAFETY: a NUL-terminated name and a live value (copied).
    assert_eq!(unsafe { agent_tool_set_options(c"calc".as_ptr(), &o) }, 0);
    let started = Instant::now();
    let reply = agent.ask("ask calc slow");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    assert!(
        reply.starts_with("Main: error: the sub-agent \"calc\" gave no answer: its request failed: the request timed out"),
        "{reply}"
    );
    assert_eq!(
        // SAFETY: as above; NULL clears.
        unsafe { agent_tool_set_options(c"calc".as_ptr(), std::ptr::null()) },
        0
    );
    drop(agent);
    // SAFETY: a NUL-terminated name.
    assert_eq!(unsafe { agent_profile_del(c"calc".as_ptr()) }, 0);
    // SAFETY: as above.
    assert!(unsafe { agent_profile_del(c"calc".as_ptr()) } < 0);
}

/// The tool names the main model is offered now (one question asked).
fn offered_tools_now(main: &LlmServer, agent: &Agent) -> Vec<String> {
    let before = main.requests().len();
    agent.ask("plain question");
    let req = &main.requests()[before];
    offered_tools(&req.body)
        .into_iter()
        .map(|(n, _)| n)
        .collect()
}
