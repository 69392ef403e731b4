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

use super::ipc::{free_box, try_box};
use crate::rtt::webclient::{
    webclient_session, WEBCLIENT_CONNECT_FAILED, WEBCLIENT_DISCONNECT, WEBCLIENT_ERROR,
    WEBCLIENT_NOBUFFER, WEBCLIENT_NOMEM, WEBCLIENT_NOSOCKET, WEBCLIENT_OK, WEBCLIENT_TIMEOUT,
};
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void, CStr};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Environment variable naming a PEM file of extra root certificates that
/// `https://` servers may chain to, besides the system's.
pub const CA_FILE_ENV: &str = "RTT_AGENT_CA_FILE";

/// The package's `WEBCLIENT_DEFAULT_TIMEO` (6 s): what every new
/// connection's socket gets.
pub const DEFAULT_TIMEOUT_SECS: u64 = 6;
/// How deep `webclient_get` follows 301/302 redirects (the package recurses
/// without limit; the host stops a redirect loop).
const MAX_REDIRECTS: u32 = 16;
/// `webclient_next_chunk`'s line buffer.
const CHUNK_LINE: usize = 64;

const USER_AGENT: &[u8] = b"User-Agent: RT-Thread HTTP Agent\r\n";

// ---- transport -------------------------------------------------------------

/// The byte stream under a session: plain TCP, or TLS over TCP. Either
/// way the socket's own timeouts bound every blocking call, and the abort
/// shuts that socket down.
enum Conn {
    Tcp(TcpStream),
    Tls(Box<Tls>),
}

impl Conn {
    fn tcp(&self) -> &TcpStream {
        match self {
            Conn::Tcp(s) => s,
            Conn::Tls(t) => &t.sock,
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Tls(t) => t.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Tls(t) => t.write(buf),
        }
    }

    fn apply_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.tcp().set_read_timeout(timeout)?;
        self.tcp().set_write_timeout(timeout)
    }
}

/// A TLS client session over its socket.
///
/// rustls's `StreamOwned` is not used: its `write` swallows socket errors
/// and may block on a read after a blocked write. Here every call does at
/// most what a plain socket call would, so errors map the same way: a
/// socket read or write timeout comes out as `WouldBlock` with nothing
/// lost (received records stay buffered in rustls; encrypted bytes not yet
/// sent stay queued and go first on the next call).
struct Tls {
    conn: ClientConnection,
    sock: TcpStream,
}

impl Tls {
    /// Send what rustls has queued (records, alerts).
    fn flush(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Run the handshake to its end; the error says why it failed.
    fn handshake(&mut self) -> io::Result<()> {
        while self.conn.is_handshaking() {
            match self.conn.complete_io(&mut self.sock) {
                // complete_io returns while handshaking only on an error;
                // no progress at all would otherwise spin here.
                Ok((0, 0)) if self.conn.is_handshaking() => {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // A last flight (the client's Finished) may still be queued.
        self.flush()
    }

    /// Plaintext into `buf`: what is buffered, else socket reads until a
    /// whole record has come in. Ok(0) at the end of the stream, with or
    /// without the server's `close_notify`.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.flush()?;
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                // No plaintext yet: read more records below.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // TCP closed without close_notify, as many servers do: the
                // framing above tells an end from a cut.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            match self.conn.read_tls(&mut self.sock) {
                // End of stream: the reader reports it on the next turn.
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            if let Err(e) = self.conn.process_new_packets() {
                // Tell the server why (an alert), then fail.
                let _ = self.flush();
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            // Records that call for an answer (a key update) are answered
            // now.
            self.flush()?;
        }
    }

    /// Encrypt as much of `buf` as rustls takes and send it. After a
    /// timeout on the send the bytes stay taken (queued, sent first by the
    /// next call), as a plain socket's kernel buffer would keep them.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // What an earlier call left queued goes first; a timeout here has
        // taken nothing of `buf`.
        self.flush()?;
        let n = self.conn.writer().write(buf)?;
        match self.flush() {
            Ok(()) => Ok(n),
            Err(_) if n > 0 => Ok(n),
            Err(e) => Err(e),
        }
    }
}

/// The shared client configuration, built at the first `https://` request:
/// None when it cannot be built (logged then).
fn tls_config() -> Option<Arc<ClientConfig>> {
    static CONFIG: OnceLock<Option<Arc<ClientConfig>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            // Built on a helper thread whose allocations the accounting
            // heap leaves out of `used`: the configuration lives as long as
            // the process, like the system's trust store it copies, and is
            // not the firmware's memory.
            std::thread::Builder::new()
                .name("webclient-tls-init".into())
                .spawn(|| {
                    super::heap::exclude_this_thread(true);
                    build_tls_config()
                })
                .ok()
                .and_then(|t| t.join().ok())
                .unwrap_or_else(build_tls_config)
        })
        .clone()
}

