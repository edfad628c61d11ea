//! Every unsent message, by name, across conversations, with Retry and Discard for each
//! and for all. Shown only while something is unsent.

use leptos::prelude::*;
use model::outbox::{SendState, describe};

use crate::components::on_use::on_use;
use crate::state::outbox::{OutboxController, stale_ms};

/// The unsent-messages tray.
#[component]
pub fn OutboxTray() -> impl IntoView {
    let outbox = expect_context::<OutboxController>();
    let elsewhere = expect_context::<crate::state::outbox::elsewhere::ElsewhereController>();
    let client = expect_context::<crate::io::gateway_client::GatewayClient>();
    let unsent = Memo::new(move |_| {
        outbox
            .rows
            .with(|rows| rows.iter().filter(|r| r.is_unsent() && r.state != SendState::AwaitingConfirmation).cloned().collect::<Vec<_>>())
    });
    view! {
        <Show when=move || !unsent.with(Vec::is_empty)>
            <section class="tray" aria-labelledby="tray-title" data-testid="outbox-tray">
                <header class="tray__head">
                    <h2 id="tray-title">{move || { let n = unsent.with(Vec::len); if n == 1 { "1 unsent message".to_string() } else { format!("{n} unsent messages") } }}</h2>
                    <button type="button" on:click=move |_| outbox.retry_all()>"Retry all"</button>
                    <button type="button" on:click=move |_| outbox.discard_all()>"Discard all"</button>
                </header>
                {move || outbox.identity_held().map(|hold| view! {
                    <div class="tray__identity" role="alert" data-testid="outbox-identity-held">
                        <p>{move || hold.notice(&model::url::host_of(&client.url.get()))}</p>
                        <div class="tray__identity-actions">
                            <button type="button" on:click=move |_| outbox.send_here()>"Send here"</button>
                            <button type="button" on:click=move |_| { outbox.discard_all(); }>"Discard"</button>
                        </div>
                    </div>
                })}
                <ul class="tray__list">
                    // Keyed by the row and its text, not its state: an editor stays open while
                    // the row's state changes under it.
                    <For each=move || unsent.get() key=|r| format!("{}\u{1f}{}", r.id, r.edited_ms.map_or(0, |ms| ms as u64)) let:row>
                        {
                            let id = StoredValue::new(row.id.clone());
                            let current = Memo::new(move |_| outbox.rows.with(|rows| rows.iter().find(|r| r.id == id.get_value()).cloned()));
                            let status = move || current.with(|r| r.as_ref().map(|r| outbox.rows.with_untracked(|rows| describe(r, rows, crate::io::browser::now_ms(), stale_ms()))).unwrap_or_default());
                            let can = move |f: fn(&model::outbox::OutboxRow) -> bool| current.with(|r| r.as_ref().is_some_and(f));
                            let editing = RwSignal::new(false);
                            let refused = RwSignal::new(false);
                            let draft = RwSignal::new(row.text.clone());
                            // The composer's rule for an edited text too: a credential-shaped
                            // text is held until confirmed.
                            let held = RwSignal::new(None::<(model::credential::CredentialMatch, bool)>);
                            let confirmed = StoredValue::new(None::<String>);
                            let save = move || {
                                let text = draft.get_untracked();
                                if confirmed.get_value().as_deref() != Some(text.as_str()) && let Some(found) = model::credential::detect(&text) {
                                    held.set(Some((found, false)));
                                    return;
                                }
                                held.set(None);
                                leptos::task::spawn_local(async move {
                                    if outbox.edit(&id.get_value(), text).await {
                                        editing.set(false);
                                    } else {
                                        refused.set(true);
                                    }
                                });
                            };
                            let open = move || {
                                draft.set(current.with_untracked(|r| r.as_ref().map(|r| r.text.clone()).unwrap_or_default()));
                                refused.set(false);
                                outbox.begin_editing(&id.get_value());
                                editing.set(true);
                            };
                            let cancel = move || {
                                editing.set(false);
                                outbox.end_editing(&id.get_value());
                            };
                            view! {
                                <li class="tray__row" data-testid="tray-row">
                                    <span class="tray__text">{row.title(80)}</span>
                                    <span class="tray__session">{row.session_key.clone()}</span>
                                    <crate::components::attachment_list::FileChips files=row.attachments.clone()/>
                                    <span class="tray__status">{status}</span>
                                    {move || (can(|r| r.can_edit()) && !editing.get()).then(|| view! { <button type="button" on:click=move |_| open()>"Edit"</button> })}
                                    {move || can(|r| r.can_retry()).then(|| view! { <button type="button" on:click=move |_| outbox.retry(&id.get_value())>"Retry"</button> })}
                                    {move || can(|r| r.can_discard()).then(|| view! { <button type="button" on:click=move |_| outbox.discard(&id.get_value())>"Discard"</button> })}
                                    <Show when=move || editing.get()>
                                        <div class="tray__edit" data-testid="tray-edit">
                                            <label>
                                                <span>"Edit message"</span>
                                                <textarea rows="3" prop:value=move || draft.get() on:input=move |e| draft.set(event_target_value(&e))></textarea>
                                            </label>
                                            {move || refused.get().then(|| view! { <p class="tray__refused" role="alert">"Not edited: it was sent or changed meanwhile. Its current state is shown above."</p> })}
                                            {move || held.get().map(|(found, confirming)| view! {
                                                <crate::components::credential_notice::CredentialNotice
                                                    found=found
                                                    confirming=confirming
                                                    on_edit=move |_| held.set(None)
                                                    on_send_anyway=move |_| held.update(|h| if let Some(h) = h { h.1 = true })
                                                    on_confirm=move |_| { confirmed.set_value(Some(draft.get_untracked())); save() }
                                                />
                                            })}
                                            <button type="button" on:click=move |_| save()>"Save"</button>
                                            <button type="button" on:click=move |_| cancel()>"Cancel"</button>
                                        </div>
                                    </Show>
                                </li>
                            }
                            .into_any()
                        }
                    </For>
                </ul>
            </section>
        </Show>
        // Rare, and never sent from here: drawn on first use, with the conversation's other
        // tools (which a conversation with messages has fetched already).
        <Show when=move || !elsewhere.rows.with(Vec::is_empty) || elsewhere.problem.with(Option::is_some)>
            {on_use(elsewhere_tray())}
        </Show>
    }
}

