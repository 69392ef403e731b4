//! The MCP server (`PKG_AGENT_MCP_SERVER`): MCP's Streamable HTTP
//! transport on one endpoint (`PKG_AGENT_MCP_PATH`, default `/mcp`, port
//! `PKG_AGENT_MCP_PORT`), serving the agent's registered C tools.
//!
//! # Why plain sockets
//! It runs on the board's BSD sockets (SAL), which every networked
//! RT-Thread has, through the glue's `agent_mcp_socket.c`; it needs no
//! WebNet (GPL-2.0, and one thread that a streaming chat would hold).
//!
//! # Shape
//! One thread (`AgentMcp`), started with the agent and stopped before the
//! agent is torn down. It takes one connection at a time and answers one
//! request on it (`Connection: close`): every answer is a single JSON body
//! (MCP allows `application/json` for every request; there is no
//! server-to-client stream, so `GET` is 405; so is `DELETE` at 2026-07-28,
//! which has no sessions to end). A request must arrive whole
//! within [`READ_DEADLINE_MS`], so a silent client holds the server for at
//! most that long.
//!
//! # What is refused, and how
//! - a path other than the endpoint: 404;
//! - an `Origin` header not listed in `PKG_AGENT_MCP_ORIGINS` (DNS
//!   rebinding: a web page in a browser on the board's network must not
//!   reach its tools): 403;
//! - a request without `Authorization: Bearer <token>` (the token of
//!   `PKG_AGENT_MCP_TOKEN`, or set at run time: `agent_config mcp-token`,
//!   `agent_token_set`): 401; after 5 wrong tokens in 60 s from one
//!   address, every request from it: 429 with `Retry-After` until the
//!   window passes (the table shared with the WebNet channel:
//!   [`crate::net::token_limit`]);
//! - a body over `PKG_AGENT_MCP_MAX_BODY`: 413 (not kept); a body without
//!   `Content-Length`: 411; a head over [`HEAD_MAX`]: 431;
//! - JSON-RPC errors as [`super::rpc`] describes.
//!
//! An answer given before the request's end (every refusal above that is
//! decided on the head) is followed by the lingering close of
//! [`crate::wire::http_drain`]: the answer and the end of the stream go
//! out, then what is left of the request is read and dropped (bounded in
//! bytes and time) before the close, so that the close is not a reset
//! that costs the client the answer (`Retry-After` with it).
//!
//! # No token, no server
//! Without a token the server does not start (it logs why and how to set
//! one), unless `PKG_AGENT_MCP_ALLOW_ANONYMOUS` allows it.
//!
//! Settings are read when the server starts (the token at every request);
//! heap: the session table (made
//! at start) and, per request, its bytes and cJSON tree, freed before the
//! next.

use super::rpc::{self, Answer, INVALID_REQUEST};
use crate::rtt::atomic::{AtomicBool, AtomicU16, Ordering};
use crate::rtt::ipc::Semaphore;
use crate::rtt::name::ObjectName;
use crate::rtt::*;
pub use crate::runtime::settings::mcp_server::{
    anonymous_allowed, base_token, set_overrides, Overrides,
};
use crate::runtime::settings::mcp_server::{option, overrides, text};
use crate::wire::deadline::{ms_to_ticks, Deadline};
use crate::wire::http_drain::{self as drain, Unread};
use crate::wire::mcp_http::{self as http, Method};
use crate::wire::mcp_session::{Sessions, MODERN};
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::ffi::{c_int, c_void, CStr};
use core::ops::Range;

use crate::rtt::glue::{
    agent_glue_mcp_entropy, agent_mcp_accept, agent_mcp_close, agent_mcp_listen, agent_mcp_peer,
    agent_mcp_port, agent_mcp_recv, agent_mcp_send, agent_mcp_set_timeout,
    agent_mcp_shutdown_write,
};

/// Longest request head read.
pub const HEAD_MAX: usize = 2048;
/// A request must arrive whole within this.
pub const READ_DEADLINE_MS: u32 = 5000;
/// How often the idle server looks for a stop request.
const ACCEPT_POLL_MS: c_int = 250;
/// Socket timeout of one receive or send.
const IO_TIMEOUT_MS: c_int = 1000;
const THREAD_NAME: ObjectName = ObjectName::new(c"AgentMcp", c"AgMcp");

