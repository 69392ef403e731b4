//! Every fixture in `tests/streams/` read whole, one byte at a time and in
//! seeded random splits, checked against its `*.expected.json`; then the
//! limit paths with small caps, and the error cases.

#[path = "streams/common.rs"]
mod common;

use common::*;
use rtt_agent::wire::stream::{Caps, ChatStream, Progress, StreamError};
use std::path::PathBuf;

const RANDOM_SPLITS: u64 = 24;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/streams")
}

fn body(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(format!("{name}.sse"))).expect("fixture body")
}

fn expectation(name: &str) -> Json {
    let text = std::fs::read_to_string(dir().join(format!("{name}.expected.json"))).unwrap();
    Json::parse(&text)
}

/// Compare an outcome with a fixture's expectation, byte for byte.
fn check(name: &str, how: &str, got: &Outcome, want: &Json) {
    let ctx = format!("{name} ({how})");
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
        got.content_truncated,
        want.get("content_truncated").bool(),
        "{ctx}: content_truncated"
    );
    assert_eq!(
        got.reasoning_truncated,
        want.get("reasoning_truncated").bool(),
        "{ctx}: reasoning_truncated"
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
    let calls = want.get("tool_calls").arr();
    assert_eq!(got.calls.len(), calls.len(), "{ctx}: number of tool calls");
    for (k, (g, w)) in got.calls.iter().zip(calls).enumerate() {
        let c = format!("{ctx}: call {k}");
        assert_eq!(g.index as f64, w.get("index").num(), "{c}: index");
        assert_eq!(g.id, w.get("id").str(), "{c}: id");
        assert_eq!(g.kind, w.get("type").str(), "{c}: type");
        assert_eq!(g.name, w.get("name").str(), "{c}: name");
        assert_eq!(g.arguments, w.get("arguments").str(), "{c}: arguments");
        assert_eq!(g.too_long, w.get("too_long").bool(), "{c}: too_long");
        assert_eq!(
            g.id_generated,
            w.get("id_generated").bool(),
            "{c}: id_generated"
        );
    }
}

/// One fixture, every way of splitting it; all outcomes must be identical.
fn fixture(name: &str) {
    let body = body(name);
    let want = expectation(name);
    let whole = run_whole(&body, HOST);
    check(name, "whole", &whole, &want);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    let one = run(&bytes, HOST);
    check(name, "1-byte reads", &one, &want);
    for seed in 0..RANDOM_SPLITS {
        let reads = random_split(&body, seed);
        let got = run(&reads, HOST);
        check(name, &format!("random split, seed {seed}"), &got, &want);
    }
}

