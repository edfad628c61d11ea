//! `When`: Leptos' `Show` with the condition and the children type-erased.
//!
//! `Show` is generic over its condition and its children, so each of the UI's two dozen uses
//! compiled its own copy (about 4 KB gzip in all). Here the condition is a `Signal<bool>` and
//! the children and fallback are boxed views: every use shares one instantiation. As with
//! `Show`, the condition is memoised, so the children are rebuilt only when it flips.

use leptos::prelude::*;

/// Shows `children` while `when` is true, otherwise `fallback` (nothing by default).
#[component]
pub fn When(
    /// The condition; any closure returning `bool` converts.
    #[prop(into)]
    when: Signal<bool>,
    /// What to show while the condition holds.
    children: ChildrenFn,
    /// What to show otherwise.
    #[prop(optional, into)]
    fallback: ViewFn,
) -> impl IntoView {
    let shown = Memo::new(move |_| when.get());
    move || if shown.get() { children() } else { fallback.run() }
}
