//! The composer area. While a blocking question is open, the dock takes its place and says
//! it is waiting for the person's answer; collapsing the dock brings the composer back.

use leptos::prelude::*;

use crate::questions::DockController;

/// The composer, or the note that a question needs an answer first.
#[component]
pub fn Composer() -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let blocked = Memo::new(move |_| ctl.dock.with(|d| d.expanded && !d.is_empty()));
    view! {
        <Show when=move || !blocked.get()>
            <form class="composer" on:submit=|ev| ev.prevent_default()>
                <label class="composer__label">
                    <span class="sr-only">"Message"</span>
                    <textarea rows="2" placeholder="Chat arrives with the next release; answer questions in the dock above." disabled></textarea>
                </label>
            </form>
        </Show>
    }
}
