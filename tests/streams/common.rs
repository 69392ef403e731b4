//! Helpers shared by the stream tests (included with `#[path]`): a
//! deterministic PRNG, a recording sink, a driver that feeds a body in a
//! given split, and a tiny JSON reader for the `*.expected.json` files.
#![allow(dead_code)]

use rtt_agent::wire::stream::{Caps, ChatStream, Format, Progress, StreamError, StreamSink};

/// Generous caps, as the host port's `rtconfig.h` sets them.
pub const HOST: Caps = Caps {
    max_content: 64 * 1024,
    max_reasoning: 64 * 1024,
    max_tool_args: 64 * 1024,
    max_token: 1024,
    max_tool_calls: 16,
};

/// SplitMix64: tiny, deterministic, good enough to choose split points.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
}

/// Records every sink call.
#[derive(Default)]
pub struct Record {
    pub content: Vec<String>,
    pub reasoning: Vec<String>,
}

impl StreamSink for Record {
    fn content(&mut self, text: &str) {
        assert!(!text.is_empty(), "empty content piece");
        self.content.push(text.to_owned());
    }
    fn reasoning(&mut self, text: &str) {
        assert!(!text.is_empty(), "empty reasoning piece");
        self.reasoning.push(text.to_owned());
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub index: u32,
    pub id: String,
    pub kind: String,
    pub name: String,
    pub arguments: String,
    pub too_long: bool,
    pub id_generated: bool,
}

/// Everything observable after a body was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub content: String,
    pub reasoning: String,
    pub sink_content: String,
    pub sink_reasoning: String,
    pub finish_reason: Option<String>,
    pub calls: Vec<Call>,
    pub content_truncated: bool,
    pub reasoning_truncated: bool,
    pub error: Option<StreamError>,
    pub error_message: Option<String>,
}

/// Cut `body` into reads of the sizes `sizes` yields (the last read takes
/// what is left).
pub fn split(body: &[u8], mut sizes: impl FnMut() -> usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let n = sizes().clamp(1, rest.len());
        let (head, tail) = rest.split_at(n);
        out.push(head);
        rest = tail;
    }
    out
}

/// Random reads: mostly small, sometimes large, so that splits land inside
/// every kind of token.
pub fn random_split(body: &[u8], seed: u64) -> Vec<&[u8]> {
    let mut rng = Rng(seed);
    let max = [3usize, 17, 200, 1500][(seed % 4) as usize];
    split(body, || rng.range(1, max))
}

/// Feed `reads` as a connection would, then close it, and check the
/// invariants that hold for every stream.
pub fn run(reads: &[&[u8]], caps: Caps) -> Outcome {
    run_format(reads, caps, Format::OpenAi).0
}

