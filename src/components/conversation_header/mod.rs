//! The pane's header: the conversation's name (kept in view while the transcript scrolls), the
//! drawer on narrow screens, and one menu of the conversation's actions (New conversation,
//! Rename, Archive with Undo, Export as Markdown, the pane's own), so the name and the
//! conversation come first even at 390 px; Restore for an archived conversation.

use leptos::prelude::*;
use leptos::task::spawn_local;

use model::sessions::Conversation;

use crate::components::on_use::on_use;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::chat::ChatController;
use crate::state::sessions::SessionsController;

/// The header of one pane. `children` are the pane's own buttons (another pane, close).
#[component]
pub fn ConversationHeader(children: Children) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let sessions = expect_context::<SessionsController>();
    let client = expect_context::<GatewayClient>();
    // The row of this pane's conversation: from the list, else asked for (an archived one, or
    // one beyond the loaded pages).
    let described = RwSignal::new(None::<Conversation>);
    // Asked once per conversation, connection and time it leaves the list (archived here or
    // elsewhere), not on every change of the list.
    Effect::new(move |prev: Option<(String, u64, bool)>| {
        let key = chat.session.get();
        let epoch = client.connected_epoch.get();
        let listed = sessions.list.with(|l| l.get(&key).is_some());
        let now = (key.clone(), epoch, listed);
        if listed && described.with_untracked(Option::is_some) {
            described.set(None);
        }
        if key.is_empty() || listed || client.status.get_untracked() != Status::Connected || prev.as_ref() == Some(&now) {
            return now;
        }
        spawn_local(async move {
            let row = sessions.describe(key.clone()).await;
            if chat.session.get_untracked() == key {
                described.set(row);
            }
        });
        now
    });
    let row = Memo::new(move |_| {
        let key = chat.session.get();
        sessions.list.with(|l| l.get(&key).cloned()).or_else(|| described.get().filter(|d| d.key == key))
    });
    let name = move || row.get().map(|r| r.name()).unwrap_or_else(|| model::sessions::short_name(&chat.session.get()));
    let renaming = RwSignal::new(None::<String>);
    let is_renaming = Memo::new(move |_| renaming.with(Option::is_some));
    let export = expect_context::<crate::state::export::ExportController>();
    let exported = move || {
        use crate::state::export::ExportState;
        export.state.get().filter(|s| s.session() == chat.session.get()).map(|s| {
            let (role, said) = match s {
                ExportState::Working { .. } => ("status", "Exporting: reading the whole conversation…".to_string()),
                ExportState::Done { said, .. } => ("status", said),
                ExportState::Failed { said, .. } => ("alert", said),
            };
            view! { <p class="banner banner--info" role=role data-testid="export-status">{said}" "<button type="button" on:click=move |_| export.state.set(None)>"Dismiss"</button></p> }
        })
    };
    // The menu closes once one of its actions is chosen.
    let menu = NodeRef::<leptos::html::Details>::new();
    let close_menu = move |_| {
        if let Some(d) = menu.get_untracked() {
            let _ = d.remove_attribute("open");
        }
    };
    // The menu's own actions are drawn once it is first opened (their code with the
    // conversation's other tools, `components::on_use`); the pane's are always there.
    let menu_opened = RwSignal::new(false);
    view! {
        <header class="conversation-header" data-testid="conversation-header">
            <button type="button" class="conversation-header__drawer" aria-expanded=move || sessions.drawer_open.get().to_string() on:click=move |_| sessions.drawer_open.update(|o| *o = !*o)>
                "Conversations"
            </button>
            {move || if is_renaming.get() {
                on_use(rename_form(renaming))
            } else {
                view! { <h2 class="conversation-header__name" data-testid="conversation-name">{name}</h2> }.into_any()
            }}
            // Opened by any means (a click, the keyboard, the browser's find in page): the first
            // toggle is an opening.
            <details class="conversation-header__menu" node_ref=menu on:toggle=move |_| menu_opened.set(true)>
            <summary data-testid="conversation-menu">"Actions"</summary>
            <div class="conversation-header__actions" role="group" aria-label="Conversation actions" on:click=close_menu>
                <Show when=move || menu_opened.get()>{on_use(menu_actions(row, renaming))}</Show>
                {children()}
            </div>
            </details>
            {move || row.get().filter(|r| r.archived).map(|r| {
                let r = StoredValue::new(r);
                view! {
                    <p class="banner banner--info conversation-header__archived" role="status" data-testid="archived-banner">
                        "This conversation is archived: restore it to send to it. "
                        <Show when=move || sessions.may(protocol::methods::method::SESSIONS_PATCH)>
                            <button type="button" on:click=move |_| sessions.restore(&r.get_value())>"Restore"</button>
                        </Show>
                    </p>
                }
            })}
            {exported}
            {move || sessions.notice.get().map(|n| view! { <p class="banner banner--warn" role="alert" data-testid="conversation-notice">{n}</p> })}
        </header>
    }
}

