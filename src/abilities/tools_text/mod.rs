//! The loop's side of tools for models without function calling
//! (`PKG_AGENT_TOOLS_TEXT`, `agent_config tools text|native`; the protocol is
//! `src/wire/text_calls.rs`).
//!
//! In text mode a request carries no `tools`: the system prompt describes
//! them and the call format instead. The answer's fragments reach the
//! channel through [`CallFilter`], so the calls are never shown as text.
//! When the whole answer has calls, each runs through the same registry and
//! checks as a native call (unknown tool, the schema check, the tool), and
//! the results go back as one user message starting with `Tool results:`,
//! which every model accepts.
//!
//! With `PKG_AGENT_TEXT_CALL_FALLBACK` (cargo feature `text-call-fallback`)
//! native mode borrows the same reading: an answer without `tool_calls`
//! whose whole text is one call of a registered tool (a model that wrote its
//! call as text) becomes a real tool call, and the stream holds such an
//! answer back so the user does not see it ([`adopt_single_call`]).

use crate::abi::hooks::TextHook;
use crate::abi::messages::{
    messages_append, messages_create, messages_destroy, messages_get_content_idx, TYPE_TEXT,
};
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::rtt::atomic::{AtomicPtr, Ordering};
use crate::rtt::sleep_cell::SleepCell;
use crate::runtime::chat::ChatResponse_t;
use crate::runtime::context::Context_t;
use crate::runtime::tool_run::run_tool_call;
use crate::runtime::tools::get_agent_tools;
use crate::wire::text_calls::{calls, CallFilter};
use alloc::vec::Vec;
use core::ffi::{c_char, c_void, CStr};

use crate::rtt::glue::agent_glue_tools_text;

/// Tools as text (`Some(true)`), natively (`Some(false)`), or as the board
/// chose (`None`). Takes effect with the next message.
pub fn set_text_mode(on: Option<bool>) {
    crate::runtime::settings::change(|s| s.tools_as_text = on);
}

pub fn text_mode() -> bool {
    crate::runtime::settings::snapshot()
        .tools_as_text
        // SAFETY: a plain getter of the glue.
        .unwrap_or_else(|| unsafe { agent_glue_tools_text() } != 0)
}

fn push(v: &mut Vec<u8>, b: &[u8], oom: &mut bool) {
    if crate::base::fallible::extend(v, b).is_err() {
        *oom = true;
    }
}

/// How to call, for the system prompt in text mode, after the tools (small
/// models follow the last instructions best). One example with real
/// values: small models copy an example far more reliably than a template
/// with placeholders, and they must be told not to compute the results
/// themselves.
const TOOLS_HEAD: &[u8] = b"\n\n# Tools\n";
const PROTOCOL: &[u8] = b"\n# How to use a tool\n\
You cannot compute tool results yourself. To use a tool, your whole reply is \
one line, then you stop:\n\
<tool_call>{\"name\": \"TOOL\", \"arguments\": {...}}</tool_call>\n\
Example: to add 2 and 3 with a tool named add, your whole reply is:\n\
<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}</tool_call>\n\
Always write the <tool_call> tags and the tool's name. The device then runs \
the tool and sends you its result. Never write a result yourself. Answer the \
user in plain words only once you have the results you need.\n";