fn build_tls_config() -> Option<Arc<ClientConfig>> {
    let mut roots = RootCertStore::empty();
    // Unreadable or odd entries in the system store are skipped, as by
    // other TLS clients.
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = std::env::var_os(CA_FILE_ENV) {
        let shown = std::path::Path::new(&path).display();
        match CertificateDer::pem_file_iter(&path) {
            Ok(certs) => {
                let certs: Vec<_> = certs.filter_map(Result::ok).collect();
                let (added, _) = roots.add_parsable_certificates(certs);
                if added == 0 {
                    crate::log_e!("webclient: no usable certificate in {CA_FILE_ENV}={shown}");
                }
            }
            Err(e) => crate::log_e!("webclient: cannot read {CA_FILE_ENV}={shown}: {e}"),
        }
    }
    if roots.is_empty() {
        crate::log_e!(
            "webclient: no trusted root certificates: install ca-certificates or set {CA_FILE_ENV}"
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config =
        match ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions() {
            Ok(b) => b.with_root_certificates(roots).with_no_client_auth(),
            Err(e) => {
                crate::log_e!("webclient: TLS set-up failed: {e}");
                return None;
            }
        };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    // Each request has a connection of its own; a ticket cache would keep
    // heap blocks past the session that received them.
    config.resumption = rustls::client::Resumption::disabled();
    Some(Arc::new(config))
}

/// Why a handshake failed, in a few words: the log line stays one console
/// line (rustls's own messages can run to several, of numbers).
fn handshake_failure(e: &io::Error) -> &'static str {
    use rustls::{CertificateError as C, Error as E};
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => return "timed out",
        io::ErrorKind::UnexpectedEof => return "the server closed the connection",
        _ => {}
    }
    let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<E>()) else {
        return "connection error";
    };
    match tls {
        E::InvalidCertificate(c) => match c {
            C::UnknownIssuer => "certificate from an untrusted CA",
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                "certificate is for another name"
            }
            C::Expired | C::ExpiredContext { .. } => "certificate expired",
            C::NotValidYet | C::NotValidYetContext { .. } => "certificate not valid yet (clock?)",
            C::Revoked => "certificate revoked",
            C::BadSignature => "bad certificate signature",
            _ => "certificate not accepted",
        },
        E::InvalidMessage(_) | E::InappropriateMessage { .. } => {
            "the server does not speak TLS here"
        }
        E::AlertReceived(_) => "the server refused the handshake",
        E::PeerIncompatible(_) => "no TLS version or cipher in common",
        E::NoApplicationProtocol => "the server does not offer HTTP/1.1",
        _ => "TLS error",
    }
}

/// A TLS client session for `target` (not connected yet).
fn tls_session(target: &Target<'_>) -> Result<ClientConnection, c_int> {
    let config = tls_config().ok_or(-WEBCLIENT_ERROR)?;
    let name = ServerName::try_from(target.host.to_owned()).map_err(|_| {
        crate::log_e!("webclient: not a valid TLS server name: {}", target.host);
        -WEBCLIENT_ERROR
    })?;
    ClientConnection::new(config, name).map_err(|e| {
        crate::log_e!("webclient: TLS set-up failed: {e}");
        -WEBCLIENT_ERROR
    })
}

// ---- abort -----------------------------------------------------------------

/// The only part of a session another thread may touch.
struct AbortSlot {
    /// Sticky: once set, every operation on the session fails.
    aborted: AtomicBool,
    /// The connected socket, or -1. The owner clears it (under the lock)
    /// before closing the socket, so an abort never shuts down a descriptor
    /// number that has already been reused.
    fd: Mutex<RawFd>,
}

