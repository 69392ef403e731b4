//! Sub-agents (`PKG_AGENT_SUBAGENTS`): a tool that runs a second agent
//! profile (its own system prompt, endpoint and model, and a subset of the
//! tools) on a task, and returns only that agent's final answer as the
//! tool's result: the caller's model never sees its inner history.
//!
//! Profiles come from C (`agent_profile_add`, AgentExt.h; kept until
//! removed, across the agent's restarts) and from a small text file on the
//! file system (`PKG_AGENT_PROFILES_FILE`, `crate::wire::profiles`; read at
//! each start, forgotten at cleanup). Each is registered at the agent's
//! start as a tool named after it, with one parameter, `task`.
//!
//! Depth 1: a sub-agent is offered none of the sub-agent tools, and one
//! called from inside a sub-agent refuses. Its conversation is a context of
//! its own, freed when it returns, so the heap is back. It runs on the
//! thread of the call (the loop's, or the MCP server's), under the tool
//! lock, with native tool calling; its requests go through the same
//! transport (deadlines, retries, cleanup's cancel), the tool's timeout
//! (`PKG_AGENT_TOOL_OPTIONS`) ending them sooner.

use crate::abi::messages::{messages_append, messages_create, messages_destroy, TYPE_TEXT};
use crate::agent::turn::{self, Answer, Reply, ToolMode, TurnError, TurnEvents, TurnSettings};
use crate::base::fallible::{extend, push};
use crate::base::text_buf::TextBuf;
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::rtt::atomic::{AtomicBool, Ordering};
use crate::rtt::sleep_cell::SleepCell;
use crate::rtt::{board, rt_eok};
use crate::runtime::chat::Endpoint;
use crate::runtime::context::{agent_context_create, agent_context_destroy, Context_t};
use crate::runtime::tools::{get_agent_tools, AgentToolList, Native};
use crate::runtime::turn::{LoopConversation, LoopTools, ModelChat, StreamHooks};
use crate::wire::profiles::{self, ProfileText};
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, CStr};

use crate::rtt::glue::{agent_glue_profiles_file, agent_glue_state_read};

/// The largest profiles file read.
const FILE_MAX: usize = 4096;

/// One profile, its texts owned, each NUL-terminated.
struct Profile {
    name: Vec<u8>,
    description: Vec<u8>,
    system: Vec<u8>,
    url: Vec<u8>,
    key: Vec<u8>,
    model: Vec<u8>,
    tools: Vec<u8>,
    /// Read from the file: forgotten at cleanup.
    from_file: bool,
}

fn owned(text: &[u8]) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    extend(&mut v, text).ok()?;
    push(&mut v, 0).ok()?;
    Some(v)
}

fn text_of(v: &[u8]) -> &[u8] {
    v.split_last().map_or(&b""[..], |(_, t)| t)
}

fn cstr(v: &[u8]) -> &CStr {
    CStr::from_bytes_with_nul(v).unwrap_or(c"")
}

impl Profile {
    fn of(p: &ProfileText<'_>, from_file: bool) -> Option<Profile> {
        Some(Profile {
            name: owned(p.name)?,
            description: owned(p.description)?,
            system: owned(p.system)?,
            url: owned(p.url)?,
            key: owned(p.key)?,
            model: owned(p.model)?,
            tools: owned(p.tools)?,
            from_file,
        })
    }
}

static PROFILES: SleepCell<Vec<Profile>> = SleepCell::new(Vec::new());

fn with<R>(f: impl FnOnce(&mut Vec<Profile>) -> R) -> R {
    PROFILES.with(f)
}

/// Why a profile was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// Not 1-64 of A-Z a-z 0-9 _ - (it names a tool).
    Name,
    NoSystem,
    NoMemory,
}

/// Add (or replace) a profile; C-declared ones stay until removed.
pub fn add(p: &ProfileText<'_>) -> Result<(), AddError> {
    add_from(p, false)
}

fn add_from(p: &ProfileText<'_>, from_file: bool) -> Result<(), AddError> {
    if !profiles::valid_name(p.name) {
        return Err(AddError::Name);
    }
    if p.system.is_empty() {
        return Err(AddError::NoSystem);
    }
    let profile = Profile::of(p, from_file).ok_or(AddError::NoMemory)?;
    with(|list| {
        list.retain(|q| text_of(&q.name) != p.name);
        push(list, profile)
    })
    .map_err(|_| AddError::NoMemory)
}

