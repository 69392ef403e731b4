//! The agent layer: what a turn of the agent is, written against traits
//! rather than the kernel, the network or the C structs. It may use
//! `base`, `cjson`, `wire` and `abi` only (`tests/layers.rs`); the runtime
//! implements its traits over the board's objects (the loop's context, the
//! chat client, the tool registry under its lock) and turns its error
//! values into text where a reply is written.

pub mod turn;
