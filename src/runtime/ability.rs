//! How an ability plugs into the agent's lifecycle and its turn: one
//! table of hooks per ability, each `None` where the ability has nothing to
//! do. The loop runs through the table and names no ability: the
//! abilities stand above runtime (`crate::abilities`), which defines the
//! build's table under one link name that this module declares, so the
//! table is there from the first call, whatever C function comes first
//! (`to_content` needs the multimodal ability with no agent running).

use crate::abi::hooks::TextHook;
use crate::abi::messages::Messages_t;
use crate::base::text_buf::TextBuf;
use crate::cjson::sys::cJSON;
use crate::net::error::ErrorText;
use crate::runtime::c_objects::{AgentToolNode_t, ChatResponse_t, Context_t};
use core::ffi::c_int;

/// Put a user message on the running agent's hub (the loop's
/// [`crate::runtime::agent_loop::put_user_message`]).
pub type Put = unsafe fn(Messages_t) -> Result<(), Messages_t>;

/// One ability's hooks (docs/architecture.md groups them by when they run).
pub struct Ability {
    /// After the package's `init_tools()`, before the registry is used:
    /// the ability's own tools.
    pub register_tools: Option<fn()>,
    /// The conversation was just made, before any message reaches it.
    ///
    /// # Safety
    /// The context is the new live one, the calling thread's.
    pub context_made: Option<unsafe fn(Context_t)>,
    /// The agent is reachable (its gate open), its channels not yet
    /// started: services their C code may use.
    pub open: Option<fn()>,
    /// The agent and its channels started: threads of the ability's own.
    pub start: Option<fn(Put)>,
    /// The agent is stopping, its channels still up: nothing more may be
    /// put on the hub or called through the registry from outside.
    pub stop: Option<fn()>,
    /// The agent is closed (its gate shut and empty) and about to be
    /// freed: services [`Ability::open`] started.
    pub closed: Option<fn()>,
    /// The agent, its hub and its context are gone.
    pub forget: Option<fn()>,
    /// Before a user message joins the conversation (the system prompt
    /// brought up to date).
    ///
    /// # Safety
    /// The context is the loop's live one, on the loop thread.
    pub before_turn: Option<unsafe fn(Context_t)>,
    /// The loop took a user message: a tag of the ability's (0: none),
    /// handed back to [`Ability::replied`] with the turn's reply.
    pub took: Option<fn(Messages_t) -> u32>,
    /// The reply to a message [`Ability::took`] tagged.
    pub replied: Option<fn(u32, &[u8])>,
    /// Trimming the conversation after the reply went out instead of
    /// before: `Some` when the ability does it now (its setting is on).
    pub trim_after_reply: Option<fn() -> Option<Trim>>,
    /// The ability's own tool behind a registry node (a note's, a
    /// sub-agent's, a remote MCP server's), `None` for a node that is not
    /// its own.
    ///
    /// # Safety
    /// The node is a live node of the registry, read under the tool lock.
    pub native_tool: Option<unsafe fn(AgentToolNode_t) -> Option<&'static Native>>,
    /// A word of `agent_config` the ability answers (`agent_config mcp
    /// ...`).
    pub config_word: Option<ConfigWord>,
    /// The agent entered (`true`) or left (`false`) its running state.
    pub running: Option<fn(bool)>,
    /// Why a message could not join the conversation, when the ability
    /// knows (a file it could not send); taken, so it is told once. Also
    /// asked before each turn, to drop a stale reason.
    pub why_refused: Option<fn(&mut ErrorText) -> bool>,
    /// A message's `content` when the ability builds it (files as parts);
    /// `None`: the plain text. `for_context`: for the conversation, where a
    /// message of one text item stays a string.
    ///
    /// # Safety
    /// The set is NULL or live, borrowed; the result is the caller's.
    pub content: Option<unsafe fn(Messages_t, bool) -> Option<*mut cJSON>>,
    /// Lines of its own in `agent_config`'s listing.
    pub show_config: Option<fn()>,
    /// The registry was destroyed (what the ability kept of its tools goes).
    pub registry_gone: Option<fn()>,
    /// What holds around each tool call (one ability keeps it).
    pub tool_calls: Option<&'static ToolCalls>,
    /// Tools written in the answer's text, for models without function
    /// calling (one ability offers them).
    pub text_tools: Option<&'static TextTools>,
}

