//! The outbox glue: rows in IndexedDB (memory when it fails), one draining tab elected by
//! a Web Lock, the others kept in step over a BroadcastChannel, and `chat.send` through the
//! gateway client. The rules themselves are in `model::outbox`.

use std::cell::Cell;
use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::attachment::{bytes_in_words, draft_owner};
use model::outbox::{DEFAULT_STALE_MS, OutboxRow, SendResult, SendState, confirm_from_history, next_to_send, read_send_response};
use protocol::chat::ChatSendParams;
use serde_json::{Value, json};

use crate::attachments::DraftFiles;
use crate::browser;
use crate::coordination::{Channel, lead, uuid};
use crate::gateway_client::{GatewayClient, RequestError, Status};
use crate::storage::{LocalDb, StoredFile, Write, is_quota_error};

const OUTBOX: &str = "outbox";

/// What the outbox tells other parts of the page.
#[derive(Clone, Copy)]
pub struct OutboxController {
    /// Every row this browser knows (discarded and old confirmed rows are pruned).
    pub rows: RwSignal<Vec<OutboxRow>>,
    /// Whether this tab drains the outbox.
    pub leader: RwSignal<bool>,
    /// Text given back by Discard, per session, for every open view to put in its composer.
    pub restored: RwSignal<Option<(String, String, u64)>>,
    client: GatewayClient,
    db: LocalDb,
    channel: StoredValue<Channel, LocalStorage>,
    draining: StoredValue<Rc<Cell<bool>>, LocalStorage>,
    /// Set after a (re)connect until unsent rows were checked against history.
    reconciling: RwSignal<bool>,
    /// Whether rows were loaded from storage at least once.
    loaded: StoredValue<bool>,
    /// Loads run one at a time: 0 idle, 1 running, 2 running and asked for again.
    loading: StoredValue<Rc<Cell<u8>>, LocalStorage>,
    /// Rows open in an editor in this tab: the sender waits for them (and for what is queued
    /// behind them) until the edit is saved or cancelled.
    editing: StoredValue<std::collections::BTreeSet<String>>,
    /// Counts edits of `rows` made outside a load, so that a load which read storage before
    /// an edit does not write the older rows back over it.
    edits: StoredValue<Rc<Cell<u64>>, LocalStorage>,
    /// Files of rows that storage could not keep (full, failing), by row id: this tab sends
    /// them from memory.
    memory_files: StoredValue<Vec<(String, Vec<StoredFile>)>, LocalStorage>,
    /// What could not be kept of a row's files, by row id, in words (this tab only: only this
    /// tab has them).
    pub not_kept: RwSignal<Vec<(String, String)>>,
    files: DraftFiles,
    /// Carries the Blobs of rows storage could not keep to the other tabs.
    file_channel: StoredValue<Channel, LocalStorage>,
}

/// Rows older than this wait for an explicit Retry. `localStorage["ocui.outbox.staleMs"]`
/// overrides the 24 h default.
pub fn stale_ms() -> f64 {
    browser::local_get("ocui.outbox.staleMs").and_then(|v| v.parse::<u64>().ok()).map_or(DEFAULT_STALE_MS, |ms| ms as f64)
}

