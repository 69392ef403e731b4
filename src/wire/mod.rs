//! The wire layer: protocol code without I/O ("sans-IO"). Bytes in, events
//! or bytes out; time, where a rule needs it, is passed in. Nothing here
//! calls the kernel: it uses only [`crate::base`] and [`crate::cjson`].
//!
//! - [`chat`]: the chat request bodies, one writer per provider;
//! - [`stream`]: the streamed chat response (SSE, NDJSON, the incremental
//!   JSON tokenizer, tool-call reassembly);
//! - [`retry`], [`deadline`]: which request failures are retried, and the
//!   arithmetic of a request's budget;
//! - `mcp_http`, `mcp_session`: the MCP server's HTTP framing and sessions;
//!   `http_drain`: how the MCP server and the WebNet channel close after a
//!   refusal without losing it to a reset;
//! - `text_calls`: tool calls written as text by models without function
//!   calling; `tool_args`: a call's arguments against the tool's schema;
//! - [`line_editor`]: the CLI channel's line editing;
//! - `notes`: the notes file the agent keeps across reboots (and the
//!   schedule file's form); `schedule`: when a scheduled prompt is due;
//!   `profiles`: the sub-agent profiles file.

pub mod chat;
pub mod deadline;
#[cfg(any(feature = "mcp-server", feature = "channel-webnet"))]
pub mod http_drain;
pub mod line_editor;
#[cfg(feature = "mcp-server")]
pub mod mcp_http;
#[cfg(feature = "mcp-server")]
pub mod mcp_session;
#[cfg(any(feature = "notes", feature = "schedule", feature = "sub-agents"))]
pub mod notes;
#[cfg(feature = "sub-agents")]
pub mod profiles;
pub mod retry;
#[cfg(feature = "schedule")]
pub mod schedule;
pub mod stream;
#[cfg(feature = "tools-text")]
pub mod text_calls;
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
pub mod tool_args;
