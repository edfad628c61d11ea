//! The command palette's list (`model::commands`): `commands.list` of a conversation, read the
//! first time a person types `/` in it and kept for the connection; the page's own `/new` and
//! `/stop` are always there, even before (or without) the gateway's answer.

use std::collections::HashMap;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::commands::{Command, page_commands, read_list};
use protocol::methods::method;
use serde_json::json;

use crate::io::gateway_client::{GatewayClient, RequestError, Status};

/// Where a conversation's list is.
#[derive(Clone, PartialEq)]
pub enum Listed {
    Loading,
    Ready(Vec<Command>),
    Failed(String),
}

#[derive(Clone, Copy)]
pub struct CommandsController {
    client: GatewayClient,
    lists: RwSignal<HashMap<String, Listed>>,
}

impl CommandsController {
    pub fn new(client: GatewayClient) -> Self {
        let this = CommandsController { client, lists: RwSignal::new(HashMap::new()) };
        // Another connection (a reconnect, another gateway) may offer other commands.
        Effect::new(move |_| {
            if client.status.get() != Status::Connected {
                this.lists.update(HashMap::clear);
            }
        });
        this
    }

    /// The commands of `session` (tracked): the gateway's once read, the page's own until then.
    pub fn commands(&self, session: &str) -> Vec<Command> {
        self.lists.with(|l| match l.get(session) {
            Some(Listed::Ready(list)) => list.clone(),
            _ => page_commands(),
        })
    }

    /// What the palette says about the gateway's list, while it is not there.
    pub fn note(&self, session: &str) -> Option<String> {
        self.lists.with(|l| match l.get(session) {
            Some(Listed::Loading) => Some("Reading the gateway's commands…".into()),
            Some(Listed::Failed(why)) => Some(format!("Only this page's commands: the gateway's could not be read ({why}).")),
            _ => None,
        })
    }

    /// Reads `session`'s list unless it is read or on its way. A conversation the gateway has
    /// no row for yet (a main conversation before its first message) gets the agent's list.
    pub fn want(&self, session: &str) {
        if session.is_empty()
            || self.client.status.get_untracked() != Status::Connected
            || self.lists.with_untracked(|l| l.contains_key(session))
        {
            return;
        }
        if !protocol::methods::access(method::COMMANDS_LIST, &self.client.scopes()).is_some_and(|a| a.is_ok()) {
            return;
        }
        self.lists.update(|l| {
            l.insert(session.to_string(), Listed::Loading);
        });
        let (this, session) = (*self, session.to_string());
        let agent = model::sessions::agent_of(&session);
        spawn_local(async move {
            let ask = |with_session: bool| {
                let mut p = json!({"agentId": agent, "includeArgs": true, "scope": "text"});
                if with_session {
                    p["sessionKey"] = json!(session);
                }
                this.client.request(method::COMMANDS_LIST, p)
            };
            let mut answer = ask(true).await;
            if matches!(&answer, Err(RequestError::Gateway(e)) if e.message == "Session not found.") {
                answer = ask(false).await;
            }
            let listed = match answer {
                Ok(v) => Listed::Ready(read_list(&v)),
                Err(e) => Listed::Failed(e.to_string()),
            };
            // Only if the list still waits for it (a disconnect meanwhile cleared it).
            this.lists.update(|l| {
                if let Some(slot @ Listed::Loading) = l.get_mut(&session) {
                    *slot = listed;
                }
            });
        });
    }
}