impl AbortSlot {
    fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RawFd> {
        self.fd.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn abort(&self) {
        // The flag goes up before the lock is taken: a `register` that runs
        // first leaves its descriptor for us to shut down, one that runs
        // later sees the flag.
        self.aborted.store(true, Ordering::SeqCst);
        let fd = self.lock();
        if *fd >= 0 {
            // SAFETY: the descriptor is open while it is registered (the
            // owner unregisters it under this lock before closing it).
            unsafe { libc::shutdown(*fd, libc::SHUT_RDWR) };
        }
    }

    /// Publish a fresh connection; false when the session was aborted.
    fn register(&self, fd: RawFd) -> bool {
        let mut g = self.lock();
        if self.is_aborted() {
            return false;
        }
        *g = fd;
        true
    }

    fn unregister(&self) {
        *self.lock() = -1;
    }
}

// ---- session ---------------------------------------------------------------

/// The package's `struct webclient_header`: a heap block of its own.
struct Header {
    /// `size` bytes from `rt_calloc`.
    buffer: *mut u8,
    /// As in the package: may run past `size` after a refused
    /// `webclient_header_fields_add` (the package counts the cut line in).
    length: usize,
    size: usize,
}

/// The package's `struct webclient_session` fields, plus the connection.
struct Inner {
    header: *mut Header,
    /// The package's `socket` (>= 0 exactly when this is Some).
    conn: Option<Conn>,
    resp_status: c_int,
    /// `rt_malloc`ed C strings, set by the connect, freed by clean/close.
    host: *mut c_char,
    req_url: *mut c_char,
    chunk_sz: c_int,
    chunk_offset: c_int,
    content_length: c_int,
    content_remainder: usize,
    /// The socket layer's `errno` after the last recv/send (lwIP's values).
    errno: c_int,
}

/// What a `struct webclient_session *` of the host port points to.
struct HostSession {
    abort: AbortSlot,
    inner: UnsafeCell<Inner>,
}

/// The session's two halves: the abort slot (shared) and the state only the
/// owning thread uses.
fn parts<'a>(session: *mut webclient_session) -> Option<(&'a AbortSlot, &'a mut Inner)> {
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

/// Set the thread's libc errno too, so C code that looks at it after a
/// webclient call sees what it would see on lwIP.
fn set_errno(e: c_int) {
    // SAFETY: the calling thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

/// Length of the C string at `p`, at most `max`.
fn cstrnlen(p: &[u8]) -> usize {
    p.iter().position(|&b| b == 0).unwrap_or(p.len())
}

/// `snprintf(dst, dst.len(), "%s", text)`: writes what fits with a NUL,
/// returns the length it wanted (as `rt_vsnprintf`).
fn put(dst: &mut [u8], text: &[u8]) -> usize {
    if !dst.is_empty() {
        let n = text.len().min(dst.len() - 1);
        dst[..n].copy_from_slice(&text[..n]);
        dst[n] = 0;
    }
    text.len()
}

/// `strtol(s, NULL, base)` on a bounded buffer (stops at a NUL).
fn strtol(s: &[u8], base: u32) -> i64 {
    let s = &s[..cstrnlen(s)];
    let mut i = 0;
    while i < s.len() && (s[i] == b' ' || (b'\t'..=b'\r').contains(&s[i])) {
        i += 1;
    }
    let neg = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    if base == 16
        && s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && s.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
    {
        i += 2;
    }
    let mut v: i64 = 0;
    while let Some(d) = s.get(i).and_then(|&c| (c as char).to_digit(base)) {
        v = v.saturating_mul(base as i64).saturating_add(d as i64);
        i += 1;
    }
    if neg {
        -v
    } else {
        v
    }
}

/// glibc's `atoi`: `(int) strtol(s, NULL, 10)`.
fn atoi(s: &[u8]) -> c_int {
    strtol(s, 10) as c_int
}

/// A heap copy of `bytes` as a C string (`web_strdup`/`web_malloc`), or
/// NULL when the heap refuses.
fn heap_cstr(bytes: &[u8]) -> *mut c_char {
    let p = super::heap::rt_malloc(bytes.len() + 1) as *mut u8;
    if !p.is_null() {
        // SAFETY: a fresh block of len + 1 bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            *p.add(bytes.len()) = 0;
        }
    }
    p as *mut c_char
}

fn cstr_bytes<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        return b"";
    }
    // SAFETY: a NUL-terminated string of ours (or the caller's).
    unsafe { CStr::from_ptr(p) }.to_bytes()
}

/// Does `hay` (a C string) contain `needle`?
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

impl Inner {
    fn hdr(&mut self) -> &mut Header {
        // SAFETY: allocated at creation, freed only by webclient_close.
        unsafe { &mut *self.header }
    }

    /// The whole header buffer.
    fn buf(&mut self) -> &mut [u8] {
        let h = self.hdr();
        // SAFETY: `size` bytes from rt_calloc, owned by the session.
        unsafe { core::slice::from_raw_parts_mut(h.buffer, h.size) }
    }

    /// `closesocket(session->socket); session->socket = -1;`
    fn close_socket(&mut self, slot: &AbortSlot) {
        if self.conn.is_some() {
            // Unregistered before the socket closes (see AbortSlot::fd).
            slot.unregister();
            self.conn = None;
        }
    }