/// Remove the profile `name` (from the next start: a running agent keeps
/// its tool until then); whether there was one.
pub fn del(name: &[u8]) -> bool {
    with(|list| {
        let before = list.len();
        list.retain(|q| text_of(&q.name) != name);
        if list.is_empty() {
            *list = Vec::new();
        }
        list.len() != before
    })
}

fn is_profile(name: &[u8]) -> bool {
    with(|list| list.iter().any(|q| text_of(&q.name) == name))
}

/// Read the profiles file (the agent's start); a bad file is logged and
/// its profiles left out.
fn load_file() {
    // SAFETY: the glue returns NULL or a static NUL-terminated string.
    let Some(path) = (unsafe { crate::runtime::kept_file::path(agent_glue_profiles_file()) })
    else {
        return;
    };
    let mut buf: Vec<u8> = Vec::new();
    if buf.try_reserve_exact(FILE_MAX).is_err() {
        crate::log_w!("sub-agents: no memory to read ", path.to_bytes());
        return;
    }
    // SAFETY: `buf` has room for FILE_MAX bytes; the glue writes at most
    // that many and returns the count (-1: no such file).
    let n = unsafe {
        agent_glue_state_read(
            path.as_ptr(),
            buf.as_mut_ptr() as *mut c_char,
            FILE_MAX as c_int,
        )
    };
    if n < 0 {
        return;
    }
    // SAFETY: the glue wrote `n` (at most FILE_MAX) initialised bytes.
    unsafe { buf.set_len((n as usize).min(FILE_MAX)) };
    let mut failed = false;
    let parsed = profiles::parse(&buf, |p| {
        if add_from(&p, true).is_err() {
            failed = true;
        }
        true
    });
    match parsed {
        Err(why) => {
            let (text, line) = why.text();
            crate::log_w!(
                "sub-agents: ",
                path.to_bytes(),
                ": line ",
                line as u32,
                ": ",
                text,
                "; its profiles are left out"
            );
            forget_file_profiles();
        }
        Ok(_) if failed => {
            crate::log_w!("sub-agents: no memory for a profile of ", path.to_bytes())
        }
        Ok(_) => {}
    }
}

fn forget_file_profiles() {
    with(|list| {
        list.retain(|q| !q.from_file);
        if list.is_empty() {
            *list = Vec::new();
        }
    });
}

/// The profiles' tools, registered at the agent's start (after the board's
/// own, so that their tools can be offered).
pub fn register_tools() {
    load_file();
    let mut defs: Vec<*mut cJSON> = Vec::new();
    with(|list| {
        for p in list.iter() {
            // SAFETY: NUL-terminated texts; the tree is NULL or new.
            let def = unsafe { definition(&p.name, &p.description) };
            if def.is_null() || push(&mut defs, def).is_err() {
                // SAFETY: NULL or the new tree, not handed over.
                unsafe { cJSON_Delete(def) };
                crate::log_w!("sub-agents: no memory for the tool ", text_of(&p.name));
            }
        }
    });
    for def in defs {
        // SAFETY: a detached definition handed over (freed on failure).
        if unsafe { crate::runtime::tools::append_native(def) } != rt_eok() {
            crate::log_w!("sub-agents: a tool could not be registered (no memory)");
        }
    }
}

/// Forget what the file gave (the agent's cleanup).
pub fn forget() {
    forget_file_profiles();
}

/// `{"type":"function","function":{"name":..,"description":..,"parameters":
/// {"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}}}`.
///
/// # Safety
/// `name` and `description` are NUL-terminated.
unsafe fn definition(name: &[u8], description: &[u8]) -> *mut cJSON {
    let params = c"{\"type\":\"object\",\"properties\":{\"task\":{\"type\":\"string\",\"description\":\"what the agent is to do, with everything it needs to know\"}},\"required\":[\"task\"]}";
    // SAFETY: a NUL-terminated constant; NULL or a new tree.
    let params = unsafe { cJSON_Parse(params.as_ptr()) };
    if params.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: NUL-terminated texts (contract); `params` is taken over.
    unsafe {
        crate::runtime::utils::create_tool_item(
            cstr(name).as_ptr(),
            cstr(description).as_ptr(),
            params,
        )
    }
}

/// Whether a sub-agent runs now (depth 1: it may not start another).
static RUNNING: AtomicBool = AtomicBool::new(false);

/// What a sub-agent's request needs, copied out of the list (which may
/// change while it runs).
struct Chosen {
    system: Vec<u8>,
    url: Vec<u8>,
    key: Vec<u8>,
    model: Vec<u8>,
    tools: Vec<u8>,
}

