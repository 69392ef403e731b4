//! Request parsing: HTTP/1.1 request heads, `Content-Length` and chunked
//! bodies, `Expect: 100-continue`, on a kept-alive connection.

use super::server::{write_flush, RecordedRequest};
use std::io::{self, Read};
use std::net::TcpStream;

/// Requests whose header block is larger than this are refused: a client
/// that never ends its headers must not make the server grow without bound.
const MAX_HEAD: usize = 64 * 1024;
/// Same idea for request bodies.
const MAX_BODY: usize = 64 * 1024 * 1024;
const MAX_HEADERS: usize = 200;

pub(super) enum ReqError {
    /// The connection failed; nothing can be answered.
    Io(io::Error),
    /// The client sent something that is not HTTP; answer 400.
    Bad(String),
}

impl From<io::Error> for ReqError {
    fn from(e: io::Error) -> Self {
        ReqError::Io(e)
    }
}

/// Buffered reader that keeps bytes past one request for the next one on a
/// kept-alive connection.
pub(super) struct ConnReader {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
}

impl ConnReader {
    pub(super) fn new(stream: TcpStream) -> Self {
        ConnReader {
            stream,
            buf: Vec::new(),
            start: 0,
        }
    }

    fn available(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Reads more; false at end of stream.
    fn fill(&mut self) -> io::Result<bool> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let mut tmp = [0u8; 16 * 1024];
        loop {
            match self.stream.read(&mut tmp) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buf.extend_from_slice(&tmp[..n]);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// One line without its `\n` or `\r\n`. `Ok(None)` at a clean end of
    /// stream (no bytes of a new line read).
    fn line(&mut self, max: usize) -> Result<Option<Vec<u8>>, ReqError> {
        loop {
            if let Some(i) = self.available().iter().position(|&b| b == b'\n') {
                let mut line = self.available()[..i].to_vec();
                self.start += i + 1;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(line));
            }
            if self.available().len() > max {
                return Err(ReqError::Bad("line too long".into()));
            }
            if !self.fill()? {
                return if self.available().is_empty() {
                    Ok(None)
                } else {
                    Err(ReqError::Io(io::ErrorKind::UnexpectedEof.into()))
                };
            }
        }
    }

    fn exact(&mut self, n: usize, into: &mut Vec<u8>) -> Result<(), ReqError> {
        while self.available().len() < n {
            if !self.fill()? {
                return Err(ReqError::Io(io::ErrorKind::UnexpectedEof.into()));
            }
        }
        into.extend_from_slice(&self.available()[..n]);
        self.start += n;
        Ok(())
    }
}

pub(super) fn read_request(
    r: &mut ConnReader,
    out: &mut TcpStream,
    conn: usize,
) -> Result<Option<RecordedRequest>, ReqError> {
    let bad = |s: &str| ReqError::Bad(s.to_string());
    let text = |v: Vec<u8>| String::from_utf8(v).map_err(|_| bad("header is not UTF-8"));

    // RFC 9112 lets a server skip empty lines before the request line.
    let mut head_size = 0;
    let request_line = loop {
        match r.line(MAX_HEAD)? {
            None => return Ok(None),
            Some(l) if l.is_empty() => {
                head_size += 2;
                if head_size > MAX_HEAD {
                    return Err(bad("request head too large"));
                }
            }
            Some(l) => break text(l)?,
        }
    };
    head_size += request_line.len();
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad("unsupported HTTP version"));
    }

    let mut headers = Vec::new();
    loop {
        let Some(line) = r.line(MAX_HEAD)? else {
            return Err(ReqError::Io(io::ErrorKind::UnexpectedEof.into()));
        };
        head_size += line.len() + 2;
        if head_size > MAX_HEAD || headers.len() > MAX_HEADERS {
            return Err(bad("request head too large"));
        }
        if line.is_empty() {
            break;
        }
        let line = text(line)?;
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad("header line without a colon"));
        };
        if name.is_empty() || name.trim() != name {
            return Err(bad("malformed header name"));
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }

    let mut req = RecordedRequest {
        conn,
        method: method.to_string(),
        path: path.to_string(),
        version: version.to_string(),
        headers,
        body: Vec::new(),
        chunked: false,
    };

    let te = req.header_all("Transfer-Encoding").join(",");
    let chunked = te
        .rsplit(',')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"));
    if !te.is_empty() && !chunked {
        return Err(bad("unsupported transfer-encoding"));
    }
    let length = if chunked {
        None
    } else {
        let lengths = req.header_all("Content-Length");
        match lengths.first() {
            None => Some(0),
            Some(first) => {
                if lengths.iter().any(|l| l != first) {
                    return Err(bad("conflicting Content-Length headers"));
                }
                let n: usize = first.parse().map_err(|_| bad("bad Content-Length"))?;
                if n > MAX_BODY {
                    return Err(bad("request body too large"));
                }
                Some(n)
            }
        }
    };

    let expects_body = chunked || length.unwrap_or(0) > 0;
    if expects_body
        && req
            .header("Expect")
            .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        write_flush(out, b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }

    match length {
        Some(n) => r.exact(n, &mut req.body)?,
        None => {
            req.chunked = true;
            read_chunked(r, &mut req.body)?;
        }
    }
    Ok(Some(req))
}

fn read_chunked(r: &mut ConnReader, body: &mut Vec<u8>) -> Result<(), ReqError> {
    let bad = |s: &str| ReqError::Bad(s.to_string());
    let eof = || ReqError::Io(io::ErrorKind::UnexpectedEof.into());
    loop {
        let line = r.line(1024)?.ok_or_else(eof)?;
        let line = String::from_utf8(line).map_err(|_| bad("bad chunk size line"))?;
        let size = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| bad("bad chunk size"))?;
        if size > MAX_BODY - body.len() {
            return Err(bad("request body too large"));
        }
        if size == 0 {
            // Trailer fields, if any, up to the empty line; they are dropped.
            loop {
                let t = r.line(MAX_HEAD)?.ok_or_else(eof)?;
                if t.is_empty() {
                    return Ok(());
                }
            }
        }
        r.exact(size, body)?;
        let end = r.line(2)?.ok_or_else(eof)?;
        if !end.is_empty() {
            return Err(bad("chunk data longer than its size"));
        }
    }
}