/// The system prompt for this mode: the package's prompt, plus in text mode
/// the tools and the call format. NUL-terminated; None without memory.
///
/// # Safety
/// On the loop thread (it owns the tools array).
unsafe fn prompt(text: bool) -> Option<Vec<u8>> {
    let mut p = Vec::new();
    let mut oom = false;
    // SAFETY: the package's prompt, a static NUL-terminated string.
    let base = unsafe { CStr::from_ptr(crate::runtime::prompt::get_system_prompt()) };
    push(&mut p, base.to_bytes(), &mut oom);
    if text {
        push(&mut p, TOOLS_HEAD, &mut oom);
        // SAFETY: the registry's tools array (NULL or live), this thread's.
        for tool in unsafe { json::children(get_agent_tools()) } {
            // SAFETY: a live element of that array, read only.
            unsafe {
                let f = json::get(tool, c"function");
                push(&mut p, b"- ", &mut oom);
                push(
                    &mut p,
                    json::get_str(f, c"name").map_or(b"?", CStr::to_bytes),
                    &mut oom,
                );
                push(&mut p, b": ", &mut oom);
                push(
                    &mut p,
                    json::get_str(f, c"description").map_or(b"", CStr::to_bytes),
                    &mut oom,
                );
                let params = cJSON_PrintUnformatted(json::get(f, c"parameters"));
                if !params.is_null() {
                    push(&mut p, b" Parameters (JSON Schema): ", &mut oom);
                    push(&mut p, CStr::from_ptr(params).to_bytes(), &mut oom);
                    cJSON_free(params as *mut c_void);
                }
                push(&mut p, b"\n", &mut oom);
            }
        }
        push(&mut p, PROTOCOL, &mut oom);
    }
    push(&mut p, b"\0", &mut oom);
    (!oom).then_some(p)
}

/// Make the context's system prompt the one for the current mode (the tools
/// may have changed too). Before each message; a failure keeps the old one.
///
/// # Safety
/// On the loop thread, with `ctx` its live context.
pub unsafe fn refresh_system_prompt(ctx: Context_t) {
    // SAFETY: on the loop thread (this function's contract).
    let Some(want) = (unsafe { prompt(text_mode()) }) else {
        return;
    };
    // SAFETY: `ctx` is live; its array and first message read only.
    let array = unsafe { (*ctx).message };
    let first = if array.is_null() {
        core::ptr::null_mut()
    } else {
        // SAFETY: the context's live array.
        unsafe { (*array).child }
    };
    // SAFETY: `first` is NULL or a live element.
    let (role, content) = unsafe {
        (
            json::get_str(first, c"role").map_or(&b""[..], CStr::to_bytes),
            json::get_str(first, c"content").map_or(&b""[..], CStr::to_bytes),
        )
    };
    if array.is_null() || role != b"system" || content == crate::base::text::strip_last(&want, 0) {
        return;
    }
    // SAFETY: fresh objects, NUL-terminated strings; on success the new
    // message replaces the first one (deleted), linked in by hand.
    unsafe {
        let m = cJSON_CreateObject();
        if m.is_null()
            || json::add_to_object(m, c"role", cJSON_CreateString(c"system".as_ptr())).is_err()
            || json::add_to_object(
                m,
                c"content",
                cJSON_CreateString(want.as_ptr() as *const c_char),
            )
            .is_err()
        {
            if !m.is_null() {
                cJSON_Delete(m);
            }
            return;
        }
        cJSON_DeleteItemFromArray(array, 0);
        json::insert_at(array, 0, m);
    }
}

/// The filter between `chat()` and the channel's `on_context` during a
/// text-mode request (the loop thread only; the lock keeps it sound).
static FILTER: SleepCell<CallFilter> = SleepCell::new(CallFilter::new());
/// The channel's `on_context` (a C function pointer), or NULL.
static SINK: AtomicPtr<c_void> = AtomicPtr::new(core::ptr::null_mut());

/// Hand `text` to the channel's hook in NUL-terminated pieces.
fn forward(text: &[u8]) {
    let sink = SINK.load(Ordering::Acquire);
    if sink.is_null() {
        return;
    }
    // SAFETY: stored by `filtered` from a `TextHook`'s function pointer.
    let hook: unsafe extern "C" fn(*const c_char) = unsafe { core::mem::transmute(sink) };
    let mut buf = [0u8; 128];
    let mut rest = text;
    while !rest.is_empty() {
        // 127 bytes at a time (`split_at_checked`, not `chunks`: no panic
        // path).
        let (piece, after) = rest.split_at_checked(127).unwrap_or((rest, &[]));
        rest = after;
        let n = crate::base::text::copy_prefix(&mut buf, piece);
        if let Some(nul) = buf.get_mut(n) {
            *nul = 0;
        }
        // SAFETY: the channel's hook with a NUL-terminated string it borrows.
        unsafe { hook(buf.as_ptr() as *const c_char) };
    }
}

fn with_filter(f: impl FnOnce(&mut CallFilter)) {
    FILTER.with(f);
}

