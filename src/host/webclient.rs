//! The webclient 2.x client API (RT-Thread package `webclient` 2.3.0) served
//! over real TCP, and over TLS for `https://` URIs, so that the library's
//! HTTP code paths run on Linux and the simulator reaches real endpoints.
//!
//! Behaviour follows the package's `src/webclient.c` where callers can see
//! it, with its rough edges filed off:
//! - the request head (request line, the caller's header lines, and `Host`,
//!   `User-Agent`, `Accept` and, for `webclient_post` with a body,
//!   `Content-Length` when the caller did not add them) must fit in the
//!   session's `header_sz`, else `-WEBCLIENT_NOBUFFER`; the response head
//!   must fit there too, else `-WEBCLIENT_NOMEM` (the package's codes);
//! - `webclient_header_fields_add` leaves the buffer unchanged when the line
//!   does not fit (the package counted the cut line in anyway);
//! - `webclient_read` returns as soon as some body bytes are there, decodes
//!   chunked bodies fully (extensions, trailers) and resumes cleanly after
//!   a `-WEBCLIENT_TIMEOUT`; a body cut short by the server is
//!   `-WEBCLIENT_DISCONNECT`, not a silent end;
//! - `webclient_set_timeout` takes milliseconds exactly (the package rounded
//!   down to whole seconds, so anything under 1000 ms meant "forever");
//!   `millisecond <= 0` means no timeout. The default is the package's 6 s.
//!
//! Memory: the session and its header buffer come from the accounting heap
//! at creation; a request allocates nothing else of its own (only a long
//! header line's formatting, a redirect's URI copy, and std's address
//! resolution, all freed before they return). Body bytes go straight into
//! the caller's buffer; only the response head and chunk framing pass
//! through the session's small receive buffer.
//!
//! # Aborting from another thread
//! [`rt_host_webclient_abort`] shuts the session's socket down, so a
//! `webclient_read`/`webclient_write` blocked on another thread returns
//! `-WEBCLIENT_DISCONNECT` at once, and every later call on that session
//! fails the same way (the abort is sticky: close the session next). An
//! abort that lands while a connect is under way takes effect when that
//! connect attempt ends (at the latest after the session's timeout). The
//! caller must keep the session alive during the call, i.e. serialise it
//! against `webclient_close` (publish the session under a mutex, clear it
//! under that mutex before closing): the same rule as `closesocket` on a
//! board's session socket.
//!
//! # HTTPS
//! `https://host[:port]/path` (port 443 by default) runs the same requests
//! over TLS (rustls, ring provider): TLS 1.2 or 1.3, SNI = host, ALPN
//! `http/1.1`. The server's certificate must chain to a root of the
//! system's store (`/etc/ssl/certs` on Debian, package `ca-certificates`;
//! `SSL_CERT_FILE`/`SSL_CERT_DIR` override it) or to one of the PEM
//! certificates in the file named by [`CA_FILE_ENV`] (private CAs, tests).
//! Both are read once, at the first `https://` request of the process.
//! A failed handshake (certificate not trusted, name mismatch, the server
//! not speaking TLS, a timeout) is `-WEBCLIENT_CONNECT_FAILED`, logged as
//! one line naming host and port only. Read timeouts, their resumption,
//! the body framings and the abort work as over plain TCP (the abort shuts
//! the TCP socket under the TLS session down). A server that closes without
//! TLS's `close_notify` ends the stream as a plain close would: bodies with
//! a length or chunked framing still tell a cut from an end.
//!
//! The TLS state of a connection (about 11 KB for a small exchange; its
//! record buffers grow towards 16 KB each with full-size records) comes
//! from the global allocator, i.e. the accounting heap, while the request
//! runs, and is freed with the connection: session resumption is off, so
//! nothing outlives a session. The shared client configuration (the root
//! store) is built once and kept out of the heap's `used` count, like the
//! system's own trust store.
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

/// The package's `WEBCLIENT_DEFAULT_TIMEO` (6 s), used until
/// `webclient_set_timeout` is called.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(6);
/// Room for the response head and chunk framing read ahead of the caller.
/// Small on purpose: body bytes that land here are handed out first.
const RX_BUFSZ: usize = 512;
/// How many 301/302 redirects `webclient_get` follows (the package followed
/// them without limit).
const MAX_REDIRECTS: u32 = 5;

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

