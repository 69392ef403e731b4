//! Arbitrary bytes as the server's whole HTTP response (status line,
//! headers, chunked / Content-Length / close-delimited body), through the
//! real path: `chat()` (the C export) posts its request with the host
//! webclient over a loopback TCP socket to a server that reads the request
//! and answers with exactly those bytes, then closes; the transport reads the
//! head and the body, and `chat()` builds its response from the stream.
//!
//! Must hold for every input: no panic, no hang; a response is complete and
//! within the caps (or `chat()` returns NULL with a reason); the text the
//! callbacks streamed is the response's; the API key never reaches the log;
//! and the heap's `used` is back at its value from before the call.
//!
//! Input layout: byte 0 picks the caps (bit 0: small caps that hit every
//! limit path); the rest is the response, byte for byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtt_agent::cjson::sys::*;
use rtt_agent::runtime::chat::{
    agent_chat_last_error, chat, chat_response_free, set_overrides, Overrides,
};
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent::host::{console, heap};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

const KEY: &str = "sk-fuzz-secret-0123";
/// As in `src/ffi/chat.rs`.
const MAX_TOOL_CALLS: usize = 32;
/// Room for the note appended to an answer cut at the content cap.
const CUT_NOTE_ROOM: usize = 64;

#[derive(Clone, Copy)]
struct Caps {
    content: usize,
    reasoning: usize,
    tool_args: usize,
    token: usize,
}

const GENEROUS: Caps = Caps {
    content: 64 * 1024,
    reasoning: 64 * 1024,
    tool_args: 64 * 1024,
    token: 1024,
};

const SMALL: Caps = Caps {
    content: 7,
    reasoning: 5,
    tool_args: 6,
    token: 4,
};

/// The response the server sends to the next connection.
static RESPONSE: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// The loopback server: one connection at a time, answered with RESPONSE.
fn server() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("the port");
        // Unnamed: std would copy a name onto the heap before the thread
        // can leave the heap's figures. Started before any measurement: by
        // the time it says it runs, std has freed what it handed over.
        let (ready, running) = std::sync::mpsc::sync_channel(0);
        std::thread::spawn(move || {
            heap::exclude_this_thread(true);
            let _ = ready.send(());
            for conn in listener.incoming().flatten() {
                serve(conn);
            }
        });
        running.recv().expect("the server thread runs");
        addr
    })
}

/// Read the request (head, then Content-Length bytes of body), answer with
/// RESPONSE, close our side and swallow what the client still sends (so
/// the kernel sends no reset that could destroy unread response bytes).
fn serve(mut conn: TcpStream) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = conn.set_nodelay(true);
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match conn.read(&mut buf) {
            Ok(n) if n > 0 && got.len() < 1 << 20 => got.extend_from_slice(&buf[..n]),
            _ => return,
        }
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while got.len() < head_end + length {
        match conn.read(&mut buf) {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => return,
        }
    }
    let response = RESPONSE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let _ = conn.write_all(&response);
    let _ = conn.shutdown(Shutdown::Write);
    let _ = conn.set_read_timeout(Some(Duration::from_millis(200)));
    while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
}

thread_local! {
    /// What the callbacks received during the current call.
    static STREAMED: RefCell<(Vec<u8>, Vec<u8>, usize)> = const { RefCell::new((Vec::new(), Vec::new(), 0)) };
}

/// A callback's text: NUL-terminated, 1..=127 bytes, whole UTF-8.
///
/// # Safety
/// `text` is a NUL-terminated string.
unsafe fn piece<'a>(text: *const c_char) -> &'a [u8] {
    assert!(!text.is_null());
    // SAFETY: the caller's contract.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    // Never an empty piece: NULs are left out of the text, as in the response.
    assert!(!bytes.is_empty());
    assert!(bytes.len() <= 127, "{}", bytes.len());
    assert!(
        std::str::from_utf8(bytes).is_ok(),
        "a piece cut inside a character"
    );
    bytes
}

