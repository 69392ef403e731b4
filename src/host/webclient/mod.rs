//! The webclient 2.x client API (RT-Thread package `webclient` 2.3.0) served
//! over real TCP, and over TLS for `https://` URIs, so that the library's
//! HTTP code paths run on Linux and the simulator reaches real endpoints.
//!
//! It does what the package's `src/webclient.c` 2.3.0 does, quirks
//! included (docs/host-port.md lists them with the tests that pin them):
//! - `webclient_set_timeout` sets the **socket's** receive and send timeout
//!   to `rt_tick_from_millisecond(ms) / 1000` whole seconds, 0 meaning no
//!   timeout at all (lwIP and Linux alike); on a session that is not
//!   connected yet (before `webclient_post`/`webclient_get`) it changes
//!   nothing. Every connection starts with the package's 6 s default.
//! - the socket primitives behave like lwIP's: `recv` returns -1 with
//!   `errno` `EAGAIN` on a timeout, 0 with `ENOTCONN` when the peer closed
//!   (the host also sets the thread's libc `errno`);
//! - `webclient_handle_response` reads the head with the package's
//!   `webclient_read_line`: a timeout returns that -1 (`-WEBCLIENT_ERROR`,
//!   not `-WEBCLIENT_TIMEOUT`), a peer that closes before a head returns the
//!   status so far (0); a head longer than `header_sz` is cut, the rest of
//!   it is left on the socket as if it were body (`-WEBCLIENT_NOMEM` is
//!   unreachable in the package and so here);
//! - `webclient_read` of a close-delimited or Content-Length body loops until
//!   the caller's buffer is full, the body's remainder is read, or a recv
//!   fails; a chunked body is read one recv at a time within the chunk, and
//!   the next chunk's size line is read (blocking) right after the data of a
//!   chunk; a timeout there, the last chunk, or a peer that closes all close
//!   the socket (later reads: 0 after the last chunk, `-WEBCLIENT_DISCONNECT`
//!   otherwise); a peer that closes mid-body is a silent end (0);
//! - `webclient_write` retries a send that timed out until something is
//!   sent; other send errors close the socket;
//! - the request head is built in the session's `header_sz` buffer exactly
//!   as the package builds it (request line spliced in front of the
//!   caller's lines, `Host` (without port), `User-Agent`, `Accept` added
//!   when absent; no `Content-Length` is ever added).
//!
//! Memory: as in the package, the session, its `struct webclient_header`
//! and the `header_sz` header buffer are three heap blocks; a connection
//! adds the host name and the request path (freed by `webclient_close`),
//! and a request briefly allocates a copy of the header lines, of the
//! status line and, for a chunked response, a `header_sz` line buffer.
//! Those are the only heap blocks (the TLS session's aside), and every one
//! is checked, as the package checks its `web_malloc`s: out of memory is an
//! error return (`-WEBCLIENT_NOMEM`, or NULL from
//! `webclient_session_create`) with nothing left allocated, never an abort.
//! Heads are built in the header buffer itself; names are resolved with
//! libc's `getaddrinfo`, whose memory is libc's (as lwIP's netdb uses its
//! own pools), not the accounting heap's. Where the package's code would
//! dereference a failed `rt_malloc` (the first chunk-size line), the host
//! returns `-WEBCLIENT_NOMEM` instead. rustls allocates infallibly inside,
//! so its calls run outside the heap's fault injection (still counted in
//! `used`); the TLS session's own block is the checked allocation where an
//! `https://` connect meets out-of-memory.
//!
//! # Aborting from another thread (host only)
//! [`rt_host_webclient_abort`] shuts the session's socket down, so a
//! `webclient_read`/`webclient_write` blocked on another thread returns
//! `-WEBCLIENT_DISCONNECT` at once, and every later call on that session
//! fails the same way (the abort is sticky: close the session next). An
//! abort that lands while a connect is under way takes effect when that
//! connect attempt ends. The caller must keep the session alive during the
//! call, i.e. serialise it against `webclient_close`.
//!
//! # HTTPS
//! `https://host[:port]/path` (port 443 by default) runs the same requests
//! over TLS (rustls, ring provider) where a board uses the package's
//! mbedTLS option: TLS 1.2 or 1.3, SNI = host, ALPN `http/1.1`. The
//! server's certificate must chain to a root of the system's store
//! (`/etc/ssl/certs` on Debian, package `ca-certificates`;
//! `SSL_CERT_FILE`/`SSL_CERT_DIR` override it) or to one of the PEM
//! certificates in the file named by [`CA_FILE_ENV`]. A failed handshake
//! is `-WEBCLIENT_CONNECT_FAILED` (as the package's mbedTLS connect),
//! logged as one line naming host and port only. The TLS state of a
//! connection comes from the accounting heap while it is open (the
//! package's mbedTLS session does too, with other sizes); the shared client
//! configuration (the root store) is kept out of the heap's `used` count.
//!
//! Header contents carry the API key: nothing here logs or prints them.
//!
//! # Layout
//! - this file: the C API (`webclient_*`, `rt_host_webclient_header_add`,
//!   [`rt_host_webclient_abort`]) and `webclient_get`'s redirects;
//! - `session.rs`: the session's heap blocks and `webclient_clean`;
//! - `conn.rs`: TCP, socket timeouts, lwIP-like recv/send, the connect,
//!   `webclient_write` and the abort slot; `tls.rs`: rustls;
//! - `uri.rs`: `http[s]://` URIs;
//! - `head.rs`: the header buffer, the request head and the response head;
//! - `body.rs`: Content-Length, close-delimited and chunked bodies;
//! - `cstr.rs`: the C library calls the package's parsing relies on.

