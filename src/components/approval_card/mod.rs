//! An approval in the dock: what the agent wants to do (the command exactly as sent, or the
//! plugin's title and description), where, for which conversation, the time left, and only
//! the decisions the gateway offers. And the compact summary it leaves once decided.
//!
//! Consent is never given by accident: nothing is focused on Allow, Enter never allows, and
//! an Allow pressed from the keyboard (a click with no pointer) asks for a second press. A
//! pointer click decides at once. Everything the agent wrote is a text node.

use leptos::prelude::*;
use model::dock::{ApprovalState, Outcome, Receipt};
use protocol::approval::{Approval, ApprovalKind, Decision};

use crate::components::pane::short_name;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::dock::approvals::ApprovalAccess;
use crate::state::dock::{DockController, DockView};

/// A button's words for a decision, as the incumbent labels them.
fn decision_label(kind: ApprovalKind, d: Decision) -> &'static str {
    match (kind, d) {
        (_, Decision::AllowOnce) => "Allow once",
        (ApprovalKind::Exec, Decision::AllowAlways) => "Always allow here",
        (_, Decision::AllowAlways) => "Always allow",
        (_, Decision::Deny) => "Deny",
    }
}

/// One pending approval, expanded.
#[component]
pub fn ApprovalCard(
    /// The approval as the gateway sent it.
    approval: Approval,
    /// Where its decision stands here.
    state: ApprovalState,
    /// The request arrows and the countdown, drawn by the dock.
    nav: AnyView,
    countdown: AnyView,
) -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let client = expect_context::<GatewayClient>();
    let view = expect_context::<DockView>();
    let pane = view.pane;
    let connected = Memo::new(move |_| client.status.get() == Status::Connected);
    let can_decide = Memo::new(move |_| client.hello.with(|_| ctl.approval_access() == ApprovalAccess::Decide));
    let busy = matches!(state, ApprovalState::Deciding(_) | ApprovalState::Unconfirmed(_));
    // A keyboard-activated Allow waits for a second press of the same button.
    let armed = RwSignal::new(None::<Decision>);
    let id = StoredValue::new(approval.id.clone());
    let kind = approval.kind;
    // Which conversation asked, when it is not this pane's own.
    let chat = expect_context::<crate::state::chat::ChatController>();
    let session = approval.session_key.clone();
    let other_session = {
        let session = session.clone();
        move || {
            let s = session.as_deref()?;
            (protocol::chat::canonical_session_key(s) != chat.session.get()).then(|| short_name(&protocol::chat::canonical_session_key(s)))
        }
    };
    let status = match &state {
        ApprovalState::Deciding(d) => Some(format!("Sending “{}”…", decision_label(kind, *d))),
        ApprovalState::Unconfirmed(_) => Some(
            "Connection lost after sending the decision. Checking with the gateway once reconnected; it is not sent again.".to_string(),
        ),
        ApprovalState::Failed(m) => Some(m.clone()),
        ApprovalState::Open => None,
    };
    let severity = approval.severity.clone().unwrap_or_else(|| if kind == ApprovalKind::Exec { "warning".into() } else { "info".into() });
    let decisions = approval.allowed.clone();
    let no_always = kind == ApprovalKind::Exec && !approval.offers(Decision::AllowAlways);
    let details: Vec<(&'static str, String)> = [
        ("Host", approval.host.clone()),
        ("Working directory", approval.cwd.clone()),
        ("Agent", approval.agent_id.clone()),
        ("Conversation", session.as_deref().map(|s| short_name(&protocol::chat::canonical_session_key(s)))),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect();
    let heading = match kind {
        ApprovalKind::Exec => "The agent wants to run a command".to_string(),
        _ => approval.title.clone(),
    };
    let title_id = format!("approval-{pane}-{}", approval.id);
    let labelled_by = title_id.clone();
    view! {
        <div class="dock__panel approval" data-severity=severity data-testid="approval-card" data-approval-id=approval.id.clone() role="group" aria-labelledby=labelled_by>
            <div class="dock__top">
                {nav}
                <p class="dock__waiting" id=title_id>{heading}</p>
                <button type="button" class="dock__collapse" on:click=move |_| ctl.set_expanded(false)>"Collapse"</button>
            </div>
            <div class="dock__meta">
                <span class="dock__chip">{kind.noun()}</span>
                {move || other_session().map(|s| view! { <span class="approval__from" data-testid="approval-from">{format!("Asked in {s}")}</span> })}
                {countdown}
            </div>
            {approval.command.clone().map(|c| view! { <pre class="approval__command" data-testid="approval-command"><code>{c}</code></pre> })}
            {(kind != ApprovalKind::Exec && !approval.description.is_empty()).then(|| view! { <p class="approval__description">{approval.description.clone()}</p> })}
            {(!approval.warnings.is_empty()).then(|| view! {
                <ul class="approval__warnings" aria-label="Warnings" data-testid="approval-warnings">
                    {approval.warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view()}
                </ul>
            })}
            {(!details.is_empty()).then(|| view! {
                <dl class="approval__details">
                    {details.into_iter().map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> }).collect_view()}
                </dl>
            })}
            {move || (!can_decide.get()).then(|| view! {
                <p class="dock__notice" role="note" data-testid="approval-read-only">
                    "You can read this approval but not decide it: this connection was not granted the operator.approvals scope."
                </p>
            })}
            {move || (can_decide.get() && !connected.get()).then(|| view! {
                <p class="dock__notice" role="status" data-testid="approval-offline">
                    "Reconnect to decide. A decision is only sent while connected, so it never applies to a situation that changed meanwhile."
                </p>
            })}
            {status.map(|m| view! { <p class="dock__error" role="alert" data-testid="approval-status">{m}</p> })}
            {move || armed.get().map(|d| view! {
                <p class="dock__notice" role="status" data-testid="approval-confirm">{format!("Press “{}” again to confirm.", decision_label(kind, d))}</p>
            })}
            {no_always.then(|| view! { <p class="dock__hint">"“Always allow” is not offered for this command."</p> })}
            <Show when=move || can_decide.get()>
                <div class="dock__actions approval__actions" role="group" aria-label="Decision">
                    {decisions.iter().copied().map(|d| {
                        let class = match d {
                            Decision::AllowOnce => "approval__allow dock__primary",
                            Decision::AllowAlways => "approval__always",
                            Decision::Deny => "approval__deny",
                        };
                        let on_click = move |ev: leptos::ev::MouseEvent| {
                            // Enter or Space on a focused button makes a click with no pointer
                            // (detail 0): allowing then takes a second, deliberate press.
                            if d.allows() && ev.detail() == 0 && armed.get_untracked() != Some(d) {
                                armed.set(Some(d));
                                return;
                            }
                            armed.set(None);
                            ctl.decide(&id.get_value(), d);
                        };
                        view! {
                            <button type="button" class=class disabled=move || busy || !connected.get() on:click=on_click>
                                {decision_label(kind, d)}
                            </button>
                        }
                    }).collect_view()}
                </div>
            </Show>
        </div>
    }
}

