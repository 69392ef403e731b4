//! The scripted OpenAI-compatible server of the real-firmware check
//! (`tests/qemu/run.sh`): the test kit's `llm_server` with the simulator's
//! arithmetic model, plus fault scenarios chosen by a keyword in the last
//! user message.
//!
//! `qemu_llm_server` listens on 127.0.0.1 (a free port), prints `PORT <n>`
//! on stdout, logs one line per request on stderr, and runs until its stdin
//! closes. `qemu_llm_server --connect 127.0.0.1:<n>` is the per-connection
//! relay QEMU runs for its guestfwd (`guestfwd=...-cmd:...`): it copies
//! stdin to that port and the answer to stdout, and refuses any address but
//! 127.0.0.1.
//!
//! Scenarios (keyword in the last user message):
//! - `slowstart`: nothing for 10 s, then a text answer;
//! - `brokenserver`: HTTP 500 with an OpenAI-style error body, every time;
//! - `ratelimited`: the first request of that message gets 429 with
//!   `Retry-After: 2`, the next ones the arithmetic model's answer;
//! - `stallforever`: one SSE event, then an SSE comment every 2 s for ten
//!   minutes: the request stays in flight and makes no progress;
//! - `stallheaders`: the 200 head, then no event: an SSE comment every 2 s
//!   for ten minutes, so no read waits as long as a read timeout and only
//!   the request deadline ends the request;
//! - `hugeanswer <N>`: a text answer of N bytes of content (default 131072,
//!   at most 4 MiB) in 512-byte events, each starting with its offset
//!   (`[000512] `): more than a small board's heap holds;
//! - `waitfor <N>`: nothing for N seconds (at most 60), then a text
//!   answer saying so (the abilities check keeps the loop busy across
//!   two runs of a schedule);
//! - `slowstream`: a text answer in five fragments 600 ms apart (the WebNet
//!   check sees the deltas arrive over time, not at once);
//! - `remotesub`, `remoteecho`: the MCP client's check: if the request
//!   offers the remote tool (`m1_sub`, the first MCP server's `sub`;
//!   `m2_echo`, the second one's `echo`), a call of it (a=10, b=4; text
//!   "hi there"), then, once its result follows, a text answer quoting it
//!   (`Remote result: <the tool message>`), so the console shows what the
//!   remote server computed; a request without that tool gets a text
//!   answer saying so;
//! - `mqttsetup`, `mqttbye`: the C package's MQTT toolset
//!   (`tests/qemu/run.sh --upstream-tools`): `mqttsetup` calls
//!   `mqtt_subscribe` (t/in, filter mode), then `mqtt_publish` (t/out), then
//!   `mqtt_rule` (t/in: temp > 30), one call per round, and answers with
//!   the three results (`MQTT set up: <r1> | <r2> | <r3>`); `mqttbye` calls
//!   `mqtt_disconnect` and answers `MQTT closed: <result>`; a request that
//!   does not offer the tool gets a text answer saying so;
//! - a last user message starting with `[MQTT message forwarded for
//!   analysis]` (what the MQTT toolset injects through
//!   `agent_inject_text`): the text answer [`MQTT_FORWARD_ANSWER`];
//! - issue 28's abilities (`tests/qemu/run.sh --abilities`,
//!   `tests/qemu/abilities.py`): a last user message `remember <key>
//!   <text>` calls the board's `remember` tool (key, text), `recall
//!   <query>` its `recall`, `forget <key>` its `forget`, and once the
//!   tool's result follows, the answer is `Result: <the tool message>`; a
//!   request without that tool gets a text answer saying so. The scheduled
//!   prompt `what is 2+3?` (exactly) is answered `5` at once, without a
//!   tool. The summary request of `PKG_AGENT_SUMMARY` (its system prompt
//!   starts [`SUMMARY_PROMPT`]) is answered [`SUMMARY_ANSWER`];
//! - issue 37's load run (`tests/qemu/soak.py`): a last user message
//!   `boardmem <tag>` calls the soak firmware's `board_mem` tool with that
//!   tag and answers `Result: <the tool message>`;
//! - anything else: the arithmetic model (tool calls to add/mul/compare in
//!   OpenAI's fragment shape, one round per nesting level).
//!
//! Faults on purpose (`--faults SPEC`, or the environment's
//! `QEMU_LLM_FAULTS`; the load run's, `tests/qemu/soak.py`): every request,
//! whatever it asks, draws an HTTP 500, its normal answer cut in the
//! middle, or a stall the board's request deadline must end, from the test
//! kit's `llm_server::faults` (SPEC and the faults are described there).
//! The answer's log line names the fault (`scenario=fault-http500`,
//! `fault-cut:<the scenario cut>`, `fault-stall`).

