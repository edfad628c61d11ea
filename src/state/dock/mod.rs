//! The question dock's glue: gateway events and requests in, the pure [`Dock`] state
//! machine in the middle, drafts and receipts mirrored to IndexedDB.

use std::collections::HashMap;
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::dock::{Dock, Effect as DockEffect, LocalState, Lookup, Receipt};
use model::draft::QuestionDraft;
use protocol::question::QuestionRecord;
use serde_json::{Value, json};

use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, RequestError, Status};
use crate::io::storage::LocalDb;
use crate::io::storage::store::{DRAFTS, RECEIPTS};

pub mod approvals;
pub mod choice;

/// What the person may do with questions on this connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionAccess {
    /// `operator.questions`, admin, or the guest scope for own sessions.
    Answer,
    /// Neither: questions cannot be listed or answered here.
    None,
}

/// An answer held back because it looks like a credential (see `model::credential`).
#[derive(Debug, Clone, PartialEq)]
pub struct HeldAnswer {
    pub request_id: String,
    pub found: model::credential::CredentialMatch,
    /// The draft revision that was held: Send anyway sends exactly that text.
    pub revision: u64,
    /// Send anyway was pressed once; the second, deliberate click sends.
    pub confirming: bool,
}

/// What the dock asks of whoever answers async questions (`state::async_q`): they are answered
/// by chat, not by `question.resolve`, so the dock hands Submit and Skip on. The handler is set
/// from outside, which keeps this module free of that one.
pub enum AsyncAction {
    /// Submit the async entry with this dock key.
    Submit(String),
    /// Dismiss the async entry with this dock key.
    Dismiss(String),
}

/// One revision of one request's draft: what Send anyway confirmed, so an edit after it is
/// checked again.
#[derive(Debug, Clone, PartialEq)]
struct DraftRevision {
    request_id: String,
    revision: u64,
}

#[derive(Clone, Copy)]
pub struct DockController {
    pub dock: RwSignal<Dock>,
    /// One signal per request's draft, so typing re-renders only that request.
    pub drafts: RwSignal<HashMap<String, RwSignal<QuestionDraft>>>,
    /// The polite live region's text.
    pub announce: RwSignal<String>,
    /// A clock for countdowns; ticks each second while requests are pending.
    pub now: RwSignal<i64>,
    /// `/ask/<id>`: only this request is shown.
    pub deep_link: RwSignal<Option<String>>,
    /// Set while a text field inside the dock has focus (no focus stealing).
    pub typing_in_dock: RwSignal<bool>,
    /// Set while the composer has focus and holds unsent text.
    pub typing_in_composer: RwSignal<bool>,
    /// The answer held because it looks like a credential, if any.
    pub held: RwSignal<Option<HeldAnswer>>,
    /// What a notification's action chose for the deep-linked request, and what its card says
    /// of it (`choice.rs`).
    pub choice: choice::ChoiceFromNotification,
    /// Set once the saved drafts have loaded (a choice is applied over them, never under).
    pub drafts_loaded: RwSignal<bool>,
    /// The draft the person confirmed with Send anyway.
    send_anyway: StoredValue<Option<DraftRevision>>,
    pub(crate) client: GatewayClient,
    pub(crate) db: LocalDb,
    /// Where Submit and Skip of async questions go (they are answered by chat, not by
    /// `question.resolve`).
    async_handler: StoredValue<Option<std::rc::Rc<dyn Fn(AsyncAction)>>, LocalStorage>,
    /// The controller's reactive owner: drafts live as long as the app, not as long as the
    /// component that first touched them (a collapsed panel must not take drafts with it).
    owner: StoredValue<Owner, LocalStorage>,
}