/// What holds while one tool call runs (its timeout and retries), and the
/// turn's direct answer made of tools' results.
pub struct ToolCalls {
    /// Before the call of `node` (`served`: an ability runs it, whose
    /// request keeps its own time): what [`ToolCalls::end`] gets back.
    ///
    /// # Safety
    /// The node is live, under the tool lock, until `end`.
    pub begin: unsafe fn(AgentToolNode_t, bool) -> CallState,
    /// After the call.
    ///
    /// # Safety
    /// As `begin`'s, with the state it gave.
    pub end: unsafe fn(AgentToolNode_t, CallState),
    /// A tool `name` answered `result` successfully (a direct-output
    /// tool's result is then the turn's answer).
    pub succeeded: fn(&[u8], &[u8]),
    /// The turn's direct answer, taken (empty: none).
    pub take_direct: fn() -> alloc::vec::Vec<u8>,
}

/// What [`ToolCalls::begin`] saved, for its `end`.
#[derive(Clone, Copy, Default)]
pub struct CallState(pub [usize; 4]);

/// The turn's hooks for tools written as text in the answer.
pub struct TextTools {
    /// Tools are offered as text now (the setting).
    pub on: fn() -> bool,
    /// The context hook that keeps call text out of what streams, given
    /// the turn's own (`whole_only`: a call may only come whole).
    pub filtered: fn(TextHook, bool) -> TextHook,
    /// The turn's streaming ended: what the filter held back goes out.
    pub finish_filtered: fn(),
    /// Answer the calls written in `resp`'s text: `None` when it has none
    /// (it is the reply), `Some(false)` when one could not be recorded.
    ///
    /// # Safety
    /// On the loop thread, the context its live one, the response live.
    pub answer_calls: unsafe fn(Context_t, ChatResponse_t, TextHook, TextHook) -> Option<bool>,
    /// In native mode, an answer that is one call written as text is run.
    pub fallback_on: fn() -> bool,
    /// Make `resp`'s text, one call, its tool call; whether it did.
    ///
    /// # Safety
    /// On the loop thread; `resp` live, owned by the caller.
    pub adopt_single_call: unsafe fn(ChatResponse_t, TextHook) -> bool,
}

/// A tool of an ability's own: Rust code that answers into a text
/// buffer, where a C tool fills its node. The registry writes the result
/// into the node ([`crate::runtime::tools::run_native`]).
pub struct Native {
    /// Run the call of `node` (live, under the tool lock) with its
    /// arguments (NULL or a live object, borrowed): its answer, or what
    /// went wrong, into the buffer; true when it succeeded.
    ///
    /// # Safety
    /// As said of the node and the arguments.
    pub run: unsafe fn(AgentToolNode_t, *mut cJSON, &mut TextBuf) -> bool,
    /// The result when the answer ran out of memory.
    pub no_memory: &'static core::ffi::CStr,
}

/// `agent_config WORD ...`, answered by an ability.
#[derive(Clone, Copy)]
pub struct ConfigWord {
    pub word: &'static [u8],
    /// Its part of `agent_config`'s usage line (` [mcp list|add ...]`).
    pub usage: &'static [u8],
    /// Run with the words after it (at most [`CONFIG_WORDS`]; `more`: there
    /// were more than that); the command's exit code.
    pub run: fn(words: &[&[u8]], more: bool) -> c_int,
}

/// The most words after an ability's `agent_config` word it is given.
pub const CONFIG_WORDS: usize = 2;

/// A trim that runs after the reply was delivered.
///
/// # Safety
/// The context is the loop's live one, on the loop thread.
pub type Trim = unsafe fn(Context_t, c_int);

