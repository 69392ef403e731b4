//! The WebNet channel end to end: HTTP over real TCP to the host WebNet
//! (one thread, as WebNet has it), the loop, chat() to the scripted server,
//! the C tools, and the reply streamed back as server-sent events.

use rtt_agent::channels::web::set_reply_timeout_ms;
use rtt_agent::host::heap;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent::runtime::settings::web::set_token;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use rtt_agent_testkit::web::*;
#[path = "support/http_exchange.rs"]
mod http_exchange;
use http_exchange::{split_request, Pace, Tally};
use std::time::Duration;

fn text_events(events: &[(String, String)], name: &str) -> Vec<String> {
    events
        .iter()
        .filter(|(e, _)| e == name)
        .map(|(_, d)| d.clone())
        .collect()
}

#[test]
fn a_streamed_reply_arrives_in_pieces_with_its_tool_calls() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        calls_with_reasoning("add them", &[("w1", "add", &["{\"a\":2,", "\"b\":3}"])]),
        ScriptedResponse::text(&["The sum ", "of 2 and 3 ", "is **5**.\nDone."]),
    ])
    .unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let r = post(
        agent.addr,
        "/cgi-bin/chat",
        r#"{"message":"what is 2+3?","stream":true}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("Content-Type"), Some("text/event-stream"));
    assert!(
        r.text().starts_with(":rt-thread-stream\n\n"),
        "{}",
        r.text()
    );
    let events = r.events();
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    let deltas = text_events(&events, "delta");
    assert!(deltas.len() > 1, "deltas: {deltas:?}");
    assert_eq!(deltas.concat(), "The sum of 2 and 3 is **5**.\nDone.");
    assert_eq!(text_events(&events, "reasoning").concat(), "add them");
    let calls = text_events(&events, "tool_call");
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].contains("\"name\":\"add\"") && calls[0].contains("w1"),
        "{calls:?}"
    );
    assert_eq!(text_events(&events, "tool_result"), ["2 + 3 = 5"]);
    assert_eq!(
        text_events(&events, "final"),
        ["The sum of 2 and 3 is **5**.\nDone."]
    );
    assert_eq!(names.last(), Some(&"done"));
    let final_at = names.iter().position(|&n| n == "final").unwrap();
    let last_delta = names.iter().rposition(|&n| n == "delta").unwrap();
    let call_at = names.iter().position(|&n| n == "tool_call").unwrap();
    assert!(call_at < last_delta && last_delta < final_at, "{names:?}");
    // The request the model got: the tool round, then the answer.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        roles(&messages_of(&reqs[1])),
        ["system", "user", "assistant", "tool"]
    );
}

