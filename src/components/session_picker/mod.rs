//! Choosing the conversation. The choice lives in the URL (`?session=`).

use leptos::prelude::*;

use crate::state::chat::ChatController;

/// A labelled select of the gateway's sessions (plus the current one if it is new).
#[component]
pub fn SessionPicker() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let options = Memo::new(move |_| {
        let current = chat.session.get();
        let mut list: Vec<(String, String)> =
            chat.sessions.with(|rows| rows.iter().map(|r| (r.key.clone(), r.title().to_string())).collect());
        if !current.is_empty() && !list.iter().any(|(k, _)| *k == current) {
            list.insert(0, (current, String::new()));
        }
        list
    });
    view! {
        <label class="session-picker">
            <span>"Conversation"</span>
            <select on:change=move |ev| chat.session.set(event_target_value(&ev))>
                // Each option knows whether it is the current one: a `value` on the select would
                // be lost when the list changes under it (the browser then selects the first).
                <For
                    each=move || options.get()
                    key=|(k, t)| format!("{k}\u{1f}{t}")
                    children=move |(key, title)| {
                        let text = if title.is_empty() { key.clone() } else { format!("{title} ({key})") };
                        let this = key.clone();
                        view! { <option value=key prop:selected=move || chat.session.with(|s| *s == this)>{text}</option> }.into_any()
                    }
                />
            </select>
        </label>
    }
}
