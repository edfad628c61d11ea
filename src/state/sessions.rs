//! The conversation list (`model::sessions`): one per page, kept live by `sessions.subscribe`
//! and `sessions.changed`, saved in this browser so an offline reload still lists them; and
//! what a person does with conversations: open one in the focused pane, start a new one,
//! rename, archive with Undo, restore.

use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use protocol::methods::method;
use serde_json::{Value, json};

use model::sessions::{Change, Conversation, ConversationList, ListQuery, ReadMarks};

use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::io::storage::LocalDb;
use crate::io::storage::store::TRANSCRIPTS;
use crate::state::chat::ChatController;
use crate::state::panes::Panes;

/// The list's saved copy and the read marks live beside the saved transcripts, under keys no
/// conversation can have.
const SAVED_LIST_KEY: &str = "\u{0}sessions";
const READ_MARKS_KEY: &str = "\u{0}read";
/// Rows kept in the saved copy.
const SAVED_ROWS: usize = 100;

/// The list as this browser saved it.
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedList {
    rows: Vec<Conversation>,
}

/// An archived conversation that Undo can restore.
#[derive(Debug, Clone, PartialEq)]
pub struct Archived {
    pub row: Conversation,
}

#[derive(Clone, Copy)]
pub struct SessionsController {
    pub list: RwSignal<ConversationList>,
    pub marks: RwSignal<ReadMarks>,
    /// Reading the list failed, in words.
    pub error: RwSignal<Option<String>>,
    /// What the last action (new, rename, archive, restore) could not do, in words.
    pub notice: RwSignal<Option<String>>,
    /// The conversation just archived, while Undo is offered.
    pub undo: RwSignal<Option<Archived>>,
    pub loading: RwSignal<bool>,
    /// The narrow-screen drawer is open.
    pub drawer_open: RwSignal<bool>,
    /// Bumped to focus the search field (Ctrl/Cmd+K).
    pub focus_search: RwSignal<u32>,
    /// A refetch of the first page is due (a burst of row-less events reads it once).
    refetch_due: StoredValue<bool>,
    search_due: StoredValue<bool>,
    /// What the content search (`sessions.search`) found for the words in the search field.
    pub found: RwSignal<Option<model::sessions::Found>>,
    /// A save of the list is due (debounced).
    save_due: StoredValue<bool>,
    marks_loaded: StoredValue<bool>,
    client: GatewayClient,
    db: LocalDb,
    panes: Panes,
}

impl SessionsController {
    pub fn new(client: GatewayClient, db: LocalDb, panes: Panes) -> SessionsController {
        let s = SessionsController {
            list: RwSignal::new(ConversationList::default()),
            marks: RwSignal::new(ReadMarks::default()),
            error: RwSignal::new(None),
            notice: RwSignal::new(None),
            undo: RwSignal::new(None),
            loading: RwSignal::new(false),
            drawer_open: RwSignal::new(false),
            focus_search: RwSignal::new(0),
            refetch_due: StoredValue::new(false),
            search_due: StoredValue::new(false),
            found: RwSignal::new(None),
            save_due: StoredValue::new(false),
            marks_loaded: StoredValue::new(false),
            client,
            db,
            panes,
        };
        // On every connect: subscribe, then read the first page (when the scopes allow it).
        Effect::new(move |_| {
            let _ = client.connected_epoch.get();
            if client.status.get_untracked() == Status::Connected && untrack(|| s.may(protocol::methods::method::SESSIONS_LIST)) {
                spawn_local(async move {
                    let _ = client.request(protocol::methods::method::SESSIONS_SUBSCRIBE, json!({})).await;
                    s.reload().await;
                });
            }
        });
        client.on_event("sessions.changed", move |p| s.on_changed(p));
        // The saved list and read marks, once storage is open.
        Effect::new(move |_| {
            if db.opened.get() > 0 && !s.marks_loaded.get_value() {
                s.marks_loaded.set_value(true);
                spawn_local(async move { s.load_saved().await });
            }
        });
        // A conversation a pane shows is read up to its latest activity.
        Effect::new(move |_| {
            let shown: Vec<String> = panes.open_chats().iter().map(|c| c.session.get()).collect();
            let rows: Vec<Conversation> = s.list.with(|l| l.rows.iter().filter(|r| shown.contains(&r.key)).cloned().collect());
            if !s.marks_loaded.get_value() {
                return;
            }
            // Written only when something was not read yet: the marks are mirrored to storage.
            let unseen: Vec<Conversation> =
                s.marks.with_untracked(|m| rows.into_iter().filter(|r| m.seen.get(&r.key).is_none_or(|t| *t < r.updated_at)).collect());
            if !unseen.is_empty() {
                s.marks.update(|m| {
                    for r in &unseen {
                        m.mark_seen(r);
                    }
                });
            }
        });
        // One effect mirrors the read marks to storage.
        Effect::new(move |prev: Option<()>| {
            let marks = s.marks.get();
            if prev.is_some() && marks.since > 0 {
                let text = crate::io::json::encode(&marks);
                // A cache: a failed write costs only "New" marks after a reload, so it does not
                // mark storage as failing (that banner is about drafts and unsent messages).
                spawn_local(async move {
                    let _ = db.store().put(TRANSCRIPTS, READ_MARKS_KEY, &text).await;
                });
            }
        });
        s
    }

