//! The C-visible surface, one module per header area of `shared/spec/abi.md`:
//! the `#[no_mangle]` exports, each a thin wrapper over the function of the
//! same name in the layer that does the work (`crate::abi`, `crate::runtime`,
//! `crate::channels`), whose doc comment holds the contract. Nothing in the
//! library imports this module. The callbacks stored in C tables (context
//! methods, hub put/get, channel ops, thread entries) live with the code
//! they call, in the same shape.
//!
//! # One boundary
//!
//! Every function the library hands to C — each `#[no_mangle]` export and
//! each callback stored in a table C calls through (context methods, hub
//! put/get, channel init/reset, the console's `rx_indicate`, thread entries,
//! streaming printers) — is written in one shape:
//!
//! ```ignore
//! /// What it does. Ownership: who owns what goes in and comes out.
//! #[no_mangle]
//! pub unsafe extern "C" fn message_hub_put(hub: MessageHub_t, /* ... */) -> rt_err_t {
//!     ffi_fn!(failure = -rt_error(), nonnull(hub), {
//!         /* body */
//!     })
//! }
//! ```
//!
//! - The signature line is written out (callbacks drop `#[no_mangle] pub`)
//!   so that cbindgen, which reads the source and does not expand macros,
//!   renders the real prototype for the ABI check (`tests/abi.rs`); a macro
//!   that produced the whole item would hide every export from it.
//! - It is `unsafe extern "C"` whenever an argument is a raw pointer (or a
//!   pointer typedef such as `Messages_t`): the caller promises the pointers
//!   are NULL or valid, as the header documents.
//! - [`crate::ffi_fn!`] is the whole body. `failure = v` names the value returned
//!   when the call cannot complete (the compiler checks it has the return
//!   type); `nonnull(a, b)` returns it when any listed pointer is NULL.
//! - `tests/ffi_boundary.rs` fails the build when a `#[no_mangle]` function
//!   or an `extern "C" fn` under `src/ffi/` is not in this shape.
//!
//! # Panic policy
//!
//! No panic path exists in the device build: no index, range or slice
//! operation can fail (`get`s and `crate::base::text`'s slice helpers), and the
//! cross build (`tests/cross/run.sh`) fails when any image links panic code.
//! Should one come back in a changed copy:
//!
//! - **Host** (`std`): the panic hook prints the message to stderr and the
//!   process **aborts** (SIGABRT). Nothing catches it: the library is built
//!   with `panic = "abort"`, and where tests build it with unwinding, the
//!   unwind stops at the `extern "C"` frame, which Rust (>= 1.81; this crate
//!   needs 1.85) turns into an abort. Continuing with a half-updated hub or
//!   context would be worse than stopping. `tests/ffi_boundary.rs` runs a
//!   child process through `rt_host_test_panic_in_boundary` and checks both.
//! - **Device** (`no_std`): the `#[panic_handler]` in `src/rtt/allocator.rs`
//!   logs the message, then calls the board's `rt_assert_handler` through
//!   the glue's `agent_glue_panic` (its assert hook, or RT-Thread's
//!   print-and-spin; nothing on a board built without asserts), and only if
//!   that returns, parks the thread in `rt_thread_mdelay`.
//!
//! Memory handed to C always comes from the RT-Thread heap (`rt_malloc`), so
//! C code may release it with `rt_free` as it did with the C package.

// The exports' safety contract is the C header's (pointers NULL or valid, as
// each doc comment's ownership statement says), written once above rather
// than as a `# Safety` section on every function.
#![allow(clippy::missing_safety_doc)]

pub mod agent_loop;
#[cfg(feature = "channel-cli")]
pub mod channel_cli;
#[cfg(feature = "channel-debug")]
pub mod channel_debug;
#[cfg(feature = "channel-webnet")]
pub mod channel_web;
pub mod chat;
#[cfg(feature = "msh-extras")]
pub mod commands;
pub mod config;
pub mod context;
pub mod hub;
pub mod messages;
#[cfg(feature = "multimodal")]
pub mod multimodal;
pub mod prompt;
pub mod runtime;
#[cfg(feature = "schedule")]
pub mod schedule;
#[cfg(feature = "sub-agents")]
pub mod subagent;
#[cfg(feature = "tls")]
pub mod tls;
pub mod tools;
pub mod utils;

/// Host only, for `tests/ffi_boundary.rs`: panics inside the boundary, to
/// show the panic policy (message on stderr, then abort). Not in any header.
///
/// cbindgen:ignore
#[cfg(feature = "host-port")]
#[doc(hidden)]
#[no_mangle]
pub extern "C" fn rt_host_test_panic_in_boundary() -> core::ffi::c_int {
    crate::ffi_fn!(failure = -1, {
        let reason = core::hint::black_box("rt_host_test_panic_in_boundary: deliberate panic");
        panic!("{reason}")
    })
}
