//! The agent's shared state under concurrent callers: the configuration
//! changed during requests, tools appended during requests, Debug-channel
//! senders that time out (with that channel), two cleanups at once, a C caller's own `chat()`
//! during a cleanup. The scripted server checks every request it receives:
//! valid JSON, a body as long as its Content-Length, and a key/model pair
//! that was set together.
//!
//! One test function: the agent is process-wide.

#[cfg(feature = "channel-debug")]
use rtt_agent::channels::debug::{send_message, set_reply_timeout_ms};
use rtt_agent::cjson::sys::*;
use rtt_agent::host::{heap, thread};
use rtt_agent::runtime::agent_loop::{cleanup_agent_entry, main_loop_entry};
use rtt_agent::runtime::chat::Overrides;
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent::runtime::tools::{append_tool, AgentToolList};
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::chat_call::chat_json;
use rtt_agent_testkit::llm_server::*;
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Key/model pairs, always set together; lengths differ, so a request that
/// read one while the other was being written shows it (a torn string, a
/// body shorter or longer than its Content-Length).
const PAIRS: [(&str, &str); 2] = [
    ("sk-a", "model-with-a-long-name-alpha"),
    ("sk-beta-with-a-long-key", "m-b"),
];

/// What the server found wrong, request by request.
type Faults = Arc<Mutex<Vec<String>>>;

/// The request's JSON body: `model`, the last user message, the tool names.
struct Seen {
    #[cfg_attr(not(feature = "channel-debug"), allow(dead_code))]
    user: String,
    tools: Vec<String>,
}

fn inspect(req: &RecordedRequest, faults: &Faults) -> Option<Seen> {
    let fault = |what: String| faults.lock().unwrap().push(what);
    let declared = req
        .header("Content-Length")
        .and_then(|v| v.trim().parse::<usize>().ok());
    if declared != Some(req.body.len()) {
        fault(format!(
            "Content-Length {:?} but a body of {} bytes",
            declared,
            req.body.len()
        ));
    }
    let Ok(text) = CString::new(req.body.clone()) else {
        fault("a NUL in the body".into());
        return None;
    };
    // SAFETY: cJSON calls on a tree parsed here and deleted below.
    unsafe {
        let root = cJSON_Parse(text.as_ptr());
        if root.is_null() {
            fault(format!(
                "invalid JSON: {}",
                String::from_utf8_lossy(&req.body)
            ));
            return None;
        }
        let s = |item: *const cJSON| {
            if item.is_null() || (*item).valuestring.is_null() {
                String::new()
            } else {
                CStr::from_ptr((*item).valuestring)
                    .to_string_lossy()
                    .into_owned()
            }
        };
        let model = s(cJSON_GetObjectItemCaseSensitive(root, c"model".as_ptr()));
        let msgs = cJSON_GetObjectItemCaseSensitive(root, c"messages".as_ptr());
        let mut user = String::new();
        for i in 0..cJSON_GetArraySize(msgs) {
            let m = cJSON_GetArrayItem(msgs, i);
            if s(cJSON_GetObjectItemCaseSensitive(m, c"role".as_ptr())) == "user" {
                user = s(cJSON_GetObjectItemCaseSensitive(m, c"content".as_ptr()));
            }
        }
        let tools_json = cJSON_GetObjectItemCaseSensitive(root, c"tools".as_ptr());
        let mut tools = Vec::new();
        for i in 0..cJSON_GetArraySize(tools_json) {
            let f = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetArrayItem(tools_json, i),
                c"function".as_ptr(),
            );
            tools.push(s(cJSON_GetObjectItemCaseSensitive(f, c"name".as_ptr())));
        }
        cJSON_Delete(root);
        let key = req
            .header("Authorization")
            .unwrap_or("")
            .trim_start_matches("Bearer ")
            .to_string();
        let paired = PAIRS.iter().any(|(k, m)| *k == key && *m == model);
        let default = key == "sk-loop-secret-456" && model == "loop-model";
        if !paired && !default {
            fault(format!(
                "key {key:?} with model {model:?}: never set together"
            ));
        }
        Some(Seen { user, tools })
    }
}

fn settled_used() -> usize {
    assert!(
        thread::settle(Duration::from_secs(10)),
        "threads still running"
    );
    heap::used()
}

#[test]
fn concurrent_callers() {
    let _serial = lock();
    config_changes_during_requests_never_tear_a_request();
    tools_appended_during_requests_join_between_messages();
    #[cfg(feature = "channel-debug")]
    a_late_reply_never_reaches_the_next_sender();
    two_cleanups_at_once_both_return_once_everything_is_freed();
    cleanup_does_not_cancel_a_c_callers_own_chat();
}

