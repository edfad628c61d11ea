//! An approval in the dock: what the agent wants to do (the command exactly as sent, or the
//! plugin's title and description), where, for which conversation, the time left, and only
//! the decisions the gateway offers. And the compact summary it leaves once decided.
//!
//! Consent is never given by accident (`model::consent`): the decisions are inert for a moment
//! each time the card is drawn; a click that began before that, or before the window had
//! focus, is ignored and the person told why; Always allow asks twice; an Allow from the
//! keyboard asks twice, with the key released between. Nothing is focused on Allow, and Deny
//! takes the row where a question's Skip and Submit sit. What runs is what is shown
//! (`model::reveal`): hidden characters as escapes, the command left-to-right, a long one's
//! line count and Allow only once its end was in view, argv quoted one by one, and every
//! field the gateway sends for the reviewer. Everything the agent wrote is a text node.

use leptos::prelude::*;
use model::dock::{ApprovalState, Outcome, Receipt};
use protocol::approval::{Approval, ApprovalKind, Decision};

use model::consent::Needs;
use model::reveal::Piece;

use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::consent::ConsentGate;
use crate::state::dock::approvals::ApprovalAccess;
use crate::state::dock::{DockController, DockView};
use model::sessions::short_name;

/// A button's words for a decision, as the incumbent labels them.
fn decision_label(kind: ApprovalKind, d: Decision) -> &'static str {
    match (kind, d) {
        (_, Decision::AllowOnce) => "Allow once",
        (ApprovalKind::Exec, Decision::AllowAlways) => "Always allow here",
        (_, Decision::AllowAlways) => "Always allow",
        (_, Decision::Deny) => "Deny",
    }
}

/// A command of more lines than this is long: it says how many, and Allow waits until its
/// end has been in view.
const LONG_LINES: usize = 8;

/// `text` as drawn for a decision: hidden characters as visible escapes (`model::reveal`).
fn revealed(text: &str) -> (AnyView, Option<String>) {
    let r = model::reveal::reveal(text);
    let warning = r.warning();
    let view = r
        .pieces
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => view! { <span>{t}</span> }.into_any(),
            Piece::Escape(c) => view! {
                <span class="approval__escape" title=model::reveal::describe(c)>{model::reveal::escape(c)}</span>
            }
            .into_any(),
        })
        .collect_view()
        .into_any();
    (view, warning)
}

/// How a decision's press is judged: Always allow asks twice, whatever the input; an Allow from
/// the keyboard asks twice; Deny takes one press.
fn needs(d: Decision) -> Needs {
    match d {
        Decision::AllowAlways => Needs::Second,
        Decision::AllowOnce => Needs::SecondFromKeyboard,
        Decision::Deny => Needs::One,
    }
}

