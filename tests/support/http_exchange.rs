//! One raw HTTP exchange over a socket and its answer, for the tests that
//! send hand-made requests (`#[path = "support/http_exchange.rs"]`).

use std::io::{Read, Write};
use std::net::TcpStream;
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
