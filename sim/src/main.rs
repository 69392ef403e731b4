//! The host simulator: RT-Thread's shell on a PC, running the agent with the
//! CLI channel on this terminal.
//!
//! By default it starts a scripted model on 127.0.0.1 that answers arithmetic
//! with real tool calls (add, mul, compare; several rounds, parallel calls)
//! and anything else with text. With `AGENT_API_URL` (and `AGENT_API_KEY`,
//! `AGENT_MODEL`) set it talks to that endpoint instead, in the format its
//! URL implies (`…/v1/messages`: Anthropic Messages, `…/api/chat`: Ollama,
//! else OpenAI chat completions). The built-in model answers in each of them
//! too: `AGENT_BUILTIN_FORMAT=anthropic` (or `ollama`) points the agent at
//! its `/v1/messages` (or `/api/chat`) path, and `qemu_llm_server` serves
//! all three paths for an `AGENT_API_URL` of `http://127.0.0.1:PORT/v1/messages`.
//!
//! With `--web` the agent starts at once on the WebNet channel instead: the
//! host WebNet serves the page on 127.0.0.1 (`--web=PORT`, default any free
//! port) and the address is printed; `--web-token TOKEN` (16 characters
//! or more) is the token of the chat and the settings (PKG_AGENT_WEB_TOKEN
//! on a board); without one the chat is locked unless `--web-open-chat`
//! (PKG_AGENT_WEB_OPEN_CHAT). `--with-web` (`--with-web=PORT`) serves the
//! page next to the console chat instead (PKG_AGENT_ALSO_WEBNET_CHANNEL):
//! both talk to the same agent, each gets its own replies.
//!
//! With `--mcp` the agent starts at once with its MCP server (Streamable
//! HTTP) on 127.0.0.1 (`--mcp=PORT`, default any free port; the address is
//! printed), serving the built-in tools; `--mcp-token TOKEN` requires
//! `Authorization: Bearer TOKEN` (PKG_AGENT_MCP_TOKEN on a board); without
//! one the server does not start unless `--mcp-anonymous`
//! (PKG_AGENT_MCP_ALLOW_ANONYMOUS). Without `--web` the chat stays on this
//! terminal.
//!
//! `RTT_AGENT_STATE_FILE=<path>` is the state file (PKG_AGENT_STATE_FILE on
//! a board): tokens set with `agent_config web-token|mcp-token` are kept
//! there across restarts.
//!
//! With `--abilities` the optional parts of `docs/agent-abilities.md` have
//! something to work on: after each start of the agent the simulator
//! registers a tool of its own, `board_state`, with direct output
//! (`append_tool_ex`: its text is the reply, the model is not asked again),
//! and before the first start it serves a small scripted MCP server on
//! 127.0.0.1 with one tool, `slow` (it answers after 5 s), added as the
//! agent's remote server 1; its tool `m1_slow` gets a timeout of 1000 ms
//! (a sub-agent profile, `mathematician`, with the add and mul tools, runs
//! on the same built-in model)
//! (`agent_tool_set_options`), so a call of it ends with an error result
//! and the turn goes on. The built-in model calls `board_state` for a
//! message naming "board state" and `m1_slow` for one naming it.
//!
//! `RTT_AGENT_NOTES_FILE=<path>` is the notes file of the model's
//! `remember`, `recall` and `forget` (PKG_AGENT_NOTES_FILE on a board; the
//! built-in model calls them for `remember <key> <text>`, `recall [<query>]`
//! and `forget <key>`); `RTT_AGENT_SCHEDULE_FILE=<path>` the file of
//! `agent_schedule`'s entries (PKG_AGENT_SCHEDULE_FILE).
//!
//! Commands at `msh />`: every MSH command the firmware exports
//! (`main_loop_entry`, `cleanup_agent_entry`, `init_tools`,
//! `agent_send_message`, `agent_config`, `agent_status`, `agent_schedule`),
//! plus `help`, `free`
//! and `exit`.

use rtt_agent::abi::messages::TYPE_TEXT;
use rtt_agent::abilities::tool_options::AgentToolOptions;
use rtt_agent::cjson::sys::{cJSON, cJSON_Parse};
use rtt_agent::ffi::messages::{messages_append, messages_create, messages_destroy};
use rtt_agent::ffi::tools::{agent_tool_set_options, append_tool_ex};
use rtt_agent::host::{console, heap, shell};
use rtt_agent::runtime::agent_loop;
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent::runtime::tools::AgentToolList;
use rtt_agent::wire::line_editor::{Event, LineEditor};
use rtt_agent_testkit::arith_model;
use rtt_agent_testkit::llm_server::faults::{Draws, Fault, Faults};
use rtt_agent_testkit::llm_server::{LlmServer, RecordedRequest, ScriptedResponse};
use std::ffi::CString;

