//! The connection form: the gateway token and, optionally, another gateway URL.

use leptos::prelude::*;

use crate::io::gateway_client::{GatewayClient, Status};

/// Asks for the gateway token (when it was rejected or is missing) and lets the person
/// point the UI at another gateway. The token goes to `sessionStorage` only.
#[component]
pub fn ConnectForm(
    /// Called after the form was submitted or dismissed.
    #[prop(into)]
    on_done: Callback<()>,
) -> impl IntoView {
    let client = expect_context::<GatewayClient>();
    let token = RwSignal::new(String::new());
    let url = RwSignal::new(client.url.get_untracked());
    let problem = RwSignal::new(None::<String>);
    let message = move || match client.status.get() {
        Status::NeedsToken { message } => Some(message),
        _ => None,
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let new_url = url.get_untracked().trim().to_string();
        if let Err(e) = model::url::check_gateway_url(&new_url) {
            problem.set(Some(e));
            return;
        }
        problem.set(None);
        let t = token.get_untracked();
        if !t.trim().is_empty() {
            crate::io::identity::set_session_token(&new_url, Some(t.trim()));
        }
        token.set(String::new());
        let other_gateway = model::url::normalize_gateway_url(&new_url) != model::url::normalize_gateway_url(&client.url.get_untracked());
        if other_gateway {
            // Chosen by hand: this tab's reloads stay on it. The page starts again on it, with
            // that gateway's own storage; nothing stored for this one goes along.
            crate::io::identity::set_chosen_gateway(Some(&new_url));
            if let Some(l) = crate::io::browser::location() {
                let _ = l.reload();
            }
            return;
        }
        client.set_url(new_url);
        on_done.run(());
    };
    view! {
        <form class="connect-form" on:submit=submit aria-labelledby="connect-form-title">
            <h2 id="connect-form-title">"Connect to a gateway"</h2>
            <Show when=move || message().is_some()>
                <p class="connect-form__problem" role="alert" data-testid="auth-problem">{message}</p>
            </Show>
            <label>
                <span>"Gateway token"</span>
                <input
                    type="password"
                    name="token"
                    autocomplete="off"
                    spellcheck="false"
                    prop:value=move || token.get()
                    on:input=move |ev| token.set(event_target_value(&ev))
                />
            </label>
            <label>
                <span>"Gateway URL"</span>
                <input
                    type="url"
                    name="gatewayUrl"
                    spellcheck="false"
                    prop:value=move || url.get()
                    on:input=move |ev| url.set(event_target_value(&ev))
                />
            </label>
            <Show when=move || problem.get().is_some()>
                <p class="connect-form__problem" role="alert">{move || problem.get()}</p>
            </Show>
            <p class="connect-form__hint">"The token is printed when the gateway starts. It is kept only in this tab."</p>
            <div class="connect-form__actions">
                <button type="submit">"Connect"</button>
                <Show when=move || message().is_none()>
                    <button type="button" on:click=move |_| on_done.run(())>"Cancel"</button>
                </Show>
            </div>
        </form>
    }
}
