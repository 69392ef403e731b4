//! The scripted LLM server checked with plain std TCP clients, so that the
//! agent's stream tests can trust what it sends.

use rtt_agent_testkit::llm_server::*;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(5);

fn connect(server: &LlmServer) -> TcpStream {
    let s = TcpStream::connect(server.addr()).expect("connect");
    // Guards every test against a hang if the server misbehaves.
    s.set_read_timeout(Some(WAIT)).unwrap();
    s
}

fn post(s: &mut TcpStream, body: &str, extra: &str) {
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n{extra}\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
}

/// Reads until the server closes; returns the bytes and the read sizes.
fn read_to_close(s: &mut TcpStream) -> (Vec<u8>, Vec<usize>) {
    let mut all = Vec::new();
    let mut reads = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                all.extend_from_slice(&buf[..n]);
                reads.push(n);
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => panic!("read: {e} after {} bytes", all.len()),
        }
    }
    (all, reads)
}

/// One request with `Connection: close`; returns (head, raw body).
fn exchange(server: &LlmServer, body: &str) -> (String, Vec<u8>) {
    let mut s = connect(server);
    post(&mut s, body, "Connection: close\r\n");
    let (all, _) = read_to_close(&mut s);
    split_head(&all)
}

fn split_head(all: &[u8]) -> (String, Vec<u8>) {
    let at = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no end of head");
    (
        String::from_utf8(all[..at + 4].to_vec()).unwrap(),
        all[at + 4..].to_vec(),
    )
}

fn head_value<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Strict chunked decoder: returns None on any framing error or missing end.
fn dechunk(mut wire: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let nl = wire.windows(2).position(|w| w == b"\r\n")?;
        let size = usize::from_str_radix(std::str::from_utf8(&wire[..nl]).ok()?, 16).ok()?;
        wire = &wire[nl + 2..];
        if size == 0 {
            return (wire == b"\r\n").then_some(out);
        }
        if wire.len() < size + 2 || &wire[size..size + 2] != b"\r\n" {
            return None;
        }
        out.extend_from_slice(&wire[..size]);
        wire = &wire[size + 2..];
    }
}

fn events() -> Vec<Vec<u8>> {
    sse_text(&["Hel", "lo \"wörld\"\n", "!"], Some("stop"))
}

