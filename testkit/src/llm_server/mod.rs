//! A scripted OpenAI-compatible chat-completions server speaking HTTP/1.1 and
//! SSE over loopback TCP, std only.
//!
//! Its job is to reproduce, byte for byte and write by write, what real
//! providers do to a streaming client: bodies framed by `Content-Length`, by
//! chunked encoding or by closing the connection; network reads that end
//! anywhere (1-byte writes, random split points, splits inside chunk framing);
//! streams that stall or are cut off mid-body; error statuses with JSON bodies.
//!
//! Two ways to decide the answers:
//! - a queue of [`ScriptedResponse`]s, one per request, in arrival order
//!   ([`LlmServer::start`]);
//! - a "model" closure that sees each [`RecordedRequest`] and returns the
//!   answer ([`LlmServer::with_model`]); queued responses still go first.
//!
//! Nothing here panics on what a client sends: malformed requests get a 400
//! and a line in [`LlmServer::errors`]; network failures end that connection
//! and are noted the same way. The server is usable outside the test harness
//! (the host simulator reuses it).
//!
//! Split by concern: [`response`] (what to answer: [`ScriptedResponse`] and
//! its framing, splitting, stalls and cuts), [`hostile`] (servers that drip,
//! stall, never end, or send far too much: the deadline's and the retries'
//! adversaries), [`sse`] (building
//! OpenAI-shaped SSE bodies), `server` (the listener, the connections, the
//! records of what was received and sent) and `request` (parsing what the
//! client sends). Everything public is re-exported here, so
//! `use rtt_agent_testkit::llm_server::*;` brings all of it.

pub mod faults;
pub mod hostile;
pub mod response;
pub mod sse;
pub mod wire;

mod request;
mod server;

pub use hostile::*;
pub use response::*;
pub use server::*;
pub use sse::*;
pub use wire::*;
