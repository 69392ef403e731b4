//! The abilities: what the agent can do beyond the C package's loop, each
//! a cargo feature and a folder of its own, each plugged into the loop
//! through its table of hooks ([`crate::runtime::ability::Ability`]). They
//! stand above runtime and use it; runtime names none of them.
//!
//! Adding one: its folder here with its `ABILITY` table, its line in
//! [`ALL`]; nothing in runtime changes.

#![allow(clippy::missing_safety_doc)]

#[cfg(feature = "mcp-client")]
pub mod mcp_client;
#[cfg(feature = "mcp-server")]
pub mod mcp_server;
#[cfg(feature = "memory-summary")]
pub mod memory_summary;
#[cfg(feature = "multimodal")]
pub mod multimodal;
#[cfg(feature = "notes")]
pub mod notes;
#[cfg(feature = "schedule")]
pub mod schedule;
#[cfg(feature = "sub-agents")]
pub mod sub_agents;
#[cfg(feature = "tool-options")]
pub mod tool_options;
#[cfg(feature = "tools-text")]
pub mod tools_text;

use crate::runtime::ability::Ability;

/// Every ability of this build, in the order their hooks run: tools are
/// registered, and threads started and stopped, in this order. Runtime
/// reads it under this link name (`runtime::ability`), since it may not
/// import this layer.
#[export_name = "rtt_agent_abilities"]
pub static ALL: &[&Ability] = LIST;

// Each turn keeps a tag per ability in a fixed array.
const _: () = assert!(LIST.len() <= crate::runtime::ability::MAX);

const LIST: &[&Ability] = &[
    #[cfg(feature = "tool-options")]
    &tool_options::ABILITY,
    #[cfg(feature = "notes")]
    &notes::ABILITY,
    #[cfg(feature = "sub-agents")]
    &sub_agents::ABILITY,
    #[cfg(feature = "mcp-client")]
    &mcp_client::ABILITY,
    #[cfg(feature = "tools-text")]
    &tools_text::ABILITY,
    #[cfg(feature = "multimodal")]
    &multimodal::ABILITY,
    #[cfg(feature = "memory-summary")]
    &memory_summary::ABILITY,
    #[cfg(feature = "schedule")]
    &schedule::ABILITY,
    #[cfg(feature = "mcp-server")]
    &mcp_server::ABILITY,
];
