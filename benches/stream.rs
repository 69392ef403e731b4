//! Stream parser throughput on the two shapes behaviour.md §5 budgets:
//! 16 KB of tool arguments in 4-byte fragments (one SSE event per fragment,
//! OpenAI shape), and a 4 KB answer in small content deltas. Bodies are fed
//! in 1 KB reads, as a socket would deliver them. Throughput is per byte of
//! response body; divide the time by the body size for ns per byte.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rtt_agent::wire::stream::{Caps, ChatStream, Progress};

const CAPS: Caps = Caps {
    max_content: 64 * 1024,
    max_reasoning: 64 * 1024,
    max_tool_args: 64 * 1024,
    max_token: 1024,
    max_tool_calls: 16,
};

const HEAD: &str = r#"{"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1732000000,"model":"gpt-4o-mini","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":"#;

fn json_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn event(body: &mut String, delta: &str, finish: &str) {
    body.push_str("data: ");
    body.push_str(HEAD);
    body.push_str(delta);
    body.push_str(r#","logprobs":null,"finish_reason":"#);
    body.push_str(finish);
    body.push_str("}]}\n\n");
}

/// 16 KB of arguments (JSON, so full of quotes to escape) in 4-byte pieces.
fn args_body() -> (Vec<u8>, String) {
    let mut args = String::from("{\"values\": [");
    let mut k = 0;
    while args.len() < 16 * 1024 - 16 {
        args.push_str(&format!("\"v{k}\", "));
        k += 1;
    }
    args.push_str("\"end\"]}");
    let mut body = String::new();
    event(
        &mut body,
        r#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_qW3kZ8mN1pL0","type":"function","function":{"name":"tool_store","arguments":""}}]}"#,
        "null",
    );
    let chars: Vec<char> = args.chars().collect();
    for piece in chars.chunks(4) {
        let piece: String = piece.iter().collect();
        let delta = format!(
            r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":"{}"}}}}]}}"#,
            json_escape(&piece)
        );
        event(&mut body, &delta, "null");
    }
    event(&mut body, "{}", "\"tool_calls\"");
    body.push_str("data: [DONE]\n\n");
    (body.into_bytes(), args)
}

/// A 4 KB answer in deltas of about 4 bytes.
fn text_body() -> (Vec<u8>, String) {
    let unit = "The quick brown fox jumps over the lazy dog, \u{fc}n\u{ef}c\u{f6}d\u{e9} \u{72d0}\u{72f8}. ";
    let mut text = String::new();
    while text.len() < 4096 {
        text.push_str(unit);
    }
    let mut end = 4096;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    let mut body = String::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(4) {
        let piece: String = piece.iter().collect();
        event(
            &mut body,
            &format!(r#"{{"content":"{}"}}"#, json_escape(&piece)),
            "null",
        );
    }
    event(&mut body, "{}", "\"stop\"");
    body.push_str("data: [DONE]\n\n");
    (body.into_bytes(), text)
}

fn parse(body: &[u8], read: usize) -> ChatStream {
    let mut stream = ChatStream::new(CAPS);
    for piece in body.chunks(read) {
        if stream.feed(piece, &mut ()) == Ok(Progress::Done) {
            break;
        }
    }
    stream
}

fn bench(c: &mut Criterion) {
    let (body, args) = args_body();
    let check = parse(&body, 1024);
    assert_eq!(check.tool_calls()[0].arguments(), args);
    let mut group = c.benchmark_group("stream");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function(
        format!("args_16k_in_4b_fragments ({} B body)", body.len()),
        |b| b.iter(|| parse(black_box(&body), 1024)),
    );

    let (body, text) = text_body();
    assert_eq!(parse(&body, 1024).content(), text);
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function(
        format!("text_4k_in_small_deltas ({} B body)", body.len()),
        |b| b.iter(|| parse(black_box(&body), 1024)),
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
