//! One JSON-RPC 2.0 message of MCP's Streamable HTTP transport, answered
//! against the tool registry: `initialize`, `ping`, `tools/list`,
//! `tools/call`, the client's notifications; everything else gets the
//! standard error codes.
//!
//! Two eras, told apart by the `MCP-Protocol-Version` header. Absent or a
//! handshake revision (2025-11-25, 2025-06-18): `initialize` makes a
//! session that every later request names. 2026-07-28: no handshake and
//! no session; each request carries the revision and the client's
//! capabilities in `params._meta`, repeats its method (and tool name) in
//! the `Mcp-Method` (`Mcp-Name`) header, and is checked in the order the
//! revision gives (envelope, headers, version) before it is answered;
//! `server/discover` tells what the server is, results say
//! `"resultType":"complete"`, and JSON-RPC errors get the revision's HTTP
//! statuses (400, 404 for an unknown method). Any other header value is
//! told which revisions are spoken (-32022).
//!
//! The request is parsed with the board's cJSON; the answer is written
//! into a capped buffer with the request writer's JSON writers (tool
//! schemas go out with their types mapped to JSON Schema as in chat
//! requests). HTTP statuses follow the transport: 202 for notifications
//! and responses, 200 for every answered request (a JSON-RPC error
//! included), 400 for what is not a JSON-RPC request at all or lacks its
//! session, 404 for a session that ended, 503 when the session table is
//! full (the handshake era's; 2026-07-28 maps error codes as above).

#![allow(non_upper_case_globals)]

/// What the server tells a client about itself (`initialize`,
/// `server/discover`).
macro_rules! instructions {
    () => {
        "Tools of an RT-Thread device. They run one at a time, shared with the device's own agent."
    };
}

use crate::abi::messages::{messages_get_content_idx, messages_get_type_idx, TYPE_TEXT};
use crate::base::json_writer::{write_integer, write_string, ByteSink, WriteError};
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::rtt::rt_eok;
use crate::runtime::tool_run::{self, ToolSet};
use crate::runtime::tools::AgentToolNode_t;
use crate::wire::chat::request::write_value;
use crate::wire::mcp_session::{Full, Sessions, ID_LEN, MODERN, VERSIONS};
use alloc::vec::Vec;
use core::ffi::{c_int, CStr};
use core::ptr;

pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;
pub const METHOD_NOT_FOUND: i32 = -32601;
pub const INVALID_PARAMS: i32 = -32602;
pub const INTERNAL_ERROR: i32 = -32603;
/// The start of the messages of these two errors (said once).
const INVALID_PARAMS_TEXT: &[u8] = b"Invalid params: ";
const INTERNAL_ERROR_TEXT: &[u8] = b"Internal error: ";
/// Server error range: the session table is full.
pub const TOO_MANY_SESSIONS: i32 = -32000;
/// 2026-07-28: a routing header disagrees with the body (or came twice).
pub const HEADER_MISMATCH: i32 = -32020;
/// 2026-07-28: the client lacks a capability the request needs (not sent
/// by this server, which needs none; mapped to its status all the same).
const MISSING_CAPABILITY: i32 = -32021;
/// 2026-07-28: the `MCP-Protocol-Version` is not spoken here.
pub const UNSUPPORTED_VERSION: i32 = -32022;

/// The answer's body never grows past this (a tool list page, a tool's
/// text): beyond it the client gets an internal error instead.
pub const MAX_ANSWER: usize = 16 * 1024;

/// What the server sends back for one POST.
pub struct Answer {
    pub status: u16,
    /// The JSON body; empty for 202.
    pub body: Vec<u8>,
    /// A session `initialize` made (the `Mcp-Session-Id` header).
    pub new_session: Option<[u8; ID_LEN]>,
    /// The JSON-RPC error code of an error answer, 0 for a result: the
    /// stateless era's HTTP status follows from it.
    pub code: i32,
    /// Sent when `body` is empty: an error answer that found no memory
    /// for its own body says so from flash.
    pub fixed: &'static [u8],
}

