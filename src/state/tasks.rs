//! A conversation's sub-agents (`model::tasks`): `tasks.list {sessionKey}` when a pane shows the
//! conversation (and again on each connection), kept live by the `task` events, and Stop for one
//! of them (`tasks.cancel {taskId}`), which leaves the conversation and the others running.

use std::collections::HashMap;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::tasks::{Task, TaskEvent, TaskList};
use protocol::methods::method;
use serde_json::{Value, json};

use crate::io::gateway_client::{GatewayClient, Status};

#[derive(Clone, Copy)]
pub struct TasksController {
    client: GatewayClient,
    /// By the conversation that started them.
    pub lists: RwSignal<HashMap<String, TaskList>>,
    /// Stops on their way, and what a refused one said: `(task id, words)`.
    pub stopping: RwSignal<Vec<String>>,
    pub said: RwSignal<Option<(String, String)>>,
}

impl TasksController {
    pub fn new(client: GatewayClient) -> Self {
        let this = TasksController {
            client,
            lists: RwSignal::new(HashMap::new()),
            stopping: RwSignal::new(Vec::new()),
            said: RwSignal::new(None),
        };
        client.on_event("task", move |p| match model::tasks::read_event(p) {
            Some(TaskEvent::Upserted(t)) => this.put(t),
            Some(TaskEvent::Deleted(id)) => this.lists.update(|l| l.values_mut().for_each(|list| list.remove(&id))),
            Some(TaskEvent::Restored) => {
                for key in this.lists.with_untracked(|l| l.keys().cloned().collect::<Vec<_>>()) {
                    this.load(&key);
                }
            }
            None => {}
        });
        this
    }

    fn put(&self, task: Task) {
        self.lists.update(|l| l.entry(task.requester.clone()).or_default().put(task));
    }

    /// Whether sub-agents `session` started are working (tracked).
    pub fn running(&self, session: &str) -> bool {
        self.lists.with(|l| l.get(session).is_some_and(|t| t.running() > 0))
    }

    pub fn may_list(&self) -> bool {
        matches!(protocol::methods::access(method::TASKS_LIST, &self.client.scopes()), Some(Ok(_)))
    }

    pub fn may_stop(&self) -> bool {
        matches!(protocol::methods::access(method::TASKS_CANCEL, &self.client.scopes()), Some(Ok(_)))
    }

    /// Reads `session`'s tasks (its running ones and its latest ended ones).
    pub fn load(&self, session: &str) {
        if session.is_empty() || self.client.status.get_untracked() != Status::Connected || !self.may_list() {
            return;
        }
        let (this, session) = (*self, session.to_string());
        spawn_local(async move {
            match this.client.request(method::TASKS_LIST, json!({"sessionKey": session, "limit": 50})).await {
                Ok(v) => {
                    let list = TaskList::read(&v);
                    this.lists.update(|l| {
                        l.insert(session, list);
                    });
                }
                // A conversation the gateway has no row for yet has no tasks either.
                Err(e) => crate::io::browser::log_warn(&format!("tasks.list failed: {e}")),
            }
        });
    }

    /// Stops one task; its conversation and the others go on.
    pub fn stop(&self, id: &str) {
        if self.stopping.with_untracked(|s| s.iter().any(|x| x == id)) {
            return;
        }
        self.stopping.update(|s| s.push(id.to_string()));
        let (this, id) = (*self, id.to_string());
        spawn_local(async move {
            let answer = this.client.request(method::TASKS_CANCEL, json!({"taskId": id})).await;
            this.stopping.update(|s| s.retain(|x| *x != id));
            match answer {
                Ok(v) => {
                    if let Some(t) = v.get("task").and_then(Task::read) {
                        this.put(t);
                    }
                    if v.get("cancelled").and_then(Value::as_bool) != Some(true) {
                        let why = v.get("reason").and_then(Value::as_str).unwrap_or("the gateway did not stop it");
                        this.said.set(Some((id, format!("Not stopped: {why}."))));
                    }
                }
                Err(e) => this.said.set(Some((id, format!("Not stopped: {e}")))),
            }
        });
    }
}
