//! The conversation's sub-agents, under its header (`state::tasks`): each task it started, with
//! its state and how long it has run, the tool it is using, **Stop** for a running one (only that
//! one), and **Open** for the conversation where it works. Shown only when there are any.

use std::time::Duration;

use leptos::prelude::*;

use crate::io::browser;
use crate::state::chat::ChatController;
use crate::state::sessions::SessionsController;
use crate::state::tasks::TasksController;
use model::tasks::TaskList;

#[component]
pub fn TasksPanel() -> impl IntoView {
    let tasks = expect_context::<TasksController>();
    let chat = expect_context::<ChatController>();
    let client = expect_context::<crate::io::gateway_client::GatewayClient>();
    // Read when the pane shows a conversation, and on each connection.
    Effect::new(move |_| {
        let _ = client.connected_epoch.get();
        tasks.load(&chat.session.get());
    });
    let list = Memo::new(move |_| tasks.lists.with(|l| l.get(&chat.session.get()).cloned().unwrap_or_default()));
    // A clock for "running for …", ticking only while one runs.
    let now = RwSignal::new(browser::now_ms());
    let ticking = StoredValue::new_local(None::<IntervalHandle>);
    Effect::new(move |_| {
        let running = list.with(|l| l.running() > 0);
        ticking.update_value(|t| {
            if let Some(h) = t.take() {
                h.clear();
            }
            if running {
                // Set now as well: a clock made before the task started would read it as
                // running for no time until its first tick.
                now.set(browser::now_ms());
                *t = set_interval_with_handle(move || now.set(browser::now_ms()), Duration::from_secs(1)).ok();
            }
        });
    });
    on_cleanup(move || {
        ticking.update_value(|t| {
            if let Some(h) = t.take() {
                h.clear();
            }
        })
    });
    let shown = Memo::new(move |_| list.with(|l| !l.tasks.is_empty()));
    move || shown.get().then(|| crate::components::on_use::on_use(panel(list, now)))
}

crate::components::on_use::split! { conversation_tools,
    /// The list, its code fetched the first time a conversation has sub-agents
    /// (`components::on_use`).
    fn panel(list: Memo<TaskList>, now: RwSignal<f64>) -> AnyView {
        let tasks = expect_context::<TasksController>();
        let chat = expect_context::<ChatController>();
        let sessions = expect_context::<SessionsController>();
        (move || {
            let l = list.get();
            (!l.tasks.is_empty()).then(|| {
                let heading = match l.running() {
                    0 => "Sub-agents".to_string(),
                    1 => "Sub-agents: 1 running".to_string(),
                    n => format!("Sub-agents: {n} running"),
                };
                let rows = l
                    .tasks
                    .into_iter()
                    .map(|t| {
                        let id = StoredValue::new(t.id.clone());
                        let state = {
                            let t = t.clone();
                            move || t.state_words(now.get())
                        };
                        let tool = t.tool.clone().filter(|_| t.is_active()).map(|tool| format!(" · using {tool}"));
                        let said = move || tasks.said.with(|s| s.as_ref().filter(|(i, _)| id.with_value(|x| x == i)).map(|(_, w)| w.clone()));
                        let stop = (t.is_active() && tasks.may_stop()).then(|| {
                            view! {
                                <button type="button" disabled=move || tasks.stopping.with(|s| id.with_value(|x| s.contains(x))) on:click=move |_| tasks.stop(&id.get_value())>
                                    "Stop"
                                </button>
                            }
                        });
                        let open = t.child.clone().map(|child| {
                            view! { <button type="button" on:click=move |_| sessions.open_in(chat, &child)>"Open"</button> }
                        });
                        view! {
                            <li class="tasks__task" data-testid="task" data-status=t.status.clone()>
                                <span class="tasks__title">{t.title.clone()}</span>
                                <span class="tasks__state" data-testid="task-state">{state}{tool}</span>
                                {t.error.clone().map(|e| view! { <span class="tasks__error">{e}</span> })}
                                <span class="tasks__buttons">{stop}{open}</span>
                                <span role="status" class="tasks__said">{said}</span>
                            </li>
                        }
                    })
                    .collect_view();
                view! {
                    <details class="tasks" open data-testid="tasks-panel">
                        <summary>{heading}</summary>
                        <ul class="tasks__list" role="list">{rows}</ul>
                    </details>
                }
            })
        })
        .into_any()
    }
}
