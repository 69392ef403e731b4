//! The scripted remote MCP server (`tests/mcp/scripted_server.py`, on the
//! official MCP Python SDK from `target/mcp-venv`) and a model that calls
//! its tools, for the MCP client's tests.

use crate::llm_server::*;
use rtt_agent::host::heap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The venv's python with the SDK, installed by tests/mcp/venv.sh when it
/// is missing; `None` (the test then skips, saying why) only when that
/// cannot be done.
pub fn python() -> Option<PathBuf> {
    let python = root().join("target/mcp-venv/bin/python");
    let ready = |p: &PathBuf| {
        Command::new(p)
            .args(["-c", "import mcp.server.mcpserver, uvicorn"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if ready(&python) {
        return Some(python);
    }
    let installed = Command::new("bash")
        .args(["-c", ". tests/mcp/venv.sh"])
        .current_dir(root())
        .status()
        .is_ok_and(|s| s.success());
    (installed && ready(&python)).then_some(python)
}

/// The scripted MCP server, killed on drop.
pub struct McpServer {
    child: Child,
    pub url: String,
    /// Reads the server's stdout; joined on drop, so that its memory is
    /// freed before any heap figure is taken.
    reader: Option<std::thread::JoinHandle<()>>,
}

impl McpServer {
    pub fn start(python: &PathBuf, args: &[&str]) -> McpServer {
        let mut child = Command::new(python)
            .arg(root().join("tests/mcp/scripted_server.py"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start tests/mcp/scripted_server.py");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            // Not the library's: its reads stay out of the heap figures.
            heap::exclude_this_thread(true);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("URL ") {
                    let _ = tx.send(url.to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the scripted MCP server printed no URL within 30 s");
        McpServer {
            child,
            url,
            reader: Some(reader),
        }
    }

    pub fn port(&self) -> String {
        let rest = self.url.rsplit(':').next().unwrap();
        rest.split('/').next().unwrap().to_string()
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// A model for the remote tools: "sub" calls `m1_sub(10, 4)`, "echo" calls
/// `m1_echo`, "fail" calls `m1_fail`; after a tool result it answers
/// `Result: <the tool's text>`.
pub fn remote_model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = crate::agent::messages_of(req);
    let last = msgs.last().cloned().unwrap();
    if last.role == "tool" {
        return ScriptedResponse::text(&["Result: ", &last.content]);
    }
    if last.content.contains("slow") {
        // scripted_server.py --sse-soon: its answer comes after SSE pings.
        ScriptedResponse::tool_calls(&[("call_l", "m1_slow", &[r#"{"text":"tortoise"}"#])])
    } else if last.content.contains("echo") {
        ScriptedResponse::tool_calls(&[("call_e", "m1_echo", &[r#"{"text":"hi there"}"#])])
    } else if last.content.contains("fail") {
        ScriptedResponse::tool_calls(&[("call_f", "m1_fail", &[r#"{"reason":"asked to"}"#])])
    } else if last.content.contains("wrong") {
        // A call that does not fit the remote schema: refused before it goes out.
        ScriptedResponse::tool_calls(&[("call_w", "m1_sub", &[r#"{"a":"ten"}"#])])
    } else {
        ScriptedResponse::tool_calls(&[("call_s", "m1_sub", &[r#"{"a":10,"b":4}"#])])
    }
}

/// One POST to the agent's own MCP server on 127.0.0.1:`port` (with
/// `Mcp-Session-Id: session` unless empty), from a thread whose allocations
/// stay out of the heap figures; the whole answer, head included.
pub fn mcp_post(port: u16, session: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let (session, body) = (session.to_string(), body.to_string());
    std::thread::spawn(move || {
        heap::exclude_this_thread(true);
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let head = if session.is_empty() {
            String::new()
        } else {
            format!("Mcp-Session-Id: {session}\r\n")
        };
        write!(
            s,
            "POST /mcp HTTP/1.1\r\n{head}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    })
    .join()
    .unwrap()
}

/// `initialize` on the agent's own MCP server at 127.0.0.1:`port` (through
/// [`mcp_post`]); the new session's id.
pub fn mcp_session(port: u16) -> String {
    let init = mcp_post(
        port,
        "",
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
    );
    init.lines()
        .find_map(|l| l.strip_prefix("Mcp-Session-Id: "))
        .expect("a session")
        .trim()
        .to_string()
}