/// A sub-agent's tool: the one behind `node`, when it is a profile's
/// (a native tool named after a profile).
///
/// # Safety
/// `node` is a live node of the registry, under the tool lock.
unsafe fn native_tool(node: *mut AgentToolList) -> Option<&'static Native> {
    // SAFETY: as this function's contract says.
    if !unsafe { crate::runtime::tools::is_native(node) } {
        return None;
    }
    // SAFETY: as above.
    let name = unsafe { crate::runtime::tools::function_name((*node).tool_obj) }?.to_bytes();
    with(|list| list.iter().any(|p| text_of(&p.name) == name)).then_some(&SUBAGENT_TOOL)
}

static SUBAGENT_TOOL: Native = Native {
    run: run_tool,
    no_memory: crate::abi::messages::OUT_OF_MEMORY_TEXT,
};

/// # Safety
/// `args` NULL or a live object; `node` a live node of the registry.
unsafe fn run_tool(node: *mut AgentToolList, args: *mut cJSON, out: &mut TextBuf) -> bool {
    // SAFETY: a live node (contract).
    let name = unsafe { crate::runtime::tools::function_name((*node).tool_obj) }
        .map_or(&b""[..], CStr::to_bytes);
    // SAFETY: `args` NULL or live (contract).
    let task = unsafe { json::get_str(args, c"task") }.map_or(&b""[..], CStr::to_bytes);
    run(name, task, out)
}

/// Run the profile `name` on `task`: its final answer (true) or why there
/// is none (false) into `out`.
fn run(name: &[u8], task: &[u8], out: &mut TextBuf) -> bool {
    if task.is_empty() {
        out.push_str("error: the sub-agent needs a \"task\" (a string)");
        return false;
    }
    if RUNNING.swap(true, Ordering::SeqCst) {
        out.push_str("error: a sub-agent cannot call another sub-agent");
        return false;
    }
    let chosen = with(|list| {
        let p = list.iter().find(|q| text_of(&q.name) == name)?;
        let copy = |v: &Vec<u8>| crate::base::fallible::copy_of(v).ok();
        Some(Chosen {
            system: copy(&p.system)?,
            url: copy(&p.url)?,
            key: copy(&p.key)?,
            model: copy(&p.model)?,
            tools: copy(&p.tools)?,
        })
    });
    let ok = match chosen {
        None if is_profile(name) => {
            out.push_str("error: no memory on the device for the sub-agent");
            false
        }
        None => {
            out.push_str("error: the sub-agent \"")
                .push(name)
                .push_str("\" is no longer declared");
            false
        }
        Some(chosen) => run_profile(name, &chosen, task, out),
    };
    RUNNING.store(false, Ordering::SeqCst);
    ok
}

/// The tools `allowed` names, copied from the registry's array (NULL when
/// none or without memory: then the sub-agent has no tools).
fn tool_subset(allowed: &dyn Fn(&[u8]) -> bool) -> *mut cJSON {
    let all = get_agent_tools();
    let mut array: *mut cJSON = core::ptr::null_mut();
    // SAFETY: the registry's array, read on the thread that runs the tool
    // (under the tool lock: nobody changes it), NULL or live; cJSON
    // constructors and copies of its live elements, every result
    // NULL-checked, the new array freed on failure.
    unsafe {
        for t in json::children(all) {
            let name = crate::runtime::tools::function_name(t).map_or(&b""[..], CStr::to_bytes);
            if !allowed(name) {
                continue;
            }
            if array.is_null() {
                array = cJSON_CreateArray();
                if array.is_null() {
                    return array;
                }
            }
            let copy = cJSON_Duplicate(t, 1);
            if copy.is_null() || json::add_to_array(array, copy).is_err() {
                cJSON_Delete(array);
                return core::ptr::null_mut();
            }
        }
    }
    array
}

/// The sub-agent's own context: the profile's system prompt, then the task.
fn context_for(system: &[u8], task: &[u8]) -> Option<Context_t> {
    let ctx = agent_context_create();
    if ctx.is_null() {
        return None;
    }
    let mut text = TextBuf::new();
    text.push(task).push(b"\0");
    // SAFETY: `ctx` is the new live context; its array's first message is
    // the system prompt (context_create made it), replaced by the
    // profile's; the task goes in as a user message (copied).
    let ok = unsafe {
        let array = (*ctx).message;
        let first = if array.is_null() {
            core::ptr::null_mut()
        } else {
            (*array).child
        };
        let replaced = !first.is_null() && {
            cJSON_Delete(cJSON_DetachItemFromObjectCaseSensitive(
                first,
                c"content".as_ptr(),
            ));
            let prompt = cJSON_CreateString(system.as_ptr() as *const c_char);
            json::add_to_object(first, c"content", prompt).is_ok()
        };
        let msg = messages_create(1);
        let added = replaced
            && !text.oom
            && !msg.is_null()
            && messages_append(msg, TYPE_TEXT, text.bytes.as_ptr() as *const c_char) == rt_eok()
            && (*ctx)
                .append_user_message
                .is_some_and(|f| f(ctx, msg) == rt_eok());
        messages_destroy(msg);
        added
    };
    if !ok {
        // SAFETY: made above, not shared.
        unsafe { agent_context_destroy(ctx) };
        return None;
    }
    Some(ctx)
}

