//! The host port's WebNet against WebNet 2.0.3's sources (see
//! docs/host-port.md): CGI handlers of this test, registered with
//! `webnet_cgi_register`, reached over real TCP. They read the request through
//! the glue's accessors (glue/agent_webnet.c), as the agent's channel does.

use rtt_agent_testkit::web::exchange_raw;
use std::ffi::{c_char, c_int, CStr};
use std::net::SocketAddr;
use std::sync::{Mutex, Once};

#[repr(C)]
struct Session {
    _opaque: [u8; 0],
}

extern "C" {
    fn webnet_set_port(port: c_int);
    fn webnet_init() -> c_int;
    fn webnet_cgi_register(name: *const c_char, handler: unsafe extern "C" fn(*mut Session));
    fn rt_host_webnet_bound_port() -> c_int;
    fn agent_glue_web_method(session: *mut Session) -> c_int;
    fn agent_glue_web_body(session: *mut Session, declared: *mut c_int) -> *const c_char;
    fn agent_glue_web_query(session: *mut Session, name: *const c_char) -> *const c_char;
    fn agent_glue_web_header(
        session: *mut Session,
        mime: *const c_char,
        code: c_int,
        status: *const c_char,
        length: c_int,
    );
    fn agent_glue_web_write(session: *mut Session, data: *const c_char, size: usize);
}

fn write(session: *mut Session, text: &str) {
    // SAFETY: the live session of the running handler; the bytes are borrowed.
    unsafe { agent_glue_web_write(session, text.as_ptr() as *const c_char, text.len()) };
}

/// Answers what WebNet parsed: method, declared length, the body it read
/// (or "(none)"), the query value `q`.
unsafe extern "C" fn echo(session: *mut Session) {
    let mut declared = 0;
    // SAFETY: the live session WebNet passed; `declared` is a local.
    let (method, body, q) = unsafe {
        (
            agent_glue_web_method(session),
            agent_glue_web_body(session, &mut declared),
            agent_glue_web_query(session, c"q".as_ptr()),
        )
    };
    let show = |p: *const c_char| {
        if p.is_null() {
            "(none)".to_string()
        } else {
            // SAFETY: non-NULL: a NUL-terminated string WebNet keeps for the
            // request.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let text = format!(
        "method={method} declared={declared} body={} q={}",
        if body.is_null() {
            "none".to_string()
        } else {
            show(body).len().to_string()
        },
        show(q)
    );
    // SAFETY: the live session; static strings.
    unsafe {
        agent_glue_web_header(
            session,
            c"text/plain".as_ptr(),
            200,
            c"OK".as_ptr(),
            text.len() as c_int,
        )
    };
    write(session, &text);
}

unsafe extern "C" fn no_length(session: *mut Session) {
    // SAFETY: the live session; static strings.
    unsafe {
        agent_glue_web_header(
            session,
            c"text/event-stream".as_ptr(),
            200,
            c"OK".as_ptr(),
            -1,
        )
    };
    write(session, "streamed");
}

static ORDER: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

unsafe extern "C" fn slow(session: *mut Session) {
    ORDER.lock().unwrap().push("enter");
    std::thread::sleep(std::time::Duration::from_millis(300));
    ORDER.lock().unwrap().push("leave");
    // SAFETY: the live session; static strings.
    unsafe { agent_glue_web_header(session, c"text/plain".as_ptr(), 200, c"OK".as_ptr(), 4) };
    write(session, "slow");
}

fn server() -> SocketAddr {
    static START: Once = Once::new();
    START.call_once(|| {
        // SAFETY: before webnet_init; static names and handlers.
        unsafe {
            webnet_set_port(0);
            webnet_cgi_register(c"echo".as_ptr(), echo);
            webnet_cgi_register(c"nolength".as_ptr(), no_length);
            webnet_cgi_register(c"slow".as_ptr(), slow);
            assert_eq!(webnet_init(), 0);
        }
    });
    // SAFETY: a getter.
    let port = unsafe { rt_host_webnet_bound_port() };
    SocketAddr::from(([127, 0, 0, 1], port as u16))
}

fn post(path: &str, headers: &str, body: &str) -> rtt_agent_testkit::web::Response {
    // Always a Content-Type: WebNet 2.0.3 dereferences NULL on a POST body
    // without one (see the last test).
    let raw = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n{headers}\r\n{body}"
    );
    exchange_raw(server(), raw.as_bytes()).unwrap()
}

