//! `chat.h`: one streamed chat-completions request.

use crate::cjson::sys::cJSON_PrintUnformatted;
use crate::cjson::sys::{cJSON, cJSON_Delete};
use crate::rtt::rt_free;
use core::ffi::{c_char, c_void};

pub use super::c_objects::{ChatResponse, ChatResponse_t};

/// Free a response from `chat()`: its strings, its tool-call array and the
/// struct. NULL-safe.
pub unsafe fn chat_response_free(resp: ChatResponse_t) {
    if resp.is_null() {
        return;
    }
    // SAFETY: `resp` and its members come from chat() (RT-Thread heap and
    // cJSON); the caller gives them up.
    unsafe {
        rt_free((*resp).reasoning as *mut c_void);
        rt_free((*resp).context as *mut c_void);
        if !(*resp).tool_call.is_null() {
            cJSON_Delete((*resp).tool_call);
        }
        rt_free(resp as *mut c_void);
    }
}

use crate::cjson::json;
use crate::net::error::{ErrorText, NetError, ServerMessage, TextOut, ERROR_TEXT_MAX};
use crate::net::transport::{self, Flow, ResponseSink, Settings};
use crate::rtt::strdup::rt_strdup_parts;
use crate::rtt::{board, cap};
use crate::wire::chat::request::ChatRequest;
use crate::wire::stream::{Caps, ChatStream, Format, Progress, StreamError, StreamSink};
use core::cell::UnsafeCell;
use core::ptr;

/// How many tool calls one response may carry.
const MAX_TOOL_CALLS: usize = 32;

/// The tool calls of a response whose arguments exceeded
/// `PKG_AGENT_MAX_TOOL_ARG_LEN` (their `arguments` are then empty), by
/// position in its `tool_call` array: the loop answers those with an error
/// instead of running the tool. (A C caller of `chat()` sees such a call
/// with empty arguments.)
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct LongCalls(u32);

impl LongCalls {
    /// Is the call at `position` one of them?
    pub fn contains(self, position: usize) -> bool {
        position < 32 && self.0 & (1 << position) != 0
    }

    fn of(stream: &ChatStream) -> LongCalls {
        const _: () = assert!(MAX_TOOL_CALLS <= 32, "one bit per call");
        LongCalls(
            stream
                .tool_calls()
                .iter()
                .enumerate()
                .filter(|(i, c)| c.too_long() && *i < 32)
                .fold(0, |bits, (i, _)| bits | 1 << i),
        )
    }
}

pub use super::settings::ChatOverrides as Overrides;

/// Replace (or with `Overrides::default()`, restore) caps and network
/// settings for the following `chat()` calls.
pub fn set_overrides(o: Overrides) {
    super::settings::change(|s| s.chat = o);
}

/// The last failure's text of a `chat()` called from C, for
/// `agent_chat_last_error`. A request writes its text into its own buffer
/// and copies it here, under [`LAST_ERROR_LOCK`], when it ends; the agent
/// loop's requests keep theirs to themselves ([`chat_with_error`]).
struct LastError(UnsafeCell<[u8; ERROR_TEXT_MAX]>);
// SAFETY: written only under LAST_ERROR_LOCK; C readers get a pointer to a
// fixed, always NUL-terminated array (see agent_chat_last_error).
unsafe impl Sync for LastError {}
static LAST_ERROR: LastError = LastError(UnsafeCell::new([0; ERROR_TEXT_MAX]));
static LAST_ERROR_LOCK: crate::rtt::sleep_lock::SleepLock =
    crate::rtt::sleep_lock::SleepLock::new();

fn publish_last_error(error: &ErrorText) {
    let _held = LAST_ERROR_LOCK.lock();
    // SAFETY: the only writer holds the lock.
    let last = unsafe { &mut *LAST_ERROR.0.get() };
    // The text (its last byte given up for the NUL if it fills the buffer),
    // zero-filled behind: always NUL-terminated, and no indexing (no
    // bounds-check panic path). Only the bytes: C reads up to the NUL.
    let len = error.len.min(ERROR_TEXT_MAX - 1);
    for (i, d) in last.iter_mut().enumerate() {
        *d = if i < len {
            error.buf.get(i).copied().unwrap_or(0)
        } else {
            0
        };
    }
}