    async fn load_saved(self) {
        let store = self.db.store();
        if let Ok(Some(v)) = store.get(TRANSCRIPTS, READ_MARKS_KEY).await
            && let Some(marks) = crate::io::json::decode::<ReadMarks>(&v)
        {
            self.marks.set(marks);
        }
        if self.marks.with_untracked(|m| m.since == 0) {
            self.marks.update(|m| {
                m.start(browser::now_ms() as i64);
            });
        }
        // Shown only until the gateway answers.
        if self.list.with_untracked(|l| l.rows.is_empty())
            && let Ok(Some(v)) = store.get(TRANSCRIPTS, SAVED_LIST_KEY).await
            && let Some(saved) = crate::io::json::decode::<SavedList>(&v)
            && self.list.with_untracked(|l| l.rows.is_empty())
        {
            self.list.update(|l| {
                l.rows = saved.rows;
                l.saved = true;
            });
        }
    }

    /// Reads the first page for the current query.
    pub async fn reload(self) {
        self.load_page(0).await;
    }

    /// Load more: the next page.
    pub fn load_more(&self) {
        let this = *self;
        let offset = self.list.with_untracked(|l| l.next_offset);
        spawn_local(async move { this.load_page(offset).await });
    }

    async fn load_page(self, offset: u64) {
        let query = self.list.with_untracked(|l| l.query.clone());
        self.loading.set(true);
        let result = self.client.request(protocol::methods::method::SESSIONS_LIST, query.params(offset)).await;
        self.loading.set(false);
        if self.list.with_untracked(|l| l.query != query) {
            return; // the search changed meanwhile; its own read is on the way
        }
        match result {
            Ok(page) => {
                self.list.update(|l| l.apply_page(&page, offset));
                self.error.set(None);
                if query.is_default() {
                    self.save();
                }
            }
            Err(e) => self.error.set(Some(format!("The conversation list could not be read: {e}"))),
        }
    }

    /// Searches titles (empty: every conversation), among archived ones when `archived`.
    pub fn set_query(&self, search: String, archived: bool) {
        let query = ListQuery { search, archived };
        if self.list.with_untracked(|l| l.query == query) {
            return;
        }
        self.found.set(None);
        self.list.update(|l| {
            l.query = query;
            l.rows.clear();
            l.has_more = false;
            l.saved = false;
        });
        let this = *self;
        if self.client.status.get_untracked() == Status::Connected {
            spawn_local(async move { this.reload().await });
            // Inside messages too, a moment after the typing stops.
            super::debounce(self.search_due, 300, move || this.search_messages(0));
        } else {
            self.error.set(Some("Searching needs the gateway: it cannot be reached right now.".into()));
        }
    }