#[test]
fn a_reply_without_streaming_is_the_old_json() {
    let _serial = lock();
    let server = LlmServer::start(vec![ScriptedResponse::text(&["hello ", "there"])]).unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let r = post(agent.addr, "/cgi-bin/chat", r#"{"message":"hi"}"#);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    assert_eq!(r.text(), r#"{"success":true,"response":"hello there"}"#);
    assert_eq!(
        r.header("Content-Length"),
        Some(r.body.len().to_string().as_str())
    );
}

#[test]
fn bad_requests_get_clear_http_errors() {
    let _serial = lock();
    let server = LlmServer::start(vec![]).unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let a = agent.addr;
    let check = |r: Response, status: u16, says: &str| {
        assert_eq!(r.status, status, "{}", r.text());
        assert!(r.text().contains(says), "{} lacks {says:?}", r.text());
        assert!(r.text().starts_with("{\"success\":false"), "{}", r.text());
    };
    check(request(a, "GET", "/cgi-bin/chat", None), 405, "use POST");
    check(
        request(a, "PUT", "/cgi-bin/chat", Some("{}")),
        405,
        "use POST",
    );
    check(
        request(a, "POST", "/cgi-bin/chat", None),
        400,
        "JSON object is required",
    );
    check(
        post(a, "/cgi-bin/chat", "{\"message\":"),
        400,
        "not valid JSON",
    );
    check(post(a, "/cgi-bin/chat", "[1,2]"), 400, "not a JSON object");
    check(
        post(a, "/cgi-bin/chat", "{}"),
        400,
        "message must be a string",
    );
    check(
        post(a, "/cgi-bin/chat", "{\"message\":7}"),
        400,
        "message must be a string",
    );
    check(
        post(a, "/cgi-bin/chat", "{\"message\":\"\"}"),
        400,
        "message cannot be empty",
    );
    // Longer than the channel takes.
    let body = format!("{{\"message\":\"{}\"}}", "x".repeat(5000));
    check(post(a, "/cgi-bin/chat", &body), 413, "at most 4096 bytes");
    // Longer than WebNet reads (8 KB): answered after the head; a client
    // that waits for the answer before sending the body (as with Expect:
    // 100-continue) gets it, and the end of the stream.
    let head = "POST /cgi-bin/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 9000\r\n\r\n";
    check(
        exchange_raw(a, head.as_bytes()).unwrap(),
        413,
        "at most 4096 bytes",
    );
    // WebNet's own answer for a CGI nobody registered.
    let r = request(a, "GET", "/cgi-bin/nothing", None);
    assert_eq!(r.status, 404);
    assert_eq!(
        server.requests().len(),
        0,
        "no bad request reached the model"
    );
}

#[test]
fn a_stopped_agent_answers_unavailable() {
    let _serial = lock();
    let server = LlmServer::start(vec![]).unwrap();
    let addr = WebAgent::start(&server, Overrides::default()).addr;
    // Dropped: the agent stopped, WebNet still serves (chat kept open here).
    rtt_agent::runtime::settings::web::set_open_chat(Some(true));
    let r = post(addr, "/cgi-bin/chat", r#"{"message":"anyone?"}"#);
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.text().contains("not running"), "{}", r.text());
    let r = post(
        addr,
        "/cgi-bin/chat",
        r#"{"message":"anyone?","stream":true}"#,
    );
    assert_eq!(r.status, 503, "{}", r.text());
    // The page is still there, gzipped.
    let page = request(addr, "GET", "/cgi-bin/agent", None);
    assert_eq!(page.status, 200);
    assert_eq!(page.header("Content-Encoding"), Some("gzip"));
    assert_eq!(
        page.header("Content-Length"),
        Some(page.body.len().to_string().as_str())
    );
    let mut html = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&page.body[..]), &mut html)
        .unwrap();
    assert_eq!(
        html,
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/web/agent.html")).unwrap()
    );
    assert_eq!(
        request(addr, "POST", "/cgi-bin/agent", Some("{}")).status,
        405
    );
    rtt_agent::runtime::settings::web::set_open_chat(None);
}