macro_rules! fixtures {
    ($($name:ident),* $(,)?) => {
        const NAMES: &[&str] = &[$(stringify!($name)),*];
        $(#[test] fn $name() { fixture(stringify!($name)); })*
    };
}

fixtures!(
    openai_text,
    openai_tool_call,
    openai_parallel_calls,
    openai_include_usage,
    azure_prompt_filter,
    deepseek_reasoning,
    deepseek_tool_call,
    openrouter_reasoning,
    qwen_empty_id,
    ollama_whole_call,
    ollama_two_calls_index0,
    vllm_header_no_args,
    no_index_call,
    no_id_call,
    crlf,
    cr_only,
    data_no_space,
    event_id_retry,
    multiline_data,
    utf8_split,
    escapes,
    tool_args_30k,
    answer_4k,
    midstream_error,
    event_error,
    event_error_text,
    close_after_finish,
    close_after_finish_tool,
    cut_before_finish,
    cut_between_events,
    duplicate_reasoning_keys,
    keepalive_and_empty_finish,
);

#[test]
fn every_fixture_is_listed() {
    let mut on_disk: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".sse").map(str::to_owned)
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

fn caps(f: impl FnOnce(&mut Caps)) -> Caps {
    let mut c = HOST;
    f(&mut c);
    c
}

/// Run a fixture with `caps` in several splits; all must agree. Returns the
/// outcome.
fn all_splits(name: &str, caps: Caps) -> Outcome {
    let body = body(name);
    let whole = run_whole(&body, caps);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(run(&bytes, caps), whole, "{name}: 1-byte reads");
    for seed in 0..8 {
        let reads = random_split(&body, seed);
        assert_eq!(run(&reads, caps), whole, "{name}: seed {seed}");
    }
    whole
}

#[test]
fn device_caps_keep_a_4k_answer_whole() {
    let got = all_splits(
        "answer_4k",
        caps(|c| {
            c.max_content = 8192;
            c.max_reasoning = 8192;
        }),
    );
    assert_eq!(got.content, expectation("answer_4k").get("content").str());
    // The generator cuts 4096 bytes at a character boundary.
    assert!((4093..=4096).contains(&got.content.len()));
    assert!(!got.content_truncated);
}

/// Content past its cap: the longest prefix that fits without splitting a
/// character, the flag set, and the sink saw exactly that prefix.
#[test]
fn content_cap_cuts_at_a_char_boundary() {
    let full = expectation("answer_4k").get("content").str().to_owned();
    for cap in [0usize, 1, 100, 1000, 1001, 1002, 1003, 2047, 4000] {
        let got = all_splits("answer_4k", caps(|c| c.max_content = cap));
        let mut end = cap;
        while !full.is_char_boundary(end) {
            end -= 1;
        }
        assert_eq!(got.content, full[..end], "cap {cap}");
        assert!(got.content_truncated, "cap {cap}");
        assert_eq!(got.sink_content, got.content);
        assert_eq!(got.error, None, "a content cap does not fail the request");
        assert_eq!(got.finish_reason.as_deref(), Some("stop"));
    }
    // Exactly at the cap is not truncated.
    let exact = caps(|c| c.max_content = full.len());
    let got = run_whole(&body("answer_4k"), exact);
    assert_eq!(got.content, full);
    assert!(!got.content_truncated);
}

#[test]
fn reasoning_cap_sets_its_own_flag() {
    let want = expectation("deepseek_reasoning");
    let got = all_splits("deepseek_reasoning", caps(|c| c.max_reasoning = 10));
    assert_eq!(got.reasoning, want.get("reasoning").str()[..10]);
    assert!(got.reasoning_truncated);
    assert!(!got.content_truncated);
    assert_eq!(got.content, want.get("content").str());
}

#[test]
fn tool_args_past_the_cap_mark_the_call_too_long() {
    let got = all_splits("tool_args_30k", caps(|c| c.max_tool_args = 4096));
    assert_eq!(got.error, None);
    assert_eq!(got.calls.len(), 1);
    let call = &got.calls[0];
    assert!(call.too_long);
    assert_eq!(call.arguments, "");
    assert_eq!(call.id, "call_big");
    assert_eq!(call.name, "tool_store");

    // Three calls with a cap between their sizes: only the longer ones go.
    let want = expectation("openai_parallel_calls");
    let wanted = want.get("tool_calls").arr();
    let cap = 16; // '{"a": 1, "b": 2}' is exactly 16 bytes, the others longer
    let got = all_splits("openai_parallel_calls", caps(|c| c.max_tool_args = cap));
    assert_eq!(got.calls.len(), 3);
    for (g, w) in got.calls.iter().zip(wanted) {
        let args = w.get("arguments").str();
        assert_eq!(g.too_long, args.len() > cap, "{}", g.id);
        assert_eq!(g.arguments, if g.too_long { "" } else { args });
        assert_eq!(g.name, w.get("name").str());
    }
}

#[test]
fn token_cap_fails_the_request() {
    // The id "call_qW3kZ8mN1pL0" is 17 bytes.
    let got = all_splits("openai_tool_call", caps(|c| c.max_token = 16));
    assert_eq!(got.error, Some(StreamError::TokenTooLong));
    assert!(got.calls.is_empty());
    let got = all_splits("openai_tool_call", caps(|c| c.max_token = 17));
    assert_eq!(got.error, None);
    // finish_reason "stop" with a 3-byte cap.
    let got = all_splits("openai_text", caps(|c| c.max_token = 3));
    assert_eq!(got.error, Some(StreamError::TokenTooLong));
    assert_eq!(
        got.error_message.as_deref(),
        Some(StreamError::TokenTooLong.message())
    );
}

#[test]
fn long_error_message_is_cut_and_marked() {
    let got = all_splits("midstream_error", caps(|c| c.max_token = 8));
    assert_eq!(got.error, Some(StreamError::ServerError));
    assert_eq!(got.error_message.as_deref(), Some("Provider…"));
    let got = all_splits("event_error_text", caps(|c| c.max_token = 4));
    assert_eq!(got.error_message.as_deref(), Some("rate…"));
}

#[test]
fn too_many_tool_calls_fail_the_request() {
    let got = all_splits("openai_parallel_calls", caps(|c| c.max_tool_calls = 2));
    assert_eq!(got.error, Some(StreamError::TooManyToolCalls));
    let got = all_splits("openai_parallel_calls", caps(|c| c.max_tool_calls = 3));
    assert_eq!(got.calls.len(), 3);
}

fn events(payloads: &[&str]) -> Vec<u8> {
    let mut body = String::new();
    for p in payloads {
        body.push_str("data: ");
        body.push_str(p);
        body.push_str("\n\n");
    }
    body.into_bytes()
}

fn outcome_of(payloads: &[&str]) -> Outcome {
    let body = events(payloads);
    let whole = run_whole(&body, HOST);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(run(&bytes, HOST), whole);
    whole
}

const STOP: &str = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;

#[test]
fn malformed_data_fails_clearly() {
    let cases: &[(&str, StreamError)] = &[
        ("{\"choices\":[}", StreamError::InvalidJson),
        (
            "{\"choices\":[{\"delta\":{\"content\":\"a\"}}]",
            StreamError::InvalidJson,
        ),
        ("{\"a\":1,}", StreamError::InvalidJson),
        ("{\"a\":01}", StreamError::InvalidJson),
        ("{\"a\":-}", StreamError::InvalidJson),
        ("{\"a\":1.}", StreamError::InvalidJson),
        ("{\"a\":tru}", StreamError::InvalidJson),
        // Escapes are checked in strings that are read (only).
        (
            r#"{"choices":[{"delta":{"content":"\x"}}]}"#,
            StreamError::InvalidJson,
        ),
        (
            r#"{"choices":[{"delta":{"content":"\u12G4"}}]}"#,
            StreamError::InvalidJson,
        ),
        ("{\"a\" 1}", StreamError::InvalidJson),
        ("hello", StreamError::InvalidJson),
        ("[1,2]", StreamError::InvalidJson),
        ("[DONE", StreamError::InvalidJson),
        ("\"text\"", StreamError::Unexpected),
        ("42", StreamError::Unexpected),
        (
            r#"{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}"#,
            StreamError::Unexpected,
        ),
        (
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1.5}]}}]}"#,
            StreamError::Unexpected,
        ),
        (
            r#"{"choices":[{"delta":{"tool_calls":[{"index":4294967296}]}}]}"#,
            StreamError::Unexpected,
        ),
        (
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":{"a":1}}}]}}]}"#,
            StreamError::Unexpected,
        ),
    ];
    for (payload, err) in cases {
        let got = outcome_of(&[payload, STOP]);
        assert_eq!(got.error, Some(*err), "{payload}");
    }
}