impl OutboxController {
    pub fn new(client: GatewayClient, db: LocalDb, files: DraftFiles) -> OutboxController {
        let rows = RwSignal::new(Vec::<OutboxRow>::new());
        let restored = RwSignal::new(None);
        let reload = RwSignal::new(0u64);
        let channel = Channel::open("ocui-outbox", move |msg| match msg.get("type").and_then(Value::as_str) {
            Some("changed") => reload.update(|n| *n += 1),
            Some("restore") => {
                if let (Some(s), Some(t)) = (msg.get("session").and_then(Value::as_str), msg.get("text").and_then(Value::as_str)) {
                    restored.set(Some((s.to_string(), t.to_string(), browser::now_ms() as u64)));
                }
            }
            _ => {}
        });
        let c = OutboxController {
            rows,
            leader: RwSignal::new(false),
            restored,
            client,
            db,
            channel: StoredValue::new_local(channel),
            draining: StoredValue::new_local(Rc::new(Cell::new(false))),
            reconciling: RwSignal::new(true),
            loaded: StoredValue::new(false),
            loading: StoredValue::new_local(Rc::new(Cell::new(0))),
            editing: StoredValue::new(Default::default()),
            edits: StoredValue::new_local(Rc::new(Cell::new(0))),
            memory_files: StoredValue::new_local(Default::default()),
            not_kept: RwSignal::new(Default::default()),
            files,
            file_channel: StoredValue::new_local(Channel::unopened()),
        };
        // Another tab's row whose files storage could not keep: hold them here too, so that
        // whichever tab sends has them.
        let held = Channel::open_raw("ocui-outbox-files", move |data| {
            let Some(row) = js_sys::Reflect::get(&data, &"row".into()).ok().and_then(|r| r.as_string()) else { return };
            let list: js_sys::Array = js_sys::Reflect::get(&data, &"files".into()).map(Into::into).unwrap_or_default();
            let files: Vec<StoredFile> = list.iter().filter_map(|e| StoredFile::from_js(&e)).collect();
            if !files.is_empty() {
                c.hold_in_memory(&row, &files);
            }
        });
        c.file_channel.set_value(held);
        // Load from storage when it opens, and again whenever another tab changed it.
        Effect::new(move |_| {
            let opened = db.opened.get();
            let _ = reload.get();
            if opened > 0 {
                spawn_local(async move { c.load().await });
            }
        });
        lead("ocui-outbox-drain", move || {
            c.leader.set(true);
            // The new leader recovers rows a previous sender left mid-send, then drains.
            if db.opened.get_untracked() > 0 {
                spawn_local(async move { c.load().await });
            } else {
                c.kick();
            }
        });
        // After every (re)connect: check unsent rows against history, then send.
        Effect::new(move |_| {
            let _ = client.connected_epoch.get();
            if client.status.get_untracked() == Status::Connected {
                c.reconciling.set(true);
                spawn_local(async move { c.reconcile().await });
            }
        });
        client.on_event("chat", move |p| {
            let terminal = matches!(p.get("state").and_then(Value::as_str), Some("final" | "error" | "aborted"));
            if let (true, Some(s)) = (terminal, p.get("sessionKey").and_then(Value::as_str)) {
                c.recheck_after_run(s.to_string());
            }
        });
        client.on_event("session.message", move |p| {
            if let Some(m) = p.get("message") {
                c.confirm(std::slice::from_ref(m));
            }
        });
        c
    }

    /// Reads the rows from storage. A load asked for while one runs makes that one read again
    /// when it ends, so the last storage state always wins and two loads never interleave.
    async fn load(self) {
        let state = self.loading.get_value();
        if state.get() != 0 {
            state.set(2);
            return;
        }
        // Rows recovered from an interrupted send on a pass whose result was then dropped
        // still need their reconcile.
        let mut recovered = false;
        loop {
            state.set(1);
            let applied = self.load_once(&mut recovered).await;
            if applied && state.get() == 1 {
                state.set(0);
                return;
            }
        }
    }

