//! A conversation's model, thinking level and usage (`model::run_settings`): the settings come
//! from its session row (the list's, kept live by `sessions.changed`), the choices from
//! `models.list {view: "configured"}` (read once a connection is up), and a change goes out as
//! `sessions.patch`; while it is on its way that conversation's sends wait.

use std::collections::HashMap;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::run_settings::{Change, ModelChoice, PatchState, Settings, Usage};
use serde_json::json;

use crate::io::gateway_client::{GatewayClient, RequestError, Status};
use crate::state::sessions::SessionsController;
use protocol::methods::method;

/// The models the gateway offers, once read.
#[derive(Debug, Clone, PartialEq)]
pub enum Models {
    NotRead,
    Reading,
    Read(Vec<ModelChoice>),
    Failed(String),
}

#[derive(Clone, Copy)]
pub struct RunSettingsController {
    pub models: RwSignal<Models>,
    /// Each conversation's patch in flight, or its last failure.
    pub patches: RwSignal<HashMap<String, PatchState>>,
    client: GatewayClient,
    sessions: SessionsController,
}

impl RunSettingsController {
    pub fn new(client: GatewayClient, sessions: SessionsController) -> Self {
        let this =
            RunSettingsController { models: RwSignal::new(Models::NotRead), patches: RwSignal::new(HashMap::new()), client, sessions };
        // A connection that ends with a patch unanswered holds no send; the next one reads the
        // models again (the gateway's catalogue may have changed meanwhile).
        Effect::new(move |_| {
            if client.status.get() != Status::Connected {
                this.patches.update(|p| p.values_mut().for_each(PatchState::lost));
                this.models.set(Models::NotRead);
            }
        });
        this
    }

    /// Reads the models once per connection (when a composer first shows them). Tracked: an
    /// effect calling it reads them once connected.
    pub fn read_models(&self) {
        if self.client.status.get() != Status::Connected || self.models.with(|m| *m != Models::NotRead) {
            return;
        }
        if !self.sessions.may(method::MODELS_LIST) {
            return;
        }
        self.models.set(Models::Reading);
        let this = *self;
        spawn_local(async move {
            let read = this.client.request(method::MODELS_LIST, json!({"view": "configured"})).await;
            this.models.set(match read {
                Ok(v) => Models::Read(model::run_settings::read_models(&v)),
                Err(e) => Models::Failed(e.to_string()),
            });
        });
    }

    /// `key`'s settings, or the agent's defaults for a conversation with no row yet (tracked).
    pub fn settings(&self, key: &str) -> Settings {
        self.sessions.list.with(|l| match l.get(key) {
            Some(r) if r.settings.model.is_some() => r.settings.clone(),
            _ => l.default_settings.clone(),
        })
    }

    /// `key`'s usage, measured against the list's default window when its row names none
    /// (tracked).
    pub fn usage(&self, key: &str) -> Usage {
        self.sessions.list.with(|l| l.get(key).map(|r| r.usage.clone().or_window(l.default_window)).unwrap_or_default())
    }

    /// `key`'s patch state (tracked).
    pub fn patch(&self, key: &str) -> PatchState {
        self.patches.with(|p| p.get(key).cloned().unwrap_or_default())
    }

    /// Whether a send in `key` must wait (untracked: asked by Send).
    pub fn holds(&self, key: &str) -> bool {
        self.patches.with_untracked(|p| p.get(key).is_some_and(PatchState::holds_sends))
    }

    /// Whether this connection may change settings (tracked).
    pub fn can_change(&self) -> bool {
        self.sessions.may(method::SESSIONS_PATCH)
    }

    /// Sends `change` for `key`, one at a time per conversation; the row takes what the gateway
    /// resolved, and `sessions.changed` follows.
    pub fn change(&self, key: &str, change: Change) {
        let key = key.to_string();
        let params = change.params(&key);
        let mut started = false;
        self.patches.update(|p| started = p.entry(key.clone()).or_default().start(change));
        if !started {
            return;
        }
        let this = *self;
        spawn_local(async move {
            let answer = this.client.request(method::SESSIONS_PATCH, params).await;
            let answer = answer.as_ref().map_err(|e| match e {
                RequestError::Disconnected => "the connection closed before the gateway answered".to_string(),
                RequestError::Gateway(_) => e.to_string(),
            });
            let mut settings = this.sessions.list.with_untracked(|l| l.get(&key).map(|r| r.settings.clone()).unwrap_or_default());
            let mut state = this.patches.with_untracked(|p| p.get(&key).cloned().unwrap_or_default());
            state.settle(answer, &mut settings);
            this.sessions.list.update(|l| {
                if let Some(row) = l.rows.iter_mut().find(|r| r.key == key) {
                    row.settings = settings;
                }
            });
            this.patches.update(|p| {
                p.insert(key, state);
            });
        });
    }
}