/// The server's settings, fixed while it runs.
#[derive(Clone, Copy)]
struct Settings {
    port: u16,
    loopback_only: bool,
    max_body: usize,
    max_sessions: usize,
    idle_ticks: u32,
    page_size: usize,
    stack: u32,
    priority: u8,
    path: &'static CStr,
    /// The build's token (or a test's); one set at run time replaces it.
    token: &'static CStr,
    allow_anonymous: bool,
    origins: &'static CStr,
}

fn hz() -> u32 {
    board().tick_per_second.clamp(1, 1_000_000) as u32
}

fn now() -> u32 {
    // SAFETY: only reads the tick counter.
    unsafe { rt_tick_get() }
}

fn token_is_set(base: &CStr) -> bool {
    use crate::runtime::config::tokens::{with_token, Which};
    with_token(Which::Mcp, base.to_bytes(), |t| !t.is_empty())
}

/// The board's settings with the overrides applied; `None` when the server
/// is off.
fn settings() -> Option<Settings> {
    let o = overrides();
    if !o.enabled.unwrap_or(option(0) != 0) {
        return None;
    }
    let idle_s = o
        .session_idle_s
        .unwrap_or(option(4) as u32)
        .clamp(1, 86_400);
    Some(Settings {
        port: o.port.unwrap_or(option(1).min(65535) as u16),
        loopback_only: option(8) != 0,
        max_body: o.max_body.unwrap_or(option(2)).clamp(256, 1 << 20),
        max_sessions: o.max_sessions.unwrap_or(option(3)).clamp(1, 64),
        idle_ticks: ms_to_ticks(idle_s.saturating_mul(1000), hz()),
        page_size: o.page_size.unwrap_or(option(5)).clamp(1, 256),
        stack: option(6).clamp(2048, 1 << 20) as u32,
        priority: option(7).min(255) as u8,
        path: text(0),
        token: o.token.unwrap_or(text(1)),
        allow_anonymous: o.allow_anonymous.unwrap_or(option(9) != 0),
        origins: o.origins.unwrap_or(text(2)),
    })
}

/// The running server: written by `start` before the thread exists and by
/// `stop` after it ended. `running` and `stop` are stored with Release and
/// loaded with Acquire; the descriptor and the port need no ordering of
/// their own (they are stored before `running`, and before the thread is
/// made).
struct ServerCell {
    running: AtomicBool,
    stop: AtomicBool,
    port: AtomicU16,
    /// Released by the server thread as it ends.
    done: UnsafeCell<Option<Semaphore>>,
}
// SAFETY: `done` is written only while no server thread exists; the
// thread only reads it.
unsafe impl Sync for ServerCell {}

static SERVER: ServerCell = ServerCell {
    running: AtomicBool::new(false),
    stop: AtomicBool::new(false),
    port: AtomicU16::new(0),
    done: UnsafeCell::new(None),
};

/// The server thread's own state, moved into it at its start.
struct ServerThread {
    settings: Settings,
    /// Made by `start`, so that a start without memory fails there, not
    /// later on the thread.
    sessions: Sessions,
    listening: ListenSocket,
    /// The receive buffer, [`HEAD_MAX`] bytes, made once for the server's
    /// life: a buffer per connection came and went with every request, and
    /// on a loaded board its 2 KB landed on top of the loop's own peak now
    /// and then, so `max_used` kept creeping up long after the warm-up. A
    /// request with a larger body grows it for that request alone.
    buf: Vec<u8>,
}

/// The listening socket, closed when dropped.
struct ListenSocket(c_int);

impl Drop for ListenSocket {
    fn drop(&mut self) {
        // SAFETY: our listening socket, not used again.
        unsafe { agent_mcp_close(self.0) };
    }
}

/// The port the server listens on, while it runs.
pub fn port() -> Option<u16> {
    SERVER
        .running
        .load(Ordering::Acquire)
        .then(|| SERVER.port.load(Ordering::Relaxed))
}

