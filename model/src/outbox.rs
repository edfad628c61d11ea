//! The outbox: every message a person sends, from the moment they press Send until the
//! gateway's saved history holds it. Never lost, never sent twice, never sent without the
//! person meaning it.
//!
//! Rules that keep those promises:
//! - a row keeps one `idempotencyKey` for life: every resend is the same message;
//! - a row is sent only from `Queued`, and only after storage recorded `Sending`;
//! - after a reload, a row found `Sending` is `AwaitingConfirmation`, and history is checked
//!   before anything is sent again;
//! - a row older than the stale age is never sent automatically;
//! - a discarded row is a tombstone that no sender will pick up.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::attachment::AttachmentMeta;

/// Where a row stands. Stored inside the row as `state` (plus `reason` when failed); see
/// [`OutboxRowStored`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendState {
    Queued,
    Sending,
    /// The connection dropped with the send unanswered; history decides after reconnect.
    WaitingReconnect,
    /// The gateway accepted it; saved history does not show it yet.
    AwaitingConfirmation,
    Confirmed,
    Failed {
        reason: String,
    },
}

impl SendState {
    /// Changes whenever what a row shows changes: the state, and a failure's reason.
    pub fn key(&self) -> String {
        match self {
            SendState::Failed { reason } => format!("failed:{reason}"),
            other => other.label().to_string(),
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            SendState::Queued => "Queued",
            SendState::Sending => "Sending…",
            SendState::WaitingReconnect => "Waiting for reconnect",
            SendState::AwaitingConfirmation => "Awaiting confirmation",
            SendState::Confirmed => "Sent",
            SendState::Failed { .. } => "Not sent",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
/// Stored through [`OutboxRowStored`].
#[serde(from = "OutboxRowStored", into = "OutboxRowStored")]
pub struct OutboxRow {
    pub id: String,
    pub session_key: String,
    pub text: String,
    pub idempotency_key: String,
    pub created_ms: f64,
    /// FIFO position within the session.
    pub order: u64,
    pub state: SendState,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub reply_to_id: Option<String>,
    /// `steer` for answers sent while a run is active.
    pub queue_mode: Option<String>,
    /// The async question this row answers, if any.
    pub async_item_id: Option<String>,
    /// Set by Retry: a person asked for this send, so age no longer holds it back.
    pub retry_requested_ms: Option<f64>,
    /// Discarded: never sent again; kept briefly so every tab and sender sees it.
    pub discarded: bool,
    /// When the text was last edited in the outbox.
    pub edited_ms: Option<f64>,
    /// Why the row's idempotency key is not the one it was queued with, if it is not.
    pub key_note: Option<String>,
    /// Files sent with the text; their bytes are Blobs stored beside the row.
    pub attachments: Vec<AttachmentMeta>,
}

/// The name of a [`SendState`] as stored.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum StateName {
    Queued,
    Sending,
    WaitingReconnect,
    AwaitingConfirmation,
    Confirmed,
    Failed,
}

/// An [`OutboxRow`] as stored in IndexedDB: the state is the flat pair `state` and `reason`.
/// Written out rather than with `#[serde(flatten)]` and an internally tagged enum, which
/// make serde buffer every row through its generic `Content` tree (several KB of wasm); the
/// JSON is the same either way.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OutboxRowStored {
    id: String,
    session_key: String,
    text: String,
    idempotency_key: String,
    created_ms: f64,
    order: u64,
    state: StateName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default)]
    attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reply_to_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    queue_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    async_item_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_requested_ms: Option<f64>,
    #[serde(default)]
    discarded: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    edited_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_note: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    attachments: Vec<AttachmentMeta>,
}

impl From<OutboxRowStored> for OutboxRow {
    fn from(s: OutboxRowStored) -> OutboxRow {
        let state = match s.state {
            StateName::Queued => SendState::Queued,
            StateName::Sending => SendState::Sending,
            StateName::WaitingReconnect => SendState::WaitingReconnect,
            StateName::AwaitingConfirmation => SendState::AwaitingConfirmation,
            StateName::Confirmed => SendState::Confirmed,
            StateName::Failed => SendState::Failed { reason: s.reason.unwrap_or_default() },
        };
        OutboxRow {
            id: s.id,
            session_key: s.session_key,
            text: s.text,
            idempotency_key: s.idempotency_key,
            created_ms: s.created_ms,
            order: s.order,
            state,
            attempts: s.attempts,
            last_error: s.last_error,
            reply_to_id: s.reply_to_id,
            queue_mode: s.queue_mode,
            async_item_id: s.async_item_id,
            retry_requested_ms: s.retry_requested_ms,
            discarded: s.discarded,
            edited_ms: s.edited_ms,
            key_note: s.key_note,
            attachments: s.attachments,
        }
    }
}

