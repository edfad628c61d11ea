//! The question dock above the composer: a stepper through one request's questions,
//! arrows between pending requests, Skip, a countdown, and a slim bar when collapsed.
//!
//! Everything an agent wrote is rendered as text nodes; nothing it sends becomes markup.

use leptos::ev::KeyboardEvent;
use leptos::prelude::*;
use model::dock::{Entry, LocalState, countdown};
use model::draft::QuestionDraft;
use protocol::question::{Question, QuestionRecord};
use wasm_bindgen::JsCast;

use crate::components::credential_notice::CredentialNotice;
use crate::components::option_group::{OptionGroup, OptionItem};
use crate::state::dock::{DockController, DockView, QuestionAccess};

/// The dock of one pane (its `DockView` context). Renders nothing while no request is pending.
#[component]
pub fn QuestionDock() -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let view = expect_context::<DockView>();
    let (ids, current) = (view.ids, view.current);
    let expanded = Memo::new(move |_| ctl.dock.with(|d| d.expanded));
    view! {
        <div class="sr-only" aria-live="polite" data-testid="dock-announcer">{move || ctl.announce.get()}</div>
        <Show when=move || !ids.with(Vec::is_empty)>
            <section class="dock" aria-label="Requests from the agent" data-expanded=move || expanded.get().to_string()>
                {move || {
                    let id = current.get()?;
                    Some(if expanded.get() {
                        view! { <RequestPanel id=id/> }.into_any()
                    } else {
                        view! { <CollapsedBar id=id/> }.into_any()
                    })
                }}
            </section>
        </Show>
    }
}

fn entry_memo(ctl: DockController, id: StoredValue<String>) -> Memo<Option<Entry>> {
    Memo::new(move |_| ctl.dock.with(|d| d.entry(&id.get_value()).cloned()))
}

/// `(i, n)` among the pane's requests.
fn position() -> Memo<Option<(usize, usize)>> {
    let view = expect_context::<DockView>();
    Memo::new(move |_| view.position())
}

/// Previous/next request arrows with `i/N`.
#[component]
fn RequestNav() -> impl IntoView {
    let view = expect_context::<DockView>();
    let pos = position();
    view! {
        <Show when=move || pos.get().is_some_and(|(_, n)| n > 1)>
            <nav class="dock__requests" aria-label="Pending requests">
                <button type="button" class="dock__arrow" aria-label="Previous request" on:click=move |_| view.step(false)>"‹"</button>
                <span data-testid="request-position">{move || pos.get().map(|(i, n)| format!("Request {i}/{n}"))}</span>
                <button type="button" class="dock__arrow" aria-label="Next request" on:click=move |_| view.step(true)>"›"</button>
            </nav>
        </Show>
    }
}

/// Time left, quiet until the last two minutes.
#[component]
fn Countdown(expires_at_ms: i64) -> impl IntoView {
    let ctl = expect_context::<DockController>();
    if expires_at_ms == i64::MAX {
        return ().into_any();
    }
    let parts = move || countdown(expires_at_ms, ctl.now.get());
    view! {
        <span class="dock__countdown" data-urgent=move || parts().1.to_string() title="Time left to answer" data-testid="countdown">
            {move || format!("{} left", parts().0)}
        </span>
    }
    .into_any()
}

/// The collapsed dock: header, step, pending count, time left, and Expand.
#[component]
fn CollapsedBar(id: String) -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let id = StoredValue::new(id);
    let entry = entry_memo(ctl, id);
    let draft = ctl.draft(&id.get_value());
    let pos = position();
    let summary = move || match entry.get() {
        Some(Entry::Valid { record, .. }) => {
            let step = draft.with(|d| d.step).min(record.questions.len().saturating_sub(1));
            let q = &record.questions[step];
            let head = if q.header.trim().is_empty() { "Question".to_string() } else { q.header.clone() };
            format!("{head} · step {}/{}", step + 1, record.questions.len())
        }
        Some(Entry::Invalid(_)) => "A request could not be shown".to_string(),
        Some(Entry::Approval { approval, .. }) => crate::components::approval_card::collapsed_summary(&approval),
        None => String::new(),
    };
    let expires = move || entry.with(|e| e.as_ref().and_then(Entry::expires_at_ms));
    let is_approval = move || entry.with(|e| matches!(e, Some(Entry::Approval { .. })));
    view! {
        <div class="dock__bar" data-testid="dock-bar">
            <span class="dock__bar-title">{summary}</span>
            <span class="dock__bar-count" data-testid="dock-bar-count">{move || {
                let approvals = ctl.dock.with(|d| d.approvals_waiting());
                pos.get().map(|(_, n)| match (is_approval(), approvals, n) {
                    (true, 1, 1) => "1 approval waiting".to_string(),
                    (true, a, n) if a == n => format!("{a} approvals waiting"),
                    (true, 1, n) => format!("1 approval waiting · {n} pending"),
                    (true, a, n) => format!("{a} approvals waiting · {n} pending"),
                    (false, _, 1) => "1 pending".to_string(),
                    (false, _, n) => format!("{n} pending"),
                })
            }}</span>
            {move || expires().map(|e| view! { <Countdown expires_at_ms=e/> })}
            <button type="button" on:click=move |_| ctl.set_expanded(true)>{move || if is_approval() { "Expand approval" } else { "Expand question" }}</button>
        </div>
    }
}

