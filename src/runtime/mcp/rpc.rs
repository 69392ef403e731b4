//! One JSON-RPC 2.0 message of MCP's Streamable HTTP transport, answered
//! against the tool registry: `initialize`, `ping`, `tools/list`,
//! `tools/call`, the client's notifications; everything else gets the
//! standard error codes.
//!
//! The request is parsed with the board's cJSON; the answer is written
//! into a capped buffer with the request writer's JSON writers (tool
//! schemas go out with their types mapped to JSON Schema as in chat
//! requests). HTTP statuses follow the transport: 202 for notifications
//! and responses, 200 for every answered request (a JSON-RPC error
//! included), 400 for what is not a JSON-RPC request at all or lacks its
//! session, 404 for a session that ended, 503 when the session table is
//! full.

#![allow(non_upper_case_globals)]

use crate::abi::messages::{messages_get_content_idx, messages_get_type_idx, TYPE_TEXT};
use crate::base::json_writer::{write_integer, write_string, ByteSink, WriteError};
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::rtt::rt_eok;
use crate::runtime::tool_run::{self, ToolSet};
use crate::runtime::tools::AgentToolNode_t;
use crate::wire::chat::request::write_value;
use crate::wire::mcp_session::{Full, Sessions, ID_LEN, VERSIONS};
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
        body.put(b"}}")
    })();
    if written.is_err() {
        return Answer {
            fixed: OUT_OF_MEMORY,
            ..Answer::new(503, Vec::new())
        };
    }
    Answer::new(status, body.0)
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
    if let Some(v) = ctx.protocol {
        if !VERSIONS.contains(&v) {
            return error(
                400,
                ptr::null(),
                INVALID_REQUEST,
                &[
                    b"unsupported MCP-Protocol-Version ",
                    v,
                    b" (this server speaks 2025-11-25 and 2025-06-18)",
                ],
            );
        }
    }
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
    let answer = unsafe { answer_message(ctx, tree) };
    // SAFETY: as above; nothing borrows from it any more.
    unsafe { cJSON_Delete(tree) };
    answer
}

/// # Safety
/// `msg` is a live parsed tree, unchanged during the call.
unsafe fn answer_message(ctx: &mut Context<'_>, msg: *mut cJSON) -> Answer {
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
        None if kind(method) == cJSON_Invalid && !id.is_null() => {
            // A response to a request of ours: the server sends none, so
            // there is nothing to match; accepted as the transport says.
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
                "\"},\"instructions\":\"Tools of an RT-Thread device. ",
                "They run one at a time, shared with the device's own agent.\"}"
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
    !crate::runtime::mcp_client::is_remote(node)
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
