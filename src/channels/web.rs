//! The WebNet channel (`channels/AgentWebChannel.h`, `PKG_AGENT_WEBNET_CHANNEL`):
//! the board's WebNet server gets the CGI handlers of the C package —
//! `chat`, `config`, `get_config` — and `cleanup` and `agent` (the page),
//! under `/cgi-bin/`.
//!
//! What differs from the C package (the request and response shapes do not):
//! - `POST /cgi-bin/chat` with `"stream": true` streams: each fragment of the
//!   answer is a `delta` event as it arrives, reasoning a `reasoning` event,
//!   each tool call a `tool_call` and each tool's result a `tool_result`
//!   event, then `final` (the whole reply) and `done`;
//! - `config` and `get_config` need the token `PKG_AGENT_WEB_TOKEN` (or one
//!   set at run time: `agent_config web-token`, `agent_token_set`; none:
//!   both are refused), and `get_config` shows the key masked;
//! - `chat` and `cleanup` need the same token (`"token"` in the body) when
//!   one is set; without one they are refused unless
//!   `PKG_AGENT_WEB_OPEN_CHAT` opens them (trusted networks only);
//! - after 5 wrong tokens in 60 s from one address, every request that
//!   needs the token gets 429 with `Retry-After` until the window passes
//!   (the table shared with the MCP server: [`crate::net::token_limit`]);
//! - the conversation is cleared by the loop between messages (`reset`,
//!   `cleanup`, a new configuration), never from WebNet's thread while the
//!   loop uses it;
//! - errors are JSON with an HTTP status that says what was wrong.
//!
//! WebNet runs every handler on its one thread, so requests are answered one
//! after the other; replies are matched to requests by the exchange, so a
//! request that timed out never takes a later one's reply. The C half
//! (`glue/agent_webnet.c`) reads WebNet's structures for this module and
//! registers the handlers; WebNet itself (GPL-2.0) is only called.

pub use super::exchange::set_reply_timeout_ms;
use super::exchange::{reply_timeout_ms, Exchange, SendError, Waiting};
use crate::abi::messages::TYPE_TEXT;
use crate::base::json_writer::{write_string, ByteCounter, ByteSink, WriteError};
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::ffi_fn;
use crate::rtt::name::ObjectName;
use crate::rtt::sleep_cell::SleepCell;
use crate::rtt::*;
use crate::runtime::agent_loop::{
    request_conversation_reset, set_stream_hooks, AgentChannelOps, StreamHooks,
};
use crate::runtime::config::{agent_config_set, masked_key, snapshot};
use crate::runtime::context::Context_t;
use crate::runtime::hub::MessageHub_t;
use crate::runtime::settings::web::{base_token, open_chat_allowed};
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, CStr};

pub use crate::rtt::glue::WebSession;

// Which CGI a request came to, and the methods told apart (agent_glue.h).
const CHAT: c_int = 0;
const CONFIG: c_int = 1;
const GET_CONFIG: c_int = 2;
const CLEANUP: c_int = 3;
const PAGE: c_int = 4;
const GET: c_int = 1;
const POST: c_int = 2;

/// The C package's limits for a chat and a config body.
const CHAT_BODY_MAX: usize = 4096;
const CONFIG_BODY_MAX: usize = 2048;
/// Events waiting for WebNet's thread to send them; past this, fragments are
/// dropped (the `final` event still carries the whole reply).
const STREAM_CAP: usize = 8192;
/// How often a streaming request sends what has arrived.
const STREAM_POLL_MS: u32 = 50;

/// The page (`web/agent.html`, gzipped by build.rs), served from flash by
/// `GET /cgi-bin/agent`. A named static (not a bare constant), so the size
/// report can find it.
static PAGE_GZ: [u8; include_bytes!(concat!(env!("OUT_DIR"), "/agent.html.gz")).len()] =
    *include_bytes!(concat!(env!("OUT_DIR"), "/agent.html.gz"));