    /// The package's `webclient_clean`.
    fn clean(&mut self, slot: &AbortSlot) {
        self.close_socket(slot);
        super::heap::rt_free(self.host as *mut c_void);
        self.host = core::ptr::null_mut();
        super::heap::rt_free(self.req_url as *mut c_void);
        self.req_url = core::ptr::null_mut();
        self.content_length = -1;
    }

    /// lwIP's `recv`: n > 0, 0 when the peer closed (errno `ENOTCONN`), -1
    /// with errno `EAGAIN` on a timeout or another errno on an error.
    fn recv(&mut self, buf: &mut [u8]) -> c_int {
        let buf_len = buf.len().min(c_int::MAX as usize);
        let Some(c) = self.conn.as_mut() else {
            self.errno = libc::EBADF;
            set_errno(self.errno);
            return -1;
        };
        let (rc, errno) = loop {
            match c.read(&mut buf[..buf_len]) {
                Ok(0) => break (0, libc::ENOTCONN),
                Ok(n) => break (n as c_int, 0),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break (-1, io_errno(&e)),
            }
        };
        self.errno = errno;
        set_errno(errno);
        rc
    }

    /// lwIP's `send`: n > 0, or -1 with errno (`EAGAIN` on a timeout).
    fn send(&mut self, buf: &[u8]) -> c_int {
        let buf_len = buf.len().min(c_int::MAX as usize);
        let Some(c) = self.conn.as_mut() else {
            self.errno = libc::EBADF;
            set_errno(self.errno);
            return -1;
        };
        let (rc, errno) = loop {
            match c.write(&buf[..buf_len]) {
                Ok(0) => break (-1, libc::ENOTCONN),
                Ok(n) => break (n as c_int, 0),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break (-1, io_errno(&e)),
            }
        };
        self.errno = errno;
        set_errno(errno);
        rc
    }

    fn timed_out(&self) -> bool {
        self.errno == libc::EAGAIN || self.errno == libc::EWOULDBLOCK
    }

    /// The package's `webclient_read_line`: bytes up to (not including) a
    /// CRLF's LF, at most `size`; the CR is kept. The recv's rc (<= 0) when
    /// it fails. Neither NUL-terminated nor checked for a cut line.
    fn read_line(&mut self, at: usize, size: usize, line: Option<&mut [u8]>) -> c_int {
        let mut count = 0usize;
        let mut last = 0u8;
        let mut line = line;
        while count < size {
            let mut ch = [0u8; 1];
            let rc = self.recv(&mut ch);
            if rc <= 0 {
                return rc;
            }
            if ch[0] == b'\n' && last == b'\r' {
                break;
            }
            match line.as_deref_mut() {
                Some(l) => l[count] = ch[0],
                None => self.buf()[at + count] = ch[0],
            }
            count += 1;
            last = ch[0];
        }
        count as c_int
    }

    /// `webclient_header_fields_add` after formatting: the package's
    /// arithmetic on `header->length`, the refusal included.
    fn fields_add(&mut self, text: &[u8]) -> c_int {
        let (length, size) = {
            let h = self.hdr();
            (h.length, h.size)
        };
        // The package formats into `size - length` bytes (a size_t that
        // wraps once `length` has run past `size`, writing beyond the
        // buffer); the host writes nothing then.
        let room = size.saturating_sub(length);
        let n = put(
            &mut self.buf()[length.min(size)..length.min(size) + room],
            text,
        );
        let h = self.hdr();
        h.length += n;
        if h.length >= h.size {
            crate::log_e!("web: not enough header buffer size({})!", h.size);
            return -WEBCLIENT_ERROR;
        }
        n as c_int
    }

    /// The package's `webclient_write`.
    fn write(&mut self, slot: &AbortSlot, data: &[u8]) -> c_int {
        if self.conn.is_none() {
            return -WEBCLIENT_DISCONNECT;
        }
        if data.is_empty() {
            return 0;
        }
        let data = &data[..data.len().min(c_int::MAX as usize)];
        let mut total = 0usize;
        while total < data.len() {
            let n = self.send(&data[total..]);
            if n <= 0 {
                if self.timed_out() && !slot.is_aborted() {
                    if total > 0 {
                        return total as c_int;
                    }
                    // The package tries again, for ever.
                    continue;
                }
                self.close_socket(slot);
                if total == 0 {
                    return -WEBCLIENT_DISCONNECT;
                }
                break;
            }
            total += n as usize;
        }
        total as c_int
    }