    /// One read of storage into `rows`. Returns false, having changed nothing in memory, when
    /// `rows` was edited meanwhile (that edit may be newer than what was read): read again.
    async fn load_once(self, recovered: &mut bool) -> bool {
        let edits = self.edits.get_value();
        let edits_at_start = edits.get();
        let mut stored: Vec<OutboxRow> = self.db.get_all(OUTBOX).await.iter().filter_map(|(_, v)| crate::json::decode(v)).collect();
        if !self.db.is_healthy() {
            return true;
        }
        let leader = self.leader.get_untracked();
        // Rows only this tab has (written while storage was failing) go back to storage.
        let memory_only: Vec<OutboxRow> =
            self.rows.with_untracked(|mine| mine.iter().filter(|r| !stored.iter().any(|s| s.id == r.id)).cloned().collect());
        for r in memory_only {
            self.persist(&r).await;
            stored.push(r);
        }
        if leader && !self.draining.get_value().get() {
            // A row stuck in Sending with no sender alive was interrupted (reload, crash).
            for r in stored.iter_mut().filter(|r| r.state == SendState::Sending) {
                r.recover_after_reload();
                *recovered = true;
                let r = r.clone();
                self.persist(&r).await;
            }
        }
        if leader {
            // Settled rows need not stay: confirmed ones after an hour, discard tombstones
            // after a day (long after any sender could have seen the row).
            let now = browser::now_ms();
            let old: Vec<String> = stored
                .iter()
                .filter(|r| {
                    (r.state == SendState::Confirmed && now - r.created_ms > 3_600_000.0)
                        || (r.discarded && now - r.created_ms > 86_400_000.0)
                })
                .map(|r| r.id.clone())
                .collect();
            // Files of settled rows: a confirmed row's go. A discarded row's go back to its
            // conversation's draft: only found here when the tab that discarded it closed
            // before it moved them, so only when this page starts (a live tab moving them at
            // this moment is then not raced).
            let first = !self.loaded.get_value();
            for r in stored.iter().filter(|r| !r.attachments.is_empty() && (r.discarded || r.state == SendState::Confirmed)) {
                if r.discarded && first {
                    let files = self.db.files(&r.id).await;
                    if !files.is_empty() {
                        self.files.restore(&r.session_key, files, Some(r.id.clone())).await;
                        continue;
                    }
                }
                if r.state == SendState::Confirmed || old.contains(&r.id) {
                    let _ = self.db.write_all(vec![Write::DeleteFiles { owner: r.id.clone() }]).await;
                }
            }
            for id in &old {
                self.db.delete(OUTBOX, id).await;
            }
            stored.retain(|r| !old.contains(&r.id));
        }
        stored.sort_by_key(|r| r.order);
        if edits.get() != edits_at_start {
            return false;
        }
        let first_load = !self.loaded.get_value();
        self.loaded.set_value(true);
        // Files held in memory for rows that are settled or gone are let go.
        self.memory_files.update_value(|m| m.retain(|(id, _)| stored.iter().any(|r| r.id == *id && r.is_unsent())));
        let unsettled = stored.iter().any(|r| r.is_unsent());
        self.rows.set(stored);
        if (first_load && unsettled) || *recovered {
            // A reconcile that ran before the rows were loaded saw nothing: check again now.
            self.schedule_reconcile();
        } else {
            self.kick();
        }
        true
    }

    async fn persist(&self, row: &OutboxRow) -> bool {
        self.db.put(OUTBOX, &row.id, &crate::json::encode(row)).await
    }

    fn announce_change(&self) {
        self.channel.with_value(|c| c.post(&json!({"type": "changed"})));
    }

    fn set_row(&self, row: OutboxRow) {
        self.edits.with_value(|e| e.set(e.get() + 1));
        self.rows.update(|rows| match rows.iter_mut().find(|r| r.id == row.id) {
            Some(r) => *r = row,
            None => {
                rows.push(row);
                rows.sort_by_key(|r| r.order);
            }
        });
    }

    /// Adds a message to the outbox. It is stored before anything is sent.
    pub fn enqueue(
        &self,
        session: &str,
        text: &str,
        reply_to_id: Option<String>,
        queue_mode: Option<String>,
        async_item_id: Option<String>,
    ) -> String {
        let row = self.new_row(session, text, reply_to_id, queue_mode, async_item_id);
        let id = row.id.clone();
        self.set_row(row.clone());
        let this = *self;
        spawn_local(async move {
            this.persist(&row).await;
            this.announce_change();
            this.kick();
        });
        id
    }

    fn new_row(
        &self,
        session: &str,
        text: &str,
        reply_to_id: Option<String>,
        queue_mode: Option<String>,
        async_item_id: Option<String>,
    ) -> OutboxRow {
        let now = browser::now_ms();
        // Orders by time, with a random tail so two tabs never collide.
        let order = (now as u64) * 1000 + (js_sys::Math::random() * 999.0) as u64;
        let mut row = OutboxRow::new(&uuid(), session, text, &uuid(), now, order);
        row.reply_to_id = reply_to_id;
        row.queue_mode = queue_mode;
        row.async_item_id = async_item_id;
        row
    }

