//! What a secrets request tells the person before they give a value: who asks (the agent and
//! its conversation), the store entry's name, the agent's reason (in its own words, labelled as
//! its), whether an entry of that name exists, and the hosts the value may be sent to, as a list
//! the person edits. The value itself is typed in the question's masked field, never stored.

use leptos::prelude::*;
use model::draft::QuestionDraft;
use protocol::question::QuestionRecord;

/// The conversation a key names, in short (`agent:main:work` → `work`).
fn conversation(key: &str) -> &str {
    key.rsplit(':').next().unwrap_or(key)
}

/// An existing entry in words, from what the gateway says of it (`secretStoreExisting`).
fn existing_words(existing: &serde_json::Value) -> String {
    let text = |k: &str| existing.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let when =
        ["updatedAtMs", "updatedAt", "createdAtMs", "createdAt"].iter().find_map(|k| existing.get(*k).and_then(|v| v.as_f64())).map(|ms| {
            String::from(
                js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms)).to_locale_string("default", &wasm_bindgen::JsValue::UNDEFINED),
            )
        });
    let who = text("updatedBy").or_else(|| text("createdBy"));
    match (when, who) {
        (Some(w), Some(by)) => format!("An entry with this name exists (saved {w} by {by}): your value replaces it."),
        (Some(w), None) => format!("An entry with this name exists (saved {w}): your value replaces it."),
        (None, Some(by)) => format!("An entry with this name exists (saved by {by}): your value replaces it."),
        (None, None) => "An entry with this name exists: your value replaces it.".into(),
    }
}

crate::components::on_use::split! { requests,
    /// The secrets request's context and its allowed hosts, above the masked field.
    /// The prompt, its code fetched with the first secrets request the page shows
    /// (`components::on_use`).
    pub fn prompt(record: QuestionRecord, draft: RwSignal<QuestionDraft>, editable: bool) -> AnyView {
        view! { <SecretRequest record=record draft=draft editable=editable/> }.into_any()
    }
}

#[component]
pub fn SecretRequest(
    record: QuestionRecord,
    draft: RwSignal<QuestionDraft>,
    /// The person may change the hosts (they can answer this request).
    editable: bool,
) -> impl IntoView {
    let Some(question) = record.questions.iter().find(|q| q.secret_store.is_some()).cloned() else {
        return ().into_any();
    };
    let store = question.secret_store.clone().unwrap_or_else(|| unreachable!("found above"));
    let asker = match (&record.agent_id, &record.session_key) {
        (Some(a), Some(k)) => format!("Agent {a}, in conversation {}", conversation(k)),
        (Some(a), None) => format!("Agent {a}"),
        (None, Some(k)) => format!("A client, in conversation {}", conversation(k)),
        (None, None) => "A client of this gateway (no agent or conversation named)".into(),
    };
    let existing = match &question.secret_store_existing {
        Some(v) if !v.is_null() && v != &serde_json::Value::Bool(false) => existing_words(v),
        _ => "No entry with this name is stored yet: your value creates it.".into(),
    };
    let record = StoredValue::new(record);
    let hosts = Memo::new(move |_| record.with_value(|r| draft.with(|d| d.hosts(r))));
    let adding = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    let add = move || {
        let host = adding.get_untracked();
        let mut result = Ok(());
        record.with_value(|r| draft.update(|d| result = d.add_host(r, &host)));
        match result {
            Ok(()) => {
                adding.set(String::new());
                problem.set(None);
            }
            Err(why) => problem.set(Some(why)),
        }
    };
    view! {
        <section class="secret-request" aria-label="Secret request" data-testid="secret-request">
            <dl class="secret-request__facts">
                <dt>"Asked by"</dt><dd data-testid="secret-asker">{asker}</dd>
                <dt>"Entry"</dt><dd><code data-testid="secret-name">{store.name.clone()}</code>{(store.kind != "secret").then(|| format!(" ({})", store.kind))}</dd>
                {store.reason.clone().filter(|r| !r.trim().is_empty()).map(|reason| view! {
                    <dt>"The agent's reason"</dt><dd data-testid="secret-reason"><q>{reason}</q></dd>
                })}
                <dt>"Stored"</dt><dd data-testid="secret-existing">{existing}</dd>
            </dl>
            <fieldset class="secret-request__hosts" data-testid="secret-hosts">
                <legend>"The value may be sent only to these hosts"</legend>
                <Show when=move || hosts.with(Vec::is_empty)>
                    <p class="secret-request__none">"No host: the value cannot be sent anywhere."</p>
                </Show>
                <ul>
                    {move || hosts.get().into_iter().map(|host| {
                        let h = StoredValue::new(host.clone());
                        view! {
                            <li>
                                <code dir="ltr">{host.clone()}</code>
                                {editable.then(|| view! {
                                    <button type="button" class="secret-request__remove" aria-label=format!("Remove {host}")
                                        on:click=move |_| record.with_value(|r| draft.update(|d| d.remove_host(r, &h.get_value())))>
                                        "Remove"
                                    </button>
                                })}
                            </li>
                        }
                    }).collect_view()}
                </ul>
                {editable.then(|| view! {
                    <div class="secret-request__add">
                        <label>
                            <span class="sr-only">"Host to allow"</span>
                            <input type="text" placeholder="api.example.com" autocomplete="off" spellcheck="false" dir="ltr"
                                prop:value=move || adding.get()
                                on:input=move |ev| adding.set(event_target_value(&ev))
                                on:keydown=move |ev: web_sys::KeyboardEvent| {
                                    // Enter adds the host; it never submits the secret.
                                    if ev.key() == "Enter" {
                                        ev.prevent_default();
                                        ev.stop_propagation();
                                        add();
                                    }
                                }/>
                        </label>
                        <button type="button" on:click=move |_| add()>"Allow host"</button>
                    </div>
                })}
                {move || problem.get().map(|p| view! { <p class="secret-request__problem" role="alert" data-testid="secret-host-problem">{p}</p> })}
            </fieldset>
        </section>
    }
    .into_any()
}