impl From<OutboxRow> for OutboxRowStored {
    fn from(r: OutboxRow) -> OutboxRowStored {
        let settled = r.discarded || r.state == SendState::Confirmed;
        let (state, reason) = match r.state {
            SendState::Queued => (StateName::Queued, None),
            SendState::Sending => (StateName::Sending, None),
            SendState::WaitingReconnect => (StateName::WaitingReconnect, None),
            SendState::AwaitingConfirmation => (StateName::AwaitingConfirmation, None),
            SendState::Confirmed => (StateName::Confirmed, None),
            SendState::Failed { reason } => (StateName::Failed, Some(reason)),
        };
        // A settled row's text leaves the browser's storage: a confirmed one is in the
        // gateway's transcript, a discarded one went back to the draft or was meant to go.
        // The row stays a while (its id, key and state) so every tab and sender sees it settled.
        OutboxRowStored {
            id: r.id,
            session_key: r.session_key,
            text: if settled { String::new() } else { r.text },
            idempotency_key: r.idempotency_key,
            created_ms: r.created_ms,
            order: r.order,
            state,
            reason,
            attempts: r.attempts,
            last_error: r.last_error,
            reply_to_id: r.reply_to_id,
            queue_mode: r.queue_mode,
            async_item_id: r.async_item_id,
            retry_requested_ms: r.retry_requested_ms,
            discarded: r.discarded,
            edited_ms: r.edited_ms,
            key_note: r.key_note,
            attachments: r.attachments,
        }
    }
}

/// The default age after which a row waits for an explicit Retry.
pub const DEFAULT_STALE_MS: f64 = 24.0 * 3600.0 * 1000.0;

impl OutboxRow {
    /// The order rows are sent and listed in. Every place that sorts rows names this one key,
    /// so the browser build carries one copy of the sort.
    pub fn queue_order(&self) -> u64 {
        self.order
    }

    pub fn new(id: &str, session_key: &str, text: &str, idempotency_key: &str, now_ms: f64, order: u64) -> OutboxRow {
        OutboxRow {
            id: id.into(),
            session_key: session_key.into(),
            text: text.into(),
            idempotency_key: idempotency_key.into(),
            created_ms: now_ms,
            order,
            state: SendState::Queued,
            attempts: 0,
            last_error: None,
            reply_to_id: None,
            queue_mode: None,
            async_item_id: None,
            retry_requested_ms: None,
            discarded: false,
            edited_ms: None,
            key_note: None,
            attachments: Vec::new(),
        }
    }

    /// How a person recognises the row: its first line, or, for files sent without words,
    /// their names.
    pub fn title(&self, max: usize) -> String {
        let text = crate::preview(&self.text, max);
        if !text.is_empty() || self.attachments.is_empty() {
            return text;
        }
        let names: Vec<&str> = self.attachments.iter().map(|a| a.file_name.as_str()).collect();
        protocol::frame::truncate(&names.join(", "), max)
    }

    pub fn is_unsent(&self) -> bool {
        !self.discarded && self.state != SendState::Confirmed
    }

    pub fn is_stale(&self, now_ms: f64, stale_ms: f64) -> bool {
        self.retry_requested_ms.is_none() && now_ms - self.created_ms > stale_ms
    }

    /// The key the gateway saves the user row under.
    pub fn saved_key(&self) -> String {
        format!("{}:user", self.idempotency_key)
    }

    pub fn can_discard(&self) -> bool {
        !self.discarded && !matches!(self.state, SendState::Confirmed | SendState::Sending)
    }

    /// Edit is offered only while the gateway has certainly not taken the row: queued (never
    /// sent, held back as stale, or put back after history showed the gateway does not have
    /// it) or refused. Never while it is being sent, accepted and awaiting confirmation, or
    /// unanswered when the connection dropped (`WaitingReconnect`: it may have arrived).
    pub fn can_edit(&self) -> bool {
        !self.discarded && matches!(self.state, SendState::Queued | SendState::Failed { .. })
    }

