//! The MCP client (feature `mcp-client`, `PKG_AGENT_MCP_CLIENT`): the tools
//! of remote MCP servers offered to the board's model next to its own.
//!
//! At agent start ([`start`], called by the agent right after
//! `init_tools()`) each server of the list ([`servers`]) gets the
//! handshake of the Streamable HTTP transport, `initialize` (protocol
//! version 2025-11-25; a server answering 2025-06-18 or 2025-03-26 is
//! taken too) and `notifications/initialized`. A server that refuses
//! `initialize` with HTTP 400 or 404 (what a server speaking only the
//! stateless 2026-07-28 answers) is asked `server/discover` in that
//! revision's form, and when it names 2026-07-28 it is spoken to so from
//! then on: no session, the `_meta` envelope in every request, the
//! `Mcp-Method`/`Mcp-Name` headers, its 400/404 answers read as JSON-RPC
//! errors. Handshake servers see no request more than before. Then
//! `tools/list` (following `nextCursor`, at most [`MAX_PAGES`] pages). Every remote tool becomes a
//! normal registry node (`append_tool`): it is offered to the model, its
//! arguments are checked against its `inputSchema` like a C tool's, and
//! tools-text mode lists it. Its `execute_func` is [`call_remote`], which
//! sends `tools/call` and fills the node's `ret.messages` with the text
//! parts of the result.
//!
//! Names: `m<N>_<name>`, N the server's place in the list (1-based), the
//! remote name with every byte outside `[A-Za-z0-9_-]` made `_`, cut to 64
//! bytes (`^[a-zA-Z0-9_-]{1,64}$`, what every provider accepts). A name
//! that still collides is refused by `append_tool` and logged.
//!
//! Every request goes through the chat client's transport
//! (`crate::net::transport::send`): its deadline
//! (`PKG_AGENT_REQUEST_TIMEOUT_MS`), read timeout, retries and backoff.
//! A server that is down, refuses the handshake or answers garbage leaves
//! its tools out with a `log_w!` line saying why; the agent starts anyway.
//!
//! Ownership: the state ([`State`]) belongs to the thread that owns the
//! tool registry (the loop thread while the agent runs; the thread
//! starting or stopping it otherwise), as the registry does. A busy flag
//! makes any other use (a C caller running a tool node from another thread
//! meanwhile) an error answer rather than a race. [`stop`] frees it all;
//! the nodes themselves are the registry's and go with it.

#[cfg(feature = "msh-extras")]
mod command;
pub mod rpc;
pub mod servers;

use crate::base::text_buf::TextBuf;
use crate::cjson::json::{self, Json};
use crate::cjson::sys::*;
use crate::net::error::{ErrorText, Failure, ServerMessage};
use crate::net::transport::{self, ResponseSink, Settings};
use crate::rtt::atomic::{AtomicBool, Ordering};
use crate::rtt::rt_eok;
use crate::runtime::tools::{append_tool, AgentToolList, AgentToolNode_t};
use crate::wire::stream::Format;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::ffi::{c_char, CStr};
use rpc::{Params, Reply, ReplyError, Rpc};
use servers::Url;

/// Most `tools/list` pages read from one server.
pub const MAX_PAGES: usize = 8;
/// Longest tool name a provider accepts.
const NAME_MAX: usize = 64;
/// Longest `nextCursor` followed.
const CURSOR_MAX: usize = 256;

use crate::rtt::glue::{agent_glue_mcp_max_response, agent_glue_mcp_max_tools};

fn max_tools() -> usize {
    // SAFETY: a plain getter of the glue.
    (unsafe { agent_glue_mcp_max_tools() }).clamp(1, 1024) as usize
}

/// The largest JSON-RPC message taken; a test may lower it.
fn max_response() -> usize {
    crate::runtime::settings::snapshot()
        .mcp_max_response
        // SAFETY: a plain getter of the glue.
        .unwrap_or_else(|| (unsafe { agent_glue_mcp_max_response() }).clamp(1024, 1 << 20) as usize)
}

/// Replace `PKG_AGENT_MCP_MAX_RESPONSE` from the next request on (`None`:
/// the board's); for tests and the simulator.
pub fn set_max_response(bytes: Option<usize>) {
    crate::runtime::settings::change(|s| s.mcp_max_response = bytes);
}