/// Start the server if it is enabled (the agent's start-up). A failure is
/// logged; the agent runs on without it.
pub fn start() {
    let Some(s) = settings() else { return };
    if SERVER.running.load(Ordering::Acquire) {
        return;
    }
    crate::runtime::config::tokens::warn_if_ignored(
        crate::runtime::config::tokens::Which::Mcp,
        s.token.to_bytes(),
        "[mcp] PKG_AGENT_MCP_TOKEN",
    );
    let anonymous = !token_is_set(s.token);
    if anonymous && !s.allow_anonymous {
        // One short line (a board's ulog line is about 100 characters):
        // why, and how to set one.
        crate::log_w!(
            "[mcp] not started: no token. Set PKG_AGENT_MCP_TOKEN or agent_config mcp-token <token>"
        );
        return;
    }
    // SAFETY: a glue call with plain values.
    let fd = unsafe { agent_mcp_listen(s.port as c_int, s.loopback_only as c_int, ACCEPT_POLL_MS) };
    if fd < 0 {
        crate::log_e!(
            "[mcp] cannot listen on port ",
            s.port as u32,
            " (in use, or no network)"
        );
        return;
    }
    // SAFETY: a glue call on the socket just made.
    let port = unsafe { agent_mcp_port(fd) }.clamp(0, 65535) as u16;
    let listening = ListenSocket(fd);
    let sessions = Sessions::new(s.max_sessions, entropy());
    let done = Semaphore::create(ObjectName::new(c"AgentMcpD", c"AgMcpD"), 0);
    let mut buf = Vec::new();
    let buf = crate::base::fallible::resize(&mut buf, HEAD_MAX, 0)
        .ok()
        .map(|()| buf);
    let (Some(sessions), Some(done), Some(buf)) = (sessions, done, buf) else {
        crate::log_e!("[mcp] not started: out of memory");
        return;
    };
    // SAFETY: no server thread exists (not running), so nobody reads it.
    unsafe { *SERVER.done.get() = Some(done) };
    SERVER.port.store(port, Ordering::Relaxed);
    SERVER.stop.store(false, Ordering::Release);
    SERVER.running.store(true, Ordering::Release);
    let spec = thread::Spec {
        name: THREAD_NAME,
        stack_size: s.stack,
        priority: s.priority,
        tick: 10,
    };
    let state = ServerThread {
        settings: s,
        sessions,
        listening,
        buf,
    };
    if thread::Thread::spawn_with(&spec, state, server_thread).is_none() {
        crate::log_e!("[mcp] not started: no memory for its thread");
        SERVER.running.store(false, Ordering::Release);
        // SAFETY: no thread was made: ours alone.
        unsafe { *SERVER.done.get() = None };
        return;
    }
    crate::log_i!(
        "[mcp] serving MCP (Streamable HTTP) on ",
        if s.loopback_only {
            "http://127.0.0.1:"
        } else {
            "port "
        },
        port as u32,
        s.path.to_str().unwrap_or("/mcp"),
        if anonymous {
            " (no token: anyone on the network may call the tools)"
        } else {
            " (bearer token)"
        }
    );
}

/// Stop the server and wait for its thread (the agent's teardown, before
/// the tools go). A tool call in progress finishes first.
pub fn stop() {
    if !SERVER.running.load(Ordering::Acquire) {
        return;
    }
    SERVER.stop.store(true, Ordering::Release);
    // SAFETY: `done` was set by `start` and is not written until the
    // thread has released it.
    let ended = unsafe { (*SERVER.done.get()).as_ref() }.is_none_or(|d| d.take(RT_WAITING_FOREVER));
    if ended {
        // SAFETY: the thread has ended: nobody else reads it.
        unsafe { *SERVER.done.get() = None };
    }
    SERVER.running.store(false, Ordering::Release);
}

