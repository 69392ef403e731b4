//! Memory that survives trimming (`PKG_AGENT_SUMMARY`, cargo feature
//! `memory-summary`).
//!
//! When trimming the context to `PKG_AGENT_MESSAGE_TRIM` messages would drop
//! turns, the loop first asks the model to fold them (and the note it made
//! before) into a short summary, at most `PKG_AGENT_SUMMARY_MAX_LEN` bytes.
//! The summary is kept as one `system` message right after the system prompt,
//! starting with [`NOTE_HEAD`], and replaces the previous one; the trim then
//! keeps it. The request runs after the reply was delivered, so the user
//! never waits for it; it has the normal request deadline. If it fails (or
//! there is no memory for it), trimming proceeds as without the option and
//! the old note stays.

use crate::base::text_buf::TextBuf;
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::net::error::ErrorText;
use crate::runtime::chat::{chat_response_free, chat_with_error, ChatResponse};
use crate::runtime::context::Context_t;
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, CStr};

/// How a note starts: how the loop finds its own note again.
pub const NOTE_HEAD: &str = "Notes from earlier in this conversation: ";
/// At most this much of the dropped turns is sent to be summarized (the
/// newest part is kept: the note so far comes first and is never cut).
const TRANSCRIPT_MAX: usize = 6144;

use crate::rtt::glue::agent_glue_summary_max_len;

/// Summaries of at most `max_len` bytes (`Some(0)`: off; `None`: the
/// board's PKG_AGENT_SUMMARY / PKG_AGENT_SUMMARY_MAX_LEN).
pub fn set_summary_max_len(max_len: Option<usize>) {
    crate::runtime::settings::change(|s| s.summary_max_len = max_len);
}

/// Is the option on (a non-zero limit)?
pub fn enabled() -> bool {
    max_len() > 0
}

fn max_len() -> usize {
    crate::runtime::settings::snapshot()
        .summary_max_len
        // SAFETY: a plain getter of the glue.
        .unwrap_or_else(|| unsafe { agent_glue_summary_max_len() }.max(0) as usize)
}

/// The role of a message; "" when there is none.
///
/// # Safety
/// `msg` is NULL or live for `'a`.
unsafe fn role<'a>(msg: *const cJSON) -> &'a [u8] {
    // SAFETY: as this function's contract.
    unsafe { json::get_str(msg, c"role") }.map_or(b"", CStr::to_bytes)
}

/// # Safety
/// `msg` is NULL or live for `'a`.
unsafe fn content<'a>(msg: *const cJSON) -> &'a [u8] {
    // SAFETY: as this function's contract.
    unsafe { json::get_str(msg, c"content") }.map_or(b"", CStr::to_bytes)
}

/// Is `msg` the loop's note?
///
/// # Safety
/// `msg` is NULL or live.
unsafe fn is_note(msg: *const cJSON) -> bool {
    // SAFETY: as this function's contract.
    unsafe { role(msg) == b"system" && content(msg).starts_with(NOTE_HEAD.as_bytes()) }
}

/// Where the history starts (after the system prompt and the note), and the
/// note if there is one.
///
/// # Safety
/// `array` is the context's live array.
unsafe fn head(array: *mut cJSON) -> (c_int, *mut cJSON) {
    // SAFETY: `array` is live; its elements are read only.
    unsafe {
        let first = (*array).child;
        let mut start = 0;
        let mut at = first;
        if !at.is_null() && role(at) == b"system" && !is_note(at) {
            start = 1;
            at = (*at).next;
        }
        if !at.is_null() && is_note(at) {
            return (start + 1, at);
        }
        (start, core::ptr::null_mut())
    }
}

/// How many history messages (from `start`) a trim to `keep` drops: the cut
/// moves past tool results whose assistant message would go, as the
/// context's own `trim_context` does.
///
/// # Safety
/// `array` is live.
unsafe fn dropped(array: *mut cJSON, start: c_int, keep: c_int) -> c_int {
    // SAFETY: `array` is live.
    let history = unsafe { cJSON_GetArraySize(array) } - start;
    if history <= keep {
        return 0;
    }
    let mut n = history - keep;
    // SAFETY: indices below the array's size; elements read only.
    while n < history && unsafe { role(cJSON_GetArrayItem(array, start + n)) } == b"tool" {
        n += 1;
    }
    n
}

