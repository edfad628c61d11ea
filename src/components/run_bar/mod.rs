//! The run bar: while the agent works in this pane's conversation (its run, or sub-agents it
//! started), a Stop that is always within reach (above the dock, so an open question or approval
//! never hides it), and afterwards what that Stop did, in words.

use leptos::prelude::*;

use crate::state::chat::ChatController;
use crate::state::composer::ComposerController;

/// Stop for this pane's conversation, and the outcome of the last Stop.
#[component]
pub fn RunBar() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let composer = expect_context::<ComposerController>();
    // Its run, or sub-agents it started: a Stop here stops them all.
    let running = move || composer.working();
    let stop = move |_| composer.stop();
    view! {
        <Show when=move || running() || chat.stop_outcome.with(Option::is_some)>
            <div class="run-bar" role="group" aria-label="Agent run" data-testid="run-bar">
                <Show when=running>
                    <span class="run-bar__state">"The agent is working."</span>
                    <Show when=move || composer.can_stop()>
                        <button type="button" class="run-bar__stop" on:click=stop>"Stop"</button>
                    </Show>
                </Show>
                {move || chat.stop_outcome.get().map(|o| view! {
                    <p class="run-bar__outcome" role="status" data-testid="stop-outcome">{o.message()}</p>
                })}
            </div>
        </Show>
    }
}
