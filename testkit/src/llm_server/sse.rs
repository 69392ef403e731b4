//! Body builders: JSON strings, SSE events and whole OpenAI-shaped
//! streams (text, tool calls), and OpenAI-style error bodies.

/// `s` as a JSON string literal, quotes included.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One SSE event carrying `data`; a multi-line `data` becomes several
/// `data:` lines, which the SSE rules join back with `\n`.
pub fn sse_event(data: &str) -> Vec<u8> {
    let mut out = String::new();
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out.into_bytes()
}

pub fn sse_done() -> Vec<u8> {
    b"data: [DONE]\n\n".to_vec()
}

/// A `chat.completion.chunk` object with one choice whose `delta` is the
/// given JSON object text.
pub fn chunk_json(delta_json: &str, finish_reason: Option<&str>) -> String {
    let finish = finish_reason.map_or_else(|| "null".to_string(), json_string);
    format!(
        concat!(
            r#"{{"id":"chatcmpl-scripted","object":"chat.completion.chunk","created":0,"#,
            r#""model":"scripted","choices":[{{"index":0,"delta":{},"finish_reason":{}}}]}}"#
        ),
        delta_json, finish
    )
}

/// One event per content chunk; the first also carries `"role":"assistant"`
/// as OpenAI's first chunk does.
pub fn sse_content_events(chunks: &[&str]) -> Vec<Vec<u8>> {
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let role = if i == 0 { r#""role":"assistant","# } else { "" };
            let delta = format!(r#"{{{role}"content":{}}}"#, json_string(c));
            sse_event(&chunk_json(&delta, None))
        })
        .collect()
}

/// Tool-call fragments in OpenAI's shape: a call's first fragment carries
/// `index`, `id`, `type`, `function.name` and the first arguments fragment;
/// later fragments carry only `index` and `function.arguments`.
pub fn sse_tool_call_events(calls: &[(&str, &str, &[&str])]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    for (index, (id, name, fragments)) in calls.iter().enumerate() {
        let first_args = fragments.first().copied().unwrap_or("");
        let first = format!(
            r#"{{"tool_calls":[{{"index":{index},"id":{},"type":"function","function":{{"name":{},"arguments":{}}}}}]}}"#,
            json_string(id),
            json_string(name),
            json_string(first_args)
        );
        events.push(sse_event(&chunk_json(&first, None)));
        for frag in fragments.iter().skip(1) {
            let delta = format!(
                r#"{{"tool_calls":[{{"index":{index},"function":{{"arguments":{}}}}}]}}"#,
                json_string(frag)
            );
            events.push(sse_event(&chunk_json(&delta, None)));
        }
    }
    events
}

/// The closing chunk: empty delta and the finish reason.
pub fn sse_finish(finish_reason: &str) -> Vec<u8> {
    sse_event(&chunk_json("{}", Some(finish_reason)))
}

/// A whole text stream: content events, a finish chunk (left out when
/// `finish_reason` is `None`, to script a stream that never finishes), then
/// `data: [DONE]`.
pub fn sse_text(chunks: &[&str], finish_reason: Option<&str>) -> Vec<Vec<u8>> {
    let mut events = sse_content_events(chunks);
    if let Some(f) = finish_reason {
        events.push(sse_finish(f));
    }
    events.push(sse_done());
    events
}

/// A whole tool-call stream: `calls` are `(id, name, argument fragments)`,
/// each call's fragments in order, then the finish chunk (if any) and
/// `data: [DONE]`.
pub fn sse_tool_calls(
    calls: &[(&str, &str, &[&str])],
    finish_reason: Option<&str>,
) -> Vec<Vec<u8>> {
    let mut events = sse_tool_call_events(calls);
    if let Some(f) = finish_reason {
        events.push(sse_finish(f));
    }
    events.push(sse_done());
    events
}

/// `{"error":{"message":...,"type":...,"code":...}}` (`code` null if `None`).
pub fn error_body(message: &str, error_type: &str, code: Option<&str>) -> String {
    format!(
        r#"{{"error":{{"message":{},"type":{},"code":{}}}}}"#,
        json_string(message),
        json_string(error_type),
        code.map_or_else(|| "null".to_string(), json_string)
    )
}