impl DockController {
    pub fn new(client: GatewayClient, db: LocalDb) -> DockController {
        let expanded = browser::local_get("ocui.dock.expanded").as_deref() != Some("false");
        let mut dock = Dock::new();
        dock.expanded = expanded;
        let c = DockController {
            dock: RwSignal::new(dock),
            drafts: RwSignal::new(HashMap::new()),
            announce: RwSignal::new(String::new()),
            now: RwSignal::new(browser::now_ms() as i64),
            deep_link: RwSignal::new(deep_link_from_path().map(|l| l.id)),
            typing_in_dock: RwSignal::new(false),
            typing_in_composer: RwSignal::new(false),
            held: RwSignal::new(None),
            choice: choice::ChoiceFromNotification::from_address(),
            drafts_loaded: RwSignal::new(false),
            send_anyway: StoredValue::new(None),
            client,
            db,
            owner: StoredValue::new_local(Owner::current().unwrap_or_default()),
            async_handler: StoredValue::new_local(None),
        };
        c.wire_events();
        c.wire_approvals();
        c.start_clock();
        c.apply_choice_when_shown();
        // Remember which request was shown, so a reload comes back to it.
        Effect::new(move |_| {
            if let Some(id) = c.dock.with(|d| d.current.clone()) {
                browser::session_set("ocui.dock.current", &id);
            }
        });
        // Load saved drafts and receipts whenever the database (re)opens.
        Effect::new(move |_| {
            if db.opened.get() > 0 {
                spawn_local(async move { c.load().await });
            }
        });
        c
    }

    pub fn access(&self) -> QuestionAccess {
        if protocol::methods::can_answer_questions(&self.client.scopes()) { QuestionAccess::Answer } else { QuestionAccess::None }
    }

    async fn load(self) {
        let receipts: Vec<Receipt> = self.db.get_all(RECEIPTS).await.iter().filter_map(|(_, v)| crate::io::json::decode(v)).collect();
        self.dock.update(|d| d.restore_receipts(receipts));
        for (_, v) in self.db.get_all(DRAFTS).await {
            let Some(saved) = crate::io::json::decode::<QuestionDraft>(&v) else { continue };
            // A draft typed before the stored copy loaded wins if it is newer.
            let existing = self.drafts.with_untracked(|m| m.get(&saved.request_id).copied());
            match existing {
                Some(sig) if sig.with_untracked(|d| d.revision >= saved.revision && d.is_touched()) => {}
                Some(sig) => sig.set(saved),
                None => {
                    self.insert_draft(saved);
                }
            }
        }
        self.drafts_loaded.set(true);
    }

    fn insert_draft(&self, draft: QuestionDraft) -> RwSignal<QuestionDraft> {
        let this = *self;
        self.owner.get_value().with(move || this.insert_draft_owned(draft))
    }

    fn insert_draft_owned(&self, draft: QuestionDraft) -> RwSignal<QuestionDraft> {
        let id = draft.request_id.clone();
        let sig = RwSignal::new(draft);
        // The one effect that mirrors this draft to storage: only touched drafts, only
        // forward revisions, never secrets (they are not serialised).
        let this = *self;
        let written = StoredValue::new(0u64);
        Effect::new(move |_| {
            let d = sig.get();
            if !d.is_touched() || d.revision <= written.get_value() {
                return;
            }
            written.set_value(d.revision);
            // A credential-shaped typed answer stays in memory only (the dock says so).
            let json = crate::io::json::encode(&d.for_storage());
            let id = d.request_id.clone();
            let db = this.db;
            spawn_local(async move {
                db.put(DRAFTS, &id, &json).await;
            });
        });
        self.drafts.update(|m| {
            m.insert(id, sig);
        });
        sig
    }

    /// The draft signal of a request, created on first use.
    pub fn draft(&self, id: &str) -> RwSignal<QuestionDraft> {
        if let Some(sig) = self.drafts.with_untracked(|m| m.get(id).copied()) {
            return sig;
        }
        self.insert_draft(QuestionDraft::new(id))
    }