/// Is `object` (JSON text) a call of a registered tool: an object whose
/// `name` is a registered tool and whose `arguments` (or `parameters`) is an
/// object? On the loop thread (it reads the registry); false without memory.
pub fn is_tool_call(object: &[u8]) -> bool {
    let mut text = Vec::new();
    let mut oom = false;
    push(&mut text, object, &mut oom);
    push(&mut text, b"\0", &mut oom);
    if oom {
        return false;
    }
    // SAFETY: NUL-terminated; the tree is owned here and deleted below.
    let parsed = unsafe { cJSON_Parse(text.as_ptr() as *const c_char) };
    // SAFETY: NULL or the parsed tree; lookups only, then deleted once.
    unsafe {
        let yes = json::get_str(parsed, c"name").is_some_and(|name| registered(name.to_bytes()))
            && is_object(arguments_of(parsed));
        cJSON_Delete(parsed);
        yes
    }
}

/// The call's arguments: `arguments`, else `parameters` (both are written).
///
/// # Safety
/// `call` is NULL or a live object.
unsafe fn arguments_of(call: *const cJSON) -> *mut cJSON {
    // SAFETY: as this function's contract says; lookups only.
    unsafe {
        let args = json::get(call, c"arguments");
        if args.is_null() {
            json::get(call, c"parameters")
        } else {
            args
        }
    }
}

/// # Safety
/// `item` is NULL or live.
unsafe fn is_object(item: *const cJSON) -> bool {
    // SAFETY: read only once known non-NULL.
    !item.is_null() && unsafe { (*item).type_ } & 0xFF == cJSON_Object
}

/// Is a tool of this name registered? (The loop thread's registry.)
fn registered(name: &[u8]) -> bool {
    crate::runtime::tools::nodes().any(|n| {
        // SAFETY: a live node of the registry, read on its owner's thread.
        unsafe { crate::runtime::tools::function_name((*n).tool_obj) }
            .is_some_and(|f| f.to_bytes() == name)
    })
}

unsafe extern "C" fn filtered_context(text: *const c_char) {
    crate::ffi_fn!(failure = (), nonnull(text), {
        // SAFETY: chat() passes NUL-terminated fragments, borrowed.
        let t = unsafe { CStr::from_ptr(text) }.to_bytes();
        with_filter(|f| f.feed(t, &mut is_tool_call, &mut |b| forward(b)));
    })
}

/// The `on_context` to give `chat()` in front of the channel's `hook`: in
/// text mode (`whole_only` false) every call is kept from the channel; for
/// the native fallback only an answer that is exactly one call.
pub fn filtered(hook: TextHook, whole_only: bool) -> TextHook {
    SINK.store(
        hook.map_or(core::ptr::null_mut(), |h| h as *mut c_void),
        Ordering::Release,
    );
    with_filter(|f| {
        *f = if whole_only {
            CallFilter::whole_answer()
        } else {
            CallFilter::new()
        }
    });
    hook.map(|_| filtered_context as unsafe extern "C" fn(*const c_char))
}

/// After the request: text held back as a possible call goes out unless it
/// was one.
pub fn finish_filtered() {
    with_filter(|f| f.finish(&mut is_tool_call, &mut |b| forward(b)));
    SINK.store(core::ptr::null_mut(), Ordering::Release);
}