#[test]
fn invalid_utf8_fails() {
    for bad in [
        &b"\xff"[..],
        b"\xc3(",
        b"\xe4\xb8",
        b"\xed\xa0\x80",
        b"\xc0\x80",
        b"\xf5\x80\x80\x80",
    ] {
        let mut body = b"data: {\"choices\":[{\"delta\":{\"content\":\"ok".to_vec();
        body.extend_from_slice(bad);
        body.extend_from_slice(b"\"}}]}\n\n");
        body.extend_from_slice(&events(&[STOP]));
        let whole = run_whole(&body, HOST);
        assert_eq!(whole.error, Some(StreamError::InvalidUtf8), "{bad:?}");
        assert_eq!(whole.content, "ok");
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(run(&bytes, HOST), whole, "{bad:?}");
    }
}

#[test]
fn surrogates() {
    let got = outcome_of(&[
        r#"{"choices":[{"delta":{"content":"\ud83d\ude00|\ud83d|\ude00|\ud83d\u0041|\ud83d\n|\uD83D\uDE00"}}]}"#,
        STOP,
    ]);
    assert_eq!(got.error, None);
    assert_eq!(got.content, "😀|\u{fffd}|\u{fffd}|\u{fffd}A|\u{fffd}\n|😀");
}

#[test]
fn nesting_is_bounded() {
    let deep = format!("{{\"x\":{}{}}}", "[".repeat(40), "]".repeat(40));
    let got = outcome_of(&[&deep, STOP]);
    assert_eq!(got.error, Some(StreamError::TooDeep));
    let ok = format!("{{\"x\":{}{}}}", "[".repeat(30), "]".repeat(30));
    let got = outcome_of(&[&ok, STOP]);
    assert_eq!(got.error, None);
}

