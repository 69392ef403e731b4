//! One JSON-RPC exchange with a remote MCP server over Streamable HTTP:
//! the request body and headers ([`Rpc`]), and the response, taken as
//! `application/json` or as `text/event-stream` ([`Reply`]).
//!
//! The answer is one JSON-RPC message of at most `PKG_AGENT_MCP_MAX_RESPONSE`
//! bytes: a JSON body grows a buffer up to that; an SSE stream goes through
//! the chat client's incremental framer (`crate::wire::stream::sse`), and only the
//! current event's `data` is kept, up to the same cap. Events that are not
//! the answer (notifications, server requests, pings) are dropped one by
//! one. The message is parsed with the board's cJSON.

use crate::base::json_writer::{write_integer, write_string, ByteSink, WriteError};
use crate::cjson::sys::{cJSON, cJSON_Delete, cJSON_NULL, cJSON_Number, cJSON_Object, cJSON_Parse};
use crate::net::error::TextOut;
use crate::net::transport::{Flow, RequestBody, ResponseHead, ResponseSink};
use crate::wire::chat::request::write_value;
use crate::wire::stream::sse::{Events, Sse};
use crate::wire::stream::{Format, Stop};
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, CStr};

/// The protocol version the client asks for (the handshake era of the
/// specification), and the earlier ones it accepts in a server's answer.
pub const PROTOCOL_VERSION: &CStr = c"2025-11-25";
pub const ACCEPTED_VERSIONS: [&CStr; 3] = [PROTOCOL_VERSION, c"2025-06-18", c"2025-03-26"];

/// The stateless revision, spoken with a server that refuses `initialize`.
pub const MODERN: &CStr = c"2026-07-28";

/// The envelope a 2026-07-28 request carries in `params` (no capability
/// declared: the server then never asks for more input).
const META: &[u8] = concat!(
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",",
    "\"io.modelcontextprotocol/clientCapabilities\":{},",
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"rtt-agent\",\"version\":\"",
    env!("CARGO_PKG_VERSION"),
    "\"}}"
)
.as_bytes();

/// The `params` of `initialize`, with a comma before them.
const INITIALIZE_PARAMS: &[u8] = concat!(
    ",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},",
    "\"clientInfo\":{\"name\":\"rtt-agent\",\"version\":\"",
    env!("CARGO_PKG_VERSION"),
    "\"}}"
)
.as_bytes();

/// Longest `Mcp-Session-Id` kept (the specification allows visible ASCII
/// of any length; SDK servers send 32 hex digits).
const SESSION_ID_MAX: usize = 128;

/// What a request carries in `params`.
#[derive(Clone, Copy)]
pub enum Params<'a> {
    None,
    Initialize,
    /// `tools/list`, from this cursor (empty: the first page).
    Cursor(&'a [u8]),
    /// `tools/call` of `name` with `arguments` (an object, or NULL for `{}`).
    Call {
        name: &'a [u8],
        arguments: *const cJSON,
    },
}

/// One JSON-RPC request (`id: None` is a notification).
pub struct Rpc<'a> {
    pub id: Option<u32>,
    pub method: &'a CStr,
    pub params: Params<'a>,
    /// 2026-07-28: the envelope in `params`, the method (and the tool's
    /// name, `name_header`) repeated in `Mcp-Method` (`Mcp-Name`).
    pub modern: bool,
    pub name_header: Option<&'a CStr>,
    /// `Mcp-Session-Id` to send (empty: none yet).
    pub session: &'a CStr,
    /// `MCP-Protocol-Version` to send (after the handshake).
    pub protocol: Option<&'a CStr>,
    /// `Host` with the port (see [`host_with_port`]).
    pub host: Option<&'a CStr>,
}

