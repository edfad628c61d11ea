//! The outbox glue (`model::outbox` holds the rules): rows in IndexedDB, or memory when it
//! fails, one draining tab elected by a Web Lock, and the others kept in step over a
//! BroadcastChannel.
//!
//! - [`store`]: the IndexedDB mirror of the rows and their files, read and changed atomically
//!   across tabs;
//! - [`send`]: the draining tab's `chat.send` loop, one row at a time;
//! - [`reconcile`]: after a (re)connect or an unanswered send, saved history decides what was
//!   delivered before anything is sent again.

pub mod elsewhere;
mod reconcile;
mod send;
mod store;

use std::cell::Cell;
use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::attachment::{bytes_in_words, draft_owner};
use model::outbox::{DEFAULT_STALE_MS, OutboxRow};
use serde_json::{Value, json};

use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::io::storage::store::OUTBOX;
use crate::io::storage::{LocalDb, StoredFile, Write, is_quota_error};
use crate::io::tabs::{Channel, lead, uuid};
use crate::state::attachment::AttachmentController;

/// Text that Discard gave back to a conversation's composer.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoredText {
    pub session_key: String,
    pub text: String,
    /// When it was given back: the same text discarded twice is restored twice.
    pub at_ms: u64,
}

/// Where a load of the rows from storage is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoadState {
    Idle,
    Running,
    /// Running, and asked for again meanwhile: it reads once more when it ends.
    RunningAgain,
}

/// The files of a row that storage could not keep, held by this tab.
#[derive(Clone)]
struct FilesInMemory {
    row_id: String,
    files: Vec<StoredFile>,
}

/// A row's files that could not be kept, and what that means, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct NotKept {
    pub row_id: String,
    pub words: String,
}

/// What the outbox tells other parts of the page.
#[derive(Clone, Copy)]
pub struct OutboxController {
    /// Every row this browser knows (discarded and old confirmed rows are pruned).
    pub rows: RwSignal<Vec<OutboxRow>>,
    /// Whether this tab drains the outbox.
    pub leader: RwSignal<bool>,
    /// Text given back by Discard, for every open view on its conversation to put in its composer.
    pub restored: RwSignal<Option<RestoredText>>,
    client: GatewayClient,
    db: LocalDb,
    channel: StoredValue<Channel, LocalStorage>,
    draining: StoredValue<Rc<Cell<bool>>, LocalStorage>,
    /// Set after a (re)connect until unsent rows were checked against history.
    reconciling: RwSignal<bool>,
    /// Whether rows were loaded from storage at least once.
    loaded: StoredValue<bool>,
    /// Loads run one at a time.
    loading: StoredValue<Rc<Cell<LoadState>>, LocalStorage>,
    /// Rows open in an editor in this tab: the sender waits for them (and for what is queued
    /// behind them) until the edit is saved or cancelled.
    editing: StoredValue<std::collections::HashSet<String>>,
    /// Counts edits of `rows` made outside a load, so that a load which read storage before
    /// an edit does not write the older rows back over it.
    edits: StoredValue<Rc<Cell<u64>>, LocalStorage>,
    /// Files of rows that storage could not keep (full, failing), by row id: this tab sends
    /// them from memory.
    memory_files: StoredValue<Vec<FilesInMemory>, LocalStorage>,
    /// What could not be kept of a row's files, in words (this tab only: only this tab has them).
    pub not_kept: RwSignal<Vec<NotKept>>,
    files: AttachmentController,
    /// Carries the Blobs of rows storage could not keep to the other tabs.
    file_channel: StoredValue<Channel, LocalStorage>,
}

/// Rows older than this wait for an explicit Retry. `localStorage["ocui.outbox.staleMs"]`
/// overrides the 24 h default.
pub fn stale_ms() -> f64 {
    browser::local_get("ocui.outbox.staleMs").and_then(|v| v.parse::<u64>().ok()).map_or(DEFAULT_STALE_MS, |ms| ms as f64)
}

