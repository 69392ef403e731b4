//! A scripted "model" that does arithmetic with the agent's built-in tools,
//! so the whole loop can be seen working offline: the simulator's default
//! endpoint, and the end-to-end tests.
//!
//! For the last user message it parses an expression with `+`, `-`, `*`,
//! parentheses, and `compare A and B` / `A > B` style questions. Each round
//! it calls the tools for every innermost operation at once (parallel tool
//! calls), substitutes the results from the `tool` messages that follow in
//! the conversation, and answers in text once one number is left. Anything
//! else gets a text answer explaining what it can do. Answers stream in
//! small fragments, with `reasoning_content` first, in OpenAI's shape.
//!
//! Beyond arithmetic, when the request offers the tool: `remember <key>
//! <text>`, `recall [<query>]` and `forget <key>` call the notes' tools, a
//! message naming `board state` calls `board_state` (the simulator's
//! direct-output tool) and one naming `m1_slow` calls that remote MCP tool;
//! after the tool's result the answer is `Result: <the result>`
//! ([`ability_call`]). A question that starts with `slowly` is answered
//! after [`SLOW_ANSWER`], each round. `what did I ask before?` is answered
//! with the user's previous message in the conversation (what shows that
//! the agent kept it).

use crate::llm_server::*;
use rtt_agent::cjson::sys::*;
use std::ffi::{CStr, CString};

#[derive(Clone, Debug, PartialEq)]
enum Expr {
    Num(f64),
    Op(char, Box<Expr>, Box<Expr>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }
    fn expr(&mut self) -> Option<Expr> {
        let mut left = self.term()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let right = self.term()?;
            left = Expr::Op(c as char, Box::new(left), Box::new(right));
        }
        Some(left)
    }
    fn term(&mut self) -> Option<Expr> {
        let mut left = self.atom()?;
        while let Some(c @ (b'*' | b'x')) = self.peek() {
            self.i += 1;
            let right = self.atom()?;
            let _ = c;
            left = Expr::Op('*', Box::new(left), Box::new(right));
        }
        Some(left)
    }
    fn atom(&mut self) -> Option<Expr> {
        match self.peek()? {
            b'(' => {
                self.i += 1;
                let e = self.expr()?;
                (self.peek()? == b')').then(|| self.i += 1)?;
                Some(e)
            }
            b'-' => {
                self.i += 1;
                match self.atom()? {
                    Expr::Num(n) => Some(Expr::Num(-n)),
                    e => Some(Expr::Op('*', Box::new(Expr::Num(-1.0)), Box::new(e))),
                }
            }
            c if c.is_ascii_digit() || c == b'.' => {
                let start = self.i;
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_digit() || self.s[self.i] == b'.')
                {
                    self.i += 1;
                }
                std::str::from_utf8(&self.s[start..self.i])
                    .ok()?
                    .parse()
                    .ok()
                    .map(Expr::Num)
            }
            _ => None,
        }
    }
}

/// The arithmetic in a question, if any: the longest run of expression
/// characters that parses and has at least one operation or comparison.
fn question(text: &str) -> Option<Expr> {
    let lower = text.to_lowercase();
    // "compare A and B", "is A greater than B", "A > B", "A < B"
    for sep in [
        " and ",
        " greater than ",
        " less than ",
        " than ",
        ">",
        "<",
        " with ",
    ] {
        if let Some(pos) = lower.find(sep) {
            let (l, r) = (&lower[..pos], &lower[pos + sep.len()..]);
            if let (Some(a), Some(b)) = (tail_expr(l), head_expr(r)) {
                if lower.contains("compare")
                    || lower.contains("greater")
                    || lower.contains("less")
                    || sep.contains(['>', '<'])
                {
                    return Some(Expr::Op('?', Box::new(a), Box::new(b)));
                }
            }
        }
    }
    let e = head_expr(&lower[lower.find(|c: char| c.is_ascii_digit() || c == '(' || c == '-')?..])?;
    matches!(e, Expr::Op(..)).then_some(e)
}

fn is_expr_char(c: char) -> bool {
    c.is_ascii_digit() || " .+-*x()".contains(c)
}

fn head_expr(s: &str) -> Option<Expr> {
    let s = s.trim_start();
    let end = s.find(|c: char| !is_expr_char(c)).unwrap_or(s.len());
    let mut p = Parser {
        s: s[..end].trim_end().as_bytes(),
        i: 0,
    };
    let e = p.expr()?;
    Some(e)
}