/// One remote server of this agent run.
struct Server {
    url: Url,
    /// `Mcp-Session-Id` of the handshake, NUL-terminated (empty: none).
    session: Vec<u8>,
    /// The version agreed in the handshake.
    protocol: Option<&'static CStr>,
    /// It speaks 2026-07-28 (`protocol` says so too; no session).
    modern: bool,
    next_id: u32,
}

impl Server {
    fn session_id(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.session).unwrap_or(c"")
    }
}

/// A registered remote tool.
struct Remote {
    /// The registry's name (`m<N>_...`).
    local: Vec<u8>,
    server: usize,
    /// Its name on the server.
    name: Vec<u8>,
}

struct State {
    servers: Vec<Server>,
    tools: Vec<Remote>,
}

struct Owned(UnsafeCell<State>);
// SAFETY: used only by the registry's owner, and only while BUSY is taken
// (see `with_state`).
unsafe impl Sync for Owned {}

static STATE: Owned = Owned(UnsafeCell::new(State {
    servers: Vec::new(),
    tools: Vec::new(),
}));
static BUSY: AtomicBool = AtomicBool::new(false);

/// Run `f` on the state; `None` when another call holds it.
fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> Option<R> {
    if BUSY
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return None;
    }
    // SAFETY: BUSY was taken above, so this is the only reference.
    let r = f(unsafe { &mut *STATE.0.get() });
    BUSY.store(false, Ordering::Release);
    Some(r)
}

/// Is `node` a remote tool (registered by this client)? The MCP server
/// leaves these out of its own `tools/list`. False for NULL and for
/// anything that is not a node of the registry: the pointer is only
/// compared until the registry's walk finds it, so any value is safe.
pub fn is_remote(node: AgentToolNode_t) -> bool {
    let Some(found) = crate::runtime::tools::nodes().find(|&n| n == node) else {
        return false;
    };
    // SAFETY: `found` is a linked node of the registry, alive during the
    // walk's owner's use (see `tools::nodes`); read only.
    let f = unsafe { (*found).execute_func };
    f.is_some_and(|f| {
        core::ptr::fn_addr_eq(
            f,
            call_remote as unsafe extern "C" fn(*mut cJSON, *mut AgentToolList),
        )
    })
}

/// Log the warning `mcp: <url><what><detail><tail>` about one server.
fn warn_about(url: &Url, what: &[u8], detail: &[u8], tail: &[u8]) {
    crate::log_w!("mcp: ", url.as_bytes(), what, detail, tail);
}

/// The settings of a request to `url`: the chat client's.
///
/// Not inlined: the overrides' snapshot it reads is on the stack only here,
/// not in the frame of the request, under which the answer is read.
#[inline(never)]
fn settings(url: &CStr) -> Settings<'_> {
    let net = crate::runtime::chat::network(&crate::runtime::settings::snapshot().chat);
    Settings {
        url,
        api_key: c"",
        timeout_ms: net.timeout_ms,
        retries: net.retries,
        retry_base_ms: net.retry_base_ms,
        read_buffer: net.read_buffer,
        request_timeout_ms: net.request_timeout_ms,
        format: Format::OpenAi,
    }
}

/// Why one exchange failed.
enum Failed {
    /// A 404 to a request with a session id: the server forgot the session.
    SessionGone,
    /// The server answered with a JSON-RPC `error` (`error` says which):
    /// it took the request and refused it.
    Refused,
    /// HTTP 400 or 404 to a request without a session (`error` says
    /// what): a stateless server's answer to `initialize`.
    NotHandshake,
    /// Anything else (`error` says what).
    Other,
}

/// Why [`exchange`] failed: the server's JSON-RPC error, or no answer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NoResult {
    Refused,
    Failed,
}

impl From<Failed> for NoResult {
    fn from(f: Failed) -> Self {
        match f {
            Failed::Refused => NoResult::Refused,
            Failed::SessionGone | Failed::NotHandshake | Failed::Other => NoResult::Failed,
        }
    }
}

