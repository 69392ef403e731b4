//! `http[s]://host[:port]/path` URIs: the parts a request needs (stricter
//! than the package's parser: blanks, control bytes, userinfo and bad ports
//! are refused with `-WEBCLIENT_ERROR`).

use crate::rtt::webclient::WEBCLIENT_ERROR;
use core::ffi::c_int;

/// The parts of an `http[s]://host[:port]/path` URI a request needs.
pub(super) struct Target<'a> {
    /// `https://`: TLS over the connection.
    pub(super) tls: bool,
    /// `host[:port]` as written (the package's `Host` header has the host
    /// alone).
    #[allow(dead_code)]
    pub(super) authority: &'a [u8],
    /// The host to resolve (IPv6 without its brackets).
    pub(super) host: &'a str,
    pub(super) port: u16,
    /// Path and query; never empty.
    pub(super) path: &'a [u8],
}

pub(super) fn parse_uri(uri: &[u8]) -> Result<Target<'_>, c_int> {
    let (tls, rest) = if let Some(rest) = uri.strip_prefix(b"http://") {
        (false, rest)
    } else if let Some(rest) = uri.strip_prefix(b"https://") {
        (true, rest)
    } else {
        return Err(-WEBCLIENT_ERROR);
    };
    // Blanks or control bytes would break the request line or inject
    // header lines.
    if rest.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err(-WEBCLIENT_ERROR);
    }
    let rest = rest.split(|&b| b == b'#').next().unwrap_or(rest);
    let cut = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(cut);
    let path: &[u8] = if path.is_empty() { b"/" } else { path };
    if authority.contains(&b'@') {
        return Err(-WEBCLIENT_ERROR);
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix(b"[") {
        let close = v6.iter().position(|&b| b == b']').ok_or(-WEBCLIENT_ERROR)?;
        match &v6[close + 1..] {
            [] => (&v6[..close], &b""[..]),
            [b':', port @ ..] => (&v6[..close], port),
            _ => return Err(-WEBCLIENT_ERROR),
        }
    } else {
        match authority.iter().position(|&b| b == b':') {
            Some(i) => (&authority[..i], &authority[i + 1..]),
            None => (authority, &b""[..]),
        }
    };
    let port = if port.is_empty() {
        if tls {
            443
        } else {
            80
        }
    } else {
        let digits = core::str::from_utf8(port).map_err(|_| -WEBCLIENT_ERROR)?;
        match digits.parse::<u16>() {
            Ok(p) if p > 0 && digits.bytes().all(|b| b.is_ascii_digit()) => p,
            _ => return Err(-WEBCLIENT_ERROR),
        }
    };
    let host = core::str::from_utf8(host).map_err(|_| -WEBCLIENT_ERROR)?;
    if host.is_empty() {
        return Err(-WEBCLIENT_ERROR);
    }
    Ok(Target {
        tls,
        authority,
        host,
        port,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        let t = parse_uri(b"http://example.com:8080/v1/chat?x=1#frag")
            .ok()
            .unwrap();
        assert_eq!(
            (t.authority, t.host, t.port, t.path),
            (
                &b"example.com:8080"[..],
                "example.com",
                8080,
                &b"/v1/chat?x=1"[..]
            )
        );
        let t = parse_uri(b"http://[::1]/").ok().unwrap();
        assert_eq!((t.host, t.port, t.authority), ("::1", 80, &b"[::1]"[..]));
        let t = parse_uri(b"http://h").ok().unwrap();
        assert_eq!((t.path, t.tls), (&b"/"[..], false));
        let t = parse_uri(b"https://api.example.com/v1?k=1").ok().unwrap();
        assert_eq!(
            (t.tls, t.host, t.port, t.authority, t.path),
            (
                true,
                "api.example.com",
                443,
                &b"api.example.com"[..],
                &b"/v1?k=1"[..]
            )
        );
        let t = parse_uri(b"https://[::1]:8443").ok().unwrap();
        assert_eq!(
            (t.tls, t.host, t.port, t.path),
            (true, "::1", 8443, &b"/"[..])
        );
        for bad in [
            &b"ftp://h/"[..],
            b"http://",
            b"https://",
            b"https:/h/",
            b"http://h:0/",
            b"http://h:99999/",
            b"http://h:1x/",
            b"http://a b/",
            b"http://u@h/",
        ] {
            assert!(parse_uri(bad).is_err());
        }
    }
}