    fn wire_events(&self) {
        let this = *self;
        self.client.on_event("question.requested", move |p| {
            let typing = this.typing_in_dock.get_untracked() || this.typing_in_composer.get_untracked();
            let fx = this.dock.try_update(|d| d.requested(p, typing)).unwrap_or_default();
            this.fit_draft_to(p);
            this.run(fx);
        });
        self.client.on_event("question.resolved", move |p| {
            let fx = this.dock.try_update(|d| d.resolved(p)).unwrap_or_default();
            this.run(fx);
        });
        // Hydrate on every (re)connect and after missed events.
        Effect::new(move |_| {
            let _ = this.client.connected_epoch.get();
            let _ = this.client.resync_epoch.get();
            if this.client.status.get_untracked() == Status::Connected {
                spawn_local(async move { this.hydrate().await });
            }
        });
    }

    fn fit_draft_to(&self, payload: &Value) {
        if let (Some(id), Ok(record)) =
            (payload.get("id").and_then(Value::as_str), serde_json::from_value::<QuestionRecord>(payload.clone()))
        {
            if let Some(sig) = self.drafts.with_untracked(|m| m.get(id).copied()) {
                sig.update(|d| d.fit(&record));
            }
        }
    }

    async fn hydrate(self) {
        if self.access() == QuestionAccess::None {
            return;
        }
        let mark = self.dock.with_untracked(Dock::list_mark);
        // The first listing of a connection takes the answer to the one sent behind `connect`
        // (`app::run` asks for that; nothing arrives between `connect` and `hello-ok`, so the
        // mark holds for it too).
        match self.client.request(protocol::methods::method::QUESTION_LIST, json!({})).await {
            Ok(v) => {
                let records: Vec<Value> = v.get("questions").and_then(Value::as_array).cloned().unwrap_or_default();
                let shown_before_reload = browser::session_get("ocui.dock.current");
                let fx = self
                    .dock
                    .try_update(|d| {
                        let first_load = d.is_empty();
                        let fx = d.listed_since(&records, mark);
                        if let (true, Some(id)) = (first_load, shown_before_reload) {
                            d.select(&id);
                        }
                        fx
                    })
                    .unwrap_or_default();
                for r in &records {
                    self.fit_draft_to(r);
                }
                self.run(fx);
            }
            Err(e) => browser::log_warn(&format!("question.list failed: {e}")),
        }
        if let Some(link) = deep_link_from_path().filter(|l| l.kind == model::url::RequestKind::Question) {
            let known = self.dock.with_untracked(|d| d.entry(&link.id).is_some() || d.receipts.iter().any(|r| r.id == link.id));
            if !known {
                self.fetch(link.id).await;
            }
        }
    }

    /// `question.get` for recovery and deep links.
    async fn fetch(self, id: String) {
        let result = self.client.request(protocol::methods::method::QUESTION_GET, json!({ "id": id })).await;
        let fx = match &result {
            Ok(v) => self.dock.try_update(|d| d.got(&id, Lookup::Found(v))).unwrap_or_default(),
            Err(RequestError::Gateway(e)) if e.detail_reason() == Some(protocol::error::reason::QUESTION_NOT_FOUND) => {
                self.dock.try_update(|d| d.got(&id, Lookup::Unknown)).unwrap_or_default()
            }
            Err(e) => {
                let msg = e.to_string();
                self.dock.try_update(|d| d.got(&id, Lookup::Failed(&msg))).unwrap_or_default()
            }
        };
        self.run(fx);
    }