use crate::rtt::glue::{
    agent_glue_web_body, agent_glue_web_header, agent_glue_web_linger, agent_glue_web_method,
    agent_glue_web_peer, agent_glue_web_port, agent_glue_web_query, agent_glue_web_recv,
    agent_glue_web_start, agent_glue_web_unread, agent_glue_web_write,
};

static CHANNEL: Exchange = Exchange::closed();

/// The events of the turn a streaming request waits for, from the loop's
/// hooks to WebNet's thread.
struct StreamState {
    /// A streaming request is waiting: the hooks queue events.
    active: bool,
    /// SSE bytes not sent yet.
    pending: Vec<u8>,
}

impl StreamState {
    /// No request waits any more: events are not queued, the queue freed.
    fn end(&mut self) {
        self.active = false;
        self.pending = Vec::new();
    }
}

static STREAM: SleepCell<StreamState> = SleepCell::new(StreamState {
    active: false,
    pending: Vec::new(),
});

const WEB_HOOKS: StreamHooks = StreamHooks {
    on_reasoning: Some(hook_reasoning),
    on_tool_call: Some(hook_tool_call),
    on_context: Some(hook_delta),
    on_tool_result: Some(hook_tool_result),
};

/// Queue one SSE event while a streaming request waits; dropped when the
/// queue is full or there is no memory.
fn queue_event(event: &[u8], text: *const c_char) {
    if text.is_null() {
        return;
    }
    // SAFETY: the loop passes NUL-terminated fragments, borrowed for the call.
    let text = unsafe { CStr::from_ptr(text) }.to_bytes();
    STREAM.with(|s| {
        if !s.active || s.pending.len() + text.len() + 64 > STREAM_CAP {
            return;
        }
        let mut grown = VecSink(&mut s.pending);
        let mark = grown.0.len();
        if write_event(&mut grown, event, text).is_err() {
            s.pending.truncate(mark);
        }
    });
}

unsafe extern "C" fn hook_delta(text: *const c_char) {
    ffi_fn!(failure = (), { queue_event(b"delta", text) })
}
unsafe extern "C" fn hook_reasoning(text: *const c_char) {
    ffi_fn!(failure = (), { queue_event(b"reasoning", text) })
}
unsafe extern "C" fn hook_tool_call(text: *const c_char) {
    ffi_fn!(failure = (), {
        // SAFETY: forwarded as received: NUL-terminated, borrowed.
        unsafe { crate::runtime::utils::print_tool_call(text) };
        queue_event(b"tool_call", text)
    })
}
unsafe extern "C" fn hook_tool_result(text: *const c_char) {
    ffi_fn!(failure = (), { queue_event(b"tool_result", text) })
}

#[no_mangle]
pub static mut agent_webnet_ops: AgentChannelOps = AgentChannelOps {
    init: Some(agent_webnet_init),
    reset: Some(agent_webnet_reset_c),
};

unsafe extern "C" fn agent_webnet_init(hub: MessageHub_t, ctx: Context_t) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: the channel framework passes NULL or its live hub and
        // context, the contract `webnet_agent_mode` documents.
        unsafe { webnet_agent_mode(hub, ctx) };
        if CHANNEL.is_open() {
            0
        } else {
            -1
        }
    })
}

/// The WebNet channel next to the chosen one
/// (`PKG_AGENT_ALSO_WEBNET_CHANNEL`): the page's chats get their replies
/// through a route of their own, and only their turns stream to the page.
#[no_mangle]
pub static agent_webnet_extra_ops: AgentChannelOps = AgentChannelOps {
    init: Some(agent_webnet_extra_init),
    reset: Some(agent_webnet_reset_c),
};

unsafe extern "C" fn agent_webnet_extra_init(hub: MessageHub_t, _ctx: Context_t) -> c_int {
    ffi_fn!(failure = -1, {
        let names = (
            ObjectName::new(c"AgentWeb", c"AgWeb"),
            ObjectName::new(c"AgentWebR", c"AgWeR"),
        );
        // SAFETY: the channel framework's NULL or live hub, which outlives
        // the channel (the agent resets its channels before freeing it).
        let opened = unsafe { CHANNEL.open_extra(hub, names, &WEB_HOOKS, "WebNet channel") };
        if opened == 0 {
            start_serving();
        }
        opened
    })
}