fn tail_expr(s: &str) -> Option<Expr> {
    let start = s.rfind(|c: char| !is_expr_char(c)).map_or(0, |i| i + 1);
    head_expr(&s[start..])
}

/// Innermost operations (both operands are numbers), left to right.
fn innermost(e: &Expr, out: &mut Vec<(char, f64, f64)>) {
    if let Expr::Op(op, a, b) = e {
        match (&**a, &**b) {
            (Expr::Num(x), Expr::Num(y)) => out.push((*op, *x, *y)),
            _ => {
                innermost(a, out);
                innermost(b, out);
            }
        }
    }
}

/// Replace innermost operations with `results`, in the same order.
fn substitute(e: &Expr, results: &mut std::slice::Iter<'_, Value>) -> Expr {
    match e {
        Expr::Op(op, a, b) => match (&**a, &**b) {
            (Expr::Num(_), Expr::Num(_)) => match results.next() {
                Some(Value::Num(n)) => Expr::Num(*n),
                Some(Value::Relation(r)) => {
                    Expr::Num(if r.contains("greater") { 1.0 } else { 0.0 })
                }
                None => e.clone(),
            },
            _ => Expr::Op(
                *op,
                Box::new(substitute(a, results)),
                Box::new(substitute(b, results)),
            ),
        },
        n => n.clone(),
    }
}

#[derive(Debug)]
enum Value {
    Num(f64),
    Relation(String),
}

fn fmt_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// A tool result text: "2 + 3 = 5" gives 5; "7 is greater than 3" a relation.
fn parse_result(text: &str) -> Result<Value, String> {
    if let Some(pos) = text.rfind('=') {
        return text[pos + 1..]
            .trim()
            .parse()
            .map(Value::Num)
            .map_err(|_| text.to_string());
    }
    if text.contains(" is ") && !text.starts_with("error") {
        return Ok(Value::Relation(text.to_string()));
    }
    Err(text.to_string())
}

/// The conversation after the last user message: (question, tool results).
pub fn conversation(body: &[u8]) -> Option<(String, Vec<String>)> {
    let (mut questions, results) = questions_and_results(body)?;
    questions.pop().map(|q| (q, results))
}

/// The user's messages of the request, oldest first (tool results sent as
/// user messages left out); empty when the body is not a chat request.
pub fn questions(body: &[u8]) -> Vec<String> {
    questions_and_results(body).map_or_else(Vec::new, |(q, _)| q)
}

/// Every user message, and the tool results after the last one.
fn questions_and_results(body: &[u8]) -> Option<(Vec<String>, Vec<String>)> {
    let c = CString::new(body.to_vec()).ok()?;
    // SAFETY: cJSON calls on a tree parsed here and deleted below.
    unsafe {
        let root = cJSON_Parse(c.as_ptr());
        if root.is_null() {
            return None;
        }
        let msgs = cJSON_GetObjectItemCaseSensitive(root, c"messages".as_ptr());
        let mut questions = Vec::new();
        let mut results = Vec::new();
        for i in 0..cJSON_GetArraySize(msgs) {
            let m = cJSON_GetArrayItem(msgs, i);
            let s = |k: &CStr| {
                let it = cJSON_GetObjectItemCaseSensitive(m, k.as_ptr());
                if it.is_null() || (*it).valuestring.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr((*it).valuestring)
                        .to_string_lossy()
                        .into_owned()
                }
            };
            let content = cJSON_GetObjectItemCaseSensitive(m, c"content".as_ptr());
            match s(c"role").as_str() {
                // Anthropic: a user message of `tool_result` blocks.
                "user" if !content.is_null() && (*content).type_ & 0xFF == cJSON_Array => {
                    for k in 0..cJSON_GetArraySize(content) {
                        let block = cJSON_GetArrayItem(content, k);
                        let text = |key: &CStr| {
                            let it = cJSON_GetObjectItemCaseSensitive(block, key.as_ptr());
                            if it.is_null() || (*it).valuestring.is_null() {
                                None
                            } else {
                                Some(
                                    CStr::from_ptr((*it).valuestring)
                                        .to_string_lossy()
                                        .into_owned(),
                                )
                            }
                        };
                        match text(c"type").as_deref() {
                            Some("tool_result") => {
                                results.push(text(c"content").unwrap_or_default())
                            }
                            Some("text") => {
                                questions.extend(text(c"text"));
                                results.clear();
                            }
                            _ => {}
                        }
                    }
                }
                "user" => {
                    let content = s(c"content");
                    // Tools as text: results come back in user messages.
                    if let Some(lines) = content.strip_prefix("Tool results:\n") {
                        for line in lines.lines() {
                            let (_, result) = line.split_once(": ").unwrap_or(("", line));
                            results.push(result.to_string());
                        }
                    } else {
                        questions.push(content);
                        results.clear();
                    }
                }
                "tool" => results.push(s(c"content")),
                _ => {}
            }
        }
        cJSON_Delete(root);
        Some((questions, results))
    }
}