    /// Adds a message with files from a conversation's composer draft. The row and its files
    /// are stored in one transaction that also takes the files out of the draft, so they are
    /// never in both places and never in neither. When storage has no room, the row is stored
    /// without them, this tab keeps them and sends them, and the row says how much could not
    /// be kept.
    pub async fn enqueue_with_files(&self, session: &str, text: &str, files: Vec<StoredFile>) -> String {
        let mut row = self.new_row(session, text, None, None, None);
        row.attachments = files.iter().map(|f| f.meta.clone()).collect();
        let id = row.id.clone();
        let draft = draft_owner(session);
        // Exactly these files leave the draft: one attached meanwhile stays there.
        let leave_draft = || files.iter().map(|f| Write::Delete { store: crate::storage::FILES, key: f.meta.blob_key(&draft) });
        let mut writes = vec![Write::Put { store: OUTBOX, key: row.id.clone(), json: crate::json::encode(&row) }];
        writes.extend(leave_draft());
        writes.extend(files.iter().map(|f| Write::PutFile { owner: row.id.clone(), file: f.clone() }));
        let bytes = crate::storage::file_bytes(&writes);
        let stored = if self.db.is_healthy() { self.db.write_all(writes).await } else { Err(String::new()) };
        if let Err(e) = stored {
            self.hold_in_memory(&id, &files);
            // Whichever tab sends (the one holding the outbox lock) needs the bytes: every
            // open tab of this page gets a copy of the Blobs (the browser shares, not copies,
            // their bytes).
            let message = js_sys::Object::new();
            let list = js_sys::Array::new();
            for f in &files {
                list.push(&f.to_js());
            }
            let _ = js_sys::Reflect::set(&message, &"row".into(), &id.as_str().into());
            let _ = js_sys::Reflect::set(&message, &"files".into(), &list);
            self.file_channel.with_value(|c| c.post_raw(&message));
            if !e.is_empty() {
                let why = if is_quota_error(&e) { "this browser's storage is full" } else { "this browser's storage is not working" };
                let n = files.len();
                self.not_kept.update(|k| {
                    k.push((
                        id.clone(),
                        format!(
                            "{} ({}) could not be saved with this message, because {why} ({e}). The open tabs of this page keep {} and send the message; if they all close first, the message is not sent without {}.",
                            if n == 1 { "1 file".to_string() } else { format!("{n} files") },
                            bytes_in_words(bytes),
                            if n == 1 { "it" } else { "them" },
                            if n == 1 { "it" } else { "them" },
                        ),
                    ));
                });
                // The text (and which files it had) is still kept, and the draft lets go of
                // the files this row now holds.
                let mut text_only = vec![Write::Put { store: OUTBOX, key: row.id.clone(), json: crate::json::encode(&row) }];
                text_only.extend(leave_draft());
                if self.db.write_all(text_only).await.is_err() {
                    self.db.fail(e);
                }
            }
        }
        self.set_row(row);
        self.announce_change();
        self.kick();
        id
    }

    fn hold_in_memory(&self, row: &str, files: &[StoredFile]) {
        self.memory_files.update_value(|m| {
            m.retain(|(id, _)| id != row);
            m.push((row.to_string(), files.to_vec()));
        });
    }

    /// A row's files with their bytes: this tab's own, else storage's. An error names the
    /// first one that is in neither.
    async fn row_files(&self, row: &OutboxRow) -> Result<Vec<StoredFile>, String> {
        if row.attachments.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(files) = self.memory_files.with_value(|m| m.iter().find(|(id, _)| *id == row.id).map(|(_, f)| f.clone())) {
            return Ok(files);
        }
        let stored = self.db.files(&row.id).await;
        row.attachments
            .iter()
            .map(|meta| {
                stored.iter().find(|f| f.meta.id == meta.id).cloned().ok_or_else(|| {
                    format!(
                        "{} ({}) is not kept in this browser any more (its storage was full or cleared), and the message is not sent without it. Discard puts the message back in the composer; attach the file again there.",
                        meta.file_name,
                        bytes_in_words(meta.size)
                    )
                })
            })
            .collect()
    }

