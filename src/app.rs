//! The application shell: status area, connection form, conversation and dock slot.

use leptos::prelude::*;

use crate::browser;
use crate::components::connect_form::ConnectForm;
use crate::components::status_bar::StatusBar;
use crate::gateway_client::{GatewayClient, Status};
use crate::identity;

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
    let settings_open = RwSignal::new(false);
    let needs_token = move || matches!(client.status.get(), Status::NeedsToken { .. });
    view! {
        <div class="shell">
            <StatusBar on_settings=move |_| settings_open.update(|o| *o = !*o)/>
            <Show when=move || settings_open.get() || needs_token()>
                <ConnectForm on_done=move |_| settings_open.set(false)/>
            </Show>
            <main class="conversation" aria-label="Conversation">
                <p class="conversation__empty">
                    {move || if client.status.get() == Status::Connected {
                        "Connected. Questions from your agents appear above the composer."
                    } else {
                        "Waiting for the gateway connection."
                    }}
                </p>
            </main>
        </div>
    }
}
