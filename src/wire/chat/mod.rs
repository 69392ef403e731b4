//! The chat request bodies, written from the caller's cJSON trees in each
//! provider's wire format (the response side is [`crate::wire::stream`]).
//! The transport that sends them is `crate::net::transport`;
//! `docs/requests.md` says what is retried and how the deadline bounds a
//! request.

#[cfg(feature = "provider-anthropic")]
pub mod anthropic;
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
pub(crate) mod common;
pub mod content;
#[cfg(any(feature = "multimodal", feature = "mcp-server", feature = "mcp-client"))]
pub mod inline_file;
#[cfg(feature = "provider-ollama")]
pub mod ollama;
pub mod provider;
pub mod request;