unsafe extern "C" fn agent_webnet_reset_c() {
    ffi_fn!(failure = (), { agent_webnet_reset() })
}

/// Serve the agent through WebNet: register the CGI handlers and start
/// WebNet (once: WebNet cannot be stopped), and take requests for `hub`.
/// The context is not needed (the loop owns it). Logs the page's address.
pub unsafe fn webnet_agent_mode(hub: MessageHub_t, _ctx: Context_t) {
    if hub.is_null() {
        return;
    }
    // SAFETY: the channel framework's live hub, which outlives the
    // channel (the agent resets it before freeing the hub).
    if unsafe { CHANNEL.open(hub, ObjectName::new(c"AgentWeb", c"AgWeb")) }.is_err() {
        crate::log_e!("WebNet channel: no memory to open");
        return;
    }
    set_stream_hooks(Some(&WEB_HOOKS));
    start_serving();
}

/// Register the CGI handlers and start WebNet (once: WebNet cannot be
/// stopped); log the page's address.
fn start_serving() {
    crate::runtime::config::tokens::warn_if_ignored(
        crate::runtime::config::tokens::Which::Web,
        base_token().to_bytes(),
        "WebNet channel: PKG_AGENT_WEB_TOKEN",
    );
    // SAFETY: registers static handlers and starts WebNet's thread.
    if unsafe { agent_glue_web_start() } != 0 {
        crate::log_e!("WebNet channel: webnet_init failed (no memory or no socket?)");
    }
    // SAFETY: a plain getter.
    let port = unsafe { agent_glue_web_port() }.max(0) as u32;
    crate::log_i!(
        "WebNet channel: open http://<board address>:",
        port,
        "/cgi-bin/agent"
    );
}

/// Stop taking requests (WebNet keeps running and answers 503); waits until
/// no handler uses the hub any more. Idempotent.
pub fn agent_webnet_reset() {
    // The chosen channel set the loop's hooks to the page's; as an extra
    // channel it did not, and must not reset the chosen one's.
    let chosen = CHANNEL.is_open() && !CHANNEL.is_routed();
    CHANNEL.close();
    if chosen {
        set_stream_hooks(None);
    }
    STREAM.with(StreamState::end);
}

/// A [`ByteSink`] into a growing vector (fallible).
struct VecSink<'a>(&'a mut Vec<u8>);

impl ByteSink for VecSink<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        crate::base::fallible::extend(self.0, bytes).map_err(|_| WriteError::NoMemory)
    }
}

/// Writes to the session in WebNet writes of up to 256 bytes.
struct SessionSink {
    session: *mut WebSession,
    buf: [u8; 256],
    len: usize,
}

impl SessionSink {
    fn new(session: *mut WebSession) -> Self {
        SessionSink {
            session,
            buf: [0; 256],
            len: 0,
        }
    }
    fn flush(&mut self) {
        if self.len > 0 {
            // SAFETY: the live session of the handler that made this sink;
            // the bytes are borrowed for the call.
            unsafe {
                agent_glue_web_write(
                    self.session,
                    self.buf.as_ptr() as *const c_char,
                    self.len as rt_size_t,
                )
            };
            self.len = 0;
        }
    }
}

impl ByteSink for SessionSink {
    fn put(&mut self, mut bytes: &[u8]) -> Result<(), WriteError> {
        while !bytes.is_empty() {
            if self.len == self.buf.len() {
                self.flush();
            }
            let free = self.buf.get_mut(self.len..).unwrap_or_default();
            let n = crate::base::text::copy_prefix(free, bytes);
            self.len += n;
            bytes = bytes.get(n..).unwrap_or_default();
        }
        Ok(())
    }
}