fn config_changes_during_requests_never_tear_a_request() {
    let faults: Faults = Arc::default();
    let f = faults.clone();
    let served = Arc::new(AtomicUsize::new(0));
    let n = served.clone();
    let server = uncounted_server_with(move |req| {
        inspect(req, &f);
        // Every third request fails once with 500: its retry must send the
        // same key and model, whatever was set during the back-off.
        if n.fetch_add(1, Ordering::SeqCst) % 3 == 0 {
            ScriptedResponse::error(500, "try again", "server_error", None)
        } else {
            ScriptedResponse::text(&["ok"])
        }
    });
    let agent = Agent::start(&server, Overrides::default());
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            heap::exclude_this_thread(true);
            let pairs: Vec<(CString, CString)> = PAIRS
                .iter()
                .map(|(k, m)| (CString::new(*k).unwrap(), CString::new(*m).unwrap()))
                .collect();
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let (k, m) = &pairs[i % 2];
                // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
                // which copies them.
                unsafe { agent_config_set(k.as_ptr(), m.as_ptr(), std::ptr::null()) };
                i += 1;
                if i % 16 == 0 {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
            i
        })
    };
    for i in 0..60 {
        assert_eq!(agent.ask(&format!("question {i}")), "ok");
    }
    stop.store(true, Ordering::SeqCst);
    let flips = flipper.join().unwrap();
    drop(agent);
    let faults = faults.lock().unwrap();
    assert!(
        faults.is_empty(),
        "{} bad requests: {:?}",
        faults.len(),
        &faults[..faults.len().min(5)]
    );
    // Requests the server could not read as HTTP (a body longer or shorter
    // than announced shows up here); a client closing a kept-alive
    // connection after its answer is no fault.
    let unreadable: Vec<String> = server
        .errors()
        .into_iter()
        .filter(|e| !e.ends_with("reading request: Connection reset by peer (os error 104)"))
        .collect();
    assert!(unreadable.is_empty(), "{unreadable:?}");
    assert!(
        served.load(Ordering::SeqCst) >= 60 && flips > 100,
        "{flips} changes"
    );
}

unsafe extern "C" fn extra_tool(_args: *mut cJSON, _node: *mut AgentToolList) {}

fn extra_tool_definition(i: usize) -> *mut cJSON {
    let def = CString::new(format!(
        r#"{{"type":"function","function":{{"name":"extra_{i}","description":"x","parameters":{{"type":"object","properties":{{}}}}}}}}"#
    ))
    .unwrap();
    // SAFETY: a NUL-terminated string.
    unsafe { cJSON_Parse(def.as_ptr()) }
}

