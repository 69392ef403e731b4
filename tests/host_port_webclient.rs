//! The host webclient behaves like webclient 2.3.0 (`src/webclient.c`) where
//! the library can see it: the timeout rules behind issue 8's second bug
//! (`webclient_set_timeout` ignored before the connect, whole seconds
//! after it, 6 s default), what `webclient_handle_response` returns on a
//! timeout and on an early close, the socket closed after the last chunk,
//! and what a session allocates. docs/host-port.md lists each pin.
//!
//! The slow cases (each waits a few seconds on purpose) run in parallel
//! threads inside one test, so the file costs about the longest of them.

use rtt_agent_testkit::webclient_client::*;

use rtt_agent::host::heap;
use rtt_agent::host::webclient::*;
use rtt_agent::rtt::webclient::{WEBCLIENT_ERROR, WEBCLIENT_TIMEOUT};
use std::ffi::c_void;
use std::io::{Read, Write};
use std::net::TcpListener;
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

/// A server for one request: reads it, waits `delay`, then sends `resp`
/// (nothing at all when None) and keeps the connection open for `hold`.
fn server(delay: Duration, resp: Option<&'static [u8]>, hold: Duration) -> (u16, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        read_request(&mut s);
        thread::sleep(delay);
        if let Some(r) = resp {
            let _ = s.write_all(r);
        }
        s.set_read_timeout(Some(hold.max(Duration::from_millis(1))))
            .unwrap();
        let _ = s.read(&mut [0u8; 1]);
    });
    (port, h)
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// post(None) (connects, sends the head), an optional set_timeout after the
/// connect, the body, then webclient_handle_response: (its rc, how long it
/// took, the errno the socket layer left).
fn exchange(port: u16, before: Option<i32>, after: Option<i32>) -> (i32, Duration, i32) {
    let s = create(1024);
    if let Some(ms) = before {
        assert_eq!(webclient_set_timeout(s, ms), 0);
    }
    assert!(add(s, "Content-Length: 1\r\n") > 0);
    assert_eq!(post(s, &format!("http://127.0.0.1:{port}/"), None), 0);
    if let Some(ms) = after {
        assert_eq!(webclient_set_timeout(s, ms), 0);
    }
    assert_eq!(webclient_write(s, b"x".as_ptr() as *const c_void, 1), 1);
    let t = Instant::now();
    let rc = webclient_handle_response(s);
    let took = t.elapsed();
    // SAFETY: this thread's errno.
    let errno = unsafe { *libc::__errno_location() };
    webclient_close(s);
    (rc, took, errno)
}

