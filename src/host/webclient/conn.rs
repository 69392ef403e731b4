//! The connection under a session: TCP (or TLS, see `tls.rs`) with the
//! socket timeouts, the package's `webclient_connect`, lwIP-like `recv`/
//! `send` (errno included), the package's `webclient_write`, and the abort
//! slot, the one part of a session another thread may touch.

use super::cstr::heap_cstr;
use super::session::Inner;
use super::tls::{handshake_failure, tls_session, Tls};
use super::tls_glue::{self as tls_watch, Budget, TlsFailure};
use super::uri::parse_uri;
use super::DEFAULT_TIMEOUT_SECS;
use crate::host::heap;
use crate::host::ipc::try_box;
use crate::rtt::webclient::{
    WEBCLIENT_CONNECT_FAILED, WEBCLIENT_DISCONNECT, WEBCLIENT_ERROR, WEBCLIENT_NOMEM,
    WEBCLIENT_NOSOCKET, WEBCLIENT_OK,
};
use core::ffi::{c_char, c_int};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

// ---- transport -------------------------------------------------------------

/// The byte stream under a session: plain TCP, or TLS over TCP. Either
/// way the socket's own timeouts bound every blocking call, and the abort
/// shuts that socket down.
pub(super) enum Conn {
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

    /// A plain socket read allocates nothing; rustls may (its record
    /// buffers), infallibly, so it runs outside fault injection (see
    /// `Inner::connect`).
    pub(super) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Tls(t) => heap::without_injection(|| t.read(buf)),
        }
    }

    pub(super) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Tls(t) => heap::without_injection(|| t.write(buf)),
        }
    }

    pub(super) fn apply_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.tcp().set_read_timeout(timeout)?;
        self.tcp().set_write_timeout(timeout)
    }
}

/// A socket error as lwIP's errno.
fn io_errno(e: &io::Error) -> c_int {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => libc::EAGAIN,
        _ => e.raw_os_error().unwrap_or(libc::ECONNRESET),
    }
}

/// Set the thread's libc errno too, so C code that looks at it after a
/// webclient call sees what it would see on lwIP.
fn set_errno(e: c_int) {
    // SAFETY: the calling thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

/// The addresses `getaddrinfo` resolved, freed when dropped.
///
/// The package resolves with `getaddrinfo` too (lwIP's, whose results come
/// from lwIP's own pools, not from `rt_malloc`); libc's allocates from
/// libc's heap, never from the accounting heap, so resolving cannot abort at
/// an injected (or real) out-of-memory in the heap: it fails like any other
/// resolver error. (std's `to_socket_addrs` would allocate through the
/// global allocator, i.e. `rt_malloc`, and abort the process there.)
struct Resolved(*mut libc::addrinfo);

impl Drop for Resolved {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: a list from a successful getaddrinfo, freed once.
            unsafe { libc::freeaddrinfo(self.0) };
        }
    }
}

impl Resolved {
    /// `getaddrinfo(host, port)` for TCP; `-WEBCLIENT_ERROR` when it fails.
    fn new(host: *const c_char, port: u16) -> Result<Resolved, c_int> {
        if host.is_null() {
            return Err(-WEBCLIENT_ERROR);
        }
        let mut digits = [0u8; 21];
        let service = crate::base::text::decimal_cstr(u64::from(port), &mut digits);
        // SAFETY: all-zero is a valid `addrinfo` (integers and NULL pointers).
        let mut hints: libc::addrinfo = unsafe { core::mem::zeroed() };
        hints.ai_family = libc::AF_UNSPEC;
        hints.ai_socktype = libc::SOCK_STREAM;
        hints.ai_protocol = libc::IPPROTO_TCP;
        let mut list: *mut libc::addrinfo = core::ptr::null_mut();
        // SAFETY: `host` and `service` are NUL-terminated strings that
        // outlive the call, `hints` is initialised and `list` writable.
        let rc = unsafe { libc::getaddrinfo(host, service.as_ptr(), &hints, &mut list) };
        if rc != 0 || list.is_null() {
            return Err(-WEBCLIENT_ERROR);
        }
        Ok(Resolved(list))
    }

    /// The addresses in order, as std's `SocketAddr` (no allocation).
    fn addrs(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        let mut at = self.0 as *const libc::addrinfo;
        core::iter::from_fn(move || {
            while !at.is_null() {
                // SAFETY: `at` is an entry of the live list owned by `self`.
                let ai = unsafe { &*at };
                at = ai.ai_next;
                if let Some(addr) = socket_addr(ai) {
                    return Some(addr);
                }
            }
            None
        })
    }
}

