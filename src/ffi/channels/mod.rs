//! Channels: where user messages come from and replies go
//! (`channels/AgentChannel.h`).

pub mod cli;
pub mod debug;
