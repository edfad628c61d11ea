//! Approvals' glue (`model::dock::approvals`): the gateway's approval lists, events and
//! history in, decisions out. They share the page's one dock with questions, so the arrows,
//! countdown, panes, title count and notifications treat them alike.
//!
//! A decision goes out once, through `approval.resolve` (one method for every kind, and its
//! answer names the decision that won), and only while connected. Nothing here queues one.

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::dock::Lookup;
use protocol::approval::{ApprovalEvent, ApprovalKind, Decision};
use serde_json::{Value, json};

use crate::io::browser;
use crate::io::gateway_client::{RequestError, Status};
use crate::state::dock::DockController;

/// How many finished approvals `approval.history` brings back per connect.
const HISTORY_ROWS: u32 = 50;

/// What the person may do with approvals on this connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalAccess {
    /// `operator.approvals` or admin.
    Decide,
    /// Neither: approvals are shown (when the gateway sends them) but cannot be decided.
    ReadOnly,
}

impl DockController {
    pub fn approval_access(&self) -> ApprovalAccess {
        if protocol::methods::can_decide_approvals(&self.client.scopes()) { ApprovalAccess::Decide } else { ApprovalAccess::ReadOnly }
    }

    pub(crate) fn wire_approvals(&self) {
        let this = *self;
        for kind in ApprovalKind::ALL {
            for event in kind.events() {
                let what = ApprovalKind::from_event(&event).map(|(_, e)| e);
                this.client.on_event(&event, move |p| {
                    let fx = match what {
                        Some(ApprovalEvent::Requested) => {
                            let typing = this.typing_in_dock.get_untracked() || this.typing_in_composer.get_untracked();
                            this.dock.try_update(|d| d.approval_requested(kind, p, typing)).unwrap_or_default()
                        }
                        _ => this.dock.try_update(|d| d.approval_resolved(p)).unwrap_or_default(),
                    };
                    this.run(fx);
                });
            }
        }
        Effect::new(move |_| {
            let _ = this.client.connected_epoch.get();
            let _ = this.client.resync_epoch.get();
            if this.client.status.get_untracked() == Status::Connected {
                spawn_local(async move { this.hydrate_approvals().await });
            }
        });
    }

    /// On every (re)connect: the three pending lists, the history of finished ones, and the
    /// approval a `/approve/<id>` link names.
    async fn hydrate_approvals(self) {
        if self.approval_access() == ApprovalAccess::ReadOnly {
            return;
        }
        for kind in ApprovalKind::ALL {
            match self.client.request(&kind.list_method(), json!({})).await {
                Ok(v) => {
                    let records = v.as_array().cloned().unwrap_or_default();
                    let fx = self.dock.try_update(|d| d.approvals_listed(kind, &records)).unwrap_or_default();
                    self.run(fx);
                }
                // An older gateway without this kind: the others still count.
                Err(e) => browser::log_warn(&format!("{} failed: {e}", kind.list_method())),
            }
        }
        match self.client.request(protocol::methods::method::APPROVAL_HISTORY, json!({ "limit": HISTORY_ROWS })).await {
            Ok(v) => {
                let rows = v.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
                let fx = self.dock.try_update(|d| d.approval_history(&rows)).unwrap_or_default();
                self.run(fx);
            }
            Err(e) => browser::log_warn(&format!("approval.history failed: {e}")),
        }
        if let Some(link) = crate::state::dock::deep_link_from_path().filter(|l| l.kind == model::url::RequestKind::Approval) {
            let known = self.dock.with_untracked(|d| d.entry(&link.id).is_some() || d.receipts.iter().any(|r| r.id == link.id));
            if !known {
                self.fetch_approval(link.id).await;
            }
        }
    }

    /// `approval.get`, for reconciliation and deep links.
    pub(crate) async fn fetch_approval(self, id: String) {
        let result = self.client.request(protocol::methods::method::APPROVAL_GET, json!({ "id": id })).await;
        let fx = match &result {
            Ok(v) => self.dock.try_update(|d| d.approval_got(&id, Lookup::Found(v))).unwrap_or_default(),
            Err(RequestError::Gateway(e)) if e.detail_reason() == Some("APPROVAL_NOT_FOUND") => {
                self.dock.try_update(|d| d.approval_got(&id, Lookup::Unknown)).unwrap_or_default()
            }
            Err(e) => {
                let msg = e.to_string();
                self.dock.try_update(|d| d.approval_got(&id, Lookup::Failed(&msg))).unwrap_or_default()
            }
        };
        self.run(fx);
    }

    /// The person decided. Sent at once, or refused in words on the card (offline, not
    /// offered, already sending); never kept for later.
    pub fn decide(&self, id: &str, decision: Decision) {
        let connected = self.client.status.get_untracked() == Status::Connected;
        let started = self.dock.try_update(|d| d.decide(id, decision, connected));
        let params = match started {
            Some(Ok(p)) => p,
            Some(Err(message)) => {
                self.announce.set(message.clone());
                self.dock.update(|d| d.refuse_decision(id, message));
                return;
            }
            None => return,
        };
        let this = *self;
        let id = id.to_string();
        spawn_local(async move {
            let result = this.client.request(protocol::methods::method::APPROVAL_RESOLVE, params).await;
            let fx = match result {
                Ok(v) => this.dock.try_update(|d| d.decide_ok(&id, decision, &v)).unwrap_or_default(),
                Err(RequestError::Gateway(e)) => this.dock.try_update(|d| d.decide_failed(&id, Some(&e), true)).unwrap_or_default(),
                Err(RequestError::Disconnected) => this.dock.try_update(|d| d.decide_failed(&id, None, connected)).unwrap_or_default(),
            };
            this.run(fx);
        });
    }
}
