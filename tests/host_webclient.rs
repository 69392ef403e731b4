//! The host port's webclient 2.x API against small real servers on
//! 127.0.0.1: request heads and bodies as a server sees them, the three
//! body framings, timeouts, errors, the abort from another thread, and the
//! heap coming back to where it was.
//!
//! The tests take one lock each: the heap test counts every allocation of
//! the process, so nothing else may run beside it, and the timing-sensitive
//! tests are steadier alone.

//! The port's functions are called as Rust exports; the variadic
//! `webclient_header_fields_add` (the port's C half) through the library's
//! own declaration in `rtt_agent::rtt::webclient`.

use rtt_agent_testkit::webclient_client::*;

use rtt_agent::host::webclient::*;
use rtt_agent::rtt::webclient::{
    webclient_header_fields_add, WEBCLIENT_CONNECT_FAILED, WEBCLIENT_DISCONNECT, WEBCLIENT_ERROR,
    WEBCLIENT_NOBUFFER, WEBCLIENT_NOMEM, WEBCLIENT_TIMEOUT,
};
use std::ffi::{c_int, c_void, CString};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

extern "C" {
    fn rt_host_heap_fail_after(n: std::ffi::c_long);
}

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A one-connection server: `f` gets the accepted stream and the port.
fn serve(f: impl FnOnce(TcpStream, u16) + Send + 'static) -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        f(stream, port);
    });
    (port, handle)
}

/// Write `data` in pieces of `piece` bytes, pausing between them so that
/// they arrive as separate segments.
fn write_split(s: &mut TcpStream, data: &[u8], piece: usize, pause: Duration) {
    for part in data.chunks(piece.max(1)) {
        // The client may close first (webclient 2.3.0 closes the socket
        // after the last chunk, before reading the trailer).
        if s.write_all(part).and_then(|_| s.flush()).is_err() {
            return;
        }
        if !pause.is_zero() {
            thread::sleep(pause);
        }
    }
}

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

#[test]
fn post_with_body_sends_head_and_body_and_reads_response() {
    let _g = serial();
    let body = br#"{"model":"m","stream":true}"#;
    let long = "t".repeat(600);
    let expect_long = long.clone();
    let (port, server) = serve(move |mut s, port| {
        let req = read_request(&mut s);
        let lines = req.lines();
        assert_eq!(lines[0], "POST /v1/chat/completions?x=1 HTTP/1.1");
        // webclient 2.3.0: Host is the host alone, without the port.
        let _ = port;
        assert_eq!(req.values("Host"), ["127.0.0.1"]);
        assert_eq!(req.values("Authorization"), ["Bearer sk-test"]);
        assert_eq!(req.values("Content-Type"), ["application/json"]);
        assert_eq!(req.values("X-Long"), [expect_long.as_str()]);
        assert_eq!(req.values("Content-Length"), [body.len().to_string()]);
        assert_eq!(req.values("User-Agent").len(), 1);
        assert_eq!(req.values("Accept").len(), 1);
        assert_eq!(req.body, body);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream  \r\nX-Empty:\r\nContent-Length: 26\r\n\r\n")
            .unwrap();
        write_split(&mut s, ALPHABET, 5, Duration::from_millis(2));
    });
    let s = create(4096);
    assert_eq!(webclient_set_timeout(s, 5000), 0);
    // SAFETY: a live session from `create`; a literal format whose one conversion gets its argument.
    let n = unsafe {
        webclient_header_fields_add(
            s,
            c"Authorization: Bearer %s\r\n".as_ptr(),
            c"sk-test".as_ptr(),
        )
    };
    assert_eq!(n, "Authorization: Bearer sk-test\r\n".len() as c_int);
    assert_eq!(add(s, "Content-Type: application/json\r\n"), 32);
    // Longer than the C half's stack buffer: formatted on the heap.
    assert_eq!(add(s, &format!("X-Long: {long}\r\n")), 610);
    // webclient_post never adds a Content-Length: the caller does.
    assert!(add(s, &format!("Content-Length: {}\r\n", body.len())) > 0);

    let uri = format!("http://127.0.0.1:{port}/v1/chat/completions?x=1");
    assert_eq!(post(s, &uri, Some(body)), 200);
    assert_eq!(webclient_resp_status_get(s), 200);
    assert_eq!(webclient_content_length_get(s), 26);
    // Values keep trailing blanks (only the CR is cut), and a name
    // matches any line it begins: "Content" finds Content-Type.
    assert_eq!(
        field(s, "content-type").as_deref(),
        Some("text/event-stream  ")
    );
    assert_eq!(field(s, "X-EMPTY").as_deref(), Some(""));
    assert_eq!(field(s, "Content").as_deref(), Some("text/event-stream  "));
    assert_eq!(field(s, "Missing"), None);
    assert_eq!(read_all(s, &[3]).unwrap(), ALPHABET);
    assert_eq!(webclient_close(s), 0);
    server.join().unwrap();
}