mod body;
mod conn;
mod cstr;
mod head;
mod session;
mod tls;
mod tls_glue;
mod uri;

use crate::host::ipc::{free_box, try_box};
use crate::host::{heap, thread};
use crate::rtt::webclient::{
    webclient_session, WEBCLIENT_DISCONNECT, WEBCLIENT_ERROR, WEBCLIENT_NOMEM, WEBCLIENT_OK,
};
use conn::AbortSlot;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void};
use cstr::{cstr_bytes, heap_cstr};
use session::{parts, Header, HostSession, Inner};
use std::time::Duration;
pub use tls::set_record_limit;

/// Environment variable naming a PEM file of extra root certificates that
/// `https://` servers may chain to, besides the system's.
pub const CA_FILE_ENV: &str = "RTT_AGENT_CA_FILE";

/// The package's `WEBCLIENT_DEFAULT_TIMEO` (6 s): what every new
/// connection's socket gets.
pub const DEFAULT_TIMEOUT_SECS: u64 = 6;
/// How deep `webclient_get` follows 301/302 redirects (the package recurses
/// without limit; the host stops a redirect loop).
const MAX_REDIRECTS: u32 = 16;

// ---- the C API -------------------------------------------------------------

/// Run `f` on the session unless it was aborted; an abort that lands during
/// `f` turns its result into `-WEBCLIENT_DISCONNECT` (host only).
fn with_session(
    session: *mut webclient_session,
    f: impl FnOnce(&AbortSlot, &mut Inner) -> c_int,
) -> c_int {
    let Some((slot, s)) = parts(session) else {
        return -WEBCLIENT_ERROR;
    };
    if slot.is_aborted() {
        s.close_socket(slot);
        return -WEBCLIENT_DISCONNECT;
    }
    let rc = f(slot, s);
    if slot.is_aborted() {
        s.close_socket(slot);
        return -WEBCLIENT_DISCONNECT;
    }
    rc
}