/// The body of an error answer written without memory.
const OUT_OF_MEMORY: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"out of memory\"}}";

impl Answer {
    pub fn new(status: u16, body: Vec<u8>) -> Answer {
        Answer {
            status,
            body,
            new_session: None,
            code: 0,
            fixed: b"",
        }
    }
}

/// What a request is answered with (the server's settings, snapshotted
/// for the request).
pub struct Context<'a> {
    pub sessions: &'a mut Sessions,
    pub now: u32,
    pub idle_ticks: u32,
    pub entropy: u32,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// The `Mcp-Session-Id` and `MCP-Protocol-Version` headers.
    pub session: Option<&'a [u8]>,
    pub protocol: Option<&'a [u8]>,
    /// The `Mcp-Method` and `Mcp-Name` headers, and whether a routing
    /// header came more than once (2026-07-28 checks them).
    pub mcp_method: Option<&'a [u8]>,
    pub mcp_name: Option<&'a [u8]>,
    pub duplicate_routing: bool,
}

/// The capped answer buffer.
struct Body(Vec<u8>);

impl ByteSink for Body {
    fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        if self.0.len() + bytes.len() > MAX_ANSWER {
            return Err(WriteError::Sink);
        }
        crate::base::fallible::extend(&mut self.0, bytes).map_err(|_| WriteError::NoMemory)
    }
}

/// A JSON-RPC error answer with HTTP `status`; the message is the
/// concatenation of `parts`.
pub(crate) fn error(status: u16, id: *const cJSON, code: i32, parts: &[&[u8]]) -> Answer {
    error_with(status, id, code, parts, b"")
}

/// [`error`] with `data` (raw JSON, left out when empty).
fn error_with(status: u16, id: *const cJSON, code: i32, parts: &[&[u8]], data: &[u8]) -> Answer {
    let mut body = Body(Vec::new());
    let mut message = Body(Vec::new());
    for p in parts {
        // A message cut short (no memory) still says what it can.
        let _ = message.put(p);
    }
    let written = (|| {
        body.put(b"{\"jsonrpc\":\"2.0\",\"id\":")?;
        write_id(id, &mut body)?;
        body.put(b",\"error\":{\"code\":")?;
        write_integer(code as i64, &mut body)?;
        body.put(b",\"message\":")?;
        write_string(&message.0, &mut body)?;
        if !data.is_empty() {
            body.put(b",\"data\":")?;
            body.put(data)?;
        }
        body.put(b"}}")
    })();
    if written.is_err() {
        return Answer {
            fixed: OUT_OF_MEMORY,
            code: INTERNAL_ERROR,
            ..Answer::new(503, Vec::new())
        };
    }
    Answer {
        code,
        ..Answer::new(status, body.0)
    }
}

fn write_id(id: *const cJSON, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    if id.is_null() {
        return out.put(b"null");
    }
    // SAFETY: a live child of the request tree, unchanged while written.
    unsafe { write_value(id, false, 0, out) }
}

fn kind(item: *const cJSON) -> c_int {
    if item.is_null() {
        return cJSON_Invalid;
    }
    // SAFETY: non-NULL children of the live request tree.
    unsafe { (*item).type_ & 0xFF }
}

/// Answer the POSTed message `body` (NUL-terminated).
pub fn answer(ctx: &mut Context<'_>, body: &CStr) -> Answer {
    let modern = match ctx.protocol {
        None => false,
        Some(v) if VERSIONS.contains(&v) => false,
        Some(MODERN) => true,
        Some(v) => return unsupported_version(v),
    };
    let mut answer = parse_and_answer(ctx, body, modern);
    if modern && answer.status == 200 {
        answer.status = modern_status(answer.code);
    }
    answer
}