impl OutboxController {
    pub fn new(client: GatewayClient, db: LocalDb, files: AttachmentController) -> OutboxController {
        let rows = RwSignal::new(Vec::<OutboxRow>::new());
        let restored = RwSignal::new(None);
        let reload = RwSignal::new(0u64);
        let channel = Channel::open(&crate::io::storage::scoped("ocui-outbox"), move |msg| match msg.get("type").and_then(Value::as_str) {
            Some("changed") => reload.update(|n| *n += 1),
            Some("restore") => {
                if let (Some(s), Some(t)) = (msg.get("session").and_then(Value::as_str), msg.get("text").and_then(Value::as_str)) {
                    restored.set(Some(RestoredText { session_key: s.to_string(), text: t.to_string(), at_ms: browser::now_ms() as u64 }));
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
            loading: StoredValue::new_local(Rc::new(Cell::new(LoadState::Idle))),
            editing: StoredValue::new(Default::default()),
            edits: StoredValue::new_local(Rc::new(Cell::new(0))),
            memory_files: StoredValue::new_local(Default::default()),
            not_kept: RwSignal::new(Default::default()),
            files,
            file_channel: StoredValue::new_local(Channel::unopened()),
        };
        // Another tab's row whose files storage could not keep: hold them here too, so that
        // whichever tab sends has them.
        let held = Channel::open_raw(&crate::io::storage::scoped("ocui-outbox-files"), move |data| {
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
        lead(&crate::io::storage::scoped("ocui-outbox-drain"), move || {
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
        // Held for a gateway that now looks different, with nothing left to hold: let go.
        Effect::new(move |_| {
            let nothing_waits = c.rows.with(|rows| !rows.iter().any(OutboxRow::is_unsent));
            if client.identity_held.get().is_some() && nothing_waits && c.loaded.get_value() {
                client.release_identity_hold();
            }
        });
        client.on_event("chat", move |p| {
            if let Some(event) = protocol::chat::ChatEvent::read(p).filter(|e| e.state.is_terminal()) {
                c.recheck_after_run(event.session_key);
            }
        });
        client.on_event("session.message", move |p| {
            if let Some(m) = p.get("message") {
                c.confirm(std::slice::from_ref(m));
            }
        });
        c
    }

    /// The person chose to send what waited for a gateway that now looks different.
    pub fn send_here(&self) {
        self.client.release_identity_hold();
        self.kick();
    }

    /// Whether, and why, unsent rows wait for the person before they go to this gateway (tracked).
    pub fn identity_held(&self) -> Option<model::connection::Hold> {
        self.client.identity_held.get()
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
        let leave_draft = || files.iter().map(|f| Write::Delete { store: crate::io::storage::FILES, key: f.meta.blob_key(&draft) });
        let mut writes = vec![Write::Put { store: OUTBOX, key: row.id.clone(), json: crate::io::json::encode(&row) }];
        writes.extend(leave_draft());
        writes.extend(files.iter().map(|f| Write::PutFile { owner: row.id.clone(), file: f.clone() }));
        let bytes = crate::io::storage::file_bytes(&writes);
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
                    k.push(NotKept {
                        row_id: id.clone(),
                        words: format!(
                            "{} ({}) could not be saved with this message, because {why} ({e}). The open tabs of this page keep {} and send the message; if they all close first, the message is not sent without {}.",
                            if n == 1 { "1 file".to_string() } else { format!("{n} files") },
                            bytes_in_words(bytes),
                            if n == 1 { "it" } else { "them" },
                            if n == 1 { "it" } else { "them" },
                        ),
                    });
                });
                // The text (and which files it had) is still kept, and the draft lets go of
                // the files this row now holds.
                let mut text_only = vec![Write::Put { store: OUTBOX, key: row.id.clone(), json: crate::io::json::encode(&row) }];
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
                this.restored.set(Some(RestoredText {
                    session_key: row.session_key.clone(),
                    text: t.clone(),
                    at_ms: browser::now_ms() as u64,
                }));
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
