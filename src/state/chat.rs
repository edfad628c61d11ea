//! The conversation: which session, its saved transcript (paged), live run streams, and
//! the composer's draft per session.

use std::collections::BTreeMap;
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::{Value, json};

use model::url::ChatRoute;
use protocol::chat::{ChatEvent, ChatEventState};

use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::io::storage::LocalDb;

/// One saved transcript row, reduced to what the page shows.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptRow {
    /// `__openclaw.id`, or a stand-in for rows without one.
    pub key: String,
    pub role: String,
    pub text: String,
    pub seq: u64,
    pub timestamp: f64,
    /// `stopReason` for assistant rows, `customType` for custom rows.
    pub note: Option<String>,
    /// Ids of the tool calls in this row (their results are shown with them).
    pub tool_calls: Vec<String>,
    /// For a tool result row, the result (with the id of the call it answers).
    pub tool_result: Option<model::parts::ToolResult>,
    /// The first question's wording of each `ask_user` call in this row.
    pub asks: Vec<String>,
    /// Shown from this browser's saved copy, not (yet) from the gateway.
    pub from_saved_copy: bool,
    /// The gateway shortened it in the history (`__openclaw.truncated`): the whole text is
    /// fetched on request (`chat.message.get`).
    pub truncated: bool,
    pub raw: Value,
}

impl TranscriptRow {
    pub fn from_message(m: &Value) -> TranscriptRow {
        let meta = m.get("__openclaw");
        let seq = meta.and_then(|o| o.get("seq")).and_then(Value::as_u64).unwrap_or(0);
        let key = meta
            .and_then(|o| o.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("seq-{seq}-{}", protocol::frame::compact(m).len()));
        let role = m.get("role").and_then(Value::as_str).unwrap_or("custom").to_string();
        let note = m.get("stopReason").or_else(|| m.get("customType")).and_then(Value::as_str).map(str::to_string);
        let timestamp = m
            .get("timestamp")
            .and_then(Value::as_f64)
            .or_else(|| meta.and_then(|o| o.get("recordTimestampMs")).and_then(Value::as_f64))
            .unwrap_or(0.0);
        let text = match model::offline::withheld(m) {
            Some(reason) => format!("Not kept in this browser's saved copy: {reason}. It shows again when the gateway is back."),
            None => model::message_text(m),
        };
        // Worked out once per row, so the transcript does not parse every row again whenever
        // one arrives.
        let (mut tool_calls, mut asks) = (Vec::new(), Vec::new());
        for part in model::parts::parts(m) {
            if let model::parts::Part::ToolCall { id, name, arguments } = part {
                if name == "ask_user"
                    && let Some(q) = model::parts::ask_questions(&arguments).into_iter().next()
                {
                    asks.push(q.question);
                }
                if !id.is_empty() {
                    tool_calls.push(id);
                }
            }
        }
        let tool_result = model::parts::tool_result(m).filter(|r| !r.call_id.is_empty());
        let truncated = meta.and_then(|o| o.get("truncated")).and_then(Value::as_bool).unwrap_or(false);
        TranscriptRow {
            key,
            role,
            text,
            seq,
            timestamp,
            note,
            tool_calls,
            tool_result,
            asks,
            from_saved_copy: false,
            truncated,
            raw: m.clone(),
        }
    }
}

/// A run streaming right now.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStream {
    pub text: String,
    pub state: RunState,
}

/// Where a streaming run is (a finished one is replaced by its saved row).
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    Streaming,
    /// Stopped (`aborted`): what it wrote so far stays.
    Aborted,
    /// The run failed, with the gateway's words.
    Failed {
        reason: String,
    },
}

impl RunState {
    /// The name the page carries in `data-state`, as the gateway's `chat` event names it.
    pub fn name(&self) -> &'static str {
        match self {
            RunState::Streaming => "streaming",
            RunState::Aborted => "aborted",
            RunState::Failed { .. } => "error",
        }
    }
}