use rtt_agent_testkit::agent::messages_of;
use rtt_agent_testkit::arith_model;
use rtt_agent_testkit::llm_server::faults::{Draws, Fault, Faults};
use rtt_agent_testkit::llm_server::*;
use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Mutex;
use std::time::Duration;

/// The last user message and how many tool results follow it.
fn last_user(body: &[u8]) -> (String, usize) {
    arith_model::conversation(body)
        .map_or((String::new(), 0), |(user, results)| (user, results.len()))
}

/// The function names of the request's `tools` array (what the board offers
/// the model: its own tools and the remote ones).
fn offered_tools(body: &[u8]) -> Vec<String> {
    rtt_agent_testkit::agent::offered_tools(body)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// A remote-tool scenario: the keyword, the tool the model calls, its
/// arguments in OpenAI's fragment shape, and the scenario names logged for
/// the call, the answer and a request without the tool.
struct RemoteCall {
    keyword: &'static str,
    tool: &'static str,
    args: &'static [&'static str],
    logged: [&'static str; 3],
}

const REMOTE_CALLS: &[RemoteCall] = &[
    RemoteCall {
        keyword: "remotesub",
        tool: "m1_sub",
        args: &[r#"{"a":10,"#, r#""b":4}"#],
        logged: ["remotesub-call", "remotesub-answer", "remotesub-missing"],
    },
    RemoteCall {
        keyword: "remoteecho",
        tool: "m2_echo",
        args: &[r#"{"text":"#, r#""hi there"}"#],
        logged: ["remoteecho-call", "remoteecho-answer", "remoteecho-missing"],
    },
];

/// One remote-tool scenario (see the module docs).
fn remote(
    req: &RecordedRequest,
    rc: &RemoteCall,
    results: usize,
) -> (&'static str, ScriptedResponse) {
    let offered = offered_tools(&req.body);
    if !offered.iter().any(|t| t == rc.tool) {
        // Said in the answer, so the console shows why no remote call was
        // made.
        let text = format!(
            "{} was not offered (tools: {}).",
            rc.tool,
            offered.join(" ")
        );
        return (rc.logged[2], ScriptedResponse::text(&[text.as_str()]));
    }
    if results > 0 {
        let result = messages_of(req)
            .last()
            .filter(|m| m.role == "tool")
            .map(|m| m.content.clone())
            .unwrap_or_default();
        return (
            rc.logged[1],
            ScriptedResponse::text(&["Remote result: ", result.as_str()]),
        );
    }
    (
        rc.logged[0],
        ScriptedResponse::tool_calls(&[("call_r1", rc.tool, rc.args)]),
    )
}

/// A scripted MQTT conversation: the keyword, the calls made one per round
/// (tool name, arguments in OpenAI's fragment shape), the prefix of the
/// answer that quotes their results, and the scenario names logged for a
/// call, the answer and a request without the tool.
struct MqttScript {
    keyword: &'static str,
    calls: &'static [(&'static str, &'static [&'static str])],
    answer: &'static str,
    logged: [&'static str; 3],
}

const MQTT_SCRIPTS: &[MqttScript] = &[
    MqttScript {
        keyword: "mqttsetup",
        calls: &[
            (
                "mqtt_subscribe",
                &[
                    r#"{"action":"subscribe","#,
                    r#""topic":"t/in","mode":"filter"}"#,
                ],
            ),
            (
                "mqtt_publish",
                &[
                    r#"{"topic":"t/out","#,
                    r#""message":"hello from the board"}"#,
                ],
            ),
            (
                "mqtt_rule",
                &[
                    r#"{"action":"set","topic":"t/in","#,
                    r#""field":"temp","op":">","value":30}"#,
                ],
            ),
        ],
        answer: "MQTT set up: ",
        logged: ["mqttsetup-call", "mqttsetup-answer", "mqttsetup-missing"],
    },
    MqttScript {
        keyword: "mqttbye",
        calls: &[("mqtt_disconnect", &["{}"])],
        answer: "MQTT closed: ",
        logged: ["mqttbye-call", "mqttbye-answer", "mqttbye-missing"],
    },
];

/// What the MQTT toolset puts first in the message it injects
/// (`PKG_AGENT_TOOL_MQTT_INJECT_FMT` of the C package's `tool_mqtt.h`).
const MQTT_FORWARD_PREFIX: &str = "[MQTT message forwarded for analysis]";

/// The answer to an injected MQTT message.
const MQTT_FORWARD_ANSWER: &str =
    "MQTT watch: the scripted model read the forwarded message and answers on its own.";

/// One scripted MQTT conversation (see the module docs).
fn mqtt(
    req: &RecordedRequest,
    script: &MqttScript,
    results: usize,
) -> (&'static str, ScriptedResponse) {
    let offered = offered_tools(&req.body);
    if let Some((missing, _)) = script
        .calls
        .iter()
        .find(|(tool, _)| !offered.iter().any(|t| t == tool))
    {
        let text = format!("{missing} was not offered (tools: {}).", offered.join(" "));
        return (script.logged[2], ScriptedResponse::text(&[text.as_str()]));
    }
    if let Some((tool, args)) = script.calls.get(results) {
        let id = format!("call_m{results}");
        return (
            script.logged[0],
            ScriptedResponse::tool_calls(&[(id.as_str(), tool, args)]),
        );
    }
    let quoted: Vec<String> = arith_model::conversation(&req.body)
        .map(|(_, results)| results)
        .unwrap_or_default();
    let text = format!("{}{}", script.answer, quoted.join(" | "));
    (script.logged[1], ScriptedResponse::text(&[text.as_str()]))
}

/// The start of `PKG_AGENT_SUMMARY`'s system prompt (src/runtime/memory.rs).
const SUMMARY_PROMPT: &str = "You keep the memory of a conversation";
/// The note the scripted model folds the dropped turns into.
const SUMMARY_ANSWER: &str = "qemu summary: the user keeps a door code in the notes.";
/// The scheduled prompt of the abilities check, and its answer.
const SCHEDULED_PROMPT: &str = "what is 2+3?";
const SCHEDULED_ANSWER: &str = "5";

/// A JSON string literal of `s`.
fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Issue 28's notes tools: `remember <key> <text>`, `recall <query>`,
/// `forget <key>` (see the module docs); None for any other message.
fn notes_call(
    req: &RecordedRequest,
    user: &str,
    results: usize,
) -> Option<(&'static str, ScriptedResponse)> {
    let user = user.trim();
    let (tool, rest) = user.split_once(' ').unwrap_or((user, ""));
    let (tool, logged): (&str, [&'static str; 3]) = match tool {
        "remember" => (
            "remember",
            ["remember-call", "remember-answer", "remember-missing"],
        ),
        "recall" => ("recall", ["recall-call", "recall-answer", "recall-missing"]),
        "forget" => ("forget", ["forget-call", "forget-answer", "forget-missing"]),
        _ => return None,
    };
    let offered = offered_tools(&req.body);
    if !offered.iter().any(|t| t == tool) {
        let text = format!("{tool} was not offered (tools: {}).", offered.join(" "));
        return Some((logged[2], ScriptedResponse::text(&[text.as_str()])));
    }
    if results > 0 {
        let result = messages_of(req)
            .last()
            .filter(|m| m.role == "tool")
            .map(|m| m.content.clone())
            .unwrap_or_default();
        return Some((
            logged[1],
            ScriptedResponse::text(&["Result: ", result.as_str()]),
        ));
    }
    let rest = rest.trim();
    let args = match tool {
        "remember" => {
            let (key, text) = rest.split_once(' ').unwrap_or((rest, ""));
            format!(
                "{{\"key\":{},\"text\":{}}}",
                json_string(key),
                json_string(text.trim())
            )
        }
        "recall" => format!("{{\"query\":{}}}", json_string(rest)),
        _ => format!("{{\"key\":{}}}", json_string(rest)),
    };
    // OpenAI's fragment shape: the arguments in two pieces.
    let cut = args.len() / 2;
    let cut = (cut..args.len())
        .find(|&i| args.is_char_boundary(i))
        .unwrap_or(args.len());
    let (a, b) = args.split_at(cut);
    Some((
        logged[0],
        ScriptedResponse::tool_calls(&[("call_n1", tool, &[a, b])]),
    ))
}

/// The load run's heap sample (`boardmem <tag>`): a call of the soak
/// firmware's `board_mem` tool with the tag, then `Result: <its message>`;
/// None for any other message.
fn board_mem_call(
    req: &RecordedRequest,
    user: &str,
    results: usize,
) -> Option<(&'static str, ScriptedResponse)> {
    let tag = user.trim().strip_prefix("boardmem")?.trim();
    let offered = offered_tools(&req.body);
    if !offered.iter().any(|t| t == "board_mem") {
        let text = format!("board_mem was not offered (tools: {}).", offered.join(" "));
        return Some(("boardmem-missing", ScriptedResponse::text(&[text.as_str()])));
    }
    if results > 0 {
        let result = messages_of(req)
            .last()
            .filter(|m| m.role == "tool")
            .map(|m| m.content.clone())
            .unwrap_or_default();
        return Some((
            "boardmem-answer",
            ScriptedResponse::text(&["Result: ", result.as_str()]),
        ));
    }
    let tag: u64 = tag.parse().unwrap_or(0);
    let args = format!("{{\"tag\":{tag}}}");
    Some((
        "boardmem-call",
        ScriptedResponse::tool_calls(&[("call_b1", "board_mem", &[args.as_str()])]),
    ))
}

const HUGE_DEFAULT: usize = 128 * 1024;
const HUGE_MAX: usize = 4 << 20;
const HUGE_PIECE: usize = 512;

/// `size` bytes of answer text in pieces of [`HUGE_PIECE`], each starting
/// with its offset, so a transcript shows how far the board read.
fn huge_pieces(size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < size {
        let len = HUGE_PIECE.min(size - at);
        let mut p = format!("[{at:06}] ");
        while p.len() < len {
            p.push_str("lorem ipsum ");
        }
        p.truncate(len);
        out.push(p);
        at += len;
    }
    out
}

static RATE_LIMITED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn respond(req: &RecordedRequest) -> (&'static str, ScriptedResponse) {
    let (user, tools) = last_user(&req.body);
    if messages_of(req)
        .first()
        .is_some_and(|m| m.role == "system" && m.content.starts_with(SUMMARY_PROMPT))
    {
        return ("summary", ScriptedResponse::text(&[SUMMARY_ANSWER]));
    }
    if user.trim() == SCHEDULED_PROMPT {
        return ("scheduled", ScriptedResponse::text(&[SCHEDULED_ANSWER]));
    }
    if let Some(answer) = notes_call(req, &user, tools) {
        return answer;
    }
    if let Some(answer) = board_mem_call(req, &user, tools) {
        return answer;
    }
    if user.contains("slowstart") {
        std::thread::sleep(Duration::from_secs(10));
        return (
            "slowstart",
            ScriptedResponse::text(&["The slow ", "model ", "answered ", "after ten seconds."]),
        );
    }
    if user.contains("brokenserver") {
        return (
            "brokenserver",
            ScriptedResponse::error(
                500,
                "scripted internal error of the qemu check",
                "server_error",
                None,
            ),
        );
    }
    if user.contains("ratelimited") {
        let mut seen = RATE_LIMITED.lock().unwrap_or_else(|e| e.into_inner());
        if seen.get_or_insert_with(HashSet::new).insert(user.clone()) {
            return (
                "ratelimited-429",
                ScriptedResponse::error(
                    429,
                    "scripted rate limit of the qemu check",
                    "rate_limit_exceeded",
                    None,
                )
                .retry_after(2),
            );
        }
        return ("ratelimited-retry", arith_model::respond(req));
    }
    if user.contains("stallforever") {
        let mut events = vec![sse_event(&chunk_json(
            r#"{"role":"assistant","content":"Thinking"}"#,
            None,
        ))];
        events.extend((0..300).map(|_| b": still thinking\n\n".to_vec()));
        return (
            "stallforever",
            ScriptedResponse::sse(events).delay(Duration::from_secs(2)),
        );
    }
    if user.contains("stallheaders") {
        let comments = (0..300).map(|_| b": still thinking\n\n".to_vec()).collect();
        return (
            "stallheaders",
            ScriptedResponse::sse(comments).delay(Duration::from_secs(2)),
        );
    }
    if let Some(rest) = user.split("hugeanswer").nth(1) {
        let size = rest
            .split_whitespace()
            .next()
            .and_then(|w| w.trim_end_matches(':').parse::<usize>().ok())
            .unwrap_or(HUGE_DEFAULT)
            .min(HUGE_MAX);
        let pieces = huge_pieces(size);
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        return ("hugeanswer", ScriptedResponse::text(&refs));
    }
    if let Some(rest) = user.split("waitfor ").nth(1) {
        let secs = rest
            .split_whitespace()
            .next()
            .and_then(|w| w.trim_end_matches(':').parse::<u64>().ok())
            .unwrap_or(10)
            .min(60);
        std::thread::sleep(Duration::from_secs(secs));
        let text = format!("Waited {secs} seconds.");
        return ("waitfor", ScriptedResponse::text(&[text.as_str()]));
    }
    if user.contains("slowstream") {
        return (
            "slowstream",
            ScriptedResponse::text(&["Counting ", "slowly: ", "one, ", "two, ", "three."])
                .delay(Duration::from_millis(600)),
        );
    }
    if let Some(rc) = REMOTE_CALLS.iter().find(|rc| user.contains(rc.keyword)) {
        return remote(req, rc, tools);
    }
    if user.starts_with(MQTT_FORWARD_PREFIX) {
        return (
            "mqtt-forward",
            ScriptedResponse::text(&[MQTT_FORWARD_ANSWER]),
        );
    }
    if let Some(script) = MQTT_SCRIPTS.iter().find(|s| user.contains(s.keyword)) {
        return mqtt(req, script, tools);
    }
    ("arith", arith_model::respond(req))
}

fn relay(addr: &str) -> i32 {
    if !addr.starts_with("127.0.0.1:") {
        eprintln!("qemu_llm_server --connect: only 127.0.0.1 is allowed, not {addr}");
        return 2;
    }
    let Ok(up) = TcpStream::connect(addr) else {
        eprintln!("qemu_llm_server --connect: cannot connect to {addr}");
        return 1;
    };
    let _ = up.set_nodelay(true);
    let Ok(mut up_w) = up.try_clone() else {
        return 1;
    };
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 || up_w.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = up_w.shutdown(Shutdown::Write);
    });
    let mut up_r = up;
    let mut out = std::io::stdout().lock();
    let mut buf = [0u8; 4096];
    while let Ok(n) = up_r.read(&mut buf) {
        if n == 0 || out.write_all(&buf[..n]).is_err() || out.flush().is_err() {
            break;
        }
    }
    0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--connect" {
        std::process::exit(relay(&args[2]));
    }
    let spec = match args.iter().position(|a| a == "--faults") {
        Some(i) => args.get(i + 1).cloned(),
        None => std::env::var("QEMU_LLM_FAULTS").ok(),
    };
    // The draws, in the order requests arrive (testkit's llm_server::faults).
    let draws = match spec.as_deref().map(Faults::parse) {
        None => None,
        Some(Ok(f)) => Some(Draws::new(f)),
        Some(Err(e)) => {
            eprintln!("qemu_llm_server: --faults/QEMU_LLM_FAULTS: {e}");
            std::process::exit(2);
        }
    };
    if let Some(d) = &draws {
        eprintln!("[server] faults: {}", d.faults().describe());
    }
    let count = std::sync::atomic::AtomicUsize::new(0);
    let server = LlmServer::with_model(move |req| {
        let n = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let (user, tools) = last_user(&req.body);
        eprintln!(
            "[server] request {n}: {} {} conn {} user={:?} tool_results={tools} bytes={} tools={}",
            req.method,
            req.path,
            req.conn,
            user,
            req.body.len(),
            offered_tools(&req.body).join(",")
        );
        let fault = draws.as_ref().map_or(Fault::None, |d| {
            d.next_request(tools > 0, std::time::Instant::now())
        });
        let (scenario, resp) = match (fault, &draws) {
            (Fault::None, _) | (_, None) => {
                let (scenario, resp) = respond(req);
                (scenario.to_string(), resp)
            }
            // A cut takes the normal answer (its scenario named too).
            (Fault::Cut, Some(d)) => {
                let (scenario, resp) = respond(req);
                (
                    format!("{}:{scenario}", fault.name()),
                    d.faults().answer(fault, resp),
                )
            }
            (_, Some(d)) => (
                fault.name().to_string(),
                d.faults().answer(fault, ScriptedResponse::no_script_left()),
            ),
        };
        let kind = match &resp.body {
            Body::Pieces(p)
                if p.iter()
                    .any(|e| e.windows(12).any(|w| w == b"\"tool_calls\"")) =>
            {
                "tool_calls"
            }
            _ => "text",
        };
        eprintln!(
            "[server] answer {n}: scenario={scenario} status={} {kind}",
            resp.status
        );
        resp
    })
    .expect("bind 127.0.0.1");
    println!("PORT {}", server.port());
    let _ = std::io::stdout().flush();
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    for e in server.errors() {
        eprintln!("[server] note: {e}");
    }
}
