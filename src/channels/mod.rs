//! Channels: where user messages come from and replies go
//! (`channels/AgentChannel.h`).

// An `unsafe fn` here takes the contract of the C header it serves
// (pointers NULL or valid, as each doc comment's ownership statement
// says), written once here rather than as a `# Safety` section on each.
#![allow(clippy::missing_safety_doc)]

#[cfg(feature = "channel-cli")]
pub mod cli;
#[cfg(feature = "channel-debug")]
pub mod debug;
#[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
pub(crate) mod exchange;
#[cfg(feature = "channel-webnet")]
pub mod web;
