//! The Model Context Protocol: the board's C tools served to MCP clients
//! (`server`, `PKG_AGENT_MCP_SERVER`).
//!
//! Layers: [`http`] and [`session`] are pure (no I/O, no FFI); [`rpc`]
//! answers one JSON-RPC message against the tool registry; [`server`] is
//! the thread, the sockets (through the glue) and the lifecycle.

pub mod http;
pub mod rpc;
pub mod server;
pub mod session;
