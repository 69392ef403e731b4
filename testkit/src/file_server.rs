//! A scripted file server with the C package's protocol (its
//! `resource/file_server`): `POST /upload` with a `multipart/form-data`
//! body whose part `file` is the file, answered with JSON holding a
//! 36-character `file_id` (`{"code":0,"data":{"file_id":...}}`), and `GET
//! /download/{file_id}` serving the stored bytes. Real TCP on 127.0.0.1;
//! each connection carries one request (webclient closes after it).
//!
//! The multipart body is parsed for real: the boundary from the
//! `Content-Type` header, the part headers (`Content-Disposition` with its
//! `name` and `filename`, `Content-Type`), the part's bytes up to the
//! delimiter, and the closing delimiter; a body that is not well formed is
//! answered 400 and recorded as an error.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How the server answers the next upload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UploadAnswer {
    /// 200 with `{"code":0,"data":{"file_id":<a new 36-character id>}}`.
    Ok,
    /// This status with a short JSON error.
    Status(u16),
    /// 200 with this body as is.
    Body(String),
}

/// One upload as the server parsed it.
#[derive(Clone, Debug)]
pub struct Upload {
    pub path: String,
    /// The whole `Content-Type` request header.
    pub content_type: String,
    /// The `Content-Length` the client declared.
    pub content_length: usize,
    /// The part's `name` (the C package's protocol: `file`).
    pub field: String,
    pub filename: String,
    /// The part's own `Content-Type`.
    pub part_type: String,
    pub data: Vec<u8>,
    /// The id answered (for [`UploadAnswer::Ok`]).
    pub file_id: Option<String>,
}

#[derive(Default)]
struct State {
    script: Vec<UploadAnswer>,
    uploads: Vec<Upload>,
    downloads: Vec<String>,
    errors: Vec<String>,
    next_id: u32,
}

pub struct FileServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