/// A person's request to read a shortened row whole ("Show the whole message"). Kept by the
/// conversation, not by the row's view: the history that replaces the saved copy, or a
/// reconnect, draws the row again, and the request and its outcome stay.
#[derive(Debug, Clone, PartialEq)]
pub enum WholeMessage {
    /// Asked for while the page was not connected, or before the gateway's history replaced
    /// the saved copy: fetched as soon as that history is in.
    Waiting,
    /// `chat.message.get` is on its way.
    Loading,
    /// Shown whole; a later page of history that shortens it again is given this row instead.
    Shown(Box<TranscriptRow>),
    /// The gateway could not give it, in words; the button asks again.
    Failed(String),
}

/// One row a person asked to read whole, and where that request is.
#[derive(Debug, Clone, PartialEq)]
pub struct WholeRequest {
    /// The row's key (`__openclaw.id`).
    pub key: String,
    pub state: WholeMessage,
}

#[derive(Clone, Copy)]
pub struct ChatController {
    /// Whether a pane shows this conversation. A closed pane's controller keeps no session
    /// and does nothing until a pane opens with it again.
    pub open: RwSignal<bool>,
    pub session: RwSignal<String>,
    pub messages: RwSignal<Vec<TranscriptRow>>,
    pub has_more: RwSignal<bool>,
    pub loading: RwSignal<bool>,
    pub history_error: RwSignal<Option<String>>,
    pub streams: RwSignal<BTreeMap<String, RunStream>>,
    /// The gateway says a run is active in this session.
    pub run_active: RwSignal<bool>,
    /// The ids of the runs known to be active here (from history and `chat` events): a Stop
    /// names the run when exactly one is known.
    pub active_runs: RwSignal<Vec<String>>,
    /// What the last Stop did, in words, until the conversation changes.
    pub stop_outcome: RwSignal<Option<model::command::StopOutcome>>,
    pub draft: RwSignal<String>,
    /// Why the conversation link in the address could not be opened, if it could not.
    pub link_error: RwSignal<Option<String>>,
    /// While the rows shown are this browser's saved copy (the gateway has not given fresh
    /// ones yet): when the gateway last confirmed them, in ms since the epoch.
    pub saved_copy: RwSignal<Option<f64>>,
    /// Why no saved copy of this conversation can be kept, when one cannot.
    pub saved_copy_error: RwSignal<Option<String>>,
    /// The rows a person asked to read whole in this conversation (a handful at most).
    pub whole: RwSignal<Vec<WholeRequest>>,
    /// Whether the gateway gave this session's history since it was chosen.
    fresh: StoredValue<bool>,
    /// A save of the saved copy is due (debounced).
    save_due: StoredValue<bool>,
    /// A short `/chat/<agent>/<slug>-<id>` link waiting for the session list.
    short_link: StoredValue<Option<(String, String)>>,
    client: GatewayClient,
    db: LocalDb,
}

const COMPOSER: &str = "composer";

thread_local! {
    /// Text given back by Discard to a conversation no pane shows, that looked like a
    /// credential: it is never stored (the composer's rule), so it waits here, in memory, until
    /// a pane opens that conversation.
    static HELD_DRAFTS: std::cell::RefCell<std::collections::HashMap<String, String>> = std::cell::RefCell::new(std::collections::HashMap::new());
}

fn merge_text(current: &str, text: &str) -> String {
    if current.is_empty() {
        text.to_string()
    } else if current.contains(text) {
        current.to_string()
    } else {
        format!("{current}\n{text}")
    }
}
/// Saved copies of recent conversations (`model::offline`), and their index under this key.
const TRANSCRIPTS: &str = "transcripts";
const SAVED_INDEX_KEY: &str = "\u{0}index";
/// Key prefix of a reply shown from a `final` event before its saved row arrived.
const LIVE_PREFIX: &str = "live:";

/// The conversation the address names: `?session=`, else an incumbent-style `/chat/…` link.
pub fn route_from_url() -> Option<ChatRoute> {
    // Canonical, so live events (which name the canonical key) match a hand-typed `?session=x`.
    let from_query = browser::page_query().session.map(|s| ChatRoute::Key(protocol::chat::canonical_session_key(&s)));
    from_query.or_else(|| model::url::parse_chat_path(&browser::app_path()))
}