/// 400 with the revisions spoken, in the form 2026-07-28 gives: a client
/// of any era can read which to use (one that offered only an unknown
/// revision falls back to a handshake one).
fn unsupported_version(asked: &[u8]) -> Answer {
    let mut data = Body(Vec::new());
    // Without memory for the data the message still names the revisions.
    let _ = (|| {
        data.put(b"{\"supported\":[\"2026-07-28\",\"2025-11-25\",\"2025-06-18\"],\"requested\":")?;
        write_string(asked, &mut data)?;
        data.put(b"}")
    })();
    if data.0.last() != Some(&b'}') {
        data.0.clear();
    }
    error_with(
        400,
        ptr::null(),
        UNSUPPORTED_VERSION,
        &[
            b"Unsupported protocol version ",
            asked,
            b" (this server speaks 2026-07-28, 2025-11-25 and 2025-06-18)",
        ],
        &data.0,
    )
}

/// The HTTP status 2026-07-28 gives a JSON-RPC error code (200 for a
/// result and for the codes it names no status for).
fn modern_status(code: i32) -> u16 {
    match code {
        PARSE_ERROR | INVALID_REQUEST | INVALID_PARAMS | HEADER_MISMATCH | MISSING_CAPABILITY
        | UNSUPPORTED_VERSION => 400,
        METHOD_NOT_FOUND => 404,
        _ => 200,
    }
}

fn parse_and_answer(ctx: &mut Context<'_>, body: &CStr, modern: bool) -> Answer {
    // SAFETY: `body` is NUL-terminated; cJSON only reads it.
    let tree = unsafe { cJSON_Parse(body.as_ptr()) };
    if tree.is_null() {
        // cJSON says the same for no memory: our own (allocation-free)
        // reading tells which it was.
        if crate::wire::stream::is_well_formed(body.to_bytes()) {
            return error(
                503,
                ptr::null(),
                INTERNAL_ERROR,
                &[b"out of memory for the request"],
            );
        }
        return error(
            400,
            ptr::null(),
            PARSE_ERROR,
            &[b"Parse error: the body is not JSON"],
        );
    }
    // SAFETY: `tree` is the live tree just parsed, deleted once below.
    let answer = unsafe { answer_message(ctx, tree, modern) };
    // SAFETY: as above; nothing borrows from it any more.
    unsafe { cJSON_Delete(tree) };
    answer
}

