//! The Rust test binaries link the library, its C half and Debian's cJSON.
use rtt_agent::abi::messages::*;
use std::ffi::CStr;

#[test]
fn messages_roundtrip_links() {
    let m = messages_create(0);
    assert!(!m.is_null());
    // SAFETY: `m` is a live list made above; the text is a static C string.
    let appended = unsafe { messages_append(m, TYPE_TEXT, c"hello".as_ptr()) };
    assert_eq!(appended, 0);
    // SAFETY: index 0 exists, its content is a C string owned by `m`.
    let s = unsafe { CStr::from_ptr(messages_get_content_idx(m, 0)) };
    assert_eq!(s.to_str().unwrap(), "hello");
    // SAFETY: `m` is ours; `s` is not used after this.
    unsafe { messages_destroy(m) };
}
