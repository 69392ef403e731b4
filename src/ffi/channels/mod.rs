//! Channels: where user messages come from and replies go
//! (`channels/AgentChannel.h`).

#[cfg(feature = "channel-cli")]
pub mod cli;
#[cfg(feature = "channel-debug")]
pub mod debug;