/// # Safety
/// `msg` is a live parsed tree, unchanged during the call.
unsafe fn answer_message(ctx: &mut Context<'_>, msg: *mut cJSON, modern: bool) -> Answer {
    match kind(msg) {
        cJSON_Array => {
            return error(400, ptr::null(), INVALID_REQUEST, &[
                b"JSON-RPC batches are not supported (removed from MCP in 2025-06-18); send one message per POST",
            ])
        }
        cJSON_Object => {}
        _ => return error(400, ptr::null(), INVALID_REQUEST, &[b"Invalid Request: not a JSON-RPC object"]),
    }
    // SAFETY: children of the live tree (this function's contract).
    let (version, method, id) = unsafe {
        (
            json::get_str(msg, c"jsonrpc"),
            json::get(msg, c"method"),
            json::get(msg, c"id"),
        )
    };
    let id_ok = matches!(kind(id), cJSON_Invalid | cJSON_Number | cJSON_String);
    let reply_id = if id_ok {
        id as *const cJSON
    } else {
        ptr::null()
    };
    if version.map(CStr::to_bytes) != Some(b"2.0") || !id_ok {
        return error(
            400,
            reply_id,
            INVALID_REQUEST,
            &[b"Invalid Request: \"jsonrpc\" must be \"2.0\" and \"id\" a number or a string"],
        );
    }
    // SAFETY: `method` is NULL or a live child.
    let method = match unsafe { json::string_value(method) } {
        Some(m) => m.to_bytes(),
        None if kind(method) == cJSON_Invalid && !id.is_null() && !modern => {
            // A response to a request of ours: the server sends none, so
            // there is nothing to match; accepted as the transport says
            // (2026-07-28 has no server-to-client requests: refused below).
            return accepted();
        }
        None => {
            return error(
                400,
                reply_id,
                INVALID_REQUEST,
                &[b"Invalid Request: \"method\" must be a string"],
            )
        }
    };
    // SAFETY: a live child or NULL.
    let params = unsafe { json::get(msg, c"params") };
    if !matches!(kind(params), cJSON_Invalid | cJSON_Object) {
        return error(
            200,
            reply_id,
            INVALID_PARAMS,
            &[INVALID_PARAMS_TEXT, b"\"params\" must be an object"],
        );
    }
    if modern {
        // SAFETY: `id` and `params` are NULL or live children.
        return unsafe { answer_modern(ctx, method, id, params) };
    }

    let known = METHODS.iter().position(|m| *m == method);
    if known == Some(INITIALIZE) {
        if id.is_null() {
            return error(
                400,
                ptr::null(),
                INVALID_REQUEST,
                &[b"initialize is a request: it needs an id"],
            );
        }
        // SAFETY: `params` is NULL or a live child.
        return unsafe { initialize(ctx, id, params) };
    }
    let Some(session_id) = ctx.session else {
        return error(
            400,
            reply_id,
            INVALID_REQUEST,
            &[b"Bad Request: no Mcp-Session-Id header; send initialize first"],
        );
    };
    let Some(session) = ctx.sessions.find(session_id, ctx.now) else {
        return error(
            404,
            reply_id,
            INVALID_REQUEST,
            &[b"Session not found: it ended or expired; send initialize again"],
        );
    };
    if id.is_null() {
        if known == Some(INITIALIZED) {
            session.initialized = true;
        }
        // Other notifications (cancelled, progress, roots) need nothing
        // from a server whose requests finish before it reads the next.
        return accepted();
    }
    match known {
        Some(PING) => result(id, &mut |out| out.put(b"{}")),
        // SAFETY: `params` is NULL or a live child.
        Some(LIST) => unsafe { list_tools(id, params, ctx.page_size) },
        // SAFETY: `params` is NULL or a live child.
        Some(CALL) => unsafe { call_tool(id, params) },
        _ => error(200, id, METHOD_NOT_FOUND, &[b"Method not found: ", method]),
    }
}

/// The `params._meta` keys of a 2026-07-28 request.
const META_VERSION: &CStr = c"io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &CStr = c"io.modelcontextprotocol/clientCapabilities";

