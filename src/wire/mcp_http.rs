//! The HTTP/1.1 request head of the MCP server's endpoint: a pure,
//! incremental parser (no I/O, no allocation) and the few response heads
//! the server sends.
//!
//! Only what Streamable HTTP needs is read: the method, the path, and the
//! headers that decide the answer (`Content-Length`, `Authorization`,
//! `Origin`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, `Transfer-Encoding`). Header names match in any case; the value is
//! trimmed of blanks. A head that has not ended yet is [`HeadError::Partial`],
//! not an error.

/// The request methods the endpoint tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Post,
    Get,
    Delete,
    Other,
}

/// A parsed request head; every slice borrows the receive buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head<'a> {
    pub method: Method,
    /// The path without its query string.
    pub path: &'a [u8],
    /// `None`: no `Content-Length`; `Some(None)`: one that is not a number
    /// (or too large to count).
    pub content_length: Option<Option<usize>>,
    pub authorization: Option<&'a [u8]>,
    pub origin: Option<&'a [u8]>,
    pub session: Option<&'a [u8]>,
    pub protocol: Option<&'a [u8]>,
    /// `Mcp-Method` and `Mcp-Name` (2026-07-28: they must repeat the
    /// body's method and tool name, for intermediaries that route on them).
    pub mcp_method: Option<&'a [u8]>,
    pub mcp_name: Option<&'a [u8]>,
    /// One of the three routing headers (`MCP-Protocol-Version`,
    /// `Mcp-Method`, `Mcp-Name`) came more than once: readers that take
    /// the first and the last copy would disagree, so 2026-07-28 refuses it.
    pub duplicate_routing: bool,
    /// A `Transfer-Encoding` was sent (the server takes `Content-Length`
    /// bodies only).
    pub transfer_encoding: bool,
    /// `Expect: 100-continue`: the client waits for a go-ahead before the
    /// body (curl does for bodies over 1 KB).
    pub expect_continue: bool,
    /// Bytes of the head, blank line included: the body starts there.
    pub len: usize,
}

/// Why a head could not be read (yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// The blank line that ends the head has not arrived: read more.
    Partial,
    /// Not an HTTP/1.x request line, or a header line without a `:`.
    Malformed,
}

/// The headers read, in any case (the order [`parse_head`] matches on).
const HEADERS: [&[u8]; 9] = [
    b"content-length",
    b"authorization",
    b"origin",
    b"mcp-session-id",
    b"mcp-protocol-version",
    b"transfer-encoding",
    b"expect",
    b"mcp-method",
    b"mcp-name",
];

/// Parse the request head at the start of `buf`.
pub fn parse_head(buf: &[u8]) -> Result<Head<'_>, HeadError> {
    let end = find(buf, b"\r\n\r\n").ok_or(HeadError::Partial)?;
    let mut lines = buf
        .get(..end)
        .unwrap_or_default()
        .split(|&b| b == b'\n')
        .map(trim_cr);
    let request = lines.next().ok_or(HeadError::Malformed)?;
    let mut parts = request.split(|&b| b == b' ').filter(|p| !p.is_empty());
    let method = match parts.next().ok_or(HeadError::Malformed)? {
        b"POST" => Method::Post,
        b"GET" => Method::Get,
        b"DELETE" => Method::Delete,
        _ => Method::Other,
    };
    let target = parts.next().ok_or(HeadError::Malformed)?;
    let version = parts.next().ok_or(HeadError::Malformed)?;
    if !version.starts_with(b"HTTP/1.") || parts.next().is_some() {
        return Err(HeadError::Malformed);
    }
    let path = target.split(|&b| b == b'?').next().unwrap_or(target);
    let mut head = Head {
        method,
        path,
        content_length: None,
        authorization: None,
        origin: None,
        session: None,
        protocol: None,
        mcp_method: None,
        mcp_name: None,
        duplicate_routing: false,
        transfer_encoding: false,
        expect_continue: false,
        len: end + 4,
    };
    for line in lines {
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(HeadError::Malformed)?;
        let (name, value) = line.split_at_checked(colon).ok_or(HeadError::Malformed)?;
        let value = trim(value.get(1..).unwrap_or_default());
        match HEADERS.iter().position(|n| name.eq_ignore_ascii_case(n)) {
            // At most 9 digits: bodies are capped far below.
            Some(0) => head.content_length = Some(crate::base::text::parse_decimal(value, 9)),
            Some(1) => head.authorization = Some(value),
            Some(2) => head.origin = Some(value),
            Some(3) => head.session = Some(value),
            Some(5) => head.transfer_encoding = true,
            Some(6) => head.expect_continue = value.eq_ignore_ascii_case(b"100-continue"),
            Some(i) => {
                let slot = match i {
                    4 => &mut head.protocol,
                    7 => &mut head.mcp_method,
                    8 => &mut head.mcp_name,
                    _ => continue,
                };
                head.duplicate_routing |= slot.is_some();
                *slot = Some(value);
            }
            None => {}
        }
    }
    Ok(head)
}