/// Why the last `chat()` called from C returned NULL: the HTTP status and
/// the server's message, or what failed on the way ("" after a success).
/// Static storage, valid until the next `chat()`; never contains the API
/// key. The agent loop's own requests do not overwrite it.
pub fn agent_chat_last_error() -> *const c_char {
    // Always NUL-terminated: zero-initialised, and publish_last_error writes
    // the NUL with the text.
    // Only the address of the static's array is taken.
    LAST_ERROR.0.get() as *const c_char
}

type TextCallback = Option<unsafe extern "C" fn(text: *const c_char)>;

/// Hands streamed text to the C callbacks, NUL-terminated, in pieces.
struct Callbacks {
    on_reasoning: TextCallback,
    on_context: TextCallback,
    /// A callback has received text: a retry would deliver it twice. Text
    /// without a callback for it reached nobody, so it does not count.
    delivered: bool,
}

/// Hand `text` to `cb` in pieces; whether it received any.
fn call_in_pieces(cb: TextCallback, text: &str) -> bool {
    let Some(cb) = cb else { return false };
    if text.is_empty() {
        return false;
    }
    // NUL bytes are left out, as in the response's own copy of the text
    // (`rt_strdup_parts`): a C string would end at the first one. (The
    // tokenizer drops them already; this keeps the callback's contract on
    // its own.)
    let mut delivered = false;
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        // Up to 127 bytes, ending before a NUL and on a character boundary
        // (`get`s, not indexing: no bounds-check panic path).
        let head = rest.get(..127).unwrap_or(rest);
        let mut cut = head.iter().position(|&b| b == 0).unwrap_or(head.len());
        while cut > 0 && rest.get(cut).is_some_and(|&b| b & 0xC0 == 0x80) {
            cut -= 1;
        }
        let (piece, tail) = rest.split_at_checked(cut).unwrap_or((rest, &[]));
        if !piece.is_empty() {
            let mut buf = [0u8; 128];
            crate::base::text::copy_prefix(&mut buf, piece);
            // SAFETY: a NUL-terminated stack buffer (at most 127 of its 128
            // bytes are written) that outlives the call.
            unsafe { cb(buf.as_ptr() as *const c_char) };
            delivered = true;
        }
        rest = match tail {
            [0, after @ ..] => after,
            _ => tail,
        };
    }
    delivered
}

impl StreamSink for Callbacks {
    fn content(&mut self, text: &str) {
        self.delivered |= call_in_pieces(self.on_context, text);
    }
    fn reasoning(&mut self, text: &str) {
        self.delivered |= call_in_pieces(self.on_reasoning, text);
    }
}

struct Parser {
    stream: ChatStream,
    caps: Caps,
    format: Format,
    callbacks: Callbacks,
}

impl ResponseSink for Parser {
    type Error = StreamError;
    // Not inlined (nor is `end`): the parser's locals stay in its own
    // frame, not in the transport's attempt, under which the request is
    // also written.
    #[inline(never)]
    fn body(&mut self, bytes: &[u8]) -> Result<Flow, StreamError> {
        match self.stream.feed(bytes, &mut self.callbacks)? {
            Progress::More => Ok(Flow::More),
            Progress::Done => Ok(Flow::Done),
        }
    }
    #[inline(never)]
    fn end(&mut self) -> Result<(), StreamError> {
        self.stream.finish(&mut self.callbacks)
    }
    fn delivered(&self) -> bool {
        self.callbacks.delivered
    }
    // Not inlined: the new stream is made apart and then moved in, and that
    // copy must not sit in the frame of the retry loop, under which every
    // attempt runs.
    #[inline(never)]
    fn restart(&mut self) {
        self.stream = ChatStream::with_format(self.caps, self.format);
    }
    fn retryable(&self, error: StreamError) -> bool {
        stream_error_retryable(error)
    }
    fn describe(&self, error: StreamError, out: &mut dyn TextOut) {
        match error {
            StreamError::ServerError => {
                let msg = self.stream.error_message().unwrap_or("unknown");
                out.put(b"the server reported an error: ");
                out.put(msg.as_bytes());
            }
            e => out.put(e.message().as_bytes()),
        }
    }
}

