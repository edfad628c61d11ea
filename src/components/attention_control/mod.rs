//! The opt-in for desktop notifications and the title's count of async questions, in the
//! status area. The browser's permission prompt only ever comes from a click here.

use leptos::prelude::*;
use model::attention::NotifyChoice;

use crate::state::attention::Attention;

/// Notification and tab-title preferences for this gateway. Reads [`Attention`] from context
/// (and shows nothing without it, as in a status bar on its own).
#[component]
pub fn AttentionControl() -> impl IntoView {
    let Some(a) = use_context::<Attention>() else { return ().into_any() };
    let on = move || a.settings.with(|s| s.notify == NotifyChoice::On) && a.permission.get() == "granted";
    let button = move || {
        match a.permission.get().as_str() {
        "unsupported" => view! { <span class="attention__note">"This browser cannot show notifications."</span> }.into_any(),
        "denied" => view! { <span class="attention__note" data-testid="notifications-blocked">"Notifications are blocked in this browser's site settings."</span> }.into_any(),
        _ if on() => view! {
            <button type="button" aria-pressed="true" data-testid="notifications-toggle" on:click=move |_| a.turn_off()>"Question notifications: on"</button>
        }.into_any(),
        _ => view! {
            <button type="button" aria-pressed="false" data-testid="notifications-toggle" on:click=move |_| a.ask_permission()>"Notify me of questions"</button>
        }.into_any(),
    }
    };
    view! {
        <div class="attention" role="group" aria-label="Question alerts">
            {button}
            <label class="attention__async">
                <input
                    type="checkbox"
                    prop:checked=move || a.settings.with(|s| s.count_async)
                    on:change=move |ev| a.set_count_async(event_target_checked(&ev))
                />
                "Count async questions in the tab title"
            </label>
        </div>
    }
    .into_any()
}
