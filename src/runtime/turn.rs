//! The agent's turn (`crate::agent::turn`) over the board's objects: the
//! loop's context is the conversation, `chat()` is the model, the tool
//! registry under its lock answers the calls. What the channel shows as
//! the turn goes (reasoning, answer fragments, calls, results) goes to the
//! loop's stream hooks.

use super::chat::{chat_response_free, chat_to, ChatResponse, ChatResponse_t, LongCalls};
use super::context::Context_t;
use super::tools::get_agent_tools;
use crate::abi::hooks::TextHook;
use crate::agent::turn::{Answer, Chat, Conversation, ToolMode, Tools};
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::net::error::ErrorText;
use crate::rtt::rt_eok;
use core::ffi::{c_int, CStr};
use core::ptr;

/// What the loop does with the pieces of a turn as they happen: the
/// reasoning and answer fragments and the tool calls `chat()` reports, and
/// each tool's result.
#[derive(Clone, Copy)]
pub struct StreamHooks {
    pub on_reasoning: TextHook,
    pub on_tool_call: TextHook,
    pub on_context: TextHook,
    pub on_tool_result: TextHook,
}

/// How this turn offers the tools: as text for models without function
/// calling (`PKG_AGENT_TOOLS_TEXT`), natively with the one-call fallback
/// (`PKG_AGENT_TEXT_CALL_FALLBACK`), or natively.
pub(crate) fn tool_mode() -> ToolMode {
    if text_tools_on() {
        ToolMode::Text
    } else if text_call_fallback_on() {
        ToolMode::NativeWithTextFallback
    } else {
        ToolMode::Native
    }
}

/// A response from `chat()`, owned (freed on drop), with the calls whose
/// arguments were too long to keep.
pub(crate) struct Response {
    resp: ChatResponse_t,
    long_calls: LongCalls,
}

impl Response {
    fn get(&self) -> &ChatResponse {
        // SAFETY: `resp` is a non-NULL response from `chat()`, owned by
        // this value until it drops.
        unsafe { &*self.resp }
    }

    /// The answer's call number `index`, if it has one.
    fn call(&self, index: usize) -> Option<*mut cJSON> {
        // SAFETY: `tool_call` is NULL or the response's live array (chat()'s
        // guarantee), unchanged while it is read.
        unsafe { json::children(self.get().tool_call) }.nth(index)
    }
}

impl Drop for Response {
    fn drop(&mut self) {
        // SAFETY: owned by this value, not used again.
        unsafe { chat_response_free(self.resp) };
    }
}

impl Answer for Response {
    fn call_count(&self) -> usize {
        let calls = self.get().tool_call;
        // SAFETY: as in `call`.
        if unsafe { json::is_array(calls) } {
            // SAFETY: as in `call`.
            unsafe { json::children(calls) }.count()
        } else {
            0
        }
    }

    fn text(&self) -> &[u8] {
        let text = self.get().context;
        if text.is_null() {
            b""
        } else {
            // SAFETY: non-NULL: a NUL-terminated string owned by the
            // response, which outlives the borrow.
            unsafe { CStr::from_ptr(text) }.to_bytes()
        }
    }
}

/// The loop's context as the turn's conversation.
pub(crate) struct LoopConversation(Context_t);

impl LoopConversation {
    /// # Safety
    /// `ctx` is the loop thread's live context (non-NULL, `message` a live
    /// array), used by this thread only while the value lives.
    pub(crate) unsafe fn new(ctx: Context_t) -> Self {
        LoopConversation(ctx)
    }
}

impl Conversation<Response> for LoopConversation {
    fn len(&self) -> usize {
        // SAFETY: the context is live (`new`'s contract).
        unsafe { cJSON_GetArraySize((*self.0).message) }.max(0) as usize
    }

    fn truncate(&mut self, len: usize) {
        let keep = len.min(c_int::MAX as usize) as c_int;
        // SAFETY: the context is live; its `message` array owns its items;
        // deleting needs no memory.
        unsafe {
            while cJSON_GetArraySize((*self.0).message) > keep {
                cJSON_DeleteItemFromArray((*self.0).message, keep);
            }
        }
    }