/// One SSE event: `event: <name>`, a `data:` line per line of `text`, a
/// blank line (the C package's framing, which its page parses).
fn write_event(out: &mut dyn ByteSink, event: &[u8], text: &[u8]) -> Result<(), WriteError> {
    out.put(b"event: ")?;
    out.put(event)?;
    out.put(b"\n")?;
    for line in text.split(|&b| b == b'\n') {
        out.put(b"data: ")?;
        out.put(crate::base::text::strip_last(line, b'\r'))?;
        out.put(b"\n")?;
    }
    out.put(b"\n")
}

/// The last two events of a stream: `event` with `text`, then `done`.
fn last_events(session: *mut WebSession, event: &[u8], text: &[u8]) {
    let mut out = SessionSink::new(session);
    let _ = write_event(&mut out, event, text);
    let _ = write_event(&mut out, b"done", b"[DONE]");
    out.flush();
}

/// A JSON object of `(key, value)` string members plus `"success"`.
fn write_object(
    out: &mut dyn ByteSink,
    success: bool,
    members: &[(&[u8], &[u8])],
) -> Result<(), WriteError> {
    out.put(if success {
        b"{\"success\":true"
    } else {
        b"{\"success\":false"
    })?;
    for (key, value) in members {
        out.put(b",")?;
        write_string(key, out)?;
        out.put(b":")?;
        write_string(value, out)?;
    }
    out.put(b"}")
}

fn reason(code: c_int) -> &'static CStr {
    match code {
        200 => c"OK",
        400 => c"Bad Request",
        403 => c"Forbidden",
        405 => c"Method Not Allowed",
        413 => c"Payload Too Large",
        429 => c"Too Many Requests",
        500 => c"Internal Server Error",
        502 => c"Bad Gateway",
        503 => c"Service Unavailable",
        _ => c"Gateway Timeout",
    }
}

/// Answer with a JSON object (its length counted first, then written).
fn respond(session: *mut WebSession, code: c_int, success: bool, members: &[(&[u8], &[u8])]) {
    let mut counter = ByteCounter::default();
    let _ = write_object(&mut counter, success, members);
    // SAFETY: the live session of this handler; static strings.
    unsafe {
        agent_glue_web_header(
            session,
            c"application/json".as_ptr(),
            code,
            reason(code).as_ptr(),
            counter.0.min(c_int::MAX as usize) as c_int,
        )
    };
    let mut out = SessionSink::new(session);
    let _ = write_object(&mut out, success, members);
    out.flush();
}

fn fail(session: *mut WebSession, code: c_int, why: &str) {
    respond(session, code, false, &[(b"error", why.as_bytes())]);
}

/// [`fail`] with a reason made of `parts` (its first 96 bytes).
fn fail_with(session: *mut WebSession, code: c_int, parts: &[&[u8]]) {
    let mut why = [0u8; 96];
    let mut n = 0;
    for &b in parts.iter().flat_map(|p| p.iter()) {
        if let Some(slot) = why.get_mut(n) {
            *slot = b;
            n += 1;
        }
    }
    fail(
        session,
        code,
        crate::base::text::utf8_prefix(why.get(..n).unwrap_or_default()),
    );
}

/// WebNet's CGI entry (from the glue): `endpoint` says which handler.
pub unsafe fn agent_web_cgi(session: *mut WebSession, endpoint: c_int) {
    if session.is_null() {
        return;
    }
    // SAFETY: a plain getter on the live session WebNet passed.
    let method = unsafe { agent_glue_web_method(session) };
    match endpoint {
        PAGE => page(session, method),
        CHAT => chat(session, method),
        CONFIG => config(session, method),
        GET_CONFIG => get_config(session, method),
        CLEANUP => cleanup(session, method),
        _ => fail(session, 500, "unknown endpoint"),
    }
    linger(session);
}