crate::components::on_use::split! { conversation_tools,
/// The conversation's own actions in the header's menu: New conversation, Rename, Archive and
/// Export as Markdown, each offered only with the scope for it.
fn menu_actions(row: Memo<Option<Conversation>>, renaming: RwSignal<Option<String>>) -> AnyView {
    let chat = expect_context::<ChatController>();
    let sessions = expect_context::<SessionsController>();
    let client = expect_context::<GatewayClient>();
    let export = expect_context::<crate::state::export::ExportController>();
    let main_key = move || client.hello.with(|h| h.as_ref().and_then(|h| h.main_session_key.clone()));
    let can_archive = move || {
        let key = chat.session.get();
        !key.is_empty()
            && sessions.may(protocol::methods::method::SESSIONS_PATCH)
            && !row.get().is_some_and(|r| r.main || r.archived)
            && !model::sessions::is_main(&key, main_key().as_deref())
    };
    view! {
        <Show when=move || sessions.may(protocol::methods::method::SESSIONS_CREATE)>
            <button type="button" on:click=move |_| sessions.create_in(chat)>"New conversation"</button>
        </Show>
        <Show when=move || renaming.with(Option::is_none) && !chat.session.with(String::is_empty) && sessions.may(protocol::methods::method::SESSIONS_PATCH)>
            <button type="button" on:click=move |_| renaming.set(Some(row.get_untracked().filter(|r| r.labelled).map(|r| r.title).unwrap_or_default()))>"Rename"</button>
        </Show>
        <Show when=can_archive>
            <button type="button" on:click=move |_| sessions.archive(&chat.session.get_untracked())>"Archive"</button>
        </Show>
        <button type="button" disabled=move || !export.can() || chat.session.with(String::is_empty) on:click=move |_| export.export(chat.session.get_untracked())>
            "Export as Markdown"
        </button>
    }
    .into_any()
}
}

crate::components::on_use::split! { conversation_tools,
/// The name being edited in place of the heading: Save name (Enter), Cancel (Escape).
fn rename_form(renaming: RwSignal<Option<String>>) -> AnyView {
    let chat = expect_context::<ChatController>();
    let sessions = expect_context::<SessionsController>();
    let save_name = move || {
        if let Some(label) = renaming.get_untracked() {
            sessions.rename(&chat.session.get_untracked(), &label);
            renaming.set(None);
        }
    };
    view! {
        <form class="conversation-header__rename" on:submit=move |ev| { ev.prevent_default(); save_name(); }>
            <label>
                <span class="sr-only">"Conversation name"</span>
                <input
                    type="text"
                    maxlength="512"
                    prop:value=move || renaming.get().unwrap_or_default()
                    on:input=move |ev| renaming.set(Some(event_target_value(&ev)))
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| if ev.key() == "Escape" { renaming.set(None) }
                />
            </label>
            <button type="submit">"Save name"</button>
            <button type="button" on:click=move |_| renaming.set(None)>"Cancel"</button>
        </form>
    }
    .into_any()
}
}