/// The line a collapsed dock shows for an approval.
pub fn collapsed_summary(a: &Approval) -> String {
    format!("{} · {}", a.kind.noun(), model::preview(a.subject(), 60))
}

/// The summary a finished approval leaves in its conversation.
#[component]
pub fn ApprovalReceipt(
    /// The stored summary (its `approval` is set).
    receipt: Receipt,
) -> impl IntoView {
    let Some(a) = receipt.approval.clone() else { return ().into_any() };
    let kind = match receipt.outcome {
        Outcome::AllowedOnce | Outcome::AlwaysAllowed => "allowed",
        Outcome::Denied => "denied",
        Outcome::DecidedElsewhere { .. } => "elsewhere",
        Outcome::Expired => "expired",
        Outcome::Cancelled => "cancelled",
        _ => "unavailable",
    };
    let unknown = a.command.is_none() && a.title.is_empty();
    view! {
        <article class="receipt receipt--approval" data-outcome=kind data-testid="approval-receipt" data-approval-id=receipt.id.clone()>
            <p class="receipt__status">{format!("{}: {}", a.kind.noun(), receipt.outcome.label())}</p>
            {if unknown {
                view! { <p class="receipt__wording">"This approval is no longer known to the gateway."</p> }.into_any()
            } else if let Some(c) = a.command.clone() {
                view! { <pre class="approval__command approval__command--small"><code>{c}</code></pre> }.into_any()
            } else {
                view! { <p class="receipt__wording">{a.title.clone()}</p> }.into_any()
            }}
        </article>
    }
    .into_any()
}