impl ChatController {
    /// A conversation controller; `route` names its conversation (none: the default one),
    /// and a controller that is not `open` waits for a pane.
    pub fn new(client: GatewayClient, db: LocalDb, route: Option<ChatRoute>, open: bool) -> ChatController {
        let c = ChatController {
            open: RwSignal::new(open),
            session: RwSignal::new(match &route {
                Some(ChatRoute::Key(k)) => k.clone(),
                _ => String::new(),
            }),
            messages: RwSignal::new(Vec::new()),
            has_more: RwSignal::new(false),
            loading: RwSignal::new(false),
            history_error: RwSignal::new(None),
            streams: RwSignal::new(BTreeMap::new()),
            run_active: RwSignal::new(false),
            active_runs: RwSignal::new(Vec::new()),
            stop_outcome: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            link_error: RwSignal::new(None),
            saved_copy: RwSignal::new(None),
            saved_copy_error: RwSignal::new(None),
            whole: RwSignal::new(Vec::new()),
            fresh: StoredValue::new(false),
            save_due: StoredValue::new(false),
            short_link: StoredValue::new(match route {
                Some(ChatRoute::ShortId { agent, id_prefix }) => Some((agent, id_prefix)),
                _ => None,
            }),
            client,
            db,
        };
        // On (re)connect: take the default session if none was chosen, then load.
        Effect::new(move |_| {
            let _ = client.connected_epoch.get();
            let _ = client.resync_epoch.get();
            if !c.open.get() || client.status.get_untracked() != Status::Connected {
                return;
            }
            if c.short_link.with_value(Option::is_some) {
                // A `/chat/<agent>/<slug>-<id>` link: the session list says which key it names.
                spawn_local(async move {
                    let keys = c.session_keys().await;
                    c.resolve_short_link(&keys);
                });
                return;
            }
            if c.session.get_untracked().is_empty() {
                let default = client.hello.with_untracked(|h| h.as_ref().and_then(|h| h.main_session_key.clone()));
                c.session.set(default.unwrap_or_else(|| "agent:main:main".into()));
            }
            spawn_local(async move { c.load_history().await });
        });
        // A different session: its transcript and draft load (the pane layout writes the URL).
        Effect::new(move |prev: Option<String>| {
            let s = c.session.get();
            if s.is_empty() {
                return s;
            }
            if prev.as_ref().is_some_and(|p| *p != s) {
                c.messages.set(Vec::new());
                c.streams.set(BTreeMap::new());
                c.active_runs.set(Vec::new());
                c.stop_outcome.set(None);
                c.whole.set(Vec::new());
                c.fresh.set_value(false);
                c.saved_copy.set(None);
                spawn_local(async move { c.load_history().await });
            }
            s
        });
        // The stored draft of the session, once storage is open.
        Effect::new(move |_| {
            let s = c.session.get();
            if db.opened.get() > 0 && !s.is_empty() {
                spawn_local(async move { c.load_draft().await });
            }
        });
        // The saved copy, shown at once (before the socket connects, and while the gateway
        // cannot be reached) until fresh history replaces it.
        Effect::new(move |_| {
            let _ = c.session.get();
            if c.open.get() && db.opened.get() > 0 && !c.fresh.get_value() {
                spawn_local(async move { c.show_saved_copy().await });
            }
        });
        client.on_event("session.message", move |p| c.on_session_message(p));
        client.on_event("chat", move |p| c.on_chat(p));
        c
    }

    /// Opens the session a short `/chat/…` link names, or says that it names none.
    fn resolve_short_link(&self, keys: &[String]) {
        let Some((agent, prefix)) = self.short_link.get_value() else { return };
        self.short_link.set_value(None);
        match model::url::resolve_short_id(&agent, &prefix, keys.iter().map(String::as_str)) {
            Some(key) => self.session.set(key.to_string()),
            None => {
                self.link_error.set(Some(format!(
                    "No single conversation of agent {agent} matches this link (…{prefix}): it may have been deleted. Pick one above."
                )));
                let default = self.client.hello.with_untracked(|h| h.as_ref().and_then(|h| h.main_session_key.clone()));
                self.session.set(default.unwrap_or_else(|| format!("agent:{agent}:main")));
            }
        }
    }

