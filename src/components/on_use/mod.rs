//! Views whose code the page fetches the first time they are shown.
//!
//! A view that a first visit does not show (the approval card, a secrets request, a run's tool
//! cards and results, receipts, a message's actions, the command palette, the sub-agents panel,
//! the notification setting, the "while you were away" card) is made by a function declared with
//! [`split!`], which names the module its code goes into. In the release build (feature `split`)
//! that code, and everything only it reaches, is cut out of the app's wasm into that module
//! (scripts/post-build.mjs), which the first call fetches (`window.ocuiFetchPart`, its gzip'd
//! copy) and links into the running app; every later call of any function of the module is
//! answered at once. Without the feature (the wasm tests) the function is a plain `async fn`.
//! Views that tend to be needed together share a module: one fetch, one loader stanza in the
//! page, and no small modules of code shared between them.
//!
//! `on_use` shows such a view where it is called: nothing until its code has arrived, the view
//! after. If the module cannot be fetched (the gateway gone between the page's load and the first
//! use, or a newer build there), the place says so with a *Reload page* button, and the next time
//! the view is drawn the fetch is tried again: the app goes on, and nothing is decided without
//! the view.

use leptos::prelude::*;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A split module that could not be fetched (the browser's console has why).
pub struct NotLoaded;

impl From<leptos::wasm_split::SplitLoaderError> for NotLoaded {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        NotLoaded
    }
}

/// The view `load` makes, shown once its code has arrived; if it cannot arrive, a note that says
/// so.
pub fn on_use(load: impl Future<Output = Result<AnyView, NotLoaded>> + 'static) -> AnyView {
    shown(Box::pin(load))
}

/// `on_use`'s work, made once rather than for each split view's future.
fn shown(load: Pin<Box<dyn Future<Output = Result<AnyView, NotLoaded>>>>) -> AnyView {
    let shown: Pin<Box<dyn Future<Output = AnyView>>> = Box::pin(async move { load.await.unwrap_or_else(|NotLoaded| not_loaded()) });
    Suspend::new(send_wrapper::SendWrapper::new(Untracked(shown))).into_any()
}

fn not_loaded() -> AnyView {
    view! {
        <p class="banner banner--error" role="alert" data-testid="not-loaded">
            "This part of the page could not be loaded from the gateway. "
            <button type="button" on:click=|_| {
                if let Some(l) = crate::io::browser::location() {
                    let _ = l.reload();
                }
            }>"Reload page"</button>
        </p>
    }
    .into_any()
}

/// Makes the view without tracking what it reads: a `Suspend` would otherwise subscribe the
/// view around it to every signal read while the view is made, and make it again (a new card,
/// its focus and its consent gate reset) whenever one of them changes. A component drawn in place
/// is made untracked too.
struct Untracked(Pin<Box<dyn Future<Output = AnyView>>>);

impl Future for Untracked {
    type Output = AnyView;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<AnyView> {
        let inner = self.0.as_mut();
        untrack(move || inner.poll(cx))
    }
}

/// Declares `fn name(args) -> T { … }` as an `async fn` returning `Result<T, NotLoaded>` (a
/// view for [`on_use`], or the markdown module's work) whose code goes into the split module
/// named first (`transcript_parts`, `conversation_tools`, `requests`, `reach`, `markdown`):
/// Leptos' `wasm_split` in the release build, a plain `async fn` otherwise.
macro_rules! split {
    ($module:ident, $(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        #[cfg(feature = "split")]
        #[::leptos::wasm_split::wasm_split($module, wasm_split_path = ::leptos::wasm_split, fallible)]
        $(#[$attr])*
        $vis fn $name($($arg: $ty),*) -> Result<$ret, $crate::components::on_use::NotLoaded> {
            Ok($body)
        }

        #[cfg(not(feature = "split"))]
        $(#[$attr])*
        $vis async fn $name($($arg: $ty),*) -> Result<$ret, $crate::components::on_use::NotLoaded> {
            Ok($body)
        }
    };
}
pub(crate) use split;