fn tools_appended_during_requests_join_between_messages() {
    let faults: Faults = Arc::default();
    let f = faults.clone();
    let seen_tools = Arc::new(Mutex::new(Vec::new()));
    let t = seen_tools.clone();
    let server = uncounted_server_with(move |req| {
        if let Some(seen) = inspect(req, &f) {
            t.lock().unwrap().push(seen.tools);
        }
        ScriptedResponse::text(&["ok"])
    });
    // One cycle first, so the measured one starts after this scenario's
    // first start-up (tests/agent_lifecycle.rs does the same).
    let warm_up = Agent::start(&server, Overrides::default());
    std::thread::spawn(|| {
        // SAFETY: a fresh tool definition whose ownership passes to the list,
        // and a callback that ignores its arguments.
        unsafe { append_tool(extra_tool_definition(99), Some(extra_tool)) }
    })
    .join()
    .unwrap();
    assert_eq!(warm_up.ask("warm up"), "ok");
    drop(warm_up);
    seen_tools.lock().unwrap().clear();
    let base = settled_used();
    let agent = Agent::start(&server, Overrides::default());
    let appender = std::thread::spawn(|| {
        // The thread's own bookkeeping (std, the test harness) stays out of
        // the figures; what append_tool allocates is freed by the registry
        // whoever counted it.
        heap::exclude_this_thread(true);
        for i in 0..40 {
            let tree = extra_tool_definition(i);
            // SAFETY: as above: a fresh definition handed over, a no-op callback.
            assert_eq!(unsafe { append_tool(tree, Some(extra_tool)) }, 0);
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    for i in 0..30 {
        assert_eq!(agent.ask(&format!("question {i}")), "ok");
    }
    appender.join().unwrap();
    assert_eq!(agent.ask("last question"), "ok");
    drop(agent);
    let faults = faults.lock().unwrap();
    assert!(faults.is_empty(), "{:?}", &faults[..faults.len().min(5)]);
    let seen = seen_tools.lock().unwrap();
    let built_in = seen[0].iter().filter(|n| !n.starts_with("extra_")).count();
    let last = seen.last().unwrap();
    let missing: Vec<String> = (0..40)
        .map(|i| format!("extra_{i}"))
        .filter(|n| !last.contains(n))
        .collect();
    assert!(missing.is_empty(), "not offered by the end: {missing:?}");
    assert_eq!(last.len(), built_in + 40, "{last:?}");
    assert_eq!(settled_used(), base, "queued tools freed with the registry");
}

/// The Debug channel's senders (the exchange): only with it.
#[cfg(feature = "channel-debug")]
fn a_late_reply_never_reaches_the_next_sender() {
    let server = uncounted_server_with(|req| {
        let user = inspect(req, &Faults::default())
            .map(|s| s.user)
            .unwrap_or_default();
        let answer = ScriptedResponse::text(&[&*format!("reply to {user}")]);
        if user == "slow" {
            answer.first_byte_after(Duration::from_millis(2500))
        } else {
            answer
        }
    });
    let agent = Agent::start(&server, Overrides::default());
    set_reply_timeout_ms(Some(2000));
    let mut got = String::new();
    let first = send_message(rtt_agent::abi::messages::TYPE_TEXT, b"slow\0", &mut |r| {
        got = String::from_utf8_lossy(r).into_owned()
    });
    assert_eq!(first, Err("no reply in time"), "{got}");
    // The loop is still working on "slow": its reply arrives while the next
    // sender waits, and must not be taken for that sender's.
    for next in ["one", "two", "three"] {
        assert_eq!(agent.ask(next), format!("reply to {next}"));
    }
    set_reply_timeout_ms(None);
    drop(agent);
}

fn two_cleanups_at_once_both_return_once_everything_is_freed() {
    let server = uncounted_server_with(|_| ScriptedResponse::text(&["never"]).stall_after(0));
    // Twice: the second round, started after a first full one, must end
    // exactly where it began.
    let mut base = settled_used();
    for round in 0..2 {
        if round == 1 {
            base = settled_used();
        }
        let agent = Agent::start(&server, Overrides::default());
        let asker = std::thread::spawn(|| send_beside("stall"));
        assert!(server.wait_for_requests(round + 1, Duration::from_secs(5)));
        let started = Instant::now();
        let cleaners: Vec<_> = (0..2)
            .map(|_| std::thread::spawn(cleanup_agent_entry))
            .collect();
        for c in cleaners {
            assert_eq!(c.join().unwrap(), 0);
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // Its one reply says what happened (or the channel closed under it;
        // without the Debug channel nobody waited for it).
        match asker.join().unwrap() {
            Ok(Some(reply)) => assert!(
                reply.contains("cancelled") || reply.contains("stopping"),
                "{reply}"
            ),
            Ok(None) if cfg!(not(feature = "channel-debug")) => {}
            Ok(None) => panic!("the Debug channel's sender got neither a reply nor an error"),
            Err(why) => assert!(why.contains("stopped"), "{why}"),
        }
        std::mem::forget(agent); // already cleaned up
        assert_eq!(cleanup_agent_entry(), 0, "a third cleanup: nothing to do");
    }
    assert_eq!(
        settled_used(),
        base,
        "two cleanups at once freed everything, once"
    );
    // And the agent starts again afterwards.
    assert_eq!(main_loop_entry(), 0);
    assert_eq!(cleanup_agent_entry(), 0);
}

fn cleanup_does_not_cancel_a_c_callers_own_chat() {
    // Both the loop's request and the C caller's stream slowly, so the C
    // caller reads while the cleanup is cancelling the loop's request.
    let server = uncounted_server_with(|_| {
        let pieces: Vec<String> = (0..15).map(|i| format!("{i} ")).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        ScriptedResponse::text(&pieces).delay(Duration::from_millis(100))
    });
    let agent = Agent::start(&server, Overrides::default());
    let loop_asker = std::thread::spawn(|| {
        let _ = send_beside("from the shell");
    });
    let c_caller =
        std::thread::spawn(|| chat_json(r#"[{"role":"user","content":"from C"}]"#, None));
    assert!(server.wait_for_requests(2, Duration::from_secs(5)));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(cleanup_agent_entry(), 0);
    std::mem::forget(agent);
    loop_asker.join().unwrap();
    let answer = c_caller.join().unwrap();
    assert_eq!(
        answer.map(|a| a.content.split_whitespace().count()),
        Ok(15),
        "the C caller's request was cancelled by the agent's cleanup"
    );
}
