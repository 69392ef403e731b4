//! `MessageHub.h`, message half: `Messages_t` arrays of typed strings.
//!
//! Ownership: a `Messages_t`, its item array and every content string live on
//! the RT-Thread heap; `messages_destroy` frees all three. C code that frees
//! them piecewise with `rt_free` (as code written for the C package may) stays
//! correct.

use crate::rtt::{rt_eok, rt_err_t, rt_error, rt_free, rt_malloc, rt_realloc, rt_size_t};
use core::ffi::{c_char, c_int, c_void};
use core::mem::size_of;
use core::ptr;

/// The storage of a C enum on this target: arm-none-eabi-gcc uses
/// `-fshort-enums` by default (RT-Thread's ARM BSPs keep it) and rustc's
/// bare-metal ARM targets agree, so an enum like `MessageType` is one byte
/// there and an `int` elsewhere. The probe below keeps this honest.
#[cfg(all(target_arch = "arm", target_os = "none"))]
pub type c_enum = u8;
#[cfg(not(all(target_arch = "arm", target_os = "none")))]
pub type c_enum = c_int;
#[allow(dead_code)]
#[repr(C)]
enum CEnumProbe {
    A = 0,
    B = 4,
}
const _: () = assert!(size_of::<c_enum>() == size_of::<CEnumProbe>());

/// `enum MessageType`.
pub type MessageType = c_enum;
pub const TYPE_TEXT: MessageType = 0;
pub const TYPE_AUDIO: MessageType = 1;
pub const TYPE_IMAGE: MessageType = 2;
pub const TYPE_VIDEO: MessageType = 3;
pub const TYPE_NULL: MessageType = 4;

/// How many items `messages_append` adds when the array is full.
pub const MESSAGES_GROWTH: c_int = 5;

#[repr(C)]
pub struct MessageItem {
    pub message_type: MessageType,
    pub content: *mut c_char,
}
pub type MessageItem_t = *mut MessageItem;

#[repr(C)]
pub struct Messages {
    pub message_ptr: MessageItem_t,
    pub max_size: c_int,
    pub current_size: c_int,
}
pub type Messages_t = *mut Messages;

fn items_bytes(count: c_int) -> Option<rt_size_t> {
    if count < 0 {
        return None;
    }
    (count as usize).checked_mul(size_of::<MessageItem>())
}

/// Create an empty message array with room for `max_size` items (0: no item
/// array until the first append).
///
/// Returns a new `Messages_t` owned by the caller (free it with
/// `messages_destroy`), or `RT_NULL` when `max_size` is negative or the heap
/// is exhausted; nothing is leaked on failure.
pub fn messages_create(max_size: c_int) -> Messages_t {
    let Some(bytes) = items_bytes(max_size) else {
        return ptr::null_mut();
    };
    // SAFETY: fresh allocations, NULL-checked, fully initialised before the
    // pointer escapes.
    unsafe {
        let m = rt_malloc(size_of::<Messages>()) as Messages_t;
        if m.is_null() {
            return ptr::null_mut();
        }
        let mut items: MessageItem_t = ptr::null_mut();
        if bytes > 0 {
            items = rt_malloc(bytes) as MessageItem_t;
            if items.is_null() {
                rt_free(m as *mut c_void);
                return ptr::null_mut();
            }
            ptr::write_bytes(items as *mut u8, 0, bytes);
        }
        m.write(Messages {
            message_ptr: items,
            max_size,
            current_size: 0,
        });
        m
    }
}

