//! Arbitrary bytes, split at fuzzer-chosen points, must never panic, and
//! must give exactly the same outcome as the same bytes read whole.
//!
//! Input layout: byte 0 picks the caps (bit 0: small caps that hit every
//! limit path), the read sizes (bits 1..=2) and the wire format (bits 3..=4:
//! OpenAI, Anthropic Messages, Ollama NDJSON, OpenAI); bytes 1..=8 seed the
//! split points; the rest is the response body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtt_agent::wire::stream::{Caps, ChatStream, Format, Progress, StreamError, StreamSink};

const GENEROUS: Caps = Caps {
    max_content: 64 * 1024,
    max_reasoning: 64 * 1024,
    max_tool_args: 64 * 1024,
    max_token: 1024,
    max_tool_calls: 16,
};

const SMALL: Caps = Caps {
    max_content: 7,
    max_reasoning: 5,
    max_tool_args: 6,
    max_token: 4,
    max_tool_calls: 2,
};

#[derive(Default)]
struct Text {
    content: String,
    reasoning: String,
}

impl StreamSink for Text {
    fn content(&mut self, text: &str) {
        assert!(!text.is_empty());
        self.content.push_str(text);
    }
    fn reasoning(&mut self, text: &str) {
        assert!(!text.is_empty());
        self.reasoning.push_str(text);
    }
}

type Call = (u32, String, String, String, String, bool, bool);

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    result: Result<(), StreamError>,
    content: String,
    reasoning: String,
    truncated: (bool, bool),
    finish_reason: Option<String>,
    error_message: Option<String>,
    calls: Vec<Call>,
}

fn run(reads: &[&[u8]], caps: Caps, format: Format) -> Outcome {
    let mut stream = ChatStream::with_format(caps, format);
    let mut sink = Text::default();
    let mut result = None;
    for read in reads {
        match stream.feed(read, &mut sink) {
            Ok(Progress::More) => {}
            Ok(Progress::Done) => {
                result = Some(Ok(()));
                break;
            }
            Err(e) => {
                result = Some(Err(e));
                break;
            }
        }
    }
    let result = result.unwrap_or_else(|| stream.finish(&mut sink));
    assert_eq!(stream.finish(&mut sink), result);
    assert_eq!(sink.content, stream.content());
    assert_eq!(sink.reasoning, stream.reasoning());
    assert!(stream.content().len() <= caps.max_content);
    assert!(stream.reasoning().len() <= caps.max_reasoning);
    if result.is_err() {
        assert!(stream.tool_calls().is_empty());
    }
    let calls: Vec<Call> = stream
        .tool_calls()
        .iter()
        .map(|c| {
            assert!(c.arguments().len() <= caps.max_tool_args);
            assert!(!c.id().is_empty());
            (
                c.index(),
                c.id().to_owned(),
                c.kind().to_owned(),
                c.name().to_owned(),
                c.arguments().to_owned(),
                c.too_long(),
                c.id_generated(),
            )
        })
        .collect();
    for (k, c) in calls.iter().enumerate() {
        assert!(calls[..k].iter().all(|d| d.1 != c.1 && d.0 <= c.0));
    }
    Outcome {
        result,
        content: stream.content().to_owned(),
        reasoning: stream.reasoning().to_owned(),
        truncated: (stream.content_truncated(), stream.reasoning_truncated()),
        finish_reason: stream.finish_reason().map(str::to_owned),
        error_message: stream.error_message().map(str::to_owned),
        calls,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (seed, body) = rest.split_at(rest.len().min(8));
    let mut state = seed.iter().fold(0x9E37_79B9_7F4A_7C15u64, |s, &b| {
        (s ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    });
    let caps = if mode & 1 == 1 { SMALL } else { GENEROUS };
    let max = [1usize, 3, 16, 64][usize::from(mode >> 1) % 4];
    let mut reads = Vec::new();
    let mut left = body;
    while !left.is_empty() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let n = (1 + (state % max as u64) as usize).min(left.len());
        let (head, tail) = left.split_at(n);
        reads.push(head);
        left = tail;
    }
    let format = match (mode >> 3) & 3 {
        1 => Format::Anthropic,
        2 => Format::Ollama,
        _ => Format::OpenAi,
    };
    let whole = run(&[body], caps, format);
    let split = run(&reads, caps, format);
    assert_eq!(whole, split);
});
