//! HTTPS for the host port: the rustls client session under a `Conn::Tls`
//! (where a board uses the package's mbedTLS option), the shared client
//! configuration and its root store, and the one-line reasons a handshake
//! failed.
//!
//! Every call here does at most what a plain socket call would, so the
//! socket layer in `conn.rs` maps errors the same way for TCP and TLS.

use super::uri::Target;
use super::CA_FILE_ENV;
use crate::host::heap;
use crate::rtt::webclient::WEBCLIENT_ERROR;
use core::ffi::c_int;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, OnceLock};

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
    pub(super) fn handshake(&mut self) -> io::Result<()> {
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
