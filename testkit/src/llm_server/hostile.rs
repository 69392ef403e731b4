//! Hostile and faulty servers: what a client must survive in bounded time
//! and memory. Each is a [`ScriptedResponse`] (a constructor or a chained
//! setter), so it mixes with the other scripting: framing, splits, queues.
//!
//! - [`ScriptedResponse::drip`]: the body one byte per write, one per
//!   interval (1 byte/s holds a per-read timeout off for ever);
//! - [`ScriptedResponse::stall_after_headers`]: the head, then nothing;
//! - [`ScriptedResponse::endless_comments`]: SSE `: keep-alive` comments for
//!   ever (a stream that is alive and never answers);
//! - [`ScriptedResponse::endless_content`] / [`endless_tool_arguments`]:
//!   answer text, or one tool call's arguments, for ever;
//! - [`ScriptedResponse::many_tool_calls`]: `n` distinct tool calls (a
//!   million, say), generated while sending;
//! - [`ScriptedResponse::claimed_length_then_close`]: a `Content-Length`
//!   far beyond the body, then the connection closed;
//! - [`ScriptedResponse::huge_header`]: a header line of any size (2 MB);
//! - [`ScriptedResponse::cut_after_events`]: the connection closed after
//!   `n` whole events;
//! - [`ScriptedResponse::retry_after_ms`], [`ScriptedResponse::retry_after_date`]:
//!   the other two ways a server says when to come back;
//! - [`http_date`]: an IMF-fixdate, for `Date` and `Retry-After` headers.
//!
//! [`endless_tool_arguments`]: ScriptedResponse::endless_tool_arguments

use super::response::{Body, Generated, ScriptedResponse, Split, Transfer};
use super::sse::{chunk_json, json_string, sse_done, sse_event, sse_finish};
use std::sync::Arc;
use std::time::Duration;

impl ScriptedResponse {
    /// More body after the fixed one: `next(i)` for i = 0, 1, ... until it
    /// returns `None`, each piece `interval` after the previous one.
    pub fn then_generate(
        mut self,
        interval: Duration,
        next: impl Fn(u64) -> Option<Vec<u8>> + Send + Sync + 'static,
    ) -> Self {
        self.generated = Some(Generated {
            next: Arc::new(next),
            interval,
        });
        self
    }

    /// The body one byte per write, `interval` apart (the head goes at
    /// once). Chunked, each byte is a chunk of its own, framing and all in
    /// one write: a server that flushes every byte it has.
    pub fn drip(mut self, interval: Duration) -> Self {
        let bytes = self.body.bytes();
        self.body = Body::Pieces(bytes.into_iter().map(|b| vec![b]).collect());
        self.split = Split::Pieces;
        self.delay = interval;
        self
    }

    /// The head, then nothing (the connection stays open until the server
    /// is dropped).
    pub fn stall_after_headers(self) -> Self {
        self.stall_after(0)
    }

    /// A 200 stream of SSE comments (`: keep-alive`), one per `interval`,
    /// that never ends.
    pub fn endless_comments(interval: Duration) -> Self {
        Self::sse(Vec::new()).then_generate(interval, |_| Some(b": keep-alive\n\n".to_vec()))
    }

    /// A 200 stream of answer text, one small content delta per `interval`,
    /// that never ends.
    pub fn endless_content(interval: Duration) -> Self {
        let first = sse_event(&chunk_json(
            r#"{"role":"assistant","content":"endless "}"#,
            None,
        ));
        let next = sse_event(&chunk_json(r#"{"content":"and more "}"#, None));
        Self::sse(vec![first]).then_generate(interval, move |_| Some(next.clone()))
    }

    /// A 200 stream of one tool call whose arguments never end, one
    /// fragment per `interval`.
    pub fn endless_tool_arguments(interval: Duration) -> Self {
        let first = sse_event(&chunk_json(
            r#"{"tool_calls":[{"index":0,"id":"call_endless","type":"function","function":{"name":"add","arguments":"{\"a\":\""}}]}"#,
            None,
        ));
        let next = sse_event(&chunk_json(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"1111111111111111"}}]}"#,
            None,
        ));
        Self::sse(vec![first]).then_generate(interval, move |_| Some(next.clone()))
    }

    /// A 200 stream of `n` distinct tool calls (`call_0`, `call_1`, ...
    /// at index 0, 1, ..., each whole in one event), then the finish chunk
    /// and `[DONE]`; generated while sending, so `n` may be a million.
    pub fn many_tool_calls(n: u64) -> Self {
        Self::sse(Vec::new()).then_generate(Duration::ZERO, move |i| {
            if i < n {
                let delta = format!(
                    r#"{{"tool_calls":[{{"index":{i},"id":{},"type":"function","function":{{"name":"add","arguments":"{{\"a\":1,\"b\":2}}"}}}}]}}"#,
                    json_string(&format!("call_{i}"))
                );
                Some(sse_event(&chunk_json(&delta, None)))
            } else if i == n {
                Some(sse_finish("tool_calls"))
            } else if i == n + 1 {
                Some(sse_done())
            } else {
                None
            }
        })
    }

    /// Claims `Content-Length: claimed` (far more than the body), sends the
    /// body, and closes the connection.
    pub fn claimed_length_then_close(mut self, claimed: u64) -> Self {
        self.transfer = Transfer::ContentLength;
        self.close = true;
        self.header("Content-Length", &claimed.to_string())
    }

    /// Adds a header `X-Padding` whose value is `bytes` bytes long, after
    /// the headers set so far.
    pub fn huge_header(self, bytes: usize) -> Self {
        self.add_header("X-Padding", &"p".repeat(bytes))
    }

    /// Closes the connection right after the first `n` body pieces (events)
    /// went out, framing included (`n` = 0: right after the head).
    pub fn cut_after_events(self, n: usize) -> Self {
        let (_, ends) = self.wire_body_and_pieces();
        let at = if n == 0 {
            0
        } else {
            ends.get(n - 1).copied().unwrap_or(usize::MAX)
        };
        self.cut_after(at)
    }

    /// `retry-after-ms: ms` (OpenAI's and Azure's header).
    pub fn retry_after_ms(self, ms: u64) -> Self {
        self.header("retry-after-ms", &ms.to_string())
    }

    /// `Retry-After` as an HTTP-date `after` seconds past the response's
    /// `Date` (both set here; `date` in seconds since 1970).
    pub fn retry_after_date(self, date: u64, after: u64) -> Self {
        self.header("Date", &http_date(date))
            .header("Retry-After", &http_date(date + after))
    }
}

/// `secs` since 1970 as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn http_date(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm), for days >= 0.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        DAYS[(days % 7) as usize],
        day,
        MONTHS[(month - 1) as usize],
        year,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
