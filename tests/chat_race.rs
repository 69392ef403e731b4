//! The race check (issue 27): `chat()` called from C with the registry's
//! tools array while, with no agent loop running, one thread flips the
//! configuration between two sets and another appends tools to the
//! registry. A raw TCP server keeps every request as it arrived (head and
//! body bytes, however many came): each must be valid JSON, exactly as long
//! as its `Content-Length`, and send a key, model and URL that were set
//! together.
//!
//! One test function: the registry and the configuration are process-wide.

use rtt_agent::cjson::sys::*;
use rtt_agent::ffi::chat::{agent_chat_last_error, chat, chat_response_free};
use rtt_agent::ffi::config::agent_config_set;
use rtt_agent::ffi::tools::{
    agent_tool_list_create, agent_tool_list_destroy, append_tool, build_tools_json, get_agent_tools,
};
use rtt_agent::runtime::chat::set_overrides;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent::runtime::tools::AgentToolList;
use std::ffi::{c_char, c_int, CStr, CString};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

extern "C" {
    // cJSON's own parser with `require_null_terminated`: trailing bytes
    // after the value make it fail (plain cJSON_Parse ignores them).
    fn cJSON_ParseWithOpts(
        value: *const c_char,
        return_parse_end: *mut *const c_char,
        require_null_terminated: c_int,
    ) -> *mut cJSON;
}

const CHATS: usize = 200;

/// The two configurations, always set together (one `agent_config_set`
/// call each); the lengths differ, so a request that mixed them, or read a
/// string while it was rewritten, shows it.
const SETS: [(&str, &str, &str); 2] = [
    (
        "sk-alpha",
        "model-with-a-long-name-alpha",
        "/a/v1/chat/completions",
    ),
    (
        "sk-beta-with-a-much-longer-key",
        "m-b",
        "/b/v1/chat/completions",
    ),
];