/// WebNet closes the connection when the handler returns, and reads a
/// body before it only when the body is under 8 KB and not multipart: one
/// it left unread (answered 413, or 400 as no JSON body) would make that
/// close a reset, which can cost the client the answer. So first the
/// lingering close of [`crate::wire::http_drain`]: the answer and the end
/// of the stream go out, then the body is read and dropped (at most
/// [`drain::DRAIN_MAX`] bytes, within [`drain::LINGER_MS`], on WebNet's
/// thread, which answers no other session meanwhile).
fn linger(session: *mut WebSession) {
    use crate::wire::deadline::Deadline;
    use crate::wire::http_drain::{self as drain, Unread};
    // SAFETY: a plain getter on the live session.
    let unread = unsafe { agent_glue_web_unread(session) }.max(0) as usize;
    let budget = drain::budget(Unread::Bytes(unread), drain::DRAIN_MAX);
    if budget == 0 {
        return;
    }
    // SAFETY: the live session's socket, which WebNet closes after us.
    unsafe { agent_glue_web_linger(session, drain::LINGER_POLL_MS as c_int) };
    let now = || {
        // SAFETY: only reads the tick counter.
        unsafe { rt_tick_get() }
    };
    let hz = board().tick_per_second.clamp(1, 1_000_000) as u32;
    let deadline = Deadline::new(now(), drain::LINGER_MS, hz);
    drain::drain(budget, |scrap| {
        while !deadline.expired(now()) {
            let len = scrap.len().min(c_int::MAX as usize) as c_int;
            // SAFETY: the live session; `scrap` is writable for `len` bytes.
            let n = unsafe { agent_glue_web_recv(session, scrap.as_mut_ptr().cast(), len) };
            if n > 0 {
                return Some(n as usize);
            }
            if n == 0 {
                return None;
            }
        }
        None
    });
}

fn page(session: *mut WebSession, method: c_int) {
    if method != GET {
        return fail(session, 405, "use GET");
    }
    // The head is written here, not by webnet_session_set_header, which has
    // no way to add Content-Encoding.
    let mut len = [0u8; 20];
    let mut out = SessionSink::new(session);
    for part in [
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\nContent-Length: "[..],
        crate::base::text::decimal(PAGE_GZ.len() as u64, &mut len),
        b"\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    ] {
        let _ = out.put(part);
    }
    out.flush();
    // SAFETY: the live session; the page is static.
    unsafe {
        agent_glue_web_write(
            session,
            PAGE_GZ.as_ptr() as *const c_char,
            PAGE_GZ.len() as rt_size_t,
        )
    };
}

/// A parsed JSON body (an object), deleted when dropped.
struct Body(json::Json);

impl Body {
    fn get(&self, key: &CStr) -> *mut cJSON {
        // SAFETY: a live tree (owned by self); a read-only lookup.
        unsafe { json::get(self.0.as_ptr(), key) }
    }
    /// A member that is a string.
    fn text(&self, key: &CStr) -> Option<&CStr> {
        // SAFETY: as above; the string lives as long as the tree.
        unsafe { json::get_str(self.0.as_ptr(), key) }
    }
    /// The C package's truth: `true`, a non-zero number, or "true"/"TRUE"/"1".
    fn flag(&self, key: &CStr) -> bool {
        let item = self.get(key);
        if item.is_null() {
            return false;
        }
        // SAFETY: `item` is a live member of the tree.
        let kind = unsafe { (*item).type_ } & 0xFF;
        if kind == cJSON_True {
            return true;
        }
        if kind == cJSON_Number {
            // SAFETY: as above; a number's value.
            return unsafe { (*item).valueint } != 0;
        }
        matches!(
            self.text(key).map(CStr::to_bytes),
            Some(b"true" | b"TRUE" | b"1")
        )
    }
}