#[test]
fn unknown_values_of_any_size_are_skipped() {
    // A long unknown string and deep unknown structures cost no cap.
    let big = "y".repeat(100_000);
    let payload = format!(
        r#"{{"junk":"{big}","choices":[{{"index":0,"logprobs":{{"content":[{{"token":"a","bytes":[97],"top":[[1,2],{{"k":null}}]}}]}},"delta":{{"content":"A","extra":{{"content":"no"}}}}}}]}}"#
    );
    let got = outcome_of(&[&payload, STOP, "[DONE]"]);
    assert_eq!(got.error, None);
    assert_eq!(got.content, "A");
}

#[test]
fn only_the_first_choice_counts() {
    let got = outcome_of(&[
        r#"{"choices":[{"index":0,"delta":{"content":"A"}},{"index":1,"delta":{"content":"B"}}]}"#,
        r#"{"choices":null}"#,
        r#"{"choices":[{"index":0,"delta":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":null,"reasoning":null}}]}"#,
        STOP,
    ]);
    assert_eq!(got.content, "A");
    assert_eq!(got.error, None);
}

#[test]
fn error_shapes() {
    let got = outcome_of(&[r#"{"error":"plain text error"}"#]);
    assert_eq!(got.error, Some(StreamError::ServerError));
    assert_eq!(got.error_message.as_deref(), Some("plain text error"));
    let got = outcome_of(&[r#"{"error":{"code":500}}"#]);
    assert_eq!(got.error, Some(StreamError::ServerError));
    assert_eq!(
        got.error_message.as_deref(),
        Some(StreamError::ServerError.message())
    );
    let got = outcome_of(&[r#"{"error":null,"choices":[]}"#, STOP]);
    assert_eq!(got.error, None);

    // `event: error` with JSON that has only a top-level message, with
    // unparseable data, with no data, and as the stream's last bytes.
    for (body, msg) in [
        (
            &b"event: error\ndata: {\"message\":\"quota\"}\n\n"[..],
            "quota",
        ),
        (
            b"event: error\ndata: {\"message\": broken\n\n",
            "{\"message\": broken",
        ),
        (b"event: error\n\n", StreamError::ServerError.message()),
        (
            b"event: error\ndata: {\"error\":{\"message\":\"late\"}}",
            "late",
        ),
        (b"event: error\ndata: [DONE]\n\n", "[DONE]"),
        (b"event:error\r\ndata:  spaced \r\n\r\n", "spaced"),
    ] {
        let got = run_whole(body, HOST);
        assert_eq!(got.error, Some(StreamError::ServerError), "{body:?}");
        assert_eq!(got.error_message.as_deref(), Some(msg), "{body:?}");
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(run(&bytes, HOST), got);
    }
    // Other event types are ordinary events.
    let got = run_whole(
        b"event: errors\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n",
        HOST,
    );
    assert_eq!(got.error, None);
    assert_eq!(got.content, "x");
}

#[test]
fn end_of_stream_rules() {
    // [DONE] without any finish_reason is a complete response.
    let got = run_whole(
        b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]",
        HOST,
    );
    assert_eq!(got.error, None);
    // A close inside an event fails even after a finish_reason.
    let mut body = events(&[STOP]);
    body.extend_from_slice(b"data: {\"choices\":[]");
    assert_eq!(run_whole(&body, HOST).error, Some(StreamError::Truncated));
    // A close right after a complete final line (no blank line) succeeds.
    let mut with_field = b"data: ".to_vec();
    with_field.extend_from_slice(STOP.as_bytes());
    assert_eq!(run_whole(&with_field, HOST).error, None);
    // Empty body, or only comments: cut off.
    assert_eq!(run_whole(b"", HOST).error, Some(StreamError::Truncated));
    assert_eq!(
        run_whole(b": hi\n\n", HOST).error,
        Some(StreamError::Truncated)
    );
    // Anything after [DONE] is not read.
    let got = run_whole(b"data: [DONE]\n\ndata: {bad json\n\n", HOST);
    assert_eq!(got.error, None);
    // A field name with no colon, and unknown fields.
    let got = run_whole(
        b"data\nfoo: bar\nverylongfieldname: x\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n",
        HOST,
    );
    assert_eq!(got.error, None);
    assert_eq!(got.content, "x");
}

#[test]
fn several_values_in_one_event_are_read_in_order() {
    // Servers that forget the blank line between events.
    let got = run_whole(
        b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\ndata: [DONE]\n\n",
        HOST,
    );
    assert_eq!(got.error, None);
    assert_eq!(got.content, "ab");
}

#[test]
fn tool_call_edge_cases() {
    // Index reuse with the same id continues the call; a repeated name is
    // not appended; an empty fragment creates nothing; calls come out in
    // index order whatever the arrival order.
    let got = outcome_of(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"[1"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{},{"type":"function"}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"]"}}]}}]}"#,
        r#"{"choices":[{"finish_reason":"tool_calls","delta":{}}]}"#,
    ]);
    assert_eq!(got.error, None);
    let calls: Vec<(&str, &str, &str)> = got
        .calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(calls, [("a", "f", "[1]"), ("b", "g", "{}")]);

    // Generated ids never clash with the server's.
    let got = outcome_of(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"1"}},{"index":1,"id":"call_1","function":{"name":"g","arguments":"2"}},{"index":2,"function":{"name":"h","arguments":"3"}}]}}]}"#,
        STOP,
    ]);
    let ids: Vec<(&str, bool)> = got
        .calls
        .iter()
        .map(|c| (c.id.as_str(), c.id_generated))
        .collect();
    assert_eq!(ids, [("call_0", true), ("call_1", false), ("call_2", true)]);
    // Two calls at index 0 (new id: new call); a continuation without id
    // goes to the latest of them.
    let got = outcome_of(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"A","function":{"name":"f","arguments":"1"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"B","function":{"name":"g","arguments":"2"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"3"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"A","function":{"arguments":"4"}}]}}]}"#,
        STOP,
    ]);
    let calls: Vec<(&str, &str)> = got
        .calls
        .iter()
        .map(|c| (c.id.as_str(), c.arguments.as_str()))
        .collect();
    // A fragment naming "A" again goes to "A", though "B" is the latest
    // call at its index.
    assert_eq!(calls, [("A", "14"), ("B", "23")]);
    // `id` given in a later fragment is adopted by a call that had none.
    let got = outcome_of(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"a"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"late","function":{"arguments":"b"}}]}}]}"#,
        STOP,
    ]);
    assert_eq!(got.calls.len(), 1);
    assert_eq!(
        (got.calls[0].id.as_str(), got.calls[0].arguments.as_str()),
        ("late", "ab")
    );
    assert!(!got.calls[0].id_generated);
    assert_eq!(got.calls[0].kind, "function");
}