const PROMPT: &[u8] = b"msh />";

fn say(text: &str) {
    console::write(text.as_bytes());
}

/// Raw terminal input (no line buffering, no echo, no signals): the line
/// editors on the console do that, as on a board's UART. Restored on exit.
struct RawTerminal(Option<libc::termios>);

impl RawTerminal {
    fn enter() -> Self {
        // SAFETY: termios calls on fd 0 with a local struct.
        unsafe {
            if libc::isatty(0) == 0 {
                return RawTerminal(None);
            }
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return RawTerminal(None);
            }
            let saved = t;
            t.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN);
            t.c_iflag &= !(libc::IXON | libc::ICRNL);
            t.c_cc[libc::VMIN] = 1;
            t.c_cc[libc::VTIME] = 0;
            libc::tcsetattr(0, libc::TCSANOW, &t);
            RawTerminal(Some(saved))
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if let Some(t) = self.0 {
            // SAFETY: restoring the attributes read at start.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        }
    }
}

fn free() {
    let (mut total, mut used, mut max) = (0, 0, 0);
    // SAFETY: three writable locals.
    unsafe { rtt_agent::rtt::rt_memory_info(&mut total, &mut used, &mut max) };
    say(&format!(
        "total    : {total}\r\nused     : {used}\r\nmaximum  : {max}\r\navailable: {}\r\n",
        total - used
    ));
}

fn help() {
    say("RT-Thread shell commands (rtt-agent host simulator):\r\n");
    for c in shell::commands() {
        say(&format!(
            "{:<20} - {}\r\n",
            c.name.to_string_lossy(),
            c.desc.to_string_lossy()
        ));
    }
    say(&format!("{:<20} - {}\r\n", "help", "list the commands"));
    say(&format!("{:<20} - {}\r\n", "free", "show the heap"));
    say(&format!("{:<20} - {}\r\n", "exit", "leave the simulator"));
}

/// Point the agent at a real endpoint from the environment, or start the
/// scripted model. The returned server must live as long as the session.
/// Faults the built-in model makes on purpose (`SIM_MODEL_FAULTS`, a spec
/// of `testkit::llm_server::faults`: `seed=N,http500=P,cut=P,stall=P`), for
/// load runs (sim/tests/mix.py). A spec that does not parse stops the
/// simulator.
fn model_faults() -> Option<Draws> {
    let spec = std::env::var("SIM_MODEL_FAULTS").ok()?;
    match Faults::parse(&spec) {
        Ok(f) => {
            say(&format!(
                "built-in model: faults on purpose: {}\r\n",
                f.describe()
            ));
            Some(Draws::new(f))
        }
        Err(e) => {
            eprintln!("SIM_MODEL_FAULTS: {e}");
            std::process::exit(2)
        }
    }
}