/// The signature the scripted model gives a thinking block (Anthropic):
/// made from the text, so a test can tell it came back with its thinking.
pub fn signature_of(reasoning: &str) -> String {
    let sum = reasoning
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    format!("scripted-signature-{sum:08x}")
}

fn text_response(wire: Wire, text: &str, reasoning: &str) -> ScriptedResponse {
    let words: Vec<String> = text.split_inclusive(' ').map(str::to_string).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    match wire {
        Wire::OpenAi => {}
        Wire::Anthropic => {
            return ScriptedResponse::sse(anthropic_text(
                reasoning,
                &signature_of(reasoning),
                &refs,
                "end_turn",
            ))
        }
        Wire::Ollama => return ScriptedResponse::ndjson(ollama_text(reasoning, &refs)),
    }
    let mut events = vec![sse_event(&chunk_json(
        &format!(
            r#"{{"role":"assistant","reasoning_content":{}}}"#,
            json_string(reasoning)
        ),
        None,
    ))];
    let words: Vec<String> = text.split_inclusive(' ').map(str::to_string).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut content = sse_content_events(&refs);
    events.append(&mut content);
    events.push(sse_finish("stop"));
    events.push(sse_done());
    ScriptedResponse::sse(events)
}

static CALL_COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);

/// A tool's name and arguments (JSON text) for one arithmetic operation.
fn op_call(op: char, a: f64, b: f64) -> (&'static str, String) {
    let (name, b) = match op {
        '+' => ("add", b),
        '-' => ("add", -b),
        '*' => ("mul", b),
        _ => ("compare", b),
    };
    (
        name,
        format!(r#"{{"a": {}, "b": {}}}"#, fmt_num(a), fmt_num(b)),
    )
}

fn tool_response(wire: Wire, ops: &[(char, f64, f64)], reasoning: &str) -> ScriptedResponse {
    let calls: Vec<(&str, String)> = ops.iter().map(|&(op, a, b)| op_call(op, a, b)).collect();
    calls_response(wire, &calls, reasoning)
}

/// Native tool calls of `calls` (name, arguments), in the wire's format.
fn calls_response(wire: Wire, calls: &[(&str, String)], reasoning: &str) -> ScriptedResponse {
    let mut events = vec![sse_event(&chunk_json(
        &format!(
            r#"{{"role":"assistant","reasoning_content":{}}}"#,
            json_string(reasoning)
        ),
        None,
    ))];
    let calls: Vec<(String, &str, String)> = calls
        .iter()
        .map(|(name, args)| {
            let n = CALL_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (format!("call_{n}"), *name, args.clone())
        })
        .collect();
    // Arguments arrive in three fragments, as real servers split them.
    let pieces: Vec<Vec<String>> = calls
        .iter()
        .map(|(_, _, args)| {
            let chars: Vec<char> = args.chars().collect();
            let third = chars.len() / 3;
            vec![
                chars[..third].iter().collect(),
                chars[third..2 * third].iter().collect(),
                chars[2 * third..].iter().collect(),
            ]
        })
        .collect();
    let piece_refs: Vec<Vec<&str>> = pieces
        .iter()
        .map(|p| p.iter().map(String::as_str).collect())
        .collect();
    let call_refs: Vec<(&str, &str, &[&str])> = calls
        .iter()
        .zip(&piece_refs)
        .map(|((id, name, _), p)| (id.as_str(), *name, p.as_slice()))
        .collect();
    match wire {
        Wire::OpenAi => {}
        Wire::Anthropic => {
            return ScriptedResponse::sse(anthropic_tool_use(
                reasoning,
                &signature_of(reasoning),
                &call_refs,
            ))
        }
        Wire::Ollama => {
            let whole: Vec<(&str, &str)> = calls
                .iter()
                .map(|(_, name, args)| (*name, args.as_str()))
                .collect();
            return ScriptedResponse::ndjson(ollama_tool_calls(reasoning, &whole));
        }
    }
    events.append(&mut sse_tool_call_events(&call_refs));
    events.push(sse_finish("tool_calls"));
    events.push(sse_done());
    ScriptedResponse::sse(events)
}

/// The calls of a model without function calling: `<tool_call>` lines in
/// the answer's text (the agent's `PKG_AGENT_TOOLS_TEXT` format), streamed in
/// small pieces that cut the markers.
fn text_call_response(calls: &[(&str, String)]) -> ScriptedResponse {
    let mut text = String::from("Let me use the tools.\n");
    for (name, args) in calls {
        text +=
            &format!("<tool_call>{{\"name\": \"{name}\", \"arguments\": {args}}}</tool_call>\n");
    }
    let bytes: Vec<char> = text.chars().collect();
    let pieces: Vec<String> = bytes.chunks(7).map(|c| c.iter().collect()).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let mut events = sse_content_events(&refs);
    events.push(sse_finish("stop"));
    events.push(sse_done());
    ScriptedResponse::sse(events)
}

/// The arithmetic model without function calling: a request with `tools`
/// is refused (400), as such servers do; calls are written as text.
pub fn respond_text_tools(req: &RecordedRequest) -> ScriptedResponse {
    if req.body_text().contains("\"tools\"") {
        return ScriptedResponse::error(
            400,
            "this model does not support tools",
            "invalid_request_error",
            None,
        );
    }
    answer(req, true)
}

/// Decide the answer to one request.
///
/// The answer is in the wire format the request's path implies
/// ([`Wire::of_path`]): OpenAI chunks, Anthropic Messages events (with a
/// signed thinking block) or Ollama NDJSON.
pub fn respond(req: &RecordedRequest) -> ScriptedResponse {
    answer(req, false)
}

/// How long the model waits before it answers a question that starts with
/// `slowly` (each request of its turn): a busy loop, seen from outside.
pub const SLOW_ANSWER: std::time::Duration = std::time::Duration::from_millis(2500);

/// A request for one of the tools beyond arithmetic, when the user's
/// message asks for it: (tool, arguments as JSON text).
///
/// - `remember <key> <text>`: the notes' `remember` (a `:` after the key is
///   dropped);
/// - `recall [<query>]`: `recall` (no query: all notes);
/// - `forget <key>`: `forget`;
/// - a message naming `board state` (or `board_state`): the simulator's
///   direct-output tool `board_state`;
/// - a message naming `m1_slow`: the remote MCP tool of that name;
/// - a message naming `mathematician`: that sub-agent, with the message as
///   its task (the sub-agent, offered only add and mul, then works the
///   arithmetic out as any question).
pub fn ability_call(text: &str) -> Option<(&'static str, String)> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let (first, rest) = match t.split_once(char::is_whitespace) {
        Some((f, r)) => (f.to_ascii_lowercase(), r.trim()),
        None => (lower.clone(), ""),
    };
    match first.as_str() {
        "remember" => {
            let (key, note) = rest.split_once(char::is_whitespace)?;
            let key = key.trim_end_matches(':');
            let note = note.trim();
            if key.is_empty() || note.is_empty() {
                return None;
            }
            return Some((
                "remember",
                format!(
                    r#"{{"key":{},"text":{}}}"#,
                    json_string(key),
                    json_string(note)
                ),
            ));
        }
        "recall" => return Some(("recall", format!(r#"{{"query":{}}}"#, json_string(rest)))),
        "forget" if !rest.is_empty() => {
            return Some(("forget", format!(r#"{{"key":{}}}"#, json_string(rest))))
        }
        _ => {}
    }
    if lower.contains("board state") || lower.contains("board_state") {
        return Some(("board_state", "{}".to_string()));
    }
    if lower.contains("m1_slow") {
        return Some(("m1_slow", "{}".to_string()));
    }
    if lower.contains("mathematician") {
        return Some(("mathematician", format!(r#"{{"task":{}}}"#, json_string(t))));
    }
    None
}

/// Whether the request offers the tool `name` (native calls: in `tools`;
/// tools as text: named anywhere in the request).
fn offers(body: &[u8], name: &str, text_calls: bool) -> bool {
    let body = String::from_utf8_lossy(body);
    if text_calls {
        return body.contains(name);
    }
    body.contains(&format!(r#""name":"{name}""#))
}

fn answer(req: &RecordedRequest, text_calls: bool) -> ScriptedResponse {
    let response = answer_now(req, text_calls);
    let slow = conversation(&req.body)
        .is_some_and(|(q, _)| q.trim_start().to_ascii_lowercase().starts_with("slowly"));
    if slow {
        response.first_byte_after(SLOW_ANSWER)
    } else {
        response
    }
}

fn answer_now(req: &RecordedRequest, text_calls: bool) -> ScriptedResponse {
    let wire = Wire::of_path(&req.path);
    let Some((question_text, results)) = conversation(&req.body) else {
        return ScriptedResponse::error(
            400,
            "the request body is not a chat request",
            "invalid_request_error",
            None,
        );
    };
    if question_text
        .to_ascii_lowercase()
        .contains("what did i ask before")
    {
        let asked = questions(&req.body);
        let before = asked.len().checked_sub(2).and_then(|i| asked.get(i));
        let text = match before {
            Some(q) => format!("Before this you asked: {q}"),
            None => "You asked nothing before this.".to_string(),
        };
        return text_response(
            wire,
            &text,
            "The user asks about the conversation: look back.",
        );
    }
    // A tool beyond arithmetic, when offered: called, then its result is
    // the answer.
    if let Some((tool, args)) = ability_call(&question_text) {
        if offers(&req.body, tool, text_calls) {
            if let Some(result) = results.last() {
                return text_response(
                    wire,
                    &format!("Result: {result}"),
                    "The tool answered: pass its result on.",
                );
            }
            let calls = [(tool, args)];
            if text_calls {
                return text_call_response(&calls);
            }
            return calls_response(wire, &calls, &format!("The user asks for the {tool} tool."));
        }
    }
    let Some(mut expr) = question(&question_text) else {
        return text_response(
            wire,
            "I am the scripted model of the rtt-agent simulator. Ask me arithmetic, for example \
             (2+3)*4, 12*7+5 or compare 17 and 21, and watch the agent call its add, mul and compare tools.",
            "No arithmetic in the question: answer directly.",
        );
    };
    // Replay the rounds already done, using the tool results in order.
    let mut values = Vec::new();
    for r in &results {
        match parse_result(r) {
            Ok(v) => values.push(v),
            Err(text) => {
                return text_response(
                    wire,
                    &format!("A tool failed, so I stop here: {text}"),
                    "A tool returned an error.",
                );
            }
        }
    }
    let mut used = 0;
    loop {
        let mut ops = Vec::new();
        innermost(&expr, &mut ops);
        if ops.is_empty() {
            break;
        }
        if used + ops.len() > values.len() {
            if text_calls {
                let calls: Vec<(&str, String)> =
                    ops.iter().map(|&(op, a, b)| op_call(op, a, b)).collect();
                return text_call_response(&calls);
            }
            return tool_response(
                wire,
                &ops,
                &format!(
                    "Round {}: {} operation(s) can run in parallel.",
                    used + 1,
                    ops.len()
                ),
            );
        }
        let slice = &values[used..used + ops.len()];
        expr = substitute(&expr, &mut slice.iter());
        used += ops.len();
    }
    let answer = match (&expr, values.last()) {
        (_, Some(Value::Relation(r))) if used == values.len() => format!("{r}."),
        (Expr::Num(n), _) => format!("The result is {}.", fmt_num(*n)),
        _ => "I could not work that out.".to_string(),
    };
    text_response(wire, &answer, "All operations are done: give the result.")
}

#[cfg(test)]
mod tests {
    use super::ability_call;

    #[test]
    fn abilities_asked_for() {
        assert_eq!(
            ability_call("remember wifi: lab ssid"),
            Some((
                "remember",
                r#"{"key":"wifi","text":"lab ssid"}"#.to_string()
            ))
        );
        assert_eq!(ability_call("remember wifi"), None);
        assert_eq!(
            ability_call("Recall"),
            Some(("recall", r#"{"query":""}"#.to_string()))
        );
        assert_eq!(
            ability_call("recall wifi"),
            Some(("recall", r#"{"query":"wifi"}"#.to_string()))
        );
        assert_eq!(
            ability_call("forget led"),
            Some(("forget", r#"{"key":"led"}"#.to_string()))
        );
        assert_eq!(
            ability_call("show me the board state"),
            Some(("board_state", "{}".to_string()))
        );
        assert_eq!(
            ability_call("please call m1_slow"),
            Some(("m1_slow", "{}".to_string()))
        );
        assert_eq!(ability_call("what is (2+3)*4?"), None);
        assert_eq!(ability_call("compare 17 and 21"), None);
    }
}
