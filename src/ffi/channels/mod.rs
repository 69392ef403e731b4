//! Channels: where user messages come from and replies go
//! (`channels/AgentChannel.h`).

#[cfg(feature = "channel-cli")]
pub mod cli;
#[cfg(feature = "channel-debug")]
pub mod debug;
#[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
mod exchange;
#[cfg(feature = "channel-webnet")]
pub mod web;