/// Faults the built-in model has made (printed at exit).
static FAULTS_DRAWN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn configure() -> Option<LlmServer> {
    if let Ok(url) = std::env::var("AGENT_API_URL") {
        let key = std::env::var("AGENT_API_KEY").unwrap_or_default();
        let model = std::env::var("AGENT_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
        let (u, k, m) = (
            CString::new(url.clone()).ok()?,
            CString::new(key).ok()?,
            CString::new(model.clone()).ok()?,
        );
        // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
        // which copies them.
        unsafe { agent_config_set(k.as_ptr(), m.as_ptr(), u.as_ptr()) };
        say(&format!("endpoint: {url} (model {model})\r\n"));
        return None;
    }
    heap::exclude_this_thread(true);
    let server = match model_faults() {
        None => LlmServer::with_model(arith_model::respond),
        Some(draws) => LlmServer::with_model(move |req| {
            let fault = draws.next();
            if fault != Fault::None {
                FAULTS_DRAWN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            draws.faults().answer(fault, arith_model::respond(req))
        }),
    };
    heap::exclude_this_thread(false);
    match server {
        Ok(server) => {
            // The built-in model answers in the format the URL implies.
            let endpoint = match std::env::var("AGENT_BUILTIN_FORMAT").as_deref() {
                Ok("anthropic") => format!("http://{}/v1/messages", server.addr()),
                Ok("ollama") => format!("http://{}/api/chat", server.addr()),
                _ => server.url(),
            };
            let url = CString::new(endpoint.clone()).unwrap_or_default();
            // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
            // which copies them.
            unsafe {
                agent_config_set(
                    c"sk-simulator-local".as_ptr(),
                    c"scripted-arithmetic".as_ptr(),
                    url.as_ptr(),
                )
            };
            say(&format!(
                "endpoint: built-in scripted model at {endpoint} (set AGENT_API_URL to use a real one)\r\n",
            ));
            Some(server)
        }
        Err(e) => {
            say(&format!("cannot start the scripted model: {e}\r\n"));
            None
        }
    }
}

extern "C" {
    fn webnet_set_port(port: i32);
    fn rt_host_webnet_bound_port() -> i32;
}

/// `board_state` (with `--abilities`): the simulated board's state, a tool
/// with direct output.
///
/// # Safety
/// Called by the agent loop as a C tool: `node` is its live node.
unsafe extern "C" fn board_state(_args: *mut cJSON, node: *mut AgentToolList) {
    if node.is_null() {
        return;
    }
    let text = c"LED on, 23.5 C, fan off (simulated board)";
    // SAFETY: the node handed to the tool; its previous result is its own
    // to free; the text is NUL-terminated and copied.
    unsafe {
        messages_destroy((*node).ret.messages);
        (*node).ret.messages = std::ptr::null_mut();
        let m = messages_create(1);
        if m.is_null() || messages_append(m, TYPE_TEXT, text.as_ptr()) != 0 {
            messages_destroy(m);
            (*node).ret.ret = 1;
            return;
        }
        (*node).ret.messages = m;
        (*node).ret.ret = 0;
    }
}

/// Register `board_state` with direct output: after each start of the
/// agent (its tools are the registry's, freed at cleanup).
fn register_board_state() {
    let def = c"{\"type\":\"function\",\"function\":{\"name\":\"board_state\",\"description\":\"The board's LED, temperature and fan, as the user's answer\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}}";
    let options = AgentToolOptions {
        timeout_ms: 0,
        retries: 0,
        direct: 1,
        reserved: [0; 2],
    };
    // SAFETY: a NUL-terminated definition; the parsed tree is handed to
    // append_tool_ex (which takes it, also on failure); `options` is a live
    // value it copies.
    let rc = unsafe {
        let tree = cJSON_Parse(def.as_ptr());
        append_tool_ex(tree, Some(board_state), &options)
    };
    if rc != 0 {
        say("abilities: board_state could not be registered\r\n");
    }
}

/// The remote MCP server of `--abilities`: `initialize`, `tools/list` (one
/// tool, `slow`) and `tools/call`, answered after 5 s.
fn remote_mcp(req: &RecordedRequest) -> ScriptedResponse {
    let body = req.body_text();
    let id = body
        .split(r#""id":"#)
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
        .unwrap_or("0")
        .to_string();
    let result = |r: &str| {
        ScriptedResponse::json(
            200,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#),
        )
    };
    if body.contains(r#""method":"initialize""#) {
        return result(
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"rtt-agent-sim remote","version":"1"}}"#,
        );
    }
    if body.contains(r#""method":"notifications/"#) {
        return ScriptedResponse::raw(202, "application/json", "");
    }
    if body.contains(r#""method":"tools/list""#) {
        return result(
            r#"{"tools":[{"name":"slow","description":"A slow remote sensor: answers after 5 s","inputSchema":{"type":"object","properties":{}}}]}"#,
        );
    }
    result(r#"{"content":[{"type":"text","text":"slow sensor read"}]}"#)
        .delay(std::time::Duration::from_secs(5))
}

/// `--abilities`, before the agent's first start: the remote MCP server,
/// added as server 1, its tool's timeout. The server must live as long as
/// the session.
fn abilities() -> Option<LlmServer> {
    heap::exclude_this_thread(true);
    let server = LlmServer::with_model(remote_mcp);
    heap::exclude_this_thread(false);
    let server = match server {
        Ok(server) => server,
        Err(e) => {
            say(&format!(
                "abilities: cannot start the remote MCP server: {e}\r\n"
            ));
            return None;
        }
    };
    let url = format!("http://{}/mcp", server.addr());
    if rtt_agent::abilities::mcp_client::servers::add(url.as_bytes()).is_err() {
        say("abilities: the remote MCP server could not be added\r\n");
    }
    let options = AgentToolOptions {
        timeout_ms: REMOTE_TIMEOUT_MS,
        retries: 0,
        direct: 0,
        reserved: [0; 2],
    };
    // SAFETY: a NUL-terminated name and a live value, both copied.
    if unsafe { agent_tool_set_options(c"m1_slow".as_ptr(), &options) } != 0 {
        say("abilities: the options of m1_slow could not be set\r\n");
    }
    // A sub-agent on the same built-in model: its own system prompt and the
    // arithmetic tools only.
    let profile = rtt_agent::ffi::subagent::AgentProfile {
        name: c"mathematician".as_ptr(),
        description: c"Works out arithmetic step by step with the add and mul tools.".as_ptr(),
        system_prompt: c"You are the mathematician sub-agent.".as_ptr(),
        api_url: std::ptr::null(),
        api_key: std::ptr::null(),
        model: std::ptr::null(),
        tools: c"add, mul".as_ptr(),
    };
    // SAFETY: a profile of static NUL-terminated strings, copied.
    if unsafe { rtt_agent::ffi::subagent::agent_profile_add(&profile) } != 0 {
        say("abilities: the sub-agent profile could not be added\r\n");
    }
    say(&format!(
        "abilities: board_state (direct output); remote MCP server {url} with m1_slow (timeout {REMOTE_TIMEOUT_MS} ms); sub-agent mathematician (add, mul)\r\n"
    ));
    for (var, what) in [
        ("RTT_AGENT_NOTES_FILE", "notes file"),
        ("RTT_AGENT_SCHEDULE_FILE", "schedule file"),
    ] {
        match std::env::var(var) {
            Ok(path) => say(&format!("abilities: {what} {path}\r\n")),
            Err(_) => say(&format!("abilities: no {what} (set {var})\r\n")),
        }
    }
    Some(server)
}

/// The timeout of the remote tool `m1_slow` (`--abilities`).
const REMOTE_TIMEOUT_MS: u32 = 1000;

/// Start the agent (`main_loop_entry`), then, with `--abilities`, register
/// the simulator's own tool if this started it.
fn start_agent(abilities: bool, start: impl FnOnce()) {
    let was_running = agent_loop::is_running();
    start();
    if abilities && !was_running && agent_loop::is_running() {
        register_board_state();
    }
}

/// `--web[=PORT]`, `--with-web[=PORT]`, `--web-token TOKEN`, `--web-open-chat`, `--mcp[=PORT]`,
/// `--mcp-token TOKEN`, `--mcp-anonymous`, `--abilities`.
struct Options {
    web_port: Option<i32>,
    /// `--with-web`: the page as an extra channel next to the console chat.
    with_web: bool,
    web_token: Option<CString>,
    web_open_chat: bool,
    mcp_port: Option<u16>,
    mcp_token: Option<CString>,
    mcp_anonymous: bool,
    abilities: bool,
}

fn options() -> Options {
    let mut o = Options {
        web_port: None,
        with_web: false,
        web_token: None,
        web_open_chat: false,
        mcp_port: None,
        mcp_token: None,
        mcp_anonymous: false,
        abilities: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--web" {
            o.web_port = Some(0);
        } else if let Some(p) = a.strip_prefix("--web=") {
            o.web_port = Some(p.parse().unwrap_or_else(|_| {
                eprintln!("--web=PORT: {p:?} is not a port");
                std::process::exit(2)
            }));
        } else if a == "--with-web" {
            o.web_port = o.web_port.or(Some(0));
            o.with_web = true;
        } else if let Some(p) = a.strip_prefix("--with-web=") {
            o.with_web = true;
            o.web_port = Some(p.parse().unwrap_or_else(|_| {
                eprintln!("--with-web=PORT: {p:?} is not a port");
                std::process::exit(2)
            }));
        } else if a == "--web-token" {
            o.web_token = args.next().and_then(|t| CString::new(t).ok());
        } else if a == "--mcp" {
            o.mcp_port = Some(0);
        } else if let Some(p) = a.strip_prefix("--mcp=") {
            o.mcp_port = Some(p.parse().unwrap_or_else(|_| {
                eprintln!("--mcp=PORT: {p:?} is not a port");
                std::process::exit(2)
            }));
        } else if a == "--mcp-token" {
            o.mcp_token = args.next().and_then(|t| CString::new(t).ok());
        } else if a == "--web-open-chat" {
            o.web_open_chat = true;
        } else if a == "--mcp-anonymous" {
            o.mcp_anonymous = true;
        } else if a == "--abilities" {
            o.abilities = true;
        } else {
            eprintln!(
                "usage: rtt-agent-sim [--web[=PORT] | --with-web[=PORT]] [--web-token TOKEN] [--web-open-chat] [--mcp[=PORT]] [--mcp-token TOKEN] [--mcp-anonymous] [--abilities]"
            );
            std::process::exit(2);
        }
    }
    o
}

fn main() {
    let opts = options();
    let _raw = RawTerminal::enter();
    say("\r\n \\ | /\r\n- RT -     Thread Operating System (rtt-agent host simulator)\r\n / | \\\r\n");
    let _server = configure();
    // As finsh's thread does at boot, before anything can start the agent:
    // the console becomes the shell's device, with finsh's receive
    // indicator on it. The CLI channel saves that indicator when its chat
    // opens and puts it back when it ends; done after a start, it would
    // take the console from the chat that `--mcp` opens here.
    // SAFETY: the board's console device name is a NUL-terminated string of
    // the C glue's.
    unsafe { shell::finsh_set_device(rtt_agent::rtt::board().console_device) };
    console::start_stdin_reader();
    let _remote = if opts.abilities { abilities() } else { None };
    if let Some(port) = opts.mcp_port {
        use rtt_agent::abilities::mcp_server::server;
        server::set_overrides(server::Overrides {
            enabled: Some(true),
            port: Some(port),
            token: opts.mcp_token.map(|t| &*Box::leak(t.into_boxed_c_str())),
            allow_anonymous: Some(opts.mcp_anonymous),
            ..Default::default()
        });
    }
    if let Some(port) = opts.web_port {
        use rtt_agent::channels::web;
        if let Some(token) = opts.web_token {
            rtt_agent::runtime::settings::web::set_token(Some(Box::leak(token.into_boxed_c_str())));
        }
        rtt_agent::runtime::settings::web::set_open_chat(Some(opts.web_open_chat));
        // SAFETY: before webnet_init, as WebNet requires.
        unsafe { webnet_set_port(port) };
        if opts.with_web {
            // The console chat stays the channel; the page is served next
            // to it (PKG_AGENT_ALSO_WEBNET_CHANNEL).
            agent_loop::set_channel(std::ptr::addr_of!(rtt_agent::channels::cli::agent_cli_ops));
            agent_loop::set_extra_channels(Some(&[&web::agent_webnet_extra_ops]));
        } else {
            agent_loop::set_channel(std::ptr::addr_of!(web::agent_webnet_ops));
        }
        start_agent(opts.abilities, || {
            agent_loop::main_loop_entry();
        });
        // SAFETY: a plain getter of the host port.
        let bound = unsafe { rt_host_webnet_bound_port() };
        say(&format!(
            "WebNet channel: http://127.0.0.1:{bound}/cgi-bin/agent\r\n"
        ));
    } else {
        agent_loop::set_channel(std::ptr::addr_of!(rtt_agent::channels::cli::agent_cli_ops));
        if opts.mcp_port.is_some() {
            start_agent(opts.abilities, || {
                agent_loop::main_loop_entry();
            });
        }
    }
    if opts.mcp_port.is_some() {
        match rtt_agent::abilities::mcp_server::server::port() {
            Some(port) => say(&format!("MCP server: http://127.0.0.1:{port}/mcp\r\n")),
            None => say("MCP server: not started (see the log)\r\n"),
        }
    }
    if opts.web_port.is_none() && opts.mcp_port.is_none() {
        say("type main_loop_entry to start the agent, help for the commands\r\n");
    }

    // finsh's read loop: one byte at a time from the shell's device, asleep
    // until finsh's own indicator wakes it. While the CLI channel has the
    // console, that indicator is not installed and the shell sleeps.
    let mut editor = LineEditor::new();
    console::write(PROMPT);
    'shell: while let Some(byte) = shell::finsh_getchar(None) {
        match editor.feed(byte, &mut |b| console::write(b)) {
            Event::Pending => {}
            Event::Leave => break 'shell,
            Event::Submit(line) => {
                let line = String::from_utf8_lossy(&line).trim().to_string();
                match line.as_str() {
                    "" => {}
                    "exit" | "quit" => break 'shell,
                    "help" => help(),
                    "free" => free(),
                    _ => {
                        let mut found = true;
                        let starts = line.split_whitespace().next() == Some("main_loop_entry");
                        let mut run = || found = shell::exec(&line).is_some();
                        if starts {
                            start_agent(opts.abilities, run);
                        } else {
                            run();
                        }
                        if !found {
                            say(&format!(
                                "{}: command not found.\r\n",
                                line.split_whitespace().next().unwrap_or("")
                            ));
                        }
                    }
                }
                console::write(PROMPT);
            }
        }
    }
    if agent_loop::is_running() {
        rtt_agent::runtime::agent_loop::cleanup_agent_entry();
    }
    if std::env::var_os("SIM_MODEL_FAULTS").is_some() {
        say(&format!(
            "built-in model: {} faults made on purpose\r\n",
            FAULTS_DRAWN.load(std::sync::atomic::Ordering::Relaxed)
        ));
    }
    say("\r\nbye\r\n");
}