/// Append a copy of `content` with its type. Grows the item array by 5 when
/// it is full.
///
/// `content` stays owned by the caller. Returns `RT_EOK`; or `RT_ERROR`
/// (positive) for a NULL argument, a corrupted array or no memory, in which
/// case `messages` is unchanged.
pub unsafe fn messages_append(
    messages: Messages_t,
    message_type: MessageType,
    content: *const c_char,
) -> rt_err_t {
    if messages.is_null() || content.is_null() {
        return rt_error();
    }
    if is_static(messages) {
        return rt_error();
    }
    // SAFETY: `messages` is a live array from messages_create (caller's
    // contract); `content` is NUL-terminated. The copy is made before the
    // array grows so that either failure leaves the array as it was.
    unsafe {
        let m = &mut *messages;
        if m.current_size < 0 || m.max_size < 0 || m.current_size > m.max_size {
            return rt_error();
        }
        let copy = crate::rtt::strdup::rt_strdup_cstr(core::ffi::CStr::from_ptr(content));
        if copy.is_null() {
            return rt_error();
        }
        if m.current_size == m.max_size {
            let grown = m.max_size.checked_add(MESSAGES_GROWTH);
            let bytes = grown.and_then(items_bytes);
            let (Some(grown), Some(bytes)) = (grown, bytes) else {
                rt_free(copy as *mut c_void);
                return rt_error();
            };
            let items = rt_realloc(m.message_ptr as *mut c_void, bytes) as MessageItem_t;
            if items.is_null() {
                rt_free(copy as *mut c_void);
                return rt_error();
            }
            m.message_ptr = items;
            m.max_size = grown;
        }
        m.message_ptr
            .add(m.current_size as usize)
            .write(MessageItem {
                message_type,
                content: copy,
            });
        m.current_size += 1;
        rt_eok()
    }
}

/// A read-only value that may sit in a `static`: never written by anyone.
#[repr(transparent)]
struct ReadOnly<T>(T);

// SAFETY: nothing ever writes through the pointers inside (the functions
// below refuse to change the out-of-memory reply), so sharing is reading.
unsafe impl<T> Sync for ReadOnly<T> {}

static OUT_OF_MEMORY_ITEM: ReadOnly<MessageItem> = ReadOnly(MessageItem {
    message_type: TYPE_TEXT,
    content: c"error: out of memory while answering".as_ptr() as *mut c_char,
});
static OUT_OF_MEMORY_REPLY: ReadOnly<Messages> = ReadOnly(Messages {
    message_ptr: &OUT_OF_MEMORY_ITEM.0 as *const MessageItem as *mut MessageItem,
    max_size: 1,
    current_size: 1,
});

/// The reply that needs no memory: a static message set saying "error: out
/// of memory while answering". `messages_destroy` leaves it alone and
/// `messages_append` refuses it, so the library's own channels can be handed
/// it like any reply. (Not for a C channel that frees replies piecewise with
/// `rt_free`, which the ABI allows: it would free a static.)
pub fn out_of_memory_reply() -> Messages_t {
    &OUT_OF_MEMORY_REPLY.0 as *const Messages as Messages_t
}

fn is_static(messages: Messages_t) -> bool {
    ptr::eq(messages, out_of_memory_reply())
}

/// Free every content string, the item array and the struct. NULL-safe, and
/// a no-op for the static out-of-memory reply. `messages` is invalid
/// afterwards.
pub unsafe fn messages_destroy(messages: Messages_t) {
    if messages.is_null() {
        return;
    }
    if is_static(messages) {
        return;
    }
    // SAFETY: `messages` came from messages_create and is not used again by
    // the caller; only the first `current_size` items were ever written.
    unsafe {
        let m = &*messages;
        if !m.message_ptr.is_null() {
            let count = m.current_size.clamp(0, m.max_size.max(0));
            for i in 0..count as usize {
                rt_free((*m.message_ptr.add(i)).content as *mut c_void);
            }
            rt_free(m.message_ptr as *mut c_void);
        }
        rt_free(messages as *mut c_void);
    }
}

fn item_at(messages: Messages_t, idx: c_int) -> Option<&'static MessageItem> {
    if messages.is_null() || idx < 0 {
        return None;
    }
    // SAFETY: `messages` is a live array (caller's contract) and `idx` is
    // checked against the number of written items.
    unsafe {
        let m = &*messages;
        if idx >= m.current_size || idx >= m.max_size || m.message_ptr.is_null() {
            return None;
        }
        Some(&*m.message_ptr.add(idx as usize))
    }
}