crate::components::on_use::split! { requests,
    /// One pending approval, expanded.
    /// The card, its code fetched with the first approval the page shows (`components::on_use`).
    pub fn card(approval: Approval, state: ApprovalState, nav: AnyView, countdown: AnyView) -> AnyView {
        view! { <ApprovalCard approval=approval state=state nav=nav countdown=countdown/> }.into_any()
    }
}

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
    // Drawn now: the decisions are inert for a moment, and take a press meant for them.
    let gate = ConsentGate::<Decision>::new();
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
    let mut decisions = approval.allowed.clone();
    // Deny last: it gets the row where a question's Skip and Submit sit.
    decisions.retain(|d| *d != Decision::Deny);
    let deny = approval.offers(Decision::Deny);
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
    // What else the request says, collapsed: every field the gateway sends for the reviewer.
    let more: Vec<(&'static str, String)> = [
        ("Environment variables", (!approval.env_keys.is_empty()).then(|| approval.env_keys.join(", "))),
        ("Resolved executable", approval.resolved_path.clone()),
        ("Security policy", approval.security.clone()),
        ("Asks", approval.ask.clone()),
        ("Scope", approval.scope.clone()),
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
    // A long command: how many lines, and Allow only once its end has been in view.
    let lines = approval.command.as_deref().map_or(0, model::reveal::line_count);
    let end_seen = RwSignal::new(approval.command.is_none());
    let whole = RwSignal::new(false);
    let end = NodeRef::<leptos::html::Span>::new();
    watch_end(end, end_seen);
    let command = approval.command.clone().map(|c| {
        let (text, warning) = revealed(&c);
        view! {
            <pre class="approval__command" dir="ltr" data-testid="approval-command" data-whole=move || whole.get().to_string()>
                <code>{text}</code><span class="approval__end" node_ref=end aria-hidden="true"></span>
            </pre>
            {(lines > LONG_LINES).then(|| view! {
                <p class="approval__lines" data-testid="approval-lines">
                    {format!("{lines} lines. ")}
                    {move || if end_seen.get() { "You have seen its end. " } else { "Scroll to its end to allow it, or " }}
                    <Show when=move || !whole.get()>
                        <button type="button" class="approval__show-all" on:click=move |_| {
                            whole.set(true);
                            end_seen.set(true);
                            // The card changed under the pointer: inert again.
                            gate.shown();
                        }>"Show all"</button>
                    </Show>
                </p>
            })}
            {warning.map(|w| view! { <p class="approval__hidden" role="note" data-testid="approval-hidden-chars">{w}</p> })}
        }
    });
    let argv = (!approval.argv.is_empty()).then(|| {
        let (text, warning) = revealed(&model::reveal::quoted_argv(&approval.argv));
        view! {
            <div class="approval__argv">
                <span class="approval__label">"Arguments, one by one"</span>
                <pre class="approval__command approval__command--small" dir="ltr" data-testid="approval-argv"><code>{text}</code></pre>
                {warning.map(|w| view! { <p class="approval__hidden" role="note">{w}</p> })}
            </div>
        }
    });
    let detail = approval.detail.clone().map(|d| {
        let (text, warning) = revealed(&d);
        view! {
            <details class="approval__more" data-testid="approval-detail">
                <summary>"Details from the plugin"</summary>
                <pre class="approval__command approval__command--small">{text}</pre>
                {warning.map(|w| view! { <p class="approval__hidden" role="note">{w}</p> })}
            </details>
        }
    });
    let press = move |d: Decision, ev: leptos::ev::MouseEvent| {
        if d.allows() && !end_seen.get_untracked() {
            gate.notice.set(Some("Nothing was decided: read the command to its end first (scroll it, or Show all)."));
            return;
        }
        if let Some(d) = gate.click(d, needs(d), &ev) {
            ctl.decide(&id.get_value(), d);
        }
    };
    let button = move |d: Decision| {
        let class = match d {
            Decision::AllowOnce => "approval__allow",
            Decision::AllowAlways => "approval__always",
            Decision::Deny => "approval__deny",
        };
        let inert = move || gate.inert.get() || (d.allows() && !end_seen.get());
        view! {
            <button
                type="button"
                class=class
                disabled=move || busy || !connected.get()
                aria-disabled=move || inert().then_some("true")
                on:pointerdown=move |ev| gate.pointer_down(d, &ev)
                on:keydown=move |ev| gate.key_down(&ev)
                on:keyup=move |_| gate.key_up()
                on:click=move |ev| press(d, ev)
            >
                {decision_label(kind, d)}
            </button>
        }
    };
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
            {command}
            {argv}
            {(kind != ApprovalKind::Exec && !approval.description.is_empty()).then(|| view! { <p class="approval__description">{approval.description.clone()}</p> })}
            {detail}
            {(!approval.requester_warnings.is_empty()).then(|| view! {
                <div class="approval__requester" data-testid="approval-requester-warning">
                    <span class="approval__label">"The requester’s own warning"</span>
                    <ul>{approval.requester_warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view()}</ul>
                </div>
            })}
            {(!approval.warnings.is_empty()).then(|| view! {
                <div class="approval__analysis">
                    <span class="approval__label" id=format!("{}-analysis", approval.id)>"The gateway’s analysis"</span>
                    <ul class="approval__warnings" aria-labelledby=format!("{}-analysis", approval.id) data-testid="approval-warnings">
                        {approval.warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view()}
                    </ul>
                </div>
            })}
            {(!details.is_empty()).then(|| view! {
                <dl class="approval__details">
                    {details.into_iter().map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> }).collect_view()}
                </dl>
            })}
            {(!more.is_empty()).then(|| view! {
                <details class="approval__more" data-testid="approval-more">
                    <summary>"More about this request"</summary>
                    <dl class="approval__details">
                        {more.into_iter().map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> }).collect_view()}
                    </dl>
                </details>
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
            {move || ctl.choice.note_for(&id.get_value()).map(|m| view! { <p class="dock__notice" role="status" data-testid="notification-choice">{m}</p> })}
            {status.map(|m| view! { <p class="dock__error" role="alert" data-testid="approval-status">{m}</p> })}
            {move || gate.armed.get().map(|d| view! {
                <p class="dock__notice" role="status" data-testid="approval-confirm">{match d {
                    Decision::AllowAlways => format!("Press “{}” again to confirm: the agent may then run this without asking.", decision_label(kind, d)),
                    _ => format!("Press “{}” again to confirm.", decision_label(kind, d)),
                }}</p>
            })}
            {move || gate.notice.get().map(|m| view! { <p class="dock__notice" role="status" data-testid="approval-too-early">{m}</p> })}
            {no_always.then(|| view! { <p class="dock__hint">"“Always allow” is not offered for this command."</p> })}
            <Show when=move || can_decide.get()>
                <div class="dock__actions approval__actions" role="group" aria-label="Decision" data-inert=move || gate.inert.get().to_string()>
                    <div class="approval__allows">{decisions.iter().copied().map(button).collect_view()}</div>
                    {deny.then(|| button(Decision::Deny))}
                </div>
            </Show>
        </div>
    }
}

/// Sets `seen` once the element `end` (the last thing of a command) has been in view.
fn watch_end(end: NodeRef<leptos::html::Span>, seen: RwSignal<bool>) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::Closure;
    Effect::new(move |_| {
        let Some(el) = end.get() else { return };
        if seen.get_untracked() {
            return;
        }
        let on_change = Closure::<dyn Fn(js_sys::Array)>::new(move |entries: js_sys::Array| {
            let visible = entries.iter().any(|e| e.unchecked_into::<web_sys::IntersectionObserverEntry>().is_intersecting());
            // A report queued before the card was taken down may arrive after it.
            if visible && seen.try_get_untracked() == Some(false) {
                seen.try_set(true);
            }
        });
        let Ok(observer) = web_sys::IntersectionObserver::new(on_change.as_ref().unchecked_ref()) else {
            // No observer: nothing can tell, so the command does not hold Allow back.
            seen.set(true);
            return;
        };
        observer.observe(&el);
        let held = StoredValue::new_local((observer, on_change));
        on_cleanup(move || {
            held.try_with_value(|(o, _)| o.disconnect());
        });
    });
}

/// The line a collapsed dock shows for an approval.
pub fn collapsed_summary(a: &Approval) -> String {
    format!("{} · {}", a.kind.noun(), model::preview(a.subject(), 60))
}

crate::components::on_use::split! { transcript_parts,
    /// The receipt, its code fetched with the first one the page shows (`components::on_use`).
    pub fn receipt(receipt: Receipt) -> AnyView {
        view! { <ApprovalReceipt receipt=receipt/> }.into_any()
    }
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