#[test]
fn content_length_response_arrives_intact() {
    let server = LlmServer::start(vec![
        ScriptedResponse::sse(events()).transfer(Transfer::ContentLength)
    ])
    .unwrap();
    let (head, body) = exchange(&server, "{}");
    let expected = events().concat();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert_eq!(head_value(&head, "content-type"), Some("text/event-stream"));
    assert_eq!(
        head_value(&head, "content-length"),
        Some(expected.len().to_string().as_str())
    );
    assert_eq!(head_value(&head, "transfer-encoding"), None);
    assert_eq!(body, expected);
    let text = String::from_utf8(body).unwrap();
    assert!(text.contains(r#""delta":{"role":"assistant","content":"Hel"}"#));
    assert!(text.contains(r#""content":"lo \"wörld\"\n""#));
    assert!(text.contains(r#""delta":{},"finish_reason":"stop""#));
    assert!(text.ends_with("data: [DONE]\n\n"));
}

#[test]
fn chunked_response_arrives_intact() {
    let resp = ScriptedResponse::sse(events());
    let wire = resp.wire_body();
    let server = LlmServer::start(vec![resp]).unwrap();
    let (head, body) = exchange(&server, "{}");
    assert_eq!(head_value(&head, "transfer-encoding"), Some("chunked"));
    assert_eq!(head_value(&head, "content-length"), None);
    assert_eq!(body, wire);
    assert_eq!(dechunk(&body).unwrap(), events().concat());
    // One write per event, framing included.
    assert!(server.wait_for_sent(1, WAIT));
    let sent = &server.sent()[0];
    assert_eq!(sent.outcome, Outcome::Complete);
    assert_eq!(sent.body_writes.len(), events().len() + 1);
}

#[test]
fn close_delimited_response_arrives_intact() {
    let server = LlmServer::start(vec![
        ScriptedResponse::sse(events()).transfer(Transfer::Close)
    ])
    .unwrap();
    // Without `Connection: close` from the client: the server must still
    // close, since that is the only end of the body.
    let mut s = connect(&server);
    post(&mut s, "{}", "");
    let (all, _) = read_to_close(&mut s);
    let (head, body) = split_head(&all);
    assert_eq!(head_value(&head, "content-length"), None);
    assert_eq!(head_value(&head, "transfer-encoding"), None);
    assert_eq!(head_value(&head, "connection"), Some("close"));
    assert_eq!(body, events().concat());
}

#[test]
fn one_byte_writes_deliver_exact_bytes() {
    for transfer in [Transfer::ContentLength, Transfer::Chunked, Transfer::Close] {
        let resp = ScriptedResponse::sse(events())
            .transfer(transfer)
            .pieces_of(1)
            .head_split(Split::Every(1));
        let wire = resp.wire_body();
        let server = LlmServer::start(vec![resp]).unwrap();
        let (_, body) = exchange(&server, "{}");
        assert_eq!(body, wire, "{transfer:?}");
        assert!(server.wait_for_sent(1, WAIT));
        let sent = &server.sent()[0];
        assert_eq!(sent.body_writes, vec![1; wire.len()], "{transfer:?}");
        assert!(sent.head_writes.iter().all(|&n| n == 1));
    }
}

#[test]
fn one_byte_writes_with_delay_reach_the_client_separately() {
    let body = b"0123456789".to_vec();
    let server = LlmServer::start(vec![ScriptedResponse::raw(200, "text/plain", body.clone())
        .pieces_of(1)
        .delay(Duration::from_millis(5))])
    .unwrap();
    let mut s = connect(&server);
    post(&mut s, "{}", "Connection: close\r\n");
    let (all, reads) = read_to_close(&mut s);
    assert_eq!(split_head(&all).1, body);
    // TCP_NODELAY plus the pause should give (nearly) one read per byte;
    // allow some coalescing on a loaded machine.
    assert!(reads.len() >= 6, "reads: {reads:?}");
}

#[test]
fn random_writes_deliver_exact_bytes_and_repeat_per_seed() {
    let long: Vec<String> = (0..40).map(|i| format!("piece {i} ")).collect();
    let chunks: Vec<&str> = long.iter().map(|s| s.as_str()).collect();
    let make = |seed| {
        ScriptedResponse::sse(sse_text(&chunks, Some("stop"))).split(Split::Random {
            seed,
            max_piece: 20,
        })
    };
    let wire = make(7).wire_body();
    let server = LlmServer::start(vec![make(7), make(7), make(8)]).unwrap();
    for _ in 0..3 {
        let (_, body) = exchange(&server, "{}");
        assert_eq!(body, wire);
        assert_eq!(
            dechunk(&body).unwrap(),
            sse_text(&chunks, Some("stop")).concat()
        );
    }
    assert!(server.wait_for_sent(3, WAIT));
    let sent = server.sent();
    let sizes: Vec<&Vec<usize>> = sent.iter().map(|s| &s.body_writes).collect();
    for w in &sizes {
        assert_eq!(w.iter().sum::<usize>(), wire.len());
        assert!(w.iter().all(|&n| (1..=20).contains(&n)));
    }
    assert!(sizes[0].len() > wire.len() / 20);
    assert_eq!(sizes[0], sizes[1], "same seed, same writes");
    assert_ne!(sizes[0], sizes[2], "another seed, other writes");
}

#[test]
fn split_at_chosen_offsets() {
    let server = LlmServer::start(vec![ScriptedResponse::raw(
        200,
        "text/plain",
        b"abcdefghijklmnop".to_vec(),
    )
    .split_at(&[3, 10, 10, 99])])
    .unwrap();
    let (_, body) = exchange(&server, "{}");
    assert_eq!(body, b"abcdefghijklmnop");
    assert!(server.wait_for_sent(1, WAIT));
    assert_eq!(server.sent()[0].body_writes, vec![3, 7, 6]);
}

#[test]
fn cut_closes_early_even_inside_chunk_framing() {
    let full = ScriptedResponse::sse(events());
    let wire = full.wire_body();
    // 2 bytes: inside the first chunk-size line.
    for cut in [2, 10, wire.len() - 3] {
        let server = LlmServer::start(vec![full.clone().cut_after(cut)]).unwrap();
        let (_, body) = exchange(&server, "{}");
        assert_eq!(body, &wire[..cut]);
        assert!(dechunk(&body).is_none());
        assert!(server.wait_for_sent(1, WAIT));
        assert_eq!(server.sent()[0].outcome, Outcome::Cut);
    }
    // Content-Length still promises the whole body.
    let server = LlmServer::start(vec![ScriptedResponse::sse(events())
        .transfer(Transfer::ContentLength)
        .cut_after(20)])
    .unwrap();
    let (head, body) = exchange(&server, "{}");
    assert_eq!(
        head_value(&head, "content-length"),
        Some(events().concat().len().to_string().as_str())
    );
    assert_eq!(body, &events().concat()[..20]);
}

/// Reads exactly `n` bytes past the head; returns the head.
fn read_head_and(s: &mut TcpStream, n: usize) -> (String, Vec<u8>) {
    let mut all = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if let Some(at) = all.windows(4).position(|w: &[u8]| w == b"\r\n\r\n") {
            if all.len() >= at + 4 + n {
                let (h, b) = split_head(&all);
                return (h, b);
            }
        }
        let k = s.read(&mut buf).expect("read");
        assert!(k > 0, "closed early after {} bytes", all.len());
        all.extend_from_slice(&buf[..k]);
    }
}

#[test]
fn stall_keeps_the_connection_open_without_data() {
    let server = LlmServer::start(vec![ScriptedResponse::sse(events()).stall_after(7)]).unwrap();
    let wire = ScriptedResponse::sse(events()).wire_body();
    let mut s = connect(&server);
    post(&mut s, "{}", "");
    let (_, body) = read_head_and(&mut s, 7);
    assert_eq!(body, &wire[..7]);

    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 64];
    let err = s.read(&mut buf).expect_err("data or close during a stall");
    assert!(
        matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{err}"
    );

    // Dropping the server ends the stall: the client sees the close.
    s.set_read_timeout(Some(WAIT)).unwrap();
    let t = Instant::now();
    drop(server);
    match s.read(&mut buf) {
        Ok(0) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        other => panic!("expected close, got {other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn stall_for_a_while_then_close_or_resume() {
    let wire = ScriptedResponse::sse(events()).wire_body();
    let server = LlmServer::start(vec![
        ScriptedResponse::sse(events()).stall_for(5, Duration::from_millis(200)),
        ScriptedResponse::sse(events()).pause_at(5, Duration::from_millis(200)),
    ])
    .unwrap();

    let t = Instant::now();
    let (_, body) = exchange(&server, "{}");
    assert_eq!(body, &wire[..5]);
    assert!(t.elapsed() >= Duration::from_millis(200));

    let t = Instant::now();
    let (_, body) = exchange(&server, "{}");
    assert_eq!(body, wire);
    assert!(t.elapsed() >= Duration::from_millis(200));

    assert!(server.wait_for_sent(2, WAIT));
    let sent = server.sent();
    assert_eq!(sent[0].outcome, Outcome::Stalled);
    assert_eq!(sent[1].outcome, Outcome::Complete);
}

#[test]
fn requests_are_recorded_with_headers_and_bodies() {
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["a"]),
        ScriptedResponse::text(&["b"]),
    ])
    .unwrap();

    // Content-Length body, written in two pieces.
    let body = r#"{"model":"m","stream":true,"messages":[]}"#;
    let mut s = connect(&server);
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Authorization: Bearer sk-test\r\nX-Dup: 1\r\nx-dup: 2\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&body.as_bytes()[..5]).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    s.write_all(&body.as_bytes()[5..]).unwrap();
    read_to_close(&mut s);

    // Chunked body, with an extension and a trailer.
    let mut s = connect(&server);
    s.write_all(
        b"POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: h\r\n\
          Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
          5\r\nhello\r\nA;ext=1\r\n, chunked!\r\n0\r\nTrailer: t\r\n\r\n",
    )
    .unwrap();
    read_to_close(&mut s);

    assert!(server.wait_for_requests(2, WAIT));
    let reqs = server.requests();
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].version, "HTTP/1.1");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(reqs[0].header("X-DUP"), Some("1"));
    assert_eq!(reqs[0].header_all("x-dup"), vec!["1", "2"]);
    assert_eq!(
        reqs[0].headers[1],
        ("Authorization".into(), "Bearer sk-test".into())
    );
    assert_eq!(reqs[0].body_text(), body);
    assert!(!reqs[0].chunked);

    assert_eq!(reqs[1].path, "/v1/chat/completions?x=1");
    assert!(reqs[1].chunked);
    assert_eq!(reqs[1].body, b"hello, chunked!");
    assert_ne!(reqs[0].conn, reqs[1].conn);
    assert!(server.errors().is_empty(), "{:?}", server.errors());
}