#[test]
fn post_headers_only_then_write_body_then_handle_response() {
    let _g = serial();
    let body: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let expect = body.clone();
    let (port, server) = serve(move |mut s, _| {
        let req = read_request(&mut s);
        assert_eq!(req.lines()[0], "POST /upload HTTP/1.1");
        // The caller's own Content-Length, once (any case).
        assert_eq!(req.values("Content-Length"), ["10000"]);
        assert_eq!(req.body, expect);
        s.write_all(
            b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        )
        .unwrap();
    });
    let s = create(1024);
    // SAFETY: a live session from `create`; a literal format whose one conversion gets its argument.
    let n = unsafe {
        webclient_header_fields_add(s, c"content-length: %d\r\n".as_ptr(), body.len() as c_int)
    };
    assert_eq!(n, 23);
    assert_eq!(post(s, &format!("http://127.0.0.1:{port}/upload"), None), 0);
    assert_eq!(
        webclient_write(s, body.as_ptr() as *const c_void, 4000),
        4000
    );
    assert_eq!(
        webclient_write(s, body[4000..].as_ptr() as *const c_void, 6000),
        6000
    );
    assert_eq!(webclient_handle_response(s), 201);
    assert_eq!(webclient_content_length_get(s), -1);
    assert_eq!(read_all(s, &[64]).unwrap(), b"ok");
    webclient_close(s);
    server.join().unwrap();
}

#[test]
fn get_content_length_body_in_small_reads() {
    let _g = serial();
    let body: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let sent = body.clone();
    let (port, server) = serve(move |mut s, _| {
        let req = read_request(&mut s);
        assert_eq!(req.lines()[0], "GET /file.txt HTTP/1.1");
        assert!(req.values("Content-Length").is_empty());
        let mut resp = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".to_vec();
        resp.extend_from_slice(&sent);
        write_split(&mut s, &resp, 7, Duration::ZERO);
        // Bytes past the body are not body.
        s.write_all(b"garbage").unwrap();
    });
    let s = create(512);
    assert_eq!(get(s, &format!("http://127.0.0.1:{port}/file.txt")), 200);
    assert_eq!(webclient_content_length_get(s), 1000);
    assert_eq!(read_all(s, &[1, 5, 64]).unwrap(), body);
    webclient_close(s);
    server.join().unwrap();
}

#[test]
fn chunked_body_split_anywhere() {
    let _g = serial();
    let mut resp =
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n"
            .to_vec();
    resp.extend_from_slice(b"5;ext=\"x;y\"\r\nhello\r\n1A\r\n");
    resp.extend_from_slice(ALPHABET);
    resp.extend_from_slice(b"\r\n1\r\n\n\r\n0\r\nX-Trailer: yes\r\n\r\n");
    let mut want = b"hello".to_vec();
    want.extend_from_slice(ALPHABET);
    want.push(b'\n');
    for piece in [1, 2, 3, 5, 64, usize::MAX] {
        let resp = resp.clone();
        let (port, server) = serve(move |mut s, _| {
            read_request(&mut s);
            let pause = if piece <= 2 {
                Duration::from_millis(1)
            } else {
                Duration::ZERO
            };
            write_split(&mut s, &resp, piece, pause);
            // Keep the connection open: the body ends by its framing.
            let mut b = [0u8; 1];
            let _ = s.read(&mut b);
        });
        let s = create(512);
        assert_eq!(
            post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
            200,
            "piece {piece}"
        );
        assert_eq!(webclient_content_length_get(s), -1);
        assert_eq!(read_all(s, &[1, 3, 7, 100]).unwrap(), want, "piece {piece}");
        webclient_close(s);
        server.join().unwrap();
    }
}

