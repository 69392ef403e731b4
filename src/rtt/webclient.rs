//! Declarations of the webclient 2.x package API the chat client uses (on
//! the device the board's webclient package; on the host the port in
//! `src/host/webclient/`).

use core::ffi::{c_char, c_int, c_void};

#[repr(C)]
pub struct webclient_session {
    _private: [u8; 0],
}

/// A webclient session, closed when dropped, on every path.
pub struct Session(core::ptr::NonNull<webclient_session>);

impl Session {
    /// A new session whose header buffer holds `header_size` bytes; `None`
    /// without memory.
    pub fn create(header_size: usize) -> Option<Session> {
        // SAFETY: takes a size only; the result is NULL-checked.
        core::ptr::NonNull::new(unsafe { webclient_session_create(header_size) }).map(Session)
    }

    /// The session, for webclient's functions; valid while `self` lives.
    pub fn raw(&self) -> *mut webclient_session {
        self.0.as_ptr()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: made by webclient_session_create; closed exactly once.
        unsafe { webclient_close(self.0.as_ptr()) };
    }
}

/// `enum WEBCLIENT_STATUS`: the functions return these negated.
pub const WEBCLIENT_OK: c_int = 0;
pub const WEBCLIENT_ERROR: c_int = 1;
pub const WEBCLIENT_TIMEOUT: c_int = 2;
pub const WEBCLIENT_NOMEM: c_int = 3;
pub const WEBCLIENT_NOSOCKET: c_int = 4;
pub const WEBCLIENT_NOBUFFER: c_int = 5;
pub const WEBCLIENT_CONNECT_FAILED: c_int = 6;
pub const WEBCLIENT_DISCONNECT: c_int = 7;
pub const WEBCLIENT_FILE_ERROR: c_int = 8;

extern "C" {
    pub fn webclient_session_create(header_sz: usize) -> *mut webclient_session;
    pub fn webclient_set_timeout(session: *mut webclient_session, millisecond: c_int) -> c_int;
    pub fn webclient_header_fields_add(
        session: *mut webclient_session,
        fmt: *const c_char,
        ...
    ) -> c_int;
    pub fn webclient_header_fields_get(
        session: *mut webclient_session,
        fields: *const c_char,
    ) -> *const c_char;
    pub fn webclient_post(
        session: *mut webclient_session,
        uri: *const c_char,
        post_data: *const c_void,
        data_len: usize,
    ) -> c_int;
    pub fn webclient_write(
        session: *mut webclient_session,
        buffer: *const c_void,
        size: usize,
    ) -> c_int;
    pub fn webclient_handle_response(session: *mut webclient_session) -> c_int;
    pub fn webclient_read(
        session: *mut webclient_session,
        buffer: *mut c_void,
        size: usize,
    ) -> c_int;
    pub fn webclient_resp_status_get(session: *mut webclient_session) -> c_int;
    /// The response's Content-Length, or -1 without one (0 reads as
    /// "unknown" inside webclient_read).
    pub fn webclient_content_length_get(session: *mut webclient_session) -> c_int;
    pub fn webclient_close(session: *mut webclient_session) -> c_int;
}

#[cfg(feature = "multimodal")]
extern "C" {
    /// With `WEBCLIENT_USING_FILE_DOWMLOAD` (`PKG_AGENT_MULTIMODAL_ENABLE`
    /// selects it): GET `uri` into the file `filename`; 0 or a negated
    /// `WEBCLIENT_*` code.
    pub fn webclient_get_file(uri: *const c_char, filename: *const c_char) -> c_int;
}

extern "C" {
    /// The board's TLS glue (`glue/agent_tls.c`): log at the agent's start
    /// what this firmware's HTTPS cannot protect against (a record limit
    /// below 16 KB, no clock, no RNG); nothing without TLS.
    pub fn agent_tls_report();
    /// Drop the TLS session kept for resumption, so the heap is back at
    /// its baseline after the agent's cleanup; nothing without TLS.
    pub fn agent_tls_forget();
}
