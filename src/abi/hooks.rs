//! The text callbacks of the C API (`chat()`'s `on_reasoning`,
//! `on_context`, `on_tool_call`, and the channels' stream hooks): each is
//! handed a NUL-terminated text it only borrows for the call.

use core::ffi::c_char;

/// A text callback; `None` (NULL) for none.
pub type TextHook = Option<unsafe extern "C" fn(text: *const c_char)>;