/// Chunked transfer decoding, one state per place in the framing, so that a
/// read timeout anywhere can be resumed by the next read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Chunk {
    /// In a chunk-size line: the value so far, its digit count, and whether
    /// an extension (`;name=value`) or trailing blanks have begun.
    Size { value: u64, digits: u32, ext: bool },
    /// Inside chunk data.
    Data { left: u64 },
    /// After chunk data, waiting for its CRLF.
    DataEnd,
    /// In the trailer section after the last chunk; `empty`: nothing on
    /// the current line yet (an empty line ends the body).
    Trailer { empty: bool },
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Body {
    /// No response head has been read.
    Idle,
    Length {
        left: u64,
    },
    Chunked(Chunk),
    /// Neither length nor chunked: the body ends when the server closes.
    UntilClose,
    Done,
}

/// What the owning thread works on. Another thread never touches it.
struct Inner {
    /// The caller's request header lines, then the request head as sent,
    /// then the response head as NUL-terminated lines (status line first),
    /// so that `webclient_header_fields_get` can return C strings into it.
    /// Its capacity, reserved at creation, is never exceeded.
    head: Vec<u8>,
    head_limit: usize,
    head_is_response: bool,
    timeout: Option<Duration>,
    conn: Option<Conn>,
    status: c_int,
    content_length: c_int,
    body: Body,
    rx: [u8; RX_BUFSZ],
    rx_pos: usize,
    rx_end: usize,
}

/// What a `struct webclient_session *` of the host port points to (the C
/// API and `crate::rtt::webclient` see only the opaque type).
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
    // just `abort`; `inner` sits in an UnsafeCell, so this &mut does not
    // alias their shared reference.
    unsafe {
        let s = &*(session as *const HostSession);
        Some((&s.abort, &mut *s.inner.get()))
    }
}

/// Is `line` the header `name` (any case)? Returns the value's offset in
/// the line, past the colon and leading blanks.
fn field_value(line: &[u8], name: &[u8]) -> Option<usize> {
    if name.is_empty() || line.len() <= name.len() || !line[..name.len()].eq_ignore_ascii_case(name)
    {
        return None;
    }
    let mut i = name.len();
    while i < line.len() && matches!(line[i], b' ' | b'\t') {
        i += 1;
    }
    if line.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    while i < line.len() && matches!(line[i], b' ' | b'\t') {
        i += 1;
    }
    Some(i)
}

/// Did the caller add header `name` (lines as added: "...\r\n")?
fn request_has_field(head: &[u8], name: &[u8]) -> bool {
    head.split(|&b| b == b'\n')
        .any(|line| field_value(line, name).is_some())
}

/// Offset of the value of response header `name` in the head buffer (lines
/// NUL-terminated; the first one is the status line, never a field).
fn response_field(head: &[u8], name: &[u8]) -> Option<usize> {
    let mut start = head.iter().position(|&b| b == 0)? + 1;
    while start < head.len() {
        let end = head[start..]
            .iter()
            .position(|&b| b == 0)
            .map_or(head.len(), |n| start + n);
        if let Some(v) = field_value(&head[start..end], name) {
            return Some(start + v);
        }
        start = end + 1;
    }
    None
}

fn response_value<'h>(head: &'h [u8], name: &[u8]) -> Option<&'h [u8]> {
    let at = response_field(head, name)?;
    let len = head[at..]
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(head.len() - at);
    Some(&head[at..at + len])
}

fn decimal(n: usize, buf: &mut [u8; 20]) -> &[u8] {
    crate::text::decimal(n as u64, buf)
}

/// The parts of an `http[s]://host[:port]/path` URI a request needs.
struct Target<'a> {
    /// `https://`: TLS over the connection.
    tls: bool,
    /// `host[:port]` as written: the `Host` header's value.
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

/// A read or write error as a webclient error number.
fn io_error(slot: &AbortSlot, e: &io::Error) -> c_int {
    if slot.is_aborted() {
        return -WEBCLIENT_DISCONNECT;
    }
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => -WEBCLIENT_TIMEOUT,
        _ => -WEBCLIENT_DISCONNECT,
    }
}

/// One read from the socket: Ok(0) is the server's end of stream.
fn sock_read(slot: &AbortSlot, conn: &mut Option<Conn>, buf: &mut [u8]) -> Result<usize, c_int> {
    loop {
        if slot.is_aborted() {
            return Err(-WEBCLIENT_DISCONNECT);
        }
        let Some(c) = conn.as_mut() else {
            return Err(-WEBCLIENT_DISCONNECT);
        };
        match c.read(buf) {
            // An abort shows up as end of stream: it must not pass for the
            // end of a close-delimited body.
            Ok(0) if slot.is_aborted() => return Err(-WEBCLIENT_DISCONNECT),
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(slot, &e)),
        }
    }
}