/// [`run`] for a stream in `format`; also the thinking signature (when the
/// format has one).
pub fn run_format(reads: &[&[u8]], caps: Caps, format: Format) -> (Outcome, String) {
    let mut stream = ChatStream::with_format(caps, format);
    let mut sink = Record::default();
    let mut end: Option<Result<(), StreamError>> = None;
    for read in reads {
        assert!(
            stream.tool_calls().is_empty(),
            "calls visible before the end"
        );
        match stream.feed(read, &mut sink) {
            Ok(Progress::More) => {}
            Ok(Progress::Done) => {
                end = Some(Ok(()));
                break;
            }
            Err(e) => {
                end = Some(Err(e));
                break;
            }
        }
    }
    let end = match end {
        Some(end) => end,
        None => stream.finish(&mut sink),
    };
    // The end is final: more input and another close change nothing.
    match end {
        Ok(()) => {
            assert!(stream.is_done());
            assert_eq!(
                stream.feed(b"data: {\"x\":1}\n\n", &mut sink),
                Ok(Progress::Done)
            );
            assert_eq!(stream.finish(&mut sink), Ok(()));
            assert_eq!(stream.error(), None);
            assert_eq!(stream.error_message(), None);
        }
        Err(e) => {
            assert!(!stream.is_done());
            assert_eq!(stream.feed(b"data: [DONE]\n\n", &mut sink), Err(e));
            assert_eq!(stream.finish(&mut sink), Err(e));
            assert_eq!(stream.error(), Some(e));
            assert!(
                stream.tool_calls().is_empty(),
                "calls visible after a failure"
            );
            assert!(stream.error_message().is_some());
        }
    }
    let caps = *stream.caps();
    assert!(stream.content().len() <= caps.max_content);
    assert!(stream.reasoning().len() <= caps.max_reasoning);
    let calls: Vec<Call> = stream
        .tool_calls()
        .iter()
        .map(|c| Call {
            index: c.index(),
            id: c.id().to_owned(),
            kind: c.kind().to_owned(),
            name: c.name().to_owned(),
            arguments: c.arguments().to_owned(),
            too_long: c.too_long(),
            id_generated: c.id_generated(),
        })
        .collect();
    for c in &calls {
        assert!(c.arguments.len() <= caps.max_tool_args);
        assert!(!c.id.is_empty());
        assert!(!c.too_long || c.arguments.is_empty());
    }
    for (k, c) in calls.iter().enumerate() {
        assert!(
            calls[..k].iter().all(|d| d.id != c.id),
            "duplicate id {}",
            c.id
        );
        assert!(
            calls[..k].iter().all(|d| d.index <= c.index),
            "calls out of order"
        );
    }
    #[cfg(feature = "provider-anthropic")]
    let signature = stream.thinking_signature().to_owned();
    #[cfg(not(feature = "provider-anthropic"))]
    let signature = String::new();
    let outcome = Outcome {
        content: stream.content().to_owned(),
        reasoning: stream.reasoning().to_owned(),
        sink_content: sink.content.concat(),
        sink_reasoning: sink.reasoning.concat(),
        finish_reason: stream.finish_reason().map(str::to_owned),
        calls,
        content_truncated: stream.content_truncated(),
        reasoning_truncated: stream.reasoning_truncated(),
        error: stream.error(),
        error_message: stream.error_message().map(str::to_owned),
    };
    (outcome, signature)
}

pub fn run_whole(body: &[u8], caps: Caps) -> Outcome {
    run(&[body], caps)
}

pub fn error_name(e: StreamError) -> &'static str {
    match e {
        StreamError::Truncated => "truncated",
        StreamError::ServerError => "server_error",
        StreamError::TokenTooLong => "token_too_long",
        StreamError::TooManyToolCalls => "too_many_tool_calls",
        StreamError::OutOfMemory => "out_of_memory",
        StreamError::InvalidJson => "invalid_json",
        StreamError::InvalidUtf8 => "invalid_utf8",
        StreamError::TooDeep => "too_deep",
        StreamError::Unexpected => "unexpected",
    }
}