    /// `sessions.search` for the words in the search field; while the gateway is still building
    /// its index, asked again a few times.
    fn search_messages(&self, tries: u32) {
        let query = self.list.with_untracked(|l| l.query.clone());
        let Some(params) = model::sessions::search_params(&query.search, query.archived).filter(|_| self.may(method::SESSIONS_SEARCH))
        else {
            self.found.set(None);
            return;
        };
        let this = *self;
        spawn_local(async move {
            let answer = this.client.request(method::SESSIONS_SEARCH, params).await;
            // Only for the words still in the field.
            if this.list.with_untracked(|l| l.query != query) {
                return;
            }
            match answer {
                Ok(v) => {
                    let found = model::sessions::read_search(&query.search, &v);
                    if found.indexing && tries < 5 {
                        let asked = query.clone();
                        set_timeout(
                            move || {
                                // Only for the words it was asked for.
                                if this.list.with_untracked(|l| l.query == asked) {
                                    this.search_messages(tries + 1);
                                }
                            },
                            Duration::from_secs(2),
                        );
                    }
                    this.found.set(Some(found));
                }
                Err(e) => {
                    this.found.set(None);
                    this.error.set(Some(format!("Messages could not be searched: {e}")));
                }
            }
        });
    }

    fn on_changed(&self, p: &Value) {
        let change = self.list.try_update(|l| l.apply_changed(p)).unwrap_or(Change::Applied);
        match change {
            Change::Applied => {
                if self.list.with_untracked(|l| l.query.is_default()) {
                    self.save();
                }
            }
            Change::Refetch => {
                let this = *self;
                super::debounce(self.refetch_due, 300, move || spawn_local(async move { this.reload().await }));
            }
        }
    }

    /// Saves the first rows of the unfiltered list, for an offline reload: a moment after it
    /// changed, so a burst of events is one write.
    fn save(&self) {
        let this = *self;
        super::debounce(self.save_due, 1000, move || {
            let rows: Vec<Conversation> = this
                .list
                .with_untracked(|l| if l.query.is_default() { l.rows.iter().take(SAVED_ROWS).cloned().collect() } else { Vec::new() });
            if !rows.is_empty() {
                spawn_local(async move {
                    // A cache for an offline reload, like the saved transcript: no storage alarm.
                    let _ = this.db.store().put(TRANSCRIPTS, SAVED_LIST_KEY, &crate::io::json::encode(&SavedList { rows })).await;
                });
            }
        });
    }

    /// The focused pane's conversation controller.
    pub fn focused(&self) -> ChatController {
        self.panes.chat(self.panes.active.get_untracked())
    }

    /// Opens `key` in `chat`'s pane. The pane takes that conversation's draft: the one
    /// another pane shows, else the stored one.
    pub fn open_in(&self, chat: ChatController, key: &str) {
        if chat.session.get_untracked() == key {
            return;
        }
        let shared = self
            .panes
            .open_chats()
            .into_iter()
            .find(|c| c.session.get_untracked() == key)
            .map(|c| c.draft.get_untracked())
            .unwrap_or_default();
        chat.draft.set(shared);
        chat.session.set(key.to_string());
        self.drawer_open.set(false);
    }

