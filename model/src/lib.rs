//! The UI's pure state machines. Nothing here touches a browser, so every rule has a
//! native test: connection status and failures, and (in later modules) the question dock,
//! the outbox and async answers.

pub mod async_q;
pub mod attachment;
pub mod attention;
pub mod away;
pub mod command;
pub mod commands;
pub mod connection;
pub mod consent;
pub mod credential;
pub mod dock;
pub mod draft;
pub mod export;
pub mod markdown;
pub mod message_actions;
pub mod offline;
pub mod order;
pub mod outbox;
pub mod panes;
pub mod parts;
pub mod push;
pub mod reveal;
pub mod run_settings;
pub mod sessions;
pub mod tasks;
pub mod transcript;
pub mod url;

/// The first `max` characters of `s` on one line, for naming a message in a sentence.
pub fn preview(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    protocol::frame::truncate(line, max)
}

pub use protocol::chat::message_text;