/// One step of the chunk framing; `Ok(None)` when the body is complete.
fn chunk_step(state: Chunk, b: u8) -> Result<Option<Chunk>, ()> {
    let next = match state {
        Chunk::Size { value, digits, ext } => match b {
            b'\n' if digits == 0 => return Err(()),
            b'\n' if value == 0 => Chunk::Trailer { empty: true },
            b'\n' => Chunk::Data { left: value },
            b'\r' => state,
            _ if ext => state,
            b';' | b' ' | b'\t' => Chunk::Size {
                value,
                digits,
                ext: true,
            },
            _ => {
                let d = (b as char).to_digit(16).ok_or(())?;
                // 16 hex digits would overflow u64.
                if digits >= 15 {
                    return Err(());
                }
                Chunk::Size {
                    value: value * 16 + d as u64,
                    digits: digits + 1,
                    ext,
                }
            }
        },
        Chunk::DataEnd => match b {
            b'\r' => state,
            b'\n' => Chunk::Size {
                value: 0,
                digits: 0,
                ext: false,
            },
            _ => return Err(()),
        },
        Chunk::Trailer { empty } => match b {
            b'\r' => state,
            b'\n' if empty => return Ok(None),
            b'\n' => Chunk::Trailer { empty: true },
            _ => Chunk::Trailer { empty: false },
        },
        // Data is copied by the read path, never stepped through.
        Chunk::Data { .. } => return Err(()),
    };
    Ok(Some(next))
}

impl Inner {
    fn new(head: Vec<u8>, head_limit: usize) -> Self {
        Inner {
            head,
            head_limit,
            head_is_response: false,
            timeout: Some(DEFAULT_TIMEOUT),
            conn: None,
            status: 0,
            content_length: -1,
            body: Body::Idle,
            rx: [0; RX_BUFSZ],
            rx_pos: 0,
            rx_end: 0,
        }
    }

    /// Close the socket (unregistered first, see `AbortSlot::fd`) and drop
    /// whatever was read ahead.
    fn disconnect(&mut self, slot: &AbortSlot) {
        if self.conn.is_some() {
            slot.unregister();
            self.conn = None;
        }
        self.rx_pos = 0;
        self.rx_end = 0;
    }

    /// Give up on the connection unless the error is a timeout, after which
    /// the caller may try again.
    fn fail(&mut self, slot: &AbortSlot, rc: c_int) -> c_int {
        if rc != -WEBCLIENT_TIMEOUT {
            self.disconnect(slot);
        }
        rc
    }

    fn finish_body(&mut self, slot: &AbortSlot) {
        self.body = Body::Done;
        self.disconnect(slot);
    }

    /// The next byte of the response, from the read-ahead buffer or the
    /// socket; `Ok(None)` at the server's end of stream.
    fn next_byte(&mut self, slot: &AbortSlot) -> Result<Option<u8>, c_int> {
        if self.rx_pos == self.rx_end {
            self.rx_pos = 0;
            self.rx_end = 0;
            match sock_read(slot, &mut self.conn, &mut self.rx) {
                Ok(0) => return Ok(None),
                Ok(n) => self.rx_end = n,
                Err(rc) => return Err(self.fail(slot, rc)),
            }
        }
        let b = self.rx[self.rx_pos];
        self.rx_pos += 1;
        Ok(Some(b))
    }

    /// Body bytes into `out`: what was read ahead first, else one socket
    /// read straight into the caller's buffer.
    fn recv_body(&mut self, slot: &AbortSlot, out: &mut [u8]) -> Result<usize, c_int> {
        if self.rx_pos < self.rx_end {
            let n = out.len().min(self.rx_end - self.rx_pos);
            out[..n].copy_from_slice(&self.rx[self.rx_pos..self.rx_pos + n]);
            self.rx_pos += n;
            return Ok(n);
        }
        sock_read(slot, &mut self.conn, out).map_err(|rc| self.fail(slot, rc))
    }

    /// Forget the previous request's connection and response.
    fn reset_response(&mut self, slot: &AbortSlot) {
        self.disconnect(slot);
        self.status = 0;
        self.content_length = -1;
        self.body = Body::Idle;
    }