/// No streaming: the sub-agent's text is its caller's tool result.
static QUIET: StreamHooks = StreamHooks {
    on_reasoning: None,
    on_tool_call: None,
    on_context: None,
    on_tool_result: None,
};

/// The sub-agent's turn ends when its tool's timeout passes.
struct UntilTimeout;

impl TurnEvents for UntilTimeout {
    fn stopping(&self) -> bool {
        #[cfg(feature = "tool-options")]
        return crate::abilities::tool_options::left_ms() == Some(0);
        #[cfg(not(feature = "tool-options"))]
        false
    }
}

fn run_profile(name: &[u8], chosen: &Chosen, task: &[u8], out: &mut TextBuf) -> bool {
    let allowed = |tool: &[u8]| {
        profiles::tool_names(text_of(&chosen.tools)).any(|t| t == tool) && !is_profile(tool)
    };
    let tools = tool_subset(&allowed);
    let Some(ctx) = context_for(&chosen.system, task) else {
        // SAFETY: NULL or the copy made above, owned here.
        unsafe { cJSON_Delete(tools) };
        out.push_str("error: no memory on the device for the sub-agent");
        return false;
    };
    #[cfg(feature = "tool-options")]
    let request_timeout_ms = crate::abilities::tool_options::left_ms();
    #[cfg(not(feature = "tool-options"))]
    let request_timeout_ms = None;
    let endpoint = Endpoint {
        url: cstr(&chosen.url),
        api_key: cstr(&chosen.key),
        model: cstr(&chosen.model),
        request_timeout_ms,
    };
    let max_tokens = board().max_tokens.clamp(1, c_int::MAX as isize) as c_int;
    let settings = TurnSettings {
        max_rounds: board().max_tool_rounds.max(1) as usize,
        mode: ToolMode::Native,
    };
    crate::log_i!("sub-agent ", name, ": started");
    let ok = {
        // SAFETY: `ctx` is the live context made above, used by this
        // thread only until it is destroyed below.
        let mut conversation = unsafe { LoopConversation::new(ctx) };
        let mut model = ModelChat::with_own(&QUIET, max_tokens, &endpoint, tools);
        let mut calls = LoopTools::nested(&QUIET, &allowed);
        match turn::run(
            settings,
            &mut conversation,
            &mut model,
            &mut calls,
            &UntilTimeout,
        ) {
            Ok(Reply::Model(answer)) => {
                out.push(answer.text());
                true
            }
            Ok(Reply::Tools) => {
                out.push(calls.direct_text());
                true
            }
            Err(why) => {
                out.push_str("error: the sub-agent \"")
                    .push(name)
                    .push_str("\" gave no answer: ");
                match why {
                    TurnError::Stopping => out.push_str("its time ran out"),
                    TurnError::Request(e) => out
                        .push_str("its request failed: ")
                        .push(e.as_str().as_bytes()),
                    TurnError::EmptyAnswer => out.push_str("its answer was empty"),
                    TurnError::CallsNotRecorded | TurnError::ResultNotRecorded => {
                        out.push_str("out of memory")
                    }
                    TurnError::RoundLimit(n) => out
                        .push_str("it still called tools after ")
                        .push_num(n)
                        .push_str(" rounds"),
                };
                false
            }
        }
    };
    // SAFETY: the sub-agent's own context and tools copy, not used again.
    unsafe {
        agent_context_destroy(ctx);
        cJSON_Delete(tools);
    }
    crate::log_i!(
        "sub-agent ",
        name,
        if ok { ": answered" } else { ": failed" }
    );
    ok
}

/// The sub-agents' hooks: their tools, and their state forgotten with the
/// agent.
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    register_tools: Some(register_tools),
    native_tool: Some(native_tool),
    forget: Some(forget),
    ..crate::runtime::ability::Ability::NONE
};
