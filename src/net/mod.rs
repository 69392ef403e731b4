//! The network layer: the I/O under the agent. It uses [`crate::wire`] for
//! every protocol rule, [`crate::cjson`] and [`crate::rtt`] for the board.

pub mod cancel;
pub mod error;
#[cfg(feature = "multimodal")]
pub mod file_base64;
pub mod tls_watch;
#[cfg(any(feature = "mcp-server", feature = "channel-webnet"))]
pub mod token_limit;
pub mod transport;