/// One request as it came off the socket.
struct Raw {
    head: String,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
    fn path(&self) -> &str {
        self.head.split(' ').nth(1).unwrap_or("")
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Read one request: the head, then the body up to its Content-Length,
/// then whatever else arrives shortly after (a body longer than declared).
/// A body shorter than declared is kept as it is once the client goes quiet.
fn read_request(s: &mut TcpStream) -> Option<Raw> {
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let head_end = loop {
        if let Some(at) = find(&buf, b"\r\n\r\n") {
            break at + 4;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut body = buf.split_off(head_end);
    let raw = Raw {
        head,
        body: Vec::new(),
    };
    let declared = raw
        .header("Content-Length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    // Up to the declared length (or until the client stops sending: a short
    // body), then a short wait for bytes beyond it.
    s.set_read_timeout(Some(Duration::from_millis(300))).ok()?;
    let mut extra_wait = false;
    loop {
        if body.len() >= declared && !extra_wait {
            extra_wait = true;
            s.set_read_timeout(Some(Duration::from_millis(15))).ok()?;
        }
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
            Err(_) => break,
        }
    }
    Some(Raw { body, ..raw })
}

/// A minimal streamed answer, then the connection closes.
fn answer(s: &mut TcpStream) {
    let events = concat!(
        r#"data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m","#,
        r#""choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m","#,
        r#""choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "\n\n",
        "data: [DONE]\n\n"
    );
    let reply = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{events}",
        events.len()
    );
    let _ = s.write_all(reply.as_bytes());
    let _ = s.flush();
}

/// Serve until `stop`, keeping every request.
fn serve(listener: TcpListener, seen: Arc<Mutex<Vec<Raw>>>, stop: Arc<AtomicBool>) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(mut s) = conn else { continue };
        if let Some(raw) = read_request(&mut s) {
            seen.lock().unwrap().push(raw);
        }
        answer(&mut s);
    }
}

/// What is wrong with one request, if anything.
fn check(raw: &Raw) -> Vec<String> {
    let mut faults = Vec::new();
    let declared = raw
        .header("Content-Length")
        .and_then(|v| v.parse::<usize>().ok());
    if declared != Some(raw.body.len()) {
        faults.push(format!(
            "torn: Content-Length {declared:?} but {} bytes",
            raw.body.len()
        ));
    }
    let key = raw
        .header("Authorization")
        .unwrap_or("")
        .trim_start_matches("Bearer ")
        .to_string();
    let path = raw.path().to_string();
    let Ok(text) = CString::new(raw.body.clone()) else {
        faults.push("torn: a NUL in the body".into());
        return faults;
    };
    let mut end = std::ptr::null();
    // SAFETY: a NUL-terminated string; the tree is deleted below.
    let root = unsafe { cJSON_ParseWithOpts(text.as_ptr(), &mut end, 1) };
    if root.is_null() {
        let body = String::from_utf8_lossy(&raw.body);
        let at = end as usize - text.as_ptr() as usize;
        let from = at.saturating_sub(60);
        faults.push(format!(
            "torn: not JSON ({} bytes, fails at byte {at}: ...{}...)",
            raw.body.len(),
            body.get(from..(at + 60).min(body.len())).unwrap_or("?")
        ));
        return faults;
    }
    // SAFETY: `root` is the live tree parsed above, deleted once.
    let model = unsafe {
        let m = cJSON_GetObjectItemCaseSensitive(root, c"model".as_ptr());
        let model = if m.is_null() || (*m).valuestring.is_null() {
            String::new()
        } else {
            CStr::from_ptr((*m).valuestring)
                .to_string_lossy()
                .into_owned()
        };
        cJSON_Delete(root);
        model
    };
    if !SETS
        .iter()
        .any(|(k, m, p)| *k == key && *m == model && *p == path)
    {
        faults.push(format!(
            "mismatched: key {key:?}, model {model:?}, path {path:?} were never set together"
        ));
    }
    faults
}

unsafe extern "C" fn no_op_tool(_args: *mut cJSON, _node: *mut AgentToolList) {}

fn tool_definition(i: usize) -> *mut cJSON {
    // Descriptions of varying length, and a schema type the writer maps.
    let def = CString::new(format!(
        r#"{{"type":"function","function":{{"name":"race_tool_{i}","description":"{}","parameters":{{"type":"object","properties":{{"x":{{"type":"double"}}}}}}}}}}"#,
        "d".repeat(i % 37)
    ))
    .unwrap();
    // SAFETY: a NUL-terminated string.
    unsafe { cJSON_Parse(def.as_ptr()) }
}

#[test]
fn chat_during_config_flips_and_tool_appends_sends_only_whole_consistent_requests() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<Vec<Raw>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let server = {
        let (seen, stop) = (seen.clone(), stop.clone());
        std::thread::spawn(move || serve(listener, seen, stop))
    };
    let sets: Vec<[CString; 3]> = SETS
        .iter()
        .map(|(k, m, p)| {
            [
                CString::new(*k).unwrap(),
                CString::new(*m).unwrap(),
                CString::new(format!("http://127.0.0.1:{port}{p}")).unwrap(),
            ]
        })
        .collect();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe {
        agent_config_set(
            sets[0][0].as_ptr(),
            sets[0][1].as_ptr(),
            sets[0][2].as_ptr(),
        )
    };
    // One attempt per call: a failure shows as a NULL, not as a retry.
    set_overrides(Overrides {
        retries: Some(0),
        timeout_ms: Some(5000),
        ..Overrides::default()
    });

    // The registry, as a C caller of chat() has it: created, a few tools,
    // the array built; no agent loop.
    assert_eq!(agent_tool_list_create(), 0);
    for i in 0..4 {
        // SAFETY: a fresh definition handed over, a no-op callback.
        let rc = unsafe { append_tool(tool_definition(i), Some(no_op_tool)) };
        assert_eq!(rc, 0);
    }
    assert!(!build_tools_json().is_null());

