//! The Model Context Protocol server: the board's C tools served to MCP
//! clients (`PKG_AGENT_MCP_SERVER`). The board as a client of remote MCP
//! servers is `crate::abilities::mcp_client` (`PKG_AGENT_MCP_CLIENT`).
//!
//! Server layers: `crate::wire::mcp_http` and `crate::wire::mcp_session`
//! are pure (no I/O, no FFI); [`rpc`] answers one JSON-RPC message against the tool registry;
//! [`server`] is the thread, the sockets (through the glue) and the
//! lifecycle.

#[cfg(feature = "mcp-server")]
pub mod rpc;
#[cfg(feature = "mcp-server")]
pub mod server;

/// The server's hooks: it runs while the agent does, and stops before the
/// channels (its tool calls go through the loop's gate and registry).
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    start: Some(|_| server::start()),
    stop: Some(server::stop),
    ..crate::runtime::ability::Ability::NONE
};