/// The dropped turns as plain text for the summary request.
///
/// # Safety
/// `array` is live, `note` NULL or one of its elements.
unsafe fn transcript(array: *mut cJSON, note: *mut cJSON, start: c_int, n: c_int) -> TextBuf {
    let mut t = TextBuf::new();
    if !note.is_null() {
        t.push(b"Earlier notes: ");
        // SAFETY: `note` is a live element.
        t.push(
            unsafe { content(note) }
                .get(NOTE_HEAD.len()..)
                .unwrap_or_default(),
        );
        t.push(b"\n\n");
    }
    let notes_end = t.bytes.len();
    for i in start..start + n {
        // SAFETY: an index below the array's size.
        let m = unsafe { cJSON_GetArrayItem(array, i) };
        // SAFETY: `m` is a live element.
        let (r, c) = unsafe { (role(m), content(m)) };
        t.push(r);
        t.push(b": ");
        t.push(c);
        // SAFETY: `m` is live; read only.
        let calls = unsafe { json::get(m, c"tool_calls") };
        // SAFETY: NULL or a live array of `m`.
        for call in unsafe { json::children(calls) } {
            // SAFETY: live members of the call.
            unsafe {
                let f = json::get(call, c"function");
                t.push(b" [called ");
                t.push(json::get_str(f, c"name").map_or(b"?", CStr::to_bytes));
                t.push(b" ");
                t.push(json::get_str(f, c"arguments").map_or(b"", CStr::to_bytes));
                t.push(b"]");
            }
        }
        t.push(b"\n");
    }
    // Too long: keep the notes and the newest turns.
    if t.bytes.len() > TRANSCRIPT_MAX && !t.oom {
        let cut = t.bytes.len() - (TRANSCRIPT_MAX - notes_end.min(TRANSCRIPT_MAX));
        let cut = cut.max(notes_end);
        // Start at a character boundary.
        let mut at = cut;
        while t.bytes.get(at).is_some_and(|&b| b & 0xC0 == 0x80) {
            at += 1;
        }
        // Drop the bytes between the notes and `at` (`notes_end <= cut <= at
        // <= len`).
        crate::base::text::remove_range(&mut t.bytes, notes_end, at);
    }
    t
}

/// A `{"role": role, "content": text}` message (text NUL-terminated).
///
/// # Safety
/// `text` ends with a NUL.
unsafe fn message(role: &CStr, text: &[u8]) -> *mut cJSON {
    // SAFETY: fresh objects; strings NUL-terminated; deleted on failure.
    unsafe {
        let m = cJSON_CreateObject();
        if m.is_null()
            || json::add_to_object(m, c"role", cJSON_CreateString(role.as_ptr())).is_err()
            || json::add_to_object(
                m,
                c"content",
                cJSON_CreateString(text.as_ptr() as *const c_char),
            )
            .is_err()
        {
            if !m.is_null() {
                cJSON_Delete(m);
            }
            return core::ptr::null_mut();
        }
        m
    }
}

/// Ask the model for the summary; its text, at most `limit` bytes, or None.
///
/// # Safety
/// On the loop thread.
unsafe fn summarize(transcript: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut prompt = TextBuf::new();
    let mut digits = [0u8; 20];
    prompt.push(b"You keep the memory of a conversation between a user and an assistant on a device. Fold the turns below (and any earlier notes) into one short note of at most ");
    prompt.push(crate::base::text::decimal(limit as u64, &mut digits));
    prompt.push(b" characters: facts, names, numbers, the user's wishes, decisions, open tasks. Reply with the note only.\0");
    let mut user = TextBuf::new();
    user.push(transcript);
    user.push(b"\0");
    if prompt.oom || user.oom {
        return None;
    }
    // SAFETY: both texts end with a NUL; the array takes the messages over
    // and is deleted below.
    let request = unsafe {
        let array = cJSON_CreateArray();
        let sys = message(c"system", &prompt.bytes);
        let usr = message(c"user", &user.bytes);
        let ok = !array.is_null()
            && json::add_to_array(array, sys).is_ok()
            && json::add_to_array(array, usr).is_ok();
        if !ok {
            if !array.is_null() {
                cJSON_Delete(array);
            }
            return None;
        }
        array
    };
    drop((prompt, user));
    let mut error = ErrorText::new();
    // About four bytes per token, and room for the model to finish.
    let max_tokens = (limit / 2).clamp(64, 4096) as c_int;
    // SAFETY: a live request array, borrowed; no tools; no callbacks.
    let resp = unsafe {
        chat_with_error(
            request,
            core::ptr::null_mut(),
            max_tokens,
            None,
            None,
            None,
            &mut error,
            &mut crate::runtime::chat::LongCalls::default(),
        )
    };
    // SAFETY: the array made above, owned here.
    unsafe { cJSON_Delete(request) };
    if resp.is_null() {
        crate::log_w!(
            "memory: the summary request failed (",
            error.as_str(),
            "); trimming without it"
        );
        return None;
    }
    // SAFETY: a live response, freed below; its text is copied first.
    let text = unsafe {
        let r: &ChatResponse = &*resp;
        let t = if r.context.is_null() {
            &b""[..]
        } else {
            CStr::from_ptr(r.context).to_bytes()
        };
        let t = crate::base::text::utf8_prefix(&t[..t.len().min(limit)]).trim_ascii();
        let copy = crate::base::fallible::copy_of(t.as_bytes()).ok();
        chat_response_free(resp);
        copy
    };
    text.filter(|t| !t.is_empty())
}

