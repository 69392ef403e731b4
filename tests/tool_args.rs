//! Tool arguments checked against the tool's registered schema before the C
//! tool runs (`PKG_AGENT_CHECK_TOOL_ARGS`): the model gets a tool error that
//! names the property and what was expected, and the tool is not called.

use rtt_agent::abi::messages::{messages_append, messages_create, messages_destroy, TYPE_TEXT};
use rtt_agent::cjson::sys::*;
use rtt_agent::runtime::tools::{append_tool, AgentToolList};
use rtt_agent::runtime::utils::create_tool_item;
use rtt_agent::wire::tool_args::{check, Mismatch};
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::sync::atomic::{AtomicUsize, Ordering};

fn parse(text: &str) -> *mut cJSON {
    let c = CString::new(text).unwrap();
    // SAFETY: a NUL-terminated string; the tree is owned by the caller.
    let t = unsafe { cJSON_Parse(c.as_ptr()) };
    assert!(!t.is_null(), "{text}");
    t
}

const LED: &str = r#"{"type":"object","properties":{
    "pin":{"type":"int","description":"GPIO pin"},
    "state":{"type":"string","enum":["on","off"]},
    "level":{"type":"double"},
    "blink":{"type":"true"},
    "note":{"type":["string","null"]},
    "free":{"description":"no type"}},
  "required":["pin","state"]}"#;

/// What a check gives: fits, or (property, what was expected).
type Verdict = Result<(), (&'static str, &'static str)>;

#[test]
fn the_checks_table() {
    let schema = parse(LED);
    let cases: &[(&str, Verdict)] = &[
        (r#"{"pin":3,"state":"on"}"#, Ok(())),
        (
            r#"{"pin":3,"state":"off","level":2,"blink":false,"note":null,"free":[1],"extra":{}}"#,
            Ok(()),
        ),
        (r#"{"pin":3,"state":"on","level":2.5,"note":"x"}"#, Ok(())),
        (r#"{"state":"on"}"#, Err(("missing", "pin"))),
        (r#"{"pin":3}"#, Err(("missing", "state"))),
        (
            r#"{"pin":"3","state":"on"}"#,
            Err(("type", "pin int string")),
        ),
        (
            r#"{"pin":3.5,"state":"on"}"#,
            Err(("type", "pin int number")),
        ),
        (r#"{"pin":3,"state":"blink"}"#, Err(("enum", "state"))),
        (
            r#"{"pin":3,"state":1}"#,
            Err(("type", "state string number")),
        ),
        (
            r#"{"pin":3,"state":"on","level":"high"}"#,
            Err(("type", "level double string")),
        ),
        (
            r#"{"pin":3,"state":"on","blink":1}"#,
            Err(("type", "blink true number")),
        ),
        (
            r#"{"pin":3,"state":"on","note":5}"#,
            Err(("type", "note one of its types number")),
        ),
    ];
    for (args, want) in cases {
        let a = parse(args);
        // SAFETY: two live trees, unchanged during the call.
        let got = unsafe { check(schema, a) }.map_err(|m| match m {
            Mismatch::Missing(p) => ("missing", String::from_utf8_lossy(p).into_owned()),
            Mismatch::Type(p, want, got) => (
                "type",
                format!(
                    "{} {} {}",
                    String::from_utf8_lossy(p),
                    String::from_utf8_lossy(want),
                    String::from_utf8_lossy(got)
                ),
            ),
            Mismatch::NotInEnum(p, _) => ("enum", String::from_utf8_lossy(p).into_owned()),
        });
        let want = want.map_err(|(k, s)| (k, s.to_string()));
        assert_eq!(got, want, "{args}");
        // SAFETY: parsed above, owned here.
        unsafe { cJSON_Delete(a) };
    }
    // No schema, or one without properties: nothing to check.
    let a = parse(r#"{"x":1}"#);
    // SAFETY: NULL or live trees.
    unsafe {
        assert_eq!(check(std::ptr::null(), a), Ok(()));
        cJSON_Delete(a);
        cJSON_Delete(schema);
    }
}

static LED_CALLS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn set_led(_args: *mut cJSON, node: *mut AgentToolList) {
    LED_CALLS.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the loop passes its live node; the result set is handed to it.
    unsafe {
        messages_destroy((*node).ret.messages);
        let m = messages_create(1);
        messages_append(m, TYPE_TEXT, c"led set".as_ptr());
        (*node).ret.messages = m;
        (*node).ret.ret = 0;
    }
}

#[test]
fn a_call_that_does_not_fit_is_answered_and_the_tool_not_run() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::tool_calls(&[
            ("v1", "set_led", &[r#"{"pin":3}"#]),
            ("v2", "set_led", &[r#"{"pin":"3","state":"on"}"#]),
            ("v3", "set_led", &[r#"{"pin":3,"state":"blink"}"#]),
            ("v4", "add", &[r#"{"a":1,"b":"2"}"#]),
            (
                "v5",
                "set_led",
                &[r#"{"pin":3,"state":"on","level":2,"extra":1}"#],
            ),
            ("v6", "add", &[r#"{"a":1,"b":2}"#]),
        ]),
        ScriptedResponse::text(&["fixed"]),
    ])
    .unwrap();
    let agent = Agent::start(&server, Default::default());
    let params = parse(LED);
    // SAFETY: static strings; the schema is handed to the tool item, the item
    // to the registry (queued for the running loop).
    unsafe {
        let tool = create_tool_item(c"set_led".as_ptr(), c"Switch an LED".as_ptr(), params);
        assert_eq!(append_tool(tool, Some(set_led)), 0);
    }
    LED_CALLS.store(0, Ordering::SeqCst);
    assert_eq!(agent.ask("switch pin 3 on"), "fixed");
    assert_eq!(
        LED_CALLS.load(Ordering::SeqCst),
        1,
        "only the call that fits ran"
    );
    let msgs = messages_of(&server.requests()[1]);
    let tool = |id: &str| {
        msgs.iter()
            .find(|m| m.tool_call_id == id)
            .unwrap()
            .content
            .clone()
    };
    let prefix =
        |name: &str| format!("error: the arguments for \"{name}\" do not fit its parameters: ");
    assert_eq!(
        tool("v1"),
        prefix("set_led") + "the required property \"state\" is missing; the tool was not run"
    );
    assert_eq!(
        tool("v2"),
        prefix("set_led") + "\"pin\" should be int, not string; the tool was not run"
    );
    assert_eq!(
        tool("v3"),
        prefix("set_led") + "\"state\" should be one of [\"on\",\"off\"]; the tool was not run"
    );
    assert_eq!(
        tool("v4"),
        prefix("add") + "\"b\" should be double, not string; the tool was not run"
    );
    assert_eq!(tool("v5"), "led set");
    assert_eq!(tool("v6"), "1 + 2 = 3");
}
