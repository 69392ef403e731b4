//! Properties: any text, escaped any way servers escape it, cut into any
//! fragments, carried in any SSE framing and read in any splits, comes back
//! byte for byte; and no input at all makes the parser panic or depend on
//! how it was split.

#[path = "streams/common.rs"]
mod common;

use common::*;
use proptest::prelude::*;
use rtt_agent::wire::stream::Caps;

/// Characters that stress escaping and UTF-8 handling, mixed with anything.
fn text_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => proptest::char::range(' ', '~'),
        2 => prop::sample::select(vec![
            '"', '\\', '/', '\n', '\r', '\t', '\u{0}', '\u{1}', '\u{8}', '\u{c}', '\u{1f}',
            '\u{7f}', 'é', 'ß', '中', '文', '€', '\u{2028}', '\u{fffd}', '😀', '🚀', '\u{10ffff}',
        ]),
        1 => any::<char>(),
    ]
}

/// What the parser makes of `s`: the same text without its NULs (they are
/// left out of every string, see `src/wire/stream/tokenizer.rs`).
fn without_nul(s: &str) -> String {
    s.replace('\0', "")
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(text_char(), 0..120).prop_map(|v| v.into_iter().collect())
}

/// Cut `s` at the given fractions (snapped to character boundaries) into
/// fragments; empty fragments are allowed (servers send `"arguments":""`).
fn fragments(s: &str, cuts: &[u16]) -> Vec<String> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|&c| {
            let mut p = c as usize * s.len() / u16::MAX as usize;
            while !s.is_char_boundary(p) {
                p -= 1;
            }
            p
        })
        .collect();
    points.push(0);
    points.push(s.len());
    points.sort();
    points
        .windows(2)
        .map(|w| s[w[0]..w[1]].to_owned())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn tool_arguments_reassemble_byte_exactly(
        args in text(),
        cuts in prop::collection::vec(any::<u16>(), 0..12),
        seed in any::<u64>(),
        crlf in any::<bool>(),
        space in any::<bool>(),
    ) {
        let mut rng = Rng(seed);
        let escaped: Vec<String> =
            fragments(&args, &cuts).iter().map(|f| escape(f, &mut rng)).collect();
        let body = openai_args_body(&escaped, crlf, space);
        let whole = run_whole(&body, HOST);
        prop_assert_eq!(whole.error, None);
        prop_assert_eq!(whole.calls.len(), 1);
        prop_assert_eq!(&whole.calls[0].arguments, &without_nul(&args));
        prop_assert_eq!(&whole.calls[0].id, "call_1");
        prop_assert_eq!(&whole.calls[0].name, "f");
        let reads = random_split(&body, seed);
        prop_assert_eq!(&run(&reads, HOST), &whole);
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        prop_assert_eq!(&run(&bytes, HOST), &whole);
    }

    #[test]
    fn content_streams_byte_exactly(
        content in text(),
        cuts in prop::collection::vec(any::<u16>(), 0..12),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng(seed);
        let escaped: Vec<String> =
            fragments(&content, &cuts).iter().map(|f| escape(f, &mut rng)).collect();
        let body = openai_text_body(&escaped);
        let reads = random_split(&body, seed);
        let got = run(&reads, HOST);
        prop_assert_eq!(got.error, None);
        let content = without_nul(&content);
        prop_assert_eq!(&got.content, &content);
        prop_assert_eq!(&got.sink_content, &content);
    }

    #[test]
    fn content_cap_keeps_a_boundary_prefix(
        content in text(),
        cap in 0usize..300,
        seed in any::<u64>(),
    ) {
        let mut rng = Rng(seed);
        let escaped: Vec<String> =
            fragments(&content, &[9000, 30000, 50000]).iter().map(|f| escape(f, &mut rng)).collect();
        let body = openai_text_body(&escaped);
        let caps = Caps { max_content: cap, ..HOST };
        let got = run(&random_split(&body, seed), caps);
        let content = without_nul(&content);
        let mut end = cap.min(content.len());
        while !content.is_char_boundary(end) {
            end -= 1;
        }
        prop_assert_eq!(&got.content, &content[..end]);
        prop_assert_eq!(got.content_truncated, content.len() > cap);
        prop_assert_eq!(&got.sink_content, &got.content);
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        body in prop::collection::vec(any::<u8>(), 0..600),
        seed in any::<u64>(),
    ) {
        let whole = run_whole(&body, HOST);
        prop_assert_eq!(&run(&random_split(&body, seed), HOST), &whole);
    }

    #[test]
    fn sse_token_soup_never_panics_and_ignores_splits(
        picks in prop::collection::vec(0usize..SOUP.len(), 0..150),
        seed in any::<u64>(),
        small in any::<bool>(),
    ) {
        let body: Vec<u8> = picks.iter().flat_map(|&k| SOUP[k].iter().copied()).collect();
        let caps = if small { SMALL } else { HOST };
        let whole = run_whole(&body, caps);
        prop_assert_eq!(&run(&random_split(&body, seed), caps), &whole);
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        prop_assert_eq!(&run(&bytes, caps), &whole);
    }

    #[test]
    fn mutated_fixtures_never_panic_and_ignore_splits(
        which in 0usize..FIXTURES.len(),
        edits in prop::collection::vec((any::<u16>(), any::<u8>(), 0u8..3), 1..6),
        seed in any::<u64>(),
        small in any::<bool>(),
    ) {
        let path = format!("{}/tests/streams/{}.sse", env!("CARGO_MANIFEST_DIR"), FIXTURES[which]);
        let mut body = std::fs::read(path).unwrap();
        for (at, byte, op) in edits {
            let at = at as usize % (body.len() + 1);
            match op {
                0 if at < body.len() => body[at] = byte,
                1 => body.insert(at, byte),
                _ if at < body.len() => { body.remove(at); }
                _ => {}
            }
        }
        let caps = if small { SMALL } else { HOST };
        let whole = run_whole(&body, caps);
        prop_assert_eq!(&run(&random_split(&body, seed), caps), &whole);
    }
}