/// If the answer in `resp` has text calls: record the answer, run each
/// call, record the results as a user message. `None` when it has none
/// (the answer is the reply); `Some(false)` when something could not be
/// recorded (no memory).
///
/// # Safety
/// On the loop thread, with `ctx` its live context and `resp` a live
/// response (borrowed).
pub unsafe fn answer_calls(
    ctx: Context_t,
    resp: ChatResponse_t,
    on_tool_call: TextHook,
    on_result: TextHook,
) -> Option<bool> {
    // SAFETY: a live response (this function's contract).
    let answer = unsafe { (*resp).context };
    if answer.is_null() {
        return None;
    }
    // SAFETY: non-NULL, NUL-terminated, owned by `resp`.
    let answer = unsafe { CStr::from_ptr(answer) }.to_bytes();
    if calls(answer, &mut is_tool_call, &mut |_| {}) == 0 {
        return None;
    }
    // SAFETY: `ctx` is live; the method borrows the live `resp`.
    if unsafe { (*ctx).append_assistant_message.map_or(-1, |f| f(ctx, resp)) } != 0 {
        return Some(false);
    }
    let mut results = Vec::new();
    let mut oom = false;
    push(&mut results, b"Tool results:\n", &mut oom);
    let mut i = 0;
    calls(answer, &mut is_tool_call, &mut |body| {
        // SAFETY: on the loop thread; the call tree is made and freed here.
        unsafe { one_call(i, body, on_tool_call, on_result, &mut results, &mut oom) };
        i += 1;
    });
    push(&mut results, b"\0", &mut oom);
    if oom {
        return Some(false);
    }
    let m = messages_create(1);
    // SAFETY: `m` is NULL or a live set; `results` ends with a NUL; the
    // context's method copies the text; `m` is freed after.
    unsafe {
        let ok = !m.is_null()
            && messages_append(m, TYPE_TEXT, results.as_ptr() as *const c_char) == 0
            && (*ctx).append_user_message.map_or(-1, |f| f(ctx, m)) == 0;
        messages_destroy(m);
        Some(ok)
    }
}

/// Run the `i`-th text call (`body`: `{"name": ..., "arguments": {...}}`,
/// or `parameters` for `arguments`)
/// and add `name: result` to `results`.
///
/// # Safety
/// On the loop thread.
unsafe fn one_call(
    i: usize,
    body: &[u8],
    on_tool_call: TextHook,
    on_result: TextHook,
    results: &mut Vec<u8>,
    oom: &mut bool,
) {
    let mut text = Vec::new();
    push(&mut text, body, oom);
    push(&mut text, b"\0", oom);
    if *oom {
        return;
    }
    // SAFETY: NUL-terminated; the tree is owned here and deleted below.
    let parsed = unsafe { cJSON_Parse(text.as_ptr() as *const c_char) };
    // SAFETY: NULL or the parsed tree; lookups only.
    let name = unsafe { json::get_str(parsed, c"name") };
    let Some(name) = name else {
        push(results, b"(unreadable call): error: a call must be {\"name\": \"TOOL\", \"arguments\": {...}} in valid JSON\n", oom);
        // SAFETY: NULL or the parsed tree, owned here.
        unsafe { cJSON_Delete(parsed) };
        return;
    };
    // The call as the registry knows it: {"id", "type", "function": {"name",
    // "arguments": the arguments as a JSON text}}.
    // SAFETY: fresh objects, each attached at once so that deleting `c`
    // frees everything; `parsed` stays alive until the end.
    let call = unsafe {
        let mut id = [0u8; 24];
        let mut digits = [0u8; 20];
        let n = crate::base::text::decimal(i as u64 + 1, &mut digits);
        let head = crate::base::text::copy_prefix(&mut id, b"text_call_");
        crate::base::text::copy_prefix(id.get_mut(head..).unwrap_or_default(), n);
        let c = cJSON_CreateObject();
        let f = cJSON_CreateObject();
        let mut ok = json::add_to_object(c, c"function", f).is_ok()
            && json::add_to_object(c, c"id", cJSON_CreateString(id.as_ptr() as *const c_char))
                .is_ok()
            && json::add_to_object(c, c"type", cJSON_CreateString(c"function".as_ptr())).is_ok()
            && json::add_to_object(f, c"name", cJSON_CreateString(name.as_ptr())).is_ok();
        let args = arguments_of(parsed);
        if ok && !args.is_null() {
            let args_text = if let Some(s) = json::string_value(args) {
                // Some models write the arguments as a JSON string.
                cJSON_CreateString(s.as_ptr())
            } else {
                let printed = cJSON_PrintUnformatted(args);
                let item = json::new_string(printed);
                if !printed.is_null() {
                    cJSON_free(printed as *mut c_void);
                }
                item
            };
            ok = json::add_to_object(f, c"arguments", args_text).is_ok();
        }
        if !ok {
            if !c.is_null() {
                cJSON_Delete(c);
            }
            core::ptr::null_mut()
        } else {
            c
        }
    };
    if call.is_null() {
        *oom = true;
        // SAFETY: the parsed tree, owned here.
        unsafe { cJSON_Delete(parsed) };
        return;
    }
    if let Some(show) = on_tool_call {
        // SAFETY: the live call; the printed text is borrowed by the hook.
        unsafe {
            let printed = cJSON_PrintUnformatted(call);
            if !printed.is_null() {
                show(printed);
                cJSON_free(printed as *mut c_void);
            }
        }
    }
    // SAFETY: on the loop thread; `call` is live until deleted below.
    let answer = unsafe { run_tool_call(call, false, on_result) };
    // SAFETY: NULL or a live set of the answer; its text borrowed.
    let result = unsafe { messages_get_content_idx(answer.content, 0) };
    push(results, name.to_bytes(), oom);
    push(results, b": ", oom);
    push(
        results,
        if result.is_null() {
            b"(no result)"
        } else {
            // SAFETY: non-NULL: NUL-terminated message content of `answer`.
            unsafe { CStr::from_ptr(result) }.to_bytes()
        },
        oom,
    );
    push(results, b"\n", oom);
    drop(answer);
    // SAFETY: both trees are owned here and not used again.
    unsafe {
        cJSON_Delete(call);
        cJSON_Delete(parsed);
    }
}