impl Ability {
    /// No hooks: the base each ability's table starts from.
    pub const NONE: Ability = Ability {
        register_tools: None,
        context_made: None,
        start: None,
        stop: None,
        forget: None,
        took: None,
        replied: None,
        trim_after_reply: None,
        native_tool: None,
        config_word: None,
        before_turn: None,
        show_config: None,
        text_tools: None,
        open: None,
        closed: None,
        running: None,
        why_refused: None,
        content: None,
        registry_gone: None,
        tool_calls: None,
    };
}

/// The most abilities one firmware has (each a cargo feature; the
/// abilities' list checks it when compiled).
pub const MAX: usize = 12;

extern "Rust" {
    /// `crate::abilities::ALL`, found by the linker.
    #[link_name = "rtt_agent_abilities"]
    static ABILITIES: &'static [&'static Ability];
}

/// The build's abilities.
pub fn installed() -> &'static [&'static Ability] {
    // SAFETY: `crate::abilities::ALL` defines this symbol with this type
    // (`#[export_name]`, checked by the compiler there), immutable.
    unsafe { ABILITIES }
}

/// Each installed ability's hook, where it has one.
pub fn each<H: Copy>(hook: impl Fn(&Ability) -> Option<H>, mut run: impl FnMut(H)) {
    for a in installed() {
        if let Some(h) = hook(a) {
            run(h);
        }
    }
}

/// The tags of one turn, one per installed ability (see [`Ability::took`]).
#[derive(Default)]
pub struct Tags([u32; MAX]);

impl Tags {
    /// Ask each ability for its tag of `msg`.
    pub fn take(msg: Messages_t) -> Tags {
        let mut tags = Tags::default();
        for (a, tag) in installed().iter().zip(tags.0.iter_mut()) {
            if let Some(took) = a.took {
                *tag = took(msg);
            }
        }
        tags
    }

    /// Hand each tag back with the reply.
    pub fn replied(&self, reply: &[u8]) {
        for (a, &tag) in installed().iter().zip(self.0.iter()) {
            if let (Some(replied), true) = (a.replied, tag != 0) {
                replied(tag, reply);
            }
        }
    }
}

/// The ability's tool behind `node`, when an ability serves it.
///
/// # Safety
/// `node` is a live node of the registry, read under the tool lock.
pub unsafe fn native_tool(node: AgentToolNode_t) -> Option<&'static Native> {
    installed()
        .iter()
        .filter_map(|a| a.native_tool)
        // SAFETY: forwarded (this function's contract is the hook's).
        .find_map(|native| unsafe { native(node) })
}

/// The ability that answers `agent_config WORD`.
pub fn config_word(word: &[u8]) -> Option<ConfigWord> {
    installed()
        .iter()
        .filter_map(|a| a.config_word)
        .find(|c| c.word == word)
}

/// Why a message could not join the conversation, if an ability knows.
pub fn why_refused(out: &mut ErrorText) -> bool {
    installed()
        .iter()
        .filter_map(|a| a.why_refused)
        .any(|why| why(out))
}

/// A message's `content` as an ability builds it, if one does.
///
/// # Safety
/// `messages` is NULL or live, borrowed.
pub unsafe fn content(messages: Messages_t, for_context: bool) -> Option<*mut cJSON> {
    installed()
        .iter()
        .filter_map(|a| a.content)
        // SAFETY: forwarded (this function's contract is the hook's).
        .find_map(|content| unsafe { content(messages, for_context) })
}

/// The tool-call hooks, when an ability keeps them.
pub fn tool_calls() -> Option<&'static ToolCalls> {
    installed().iter().find_map(|a| a.tool_calls)
}

/// The tools-as-text hooks, when an ability offers them.
pub fn text_tools() -> Option<&'static TextTools> {
    installed().iter().find_map(|a| a.text_tools)
}

/// The trim an ability runs after the reply, if one does now.
pub fn trim_after_reply() -> Option<Trim> {
    installed()
        .iter()
        .find_map(|a| a.trim_after_reply.and_then(|on| on()))
}
