//! The loop's side of tools for models without function calling
//! (`PKG_AGENT_TOOLS_TEXT`, `agent_config tools text|native`; the protocol is
//! `src/text_tools.rs`).
//!
//! In text mode a request carries no `tools`: the system prompt describes
//! them and the call format instead. The answer's fragments reach the
//! channel through [`CallFilter`], so the calls are never shown as text.
//! When the whole answer has calls, each runs through the same registry and
//! checks as a native call (unknown tool, the schema check, the tool), and
//! the results go back as one user message starting with `Tool results:`,
//! which every model accepts.

use super::agent_loop::{run_tool_call, TextHook};
use super::chat::ChatResponse_t;
use super::context::Context_t;
use super::messages::{
    messages_append, messages_create, messages_destroy, messages_get_content_idx, TYPE_TEXT,
};
use super::tools::get_agent_tools;
use crate::cjson_sys::*;
use crate::json;
use crate::rtt::atomic::{AtomicPtr, AtomicU8, Ordering};
use crate::rtt::sleep_lock::SleepLock;
use crate::text_tools::{calls, CallFilter};
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void, CStr};

extern "C" {
    /// 1 with PKG_AGENT_TOOLS_TEXT, else 0 (glue).
    fn agent_glue_tools_text() -> c_int;
}

/// 0: the board's choice, 1: text, 2: native (agent_config tools, tests).
static MODE: AtomicU8 = AtomicU8::new(0);

/// Tools as text (`Some(true)`), natively (`Some(false)`), or as the board
/// chose (`None`). Takes effect with the next message.
pub fn set_text_mode(on: Option<bool>) {
    MODE.store(
        match on {
            None => 0,
            Some(true) => 1,
            Some(false) => 2,
        },
        Ordering::Release,
    );
}

pub fn text_mode() -> bool {
    match MODE.load(Ordering::Acquire) {
        // SAFETY: a plain getter of the glue.
        0 => (unsafe { agent_glue_tools_text() }) != 0,
        m => m == 1,
    }
}

fn push(v: &mut Vec<u8>, b: &[u8], oom: &mut bool) {
    if crate::fallible::extend(v, b).is_err() {
        *oom = true;
    }
}

/// The system prompt for this mode: the package's prompt, plus in text mode
/// the tools and the call format. NUL-terminated; None without memory.
///
/// # Safety
/// On the loop thread (it owns the tools array).
unsafe fn prompt(text: bool) -> Option<Vec<u8>> {
    let mut p = Vec::new();
    let mut oom = false;
    // SAFETY: the package's prompt, a static NUL-terminated string.
    let base = unsafe { CStr::from_ptr(super::prompt::get_system_prompt()) };
    push(&mut p, base.to_bytes(), &mut oom);
    if text {
        push(&mut p, b"\n\nYou can use tools. To call one, write a line with nothing else on it:\n<tool_call>{\"name\": \"TOOL\", \"arguments\": {ARGUMENTS AS JSON}}</tool_call>\nWrite one such line per call, then stop and wait: the results come in a user message starting with \"Tool results:\". Answer the user only when you need no more tools. The tools:\n", &mut oom);
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
    if array.is_null() || role != b"system" || content == crate::text::strip_last(&want, 0) {
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
struct Filter {
    lock: SleepLock,
    state: UnsafeCell<CallFilter>,
}
// SAFETY: `state` is reached only with `lock` held.
unsafe impl Sync for Filter {}
static FILTER: Filter = Filter {
    lock: SleepLock::new(),
    state: UnsafeCell::new(CallFilter::new()),
};
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
        let n = crate::text::copy_prefix(&mut buf, piece);
        if let Some(nul) = buf.get_mut(n) {
            *nul = 0;
        }
        // SAFETY: the channel's hook with a NUL-terminated string it borrows.
        unsafe { hook(buf.as_ptr() as *const c_char) };
    }
}

fn with_filter(f: impl FnOnce(&mut CallFilter)) {
    let _held = FILTER.lock.lock();
    // SAFETY: the lock is held.
    f(unsafe { &mut *FILTER.state.get() });
}

unsafe extern "C" fn filtered_context(text: *const c_char) {
    crate::ffi_fn!(failure = (), nonnull(text), {
        // SAFETY: chat() passes NUL-terminated fragments, borrowed.
        let t = unsafe { CStr::from_ptr(text) }.to_bytes();
        with_filter(|f| f.feed(t, &mut |b| forward(b)));
    })
}

/// The `on_context` to give `chat()` for a text-mode request in front of the
/// channel's `hook`.
pub fn filtered(hook: TextHook) -> TextHook {
    SINK.store(
        hook.map_or(core::ptr::null_mut(), |h| h as *mut c_void),
        Ordering::Release,
    );
    with_filter(|f| *f = CallFilter::new());
    hook.map(|_| filtered_context as unsafe extern "C" fn(*const c_char))
}

/// After the request: text held back as a possible marker start goes out.
pub fn finish_filtered() {
    with_filter(|f| f.finish(&mut |b| forward(b)));
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
    calls(answer).next()?;
    // SAFETY: `ctx` is live; the method borrows the live `resp`.
    if unsafe { (*ctx).append_assistant_message.map_or(-1, |f| f(ctx, resp)) } != 0 {
        return Some(false);
    }
    let mut results = Vec::new();
    let mut oom = false;
    push(&mut results, b"Tool results:\n", &mut oom);
    for (i, body) in calls(answer).enumerate() {
        // SAFETY: on the loop thread; the call tree is made and freed here.
        unsafe { one_call(i, body, on_tool_call, on_result, &mut results, &mut oom) };
    }
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

/// Run the `i`-th text call (`body`: `{"name": ..., "arguments": {...}}`)
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
        let n = crate::text::decimal(i as u64 + 1, &mut digits);
        let head = crate::text::copy_prefix(&mut id, b"text_call_");
        crate::text::copy_prefix(id.get_mut(head..).unwrap_or_default(), n);
        let c = cJSON_CreateObject();
        let f = cJSON_CreateObject();
        let mut ok = json::add_to_object(c, c"function", f).is_ok()
            && json::add_to_object(c, c"id", cJSON_CreateString(id.as_ptr() as *const c_char))
                .is_ok()
            && json::add_to_object(c, c"type", cJSON_CreateString(c"function".as_ptr())).is_ok()
            && json::add_to_object(f, c"name", cJSON_CreateString(name.as_ptr())).is_ok();
        let args = json::get(parsed, c"arguments");
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
    let answer = unsafe { run_tool_call(call, on_result) };
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
