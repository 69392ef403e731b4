//! The C package's types (`#[repr(C)]`, the layouts of its headers) and
//! the code that works on them, callable from Rust. The `#[no_mangle]`
//! exports in [`crate::ffi`] are thin wrappers over these functions.

// An `unsafe fn` here takes the C header's contract (pointers NULL or
// valid, as each doc comment's ownership statement says), written once
// here rather than as a `# Safety` section on every function.
#![allow(clippy::missing_safety_doc)]

pub mod hooks;
pub mod messages;
