//! The draining tab's sender: one due row at a time, marked Sending in storage before it goes,
//! so a reload never sends it blindly again.

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::outbox::{OutboxRow, SendResult, SendState, next_to_send, read_send_response};
use protocol::chat::ChatSendParams;
use serde_json::Value;

use super::{OutboxController, stale_ms};
use crate::io::browser;
use crate::io::gateway_client::{RequestError, Status};

impl OutboxController {
    /// Sends whatever is due, one row at a time, if this tab leads and is connected.
    pub fn kick(&self) {
        if !self.leader.get_untracked()
            || self.reconciling.get_untracked()
            || self.client.status.get_untracked() != Status::Connected
            || self.client.identity_held.get_untracked().is_some()
        {
            return;
        }
        let flag = self.draining.get_value();
        if flag.get() {
            return;
        }
        flag.set(true);
        let this = *self;
        spawn_local(async move {
            this.drain().await;
            flag.set(false);
        });
    }

    async fn drain(self) {
        let stale = stale_ms();
        loop {
            if self.client.status.get_untracked() != Status::Connected || self.client.identity_held.get_untracked().is_some() {
                return;
            }
            let now = browser::now_ms();
            let Some(next) = self.rows.with_untracked(|rows| next_to_send(rows, now, stale).cloned()) else { return };
            if self.editing.with_value(|e| e.contains(&next.id)) {
                // Being edited here: neither it nor what is queued behind it goes meanwhile.
                return;
            }
            // Storage records Sending first, so a reload can never send it blindly again,
            // and a row discarded in another tab is never picked up.
            let Some(row) = self.change(&next.id, move |r| r.begin_send(now, stale)).await else {
                // Someone else changed it; look again with fresh rows.
                let fresh = self
                    .rows
                    .with_untracked(|rows| rows.iter().find(|r| r.id == next.id).map(|r| r.state == SendState::Queued && !r.discarded));
                if fresh == Some(true) {
                    // Storage refused the change but memory still says Queued: storage is
                    // behind (another tab); reload and stop this round.
                    return;
                }
                continue;
            };
            // Files are read now, not when queued: the bytes are in storage, and base64 of
            // every queued file would sit in memory for nothing.
            let attachments = match self.wire_attachments(&row).await {
                Ok(wire) => wire,
                Err(reason) => {
                    self.refuse(&row.id, reason).await;
                    continue;
                }
            };
            let params = serde_json::to_value(ChatSendParams {
                session_key: row.session_key.clone(),
                message: row.text.clone(),
                idempotency_key: row.idempotency_key.clone(),
                agent_id: None,
                queue_mode: row.queue_mode.clone(),
                reply_to_id: row.reply_to_id.clone(),
                timeout_ms: None,
                deliver: None,
                thinking: None,
                attachments,
            })
            .unwrap_or_default();
            let result = match self.client.request(protocol::methods::method::CHAT_SEND, params).await {
                Ok(v) => read_send_response(true, Some(&v), None, None),
                Err(RequestError::Gateway(e)) => read_send_response(false, None, Some(&e.message), Some(&e.code)),
                Err(RequestError::Disconnected) => SendResult::Unknown,
            };
            let refused = matches!(result, SendResult::Refused(_));
            let unknown = matches!(result, SendResult::Unknown);
            self.change(&row.id, move |r| {
                r.finish_send(result);
                true
            })
            .await;
            if unknown {
                // The connection dropped with this send unanswered. Whether or not the page
                // has reconnected by now, history decides before anything else is sent.
                self.schedule_reconcile();
                return;
            }
            if refused {
                continue;
            }
        }
    }

    /// A row's files as `chat.send` carries them, base64. An error says why the row cannot be
    /// sent as it is: a file that is gone or unreadable, or a frame over the gateway's limit.
    async fn wire_attachments(&self, row: &OutboxRow) -> Result<Vec<Value>, String> {
        let files = self.row_files(row).await?;
        let mut wire = Vec::with_capacity(files.len());
        for f in &files {
            let content = browser::blob_base64(&f.blob)
                .await
                .map_err(|e| format!("a file could not be read from this browser's storage ({e}); the message is not sent without it"))?;
            wire.push(f.meta.to_wire(&content));
        }
        // The whole frame must fit the gateway's `maxPayload`, or it closes the connection, and
        // the resend after reconnecting would be closed again.
        let limit =
            self.client.hello.with_untracked(|h| h.as_ref().and_then(|h| h.max_payload)).unwrap_or(protocol::MAX_PAYLOAD_BYTES as u64);
        let encoded: Vec<usize> = wire.iter().map(|w| w["content"].as_str().map_or(0, str::len)).collect();
        model::attachment::check_frame(&row.text, &encoded, limit)?;
        Ok(wire)
    }

    /// The row is not sent: it fails with `reason`, for the person to Discard or fix.
    async fn refuse(&self, id: &str, reason: String) {
        self.change(id, move |r| {
            r.finish_send(SendResult::Refused(reason));
            true
        })
        .await;
    }
}
