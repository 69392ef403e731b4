//! The streamed chat client behind `chat()`: the request written from the
//! caller's trees, the webclient transport with its deadline and retries,
//! and the response stream fed to the pure parser in [`crate::wire::stream`].
//! `docs/requests.md` says what is retried and how the deadline bounds a
//! request.

#[cfg(feature = "provider-anthropic")]
pub mod anthropic;
#[cfg(feature = "multimodal")]
pub mod inline_file;
#[cfg(feature = "provider-ollama")]
pub mod ollama;
pub mod provider;
pub mod request;
pub mod tls_watch;
pub mod transport;
