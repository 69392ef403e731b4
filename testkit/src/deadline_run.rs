//! One `chat()` against a misbehaving server under a short request deadline
//! (`PKG_AGENT_REQUEST_TIMEOUT_MS`), with its time and heap measured: the
//! harness of `tests/chat_hostile.rs`, `tests/chat_endless.rs` and
//! `tests/chat_deadline.rs`.

use crate::chat_call::{chat_json, Answer};
use crate::llm_server::*;
use rtt_agent::host::heap;
use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent::runtime::config::agent_config_set;
use std::ffi::CString;
use std::io::Write;
use std::time::{Duration, Instant};

/// The user's one message of every request here.
pub const HI: &str = r#"[{"role":"user","content":"hi"}]"#;
/// How late after the deadline a request may end: webclient's socket
/// timeouts have whole seconds, and one read may be under way.
pub const GRACE: Duration = Duration::from_millis(1200);
/// Heap a request may take above its baseline: the session and its 1 KB
/// header buffer, the 4 KB read buffer (or the 2 KB error body), the
/// stream's state, the answer and one tool call's arguments up to their
/// caps (4 KB each, see [`DeadlineRun::overrides`]), with room to spare
/// (measured: 1.6 to 11.7 KB). Nothing grows with how long or how much a
/// server sends.
pub const HEAP_BOUND: usize = 24 * 1024;

/// Requests with `deadline`, the API key `key` (each test file its own).
pub struct DeadlineRun {
    pub deadline: Duration,
    pub key: &'static std::ffi::CStr,
}

impl DeadlineRun {
    pub fn overrides(&self, retries: usize) -> Overrides {
        Overrides {
            // Longer than the deadline: only the deadline can end these.
            timeout_ms: Some(10_000),
            retries: Some(retries),
            retry_base_ms: Some(10),
            request_timeout_ms: Some(self.deadline.as_millis() as usize),
            max_content: Some(4096),
            max_reasoning: Some(4096),
            max_tool_args: Some(4096),
            max_token: Some(1024),
        }
    }

    pub fn point_at(&self, server: &LlmServer) {
        let url = CString::new(server.url()).unwrap();
        // SAFETY: NUL-terminated strings that outlive the call, which copies them.
        unsafe { agent_config_set(self.key.as_ptr(), c"m".as_ptr(), url.as_ptr()) };
    }

    /// One request to a well-behaved server first: anything allocated once
    /// per process is allocated before the figures.
    pub fn warm_up(&self) {
        let warm = LlmServer::start(vec![ScriptedResponse::text(&["warm"])]).unwrap();
        self.point_at(&warm);
        set_overrides(self.overrides(0));
        assert_eq!(
            chat_json(HI, None).map(|a| a.content).as_deref(),
            Ok("warm")
        );
    }

    /// One `chat()` against `server`, its outcome and duration handed to
    /// `check`; fails if the heap went more than [`HEAP_BOUND`] above its
    /// baseline meanwhile, or is not back at it once `check` is done.
    pub fn run(
        &self,
        what: &str,
        server: &LlmServer,
        retries: usize,
        check: impl FnOnce(Result<Answer, String>, Duration),
    ) {
        self.point_at(server);
        set_overrides(self.overrides(retries));
        let baseline = heap::used();
        heap::rt_host_heap_reset_max_used();
        let t0 = Instant::now();
        let outcome = chat_json(HI, None);
        let took = t0.elapsed();
        let peak = heap::max_used() - baseline;
        // Straight to stderr: the harness's capture of `eprintln!` grows a
        // buffer on this thread's heap, inside the figures.
        let mut err = std::io::stderr();
        let _ = match &outcome {
            Ok(a) => writeln!(
                err,
                "{what}: {took:?}, heap peak +{peak} B, answered ({} bytes)",
                a.content.len()
            ),
            Err(e) => writeln!(err, "{what}: {took:?}, heap peak +{peak} B, error: {e}"),
        };
        assert!(peak < HEAP_BOUND, "{what}: heap peak +{peak} B");
        check(outcome, took);
        assert_eq!(heap::used(), baseline, "{what}: heap back at its baseline");
    }

    /// A request that had to end by the deadline, saying so.
    pub fn timed_out(&self, what: &str, outcome: Result<Answer, String>, took: Duration) {
        let err = match outcome {
            Ok(a) => panic!("{what}: answered {:?}", a.content),
            Err(e) => e,
        };
        let ms = format!("{} ms", self.deadline.as_millis());
        assert!(
            err.contains("the request timed out") && err.contains(&ms),
            "{what}: {err}"
        );
        assert!(
            took >= self.deadline - Duration::from_millis(100),
            "{what}: {took:?}"
        );
        assert!(took < self.deadline + GRACE, "{what}: took {took:?}");
    }
}