    /// Every conversation key of the link's agent, active or archived (a short link may name
    /// any of them).
    async fn session_keys(self) -> Vec<String> {
        let agent = self.short_link.with_value(|l| l.as_ref().map(|(a, _)| a.clone())).unwrap_or_else(|| "main".into());
        let params = json!({"limit": 1000, "agentId": agent, "archived": "all"});
        match self.client.request("sessions.list", params).await {
            Ok(v) => protocol::chat::read_sessions_list(&v).into_iter().map(|r| r.key).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The newest page of the transcript (and a subscription to its live rows).
    pub async fn load_history(self) {
        let session = self.session.get_untracked();
        if session.is_empty() {
            return;
        }
        let _ = self.client.request("sessions.messages.subscribe", json!({"key": session})).await;
        self.loading.set(true);
        let result = self.client.request("chat.history", json!({"sessionKey": session, "limit": 100})).await;
        self.loading.set(false);
        if self.session.get_untracked() != session {
            return;
        }
        match result {
            Ok(v) => {
                let mut rows: Vec<TranscriptRow> = v
                    .get("messages")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(TranscriptRow::from_message).collect())
                    .unwrap_or_default();
                let waiting = self.keep_whole(&mut rows);
                self.has_more.set(v.get("hasMore").and_then(Value::as_bool).unwrap_or(false));
                let info = v.get("sessionInfo");
                self.run_active.set(info.and_then(|i| i.get("hasActiveRun")).and_then(Value::as_bool).unwrap_or(false));
                let runs = info.and_then(|i| i.get("activeRunIds")).and_then(Value::as_array);
                self.active_runs.set(runs.map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default());
                self.history_error.set(None);
                // Rows that arrived as events while the page loaded stay (newer than the page).
                let newest = rows.iter().map(|r| r.seq).max().unwrap_or(0);
                // Rows of the saved copy all go (they may be older than the page, or from a
                // transcript the gateway no longer has); rows that arrived live meanwhile stay.
                self.messages.update(|m| {
                    let extra: Vec<TranscriptRow> =
                        m.drain(..).filter(|r| !r.from_saved_copy && r.seq > newest && !rows.iter().any(|x| x.key == r.key)).collect();
                    *m = rows;
                    m.extend(extra);
                });
                self.fresh.set_value(true);
                self.saved_copy.set(None);
                self.schedule_save();
                for key in waiting {
                    spawn_local(async move { self.fetch_whole(key).await });
                }
            }
            Err(e) => {
                // A click that waited for this history gets the reason, and can be tried again.
                self.whole.update(|w| {
                    for r in w.iter_mut().filter(|r| r.state == WholeMessage::Waiting) {
                        r.state = WholeMessage::Failed(format!("the conversation could not be loaded ({e})."));
                    }
                });
                self.history_error.set(Some(format!("The conversation could not be loaded: {e}")));
            }
        }
    }

    /// The next older page.
    pub fn load_older(&self) {
        let this = *self;
        spawn_local(async move {
            let session = this.session.get_untracked();
            let offset = this.messages.with_untracked(Vec::len);
            this.loading.set(true);
            let result = this.client.request("chat.history", json!({"sessionKey": session, "limit": 100, "offset": offset})).await;
            this.loading.set(false);
            if let Ok(v) = result {
                let mut older: Vec<TranscriptRow> = v
                    .get("messages")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(TranscriptRow::from_message).collect())
                    .unwrap_or_default();
                // An older row asked for whole earlier (shown, or waiting since a reconnect's
                // newest page did not hold it) is given or fetched now.
                let waiting = this.keep_whole(&mut older);
                this.has_more.set(v.get("hasMore").and_then(Value::as_bool).unwrap_or(false));
                this.messages.update(|m| {
                    let mut merged: Vec<TranscriptRow> = older.into_iter().filter(|o| !m.iter().any(|x| x.key == o.key)).collect();
                    merged.append(m);
                    *m = merged;
                });
                for key in waiting {
                    spawn_local(async move { this.fetch_whole(key).await });
                }
            }
        });
    }