    /// Turn the caller's header lines into the whole request head, in place.
    /// Returns where the caller's lines now sit (for `restore_user_lines`).
    fn build_request_head(
        &mut self,
        method: &[u8],
        target: &Target<'_>,
        body_len: Option<usize>,
    ) -> Result<(usize, usize), c_int> {
        if self.head_is_response {
            // The caller added nothing since the last response.
            self.head.clear();
            self.head_is_response = false;
        }
        let user_len = self.head.len();
        let user = &self.head[..];
        let host = !request_has_field(user, b"Host");
        let agent = !request_has_field(user, b"User-Agent");
        let accept = !request_has_field(user, b"Accept");
        let mut digits = [0u8; 20];
        let length = match body_len {
            Some(n) if !request_has_field(user, b"Content-Length") => Some(decimal(n, &mut digits)),
            _ => None,
        };
        const USER_AGENT: &[u8] = b"User-Agent: RT-Thread HTTP Agent\r\n";
        const ACCEPT: &[u8] = b"Accept: */*\r\n";
        let line_len = method.len() + 1 + target.path.len() + b" HTTP/1.1\r\n".len();
        let mut extra = length.map_or(0, |d| b"Content-Length: \r\n".len() + d.len());
        if host {
            extra += b"Host: \r\n".len() + target.authority.len();
        }
        if agent {
            extra += USER_AGENT.len();
        }
        if accept {
            extra += ACCEPT.len();
        }
        if line_len + user_len + extra + 2 > self.head_limit {
            return Err(-WEBCLIENT_NOBUFFER);
        }
        // All within the capacity reserved at creation: nothing below
        // reallocates.
        self.head.resize(line_len + user_len, 0);
        self.head.copy_within(0..user_len, line_len);
        let mut at = 0;
        for part in [method, b" ", target.path, b" HTTP/1.1\r\n"] {
            self.head[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        if host {
            self.head.extend_from_slice(b"Host: ");
            self.head.extend_from_slice(target.authority);
            self.head.extend_from_slice(b"\r\n");
        }
        if agent {
            self.head.extend_from_slice(USER_AGENT);
        }
        if accept {
            self.head.extend_from_slice(ACCEPT);
        }
        if let Some(d) = length {
            self.head.extend_from_slice(b"Content-Length: ");
            self.head.extend_from_slice(d);
            self.head.extend_from_slice(b"\r\n");
        }
        self.head.extend_from_slice(b"\r\n");
        Ok((line_len, user_len))
    }

    /// Undo `build_request_head` after a failed request, so that the
    /// caller's header lines are there for a retry (as in the package, where
    /// a failed connect leaves them untouched).
    fn restore_user_lines(&mut self, (at, len): (usize, usize)) {
        self.head.copy_within(at..at + len, 0);
        self.head.truncate(len);
    }

    /// Write all of `data` (the package's `webclient_write`): the count
    /// written, or a negative error when nothing could be written.
    fn write_all(&mut self, slot: &AbortSlot, data: &[u8]) -> c_int {
        let data = &data[..data.len().min(c_int::MAX as usize)];
        let mut done = 0;
        while done < data.len() {
            if slot.is_aborted() {
                return -WEBCLIENT_DISCONNECT;
            }
            let Some(c) = self.conn.as_mut() else {
                return if done > 0 {
                    done as c_int
                } else {
                    -WEBCLIENT_DISCONNECT
                };
            };
            match c.write(&data[done..]) {
                Ok(0) => {
                    self.disconnect(slot);
                    return if done > 0 {
                        done as c_int
                    } else {
                        -WEBCLIENT_DISCONNECT
                    };
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let rc = self.fail(slot, io_error(slot, &e));
                    return if done > 0 && !slot.is_aborted() {
                        done as c_int
                    } else {
                        rc
                    };
                }
            }
        }
        done as c_int
    }

    /// Connect and send the request head: `WEBCLIENT_OK` or an error.
    fn send_request(
        &mut self,
        slot: &AbortSlot,
        method: &[u8],
        uri: &[u8],
        body_len: Option<usize>,
    ) -> c_int {
        if slot.is_aborted() {
            return -WEBCLIENT_DISCONNECT;
        }
        let target = match parse_uri(uri) {
            Ok(t) => t,
            Err(rc) => return rc,
        };
        self.reset_response(slot);
        let user = match self.build_request_head(method, &target, body_len) {
            Ok(user) => user,
            Err(rc) => return rc,
        };
        let rc = self.connect_and_send_head(slot, &target);
        if rc == WEBCLIENT_OK {
            // Sent: the response head will take the buffer.
            self.head.clear();
        } else {
            self.restore_user_lines(user);
        }
        rc
    }

    fn connect_and_send_head(&mut self, slot: &AbortSlot, target: &Target<'_>) -> c_int {
        let tls = match target.tls.then(|| tls_session(target)).transpose() {
            Ok(tls) => tls,
            Err(rc) => return rc,
        };
        let sock = match connect(slot, target, self.timeout) {
            Ok(s) => s,
            Err(rc) => return rc,
        };
        if !slot.register(sock.as_raw_fd()) {
            return -WEBCLIENT_DISCONNECT;
        }
        // Registered before the handshake, so that an abort cuts that short
        // too.
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
                // Unregistered before the socket closes (see AbortSlot::fd).
                self.disconnect(slot);
                return rc;
            }
        }
        // Taken out for the write, which needs the whole session; an empty
        // Vec stands in without allocating.
        let head = core::mem::take(&mut self.head);
        let n = self.write_all(slot, &head);
        let complete = n >= 0 && n as usize == head.len();
        self.head = head;
        if complete {
            return WEBCLIENT_OK;
        }
        // Even after a timeout: half a head leaves nothing to resume.
        self.disconnect(slot);
        if n < 0 {
            n
        } else {
            -WEBCLIENT_DISCONNECT
        }
    }

