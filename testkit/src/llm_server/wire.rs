//! Body builders for the other wire formats the library speaks: Anthropic
//! Messages (SSE events `message_start` … `message_stop`) and Ollama's
//! native chat (NDJSON), and which format a request's path asks for.

use super::response::ScriptedResponse;
use super::sse::json_string;

/// The wire format a request's URL path implies (the library's rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
    Ollama,
}

impl Wire {
    pub fn of_path(path: &str) -> Wire {
        let path = path.split(['?', '#']).next().unwrap_or("");
        let path = path.strip_suffix('/').unwrap_or(path);
        if path.ends_with("/v1/messages") {
            Wire::Anthropic
        } else if path.ends_with("/api/chat") {
            Wire::Ollama
        } else {
            Wire::OpenAi
        }
    }
}

/// One Anthropic SSE event: `event: kind` and its data.
pub fn anthropic_event(kind: &str, data: &str) -> Vec<u8> {
    format!("event: {kind}\ndata: {data}\n\n").into_bytes()
}

fn message_start() -> Vec<u8> {
    anthropic_event(
        "message_start",
        concat!(
            r#"{"type":"message_start","message":{"id":"msg_scripted","type":"message","#,
            r#""role":"assistant","content":[],"model":"scripted","stop_reason":null,"#,
            r#""usage":{"input_tokens":10,"output_tokens":1}}}"#
        ),
    )
}