    pub fn can_retry(&self) -> bool {
        !self.discarded && matches!(self.state, SendState::Failed { .. } | SendState::Queued | SendState::WaitingReconnect)
    }
}

/// What the status line of a row says: its state, plus why it is held back.
pub fn describe(row: &OutboxRow, rows: &[OutboxRow], now_ms: f64, stale_ms: f64) -> String {
    if let SendState::Failed { reason } = &row.state {
        return format!("Not sent: {reason}");
    }
    if row.state == SendState::Queued {
        if row.is_stale(now_ms, stale_ms) {
            // Whole hours as an integer: formatting an f64 would link its Display (about 4 KB).
            let hours = ((now_ms - row.created_ms) / 3_600_000.0).max(0.0) as u64;
            return format!("Held: written {hours} h ago, so it is not sent without you. Retry to send it now.");
        }
        if let Some(blocker) = blocker(row, rows) {
            return format!("Queued behind “{}”, which is not sent yet", blocker.title(40));
        }
    }
    row.state.label().to_string()
}

/// The earlier row of the same session that holds this one back, if any.
pub fn blocker<'a>(row: &OutboxRow, rows: &'a [OutboxRow]) -> Option<&'a OutboxRow> {
    rows.iter()
        .filter(|r| r.session_key == row.session_key && r.order < row.order && !r.discarded)
        .filter(|r| matches!(r.state, SendState::Queued | SendState::Sending | SendState::WaitingReconnect | SendState::Failed { .. }))
        .min_by_key(|r| r.order)
}

/// The next row to send: the oldest unsent row of each session, if it is `Queued`, not
/// stale, and nothing earlier in its session is still unsettled.
pub fn next_to_send(rows: &[OutboxRow], now_ms: f64, stale_ms: f64) -> Option<&OutboxRow> {
    let mut sessions: Vec<&str> = rows.iter().map(|r| r.session_key.as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    let mut candidates: Vec<&OutboxRow> = Vec::new();
    for s in sessions {
        let head = rows
            .iter()
            .filter(|r| r.session_key == s && !r.discarded)
            .filter(|r| matches!(r.state, SendState::Queued | SendState::Sending | SendState::WaitingReconnect | SendState::Failed { .. }))
            .min_by_key(|r| r.order);
        if let Some(h) = head {
            if h.state == SendState::Queued && !h.is_stale(now_ms, stale_ms) {
                candidates.push(h);
            }
        }
    }
    candidates.into_iter().min_by(|a, b| a.created_ms.total_cmp(&b.created_ms))
}

/// How a send ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SendResult {
    /// The gateway took it (`started`, `in_flight`, `ok`, or a run that failed or was aborted
    /// after the message was saved).
    Accepted,
    /// Not connected when we tried: nothing left this browser.
    NotSent,
    /// The connection dropped after the frame left: the gateway may or may not have it.
    Unknown,
    /// The gateway refused it; the reason is in words.
    Refused(String),
}

/// Reads a `chat.send` response (payload or error) as a [`SendResult`].
pub fn read_send_response(ok: bool, payload: Option<&Value>, error_message: Option<&str>, error_code: Option<&str>) -> SendResult {
    let status = payload.and_then(|p| p.get("status")).and_then(Value::as_str);
    if ok || matches!(status, Some("started" | "in_flight" | "ok" | "error" | "aborted")) {
        return SendResult::Accepted;
    }
    let msg = error_message.unwrap_or("the gateway refused the message");
    match error_code {
        Some("FORBIDDEN") => SendResult::Refused(format!("{msg}. This connection may not send messages here.")),
        _ => SendResult::Refused(msg.to_string()),
    }
}

impl OutboxRow {
    /// Queued → Sending. Returns false if the row may not be sent (discarded, not queued).
    pub fn begin_send(&mut self, now_ms: f64, stale_ms: f64) -> bool {
        if self.discarded || self.state != SendState::Queued || self.is_stale(now_ms, stale_ms) {
            return false;
        }
        self.state = SendState::Sending;
        self.attempts += 1;
        true
    }