    /// Read one response head into the head buffer as NUL-terminated lines.
    fn read_head(&mut self, slot: &AbortSlot) -> Result<(), c_int> {
        self.head.clear();
        self.head_is_response = true;
        let mut line_start = 0;
        loop {
            let b = match self.next_byte(slot)? {
                Some(b) => b,
                None => return Err(self.fail(slot, -WEBCLIENT_DISCONNECT)),
            };
            if b != b'\n' {
                // Keep a byte free for the line's NUL.
                if self.head.len() + 1 >= self.head_limit {
                    return Err(self.fail(slot, -WEBCLIENT_NOMEM));
                }
                self.head.push(b);
                continue;
            }
            let mut end = self.head.len();
            while end > line_start && matches!(self.head[end - 1], b'\r' | b' ' | b'\t') {
                end -= 1;
            }
            self.head.truncate(end);
            if end == line_start {
                if line_start == 0 {
                    // Stray blank lines before the status line.
                    continue;
                }
                return Ok(());
            }
            self.head.push(0);
            line_start = self.head.len();
        }
    }

    /// Read response heads (skipping interim 1xx ones), set up body
    /// decoding; the HTTP status or a negative error.
    fn handle_response(&mut self, slot: &AbortSlot) -> c_int {
        if slot.is_aborted() {
            return -WEBCLIENT_DISCONNECT;
        }
        if self.conn.is_none() {
            return -WEBCLIENT_DISCONNECT;
        }
        self.body = Body::Idle;
        self.content_length = -1;
        let status = loop {
            if let Err(rc) = self.read_head(slot) {
                // Even after a timeout: a half-read head cannot be resumed.
                self.disconnect(slot);
                return rc;
            }
            let line = self.head.split(|&b| b == 0).next().unwrap_or(&[]);
            let status = match line.strip_prefix(b"HTTP/") {
                Some(rest) => {
                    let code = rest.split(|&b| b == b' ').nth(1).unwrap_or(&[]);
                    match code {
                        [a, b, c] if [a, b, c].iter().all(|d| d.is_ascii_digit()) => {
                            (*a - b'0') as c_int * 100
                                + (*b - b'0') as c_int * 10
                                + (*c - b'0') as c_int
                        }
                        _ => 0,
                    }
                }
                None => 0,
            };
            if status < 100 {
                return self.fail(slot, -WEBCLIENT_ERROR);
            }
            if status >= 200 || status == 101 {
                break status;
            }
        };
        self.status = status;
        let chunked = response_value(&self.head, b"Transfer-Encoding").is_some_and(|v| {
            // Chunked is the final coding when it is there at all.
            let n = v.len();
            n >= 7
                && v[n - 7..].eq_ignore_ascii_case(b"chunked")
                && (n == 7 || matches!(v[n - 8], b',' | b' ' | b'\t'))
        });
        let length = response_value(&self.head, b"Content-Length");
        self.body = if status == 204 || status == 304 || (100..200).contains(&status) {
            Body::Done
        } else if chunked {
            Body::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
                ext: false,
            })
        } else if let Some(v) = length {
            let parsed = core::str::from_utf8(v)
                .ok()
                .filter(|s| s.bytes().all(|b| b.is_ascii_digit()));
            let Some(n) = parsed.and_then(|s| s.parse::<u64>().ok()) else {
                return self.fail(slot, -WEBCLIENT_ERROR);
            };
            self.content_length = c_int::try_from(n).unwrap_or(-1);
            Body::Length { left: n }
        } else {
            Body::UntilClose
        };
        if matches!(self.body, Body::Done | Body::Length { left: 0 }) {
            self.finish_body(slot);
        }
        status
    }

    fn read(&mut self, slot: &AbortSlot, out: &mut [u8]) -> c_int {
        if slot.is_aborted() {
            return -WEBCLIENT_DISCONNECT;
        }
        let out_len = out.len().min(c_int::MAX as usize);
        let out = &mut out[..out_len];
        loop {
            match self.body {
                Body::Done => return 0,
                Body::Idle => {
                    return if self.conn.is_some() {
                        -WEBCLIENT_ERROR
                    } else {
                        -WEBCLIENT_DISCONNECT
                    };
                }
                Body::Length { left } => {
                    let want = out.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    return match self.recv_body(slot, &mut out[..want]) {
                        Ok(0) => self.fail(slot, -WEBCLIENT_DISCONNECT),
                        Ok(n) => {
                            self.body = Body::Length {
                                left: left - n as u64,
                            };
                            if left == n as u64 {
                                self.finish_body(slot);
                            }
                            n as c_int
                        }
                        Err(rc) => rc,
                    };
                }
                Body::UntilClose => {
                    return match self.recv_body(slot, out) {
                        Ok(0) => {
                            self.finish_body(slot);
                            0
                        }
                        Ok(n) => n as c_int,
                        Err(rc) => rc,
                    };
                }
                Body::Chunked(Chunk::Data { left }) => {
                    let want = out.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    return match self.recv_body(slot, &mut out[..want]) {
                        Ok(0) => self.fail(slot, -WEBCLIENT_DISCONNECT),
                        Ok(n) => {
                            let left = left - n as u64;
                            self.body = Body::Chunked(if left == 0 {
                                Chunk::DataEnd
                            } else {
                                Chunk::Data { left }
                            });
                            n as c_int
                        }
                        Err(rc) => rc,
                    };
                }
                Body::Chunked(state) => {
                    let b = match self.next_byte(slot) {
                        Ok(Some(b)) => b,
                        Ok(None) => return self.fail(slot, -WEBCLIENT_DISCONNECT),
                        Err(rc) => return rc,
                    };
                    match chunk_step(state, b) {
                        Ok(Some(next)) => self.body = Body::Chunked(next),
                        Ok(None) => self.finish_body(slot),
                        Err(()) => return self.fail(slot, -WEBCLIENT_ERROR),
                    }
                }
            }
        }
    }
}