    fn on_session_message(&self, p: &Value) {
        let session = p.get("sessionKey").and_then(Value::as_str).unwrap_or_default();
        if session != self.session.get_untracked() {
            return;
        }
        let Some(m) = p.get("message") else { return };
        let row = TranscriptRow::from_message(m);
        if let Some(run) = m.get("__openclaw").and_then(|o| o.get("runId")).and_then(Value::as_str) {
            if row.role == "assistant" || row.role == "custom" {
                // The saved reply replaces its stream.
                self.streams.update(|s| {
                    s.remove(run);
                });
            }
        }
        let run = m.get("__openclaw").and_then(|o| o.get("runId")).and_then(Value::as_str);
        self.messages.update(|rows| {
            if rows.iter().any(|r| r.key == row.key) {
                return;
            }
            // A reply shown from its run's `final` event before it was saved: the saved row
            // takes its place (same run, or the same words from the same role).
            let provisional = rows.iter().position(|r| {
                r.key.starts_with(LIVE_PREFIX)
                    && r.role == row.role
                    && (run.is_some_and(|run| r.key[LIVE_PREFIX.len()..] == *run) || r.text == row.text)
            });
            match provisional {
                Some(i) if !row.key.starts_with(LIVE_PREFIX) => rows[i] = row,
                Some(_) => {}
                None => {
                    let at = rows.iter().position(|r| r.seq > row.seq && row.seq > 0).unwrap_or(rows.len());
                    rows.insert(at, row);
                }
            }
        });
        if self.fresh.get_value() {
            self.schedule_save();
        }
    }

    /// Shows this browser's saved copy of the conversation, if the gateway has not given
    /// fresh rows yet. With no conversation named, the one used last opens.
    async fn show_saved_copy(self) {
        let store = self.db.store();
        if self.session.get_untracked().is_empty() && self.short_link.with_value(Option::is_none) {
            let index: Option<model::offline::SavedIndex> =
                store.get(TRANSCRIPTS, SAVED_INDEX_KEY).await.ok().flatten().and_then(|v| crate::io::json::decode(&v));
            if let Some(latest) = index.as_ref().and_then(|i| i.latest()).filter(|_| self.session.get_untracked().is_empty()) {
                // Setting the session runs this again for it.
                self.session.set(latest.to_string());
                return;
            }
        }
        let session = self.session.get_untracked();
        if session.is_empty() {
            return;
        }
        let saved = match store.get(TRANSCRIPTS, &session).await {
            Ok(v) => v.and_then(|v| crate::io::json::decode::<model::offline::SavedConversation>(&v)),
            Err(e) => {
                self.saved_copy_error.set(Some(format!(
                    "The saved copy of this conversation could not be read ({e}), so none is shown while the gateway is away."
                )));
                return;
            }
        };
        let Some(saved) = saved else { return };
        if self.fresh.get_value() || self.session.get_untracked() != session || !self.messages.with_untracked(Vec::is_empty) {
            return;
        }
        self.messages
            .set(saved.messages.iter().map(|m| TranscriptRow { from_saved_copy: true, ..TranscriptRow::from_message(m) }).collect());
        self.saved_copy.set(Some(saved.confirmed_ms));
    }

    /// Saves the conversation's newest page a moment after it changed (one write for a burst
    /// of messages).
    fn schedule_save(&self) {
        let this = *self;
        super::debounce(self.save_due, 800, move || spawn_local(async move { this.save_copy().await }));
    }