#[test]
fn bad_chunk_framing_ends_the_body_silently() {
    let _g = serial();
    let (port, server) = serve(|mut s, _| {
        read_request(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n")
            .unwrap();
    });
    let s = create(512);
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
        200
    );
    let mut buf = [0u8; 16];
    // webclient 2.3.0: the line after the data ("X") parses as chunk size
    // 0 (strtol), i.e. the last chunk: the socket is closed, the body ends.
    assert_eq!(read(s, &mut buf), 3);
    assert_eq!(read(s, &mut buf), 0);
    assert_eq!(read(s, &mut buf), 0);
    webclient_close(s);
    server.join().unwrap();
}

#[test]
fn close_delimited_body_ends_when_server_closes() {
    let _g = serial();
    let (port, server) = serve(|mut s, _| {
        read_request(&mut s);
        s.write_all(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst ")
            .unwrap();
        thread::sleep(Duration::from_millis(50));
        s.write_all(b"second").unwrap();
        // Dropping the stream closes it: the end of the body.
    });
    let s = create(512);
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
        200
    );
    assert_eq!(webclient_content_length_get(s), -1);
    assert_eq!(read_all(s, &[4096]).unwrap(), b"first second");
    webclient_close(s);
    server.join().unwrap();
}

#[test]
fn body_cut_short_is_a_silent_end() {
    let _g = serial();
    let (port, server) = serve(|mut s, _| {
        read_request(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
            .unwrap();
    });
    let s = create(512);
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
        200
    );
    server.join().unwrap();
    // webclient 2.3.0: the peer's close reads as the end of the body (0,
    // socket closed), even with 7 of 10 bytes missing.
    assert_eq!(read_all(s, &[64]).unwrap(), b"abc");
    let mut buf = [0u8; 8];
    assert_eq!(read(s, &mut buf), -WEBCLIENT_DISCONNECT);
    webclient_close(s);
}