/// Is a response that failed this way worth asking for again (when none
/// of it reached a callback)? Yes for a stream cut off or garbled on the
/// way, and for an error the server reported inside the stream (providers
/// and gateways send "Overloaded", "rate limit exceeded, retry later",
/// "upstream disconnected" that way, after a 200): the next answer is a new
/// one. No when the answer broke this firmware's limits (too many tool
/// calls, a field over `PKG_AGENT_STREAM_LINE_BUFSZ`, no memory): the same
/// request would end the same way.
pub fn stream_error_retryable(error: StreamError) -> bool {
    match error {
        StreamError::Truncated
        | StreamError::ServerError
        | StreamError::InvalidJson
        | StreamError::InvalidUtf8
        | StreamError::TooDeep
        | StreamError::Unexpected => true,
        StreamError::TokenTooLong | StreamError::TooManyToolCalls | StreamError::OutOfMemory => {
            false
        }
    }
}

/// Send the conversation and stream the answer.
///
/// Borrows `messages` (the context array) and `tools` (may be NULL; the
/// registry's array from `get_agent_tools` may meanwhile get tools from
/// `append_tool` on other threads: each request sends it as it was at one
/// moment, with its exact length). Sends
/// `{"model","messages","tools","max_tokens","stream":true}` to the
/// configured URL (`max_tokens <= 0` means `PKG_AGENT_MAX_TOKENS`), calls
/// `on_reasoning`/`on_context` per fragment as it arrives and `on_tool_call`
/// once per complete call (each may be NULL).
///
/// Returns a response owned by the caller (free it with
/// `chat_response_free`): `reasoning` and `context` never NULL, `tool_call` an
/// array (possibly empty) in index order. `RT_NULL` on failure, with the
/// reason in `agent_chat_last_error()` ("" after a success, retried
/// attempts included).
///
/// The whole call is bounded by `PKG_AGENT_REQUEST_TIMEOUT_MS`; transient
/// failures are retried while no text reached a callback (docs/requests.md).
pub unsafe fn chat(
    messages: *mut cJSON,
    tools: *mut cJSON,
    max_tokens: core::ffi::c_int,
    on_reasoning: Option<unsafe extern "C" fn(text: *const c_char)>,
    on_tool_call: Option<unsafe extern "C" fn(text: *const c_char)>,
    on_context: Option<unsafe extern "C" fn(text: *const c_char)>,
) -> ChatResponse_t {
    // SAFETY: forwarded (the caller's contract is this one's).
    unsafe {
        chat_marking_long_calls(
            messages,
            tools,
            max_tokens,
            on_reasoning,
            on_tool_call,
            on_context,
        )
    }
    .0
}

/// [`chat`], and which of the response's calls were too long to run.
///
/// # Safety
/// As `chat`.
pub unsafe fn chat_marking_long_calls(
    messages: *mut cJSON,
    tools: *mut cJSON,
    max_tokens: core::ffi::c_int,
    on_reasoning: TextCallback,
    on_tool_call: TextCallback,
    on_context: TextCallback,
) -> (ChatResponse_t, LongCalls) {
    let mut error = ErrorText::new();
    let mut long_calls = LongCalls::default();
    // SAFETY: the trees are borrowed for the call (caller's contract).
    let resp = unsafe {
        chat_with_error(
            messages,
            tools,
            max_tokens,
            on_reasoning,
            on_tool_call,
            on_context,
            &mut error,
            &mut long_calls,
        )
    };
    publish_last_error(&error);
    (resp, long_calls)
}

/// The chat client's network settings, overrides applied: the read
/// timeout, retries and their base wait, the read buffer and the whole
/// request's deadline. The MCP client's requests go by the same.
pub(crate) struct Network {
    pub timeout_ms: u32,
    pub retries: u32,
    pub retry_base_ms: u32,
    pub read_buffer: usize,
    pub request_timeout_ms: u32,
}

pub(crate) fn network(o: &Overrides) -> Network {
    let cfg = board();
    Network {
        timeout_ms: o
            .timeout_ms
            .unwrap_or(cap(cfg.http_timeout_ms))
            .min(u32::MAX as usize) as u32,
        retries: o.retries.unwrap_or(cap(cfg.http_retries)).min(16) as u32,
        retry_base_ms: o
            .retry_base_ms
            .unwrap_or(cap(cfg.retry_base_ms))
            .min(60_000) as u32,
        read_buffer: cap(cfg.resp_bufsz),
        request_timeout_ms: o
            .request_timeout_ms
            .unwrap_or(cfg.request_timeout_ms())
            .clamp(1, u32::MAX as usize) as u32,
    }
}