/// A 2026-07-28 request (its version header already checked): the
/// envelope, then the routing headers, then the method. Intermediaries
/// route on the headers, so a request whose headers say something else
/// than its body is refused before it is run.
///
/// # Safety
/// `id` and `params` are NULL or live children of the request.
unsafe fn answer_modern(
    ctx: &Context<'_>,
    method: &[u8],
    id: *const cJSON,
    params: *const cJSON,
) -> Answer {
    if id.is_null() {
        // The revision gives notifications no meaning on this transport
        // (a call is cancelled by closing its connection): acknowledged.
        return accepted();
    }
    if ctx.duplicate_routing {
        return error(
            400,
            id,
            HEADER_MISMATCH,
            &[b"a routing header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) appears more than once"],
        );
    }
    // SAFETY: NULL or live children (this function's contract).
    let (meta, name) = unsafe { (json::get(params, c"_meta"), json::get(params, c"name")) };
    // SAFETY: `meta` is NULL or a live child.
    let (version, capabilities) = unsafe {
        (
            json::get(meta, META_VERSION),
            json::get(meta, META_CAPABILITIES),
        )
    };
    if version.is_null() || capabilities.is_null() {
        return error(
            400,
            id,
            INVALID_PARAMS,
            &[b"params._meta must be an object carrying the required \"io.modelcontextprotocol/protocolVersion\" and \"io.modelcontextprotocol/clientCapabilities\" envelope keys"],
        );
    }
    // SAFETY: a live child.
    let version = unsafe { json::string_value(version) }.map(CStr::to_bytes);
    let mismatch: Option<&[u8]> = if version != ctx.protocol {
        Some(b"MCP-Protocol-Version header does not match the request envelope's protocol version")
    } else if ctx.mcp_method != Some(method) {
        Some(b"Mcp-Method header does not match the request body's method")
    } else if method == b"tools/call"
        && !matches!(kind(name), cJSON_Invalid | cJSON_NULL)
        // SAFETY: `name` is a live child.
        && !unsafe { json::string_value(name) }
            .is_some_and(|n| names_match(ctx.mcp_name, n.to_bytes()))
    {
        Some(b"Mcp-Name header does not match the request body's 'name' parameter")
    } else {
        None
    };
    if let Some(why) = mismatch {
        return error(400, id, HEADER_MISMATCH, &[why]);
    }
    let (answer, extra): (Answer, &[u8]) = match method {
        b"server/discover" => (result(id, &mut |out| out.put(DISCOVER.as_bytes())), CACHE),
        // SAFETY: `params` is NULL or a live child.
        b"tools/list" => (unsafe { list_tools(id, params, ctx.page_size) }, CACHE),
        // SAFETY: `params` is NULL or a live child.
        b"tools/call" => (unsafe { call_tool(id, params) }, b""),
        // `initialize` and `ping` among them: gone from this revision.
        _ => return error(404, id, METHOD_NOT_FOUND, &[b"Method not found: ", method]),
    };
    stamp(answer, id, extra)
}

/// Whether the `Mcp-Name` header names `name`: verbatim, or as the
/// `=?base64?…?=` form a name that is no plain header value is sent in
/// (compared in canonical base64, 3 bytes of the name at a time).
fn names_match(header: Option<&[u8]>, name: &[u8]) -> bool {
    let Some(header) = header else { return false };
    use crate::base::text::{strip_prefix, strip_suffix};
    let Some(mut payload) = strip_prefix(header, b"=?base64?").and_then(|p| strip_suffix(p, b"?="))
    else {
        return header == name;
    };
    let mut rest = name;
    while !rest.is_empty() {
        let group = rest.get(..3).unwrap_or(rest);
        rest = rest.get(3..).unwrap_or_default();
        let mut quad = [0u8; 4];
        crate::wire::chat::inline_file::encode(group, &mut quad);
        match strip_prefix(payload, &quad) {
            Some(after) => payload = after,
            None => return false,
        }
    }
    payload.is_empty()
}

/// What `server/discover` answers (before [`stamp`]): the one revision
/// that needs no handshake (the handshake ones are found by `initialize`).
const DISCOVER: &str = concat!(
    "{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}},",
    "\"instructions\":\"",
    instructions!(),
    "\"}"
);

/// The caching fields of a listing: stale at once (a tool may be
/// registered any time), and private (it is behind a bearer token).
const CACHE: &[u8] = b",\"ttlMs\":0,\"cacheScope\":\"private\"";

/// The end of every 2026-07-28 result: its type and who answered.
const RESULT_END: &str = concat!(
    ",\"resultType\":\"complete\",\"_meta\":{\"io.modelcontextprotocol/serverInfo\":",
    "{\"name\":\"rtt-agent\",\"version\":\"",
    env!("CARGO_PKG_VERSION"),
    "\"}}}}"
);

/// A result `answer` with `extra` fields and [`RESULT_END`] added inside
/// its (non-empty) result object; errors pass unchanged.
fn stamp(mut answer: Answer, id: *const cJSON, extra: &[u8]) -> Answer {
    let body = &mut answer.body;
    if answer.code != 0 || crate::base::text::strip_suffix(body, b"}}").is_none() {
        return answer;
    }
    body.truncate(body.len().saturating_sub(2));
    for part in [extra, RESULT_END.as_bytes()] {
        if crate::base::fallible::extend(body, part).is_err() {
            return error(
                200,
                id,
                INTERNAL_ERROR,
                &[INTERNAL_ERROR_TEXT, b"out of memory"],
            );
        }
    }
    answer
}

