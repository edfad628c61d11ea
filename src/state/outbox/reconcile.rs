//! Saved history decides: after a (re)connect, after a send the connection cut off, and when a
//! run ends, unsent rows are checked against `chat.history` before anything is sent again.

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::outbox::{OutboxRow, SendState, confirm_from_history};
use serde_json::{Value, json};

use super::OutboxController;
use crate::io::gateway_client::Status;

impl OutboxController {
    /// Confirms rows that saved history now shows.
    pub fn confirm(&self, messages: &[Value]) {
        let mut rows = self.rows.get_untracked();
        let ids = confirm_from_history(&mut rows, messages);
        if ids.is_empty() {
            return;
        }
        for id in ids {
            let this = *self;
            spawn_local(async move {
                this.change(&id, |r| {
                    let was = r.state.clone();
                    r.state = SendState::Confirmed;
                    was != SendState::Confirmed
                })
                .await;
            });
        }
        self.edits.with_value(|e| e.set(e.get() + 1));
        self.rows.set(rows);
    }

    /// Checks unsent rows against history again: now if connected (after a short pause, so
    /// the gateway has saved what it received), else on the next connect.
    pub(super) fn schedule_reconcile(&self) {
        self.reconciling.set(true);
        if self.client.status.get_untracked() == Status::Connected {
            let this = *self;
            set_timeout(
                move || {
                    if this.client.status.get_untracked() == Status::Connected {
                        spawn_local(async move { this.reconcile().await });
                    }
                },
                std::time::Duration::from_millis(700),
            );
        }
    }

    /// After a reconnect: history first, then requeue what history does not have.
    pub(super) async fn reconcile(self) {
        let sessions: Vec<String> = self.rows.with_untracked(|rows| {
            let mut s: Vec<String> = rows.iter().filter(|r| r.is_unsent()).map(|r| r.session_key.clone()).collect();
            s.sort_unstable();
            s.dedup();
            s
        });
        for session in sessions {
            let Ok(h) = self.client.request(protocol::methods::method::CHAT_HISTORY, json!({"sessionKey": session, "limit": 200})).await
            else {
                self.reconciling.set(false);
                return;
            };
            let held = self.apply_history(&session, &h).await;
            let ids: Vec<String> = self.rows.with_untracked(|rows| {
                rows.iter().filter(|r| r.session_key == session && r.is_unsent() && !held.contains(&r.id)).map(|r| r.id.clone()).collect()
            });
            for id in ids {
                self.change(&id, |r| {
                    let before = r.state.clone();
                    r.requeue_after_reconcile();
                    r.state != before
                })
                .await;
            }
        }
        self.reconciling.set(false);
        self.kick();
    }

    /// Confirms rows from a `chat.history` page and reads its `pendingInputs`: an input the
    /// gateway still holds for an active run is accepted (not lost); one whose run ended
    /// before handling it was not delivered, and says so. Returns the ids the gateway holds.
    pub(super) async fn apply_history(&self, session: &str, h: &Value) -> Vec<String> {
        let messages: Vec<Value> = h.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
        self.confirm(&messages);
        let items: Vec<Value> = h.get("pendingInputs").and_then(|p| p.get("items")).and_then(Value::as_array).cloned().unwrap_or_default();
        let mut held = Vec::new();
        let rows: Vec<OutboxRow> =
            self.rows.with_untracked(|rows| rows.iter().filter(|r| r.session_key == session && r.is_unsent()).cloned().collect());
        for row in rows {
            let Some(item) = items.iter().find(|i| {
                i.get("runId").and_then(Value::as_str) == Some(row.idempotency_key.as_str())
                    || protocol::frame::compact(i).contains(&row.idempotency_key)
            }) else {
                continue;
            };
            held.push(row.id.clone());
            if item.get("state").and_then(Value::as_str) == Some("interrupted") {
                self.change(&row.id, |r| {
                    if matches!(r.state, SendState::Failed { .. } | SendState::Confirmed) {
                        return false;
                    }
                    let reason = "the gateway took it while a run was active, and that run ended before handling it (interrupted). Discard puts the text back to send it again.".to_string();
                    r.last_error = Some(reason.clone());
                    r.state = SendState::Failed { reason };
                    true
                })
                .await;
            } else {
                self.change(&row.id, |r| {
                    let before = r.state.clone();
                    if matches!(r.state, SendState::WaitingReconnect | SendState::Queued) {
                        r.state = SendState::AwaitingConfirmation;
                    }
                    r.state != before
                })
                .await;
            }
        }
        held
    }

    /// When a run of a session ends, rows awaiting confirmation there are checked again.
    pub(super) fn recheck_after_run(&self, session: String) {
        let waiting =
            self.rows.with_untracked(|rows| rows.iter().any(|r| r.session_key == session && r.state == SendState::AwaitingConfirmation));
        if !waiting || !self.leader.get_untracked() {
            return;
        }
        let this = *self;
        set_timeout(
            move || {
                spawn_local(async move {
                    if let Ok(h) =
                        this.client.request(protocol::methods::method::CHAT_HISTORY, json!({"sessionKey": session, "limit": 200})).await
                    {
                        this.apply_history(&session, &h).await;
                    }
                })
            },
            std::time::Duration::from_millis(500),
        );
    }
}