/// [`exchange_once`]; after a 404 for a forgotten session the handshake
/// runs again and the request is repeated, once. (Two steps, not a
/// recursion: the stack estimate stays bounded.)
fn exchange(
    server: &mut Server,
    request: bool,
    method: &CStr,
    params: Params<'_>,
    error: &mut ErrorText,
) -> Result<Json, NoResult> {
    match exchange_once(server, request, method, params, error) {
        Err(Failed::SessionGone) => {
            warn_about(
                &server.url,
                b" forgot the session (404); a new handshake",
                b"",
                b"",
            );
            handshake(server, error).map_err(|()| NoResult::Failed)?;
            exchange_once(server, request, method, params, error).map_err(NoResult::from)
        }
        other => other.map_err(NoResult::from),
    }
}

/// Send one request (a notification when `request` is false) and take its
/// answer, owned (its `result` is there). `error` says what failed.
fn exchange_once(
    server: &mut Server,
    request: bool,
    method: &CStr,
    params: Params<'_>,
    error: &mut ErrorText,
) -> Result<Json, Failed> {
    let call = method == c"tools/call";
    let id = if request {
        let id = server.next_id;
        server.next_id = server.next_id.wrapping_add(1).max(1);
        Some(id)
    } else {
        None
    };
    let url = &server.url;
    let mut host = [0u8; 130];
    let name_header = match params {
        Params::Call { name, .. } if server.modern => match rpc::header_name(name) {
            Some(n) => n,
            None => {
                error.set(&[b"no memory for the request"]);
                return Err(Failed::Other);
            }
        },
        _ => Vec::new(),
    };
    let rpc = Rpc {
        id,
        method,
        params,
        modern: server.modern,
        name_header: CStr::from_bytes_until_nul(&name_header).ok(),
        session: server.session_id(),
        protocol: server.protocol,
        host: rpc::host_with_port(url.as_bytes(), &mut host),
    };
    let mut reply = Reply::new(id, max_response());
    reply.modern = server.modern;
    let mut settings = settings(url.as_cstr());
    if call {
        // Sent once: after a failed read the server may have run the tool
        // already (a motor, a relay), and a retry that succeeded would
        // report one run where there were two; unless the tool's options
        // ask for retries (its owner knows it can run twice).
        settings.retries = 0;
    }
    let tool_timeout = if call {
        limit_call(&mut settings)
    } else {
        None
    };
    let mut said = ServerMessage::new();
    // SAFETY: the arguments tree `rpc` may borrow is the caller's, alive and
    // unmodified for the call.
    let sent = unsafe { transport::send(&settings, &rpc, &mut reply, &mut said) };
    if let Err(failed) = sent {
        error.clear();
        failed.describe(&said, error, &|e, out| reply.describe(e, out));
        if let (Failure::Deadline { .. }, Some(ms)) = (failed.failure, tool_timeout) {
            // The tool's own timeout ended it, not the option the text names.
            let mut digits = [0u8; 20];
            error.set(&[
                b"no answer within the tool's timeout of ",
                crate::base::text::decimal(u64::from(ms), &mut digits),
                b" ms",
            ]);
        }
        if failed.failure == Failure::Status(404) && !server.session.is_empty() {
            return Err(Failed::SessionGone);
        }
        if matches!(failed.failure, Failure::Status(400 | 404)) && server.session.is_empty() {
            return Err(Failed::NotHandshake);
        }
        if failed.stream == Some(ReplyError::NoMemory) {
            crate::log_e!("mcp: ", error.as_str());
        }
        return Err(Failed::Other);
    }
    if method == c"initialize" && !reply.session_id.is_empty() {
        server.session = core::mem::take(&mut reply.session_id);
    }
    // SAFETY: the reply hands over its parsed tree (NULL or detached).
    let answer = unsafe { Json::from_raw(reply.take_answer()) };
    if !request {
        return Ok(answer);
    }
    // SAFETY: `answer.as_ptr()` is the live answer (send succeeded on a request,
    // so the reply holds one), owned by `answer`.
    unsafe {
        if answer.as_ptr().is_null() {
            error.set(&[b"no answer to the request"]);
            return Err(Failed::Other);
        }
        let err = json::get(answer.as_ptr(), c"error");
        if !err.is_null() {
            let message = json::get_str(err, c"message").map_or(&b"?"[..], CStr::to_bytes);
            let code = json::get(err, c"code");
            let code = if code.is_null() { 0 } else { (*code).valueint };
            let mut digits = [0u8; 20];
            let sign: &[u8] = if code < 0 { b"-" } else { b"" };
            error.set(&[
                b"JSON-RPC error ",
                sign,
                crate::base::text::decimal(u64::from(code.unsigned_abs()), &mut digits),
                b": ",
                message,
            ]);
            return Err(Failed::Refused);
        }
        if json::get(answer.as_ptr(), c"result").is_null() {
            error.set(&[b"the answer has no result"]);
            return Err(Failed::Other);
        }
    }
    Ok(answer)
}