/// The methods the server knows, found by one lookup; their indices below.
const METHODS: [&[u8]; 5] = [
    b"initialize",
    b"notifications/initialized",
    b"ping",
    b"tools/list",
    b"tools/call",
];
const INITIALIZE: usize = 0;
const INITIALIZED: usize = 1;
const PING: usize = 2;
const LIST: usize = 3;
const CALL: usize = 4;

fn accepted() -> Answer {
    Answer::new(202, Vec::new())
}

/// `{"jsonrpc":"2.0","id":id,"result":...}` with the result `write` makes
/// (a `dyn` closure: one copy of this function for every kind of result).
fn result(id: *const cJSON, write: &mut dyn FnMut(&mut Body) -> Result<(), WriteError>) -> Answer {
    let mut body = Body(Vec::new());
    let written = (|| {
        body.put(b"{\"jsonrpc\":\"2.0\",\"id\":")?;
        write_id(id, &mut body)?;
        body.put(b",\"result\":")?;
        write(&mut body)?;
        body.put(b"}")
    })();
    match written {
        Ok(()) => Answer::new(200, body.0),
        Err(WriteError::Sink) => error(
            200,
            id,
            INTERNAL_ERROR,
            &[
                INTERNAL_ERROR_TEXT,
                b"the answer is longer than this server sends (16384 bytes)",
            ],
        ),
        Err(_) => error(
            200,
            id,
            INTERNAL_ERROR,
            &[INTERNAL_ERROR_TEXT, b"out of memory"],
        ),
    }
}

/// # Safety
/// `id` and `params` are NULL or live children of the request.
unsafe fn initialize(ctx: &mut Context<'_>, id: *const cJSON, params: *const cJSON) -> Answer {
    // SAFETY: NULL or a live child (this function's contract).
    let Some(asked) = (unsafe { json::get_str(params, c"protocolVersion") }) else {
        return error(
            200,
            id,
            INVALID_PARAMS,
            &[
                INVALID_PARAMS_TEXT,
                b"initialize needs params.protocolVersion",
            ],
        );
    };
    // The client's revision when we speak it, else our newest: the client
    // decides whether it can go on with that.
    let version = VERSIONS
        .iter()
        .position(|v| *v == asked.to_bytes())
        .unwrap_or(0);
    let session = match ctx
        .sessions
        .create(ctx.now, ctx.idle_ticks, ctx.entropy, version as u8)
    {
        Ok(s) => s.id,
        Err(Full::AllLive) => {
            return error(
                503,
                id,
                TOO_MANY_SESSIONS,
                &[b"too many MCP sessions: end one (HTTP DELETE) or wait until one idles out"],
            )
        }
    };
    let mut answer = result(id, &mut |out| {
        out.put(b"{\"protocolVersion\":")?;
        write_string(VERSIONS.get(version).copied().unwrap_or(b""), out)?;
        out.put(
            concat!(
                ",\"capabilities\":{\"tools\":{\"listChanged\":false}},",
                "\"serverInfo\":{\"name\":\"rtt-agent\",\"version\":\"",
                env!("CARGO_PKG_VERSION"),
                "\"},\"instructions\":\"",
                instructions!(),
                "\"}"
            )
            .as_bytes(),
        )
    });
    if answer.status == 200 {
        answer.new_session = Some(session);
    } else {
        ctx.sessions.remove(&session);
    }
    answer
}