#[test]
fn read_timeout_then_data_arrives() {
    let _g = serial();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (port, server) = serve(move |mut s, _| {
        read_request(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
            .unwrap();
        go_rx.recv().unwrap();
        s.write_all(b"def").unwrap();
    });
    let s = create(512);
    // Applied once connected: 1000 ms is 1 s on the socket.
    assert_eq!(post(s, &format!("http://127.0.0.1:{port}/"), None), 0);
    assert_eq!(webclient_set_timeout(s, 1000), 0);
    assert_eq!(webclient_write(s, b"x".as_ptr() as *const c_void, 1), 1);
    assert_eq!(webclient_handle_response(s), 200);
    let mut buf = [0u8; 16];
    // webclient 2.3.0 fills the buffer up to the body's remainder: the
    // first read waits out the timeout, then returns what came.
    let t = Instant::now();
    assert_eq!(read(s, &mut buf), 3);
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(&buf[..3], b"abc");
    let t = Instant::now();
    assert_eq!(read(s, &mut buf), -WEBCLIENT_TIMEOUT);
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    go_tx.send(()).unwrap();
    assert_eq!(read(s, &mut buf), 3);
    assert_eq!(&buf[..3], b"def");
    assert_eq!(read(s, &mut buf), 0);
    webclient_close(s);
    server.join().unwrap();
}

#[test]
fn chunked_read_timeout_inside_data_resumes_between_chunks_closes() {
    let _g = serial();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (port, server) = serve(move |mut s, _| {
        read_request(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
            .unwrap();
        go_rx.recv().unwrap();
        s.write_all(b"cde\r\n3\r\nfgh").unwrap();
        // Stall between chunks until the test is over.
        let _ = go_rx.recv();
    });
    let s = create(512);
    assert_eq!(post(s, &format!("http://127.0.0.1:{port}/"), None), 0);
    assert_eq!(webclient_set_timeout(s, 1000), 0);
    assert_eq!(webclient_write(s, b"x".as_ptr() as *const c_void, 1), 1);
    assert_eq!(webclient_handle_response(s), 200);
    let mut buf = [0u8; 64];
    // Inside a chunk's data: one recv per read; a timeout can be resumed.
    assert_eq!(read(s, &mut buf), 2);
    assert_eq!(read(s, &mut buf), -WEBCLIENT_TIMEOUT);
    go_tx.send(()).unwrap();
    assert_eq!(read(s, &mut buf), 3);
    assert_eq!(&buf[..3], b"cde");
    // The last bytes of a chunk make the read wait for the next size line;
    // its timeout closes the socket, yet the read returns its bytes...
    let t = Instant::now();
    assert_eq!(read(s, &mut buf), 3);
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(&buf[..3], b"fgh");
    // ...and the next read finds no socket: not a timeout.
    assert_eq!(read(s, &mut buf), -WEBCLIENT_DISCONNECT);
    webclient_close(s);
    drop(go_tx);
    server.join().unwrap();
}

#[test]
fn connect_failures_and_bad_uris() {
    let _g = serial();
    let closed_port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let s = create(1024);
    assert!(add(s, "Authorization: Bearer k\r\n") > 0);
    let refused = format!("http://127.0.0.1:{closed_port}/v1");
    assert_eq!(post(s, &refused, Some(b"x")), -WEBCLIENT_CONNECT_FAILED);
    assert_eq!(post(s, &refused, None), -WEBCLIENT_CONNECT_FAILED);
    assert_eq!(get(s, &refused), -WEBCLIENT_CONNECT_FAILED);
    // https:// is served (tests/host_webclient_tls.rs); nothing listens here.
    let refused_tls = format!("https://127.0.0.1:{closed_port}/v1");
    assert_eq!(post(s, &refused_tls, Some(b"x")), -WEBCLIENT_CONNECT_FAILED);
    for bad in ["ftp://h/", "http://", "http://h:70000/", "http://a b/"] {
        assert_eq!(post(s, bad, Some(b"x")), -WEBCLIENT_ERROR, "{bad}");
    }
    assert_eq!(
        post(s, "http://name.invalid/", Some(b"x")),
        -WEBCLIENT_ERROR
    );
    // A body of length 0 with data is refused, as in the package.
    assert_eq!(
        webclient_post(
            s,
            c"http://127.0.0.1/".as_ptr(),
            b"x".as_ptr() as *const c_void,
            0
        ),
        -WEBCLIENT_ERROR
    );
    let mut buf = [0u8; 8];
    assert_eq!(read(s, &mut buf), -WEBCLIENT_DISCONNECT);
    // Unconnected: the recv fails (-1), after the header buffer was wiped.
    assert_eq!(webclient_handle_response(s), -1);
    assert!(add(s, "Authorization: Bearer k\r\n") > 0);

    // Failed connects leave the caller's headers as they were: a retry on
    // the same session sends them once, after one request line.
    let (port, server) = serve(|mut s, _| {
        let req = read_request(&mut s);
        assert_eq!(req.lines()[0], "POST /v1 HTTP/1.1");
        assert_eq!(
            req.lines()
                .iter()
                .filter(|l| l.contains("HTTP/1.1"))
                .count(),
            1
        );
        assert_eq!(req.values("Authorization"), ["Bearer k"]);
        assert_eq!(req.values("Host").len(), 1);
        s.write_all(b"HTTP/1.1 204 No Content\r\n\r\n").unwrap();
    });
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/v1"), Some(b"x")),
        204
    );
    assert_eq!(read(s, &mut buf), 0);
    webclient_close(s);
    server.join().unwrap();

    // NULL-safety.
    assert_eq!(webclient_close(std::ptr::null_mut()), 0);
    assert!(post(std::ptr::null_mut(), "http://127.0.0.1/", Some(b"x")) < 0);
    assert!(read(std::ptr::null_mut(), &mut buf) < 0);
    assert!(rt_host_webclient_abort(std::ptr::null_mut()) < 0);
}

#[test]
fn header_buffer_limits_as_in_the_package() {
    let _g = serial();
    // Two connections that send nothing usable: both accepted (the listener
    // must outlive the second connect).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = thread::spawn(move || {
        for _ in 0..2 {
            if let Ok((mut s, _)) = listener.accept() {
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let _ = s.read(&mut [0u8; 256]);
            }
        }
    });
    let s = create(64);
    let line = format!("X-A: {}\r\n", "a".repeat(33));
    assert_eq!(add(s, &line), 40);
    // Refused, but counted in (header->length = 80 > 64): every later add
    // is refused too.
    assert!(add(s, &line) < 0);
    assert!(add(s, "X\r\n") < 0);
    // The connect succeeds, then Host no longer fits: -WEBCLIENT_NOMEM.
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
        -WEBCLIENT_NOMEM
    );
    webclient_close(s);
    // Request line + Host + User-Agent + Accept take 81 bytes of 82: the
    // final CRLF does not fit.
    let s = create(82);
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
        -WEBCLIENT_NOBUFFER
    );
    webclient_close(s);
    server.join().unwrap();

    // A response head larger than header_sz: the package cuts it (no
    // -WEBCLIENT_NOMEM, that check cannot trigger) and the rest of the head
    // is read as body.
    let (port, server) = serve(|mut s, _| {
        read_request(&mut s);
        let big = format!("HTTP/1.1 200 OK\r\nX-Big: {}\r\n\r\n", "z".repeat(300));
        s.write_all(big.as_bytes()).unwrap();
    });
    let s = create(160);
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
        200
    );
    let mut rest = "z".repeat(164).into_bytes();
    rest.extend_from_slice(b"\r\n\r\n");
    assert_eq!(read_all(s, &[64]).unwrap(), rest);
    webclient_close(s);
    server.join().unwrap();

    assert!(webclient_session_create(0).is_null());
}