    /// A discarded row's files go back to its conversation's draft, moved in one transaction;
    /// any this browser no longer has are named there.
    async fn give_back_files(&self, row: &OutboxRow) {
        let mut found =
            self.memory_files.with_value(|m| m.iter().find(|(id, _)| *id == row.id).map(|(_, f)| f.clone())).unwrap_or_default();
        if found.is_empty() {
            found = self.db.files(&row.id).await;
        }
        let missing: Vec<String> = row
            .attachments
            .iter()
            .filter(|a| !found.iter().any(|f| f.meta.id == a.id))
            .map(|a| format!("{} ({})", a.file_name, bytes_in_words(a.size)))
            .collect();
        self.files.restore(&row.session_key, found, Some(row.id.clone())).await;
        if !missing.is_empty() {
            self.files.note_missing(&row.session_key, &missing);
        }
        self.forget_files(row);
    }

    /// The files of a row that is settled (confirmed, discarded) go.
    fn forget_files(&self, row: &OutboxRow) {
        if row.attachments.is_empty() {
            return;
        }
        self.memory_files.update_value(|m| m.retain(|(id, _)| *id != row.id));
        if self.not_kept.with_untracked(|k| k.iter().any(|(id, _)| *id == row.id)) {
            self.not_kept.update(|k| k.retain(|(id, _)| *id != row.id));
        }
        let this = *self;
        let owner = row.id.clone();
        spawn_local(async move {
            let _ = this.db.write_all(vec![Write::DeleteFiles { owner }]).await;
        });
    }

    /// Applies `change` to a row in storage and in memory, atomically across tabs.
    async fn change(&self, id: &str, change: impl FnOnce(&mut OutboxRow) -> bool + 'static) -> Option<OutboxRow> {
        if self.db.is_healthy() {
            let changed = Rc::new(Cell::new(false));
            let flag = changed.clone();
            let result = self
                .db
                .store()
                .update(
                    OUTBOX,
                    id,
                    Box::new(move |cur| {
                        let mut row: OutboxRow = crate::json::decode(&cur?)?;
                        if change(&mut row) {
                            flag.set(true);
                            Some(crate::json::encode(&row))
                        } else {
                            None
                        }
                    }),
                )
                .await;
            return match result {
                Ok(Some(json)) if changed.get() => {
                    let row: OutboxRow = crate::json::decode(&json)?;
                    if row.state == SendState::Confirmed {
                        self.forget_files(&row);
                    }
                    self.set_row(row.clone());
                    self.announce_change();
                    Some(row)
                }
                Ok(_) => None,
                Err(e) => {
                    self.db.fail(e);
                    None
                }
            };
        }
        // Storage is failing: the rows in memory are the truth for this tab.
        let mut row = self.rows.with_untracked(|rows| rows.iter().find(|r| r.id == id).cloned())?;
        if !change(&mut row) {
            return None;
        }
        self.set_row(row.clone());
        Some(row)
    }