// ---- the C API -------------------------------------------------------------

#[no_mangle]
pub extern "C" fn webclient_session_create(header_sz: usize) -> *mut webclient_session {
    // As on a board, where the package's calloc of 0 bytes fails.
    if header_sz == 0 {
        return core::ptr::null_mut();
    }
    let mut head = Vec::new();
    if head.try_reserve_exact(header_sz).is_err() {
        return core::ptr::null_mut();
    }
    try_box(HostSession {
        abort: AbortSlot {
            aborted: AtomicBool::new(false),
            fd: Mutex::new(-1),
        },
        inner: UnsafeCell::new(Inner::new(head, header_sz)),
    }) as *mut webclient_session
}

#[no_mangle]
pub extern "C" fn webclient_set_timeout(
    session: *mut webclient_session,
    millisecond: c_int,
) -> c_int {
    let Some((_, s)) = parts(session) else {
        return -WEBCLIENT_ERROR;
    };
    s.timeout = (millisecond > 0).then(|| Duration::from_millis(millisecond as u64));
    if let Some(c) = &s.conn {
        if c.apply_timeout(s.timeout).is_err() {
            return -WEBCLIENT_ERROR;
        }
    }
    WEBCLIENT_OK
}

/// The Rust half of `webclient_header_fields_add` (host/port/webclient_port.c
/// formats the line): append `len` bytes to the request header lines.
/// Returns `len`, or `-WEBCLIENT_ERROR` (buffer unchanged) when the lines
/// would no longer fit in `header_sz` with a byte to spare, as the package
/// requires.
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
    if s.head_is_response {
        // A new request's headers: the previous response head goes.
        s.head.clear();
        s.head_is_response = false;
    }
    if len >= s.head_limit.saturating_sub(s.head.len()) || len > c_int::MAX as usize {
        return -WEBCLIENT_ERROR;
    }
    if len > 0 {
        // SAFETY: `len` readable bytes (the C half's contract).
        let bytes = unsafe { core::slice::from_raw_parts(text as *const u8, len) };
        // Within the reserved capacity (checked above): no reallocation.
        s.head.extend_from_slice(bytes);
    }
    len as c_int
}