/// A tool's own timeout and retries (`PKG_AGENT_TOOL_OPTIONS`): the call's
/// whole request, retries and back-off included, ends at its timeout. The
/// timeout (ms) when it is the request's deadline.
#[cfg(feature = "tool-options")]
fn limit_call(settings: &mut Settings<'_>) -> Option<u32> {
    let limits = crate::abilities::tool_options::current();
    settings.retries = u32::from(limits.retries);
    let left = limits
        .left_ms
        .filter(|&left| left < settings.request_timeout_ms)?;
    settings.request_timeout_ms = left;
    settings.timeout_ms = settings.timeout_ms.min(left);
    crate::abilities::tool_options::timeout_ms()
}
#[cfg(not(feature = "tool-options"))]
fn limit_call(_settings: &mut Settings<'_>) -> Option<u32> {
    None
}

/// `initialize` and `notifications/initialized`; `server/discover` when
/// the server refuses `initialize` as a stateless one does.
///
/// `initialize` comes first (not the probe the specification also allows):
/// a handshake server then gets exactly the requests it always got.
fn handshake(server: &mut Server, error: &mut ErrorText) -> Result<(), ()> {
    server.session = Vec::new();
    server.protocol = None;
    server.modern = false;
    let answer = match exchange_once(server, true, c"initialize", Params::Initialize, error) {
        Ok(answer) => answer,
        Err(Failed::NotHandshake) => return discover(server, error),
        Err(_) => return Err(()),
    };
    // SAFETY: `answer.as_ptr()` is a live answer with a `result` (exchange checked).
    let version =
        unsafe { json::get_str(json::get(answer.as_ptr(), c"result"), c"protocolVersion") };
    let Some(agreed) = rpc::ACCEPTED_VERSIONS
        .iter()
        .find(|v| Some(**v) == version)
        .copied()
    else {
        error.set(&[
            b"the server speaks protocol version ",
            version.map_or(&b"(none)"[..], CStr::to_bytes),
            b", not 2025-11-25, 2025-06-18 or 2025-03-26",
        ]);
        return Err(());
    };
    server.protocol = Some(agreed);
    drop(answer);
    exchange_once(
        server,
        false,
        c"notifications/initialized",
        Params::None,
        error,
    )
    .map(drop)
    .map_err(drop)
}

/// `server/discover` at 2026-07-28: the server is spoken to in that
/// revision when its `supportedVersions` name it. On failure `error` says
/// why (the discover's answer when it had one, else `initialize`'s).
fn discover(server: &mut Server, error: &mut ErrorText) -> Result<(), ()> {
    server.modern = true;
    server.protocol = Some(rpc::MODERN);
    let speaks = match exchange_once(server, true, c"server/discover", Params::None, error) {
        // SAFETY: `answer.as_ptr()` is a live answer with a `result`.
        Ok(answer) => unsafe {
            let versions = json::get(json::get(answer.as_ptr(), c"result"), c"supportedVersions");
            json::children(versions).any(|v| json::string_value(v) == Some(rpc::MODERN))
        },
        Err(_) => return Err(()),
    };
    if !speaks {
        error.set(&[
            b"the server refuses initialize and does not list 2026-07-28 in server/discover",
        ]);
        server.modern = false;
        server.protocol = None;
        return Err(());
    }
    crate::log_i!(
        "mcp: ",
        server.url.as_bytes(),
        " speaks 2026-07-28 (stateless, no session)"
    );
    Ok(())
}