const SMALL: Caps = Caps {
    max_content: 7,
    max_reasoning: 5,
    max_tool_args: 6,
    max_token: 4,
    max_tool_calls: 2,
};

const FIXTURES: &[&str] = &[
    "openai_text",
    "openai_parallel_calls",
    "azure_prompt_filter",
    "deepseek_tool_call",
    "openrouter_reasoning",
    "qwen_empty_id",
    "no_index_call",
    "multiline_data",
    "utf8_split",
    "escapes",
    "event_error",
    "crlf",
];

/// Pieces of SSE and chat-chunk syntax, so that random sequences reach deep
/// parser states that random bytes rarely do.
const SOUP: &[&[u8]] = &[
    b"data: ",
    b"data:",
    b"data",
    b"event: error\n",
    b"event: message\n",
    b"id: 7\n",
    b": comment\n",
    b"\n",
    b"\r\n",
    b"\r",
    b"\n\n",
    b"[DONE]",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"\"",
    b"\\",
    b"\\u",
    b"\\ud83d",
    b"\\ude00",
    b"\\n",
    b"d83d",
    b"\"choices\":",
    b"\"delta\":",
    b"\"content\":",
    b"\"reasoning\":",
    b"\"reasoning_content\":",
    b"\"tool_calls\":",
    b"\"index\":",
    b"\"id\":",
    b"\"type\":",
    b"\"function\":",
    b"\"name\":",
    b"\"arguments\":",
    b"\"finish_reason\":",
    b"\"error\":",
    b"\"message\":",
    b"\"stop\"",
    b"\"call_1\"",
    b"\"\"",
    b"\"a\\\"b\"",
    "\"中文\"".as_bytes(),
    b"\xe4",
    "\u{1f600}".as_bytes(),
    b"\xe4\xb8",
    b"0",
    b"1",
    b"-2.5e3",
    b"18446744073709551616",
    b"null",
    b"true",
    b"false",
    b" ",
    b"{\"choices\":[{\"index\":0,\"delta\":{",
    b"}}]}",
    b"\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"",
    b"\"}}]",
];