#[test]
fn two_clients_at_once_each_get_their_own_reply() {
    let _serial = lock();
    let server = LlmServer::with_model(|req| {
        let msgs = messages_of(req);
        let last = msgs.last().map(|m| m.content.clone()).unwrap_or_default();
        ScriptedResponse::text(&["you said: ", &last])
            .first_byte_after(std::time::Duration::from_millis(200))
    })
    .unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let addr = agent.addr;
    let clients: Vec<_> = ["first", "second", "third"]
        .into_iter()
        .map(|word| {
            std::thread::spawn(move || {
                let stream = word == "second";
                let body = format!(r#"{{"message":"{word}","stream":{stream}}}"#);
                (word, stream, post(addr, "/cgi-bin/chat", &body))
            })
        })
        .collect();
    for c in clients {
        let (word, stream, r) = c.join().unwrap();
        assert_eq!(r.status, 200, "{word}: {}", r.text());
        let reply = if stream {
            text_events(&r.events(), "final").concat()
        } else {
            r.text()
        };
        assert!(
            reply.contains(&format!("you said: {word}")),
            "{word}: {reply}"
        );
    }
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn reset_and_cleanup_start_a_new_conversation() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["one"]),
        ScriptedResponse::text(&["two"]),
        ScriptedResponse::text(&["three"]),
    ])
    .unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let a = agent.addr;
    assert!(post(a, "/cgi-bin/chat", r#"{"message":"a"}"#)
        .text()
        .contains("one"));
    let r = post(a, "/cgi-bin/chat", r#"{"reset":true}"#);
    assert_eq!(r.status, 200);
    assert!(r.text().contains("Conversation reset successfully"));
    assert!(post(a, "/cgi-bin/chat", r#"{"message":"b"}"#)
        .text()
        .contains("two"));
    assert_eq!(request(a, "GET", "/cgi-bin/cleanup", None).status, 405);
    assert_eq!(post(a, "/cgi-bin/cleanup", "{}").status, 200);
    assert!(post(a, "/cgi-bin/chat", r#"{"message":"c"}"#)
        .text()
        .contains("three"));
    let reqs = server.requests();
    for (r, said) in reqs.iter().zip(["a", "b", "c"]) {
        let m = messages_of(r);
        assert_eq!(roles(&m), ["system", "user"], "{m:?}");
        assert_eq!(m[1].content, said);
    }
}

#[test]
fn the_configuration_needs_the_token_and_never_shows_the_key() {
    let _serial = lock();
    let server = LlmServer::start(vec![ScriptedResponse::text(&["ok"])]).unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let a = agent.addr;
    // The default (an empty PKG_AGENT_WEB_TOKEN): both endpoints refuse.
    set_token(None);
    let r = post(a, "/cgi-bin/get_config", r#"{"token":""}"#);
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(r.text().contains("PKG_AGENT_WEB_TOKEN"));
    let r = post(a, "/cgi-bin/config", r#"{"modelName":"m2"}"#);
    assert_eq!(r.status, 403);

    set_token(Some(c"board-token-0001"));
    for bad in [
        r#"{"modelName":"m2"}"#,
        r#"{"token":"board-token-0002","modelName":"m2"}"#,
        r#"{"token":"board-token-0001x","modelName":"m2"}"#,
    ] {
        let r = post(a, "/cgi-bin/config", bad);
        assert_eq!(r.status, 403, "{bad}: {}", r.text());
        assert!(r.text().contains("a valid token is required"));
        assert!(r.header("WWW-Authenticate").is_none());
    }
    assert_eq!(request(a, "GET", "/cgi-bin/get_config", None).status, 403);
    assert_eq!(
        request(a, "GET", "/cgi-bin/get_config?token=nope", None).status,
        403
    );
    // Five wrong (or missing) tokens from this address: the next request is
    // refused whatever its token, until the minute has passed.
    let r = request(a, "GET", "/cgi-bin/get_config?token=board-token-0001", None);
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(r.header("Retry-After"), Some("60"));
    rtt_agent::net::token_limit::forget_all();

    let r = request(a, "GET", "/cgi-bin/get_config?token=board-token-0001", None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.text().contains(r#""apiKey":"sk-...89 (17 characters)""#),
        "{}",
        r.text()
    );
    assert!(
        r.text().contains(r#""modelName":"web-model""#),
        "{}",
        r.text()
    );
    assert!(!r.text().contains("secret"), "{}", r.text());

    let r = post(
        a,
        "/cgi-bin/config",
        r#"{"token":"board-token-0001","modelName":""}"#,
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let r = post(
        a,
        "/cgi-bin/config",
        r#"{"token":"board-token-0001","modelName":"web-model-2","apiKey":"sk-new-key-0123456"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let r = post(a, "/cgi-bin/get_config", r#"{"token":"board-token-0001"}"#);
    assert!(
        r.text().contains(r#""modelName":"web-model-2""#),
        "{}",
        r.text()
    );
    assert!(
        r.text().contains("sk-...56 (18 characters)"),
        "{}",
        r.text()
    );
    assert!(!r.text().contains("new-key"), "{}", r.text());
    // The next request uses the new model and key.
    // Chat needs the token too, now that one is set.
    let r = post(a, "/cgi-bin/chat", r#"{"message":"hi"}"#);
    assert_eq!(r.status, 403, "{}", r.text());
    let r = post(
        a,
        "/cgi-bin/chat",
        r#"{"message":"hi","token":"board-token-0001"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let req = &server.requests()[0];
    assert!(req.body_text().contains("\"web-model-2\""));
    assert_eq!(
        req.header("Authorization"),
        Some("Bearer sk-new-key-0123456")
    );
    set_token(None);
}

#[test]
fn the_heap_returns_to_its_baseline() {
    let _serial = lock();
    // A first start registers WebNet's handlers and starts its thread, for
    // good (WebNet cannot stop): the baseline is taken after that.
    {
        let server = uncounted_server(Vec::new);
        drop(WebAgent::start(&server, Overrides::default()));
    }
    let server = uncounted_server(|| {
        vec![
            ScriptedResponse::tool_calls(&[("h1", "mul", &["{\"a\":6,\"b\":7}"])]),
            ScriptedResponse::text(&["42"]),
            ScriptedResponse::text(&["again"]),
        ]
    });
    let before = heap::used();
    let agent = WebAgent::start(&server, Overrides::default());
    let r = post(
        agent.addr,
        "/cgi-bin/chat",
        r#"{"message":"6*7","stream":true}"#,
    );
    assert_eq!(text_events(&r.events(), "final"), ["42"]);
    assert!(post(agent.addr, "/cgi-bin/chat", r#"{"message":"x"}"#)
        .text()
        .contains("again"));
    assert_eq!(
        post(agent.addr, "/cgi-bin/chat", "{\"message\":").status,
        400
    );
    drop(r);
    drop(agent);
    assert_eq!(heap::used(), before, "heap after a stop");
}

#[test]
fn a_request_that_gave_up_never_takes_another_ones_reply() {
    let _serial = lock();
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["late ", "answer"])
            .first_byte_after(std::time::Duration::from_millis(1500)),
        ScriptedResponse::text(&["on time"]),
    ])
    .unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let a = agent.addr;
    set_reply_timeout_ms(Some(300));
    let r = post(a, "/cgi-bin/chat", r#"{"message":"slow","stream":true}"#);
    let events = r.events();
    assert_eq!(
        text_events(&events, "error"),
        ["no reply in time (PKG_AGENT_REPLY_TIMEOUT_MS)"],
        "{events:?}"
    );
    // The loop still works for it: a stream would get its fragments.
    let r = post(a, "/cgi-bin/chat", r#"{"message":"next","stream":true}"#);
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.text().contains("busy"), "{}", r.text());
    set_reply_timeout_ms(Some(5000));
    // Once it is answered, the late reply is discarded, not handed on.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while rtt_agent::runtime::agent_loop::is_busy() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = post(a, "/cgi-bin/chat", r#"{"message":"next","stream":true}"#);
    assert_eq!(
        text_events(&r.events(), "final"),
        ["on time"],
        "{}",
        r.text()
    );
    assert!(!r.text().contains("late"), "{}", r.text());
    set_reply_timeout_ms(None);
}

/// WebNet matches methods and header names by a case-insensitive prefix
/// (`str_begin_with` is `strncasecmp`), as the real firmware does
/// (tests/qemu/run.sh --webnet): a lower-case `content-length` still carries
/// the body, a lower-case method is still GET.
#[test]
fn methods_and_header_names_match_case_insensitively_as_in_webnet() {
    let _serial = lock();
    let server = LlmServer::start(vec![]).unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let r = exchange_raw(
        agent.addr,
        b"POST /cgi-bin/chat HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
    )
    .unwrap();
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.text().contains("message must be a string"),
        "{}",
        r.text()
    );
    let r = exchange_raw(
        agent.addr,
        b"POST /cgi-bin/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nCONTENT-TYPE: application/json\r\nContent-LENGTH: 14\r\n\r\n{\"message\":\"\"}",
    )
    .unwrap();
    assert!(r.text().contains("message cannot be empty"), "{}", r.text());
    let r = exchange_raw(
        agent.addr,
        b"get /cgi-bin/agent HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    )
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.head);
    assert_eq!(server.requests().len(), 0);
}

/// WebNet 2.0.3 dereferences the NULL Content-Type of a POST that has a body
/// and no Content-Type header (`webnet_request_parse_header`): the
/// qemu-vexpress-a9 firmware takes a data abort. The host port drops the
/// connection without an answer instead, so a client that works against it
/// sends a Content-Type with every body; other requests are served after it.
#[test]
fn a_body_without_a_content_type_gets_no_answer_as_webnet_crashes_on_it() {
    let _serial = lock();
    let server = LlmServer::start(vec![]).unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let r = exchange_raw(
        agent.addr,
        b"POST /cgi-bin/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}",
    );
    assert!(r.is_err(), "answered: {:?}", r.map(|r| r.head));
    // Without a body there is nothing to read and nothing to crash on.
    let r = exchange_raw(
        agent.addr,
        b"POST /cgi-bin/chat HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    )
    .unwrap();
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("JSON object is required"), "{}", r.text());
    assert_eq!(post(agent.addr, "/cgi-bin/chat", "{}").status, 400);
    assert_eq!(server.requests().len(), 0);
}

/// What the head's Connection says: WebNet zeroes a new request
/// (WEBNET_CONN_CLOSE), so without a Connection header it is "close"; a
/// Connection header other than "close" makes it "Keep-Alive". Either way
/// the session is closed after the answer. As the real firmware answers
/// (tests/qemu/run.sh --webnet).
#[test]
fn the_connection_header_is_what_webnet_writes() {
    let _serial = lock();
    let server = LlmServer::start(vec![]).unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let ask = |connection: &str| {
        let raw = format!(
            "POST /cgi-bin/chat HTTP/1.1\r\nHost: 127.0.0.1\r\n{connection}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
        );
        let r = exchange_raw(agent.addr, raw.as_bytes()).unwrap();
        assert_eq!(r.status, 400, "{}", r.text());
        r.header("Connection").map(str::to_string)
    };
    assert_eq!(ask("").as_deref(), Some("close"));
    assert_eq!(ask("Connection: close\r\n").as_deref(), Some("close"));
    assert_eq!(
        ask("Connection: keep-alive\r\n").as_deref(),
        Some("Keep-Alive")
    );
    assert_eq!(
        ask("Connection: Upgrade\r\n").as_deref(),
        Some("Keep-Alive")
    );
    // exchange_raw reads to the end: the session was closed each time.
}

/// A body WebNet leaves unread (8 KB or more; multipart) is answered (413;
/// 400: no JSON body) whether it comes before, while or after the answer:
/// the handler reads and drops it before WebNet closes, so the close is no
/// reset that could cost the client the answer (or fail its write of the
/// body before it reads the answer).
#[test]
fn a_body_webnet_leaves_unread_does_not_cost_the_answer() {
    let _serial = lock();
    let server = LlmServer::start(vec![]).unwrap();
    let agent = WebAgent::start(&server, Overrides::default());
    let long = format!("{{\"message\":\"{}\"}}", "x".repeat(9000));
    let form = "--b\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nhi\r\n--b--\r\n";
    let head = |ctype: &str, length: usize| {
        format!(
            "POST /cgi-bin/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {ctype}\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    let started = std::time::Instant::now();
    let mut tally = Tally::default();
    const EACH: usize = 300;
    for i in 0..2 * EACH {
        let pause = Duration::from_micros((i / 2 % 5) as u64 * 100);
        let pace = if i / 2 % 2 == 0 {
            Pace::Once(pause * 5)
        } else {
            Pace::Pieces(pause)
        };
        if i % 2 == 0 {
            let got = split_request(
                agent.addr,
                head("application/json", long.len()).as_bytes(),
                long.as_bytes(),
                pace,
            );
            tally.count("413", got, 413, "Content-Type");
        } else {
            let got = split_request(
                agent.addr,
                head("multipart/form-data; boundary=b", form.len()).as_bytes(),
                form.as_bytes(),
                pace,
            );
            tally.count("400", got, 400, "Content-Type");
        }
    }
    assert_eq!(
        (
            tally.whole,
            tally.write_failed,
            tally.read_failed,
            tally.cut
        ),
        (2 * EACH, 0, 0, 0),
        "of {} requests in {:?} (whole answers, body writes failed, reads reset, \
         answers cut short): wrong answers {:?}",
        2 * EACH,
        started.elapsed(),
        tally.wrong
    );
    // The body of a multipart POST is not read, and the URL's query is no
    // body either.
    let r = exchange_raw(
        agent.addr,
        format!(
            "POST /cgi-bin/chat?{{\"message\":\"hi\"}} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: {}\r\n\r\n{form}",
            form.len()
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("JSON object is required"), "{}", r.text());
    assert_eq!(server.requests().len(), 0, "none reached the model");
}

/// The chosen channel of [`extra_channels_each_get_their_own_replies`]: it
/// only hands the test the hub, whose output mailbox the test reads as C
/// code using the hub would.
static HUB_READER_OPS: rtt_agent::runtime::agent_loop::AgentChannelOps =
    rtt_agent::runtime::agent_loop::AgentChannelOps {
        init: Some(hub_reader_init),
        reset: None,
    };

unsafe extern "C" fn hub_reader_init(
    _hub: rtt_agent::runtime::hub::MessageHub_t,
    _ctx: rtt_agent::runtime::context::Context_t,
) -> std::ffi::c_int {
    0
}

/// Ask the running agent through its hub as the chosen channel does: put
/// on the input mailbox, take from the output mailbox; replies to injected
/// messages (marked) are skipped, as the CLI shows them aside.
fn ask_on_hub(text: &str) -> String {
    use rtt_agent::abi::messages::*;
    use rtt_agent::runtime::hub::{message_hub_get_timeout, message_hub_put};
    let hub = rtt_agent::ffi::runtime::agent_get_message_hub();
    assert!(!hub.is_null());
    let content = std::ffi::CString::new(text).unwrap();
    let msg = messages_create(1);
    // SAFETY: `msg` is live and owned here until handed over; `hub` is the
    // running agent's, alive until the test stops it after this returns.
    unsafe {
        assert_eq!(messages_append(msg, TYPE_TEXT, content.as_ptr()), 0);
        assert_eq!(message_hub_put(hub, msg, (*hub).input_mailbox), 0);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        assert!(std::time::Instant::now() < deadline, "no reply to {text:?}");
        // SAFETY: as above; 100 ticks of waiting.
        let reply = unsafe { message_hub_get_timeout(hub, (*hub).output_mailbox, 100) };
        if reply.is_null() {
            continue;
        }
        let unasked = rtt_agent::runtime::unasked::take_reply(reply);
        // SAFETY: a received reply, owned here; its content is read, then
        // it is freed once.
        let got = unsafe {
            let t = messages_get_content_idx(reply, 0);
            let got = std::ffi::CStr::from_ptr(t).to_string_lossy().into_owned();
            messages_destroy(reply);
            got
        };
        if !unasked {
            return got;
        }
    }
}

#[test]
fn extra_channels_each_get_their_own_replies() {
    use rtt_agent::channels::debug::agent_debug_extra_ops;
    use rtt_agent::channels::web::agent_webnet_extra_ops;
    use rtt_agent::runtime::agent_loop;
    let _serial = lock();
    // A first start registers WebNet's handlers and starts its thread, for
    // good (WebNet cannot stop): the baseline is taken after that.
    {
        let server = uncounted_server(Vec::new);
        drop(WebAgent::start(&server, Overrides::default()));
    }
    let server = LlmServer::with_model(rtt_agent_testkit::arith_model::respond).unwrap();
    let before = heap::used();
    rtt_agent::runtime::settings::web::set_open_chat(Some(true));
    configure(&server, c"sk-extra-1", c"extra-model", Overrides::default());
    set_reply_timeout_ms(Some(30_000));
    agent_loop::set_channel(&HUB_READER_OPS);
    agent_loop::set_extra_channels(Some(&[&agent_webnet_extra_ops, &agent_debug_extra_ops]));
    assert_eq!(agent_loop::main_loop_entry(), 0);
    let addr = rtt_agent_testkit::web::web_addr().expect("the extra channel started WebNet");
    const ROUNDS: i64 = 6;
    let hub_side = std::thread::spawn(|| {
        for i in 0..ROUNDS {
            let got = ask_on_hub(&format!("what is {i}+100?"));
            assert!(got.contains(&format!("{}", i + 100)), "hub: {got:?}");
        }
    });
    let debug_side = std::thread::spawn(|| {
        for i in 0..ROUNDS {
            let got = ask(&format!("what is {i}+200?"));
            assert!(got.contains(&format!("{}", i + 200)), "debug: {got:?}");
        }
    });
    let web_side = std::thread::spawn(move || {
        for i in 0..ROUNDS {
            let body = format!(r#"{{"message":"what is {i}+300?","stream":true}}"#);
            let r = post(addr, "/cgi-bin/chat", &body);
            assert_eq!(r.status, 200, "{}", r.text());
            let events = r.events();
            let fin = text_events(&events, "final");
            assert_eq!(fin.len(), 1, "{events:?}");
            assert!(fin[0].contains(&format!("{}", i + 300)), "web: {fin:?}");
            // Only this request's turn streamed to the page.
            for call in text_events(&events, "tool_call") {
                assert!(
                    call.contains("300"),
                    "another channel's turn streamed: {call}"
                );
            }
        }
    });
    // Messages no channel sent, meanwhile: nobody takes their replies for
    // an answer.
    for i in 0..ROUNDS {
        let text = std::ffi::CString::new(format!("what is {i}+400?")).unwrap();
        // SAFETY: a NUL-terminated string, copied by the call.
        unsafe { rtt_agent::ffi::runtime::agent_inject_text(text.as_ptr()) };
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    for side in [hub_side, debug_side, web_side] {
        side.join().expect("each side got its own replies");
    }
    agent_loop::cleanup_agent_entry();
    agent_loop::set_extra_channels(None);
    agent_loop::set_channel(std::ptr::null());
    set_reply_timeout_ms(None);
    rtt_agent::runtime::settings::web::set_open_chat(None);
    assert_eq!(heap::used(), before, "heap back after cleanup");
}