    pub(crate) fn run(&self, fx: Vec<DockEffect>) {
        for e in fx {
            match e {
                DockEffect::Get(id) => {
                    let this = *self;
                    spawn_local(async move { this.fetch(id).await });
                }
                DockEffect::GetAfter(id, ms) => {
                    let this = *self;
                    set_timeout(move || spawn_local(async move { this.fetch(id).await }), Duration::from_millis(ms));
                }
                DockEffect::GetApproval(id) => {
                    let this = *self;
                    spawn_local(async move { this.fetch_approval(id).await });
                }
                DockEffect::GetApprovalAfter(id, ms) => {
                    let this = *self;
                    set_timeout(move || spawn_local(async move { this.fetch_approval(id).await }), Duration::from_millis(ms));
                }
                DockEffect::Announce(text) => self.announce.set(text),
                DockEffect::DropDraft(id) => self.drop_draft(&id),
                DockEffect::ParkDraft(id) => {
                    self.park_draft(&id);
                }
                DockEffect::DropReceipt(id) => {
                    let db = self.db;
                    spawn_local(async move {
                        db.delete(RECEIPTS, &id).await;
                    });
                }
                DockEffect::SaveReceipt(mut r) => {
                    if r.at_ms == 0.0 {
                        r.at_ms = browser::now_ms();
                        let stamped = r.clone();
                        self.dock.update(|d| {
                            if let Some(x) = d.receipts.iter_mut().find(|x| x.id == stamped.id) {
                                x.at_ms = stamped.at_ms;
                            }
                        });
                    }
                    self.save_receipt(r);
                }
            }
        }
    }

    fn save_receipt(&self, r: Receipt) {
        let db = self.db;
        let json = crate::io::json::encode(&r);
        spawn_local(async move {
            db.put(RECEIPTS, &r.id, &json).await;
        });
    }

    /// A request left the dock. Text typed into one that could not be answered stays
    /// copyable in its receipt; then the draft goes.
    fn drop_draft(&self, id: &str) {
        if !self.park_draft(id) {
            // Not in memory (never loaded here): the stored copy still goes.
            let db = self.db;
            let id = id.to_string();
            spawn_local(async move {
                db.delete(DRAFTS, &id).await;
            });
            return;
        }
        self.drafts.update(|m| {
            m.remove(id);
        });
        let db = self.db;
        let id = id.to_string();
        spawn_local(async move {
            db.delete(DRAFTS, &id).await;
        });
    }

    /// Keeps what the person typed copyable in the request's receipt; the draft stays (a
    /// listing may yet bring the request back). False when there is no draft here.
    fn park_draft(&self, id: &str) -> bool {
        let Some(sig) = self.drafts.with_untracked(|m| m.get(id).copied()) else { return false };
        let questions = self.dock.with_untracked(|d| d.receipts.iter().find(|r| r.id == id).map(|r| r.questions.clone()));
        if let Some(questions) = questions {
            let text = sig.with_untracked(|d| d.typed_text(&questions));
            if let Some(r) = self.dock.try_update(|d| d.keep_unsent_text(id, text)).flatten() {
                self.save_receipt(r);
            }
        }
        true
    }

    fn start_clock(&self) {
        let this = *self;
        let _ = set_interval_with_handle(
            move || {
                let now = browser::now_ms() as i64;
                let pending = this.dock.with_untracked(|d| !d.is_empty());
                if !pending {
                    return;
                }
                this.now.set(now);
                let due = this.dock.with_untracked(|d| d.any_due(now));
                if due {
                    let fx = this.dock.try_update(|d| d.tick(now)).unwrap_or_default();
                    this.run(fx);
                }
            },
            Duration::from_secs(1),
        );
    }

    pub fn set_expanded(&self, expanded: bool) {
        self.dock.update(|d| d.expanded = expanded);
        browser::local_set("ocui.dock.expanded", if expanded { "true" } else { "false" });
    }

    pub fn set_async_handler(&self, f: impl Fn(AsyncAction) + 'static) {
        self.async_handler.set_value(Some(std::rc::Rc::new(f)));
    }

    fn to_async(&self, action: AsyncAction) -> bool {
        match self.async_handler.get_value() {
            Some(h) => {
                h(action);
                true
            }
            None => false,
        }
    }

