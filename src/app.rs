//! The application shell: status area, connection form, conversation and dock slot.

use leptos::prelude::*;

use crate::components::connect_form::ConnectForm;
use crate::components::conversation_list::ConversationList;
use crate::components::gateway_switch::{GatewaySwitch, PendingSwitch};
use crate::components::outbox_tray::OutboxTray;
use crate::components::pane::{Pane, PaneSwitcher};
use crate::components::status_bar::StatusBar;
use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::io::identity;
use crate::io::storage::{LocalDb, StorageHealth};
use crate::state::async_q::AsyncQController;
use crate::state::attention::Attention;
use crate::state::dock::{DockController, QuestionAccess};
use crate::state::outbox::OutboxController;
use crate::state::panes::Panes;
use crate::state::sessions::SessionsController;

/// Where the page connects, and what a link asked for.
struct StartingGateway {
    /// The gateway this page connects to now: the one this tab chose by a click earlier, or
    /// the page's own.
    url: String,
    /// A link's other gateway, waiting for a click.
    pending: Option<PendingSwitch>,
    /// A link's gateway that is not a WebSocket address.
    invalid_link: Option<String>,
    /// The page's own gateway (its origin's).
    own: String,
}

/// Works out the gateway URL, and takes the token and the gateway out of the address bar (the
/// token into this tab's `sessionStorage`, for the gateway it belongs to). A link naming
/// another gateway is only remembered, to ask first.
fn starting_gateway() -> StartingGateway {
    let Some(loc) = browser::location() else {
        return StartingGateway { url: String::new(), pending: None, invalid_link: None, own: String::new() };
    };
    let hash = loc.hash().unwrap_or_default();
    let fragment = model::url::parse_fragment(&hash);
    let own = browser::own_gateway_url();
    let url = identity::chosen_gateway().unwrap_or_else(|| own.clone());
    let (mut pending, mut invalid_link) = (None, None);
    match model::url::link_gateway(fragment.gateway_url.as_deref(), &url) {
        model::url::LinkGateway::Stay => {
            if let Some(token) = &fragment.token {
                identity::set_session_token(&url, Some(token));
            }
        }
        model::url::LinkGateway::Ask { url: link, host } => {
            pending = Some(PendingSwitch { url: link, host, token: fragment.token.clone() });
        }
        model::url::LinkGateway::Invalid(e) => invalid_link = Some(e),
    }
    if hash != fragment.remaining {
        let path = loc.pathname().unwrap_or_default();
        let search = loc.search().unwrap_or_default();
        browser::replace_url(&format!("{path}{search}{}", fragment.remaining));
    }
    StartingGateway { url, pending, invalid_link, own }
}

/// What the page has before its view exists: a client already connecting, and what a link
/// asked for.
pub struct Start {
    client: GatewayClient,
    pending: Option<PendingSwitch>,
    invalid_link: Option<String>,
}

/// Starts the app: works out the gateway, binds storage to it and starts connecting, then
/// builds the view once the first `connect` is on its way (at most 80 ms later). Building the
/// view keeps the main thread busy for about 90 ms; done first, it would hold the `connect`
/// back by as much, and over a real link the gateway's handshake is the longer wait.
pub fn run() {
    let start = starting_gateway();
    // Everything stored from here on belongs to this gateway (its own database).
    crate::io::storage::bind_to_gateway(&start.url, &start.own);
    let client = GatewayClient::start(start.url);
    // The first reads (the dock's first listing, `DockController::hydrate`) ride behind the
    // connect, so they are asked for before the connect can go; the early module sends the same.
    for method in crate::io::connect_request::FIRST_READS {
        client.pipeline_after_connect(method);
    }
    let start = Start { client, pending: start.pending, invalid_link: start.invalid_link };
    wasm_bindgen_futures::spawn_local(async move {
        client.connect_underway(std::time::Duration::from_millis(80)).await;
        leptos::mount::mount_to_body(move || view! { <App start/> });
    });
}