/// The server thread: accept, answer, close, until stopped.
fn server_thread(mut state: ServerThread) {
    let fd = state.listening.0;
    while !SERVER.stop.load(Ordering::Acquire) {
        // SAFETY: our listening socket.
        let client = unsafe { agent_mcp_accept(fd, IO_TIMEOUT_MS) };
        if client < 0 {
            continue; // the poll timed out, or a client vanished
        }
        let mut peer = crate::net::token_limit::Peer::default();
        // SAFETY: the accepted socket; 16 writable bytes.
        let len = unsafe { agent_mcp_peer(client, peer.addr.as_mut_ptr()) };
        peer.len = len.clamp(0, 16) as u8;
        let unread = serve_connection(
            client,
            &state.settings,
            &mut state.sessions,
            &peer,
            &mut state.buf,
        );
        // Back to its own size after a large body: the large one goes
        // first, then a buffer of HEAD_MAX is made again (the next request
        // is refused with 503 if that fails). A small request only left it
        // shorter: whole again within its capacity, nothing allocated.
        if state.buf.capacity() > HEAD_MAX {
            state.buf = Vec::new();
        }
        let _ = crate::base::fallible::resize(&mut state.buf, HEAD_MAX, 0);
        linger(client, unread, state.settings.max_body);
        // SAFETY: the accepted socket, not used again.
        unsafe { agent_mcp_close(client) };
    }
    // The socket closes and the sessions go before `stop` hears of the end.
    drop(state);
    // SAFETY: set by `start`; `stop` waits on it and only then clears it.
    if let Some(done) = unsafe { (*SERVER.done.get()).as_ref() } {
        done.release();
    }
}

fn entropy() -> u32 {
    // SAFETY: a plain glue call.
    unsafe { agent_glue_mcp_entropy() }
}

/// What the head says: its values by their place in the receive buffer
/// (the head stays where it is while the body is read after it).
struct Request {
    method: Method,
    expect_continue: bool,
    head_len: usize,
    body_len: usize,
    /// The body the head declares (a DELETE's too, which is not read).
    declared: Unread,
    session: Option<Range<usize>>,
    protocol: Option<Range<usize>>,
    mcp_method: Option<Range<usize>>,
    mcp_name: Option<Range<usize>>,
    duplicate_routing: bool,
}

/// Where `part`, a slice of `within`, lies in it.
fn span(within: &[u8], part: &[u8]) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(within.as_ptr() as usize);
    start..start.wrapping_add(part.len())
}

/// A header value of the head in `buf` (a place that is not in it reads
/// as an empty value, which matches no session and no revision).
fn value<'a>(buf: &'a [u8], at: &Range<usize>) -> &'a [u8] {
    buf.get(at.clone()).unwrap_or_default()
}

/// Send `answer` (with `extra`, a whole header line); `unread`, what is
/// left of the request, is returned for [`linger`] to read before the
/// close.
fn reply(fd: c_int, answer: &Answer, extra: Option<&[u8]>, unread: Unread) -> Unread {
    send(fd, answer, extra);
    unread
}