#[no_mangle]
pub extern "C" fn webclient_header_fields_get(
    session: *mut webclient_session,
    fields: *const c_char,
) -> *const c_char {
    let Some((_, s)) = parts(session) else {
        return core::ptr::null();
    };
    if fields.is_null() || !s.head_is_response {
        return core::ptr::null();
    }
    // SAFETY: NUL-terminated (caller's contract).
    let name = unsafe { CStr::from_ptr(fields) }.to_bytes();
    match response_field(&s.head, name) {
        // The value runs to its line's NUL; it stays valid until the next
        // request (or header line added) or webclient_close.
        Some(at) => s.head[at..].as_ptr() as *const c_char,
        None => core::ptr::null(),
    }
}

fn uri_bytes<'a>(uri: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: NUL-terminated (caller's contract).
    (!uri.is_null()).then(|| unsafe { CStr::from_ptr(uri) }.to_bytes())
}

#[no_mangle]
pub extern "C" fn webclient_get(session: *mut webclient_session, uri: *const c_char) -> c_int {
    let (Some((slot, s)), Some(uri)) = (parts(session), uri_bytes(uri)) else {
        return -WEBCLIENT_ERROR;
    };
    let mut rc = s.send_request(slot, b"GET", uri, None);
    if rc != WEBCLIENT_OK {
        return rc;
    }
    rc = s.handle_response(slot);
    for _ in 0..MAX_REDIRECTS {
        if rc != 301 && rc != 302 {
            break;
        }
        let Some(location) = response_value(&s.head, b"Location") else {
            break;
        };
        if !location.starts_with(b"http://") && !location.starts_with(b"https://") {
            // A relative redirect: the caller gets the status and the head.
            break;
        }
        // The head buffer is about to hold the next request.
        let mut next = Vec::new();
        if next.try_reserve_exact(location.len()).is_err() {
            return -WEBCLIENT_NOMEM;
        }
        next.extend_from_slice(location);
        s.head.clear();
        s.head_is_response = false;
        rc = s.send_request(slot, b"GET", &next, None);
        if rc != WEBCLIENT_OK {
            return rc;
        }
        rc = s.handle_response(slot);
    }
    rc
}

#[no_mangle]
pub extern "C" fn webclient_post(
    session: *mut webclient_session,
    uri: *const c_char,
    post_data: *const c_void,
    data_len: usize,
) -> c_int {
    let (Some((slot, s)), Some(uri)) = (parts(session), uri_bytes(uri)) else {
        return -WEBCLIENT_ERROR;
    };
    if post_data.is_null() {
        // Headers only: the caller writes the body and then calls
        // webclient_handle_response.
        return s.send_request(slot, b"POST", uri, None);
    }
    if data_len == 0 {
        return -WEBCLIENT_ERROR;
    }
    let rc = s.send_request(slot, b"POST", uri, Some(data_len));
    if rc != WEBCLIENT_OK {
        return rc;
    }
    // SAFETY: `data_len` readable bytes (caller's contract).
    let body = unsafe { core::slice::from_raw_parts(post_data as *const u8, data_len) };
    let mut sent = 0;
    while sent < body.len() {
        let n = s.write_all(slot, &body[sent..]);
        if n <= 0 {
            // A request cut short cannot be resumed, not even after a
            // timeout.
            s.disconnect(slot);
            return if n < 0 { n } else { -WEBCLIENT_DISCONNECT };
        }
        sent += n as usize;
    }
    s.handle_response(slot)
}

#[no_mangle]
pub extern "C" fn webclient_write(
    session: *mut webclient_session,
    buffer: *const c_void,
    size: usize,
) -> c_int {
    let Some((slot, s)) = parts(session) else {
        return -WEBCLIENT_ERROR;
    };
    if size == 0 {
        return 0;
    }
    if buffer.is_null() {
        return -WEBCLIENT_ERROR;
    }
    // SAFETY: `size` readable bytes (caller's contract).
    let data = unsafe { core::slice::from_raw_parts(buffer as *const u8, size) };
    s.write_all(slot, data)
}