    let done = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (done, sets) = (done.clone(), sets.clone());
        std::thread::spawn(move || {
            let mut flips = 0usize;
            while !done.load(Ordering::SeqCst) {
                let [k, m, u] = &sets[flips % 2];
                // SAFETY: NUL-terminated strings that outlive the call.
                unsafe { agent_config_set(k.as_ptr(), m.as_ptr(), u.as_ptr()) };
                flips += 1;
                if flips % 8 == 0 {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
            flips
        })
    };
    // Appends while the chats run, kept a few tools per chat ahead of them
    // so that every request meets appends and the body stays small.
    let chats_started = Arc::new(AtomicUsize::new(0));
    let appended = Arc::new(AtomicUsize::new(0));
    let appender = {
        let (done, appended, started) = (done.clone(), appended.clone(), chats_started.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !done.load(Ordering::SeqCst) {
                if n < 3 * (started.load(Ordering::SeqCst) + 1) {
                    // SAFETY: a fresh definition handed over, a no-op callback.
                    let rc = unsafe { append_tool(tool_definition(4 + n), Some(no_op_tool)) };
                    assert_eq!(rc, 0);
                    n += 1;
                    appended.store(n, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };

    let messages = CString::new(r#"[{"role":"user","content":"hello"}]"#).unwrap();
    // SAFETY: a NUL-terminated string.
    let messages = unsafe { cJSON_Parse(messages.as_ptr()) };
    let started = Instant::now();
    let mut failed = Vec::new();
    for i in 0..CHATS {
        chats_started.store(i, Ordering::SeqCst);
        // SAFETY: the registry's array (live until agent_tool_list_destroy
        // below) and a tree parsed above, borrowed for the call; no callbacks.
        let resp = unsafe { chat(messages, get_agent_tools(), 0, None, None, None) };
        if resp.is_null() {
            // SAFETY: a NUL-terminated static string.
            failed.push(
                unsafe { CStr::from_ptr(agent_chat_last_error()) }
                    .to_string_lossy()
                    .into_owned(),
            );
        } else {
            // SAFETY: a response from chat(), freed once.
            unsafe { chat_response_free(resp) };
        }
    }
    let elapsed = started.elapsed();
    done.store(true, Ordering::SeqCst);
    let flips = flipper.join().unwrap();
    appender.join().unwrap();
    stop.store(true, Ordering::SeqCst);
    let _ = TcpStream::connect(("127.0.0.1", port));
    server.join().unwrap();
    // SAFETY: the tree parsed above; nothing uses the registry any more.
    unsafe { cJSON_Delete(messages) };
    agent_tool_list_destroy();
    set_overrides(Overrides::default());

    let seen = seen.lock().unwrap();
    let (mut torn, mut mismatched, mut examples) = (0, 0, Vec::new());
    for raw in seen.iter() {
        let faults = check(raw);
        torn += faults
            .iter()
            .filter(|f| f.starts_with("torn"))
            .count()
            .min(1);
        mismatched += faults
            .iter()
            .filter(|f| f.starts_with("mismatched"))
            .count();
        if !faults.is_empty() && examples.len() < 5 {
            examples.push(faults.join("; "));
        }
    }
    let summary = format!(
        "{CHATS} chat() calls in {elapsed:?}: {} requests received, {torn} torn, \
         {mismatched} with a key/model/URL never set together, {} failed \
         (first: {:?}); {flips} configuration flips, {} tools appended; examples: {examples:#?}",
        seen.len(),
        failed.len(),
        failed.first(),
        appended.load(Ordering::SeqCst),
    );
    eprintln!("{summary}");
    assert!(
        torn == 0 && mismatched == 0 && failed.is_empty() && seen.len() == CHATS,
        "{summary}"
    );
    assert!(
        flips > CHATS && appended.load(Ordering::SeqCst) > 50,
        "too little contention: {summary}"
    );
}
