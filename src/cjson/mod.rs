//! The board's cJSON: our own declarations of its 1.7.x API ([`sys`]) and
//! small helpers over them ([`json`]) that keep cJSON's ownership rules in
//! one place. Uses only [`crate::base`].

pub mod json;
pub mod sys;