    /// The package's `webclient_connect` (with its mbedTLS option for
    /// `https://`).
    fn connect(&mut self, slot: &AbortSlot, uri: &[u8]) -> c_int {
        let target = match parse_uri(uri) {
            Ok(t) => t,
            Err(rc) => return rc,
        };
        let https = target.tls;
        // The package overwrites (and leaks) what a previous connect left;
        // the host frees it.
        self.clean(slot);
        self.content_length = -1;
        self.host = heap_cstr(target.host.as_bytes());
        if self.host.is_null() {
            return -WEBCLIENT_ERROR;
        }
        let tls = match https.then(|| tls_session(&target)).transpose() {
            Ok(tls) => tls,
            Err(rc) => return rc,
        };
        self.req_url = heap_cstr(target.path);
        let sock = match connect(
            slot,
            &target,
            Some(Duration::from_secs(DEFAULT_TIMEOUT_SECS)),
        ) {
            Ok(s) => s,
            // The mbedTLS connect resolves too, and fails as a connect.
            Err(rc) if https && rc == -WEBCLIENT_ERROR => return -WEBCLIENT_CONNECT_FAILED,
            Err(rc) => return rc,
        };
        if !slot.register(sock.as_raw_fd()) {
            return -WEBCLIENT_DISCONNECT;
        }
        self.conn = Some(match tls {
            Some(conn) => Conn::Tls(Box::new(Tls { conn, sock })),
            None => Conn::Tcp(sock),
        });
        if let Some(Conn::Tls(t)) = self.conn.as_mut() {
            if let Err(e) = t.handshake() {
                let rc = if slot.is_aborted() {
                    -WEBCLIENT_DISCONNECT
                } else {
                    // Host and port only: the path may carry a key.
                    crate::log_e!(
                        "webclient: TLS to {}:{} failed: {}",
                        target.host,
                        target.port,
                        handshake_failure(&e)
                    );
                    -WEBCLIENT_CONNECT_FAILED
                };
                self.close_socket(slot);
                return rc;
            }
        }
        WEBCLIENT_OK
    }

    /// The package's `webclient_send_header` for GET and POST.
    fn send_header(&mut self, slot: &AbortSlot, post: bool) -> c_int {
        let host = cstr_bytes(self.host).to_vec();
        let url: Vec<u8> = if self.req_url.is_null() {
            b"/".to_vec()
        } else {
            cstr_bytes(self.req_url).to_vec()
        };
        if self.hdr().length == 0 && !post {
            // The default head of a plain GET.
            let mut line = b"GET ".to_vec();
            line.extend_from_slice(&url);
            line.extend_from_slice(b" HTTP/1.1\r\n");
            if self.fields_add(&line) < 0 {
                return -WEBCLIENT_NOMEM;
            }
            let mut line = b"Host: ".to_vec();
            line.extend_from_slice(&host);
            line.extend_from_slice(b"\r\n");
            if self.fields_add(&line) < 0 {
                return -WEBCLIENT_NOMEM;
            }
            if self.fields_add(b"User-Agent: RT-Thread HTTP Agent\r\n\r\n") < 0 {
                return -WEBCLIENT_NOMEM;
            }
        } else {
            if !self.buf().starts_with(b"HTTP/1.") {
                // A copy of the caller's lines, then the request line
                // spliced in front of them.
                let lines_len = cstrnlen(self.buf());
                let copy = heap_cstr(&self.buf()[..lines_len]);
                if copy.is_null() {
                    crate::log_e!("web: no memory for header buffer!");
                    return -WEBCLIENT_NOMEM;
                }
                let mut text = if post {
                    b"POST ".to_vec()
                } else {
                    b"GET ".to_vec()
                };
                text.extend_from_slice(&url);
                text.extend_from_slice(b" HTTP/1.1\r\n");
                text.extend_from_slice(cstr_bytes(copy));
                let n = put(self.buf(), &text);
                self.hdr().length = n;
                super::heap::rt_free(copy as *mut c_void);
            }
            let now = |s: &mut Self| {
                let n = cstrnlen(s.buf());
                s.buf()[..n].to_vec()
            };
            if !contains(&now(self), b"Host:") {
                let mut line = b"Host: ".to_vec();
                line.extend_from_slice(&host);
                line.extend_from_slice(b"\r\n");
                if self.fields_add(&line) < 0 {
                    return -WEBCLIENT_NOMEM;
                }
            }
            if !contains(&now(self), b"User-Agent:") && self.fields_add(USER_AGENT) < 0 {
                return -WEBCLIENT_NOMEM;
            }
            if !contains(&now(self), b"Accept:") && self.fields_add(b"Accept: */*\r\n") < 0 {
                return -WEBCLIENT_NOMEM;
            }
            let (length, size) = (self.hdr().length, self.hdr().size);
            if length <= size {
                put(&mut self.buf()[length..], b"\r\n");
            }
            self.hdr().length += 2;
            if self.hdr().length > size {
                crate::log_e!(
                    "web: send header failed, not enough header buffer size({})!",
                    size
                );
                return -WEBCLIENT_NOBUFFER;
            }
        }
        // The package ignores what this write returns.
        let length = self.hdr().length;
        let head = self.buf()[..length].to_vec();
        self.write(slot, &head);
        WEBCLIENT_OK
    }

