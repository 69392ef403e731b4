//! RT-Thread bindings: the kernel calls the library makes, grouped by
//! subsystem; kernel objects as owned values (`ipc`, `thread`) and the gate
//! in front of state another thread frees (`gate`); the board's
//! configuration as compiled by the C glue; the global allocator over
//! `rt_malloc`; logging handed to C as whole strings.
//!
//! On the device these symbols come from the board's kernel; on the host they
//! come from [`crate::host`]. The library's code is the same in both builds.

pub mod allocator;
pub mod atomic;
pub mod board;
#[cfg(feature = "multimodal")]
pub mod file;
pub mod gate;
pub mod glue;
pub mod ipc;
pub mod kernel;
pub mod log;
pub mod name;
pub mod sleep_cell;
pub mod sleep_lock;
pub mod strdup;
pub mod thread;
pub mod webclient;

pub use board::{board, cap, rt_efull, rt_einval, rt_enomem, rt_eok, rt_error, rt_etimeout};
pub use kernel::*;
