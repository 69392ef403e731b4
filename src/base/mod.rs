//! The base layer: what every other layer may use and that uses nothing of
//! the crate (only `core` and `alloc`): text helpers that cannot panic,
//! growth that reports out of memory, and the shape of every function
//! handed to C ([`crate::ffi_fn!`]).

pub mod boundary;
pub mod fallible;
pub mod json_writer;
pub mod text;
pub mod text_buf;