/// The request's JSON object body, or the error answered.
fn json_body(session: *mut WebSession, limit: usize) -> Option<Body> {
    let mut declared: c_int = 0;
    // SAFETY: the live session; `declared` is a local the glue writes.
    let body = unsafe { agent_glue_web_body(session, &mut declared) };
    let declared = declared.max(0) as usize;
    if declared > limit {
        let mut at_most = [0u8; 20];
        fail_with(
            session,
            413,
            &[
                b"the request body is too long (at most ",
                crate::base::text::decimal(limit as u64, &mut at_most),
                b" bytes)",
            ],
        );
        return None;
    }
    if body.is_null() || declared == 0 {
        fail(
            session,
            400,
            "a JSON object is required as the request body",
        );
        return None;
    }
    // SAFETY: WebNet's body: `declared` bytes and a NUL (the glue's
    // contract); the tree parsed is NULL or new, owned here.
    let tree = unsafe { json::Json::from_raw(cJSON_Parse(body)) };
    // SAFETY: `tree` is NULL or a tree just parsed, owned here.
    if tree.is_null() || unsafe { (*tree.as_ptr()).type_ } & 0xFF != cJSON_Object {
        if !tree.is_null() {
            drop(tree);
            fail(session, 400, "the request body is not a JSON object");
        } else {
            fail(session, 400, "the request body is not valid JSON");
        }
        return None;
    }
    Some(Body(tree))
}

/// What a streaming request does while the loop works: send events as they
/// come, then the reply.
struct Streaming {
    session: *mut WebSession,
    /// The event stream's head was sent (errors are events from then on).
    started: bool,
}

impl Streaming {
    fn send_pending(&mut self) {
        let pending = STREAM.with(|s| core::mem::take(&mut s.pending));
        if !pending.is_empty() {
            // SAFETY: the live session of this handler; the bytes are
            // borrowed for the call.
            unsafe {
                agent_glue_web_write(
                    self.session,
                    pending.as_ptr() as *const c_char,
                    pending.len() as rt_size_t,
                )
            };
        }
    }
}

impl Waiting for Streaming {
    fn exclusive(&self) -> bool {
        true
    }
    fn before_send(&mut self) {
        // SAFETY: the live session; static strings. Without a length WebNet
        // marks the response "Connection: close": the stream ends with it.
        unsafe {
            agent_glue_web_header(
                self.session,
                c"text/event-stream".as_ptr(),
                200,
                c"OK".as_ptr(),
                -1,
            )
        };
        let hello = b":rt-thread-stream\n\n";
        // SAFETY: as above; the bytes are static.
        unsafe {
            agent_glue_web_write(
                self.session,
                hello.as_ptr() as *const c_char,
                hello.len() as rt_size_t,
            )
        };
        self.started = true;
        STREAM.with(|s| s.active = true);
    }
    fn tick(&mut self) {
        self.send_pending();
    }
    fn reply(&mut self, text: &[u8]) {
        STREAM.with(|s| s.active = false);
        self.send_pending();
        last_events(self.session, b"final", text);
    }
}

/// Collects the reply of a request that does not stream.
struct Collect(Result<Vec<u8>, ()>);

impl Waiting for Collect {
    fn reply(&mut self, text: &[u8]) {
        self.0 = crate::base::fallible::copy_of(text).map_err(|_| ());
    }
}

fn send_error_text(e: SendError) -> (c_int, &'static str) {
    match e {
        SendError::NotRunning => (
            503,
            "the agent is not running (start it with main_loop_entry)",
        ),
        SendError::Stopped => (503, "the agent stopped before answering"),
        SendError::NoMemory => (500, "out of memory"),
        SendError::Full => (503, "the agent is busy (its input mailbox is full)"),
        SendError::Timeout => (504, "no reply in time (PKG_AGENT_REPLY_TIMEOUT_MS)"),
        SendError::Busy => (
            503,
            "busy: the agent is still answering an earlier message; try again shortly",
        ),
    }
}