    pub fn finish_send(&mut self, result: SendResult) {
        if self.discarded || self.state == SendState::Confirmed {
            return;
        }
        match result {
            SendResult::Accepted => {
                self.state = SendState::AwaitingConfirmation;
                self.last_error = None;
            }
            SendResult::NotSent => {
                self.state = SendState::Queued;
                self.last_error = Some("Not connected to the gateway; it is sent after reconnecting.".into());
            }
            SendResult::Unknown => {
                self.state = SendState::WaitingReconnect;
                self.last_error = Some("The connection dropped before the gateway answered.".into());
            }
            SendResult::Refused(reason) => {
                self.last_error = Some(reason.clone());
                self.state = SendState::Failed { reason };
            }
        }
    }

    /// A row found `Sending` after a reload or crash: its frame may have left. Treat it as
    /// accepted-but-unconfirmed; history decides before any resend.
    pub fn recover_after_reload(&mut self) {
        if self.state == SendState::Sending {
            self.state = SendState::AwaitingConfirmation;
        }
    }

    /// After a reconnect and a history check that did not find the row: rows whose fate was
    /// unknown go back to the queue, with the same key (the gateway's dedupe catches a
    /// message it already has).
    pub fn requeue_after_reconcile(&mut self) {
        if matches!(self.state, SendState::WaitingReconnect | SendState::AwaitingConfirmation) {
            self.state = SendState::Queued;
        }
    }

    /// Retry: the same row and the same key, now (even when stale).
    pub fn retry(&mut self, now_ms: f64) -> bool {
        if !self.can_retry() {
            return false;
        }
        self.state = SendState::Queued;
        self.retry_requested_ms = Some(now_ms);
        true
    }

    /// Edit: new text in the same place of the queue, sent as soon as it is due (the person
    /// just looked at it, so age no longer holds it back). A row that was ever attempted gets
    /// `fresh_key`: the gateway ties the old key to the old text and would take a resend with
    /// it as the old message. An async answer keeps its `reply_to_id`.
    pub fn edit(&mut self, text: &str, fresh_key: &str, now_ms: f64) -> bool {
        // Files may go without words; words are what an edit changes.
        if !self.can_edit() || (text.trim().is_empty() && self.attachments.is_empty()) || text == self.text {
            return false;
        }
        if self.attempts > 0 {
            self.key_note = Some(format!(
                "New idempotency key: edited after {} attempt{} (the gateway ties the old key to the old text)",
                self.attempts,
                if self.attempts == 1 { "" } else { "s" }
            ));
            self.idempotency_key = fresh_key.to_string();
            self.attempts = 0;
        }
        self.text = text.to_string();
        self.state = SendState::Queued;
        self.last_error = None;
        self.retry_requested_ms = Some(now_ms);
        self.edited_ms = Some(now_ms);
        true
    }

    /// Discard: a tombstone no sender will pick up. Returns the text to put back as a draft.
    pub fn discard(&mut self) -> Option<String> {
        if !self.can_discard() {
            return None;
        }
        self.discarded = true;
        Some(self.text.clone())
    }
}

