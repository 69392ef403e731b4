//! Shared helpers for the integration tests (and the host simulator).
#![allow(dead_code)]

pub mod agent;
pub mod arith_model;
pub mod chat_call;
pub mod llm_server;
pub mod webclient_client;