/// The `Host` header for `url` when it names a port: webclient 2.x sends
/// `Host:` with the host alone unless the request has one already, and
/// servers that guard against DNS rebinding (the SDK's, by default) check
/// `host:port` and refuse the rest with 421. `None` without a port
/// (webclient's own line is right then).
pub fn host_with_port<'b>(url: &[u8], buf: &'b mut [u8; 130]) -> Option<&'b CStr> {
    let rest = crate::base::text::find(url, b"://").and_then(|at| url.get(at + 3..))?;
    let authority = rest
        .split(|&b| b == b'/' || b == b'?' || b == b'#')
        .next()?;
    let authority = match authority.iter().rposition(|&b| b == b'@') {
        Some(at) => authority.get(at + 1..)?,
        None => authority,
    };
    // The port's colon comes after an IPv6 literal's closing bracket.
    let after_bracket = authority
        .iter()
        .rposition(|&b| b == b']')
        .map_or(0, |i| i + 1);
    if !authority.get(after_bracket..)?.contains(&b':') || authority.len() >= buf.len() {
        return None;
    }
    let n = crate::base::text::copy_prefix(buf, authority);
    *buf.get_mut(n)? = 0;
    CStr::from_bytes_until_nul(buf).ok()
}

impl RequestBody for Rpc<'_> {
    unsafe fn write(&self, _format: Format, out: &mut dyn ByteSink) -> Result<(), WriteError> {
        out.put(b"{\"jsonrpc\":\"2.0\"")?;
        if let Some(id) = self.id {
            out.put(b",\"id\":")?;
            write_integer(i64::from(id), out)?;
        }
        out.put(b",\"method\":")?;
        write_string(self.method.to_bytes(), out)?;
        // The envelope, after the other params (`first`: there are none).
        let meta = |first: bool, out: &mut dyn ByteSink| -> Result<(), WriteError> {
            if !self.modern {
                return Ok(());
            }
            if !first {
                out.put(b",")?;
            }
            out.put(META)
        };
        match self.params {
            Params::None if self.modern => {
                out.put(b",\"params\":{")?;
                meta(true, out)?;
                out.put(b"}")?;
            }
            Params::None => {}
            // All constant (no character to escape): one piece.
            Params::Initialize => out.put(INITIALIZE_PARAMS)?,
            Params::Cursor(cursor) => {
                out.put(b",\"params\":{")?;
                if !cursor.is_empty() {
                    out.put(b"\"cursor\":")?;
                    write_string(cursor, out)?;
                }
                meta(cursor.is_empty(), out)?;
                out.put(b"}")?;
            }
            Params::Call { name, arguments } => {
                out.put(b",\"params\":{\"name\":")?;
                write_string(name, out)?;
                out.put(b",\"arguments\":")?;
                if arguments.is_null() {
                    out.put(b"{}")?;
                } else {
                    // SAFETY: a live tree left unmodified during the send
                    // (the caller's contract for `send`). Types are not
                    // mapped: these are values, not a schema.
                    unsafe { write_value(arguments, false, 0, out)? };
                }
                meta(false, out)?;
                out.put(b"}")?;
            }
        }
        out.put(b"}")
    }

    fn accept(&self, _format: Format) -> &'static CStr {
        // Streamable HTTP: the client lists both; the server chooses.
        c"Accept: application/json, text/event-stream\r\n"
    }

    fn extra_headers(&self, add: &mut dyn FnMut(&CStr, &CStr) -> bool) -> bool {
        self.host.is_none_or(|h| add(c"Host", h))
            && (self.session.is_empty() || add(c"Mcp-Session-Id", self.session))
            && self
                .protocol
                .is_none_or(|v| add(c"MCP-Protocol-Version", v))
            && (!self.modern || add(c"Mcp-Method", self.method))
            && self.name_header.is_none_or(|n| add(c"Mcp-Name", n))
    }
}