#[no_mangle]
pub extern "C" fn webclient_read(
    session: *mut webclient_session,
    buffer: *mut c_void,
    size: usize,
) -> c_int {
    let Some((slot, s)) = parts(session) else {
        return -WEBCLIENT_ERROR;
    };
    if size == 0 {
        return 0;
    }
    if buffer.is_null() {
        return -WEBCLIENT_ERROR;
    }
    // SAFETY: `size` writable bytes (caller's contract).
    let out = unsafe { core::slice::from_raw_parts_mut(buffer as *mut u8, size) };
    s.read(slot, out)
}

#[no_mangle]
pub extern "C" fn webclient_handle_response(session: *mut webclient_session) -> c_int {
    let Some((slot, s)) = parts(session) else {
        return -WEBCLIENT_ERROR;
    };
    s.handle_response(slot)
}

#[no_mangle]
pub extern "C" fn webclient_resp_status_get(session: *mut webclient_session) -> c_int {
    parts(session).map_or(-WEBCLIENT_ERROR, |(_, s)| s.status)
}

/// The response's Content-Length, or -1 when chunked, close-delimited,
/// unknown or too large for an int.
#[no_mangle]
pub extern "C" fn webclient_content_length_get(session: *mut webclient_session) -> c_int {
    parts(session).map_or(-1, |(_, s)| s.content_length)
}

#[no_mangle]
pub extern "C" fn webclient_close(session: *mut webclient_session) -> c_int {
    let Some((slot, s)) = parts(session) else {
        return WEBCLIENT_OK;
    };
    s.disconnect(slot);
    // SAFETY: made by try_box in webclient_session_create; the caller hands
    // it back for good (and no abort may run concurrently, see the module
    // documentation).
    unsafe { free_box(session as *mut HostSession) };
    WEBCLIENT_OK
}

/// Abort `session` from any thread: shut its socket down so that a blocked
/// `webclient_read`/`webclient_write`/`webclient_handle_response` returns
/// `-WEBCLIENT_DISCONNECT` at once, and make every later call on it fail.
/// The owner still calls `webclient_close`. The session must stay alive
/// during this call (see the module documentation). Returns 0, or
/// `-WEBCLIENT_ERROR` for NULL.
#[no_mangle]
pub extern "C" fn rt_host_webclient_abort(session: *mut webclient_session) -> c_int {
    if session.is_null() {
        return -WEBCLIENT_ERROR;
    }
    // SAFETY: live (caller's contract); only the Sync abort slot is used,
    // never the owner's state.
    let slot = unsafe { &(*(session as *const HostSession)).abort };
    slot.abort();
    WEBCLIENT_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(input: &[u8]) -> Result<Vec<u8>, ()> {
        let mut state = Chunk::Size {
            value: 0,
            digits: 0,
            ext: false,
        };
        let mut out = Vec::new();
        let mut i = 0;
        while i < input.len() {
            if let Chunk::Data { left } = state {
                let n = (left as usize).min(input.len() - i);
                out.extend_from_slice(&input[i..i + n]);
                i += n;
                state = if n as u64 == left {
                    Chunk::DataEnd
                } else {
                    Chunk::Data {
                        left: left - n as u64,
                    }
                };
                continue;
            }
            match chunk_step(state, input[i])? {
                Some(next) => state = next,
                None => return Ok(out),
            }
            i += 1;
        }
        Err(())
    }

    #[test]
    fn chunk_framing() {
        assert_eq!(feed(b"5\r\nhello\r\n0\r\n\r\n").unwrap(), b"hello");
        assert_eq!(
            feed(b"3;a=b\r\nabc\r\nA \r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n").unwrap(),
            b"abc0123456789"
        );
        assert_eq!(feed(b"2\nhi\n0\n\n").unwrap(), b"hi");
        assert!(feed(b"\r\n").is_err());
        assert!(feed(b"zz\r\n").is_err());
        assert!(feed(b"2\r\nhiX").is_err());
        assert!(feed(b"1000000000000000\r\n").is_err());
    }

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
    fn fields() {
        let head = b"HTTP/1.1 200 OK\0Content-Type: text/plain\0content-length : 5\0";
        assert_eq!(
            response_value(head, b"CONTENT-TYPE"),
            Some(&b"text/plain"[..])
        );
        assert_eq!(response_value(head, b"Content-Length"), Some(&b"5"[..]));
        assert_eq!(response_value(head, b"Content"), None);
        assert!(request_has_field(
            b"Authorization: x\r\ncontent-length: 3\r\n",
            b"Content-Length"
        ));
        assert!(!request_has_field(
            b"X-Content-Length: 3\r\n",
            b"Content-Length"
        ));
    }
}