/// `name` as a registry name for server `index` (0-based).
fn local_name(index: usize, name: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut digits = [0u8; 20];
    crate::base::fallible::extend(&mut out, b"m").ok()?;
    crate::base::fallible::extend(
        &mut out,
        crate::base::text::decimal((index + 1) as u64, &mut digits),
    )
    .ok()?;
    crate::base::fallible::push(&mut out, b'_').ok()?;
    for &b in name {
        if out.len() == NAME_MAX {
            break;
        }
        let ok = b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        crate::base::fallible::push(&mut out, if ok { b } else { b'_' }).ok()?;
    }
    Some(out)
}

/// The definition of a remote tool, in the registry's shape
/// (`{"type":"function","function":{"name","description","parameters"}}`),
/// its `inputSchema` moved out of `tool`.
///
/// # Safety
/// `tool` is a live object of a tree owned by the caller.
unsafe fn definition(tool: *mut cJSON, local: &[u8]) -> *mut cJSON {
    let mut name: Vec<u8> = Vec::new();
    if crate::base::fallible::extend(&mut name, local).is_err()
        || crate::base::fallible::push(&mut name, 0).is_err()
    {
        return core::ptr::null_mut();
    }
    // SAFETY: `tool` is live (contract); every item made here is owned by
    // `item` or deleted; add_to_object takes ownership in every case.
    unsafe {
        let description = json::get_str(tool, c"description").unwrap_or(c"");
        let mut schema = cJSON_DetachItemFromObjectCaseSensitive(tool, c"inputSchema".as_ptr());
        // A detached item keeps its key, and `json::add_to_object` reads a
        // key as "attached": without this, a failed attach (no memory for
        // the new key) would leak the schema.
        if !schema.is_null() && (*schema).type_ & cJSON_StringIsConst == 0 {
            cJSON_free((*schema).string as *mut core::ffi::c_void);
        }
        if !schema.is_null() {
            (*schema).string = core::ptr::null_mut();
        }
        if !schema.is_null() && (*schema).type_ & 0xFF != cJSON_Object {
            cJSON_Delete(schema);
            schema = core::ptr::null_mut();
        }
        if schema.is_null() {
            schema = cJSON_CreateObject();
            if json::add_to_object(schema, c"type", cJSON_CreateString(c"object".as_ptr())).is_err()
            {
                cJSON_Delete(schema);
                return core::ptr::null_mut();
            }
        }
        let item = cJSON_CreateObject();
        let function = cJSON_CreateObject();
        if item.is_null() || function.is_null() {
            cJSON_Delete(item);
            cJSON_Delete(function);
            cJSON_Delete(schema);
            return core::ptr::null_mut();
        }
        let ok = json::add_to_object(
            function,
            c"name",
            cJSON_CreateString(name.as_ptr() as *const c_char),
        )
        .is_ok()
            & json::add_to_object(
                function,
                c"description",
                cJSON_CreateString(description.as_ptr()),
            )
            .is_ok()
            & json::add_to_object(function, c"parameters", schema).is_ok()
            & json::add_to_object(item, c"type", cJSON_CreateString(c"function".as_ptr())).is_ok()
            & json::add_to_object(item, c"function", function).is_ok();
        if !ok {
            cJSON_Delete(item);
            return core::ptr::null_mut();
        }
        item
    }
}

