//! The question a link that names another gateway raises: connect there, or stay. Nothing
//! goes to the link's gateway until the person clicks **Switch to <host>**, a click meant for
//! it (`model::consent`); **Keep current gateway** comes first and has the focus.

use leptos::prelude::*;
use model::consent::Needs;

use crate::state::consent::ConsentGate;

/// The one decision the dialog gates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Switch;

/// A link's gateway, waiting for the person's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSwitch {
    /// The link's WebSocket address.
    pub url: String,
    /// Its host, as shown.
    pub host: String,
    /// The token the link carried for that gateway (memory only until the switch).
    pub token: Option<String>,
}

/// Switch-gateway dialog.
#[component]
pub fn GatewaySwitch(
    /// The link's gateway.
    pending: PendingSwitch,
    /// The host this page uses now.
    #[prop(into)]
    current_host: Signal<String>,
    /// Switch to the link's gateway.
    #[prop(into)]
    on_switch: Callback<()>,
    /// Stay on the current gateway.
    #[prop(into)]
    on_keep: Callback<()>,
) -> impl IntoView {
    let keep = NodeRef::<leptos::html::Button>::new();
    // The switch takes a click meant for it: inert for a moment after the dialog appears, so a
    // link that opened this page in the middle of a double-click does not get its second half.
    let gate = ConsentGate::<Switch>::new();
    // The safe choice has the focus: Enter does not switch.
    Effect::new(move |_| {
        if let Some(b) = keep.get() {
            let _ = b.focus();
        }
    });
    let host = pending.host.clone();
    view! {
        <div class="gateway-switch" role="dialog" aria-modal="true" aria-labelledby="gateway-switch-title" aria-describedby="gateway-switch-why" data-testid="gateway-switch">
            <h2 id="gateway-switch-title">"Switch to a different gateway?"</h2>
            <p id="gateway-switch-why">"This link asks the browser to connect somewhere else."</p>
            <dl class="gateway-switch__hosts">
                <div>
                    <dt>"Current"</dt>
                    <dd data-testid="gateway-switch-current">{move || current_host.get()}</dd>
                </div>
                <div>
                    <dt>"Link"</dt>
                    <dd data-testid="gateway-switch-link">{pending.url.clone()}</dd>
                </div>
            </dl>
            <p>
                {format!("Anything you send after switching goes to {host}. ")}
                {move || format!("Messages queued, drafts and saved conversations for {} stay with it and are never sent to another gateway.", current_host.get())}
                {pending.token.is_some().then_some(" The link also carries a token for that gateway; it is used only if you switch.")}
            </p>
            {move || gate.notice.get().map(|m| view! { <p class="gateway-switch__notice" role="status" data-testid="gateway-switch-too-early">{m}</p> })}
            <div class="gateway-switch__actions">
                <button type="button" node_ref=keep on:click=move |_| on_keep.run(())>"Keep current gateway"</button>
                <button
                    type="button"
                    class="gateway-switch__switch"
                    aria-disabled=move || gate.inert.get().then_some("true")
                    on:pointerdown=move |ev| gate.pointer_down(Switch, &ev)
                    on:keydown=move |ev| gate.key_down(&ev)
                    on:keyup=move |_| gate.key_up()
                    on:click=move |ev| {
                        if gate.click(Switch, Needs::One, &ev).is_some() {
                            on_switch.run(());
                        }
                    }
                >
                    {format!("Switch to {host}")}
                </button>
            </div>
        </div>
    }
}