/// Three heap blocks, as in the package: the session, its header record,
/// and a zeroed header buffer of `header_sz` bytes (NULL when any of them
/// fails, `header_sz` 0 included: `rt_malloc(0)` is NULL).
#[no_mangle]
pub extern "C" fn webclient_session_create(header_sz: usize) -> *mut webclient_session {
    let session = try_box(HostSession {
        abort: AbortSlot::new(),
        inner: UnsafeCell::new(Inner {
            header: core::ptr::null_mut(),
            conn: None,
            resp_status: 0,
            host: core::ptr::null_mut(),
            req_url: core::ptr::null_mut(),
            chunk_sz: 0,
            chunk_offset: 0,
            content_length: -1,
            content_remainder: 0,
            errno: 0,
        }),
    });
    if session.is_null() {
        crate::host_log_e!("web: webclient create failed, no memory for webclient session!");
        return core::ptr::null_mut();
    }
    let header = try_box(Header {
        buffer: core::ptr::null_mut(),
        length: 0,
        size: header_sz,
    });
    // SAFETY: `session` is ours until returned.
    let free_session = || unsafe { free_box(session) };
    if header.is_null() {
        crate::host_log_e!("web: webclient create failed, no memory for session header!");
        free_session();
        return core::ptr::null_mut();
    }
    let buffer = heap::rt_calloc(1, header_sz) as *mut u8;
    if buffer.is_null() {
        crate::host_log_e!("web: webclient create failed, no memory for session header buffer!");
        // SAFETY: made just above.
        unsafe { free_box(header) };
        free_session();
        return core::ptr::null_mut();
    }
    // SAFETY: both fresh and ours.
    unsafe {
        (*header).buffer = buffer;
        (*(*session).inner.get()).header = header;
    }
    session as *mut webclient_session
}

/// `rt_tick_from_millisecond(ms) / 1000` whole seconds on the connected
/// socket (0: no timeout); nothing at all before the session connects.
/// Returns 0 either way, as the package.
#[no_mangle]
pub extern "C" fn webclient_set_timeout(
    session: *mut webclient_session,
    millisecond: c_int,
) -> c_int {
    let Some((_, s)) = parts(session) else {
        return -WEBCLIENT_ERROR;
    };
    let second = thread::rt_tick_from_millisecond(millisecond) / 1000;
    if let Some(c) = &s.conn {
        // setsockopt on socket -1 fails and changes nothing; on a connected
        // socket a 0 s timeval means "block for ever".
        let t = (second > 0).then(|| Duration::from_secs(u64::from(second)));
        let _ = c.apply_timeout(t);
    }
    0
}

/// The Rust half of `webclient_header_fields_add` (host/port/webclient_port.c
/// formats the line): the package's append and length check. Returns the
/// line's length, or `-WEBCLIENT_ERROR` once `header->length` reaches
/// `header_sz` (the cut line is counted in, as in the package, so every
/// later add fails too).
#[no_mangle]
pub extern "C" fn rt_host_webclient_header_add(
    session: *mut webclient_session,
    text: *const c_char,
    len: usize,
) -> c_int {
    let Some((_, s)) = parts(session) else {
        return -WEBCLIENT_ERROR;
    };
    if text.is_null() && len > 0 {
        return -WEBCLIENT_ERROR;
    }
    let bytes: &[u8] = if len == 0 {
        b""
    } else {
        // SAFETY: `len` readable bytes (the C half's contract).
        unsafe { core::slice::from_raw_parts(text as *const u8, len) }
    };
    s.fields_add(&[bytes])
}

#[no_mangle]
pub extern "C" fn webclient_header_fields_get(
    session: *mut webclient_session,
    fields: *const c_char,
) -> *const c_char {
    let Some((_, s)) = parts(session) else {
        return core::ptr::null();
    };
    if fields.is_null() {
        return core::ptr::null();
    }
    let name = cstr_bytes(fields);
    match s.field(name) {
        Some(at) => s.buf()[at..].as_ptr() as *const c_char,
        None => core::ptr::null(),
    }
}

fn uri_bytes<'a>(uri: *const c_char) -> Option<&'a [u8]> {
    (!uri.is_null()).then(|| cstr_bytes(uri))
}