/// The `Mcp-Name` value of tool `name`, NUL-terminated: the name itself
/// when it is a plain header value, else `=?base64?…?=` (a byte outside
/// visible ASCII, a blank at an end, or a name that looks encoded
/// already). `None` without memory.
pub fn header_name(name: &[u8]) -> Option<Vec<u8>> {
    let plain = name.iter().all(|&b| (b' '..=b'~').contains(&b))
        && name.first() != Some(&b' ')
        && name.last() != Some(&b' ')
        && crate::base::text::strip_prefix(name, b"=?base64?")
            .and_then(|n| crate::base::text::strip_suffix(n, b"?="))
            .is_none();
    let mut out = Vec::new();
    if plain {
        crate::base::fallible::extend(&mut out, name).ok()?;
    } else {
        use crate::wire::chat::inline_file::{encode, encoded_len};
        let len = encoded_len(name.len())?;
        crate::base::fallible::extend(&mut out, b"=?base64?").ok()?;
        let start = out.len();
        crate::base::fallible::resize(&mut out, start.checked_add(len)?, 0).ok()?;
        encode(name, out.get_mut(start..).unwrap_or_default());
        crate::base::fallible::extend(&mut out, b"?=").ok()?;
    }
    crate::base::fallible::push(&mut out, 0).ok()?;
    Some(out)
}

/// Why a response could not be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyError {
    /// A message longer than `PKG_AGENT_MCP_MAX_RESPONSE`.
    TooLong,
    /// Not JSON, or not a JSON-RPC response object.
    NotJsonRpc,
    /// A 200 that is neither `application/json` nor `text/event-stream`.
    ContentType,
    /// The event stream ended without the answer (cut off on the way).
    Cut,
    NoMemory,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Before the head.
    Unknown,
    Json,
    Sse,
    /// 202 Accepted: no body.
    Empty,
}

/// The current message's bytes and the answer once found (the part of
/// [`Reply`] the SSE framer reports to).
struct Message {
    want_id: Option<u32>,
    cap: usize,
    buf: Vec<u8>,
    /// Data lines of the current event so far (joined by `\n`).
    lines: usize,
    over: bool,
    answer: *mut cJSON,
    error: Option<ReplyError>,
}

impl Message {
    fn take(&mut self, bytes: &[u8]) -> Result<(), ReplyError> {
        if self.over || self.buf.len().saturating_add(bytes.len()) > self.cap {
            self.over = true;
            return Ok(());
        }
        crate::base::fallible::extend(&mut self.buf, bytes).map_err(|_| ReplyError::NoMemory)
    }

    /// Parse the message collected; keep it when it is the answer.
    fn complete(&mut self) -> Result<(), ReplyError> {
        let over = core::mem::replace(&mut self.over, false);
        self.lines = 0;
        if over {
            self.buf.clear();
            return Err(ReplyError::TooLong);
        }
        if self.buf.iter().all(u8::is_ascii_whitespace) {
            self.buf.clear();
            return Ok(());
        }
        crate::base::fallible::push(&mut self.buf, 0).map_err(|_| ReplyError::NoMemory)?;
        // SAFETY: `buf` ends with the NUL just pushed; cJSON only reads it.
        let tree = unsafe { cJSON_Parse(self.buf.as_ptr() as *const c_char) };
        self.buf.clear();
        if tree.is_null() {
            return Err(ReplyError::NotJsonRpc);
        }
        // SAFETY: `tree` is the live tree just parsed, owned here.
        if unsafe { is_answer(tree, self.want_id) } {
            self.answer = tree;
        } else {
            // SAFETY: as above; not kept.
            unsafe { cJSON_Delete(tree) };
        }
        Ok(())
    }
}

/// Is `tree` the JSON-RPC response to request `id` (an object with that
/// `id` and a `result` or an `error`; or an `error` with `id: null`, a
/// server's answer to a request it could not read the id of)?
///
/// # Safety
/// `tree` is a live cJSON tree.
unsafe fn is_answer(tree: *const cJSON, id: Option<u32>) -> bool {
    // SAFETY: `tree` is live (contract); `get` returns NULL or its child.
    unsafe {
        if (*tree).type_ & 0xFF != cJSON_Object {
            return false;
        }
        let got = crate::cjson::json::get(tree, c"id");
        let error = !crate::cjson::json::get(tree, c"error").is_null();
        let id_matches = match id {
            Some(want) => {
                !got.is_null()
                    && ((*got).type_ & 0xFF == cJSON_Number && (*got).valueint == want as c_int
                        || (*got).type_ & 0xFF == cJSON_NULL && error)
            }
            None => true,
        };
        id_matches && (!crate::cjson::json::get(tree, c"result").is_null() || error)
    }
}

