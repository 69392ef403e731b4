//! rtt-agent: the RT-Thread "Agent" package's C API, implemented in Rust.
//!
//! Layers, from the bottom up; each uses only the layers below it, and
//! nothing imports [`ffi`] (`tests/layers.rs` checks both, and that the
//! modules inside a layer import each other in no circle;
//! `docs/architecture.md` draws them):
//! - [`base`]: text helpers, fallible growth, the text buffer and the JSON
//!   writer (only `core` and `alloc`);
//! - [`cjson`]: our declarations of the board's cJSON 1.7.x and helpers;
//! - [`wire`]: protocol code without I/O: the request writers, the stream
//!   parsers, retry and deadline rules, MCP framing, tools as text;
//! - [`rtt`]: the kernel bindings, the allocator over `rt_malloc`, logging;
//!   `host` (feature `host-port`) serves the same C API on Linux beside it;
//! - [`abi`]: the C package's types with the code that works on them;
//! - [`net`]: the HTTP transport over webclient, the TLS watch, cancel;
//! - [`agent`]: the turn against traits (`Chat`, `Conversation`, `Tools`,
//!   `TurnEvents`), its errors as values; no kernel, no network;
//! - [`runtime`]: the agent over the board's objects: its loop, the turn's
//!   traits over the context, `chat()` and the registry, the one tool dispatch and
//!   the registry with its lock, the hub, the context, the chat client,
//!   memory, tools as text, multimodal content, the MCP server and client,
//!   and the settings;
//! - [`channels`]: CLI, Debug and WebNet;
//! - [`ffi`]: the `#[no_mangle]` exports, thin over the layers below.
#![cfg_attr(not(feature = "std"), no_std)]
#![allow(non_camel_case_types)]
// Every unsafe operation gets its own `unsafe {}` block and SAFETY comment, even inside `unsafe fn`s.
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;

pub mod abi;
pub mod abilities;
pub mod agent;
pub mod base;
pub mod channels;
pub mod cjson;
pub mod ffi;
#[cfg(feature = "host-port")]
pub mod host;
pub mod net;
pub mod rtt;
pub mod runtime;
pub mod wire;
