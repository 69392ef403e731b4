//! Shared helpers for the integration tests (and the host simulator).
#![allow(dead_code)]

pub mod llm_server;