impl Events for Message {
    fn data_line(&mut self) -> Result<(), Stop> {
        if self.lines > 0 {
            self.data(b"\n")?;
        }
        self.lines += 1;
        Ok(())
    }
    fn data(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        self.take(bytes).map_err(|e| {
            self.error = Some(e);
            Stop::Done
        })?;
        if self.over {
            // Past the cap the message is lost: end the read now rather than
            // receive (and drop) the rest of it.
            self.error = Some(ReplyError::TooLong);
            return Err(Stop::Done);
        }
        Ok(())
    }
    fn error_event(&mut self) {}
    fn dispatch(&mut self) -> Result<(), Stop> {
        if let Err(e) = self.complete() {
            self.error = Some(e);
            return Err(Stop::Done);
        }
        if self.answer.is_null() {
            Ok(())
        } else {
            Err(Stop::Done)
        }
    }
}

/// The response sink of one exchange.
pub struct Reply {
    kind: Kind,
    sse: Sse,
    msg: Message,
    /// `Mcp-Session-Id` of the response, when it had one (NUL-terminated).
    pub session_id: Vec<u8>,
    /// 2026-07-28: a 400 or 404 carries the JSON-RPC error (read as an
    /// answer, not as an HTTP failure).
    pub modern: bool,
}

impl Reply {
    pub fn new(want_id: Option<u32>, cap: usize) -> Reply {
        Reply {
            kind: Kind::Unknown,
            sse: Sse::new(),
            msg: Message {
                want_id,
                cap,
                buf: Vec::new(),
                lines: 0,
                over: false,
                answer: core::ptr::null_mut(),
                error: None,
            },
            session_id: Vec::new(),
            modern: false,
        }
    }

    /// The answer (owned by the caller from now on), NULL for none (a
    /// notification's 202).
    pub fn take_answer(&mut self) -> *mut cJSON {
        core::mem::replace(&mut self.msg.answer, core::ptr::null_mut())
    }

    fn clear_answer(&mut self) {
        // SAFETY: NULL or the tree this reply owns.
        unsafe { cJSON_Delete(self.take_answer()) };
    }

    fn stopped(&mut self) -> Result<Flow, ReplyError> {
        if let Some(e) = self.msg.error.take() {
            return Err(e);
        }
        Ok(if self.msg.answer.is_null() {
            Flow::More
        } else {
            Flow::Done
        })
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        self.clear_answer();
    }
}

/// Does the header value `value` name the media type `kind` (parameters
/// such as `; charset=utf-8` allowed)?
fn media_type_is(value: &[u8], kind: &[u8]) -> bool {
    value.len() >= kind.len()
        && value
            .get(..kind.len())
            .is_some_and(|v| v.eq_ignore_ascii_case(kind))
        && matches!(value.get(kind.len()), None | Some(b';' | b' '))
}

impl ResponseSink for Reply {
    type Error = ReplyError;

    fn success(&self, status: c_int) -> bool {
        status == 200 || status == 202 || self.modern && (status == 400 || status == 404)
    }

    fn head(&mut self, head: &ResponseHead) -> Result<(), ReplyError> {
        self.session_id.clear();
        if let Some(id) = head.header(c"Mcp-Session-Id:") {
            // A value we cannot send back is as good as none: the server
            // then refuses the next request, and says so.
            if !id.is_empty()
                && id.len() <= SESSION_ID_MAX
                && id.iter().all(|&b| b > b' ' && b < 0x7F)
            {
                crate::base::fallible::extend(&mut self.session_id, id)
                    .and_then(|_| crate::base::fallible::push(&mut self.session_id, 0))
                    .map_err(|_| ReplyError::NoMemory)?;
            }
        }
        let content_type = head.header(c"Content-Type:").unwrap_or_default();
        self.kind = if head.status == 202 {
            Kind::Empty
        } else if media_type_is(content_type, b"application/json") {
            Kind::Json
        } else if media_type_is(content_type, b"text/event-stream") {
            Kind::Sse
        } else {
            return Err(ReplyError::ContentType);
        };
        Ok(())
    }