fn chat(session: *mut WebSession, method: c_int) {
    if method != POST {
        return fail(session, 405, "use POST with a JSON body");
    }
    let Some(body) = json_body(session, CHAT_BODY_MAX) else {
        return;
    };
    if !chat_authorized(session, body.text(c"token")) {
        return;
    }
    if !CHANNEL.is_open() {
        return fail(session, 503, send_error_text(SendError::NotRunning).1);
    }
    if body.flag(c"reset") {
        request_conversation_reset();
        return respond(
            session,
            200,
            true,
            &[(b"response", b"Conversation reset successfully")],
        );
    }
    let message = match body.text(c"message") {
        None => return fail(session, 400, "message must be a string"),
        Some(m) if m.is_empty() => return fail(session, 400, "message cannot be empty"),
        Some(m) => m,
    };
    let timeout = reply_timeout_ms();
    let content = message.to_bytes_with_nul();
    if body.flag(c"stream") {
        let mut streaming = Streaming {
            session,
            started: false,
        };
        let sent = CHANNEL.send(TYPE_TEXT, content, timeout, STREAM_POLL_MS, &mut streaming);
        STREAM.with(StreamState::end);
        match sent {
            Err(e) if streaming.started => {
                last_events(session, b"error", send_error_text(e).1.as_bytes())
            }
            Err(e) => {
                let (code, why) = send_error_text(e);
                fail(session, code, why)
            }
            Ok(()) => {}
        }
        return;
    }
    let mut collect = Collect(Err(()));
    match CHANNEL.send(TYPE_TEXT, content, timeout, timeout, &mut collect) {
        Err(e) => {
            let (code, why) = send_error_text(e);
            fail(session, code, why)
        }
        Ok(()) => match &collect.0 {
            Ok(text) => respond(session, 200, true, &[(b"response", text)]),
            Err(()) => fail(session, 500, "out of memory for the reply"),
        },
    }
}

/// The check of a request that needs the token: `Ok` (through), `Err(None)`
/// when there is no token (the caller decides), or the refusal answered.
fn token_check(session: *mut WebSession, given: Option<&CStr>) -> Result<(), Option<()>> {
    use crate::net::token_limit::{gate, Outcome, Peer};
    use crate::runtime::config::tokens::{with_token, Which};
    let mut peer = Peer::default();
    // SAFETY: the live session; 16 writable bytes.
    peer.len = unsafe { agent_glue_web_peer(session, peer.addr.as_mut_ptr()) }.clamp(0, 16) as u8;
    let given = given.map_or(&b""[..], CStr::to_bytes);
    let outcome = with_token(Which::Web, base_token().to_bytes(), |token| {
        (!token.is_empty()).then(|| gate(&peer, given, token, "WebNet channel"))
    });
    match outcome {
        None => Err(None),
        Some(Outcome::Pass) => Ok(()),
        // Not 401: WebNet adds "WWW-Authenticate: Basic" to every 401, and
        // a browser would then ask for a user name and password.
        Some(Outcome::Wrong) => {
            fail(session, 403, "a valid token is required");
            Err(Some(()))
        }
        Some(Outcome::Blocked { retry_after_s }) => {
            too_many(session, retry_after_s);
            Err(Some(()))
        }
    }
}

/// 429 with `Retry-After` (a head of our own: webnet_session_set_header
/// cannot add a header line, and WebNet adds no error page of its own
/// while the request's result code stays 200).
fn too_many(session: *mut WebSession, retry_after_s: u32) {
    let members: &[(&[u8], &[u8])] = &[(
        b"error",
        b"too many wrong tokens from this address; try again later",
    )];
    let mut counter = ByteCounter::default();
    let _ = write_object(&mut counter, false, members);
    let (mut len, mut after) = ([0u8; 20], [0u8; 20]);
    let mut out = SessionSink::new(session);
    for part in [
        &b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: "[..],
        crate::base::text::decimal(counter.0 as u64, &mut len),
        b"\r\nRetry-After: ",
        crate::base::text::decimal(retry_after_s as u64, &mut after),
        b"\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
    ] {
        let _ = out.put(part);
    }
    let _ = write_object(&mut out, false, members);
    out.flush();
}

/// The configuration endpoints' check: the token, compared in constant
/// time. Answers the refusal itself.
fn authorized(session: *mut WebSession, given: Option<&CStr>) -> bool {
    match token_check(session, given) {
        Ok(()) => true,
        Err(Some(())) => false,
        Err(None) => {
            fail(
                session,
                403,
                "configuration over the web is disabled: no token is set (PKG_AGENT_WEB_TOKEN, agent_config web-token)",
            );
            false
        }
    }
}