    async fn save_copy(self) {
        let session = self.session.get_untracked();
        if session.is_empty() || !self.fresh.get_value() {
            return;
        }
        if !self.db.is_healthy() {
            self.saved_copy_error
                .set(Some("Browser storage is not available, so this conversation is not saved for reading offline.".into()));
            return;
        }
        let messages: Vec<serde_json::Value> =
            self.messages.with_untracked(|rows| rows.iter().filter(|r| !r.key.starts_with(LIVE_PREFIX)).map(|r| r.raw.clone()).collect());
        let saved = model::offline::SavedConversation {
            session_key: session.clone(),
            confirmed_ms: browser::now_ms(),
            messages: model::offline::saved_page(&messages),
        };
        // The saved copy writes to storage directly: a failure here (a full disk) costs only
        // the copy, never the outbox or the drafts, which keep using storage as before.
        let store = self.db.store();
        let result = async {
            store.put(TRANSCRIPTS, &session, &crate::io::json::encode(&saved)).await?;
            let mut index: model::offline::SavedIndex =
                store.get(TRANSCRIPTS, SAVED_INDEX_KEY).await?.and_then(|v| crate::io::json::decode(&v)).unwrap_or_default();
            for old in index.touch(&session, browser::now_ms()) {
                store.delete(TRANSCRIPTS, &old).await?;
            }
            store.put(TRANSCRIPTS, SAVED_INDEX_KEY, &crate::io::json::encode(&index)).await
        }
        .await;
        match result {
            Ok(()) => self.saved_copy_error.set(None),
            Err(e) => self
                .saved_copy_error
                .set(Some(format!("This conversation could not be saved for reading offline: {e}. Nothing else is affected."))),
        }
    }

    fn on_chat(&self, p: &Value) {
        let Some(event) = ChatEvent::read(p) else { return };
        let session = event.session_key.as_str();
        if session != self.session.get_untracked() {
            return;
        }
        let Some(run) = event.run_id.clone() else { return };
        let running = matches!(event.state, ChatEventState::Delta | ChatEventState::Status);
        let ended = matches!(event.state, ChatEventState::Final | ChatEventState::Aborted | ChatEventState::Error);
        if running && self.active_runs.with_untracked(|r| !r.contains(&run)) {
            self.active_runs.update(|r| r.push(run.clone()));
        } else if ended && self.active_runs.with_untracked(|r| r.contains(&run)) {
            self.active_runs.update(|r| r.retain(|x| *x != run));
        }
        match event.state {
            ChatEventState::Delta => {
                self.run_active.set(true);
                let text = event.delta_text.unwrap_or_default();
                let replace = event.replace;
                self.streams.update(|s| {
                    let e = s.entry(run).or_insert(RunStream { text: String::new(), state: RunState::Streaming });
                    if replace {
                        e.text = text;
                    } else {
                        e.text.push_str(&text);
                    }
                });
            }
            ChatEventState::Status => self.run_active.set(true),
            ChatEventState::Final => {
                self.run_active.set(false);
                // The saved row (session.message, or `message` here) replaces the stream.
                if let Some(m) = event.message.as_ref().filter(|m| m.is_object()) {
                    let mut wrapped = json!({"sessionKey": session, "message": m});
                    wrapped["message"]["__openclaw"]["runId"] = json!(run);
                    // Without its saved id the row is provisional: its `session.message` (or
                    // the next history page) replaces it instead of showing it twice.
                    if m.get("__openclaw").and_then(|o| o.get("id")).and_then(Value::as_str).is_none() {
                        wrapped["message"]["__openclaw"]["id"] = json!(format!("{LIVE_PREFIX}{run}"));
                    }
                    self.on_session_message(&wrapped);
                }
                self.streams.update(|s| {
                    s.remove(&run);
                });
            }
            ChatEventState::Aborted => {
                self.run_active.set(false);
                self.streams.update(|s| {
                    if let Some(e) = s.get_mut(&run) {
                        e.state = RunState::Aborted;
                    }
                });
            }
            ChatEventState::Error => {
                self.run_active.set(false);
                let msg = event.error_message.unwrap_or_else(|| "the run failed".to_string());
                self.streams.update(|s| {
                    let e = s.entry(run).or_insert(RunStream { text: String::new(), state: RunState::Streaming });
                    e.state = RunState::Failed { reason: msg };
                });
            }
            ChatEventState::Other => {}
        }
    }