/// Issue 8, bug 2 on the webclient side, in five cases run side by side.
#[test]
fn set_timeout_and_handle_response_timeouts_as_in_webclient_2_3_0() {
    let _g = serial();
    let mut cases: Vec<JoinHandle<()>> = Vec::new();

    // 1. set_timeout(1500) before the connect changes nothing: the 6 s
    //    default applies, so a first byte after 3 s is still answered
    //    (today's host applied 1.5 s and timed out).
    cases.push(thread::spawn(|| {
        let (port, srv) = server(Duration::from_secs(3), Some(OK), Duration::ZERO);
        let (rc, took, _) = exchange(port, Some(1500), None);
        assert_eq!(rc, 200, "took {took:?}");
        assert!(took >= Duration::from_millis(2900), "{took:?}");
        srv.join().unwrap();
    }));

    // 2. After the connect, rt_tick_from_millisecond(1999) / 1000 = 1 s
    //    (at 1000 Hz): a first byte after 1.6 s is too late, and the
    //    timeout comes back as read_line's -1 (= -WEBCLIENT_ERROR, not
    //    -WEBCLIENT_TIMEOUT) with errno EAGAIN.
    cases.push(thread::spawn(|| {
        let (port, srv) = server(Duration::from_millis(1600), Some(OK), Duration::ZERO);
        let (rc, took, errno) = exchange(port, None, Some(1999));
        assert_eq!(rc, -1);
        assert_eq!(rc, -WEBCLIENT_ERROR);
        assert_ne!(rc, -WEBCLIENT_TIMEOUT);
        assert_eq!(errno, libc::EAGAIN);
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_millis(1500),
            "{took:?}"
        );
        srv.join().unwrap();
    }));

    // 3. Under a second rounds to 0 s, which on the socket means no timeout
    //    at all: 500 ms still waits for a first byte after 1.2 s.
    cases.push(thread::spawn(|| {
        let (port, srv) = server(Duration::from_millis(1200), Some(OK), Duration::ZERO);
        let (rc, took, _) = exchange(port, None, Some(500));
        assert_eq!(rc, 200, "took {took:?}");
        srv.join().unwrap();
    }));

    // 4. Without any set_timeout, a silent server costs the 6 s default,
    //    then -1.
    cases.push(thread::spawn(|| {
        let (port, srv) = server(Duration::ZERO, None, Duration::from_secs(8));
        let (rc, took, errno) = exchange(port, None, None);
        assert_eq!(rc, -1);
        assert_eq!(errno, libc::EAGAIN);
        assert!(
            took >= Duration::from_millis(5900) && took < Duration::from_secs(8),
            "{took:?}"
        );
        srv.join().unwrap();
    }));

    // 5. A server that closes without a head: read_line's 0 ends the head,
    //    and the status so far (0) is returned, not an error.
    cases.push(thread::spawn(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let srv = thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            read_request(&mut s);
        });
        let (rc, _, errno) = exchange(port, None, Some(3000));
        assert_eq!(rc, 0);
        assert_eq!(errno, libc::ENOTCONN);
        srv.join().unwrap();
    }));

    for c in cases {
        c.join().unwrap();
    }
}

/// webclient_read at the end of a chunked body: the read that completes the
/// last data chunk reads the "0" line and closes the socket at once (the
/// server sees the close before it sends the trailer's CRLF); later reads
/// return 0.
#[test]
fn last_chunk_closes_the_socket_and_reads_return_zero() {
    let _g = serial();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let srv = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        read_request(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n")
            .unwrap();
        // No final CRLF yet: the client must close without waiting for it.
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut b = [0u8; 1];
        matches!(s.read(&mut b), Ok(0))
    });
    let s = create(512);
    assert!(add(s, "Content-Length: 1\r\n") > 0);
    assert_eq!(
        post(s, &format!("http://127.0.0.1:{port}/"), Some(b"x")),
        200
    );
    assert_eq!(webclient_content_length_get(s), -1);
    let mut buf = [0u8; 64];
    let t = Instant::now();
    assert_eq!(read(s, &mut buf), 3);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(srv.join().unwrap(), "the server saw no close");
    assert_eq!(read(s, &mut buf), 0);
    assert_eq!(read(s, &mut buf), 0);
    webclient_close(s);
}

/// webclient_session_create makes three heap blocks (session, header
/// record, header buffer of header_sz bytes) and fails when any of them
/// fails; webclient_close gives all back.
#[test]
fn session_create_allocates_session_header_and_buffer() {
    let _g = serial();
    let before = quiet_used();
    let small = create(100);
    let with_small = heap::used();
    let big = create(1100);
    let with_big = heap::used();
    assert_eq!(with_big - with_small, (with_small - before) + 1000);
    webclient_close(small);
    webclient_close(big);
    assert_eq!(quiet_used(), before);
    for n in 0..3 {
        // SAFETY: a host-port call that takes a plain count.
        unsafe { rt_host_heap_fail_after(n) };
        let s = webclient_session_create(256);
        // SAFETY: a host-port call that takes a plain count.
        unsafe { rt_host_heap_fail_after(-1) };
        assert!(
            s.is_null(),
            "allocation {n} failed, yet a session came back"
        );
    }
    // SAFETY: a host-port call that takes a plain count.
    unsafe { rt_host_heap_fail_after(3) };
    let s = webclient_session_create(256);
    // SAFETY: a host-port call that takes a plain count.
    unsafe { rt_host_heap_fail_after(-1) };
    assert!(!s.is_null());
    webclient_close(s);
    assert_eq!(quiet_used(), before);
}