    fn body(&mut self, bytes: &[u8]) -> Result<Flow, ReplyError> {
        match self.kind {
            Kind::Json => {
                self.msg.take(bytes)?;
                if self.msg.over {
                    return Err(ReplyError::TooLong);
                }
                Ok(Flow::More)
            }
            Kind::Sse => {
                // The framer stops (Stop::Done) on the answer or an error;
                // both are in `msg`.
                let _ = self.sse.feed(bytes, &mut self.msg);
                self.stopped()
            }
            // A 202's body, if any, is not ours to read.
            Kind::Empty | Kind::Unknown => Ok(Flow::More),
        }
    }

    fn end(&mut self) -> Result<(), ReplyError> {
        match self.kind {
            Kind::Json => {
                self.msg.complete()?;
                if self.msg.answer.is_null() {
                    return Err(ReplyError::NotJsonRpc);
                }
                Ok(())
            }
            Kind::Sse => {
                let _ = self.sse.end_of_stream(&mut self.msg);
                if let Some(e) = self.msg.error.take() {
                    return Err(e);
                }
                if self.msg.answer.is_null() {
                    // A last event without its blank line counts when it
                    // parses; if not, the stream was cut inside it.
                    match self.msg.complete() {
                        Err(ReplyError::NotJsonRpc) => return Err(ReplyError::Cut),
                        other => other?,
                    }
                }
                if self.msg.answer.is_null() {
                    return Err(ReplyError::Cut);
                }
                Ok(())
            }
            Kind::Empty | Kind::Unknown => Ok(()),
        }
    }

    fn delivered(&self) -> bool {
        // Nothing reaches a callback before the exchange is complete.
        false
    }

    fn restart(&mut self) {
        // The old reply's drop frees its answer and buffer.
        let mut fresh = Reply::new(self.msg.want_id, self.msg.cap);
        fresh.modern = self.modern;
        *self = fresh;
    }

    fn retryable(&self, error: ReplyError) -> bool {
        // Only a stream cut on the way can come out differently next time.
        error == ReplyError::Cut
    }

