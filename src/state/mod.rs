//! Controllers: reactive state for the views, each wrapping the `model::` module of the same
//! name (`chat` wraps the protocol's transcript rules and `model::offline`). They hold signals,
//! call the pure rules, and carry out the effects those return through `crate::io`.

pub mod async_q;
pub mod attachment;
pub mod attention;
pub mod chat;
pub mod composer;
pub mod dock;
pub mod outbox;
pub mod panes;
pub mod sessions;
