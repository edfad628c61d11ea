//! Notifications with no tab open (Web Push through the gateway), per device: turn on (the
//! browser's permission is asked only by that click), what to be told of, a test, turn off.
//! Shown only to a connection that may use `push.web.*` (`operator.write`).

use leptos::prelude::*;
use model::push::PushState;
use protocol::push::Categories;

use crate::io::gateway_client::GatewayClient;
use crate::state::push::PushController;

type Pick = fn(&mut Categories) -> &mut bool;

/// The categories a person chooses from, in their words. The real gateway has no category of
/// its own for a secrets request (it is a question) nor for a failed run (failed background
/// and scheduled tasks are).
const CHOICES: &[(&str, Pick)] = &[
    ("Approvals", |c| &mut c.approval_requested),
    ("Questions and secrets requests", |c| &mut c.agent_question),
    ("Replies finished", |c| &mut c.agent_finished),
    ("Background tasks failed", |c| &mut c.background_task_failed),
    ("Scheduled tasks failed", |c| &mut c.scheduled_task_failed),
];

crate::components::on_use::split! { reach,
    /// The setting, its code fetched the first time the status bar's details are opened
    /// (`components::on_use`).
    pub fn settings() -> AnyView {
        view! { <PushSettings/> }.into_any()
    }
}

#[component]
pub fn PushSettings() -> impl IntoView {
    let Some(push) = use_context::<PushController>() else { return ().into_any() };
    let client = expect_context::<GatewayClient>();
    // What a connect did not read (this browser holds no subscription) is read once drawn.
    Effect::new(move |_| {
        let _ = client.status.get();
        if push.state.get() == PushState::Unknown {
            push.check();
        }
    });
    let may = move || client.scopes().iter().any(|s| s == protocol::methods::scope::WRITE || s == protocol::methods::scope::ADMIN);
    let busy = move || push.busy.get();
    let turn_on = move |label: &'static str| {
        view! { <button type="button" data-testid="push-on" disabled=busy on:click=move |_| push.turn_on()>{label}</button> }
    };
    let body = move || {
        match push.state.get() {
        PushState::Unknown => view! { <p class="push__note">"Checked once connected."</p> }.into_any(),
        PushState::Unavailable(why) | PushState::GatewayCannot(why) => {
            view! { <p class="push__note" data-testid="push-unavailable">{why}</p> }.into_any()
        }
        PushState::OtherGateway => view! {
            <p class="push__note" data-testid="push-other-gateway">"This browser's notifications come from another gateway. Turn them off there to use them here."</p>
        }
        .into_any(),
        PushState::Off => turn_on("Turn on notifications").into_any(),
        PushState::TurnOnAgain => view! {
            <p class="push__note" role="status" data-testid="push-again">"The gateway's notification key changed, so this device was unsubscribed."</p>
            {turn_on("Turn on again")}
        }
        .into_any(),
        PushState::On { .. } => view! {
            <fieldset class="push__categories" disabled=busy>
                <legend>"Tell me of"</legend>
                {CHOICES.iter().map(|(label, pick)| {
                    let pick = *pick;
                    view! {
                        <label>
                            <input type="checkbox" prop:checked=move || push.categories.with(|c| *pick(&mut c.clone()))
                                on:change=move |ev| { let on = event_target_checked(&ev); push.set_categories(move |c| *pick(c) = on) }/>
                            {*label}
                        </label>
                    }
                }).collect_view()}
            </fieldset>
            <div class="push__actions">
                <button type="button" disabled=busy on:click=move |_| push.send_test()>"Send a test notification"</button>
                <button type="button" data-testid="push-off" disabled=busy on:click=move |_| push.turn_off()>"Turn off"</button>
            </div>
        }
        .into_any(),
    }
    };
    view! {
        <Show when=may>
            <section class="push" aria-label="Notifications with no tab open" data-testid="push-settings">
                <h3 class="push__title">"Notifications with no tab open"</h3>
                {body}
                {move || push.message.get().map(|m| view! { <p class="push__note" role="status" data-testid="push-message">{m}</p> })}
            </section>
        </Show>
    }
    .into_any()
}
