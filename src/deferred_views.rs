//! The views other than the dock (transcript, composer, session picker, unsent-messages tray
//! and the connection form), loaded as a separate wasm chunk.
//!
//! The first thing a person can do on arrival is answer a question in the dock, and `/ask/<id>`
//! needs nothing else. So the release build splits these views off (`wasm-split-cli`, see
//! `scripts/build-ui.sh`): the main module paints the shell and the dock, and the chunk is
//! fetched at once, in parallel with the WebCrypto identity and the socket handshake, which the
//! transcript has to wait for anyway. The controllers (chat, outbox, async questions) stay in the
//! main module, so nothing is sent, queued or saved later because of the split; only the views
//! appear a moment later. A failed fetch leaves the dock working and offers a retry.
//!
//! Builds without the `ocui_split` cfg (native checks and the wasm-bindgen tests) call the same
//! builder directly.

use leptos::prelude::*;

use crate::components::composer::Composer;
use crate::components::connect_form::ConnectForm;
use crate::components::outbox_tray::OutboxTray;
use crate::components::session_picker::SessionPicker;
use crate::components::transcript::Transcript;

/// Builders for the deferred views. Function pointers, so the code behind them can live
/// in the chunk while the shell that places them lives in the main module.
#[derive(Clone, Copy)]
pub struct DeferredViews {
    /// The conversation select above the transcript.
    pub session_picker: fn() -> AnyView,
    /// Every unsent message, with Retry and Discard.
    pub outbox_tray: fn() -> AnyView,
    /// Saved messages, receipts, live streams and unsent echoes.
    pub transcript: fn() -> AnyView,
    /// The message composer under the dock.
    pub composer: fn() -> AnyView,
    /// The token and gateway form; the callback runs when it is submitted or dismissed.
    pub connect_form: fn(Callback<()>) -> AnyView,
}

fn builders() -> DeferredViews {
    DeferredViews {
        session_picker: || view! { <SessionPicker/> }.into_any(),
        outbox_tray: || view! { <OutboxTray/> }.into_any(),
        transcript: || view! { <Transcript/> }.into_any(),
        composer: || view! { <Composer/> }.into_any(),
        connect_form: |on_done| view! { <ConnectForm on_done=on_done/> }.into_any(),
    }
}

/// Why the chunk did not load (the browser console has the network detail).
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkError;

#[cfg(ocui_split)]
impl From<leptos::wasm_split::SplitLoaderError> for ChunkError {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        ChunkError
    }
}

// The split point: everything reachable only from here moves into the chunk `deferred`.
#[cfg(ocui_split)]
#[leptos::wasm_split::wasm_split(deferred, wasm_split_path = ::leptos::wasm_split, fallible)]
fn split_builders() -> Result<DeferredViews, ChunkError> {
    Ok(builders())
}

/// Loads the chunk (once; a failure is not remembered, so calling again retries) and returns
/// the view builders.
pub async fn load() -> Result<DeferredViews, ChunkError> {
    #[cfg(ocui_split)]
    {
        split_builders().await
    }
    #[cfg(not(ocui_split))]
    {
        Ok(builders())
    }
}