    fn record_answer(&mut self, answer: &Response) -> bool {
        let ctx = self.0;
        // SAFETY: the context is live; its method borrows the live response.
        (unsafe {
            (*ctx)
                .append_assistant_message
                .map_or(-1, |f| f(ctx, answer.resp))
        }) == rt_eok()
    }

    fn record_text(&mut self, text: &[u8]) -> bool {
        // The context copies a response's text: lend it one that holds
        // only `text`, NUL-terminated.
        let Ok(mut owned) = crate::base::fallible::copy_of(text) else {
            return false;
        };
        if crate::base::fallible::push(&mut owned, 0).is_err() {
            return false;
        }
        let mut answer = ChatResponse {
            reasoning: ptr::null_mut(),
            context: owned.as_mut_ptr() as *mut core::ffi::c_char,
            tool_call: ptr::null_mut(),
        };
        let ctx = self.0;
        // SAFETY: the context is live; its method only reads the borrowed
        // response, whose text is NUL-terminated and outlives the call.
        (unsafe {
            (*ctx)
                .append_assistant_message
                .map_or(-1, |f| f(ctx, &mut answer))
        }) == rt_eok()
    }
}

/// The model, through `chat()`.
pub(crate) struct ModelChat<'h> {
    hooks: &'h StreamHooks,
    max_tokens: c_int,
    /// A sub-agent's own endpoint and tools (`None`: the agent's).
    #[cfg(feature = "sub-agents")]
    own: Option<(&'h super::chat::Endpoint<'h>, *mut cJSON)>,
}

impl<'h> ModelChat<'h> {
    pub(crate) fn new(hooks: &'h StreamHooks, max_tokens: c_int) -> Self {
        ModelChat {
            hooks,
            max_tokens,
            #[cfg(feature = "sub-agents")]
            own: None,
        }
    }

    /// A sub-agent's model: its `endpoint`, offered `tools` (NULL: none;
    /// a live array that outlives the value).
    #[cfg(feature = "sub-agents")]
    pub(crate) fn with_own(
        hooks: &'h StreamHooks,
        max_tokens: c_int,
        endpoint: &'h super::chat::Endpoint<'h>,
        tools: *mut cJSON,
    ) -> Self {
        ModelChat {
            hooks,
            max_tokens,
            own: Some((endpoint, tools)),
        }
    }

    /// The tools a native request offers, and where it goes.
    fn target(&self) -> (*mut cJSON, Option<&super::chat::Endpoint<'h>>) {
        #[cfg(feature = "sub-agents")]
        if let Some((endpoint, tools)) = self.own {
            return (tools, Some(endpoint));
        }
        (get_agent_tools(), None)
    }
}

impl Chat<Response, LoopConversation> for ModelChat<'_> {
    type Failure = ErrorText;

    fn ask(
        &mut self,
        conversation: &LoopConversation,
        mode: ToolMode,
    ) -> Result<Response, ErrorText> {
        let mut error = ErrorText::new();
        let mut long_calls = LongCalls::default();
        let hooks = self.hooks;
        // In text mode the request has no tools, and the answer's calls are
        // kept from the channel; with the native fallback, an answer that is
        // exactly one call is.
        let (native_tools, endpoint) = self.target();
        let (tools, on_context) = match mode {
            ToolMode::Text => (ptr::null_mut(), filtered_context(hooks.on_context, false)),
            ToolMode::NativeWithTextFallback => {
                (native_tools, filtered_context(hooks.on_context, true))
            }
            ToolMode::Native => (native_tools, hooks.on_context),
        };
        // SAFETY: the context is live (`LoopConversation::new`) and its
        // array and the registry's tools array (NULL or live, this
        // thread's) are not modified during the call, which only borrows
        // them.
        let resp = unsafe {
            chat_to(
                endpoint,
                (*conversation.0).message,
                tools,
                self.max_tokens,
                hooks.on_reasoning,
                hooks.on_tool_call,
                on_context,
                &mut error,
                &mut long_calls,
            )
        };
        if mode != ToolMode::Native {
            finish_filtered();
        }
        if resp.is_null() {
            return Err(error);
        }
        Ok(Response { resp, long_calls })
    }

    fn adopt_text_call(&mut self, answer: &mut Response) -> bool {
        // SAFETY: on the loop thread; the response is live and owned by
        // `answer`, and no reference into it exists.
        let adopted = unsafe { adopt_text_call(answer.resp, self.hooks) };
        if adopted {
            // The adopted call replaced the (empty) native ones.
            answer.long_calls = LongCalls::default();
            crate::log_d!("the answer was a tool call written as text: running it");
        }
        adopted
    }
}