    /// New conversation for `chat`'s pane: `sessions.create` for the pane's agent, then the
    /// pane switches to it. If it cannot be created, whatever is typed stays, and the pane
    /// says why.
    pub fn create_in(&self, chat: ChatController) {
        let this = *self;
        if self.client.status.get_untracked() != Status::Connected {
            self.notice.set(Some("No new conversation: the gateway cannot be reached. What you typed is kept.".into()));
            return;
        }
        let agent = model::sessions::agent_of(&chat.session.get_untracked());
        self.notice.set(None);
        spawn_local(async move {
            match this.client.request(protocol::methods::method::SESSIONS_CREATE, json!({"agentId": agent})).await {
                Ok(v) => match v.get("key").and_then(Value::as_str) {
                    Some(key) => {
                        if model::command::slash_command(&chat.draft.get_untracked()).is_some() {
                            chat.set_draft(String::new());
                        }
                        this.open_in(chat, key);
                        this.reload().await;
                    }
                    None => this.notice.set(Some("No new conversation: the gateway's answer named none. What you typed is kept.".into())),
                },
                Err(e) => this.notice.set(Some(format!("No new conversation: {e} What you typed is kept."))),
            }
        });
    }

    /// Renames `key` (`sessions.patch` `label`; empty clears it).
    pub fn rename(&self, key: &str, label: &str) {
        let label = label.trim();
        let value = if label.is_empty() { Value::Null } else { json!(label) };
        self.patch(key, json!({"key": key, "label": value}), "Not renamed");
    }

    /// Archives `key` (never a main conversation), offering Undo.
    pub fn archive(&self, key: &str) {
        let Some(row) = self.row(key) else { return };
        let mut p = json!({"key": key, "archived": true});
        if let Some(id) = &row.session_id {
            p["expectedSessionId"] = json!(id);
        }
        let this = *self;
        let key = key.to_string();
        spawn_local(async move {
            match this.client.request(protocol::methods::method::SESSIONS_PATCH, p).await {
                Ok(_) => {
                    let archived = Archived { row: Conversation { archived: true, ..row } };
                    this.undo.set(Some(archived.clone()));
                    // Undo is offered for a while, then the toast goes (Restore stays on the
                    // conversation itself, under Show archived).
                    set_timeout(
                        move || {
                            if this.undo.get_untracked().as_ref() == Some(&archived) {
                                this.undo.set(None);
                            }
                        },
                        Duration::from_secs(15),
                    );
                    this.list.update(|l| {
                        if !l.query.archived {
                            l.rows.retain(|r| r.key != key);
                        }
                    });
                    this.reload().await;
                }
                Err(e) => this.notice.set(Some(format!("Not archived: {e}"))),
            }
        });
    }

    /// Restores an archived conversation (Undo, or Restore on an archived one).
    pub fn restore(&self, row: &Conversation) {
        let mut p = json!({"key": row.key, "archived": false});
        if let Some(id) = &row.session_id {
            p["expectedSessionId"] = json!(id);
        }
        self.undo.set(None);
        self.patch(&row.key, p, "Not restored");
    }

    fn patch(&self, _key: &str, params: Value, failed: &'static str) {
        let this = *self;
        spawn_local(async move {
            match this.client.request(protocol::methods::method::SESSIONS_PATCH, params).await {
                Ok(_) => {
                    this.notice.set(None);
                    this.reload().await;
                }
                Err(e) => this.notice.set(Some(format!("{failed}: {e}"))),
            }
        });
    }

    /// The listed row of `key`, if listed.
    pub fn row(&self, key: &str) -> Option<Conversation> {
        self.list.with_untracked(|l| l.get(key).cloned())
    }

    /// Reads one conversation's row (`sessions.describe`): an archived one opened from a link is
    /// not in the active list.
    pub async fn describe(self, key: String) -> Option<Conversation> {
        let v = self.client.request(protocol::methods::method::SESSIONS_DESCRIBE, json!({"key": key})).await.ok()?;
        v.get("session").and_then(Conversation::read)
    }

    /// Whether this connection's scopes let it call `method` (tracked: controls appear only with
    /// the scope to use them).
    pub fn may(&self, method: &str) -> bool {
        matches!(protocol::methods::access(method, &self.client.scopes()), Some(Ok(_)))
    }

    /// The focused pane's conversation (tracked).
    pub fn focused_key(&self) -> String {
        self.panes.chat(self.panes.active.get()).session.get()
    }
}