/// The body the head declares, all still to be read: a chunked body or an
/// unreadable length is of unknown size, and so is a POST's (or another
/// method's) without a length: it is refused (411), and a client that
/// sends one anyway may send a body until it closes. A GET or DELETE
/// without one has none (RFC 9112 6.3).
pub fn declared_body(head: &Head<'_>) -> super::http_drain::Unread {
    use super::http_drain::Unread;
    if head.transfer_encoding {
        return Unread::Unknown;
    }
    match head.content_length {
        None if matches!(head.method, Method::Get | Method::Delete) => Unread::Bytes(0),
        None | Some(None) => Unread::Unknown,
        Some(Some(n)) => Unread::Bytes(n),
    }
}

/// The token of an `Authorization: Bearer <token>` value.
pub fn bearer(value: &[u8]) -> Option<&[u8]> {
    let scheme = value.get(..7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    Some(trim(value.get(7..).unwrap_or_default()))
}

pub use crate::base::text::same_secret;

/// The reason phrase of each status the server sends.
pub fn reason(status: u16) -> &'static [u8] {
    match status {
        200 => b"OK",
        202 => b"Accepted",
        400 => b"Bad Request",
        401 => b"Unauthorized",
        403 => b"Forbidden",
        404 => b"Not Found",
        405 => b"Method Not Allowed",
        406 => b"Not Acceptable",
        408 => b"Request Timeout",
        411 => b"Length Required",
        413 => b"Content Too Large",
        415 => b"Unsupported Media Type",
        429 => b"Too Many Requests",
        431 => b"Request Header Fields Too Large",
        503 => b"Service Unavailable",
        _ => b"Internal Server Error",
    }
}

use crate::base::text::find;

fn trim_cr(line: &[u8]) -> &[u8] {
    crate::base::text::strip_last(line, b'\r')
}