/// # Safety
/// `id` and `params` are NULL or live children of the request.
unsafe fn list_tools(id: *const cJSON, params: *const cJSON, page_size: usize) -> Answer {
    // SAFETY: NULL or a live child (this function's contract).
    let cursor = unsafe { json::get(params, c"cursor") };
    let start = if cursor.is_null() {
        0
    } else {
        // SAFETY: a live child.
        match unsafe { json::string_value(cursor) }.and_then(|c| parse_cursor(c.to_bytes())) {
            Some(n) => n,
            None => {
                return error(
                    200,
                    id,
                    INVALID_PARAMS,
                    &[INVALID_PARAMS_TEXT, b"unknown cursor"],
                )
            }
        }
    };
    let Some(tools) = ToolSet::lock() else {
        return error(
            200,
            id,
            INTERNAL_ERROR,
            &[
                INTERNAL_ERROR_TEXT,
                b"the tool registry is gone (the agent is stopping)",
            ],
        );
    };
    result(id, &mut |out| {
        out.put(b"{\"tools\":[")?;
        let mut listed = 0;
        let mut more = false;
        for node in tools.tools().filter(|&n| served(n)).skip(start) {
            if listed == page_size.max(1) {
                more = true;
                break;
            }
            if listed > 0 {
                out.put(b",")?;
            }
            // SAFETY: a live node, read under the tool lock.
            unsafe { write_tool(node, out)? };
            listed += 1;
        }
        out.put(b"]")?;
        if more {
            out.put(b",\"nextCursor\":\"")?;
            let mut digits = [0u8; 20];
            out.put(crate::base::text::decimal(
                (start + listed) as u64,
                &mut digits,
            ))?;
            out.put(b"\"")?;
        }
        out.put(b"}")
    })
}

/// Whether this server offers the tool of `node`: the board's own tools,
/// not those a remote MCP server lends the agent (two boards pointed at
/// each other then do not loop).
#[cfg(feature = "mcp-client")]
fn served(node: AgentToolNode_t) -> bool {
    !crate::abilities::mcp_client::is_remote(node)
}
#[cfg(not(feature = "mcp-client"))]
fn served(_node: AgentToolNode_t) -> bool {
    true
}

/// A cursor is the index of the page's first tool (the registry holds far
/// fewer than a million).
fn parse_cursor(c: &[u8]) -> Option<usize> {
    crate::base::text::parse_decimal(c, 6)
}

/// `{"name","description","inputSchema"}` of one registered tool.
///
/// # Safety
/// `node` is a live registry node, read under the tool lock.
unsafe fn write_tool(node: AgentToolNode_t, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    // SAFETY: the node and its definition are live (contract).
    let (name, description, parameters) = unsafe {
        let function = json::get((*node).tool_obj, c"function");
        (
            json::get_str(function, c"name"),
            json::get_str(function, c"description"),
            json::get(function, c"parameters"),
        )
    };
    out.put(b"{\"name\":")?;
    write_string(name.map_or(&b""[..], |n| n.to_bytes()), out)?;
    if let Some(d) = description {
        out.put(b",\"description\":")?;
        write_string(d.to_bytes(), out)?;
    }
    out.put(b",\"inputSchema\":")?;
    if kind(parameters) == cJSON_Object {
        // SAFETY: a live object of the definition; types mapped as the
        // request writer maps them for the model.
        unsafe { write_value(parameters, true, 0, out)? };
    } else {
        out.put(b"{\"type\":\"object\"}")?;
    }
    out.put(b"}")
}

