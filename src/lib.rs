//! rtt-agent: the RT-Thread "Agent" package's C API, implemented in Rust.
//!
//! Layout:
//! - [`ffi`]: every C-visible function and type, one module per header area.
//! - [`stream`]: pure, `no_std`, FFI-free logic (SSE framing, tool-call
//!   reassembly).
//! - [`rtt`]: the few RT-Thread kernel bindings the library needs, the global
//!   allocator over `rt_malloc`, and logging through the C glue.
//! - [`fallible`]: `Vec`/`String` growth that returns out of memory instead
//!   of aborting.
//! - [`cjson_sys`]: our own declarations of the board's cJSON 1.7.x, plus a
//!   thin helper layer ([`json`]).
//! - `host` (feature `host`): the host port that serves the RT-Thread APIs on
//!   Linux so tests and the simulator run the device's code paths.
#![cfg_attr(not(feature = "std"), no_std)]
#![allow(non_camel_case_types)]
// Every unsafe operation gets its own `unsafe {}` block and SAFETY comment, even inside `unsafe fn`s.
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;

// The layers, from the bottom up; each uses only those listed before it
// (`tests/layers.rs` checks it; `docs/architecture.md` draws it).
pub mod abi;
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