/// The chat endpoints' check: the token when one is set; without one,
/// only with PKG_AGENT_WEB_OPEN_CHAT. Answers the refusal itself.
fn chat_authorized(session: *mut WebSession, given: Option<&CStr>) -> bool {
    match token_check(session, given) {
        Ok(()) => true,
        Err(Some(())) => false,
        Err(None) if open_chat_allowed() => true,
        Err(None) => {
            fail(
                session,
                403,
                "the web chat is locked: no token is set (PKG_AGENT_WEB_TOKEN, agent_config web-token) and PKG_AGENT_WEB_OPEN_CHAT is off",
            );
            false
        }
    }
}

fn config(session: *mut WebSession, method: c_int) {
    if method != POST {
        return fail(session, 405, "use POST with a JSON body");
    }
    let Some(body) = json_body(session, CONFIG_BODY_MAX) else {
        return;
    };
    if !authorized(session, body.text(c"token")) {
        return;
    }
    let mut values: [*const c_char; 3] = [core::ptr::null(); 3];
    let keys = [c"apiKey", c"modelName", c"apiUrl"];
    for (value, key) in values.iter_mut().zip(keys) {
        if body.get(key).is_null() {
            continue;
        }
        match body.text(key) {
            Some(v) if !v.is_empty() && v.to_bytes().len() < 128 => *value = v.as_ptr(),
            _ => {
                return fail_with(
                    session,
                    400,
                    &[
                        key.to_bytes(),
                        b" must be a non-empty string of at most 127 bytes",
                    ],
                );
            }
        }
    }
    if values.iter().all(|v| v.is_null()) {
        return fail(
            session,
            400,
            "nothing to set: give apiKey, modelName or apiUrl",
        );
    }
    // SAFETY: each pointer is NULL or a string of the live body, borrowed.
    unsafe { agent_config_set(values[0], values[1], values[2]) };
    request_conversation_reset();
    respond(
        session,
        200,
        true,
        &[(b"message", b"Configuration updated successfully")],
    );
}

fn get_config(session: *mut WebSession, method: c_int) {
    let body;
    let token = match method {
        GET => {
            // SAFETY: the live session; a static name.
            let t = unsafe { agent_glue_web_query(session, c"token".as_ptr()) };
            // SAFETY: NULL or a NUL-terminated value WebNet keeps for the
            // request.
            (!t.is_null()).then(|| unsafe { CStr::from_ptr(t) })
        }
        POST => {
            let Some(b) = json_body(session, CONFIG_BODY_MAX) else {
                return;
            };
            body = b;
            body.text(c"token")
        }
        _ => return fail(session, 405, "use GET or POST"),
    };
    if !authorized(session, token) {
        return;
    }
    let Some(cfg) = snapshot() else {
        return fail(session, 500, "out of memory");
    };
    let mut masked = [0u8; 48];
    let n = masked_key(cfg.api_key().to_bytes(), &mut masked);
    respond(
        session,
        200,
        true,
        &[
            (b"apiKey", masked.get(..n).unwrap_or_default()),
            (b"modelName", cfg.model().to_bytes()),
            (b"apiUrl", cfg.url().to_bytes()),
        ],
    );
}

fn cleanup(session: *mut WebSession, method: c_int) {
    if method != POST {
        return fail(session, 405, "use POST");
    }
    // The token comes in a JSON body; with no token needed, no body is.
    let needs_token = crate::runtime::config::tokens::with_token(
        crate::runtime::config::tokens::Which::Web,
        base_token().to_bytes(),
        |t| !t.is_empty(),
    );
    let body = if needs_token {
        let Some(b) = json_body(session, CONFIG_BODY_MAX) else {
            return;
        };
        Some(b)
    } else {
        None
    };
    if !chat_authorized(session, body.as_ref().and_then(|b| b.text(c"token"))) {
        return;
    }
    if !CHANNEL.is_open() {
        return fail(session, 503, send_error_text(SendError::NotRunning).1);
    }
    request_conversation_reset();
    respond(
        session,
        200,
        true,
        &[(b"response", b"Conversation cleared")],
    );
}