/// A request's transport settings and its stream parser, before anything
/// is sent.
struct Prepared<'c> {
    settings: Settings<'c>,
    parser: Parser,
}

/// The settings of a request to `url` and its parser, from the overrides
/// as they are now.
///
/// Not inlined: the overrides' snapshot and the parser's first state (made
/// apart, then moved in) are on the stack only here, not under the request,
/// when the answer is parsed on top of [`chat_with_error`]'s frame. The
/// result is written straight into the caller's frame.
#[inline(never)]
fn prepare<'c>(
    url: &'c core::ffi::CStr,
    api_key: &'c core::ffi::CStr,
    on_reasoning: TextCallback,
    on_context: TextCallback,
) -> Prepared<'c> {
    let cfg = board();
    let chosen = super::settings::snapshot();
    let net = network(&chosen.chat);
    let format = super::settings::format_for(url, &chosen);
    let caps = Caps {
        max_content: chosen.chat.max_content.unwrap_or(cap(cfg.max_content_len)),
        max_reasoning: chosen
            .chat
            .max_reasoning
            .unwrap_or(cap(cfg.max_reasoning_len)),
        max_tool_args: chosen
            .chat
            .max_tool_args
            .unwrap_or(cap(cfg.max_tool_arg_len)),
        max_token: chosen.chat.max_token.unwrap_or(cap(cfg.stream_line_bufsz)),
        max_tool_calls: MAX_TOOL_CALLS,
    };
    Prepared {
        settings: Settings {
            url,
            api_key,
            timeout_ms: net.timeout_ms,
            retries: net.retries,
            retry_base_ms: net.retry_base_ms,
            read_buffer: net.read_buffer,
            request_timeout_ms: net.request_timeout_ms,
            format,
        },
        parser: Parser {
            stream: ChatStream::with_format(caps, format),
            caps,
            format,
            callbacks: Callbacks {
                on_reasoning,
                on_context,
                delivered: false,
            },
        },
    }
}

/// [`chat`], with the failure's text in `error` ("" after a success) and
/// the calls too long to run in `long_calls`.
///
/// # Safety
/// As `chat`: the trees are valid cJSON, borrowed for the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn chat_with_error(
    messages: *mut cJSON,
    tools: *mut cJSON,
    max_tokens: core::ffi::c_int,
    on_reasoning: TextCallback,
    on_tool_call: TextCallback,
    on_context: TextCallback,
    error: &mut ErrorText,
    long_calls: &mut LongCalls,
) -> ChatResponse_t {
    // SAFETY: forwarded (this function's contract is that one's).
    unsafe {
        chat_to(
            None,
            messages,
            tools,
            max_tokens,
            on_reasoning,
            on_tool_call,
            on_context,
            error,
            long_calls,
        )
    }
}

/// Where a request goes when it is not the agent's configured endpoint (a
/// sub-agent's profile). An empty field is the agent's; the agent's key
/// goes only to the agent's URL.
pub(crate) struct Endpoint<'a> {
    pub url: &'a core::ffi::CStr,
    pub api_key: &'a core::ffi::CStr,
    pub model: &'a core::ffi::CStr,
    /// A deadline shorter than the request's own (milliseconds).
    pub request_timeout_ms: Option<u32>,
}