crate::components::on_use::split! { conversation_tools,
/// The rows queued for other gateways, each with Discard.
fn elsewhere_tray() -> AnyView {
    let elsewhere = expect_context::<crate::state::outbox::elsewhere::ElsewhereController>();
    view! {
        <section class="tray tray--elsewhere" aria-labelledby="elsewhere-title" data-testid="elsewhere-tray">
            <header class="tray__head">
                <h2 id="elsewhere-title">"Queued for other gateways"</h2>
            </header>
            <p class="tray__note">"Each is sent only by a page connected to the gateway it was written for, never to this one."</p>
            {move || elsewhere.problem.get().map(|p| view! { <p class="tray__refused" role="alert">{p}</p> })}
            <ul class="tray__list">
                <For each=move || elsewhere.rows.get() key=|r| format!("{}\u{1f}{}", r.db, r.row.id) let:item>
                    {
                        let stored = StoredValue::new(item.clone());
                        view! {
                            <li class="tray__row" data-testid="elsewhere-row">
                                <span class="tray__status">{format!("Queued for {}", item.host)}</span>
                                <span class="tray__text">{item.row.title(80)}</span>
                                <span class="tray__session">{item.row.session_key.clone()}</span>
                                <button type="button" on:click=move |_| elsewhere.discard(&stored.get_value())>"Discard"</button>
                            </li>
                        }
                    }
                </For>
            </ul>
        </section>
    }
    .into_any()
}
}
