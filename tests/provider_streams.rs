//! The Anthropic and Ollama fixtures of `tests/streams/anthropic/` and
//! `tests/streams/ollama/` (written by `make_provider_fixtures.py`) read by
//! the stream parser in their format: whole, one byte at a time and in
//! random splits, each outcome compared with the fixture's expectation
//! field by field (and the sink's text with the kept text). Over real TCP
//! through `chat()`: `tests/provider_chat.rs`.

#[path = "streams/common.rs"]
mod common;

use common::*;
use rtt_agent::wire::stream::{Format, StreamError};
use std::path::PathBuf;

const RANDOM_SPLITS: u64 = 24;

fn dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/streams")
        .join(sub)
}

/// The fixture names of one format's directory.
pub fn names(sub: &str, ext: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir(sub))
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .into_string()
                .ok()?
                .strip_suffix(ext)
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

fn check(ctx: &str, got: &Outcome, signature: &str, want: &Json) {
    assert_eq!(got.content, want.get("content").str(), "{ctx}: content");
    assert_eq!(
        got.reasoning,
        want.get("reasoning").str(),
        "{ctx}: reasoning"
    );
    assert_eq!(got.sink_content, got.content, "{ctx}: sink content");
    assert_eq!(got.sink_reasoning, got.reasoning, "{ctx}: sink reasoning");
    assert_eq!(
        got.finish_reason.as_deref(),
        want.get("finish_reason").opt_str(),
        "{ctx}: finish_reason"
    );
    assert_eq!(
        got.error.map(error_name),
        want.get("error").opt_str(),
        "{ctx}: error"
    );
    if got.error == Some(StreamError::ServerError) {
        assert_eq!(
            got.error_message.as_deref(),
            want.get("error_message").opt_str(),
            "{ctx}: error_message"
        );
    }
    if got.error.is_none() {
        assert_eq!(signature, want.get("signature").str(), "{ctx}: signature");
    }
    let calls = want.get("tool_calls").arr();
    assert_eq!(got.calls.len(), calls.len(), "{ctx}: number of tool calls");
    for (k, (g, w)) in got.calls.iter().zip(calls).enumerate() {
        let c = format!("{ctx}: call {k}");
        assert_eq!(g.index as f64, w.get("index").num(), "{c}: index");
        assert_eq!(g.id, w.get("id").str(), "{c}: id");
        assert_eq!(g.kind, "function", "{c}: type");
        assert_eq!(g.name, w.get("name").str(), "{c}: name");
        assert_eq!(g.arguments, w.get("arguments").str(), "{c}: arguments");
        assert!(!g.too_long, "{c}: too_long");
        assert_eq!(
            g.id_generated,
            w.get("id_generated").bool(),
            "{c}: id_generated"
        );
    }
}

/// Every fixture of a format, every split; returns how many there were
/// with text, with calls and failing.
fn every_fixture(sub: &str, ext: &str, format: Format) -> (usize, usize, usize) {
    let names = names(sub, ext);
    let (mut text, mut calls, mut failing) = (0, 0, 0);
    for name in &names {
        let body = std::fs::read(dir(sub).join(format!("{name}{ext}"))).unwrap();
        let want = Json::parse(
            &std::fs::read_to_string(dir(sub).join(format!("{name}.expected.json"))).unwrap(),
        );
        let ctx = format!("{sub}/{name}");
        let (whole, sig) = run_format(&[&body], HOST, format);
        check(&format!("{ctx} whole"), &whole, &sig, &want);
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        let (one, sig) = run_format(&bytes, HOST, format);
        check(&format!("{ctx} 1-byte"), &one, &sig, &want);
        for seed in 0..RANDOM_SPLITS {
            let reads = random_split(&body, seed);
            let (got, sig) = run_format(&reads, HOST, format);
            check(&format!("{ctx} seed {seed}"), &got, &sig, &want);
        }
        text += usize::from(!whole.content.is_empty() || !whole.reasoning.is_empty());
        calls += usize::from(!whole.calls.is_empty());
        failing += usize::from(whole.error.is_some());
    }
    (text, calls, failing)
}

#[test]
fn anthropic_fixtures_in_every_split() {
    let (text, calls, failing) = every_fixture("anthropic", ".sse", Format::Anthropic);
    assert!(
        text >= 8 && calls >= 5 && failing >= 3,
        "{text} {calls} {failing}"
    );
}

#[test]
fn ollama_fixtures_in_every_split() {
    let (text, calls, failing) = every_fixture("ollama", ".ndjson", Format::Ollama);
    assert!(
        text >= 6 && calls >= 5 && failing >= 4,
        "{text} {calls} {failing}"
    );
}