/// [`chat_with_error`] to `endpoint` (`None`: the agent's).
///
/// # Safety
/// As `chat`: the trees are valid cJSON, borrowed for the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn chat_to(
    endpoint: Option<&Endpoint<'_>>,
    messages: *mut cJSON,
    tools: *mut cJSON,
    max_tokens: core::ffi::c_int,
    on_reasoning: TextCallback,
    on_tool_call: TextCallback,
    on_context: TextCallback,
    error: &mut ErrorText,
    long_calls: &mut LongCalls,
) -> ChatResponse_t {
    let cfg = board();
    error.clear();
    // One copy for the whole request: agent_config_set meanwhile changes the
    // next request, never this one.
    let Some(config) = super::config::snapshot() else {
        error.set(&[b"no memory for the request's configuration"]);
        crate::log_e!("chat: ", error.as_str());
        return ptr::null_mut();
    };
    let (url, api_key, model) = match endpoint {
        None => (config.url(), config.api_key(), config.model()),
        Some(e) => {
            let own_url = !e.url.is_empty() && e.url != config.url();
            let key = if !e.api_key.is_empty() {
                e.api_key
            } else if own_url {
                c""
            } else {
                config.api_key()
            };
            let url = if e.url.is_empty() {
                config.url()
            } else {
                e.url
            };
            let model = if e.model.is_empty() {
                config.model()
            } else {
                e.model
            };
            (url, key, model)
        }
    };
    if url.is_empty() {
        error.set(&[b"no API URL configured (PKG_AGENT_API_URL or agent_config url)"]);
        crate::log_e!("chat: ", error.as_str());
        return ptr::null_mut();
    }
    let mut prepared = prepare(url, api_key, on_reasoning, on_context);
    if let Some(ms) = endpoint.and_then(|e| e.request_timeout_ms) {
        let s = &mut prepared.settings;
        s.request_timeout_ms = s.request_timeout_ms.min(ms.max(1));
        s.timeout_ms = s.timeout_ms.min(ms.max(1));
    }
    let settings = &prepared.settings;
    let req = ChatRequest {
        model,
        messages,
        tools,
        max_tokens: if max_tokens > 0 {
            max_tokens as i64
        } else {
            cfg.max_tokens as i64
        },
    };
    let parser = &mut prepared.parser;
    let req = ToolsFrozen(req);
    let mut said = ServerMessage::new();
    // SAFETY: `req` holds `messages` and `tools`, NULL or valid cJSON trees
    // the caller lends for this call (this function's contract); nobody
    // modifies `messages` meanwhile, and the registry's tools array changes
    // only under the registry lock, which the transport holds while it
    // counts and writes the body (`RequestBody::freeze`).
    if let Err(failed) = unsafe { transport::send(settings, &req, parser, &mut said) } {
        report_failure(&failed, &said, parser, error);
        return ptr::null_mut();
    }
    // SAFETY: the stream is finished; `on_tool_call` is the caller's.
    unsafe { respond(&parser.stream, on_context, on_tool_call, error, long_calls) }
}

/// A failed request: its text into `error`, and the log line.
///
/// Not inlined, as [`respond`]: its temporaries are not in
/// [`chat_with_error`]'s frame, under which the answer is parsed.
#[inline(never)]
fn report_failure(
    failed: &NetError<StreamError>,
    said: &ServerMessage,
    parser: &Parser,
    error: &mut ErrorText,
) {
    error.clear();
    failed.describe(said, error, &|e, out| parser.describe(e, out));
    crate::log_e!("chat failed: ", error.as_str());
}

/// The response of a finished stream, handed to `on_tool_call` call by
/// call; the failure's text in `error` and the calls too long to run in
/// `long_calls`.
///
/// # Safety
/// `on_tool_call` is NULL or a C function taking a NUL-terminated string
/// it only borrows.
///
/// Not inlined: its temporaries are not in [`chat_with_error`]'s frame,
/// under which the answer is parsed.
#[inline(never)]
unsafe fn respond(
    stream: &ChatStream,
    on_context: TextCallback,
    on_tool_call: TextCallback,
    error: &mut ErrorText,
    long_calls: &mut LongCalls,
) -> ChatResponse_t {
    // SAFETY: `build_response` only reads the finished stream and allocates.
    let resp = unsafe { build_response(stream) };
    *long_calls = LongCalls::of(stream);
    if resp.is_null() {
        error.set(&[b"out of memory while building the response"]);
        crate::log_e!("chat failed: ", error.as_str());
        return resp;
    }
    // The answer's text streamed as it came: the note that it was cut goes
    // the same way, so that whoever shows the stream shows the note too.
    if stream.content_truncated() {
        call_in_pieces(on_context, CUT_NOTE);
    }
    if let Some(cb) = on_tool_call {
        // SAFETY: `resp` is non-NULL and fully built, so `tool_call` is a
        // live array; nothing modifies it while iterating.
        for call in unsafe { json::children((*resp).tool_call) } {
            // SAFETY: `call` is a live child of that array.
            let text = unsafe { cJSON_PrintUnformatted(call) };
            if !text.is_null() {
                // SAFETY: `cb` is the caller's `on_tool_call`, a C function
                // taking a NUL-terminated string it only borrows (this
                // function's contract); `text` is one.
                unsafe { cb(text) };
                // SAFETY: `text` came from `cJSON_PrintUnformatted`, is owned
                // here and is freed once with cJSON's allocator.
                unsafe { crate::cjson::sys::cJSON_free(text as *mut c_void) };
            }
        }
    }
    resp
}

