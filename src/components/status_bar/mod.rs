//! The status area: a small line saying whether the page is connected (and when the next
//! reconnect attempt happens), with what a person needs now (Retry now, Reload page, the
//! connection settings when it is not connected); the gateway, the server version, the granted
//! scopes, the question alerts and the settings are one click away, under Details.

use std::time::Duration;

use leptos::prelude::*;

use crate::components::attention_control::AttentionControl;
use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, Status};

/// Always-visible connection status. Reads the [`GatewayClient`] from context.
///
/// `on_settings` opens the connection form.
#[component]
pub fn StatusBar(
    /// Called when the person asks for the connection settings.
    #[prop(into)]
    on_settings: Callback<()>,
) -> impl IntoView {
    let client = expect_context::<GatewayClient>();
    // A clock for the "next attempt in N s" countdown; it only ticks while reconnecting.
    let now = RwSignal::new(browser::now_ms());
    let ticking = StoredValue::new_local(None::<IntervalHandle>);
    Effect::new(move |_| {
        let reconnecting = matches!(client.status.get(), Status::Reconnecting { .. });
        ticking.update_value(|t| {
            if let Some(h) = t.take() {
                h.clear();
            }
            if reconnecting {
                now.set(browser::now_ms());
                *t = set_interval_with_handle(move || now.set(browser::now_ms()), Duration::from_millis(500)).ok();
            }
        });
    });
    on_cleanup(move || {
        ticking.update_value(|t| {
            if let Some(h) = t.take() {
                h.clear()
            }
        })
    });

    let state = move || match client.status.get() {
        Status::Connected => "connected",
        Status::Connecting => "connecting",
        Status::Reconnecting { .. } => "reconnecting",
        Status::NeedsToken { .. } => "needs-token",
        Status::Failed { .. } => "failed",
    };
    let headline = move || match client.status.get() {
        Status::Connected => "Connected".to_string(),
        Status::Connecting => "Connecting…".to_string(),
        Status::Reconnecting { attempt, next_at_ms, reason } => {
            let secs = ((next_at_ms - now.get()) / 1000.0).ceil().max(0.0) as u64;
            let when = if secs == 0 { "now".to_string() } else { format!("in {secs} s") };
            format!("Reconnecting — next attempt {when} (attempt {attempt}); {reason}")
        }
        Status::NeedsToken { .. } => "Not connected: token needed".to_string(),
        Status::Failed { message, .. } => format!("Not connected: {message}"),
    };
    let version = move || client.hello.with(|h| h.as_ref().map(|h| h.server_version.clone()));
    let scopes = move || client.hello.with(|h| h.as_ref().map(|h| h.scopes.join(", ")));
    let connected = move || client.status.with(|s| *s == Status::Connected);
    let reload = move || client.status.with(|s| matches!(s, Status::Failed { reload: true, .. }));
    let refused = move || client.status.with(|s| matches!(s, Status::Failed { .. } | Status::NeedsToken { .. }));

    // The notification setting is drawn (and its code fetched) once the details were opened.
    let details_seen = RwSignal::new(false);
    view! {
        <header class="status-bar" data-state=state>
            <div class="status-bar__main" role="status" aria-live="polite">
                <span class="status-bar__dot" aria-hidden="true"></span>
                <span class="status-bar__headline" data-testid="connection-status">{headline}</span>
            </div>
            <div class="status-bar__actions">
                <Show when=reload>
                    <button type="button" on:click=move |_| {
                        if let Some(l) = browser::location() {
                            let _ = l.reload();
                        }
                    }>"Reload page"</button>
                </Show>
                <Show when=move || matches!(client.status.get(), Status::Reconnecting { .. })>
                    <button type="button" on:click=move |_| client.reconnect_now()>"Retry now"</button>
                </Show>
                <Show when=refused>
                    <button type="button" on:click=move |_| on_settings.run(())>"Connection settings"</button>
                </Show>
            </div>
            <details class="status-bar__more" on:toggle=move |_| if !details_seen.get_untracked() { details_seen.set(true) }>
                <summary>"Details"</summary>
                <div class="status-bar__panel">
                    <dl class="status-bar__facts">
                        <div>
                            <dt>"Gateway"</dt>
                            <dd data-testid="gateway-host">{move || model::url::host_of(&client.url.get())}</dd>
                        </div>
                        <div>
                            <dt>"Server"</dt>
                            <dd data-testid="server-version">{move || version().unwrap_or_else(|| "unknown".into())}</dd>
                        </div>
                        <div>
                            <dt>"Scopes"</dt>
                            <dd data-testid="granted-scopes">
                                {move || if connected() { scopes().filter(|s| !s.is_empty()).unwrap_or_else(|| "none".into()) } else { "none (not connected)".into() }}
                            </dd>
                        </div>
                    </dl>
                    <AttentionControl/>
                    {move || details_seen.get().then(|| crate::components::on_use::on_use(crate::components::push_settings::settings()))}
                    <Show when=move || !refused()>
                        <button type="button" on:click=move |_| on_settings.run(())>"Connection settings"</button>
                    </Show>
                </div>
            </details>
        </header>
    }
}