/// One request, expanded: the stepper.
#[component]
fn RequestPanel(id: String) -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let id = StoredValue::new(id);
    let entry = entry_memo(ctl, id);
    view! {
        {move || match entry.get() {
            Some(Entry::Valid { record, state }) => view! { <Stepper record=record state=state/> }.into_any(),
            Some(Entry::Approval { approval, state }) => {
                let expires = approval.expires_at_ms;
                crate::components::on_use::on_use(crate::components::approval_card::card(approval, state, view! { <RequestNav/> }.into_any(), view! { <Countdown expires_at_ms=expires/> }.into_any()))
            }
            Some(Entry::Invalid(invalid)) => view! {
                <div class="dock__panel dock__panel--invalid" role="alert">
                    <RequestNav/>
                    <p><strong>"This question could not be shown. "</strong>{invalid.problem.clone()}</p>
                    <p>"What the agent sent:"</p>
                    <pre class="dock__raw">{invalid.raw.clone()}</pre>
                    <div class="dock__actions">
                        <button type="button" on:click=move |_| ctl.set_expanded(false)>"Collapse"</button>
                    </div>
                </div>
            }.into_any(),
            None => ().into_any(),
        }}
    }
}

fn is_text_field(target: &web_sys::EventTarget) -> bool {
    target.dyn_ref::<web_sys::HtmlElement>().is_some_and(|el| {
        let tag = el.tag_name();
        tag == "TEXTAREA" || (tag == "INPUT" && el.get_attribute("type").is_some_and(|t| t == "text" || t == "password"))
    })
}

/// Moves keyboard focus to the next/previous option without selecting it.
fn move_option_focus(panel: &web_sys::Element, forward: bool) {
    let Ok(list) = panel.query_selector_all(".option-group input") else { return };
    let inputs: Vec<web_sys::HtmlElement> = (0..list.length()).filter_map(|i| list.item(i)?.dyn_into().ok()).collect();
    if inputs.is_empty() {
        return;
    }
    let active = web_sys::window().and_then(|w| w.document()).and_then(|d| d.active_element());
    let i = active.and_then(|a| inputs.iter().position(|x| *x == *a.unchecked_ref::<web_sys::HtmlElement>()));
    let next = match (i, forward) {
        (Some(i), true) => (i + 1) % inputs.len(),
        (Some(i), false) => (i + inputs.len() - 1) % inputs.len(),
        (None, _) => 0,
    };
    let _ = inputs[next].focus();
}