fn lock(s: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

impl FileServer {
    /// Start with answers for the uploads, in order (then `Ok` for ever).
    pub fn start(script: Vec<UploadAnswer>) -> io::Result<FileServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let state = Arc::new(Mutex::new(State {
            script,
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            // Test infrastructure: not counted in the host heap's figures.
            rtt_agent::host::heap::exclude_this_thread(true);
            while !sp.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let st = st.clone();
                        std::thread::spawn(move || {
                            rtt_agent::host::heap::exclude_this_thread(true);
                            serve(stream, &st)
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(FileServer {
            addr,
            state,
            stop,
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:port/upload` (`PKG_AGENT_UPLOAD_URL`).
    pub fn upload_url(&self) -> String {
        format!("http://{}/upload", self.addr)
    }

    /// `http://127.0.0.1:port/download` (`PKG_AGENT_DOWNLOAD_URL`).
    pub fn download_url(&self) -> String {
        format!("http://{}/download", self.addr)
    }

    pub fn uploads(&self) -> Vec<Upload> {
        lock(&self.state).uploads.clone()
    }

    /// The ids asked for with `GET /download/{id}`.
    pub fn downloads(&self) -> Vec<String> {
        lock(&self.state).downloads.clone()
    }

    /// Requests the server could not parse.
    pub fn errors(&self) -> Vec<String> {
        lock(&self.state).errors.clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A 36-character id in the UUID layout, different for each `n`.
fn file_id(n: u32) -> String {
    let h = n.wrapping_mul(2_654_435_761);
    format!(
        "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
        h,
        n & 0xffff,
        h >> 20,
        n & 0xfff,
        u64::from(h) * 7 + u64::from(n)
    )
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.split("\r\n").skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The value of `key=` in a header's parameters (quoted or not).
fn param(value: &str, key: &str) -> Option<String> {
    value.split(';').skip(1).find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case(key)
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

/// One part of a form: (name, filename, its Content-Type, its bytes).
pub type FormPart = (String, String, String, Vec<u8>);

/// Parse a `multipart/form-data` body with `boundary`: each part.
pub fn parse_multipart(body: &[u8], boundary: &str) -> Result<Vec<FormPart>, String> {
    let delim = format!("--{boundary}");
    let mut parts = Vec::new();
    if !body.starts_with(delim.as_bytes()) {
        return Err("the body does not start with the boundary".into());
    }
    let mut rest = &body[delim.len()..];
    loop {
        if rest.starts_with(b"--") {
            if rest != b"--\r\n" && rest != b"--" {
                return Err("bytes after the closing delimiter".into());
            }
            return Ok(parts);
        }
        rest = rest
            .strip_prefix(b"\r\n")
            .ok_or("no CRLF after a delimiter")?;
        let end = find(rest, b"\r\n\r\n").ok_or("a part without the end of its headers")?;
        let head = std::str::from_utf8(&rest[..end]).map_err(|_| "part headers not UTF-8")?;
        rest = &rest[end + 4..];
        let next = format!("\r\n{delim}");
        let stop = find(rest, next.as_bytes()).ok_or("a part without a closing delimiter")?;
        let data = rest[..stop].to_vec();
        rest = &rest[stop + next.len()..];
        let mut name = String::new();
        let mut filename = String::new();
        let mut ptype = String::new();
        for line in head.split("\r\n") {
            let Some((k, v)) = line.split_once(':') else {
                return Err(format!("bad part header {line:?}"));
            };
            if k.trim().eq_ignore_ascii_case("content-disposition") {
                if !v.trim().starts_with("form-data") {
                    return Err("a part that is not form-data".into());
                }
                name = param(v, "name").unwrap_or_default();
                filename = param(v, "filename").unwrap_or_default();
            } else if k.trim().eq_ignore_ascii_case("content-type") {
                ptype = v.trim().to_string();
            }
        }
        parts.push((name, filename, ptype, data));
    }
}

fn respond(stream: &mut TcpStream, status: u16, ctype: &str, body: &[u8]) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Status",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
}

fn serve(mut stream: TcpStream, state: &Mutex<State>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        match stream.read(&mut tmp) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut body = buf[head_end + 4..].to_vec();
    let line = head.lines().next().unwrap_or_default().to_string();
    let mut words = line.split(' ');
    let (method, path) = (
        words.next().unwrap_or_default().to_string(),
        words.next().unwrap_or_default().to_string(),
    );
    if method == "GET" {
        let id = path
            .strip_prefix("/download/")
            .unwrap_or_default()
            .to_string();
        let mut s = lock(state);
        s.downloads.push(id.clone());
        let found = s
            .uploads
            .iter()
            .find(|u| u.file_id.as_deref() == Some(id.as_str()))
            .map(|u| u.data.clone());
        drop(s);
        match found {
            Some(data) => respond(&mut stream, 200, "application/octet-stream", &data),
            None => respond(
                &mut stream,
                404,
                "application/json",
                b"{\"detail\":\"Not Found\"}",
            ),
        }
        return;
    }
    let length: usize = header(&head, "Content-Length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while body.len() < length {
        match stream.read(&mut tmp) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&tmp[..n]),
        }
    }
    let fail = |stream: &mut TcpStream, why: String| {
        lock(state).errors.push(why.clone());
        respond(
            stream,
            400,
            "application/json",
            format!("{{\"detail\":{why:?}}}").as_bytes(),
        );
    };
    if method != "POST" {
        return fail(&mut stream, format!("unexpected method {method}"));
    }
    if body.len() != length {
        return fail(
            &mut stream,
            format!("body of {} bytes, Content-Length {length}", body.len()),
        );
    }
    let ctype = header(&head, "Content-Type")
        .unwrap_or_default()
        .to_string();
    if !ctype.starts_with("multipart/form-data") {
        return fail(&mut stream, format!("Content-Type {ctype:?}"));
    }
    let Some(boundary) = param(&ctype, "boundary") else {
        return fail(&mut stream, "no boundary".into());
    };
    let parts = match parse_multipart(&body, &boundary) {
        Ok(p) => p,
        Err(e) => return fail(&mut stream, e),
    };
    let Some((field, filename, part_type, data)) = parts.into_iter().find(|p| p.0 == "file") else {
        return fail(&mut stream, "no part named file".into());
    };
    let mut s = lock(state);
    let answer = if s.script.is_empty() {
        UploadAnswer::Ok
    } else {
        s.script.remove(0)
    };
    let id = (answer == UploadAnswer::Ok).then(|| {
        s.next_id += 1;
        file_id(s.next_id)
    });
    s.uploads.push(Upload {
        path,
        content_type: ctype,
        content_length: length,
        field,
        filename,
        part_type,
        data,
        file_id: id.clone(),
    });
    drop(s);
    match answer {
        UploadAnswer::Ok => {
            let body = format!(
                "{{\"code\":0,\"msg\":\"ok\",\"data\":{{\"file_id\":\"{}\"}}}}",
                id.unwrap_or_default()
            );
            respond(&mut stream, 200, "application/json", body.as_bytes());
        }
        UploadAnswer::Status(code) => respond(
            &mut stream,
            code,
            "application/json",
            b"{\"detail\":\"scripted failure\"}",
        ),
        UploadAnswer::Body(text) => respond(&mut stream, 200, "application/json", text.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_36_characters() {
        for n in [1, 2, 77, 65_536] {
            assert_eq!(file_id(n).len(), 36);
        }
        assert_ne!(file_id(1), file_id(2));
    }

    #[test]
    fn multipart_parsing() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x00\r\n--X\x01\r\n--XyZ--\r\n";
        let parts = parse_multipart(body, "XyZ").unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].0, "file");
        assert_eq!(parts[0].1, "a.png");
        assert_eq!(parts[0].2, "image/png");
        assert_eq!(parts[0].3, b"\x00\r\n--X\x01");
        assert!(parse_multipart(
            b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc",
            "XyZ"
        )
        .is_err());
        assert!(parse_multipart(b"nope", "XyZ").is_err());
    }
}