    /// The package's `webclient_header_fields_get`, walk and all: the first
    /// line (of the NUL-separated lines) that *starts* with `name` in any
    /// case; its value after the first ':' and blanks.
    fn field(&mut self, name: &[u8]) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        let length = self.hdr().length;
        let buf: &[u8] = self.buf();
        let mut at = 0usize;
        let mut seen = 0usize;
        while seen < length && at < buf.len() {
            let line = &buf[at..at + cstrnlen(&buf[at..])];
            if line.len() >= name.len() && line[..name.len()].eq_ignore_ascii_case(name) {
                if let Some(colon) = line.iter().position(|&b| b == b':') {
                    let mut v = colon + 1;
                    while v < line.len() && matches!(line[v], b' ' | b'\t') {
                        v += 1;
                    }
                    return Some(at + v);
                }
            }
            if line.is_empty() {
                break;
            }
            at += line.len() + 1;
            // The package adds the length of the *next* line here.
            if at < buf.len() {
                seen += cstrnlen(&buf[at..]) + 1;
            } else {
                break;
            }
        }
        None
    }

    fn field_value(&mut self, name: &[u8]) -> Option<Vec<u8>> {
        let at = self.field(name)?;
        let buf = self.buf();
        Some(buf[at..at + cstrnlen(&buf[at..])].to_vec())
    }

    /// The package's `webclient_handle_response`.
    fn handle_response(&mut self) -> c_int {
        let size = self.hdr().size;
        self.buf().fill(0);
        self.hdr().length = 0;
        let mut rc;
        loop {
            let length = self.hdr().length;
            // size - length - 1 in size_t: never wraps here (length < size).
            rc = self.read_line(length, size - length - 1, None);
            if rc <= 0 {
                break;
            }
            let n = rc as usize;
            if n == 1 && self.buf()[length] == b'\r' {
                self.buf()[length] = 0;
                break;
            }
            self.buf()[length + n - 1] = 0;
            self.hdr().length += n;
            if self.hdr().length >= size {
                // Unreachable in the package too: read_line never returns
                // more than size - length - 1.
                return -WEBCLIENT_NOMEM;
            }
        }
        // The status line, copied (the package's web_strdup).
        let first_len = cstrnlen(self.buf());
        let copy = heap_cstr(&self.buf()[..first_len]);
        if copy.is_null() {
            return -WEBCLIENT_NOMEM;
        }
        let first = cstr_bytes(copy);
        if contains(first, b"HTTP/1.") {
            // From the line's start + 8 (the package reads past a shorter
            // line; the host stops at its end).
            let mut p = first.get(8..).unwrap_or(b"");
            while let [b' ' | b'\t', rest @ ..] = p {
                p = rest;
            }
            self.resp_status = strtol(p, 10) as c_int;
        }
        super::heap::rt_free(copy as *mut c_void);
        if let Some(v) = self.field_value(b"Content-Length") {
            self.content_length = atoi(&v);
        }
        self.content_remainder = if self.content_length != 0 {
            // (size_t) of an int, as on a 32-bit board.
            self.content_length as u32 as usize
        } else {
            0xFFFF_FFFF
        };
        if self.field_value(b"Transfer-Encoding").as_deref() == Some(b"chunked") {
            // The package's rt_uint16_t len = header->size.
            let len = size as u16 as usize;
            let line = super::heap::rt_malloc(len) as *mut u8;
            self.chunk_sz = 0;
            if !line.is_null() {
                // SAFETY: a fresh block of len bytes (zeroed on the host:
                // the package reads it uninitialised after a failed read).
                let l = unsafe {
                    core::ptr::write_bytes(line, 0, len);
                    core::slice::from_raw_parts_mut(line, len)
                };
                self.read_line(0, len, Some(&mut l[..]));
                self.chunk_sz = strtol(l, 16) as c_int;
                super::heap::rt_free(line as *mut c_void);
            }
            self.chunk_offset = 0;
        }
        if rc < 0 {
            return rc;
        }
        self.resp_status
    }

    /// The package's `webclient_next_chunk`.
    fn next_chunk(&mut self, slot: &AbortSlot) -> c_int {
        let mut line = [0u8; CHUNK_LINE];
        let mut length = self.read_line(0, CHUNK_LINE, Some(&mut line));
        if length > 0 {
            if line[..cstrnlen(&line)] == *b"\r" {
                length = self.read_line(0, CHUNK_LINE, Some(&mut line));
                if length <= 0 {
                    self.close_socket(slot);
                    return length;
                }
            }
        } else {
            self.close_socket(slot);
            return length;
        }
        self.chunk_sz = strtol(&line, 16) as c_int;
        self.chunk_offset = 0;
        if self.chunk_sz == 0 {
            // End of chunks.
            self.close_socket(slot);
            self.chunk_sz = -1;
        }
        self.chunk_sz
    }

    /// The package's `webclient_read`.
    fn read(&mut self, slot: &AbortSlot, out: &mut [u8]) -> c_int {
        if self.chunk_sz < 0 {
            return 0;
        }
        if self.conn.is_none() {
            return -WEBCLIENT_DISCONNECT;
        }
        if out.is_empty() {
            return 0;
        }
        let mut length = out.len().min(c_int::MAX as usize);
        if self.chunk_sz != 0 {
            let left = (self.chunk_sz - self.chunk_offset).max(0) as usize;
            length = length.min(left);
            let n = self.recv(&mut out[..length]);
            if n <= 0 {
                if self.timed_out() {
                    return -WEBCLIENT_TIMEOUT;
                }
                self.close_socket(slot);
                return 0;
            }
            self.chunk_offset += n;
            if self.chunk_offset >= self.chunk_sz {
                self.next_chunk(slot);
            }
            return n;
        }
        if self.content_length > 0 {
            length = length.min(self.content_remainder);
            if length == 0 {
                return 0;
            }
        }
        let mut total = 0usize;
        while total < length {
            let n = self.recv(&mut out[total..length]);
            if n <= 0 {
                if total > 0 {
                    break;
                }
                if self.timed_out() {
                    crate::log_e!("web: receive data timeout.");
                    return -WEBCLIENT_TIMEOUT;
                }
                self.close_socket(slot);
                return 0;
            }
            total += n as usize;
        }
        if self.content_length > 0 {
            self.content_remainder -= total;
        }
        total as c_int
    }
}