#[test]
fn expect_100_continue_is_answered_before_the_body() {
    let server = LlmServer::start(vec![ScriptedResponse::text(&["ok"])]).unwrap();
    let mut s = connect(&server);
    s.write_all(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\
          Expect: 100-continue\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut buf = [0u8; 25];
    s.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(b"{}").unwrap();
    let (all, _) = read_to_close(&mut s);
    assert!(all.starts_with(b"HTTP/1.1 200 OK\r\n"));
    assert!(server.wait_for_requests(1, WAIT));
    assert_eq!(server.requests()[0].body, b"{}");
}

#[test]
fn keep_alive_connection_serves_responses_in_order() {
    let server = LlmServer::start(vec![
        ScriptedResponse::json(200, r#"{"n":1}"#),
        ScriptedResponse::json(200, r#"{"n":2}"#),
    ])
    .unwrap();
    let mut s = connect(&server);
    post(&mut s, "first", "");
    // The server keeps the connection open, so read exactly the length.
    let (head, body) = read_head_and(&mut s, 7);
    assert_eq!(head_value(&head, "content-length"), Some("7"));
    assert_eq!(body, br#"{"n":1}"#);
    post(&mut s, "second", "Connection: close\r\n");
    let (all, _) = read_to_close(&mut s);
    assert_eq!(split_head(&all).1, br#"{"n":2}"#);
    assert!(server.wait_for_requests(2, WAIT));
    let reqs = server.requests();
    assert_eq!(reqs[0].body, b"first");
    assert_eq!(reqs[1].body, b"second");
    assert_eq!(reqs[0].conn, reqs[1].conn);
    assert_eq!(server.remaining(), 0);
}

#[test]
fn empty_queue_answers_500_with_a_json_error() {
    let server = LlmServer::start(vec![]).unwrap();
    let (head, body) = exchange(&server, "{}");
    assert!(head.starts_with("HTTP/1.1 500 "), "{head}");
    assert_eq!(head_value(&head, "content-type"), Some("application/json"));
    assert_eq!(
        body,
        br#"{"error":{"message":"no scripted response left"}}"#
    );
}

#[test]
fn error_response_with_retry_after() {
    let server = LlmServer::start(vec![ScriptedResponse::error(
        429,
        "Rate limit \"reached\"",
        "rate_limit_error",
        Some("rate_limit_exceeded"),
    )
    .retry_after(3)])
    .unwrap();
    let (head, body) = exchange(&server, "{}");
    assert!(
        head.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
        "{head}"
    );
    assert_eq!(head_value(&head, "retry-after"), Some("3"));
    assert_eq!(
        String::from_utf8(body).unwrap(),
        r#"{"error":{"message":"Rate limit \"reached\"","type":"rate_limit_error","code":"rate_limit_exceeded"}}"#
    );
    assert_eq!(
        error_body("m", "t", None),
        r#"{"error":{"message":"m","type":"t","code":null}}"#
    );
}

#[test]
fn json_strings_are_escaped() {
    assert_eq!(json_string("plain"), r#""plain""#);
    assert_eq!(
        json_string("q\"b\\n\nr\rt\t\u{1}\u{8}\u{c}é😀"),
        "\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\b\\fé😀\""
    );
}

#[test]
fn tool_call_stream_has_the_openai_shape() {
    let ev = sse_tool_calls(
        &[
            ("call_1", "add", &[r#"{"a":"#, r#"1,"b":2}"#]),
            ("call_2", "led", &[]),
        ],
        Some("tool_calls"),
    );
    let text: Vec<String> = ev
        .iter()
        .map(|e| String::from_utf8(e.clone()).unwrap())
        .collect();
    assert_eq!(text.len(), 5);
    assert!(text[0].contains(
        r#""tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":"}}]"#
    ));
    assert!(text[1]
        .contains(r#""delta":{"tool_calls":[{"index":0,"function":{"arguments":"1,\"b\":2}"}}]}"#));
    assert!(!text[1].contains("call_1") && !text[1].contains("\"name\""));
    assert!(text[2].contains(
        r#"{"index":1,"id":"call_2","type":"function","function":{"name":"led","arguments":""}}"#
    ));
    assert!(text[3].contains(r#""finish_reason":"tool_calls""#));
    assert_eq!(text[4], "data: [DONE]\n\n");
    assert!(text
        .iter()
        .all(|t| t.starts_with("data: ") && t.ends_with("\n\n")));
    // Multi-line data becomes several data: lines.
    assert_eq!(sse_event("a\nb"), b"data: a\ndata: b\n\n");
}

#[test]
fn model_closure_decides_each_answer() {
    let server = LlmServer::with_model(|req| {
        if req.body.is_empty() {
            ScriptedResponse::error(400, "empty", "invalid_request_error", None)
        } else {
            ScriptedResponse::text(&[&format!("got {} bytes", req.body.len())])
        }
    })
    .unwrap();
    server.push(ScriptedResponse::json(200, "{}"));
    let (_, body) = exchange(&server, "abc");
    assert_eq!(body, b"{}", "queued responses go first");
    let (_, body) = exchange(&server, "abcd");
    assert!(String::from_utf8_lossy(&dechunk(&body).unwrap()).contains("got 4 bytes"));
    let (head, _) = exchange(&server, "");
    assert!(head.starts_with("HTTP/1.1 400 "));
}

#[test]
fn bad_requests_get_400_and_are_reported() {
    let server = LlmServer::start(vec![ScriptedResponse::text(&["ok"])]).unwrap();
    let mut s = connect(&server);
    s.write_all(b"this is not http\r\n\r\n").unwrap();
    let (all, _) = read_to_close(&mut s);
    assert!(all.starts_with(b"HTTP/1.1 400 "));
    assert_eq!(server.errors().len(), 1);
    // The scripted response is still there for the next, valid request.
    assert_eq!(server.remaining(), 1);
    let (head, _) = exchange(&server, "{}");
    assert!(head.starts_with("HTTP/1.1 200 "));
}

#[test]
fn drop_ends_everything_promptly() {
    let server = LlmServer::start(vec![
        ScriptedResponse::sse(events()).stall_after(3),
        ScriptedResponse::sse(events())
            .pieces_of(1)
            .delay(Duration::from_secs(10)),
    ])
    .unwrap();
    let mut stalled = connect(&server);
    post(&mut stalled, "{}", "");
    assert!(server.wait_for_requests(1, WAIT));
    let mut slow = connect(&server);
    post(&mut slow, "{}", "");
    assert!(server.wait_for_requests(2, WAIT));
    let _idle = connect(&server); // connected, never sends
    let _half = {
        let mut h = connect(&server);
        h.write_all(b"POST / HTTP/1.1\r\nContent-Le").unwrap();
        h
    };
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    drop(server);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    for s in [&mut stalled, &mut slow] {
        let (all, _) = read_to_close(s);
        assert!(all.starts_with(b"HTTP/1.1 200 OK\r\n"));
    }
}
