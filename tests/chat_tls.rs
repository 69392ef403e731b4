//! HTTPS under the request's rules, through `chat()` and the agent loop,
//! against a TLS front on 127.0.0.1 (rustls) in front of the scripted
//! server: the handshake ends by the request deadline and is cancelled by
//! cleanup, a silent or closing server and a bad certificate are named in
//! the error (and only the transient ones retried), and a record larger
//! than the board's mbedTLS input buffer fails once, saying so. The host
//! port models the board's TLS glue (`glue/agent_tls.c`) for all of it
//! (docs/host-port.md).
//!
//! Trust: a test CA made here with rcgen, named by `RTT_AGENT_CA_FILE`
//! before the first `https://` request of this process.

#[path = "support/test_ca.rs"]
mod test_ca;
use rtt_agent::abi::messages::TYPE_TEXT;
use rtt_agent::channels::debug::send_message;
use rtt_agent::host::heap;
use rtt_agent::host::webclient::{set_record_limit, CA_FILE_ENV};
use rtt_agent::runtime::agent_loop::cleanup_agent_entry;
use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::chat_call::chat_json;
use rtt_agent_testkit::llm_server::*;
use rustls::{ServerConfig, ServerConnection};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use test_ca::Ca;

const HI: &str = r#"[{"role":"user","content":"hi"}]"#;

/// The test CA, named by `RTT_AGENT_CA_FILE` before the first `https://`
/// request of this process.
fn pki() -> &'static Ca {
    static PKI: OnceLock<Ca> = OnceLock::new();
    PKI.get_or_init(|| {
        heap::exclude_this_thread(true);
        let ca = Ca::new("rtt-agent chat_tls CA");
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("chat_tls-ca-{}.pem", std::process::id()));
        std::fs::write(&path, ca.cert.pem()).unwrap();
        std::env::set_var(CA_FILE_ENV, &path);
        heap::exclude_this_thread(false);
        ca
    })
}

/// What the front does with a connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Mode {
    /// TLS, then the bytes both ways to the scripted server.
    Proxy = 0,
    /// Read the ClientHello, then never answer.
    Stall = 1,
    /// Read the ClientHello, then close.
    Close = 2,
    /// As Proxy, but the server's bytes go out in 12 KB records.
    LargeRecords = 3,
}