/// Read, check and answer one request on `fd`; what is left of the
/// request unread after the answer.
fn serve_connection(
    fd: c_int,
    s: &Settings,
    sessions: &mut Sessions,
    peer: &crate::net::token_limit::Peer,
    buf: &mut Vec<u8>,
) -> Unread {
    let deadline = Deadline::new(now(), READ_DEADLINE_MS, hz());
    if buf.len() < HEAD_MAX && crate::base::fallible::resize(buf, HEAD_MAX, 0).is_err() {
        // Read the head first (and drop it), so the answer follows the
        // request; a body may follow, of a length not known here.
        skip_head(fd, &deadline);
        return reply(fd, &fail(503, b"out of memory"), None, Unread::Unknown);
    }
    let mut filled = 0;
    let request = loop {
        match http::parse_head(buf.get(..filled).unwrap_or_default()) {
            Ok(head) => {
                // What the head declares, less what came in with it.
                let unread = http::declared_body(&head).less(filled.saturating_sub(head.len));
                match check(buf, &head, s, peer) {
                    Ok(r) => break r,
                    Err((answer, extra)) => {
                        return reply(fd, &answer, extra.bytes(&mut [0; 40]), unread)
                    }
                }
            }
            Err(http::HeadError::Malformed) => {
                let answer = fail(400, b"not an HTTP/1.1 request");
                return reply(fd, &answer, None, Unread::Unknown);
            }
            Err(http::HeadError::Partial) if filled == buf.len() => {
                let answer = fail(431, b"the request head is too large");
                return reply(fd, &answer, None, Unread::Unknown);
            }
            Err(http::HeadError::Partial) => {}
        }
        match receive(fd, buf.get_mut(filled..).unwrap_or_default(), &deadline) {
            Some(n) => filled += n,
            // Closed, failed or out of time: no answer (a client that gave
            // up reads none), nothing to wait for.
            None => return Unread::Bytes(0),
        }
    };
    // The body, less what came with the head.
    let unread = request
        .declared
        .less(filled.saturating_sub(request.head_len));
    if request.method == Method::Delete {
        let Some(id) = &request.session else {
            let answer = fail(400, b"DELETE needs an Mcp-Session-Id header");
            return reply(fd, &answer, None, unread);
        };
        let answer = if sessions.remove(value(buf, id)) {
            Answer::new(200, Vec::new())
        } else {
            fail(404, b"no such session")
        };
        return reply(fd, &answer, None, unread);
    }
    // A POST: the body, then a NUL for cJSON.
    let total = request.head_len + request.body_len;
    if crate::base::fallible::resize(buf, total.max(filled) + 1, 0).is_err() {
        return reply(fd, &fail(503, b"out of memory"), None, unread);
    }
    if request.expect_continue && filled < total && !send_all(fd, b"HTTP/1.1 100 Continue\r\n\r\n")
    {
        return Unread::Bytes(0); // the connection failed
    }
    while filled < total {
        match receive(
            fd,
            buf.get_mut(filled..total).unwrap_or_default(),
            &deadline,
        ) {
            Some(n) => filled += n,
            None => {
                let answer = fail(408, b"the body did not arrive in time");
                let unread = request
                    .declared
                    .less(filled.saturating_sub(request.head_len));
                return reply(fd, &answer, None, unread);
            }
        }
    }
    // The body without NUL bytes (one would cut it for cJSON), then its
    // NUL, within the room reserved above.
    let room = buf.get_mut(request.head_len..total + 1).unwrap_or_default();
    let mut end = 0;
    for i in 0..room.len().saturating_sub(1) {
        let b = room.get(i).copied().unwrap_or(0);
        if b != 0 {
            if let Some(kept) = room.get_mut(end) {
                *kept = b;
            }
            end += 1;
        }
    }
    if let Some(nul) = room.get_mut(end) {
        *nul = 0;
    }
    let body = buf.get(request.head_len..).unwrap_or_default();
    let Ok(body) = CStr::from_bytes_until_nul(body) else {
        return reply(fd, &fail(400, b"bad body"), None, Unread::Bytes(0));
    };
    let mut ctx = rpc::Context {
        sessions,
        now: now(),
        idle_ticks: s.idle_ticks,
        entropy: entropy(),
        page_size: s.page_size,
        session: request.session.as_ref().map(|at| value(buf, at)),
        protocol: request.protocol.as_ref().map(|at| value(buf, at)),
        mcp_method: request.mcp_method.as_ref().map(|at| value(buf, at)),
        mcp_name: request.mcp_name.as_ref().map(|at| value(buf, at)),
        duplicate_routing: request.duplicate_routing,
    };
    let answer = rpc::answer(&mut ctx, body);
    // The request was read to its end: a plain close.
    reply(fd, &answer, None, Unread::Bytes(0))
}

/// An answer with a JSON-RPC error body and no id.
fn fail(status: u16, why: &[u8]) -> Answer {
    rpc::error(status, core::ptr::null(), INVALID_REQUEST, &[why])
}