/// A JSON value, as far as the expectation files need.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn parse(text: &str) -> Json {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value();
        p.ws();
        assert_eq!(p.i, p.s.len(), "trailing bytes in JSON");
        v
    }

    pub fn get(&self, key: &str) -> &Json {
        match self {
            Json::Obj(members) => members
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
                .unwrap_or_else(|| panic!("no key {key}")),
            _ => panic!("not an object"),
        }
    }

    pub fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            other => panic!("not a string: {other:?}"),
        }
    }

    pub fn opt_str(&self) -> Option<&str> {
        match self {
            Json::Null => None,
            Json::Str(s) => Some(s),
            other => panic!("not a string or null: {other:?}"),
        }
    }

    pub fn bool(&self) -> bool {
        match self {
            Json::Bool(b) => *b,
            other => panic!("not a bool: {other:?}"),
        }
    }

    pub fn num(&self) -> f64 {
        match self {
            Json::Num(n) => *n,
            other => panic!("not a number: {other:?}"),
        }
    }

    pub fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(a) => a,
            other => panic!("not an array: {other:?}"),
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && b" \t\r\n".contains(&self.s[self.i]) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) {
        self.ws();
        assert_eq!(self.s[self.i], b, "expected {} at {}", b as char, self.i);
        self.i += 1;
    }

    fn value(&mut self) -> Json {
        self.ws();
        match self.s[self.i] {
            b'n' => self.word("null", Json::Null),
            b't' => self.word("true", Json::Bool(true)),
            b'f' => self.word("false", Json::Bool(false)),
            b'"' => Json::Str(self.string()),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s[self.i] == b']' {
                    self.i += 1;
                    return Json::Arr(items);
                }
                loop {
                    items.push(self.value());
                    self.ws();
                    self.i += 1;
                    if self.s[self.i - 1] == b']' {
                        return Json::Arr(items);
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.s[self.i] == b'}' {
                    self.i += 1;
                    return Json::Obj(members);
                }
                loop {
                    self.ws();
                    let k = self.string();
                    self.eat(b':');
                    members.push((k, self.value()));
                    self.ws();
                    self.i += 1;
                    if self.s[self.i - 1] == b'}' {
                        return Json::Obj(members);
                    }
                }
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && b"+-.eE0123456789".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                Json::Num(text.parse().unwrap())
            }
        }
    }

    fn word(&mut self, w: &str, v: Json) -> Json {
        assert!(self.s[self.i..].starts_with(w.as_bytes()));
        self.i += w.len();
        v
    }

    fn hex4(&mut self) -> u32 {
        let h = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
        self.i += 4;
        u32::from_str_radix(h, 16).unwrap()
    }

    fn string(&mut self) -> String {
        self.eat(b'"');
        let mut out = Vec::new();
        loop {
            let b = self.s[self.i];
            self.i += 1;
            match b {
                b'"' => return String::from_utf8(out).unwrap(),
                b'\\' => {
                    let e = self.s[self.i];
                    self.i += 1;
                    let c = match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let mut u = self.hex4();
                            if (0xD800..0xDC00).contains(&u) {
                                assert_eq!(&self.s[self.i..self.i + 2], b"\\u");
                                self.i += 2;
                                let low = self.hex4();
                                u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
                            }
                            char::from_u32(u).unwrap()
                        }
                        other => other as char,
                    };
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                other => out.push(other),
            }
        }
    }
}

/// A body in the OpenAI shape whose tool call's arguments arrive as the
/// given JSON-escaped fragments, one event each.
pub fn openai_args_body(escaped_fragments: &[String], crlf: bool, space: bool) -> Vec<u8> {
    let eol = if crlf { "\r\n" } else { "\n" };
    let field = if space { "data: " } else { "data:" };
    let mut body = String::new();
    let mut event = |json: &str| {
        body.push_str(field);
        body.push_str(json);
        body.push_str(eol);
        body.push_str(eol);
    };
    event(
        r#"{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}"#,
    );
    for frag in escaped_fragments {
        event(&format!(
            r#"{{"id":"c1","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":"{frag}"}}}}]}},"finish_reason":null}}]}}"#
        ));
    }
    event(r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#);
    event("[DONE]");
    body.into_bytes()
}

/// A body whose answer arrives as the given JSON-escaped content fragments.
pub fn openai_text_body(escaped_fragments: &[String]) -> Vec<u8> {
    let mut body = String::new();
    for frag in escaped_fragments {
        body.push_str(&format!(
            "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{frag}\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
        ));
    }
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    body.into_bytes()
}

/// JSON-escape `s` the way servers do, varying the style with `rng`:
/// required escapes always, optional `\uXXXX` (with surrogate pairs) and
/// `\/` sometimes.
pub fn escape(s: &str, rng: &mut Rng) -> String {
    let mut out = String::new();
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
            '/' if rng.next() % 2 == 0 => out.push_str("\\/"),
            c if !c.is_ascii() && rng.next() % 3 == 0 => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    if rng.next() % 2 == 0 {
                        out.push_str(&format!("\\u{:04x}", u));
                    } else {
                        out.push_str(&format!("\\u{:04X}", u));
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}
