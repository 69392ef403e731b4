//! The Model Context Protocol (issue 14): the board as a client of remote
//! MCP servers (`client`, feature `mcp-client`).

#[cfg(feature = "mcp-client")]
pub mod client;
