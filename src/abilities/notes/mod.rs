//! Notes on the board's file system (`PKG_AGENT_NOTES`): the tools
//! `remember(key, text)`, `recall(query)` and `forget(key)` the model calls,
//! and the conversation's summary note (`PKG_AGENT_SUMMARY`), kept in one
//! bounded file (`PKG_AGENT_NOTES_FILE`, at most `PKG_AGENT_NOTES_MAX`
//! bytes; the format is `crate::wire::notes`).
//!
//! Nothing is cached: each call reads the file, changes it and writes it
//! whole to a temporary file that is then renamed over it (the glue's
//! `agent_glue_state_write`), so a power cut leaves the old file or the
//! new one. A file that is not a notes file, or was damaged, is renamed to
//! `<file>.bad` with a log line, and a fresh one is started.

use crate::base::text_buf::TextBuf;
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::rtt::rt_eok;
use crate::rtt::sleep_lock::SleepLock;
use crate::runtime::kept_file::{self, Failed};
use crate::wire::notes::{self, Notes, Refused};
use alloc::vec::Vec;
use core::ffi::CStr;

use crate::runtime::tools::{AgentToolNode_t, Native};

use crate::rtt::glue::{agent_glue_notes_file, agent_glue_notes_max};

/// One reader or writer of the file at a time (the loop's tools, the
/// summary after a reply, the MCP server's tool calls).
static FILE_LOCK: SleepLock = SleepLock::new();

/// The notes file's path, if notes are kept.
fn path() -> Option<&'static CStr> {
    // SAFETY: the glue returns a static NUL-terminated string (or one from
    // the environment, which lives as long as the process).
    unsafe { kept_file::path(agent_glue_notes_file()) }
}

/// The file's bound in bytes.
fn max_bytes() -> usize {
    // SAFETY: a plain getter of the glue.
    (unsafe { agent_glue_notes_max() }).clamp(128, 1 << 20) as usize
}

fn load(path: &CStr) -> Result<Notes, Failed> {
    kept_file::load(
        path,
        notes::HEAD,
        max_bytes(),
        "PKG_AGENT_NOTES_MAX",
        "notes: ",
    )
}

fn store(path: &CStr, notes: &Notes) -> Result<(), Failed> {
    kept_file::store(path, notes::HEAD, notes, "notes: ")
}

/// Read the file, change it with `f`, write it back when `f` says so.
fn change<R>(f: impl FnOnce(&mut Notes) -> (R, bool)) -> Result<R, Failed> {
    let path = path().ok_or(Failed::NotWritten)?;
    let _held = FILE_LOCK.lock();
    let mut notes = load(path)?;
    let (result, changed) = f(&mut notes);
    if changed {
        store(path, &notes)?;
    }
    Ok(result)
}

fn failed_text(text: &mut TextBuf, failed: Failed) {
    text.push_str(match failed {
        Failed::NoMemory => "error: no memory on the device for the notes",
        Failed::NotWritten => "error: the notes file could not be written",
    });
}

/// A string argument of a tool call (`None`: missing or not a string).
unsafe fn arg<'a>(args: *mut cJSON, name: &CStr) -> Option<&'a [u8]> {
    // SAFETY: `args` is NULL or the call's live object (the caller's
    // contract); the string lives as long as it.
    unsafe { json::get_str(args, name) }.map(CStr::to_bytes)
}

/// `remember(key, text)`.
fn remember(key: &[u8], text: &[u8], out: &mut TextBuf) -> bool {
    let max = max_bytes();
    match change(|n| {
        let r = notes::remember(n, key, text, max);
        let ok = r.is_ok();
        (r, ok)
    }) {
        Ok(Ok(removed)) => {
            out.push_str("remembered \"").push(key).push_str("\"");
            if removed > 0 {
                out.push_str("; ")
                    .push_num(removed)
                    .push_str(" oldest note(s) removed for room");
            }
            true
        }
        Ok(Err(Refused::Key)) => {
            out.push_str("error: the key must be 1 to 64 bytes");
            false
        }
        Ok(Err(Refused::TooLong)) => {
            out.push_str("error: the note is too long (the notes file holds at most ")
                .push_num(max)
                .push_str(" bytes)");
            false
        }
        Ok(Err(Refused::NoMemory)) => {
            failed_text(out, Failed::NoMemory);
            false
        }
        Err(failed) => {
            failed_text(out, failed);
            false
        }
    }
}

/// `recall(query)`: the matching notes, newest first, one per line.
fn recall(query: &[u8], out: &mut TextBuf) -> bool {
    let found = change(|n| {
        let mut any = false;
        for note in notes::recall(n, query) {
            if any {
                out.push(b"\n");
            }
            out.push(&note.key).push(b": ").push(&note.text);
            any = true;
        }
        (any, false)
    });
    match found {
        Ok(true) => true,
        Ok(false) => {
            out.push_str("no note matches \"")
                .push(query)
                .push_str("\"");
            true
        }
        Err(failed) => {
            failed_text(out, failed);
            false
        }
    }
}

/// `forget(key)`.
fn forget(key: &[u8], out: &mut TextBuf) -> bool {
    match change(|n| {
        let gone = notes::forget(n, key);
        (gone, gone)
    }) {
        Ok(true) => {
            out.push_str("forgot \"").push(key).push_str("\"");
            true
        }
        Ok(false) => {
            out.push_str("error: there is no note named \"")
                .push(key)
                .push_str("\"");
            false
        }
        Err(failed) => {
            failed_text(out, failed);
            false
        }
    }
}