/// A socket error as lwIP's errno.
fn io_errno(e: &io::Error) -> c_int {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => libc::EAGAIN,
        _ => e.raw_os_error().unwrap_or(libc::ECONNRESET),
    }
}

/// The parts of an `http[s]://host[:port]/path` URI a request needs.
struct Target<'a> {
    /// `https://`: TLS over the connection.
    tls: bool,
    /// `host[:port]` as written (the package's `Host` header has the host
    /// alone).
    #[allow(dead_code)]
    authority: &'a [u8],
    /// The host to resolve (IPv6 without its brackets).
    host: &'a str,
    port: u16,
    /// Path and query; never empty.
    path: &'a [u8],
}

fn parse_uri(uri: &[u8]) -> Result<Target<'_>, c_int> {
    let (tls, rest) = if let Some(rest) = uri.strip_prefix(b"http://") {
        (false, rest)
    } else if let Some(rest) = uri.strip_prefix(b"https://") {
        (true, rest)
    } else {
        return Err(-WEBCLIENT_ERROR);
    };
    // Blanks or control bytes would break the request line or inject
    // header lines.
    if rest.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err(-WEBCLIENT_ERROR);
    }
    let rest = rest.split(|&b| b == b'#').next().unwrap_or(rest);
    let cut = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(cut);
    let path: &[u8] = if path.is_empty() { b"/" } else { path };
    if authority.contains(&b'@') {
        return Err(-WEBCLIENT_ERROR);
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix(b"[") {
        let close = v6.iter().position(|&b| b == b']').ok_or(-WEBCLIENT_ERROR)?;
        match &v6[close + 1..] {
            [] => (&v6[..close], &b""[..]),
            [b':', port @ ..] => (&v6[..close], port),
            _ => return Err(-WEBCLIENT_ERROR),
        }
    } else {
        match authority.iter().position(|&b| b == b':') {
            Some(i) => (&authority[..i], &authority[i + 1..]),
            None => (authority, &b""[..]),
        }
    };
    let port = if port.is_empty() {
        if tls {
            443
        } else {
            80
        }
    } else {
        let digits = core::str::from_utf8(port).map_err(|_| -WEBCLIENT_ERROR)?;
        match digits.parse::<u16>() {
            Ok(p) if p > 0 && digits.bytes().all(|b| b.is_ascii_digit()) => p,
            _ => return Err(-WEBCLIENT_ERROR),
        }
    };
    let host = core::str::from_utf8(host).map_err(|_| -WEBCLIENT_ERROR)?;
    if host.is_empty() {
        return Err(-WEBCLIENT_ERROR);
    }
    Ok(Target {
        tls,
        authority,
        host,
        port,
        path,
    })
}