/// The page. `start` comes from [`run`].
#[component]
pub fn App(start: Start) -> impl IntoView {
    let client = start.client;
    provide_context(client);
    let pending_switch = RwSignal::new(start.pending);
    let invalid_link = RwSignal::new(start.invalid_link);
    let current_host = Signal::derive(move || model::url::host_of(&client.url.get()));
    let db = LocalDb::new();
    let dock = DockController::new(client, db);
    provide_context(dock);
    let panes = Panes::new(client, db);
    provide_context(panes);
    let sessions = SessionsController::new(client, db, panes);
    provide_context(sessions);
    provide_context(crate::state::run_settings::RunSettingsController::new(client, sessions));
    provide_context(crate::state::commands::CommandsController::new(client));
    provide_context(crate::state::export::ExportController::new(client, sessions, dock));
    provide_context(crate::state::tasks::TasksController::new(client));
    // Ctrl/Cmd+K: search conversations (the drawer opens on a narrow screen).
    let _ = window_event_listener(leptos::ev::keydown, move |ev| {
        if (ev.ctrl_key() || ev.meta_key()) && !ev.alt_key() && ev.key().eq_ignore_ascii_case("k") {
            ev.prevent_default();
            sessions.drawer_open.set(true);
            sessions.focus_search.update(|n| *n += 1);
        }
    });
    let files = crate::state::attachment::AttachmentController::new(client, db);
    provide_context(files);
    let outbox = OutboxController::new(client, db, files);
    provide_context(outbox);
    provide_context(crate::state::outbox::elsewhere::ElsewhereController::new());
    let asyncq = AsyncQController::new(panes, outbox, dock, db);
    provide_context(asyncq);
    provide_context(Attention::new(client, dock));
    provide_context(crate::state::push::PushController::new(client));
    provide_context(crate::state::away::AwayController::new(client, sessions, dock));
    let shell = crate::io::service_worker::ServiceWorker::new(client);
    // Saved history confirms outbox rows whenever a pane's transcript changes.
    for chat in panes.chats.get_value() {
        Effect::new(move |_| {
            let raw: Vec<serde_json::Value> =
                chat.messages.with(|rows| rows.iter().filter(|r| r.role == "user").map(|r| r.raw.clone()).collect());
            if !raw.is_empty() {
                outbox.confirm(&raw);
            }
        });
    }
    // Discarded text goes back into the composer of every open pane on that conversation
    // (panes on one conversation share the draft), or into its stored draft if none is open.
    Effect::new(move |_| {
        if let Some(restored) = outbox.restored.get() {
            let open = panes.open_chats();
            let chat = open.iter().find(|c| c.session.get_untracked() == restored.session_key).unwrap_or(&open[0]);
            chat.restore_text(&restored.session_key, &restored.text);
        }
    });
    let settings_open = RwSignal::new(false);
    let needs_token = move || matches!(client.status.get(), Status::NeedsToken { .. });
    let connected = move || client.status.get() == Status::Connected;
    let storage_warning = move || match db.health.get() {
        StorageHealth::Degraded(e) => {
            let unsent = outbox.rows.with(|r| r.iter().filter(|r| r.is_unsent()).count());
            let risk = match unsent {
                0 => "Drafts and new messages are kept in this tab only until storage works again.".to_string(),
                1 => "1 unsent message is kept in this tab only: closing the tab now would lose it.".to_string(),
                n => format!("{n} unsent messages are kept in this tab only: closing the tab now would lose them."),
            };
            Some(format!("This browser's storage is not working ({e}). {risk} Sending still works; storage is retried every few seconds."))
        }
        _ => None,
    };
    let no_access = move || connected() && client.hello.with(|_| dock.access() == QuestionAccess::None);
    let no_approvals =
        move || connected() && client.hello.with(|_| dock.approval_access() == crate::state::dock::approvals::ApprovalAccess::ReadOnly);
    view! {
        <div class=move || if panes.open.with(|o| o.len() > 1) { "shell shell--split" } else { "shell" }>
            <StatusBar on_settings=move |_| settings_open.update(|o| *o = !*o)/>
            {move || pending_switch.get().map(|p| {
                let chosen = StoredValue::new(p.clone());
                view! {
                    <GatewaySwitch
                        pending=p
                        current_host=current_host
                        on_switch=move |_| {
                            let p = chosen.get_value();
                            if let Some(t) = &p.token {
                                identity::set_session_token(&p.url, Some(t));
                            }
                            identity::set_chosen_gateway(Some(&p.url));
                            // A fresh start on the chosen gateway: its own storage, channels and
                            // outbox; nothing of this gateway's goes along.
                            if let Some(l) = browser::location() {
                                let _ = l.reload();
                            }
                        }
                        on_keep=move |_| pending_switch.set(None)
                    />
                }
            })}
            {move || invalid_link.get().map(|e| view! {
                <p class="banner banner--warn" role="alert" data-testid="invalid-gateway-link">
                    {format!("The link's gateway was not used: {e}")}
                    " "
                    <button type="button" on:click=move |_| invalid_link.set(None)>"Dismiss"</button>
                </p>
            })}
            <Show when=move || settings_open.get() || needs_token()>
                <ConnectForm on_done=move |_| settings_open.set(false)/>
            </Show>
            <Show when=move || shell.ready.get()>
                <p class="banner" role="status" data-testid="update-ready">
                    "A newer version of this page is ready. Reload to use it; your drafts and unsent messages are kept. "
                    <button type="button" on:click=move |_| { if let Some(l) = crate::io::browser::location() { let _ = l.reload(); } }>"Reload"</button>
                </p>
            </Show>
            {move || storage_warning().map(|m| view! { <p class="banner banner--warn" role="alert" data-testid="storage-warning">{m}</p> })}
            <Show when=no_access>
                <p class="banner" role="note" data-testid="no-question-scope">
                    "Questions from agents cannot be shown here: this connection was granted neither operator.questions nor operator.sessions.write."
                </p>
            </Show>
            <Show when=no_approvals>
                <p class="banner" role="note" data-testid="no-approval-scope">
                    "Approvals cannot be shown or decided here: this connection was not granted operator.approvals, so the gateway sends them elsewhere."
                </p>
            </Show>
            <OutboxTray/>
            <crate::components::away_card::AwayCard/>
            <PaneSwitcher/>
            <div class="workspace" data-drawer=move || if sessions.drawer_open.get() { "open" } else { "closed" }>
                <Show when=move || dock.deep_link.get().is_none()>
                    <ConversationList/>
                </Show>
                <main class="panes" aria-label="Conversations" style=move || format!("--panes: {}", panes.open.with(Vec::len))>
                    <For each=move || panes.open.get() key=|i| *i let:i>
                        <Pane index=i/>
                    </For>
                </main>
            </div>
            {move || sessions.undo.get().map(|archived| {
                let archived = StoredValue::new(archived);
                view! {
                    <div class="toast" role="status" data-testid="archive-toast">
                        {format!("Archived “{}”. ", archived.with_value(|a| a.row.name()))}
                        <button type="button" on:click=move |_| sessions.restore(&archived.with_value(|a| a.row.clone()))>"Undo"</button>
                    </div>
                }
            })}
            {move || asyncq.undo.get().map(|item| {
                let item = StoredValue::new(item);
                view! {
                    <div class="toast" role="status" data-testid="dismiss-toast">
                        "Question dismissed. Work continues."
                        <button type="button" on:click=move |_| asyncq.undo_dismiss(&item.get_value())>"Undo"</button>
                    </div>
                }
            })}
        </div>
    }
}