fn trim(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(start, |e| e + 1);
    v.get(start..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &[u8] = b"POST /mcp?x=1 HTTP/1.1\r\nHost: b\r\ncontent-length: 12\r\n\
        AUTHORIZATION:  Bearer tok \r\nOrigin: http://a\r\nMcp-Session-Id: abc\r\n\
        mcp-protocol-version: 2025-11-25\r\nMCP-METHOD: tools/call\r\nmcp-name:  add \r\n\r\n{\"jsonrpc\":1}";

    #[test]
    fn a_full_head() {
        let h = parse_head(FULL).unwrap();
        assert_eq!(h.method, Method::Post);
        assert_eq!(h.path, b"/mcp");
        assert_eq!(h.content_length, Some(Some(12)));
        assert_eq!(h.authorization.and_then(bearer), Some(&b"tok"[..]));
        assert_eq!(h.origin, Some(&b"http://a"[..]));
        assert_eq!(h.session, Some(&b"abc"[..]));
        assert_eq!(h.protocol, Some(&b"2025-11-25"[..]));
        assert_eq!(h.mcp_method, Some(&b"tools/call"[..]));
        assert_eq!(h.mcp_name, Some(&b"add"[..]));
        assert!(!h.transfer_encoding && !h.duplicate_routing);
        assert_eq!(&FULL[h.len..], b"{\"jsonrpc\":1}");
    }

    #[test]
    fn partial_at_every_cut() {
        let end = FULL.len() - 13;
        for cut in 0..end {
            assert_eq!(
                parse_head(&FULL[..cut]),
                Err(HeadError::Partial),
                "cut {cut}"
            );
        }
        assert!(parse_head(&FULL[..end]).is_ok());
    }

    #[test]
    fn table() {
        type Case = (
            &'static [u8],
            Result<(Method, &'static [u8], Option<Option<usize>>), HeadError>,
        );
        let cases: &[Case] = &[
            (b"GET / HTTP/1.0\r\n\r\n", Ok((Method::Get, b"/", None))),
            (
                b"DELETE /mcp HTTP/1.1\r\n\r\n",
                Ok((Method::Delete, b"/mcp", None)),
            ),
            (
                b"PUT /mcp HTTP/1.1\r\n\r\n",
                Ok((Method::Other, b"/mcp", None)),
            ),
            (
                b"POST /mcp HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                Ok((Method::Post, b"/mcp", Some(None))),
            ),
            (
                b"POST /mcp HTTP/1.1\r\nContent-Length: 1234567890\r\n\r\n",
                Ok((Method::Post, b"/mcp", Some(None))),
            ),
            (
                b"POST /mcp HTTP/1.1\r\nContent-Length:\r\n\r\n",
                Ok((Method::Post, b"/mcp", Some(None))),
            ),
            (b"POST /mcp SPDY/3\r\n\r\n", Err(HeadError::Malformed)),
            (
                b"POST /mcp HTTP/1.1 extra\r\n\r\n",
                Err(HeadError::Malformed),
            ),
            (b"POST\r\n\r\n", Err(HeadError::Malformed)),
            (
                b"POST /mcp HTTP/1.1\r\nno colon\r\n\r\n",
                Err(HeadError::Malformed),
            ),
            (b"\r\n\r\n", Err(HeadError::Malformed)),
        ];
        for (input, want) in cases {
            let got = parse_head(input).map(|h| (h.method, h.path, h.content_length));
            assert_eq!(&got, want, "{:?}", core::str::from_utf8(input));
        }
    }

    #[test]
    fn the_declared_body() {
        use crate::wire::http_drain::Unread;
        let body = |h: &[u8]| declared_body(&parse_head(h).unwrap());
        assert_eq!(body(b"GET /mcp HTTP/1.1\r\n\r\n"), Unread::Bytes(0));
        assert_eq!(body(b"DELETE /mcp HTTP/1.1\r\n\r\n"), Unread::Bytes(0));
        assert_eq!(body(b"POST /mcp HTTP/1.1\r\n\r\n"), Unread::Unknown);
        assert_eq!(
            body(b"GET /mcp HTTP/1.1\r\nContent-Length: 3\r\n\r\n"),
            Unread::Bytes(3)
        );
        assert_eq!(
            body(b"POST /mcp HTTP/1.1\r\nContent-Length: 70\r\n\r\n"),
            Unread::Bytes(70)
        );
        assert_eq!(
            body(b"POST /mcp HTTP/1.1\r\nContent-Length: 7x\r\n\r\n"),
            Unread::Unknown
        );
        assert_eq!(
            body(b"POST /mcp HTTP/1.1\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Unread::Unknown
        );
    }

    #[test]
    fn chunked_and_expect_are_seen() {
        let h = parse_head(b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap();
        assert!(h.transfer_encoding && !h.expect_continue);
        let h = parse_head(b"POST /mcp HTTP/1.1\r\nExpect: 100-Continue\r\n\r\n").unwrap();
        assert!(h.expect_continue);
    }

    #[test]
    fn a_repeated_routing_header_is_seen() {
        let once = b"POST /mcp HTTP/1.1\r\nMcp-Method: a\r\nMcp-Name: b\r\nMCP-Protocol-Version: c\r\n\r\n";
        assert!(!parse_head(once).unwrap().duplicate_routing);
        for twice in [
            &b"POST /mcp HTTP/1.1\r\nMcp-Method: a\r\nmcp-method: a\r\n\r\n"[..],
            b"POST /mcp HTTP/1.1\r\nMcp-Name: a\r\nMcp-Name: b\r\n\r\n",
            b"POST /mcp HTTP/1.1\r\nMCP-Protocol-Version: a\r\nMcp-Protocol-Version: a\r\n\r\n",
        ] {
            let h = parse_head(twice).unwrap();
            assert!(h.duplicate_routing, "{:?}", core::str::from_utf8(twice));
        }
    }

    #[test]
    fn bearer_and_secrets() {
        assert_eq!(bearer(b"bearer x"), Some(&b"x"[..]));
        assert_eq!(bearer(b"Basic eA=="), None);
        assert_eq!(bearer(b"Bear"), None);
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"abcd", b"abc"));
        assert!(!same_secret(b"", b"abc"));
    }
}