/// # Safety
/// `id` and `params` are NULL or live children of the request.
unsafe fn call_tool(id: *const cJSON, params: *const cJSON) -> Answer {
    // SAFETY: NULL or live children (this function's contract).
    let (name, mut args) = unsafe {
        (
            json::get_str(params, c"name"),
            json::get(params, c"arguments"),
        )
    };
    let Some(name) = name.map(CStr::to_bytes) else {
        return error(
            200,
            id,
            INVALID_PARAMS,
            &[INVALID_PARAMS_TEXT, b"tools/call needs params.name"],
        );
    };
    let mut own_args = ptr::null_mut();
    match kind(args) {
        cJSON_Object => {}
        cJSON_Invalid => {
            // SAFETY: a fresh object, deleted below.
            own_args = unsafe { cJSON_CreateObject() };
            if own_args.is_null() {
                return error(
                    200,
                    id,
                    INTERNAL_ERROR,
                    &[INTERNAL_ERROR_TEXT, b"out of memory"],
                );
            }
            args = own_args;
        }
        _ => {
            return error(
                200,
                id,
                INVALID_PARAMS,
                &[INVALID_PARAMS_TEXT, b"params.arguments must be an object"],
            )
        }
    }
    let answer = match ToolSet::lock() {
        None => error(
            200,
            id,
            INTERNAL_ERROR,
            &[
                INTERNAL_ERROR_TEXT,
                b"the tool registry is gone (the agent is stopping)",
            ],
        ),
        Some(tools) => match tools.find(name, served) {
            None => error(200, id, INVALID_PARAMS, &[b"Unknown tool: ", name]),
            // SAFETY: a node of the set held here; `args` a live object.
            Some(node) => unsafe { run(&tools, id, name, node, args) },
        },
    };
    if !own_args.is_null() {
        // SAFETY: the object made above; the tool only borrowed it.
        unsafe { cJSON_Delete(own_args) };
    }
    answer
}

/// Check the arguments, run the tool, copy its result into the answer.
///
/// # Safety
/// `node` came from `tools`; `args` is a live object.
unsafe fn run(
    tools: &ToolSet,
    id: *const cJSON,
    name: &[u8],
    node: AgentToolNode_t,
    args: *mut cJSON,
) -> Answer {
    // SAFETY: as this function's contract says.
    if let Err(why) = unsafe { tools.check(node, args) } {
        return result(id, &mut |out| {
            out.put(b"{\"content\":[{\"type\":\"text\",\"text\":")?;
            let mut text = Body(Vec::new());
            let mut failed = false;
            let mut push = |p: &[u8]| failed |= text.put(p).is_err();
            push(b"the arguments for \"");
            push(name);
            push(b"\" do not fit its parameters: ");
            tool_run::describe(&mut push, why);
            push(b"; the tool was not run");
            if failed {
                return Err(WriteError::NoMemory);
            }
            write_string(&text.0, out)?;
            out.put(b"}],\"isError\":true}")
        });
    }
    // SAFETY: `node` came from `tools`; `args` is a live object (contract).
    let ret = unsafe { tools.execute(node, args) };
    let failed = ret.status != rt_eok();
    result(id, &mut |out| {
        out.put(b"{\"content\":[")?;
        let mut parts = 0;
        let mut i = 0;
        loop {
            // SAFETY: the node's live result set (or NULL); an index past
            // its end gives NULL.
            let (text, kind) = unsafe {
                (
                    messages_get_content_idx(ret.result, i),
                    messages_get_type_idx(ret.result, i),
                )
            };
            if text.is_null() {
                break;
            }
            i += 1;
            if kind != TYPE_TEXT {
                continue;
            }
            if parts > 0 {
                out.put(b",")?;
            }
            parts += 1;
            out.put(b"{\"type\":\"text\",\"text\":")?;
            // SAFETY: a NUL-terminated text of the live set.
            write_string(unsafe { CStr::from_ptr(text) }.to_bytes(), out)?;
            out.put(b"}")?;
        }
        if parts == 0 && failed {
            out.put(b"{\"type\":\"text\",\"text\":")?;
            let mut text = Body(Vec::new());
            text.put(b"the tool \"")?;
            text.put(name)?;
            text.put(b"\" failed (invalid or missing arguments?)")?;
            write_string(&text.0, out)?;
            out.put(b"}")?;
        }
        out.put(if failed {
            b"],\"isError\":true}"
        } else {
            b"],\"isError\":false}"
        })
    })
}