/// Register the tools of one `tools/list` page of the server at
/// `state.servers[slot]`, the `index`-th of the list (named `m<index+1>_`);
/// false once the cap on remote tools is reached.
///
/// # Safety
/// `page` is a live answer owned by the caller.
unsafe fn register_page(
    state_tools: &mut Vec<Remote>,
    index: usize,
    slot: usize,
    url: &Url,
    page: *mut cJSON,
) -> bool {
    // SAFETY: `page` is live (contract); `tools` is NULL or its child.
    let tools = unsafe { json::get(json::get(page, c"result"), c"tools") };
    // SAFETY: as above; children of a live array.
    for tool in unsafe { json::children(tools) } {
        if state_tools.len() >= max_tools() {
            crate::log_w!(
                "mcp: more than ",
                max_tools(),
                " remote tools (PKG_AGENT_MCP_MAX_TOOLS); the rest of ",
                url.as_bytes(),
                " are left out"
            );
            return false;
        }
        // SAFETY: `tool` is a live child of the page.
        let Some(name) = (unsafe { json::get_str(tool, c"name") }).map(CStr::to_bytes) else {
            warn_about(url, b" listed a tool without a name; left out", b"", b"");
            continue;
        };
        // Its entry in `state_tools` and its definition; `None` without
        // memory (nothing left behind).
        let made = (|| {
            let local = local_name(index, name)?;
            let remote_name = crate::base::fallible::copy_of(name).ok()?;
            // SAFETY: `tool` is a live object of the page, which the caller
            // owns.
            let obj = unsafe { definition(tool, &local) };
            if obj.is_null() {
                return None;
            }
            let remote = Remote {
                local,
                server: slot,
                name: remote_name,
            };
            if crate::base::fallible::push(state_tools, remote).is_err() {
                // SAFETY: `obj` is a detached tree made here.
                unsafe { cJSON_Delete(obj) };
                return None;
            }
            Some(obj)
        })();
        let Some(obj) = made else {
            crate::log_e!("mcp: no memory for the remote tool ", name);
            return false;
        };
        // SAFETY: `obj` is a detached definition, handed over; the function
        // has the execute_func signature.
        if unsafe { append_tool(obj, Some(call_remote)) } != rt_eok() {
            state_tools.pop();
            crate::log_w!(
                "mcp: the remote tool ",
                name,
                " of ",
                url.as_bytes(),
                " was not registered (its name is taken, or no memory)"
            );
        }
    }
    true
}

/// Add a server at `url` to `servers`; false without memory.
///
/// Not inlined: the server is made on the stack before it moves to the
/// heap, and that copy is not kept in [`connect`]'s frame, under which the
/// handshake and the tool lists are exchanged.
#[inline(never)]
fn add_server(servers: &mut Vec<Server>, url: &Url) -> bool {
    crate::base::fallible::push(
        servers,
        Server {
            url: *url,
            session: Vec::new(),
            protocol: None,
            modern: false,
            next_id: 1,
        },
    )
    .is_ok()
}

/// Handshake with server `index` and register its tools; false (its tools
/// left out, the reason logged) when it failed.
fn connect(state: &mut State, index: usize, url: &Url) {
    let mut error = ErrorText::new();
    if !add_server(&mut state.servers, url) {
        crate::log_e!("mcp: no memory for the server ", url.as_bytes());
        return;
    }
    // Its place in `state.servers`, which a server refused for want of
    // memory leaves out: not always `index`.
    let slot = state.servers.len().saturating_sub(1);
    let Some(server) = state.servers.get_mut(slot) else {
        return;
    };
    let first_tool = state.tools.len();
    if handshake(server, &mut error).is_err() {
        warn_about(
            url,
            b": its tools are left out (initialize failed: ",
            error.as_str().as_bytes(),
            b")",
        );
        return;
    }
    let mut cursor: Vec<u8> = Vec::new();
    for page in 0..MAX_PAGES {
        let answer = match exchange(
            server,
            true,
            c"tools/list",
            Params::Cursor(&cursor),
            &mut error,
        ) {
            Ok(a) => a,
            Err(_) => {
                warn_about(
                    url,
                    b": tools/list failed (",
                    error.as_str().as_bytes(),
                    b"); its tools from there on are left out",
                );
                break;
            }
        };
        // SAFETY: `answer.as_ptr()` is a live answer owned by `answer`.
        if !unsafe { register_page(&mut state.tools, index, slot, url, answer.as_ptr()) } {
            break;
        }
        // SAFETY: as above.
        let next = unsafe { json::get_str(json::get(answer.as_ptr(), c"result"), c"nextCursor") };
        cursor.clear();
        match next.map(CStr::to_bytes) {
            Some(n) if !n.is_empty() && n.len() <= CURSOR_MAX => {
                if crate::base::fallible::extend(&mut cursor, n).is_err() {
                    crate::log_e!("mcp: no memory for a tools/list cursor");
                    break;
                }
            }
            Some(n) if !n.is_empty() => {
                warn_about(
                    url,
                    b": a tools/list cursor over 256 bytes; the later pages are left out",
                    b"",
                    b"",
                );
                break;
            }
            _ => break,
        }
        if page + 1 == MAX_PAGES {
            warn_about(
                url,
                b": more than 8 tools/list pages; the later ones are left out",
                b"",
                b"",
            );
        }
    }
    crate::log_i!(
        "mcp: ",
        url.as_bytes(),
        ": ",
        state.tools.len().saturating_sub(first_tool),
        " remote tool(s)"
    );
}

