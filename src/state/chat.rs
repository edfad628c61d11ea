//! The conversation: which session, its saved transcript (paged), live run streams, and
//! the composer's draft per session.

use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::{Value, json};

use model::url::ChatRoute;

use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::io::storage::LocalDb;
use crate::io::storage::store::{COMPOSER, TRANSCRIPTS};

pub use model::transcript::TranscriptRow;
use model::transcript::{Effect as Do, Run, Transcript};

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
    /// The saved rows, in order (the model's, copied out when they change).
    pub messages: RwSignal<Vec<TranscriptRow>>,
    pub has_more: RwSignal<bool>,
    pub loading: RwSignal<bool>,
    pub history_error: RwSignal<Option<String>>,
    /// The runs seen here, live (the model's, copied out when a run event changes them).
    pub runs: RwSignal<Vec<Run>>,
    /// Messages accepted while a run was busy and not answered yet (`pendingInputs`).
    pub pending_inputs: RwSignal<Vec<model::transcript::PendingInput>>,
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
    /// The conversation's rules and state (`model::transcript`).
    model: StoredValue<Transcript>,
    /// Whether the gateway gave this session's history since it was chosen.
    fresh: StoredValue<bool>,
    /// A save of the saved copy is due (debounced).
    save_due: StoredValue<bool>,
    /// A short `/chat/<agent>/<slug>-<id>` link waiting for the session list.
    short_link: StoredValue<Option<(String, String)>>,
    client: GatewayClient,
    db: LocalDb,
}

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
const SAVED_INDEX_KEY: &str = "\u{0}index";