#[test]
fn tool_args_cap_counts_the_whole_call() {
    // Each fragment fits the cap alone, but not together.
    let frags: Vec<String> = ["12345", "67890", "x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let body = openai_args_body(&frags, false, true);
    let got = run_whole(&body, caps(|c| c.max_tool_args = 10));
    assert!(got.calls[0].too_long);
    let got = run_whole(&body, caps(|c| c.max_tool_args = 11));
    assert!(!got.calls[0].too_long);
    assert_eq!(got.calls[0].arguments, "1234567890x");
}

#[test]
fn sink_pieces_never_split_characters() {
    // Covered by the type (&str), but also: raw multibyte text cut at every
    // byte arrives whole.
    let body = body("utf8_split");
    for cut in 1..body.len() {
        let (a, b) = body.split_at(cut);
        let got = run(&[a, b], HOST);
        assert_eq!(got.error, None, "cut {cut}");
        assert_eq!(got.content, expectation("utf8_split").get("content").str());
    }
}

#[test]
fn feed_reports_done_once_seen() {
    let mut s = ChatStream::new(HOST);
    assert_eq!(s.feed(b"data: [DO", &mut ()), Ok(Progress::More));
    assert_eq!(s.feed(b"NE]", &mut ()), Ok(Progress::Done));
    assert!(s.is_done());
    assert_eq!(s.feed(b"garbage", &mut ()), Ok(Progress::Done));
    assert_eq!(s.finish(&mut ()), Ok(()));
    assert_eq!(s.content(), "");
    assert_eq!(s.finish_reason(), None);
}

#[test]
fn error_messages_are_distinct_and_nonempty() {
    let all = [
        StreamError::Truncated,
        StreamError::ServerError,
        StreamError::TokenTooLong,
        StreamError::TooManyToolCalls,
        StreamError::OutOfMemory,
        StreamError::InvalidJson,
        StreamError::InvalidUtf8,
        StreamError::TooDeep,
        StreamError::Unexpected,
    ];
    for (k, e) in all.iter().enumerate() {
        assert!(!e.message().is_empty());
        assert_eq!(e.to_string(), e.message());
        assert!(all[..k].iter().all(|d| d.message() != e.message()));
    }
}

/// NULs (raw or `\u0000`) are left out of every string: the text ends up in
/// C strings, and two ids that differ only by NULs would be one id there
/// (found by the response fuzzer: two calls both named "call_zz" in C).
#[test]
fn nul_characters_are_left_out_of_strings() {
    let chunk = |delta: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n"
        )
    };
    let mut body = Vec::new();
    body.extend_from_slice(chunk(r#"{"content":"a\u0000b"}"#).as_bytes());
    body.extend_from_slice(
        chunk(r#"{"tool_calls":[{"index":0,"id":"call_zz","type":"function","function":{"name":"add","arguments":"{}"}}]}"#)
            .as_bytes(),
    );
    // The second id holds raw NUL bytes and an escaped one.
    let second = chunk(r#"{"tool_calls":[{"index":1,"id":"call@@_z\u0000z","type":"function","function":{"name":"mul","arguments":"{}"}}]}"#)
        .replace('@', "\0");
    body.extend_from_slice(second.as_bytes());
    body.extend_from_slice(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
    let whole = run_whole(&body, HOST);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(run(&bytes, HOST), whole, "1-byte reads");
    assert_eq!(whole.error, None);
    assert_eq!(whole.content, "ab");
    assert_eq!(whole.sink_content, "ab");
    // Without its NULs the second id is the first one: one call, as a
    // repeated id always is (never two calls with one id).
    assert_eq!(whole.calls.len(), 1, "{:?}", whole.calls);
    assert_eq!(whole.calls[0].id, "call_zz");
}
