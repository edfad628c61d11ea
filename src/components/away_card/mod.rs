//! "While you were away": what finished, what failed and what still waits, on return to the
//! page (`state::away`). Each conversation opens in the focused pane; the card is dismissible.

use leptos::prelude::*;
use model::away::AwayRow;

use crate::state::away::AwayController;
use crate::state::sessions::SessionsController;

fn rows(list: Vec<AwayRow>, sessions: SessionsController) -> impl IntoView {
    view! {
        <ul class="away__rows">
            {list.into_iter().map(|r| {
                let key = r.key.clone();
                view! {
                    <li>
                        <button type="button" class="away__open" on:click=move |_| sessions.open_in(sessions.focused(), &key)>{r.name}</button>
                        {r.error.map(|e| view! { <span class="away__error">{e}</span> })}
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

#[component]
pub fn AwayCard() -> impl IntoView {
    let Some(away) = use_context::<AwayController>() else { return ().into_any() };
    let shown = Memo::new(move |_| away.summary.with(Option::is_some));
    (move || shown.get().then(|| crate::components::on_use::on_use(card(away)))).into_any()
}

crate::components::on_use::split! { reach,
    /// The card, its code fetched the first time there is something to say (`components::on_use`).
    fn card(away: AwayController) -> AnyView {
        let sessions = expect_context::<SessionsController>();
        view! {
            {move || away.summary.get().map(|s| view! {
                <section class="away" role="region" aria-label="While you were away" data-testid="away-card">
                    <h2 class="away__title">"While you were away"</h2>
                    {(!s.finished.is_empty()).then(|| view! { <h3 class="away__kind">"Finished"</h3> {rows(s.finished, sessions)} })}
                    {(!s.failed.is_empty()).then(|| view! { <h3 class="away__kind">"Failed"</h3> {rows(s.failed, sessions)} })}
                    {(s.waiting > 0).then(|| view! {
                        <p class="away__waiting">{if s.waiting == 1 { "1 request still waits for your answer.".to_string() } else { format!("{} requests still wait for your answer.", s.waiting) }}</p>
                    })}
                    <button type="button" class="away__dismiss" on:click=move |_| away.dismiss()>"Dismiss"</button>
                </section>
            })}
        }
        .into_any()
    }
}
