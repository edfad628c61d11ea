//! The conversation list: a rail beside the panes above 900 px, a drawer below. Newest activity
//! first, each row marked when it is running, waits on you (a question or approval in this
//! page's dock) or has news; New conversation, search by title (Ctrl/Cmd+K) and inside messages
//! (the matching words under each conversation found), archived ones behind a filter, and Load
//! more past the first page.

use leptos::prelude::*;

use model::sessions::Conversation;

use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::dock::DockController;
use crate::state::sessions::SessionsController;

/// The list of conversations; a click opens one in the focused pane.
#[component]
pub fn ConversationList() -> impl IntoView {
    let sessions = expect_context::<SessionsController>();
    let dock = expect_context::<DockController>();
    let client = expect_context::<GatewayClient>();
    let search_field = NodeRef::<leptos::html::Input>::new();
    let search = RwSignal::new(String::new());
    let archived = RwSignal::new(false);
    Effect::new(move |_| {
        if sessions.focus_search.get() > 0
            && let Some(input) = search_field.get()
        {
            let _ = input.focus();
        }
    });
    // Keys with a request waiting on this person.
    let waiting = Memo::new(move |_| {
        dock.dock.with(|d| d.entries.iter().filter_map(|e| e.session_key().map(str::to_string)).collect::<Vec<String>>())
    });
    let current = Memo::new(move |_| sessions.focused_key());
    let rows = Memo::new(move |_| sessions.list.with(|l| l.rows.clone()));
    view! {
        <nav class="conversations" aria-label="Conversation list" data-testid="conversation-list">
            <div class="conversations__top">
                <Show when=move || sessions.may(protocol::methods::method::SESSIONS_CREATE)>
                    <button type="button" class="conversations__new" on:click=move |_| sessions.create_in(sessions.focused())>"New conversation"</button>
                </Show>
                <form role="search" on:submit=move |ev| ev.prevent_default()>
                    <label class="conversations__search">
                        <span class="sr-only">"Search conversations"</span>
                        <input
                            type="search"
                            node_ref=search_field
                            placeholder="Search titles and messages (Ctrl+K)"
                            prop:value=move || search.get()
                            on:input=move |ev| {
                                search.set(event_target_value(&ev));
                                sessions.set_query(search.get_untracked(), archived.get_untracked());
                            }
                        />
                    </label>
                </form>
                <label class="conversations__filter">
                    <input
                        type="checkbox"
                        prop:checked=move || archived.get()
                        on:change=move |ev| {
                            archived.set(event_target_checked(&ev));
                            sessions.set_query(search.get_untracked(), archived.get_untracked());
                        }
                    />
                    <span>"Show archived"</span>
                </label>
            </div>
            {move || sessions.list.with(|l| l.saved).then(|| view! {
                <p class="conversations__note" role="status" data-testid="conversations-saved">"Saved list: the gateway has not answered yet."</p>
            })}
            {move || sessions.error.get().map(|e| view! { <p class="conversations__note banner--warn" role="alert">{e}</p> })}
            <Show when=move || client.status.get() == Status::Connected && !sessions.may(protocol::methods::method::SESSIONS_LIST)>
                <p class="conversations__note" role="note">"Conversations cannot be listed here: this connection was not granted operator.read."</p>
            </Show>
            <ul class="conversations__rows" role="list">
                <For
                    each=move || rows.get()
                    key=|r: &Conversation| format!("{}\u{1f}{}\u{1f}{}\u{1f}{}", r.key, r.title, r.running, r.updated_at)
                    children=move |row: Conversation| {
                        let key = StoredValue::new(row.key.clone());
                        let is_current = move || key.with_value(|k| current.with(|c| c == k));
                        let is_waiting = move || key.with_value(|k| waiting.with(|w| w.contains(k)));
                        let unread = {
                            let row = row.clone();
                            move || !is_current() && sessions.marks.with(|m| m.unread(&row))
                        };
                        let name = row.name();
                        let running = row.running;
                        view! {
                            <li>
                                <button
                                    type="button"
                                    class="conversations__row"
                                    data-testid="conversation-row"
                                    data-key=row.key.clone()
                                    aria-current=move || is_current().then_some("page")
                                    on:click=move |_| key.with_value(|k| sessions.open_in(sessions.focused(), k))
                                >
                                    <span class="conversations__name">{name}</span>
                                    <span class="conversations__marks">
                                        {running.then(|| view! { <span class="mark mark--running" data-mark="running">"Running"</span> })}
                                        <Show when=is_waiting>
                                            <span class="mark mark--waiting" data-mark="waiting">"Waiting on you"</span>
                                        </Show>
                                        <Show when=unread.clone()>
                                            <span class="mark mark--unread" data-mark="unread">"New"</span>
                                        </Show>
                                    </span>
                                </button>
                            </li>
                        }
                    }
                />
            </ul>
            <Show when=move || sessions.list.with(|l| l.rows.is_empty()) && !sessions.loading.get() && sessions.may(protocol::methods::method::SESSIONS_LIST)>
                <p class="conversations__note">{move || if sessions.list.with(|l| l.query.is_default()) { "No conversations yet." } else { "No conversation matches." }}</p>
            </Show>
            {move || sessions.found.get().filter(|f| !f.hits.is_empty() || f.indexing).map(|found| {
                let hits = found
                    .hits
                    .iter()
                    .cloned()
                    .map(|h| {
                        let name = found
                            .name(&h.session_key)
                            .map(str::to_string)
                            .or_else(|| sessions.row(&h.session_key).map(|r| r.name()))
                            .unwrap_or_else(|| model::sessions::short_name(&h.session_key));
                        let key = h.session_key;
                        let who = if h.role == "user" { "You: " } else { "Agent: " };
                        view! {
                            <li>
                                <button type="button" class="conversations__row conversations__hit" data-testid="message-hit" data-key=key.clone()
                                    on:click=move |_| sessions.open_in(sessions.focused(), &key)>
                                    <span class="conversations__name">{name}</span>
                                    <span class="conversations__snippet">{who}{h.snippet}</span>
                                </button>
                            </li>
                        }
                    })
                    .collect_view();
                view! {
                    <section class="conversations__found" aria-label="Found in messages" data-testid="found-in-messages">
                        <h3>"Found in messages"</h3>
                        {found.indexing.then(|| view! { <p class="conversations__note" role="status">"The gateway is still indexing its messages: more may appear."</p> })}
                        <ul class="conversations__rows" role="list">{hits}</ul>
                        {found.truncated.then(|| view! { <p class="conversations__note">"More messages match: add a word to narrow it."</p> })}
                    </section>
                }
            })}
            <Show when=move || sessions.list.with(|l| l.has_more)>
                <button type="button" class="conversations__more" disabled=move || sessions.loading.get() on:click=move |_| sessions.load_more()>"Load more"</button>
            </Show>
        </nav>
    }
}
