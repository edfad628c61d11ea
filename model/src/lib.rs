//! The UI's pure state machines. Nothing here touches a browser, so every rule has a
//! native test: connection status and failures, and (in later modules) the question dock,
//! the outbox and async answers.

pub mod connection;
pub mod dock;
pub mod draft;
pub mod fragment;