/// Turn the native-mode fallback on or off, or back to the board's choice
/// (`None`): on a board it is on with `PKG_AGENT_TEXT_CALL_FALLBACK`; on the
/// host port (which builds every part) only with the environment variable
/// `AGENT_TEXT_CALL_FALLBACK=1`. Takes effect with the next request.
#[cfg(feature = "text-call-fallback")]
pub fn set_text_call_fallback(on: Option<bool>) {
    crate::runtime::settings::change(|s| s.text_call_fallback = on);
}

/// Is the native-mode fallback on?
#[cfg(feature = "text-call-fallback")]
pub fn text_call_fallback() -> bool {
    crate::runtime::settings::snapshot()
        .text_call_fallback
        .unwrap_or_else(board_fallback)
}

#[cfg(all(feature = "text-call-fallback", feature = "host-port"))]
fn board_fallback() -> bool {
    std::env::var_os("AGENT_TEXT_CALL_FALLBACK").is_some_and(|v| v == "1")
}
#[cfg(all(feature = "text-call-fallback", not(feature = "host-port")))]
fn board_fallback() -> bool {
    true
}

/// The native-mode fallback: if `resp` has no tool calls and its whole text
/// is exactly one call of a registered tool, make it the response's one
/// tool call (id `call_text_1`, the text dropped) and show it to
/// `on_tool_call`. True when it did; false leaves `resp` as it was (also
/// without memory).
///
/// # Safety
/// On the loop thread (it reads the registry), with `resp` a live response
/// from `chat()`, owned by the caller, with no reference into it alive.
#[cfg(feature = "text-call-fallback")]
pub unsafe fn adopt_single_call(resp: ChatResponse_t, on_tool_call: TextHook) -> bool {
    // SAFETY: a live response (this function's contract).
    let (answer, calls) = unsafe { ((*resp).context, (*resp).tool_call) };
    // SAFETY: `calls` is NULL or the response's live array.
    if answer.is_null() || unsafe { json::is_array(calls) && !(*calls).child.is_null() } {
        return false;
    }
    // SAFETY: non-NULL, NUL-terminated, owned by `resp` (freed below only
    // after the last use of `text`).
    let text = unsafe { CStr::from_ptr(answer) }.to_bytes();
    let Some(object) = crate::wire::text_calls::single_call(text, &mut is_tool_call) else {
        return false;
    };
    let mut body = Vec::new();
    let mut oom = false;
    push(&mut body, object, &mut oom);
    push(&mut body, b"\0", &mut oom);
    if oom {
        return false;
    }
    // SAFETY: NUL-terminated; the tree is owned here and deleted below; the
    // new objects are attached at once, so deleting `call` frees them all.
    let call = unsafe {
        let parsed = cJSON_Parse(body.as_ptr() as *const c_char);
        let name = json::get_str(parsed, c"name");
        let printed = cJSON_PrintUnformatted(arguments_of(parsed));
        let call = cJSON_CreateObject();
        let f = cJSON_CreateObject();
        let ok = json::add_to_object(call, c"function", f).is_ok()
            && name.is_some()
            && !printed.is_null()
            && json::add_to_object(call, c"id", cJSON_CreateString(c"call_text_1".as_ptr()))
                .is_ok()
            && json::add_to_object(call, c"type", cJSON_CreateString(c"function".as_ptr())).is_ok()
            && json::add_to_object(
                f,
                c"name",
                cJSON_CreateString(name.map_or(c"".as_ptr(), CStr::as_ptr)),
            )
            .is_ok()
            && json::add_to_object(f, c"arguments", json::new_string(printed)).is_ok();
        if !printed.is_null() {
            cJSON_free(printed as *mut c_void);
        }
        cJSON_Delete(parsed);
        if !ok {
            if !call.is_null() {
                cJSON_Delete(call);
            }
            return false;
        }
        call
    };
    // SAFETY: the response's array (NULL, or live and empty), or a new one
    // given to the response; `call` is detached and taken over.
    unsafe {
        let array = if json::is_array(calls) {
            calls
        } else {
            cJSON_CreateArray()
        };
        if array.is_null() {
            cJSON_Delete(call);
            return false;
        }
        // (On failure `add_to_array` has freed `call`.)
        if json::add_to_array(array, call).is_err() {
            if array != calls {
                cJSON_Delete(array);
            }
            return false;
        }
        if array != calls {
            if !calls.is_null() {
                cJSON_Delete(calls);
            }
            (*resp).tool_call = array;
        }
        // The text was the call: the assistant message carries the call only.
        crate::rtt::rt_free(answer as *mut c_void);
        (*resp).context = core::ptr::null_mut();
        if let Some(show) = on_tool_call {
            let printed = cJSON_PrintUnformatted(call);
            if !printed.is_null() {
                show(printed);
                cJSON_free(printed as *mut c_void);
            }
        }
    }
    true
}