/// The keys of a history page's rows.
fn page_keys(page: &Value) -> std::collections::HashSet<String> {
    let rows = page.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    rows.iter().filter_map(|m| m.get("__openclaw")?.get("id")?.as_str().map(str::to_string)).collect()
}

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
            runs: RwSignal::new(Vec::new()),
            pending_inputs: RwSignal::new(Vec::new()),
            run_active: RwSignal::new(false),
            active_runs: RwSignal::new(Vec::new()),
            stop_outcome: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            link_error: RwSignal::new(None),
            saved_copy: RwSignal::new(None),
            saved_copy_error: RwSignal::new(None),
            whole: RwSignal::new(Vec::new()),
            model: StoredValue::new(Transcript::default()),
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
                c.reset(&s);
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
        client.on_event("session.message", move |p| c.on_event(p, Transcript::saved_row));
        client.on_event("chat", move |p| c.on_event(p, Transcript::chat));
        client.on_event("agent", move |p| c.on_event(p, Transcript::agent));
        // A run this connection did not start (another tab's, or one going on before a reload)
        // sends its tool events as `session.tool` to conversation subscribers (`sessions.subscribe`).
        client.on_event("session.tool", move |p| c.on_event(p, Transcript::agent));
        // A rewind (this tab's or another's) took rows off the conversation: its history is
        // read again from scratch, since rows newer than a page are otherwise kept.
        client.on_event("sessions.changed", move |p| {
            let here = p.get("sessionKey").and_then(Value::as_str).is_some_and(|k| !k.is_empty() && k == c.session.get_untracked());
            if here && p.get("reason").and_then(Value::as_str) == Some("rewind") {
                spawn_local(async move { c.reload().await });
            }
        });
        c
    }

    /// The conversation read again from its first page, nothing of what was shown kept.
    pub async fn reload(self) {
        let session = self.session.get_untracked();
        self.reset(&session);
        self.load_history().await
    }

    /// A new conversation: nothing of the last one stays.
    fn reset(&self, session: &str) {
        self.model.set_value(Transcript::new(session));
        self.messages.set(Vec::new());
        self.runs.set(Vec::new());
        self.pending_inputs.set(Vec::new());
        self.run_active.set(false);
        self.active_runs.set(Vec::new());
    }

    /// Changes the model, copies out what changed, and carries out its effects.
    fn apply(&self, change: impl FnOnce(&mut Transcript) -> Vec<Do>) {
        let mut effects = Vec::new();
        let (rows, runs) = self
            .model
            .try_update_value(|t| {
                let (rows_before, runs_before) = (t.rows_version, t.runs_version);
                effects = change(t);
                let rows = (t.rows_version != rows_before).then(|| (t.rows.clone(), t.pending_inputs.clone(), t.has_more));
                (rows, (t.runs_version != runs_before).then(|| (t.runs.clone(), t.active_run_ids())))
            })
            .unwrap_or_default();
        if let Some((rows, pending, has_more)) = rows {
            self.messages.set(rows);
            self.has_more.set(has_more);
            if self.pending_inputs.with_untracked(|p| *p != pending) {
                self.pending_inputs.set(pending);
            }
        }
        if let Some((runs, active)) = runs {
            self.run_active.set(!active.is_empty());
            if self.active_runs.with_untracked(|a| *a != active) {
                self.active_runs.set(active);
            }
            self.runs.set(runs);
        }
        for effect in effects {
            match effect {
                Do::SyncHistory => {
                    let this = *self;
                    spawn_local(async move { this.sync_history().await });
                }
                Do::SaveCopy if self.fresh.get_value() => self.schedule_save(),
                Do::SaveCopy => {}
            }
        }
    }

    /// A live event for this conversation (`chat`, `agent`, `session.message`).
    fn on_event(&self, p: &Value, handle: fn(&mut Transcript, &Value) -> Vec<Do>) {
        let session = p.get("sessionKey").and_then(Value::as_str).unwrap_or_default();
        if session.is_empty() || session != self.session.get_untracked() {
            return;
        }
        self.apply(|t| handle(t, p));
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
        match self.client.request(protocol::methods::method::SESSIONS_LIST, params).await {
            Ok(v) => model::sessions::read_list(&v).into_iter().map(|r| r.key).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The newest page of the transcript (and a subscription to its live rows).
    pub async fn load_history(self) {
        self.fetch_history(true).await
    }

    /// The newest page again: a saved row was missed (a gap), or a run ended.
    async fn sync_history(self) {
        self.fetch_history(false).await
    }

    async fn fetch_history(self, subscribe: bool) {
        let session = self.session.get_untracked();
        if session.is_empty() {
            return;
        }
        if subscribe {
            let _ = self.client.request(protocol::methods::method::SESSIONS_MESSAGES_SUBSCRIBE, json!({"key": session})).await;
            self.loading.set(true);
        }
        // Live events that arrive while the page is on its way are newer than it.
        let mark = self.model.with_value(|t| t.event_mark);
        let result = self.client.request(protocol::methods::method::CHAT_HISTORY, json!({"sessionKey": session, "limit": 100})).await;
        if subscribe {
            self.loading.set(false);
        }
        if self.session.get_untracked() != session {
            return;
        }
        match result {
            Ok(v) => {
                let mut waiting = Vec::new();
                self.apply(|t| {
                    if t.session_key.is_empty() {
                        t.session_key = session.clone();
                    }
                    let effects = t.history_since(&v, mark);
                    waiting = self.keep_whole(&mut t.rows, &page_keys(&v));
                    effects
                });
                self.history_error.set(None);
                self.fresh.set_value(true);
                self.saved_copy.set(None);
                self.schedule_save();
                for key in waiting {
                    spawn_local(async move { self.fetch_whole(key).await });
                }
            }
            Err(e) if subscribe => {
                // A click that waited for this history gets the reason, and can be tried again.
                self.whole.update(|w| {
                    for r in w.iter_mut().filter(|r| r.state == WholeMessage::Waiting) {
                        r.state = WholeMessage::Failed(format!("the conversation could not be loaded ({e})."));
                    }
                });
                self.history_error.set(Some(format!("The conversation could not be loaded: {e}")));
            }
            // A sync that failed (the connection dropped): the reconnect loads the history.
            Err(_) => {}
        }
    }

    /// The next older page.
    pub fn load_older(&self) {
        let this = *self;
        spawn_local(async move {
            let session = this.session.get_untracked();
            let offset = this.messages.with_untracked(Vec::len);
            this.loading.set(true);
            let result = this
                .client
                .request(protocol::methods::method::CHAT_HISTORY, json!({"sessionKey": session, "limit": 100, "offset": offset}))
                .await;
            this.loading.set(false);
            if let Ok(v) = result
                && this.session.get_untracked() == session
            {
                // An older row asked for whole earlier (shown, or waiting since a reconnect's
                // newest page did not hold it) is given or fetched now.
                let mut waiting = Vec::new();
                this.apply(|t| {
                    t.older(&v);
                    waiting = this.keep_whole(&mut t.rows, &page_keys(&v));
                    Vec::new()
                });
                for key in waiting {
                    spawn_local(async move { this.fetch_whole(key).await });
                }
            }
        });
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
        self.apply(|t| {
            t.session_key = session.clone();
            t.saved_copy(&saved.messages);
            Vec::new()
        });
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
        let messages: Vec<serde_json::Value> = self.messages.with_untracked(|rows| rows.iter().map(|r| r.raw.clone()).collect());
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
    fn keep_whole(&self, rows: &mut [TranscriptRow], page: &std::collections::HashSet<String>) -> Vec<String> {
        let mut waiting = Vec::new();
        self.whole.update(|whole| {
            whole.retain(|request| {
                let Some(row) = rows.iter_mut().find(|r| r.key == request.key && page.contains(&r.key)) else { return true };
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
                self.apply(|t| {
                    if let Some(row) = t.rows.iter_mut().find(|r| r.key == key) {
                        *row = TranscriptRow { key: row.key.clone(), seq: row.seq, ..whole.clone() };
                        t.rows_version += 1;
                    }
                    Vec::new()
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
            .request(protocol::methods::method::CHAT_MESSAGE_GET, json!({"sessionKey": session, "messageId": key, "maxChars": 500000}))
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

    /// Stop, now: `chat.abort` for the run, or `sessions.abort` while sub-agents of the
    /// conversation work (`model::command::stop_request`), straight to the
    /// gateway and never through the outbox, so a Stop is never delivered late. Offline it
    /// says so and nothing is kept to send later. `queued_here` counts this conversation's
    /// messages still queued in the outbox: they stay queued, and the outcome says so.
    pub fn stop(&self, queued_here: usize, sub_agents_running: bool) {
        use model::command::StopOutcome;
        let this = *self;
        if self.client.status.get_untracked() != Status::Connected {
            self.stop_outcome.set(Some(StopOutcome::Offline));
            return;
        }
        let session = self.session.get_untracked();
        let (method, params) = self.active_runs.with_untracked(|runs| model::command::stop_request(&session, runs, sub_agents_running));
        self.stop_outcome.set(Some(StopOutcome::Stopping));
        spawn_local(async move {
            let outcome = match this.client.request(method, params).await {
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
        self.reset("");
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
