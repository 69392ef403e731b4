//! The streamed chat client behind `chat()`: the request written from the
//! caller's trees, the webclient transport with retries, and the response
//! stream fed to the pure parser in [`crate::stream`].

pub mod request;
pub mod transport;
