//! How an ability plugs into the agent's lifecycle and its turn: one
//! table of hooks per ability, each `None` where the ability has nothing to
//! do. The loop runs through the installed table and names no ability;
//! the abilities themselves stand above runtime (`crate::abilities`),
//! which installs their table before an agent starts.

use crate::abi::hooks::TextHook;
use crate::abi::messages::Messages_t;
use crate::cjson::sys::cJSON;
use crate::runtime::chat::ChatResponse_t;
use crate::runtime::context::Context_t;
use crate::runtime::tools::{AgentToolList, AgentToolNode_t};
use core::ffi::c_int;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Put a user message on the running agent's hub (the loop's
/// [`crate::runtime::agent_loop::put_user_message`]).
pub type Put = unsafe fn(Messages_t) -> Result<(), Messages_t>;

/// One ability's hooks, in the order the loop calls them.
pub struct Ability {
    /// After the package's `init_tools()`, before the registry is used:
    /// the ability's own tools.
    pub register_tools: Option<fn()>,
    /// The conversation was just made, before any message reaches it.
    ///
    /// # Safety
    /// The context is the new live one, the calling thread's.
    pub context_made: Option<unsafe fn(Context_t)>,
    /// The agent and its channels started: threads of the ability's own.
    pub start: Option<fn(Put)>,
    /// The agent is stopping, its channels still up: nothing more may be
    /// put on the hub or called through the registry from outside.
    pub stop: Option<fn()>,
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
    /// What runs a registry node the ability serves (a remote MCP
    /// server's tool), `None` for a node that is not its own.
    ///
    /// # Safety
    /// The node is a live node of the registry, read under the tool lock.
    pub runs_tool: Option<unsafe fn(AgentToolNode_t) -> Option<RunTool>>,
    /// A word of `agent_config` the ability answers (`agent_config mcp
    /// ...`).
    pub config_word: Option<ConfigWord>,
    /// Lines of its own in `agent_config`'s listing.
    pub show_config: Option<fn()>,
    /// Tools written in the answer's text, for models without function
    /// calling (one ability offers them).
    pub text_tools: Option<&'static TextTools>,
}

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

/// Runs a tool an ability serves: the node (live, under the tool lock)
/// and its arguments (borrowed); the result is left in the node.
pub type RunTool = unsafe fn(*mut AgentToolList, *mut cJSON);

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
        runs_tool: None,
        config_word: None,
        before_turn: None,
        show_config: None,
        text_tools: None,
    };
}

/// The most abilities one firmware has (each a cargo feature).
pub const MAX: usize = 16;

static TABLE: AtomicPtr<&'static Ability> = AtomicPtr::new(core::ptr::null_mut());
static LEN: AtomicUsize = AtomicUsize::new(0);

/// Install the abilities the agent runs with (the layer above does it
/// before each start; the same table every time). At most [`MAX`] are kept.
pub fn install(table: &'static [&'static Ability]) {
    let len = table.len().min(MAX);
    // Empty first, so a reader between the two stores sees no table rather
    // than a length of another one.
    LEN.store(0, Ordering::Release);
    TABLE.store(table.as_ptr() as *mut &'static Ability, Ordering::Release);
    LEN.store(len, Ordering::Release);
}

/// The installed abilities (none before [`install`]).
pub fn installed() -> &'static [&'static Ability] {
    let len = LEN.load(Ordering::Acquire);
    let ptr = TABLE.load(Ordering::Acquire);
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: `ptr` and `len` come from one `&'static [&'static Ability]`
    // given to `install` (the length is stored last and read first, and
    // every install gives a table at least that long: the same one).
    unsafe { core::slice::from_raw_parts(ptr, len) }
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

/// What runs `node`, when an ability serves it.
///
/// # Safety
/// `node` is a live node of the registry, read under the tool lock.
pub unsafe fn runs_tool(node: AgentToolNode_t) -> Option<RunTool> {
    installed()
        .iter()
        .filter_map(|a| a.runs_tool)
        // SAFETY: forwarded (this function's contract is the hook's).
        .find_map(|runs| unsafe { runs(node) })
}

/// The ability that answers `agent_config WORD`.
pub fn config_word(word: &[u8]) -> Option<ConfigWord> {
    installed()
        .iter()
        .filter_map(|a| a.config_word)
        .find(|c| c.word == word)
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