    /// Shows request `id` in the dock, expanded (a notification was clicked).
    pub fn open_request(&self, id: &str) {
        self.dock.update(|d| d.select(id));
        self.set_expanded(true);
    }

    /// Submit the current draft of `id`. A typed answer that looks like a credential is held
    /// instead, until the person edits it or confirms it twice.
    pub fn submit(&self, id: &str) {
        let draft = self.draft(id).get_untracked();
        if let Some(found) = draft.credential() {
            if self.send_anyway.get_value() != Some(DraftRevision { request_id: id.to_string(), revision: draft.revision }) {
                self.announce.set(format!("Not sent: the answer looks like {}.", found.kind.describe()));
                self.held.set(Some(HeldAnswer { request_id: id.to_string(), found, revision: draft.revision, confirming: false }));
                return;
            }
        }
        if self.held.with_untracked(|h| h.as_ref().is_some_and(|h| h.request_id == id)) {
            self.held.set(None);
        }
        if id.starts_with(model::dock::ASYNC_PREFIX) {
            self.to_async(AsyncAction::Submit(id.to_string()));
            return;
        }
        let started = self.dock.try_update(|d| d.submit(id, &draft));
        match started {
            Some(Ok(params)) => self.send_resolve(id.to_string(), serde_json::to_value(params).unwrap_or_default()),
            Some(Err(incomplete)) => {
                self.draft(id).update(|d| d.set_step(incomplete.step));
                self.announce.set(incomplete.message.clone());
                self.dock.update(|d| {
                    if let Some(model::dock::Entry::Valid { state, .. }) = d.entries.iter_mut().find(|e| e.id() == id) {
                        if !matches!(state, LocalState::Submitting { .. }) {
                            *state = LocalState::Failed { message: incomplete.message };
                        }
                    }
                });
            }
            None => {}
        }
    }

    /// The first Send anyway on a held answer: the notice asks for confirmation.
    pub fn send_anyway(&self, id: &str) {
        self.held.update(|h| {
            if let Some(h) = h.as_mut().filter(|h| h.request_id == id) {
                h.confirming = true;
            }
        });
    }

    /// The second, deliberate action: sends the held text as it is (once; an edit since the
    /// hold is checked again).
    pub fn confirm_send_anyway(&self, id: &str) {
        let Some(h) = self.held.get_untracked().filter(|h| h.request_id == id && h.confirming) else { return };
        self.send_anyway.set_value(Some(DraftRevision { request_id: id.to_string(), revision: h.revision }));
        self.submit(id);
    }

    /// Edit: the notice goes, the text stays for the person to change.
    pub fn edit_held(&self, id: &str) {
        if self.held.with_untracked(|h| h.as_ref().is_some_and(|h| h.request_id == id)) {
            self.held.set(None);
        }
    }

    /// Skip: decline the whole prompt (for async questions: dismiss, locally).
    pub fn skip(&self, id: &str) {
        if id.starts_with(model::dock::ASYNC_PREFIX) {
            self.to_async(AsyncAction::Dismiss(id.to_string()));
            return;
        }
        if let Some(Some(params)) = self.dock.try_update(|d| d.skip(id)) {
            self.send_resolve(id.to_string(), serde_json::to_value(params).unwrap_or_default());
        }
    }

    fn send_resolve(&self, id: String, params: Value) {
        let this = *self;
        let connected = self.client.status.get_untracked() == Status::Connected;
        spawn_local(async move {
            let result = this.client.request(protocol::methods::method::QUESTION_RESOLVE, params).await;
            let fx = match result {
                Ok(v) => this.dock.try_update(|d| d.submit_ok(&id, &v)).unwrap_or_default(),
                Err(RequestError::Gateway(e)) => this.dock.try_update(|d| d.submit_failed(&id, Some(&e), true)).unwrap_or_default(),
                Err(RequestError::Disconnected) => this.dock.try_update(|d| d.submit_failed(&id, None, connected)).unwrap_or_default(),
            };
            this.run(fx);
        });
    }
}