/// A TLS front on 127.0.0.1 in front of `upstream`.
struct Front {
    port: u16,
    mode: Arc<AtomicU8>,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Front {
    fn start(config: Arc<ServerConfig>, upstream: u16, mode: Mode) -> Front {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode_cell = Arc::new(AtomicU8::new(mode as u8));
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (m, a, s) = (mode_cell.clone(), accepted.clone(), stop.clone());
        let thread = thread::spawn(move || {
            heap::exclude_this_thread(true);
            let held: Mutex<Vec<TcpStream>> = Mutex::new(Vec::new());
            while !s.load(Ordering::SeqCst) {
                let Ok((sock, _)) = listener.accept() else {
                    thread::sleep(Duration::from_millis(10));
                    continue;
                };
                a.fetch_add(1, Ordering::SeqCst);
                sock.set_nonblocking(false).unwrap();
                let mode = m.load(Ordering::SeqCst);
                match mode {
                    1 | 2 => {
                        let mut sock = sock;
                        sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                        let mut hello = [0u8; 512];
                        let _ = sock.read(&mut hello);
                        if mode == 1 {
                            held.lock().unwrap().push(sock);
                        } else {
                            let _ = sock.shutdown(Shutdown::Both);
                        }
                    }
                    _ => {
                        let config = config.clone();
                        let stop = s.clone();
                        thread::spawn(move || {
                            heap::exclude_this_thread(true);
                            proxy(sock, config, upstream, mode == 3, &stop);
                        });
                    }
                }
            }
        });
        Front {
            port,
            mode: mode_cell,
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("https://localhost:{}/v1/chat/completions", self.port)
    }

    fn set_mode(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::SeqCst);
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One TLS connection relayed to `upstream` until either side closes.
fn proxy(
    sock: TcpStream,
    config: Arc<ServerConfig>,
    upstream: u16,
    large: bool,
    stop: &AtomicBool,
) {
    let mut tls = ServerConnection::new(config).unwrap();
    let mut sock = sock;
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    up.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    let deadline = Instant::now() + Duration::from_secs(20);
    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        // Client -> upstream.
        match tls.read_tls(&mut sock) {
            Ok(0) => return,
            Ok(_) => {
                if tls.process_new_packets().is_err() {
                    let _ = tls.write_tls(&mut sock);
                    return;
                }
                loop {
                    match tls.reader().read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => {
                            if up.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                        Err(_) => break,
                    }
                }
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return,
        }
        // Upstream -> client: in large records, whole answers at once.
        match up.read(&mut buf) {
            Ok(0) => {
                flush_plain(&mut tls, &mut pending, large);
                let _ = tls.complete_io(&mut sock);
                return;
            }
            Ok(n) => {
                pending.extend_from_slice(&buf[..n]);
                if !large {
                    flush_plain(&mut tls, &mut pending, false);
                }
            }
            Err(_) => flush_plain(&mut tls, &mut pending, large),
        }
        while tls.wants_write() {
            if tls.write_tls(&mut sock).is_err() {
                return;
            }
        }
    }
}

/// Hand what upstream sent to TLS: one record per 12 KB when `large`.
fn flush_plain(tls: &mut ServerConnection, pending: &mut Vec<u8>, large: bool) {
    let piece = if large {
        12 * 1024
    } else {
        pending.len().max(1)
    };
    for chunk in pending.chunks(piece) {
        let _ = tls.writer().write_all(chunk);
    }
    pending.clear();
}

fn configure(url: &str, retries: usize, silence_ms: usize, deadline_ms: usize) {
    let url = std::ffi::CString::new(url).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe {
        rtt_agent::runtime::config::agent_config_set(
            c"sk-tls".as_ptr(),
            c"m".as_ptr(),
            url.as_ptr(),
        )
    };
    set_overrides(Overrides {
        timeout_ms: Some(silence_ms),
        retries: Some(retries),
        retry_base_ms: Some(10),
        request_timeout_ms: Some(deadline_ms),
        ..Overrides::default()
    });
}

#[test]
fn the_handshake_is_bounded_and_its_failures_named() {
    let _serial = lock();
    let pki = pki();
    let server = uncounted_server_with(|_| ScriptedResponse::text(&["over ", "TLS"]));
    let front = Front::start(
        pki.server_valid(&["localhost"], 2020, 2090),
        server.port(),
        Mode::Proxy,
    );

    // A working front: the answer comes whole.
    configure(&front.url(), 2, 3000, 10_000);
    assert_eq!(
        chat_json(HI, None).map(|a| a.content),
        Ok("over TLS".into())
    );

    // A server that takes the ClientHello and never answers: the request
    // ends at its deadline (1.5 s), not after webclient's 6 s or the
    // 10 s of silence it allows, and is not retried past it.
    front.set_mode(Mode::Stall);
    configure(&front.url(), 3, 10_000, 1500);
    let before = front.accepted.load(Ordering::SeqCst);
    let t = Instant::now();
    let err = chat_json(HI, None).unwrap_err();
    let took = t.elapsed();
    assert!(
        err.contains("timed out") && err.contains("1500 ms") && err.contains("TLS handshake"),
        "{err}"
    );
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_millis(2500),
        "{took:?}"
    );
    assert_eq!(front.accepted.load(Ordering::SeqCst) - before, 1);

    // Silent for the read timeout (0.8 s) with time left: a handshake
    // timeout, named, and retried (it may be the network).
    configure(&front.url(), 1, 800, 20_000);
    let before = front.accepted.load(Ordering::SeqCst);
    let t = Instant::now();
    let err = chat_json(HI, None).unwrap_err();
    assert!(err.contains("TLS handshake timeout"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(
        front.accepted.load(Ordering::SeqCst) - before,
        2,
        "retried once"
    );

    // A server that closes in the middle of the handshake.
    front.set_mode(Mode::Close);
    configure(&front.url(), 0, 3000, 10_000);
    let err = chat_json(HI, None).unwrap_err();
    assert!(
        err.contains("closed the connection during the TLS handshake"),
        "{err}"
    );

    // Certificates: each cause in words, none retried.
    let cases: [(&[&str], i32, i32, &str); 3] = [
        (&["localhost"], 2001, 2002, "expired"),
        (&["localhost"], 2300, 2301, "not valid yet"),
        (&["other.example"], 2020, 2090, "not for this host name"),
    ];
    for (names, from, to, words) in cases {
        let bad = Front::start(
            pki.server_valid(names, from, to),
            server.port(),
            Mode::Proxy,
        );
        configure(&bad.url(), 3, 3000, 10_000);
        let err = chat_json(HI, None).unwrap_err();
        assert!(
            err.contains(words) && err.contains("not retried"),
            "{words}: {err}"
        );
        thread::sleep(Duration::from_millis(100));
        assert_eq!(
            bad.accepted.load(Ordering::SeqCst),
            1,
            "{words}: not retried"
        );
    }
    set_overrides(Overrides::default());
}

#[test]
fn records_larger_than_the_boards_buffer_fail_once_and_say_so() {
    let _serial = lock();
    let pki = pki();
    let long = "x".repeat(30_000);
    let server = uncounted_server_with(move |_| ScriptedResponse::text(&[&long]));
    let front = Front::start(
        pki.server_valid(&["localhost"], 2020, 2090),
        server.port(),
        Mode::LargeRecords,
    );
    // A board built with mbedTLS's input buffer at 6144 (the size the old
    // package's menu text asked for): a 12 KB record cannot be read.
    set_record_limit(6144);
    configure(&front.url(), 3, 3000, 10_000);
    let err = chat_json(HI, None).unwrap_err();
    set_record_limit(16384);
    assert!(
        err.contains("record larger than mbedTLS's input buffer"),
        "{err}"
    );
    assert!(
        err.contains("MBEDTLS_SSL_MAX_CONTENT_LEN"),
        "names the option: {err}"
    );
    thread::sleep(Duration::from_millis(100));
    assert_eq!(front.accepted.load(Ordering::SeqCst), 1, "not retried");
    // At 16384 the same answer comes whole.
    let answer = chat_json(HI, None).unwrap();
    assert_eq!(answer.content.len(), 30_000);
    set_overrides(Overrides::default());
}

#[test]
fn cleanup_during_a_stalled_handshake_returns_within_two_seconds() {
    let _serial = lock();
    let pki = pki();
    let server = uncounted_server_with(|_| ScriptedResponse::text(&["fine"]));
    let front = Front::start(
        pki.server_valid(&["localhost"], 2020, 2090),
        server.port(),
        Mode::Proxy,
    );
    // Warm up once (the client's TLS configuration is built at the first
    // https request and kept, outside the heap's count).
    configure(&front.url(), 0, 3000, 10_000);
    assert!(chat_json(HI, None).is_ok());
    let base = settled_used();
    front.set_mode(Mode::Stall);
    for _ in 0..2 {
        let agent = Agent::start_at(
            &front.url(),
            Overrides {
                timeout_ms: Some(60_000),
                request_timeout_ms: Some(120_000),
                ..Overrides::default()
            },
        );
        let before = front.accepted.load(Ordering::SeqCst);
        let asker = thread::spawn(|| {
            let mut reply = String::new();
            let sent = send_message(TYPE_TEXT, b"hello\0", &mut |r| {
                reply = String::from_utf8_lossy(r).into_owned()
            });
            sent.map(|()| reply)
        });
        let waited = Instant::now();
        while front.accepted.load(Ordering::SeqCst) == before {
            assert!(waited.elapsed() < Duration::from_secs(5), "no connection");
            thread::sleep(Duration::from_millis(10));
        }
        thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        assert_eq!(cleanup_agent_entry(), 0);
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "cleanup took {:?}",
            t.elapsed()
        );
        match asker.join().unwrap() {
            Ok(reply) => assert!(
                reply.contains("cancelled") || reply.contains("stopping"),
                "{reply}"
            ),
            Err(why) => assert!(why.contains("stopped"), "{why}"),
        }
        std::mem::forget(agent);
        set_overrides(Overrides::default());
        assert_eq!(settled_used(), base, "heap back after the cleanup");
    }
}
