//! HTTPS for the host port: the rustls client session under a `Conn::Tls`
//! (where a board uses the package's mbedTLS option), the shared client
//! configuration and its root store, and the one-line reasons a handshake
//! failed.
//!
//! Every call here does at most what a plain socket call would, so the
//! socket layer in `conn.rs` maps errors the same way for TCP and TLS.

use super::tls_glue::{self as tls_watch, Budget, TlsFailure};
use super::uri::Target;
use super::{CA_FILE_ENV, DEFAULT_TIMEOUT_SECS};
use crate::host::heap;
use crate::rtt::webclient::WEBCLIENT_ERROR;
use core::ffi::c_int;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A TLS client session over its socket.
///
/// rustls's `StreamOwned` is not used: its `write` swallows socket errors
/// and may block on a read after a blocked write. Here every call does at
/// most what a plain socket call would, so errors map the same way: a
/// socket read or write timeout comes out as `WouldBlock` with nothing
/// lost (received records stay buffered in rustls; encrypted bytes not yet
/// sent stay queued and go first on the next call).
pub(super) struct Tls {
    pub(super) conn: ClientConnection,
    pub(super) sock: TcpStream,
    /// The records coming in, followed for the board's input buffer.
    pub(super) framing: RecordFraming,
}

/// How often a stalled handshake looks at the request's budget (the
/// board's glue polls as often: `AGENT_TLS_POLL_MS`).
const HANDSHAKE_POLL: Duration = Duration::from_millis(200);

/// What the board's mbedTLS may take in one record besides its plaintext
/// (`MBEDTLS_SSL_IN_BUFFER_LEN` less `MBEDTLS_SSL_IN_CONTENT_LEN`: the
/// header, IV, MAC and padding room; mbedTLS 2.28, `ssl_internal.h`).
const RECORD_OVERHEAD: usize = 5 + 16 + 48 + 256;

/// The board's `MBEDTLS_SSL_IN_CONTENT_LEN` the host models: 16384 (the
/// configuration the docs recommend) unless a test sets another.
static RECORD_LIMIT: AtomicUsize = AtomicUsize::new(16384);

/// Model a board whose mbedTLS takes records of at most `bytes` of
/// plaintext (`MBEDTLS_SSL_IN_CONTENT_LEN`); 16384 is TLS's own limit.
pub fn set_record_limit(bytes: usize) {
    RECORD_LIMIT.store(bytes, Ordering::SeqCst);
}

/// The TLS record framing of the bytes coming in, followed across reads.
#[derive(Default)]
pub(super) struct RecordFraming {
    header: [u8; 5],
    have: usize,
    body_left: usize,
}

impl RecordFraming {
    /// Follow `bytes`; the length of the first record whose body is
    /// larger than `max_body`, if any.
    pub(super) fn feed(&mut self, mut bytes: &[u8], max_body: usize) -> Result<(), usize> {
        while !bytes.is_empty() {
            if self.body_left > 0 {
                let n = self.body_left.min(bytes.len());
                self.body_left -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (self.header.len() - self.have).min(bytes.len());
            self.header[self.have..self.have + n].copy_from_slice(&bytes[..n]);
            self.have += n;
            bytes = &bytes[n..];
            if self.have == self.header.len() {
                self.have = 0;
                let len = usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
                if len > max_body {
                    return Err(len);
                }
                self.body_left = len;
            }
        }
        Ok(())
    }
}

/// The socket as rustls reads it, with the board's record limit: a
/// record mbedTLS could not hold fails the read, as
/// `MBEDTLS_ERR_SSL_BAD_INPUT_DATA` does on a board, and is reported.
struct RecordGate<'a> {
    sock: &'a mut TcpStream,
    framing: &'a mut RecordFraming,
}

impl Read for RecordGate<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.sock.read(buf)?;
        let max = RECORD_LIMIT.load(Ordering::SeqCst) + RECORD_OVERHEAD;
        if let Err(len) = self.framing.feed(&buf[..n], max) {
            tls_watch::note(TlsFailure::RecordTooLarge, MBEDTLS_ERR_SSL_BAD_INPUT_DATA);
            crate::host_log_e!(
                "webclient: a TLS record of {len} bytes does not fit mbedTLS's input buffer ({} bytes of plaintext)",
                max - RECORD_OVERHEAD
            );
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "TLS record too large",
            ));
        }
        Ok(n)
    }
}

/// mbedTLS's code for a record larger than its input buffer.
const MBEDTLS_ERR_SSL_BAD_INPUT_DATA: i32 = -0x7100;

