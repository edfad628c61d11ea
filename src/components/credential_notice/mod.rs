//! The notice shown instead of sending an answer that looks like a credential: what was
//! recognised, why it matters, where credentials belong, and **Edit** or **Send anyway**, which
//! takes a second, deliberate click.

use leptos::prelude::*;
use model::credential::CredentialMatch;

/// Held-answer notice. `confirming` is set after the first **Send anyway**.
#[component]
pub fn CredentialNotice(
    /// What the guard recognised (its preview never repeats the value).
    found: CredentialMatch,
    /// Whether Send anyway was pressed once: then the final confirmation is offered.
    confirming: bool,
    /// Back to the text, to change it.
    #[prop(into)]
    on_edit: Callback<()>,
    /// The first Send anyway: asks for the confirmation.
    #[prop(into)]
    on_send_anyway: Callback<()>,
    /// The second, deliberate action: sends the text as it is.
    #[prop(into)]
    on_confirm: Callback<()>,
) -> impl IntoView {
    // On a phone the notice can open below the fold: bring it, and its buttons, into view.
    let notice = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        if let Some(el) = notice.get() {
            el.scroll_into_view_with_bool(false);
        }
    });
    view! {
        <div class="credential-notice" role="alert" data-testid="credential-held" node_ref=notice>
            <p class="credential-notice__title">
                {format!("Not sent: this looks like {} ({}).", found.kind.describe(), found.preview)}
            </p>
            <p>
                "Answers go into the conversation's transcript and the agent's context, and stay there. "
                "If the agent needs a credential, ask it to request one with the secrets tool: the value then goes straight into the gateway's secret store and never enters the chat."
            </p>
            {if confirming {
                view! {
                    <div class="credential-notice__actions">
                        <span>"Send it to the agent as it is? This cannot be taken back."</span>
                        <button type="button" on:click=move |_| on_edit.run(())>"Cancel"</button>
                        <button type="button" class="credential-notice__danger" on:click=move |_| on_confirm.run(())>"Yes, send it"</button>
                    </div>
                }.into_any()
            } else {
                view! {
                    <div class="credential-notice__actions">
                        <button type="button" class="credential-notice__edit" on:click=move |_| on_edit.run(())>"Edit"</button>
                        <button type="button" on:click=move |_| on_send_anyway.run(())>"Send anyway"</button>
                    </div>
                }.into_any()
            }}
        </div>
    }
}