#[test]
fn set_header_writes_webnets_head() {
    let r = exchange_raw(
        server(),
        b"GET /cgi-bin/echo HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
    )
    .unwrap();
    let body = r.text();
    assert_eq!(
        r.head,
        format!(
            "HTTP/1.1 200 OK\r\nServer: webnet 2.0.3\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: Keep-Alive",
            body.len()
        )
    );
    // Keep-Alive is announced, yet the session is closed after the handler
    // (read_to_end in exchange_raw returned). Without a Connection header
    // the request is zeroed: close.
    let r = exchange_raw(server(), b"GET /cgi-bin/echo HTTP/1.1\r\n\r\n").unwrap();
    assert!(r.head.ends_with("Connection: close"), "{}", r.head);
    let r = exchange_raw(server(), b"GET /cgi-bin/nolength HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(
        r.head,
        "HTTP/1.1 200 OK\r\nServer: webnet 2.0.3\r\nContent-Type: text/event-stream\r\nConnection: close"
    );
    assert_eq!(r.text(), "streamed");
    let r = exchange_raw(
        server(),
        b"GET /cgi-bin/echo HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert!(r.head.ends_with("Connection: close"), "{}", r.head);
}

#[test]
fn a_post_body_is_read_below_8_kb_only_and_header_names_ignore_case() {
    let r = post("/cgi-bin/echo", "Content-Length: 5\r\n", "hello");
    assert_eq!(r.text(), "method=2 declared=5 body=5 q=(none)");
    let big = "x".repeat(8191);
    let r = post("/cgi-bin/echo", "Content-Length: 8191\r\n", &big);
    assert_eq!(r.text(), "method=2 declared=8191 body=8191 q=(none)");
    // 8192 and more: WebNet answers after the head and leaves the body.
    let raw =
        "POST /cgi-bin/echo HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 8192\r\n\r\n";
    let r = exchange_raw(server(), raw.as_bytes()).unwrap();
    assert_eq!(r.text(), "method=2 declared=8192 body=none q=(none)");
    // A multipart body is never read into the request.
    let raw = "POST /cgi-bin/echo HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 4\r\n\r\n";
    let r = exchange_raw(server(), raw.as_bytes()).unwrap();
    assert_eq!(r.text(), "method=2 declared=4 body=none q=(none)");
    // str_begin_with is strncasecmp: a lower-case name counts.
    let r = post("/cgi-bin/echo", "content-length: 5\r\n", "hello");
    assert_eq!(r.text(), "method=2 declared=5 body=5 q=(none)");
}

#[test]
fn queries_are_split_and_decoded_and_cgi_names_matched_whole() {
    let r = exchange_raw(
        server(),
        b"GET /cgi-bin/echo?a=1&q=two+words%21 HTTP/1.1\r\n\r\n",
    )
    .unwrap();
    assert_eq!(r.text(), "method=1 declared=0 body=none q=two words!");
    // Case-insensitive, but the whole rest of the path.
    let r = exchange_raw(server(), b"GET /cgi-bin/ECHO HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(r.status, 200);
    for path in ["/cgi-bin/echo/x", "/cgi-bin/ech", "/index.html"] {
        let raw = format!("GET {path} HTTP/1.1\r\n\r\n");
        let r = exchange_raw(server(), raw.as_bytes()).unwrap();
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.header("Connection"), Some("close"));
        assert!(r.text().contains("404 Not Found"), "{}", r.text());
    }
    let r = exchange_raw(server(), b"PUT /cgi-bin/echo HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(r.text(), "method=0 declared=0 body=none q=(none)");
}

#[test]
fn handlers_run_one_at_a_time_on_webnets_thread() {
    let addr = server();
    let clients: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(move || {
                exchange_raw(addr, b"GET /cgi-bin/slow HTTP/1.1\r\n\r\n")
                    .unwrap()
                    .text()
            })
        })
        .collect();
    for c in clients {
        assert_eq!(c.join().unwrap(), "slow");
    }
    assert_eq!(*ORDER.lock().unwrap(), ["enter", "leave", "enter", "leave"]);
}