#[test]
fn format_follows_the_url() {
    for (url, f) in [
        ("https://api.anthropic.com/v1/messages", Format::Anthropic),
        ("http://127.0.0.1:8080/v1/messages/", Format::Anthropic),
        ("http://h/v1/messages?beta=true", Format::Anthropic),
        ("http://localhost:11434/api/chat", Format::Ollama),
        ("http://localhost:11434/api/chat/", Format::Ollama),
        ("https://api.openai.com/v1/chat/completions", Format::OpenAi),
        ("http://localhost:11434/v1/chat/completions", Format::OpenAi),
        ("http://h/v1/messages/count_tokens", Format::OpenAi),
        ("", Format::OpenAi),
    ] {
        assert_eq!(Format::from_url(url.as_bytes()), f, "{url}");
    }
    for f in [Format::OpenAi, Format::Anthropic, Format::Ollama] {
        assert_eq!(Format::from_name(f.name().as_bytes()), Some(f));
    }
    assert_eq!(Format::from_name(b"ANTHROPIC"), Some(Format::Anthropic));
    assert_eq!(Format::from_name(b"gemini"), None);
}

/// A cap past which Ollama's captured object arguments mark the call too
/// long (as streamed string arguments do), and Anthropic's signature cap.
#[test]
fn caps_hold_for_the_other_formats() {
    let body = std::fs::read(dir("ollama").join("split_json.ndjson")).unwrap();
    let caps = rtt_agent::wire::stream::Caps {
        max_tool_args: 20,
        ..HOST
    };
    for reads in [vec![&body[..]], body.chunks(1).collect()] {
        let (got, _) = run_format(&reads, caps, Format::Ollama);
        assert_eq!(got.error, None);
        assert_eq!(got.calls.len(), 1);
        assert!(got.calls[0].too_long && got.calls[0].arguments.is_empty());
    }
    let body = std::fs::read(dir("anthropic").join("thinking.sse")).unwrap();
    let caps = rtt_agent::wire::stream::Caps {
        max_reasoning: 60,
        ..HOST
    };
    let (got, _) = run_format(&[&body], caps, Format::Anthropic);
    assert_eq!(got.error, Some(StreamError::TokenTooLong));
    let body = std::fs::read(dir("anthropic").join("split_json.sse")).unwrap();
    let caps = rtt_agent::wire::stream::Caps {
        max_tool_args: 10,
        ..HOST
    };
    let (got, _) = run_format(&[&body], caps, Format::Anthropic);
    assert!(got.calls[0].too_long, "{got:?}");
}

/// Garbled bodies: every fixture of both formats mutated many ways (bytes
/// changed, cut, pieces of another fixture spliced in, small caps), fed in
/// random splits. No panic, and `run_format`'s invariants hold for every
/// outcome (calls only after a clean end, caps respected, ids unique, the
/// end final); whole and split feeds agree.
#[test]
fn garbled_bodies_keep_the_invariants() {
    let mut bodies: Vec<(Format, Vec<u8>)> = Vec::new();
    for (sub, ext, format) in [
        ("anthropic", ".sse", Format::Anthropic),
        ("ollama", ".ndjson", Format::Ollama),
    ] {
        for name in names(sub, ext) {
            bodies.push((
                format,
                std::fs::read(dir(sub).join(format!("{name}{ext}"))).unwrap(),
            ));
        }
    }
    let mut rng = Rng(0x5eed);
    let small = rtt_agent::wire::stream::Caps {
        max_content: 16,
        max_reasoning: 24,
        max_tool_args: 12,
        max_token: 8,
        max_tool_calls: 1,
    };
    let mut outcomes = [0usize; 2];
    for round in 0..3000 {
        let (format, base) = &bodies[rng.range(0, bodies.len() - 1)];
        let mut body = base.clone();
        for _ in 0..rng.range(1, 4) {
            if body.is_empty() {
                break;
            }
            let at = rng.range(0, body.len() - 1);
            match rng.range(0, 3) {
                0 => body[at] = b"{}[]\":,\\\n 0a-eu"[rng.range(0, 14)],
                1 => body.truncate(at),
                2 => {
                    let (_, other) = &bodies[rng.range(0, bodies.len() - 1)];
                    let from = rng.range(0, other.len() - 1);
                    let to = (from + rng.range(1, 80)).min(other.len());
                    body.splice(at..at, other[from..to].iter().copied());
                }
                _ => {
                    body.remove(at);
                }
            }
        }
        let caps = if round % 5 == 0 { small } else { HOST };
        let (whole, _) = run_format(&[&body], caps, *format);
        let reads = random_split(&body, round);
        let (split, _) = run_format(&reads, caps, *format);
        assert_eq!(whole.error, split.error, "round {round}");
        assert_eq!(whole.content, split.content, "round {round}");
        assert_eq!(whole.calls, split.calls, "round {round}");
        outcomes[usize::from(whole.error.is_some())] += 1;
    }
    // Both kinds of outcome were exercised.
    assert!(outcomes[0] > 100 && outcomes[1] > 100, "{outcomes:?}");
}