fn get(slot: &AbortSlot, s: &mut Inner, uri: &[u8], depth: u32) -> c_int {
    let rc = s.connect(slot, uri);
    if rc != WEBCLIENT_OK {
        return rc;
    }
    let rc = s.send_header(slot, false);
    if rc != WEBCLIENT_OK {
        return rc;
    }
    let status = s.handle_response();
    if status == 301 || status == 302 {
        if let Some((at, n)) = s.field_span(b"Location") {
            if depth >= MAX_REDIRECTS {
                return status;
            }
            // The package's web_strdup of the location.
            let copy = heap_cstr(&s.buf()[at..at + n]);
            if copy.is_null() {
                return -WEBCLIENT_NOMEM;
            }
            s.clean(slot);
            s.hdr().length = 0;
            s.buf().fill(0);
            let rc = get(slot, s, cstr_bytes(copy), depth + 1);
            // SAFETY: `copy` is heap_cstr's rt_malloc block and nothing borrows
            // it once `get` has returned.
            unsafe { heap::rt_free(copy as *mut c_void) };
            return rc;
        }
    }
    status
}

#[no_mangle]
pub extern "C" fn webclient_get(session: *mut webclient_session, uri: *const c_char) -> c_int {
    let Some(uri) = uri_bytes(uri) else {
        return -WEBCLIENT_ERROR;
    };
    with_session(session, |slot, s| get(slot, s, uri, 0))
}

/// Connect, send the head and, with `post_data`, the body; then the status
/// from `webclient_handle_response`. Without `post_data`: 0 once the head is
/// sent (the caller writes the body and calls webclient_handle_response).
#[no_mangle]
pub extern "C" fn webclient_post(
    session: *mut webclient_session,
    uri: *const c_char,
    post_data: *const c_void,
    data_len: usize,
) -> c_int {
    let Some(uri) = uri_bytes(uri) else {
        return -WEBCLIENT_ERROR;
    };
    if !post_data.is_null() && data_len == 0 {
        crate::host_log_e!("web: input post data length failed");
        return -WEBCLIENT_ERROR;
    }
    with_session(session, |slot, s| {
        let rc = s.connect(slot, uri);
        if rc != WEBCLIENT_OK {
            return rc;
        }
        let rc = s.send_header(slot, true);
        if rc != WEBCLIENT_OK {
            return rc;
        }
        if post_data.is_null() {
            return 0;
        }
        // SAFETY: `data_len` readable bytes (caller's contract).
        let body = unsafe { core::slice::from_raw_parts(post_data as *const u8, data_len) };
        // The package ignores what this write returns.
        s.write(slot, body);
        s.handle_response()
    })
}

#[no_mangle]
pub extern "C" fn webclient_write(
    session: *mut webclient_session,
    buffer: *const c_void,
    size: usize,
) -> c_int {
    with_session(session, |slot, s| {
        if s.conn.is_none() {
            return -WEBCLIENT_DISCONNECT;
        }
        if size == 0 {
            return 0;
        }
        if buffer.is_null() {
            return -WEBCLIENT_ERROR;
        }
        // SAFETY: `size` readable bytes (caller's contract).
        let data = unsafe { core::slice::from_raw_parts(buffer as *const u8, size) };
        s.write(slot, data)
    })
}

#[no_mangle]
pub extern "C" fn webclient_read(
    session: *mut webclient_session,
    buffer: *mut c_void,
    size: usize,
) -> c_int {
    with_session(session, |slot, s| {
        if size > 0 && buffer.is_null() && s.chunk_sz >= 0 && s.conn.is_some() {
            return -WEBCLIENT_ERROR;
        }
        let out: &mut [u8] = if size == 0 || buffer.is_null() {
            &mut []
        } else {
            // SAFETY: `size` writable bytes (caller's contract).
            unsafe { core::slice::from_raw_parts_mut(buffer as *mut u8, size) }
        };
        s.read(slot, out)
    })
}

/// The package's: the status, or the failed read_line's rc (-1 on a
/// timeout or a socket error, i.e. `-WEBCLIENT_ERROR`).
#[no_mangle]
pub extern "C" fn webclient_handle_response(session: *mut webclient_session) -> c_int {
    with_session(session, |_, s| s.handle_response())
}

#[no_mangle]
pub extern "C" fn webclient_resp_status_get(session: *mut webclient_session) -> c_int {
    parts(session).map_or(-WEBCLIENT_ERROR, |(_, s)| s.resp_status)
}