/// The checks of the head that do not need the body; an answer to send
/// (with an extra header line) when it is refused.
fn check(
    buf: &[u8],
    head: &http::Head<'_>,
    s: &Settings,
    peer: &crate::net::token_limit::Peer,
) -> Result<Request, (Answer, Extra)> {
    let none = Extra::none;
    if head.path != s.path.to_bytes() {
        return Err((fail(404, b"not the MCP endpoint"), none()));
    }
    if let Some(origin) = head.origin {
        let allowed = s
            .origins
            .to_bytes()
            .split(|&b| b == b' ')
            .any(|o| !o.is_empty() && o == origin);
        if !allowed {
            return Err((
                fail(403, b"Origin not allowed (PKG_AGENT_MCP_ORIGINS)"),
                none(),
            ));
        }
    }
    let given = head
        .authorization
        .and_then(http::bearer)
        .unwrap_or_default();
    authorize(given, s, peer)?;
    let stateless = head.protocol == Some(MODERN);
    let body_len = match head.method {
        Method::Post if head.transfer_encoding => {
            return Err((fail(411, b"send the body with a Content-Length"), none()))
        }
        Method::Post => match head.content_length {
            None => return Err((fail(411, b"Content-Length required"), none())),
            Some(None) => return Err((fail(400, b"bad Content-Length"), none())),
            Some(Some(n)) if n > s.max_body => {
                return Err((
                    fail(413, b"the body is larger than PKG_AGENT_MCP_MAX_BODY"),
                    none(),
                ))
            }
            Some(Some(n)) => n,
        },
        // 2026-07-28 has no sessions to end.
        Method::Delete if !stateless => 0,
        Method::Get | Method::Other | Method::Delete => {
            return Err((
                fail(
                    405,
                    b"POST JSON-RPC messages here (no server-to-client stream)",
                ),
                Extra::line(if stateless {
                    b"Allow: POST\r\n"
                } else {
                    b"Allow: POST, DELETE\r\n"
                }),
            ))
        }
    };
    Ok(Request {
        method: head.method,
        expect_continue: head.expect_continue,
        head_len: head.len,
        body_len,
        declared: http::declared_body(head),
        session: head.session.map(|v| span(buf, v)),
        protocol: head.protocol.map(|v| span(buf, v)),
        mcp_method: head.mcp_method.map(|v| span(buf, v)),
        mcp_name: head.mcp_name.map(|v| span(buf, v)),
        duplicate_routing: head.duplicate_routing,
    })
}

