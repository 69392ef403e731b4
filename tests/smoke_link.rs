//! The Rust test binaries link the library, its C half and Debian's cJSON.
use rtt_agent::ffi::messages::*;
use std::ffi::CStr;

#[test]
fn messages_roundtrip_links() {
    let m = messages_create(0);
    assert!(!m.is_null());
    assert_eq!(messages_append(m, TYPE_TEXT, c"hello".as_ptr()), 0);
    let s = unsafe { CStr::from_ptr(messages_get_content_idx(m, 0)) };
    assert_eq!(s.to_str().unwrap(), "hello");
    messages_destroy(m);
}