#[component]
fn Stepper(record: QuestionRecord, state: LocalState) -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let id = StoredValue::new(record.id.clone());
    let draft = ctl.draft(&record.id);
    let n = record.questions.len();
    let record = StoredValue::new(record);
    let step = Memo::new(move |_| draft.with(|d| d.step).min(n.saturating_sub(1)));
    let can_answer = move || ctl.access() == QuestionAccess::Answer;
    let busy = matches!(state, LocalState::Submitting { .. } | LocalState::Unconfirmed { .. });
    let failure = match &state {
        LocalState::Failed { message } => Some(message.clone()),
        LocalState::Unconfirmed { .. } => {
            Some("Connection lost after sending. Checking with the gateway once reconnected; your answer is kept.".into())
        }
        _ => None,
    };
    let go = move |to: usize| {
        draft.update(|d| d.set_step(to));
        let q = record.with_value(|r| r.questions[to].clone());
        ctl.announce.set(format!("Question {} of {n}: {}", to + 1, q.question));
    };
    let next_or_submit = move || {
        let s = step.get_untracked();
        if s + 1 < n { go(s + 1) } else { ctl.submit(&id.get_value()) }
    };
    let panel_ref = NodeRef::<leptos::html::Div>::new();
    let on_key = move |ev: KeyboardEvent| {
        // IME composition and modified keys belong to the text, not to us.
        if ev.is_composing() || ev.key() == "Process" || ev.ctrl_key() || ev.alt_key() || ev.meta_key() {
            return;
        }
        let in_text = ev.target().is_some_and(|t| is_text_field(&t));
        match ev.key().as_str() {
            "Escape" => {
                ev.prevent_default();
                ctl.set_expanded(false);
            }
            "Enter" if !ev.shift_key() && !busy && can_answer() => {
                let on_button = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlButtonElement>().ok()).is_some();
                if !on_button {
                    ev.prevent_default();
                    next_or_submit();
                }
            }
            k @ ("1" | "2" | "3" | "4") if !in_text && !ev.shift_key() && !busy && can_answer() => {
                let i: usize = k.parse().unwrap_or(1);
                let (q, last) = record.with_value(|r| (r.questions[step.get_untracked()].clone(), step.get_untracked() + 1 >= n));
                if let Some(opt) = q.options.get(i - 1) {
                    ev.prevent_default();
                    let label = opt.label.clone();
                    pick(draft, &q, &label);
                    if !q.multi() && !last {
                        go(step.get_untracked() + 1);
                    }
                }
            }
            "ArrowDown" | "ArrowRight" | "ArrowUp" | "ArrowLeft" if !in_text => {
                if let Some(panel) = panel_ref.get_untracked() {
                    ev.prevent_default();
                    move_option_focus(&panel, matches!(ev.key().as_str(), "ArrowDown" | "ArrowRight"));
                }
            }
            _ => {}
        }
    };
    let header = move || record.with_value(|r| r.questions[step.get()].header.clone());
    let expires = record.with_value(|r| r.expires_at_ms);
    let is_async = id.with_value(|i| i.starts_with(model::dock::ASYNC_PREFIX));
    view! {
        <div class="dock__panel" node_ref=panel_ref on:keydown=on_key data-testid="question-panel">
            <div class="dock__top">
                <RequestNav/>
                <p class="dock__waiting">{if is_async { "The agent asked this and keeps working" } else { "The agent is waiting for your answer" }}</p>
                <button type="button" class="dock__collapse" on:click=move |_| ctl.set_expanded(false)>"Collapse"</button>
            </div>
            <div class="dock__meta">
                <Show when=move || !header().trim().is_empty()>
                    <span class="dock__chip" data-testid="question-header">{header}</span>
                </Show>
                <span class="dock__progress" data-testid="step-progress">{move || format!("{}/{n}", step.get() + 1)}</span>
                <Countdown expires_at_ms=expires/>
            </div>
            {move || ctl.choice.note_for(&id.get_value()).map(|m| view! { <p class="dock__notice" role="status" data-testid="notification-choice">{m}</p> })}
            {record.with_value(|r| r.questions.iter().any(|q| q.secret_store.is_some())).then(|| {
                let editable = can_answer();
                crate::components::on_use::on_use(crate::components::secret_request::prompt(record.get_value(), draft, editable))
            })}
            {move || {
                if !can_answer() {
                    return view! {
                        <p class="dock__notice" role="note" data-testid="read-only-notice">
                            "You can read this question but not answer it: this connection was not granted the operator.questions scope."
                        </p>
                    }.into_any();
                }
                ().into_any()
            }}
            {move || {
                let s = step.get();
                let q = record.with_value(|r| r.questions[s].clone());
                let key = format!("p{}-{}-{s}", expect_context::<DockView>().pane, id.get_value());
                // A secret is answered with the same scope as any question (as on the real gateway).
                let readonly = !can_answer();
                view! { <QuestionStep question=q draft=draft dom_key=key readonly=readonly busy=busy on_advance=Callback::new(move |_| {
                    let s = step.get_untracked();
                    if s + 1 < n { go(s + 1) }
                })/> }
            }}
            {failure.map(|m| view! { <p class="dock__error" role="alert" data-testid="dock-error">{m}</p> })}
            {move || ctl.held.get().filter(|h| h.request_id == id.get_value()).map(|h| {
                let focus_text = move || {
                    let input = panel_ref.get_untracked().and_then(|p| p.query_selector(".dock__other input[type=text]").ok().flatten());
                    if let Some(el) = input.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
                        let _ = el.focus();
                    }
                };
                view! {
                    <CredentialNotice
                        found=h.found
                        confirming=h.confirming
                        on_edit=move |_| { ctl.edit_held(&id.get_value()); focus_text(); }
                        on_send_anyway=move |_| ctl.send_anyway(&id.get_value())
                        on_confirm=move |_| ctl.confirm_send_anyway(&id.get_value())
                    />
                }
            })}
            <div class="dock__actions">
                <Show when=move || { step.get() > 0 }>
                    <button type="button" on:click=move |_| go(step.get_untracked() - 1)>"Back"</button>
                </Show>
                <Show when=move || can_answer()>
                    <button type="button" class="dock__skip" disabled=busy on:click=move |_| ctl.skip(&id.get_value())>{if is_async { "Dismiss" } else { "Skip" }}</button>
                </Show>
                <Show when=move || can_answer()>
                    <Show when=move || { step.get() + 1 < n }
                        fallback=move || view! {
                            <button type="button" class="dock__primary" disabled=busy on:click=move |_| ctl.submit(&id.get_value())>
                                {if busy { "Sending…" } else { "Submit" }}
                            </button>
                        }>
                        <button type="button" class="dock__primary" on:click=move |_| go(step.get_untracked() + 1)>"Next"</button>
                    </Show>
                </Show>
            </div>
        </div>
    }
}