/// The reason the board's glue would report for a failed handshake.
fn failure_of(e: &io::Error) -> TlsFailure {
    use rustls::{CertificateError as C, Error as E};
    if e.kind() == io::ErrorKind::UnexpectedEof || e.kind() == io::ErrorKind::ConnectionReset {
        return TlsFailure::ClosedInHandshake;
    }
    match e.get_ref().and_then(|inner| inner.downcast_ref::<E>()) {
        Some(E::InvalidCertificate(c)) => match c {
            C::UnknownIssuer => TlsFailure::UntrustedCa,
            C::NotValidForName | C::NotValidForNameContext { .. } => TlsFailure::NameMismatch,
            C::Expired | C::ExpiredContext { .. } => TlsFailure::Expired,
            C::NotValidYet | C::NotValidYetContext { .. } => TlsFailure::NotYetValid,
            _ => TlsFailure::UntrustedCa,
        },
        _ => TlsFailure::Handshake,
    }
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

    /// Run the handshake to its end, as the board's TLS glue does
    /// (`glue/agent_tls.c`): the socket is read in polls of
    /// [`HANDSHAKE_POLL`], and between two polls the request on this
    /// thread says how long it may still wait ([`tls_watch::budget`]):
    /// cancelled, past its deadline, or silent for its read timeout (a
    /// thread without a request of the library's: webclient's default
    /// timeout), the handshake stops and says why. `aborted` is the host's
    /// own abort. The socket's timeouts are the session's again afterwards.
    pub(super) fn handshake(&mut self, aborted: &dyn Fn() -> bool) -> io::Result<()> {
        let before = self.sock.read_timeout()?;
        self.sock.set_read_timeout(Some(HANDSHAKE_POLL))?;
        let result = self.handshake_polled(aborted);
        self.sock.set_read_timeout(before)?;
        result
    }

    fn handshake_polled(&mut self, aborted: &dyn Fn() -> bool) -> io::Result<()> {
        let mut quiet_since = std::time::Instant::now();
        while self.conn.is_handshaking() {
            match self.conn.complete_io(&mut self.sock) {
                // complete_io returns while handshaking only on an error;
                // no progress at all would otherwise spin here.
                Ok((0, 0)) if self.conn.is_handshaking() => {
                    tls_watch::note(TlsFailure::ClosedInHandshake, 0);
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                Ok((read, _)) => {
                    if read > 0 {
                        quiet_since = std::time::Instant::now();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if aborted() {
                        return Err(e);
                    }
                    let quiet = quiet_since.elapsed();
                    let stop = match tls_watch::budget() {
                        Budget::Unwatched => (quiet >= Duration::from_secs(DEFAULT_TIMEOUT_SECS))
                            .then_some(TlsFailure::HandshakeSilent),
                        Budget::Cancelled => Some(TlsFailure::Cancelled),
                        Budget::Left { left_ms: 0, .. } => Some(TlsFailure::Deadline),
                        Budget::Left { silence_ms, .. } => (quiet
                            >= Duration::from_millis(u64::from(silence_ms)))
                        .then_some(TlsFailure::HandshakeSilent),
                    };
                    if let Some(why) = stop {
                        tls_watch::note(why, 0);
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                }
                Err(e) => {
                    tls_watch::note(failure_of(&e), 0);
                    return Err(e);
                }
            }
        }
        // A last flight (the client's Finished) may still be queued.
        self.flush()
    }

    /// Plaintext into `buf`: what is buffered, else socket reads until a
    /// whole record has come in. Ok(0) at the end of the stream, with or
    /// without the server's `close_notify`.
    pub(super) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
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
            let mut gate = RecordGate {
                sock: &mut self.sock,
                framing: &mut self.framing,
            };
            match self.conn.read_tls(&mut gate) {
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
    pub(super) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
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
                    heap::exclude_this_thread(true);
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
                    crate::host_log_e!("webclient: no usable certificate in {CA_FILE_ENV}={shown}");
                }
            }
            Err(e) => crate::host_log_e!("webclient: cannot read {CA_FILE_ENV}={shown}: {e}"),
        }
    }
    if roots.is_empty() {
        crate::host_log_e!(
            "webclient: no trusted root certificates: install ca-certificates or set {CA_FILE_ENV}"
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config =
        match ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions() {
            Ok(b) => b.with_root_certificates(roots).with_no_client_auth(),
            Err(e) => {
                crate::host_log_e!("webclient: TLS set-up failed: {e}");
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
pub(super) fn handshake_failure(e: &io::Error) -> &'static str {
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
pub(super) fn tls_session(target: &Target<'_>) -> Result<ClientConnection, c_int> {
    let config = tls_config().ok_or(-WEBCLIENT_ERROR)?;
    let name = ServerName::try_from(target.host.to_owned()).map_err(|_| {
        crate::host_log_e!("webclient: not a valid TLS server name: {}", target.host);
        -WEBCLIENT_ERROR
    })?;
    ClientConnection::new(config, name).map_err(|e| {
        crate::host_log_e!("webclient: TLS set-up failed: {e}");
        -WEBCLIENT_ERROR
    })
}

#[cfg(test)]
mod tests {
    use super::RecordFraming;

    fn record(len: usize) -> Vec<u8> {
        let mut r = vec![23, 3, 3, (len >> 8) as u8, len as u8];
        r.resize(5 + len, 0xAB);
        r
    }

    #[test]
    fn records_are_followed_across_any_split() {
        let mut stream = record(100);
        stream.extend(record(16408));
        stream.extend(record(3));
        for piece in [1, 2, 5, 7, 1000, stream.len()] {
            let mut f = RecordFraming::default();
            for chunk in stream.chunks(piece) {
                assert_eq!(f.feed(chunk, 16384 + 325), Ok(()), "pieces of {piece}");
            }
        }
    }

    #[test]
    fn a_record_over_the_limit_is_caught_at_its_header() {
        let mut stream = record(10);
        stream.extend(record(12305));
        for piece in [1, 3, 16, stream.len()] {
            let mut f = RecordFraming::default();
            let got = stream
                .chunks(piece)
                .map(|c| f.feed(c, 6144 + 325))
                .find(|r| r.is_err());
            assert_eq!(got, Some(Err(12305)), "pieces of {piece}");
        }
        // Exactly at the limit is fine.
        let mut f = RecordFraming::default();
        assert_eq!(f.feed(&record(6144 + 325), 6144 + 325), Ok(()));
    }
}
