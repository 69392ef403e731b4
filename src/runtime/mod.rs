//! The runtime layer: the agent's lifecycle, its loop and turn, the tool
//! registry and its lock, the hub, the context, the chat client and the
//! settings. It uses the network, the ABI types and the kernel below it;
//! the channels and the C exports stand above it.

// An `unsafe fn` here takes the contract of the C header it serves
// (pointers NULL or valid, as each doc comment's ownership statement
// says), written once here rather than as a `# Safety` section on each.
#![allow(clippy::missing_safety_doc)]

pub mod ability;
pub mod agent_loop;
pub mod c_objects;
pub mod chat;
#[cfg(feature = "msh-extras")]
pub mod commands;
pub mod config;
pub mod context;
pub mod hub;
pub mod inject;
#[cfg(any(feature = "notes", feature = "schedule", feature = "sub-agents"))]
pub mod kept_file;
pub mod prompt;
#[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
pub mod reply_route;
pub mod settings;
pub mod tool_run;
pub mod tools;
pub mod turn;
pub mod unasked;
pub mod utils;