/// Tools as text: the system prompt lists them before each turn, the turn
/// runs the calls written in the answer, and `agent_config tools
/// text|native` switches at run time.
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    before_turn: Some(refresh_system_prompt),
    #[cfg(feature = "msh-extras")]
    config_word: Some(crate::runtime::ability::ConfigWord {
        word: b"tools",
        // agent_config's own usage line lists `[tools text|native]`.
        usage: b"",
        run: tools_word,
    }),
    #[cfg(feature = "msh-extras")]
    show_config: Some(show_mode),
    text_tools: Some(&TEXT_TOOLS),
    ..crate::runtime::ability::Ability::NONE
};

static TEXT_TOOLS: crate::runtime::ability::TextTools = crate::runtime::ability::TextTools {
    on: text_mode,
    filtered,
    finish_filtered,
    answer_calls,
    #[cfg(feature = "text-call-fallback")]
    fallback_on: text_call_fallback,
    #[cfg(not(feature = "text-call-fallback"))]
    fallback_on: || false,
    #[cfg(feature = "text-call-fallback")]
    adopt_single_call,
    #[cfg(not(feature = "text-call-fallback"))]
    adopt_single_call: |_, _| false,
};

/// `agent_config tools text|native`.
#[cfg(feature = "msh-extras")]
fn tools_word(words: &[&[u8]], more: bool) -> core::ffi::c_int {
    match (words, more) {
        ([b"text"], false) => set_text_mode(Some(true)),
        ([b"native"], false) => set_text_mode(Some(false)),
        _ => {
            crate::runtime::commands::line(&[
                b"agent_config tools: text (models without function calling) or native",
            ]);
            return -1;
        }
    }
    crate::runtime::commands::show_config();
    0
}

#[cfg(feature = "msh-extras")]
fn show_mode() {
    crate::runtime::commands::line(&[
        b"tools: ",
        if text_mode() {
            b"text (described in the system prompt)"
        } else {
            b"native (function calling)"
        },
    ]);
}