/// The type of item `idx`; `TYPE_NULL` for NULL `messages` or an index out of
/// range (negative ones included).
pub unsafe fn messages_get_type_idx(messages: Messages_t, idx: c_int) -> MessageType {
    item_at(messages, idx).map_or(TYPE_NULL, |item| item.message_type)
}

/// The content of item `idx`, still owned by `messages`; `RT_NULL` for NULL
/// `messages` or an index out of range.
pub unsafe fn messages_get_content_idx(messages: Messages_t, idx: c_int) -> *mut c_char {
    item_at(messages, idx).map_or(ptr::null_mut(), |item| item.content)
}

/// The OpenAI content-part type for a message type: `"text"`, `"audio_url"`,
/// `"image_url"`, `"video_url"`; `"unknown"` for any other value. The string
/// is static: never free or modify it.
pub fn get_agent_content_type(message_type: MessageType) -> *mut c_char {
    let s: &'static [u8] = match message_type {
        TYPE_TEXT => b"text\0",
        TYPE_AUDIO => b"audio_url\0",
        TYPE_IMAGE => b"image_url\0",
        TYPE_VIDEO => b"video_url\0",
        _ => b"unknown\0",
    };
    s.as_ptr() as *mut c_char
}

/// A new one-item text message holding a copy of `text`, or NULL without
/// memory.
pub fn text_message(text: &core::ffi::CStr) -> Messages_t {
    let m = messages_create(1);
    if m.is_null() {
        return m;
    }
    // SAFETY: `m` is a fresh message of ours; `text` is NUL-terminated and
    // outlives the call, which copies it.
    let appended = unsafe { messages_append(m, TYPE_TEXT, text.as_ptr()) };
    if appended != rt_eok() {
        // SAFETY: `m` is ours and not shared yet.
        unsafe { messages_destroy(m) };
        return ptr::null_mut();
    }
    m
}

/// What a reply says when there was no memory to make the real one.
pub const OUT_OF_MEMORY_TEXT: &core::ffi::CStr = c"error: out of memory while answering";

/// A new message saying [`OUT_OF_MEMORY_TEXT`], or NULL.
pub fn out_of_memory_message() -> Messages_t {
    text_message(OUT_OF_MEMORY_TEXT)
}

/// `text` as a new one-item message (owned by the caller), or NULL; the
/// out-of-memory text when `text` ran out of memory.
pub fn message_of(mut text: crate::base::text_buf::TextBuf) -> Messages_t {
    if text.oom {
        // No growing of the text here: the fixed text, or NULL (then the
        // spare reply goes out).
        return out_of_memory_message();
    }
    // Keep it a C string: a NUL inside the answer would cut it anyway.
    text.bytes.retain(|&b| b != 0);
    if crate::base::fallible::push(&mut text.bytes, 0).is_err() {
        return ptr::null_mut();
    }
    match core::ffi::CStr::from_bytes_with_nul(&text.bytes) {
        Ok(text) => text_message(text),
        Err(_) => ptr::null_mut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_out_of_memory_reply_is_never_freed_or_changed() {
        let reply = out_of_memory_reply();
        // SAFETY: the static reply, a valid message set; the text is a
        // static C string.
        unsafe {
            assert_eq!(
                core::ffi::CStr::from_ptr(messages_get_content_idx(reply, 0)),
                c"error: out of memory while answering"
            );
            assert_eq!(messages_get_type_idx(reply, 0), TYPE_TEXT);
            assert_eq!(
                messages_append(reply, TYPE_TEXT, c"more".as_ptr()),
                rt_error()
            );
            messages_destroy(reply); // a no-op, or the next line reads freed memory
            assert!(!messages_get_content_idx(reply, 0).is_null());
        }
    }
}
