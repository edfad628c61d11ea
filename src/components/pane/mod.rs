//! One conversation pane: its session picker, transcript, dock and composer. Panes sit side by
//! side above 900 px; below that one shows at a time, chosen in the switcher (`PaneSwitcher`).

use leptos::prelude::*;

use crate::components::composer::Composer;
use crate::components::conversation_header::ConversationHeader;
use crate::components::question_dock::QuestionDock;
use crate::components::run_bar::RunBar;
use crate::components::transcript::Transcript;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::attachment::AttachmentController;
use crate::state::composer::ComposerController;
use crate::state::dock::{DockController, DockView};
use crate::state::outbox::OutboxController;
use crate::state::panes::{MAX_PANES, Panes};
use crate::state::sessions::SessionsController;

pub use model::sessions::short_name;

/// A conversation pane.
#[component]
pub fn Pane(
    /// Which of the page's conversation controllers this pane shows (`Panes::chats`).
    index: usize,
) -> impl IntoView {
    let panes = expect_context::<Panes>();
    let dock = expect_context::<DockController>();
    let client = expect_context::<GatewayClient>();
    let chat = panes.chat(index);
    provide_context(chat);
    let session = Signal::derive(move || chat.session.get());
    let first = Signal::derive(move || panes.open.with(|o| o.first() == Some(&index)));
    let open_sessions = Signal::derive(move || panes.open_chats().iter().map(|c| c.session.get()).collect());
    let view = DockView::new(dock, index, session, first, open_sessions);
    provide_context(view);
    let composer = ComposerController::new(
        chat,
        expect_context::<OutboxController>(),
        expect_context::<AttachmentController>(),
        dock,
        expect_context::<SessionsController>(),
        expect_context::<crate::state::run_settings::RunSettingsController>(),
        expect_context::<crate::state::tasks::TasksController>(),
        client,
    );
    provide_context(composer);
    provide_context(crate::state::message_actions::MessageActionsController::new(client, chat, expect_context::<SessionsController>()));
    let can_add = move || panes.open.with(|o| o.len() < MAX_PANES);
    let can_close = move || panes.open.with(|o| o.len() > 1);
    let connected = move || client.status.get() == Status::Connected;
    let empty = move || {
        chat.messages.with(Vec::is_empty)
            && view.ids.with(Vec::is_empty)
            && dock.dock.with(|d| d.receipts.is_empty())
            && !chat.loading.get()
    };
    view! {
        <section
            class="pane"
            data-testid="pane"
            data-session=move || chat.session.get()
            data-active=move || (panes.active.get() == index).to_string()
            aria-label=move || format!("Conversation {}", short_name(&chat.session.get()))
            on:focusin=move |_| if panes.active.get_untracked() != index { panes.active.set(index) }
        >
            // The header and the sub-agents stay in view while the transcript scrolls under them.
            <div class="pane__top">
                <Show when=move || dock.deep_link.get().is_none()>
                    <ConversationHeader>
                        <Show when=can_add>
                            <button type="button" class="wide-only" on:click=move |_| panes.add(index)>"Open another pane"</button>
                        </Show>
                        <Show when=can_close>
                            <button type="button" on:click=move |_| panes.close(index)>"Close pane"</button>
                        </Show>
                    </ConversationHeader>
                </Show>
                <crate::components::tasks_panel::TasksPanel/>
            </div>
            <div class="conversation">
                <Transcript/>
                <Show when=empty>
                    <p class="conversation__empty">
                        {move || if connected() {
                            "Connected. Say hello, or type help to see what the demo agent can do."
                        } else {
                            "Waiting for the gateway connection."
                        }}
                    </p>
                </Show>
            </div>
            <div class="dock-slot">
                <RunBar/>
                <QuestionDock/>
                <Composer/>
            </div>
        </section>
    }
}

/// On a narrow screen with several panes: which conversations are open, and which one shows.
#[component]
pub fn PaneSwitcher() -> impl IntoView {
    let panes = expect_context::<Panes>();
    let dock = expect_context::<DockController>();
    view! {
        <Show when=move || panes.open.with(|o| o.len() > 1)>
            <nav class="pane-switcher" aria-label="Open conversations" data-testid="pane-switcher">
                <For each=move || panes.open.get() key=|i| *i let:i>
                    {
                        let chat = panes.chat(i);
                        // A waiting question in a pane that is out of sight is said on its button.
                        // The same rule that decides what that pane's dock shows (`model::panes`).
                        let waiting = move || {
                            let s = chat.session.get();
                            let first = panes.open.with(|o| o.first() == Some(&i));
                            let open: Vec<String> = panes.open_chats().iter().map(|c| c.session.get()).collect();
                            dock.dock.with(|d| {
                                let mine = d.entries.iter().filter(|e| model::panes::pane_shows(e.session_key(), &s, first, &open));
                                let (mut questions, mut approvals) = (0, 0);
                                for e in mine {
                                    if matches!(e, model::dock::Entry::Approval { .. }) { approvals += 1 } else { questions += 1 }
                                }
                                match (questions, approvals) {
                                    (0, 0) => String::new(),
                                    (1, 0) => " · 1 question".to_string(),
                                    (n, 0) => format!(" · {n} questions"),
                                    (0, 1) => " · 1 approval".to_string(),
                                    (0, n) => format!(" · {n} approvals"),
                                    (q, a) => format!(" · {} requests", q + a),
                                }
                            })
                        };
                        view! {
                            <button type="button" aria-pressed=move || (panes.active.get() == i).to_string() on:click=move |_| panes.active.set(i)>
                                {move || short_name(&chat.session.get())}
                                {waiting}
                            </button>
                        }
                    }
                </For>
            </nav>
        </Show>
    }
}