/// The response's Content-Length as `atoi` read it, or -1 when the head
/// had none (chunked or close-delimited bodies).
#[no_mangle]
pub extern "C" fn webclient_content_length_get(session: *mut webclient_session) -> c_int {
    parts(session).map_or(-1, |(_, s)| s.content_length)
}

/// Close the socket and free the host name, the request path, the header
/// buffer, the header record and the session. Returns 0. (The package
/// asserts on NULL; the host returns 0.)
#[no_mangle]
pub extern "C" fn webclient_close(session: *mut webclient_session) -> c_int {
    let Some((slot, s)) = parts(session) else {
        return WEBCLIENT_OK;
    };
    s.clean(slot);
    if !s.header.is_null() {
        // SAFETY: the header buffer is the session's rt_calloc block, freed
        // only here, just before its header record.
        unsafe { heap::rt_free(s.hdr().buffer as *mut c_void) };
        // SAFETY: made by try_box at creation; not used afterwards.
        unsafe { free_box(s.header) };
        s.header = core::ptr::null_mut();
    }
    // SAFETY: made by try_box in webclient_session_create; the caller hands
    // it back for good (and no abort may run concurrently).
    unsafe { free_box(session as *mut HostSession) };
    WEBCLIENT_OK
}

/// Abort `session` from any thread (host only): shut its socket down so
/// that a blocked `webclient_read`/`webclient_write`/
/// `webclient_handle_response` returns `-WEBCLIENT_DISCONNECT` at once, and
/// make every later call on it fail. The owner still calls
/// `webclient_close`. Returns 0, or `-WEBCLIENT_ERROR` for NULL.
#[no_mangle]
pub extern "C" fn rt_host_webclient_abort(session: *mut webclient_session) -> c_int {
    if session.is_null() {
        return -WEBCLIENT_ERROR;
    }
    // SAFETY: live (caller's contract); only the Sync abort slot is used.
    let slot = unsafe { &(*(session as *const HostSession)).abort };
    slot.abort();
    WEBCLIENT_OK
}

/// `webclient_get_file` (webclient 2.3.0 `src/webclient_file.c`, built with
/// `WEBCLIENT_USING_FILE_DOWMLOAD` and `RT_USING_DFS`; the multimodal Kconfig
/// selects the first): GET `uri` into the file `filename`, created or
/// truncated. As the package: a session of `WEBCLIENT_HEADER_BUFSZ` (4096);
/// a status other than 200 is `-WEBCLIENT_ERROR` (no file made), and so is a
/// file that cannot be opened; the body is read in `WEBCLIENT_RESPONSE_BUFSZ`
/// (4096) pieces from a heap buffer (`-WEBCLIENT_NOMEM` without one) until
/// it ends or a read fails, and the result is `WEBCLIENT_OK` (0) however
/// much of it arrived.
///
/// # Safety
/// `uri` and `filename` are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn webclient_get_file(uri: *const c_char, filename: *const c_char) -> c_int {
    use std::io::Write;
    if filename.is_null() {
        return -WEBCLIENT_ERROR;
    }
    let session = webclient_session_create(4096);
    if session.is_null() {
        return -WEBCLIENT_NOMEM;
    }
    let rc = (|| {
        if webclient_get(session, uri) != 200 {
            return -WEBCLIENT_ERROR;
        }
        // SAFETY: `filename` is non-NULL and, as the package's contract
        // says, NUL-terminated.
        let name = unsafe { core::ffi::CStr::from_ptr(filename) };
        let Ok(name) = name.to_str() else {
            return -WEBCLIENT_ERROR;
        };
        let Ok(mut file) = std::fs::File::create(name) else {
            return -WEBCLIENT_ERROR;
        };
        let mut buf: Vec<u8> = Vec::new();
        if buf.try_reserve_exact(4096).is_err() {
            return -WEBCLIENT_NOMEM;
        }
        buf.resize(4096, 0);
        loop {
            let n = webclient_read(session, buf.as_mut_ptr() as *mut c_void, buf.len());
            if n <= 0 {
                break;
            }
            if file.write_all(&buf[..n as usize]).is_err() {
                break;
            }
        }
        WEBCLIENT_OK
    })();
    webclient_close(session);
    rc
}