/// Connect to every listed server and register its tools (at agent start,
/// right after `init_tools()`, on the thread that owns the registry).
// Kept out of `build_agent`, its one caller, so that the size report
// counts the client's start as the client's.
#[inline(never)]
pub fn start() {
    stop();
    let done = with_state(|state| {
        for i in 0..servers::MAX_SERVERS {
            let Some(url) = servers::get(i) else { break };
            if state.tools.len() >= max_tools() {
                // No room for its tools: no handshake that could only wait.
                warn_about(
                    &url,
                    b": its tools are left out (PKG_AGENT_MCP_MAX_TOOLS reached)",
                    b"",
                    b"",
                );
                continue;
            }
            connect(state, i, &url);
        }
    });
    if done.is_none() {
        crate::log_w!("mcp: the client is in use; no remote tools this time");
    }
}

/// Forget every server and remote tool (at agent stop, before the tool
/// registry is destroyed; the nodes go with the registry). webclient 2.x
/// sends GET and POST only, so sessions are not ended with an HTTP DELETE:
/// the servers expire them (docs/mcp-client.md).
pub fn stop() {
    with_state(|state| {
        state.servers = Vec::new();
        state.tools = Vec::new();
    });
}

/// Run a remote tool: `tools/call` on its server, and the result's text
/// parts (or what failed) as the node's result, as a C tool leaves its
/// own. The tool dispatch (`tool_run::ToolSet::execute`) calls this for
/// every node [`is_remote`] says is one. Ownership: `args` is borrowed;
/// the node's old `ret.messages` is freed and replaced by a new set the
/// node owns.
///
/// # Safety
/// `node` is a live node of the registry, `args` NULL or a live object.
unsafe fn run_remote(node: *mut AgentToolList, args: *mut cJSON, text: &mut TextBuf) -> bool {
    // SAFETY: `node` is live; `args` NULL or a live object, borrowed.
    with_state(|state| unsafe { call(state, node, args, text) }).unwrap_or_else(|| {
        text.say(&[b"error: the MCP client is busy with another call; try again"]);
        false
    })
}

/// A remote tool, as the registry runs it. A result cut short by memory
/// would mislead the model: NO_MEMORY says so instead.
static REMOTE: crate::runtime::tools::Native = crate::runtime::tools::Native {
    run: run_remote,
    no_memory: NO_MEMORY,
};

/// The `execute_func` a remote tool's node carries, for C code that calls
/// a node's function itself (the C package's nodes all have one); the
/// library's own dispatch finds [`REMOTE`] without it. Its own, not the
/// abilities' common one: it tells a remote node from the others
/// ([`is_remote`]).
///
/// # Safety
/// As every tool's execute function: `args` is NULL or a live object,
/// `node` NULL or a live node of the registry.
pub unsafe extern "C" fn call_remote(args: *mut cJSON, node: *mut AgentToolList) {
    crate::ffi_fn!(failure = (), nonnull(node), {
        // SAFETY: forwarded: `node` non-NULL and live, `args` NULL or live.
        unsafe { crate::runtime::tools::run_native(node, args, &REMOTE) }
    })
}

/// The content parts of a result that are not text, and what the model is
/// told in their place.
const NOT_SHOWN: [(&[u8], &[u8]); 4] = [
    (b"image", b"[an image, not shown]"),
    (b"audio", b"[audio, not shown]"),
    (b"resource_link", b"[a resource, not shown]"),
    (b"resource", b"[a resource, not shown]"),
];

/// The answer when the result's text could not be built.
const NO_MEMORY: &CStr =
    c"error: no memory on the device for the remote tool's result; it may or may not have run";

