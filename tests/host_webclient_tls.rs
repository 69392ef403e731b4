//! The host port's webclient over TLS (`https://`) against small rustls
//! servers on 127.0.0.1: certificate checks, both body framings, read
//! timeouts (inside a TLS record too), the abort, and the heap coming back
//! to where it was.
//!
//! Trust: a test CA made here with rcgen, handed to the client through
//! `RTT_AGENT_CA_FILE`. The client reads that variable once, at its first
//! `https://` request, so every test calls `setup()` first; the tests take
//! one lock each (the heap test counts every allocation of the process, and
//! the timing-sensitive tests are steadier alone).

use rtt_agent_testkit::webclient_client::*;

#[path = "support/test_ca.rs"]
mod test_ca;
use rtt_agent::host::heap;
use rtt_agent::host::webclient::*;
use rtt_agent::rtt::webclient::{
    webclient_session, WEBCLIENT_CONNECT_FAILED, WEBCLIENT_DISCONNECT, WEBCLIENT_TIMEOUT,
};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use std::ffi::{c_int, c_void};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use test_ca::Ca;

type Session = *mut webclient_session;
type ServerStream = StreamOwned<ServerConnection, TcpStream>;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

struct Setup {
    /// The CA in `RTT_AGENT_CA_FILE`.
    ca: Ca,
    /// Server configuration for "localhost" and 127.0.0.1, signed by `ca`.
    trusted: Arc<ServerConfig>,
}

/// The test CA, written to a PEM file named by `RTT_AGENT_CA_FILE` before
/// the first `https://` request of this process.
fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let ca = Ca::new("rtt-agent test CA");
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("host_webclient_tls-ca-{}.pem", std::process::id()));
        std::fs::write(&path, ca.cert.pem()).unwrap();
        assert_eq!(CA_FILE_ENV, "RTT_AGENT_CA_FILE");
        std::env::set_var(CA_FILE_ENV, &path);
        let trusted = ca.server(&["localhost", "127.0.0.1"]);
        Setup { ca, trusted }
    })
}

/// A one-connection TLS server: `f` gets the stream (handshake not done:
/// the first read or write does it) and the port. Its allocations are left
/// out of the heap's count.
fn serve_tls(
    config: Arc<ServerConfig>,
    f: impl FnOnce(&mut ServerStream, u16) + Send + 'static,
) -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = thread::spawn(move || {
        heap::exclude_this_thread(true);
        let (stream, _) = listener.accept().unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let conn = ServerConnection::new(config).unwrap();
        let mut s = StreamOwned::new(conn, stream);
        f(&mut s, port);
    });
    (port, handle)
}

/// Send `data` (one TLS record per write) and flush it out.
fn send(s: &mut ServerStream, data: &[u8]) {
    s.write_all(data).unwrap();
    s.flush().unwrap();
}

/// SSE-like events as a chat completion stream sends them.
fn sse_events() -> Vec<String> {
    let mut events: Vec<String> = (0..20)
        .map(|i| {
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"tok{i} \"}}}}]}}\n\n"
            )
        })
        .collect();
    events.push("data: [DONE]\n\n".into());
    events
}

