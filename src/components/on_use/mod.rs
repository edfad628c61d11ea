//! Views whose code the page fetches the first time they are shown.
//!
//! A view that a first visit does not show (the command palette, a message's actions, the
//! approval card, a secrets request, a run's tool cards, the sub-agents panel, the notification
//! setting, the "while you were away" card, the gateway switch) is made by an `async fn` marked
//! `#[cfg_attr(feature = "split", leptos::lazy)]`. In the release build (feature `split`) its
//! code, and everything only it reaches, goes into a module of its own that the first call
//! fetches (`window.ocuiFetchWasm`, its gzip'd copy) and links into the running app; every later
//! call is answered at once. Without the feature (the wasm tests) it is a plain `async fn`.
//!
//! `on_use` shows such a view where it is called: nothing until its code has arrived, the view
//! after. The module's fetch failing (the gateway gone between the page's load and the first use,
//! or a newer build there) stops the app with the reload banner: the page that reloads is the
//! gateway's current build, whose modules match it.

use leptos::prelude::*;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The view `load` makes, shown once its code has arrived.
pub fn on_use(load: impl Future<Output = AnyView> + 'static) -> AnyView {
    Suspend::new(send_wrapper::SendWrapper::new(Untracked(Box::pin(load)))).into_any()
}

/// Makes the view without tracking what it reads: a `Suspend` would otherwise subscribe the
/// view around it to every signal read while the view is made, and make it again (a new card,
/// its focus and its consent gate reset) whenever one of them changes. A component drawn in place
/// is made untracked too.
struct Untracked<F>(Pin<Box<F>>);

impl<F: Future> Future for Untracked<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let inner = self.0.as_mut();
        untrack(move || inner.poll(cx))
    }
}