    /// "Show the whole message": the row's whole text, now if the gateway's history is in,
    /// else as soon as it is (a click on the saved copy before the socket is up is kept, never
    /// refused for being early). The outcome is in `whole`.
    pub fn show_whole(self, key: String) {
        if self.client.status.get_untracked() == Status::Connected && self.fresh.get_value() {
            spawn_local(async move { self.fetch_whole(key).await });
        } else {
            self.set_whole(key, WholeMessage::Waiting);
        }
    }

    /// Where the request to read row `key` whole is, if there is one.
    fn set_whole(&self, key: String, state: WholeMessage) {
        self.whole.update(|w| match w.iter_mut().find(|r| r.key == key) {
            Some(r) => r.state = state,
            None => w.push(WholeRequest { key, state }),
        });
    }

    /// Gives each shortened row of a history page the whole row shown before (a reconnect's
    /// page shortens it again); returns the keys still waiting to be fetched. Requests for
    /// rows the page holds whole are dropped: nothing is left to fetch.
    fn keep_whole(&self, rows: &mut [TranscriptRow]) -> Vec<String> {
        let mut waiting = Vec::new();
        self.whole.update(|whole| {
            whole.retain(|request| {
                let Some(row) = rows.iter_mut().find(|r| r.key == request.key) else { return true };
                if !row.truncated {
                    return false;
                }
                match &request.state {
                    WholeMessage::Shown(kept) => *row = TranscriptRow { key: row.key.clone(), seq: row.seq, ..(**kept).clone() },
                    WholeMessage::Waiting => waiting.push(request.key.clone()),
                    WholeMessage::Loading | WholeMessage::Failed(_) => {}
                }
                true
            });
        });
        waiting
    }

    async fn fetch_whole(self, key: String) {
        let session = self.session.get_untracked();
        self.set_whole(key.clone(), WholeMessage::Loading);
        let result = self.whole_row(&session, &key).await;
        if self.session.get_untracked() != session {
            return;
        }
        let outcome = match result {
            Ok(whole) => {
                self.messages.update(|rows| {
                    if let Some(row) = rows.iter_mut().find(|r| r.key == key) {
                        *row = TranscriptRow { key: row.key.clone(), seq: row.seq, ..whole.clone() };
                    }
                });
                WholeMessage::Shown(Box::new(whole))
            }
            // The connection dropped on the way: asked again once the next history is in.
            Err(_) if self.client.status.get_untracked() != Status::Connected => WholeMessage::Waiting,
            Err(why) => WholeMessage::Failed(why),
        };
        self.set_whole(key, outcome);
    }

    /// `chat.message.get`: the row whole, or why the gateway could not give it.
    async fn whole_row(&self, session: &str, key: &str) -> Result<TranscriptRow, String> {
        let reply = self
            .client
            .request("chat.message.get", json!({"sessionKey": session, "messageId": key, "maxChars": 500000}))
            .await
            .map_err(|e| e.to_string())?;
        let Some(message) = reply.get("message").filter(|_| reply.get("ok").and_then(Value::as_bool) != Some(false)) else {
            let why = reply.get("unavailableReason").and_then(Value::as_str).unwrap_or("unknown");
            return Err(match why {
                "not_found" => "the gateway no longer has this message.".into(),
                "oversized" => "it is too large for the gateway to send.".into(),
                other => format!("the gateway could not give it ({other})."),
            });
        };
        let whole = TranscriptRow::from_message(message);
        if whole.truncated {
            return Err("it is too large for the gateway to send whole.".into());
        }
        Ok(whole)
    }

    /// Stop, now: `chat.abort` for the run (`model::command::abort_params`), straight to the
    /// gateway and never through the outbox, so a Stop is never delivered late. Offline it
    /// says so and nothing is kept to send later. `queued_here` counts this conversation's
    /// messages still queued in the outbox: they stay queued, and the outcome says so.
    pub fn stop(&self, queued_here: usize) {
        use model::command::StopOutcome;
        let this = *self;
        if self.client.status.get_untracked() != Status::Connected {
            self.stop_outcome.set(Some(StopOutcome::Offline));
            return;
        }
        let session = self.session.get_untracked();
        let params = self.active_runs.with_untracked(|runs| model::command::abort_params(&session, runs));
        self.stop_outcome.set(Some(StopOutcome::Stopping));
        spawn_local(async move {
            let outcome = match this.client.request("chat.abort", params).await {
                Ok(reply) => StopOutcome::from_reply(&reply, queued_here),
                Err(crate::io::gateway_client::RequestError::Disconnected) => StopOutcome::Failed(
                    "the connection dropped before the gateway answered, so the run may still be going. Nothing is sent again.".into(),
                ),
                Err(e) => StopOutcome::Failed(e.to_string()),
            };
            if this.session.get_untracked() == session {
                this.stop_outcome.set(Some(outcome));
            }
        });
    }

