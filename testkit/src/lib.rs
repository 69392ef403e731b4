//! The test kit of rtt-agent: a scripted OpenAI-compatible server, an
//! arithmetic "model" for it, and the helpers the integration tests, the
//! benches and the host simulator share. Host only (it links the host port).
//!
//! - [`llm_server`]: the scripted chat-completions server (HTTP/1.1 and SSE
//!   over loopback TCP) with its response and SSE builders;
//! - [`arith_model`]: a model closure for it that does arithmetic with the
//!   agent's built-in tools (the simulator's default endpoint);
//! - [`agent`]: running the agent on the debug channel in a test, the
//!   one-agent-per-process lock, reading back recorded requests;
//! - [`chat_call`]: calling `chat()` with JSON text;
//! - [`file_server`]: the C package's file server protocol, scripted
//!   (multimodal uploads);
//! - [`webclient_client`]: thin wrappers over the host webclient's C API;
//! - [`mcp_server`]: the scripted remote MCP server (Python SDK) and a
//!   model calling its tools;
//! - [`shell`]: MSH commands run as typed, their output captured;
//! - [`alloc_walk`]: running a scenario with the k-th allocation of the
//!   process failing, for every k, in a child process.
//!
//! In a test of the root crate (a dev-dependency there):
//!
//! ```text
//! use rtt_agent_testkit::agent::*;
//! use rtt_agent_testkit::llm_server::*;
//! ```

/// The optional parts of the library the kit is linked with, as its build
/// script told them (comma-separated, in Cargo.toml's order): the kit's
/// helpers for a part exist only with it (`cfg(agent_part = "...")`).
pub const LIBRARY_PARTS: &str = env!("RTT_AGENT_PARTS");

pub mod agent;
pub mod alloc_walk;
pub mod arith_model;
pub mod chat_call;
pub mod deadline_run;
pub mod file_server;
pub mod llm_server;
pub mod mcp_server;
pub mod shell;
// The WebNet channel's helpers: only with the channel.
#[cfg(agent_part = "channel-webnet")]
pub mod web;
pub mod webclient_client;