/// Marks rows confirmed by saved transcript messages. A message confirms a row when its
/// `__openclaw.idempotencyKey` (or top-level `idempotencyKey`) is the row's key (+`:user`);
/// without keys, when it is a user message with the same text and reply target that no
/// other row claimed. Returns the ids confirmed now.
pub fn confirm_from_history(rows: &mut [OutboxRow], messages: &[Value]) -> Vec<String> {
    let mut confirmed = Vec::new();
    let mut used = vec![false; messages.len()];
    let key_of = |m: &Value| -> Option<String> {
        m.get("__openclaw")
            .and_then(|o| o.get("idempotencyKey"))
            .or_else(|| m.get("idempotencyKey"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    for row in rows.iter_mut().filter(|r| r.state != SendState::Confirmed) {
        let saved = row.saved_key();
        if let Some(i) =
            messages.iter().enumerate().position(|(i, m)| !used[i] && key_of(m).is_some_and(|k| k == saved || k == row.idempotency_key))
        {
            used[i] = true;
            row.state = SendState::Confirmed;
            confirmed.push(row.id.clone());
        }
    }
    for row in rows.iter_mut().filter(|r| r.state != SendState::Confirmed && !r.discarded) {
        // Keyless fallback: only for messages that carry no key at all.
        let hit = messages.iter().enumerate().position(|(i, m)| {
            !used[i]
                && key_of(m).is_none()
                && m.get("role").and_then(Value::as_str) == Some("user")
                && crate::message_text(m) == row.text
                && m.get("__openclaw").and_then(|o| o.get("replyToId")).and_then(Value::as_str) == row.reply_to_id.as_deref()
        });
        if let Some(i) = hit {
            used[i] = true;
            row.state = SendState::Confirmed;
            confirmed.push(row.id.clone());
        }
    }
    confirmed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const STALE: f64 = DEFAULT_STALE_MS;

    #[test]
    fn edit_is_offered_only_while_the_gateway_certainly_has_not_taken_the_row() {
        let base = row("a", "s", 1, 0.0);
        let with = |state: SendState| OutboxRow { state, ..base.clone() };
        assert!(with(SendState::Queued).can_edit());
        assert!(with(SendState::Failed { reason: "refused".into() }).can_edit());
        for state in [SendState::Sending, SendState::WaitingReconnect, SendState::AwaitingConfirmation, SendState::Confirmed] {
            assert!(!with(state.clone()).can_edit(), "{state:?}");
        }
        assert!(!OutboxRow { discarded: true, ..base.clone() }.can_edit());
        // A stale row (held back by age) is still queued, so it can be edited, and the edit
        // lets it go.
        let mut stale = base.clone();
        assert!(stale.is_stale(STALE + 1.0, STALE));
        assert!(stale.edit("new words", "key-2", STALE + 1.0));
        assert!(!stale.is_stale(STALE + 2.0, STALE));
    }

    #[test]
    fn an_edited_row_keeps_its_place_and_changes_key_only_if_it_was_ever_attempted() {
        let mut never_sent = row("a", "s", 7, 0.0);
        assert!(never_sent.edit("edited", "fresh", 10.0));
        assert_eq!((never_sent.text.as_str(), never_sent.idempotency_key.as_str(), never_sent.order), ("edited", "key-a", 7));
        assert_eq!(never_sent.key_note, None);
        assert_eq!(never_sent.edited_ms, Some(10.0));

        let mut refused = row("b", "s", 8, 0.0);
        refused.reply_to_id = Some("async-1".into());
        assert!(refused.begin_send(1.0, STALE));
        refused.finish_send(SendResult::Refused("too long".into()));
        assert!(refused.edit("shorter", "fresh", 20.0));
        assert_eq!(refused.idempotency_key, "fresh");
        assert_eq!(refused.state, SendState::Queued);
        assert_eq!(refused.attempts, 0, "the new key was never sent");
        assert_eq!(refused.order, 8);
        assert_eq!(refused.reply_to_id.as_deref(), Some("async-1"), "an async answer keeps its question");
        assert!(refused.key_note.as_deref().is_some_and(|n| n.contains("edited after 1 attempt")), "{:?}", refused.key_note);
        // Editing it again before it is sent keeps the new key.
        assert!(refused.edit("shorter still", "fresher", 30.0));
        assert_eq!(refused.idempotency_key, "fresh");

        let mut same = row("c", "s", 9, 0.0);
        assert!(!same.edit("text c", "fresh", 1.0), "no change, no edit");
        assert!(!same.edit("   ", "fresh", 1.0), "no empty text");
        // The new fields survive storage, and rows written without them read as before.
        let json = serde_json::to_string(&refused).unwrap();
        assert_eq!(serde_json::from_str::<OutboxRow>(&json).unwrap(), refused);
        assert!(!serde_json::to_string(&same).unwrap().contains("editedMs"));
    }

    #[test]
    fn a_row_with_files_keeps_them_through_an_edit_and_may_lose_its_words() {
        use crate::attachment::AttachmentMeta;
        let mut r = row("a", "s", 1, 0.0);
        r.attachments = vec![AttachmentMeta { id: "f1".into(), file_name: "cat.png".into(), mime_type: "image/png".into(), size: 3 }];
        assert!(r.begin_send(1.0, STALE));
        r.finish_send(SendResult::Refused("too big".into()));
        assert!(r.edit("", "fresh", 2.0), "files alone are a message");
        assert_eq!((r.text.as_str(), r.attachments.len(), r.idempotency_key.as_str()), ("", 1, "fresh"));
        assert_eq!(r.title(40), "cat.png");
        let back: OutboxRow = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r, "files survive storage");
        assert!(!row("b", "s", 2, 0.0).edit(" ", "k", 1.0), "a row without files needs words");
        let stored = serde_json::to_string(&row("c", "s", 3, 0.0)).unwrap();
        assert!(!stored.contains("attachments"), "rows without files are stored as before: {stored}");
    }

    fn row(id: &str, session: &str, order: u64, now: f64) -> OutboxRow {
        OutboxRow::new(id, session, &format!("text {id}"), &format!("key-{id}"), now, order)
    }

    /// The stored JSON is byte for byte what earlier builds wrote (a flattened, internally
    /// tagged state), so rows already in IndexedDB read back unchanged.
    #[test]
    fn a_confirmed_or_discarded_row_is_stored_without_its_text() {
        let mut rows = vec![row("a", "s", 1, 1.0), row("b", "s", 2, 1.0), row("c", "s", 3, 1.0)];
        rows[0].state = SendState::Confirmed;
        rows[1].discarded = true;
        let stored: Vec<String> = rows.into_iter().map(|r| serde_json::to_string(&r).unwrap()).collect();
        assert!(stored[0].contains(r#""text":"","#), "{}", stored[0]);
        assert!(stored[1].contains(r#""text":"","#), "{}", stored[1]);
        assert!(stored[2].contains(r#""text":"text c""#), "an unsent row keeps its text: {}", stored[2]);
    }

    #[test]
    fn stored_rows_keep_their_json_form() {
        let mut r = row("a", "s", 3, 1.5);
        r.state = SendState::Failed { reason: "boom".into() };
        r.attempts = 2;
        let failed = r#"{"id":"a","sessionKey":"s","text":"text a","idempotencyKey":"key-a","createdMs":1.5,"order":3,"state":"failed","reason":"boom","attempts":2,"discarded":false}"#;
        assert_eq!(serde_json::to_string(&r).unwrap(), failed);
        assert_eq!(serde_json::from_str::<OutboxRow>(failed).unwrap(), r);
        for (state, name) in [
            (SendState::Queued, "queued"),
            (SendState::Sending, "sending"),
            (SendState::WaitingReconnect, "waitingReconnect"),
            (SendState::AwaitingConfirmation, "awaitingConfirmation"),
            (SendState::Confirmed, "confirmed"),
        ] {
            r.state = state.clone();
            let text = serde_json::to_string(&r).unwrap();
            assert!(text.contains(&format!(r#""order":3,"state":"{name}","attempts":2"#)), "{text}");
            assert_eq!(serde_json::from_str::<OutboxRow>(&text).unwrap().state, state);
        }
        let minimal =
            r#"{"id":"b","sessionKey":"s","text":"t","idempotencyKey":"k","createdMs":1,"order":1,"state":"queued","replyToId":"m1"}"#;
        let back = serde_json::from_str::<OutboxRow>(minimal).unwrap();
        assert_eq!((back.state, back.attempts, back.reply_to_id.as_deref(), back.discarded), (SendState::Queued, 0, Some("m1"), false));
        let err = serde_json::from_str::<OutboxRow>(
            r#"{"id":"b","sessionKey":"s","text":"t","idempotencyKey":"k","createdMs":1,"order":1,"state":"lost"}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown variant `lost`"), "{err}");
    }

    #[test]
    fn fifo_per_session_and_a_failed_head_holds_its_session_only() {
        let mut rows = vec![row("a1", "A", 1, 10.0), row("a2", "A", 2, 11.0), row("b1", "B", 3, 12.0)];
        assert_eq!(next_to_send(&rows, 100.0, STALE).unwrap().id, "a1");
        assert!(rows[0].begin_send(100.0, STALE));
        // a1 in flight: a2 waits, b1 may go.
        assert_eq!(next_to_send(&rows, 100.0, STALE).unwrap().id, "b1");
        rows[0].finish_send(SendResult::Refused("nope".into()));
        assert_eq!(describe(&rows[1], &rows, 100.0, STALE), "Queued behind “text a1”, which is not sent yet");
        assert_eq!(describe(&rows[0], &rows, 100.0, STALE), "Not sent: nope");
        rows[2].state = SendState::Confirmed;
        assert!(next_to_send(&rows, 100.0, STALE).is_none(), "a2 waits behind the failed a1");
        assert!(rows[0].retry(101.0));
        assert_eq!(next_to_send(&rows, 102.0, STALE).unwrap().id, "a1");
        assert_eq!(rows[0].idempotency_key, "key-a1", "Retry keeps the key");
    }

    #[test]
    fn accepted_rows_do_not_block_and_unknown_ones_do() {
        let mut rows = vec![row("a1", "A", 1, 10.0), row("a2", "A", 2, 11.0)];
        rows[0].begin_send(20.0, STALE);
        rows[0].finish_send(SendResult::Accepted);
        assert_eq!(rows[0].state, SendState::AwaitingConfirmation);
        assert_eq!(next_to_send(&rows, 20.0, STALE).unwrap().id, "a2");
        rows[0].state = SendState::WaitingReconnect;
        assert!(next_to_send(&rows, 20.0, STALE).is_none());
    }

    #[test]
    fn a_stale_row_is_never_sent_automatically_but_retry_sends_it() {
        let day = 24.0 * 3600.0 * 1000.0;
        let mut rows = vec![row("old", "A", 1, 0.0)];
        let now = 4.0 * day;
        assert!(next_to_send(&rows, now, STALE).is_none());
        assert!(!rows[0].begin_send(now, STALE));
        assert!(describe(&rows[0], &rows, now, STALE).starts_with("Held: written 96 h ago"));
        rows[0].retry(now);
        assert_eq!(next_to_send(&rows, now, STALE).unwrap().id, "old");
        assert!(rows[0].begin_send(now, STALE));
    }

    #[test]
    fn discard_is_a_tombstone_that_gives_the_text_back() {
        let mut r = row("a", "A", 1, 0.0);
        assert_eq!(r.discard().as_deref(), Some("text a"));
        assert!(!r.begin_send(1.0, STALE), "a discarded row is never sent");
        assert!(next_to_send(std::slice::from_ref(&r), 1.0, STALE).is_none());
        assert_eq!(r.discard(), None, "only once");
        let mut sending = row("b", "A", 2, 0.0);
        sending.begin_send(1.0, STALE);
        assert_eq!(sending.discard(), None, "not while the frame may be on the wire");
    }

    #[test]
    fn a_row_sending_at_reload_awaits_confirmation_and_history_decides() {
        let mut rows = vec![row("a", "A", 1, 0.0), row("b", "A", 2, 0.0)];
        rows[0].begin_send(1.0, STALE);
        rows[1].begin_send(1.0, STALE);
        for r in &mut rows {
            r.recover_after_reload();
        }
        assert!(rows.iter().all(|r| r.state == SendState::AwaitingConfirmation));
        let history = vec![json!({"role":"user","content":"text a","__openclaw":{"idempotencyKey":"key-a:user","id":"m1","seq":1}})];
        assert_eq!(confirm_from_history(&mut rows, &history), vec!["a".to_string()]);
        for r in &mut rows {
            r.requeue_after_reconcile();
        }
        assert_eq!(rows[0].state, SendState::Confirmed);
        assert_eq!(rows[1].state, SendState::Queued, "not in history: resent with the same key");
    }

    #[test]
    fn keyless_history_confirms_by_text_once() {
        let mut rows = vec![row("a", "A", 1, 0.0), row("b", "A", 2, 0.0)];
        rows[1].text = "text a".into();
        let history = vec![json!({"role":"user","content":"text a","__openclaw":{"id":"m1","seq":1}})];
        assert_eq!(confirm_from_history(&mut rows, &history), vec!["a".to_string()]);
        assert_eq!(rows[1].state, SendState::Queued, "one saved message confirms one row");
    }

    #[test]
    fn send_responses_are_read_as_accepted_or_refused() {
        assert_eq!(read_send_response(true, Some(&json!({"status":"started"})), None, None), SendResult::Accepted);
        assert_eq!(
            read_send_response(false, Some(&json!({"status":"error","summary":"x"})), Some("run failed"), Some("UNAVAILABLE")),
            SendResult::Accepted
        );
        assert!(
            matches!(read_send_response(false, None, Some("missing scope: operator.write"), Some("FORBIDDEN")), SendResult::Refused(m) if m.contains("may not send"))
        );
    }

    #[test]
    fn rows_round_trip_through_storage_json() {
        let mut r = row("a", "A", 1, 5.0);
        r.finish_send(SendResult::Refused("bad".into()));
        r.reply_to_id = Some("m9".into());
        let back: OutboxRow = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