/// The call behind [`call_remote`]: true when the tool succeeded; `text`
/// gets its result or what failed, worded for the model.
///
/// # Safety
/// `node` is a live registry node; `args` is NULL or a live object.
unsafe fn call(
    state: &mut State,
    node: *mut AgentToolList,
    args: *mut cJSON,
    text: &mut TextBuf,
) -> bool {
    // SAFETY: `node` is live (contract); its definition lives as long.
    let local = unsafe { crate::runtime::tools::function_name((*node).tool_obj) }
        .map_or(&b""[..], CStr::to_bytes);
    let servers = &mut state.servers;
    let found = state
        .tools
        .iter()
        .find(|t| t.local == local)
        .and_then(|remote| Some((remote, servers.get_mut(remote.server)?)));
    let Some((remote, server)) = found else {
        text.say(&[
            b"error: the remote tool \"",
            local,
            b"\" is no longer connected",
        ]);
        return false;
    };
    let mut error = ErrorText::new();
    let params = Params::Call {
        name: &remote.name,
        arguments: args,
    };
    let answer = match exchange(server, true, c"tools/call", params, &mut error) {
        Ok(a) => a,
        Err(why) => {
            crate::log_w!("mcp: tools/call of ", local, " failed: ", error.as_str());
            // A JSON-RPC error is the server's answer (an unknown tool, bad
            // arguments): it says what it did. Without an answer the device
            // cannot tell whether the tool ran.
            let tail: &[u8] = if why == NoResult::Refused {
                b")"
            } else {
                b"); it may or may not have run"
            };
            text.say(&[
                b"error: the remote tool \"",
                local,
                b"\" could not be called (",
                error.as_str().as_bytes(),
                tail,
            ]);
            return false;
        }
    };
    // SAFETY: `answer.as_ptr()` is a live answer with a result, owned here; its
    // strings are read before it is dropped.
    unsafe {
        let result = json::get(answer.as_ptr(), c"result");
        // 2026-07-28: anything but a complete result asks for more input,
        // which needs a capability this client does not declare.
        if let Some(kind) = json::get_str(result, c"resultType") {
            if kind != c"complete" {
                text.say(&[
                    b"error: the remote tool \"",
                    local,
                    b"\" answered with resultType \"",
                    kind.to_bytes(),
                    b"\", which this client cannot complete",
                ]);
                return false;
            }
        }
        let is_error = json::get(result, c"isError");
        let is_error = !is_error.is_null() && (*is_error).type_ & 0xFF == cJSON_True;
        if is_error {
            text.say(&[b"error: the remote tool reported a failure: "]);
        }
        let start = text.bytes.len();
        for part in json::children(json::get(result, c"content")) {
            let kind = json::get_str(part, c"type").map_or(&b""[..], CStr::to_bytes);
            let piece = if kind == b"text" {
                json::get_str(part, c"text").map_or(&b""[..], CStr::to_bytes)
            } else {
                match NOT_SHOWN.iter().find(|(k, _)| *k == kind) {
                    Some((_, said)) => said,
                    None => continue,
                }
            };
            let gap: &[u8] = if text.bytes.len() > start { b"\n" } else { b"" };
            text.say(&[gap, piece]);
        }
        if text.bytes.len() == start {
            text.say(&[b"(the remote tool returned no text)"]);
        }
        !is_error
    }
}

/// The client's hooks: the remote tools join the registry after the C
/// tools, run through their server, and go with the agent;
/// `agent_config mcp ...` lists and changes the servers.
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    register_tools: Some(start),
    forget: Some(stop),
    native_tool: Some(native_tool),
    #[cfg(feature = "msh-extras")]
    config_word: Some(crate::runtime::ability::ConfigWord {
        word: b"mcp",
        usage: b" [mcp list|add|del|reset ...]",
        run: command::mcp_command,
    }),
    ..crate::runtime::ability::Ability::NONE
};

/// # Safety
/// `node` is a live node of the registry, read under the tool lock.
unsafe fn native_tool(node: AgentToolNode_t) -> Option<&'static crate::runtime::tools::Native> {
    is_remote(node).then_some(&REMOTE)
}