/// Which of the three tools a call is.
#[derive(Clone, Copy)]
enum Which {
    Remember,
    Recall,
    Forget,
}

/// One of the three tools with `args`: its answer into `out`; whether it
/// succeeded.
///
/// # Safety
/// `args` NULL or a live object.
unsafe fn run(which: Which, args: *mut cJSON, out: &mut TextBuf) -> bool {
    // SAFETY: as this function's contract says.
    let (key, text, query) =
        unsafe { (arg(args, c"key"), arg(args, c"text"), arg(args, c"query")) };
    match (which, key, text) {
        (Which::Remember, Some(key), Some(text)) => remember(key, text, out),
        (Which::Remember, _, _) => {
            out.push_str("error: remember needs \"key\" and \"text\" (strings)");
            false
        }
        (Which::Recall, _, _) => recall(query.unwrap_or(b""), out),
        (Which::Forget, Some(key), _) => forget(key, out),
        (Which::Forget, None, _) => {
            out.push_str("error: forget needs \"key\" (a string)");
            false
        }
    }
}

/// The notes' tools: the one behind `node`, when it is one of theirs.
///
/// # Safety
/// `node` is a live node of the registry, under the tool lock.
unsafe fn native_tool(node: AgentToolNode_t) -> Option<&'static Native> {
    // SAFETY: as this function's contract says.
    if !unsafe { crate::runtime::tools::is_native(node) } {
        return None;
    }
    // SAFETY: as above.
    let name = unsafe { crate::runtime::tools::function_name((*node).tool_obj) }?;
    match name.to_bytes() {
        b"remember" => Some(&REMEMBER_TOOL),
        b"recall" => Some(&RECALL_TOOL),
        b"forget" => Some(&FORGET_TOOL),
        _ => None,
    }
}

static REMEMBER_TOOL: Native = Native {
    run: remember_tool,
    no_memory: crate::abi::messages::OUT_OF_MEMORY_TEXT,
};
static RECALL_TOOL: Native = Native {
    run: recall_tool,
    no_memory: crate::abi::messages::OUT_OF_MEMORY_TEXT,
};
static FORGET_TOOL: Native = Native {
    run: forget_tool,
    no_memory: crate::abi::messages::OUT_OF_MEMORY_TEXT,
};

/// # Safety
/// `args` NULL or a live object (the three tools' contract, [`Native::run`]'s).
unsafe fn remember_tool(_: AgentToolNode_t, args: *mut cJSON, out: &mut TextBuf) -> bool {
    // SAFETY: forwarded (this function's contract).
    unsafe { run(Which::Remember, args, out) }
}

/// # Safety
/// As [`remember_tool`].
unsafe fn recall_tool(_: AgentToolNode_t, args: *mut cJSON, out: &mut TextBuf) -> bool {
    // SAFETY: forwarded (this function's contract).
    unsafe { run(Which::Recall, args, out) }
}

/// # Safety
/// As [`remember_tool`].
unsafe fn forget_tool(_: AgentToolNode_t, args: *mut cJSON, out: &mut TextBuf) -> bool {
    // SAFETY: forwarded (this function's contract).
    unsafe { run(Which::Forget, args, out) }
}

const REMEMBER: &CStr = c"{\"type\":\"function\",\"function\":{\"name\":\"remember\",\"description\":\"Keep a note across reboots under a short key (the same key replaces it). When the notes are full, the oldest go.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\",\"description\":\"a short name, at most 64 bytes\"},\"text\":{\"type\":\"string\"}},\"required\":[\"key\",\"text\"]}}}";
const RECALL: &CStr = c"{\"type\":\"function\",\"function\":{\"name\":\"recall\",\"description\":\"Find the notes whose key or text contains the query (empty: all), newest first.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}},\"required\":[\"query\"]}}}";
const FORGET: &CStr = c"{\"type\":\"function\",\"function\":{\"name\":\"forget\",\"description\":\"Remove the note with this key.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"}},\"required\":[\"key\"]}}}";

/// Register the three tools (at the agent's start, after the board's own),
/// when a notes file is set. The file is checked once here, so a damaged
/// one is set aside (and logged) at start.
pub fn register_tools() {
    let Some(path) = path() else {
        return;
    };
    {
        let _held = FILE_LOCK.lock();
        if load(path) == Err(Failed::NoMemory) {
            crate::log_w!("notes: no memory to read ", path.to_bytes());
        }
    }
    for definition in [REMEMBER, RECALL, FORGET] {
        // SAFETY: a NUL-terminated constant; the tree (or NULL) is handed
        // to append_native, which takes it also on failure.
        let rc = unsafe { crate::runtime::tools::append_native(cJSON_Parse(definition.as_ptr())) };
        if rc != rt_eok() {
            crate::log_w!("notes: a tool could not be registered (no memory)");
        }
    }
}

/// The summary note kept in the file (empty: none), for the start.
pub fn saved_summary() -> Vec<u8> {
    change(|n| (core::mem::take(&mut n.summary), false)).unwrap_or_default()
}

/// Keep `summary` as the file's summary note (the oldest notes give way).
pub fn save_summary(summary: &[u8]) {
    let max = max_bytes();
    let _ = change(|n| {
        let ok = notes::set_summary(n, summary, max).is_ok();
        ((), ok)
    });
}

/// The notes' hooks: their tools.
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    register_tools: Some(register_tools),
    native_tool: Some(native_tool),
    ..crate::runtime::ability::Ability::NONE
};