fn block_delta(index: usize, delta: &str) -> Vec<u8> {
    anthropic_event(
        "content_block_delta",
        &format!(r#"{{"type":"content_block_delta","index":{index},"delta":{delta}}}"#),
    )
}

fn block_start(index: usize, block: &str) -> Vec<u8> {
    anthropic_event(
        "content_block_start",
        &format!(r#"{{"type":"content_block_start","index":{index},"content_block":{block}}}"#),
    )
}

fn block_stop(index: usize) -> Vec<u8> {
    anthropic_event(
        "content_block_stop",
        &format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
    )
}

fn message_end(stop_reason: &str) -> Vec<Vec<u8>> {
    vec![
        anthropic_event(
            "message_delta",
            &format!(
                r#"{{"type":"message_delta","delta":{{"stop_reason":{},"stop_sequence":null}},"usage":{{"output_tokens":20}}}}"#,
                json_string(stop_reason)
            ),
        ),
        anthropic_event("message_stop", r#"{"type":"message_stop"}"#),
    ]
}

/// A thinking block (when `reasoning` is not empty) at index 0: its text in
/// pieces, then its signature. Returns the next block index.
fn thinking(events: &mut Vec<Vec<u8>>, reasoning: &str, signature: &str) -> usize {
    if reasoning.is_empty() {
        return 0;
    }
    events.push(block_start(0, r#"{"type":"thinking","thinking":""}"#));
    for piece in reasoning.split_inclusive(' ') {
        events.push(block_delta(
            0,
            &format!(
                r#"{{"type":"thinking_delta","thinking":{}}}"#,
                json_string(piece)
            ),
        ));
    }
    events.push(block_delta(
        0,
        &format!(
            r#"{{"type":"signature_delta","signature":{}}}"#,
            json_string(signature)
        ),
    ));
    events.push(block_stop(0));
    1
}

/// An Anthropic text answer: an optional thinking block, the text in
/// `chunks`, `stop_reason`, a ping in between.
pub fn anthropic_text(
    reasoning: &str,
    signature: &str,
    chunks: &[&str],
    stop_reason: &str,
) -> Vec<Vec<u8>> {
    let mut events = vec![message_start()];
    let index = thinking(&mut events, reasoning, signature);
    events.push(block_start(index, r#"{"type":"text","text":""}"#));
    events.push(anthropic_event("ping", r#"{"type": "ping"}"#));
    for c in chunks {
        events.push(block_delta(
            index,
            &format!(r#"{{"type":"text_delta","text":{}}}"#, json_string(c)),
        ));
    }
    events.push(block_stop(index));
    events.extend(message_end(stop_reason));
    events
}

/// An Anthropic tool-use answer: an optional thinking block, then one
/// `tool_use` block per call `(id, name, argument pieces)`.
pub fn anthropic_tool_use(
    reasoning: &str,
    signature: &str,
    calls: &[(&str, &str, &[&str])],
) -> Vec<Vec<u8>> {
    let mut events = vec![message_start()];
    let first = thinking(&mut events, reasoning, signature);
    for (k, (id, name, pieces)) in calls.iter().enumerate() {
        let index = first + k;
        events.push(block_start(
            index,
            &format!(
                r#"{{"type":"tool_use","id":{},"name":{},"input":{{}}}}"#,
                json_string(id),
                json_string(name)
            ),
        ));
        events.push(block_delta(
            index,
            r#"{"type":"input_json_delta","partial_json":""}"#,
        ));
        for p in *pieces {
            events.push(block_delta(
                index,
                &format!(
                    r#"{{"type":"input_json_delta","partial_json":{}}}"#,
                    json_string(p)
                ),
            ));
        }
        events.push(block_stop(index));
    }
    events.extend(message_end("tool_use"));
    events
}

/// Anthropic's error body: `{"type":"error","error":{"type","message"}}`.
pub fn anthropic_error_body(error_type: &str, message: &str) -> String {
    format!(
        r#"{{"type":"error","error":{{"type":{},"message":{}}}}}"#,
        json_string(error_type),
        json_string(message)
    )
}

/// One Ollama NDJSON line with `message` (JSON object text) and `done`.
pub fn ollama_line(message: &str, done: bool, done_reason: Option<&str>) -> Vec<u8> {
    let mut line = format!(
        r#"{{"model":"scripted","created_at":"2025-01-01T00:00:00Z","message":{message},"done":{done}"#
    );
    if let Some(r) = done_reason {
        line.push_str(&format!(
            r#","done_reason":{},"total_duration":1000,"eval_count":3"#,
            json_string(r)
        ));
    }
    line.push_str("}\n");
    line.into_bytes()
}

/// An Ollama text answer: `thinking` pieces, then content pieces, then the
/// final line.
pub fn ollama_text(reasoning: &str, chunks: &[&str]) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    if !reasoning.is_empty() {
        for piece in reasoning.split_inclusive(' ') {
            lines.push(ollama_line(
                &format!(
                    r#"{{"role":"assistant","content":"","thinking":{}}}"#,
                    json_string(piece)
                ),
                false,
                None,
            ));
        }
    }
    for c in chunks {
        lines.push(ollama_line(
            &format!(r#"{{"role":"assistant","content":{}}}"#, json_string(c)),
            false,
            None,
        ));
    }
    lines.push(ollama_line(
        r#"{"role":"assistant","content":""}"#,
        true,
        Some("stop"),
    ));
    lines
}

/// An Ollama tool-call answer: every call whole, `(name, arguments object
/// text)`, on one line.
pub fn ollama_tool_calls(reasoning: &str, calls: &[(&str, &str)]) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    if !reasoning.is_empty() {
        lines.push(ollama_line(
            &format!(
                r#"{{"role":"assistant","content":"","thinking":{}}}"#,
                json_string(reasoning)
            ),
            false,
            None,
        ));
    }
    let list: Vec<String> = calls
        .iter()
        .map(|(name, args)| {
            format!(
                r#"{{"function":{{"name":{},"arguments":{args}}}}}"#,
                json_string(name)
            )
        })
        .collect();
    lines.push(ollama_line(
        &format!(
            r#"{{"role":"assistant","content":"","tool_calls":[{}]}}"#,
            list.join(",")
        ),
        false,
        None,
    ));
    lines.push(ollama_line(
        r#"{"role":"assistant","content":""}"#,
        true,
        Some("stop"),
    ));
    lines
}

impl ScriptedResponse {
    /// A 200 `application/x-ndjson` response, chunked, one write per line.
    pub fn ndjson(lines: Vec<Vec<u8>>) -> Self {
        let mut r = Self::sse(lines);
        r.headers = vec![("Content-Type".into(), "application/x-ndjson".into())];
        r
    }
}