#[test]
fn error_statuses_with_readable_bodies() {
    let _g = serial();
    let cases: [(&[u8], c_int, &[u8]); 3] = [
        (
            b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 43\r\n\r\n{\"error\":{\"message\":\"Invalid API key\"}}\r\n\r\n",
            401,
            b"{\"error\":{\"message\":\"Invalid API key\"}}\r\n\r\n",
        ),
        (
            b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n4\r\noops\r\n0\r\n\r\n",
            500,
            b"oops",
        ),
        (
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nslow",
            429,
            b"slow",
        ),
    ];
    // webclient 2.3.0 does not skip an interim 100: its status is the
    // answer, and the final response reads as body.
    let interim: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n";
    let (port, server) = serve(move |mut s, _| {
        read_request(&mut s);
        s.write_all(interim).unwrap();
    });
    let s = create(1024);
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"{}")),
        100
    );
    assert_eq!(read_all(s, &[10]).unwrap(), b"HTTP/1.1 200 OK\r\n\r\n");
    webclient_close(s);
    server.join().unwrap();
    for (resp, status, body) in cases {
        let (port, server) = serve(move |mut s, _| {
            read_request(&mut s);
            s.write_all(resp).unwrap();
        });
        let s = create(1024);
        assert_eq!(
            post(s, &format!("http://127.0.0.1:{port}/"), Some(b"{}")),
            status
        );
        assert_eq!(webclient_resp_status_get(s), status);
        assert_eq!(read_all(s, &[10]).unwrap(), body);
        if status == 429 {
            assert_eq!(field(s, "retry-after").as_deref(), Some("7"));
        }
        webclient_close(s);
        server.join().unwrap();
    }
}

#[test]
fn get_follows_redirects() {
    let _g = serial();
    let (final_port, final_server) = serve(|mut s, port| {
        let req = read_request(&mut s);
        assert_eq!(req.lines()[0], "GET /final HTTP/1.1");
        let _ = port;
        assert_eq!(req.values("Host"), ["127.0.0.1"]);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone")
            .unwrap();
    });
    let (port, server) = serve(move |mut s, _| {
        read_request(&mut s);
        let resp = format!("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{final_port}/final\r\nContent-Length: 0\r\n\r\n");
        s.write_all(resp.as_bytes()).unwrap();
    });
    let s = create(1024);
    assert_eq!(get(s, &format!("http://127.0.0.1:{port}/start")), 200);
    assert_eq!(read_all(s, &[64]).unwrap(), b"done");
    webclient_close(s);
    server.join().unwrap();
    final_server.join().unwrap();
}