    /// Sends whatever is due, one row at a time, if this tab leads and is connected.
    pub fn kick(&self) {
        if !self.leader.get_untracked() || self.reconciling.get_untracked() || self.client.status.get_untracked() != Status::Connected {
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
            if self.client.status.get_untracked() != Status::Connected {
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
            let attachments = match self.row_files(&row).await {
                Ok(files) => {
                    let mut wire = Vec::with_capacity(files.len());
                    for f in &files {
                        match crate::browser::blob_base64(&f.blob).await {
                            Ok(content) => wire.push(f.meta.to_wire(&content)),
                            Err(e) => {
                                wire.clear();
                                self.change(&row.id, move |r| {
                                    r.finish_send(SendResult::Refused(format!(
                                        "a file could not be read from this browser's storage ({e}); the message is not sent without it"
                                    )));
                                    true
                                })
                                .await;
                                break;
                            }
                        }
                    }
                    if wire.len() != files.len() {
                        continue;
                    }
                    // The whole frame must fit the gateway's `maxPayload`, or it closes the
                    // connection, and the resend after reconnecting would be closed again.
                    let limit = self
                        .client
                        .hello
                        .with_untracked(|h| h.as_ref().and_then(|h| h.max_payload))
                        .unwrap_or(protocol::MAX_PAYLOAD_BYTES as u64);
                    let encoded: Vec<usize> = wire.iter().map(|w| w["content"].as_str().map_or(0, str::len)).collect();
                    if let Err(reason) = model::attachment::check_frame(&row.text, &encoded, limit) {
                        self.change(&row.id, move |r| {
                            r.finish_send(SendResult::Refused(reason));
                            true
                        })
                        .await;
                        continue;
                    }
                    wire
                }
                Err(missing) => {
                    self.change(&row.id, move |r| {
                        r.finish_send(SendResult::Refused(missing));
                        true
                    })
                    .await;
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
            let result = match self.client.request("chat.send", params).await {
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
    fn schedule_reconcile(&self) {
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
    async fn reconcile(self) {
        let sessions: Vec<String> = self.rows.with_untracked(|rows| {
            let mut s: Vec<String> = rows.iter().filter(|r| r.is_unsent()).map(|r| r.session_key.clone()).collect();
            s.sort();
            s.dedup();
            s
        });
        for session in sessions {
            let Ok(h) = self.client.request("chat.history", json!({"sessionKey": session, "limit": 200})).await else {
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
    async fn apply_history(&self, session: &str, h: &Value) -> Vec<String> {
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
    fn recheck_after_run(&self, session: String) {
        let waiting =
            self.rows.with_untracked(|rows| rows.iter().any(|r| r.session_key == session && r.state == SendState::AwaitingConfirmation));
        if !waiting || !self.leader.get_untracked() {
            return;
        }
        let this = *self;
        set_timeout(
            move || {
                spawn_local(async move {
                    if let Ok(h) = this.client.request("chat.history", json!({"sessionKey": session, "limit": 200})).await {
                        this.apply_history(&session, &h).await;
                    }
                })
            },
            std::time::Duration::from_millis(500),
        );
    }

    /// Retry: the same row, the same key.
    pub fn retry(&self, id: &str) {
        let this = *self;
        let id = id.to_string();
        spawn_local(async move {
            let now = browser::now_ms();
            this.change(&id, move |r| r.retry(now)).await;
            this.kick();
        });
    }

    /// Edit: new text for a row the gateway has certainly not taken (`OutboxRow::edit`), in
    /// storage first, atomically, so a sender or another tab that got there first wins and the
    /// edit is refused. Returns whether it was applied.
    pub async fn edit(&self, id: &str, text: String) -> bool {
        let now = browser::now_ms();
        let key = uuid();
        let applied = self.change(id, move |r| r.edit(&text, &key, now)).await.is_some();
        if applied {
            self.end_editing(id);
        }
        applied
    }

    /// An editor opened on a row in this tab: hold it back until the edit ends.
    pub fn begin_editing(&self, id: &str) {
        self.editing.update_value(|e| {
            e.insert(id.to_string());
        });
    }

    /// The editor closed (saved or cancelled): the row goes when it is due.
    pub fn end_editing(&self, id: &str) {
        self.editing.update_value(|e| {
            e.remove(id);
        });
        self.kick();
    }

    /// Discard: never sent later; the text goes back to the composer of every open view.
    pub fn discard(&self, id: &str) {
        let this = *self;
        let id = id.to_string();
        spawn_local(async move {
            let text = Rc::new(std::cell::RefCell::new(None));
            let out = text.clone();
            let changed = this
                .change(&id, move |r| {
                    let t = r.discard();
                    let ok = t.is_some();
                    *out.borrow_mut() = t;
                    ok
                })
                .await;
            // An async answer reopens its question (its draft is kept) instead.
            if let (Some(row), Some(t)) = (changed.as_ref().filter(|r| r.async_item_id.is_none()), text.borrow_mut().take()) {
                this.restored.set(Some((row.session_key.clone(), t.clone(), browser::now_ms() as u64)));
                this.channel.with_value(|c| c.post(&json!({"type": "restore", "session": row.session_key, "text": t})));
            }
            // Its files go back to the conversation's composer, with the text.
            if let Some(row) = changed.filter(|r| !r.attachments.is_empty()) {
                this.give_back_files(&row).await;
            }
        });
    }

    pub fn retry_all(&self) {
        for id in self.rows.with_untracked(|rows| rows.iter().filter(|r| r.can_retry()).map(|r| r.id.clone()).collect::<Vec<_>>()) {
            self.retry(&id);
        }
    }

    pub fn discard_all(&self) {
        for id in self.rows.with_untracked(|rows| rows.iter().filter(|r| r.can_discard()).map(|r| r.id.clone()).collect::<Vec<_>>()) {
            self.discard(&id);
        }
    }
}
