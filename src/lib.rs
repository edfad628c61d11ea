//! The Control UI: a Leptos single-page app for OpenClaw-compatible gateways.
//!
//! - [`io`]: the only code that touches the network, IndexedDB, the device identity, other
//!   tabs, the address bar and the service worker.
//! - [`state`]: controllers, each named after the `model::` module whose pure rules it drives,
//!   turning those rules' effects into calls on [`io`].
//! - [`components`]: the views, a folder each with its CSS.
//! - [`app`]: the composition root, which makes one of each controller and lays out the page.
//!
//! The rules themselves are in the `model` and `protocol` crates.

pub mod app;
pub mod components;
pub mod io;
pub mod state;

pub use app::{App, run};