/// Which tools a sub-agent may call, by name.
#[cfg(feature = "sub-agents")]
pub(crate) type Allowed<'a> = dyn Fn(&[u8]) -> bool + 'a;

/// The tool registry, answering the calls of one turn (which remembers
/// them, for repeated identical calls, until it ends).
pub(crate) struct LoopTools<'h> {
    hooks: &'h StreamHooks,
    /// A sub-agent's: the tools it may call (a call of another is answered
    /// with an error, not run).
    #[cfg(feature = "sub-agents")]
    allowed: Option<&'h Allowed<'h>>,
    /// The direct-output tools' results, once a round has them.
    direct: alloc::vec::Vec<u8>,
    _turn: super::tool_run::Turn,
}

impl<'h> LoopTools<'h> {
    /// On the loop thread only: it owns the tool registry.
    pub(crate) fn begin(hooks: &'h StreamHooks) -> Self {
        LoopTools {
            hooks,
            #[cfg(feature = "sub-agents")]
            allowed: None,
            direct: alloc::vec::Vec::new(),
            _turn: super::tool_run::Turn::begin(),
        }
    }

    /// A sub-agent's tools: only those `allowed` says; the turn it runs in
    /// keeps its memory of calls (a sub-agent is a call of that turn).
    #[cfg(feature = "sub-agents")]
    pub(crate) fn nested(hooks: &'h StreamHooks, allowed: &'h Allowed<'h>) -> Self {
        LoopTools {
            hooks,
            allowed: Some(allowed),
            direct: alloc::vec::Vec::new(),
            _turn: super::tool_run::Turn::nested(),
        }
    }

    /// The reply the direct-output tools gave (empty: none).
    pub(crate) fn direct_text(&self) -> &[u8] {
        &self.direct
    }
}

impl Tools<Response, LoopConversation> for LoopTools<'_> {
    fn answer_call(
        &mut self,
        conversation: &mut LoopConversation,
        answer: &Response,
        index: usize,
    ) -> bool {
        let Some(call) = answer.call(index) else {
            return false;
        };
        let too_long = answer.long_calls.contains(index);
        #[cfg(feature = "sub-agents")]
        if let Some(allowed) = self.allowed {
            // SAFETY: `call` is a live element of the response.
            let name = unsafe { json::get_str(json::get(call, c"function"), c"name") }
                .map_or(&b""[..], CStr::to_bytes);
            if !allowed(name) {
                // SAFETY: as below.
                return unsafe { refuse_tool_call(conversation.0, call, name) };
            }
        }
        // SAFETY: on the loop thread with the context live; `call` is a live
        // element of the response, which outlives this call.
        unsafe { answer_tool_call(conversation.0, call, too_long, self.hooks.on_tool_result) }
    }

    fn answer_text_calls(
        &mut self,
        conversation: &mut LoopConversation,
        answer: &Response,
    ) -> Option<bool> {
        // SAFETY: on the loop thread with the context live; the response
        // is live.
        unsafe { answer_text_calls(conversation.0, answer.resp, self.hooks) }
    }

    /// The round's direct-output results (`PKG_AGENT_TOOL_OPTIONS`;
    /// without it there are none, and the turn's direct path is left out
    /// of the image).
    fn direct_answer(&mut self) -> Option<&[u8]> {
        self.direct = (super::ability::tool_calls()?.take_direct)();
        Some(&self.direct[..]).filter(|d| !d.is_empty())
    }
}