#[test]
fn post_with_body_and_chunked_sse_response_over_tls() {
    let _g = serial();
    let cfg = setup().trusted.clone();
    let body = br#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let events = sse_events();
    let want: Vec<u8> = events.concat().into_bytes();
    // By name (SNI, DNS name in the certificate) and by address (no SNI,
    // IP address in the certificate).
    for host in ["localhost", "127.0.0.1"] {
        let cfg = cfg.clone();
        let events = events.clone();
        let (port, server) = serve_tls(cfg, move |s, port| {
            let req = read_request(s);
            let sni = if host == "localhost" {
                Some("localhost")
            } else {
                None
            };
            assert_eq!(s.conn.server_name(), sni);
            assert_eq!(s.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
            assert_eq!(req.lines()[0], "POST /v1/chat/completions?k=1 HTTP/1.1");
            // webclient 2.3.0: the host alone.
            let _ = port;
            assert_eq!(req.values("Host"), [host]);
            assert_eq!(req.values("Authorization"), ["Bearer sk-test"]);
            assert_eq!(req.values("Content-Type"), ["application/json"]);
            assert_eq!(req.values("Content-Length"), [body.len().to_string()]);
            assert_eq!(req.body, body);
            send(
                s,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
            );
            for e in &events {
                // Each event its own chunk and TLS record, a few ms apart.
                send(s, format!("{:x}\r\n{e}\r\n", e.len()).as_bytes());
                thread::sleep(Duration::from_millis(2));
            }
            send(s, b"0\r\n\r\n");
            // The body ends by its framing: keep the connection open.
            let mut b = [0u8; 1];
            let _ = s.read(&mut b);
        });
        let s = create(4096);
        assert_eq!(webclient_set_timeout(s, 5000), 0);
        assert_eq!(add(s, "Authorization: Bearer sk-test\r\n"), 31);
        assert_eq!(add(s, "Content-Type: application/json\r\n"), 32);
        // webclient_post adds no Content-Length: the caller does.
        assert!(add(s, &format!("Content-Length: {}\r\n", body.len())) > 0);
        let uri = format!("https://{host}:{port}/v1/chat/completions?k=1");
        assert_eq!(post(s, &uri, Some(body)), 200, "{host}");
        assert_eq!(webclient_content_length_get(s), -1);
        assert_eq!(read_all(s, &[1, 3, 7, 100]).unwrap(), want, "{host}");
        assert_eq!(webclient_close(s), 0);
        server.join().unwrap();
    }
}

#[test]
fn content_length_response_and_large_request_body_over_tls() {
    let _g = serial();
    let cfg = setup().trusted.clone();
    // Larger than a TLS record (16 KiB) both ways, and than rustls's
    // default send buffer (64 KiB) for the request.
    let upload: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let download: Vec<u8> = (0..40_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let (up, down) = (upload.clone(), download.clone());
    let (port, server) = serve_tls(cfg, move |s, _| {
        let req = read_request(s);
        assert_eq!(req.lines()[0], "POST /upload HTTP/1.1");
        assert_eq!(req.body, up);
        let mut resp =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", down.len()).into_bytes();
        resp.extend_from_slice(&down);
        send(s, &resp);
        // Bytes past the body are not body.
        send(s, b"garbage");
        let mut b = [0u8; 1];
        let _ = s.read(&mut b);
    });
    let s = create(1024);
    assert!(add(s, &format!("Content-Length: {}\r\n", upload.len())) > 0);
    assert_eq!(
        post(s, &format!("https://localhost:{port}/upload"), None),
        0
    );
    let mut sent = 0;
    while sent < upload.len() {
        let n = webclient_write(
            s,
            upload[sent..].as_ptr() as *const c_void,
            upload.len() - sent,
        );
        assert!(n > 0, "{n}");
        sent += n as usize;
    }
    assert_eq!(webclient_handle_response(s), 200);
    assert_eq!(webclient_content_length_get(s), download.len() as c_int);
    assert_eq!(read_all(s, &[1, 5, 64, 4096]).unwrap(), download);
    webclient_close(s);
    server.join().unwrap();

    // A GET whose close-delimited body ends with the server's close, with
    // and without TLS's close_notify.
    for notify in [false, true] {
        let cfg = setup().trusted.clone();
        let (port, server) = serve_tls(cfg, move |s, _| {
            let req = read_request(s);
            assert_eq!(req.lines()[0], "GET /file HTTP/1.1");
            send(
                s,
                b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst ",
            );
            thread::sleep(Duration::from_millis(20));
            send(s, b"second");
            if notify {
                s.conn.send_close_notify();
                s.flush().unwrap();
            }
            // Dropping the stream closes the socket.
        });
        let s = create(512);
        assert_eq!(get(s, &format!("https://127.0.0.1:{port}/file")), 200);
        assert_eq!(webclient_content_length_get(s), -1);
        assert_eq!(read_all(s, &[4096]).unwrap(), b"first second", "{notify}");
        webclient_close(s);
        server.join().unwrap();
    }
}

#[test]
fn untrusted_or_wrong_certificates_fail_the_connect() {
    let _g = serial();
    let trusted = setup().trusted.clone();
    let other_name = setup().ca.server(&["other.example"]);

    let s = create(1024);
    assert!(add(s, "Authorization: Bearer k\r\n") > 0);

    // Certificates from CAs the client does not trust: one it has never
    // heard of, and one that takes the trusted CA's name with another key.
    for ca_name in ["someone else's CA", "rtt-agent test CA"] {
        let stranger = Ca::new(ca_name).server(&["localhost", "127.0.0.1"]);
        let (port, server) = serve_tls(stranger, |s, _| {
            let mut b = [0u8; 1];
            // The client refuses the handshake with an alert.
            assert!(s.read(&mut b).is_err());
        });
        let t = Instant::now();
        let uri = format!("https://localhost:{port}/v1?key=secret");
        assert_eq!(
            post(s, &uri, Some(b"x")),
            -WEBCLIENT_CONNECT_FAILED,
            "{ca_name}"
        );
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        server.join().unwrap();
    }

    // A certificate from the trusted CA for another name.
    let (port, server) = serve_tls(other_name, |s, _| {
        let mut b = [0u8; 1];
        assert!(s.read(&mut b).is_err());
    });
    assert_eq!(
        post(s, &format!("https://127.0.0.1:{port}/v1"), Some(b"x")),
        -WEBCLIENT_CONNECT_FAILED
    );
    server.join().unwrap();

    // A server that does not speak TLS.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut b = [0u8; 64];
        let _ = s.read(&mut b);
        s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
    });
    assert_eq!(
        post(s, &format!("https://127.0.0.1:{port}/v1"), Some(b"x")),
        -WEBCLIENT_CONNECT_FAILED
    );
    server.join().unwrap();

    // Nothing listening.
    let closed_port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    assert_eq!(
        post(s, &format!("https://127.0.0.1:{closed_port}/"), Some(b"x")),
        -WEBCLIENT_CONNECT_FAILED
    );
    let mut buf = [0u8; 8];
    assert!(read(s, &mut buf) < 0);

    // The failures left the caller's header lines as they were: the same
    // session then succeeds against the trusted server.
    let (port, server) = serve_tls(trusted, |s, _| {
        let req = read_request(s);
        assert_eq!(req.lines()[0], "POST /v1 HTTP/1.1");
        assert_eq!(req.values("Authorization"), ["Bearer k"]);
        send(s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    });
    assert_eq!(
        post(s, &format!("https://localhost:{port}/v1"), Some(b"x")),
        200
    );
    assert_eq!(read_all(s, &[64]).unwrap(), b"ok");
    webclient_close(s);
    server.join().unwrap();
}

#[test]
fn read_timeout_over_tls_resumes_even_inside_a_record() {
    let _g = serial();
    let cfg = setup().trusted.clone();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (sent_tx, sent_rx) = mpsc::channel::<()>();
    let (port, server) = serve_tls(cfg, move |s, _| {
        read_request(s);
        send(s, b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc");
        go_rx.recv().unwrap();
        // "def" as one record, cut in two: the client has half a record
        // when its read times out.
        s.conn.writer().write_all(b"def").unwrap();
        let mut record = Vec::new();
        s.conn.write_tls(&mut record).unwrap();
        assert!(record.len() > 10);
        s.sock.write_all(&record[..7]).unwrap();
        sent_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        s.sock.write_all(&record[7..]).unwrap();
        go_rx.recv().unwrap();
        send(s, b"ghi");
        let mut b = [0u8; 1];
        let _ = s.read(&mut b);
    });
    let s = create(512);
    assert_eq!(post(s, &format!("https://localhost:{port}/"), None), 0);
    // Once connected: 1000 ms is 1 s on the socket.
    assert_eq!(webclient_set_timeout(s, 1000), 0);
    assert_eq!(webclient_write(s, b"x".as_ptr() as *const c_void, 1), 1);
    assert_eq!(webclient_handle_response(s), 200);
    // A read of 3 bytes at a time: webclient 2.3.0 fills the whole buffer
    // (up to the body's remainder) before it returns.
    let mut buf = [0u8; 3];
    assert_eq!(read(s, &mut buf), 3);
    assert_eq!(&buf[..3], b"abc");
    let timed_out = |buf: &mut [u8]| {
        let t = Instant::now();
        assert_eq!(read(s, buf), -WEBCLIENT_TIMEOUT);
        let waited = t.elapsed();
        assert!(
            waited >= Duration::from_millis(900) && waited < Duration::from_secs(3),
            "{waited:?}"
        );
    };
    timed_out(&mut buf);
    go_tx.send(()).unwrap();
    sent_rx.recv().unwrap();
    thread::sleep(Duration::from_millis(20));
    // Half a record: no plaintext yet.
    timed_out(&mut buf);
    go_tx.send(()).unwrap();
    assert_eq!(read(s, &mut buf), 3);
    assert_eq!(&buf[..3], b"def");
    timed_out(&mut buf);
    go_tx.send(()).unwrap();
    assert_eq!(read(s, &mut buf), 3);
    assert_eq!(&buf[..3], b"ghi");
    assert_eq!(read(s, &mut buf), 0);
    webclient_close(s);
    server.join().unwrap();
}

struct SendPtr(Session);
// SAFETY: the session outlives the aborting thread, which is joined before
// webclient_close (the rule rt_host_webclient_abort documents).
unsafe impl Send for SendPtr {}

/// Abort `s` from another thread after `after`.
fn abort_later(s: Session, after: Duration) -> JoinHandle<()> {
    let p = SendPtr(s);
    thread::spawn(move || {
        let p = p;
        thread::sleep(after);
        assert_eq!(rt_host_webclient_abort(p.0), 0);
    })
}

#[test]
fn abort_unblocks_a_stalled_tls_read_and_handshake() {
    let _g = serial();
    let cfg = setup().trusted.clone();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let (port, server) = serve_tls(cfg, move |s, _| {
        read_request(s);
        send(
            s,
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
        );
        // Stall mid-stream until the test is over.
        done_rx.recv().unwrap();
    });
    let s = create(1024);
    assert_eq!(webclient_set_timeout(s, 30_000), 0);
    assert_eq!(
        post(s, &format!("https://localhost:{port}/"), Some(b"x")),
        200
    );
    let mut buf = [0u8; 64];
    assert_eq!(read(s, &mut buf), 3);
    let aborter = abort_later(s, Duration::from_millis(200));
    let t = Instant::now();
    assert_eq!(read(s, &mut buf), -WEBCLIENT_DISCONNECT);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    aborter.join().unwrap();
    // Sticky: the session is finished.
    assert_eq!(read(s, &mut buf), -WEBCLIENT_DISCONNECT);
    assert_eq!(
        webclient_write(s, b"x".as_ptr() as *const c_void, 1),
        -WEBCLIENT_DISCONNECT
    );
    webclient_close(s);
    done_tx.send(()).unwrap();
    server.join().unwrap();

    // A server that accepts the connection and never answers the
    // ClientHello: the abort cuts the handshake short.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let server = thread::spawn(move || {
        let (_s, _) = listener.accept().unwrap();
        done_rx.recv().unwrap();
    });
    let s = create(1024);
    assert_eq!(webclient_set_timeout(s, 30_000), 0);
    let aborter = abort_later(s, Duration::from_millis(200));
    let t = Instant::now();
    assert_eq!(
        post(s, &format!("https://127.0.0.1:{port}/"), Some(b"x")),
        -WEBCLIENT_DISCONNECT
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    aborter.join().unwrap();
    webclient_close(s);
    done_tx.send(()).unwrap();
    server.join().unwrap();

    // Without an abort, the silent server costs the session's timeout and
    // fails the connect.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let server = thread::spawn(move || {
        let (_s, _) = listener.accept().unwrap();
        done_rx.recv().unwrap();
    });
    let s = create(1024);
    // Before the connect: ignored, the handshake gets the 6 s default.
    assert_eq!(webclient_set_timeout(s, 200), 0);
    let t = Instant::now();
    assert_eq!(
        post(s, &format!("https://127.0.0.1:{port}/"), Some(b"x")),
        -WEBCLIENT_CONNECT_FAILED
    );
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(5500) && waited < Duration::from_secs(9),
        "{waited:?}"
    );
    webclient_close(s);
    done_tx.send(()).unwrap();
    server.join().unwrap();
}

