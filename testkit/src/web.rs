//! The WebNet channel in a test or the simulator: the agent on the host
//! WebNet (127.0.0.1, a free port), and a plain HTTP/1.1 client for it over
//! real TCP.

use crate::llm_server::LlmServer;
use rtt_agent::channels::web::agent_webnet_ops;
use rtt_agent::runtime::agent_loop::{self, cleanup_agent_entry, main_loop_entry};
use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent::runtime::settings::web::set_open_chat;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

extern "C" {
    fn webnet_set_port(port: i32);
    fn rt_host_webnet_bound_port() -> i32;
}

/// The host WebNet's address once the channel has started it.
pub fn web_addr() -> Option<SocketAddr> {
    // SAFETY: a plain getter of the host port.
    let port = unsafe { rt_host_webnet_bound_port() };
    (port > 0).then(|| SocketAddr::from(([127, 0, 0, 1], port as u16)))
}

/// A running agent on the WebNet channel talking to `server`; stopped (and
/// everything freed) when dropped. WebNet itself keeps running: it cannot
/// be stopped (as on a board).
pub struct WebAgent {
    pub addr: SocketAddr,
}

impl WebAgent {
    /// With chat open while no token is set (PKG_AGENT_WEB_OPEN_CHAT), as
    /// the tests that are not about tokens need; `set_open_chat(Some(false))`
    /// after the start locks it again.
    pub fn start(server: &LlmServer, overrides: Overrides) -> WebAgent {
        set_open_chat(Some(true));
        // No wrong tokens counted from earlier tests.
        rtt_agent::net::token_limit::forget_all();
        crate::agent::configure(server, c"sk-web-secret-789", c"web-model", overrides);
        if web_addr().is_none() {
            // SAFETY: before webnet_init (WebNet asserts that); port 0: any.
            unsafe { webnet_set_port(0) };
        }
        agent_loop::set_channel(std::ptr::addr_of!(agent_webnet_ops));
        assert_eq!(main_loop_entry(), 0);
        WebAgent {
            addr: web_addr().expect("the channel started WebNet"),
        }
    }
}

impl Drop for WebAgent {
    fn drop(&mut self) {
        cleanup_agent_entry();
        set_open_chat(None);
        set_overrides(Overrides::default());
        agent_loop::set_channel(std::ptr::null());
    }
}

/// A response: status code, head lines, body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
    /// The body's SSE events as (event, data) pairs.
    pub fn events(&self) -> Vec<(String, String)> {
        sse_events(&self.text())
    }
}

/// Parse SSE `event:`/`data:` blocks (the WebNet channel's framing).
pub fn sse_events(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut event = String::from("message");
        let mut data: Vec<&str> = Vec::new();
        for line in block.lines() {
            if let Some(e) = line.strip_prefix("event: ") {
                event = e.to_string();
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push(d);
            } else if let Some(d) = line.strip_prefix("data:") {
                data.push(d);
            }
        }
        if !data.is_empty() {
            out.push((event, data.join("\n")));
        }
    }
    out
}

/// Send one request (the bytes of `raw` as they are) and read the response
/// until the server closes the connection (WebNet closes after each one).
pub fn exchange_raw(addr: SocketAddr, raw: &[u8]) -> std::io::Result<Response> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    s.write_all(raw)?;
    let mut all = Vec::new();
    s.read_to_end(&mut all)?;
    let cut = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no response head"))?;
    let head = String::from_utf8_lossy(&all[..cut]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok(Response {
        status,
        head,
        body: all[cut + 4..].to_vec(),
    })
}

/// `method path` with a JSON body (None: no body).
pub fn request(addr: SocketAddr, method: &str, path: &str, json: Option<&str>) -> Response {
    let mut raw = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if let Some(body) = json {
        raw += &format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    } else {
        raw += "\r\n";
    }
    exchange_raw(addr, raw.as_bytes()).expect("an HTTP response")
}

pub fn post(addr: SocketAddr, path: &str, json: &str) -> Response {
    request(addr, "POST", path, Some(json))
}