/// An extra header line of a refusal.
#[derive(Clone, Copy)]
enum Extra {
    None,
    Line(&'static [u8]),
    RetryAfter(u32),
}

impl Extra {
    fn none() -> Extra {
        Extra::None
    }
    fn line(text: &'static [u8]) -> Extra {
        Extra::Line(text)
    }
    /// The header line, written into `buf` when it is made up.
    fn bytes(self, buf: &mut [u8; 40]) -> Option<&[u8]> {
        match self {
            Extra::None => None,
            Extra::Line(line) => Some(line),
            Extra::RetryAfter(s) => {
                let mut digits = [0u8; 20];
                let mut n = 0;
                for part in [
                    &b"Retry-After: "[..],
                    crate::base::text::decimal(s as u64, &mut digits),
                    b"\r\n",
                ] {
                    n += crate::base::text::copy_prefix(buf.get_mut(n..).unwrap_or_default(), part);
                }
                Some(buf.get(..n).unwrap_or_default())
            }
        }
    }
}

/// The token check, with the shared limit of wrong tokens per peer.
fn authorize(
    given: &[u8],
    s: &Settings,
    peer: &crate::net::token_limit::Peer,
) -> Result<(), (Answer, Extra)> {
    use crate::net::token_limit::{gate, Outcome};
    use crate::runtime::config::tokens::{with_token, Which};
    let outcome = with_token(Which::Mcp, s.token.to_bytes(), |token| {
        if token.is_empty() {
            // No token: only when anonymous use is allowed (else the
            // server refuses everything).
            return if s.allow_anonymous {
                Outcome::Pass
            } else {
                Outcome::Wrong
            };
        }
        gate(peer, given, token, "[mcp]")
    });
    match outcome {
        Outcome::Pass => Ok(()),
        Outcome::Wrong => Err((
            fail(401, b"a valid bearer token is required"),
            Extra::line(b"WWW-Authenticate: Bearer realm=\"mcp\"\r\n"),
        )),
        Outcome::Blocked { retry_after_s } => Err((
            fail(
                429,
                b"too many wrong tokens from this address; try again later",
            ),
            Extra::RetryAfter(retry_after_s),
        )),
    }
}

/// One receive into `buf` (not empty) before the deadline; `None` when
/// the client closed, failed or ran out of time.
fn receive(fd: c_int, buf: &mut [u8], deadline: &Deadline) -> Option<usize> {
    while !deadline.expired(now()) && !SERVER.stop.load(Ordering::Acquire) {
        let len = buf.len().min(i32::MAX as usize) as c_int;
        // SAFETY: `buf` is writable for `len` bytes; the socket is ours.
        let n = unsafe { agent_mcp_recv(fd, buf.as_mut_ptr() as *mut c_void, len) };
        if n > 0 {
            return Some((n as usize).min(buf.len()));
        }
        if n == 0 {
            return None;
        }
        // A timeout (or an interrupted call): look at the deadline again.
    }
    None
}

/// Before the close: when the answer left request bytes unread, the
/// lingering close of [`crate::wire::http_drain`] (the answer and the end
/// of the stream go out now; then what is left of the request is read and
/// dropped, at most `max(max_body, DRAIN_MAX)` bytes within
/// [`drain::LINGER_MS`]), so that the close sends no reset that could cost
/// the client its answer. Nothing to read: nothing to do.
fn linger(fd: c_int, unread: Unread, max_body: usize) {
    let budget = drain::budget(unread, max_body.max(drain::DRAIN_MAX));
    if budget == 0 {
        return;
    }
    // SAFETY: plain glue calls on the accepted socket. Shutting down the
    // sending side ends the stream after the answer; reads still work.
    unsafe {
        agent_mcp_shutdown_write(fd);
        agent_mcp_set_timeout(fd, drain::LINGER_POLL_MS as c_int);
    }
    let deadline = Deadline::new(now(), drain::LINGER_MS, hz());
    drain::drain(budget, |scrap| receive(fd, scrap, &deadline));
}

fn send_all(fd: c_int, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        let len = bytes.len().min(i32::MAX as usize) as c_int;
        // SAFETY: `bytes` is readable for `len` bytes; the socket is ours.
        let n = unsafe { agent_mcp_send(fd, bytes.as_ptr() as *const c_void, len) };
        if n <= 0 {
            return false;
        }
        bytes = bytes.get(n as usize..).unwrap_or_default();
    }
    true
}

/// Send `answer` with its head (and `extra`, a whole header line).
fn send(fd: c_int, answer: &Answer, extra: Option<&[u8]>) {
    let mut head = [0u8; 256];
    let mut len = 0;
    let mut put = |b: &[u8]| {
        len += crate::base::text::copy_prefix(head.get_mut(len..).unwrap_or_default(), b);
    };
    let mut digits = [0u8; 20];
    put(b"HTTP/1.1 ");
    put(crate::base::text::decimal(
        answer.status as u64,
        &mut digits,
    ));
    put(b" ");
    put(http::reason(answer.status));
    let body = if answer.body.is_empty() {
        answer.fixed
    } else {
        &answer.body[..]
    };
    put(b"\r\nConnection: close\r\nCache-Control: no-store\r\nContent-Length: ");
    put(crate::base::text::decimal(body.len() as u64, &mut digits));
    put(b"\r\n");
    if !body.is_empty() {
        put(b"Content-Type: application/json\r\n");
    }
    if let Some(id) = &answer.new_session {
        put(b"Mcp-Session-Id: ");
        put(id);
        put(b"\r\n");
    }
    if let Some(line) = extra {
        put(line);
    }
    put(b"\r\n");
    if send_all(fd, head.get(..len).unwrap_or_default()) {
        send_all(fd, body);
    }
}

/// Read and drop a request's head, up to its blank line, without the heap.
fn skip_head(fd: c_int, deadline: &Deadline) {
    let mut last = [0u8; 4];
    let mut chunk = [0u8; 32];
    while let Some(n) = receive(fd, &mut chunk, deadline) {
        for &b in chunk.get(..n).unwrap_or_default() {
            last = [last[1], last[2], last[3], b];
            if &last == b"\r\n\r\n" {
                return;
            }
        }
    }
}