/// One `getaddrinfo` entry as a socket address (IPv4 or IPv6 only).
fn socket_addr(ai: &libc::addrinfo) -> Option<SocketAddr> {
    if ai.ai_addr.is_null() {
        return None;
    }
    let len = ai.ai_addrlen as usize;
    match ai.ai_family {
        libc::AF_INET if len >= core::mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: getaddrinfo says `ai_addr` holds a sockaddr_in of
            // `ai_addrlen` bytes (checked to be enough); read unaligned.
            let sin = unsafe { (ai.ai_addr as *const libc::sockaddr_in).read_unaligned() };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 if len >= core::mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above, a sockaddr_in6 of enough bytes.
            let sin6 = unsafe { (ai.ai_addr as *const libc::sockaddr_in6).read_unaligned() };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(sin6.sin6_addr.s6_addr),
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Resolve and connect, trying each address in turn within the timeout.
/// Nothing here allocates from the heap (std's connect and socket options
/// do not allocate; their errors are OS codes or static).
fn connect(
    slot: &AbortSlot,
    host: *const c_char,
    port: u16,
    timeout: Option<Duration>,
) -> Result<TcpStream, c_int> {
    let resolved = Resolved::new(host, port)?;
    let mut rc = -WEBCLIENT_ERROR;
    for addr in resolved.addrs() {
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

// ---- abort -----------------------------------------------------------------

/// The only part of a session another thread may touch.
pub(super) struct AbortSlot {
    /// Sticky: once set, every operation on the session fails.
    aborted: AtomicBool,
    /// The connected socket, or -1. The owner clears it (under the lock)
    /// before closing the socket, so an abort never shuts down a descriptor
    /// number that has already been reused.
    fd: Mutex<RawFd>,
}

impl AbortSlot {
    /// Not aborted, no socket.
    pub(super) fn new() -> Self {
        AbortSlot {
            aborted: AtomicBool::new(false),
            fd: Mutex::new(-1),
        }
    }

    pub(super) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RawFd> {
        self.fd.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn abort(&self) {
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

// ---- the package's socket calls --------------------------------------------

impl Inner {
    /// `closesocket(session->socket); session->socket = -1;`
    pub(super) fn close_socket(&mut self, slot: &AbortSlot) {
        if self.conn.is_some() {
            // Unregistered before the socket closes (see AbortSlot::fd).
            slot.unregister();
            self.conn = None;
        }
    }

    /// lwIP's `recv`: n > 0, 0 when the peer closed (errno `ENOTCONN`), -1
    /// with errno `EAGAIN` on a timeout or another errno on an error.
    pub(super) fn recv(&mut self, buf: &mut [u8]) -> c_int {
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
    pub(super) fn send(&mut self, buf: &[u8]) -> c_int {
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

    pub(super) fn timed_out(&self) -> bool {
        self.errno == libc::EAGAIN || self.errno == libc::EWOULDBLOCK
    }

    /// The package's `webclient_write`.
    pub(super) fn write(&mut self, slot: &AbortSlot, data: &[u8]) -> c_int {
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
    ///
    /// Out of memory fails as on a board, with an error and nothing left
    /// over: the host name and the request path (`web_strdup`) and the TLS
    /// session's block (mbedTLS's context) come from the heap and are
    /// checked; resolving and connecting allocate nothing from it. rustls
    /// allocates infallibly inside, so its work runs outside fault injection
    /// (counted in `used`, never failed on purpose): the TLS block below is
    /// the point where a TLS connect meets out-of-memory.
    pub(super) fn connect(&mut self, slot: &AbortSlot, uri: &[u8]) -> c_int {
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
            return -WEBCLIENT_NOMEM;
        }
        self.req_url = heap_cstr(target.path);
        if self.req_url.is_null() {
            return -WEBCLIENT_NOMEM;
        }
        let tls = match https
            .then(|| heap::without_injection(|| tls_session(&target)))
            .transpose()
        {
            Ok(tls) => tls,
            Err(rc) => return rc,
        };
        // The board's TLS glue connects within the request's deadline
        // (webclient's own plain connect keeps its 6 s default).
        let budget = https.then(tls_watch::budget);
        let connect_timeout = match budget {
            Some(Budget::Cancelled) | Some(Budget::Left { left_ms: 0, .. }) => {
                let why = if budget == Some(Budget::Cancelled) {
                    TlsFailure::Cancelled
                } else {
                    TlsFailure::Deadline
                };
                tls_watch::note(why, 0);
                return -WEBCLIENT_CONNECT_FAILED;
            }
            Some(Budget::Left { left_ms, .. }) => Duration::from_millis(u64::from(left_ms)),
            _ => Duration::from_secs(DEFAULT_TIMEOUT_SECS),
        };
        let sock = match connect(slot, self.host, target.port, Some(connect_timeout)) {
            Ok(s) => s,
            // The mbedTLS connect resolves too, and fails as a connect.
            Err(rc) if https && rc != -WEBCLIENT_DISCONNECT => {
                let late = matches!(tls_watch::budget(), Budget::Left { left_ms: 0, .. });
                tls_watch::note(
                    if late {
                        TlsFailure::Deadline
                    } else {
                        TlsFailure::Connect
                    },
                    0,
                );
                return -WEBCLIENT_CONNECT_FAILED;
            }
            Err(rc) => return rc,
        };
        if https {
            // The session's timeouts, as webclient sets them once connected.
            let t = Some(Duration::from_secs(DEFAULT_TIMEOUT_SECS));
            if sock.set_read_timeout(t).is_err() || sock.set_write_timeout(t).is_err() {
                return -WEBCLIENT_NOSOCKET;
            }
        }
        let conn = match tls {
            Some(conn) => {
                // Dropped (socket closed) on failure: not registered yet.
                let boxed = try_box(Tls {
                    conn,
                    sock,
                    framing: Default::default(),
                });
                if boxed.is_null() {
                    crate::host_log_e!("webclient: no memory for the TLS session");
                    return -WEBCLIENT_NOMEM;
                }
                // SAFETY: `try_box` allocated it with `Layout::new::<Tls>()`
                // through the global allocator and initialised it, exactly
                // as `Box` allocates, so the Box owns and frees it.
                Conn::Tls(unsafe { Box::from_raw(boxed) })
            }
            None => Conn::Tcp(sock),
        };
        if !slot.register(conn.tcp().as_raw_fd()) {
            return -WEBCLIENT_DISCONNECT;
        }
        self.conn = Some(conn);
        if let Some(Conn::Tls(t)) = self.conn.as_mut() {
            if let Err(e) = heap::without_injection(|| t.handshake(&|| slot.is_aborted())) {
                let rc = if slot.is_aborted() {
                    -WEBCLIENT_DISCONNECT
                } else {
                    // Host and port only: the path may carry a key.
                    crate::host_log_e!(
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
}