/// Note appended to an answer cut at `PKG_AGENT_MAX_CONTENT_LEN`.
const CUT_NOTE: &str = "\n[answer cut: longer than PKG_AGENT_MAX_CONTENT_LEN]";

/// The response `chat()` returns, built from the finished stream; NULL when
/// the heap is exhausted (nothing leaks).
///
/// # Safety
/// None beyond Rust's: it only reads `stream` and allocates. (`unsafe` marks
/// the raw-pointer result the caller must free with `chat_response_free`.)
unsafe fn build_response(stream: &ChatStream) -> ChatResponse_t {
    // SAFETY: `rt_malloc` accepts any size; the result is NULL-checked.
    let resp =
        unsafe { crate::rtt::rt_malloc(core::mem::size_of::<ChatResponse>()) } as ChatResponse_t;
    if resp.is_null() {
        return resp;
    }
    // SAFETY: `resp` is a fresh, non-NULL block of `ChatResponse` size from
    // the heap (aligned to RT_ALIGN_SIZE), written before any read.
    unsafe {
        resp.write(ChatResponse {
            reasoning: ptr::null_mut(),
            context: ptr::null_mut(),
            tool_call: ptr::null_mut(),
        })
    };
    let note: &[u8] = if stream.content_truncated() {
        CUT_NOTE.as_bytes()
    } else {
        b""
    };
    // SAFETY: `resp` was initialised above and is owned here.
    unsafe {
        (*resp).reasoning = rt_strdup_parts(&[stream.reasoning().as_bytes()]);
        (*resp).context = rt_strdup_parts(&[stream.content().as_bytes(), note]);
    }
    // SAFETY: `tool_call_array` only reads `stream`; `resp` is initialised
    // and owned here.
    unsafe { (*resp).tool_call = tool_call_array(stream) };
    #[cfg(feature = "provider-anthropic")]
    // SAFETY: `resp` is initialised and owned here; its array NULL or live.
    if !unsafe { attach_signature(stream, (*resp).tool_call) } {
        // SAFETY: `resp` is owned here, every field NULL or owned by it.
        unsafe { chat_response_free(resp) };
        return ptr::null_mut();
    }
    // SAFETY: `resp` is initialised and owned here.
    let incomplete = unsafe {
        (*resp).reasoning.is_null() || (*resp).context.is_null() || (*resp).tool_call.is_null()
    };
    if incomplete {
        // SAFETY: `resp` came from `rt_malloc` with every field NULL or owned
        // by it, which is what `chat_response_free` frees; not used again.
        unsafe { chat_response_free(resp) };
        return ptr::null_mut();
    }
    resp
}

/// `[{"id","index","type":"function","function":{"name","arguments"}}...]`.
///
/// # Safety
/// None beyond Rust's: it only reads `stream`; the caller owns the result.
unsafe fn tool_call_array(stream: &ChatStream) -> *mut cJSON {
    // SAFETY: a cJSON constructor without arguments; NULL-checked.
    let array = unsafe { crate::cjson::sys::cJSON_CreateArray() };
    if array.is_null() {
        return array;
    }
    for call in stream.tool_calls() {
        // SAFETY: `tool_call_object` only reads `call`.
        let item = unsafe { tool_call_object(call) };
        // SAFETY: `array` is the live array created above; `item` is non-NULL
        // and detached (just built), and `add_to_array` deletes it on failure.
        if item.is_null() || unsafe { json::add_to_array(array, item) }.is_err() {
            // SAFETY: `array` is owned here (never attached) and not used again.
            unsafe { cJSON_Delete(array) };
            return ptr::null_mut();
        }
    }
    array
}

