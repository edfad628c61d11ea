//! The compact summary a question leaves in the conversation: the full wording and how it
//! ended. Unsent text of an expired or cancelled question stays copyable.

use leptos::prelude::*;
use model::dock::{Outcome, Receipt};

crate::components::on_use::split! { transcript_parts,
    /// A receipt, its code fetched with the first one the page shows (`components::on_use`).
    pub fn receipt(receipt: Receipt) -> AnyView {
        view! { <QuestionReceipt receipt=receipt/> }.into_any()
    }
}

/// One receipt. All agent text is rendered as text.
#[component]
pub fn QuestionReceipt(
    /// The summary to show.
    receipt: Receipt,
) -> impl IntoView {
    let answers = match &receipt.outcome {
        Outcome::Answered { answers } | Outcome::AnsweredElsewhere { answers } => Some(answers.clone()),
        _ => None,
    };
    let unsent = receipt.unsent_text.clone();
    let kind = match receipt.outcome {
        Outcome::Answered { .. } => "answered",
        Outcome::AnsweredElsewhere { .. } => "answered-elsewhere",
        Outcome::Skipped | Outcome::SkippedElsewhere => "skipped",
        Outcome::Expired => "expired",
        _ => "unavailable",
    };
    let copied = RwSignal::new(false);
    view! {
        <article class="receipt" data-outcome=kind data-testid="question-receipt" data-question-id=receipt.id.clone()>
            <p class="receipt__status">{receipt.outcome.label()}</p>
            {receipt.questions.is_empty().then(|| view! { <p class="receipt__wording">"This question is no longer known to the gateway."</p> })}
            <dl class="receipt__list">
                {receipt.questions.iter().map(|q| {
                    let given = answers.as_ref().and_then(|a| a.answers.get(&q.question_id)).map(|v| v.join(", "));
                    view! {
                        <div class="receipt__item">
                            <dt class="receipt__wording">
                                {(!q.header.trim().is_empty()).then(|| view! { <span class="receipt__chip">{q.header.clone()}</span> })}
                                {q.question.clone()}
                            </dt>
                            <dd class="receipt__answer">{given.unwrap_or_else(|| "—".into())}</dd>
                        </div>
                    }
                }).collect_view()}
            </dl>
            {receipt.unsent_held.then(|| view! {
                <p class="receipt__unsent" role="note">"What you typed here looked like a credential, so it is not kept with this receipt."</p>
            })}
            {(!unsent.is_empty()).then(|| {
                let text = StoredValue::new(unsent.clone());
                view! {
                    <div class="receipt__unsent">
                        <label>
                            <span>"Your unsent answer"</span>
                            <textarea readonly rows="2">{unsent}</textarea>
                        </label>
                        <button type="button" on:click=move |_| {
                            if let Some(w) = web_sys::window() {
                                let _ = w.navigator().clipboard().write_text(&text.get_value());
                                copied.set(true);
                            }
                        }>{move || if copied.get() { "Copied" } else { "Copy text" }}</button>
                    </div>
                }
            })}
        </article>
    }
}