/// Resolve and connect, trying each address in turn within the timeout.
fn connect(
    slot: &AbortSlot,
    target: &Target<'_>,
    timeout: Option<Duration>,
) -> Result<TcpStream, c_int> {
    let addrs = (target.host, target.port)
        .to_socket_addrs()
        .map_err(|_| -WEBCLIENT_ERROR)?;
    let mut rc = -WEBCLIENT_ERROR;
    for addr in addrs {
        if slot.is_aborted() {
            return Err(-WEBCLIENT_DISCONNECT);
        }
        let stream = match timeout {
            Some(t) => TcpStream::connect_timeout(&addr, t),
            None => TcpStream::connect(addr),
        };
        let Ok(stream) = stream else {
            rc = -WEBCLIENT_CONNECT_FAILED;
            continue;
        };
        if stream.set_read_timeout(timeout).is_err() || stream.set_write_timeout(timeout).is_err() {
            return Err(-WEBCLIENT_NOSOCKET);
        }
        // Small writes (the head, then the body) must not wait for the
        // server's delayed ACK.
        let _ = stream.set_nodelay(true);
        return Ok(stream);
    }
    Err(rc)
}

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
        abort: AbortSlot {
            aborted: AtomicBool::new(false),
            fd: Mutex::new(-1),
        },
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
        crate::log_e!("web: webclient create failed, no memory for webclient session!");
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
        crate::log_e!("web: webclient create failed, no memory for session header!");
        free_session();
        return core::ptr::null_mut();
    }
    let buffer = super::heap::rt_calloc(1, header_sz) as *mut u8;
    if buffer.is_null() {
        crate::log_e!("web: webclient create failed, no memory for session header buffer!");
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
    let second = super::thread::rt_tick_from_millisecond(millisecond) / 1000;
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
    s.fields_add(bytes)
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
        if let Some(location) = s.field_value(b"Location") {
            if depth >= MAX_REDIRECTS {
                return status;
            }
            // The package's web_strdup of the location.
            let copy = heap_cstr(&location);
            if copy.is_null() {
                return -WEBCLIENT_NOMEM;
            }
            s.clean(slot);
            s.hdr().length = 0;
            s.buf().fill(0);
            let rc = get(slot, s, cstr_bytes(copy), depth + 1);
            super::heap::rt_free(copy as *mut c_void);
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
        crate::log_e!("web: input post data length failed");
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
        super::heap::rt_free(s.hdr().buffer as *mut c_void);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        let t = parse_uri(b"http://example.com:8080/v1/chat?x=1#frag")
            .ok()
            .unwrap();
        assert_eq!(
            (t.authority, t.host, t.port, t.path),
            (
                &b"example.com:8080"[..],
                "example.com",
                8080,
                &b"/v1/chat?x=1"[..]
            )
        );
        let t = parse_uri(b"http://[::1]/").ok().unwrap();
        assert_eq!((t.host, t.port, t.authority), ("::1", 80, &b"[::1]"[..]));
        let t = parse_uri(b"http://h").ok().unwrap();
        assert_eq!((t.path, t.tls), (&b"/"[..], false));
        let t = parse_uri(b"https://api.example.com/v1?k=1").ok().unwrap();
        assert_eq!(
            (t.tls, t.host, t.port, t.authority, t.path),
            (
                true,
                "api.example.com",
                443,
                &b"api.example.com"[..],
                &b"/v1?k=1"[..]
            )
        );
        let t = parse_uri(b"https://[::1]:8443").ok().unwrap();
        assert_eq!(
            (t.tls, t.host, t.port, t.path),
            (true, "::1", 8443, &b"/"[..])
        );
        for bad in [
            &b"ftp://h/"[..],
            b"http://",
            b"https://",
            b"https:/h/",
            b"http://h:0/",
            b"http://h:99999/",
            b"http://h:1x/",
            b"http://a b/",
            b"http://u@h/",
        ] {
            assert!(parse_uri(bad).is_err());
        }
    }

    #[test]
    fn c_number_parsing() {
        assert_eq!(strtol(b"1a\r", 16), 26);
        assert_eq!(strtol(b" 0x10;ext", 16), 16);
        assert_eq!(strtol(b"zz", 16), 0);
        assert_eq!(strtol(b"200 OK", 10), 200);
        assert_eq!(atoi(b" 12abc"), 12);
        assert_eq!(atoi(b"-3"), -3);
        assert_eq!(atoi(b"x"), 0);
    }
}
