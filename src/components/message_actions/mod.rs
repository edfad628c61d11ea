//! The actions under a message: Copy as Markdown, Rewind to here and Fork from here
//! (`state::message_actions`); the question a rewind or fork asks first, in place, and what
//! became of it.
//!
//! One closure draws the whole block again when anything in it changes (the state, what the
//! row offers, a copy's outcome): a few buttons, and one view type instead of many.

use leptos::prelude::*;
use model::message_actions::{ActionState, Cut, entry_id};
use model::transcript::TranscriptRow;

use crate::state::chat::ChatController;
use crate::state::message_actions::MessageActionsController;

crate::components::on_use::split! { conversation_tools,
    /// A message's actions, their code fetched with the first message that offers them
    /// (`components::on_use`).
    pub fn actions(row: TranscriptRow) -> AnyView {
        view! { <MessageActions row=row/> }.into_any()
    }
}

#[component]
pub fn MessageActions(row: TranscriptRow) -> impl IntoView {
    let ctl = expect_context::<MessageActionsController>();
    let chat = expect_context::<ChatController>();
    let entry = StoredValue::new(entry_id(&row).map(str::to_string).unwrap_or_default());
    let row = StoredValue::new(row);
    move || {
        let (key, offer) = row.with_value(|r| (r.key.clone(), ctl.offer(r)));
        if !offer.copy && offer.cuts.is_empty() {
            return None;
        }
        let copied = ctl.copied.with(|c| c.as_ref().filter(|c| c.key == key).map(|c| c.failed.clone().unwrap_or_else(|| "Copied.".into())));
        let cut_button = |cut: Cut| {
            let key = key.clone();
            view! {
                <button type="button" disabled=offer.blocked.is_some() title=offer.blocked.unwrap_or("") on:click=move |_| ctl.ask(&key, cut)>
                    {cut.offer_label()}
                </button>
            }
        };
        let below = match ctl.state.get() {
            ActionState::Asking { key: k, cut } if k == key => {
                let (later, before) = chat.messages.with(|rows| model::message_actions::around(&model::transcript::shown_rows(rows), &key));
                let k = key.clone();
                Some(
                    view! {
                        <div class="msg-actions__ask" role="group" aria-label=cut.offer_label() data-testid="message-action-question">
                            <p>{cut.question(later, before)}</p>
                            <p class="msg-actions__blocked">{offer.blocked}</p>
                            <button type="button" disabled=offer.blocked.is_some() on:click=move |_| ctl.confirm(&k, &entry.get_value())>
                                {cut.confirm_label()}
                            </button>
                            <button type="button" on:click=move |_| ctl.cancel()>"Cancel"</button>
                        </div>
                    }
                    .into_any(),
                )
            }
            ActionState::Sending { key: k, .. } if k == key => {
                Some(view! { <p class="msg-actions__said" role="status">"Asking the gateway…"</p> }.into_any())
            }
            ActionState::Failed { key: k, said } if k == key => Some(
                view! {
                    <p class="msg-actions__said msg-actions__said--failed" role="alert" data-testid="message-action-failed">
                        {said}" "<button type="button" on:click=move |_| ctl.cancel()>"Dismiss"</button>
                    </p>
                }
                .into_any(),
            ),
            _ => None,
        };
        let copy = offer
            .copy
            .then(|| view! { <button type="button" on:click=move |_| row.with_value(|r| ctl.copy(r))>"Copy as Markdown"</button> });
        Some(view! {
            <div class="msg-actions" role="group" aria-label="Message actions" data-testid="message-actions">
                {copy}
                {offer.cuts.iter().map(|c| cut_button(*c)).collect_view()}
                <span class="msg-actions__said" role="status">{copied}</span>
            </div>
            {below}
        })
    }
}

/// What the last rewind or fork did, in the conversation it left on screen.
#[component]
pub fn CutNotice() -> impl IntoView {
    let ctl = expect_context::<MessageActionsController>();
    let chat = expect_context::<ChatController>();
    move || {
        ctl.done.with(|d| d.as_ref().filter(|(s, _)| *s == chat.session.get()).map(|(_, w)| w.clone())).map(|w| {
            view! {
                <p class="banner banner--info" role="status" data-testid="cut-notice">
                    {w}" "<button type="button" on:click=move |_| ctl.done.set(None)>"Dismiss"</button>
                </p>
            }
        })
    }
}