struct SendPtr(Session);
// SAFETY: the session outlives the aborting thread, which is joined before
// webclient_close (the rule rt_host_webclient_abort documents).
unsafe impl Send for SendPtr {}

#[test]
fn abort_unblocks_a_stalled_read_from_another_thread() {
    let _g = serial();
    // Chunked, and close-delimited: there the abort must not pass for the
    // server's end of the body.
    let heads: [&[u8]; 2] = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        b"HTTP/1.1 200 OK\r\n\r\nhello",
    ];
    for head in heads {
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let (port, server) = serve(move |mut s, _| {
            read_request(&mut s);
            s.write_all(head).unwrap();
            // Stall mid-stream until the test is over.
            done_rx.recv().unwrap();
        });
        let s = create(1024);
        assert_eq!(webclient_set_timeout(s, 30_000), 0);
        assert_eq!(
            post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
            200
        );
        let mut buf = [0u8; 64];
        assert_eq!(read(s, &mut buf), 5);

        let p = SendPtr(s);
        let aborter = thread::spawn(move || {
            let p = p;
            thread::sleep(Duration::from_millis(200));
            assert_eq!(rt_host_webclient_abort(p.0), 0);
        });
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
    }

    // Aborted before the request: nothing is sent.
    let s = create(1024);
    assert_eq!(rt_host_webclient_abort(s), 0);
    assert_eq!(
        post(s, "http://127.0.0.1:9/", Some(b"x")),
        -WEBCLIENT_DISCONNECT
    );
    webclient_close(s);
}

/// One complete exchange with every allocating path: long header line,
/// request, chunked response, header lookup.
fn full_exchange() {
    let (port, server) = serve(|mut s, _| {
        let req = read_request(&mut s);
        assert_eq!(req.body, b"{\"q\":1}");
        // Read the trailer's absence: the client closes after the last chunk.
        s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
            .unwrap();
    });
    let s = create(4096);
    assert!(add(s, &format!("Authorization: Bearer {}\r\n", "k".repeat(400))) > 0);
    assert!(add(s, "Content-Length: 7\r\n") > 0);
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"{\"q\":1}")),
        200
    );
    assert_eq!(field(s, "Transfer-Encoding").as_deref(), Some("chunked"));
    assert_eq!(read_all(s, &[2]).unwrap(), b"abc");
    assert_eq!(webclient_close(s), 0);
    server.join().unwrap();
}

#[test]
fn close_frees_everything() {
    let _g = serial();
    // Warm-up: std's one-time allocations (thread bookkeeping, resolver)
    // happen here, not in the measured run.
    full_exchange();
    let before = quiet_used();
    full_exchange();
    assert_eq!(quiet_used(), before);

    // Creation and long header lines under injected allocation failures:
    // NULL or a negative return, never a leak.
    for n in 0..4 {
        // SAFETY: a host-port call that takes a plain count.
        unsafe { rt_host_heap_fail_after(n) };
        let s = webclient_session_create(4096);
        // SAFETY: a host-port call that takes a plain count.
        unsafe { rt_host_heap_fail_after(-1) };
        if !s.is_null() {
            webclient_close(s);
        }
    }
    let s = create(4096);
    let long = CString::new("v".repeat(1000)).unwrap();
    // SAFETY: a host-port call that takes a plain count.
    unsafe { rt_host_heap_fail_after(0) };
    // SAFETY: a live session; a literal format with one `%s`, given a NUL-terminated string.
    let rc = unsafe { webclient_header_fields_add(s, c"X: %s\r\n".as_ptr(), long.as_ptr()) };
    // SAFETY: a host-port call that takes a plain count.
    unsafe { rt_host_heap_fail_after(-1) };
    assert_eq!(rc, -WEBCLIENT_NOMEM);
    webclient_close(s);
    drop(long);
    assert_eq!(quiet_used(), before);
}