    async fn load_draft(self) {
        let session = self.session.get_untracked();
        let saved = self
            .db
            .get_all(COMPOSER)
            .await
            .into_iter()
            .find(|(k, _)| *k == session)
            .and_then(|(_, v)| crate::io::json::decode::<String>(&v));
        if self.session.get_untracked() != session {
            return;
        }
        if self.draft.get_untracked().is_empty() {
            self.draft.set(saved.unwrap_or_default());
        }
        if let Some(held) = HELD_DRAFTS.with_borrow_mut(|h| h.remove(&session)) {
            self.draft.update(|d| *d = merge_text(d, &held));
        }
    }

    /// Keeps the composer draft of this session (debounced into IndexedDB).
    pub fn set_draft(&self, text: String) {
        self.draft.set(text.clone());
        let this = *self;
        let session = self.session.get_untracked();
        if session.is_empty() {
            return;
        }
        set_timeout(
            move || {
                // The newest text of that session: the composer's, unless the pane has moved
                // to another conversation (or closed) since; then the text typed here.
                let text = if this.session.get_untracked() == session { this.draft.get_untracked() } else { text };
                spawn_local(async move {
                    // A credential-shaped draft stays in memory only (the composer says so),
                    // and no earlier copy of it is left behind.
                    if text.is_empty() || model::credential::detect(&text).is_some() {
                        this.db.delete(COMPOSER, &session).await;
                    } else {
                        this.db.put(COMPOSER, &session, &crate::io::json::encode(&text)).await;
                    }
                });
            },
            Duration::from_millis(250),
        );
    }

    /// Opens this controller for a pane on `session`.
    pub fn open_on(&self, session: &str) {
        self.draft.set(String::new());
        self.session.set(session.to_string());
        // The (re)connect effect loads it, now that the controller is open.
        self.open.set(true);
    }

    /// The pane closed: the controller lets go of its conversation. Drafts and queued
    /// messages are kept where they always are (IndexedDB and the outbox), untouched.
    pub fn close(&self) {
        self.open.set(false);
        self.session.set(String::new());
        self.messages.set(Vec::new());
        self.streams.set(BTreeMap::new());
        self.draft.set(String::new());
        self.saved_copy.set(None);
        self.fresh.set_value(false);
    }

    /// Puts text back into the composer (after Discard), below anything already typed.
    pub fn restore_text(&self, session: &str, text: &str) {
        if session != self.session.get_untracked() {
            // Another conversation: keep it in that session's stored draft, unless the text
            // (or what it joins) looks like a credential; then it waits in memory.
            let db = self.db;
            let (session, text) = (session.to_string(), text.to_string());
            spawn_local(async move {
                let current = db
                    .get_all(COMPOSER)
                    .await
                    .into_iter()
                    .find(|(k, _)| *k == session)
                    .and_then(|(_, v)| crate::io::json::decode::<String>(&v))
                    .unwrap_or_default();
                match model::draft::restore_into_stored_draft(&current, &text) {
                    model::draft::Restore::Store(merged) => {
                        db.put(COMPOSER, &session, &crate::io::json::encode(&merged)).await;
                    }
                    model::draft::Restore::HoldInMemory(text) => HELD_DRAFTS.with_borrow_mut(|h| {
                        let held = h.entry(session).or_default();
                        *held = merge_text(held, &text);
                    }),
                }
            });
            return;
        }
        let current = self.draft.get_untracked();
        if current.contains(text) {
            return;
        }
        self.set_draft(merge_text(&current, text));
    }
}
