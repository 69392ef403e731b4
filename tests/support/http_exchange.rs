//! One raw HTTP exchange over a socket and its answer, for the tests that
//! send hand-made requests (`#[path = "support/http_exchange.rs"]`); and
//! requests whose body comes apart from the head ([`split_request`]), for
//! the tests that a refusal is never lost to a reset.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub struct Resp {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Resp {
    /// Send `request` on `s` and read the answer to the end of the
    /// connection. The server may answer (and close) before reading all of
    /// a refused body: a failed write is then expected, the answer still
    /// readable.
    #[allow(dead_code)]
    pub fn exchange(mut s: TcpStream, request: &[u8]) -> Resp {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let _ = s.write_all(request);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let text = String::from_utf8_lossy(&out).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        Resp {
            status: head
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
            head: head.to_string(),
            body: body.to_string(),
        }
    }

    /// The value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    /// The JSON-RPC error code in the body.
    #[allow(dead_code)]
    pub fn code(&self) -> Option<i64> {
        let at = self.body.find("\"code\":")? + 7;
        let rest = &self.body[at..];
        let end = rest.find(|c: char| c != '-' && !c.is_ascii_digit())?;
        rest[..end].parse().ok()
    }
}

/// What one request whose body came apart from its head got back.
#[allow(dead_code)]
pub enum Split {
    /// The whole answer: a head and a body of its `Content-Length`.
    Answer(Resp),
    /// A write of the body failed: the server had reset the connection.
    WriteFailed,
    /// Reading the answer failed (a reset).
    ReadFailed,
    /// The answer ended before its `Content-Length`.
    Cut(Resp),
}

/// How the body follows the head.
#[allow(dead_code)]
#[derive(Clone, Copy)]
pub enum Pace {
    /// One write after a pause (Python's `http.client`: two writes).
    Once(Duration),
    /// Four writes with a pause before each, as a body that comes in
    /// several segments over a network.
    Pieces(Duration),
}

#[allow(dead_code)]
pub fn split_request(addr: SocketAddr, head: &[u8], body: &[u8], pace: Pace) -> Split {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(head).unwrap();
    let (pieces, pause) = match pace {
        Pace::Once(p) => (1, p),
        Pace::Pieces(p) => (4, p),
    };
    for piece in body.chunks(body.len().div_ceil(pieces).max(1)) {
        std::thread::sleep(pause);
        if s.write_all(piece).is_err() {
            return Split::WriteFailed;
        }
    }
    let mut out = Vec::new();
    if s.read_to_end(&mut out).is_err() {
        return Split::ReadFailed;
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let r = Resp {
        status: head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
        head: head.to_string(),
        body: body.to_string(),
    };
    match r
        .header("Content-Length")
        .and_then(|n| n.parse::<usize>().ok())
    {
        Some(n) if n == r.body.len() && n > 0 => Split::Answer(r),
        _ => Split::Cut(r),
    }
}

/// The outcomes of many split requests, by kind.
#[allow(dead_code)]
#[derive(Default, Debug)]
pub struct Tally {
    pub whole: usize,
    pub write_failed: usize,
    pub read_failed: usize,
    pub cut: usize,
    pub wrong: Vec<String>,
}

#[allow(dead_code)]
impl Tally {
    /// Count `got`: a whole answer with `status` and the header `header`.
    pub fn count(&mut self, what: &str, got: Split, status: u16, header: &str) {
        match got {
            Split::Answer(r) if r.status == status && r.header(header).is_some() => self.whole += 1,
            Split::Answer(r) => self.wrong.push(format!("{what}: {}", r.head)),
            Split::WriteFailed => self.write_failed += 1,
            Split::ReadFailed => self.read_failed += 1,
            Split::Cut(r) => {
                self.cut += 1;
                if self.cut == 1 {
                    self.wrong
                        .push(format!("{what}, cut: {} {}", r.head, r.body));
                }
            }
        }
    }
}