unsafe extern "C" fn on_reasoning(text: *const c_char) {
    // SAFETY: chat() passes NUL-terminated pieces.
    let bytes = unsafe { piece(text) };
    STREAMED.with(|s| s.borrow_mut().0.extend_from_slice(bytes));
}

unsafe extern "C" fn on_content(text: *const c_char) {
    // SAFETY: chat() passes NUL-terminated pieces.
    let bytes = unsafe { piece(text) };
    STREAMED.with(|s| s.borrow_mut().1.extend_from_slice(bytes));
}

unsafe extern "C" fn on_tool_call(text: *const c_char) {
    assert!(!text.is_null());
    // SAFETY: chat() passes a NUL-terminated JSON text of one call.
    let tree = unsafe { cJSON_Parse(text) };
    assert!(!tree.is_null(), "on_tool_call got text that is not JSON");
    // SAFETY: the tree parsed just above, deleted once.
    unsafe { cJSON_Delete(tree) };
    STREAMED.with(|s| s.borrow_mut().2 += 1);
}

fn setup() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let url = CString::new(format!("http://{}/v1/chat/completions", server())).unwrap();
        let key = CString::new(KEY).unwrap();
        // SAFETY: NUL-terminated strings that outlive the call (it copies).
        unsafe { agent_config_set(key.as_ptr(), c"fuzz-model".as_ptr(), url.as_ptr()) };
        // Logs go to the capture buffer (checked for the key), not stdout.
        console::rt_host_console_capture(1);
        // One answered request first: one-time allocations (lazy statics)
        // are made before any input is measured.
        let body = b"data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n";
        let mut warm_up = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        warm_up.extend_from_slice(body);
        *RESPONSE.lock().unwrap_or_else(|e| e.into_inner()) = warm_up;
        // SAFETY: a NUL-terminated literal.
        let messages = unsafe { cJSON_Parse(c"[{\"role\":\"user\",\"content\":\"hi\"}]".as_ptr()) };
        // SAFETY: the tree just parsed, borrowed for the call; no callbacks.
        let resp = unsafe { chat(messages, std::ptr::null_mut(), 0, None, None, None) };
        assert!(!resp.is_null(), "the warm-up request failed");
        // SAFETY: the response and tree of this block, each freed once.
        unsafe {
            chat_response_free(resp);
            cJSON_Delete(messages);
        }
        let _ = console::take_captured();
    });
}

/// A string member of a cJSON object, if it is one.
///
/// # Safety
/// `obj` is NULL or a live cJSON item.
unsafe fn string_of<'a>(obj: *const cJSON, key: &CStr) -> Option<&'a [u8]> {
    // SAFETY: `obj` is NULL or live (our contract); cJSON accepts NULL.
    unsafe {
        let item = cJSON_GetObjectItemCaseSensitive(obj, key.as_ptr());
        if item.is_null() || (*item).valuestring.is_null() {
            None
        } else {
            Some(CStr::from_ptr((*item).valuestring).to_bytes())
        }
    }
}

fn has_key(text: &[u8]) -> bool {
    text.windows(KEY.len()).any(|w| w == KEY.as_bytes())
}