/// Run one tool call and append its `tool` message: the tool's text, or an
/// error the model can act on (behaviour.md §2). Returns whether the tool
/// message was appended.
///
/// # Safety
/// On the loop thread only (it owns the tool registry), with `ctx` its live
/// context; `call` is NULL or a live tool call that outlives the call.
unsafe fn answer_tool_call(
    ctx: Context_t,
    call: *mut cJSON,
    too_long: bool,
    on_result: TextHook,
) -> bool {
    // SAFETY: `call` is NULL or live for this whole function.
    let id = unsafe { json::get_str(call, c"id") }.unwrap_or(c"");
    // SAFETY: on the loop thread; `call` NULL or live (this function's
    // contract).
    let answer = unsafe { super::tool_run::run_tool_call(call, too_long, on_result) };
    // SAFETY: `ctx` is live (this function's contract).
    let appended = match unsafe { (*ctx).append_tool_message } {
        // SAFETY: the context's method with that context; `id` is
        // NUL-terminated and the content NULL or a live set, both borrowed.
        Some(f) => (unsafe { f(ctx, id.as_ptr(), answer.content) }) == rt_eok(),
        None => false,
    };
    if !appended {
        crate::log_e!("no memory for a tool result");
    }
    appended
}

/// Answer a sub-agent's call of a tool it was not given with an error the
/// model can act on; whether the answer was recorded.
///
/// # Safety
/// `ctx` is a live context of this thread; `call` a live tool call.
#[cfg(feature = "sub-agents")]
unsafe fn refuse_tool_call(ctx: Context_t, call: *mut cJSON, name: &[u8]) -> bool {
    let mut text = crate::base::text_buf::TextBuf::new();
    text.push_str("error: the tool \"")
        .push(name)
        .push_str("\" is not one this agent may use; the tool was not run");
    let own = crate::abi::messages::message_of(text);
    // SAFETY: `call` is live (contract).
    let id = unsafe { json::get_str(call, c"id") }.unwrap_or(c"");
    // SAFETY: `ctx` is live (contract).
    let appended = match unsafe { (*ctx).append_tool_message } {
        // SAFETY: the context's method with that context; `id` is
        // NUL-terminated and `own` a live set, both borrowed.
        Some(f) if !own.is_null() => (unsafe { f(ctx, id.as_ptr(), own) }) == rt_eok(),
        _ => false,
    };
    // SAFETY: made above, owned here.
    unsafe { crate::abi::messages::messages_destroy(own) };
    appended
}

/// Tools for models without function calling (`PKG_AGENT_TOOLS_TEXT`),
/// through the ability that offers them.
fn text_tools_on() -> bool {
    super::ability::text_tools().is_some_and(|t| (t.on)())
}
fn filtered_context(hook: TextHook, whole_only: bool) -> TextHook {
    super::ability::text_tools().map_or(hook, |t| (t.filtered)(hook, whole_only))
}
/// Native mode runs an answer that is one call written as text
/// (`PKG_AGENT_TEXT_CALL_FALLBACK`).
fn text_call_fallback_on() -> bool {
    super::ability::text_tools().is_some_and(|t| (t.fallback_on)())
}
/// # Safety
/// As [`super::ability::TextTools::adopt_single_call`].
unsafe fn adopt_text_call(resp: ChatResponse_t, hooks: &StreamHooks) -> bool {
    // SAFETY: forwarded (the caller's contract is the hook's).
    super::ability::text_tools()
        .is_some_and(|t| unsafe { (t.adopt_single_call)(resp, hooks.on_tool_call) })
}
fn finish_filtered() {
    if let Some(t) = super::ability::text_tools() {
        (t.finish_filtered)();
    }
}
/// # Safety
/// As [`super::ability::TextTools::answer_calls`].
unsafe fn answer_text_calls(
    ctx: Context_t,
    resp: ChatResponse_t,
    hooks: &StreamHooks,
) -> Option<bool> {
    // SAFETY: forwarded (the caller's contract is the hook's).
    super::ability::text_tools().and_then(|t| unsafe {
        (t.answer_calls)(ctx, resp, hooks.on_tool_call, hooks.on_tool_result)
    })
}
