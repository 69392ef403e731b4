//! Calling the host webclient from tests: thin wrappers over the C API and
//! a minimal HTTP request reader for the test servers.
// The helpers take a session handle (a raw pointer) as the webclient API
// does: a test creates it with `create` and closes it once; they are test
// code, not an API that safe callers could misuse.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use rtt_agent::host::heap;
use rtt_agent::host::webclient::*;
use rtt_agent::rtt::webclient::{
    webclient_header_fields_add, webclient_session, WEBCLIENT_DISCONNECT,
};
use std::ffi::{c_int, c_void, CStr, CString};
use std::io::Read;
use std::thread;
use std::time::Duration;

pub type Session = *mut webclient_session;

pub struct Request {
    pub head: String,
    pub body: Vec<u8>,
}

impl Request {
    pub fn lines(&self) -> Vec<&str> {
        self.head.split("\r\n").collect()
    }

    /// Every value of header `name` (any case), in order.
    pub fn values(&self, name: &str) -> Vec<&str> {
        self.lines()
            .into_iter()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .filter(|(n, _)| n.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .collect()
    }
}

/// Read a request head (byte by byte, so nothing past it is consumed) and
/// its Content-Length body.
pub fn read_request(s: &mut impl Read) -> Request {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut b).unwrap();
        head.push(b[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let mut req = Request {
        head,
        body: Vec::new(),
    };
    let len = req
        .values("Content-Length")
        .first()
        .map_or(0, |v| v.parse::<usize>().unwrap());
    req.body = vec![0; len];
    s.read_exact(&mut req.body).unwrap();
    req
}

pub fn create(header_sz: usize) -> Session {
    let s = webclient_session_create(header_sz);
    assert!(!s.is_null());
    s
}

pub fn add(s: Session, line: &str) -> c_int {
    let line = CString::new(line).unwrap();
    // SAFETY: `s` is a live session (the caller's, from `create`); the format
    // is a literal with one `%s`, given a NUL-terminated CString.
    unsafe { webclient_header_fields_add(s, c"%s".as_ptr(), line.as_ptr()) }
}

pub fn post(s: Session, uri: &str, body: Option<&[u8]>) -> c_int {
    let uri = CString::new(uri).unwrap();
    match body {
        Some(b) => webclient_post(s, uri.as_ptr(), b.as_ptr() as *const c_void, b.len()),
        None => webclient_post(s, uri.as_ptr(), std::ptr::null(), 0),
    }
}

pub fn get(s: Session, uri: &str) -> c_int {
    let uri = CString::new(uri).unwrap();
    webclient_get(s, uri.as_ptr())
}

pub fn read(s: Session, buf: &mut [u8]) -> c_int {
    webclient_read(s, buf.as_mut_ptr() as *mut c_void, buf.len())
}

pub fn field(s: Session, name: &str) -> Option<String> {
    let name = CString::new(name).unwrap();
    let v = webclient_header_fields_get(s, name.as_ptr());
    // SAFETY: a non-NULL field value is a NUL-terminated string in the
    // session's header buffer, alive until the session's next request.
    (!v.is_null()).then(|| unsafe { CStr::from_ptr(v) }.to_str().unwrap().to_owned())
}

/// Read the body to its end with buffers of the given sizes in turn;
/// fails on any error (timeouts included).
pub fn read_all(s: Session, sizes: &[usize]) -> Result<Vec<u8>, c_int> {
    let mut body = Vec::new();
    let mut buf = [0u8; 4096];
    for i in 0.. {
        let size = sizes[i % sizes.len()];
        let n = read(s, &mut buf[..size]);
        if n < 0 {
            return Err(n);
        }
        if n == 0 {
            break;
        }
        assert!(n as usize <= size);
        body.extend_from_slice(&buf[..n as usize]);
    }
    // As in webclient 2.3.0: after the end, 0 again while the socket is
    // open (Content-Length reached, last chunk), -WEBCLIENT_DISCONNECT once
    // the end was the peer's close (the read closed the socket).
    let again = read(s, &mut buf[..16]);
    assert!(again == 0 || again == -WEBCLIENT_DISCONNECT, "{again}");
    Ok(body)
}

/// `used` once transient allocations elsewhere in the process (the test
/// harness) have settled: the smallest of a few samples.
pub fn quiet_used() -> usize {
    (0..5)
        .map(|_| {
            thread::sleep(Duration::from_millis(5));
            heap::used()
        })
        .min()
        .unwrap()
}