    fn describe(&self, error: ReplyError, out: &mut dyn TextOut) {
        let what: &[u8] = match error {
            ReplyError::TooLong => b"the answer is longer than PKG_AGENT_MCP_MAX_RESPONSE",
            ReplyError::NotJsonRpc => {
                // cJSON_Parse says NULL for both.
                b"the answer is not a JSON-RPC response (or no memory to parse it)"
            }
            ReplyError::ContentType => {
                b"the answer is neither application/json nor text/event-stream"
            }
            ReplyError::Cut => b"the event stream ended before the answer",
            ReplyError::NoMemory => b"no memory for the answer",
        };
        out.put(what);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_asks_for_the_protocol_version() {
        let mut asked = b"\"protocolVersion\":\"".to_vec();
        asked.extend_from_slice(PROTOCOL_VERSION.to_bytes());
        assert!(INITIALIZE_PARAMS
            .windows(asked.len())
            .any(|w| w == &asked[..]));
    }

    #[test]
    fn mcp_name_is_plain_or_base64() {
        let name = |n: &[u8]| header_name(n).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(name(b"add").as_deref(), Some("add\0"));
        assert_eq!(name(b"a b").as_deref(), Some("a b\0"));
        assert_eq!(name(" a".as_bytes()).as_deref(), Some("=?base64?IGE=?=\0"));
        assert_eq!(name("é".as_bytes()).as_deref(), Some("=?base64?w6k=?=\0"));
        assert_eq!(
            name(b"=?base64?x?=").as_deref(),
            Some("=?base64?PT9iYXNlNjQ/eD89?=\0")
        );
        assert_eq!(name(b"").as_deref(), Some("\0"));
    }

    #[test]
    fn host_with_port_only_when_the_url_names_one() {
        let mut buf = [0u8; 130];
        assert_eq!(
            host_with_port(b"http://127.0.0.1:8000/mcp", &mut buf),
            Some(c"127.0.0.1:8000")
        );
        assert_eq!(
            host_with_port(b"http://u:p@example.org:81?x", &mut buf),
            Some(c"example.org:81")
        );
        assert_eq!(
            host_with_port(b"http://[fe80::1]:9000/mcp", &mut buf),
            Some(c"[fe80::1]:9000")
        );
        assert_eq!(host_with_port(b"http://[fe80::1]/mcp", &mut buf), None);
        assert_eq!(host_with_port(b"https://example.org/mcp", &mut buf), None);
        assert_eq!(host_with_port(b"no scheme:80", &mut buf), None);
    }

    #[test]
    fn media_types_with_parameters() {
        assert!(media_type_is(b"application/json", b"application/json"));
        assert!(media_type_is(
            b"Application/JSON; charset=utf-8",
            b"application/json"
        ));
        assert!(!media_type_is(b"application/jsonl", b"application/json"));
        assert!(!media_type_is(b"text/html", b"text/event-stream"));
    }

    /// An SSE answer behind a notification, with a two-line data field and
    /// CRLF line ends, fed cut at every offset: the answer is found, the
    /// notification dropped, whatever the cut.
    #[test]
    fn sse_answer_found_at_every_cut() {
        let stream: &[u8] = b": ping\r\n\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n\r\n\
event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\r\ndata: \"result\":{\"ok\":true}}\r\n\r\n";
        for cut in 0..=stream.len() {
            let mut reply = Reply::new(Some(7), 1024);
            reply.kind = Kind::Sse;
            let (a, b) = stream.split_at(cut);
            let mut done = reply.body(a).unwrap() == Flow::Done;
            if !done {
                done = reply.body(b).unwrap() == Flow::Done;
            }
            assert!(done, "cut at {cut}");
            // SAFETY: the reply hands over its parsed tree.
            let answer = unsafe { crate::cjson::json::Json::from_raw(reply.take_answer()) };
            // SAFETY: the answer is a live tree owned by `answer`.
            unsafe {
                let ok = crate::cjson::json::get(
                    crate::cjson::json::get(answer.as_ptr(), c"result"),
                    c"ok",
                );
                assert!(!ok.is_null(), "cut at {cut}");
            }
        }
    }

    #[test]
    fn caps_and_cuts() {
        // An event over the cap: refused, whatever comes after.
        let mut reply = Reply::new(Some(1), 16);
        reply.kind = Kind::Sse;
        let big = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        assert_eq!(reply.body(big), Err(ReplyError::TooLong));
        // ... and ends the read as soon as the event passes the cap, not at
        // its blank line.
        let mut reply = Reply::new(Some(1), 16);
        reply.kind = Kind::Sse;
        assert_eq!(reply.body(&big[..30]), Err(ReplyError::TooLong));
        // A JSON body over the cap stops at once.
        let mut reply = Reply::new(Some(1), 16);
        reply.kind = Kind::Json;
        assert_eq!(reply.body(&big[6..]), Err(ReplyError::TooLong));
        // A stream that ends inside the answer's event is cut (retryable).
        let mut reply = Reply::new(Some(1), 1024);
        reply.kind = Kind::Sse;
        assert_eq!(reply.body(&big[..20]), Ok(Flow::More));
        assert_eq!(reply.end(), Err(ReplyError::Cut));
        assert!(reply.retryable(ReplyError::Cut));
        // The answer to another id is not ours.
        let mut reply = Reply::new(Some(2), 1024);
        reply.kind = Kind::Json;
        assert_eq!(reply.body(&big[6..]), Ok(Flow::More));
        assert_eq!(reply.end(), Err(ReplyError::NotJsonRpc));
        assert!(!reply.retryable(ReplyError::NotJsonRpc));
    }
}
