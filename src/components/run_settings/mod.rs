//! The composer's model and thinking pickers and the context meter: which model answers in this
//! conversation and how hard it thinks (changed with `sessions.patch`; a send waits while a
//! change is on its way), how full the context is against the model's window, and what the
//! last run used. Read-only without the scope to change them.

use leptos::prelude::*;
use model::run_settings::{Change, Fill, PatchState};

use crate::state::chat::ChatController;
use crate::state::run_settings::{Models, RunSettingsController};

/// The value of the thinking picker's "the model's default" option.
const DEFAULT_LEVEL: &str = "";

#[component]
pub fn RunSettings() -> impl IntoView {
    let ctl = expect_context::<RunSettingsController>();
    let chat = expect_context::<ChatController>();
    let key = move || chat.session.get();
    Effect::new(move |_| ctl.read_models());
    let settings = Memo::new(move |_| ctl.settings(&key()));
    let usage = Memo::new(move |_| ctl.usage(&key()));
    let patch = Memo::new(move |_| ctl.patch(&key()));
    let can_change = move || ctl.can_change();
    let busy = move || patch.with(PatchState::holds_sends);
    let current = move || settings.with(|s| s.model.as_ref().map(|m| m.value()).unwrap_or_default());
    // The model's options: the gateway's choices, with the current model kept even when the
    // list is not read (yet) or leaves it out.
    let options = move || {
        let now = current();
        let mut out: Vec<(String, String, Option<String>)> = match ctl.models.get() {
            Models::Read(list) => list.into_iter().map(|c| (c.model.value(), c.label, c.unavailable)).collect(),
            _ => Vec::new(),
        };
        if !now.is_empty() && !out.iter().any(|(v, _, _)| *v == now) {
            out.insert(0, (now.clone(), now, None));
        }
        out
    };
    let on_model = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        if !value.is_empty() && value != current() {
            ctl.change(&chat.session.get_untracked(), Change::Model(Some(value)));
        }
    };
    let on_level = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        let level = (value != DEFAULT_LEVEL).then_some(value);
        if level != settings.with_untracked(|s| s.thinking.clone()) {
            ctl.change(&chat.session.get_untracked(), Change::Thinking(level));
        }
    };
    let meter_class = move || match usage.with(|u| u.fill()) {
        Fill::Normal => "run-settings__meter",
        Fill::Warn => "run-settings__meter run-settings__meter--warn",
        Fill::Danger => "run-settings__meter run-settings__meter--danger",
    };
    view! {
        <div class="run-settings" data-testid="run-settings">
            <label class="run-settings__field">
                <span class="run-settings__name">"Model"</span>
                <select
                    data-testid="model-picker"
                    prop:value=current
                    prop:disabled=move || !can_change() || busy()
                    on:change=on_model
                >
                    {move || options().into_iter().map(|(value, label, unavailable)| {
                        let text = match &unavailable { Some(why) => format!("{label} ({why})"), None => label };
                        let selected = value == current();
                        view! { <option value=value disabled=unavailable.is_some() selected=selected>{text}</option> }
                    }).collect_view()}
                </select>
            </label>
            <Show when=move || settings.with(|s| s.offers_effort())>
                <label class="run-settings__field">
                    <span class="run-settings__name">"Thinking"</span>
                    <select
                        data-testid="thinking-picker"
                        prop:value=move || settings.with(|s| s.thinking.clone().unwrap_or_default())
                        prop:disabled=move || !can_change() || busy()
                        on:change=on_level
                    >
                        <option value=DEFAULT_LEVEL selected=move || settings.with(|s| s.thinking.is_none())>
                            {move || settings.with(|s| match &s.thinking_default {
                                Some(d) => format!("Default ({d})"),
                                None => "Default".to_string(),
                            })}
                        </option>
                        {move || settings.with(|s| s.levels.clone()).into_iter().map(|l| {
                            let selected = settings.with(|s| s.thinking.as_deref() == Some(l.id.as_str()));
                            view! { <option value=l.id.clone() selected=selected>{l.label}</option> }
                        }).collect_view()}
                    </select>
                </label>
            </Show>
            {move || usage.with(|u| u.summary().map(|text| {
                let percent = u.percent();
                view! {
                    <span class="run-settings__usage" data-testid="context-usage">
                        {percent.map(|p| view! { <meter class=meter_class min="0" max="100" value=p.to_string() aria-label="Context used"></meter> })}
                        <span>{text}</span>
                    </span>
                }
            }))}
            {move || usage.with(|u| u.last_run_summary()).map(|t| view! {
                <span class="run-settings__run" data-testid="last-run-usage">{t}</span>
            })}
            {move || match patch.get() {
                PatchState::Sending(c) => Some(view! {
                    <span class="run-settings__status" role="status" data-testid="settings-status">{format!("{}… Sending waits for it.", capitalise(&c.describe()))}</span>
                }.into_any()),
                PatchState::Failed { change, reason } => Some(view! {
                    <span class="run-settings__status run-settings__status--failed" role="alert" data-testid="settings-status">
                        {format!("Not changed ({}): {reason}", change.describe())}
                    </span>
                }.into_any()),
                PatchState::Idle => None,
            }}
            {move || match ctl.models.get() {
                Models::Failed(e) => Some(view! { <span class="run-settings__status" data-testid="models-failed">{format!("The model list could not be read: {e}")}</span> }),
                _ => None,
            }}
        </div>
    }
}

/// The first letter in capitals (the words are ours, and ASCII: no Unicode case tables).
fn capitalise(s: &str) -> String {
    let mut out = s.to_string();
    if let Some(first) = out.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    out
}