/// `/ask/<id>` or `/approve/<id>` in the address bar.
pub(crate) fn deep_link_from_path() -> Option<model::url::RequestLink> {
    model::url::parse_request_link(&browser::app_path())
}

/// One pane's view of the dock (`model::panes`): the requests of its conversation, and the
/// one it shows. The dock state itself, drafts included, is the page's one `DockController`.
#[derive(Clone, Copy)]
pub struct DockView {
    /// The requests this pane shows, in arrival order.
    pub ids: Memo<Vec<String>>,
    /// The request it shows.
    pub current: Memo<Option<String>>,
    /// The pane's number, unique in the page: element ids and radio-group names carry it,
    /// so two docks on one page never share a radio group (which would uncheck each other).
    pub pane: usize,
    shown_last: RwSignal<Option<String>>,
    ctl: DockController,
}

impl DockView {
    /// The view of a pane on `session`; `first` for the leftmost pane, which also shows
    /// requests of conversations no pane shows.
    pub fn new(
        ctl: DockController,
        pane: usize,
        session: Signal<String>,
        first: Signal<bool>,
        open_sessions: Signal<Vec<String>>,
    ) -> DockView {
        let ids = Memo::new(move |_| {
            let deep = ctl.deep_link.get();
            let (session, first) = (session.get(), first.get());
            open_sessions.with(|open| {
                ctl.dock.with(|d| {
                    d.entries
                        .iter()
                        .filter(|e| deep.is_some() || model::panes::pane_shows(e.session_key(), &session, first, open))
                        .map(|e| e.id().to_string())
                        .filter(|id| deep.as_ref().is_none_or(|x| x == id))
                        .collect::<Vec<_>>()
                })
            })
        });
        let shown_last = RwSignal::new(None::<String>);
        let current = Memo::new(move |_| {
            let page = ctl.dock.with(|d| d.current.clone());
            ids.with(|ids| model::panes::pane_current(ids, page.as_deref(), shown_last.get_untracked().as_deref()))
        });
        Effect::new(move |_| shown_last.set(current.get()));
        DockView { ids, current, pane, shown_last, ctl }
    }

    /// `(i, n)` of the shown request among this pane's.
    pub fn position(&self) -> Option<(usize, usize)> {
        let cur = self.current.get()?;
        self.ids.with(|ids| Some((ids.iter().position(|i| *i == cur)? + 1, ids.len())))
    }

    /// The next or previous request of this pane (it becomes the page's current one too).
    pub fn step(&self, forward: bool) {
        let next = self.ids.with_untracked(|ids| model::panes::pane_step(ids, self.current.get_untracked().as_deref(), forward));
        if let Some(id) = next {
            self.shown_last.set(Some(id.clone()));
            self.ctl.dock.update(|d| d.select(&id));
        }
    }

    /// Whether the request shown blocks the agent (then the dock takes the composer's place).
    pub fn current_is_blocking(&self) -> bool {
        let Some(cur) = self.current.get() else {
            return false;
        };
        self.ctl.dock.with(|d| d.blocks(&cur))
    }

    /// Whether a question of this pane waits that a plain reply can answer
    /// (`model::dock::Entry::plain_reply_answers`): one a run still going asked, not a secret.
    pub fn plain_reply_waits(&self, active_runs: &[String]) -> bool {
        self.ids.with(|ids| self.ctl.dock.with(|d| ids.iter().any(|i| d.entry(i).is_some_and(|e| e.plain_reply_answers(active_runs)))))
    }

    /// Whether an approval of this pane waits (a reply never decides it).
    pub fn approval_waits(&self) -> bool {
        self.ids.with(|ids| self.ctl.dock.with(|d| ids.iter().any(|i| d.approval(i).is_some())))
    }
}