/// Check a response chat() returned, against the caps and what streamed.
///
/// # Safety
/// `resp` is a live response from chat().
unsafe fn check_response(
    resp: *const rtt_agent::runtime::chat::ChatResponse,
    caps: Caps,
) {
    // SAFETY: a live response (our contract): its strings are NUL-terminated
    // and `tool_call` a live array, all only read here.
    unsafe {
        let r = &*resp;
        assert!(!r.reasoning.is_null() && !r.context.is_null() && !r.tool_call.is_null());
        let reasoning = CStr::from_ptr(r.reasoning).to_bytes();
        let content = CStr::from_ptr(r.context).to_bytes();
        assert!(reasoning.len() <= caps.reasoning);
        assert!(content.len() <= caps.content + CUT_NOTE_ROOM);
        // NULs are left out of both, so they agree whatever the input.
        STREAMED.with(|s| {
            let s = s.borrow();
            assert_eq!(
                s.0, reasoning,
                "streamed reasoning differs from the response's"
            );
            assert!(
                content.starts_with(&s.1),
                "streamed content differs from the response's"
            );
        });
        assert!(rtt_agent::cjson::json::is_array(r.tool_call));
        let n = cJSON_GetArraySize(r.tool_call) as usize;
        assert!(n <= MAX_TOOL_CALLS);
        STREAMED.with(|s| assert!(s.borrow().2 <= n));
        let mut ids: Vec<&[u8]> = Vec::new();
        for i in 0..n {
            let call = cJSON_GetArrayItem(r.tool_call, i as i32);
            let id = string_of(call, c"id").expect("a call without an id");
            assert!(
                !id.is_empty() && !ids.contains(&id),
                "duplicate or empty id"
            );
            ids.push(id);
            let f = cJSON_GetObjectItemCaseSensitive(call, c"function".as_ptr());
            assert!(string_of(f, c"name").is_some(), "a call without a name");
            let args = string_of(f, c"arguments").expect("a call without arguments");
            assert!(args.len() <= caps.tool_args);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, response)) = data.split_first() else {
        return;
    };
    setup();
    let caps = if mode & 1 == 1 { SMALL } else { GENEROUS };
    set_overrides(Overrides {
        max_content: Some(caps.content),
        max_reasoning: Some(caps.reasoning),
        max_tool_args: Some(caps.tool_args),
        max_token: Some(caps.token),
        timeout_ms: Some(2000),
        // Bounds each input as a whole (a drip in the input is not a hang).
        request_timeout_ms: Some(3000),
        // One connection per input; retried paths are the transport
        // tests' business.
        retries: Some(0),
        retry_base_ms: Some(1),
    });
    {
        let mut r = RESPONSE.lock().unwrap_or_else(|e| e.into_inner());
        r.clear();
        r.extend_from_slice(response);
    }

    let before = heap::used();
    let messages = {
        let json = c"[{\"role\":\"user\",\"content\":\"hi\"}]";
        // SAFETY: a NUL-terminated literal.
        unsafe { cJSON_Parse(json.as_ptr()) }
    };
    assert!(!messages.is_null());
    // SAFETY: `messages` is the tree parsed above, borrowed for the call;
    // the callbacks take NUL-terminated strings.
    let resp = unsafe {
        chat(
            messages,
            std::ptr::null_mut(),
            0,
            Some(on_reasoning),
            Some(on_tool_call),
            Some(on_content),
        )
    };
    if resp.is_null() {
        // SAFETY: a static, NUL-terminated text.
        let why = unsafe { CStr::from_ptr(agent_chat_last_error()) };
        assert!(!why.to_bytes().is_empty(), "chat() failed without a reason");
        // The server's own text may quote anything, the key included.
        if !has_key(response) {
            assert!(
                !has_key(why.to_bytes()),
                "the API key reached the error text"
            );
        }
    } else {
        // Only a 200 is an answer.
        assert!(
            response.windows(7).any(|w| w == b"HTTP/1."),
            "an answer from a response without a status line"
        );
        // SAFETY: a live response from chat(), freed right after.
        unsafe {
            check_response(resp, caps);
            chat_response_free(resp);
        }
    }
    // SAFETY: the tree parsed above, deleted once.
    unsafe { cJSON_Delete(messages) };
    STREAMED.with(|s| *s.borrow_mut() = (Vec::new(), Vec::new(), 0));
    let after = heap::used();
    assert_eq!(
        after,
        before,
        "heap used changed by {} bytes",
        after as i64 - before as i64
    );

    let log = console::take_captured();
    if !has_key(response) {
        assert!(!has_key(log.as_bytes()), "the API key reached the log");
    }
});