/// Set in the child process of `system_store_is_trusted`.
const CHILD_ENV: &str = "RTT_AGENT_TLS_TEST_CHILD";

#[test]
fn system_store_is_trusted() {
    let _g = serial();
    // The system store is read once per process, and this process's
    // configuration is built with the test CA: the check runs in a fresh
    // process of this test binary.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "system_store_child", "--ignored", "--nocapture"])
        .env(CHILD_ENV, "1")
        .env_remove(CA_FILE_ENV)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "run by system_store_is_trusted in a process of its own"]
fn system_store_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    // The system store as rustls-native-certs finds it, pointed at a file
    // holding just a CA made here (SSL_CERT_FILE replaces the default
    // places). No RTT_AGENT_CA_FILE.
    let ca = Ca::new("rtt-agent test system root");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "host_webclient_tls-system-{}.pem",
        std::process::id()
    ));
    std::fs::write(&path, ca.cert.pem()).unwrap();
    std::env::set_var("SSL_CERT_FILE", &path);
    std::env::remove_var("SSL_CERT_DIR");
    assert!(std::env::var_os(CA_FILE_ENV).is_none());
    let (port, server) = serve_tls(ca.server(&["localhost"]), |s, _| {
        read_request(s);
        send(s, b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsystem");
    });
    let s = create(1024);
    assert_eq!(get(s, &format!("https://localhost:{port}/")), 200);
    assert_eq!(read_all(s, &[64]).unwrap(), b"system");
    webclient_close(s);
    server.join().unwrap();
    let _ = std::fs::remove_file(&path);
}

fn tls_exchange() {
    let cfg = setup().trusted.clone();
    let (port, server) = serve_tls(cfg, |s, _| {
        let req = read_request(s);
        assert_eq!(req.body, b"{\"q\":1}");
        send(
            s,
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        );
        let mut b = [0u8; 1];
        let _ = s.read(&mut b);
    });
    let s = create(4096);
    assert!(add(s, "Authorization: Bearer k\r\n") > 0);
    assert!(add(s, "Content-Length: 7\r\n") > 0);
    assert_eq!(
        post(s, &format!("https://localhost:{port}/"), Some(b"{\"q\":1}")),
        200
    );
    assert_eq!(read_all(s, &[2]).unwrap(), b"abc");
    assert_eq!(webclient_close(s), 0);
    server.join().unwrap();
}

#[test]
fn tls_session_frees_everything() {
    let _g = serial();
    // Warm-up: the shared TLS configuration and std's one-time allocations.
    tls_exchange();
    let before = quiet_used();
    tls_exchange();
    tls_exchange();
    assert_eq!(quiet_used(), before);
}