/// One tool call as a cJSON object, owned by the caller; NULL on no memory.
///
/// # Safety
/// None beyond Rust's: it only reads `call`.
unsafe fn tool_call_object(call: &crate::wire::stream::ToolCall) -> *mut cJSON {
    use crate::cjson::sys::{cJSON_CreateNumber, cJSON_CreateObject, cJSON_CreateString};
    let string = |s: &str| {
        let p = rt_strdup_parts(&[s.as_bytes()]);
        if p.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: `p` is a non-NULL, NUL-terminated copy; cJSON copies it.
        let item = unsafe { cJSON_CreateString(p) };
        // SAFETY: `p` came from `rt_strdup_parts` (the RT-Thread heap), is
        // owned here and freed once.
        unsafe { rt_free(p as *mut c_void) };
        item
    };
    // SAFETY: cJSON constructors without arguments; both NULL-checked.
    let (obj, function) = unsafe { (cJSON_CreateObject(), cJSON_CreateObject()) };
    if obj.is_null() || function.is_null() {
        for t in [obj, function] {
            if !t.is_null() {
                // SAFETY: `t` is a non-NULL tree created above, owned here.
                unsafe { cJSON_Delete(t) };
            }
        }
        return ptr::null_mut();
    }
    let kind = if call.kind().is_empty() {
        "function"
    } else {
        call.kind()
    };
    // SAFETY: `obj` and `function` are live objects created above; each item
    // is NULL or a new detached value, which `add_to_object` takes over.
    let mut ok = unsafe {
        json::add_to_object(obj, c"id", string(call.id())).is_ok()
            && json::add_to_object(obj, c"index", cJSON_CreateNumber(call.index() as f64)).is_ok()
            && json::add_to_object(obj, c"type", string(kind)).is_ok()
            && json::add_to_object(function, c"name", string(call.name())).is_ok()
            && json::add_to_object(function, c"arguments", string(call.arguments())).is_ok()
    };
    if !ok {
        // SAFETY: `function` is not attached to `obj` yet, so it is owned
        // here; not used again.
        unsafe { cJSON_Delete(function) };
    } else {
        // SAFETY: `obj` is live; `function` is a detached object handed over.
        ok = unsafe { json::add_to_object(obj, c"function", function) }.is_ok();
    }
    if !ok {
        // SAFETY: `obj` is owned here (with whatever was attached) and not
        // used again.
        unsafe { cJSON_Delete(obj) };
        return ptr::null_mut();
    }
    obj
}

/// Put the thinking block's signature (Anthropic) on the first tool call
/// as [`crate::wire::chat::anthropic::SIGNATURE_KEY`], where the context's
/// `append_assistant_message` finds it: `ChatResponse` stays the C
/// package's struct. False on no memory; true when there is nothing to do.
///
/// # Safety
/// `calls` is NULL or the response's live array, owned by the caller.
#[cfg(feature = "provider-anthropic")]
unsafe fn attach_signature(stream: &ChatStream, calls: *mut cJSON) -> bool {
    let signature = stream.thinking_signature();
    // SAFETY: `calls` is NULL or live (contract).
    let first = if calls.is_null() {
        ptr::null_mut()
    } else {
        // SAFETY: non-NULL, so live.
        unsafe { (*calls).child }
    };
    if signature.is_empty() || first.is_null() {
        return true;
    }
    let copy = rt_strdup_parts(&[signature.as_bytes()]);
    if copy.is_null() {
        return false;
    }
    // SAFETY: `copy` is a non-NULL NUL-terminated copy; cJSON copies it.
    let item = unsafe { crate::cjson::sys::cJSON_CreateString(copy) };
    // SAFETY: `copy` came from `rt_strdup_parts`, owned here, freed once.
    unsafe { rt_free(copy as *mut c_void) };
    // SAFETY: `first` is a live object of the array; `item` is NULL or
    // detached, taken over.
    unsafe { json::add_to_object(first, crate::wire::chat::anthropic::SIGNATURE_KEY, item) }.is_ok()
}

/// A chat request whose tools array may be the registry's, which
/// `append_tool` changes from other threads under the registry lock: the
/// transport counts and writes it holding that lock.
struct ToolsFrozen<'a>(ChatRequest<'a>);

impl transport::RequestBody for ToolsFrozen<'_> {
    unsafe fn write(
        &self,
        format: crate::wire::stream::Format,
        out: &mut dyn crate::base::json_writer::ByteSink,
    ) -> Result<(), crate::base::json_writer::WriteError> {
        // SAFETY: our caller's guarantee on the trees this request borrows.
        unsafe { transport::RequestBody::write(&self.0, format, out) }
    }
    fn freeze(&self) -> Option<crate::rtt::sleep_lock::SleepLockGuard<'static>> {
        (!self.0.tools.is_null()).then(super::tools::lock_registry)
    }
}