fn pick(draft: RwSignal<QuestionDraft>, q: &Question, label: &str) {
    draft.update(|d| if q.multi() { d.toggle(q, label) } else { d.pick(q, label) });
}

/// One question: its text, its options and the free-text answer.
#[component]
fn QuestionStep(
    question: Question,
    draft: RwSignal<QuestionDraft>,
    dom_key: String,
    readonly: bool,
    busy: bool,
    on_advance: Callback<()>,
) -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let q = StoredValue::new(question.clone());
    let text_id = format!("q-{dom_key}-text");
    let qid = question.question_id.clone();
    let qid2 = qid.clone();
    let selected = Signal::derive(move || draft.with(|d| d.get(&qid).map(|a| a.selected.clone()).unwrap_or_default()));
    let other_text = move || draft.with(|d| d.get(&qid2).map(|a| a.other_text.clone()).unwrap_or_default());
    let qid3 = question.question_id.clone();
    let credential_typed = move || draft.with(|d| d.get(&qid3).is_some_and(|a| model::credential::detect(&a.other_text).is_some()));
    let on_pick = Callback::new(move |label: String| {
        let q = q.get_value();
        pick(draft, &q, &label);
        if !q.multi() {
            on_advance.run(());
        }
    });
    let options = question.options.clone();
    let url = question.url.clone();
    let free_text = question.allows_free_text() && !question.secret();
    let multi = question.multi();
    let name = format!("q-{dom_key}");
    view! {
        <div class="dock__question">
            <p class="dock__question-text" id=text_id.clone()>{question.question.clone()}</p>
            {url.map(|u| {
                let shown = u.clone();
                view! { <a class="dock__link" href=u target="_blank" rel="noopener noreferrer">{shown}</a> }
            })}
            {if readonly {
                view! {
                    <ul class="dock__readonly-options">
                        {options.iter().map(|o| view! { <li>{o.label.clone()}{o.description.clone().map(|d| format!(" — {d}"))}</li> }).collect_view()}
                    </ul>
                }.into_any()
            } else {
                view! {
                    {(!options.is_empty()).then({
                        let options = options.clone();
                        move || view! {
                        <OptionGroup name=name multi=multi labelled_by=text_id.clone() selected=selected on_pick=on_pick disabled=Signal::from(busy)>
                            {options.iter().enumerate().map(|(i, o)| view! {
                                <OptionItem label=o.label.clone() description=o.description.clone().unwrap_or_default() index=i + 1/>
                            }).collect_view()}
                        </OptionGroup>
                    }})}
                    {free_text.then(|| view! {
                        <label class="dock__other">
                            <span>{if multi { "Also add your own answer" } else if options.is_empty() { "Your answer" } else { "Or type your own answer" }}</span>
                            <input
                                type="text"
                                autocomplete="off"
                                disabled=busy
                                prop:value=other_text
                                on:focus=move |_| {
                                    ctl.typing_in_dock.set(true);
                                    let q = q.get_value();
                                    draft.update(|d| d.activate_other(&q));
                                }
                                on:blur=move |_| ctl.typing_in_dock.set(false)
                                on:input=move |ev| {
                                    let q = q.get_value();
                                    let v = event_target_value(&ev);
                                    draft.update(|d| d.type_other(&q, &v));
                                    // Changed text is checked again on the next Submit.
                                    ctl.edit_held(&draft.with_untracked(|d| d.request_id.clone()));
                                }
                            />
                        </label>
                        <Show when=credential_typed>
                            <p class="unsaved-note" data-testid="not-saved-note">"Kept in this tab only: this looks like a credential, so it is not saved in this browser."</p>
                        </Show>
                    })}
                    {(!free_text && !question.secret() && !options.is_empty()).then(|| view! {
                        <p class="dock__hint">"The agent accepts only these options."</p>
                    })}
                    {question.secret().then(|| view! {
                        <label class="dock__other">
                            <span>"Secret value (not saved anywhere in this browser)"</span>
                            <input
                                type="password"
                                autocomplete="off"
                                disabled=busy
                                on:focus=move |_| ctl.typing_in_dock.set(true)
                                on:blur=move |_| ctl.typing_in_dock.set(false)
                                on:input=move |ev| {
                                    let q = q.get_value();
                                    let v = event_target_value(&ev);
                                    draft.update(|d| d.type_other(&q, &v));
                                }
                            />
                        </label>
                    })}
                }.into_any()
            }}
        </div>
    }
}
