//! The Control UI: a Leptos single-page app for OpenClaw-compatible gateways.
//!
//! Network code lives in [`gateway_client`]; browser storage in [`browser`] and
//! [`identity`]; the pure rules in the `model` and `protocol` crates.

pub mod app;
pub mod approvals;
pub mod async_questions;
pub mod attachments;
pub mod attention;
pub mod browser;
pub mod chat;
pub mod components;
pub mod coordination;
pub mod crash;
pub mod gateway_client;
pub mod identity;
pub mod json;
pub mod outbox;
pub mod panes;
pub mod questions;
pub mod shell;
pub mod storage;

pub use app::App;
