//! The session's memory, as in the package: `struct webclient_session`
//! (here with the connection and the abort slot), its `struct
//! webclient_header` and the `header_sz` header buffer, each a heap block
//! of its own; how a `struct webclient_session *` is turned back into them;
//! and the package's `webclient_clean`.

use super::conn::{AbortSlot, Conn};
use crate::host::heap;
use crate::rtt::webclient::webclient_session;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void};

/// The package's `struct webclient_header`: a heap block of its own.
pub(super) struct Header {
    /// `size` bytes from `rt_calloc`.
    pub(super) buffer: *mut u8,
    /// As in the package: may run past `size` after a refused
    /// `webclient_header_fields_add` (the package counts the cut line in).
    pub(super) length: usize,
    pub(super) size: usize,
}

/// The package's `struct webclient_session` fields, plus the connection.
pub(super) struct Inner {
    pub(super) header: *mut Header,
    /// The package's `socket` (>= 0 exactly when this is Some).
    pub(super) conn: Option<Conn>,
    pub(super) resp_status: c_int,
    /// `rt_malloc`ed C strings, set by the connect, freed by clean/close.
    pub(super) host: *mut c_char,
    pub(super) req_url: *mut c_char,
    pub(super) chunk_sz: c_int,
    pub(super) chunk_offset: c_int,
    pub(super) content_length: c_int,
    pub(super) content_remainder: usize,
    /// The socket layer's `errno` after the last recv/send (lwIP's values).
    pub(super) errno: c_int,
}

/// What a `struct webclient_session *` of the host port points to.
pub(super) struct HostSession {
    pub(super) abort: AbortSlot,
    pub(super) inner: UnsafeCell<Inner>,
}

/// The session's two halves: the abort slot (shared) and the state only the
/// owning thread uses.
pub(super) fn parts<'a>(session: *mut webclient_session) -> Option<(&'a AbortSlot, &'a mut Inner)> {
    if session.is_null() {
        return None;
    }
    // SAFETY: a non-NULL session is live and only its owning thread calls
    // the webclient_* functions on it (the package's contract). Other
    // threads reach it only through `rt_host_webclient_abort`, which uses
    // just `abort`; `inner` sits in an UnsafeCell.
    unsafe {
        let s = &*(session as *const HostSession);
        Some((&s.abort, &mut *s.inner.get()))
    }
}

impl Inner {
    pub(super) fn hdr(&mut self) -> &mut Header {
        // SAFETY: allocated at creation, freed only by webclient_close.
        unsafe { &mut *self.header }
    }

    /// The whole header buffer.
    pub(super) fn buf(&mut self) -> &mut [u8] {
        let h = self.hdr();
        // SAFETY: `size` bytes from rt_calloc, owned by the session.
        unsafe { core::slice::from_raw_parts_mut(h.buffer, h.size) }
    }

    /// The package's `webclient_clean`.
    pub(super) fn clean(&mut self, slot: &AbortSlot) {
        self.close_socket(slot);
        // SAFETY: `host` is NULL or the connection's rt_malloc block, owned by
        // the session and reset to NULL right after, so freed once.
        unsafe { heap::rt_free(self.host as *mut c_void) };
        self.host = core::ptr::null_mut();
        // SAFETY: `req_url` is NULL or the connection's rt_malloc block, owned
        // by the session and reset to NULL right after, so freed once.
        unsafe { heap::rt_free(self.req_url as *mut c_void) };
        self.req_url = core::ptr::null_mut();
        self.content_length = -1;
    }
}