/// Before the loop trims `ctx` to `keep` messages: fold what the trim drops
/// into the note, then trim (the note kept). Does nothing when the option is
/// off or nothing would be dropped. Returns whether it trimmed.
///
/// # Safety
/// On the loop thread, with `ctx` its live context.
pub unsafe fn fold_and_trim(ctx: Context_t, keep: c_int) -> bool {
    let limit = max_len();
    // SAFETY: `ctx` is live (this function's contract).
    let array = unsafe { (*ctx).message };
    if limit == 0 || array.is_null() {
        return false;
    }
    // SAFETY: the context's live array.
    let (start, note) = unsafe { head(array) };
    // SAFETY: as above.
    let n = unsafe { dropped(array, start, keep.max(0)) };
    if n == 0 {
        return true;
    }
    // SAFETY: as above; `note` is one of its elements or NULL.
    let t = unsafe { transcript(array, note, start, n) };
    let summary = if t.oom {
        None
    } else {
        // SAFETY: on the loop thread (this function's contract).
        unsafe { summarize(&t.bytes, limit) }
    };
    drop(t);
    let new_note = summary.and_then(|s| {
        let mut text = TextBuf::new();
        text.push(NOTE_HEAD.as_bytes());
        text.push(&s);
        text.push(b"\0");
        // SAFETY: the text ends with a NUL.
        (!text.oom).then(|| unsafe { message(c"system", &text.bytes) })
    });
    // Drop the old turns (after the note, which stays until replaced).
    for _ in 0..n {
        // SAFETY: `start + n` is within the array (counted above).
        unsafe { cJSON_DeleteItemFromArray(array, start) };
    }
    let Some(new_note) = new_note.filter(|m| !m.is_null()) else {
        return true;
    };
    // SAFETY: the live array; `new_note` is detached and taken over.
    unsafe {
        if note.is_null() {
            json::insert_at(array, start, new_note);
        } else {
            // Replace the old note in place.
            let at = start - 1;
            cJSON_DeleteItemFromArray(array, at);
            json::insert_at(array, at, new_note);
        }
    }
    crate::log_i!("memory: ", n as u32, " messages folded into the note");
    #[cfg(feature = "notes")]
    // SAFETY: `new_note` is now a live element of the array.
    crate::abilities::notes::save_summary(
        unsafe { content(new_note) }
            .get(NOTE_HEAD.len()..)
            .unwrap_or_default(),
    );
    true
}

/// Put the summary note kept in the notes file (`PKG_AGENT_NOTES`) back
/// after the system prompt of a new context (nothing when there is none,
/// the option is off, or there is no memory for it).
///
/// # Safety
/// `ctx` is a live context of the calling thread.
#[cfg(feature = "notes")]
pub unsafe fn restore_note(ctx: Context_t) {
    if !enabled() {
        return;
    }
    let saved = crate::abilities::notes::saved_summary();
    if saved.is_empty() {
        return;
    }
    let mut text = TextBuf::new();
    text.push(NOTE_HEAD.as_bytes()).push(&saved).push(b"\0");
    drop(saved);
    if text.oom {
        return;
    }
    // SAFETY: `ctx` is live (contract); the text ends with a NUL.
    unsafe {
        let array = (*ctx).message;
        if array.is_null() {
            return;
        }
        let note = message(c"system", &text.bytes);
        if note.is_null() {
            return;
        }
        let (start, old) = head(array);
        if !old.is_null() {
            cJSON_Delete(note);
            return;
        }
        json::insert_at(array, start, note);
    }
    crate::log_i!("memory: the summary note is back from the notes file");
}

/// The summary's hooks: the kept summary note back into a new
/// conversation (with the notes), and the trim after the reply while the
/// summary is on.
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    #[cfg(feature = "notes")]
    context_made: Some(restore_note),
    trim_after_reply: Some(trim_now),
    ..crate::runtime::ability::Ability::NONE
};

fn trim_now() -> Option<crate::runtime::ability::Trim> {
    enabled().then_some(fold_and_trim_hook as crate::runtime::ability::Trim)
}

/// [`fold_and_trim`] as the hook (its result, whether a summary was made,
/// is the log's business).
unsafe fn fold_and_trim_hook(ctx: Context_t, keep: c_int) {
    // SAFETY: the hook's contract is this function's.
    unsafe { fold_and_trim(ctx, keep) };
}
