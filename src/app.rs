//! The application shell: status area, connection form, conversation and dock slot.

use leptos::prelude::*;

use crate::browser;
use crate::components::composer::Composer;
use crate::components::connect_form::ConnectForm;
use crate::components::question_dock::QuestionDock;
use crate::components::question_receipt::QuestionReceipt;
use crate::components::status_bar::StatusBar;
use crate::gateway_client::{GatewayClient, Status};
use crate::identity;
use crate::questions::{DockController, QuestionAccess, StorageHealth};

/// Works out the gateway URL, and takes the token out of the address bar into this tab's
/// `sessionStorage`.
fn initial_gateway_url() -> String {
    let Some(loc) = browser::location() else { return String::new() };
    let hash = loc.hash().unwrap_or_default();
    let fragment = model::fragment::parse_fragment(&hash);
    let base_path = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .and_then(|e| e.get_attribute("data-openclaw-control-ui-base-path"))
        .unwrap_or_default();
    let url = fragment.gateway_url.clone().unwrap_or_else(|| {
        model::fragment::default_gateway_url(&loc.protocol().unwrap_or_default(), &loc.host().unwrap_or_default(), &base_path)
    });
    if let Some(token) = &fragment.token {
        identity::set_session_token(&url, Some(token));
    }
    if hash != fragment.remaining {
        let path = loc.pathname().unwrap_or_default();
        let search = loc.search().unwrap_or_default();
        browser::replace_url(&format!("{path}{search}{}", fragment.remaining));
    }
    url
}

#[component]
pub fn App() -> impl IntoView {
    let client = GatewayClient::start(initial_gateway_url());
    provide_context(client);
    let dock = DockController::new(client);
    provide_context(dock);
    let settings_open = RwSignal::new(false);
    let needs_token = move || matches!(client.status.get(), Status::NeedsToken { .. });
    let connected = move || client.status.get() == Status::Connected;
    let storage_warning = move || match dock.storage_health.get() {
        StorageHealth::Degraded(m) => Some(m),
        _ => None,
    };
    let no_access = move || connected() && client.hello.with(|_| dock.access() == QuestionAccess::None);
    let receipts = Memo::new(move |_| {
        let deep = dock.deep_link.get();
        dock.dock.with(|d| d.receipts.iter().filter(|r| deep.as_ref().is_none_or(|x| *x == r.id)).cloned().collect::<Vec<_>>())
    });
    view! {
        <div class="shell">
            <StatusBar on_settings=move |_| settings_open.update(|o| *o = !*o)/>
            <Show when=move || settings_open.get() || needs_token()>
                <ConnectForm on_done=move |_| settings_open.set(false)/>
            </Show>
            {move || storage_warning().map(|m| view! { <p class="banner banner--warn" role="alert" data-testid="storage-warning">{m}</p> })}
            <Show when=no_access>
                <p class="banner" role="note" data-testid="no-question-scope">
                    "Questions from agents cannot be shown here: this connection was granted neither operator.questions nor operator.sessions.write."
                </p>
            </Show>
            <main class="conversation" aria-label="Conversation">
                <For each=move || receipts.get() key=|r| (r.id.clone(), r.outcome.label(), r.unsent_text.len()) let:r>
                    <QuestionReceipt receipt=r/>
                </For>
                <Show when=move || receipts.with(Vec::is_empty) && dock.dock.with(|d| d.is_empty())>
                    <p class="conversation__empty">
                        {move || if connected() {
                            "Connected. Questions from your agents appear above the composer."
                        } else {
                            "Waiting for the gateway connection."
                        }}
                    </p>
                </Show>
            </main>
            <div class="dock-slot">
                <QuestionDock/>
                <Composer/>
            </div>
        </div>
    }
}
