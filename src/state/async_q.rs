//! Async questions in the page: found in the transcript, shown in the dock without
//! blocking, answered through the outbox, confirmed from saved history, dismissed (with
//! Undo) or retired into history and reopened. The rules are in `model::async_q`.

use std::collections::HashMap;
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::async_q::{AsyncQuestion, confirmed_item, format_answer, is_retired, recognize};
use model::dock::ASYNC_PREFIX;
use model::draft::QuestionDraft;
use model::outbox::{OutboxRow, SendState};
use protocol::question::{QuestionRecord, QuestionStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::io::storage::LocalDb;
use crate::io::storage::store::ASYNC;
use crate::io::tabs::Channel;
use crate::state::chat::ChatController;
use crate::state::dock::{AsyncAction, DockController};
use crate::state::outbox::OutboxController;
use crate::state::panes::Panes;

/// What the person did with an async question in this browser (kept in IndexedDB).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalAsync {
    #[serde(default)]
    pub dismissed: bool,
    /// Reopened from history after this transcript seq: only a completion after it retires
    /// the question again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reopened_after_seq: Option<u64>,
}

/// Where an async question stands.
#[derive(Debug, Clone, PartialEq)]
pub enum AsyncStatus {
    /// Waiting for an answer (in the dock).
    Pending,
    /// An answer is in the outbox.
    Delivering(OutboxRow),
    /// Saved history holds the answer. `text` is the saved reply.
    Sent {
        text: String,
        answers: Option<Vec<String>>,
    },
    Dismissed,
    /// Moved into history by a later successful run: "No longer pending".
    Retired,
}

#[derive(Clone, Copy)]
pub struct AsyncQController {
    /// The async questions in every open pane's transcript, each with the pane controller
    /// (`Panes::chats` index) whose conversation it is in; once each.
    pub questions: Memo<Vec<(usize, AsyncQuestion)>>,
    pub local: RwSignal<HashMap<String, LocalAsync>>,
    /// The item whose dismissal can still be undone.
    pub undo: RwSignal<Option<String>>,
    /// A question to show expanded as soon as it is back in the dock (after Answer).
    open_when_back: RwSignal<Option<String>>,
    panes: Panes,
    outbox: OutboxController,
    dock: DockController,
    db: LocalDb,
    channel: StoredValue<Channel, LocalStorage>,
}

impl AsyncQController {
    pub fn new(panes: Panes, outbox: OutboxController, dock: DockController, db: LocalDb) -> AsyncQController {
        let questions = Memo::new(move |_| {
            let mut found: Vec<(usize, AsyncQuestion)> = Vec::new();
            for (i, chat) in panes.chats.get_value().into_iter().enumerate() {
                chat.messages.with(|rows| {
                    for q in rows.iter().filter_map(|r| recognize(&r.raw)?.ok()) {
                        if !found.iter().any(|(_, f)| f.item_id == q.item_id) {
                            found.push((i, q));
                        }
                    }
                })
            }
            found
        });
        let local = RwSignal::new(HashMap::<String, LocalAsync>::new());
        let reload = RwSignal::new(0u64);
        let channel = Channel::open(&crate::io::storage::scoped("ocui-async"), move |_| reload.update(|n| *n += 1));
        let c = AsyncQController {
            questions,
            local,
            undo: RwSignal::new(None),
            open_when_back: RwSignal::new(None),
            panes,
            outbox,
            dock,
            db,
            channel: StoredValue::new_local(channel),
        };
        Effect::new(move |_| {
            let _ = reload.get();
            if db.opened.get() > 0 {
                spawn_local(async move {
                    let stored: HashMap<String, LocalAsync> =
                        db.get_all(ASYNC).await.into_iter().filter_map(|(k, v)| Some((k, crate::io::json::decode(&v)?))).collect();
                    local.set(stored);
                });
            }
        });
        // The dock shows exactly the pending async questions of this conversation.
        Effect::new(move |_| {
            let wanted: Vec<QuestionRecord> = c
                .questions
                .get()
                .into_iter()
                .filter(|(_, q)| c.status(q) == AsyncStatus::Pending)
                .map(|(home, q)| {
                    let session = panes.chat(home).session.get();
                    let key = q.key();
                    c.ensure_draft(&key, &q);
                    QuestionRecord {
                        id: key,
                        questions: q.as_questions(),
                        agent_id: None,
                        session_key: Some(session.clone()),
                        run_id: q.run_id.clone(),
                        created_at_ms: q.seq as i64,
                        expires_at_ms: i64::MAX,
                        status: QuestionStatus::Pending,
                        answers: None,
                        resolved_by: None,
                    }
                })
                .collect();
            let fx = dock.dock.try_update(|d| d.sync_async(wanted)).unwrap_or_default();
            if let Some(key) = c.open_when_back.get_untracked() {
                if dock.dock.with_untracked(|d| d.entry(&key).is_some()) {
                    c.open_when_back.set(None);
                    dock.dock.update(|d| d.select(&key));
                    dock.set_expanded(true);
                }
            }
            for e in fx {
                if let model::dock::Effect::Announce(t) = e {
                    dock.announce.set(t);
                }
            }
        });
        dock.set_async_handler(move |action| match action {
            AsyncAction::Submit(key) => c.submit(&key),
            AsyncAction::Dismiss(key) => c.dismiss(key.trim_start_matches(ASYNC_PREFIX)),
        });
        c
    }

    /// The async draft starts with the first options selected; a changed question resets it.
    fn ensure_draft(&self, key: &str, q: &AsyncQuestion) {
        let sig = q.signature();
        let sig_now = self.dock.drafts.with_untracked(|m| m.get(key).map(|d| d.with_untracked(|d| d.signature.clone())));
        match sig_now {
            Some(s) if s == sig => {}
            Some(_) => {
                let fresh = QuestionDraft::preselected(key, &q.as_questions(), &sig);
                self.dock.draft(key).set(fresh);
            }
            None => {
                let fresh = QuestionDraft::preselected(key, &q.as_questions(), &sig);
                self.dock.draft(key).set(fresh);
            }
        }
    }

    /// Where `q` stands, from the outbox, saved history and local choices.
    pub fn status(&self, q: &AsyncQuestion) -> AsyncStatus {
        let row = self.outbox.rows.with(|rows| {
            rows.iter().filter(|r| r.async_item_id.as_deref() == Some(q.item_id.as_str()) && !r.discarded).max_by_key(|r| r.order).cloned()
        });
        let local = self.local.with(|l| l.get(&q.item_id).cloned()).unwrap_or_default();
        // Edited drafts are never archived. Read untracked: typing must not recompute every
        // question's status; a retiring message re-runs this anyway.
        let edited = self.dock.drafts.with_untracked(|m| m.get(&q.key()).map(|d| d.with_untracked(|d| d.revision > 0)).unwrap_or(false));
        self.chat_of(&q.item_id).messages.with(|rows| {
            // Saved history first: our own row's key, then the protocol's matching rules.
            let mut unresolved: Vec<AsyncQuestion> = Vec::new();
            for r in rows {
                let m = &r.raw;
                if let Some(Ok(aq)) = recognize(m) {
                    unresolved.push(aq);
                    continue;
                }
                let by_key = row.as_ref().is_some_and(|o| {
                    m.get("__openclaw").and_then(|x| x.get("idempotencyKey")).and_then(Value::as_str) == Some(o.saved_key().as_str())
                });
                let hit = if by_key { Some(q.item_id.clone()) } else { confirmed_item(&unresolved, m) };
                if let Some(item) = hit {
                    if item == q.item_id {
                        let text = model::message_text(m);
                        let answers = model::async_q::parse_answer(&q.items, &text);
                        return AsyncStatus::Sent { text, answers };
                    }
                    unresolved.retain(|u| u.item_id != item);
                }
            }
            if let Some(r) = row {
                return if r.state == SendState::Confirmed {
                    AsyncStatus::Sent { text: r.text.clone(), answers: None }
                } else {
                    AsyncStatus::Delivering(r)
                };
            }
            if local.dismissed {
                return AsyncStatus::Dismissed;
            }
            let after = local.reopened_after_seq.unwrap_or(q.seq);
            if !edited && is_retired(q, rows.iter().filter(|r| r.seq > after).map(|r| &r.raw)) {
                return AsyncStatus::Retired;
            }
            AsyncStatus::Pending
        })
    }

    /// Sends the answer as an ordinary chat message through the outbox. The composer's own
    /// draft is left alone.
    fn submit(&self, key: &str) {
        let item = key.trim_start_matches(ASYNC_PREFIX).to_string();
        let Some(q) = self.questions.with_untracked(|qs| qs.iter().find(|(_, q)| q.item_id == item).cloned()) else {
            return;
        };
        let (home, q) = (self.panes.chat(q.0), q.1);
        let draft = self.dock.draft(key).get_untracked();
        let questions = q.as_questions();
        let mut answers = Vec::new();
        for (i, question) in questions.iter().enumerate() {
            match draft.answer_for(question) {
                Some(v) => answers.push(v),
                None => {
                    self.dock.draft(key).update(|d| d.set_step(i));
                    self.dock.announce.set(format!("Answer question {} of {} before submitting.", i + 1, questions.len()));
                    return;
                }
            }
        }
        let text = format_answer(&q.items, &answers);
        let steer = home.run_active.get_untracked().then(|| "steer".to_string());
        self.outbox.enqueue(&home.session.get_untracked(), &text, q.source_message_id.clone(), steer, Some(item));
    }

    fn save_local(&self, item: &str) {
        let value = self.local.with_untracked(|l| l.get(item).cloned()).unwrap_or_default();
        let db = self.db;
        let item = item.to_string();
        let this = *self;
        spawn_local(async move {
            db.put(ASYNC, &item, &crate::io::json::encode(&value)).await;
            this.channel.with_value(|c| c.post(&json!({"type": "changed"})));
        });
    }

    /// Dismiss: out of the dock, nothing sent; Undo is offered for a while.
    pub fn dismiss(&self, item: &str) {
        self.local.update(|l| l.entry(item.to_string()).or_default().dismissed = true);
        self.save_local(item);
        self.undo.set(Some(item.to_string()));
        let undo = self.undo;
        let it = item.to_string();
        set_timeout(
            move || {
                if undo.get_untracked().as_deref() == Some(it.as_str()) {
                    undo.set(None);
                }
            },
            Duration::from_secs(10),
        );
    }

    /// The pane controller whose transcript holds question `item` (the first pane's if none
    /// does any more).
    fn chat_of(&self, item: &str) -> ChatController {
        let home = self.questions.with(|qs| qs.iter().find(|(_, q)| q.item_id == item).map(|(i, _)| *i));
        self.panes.chat(home.unwrap_or_else(|| self.panes.open.with_untracked(|o| o[0])))
    }

    pub fn undo_dismiss(&self, item: &str) {
        self.local.update(|l| l.entry(item.to_string()).or_default().dismissed = false);
        self.save_local(item);
        self.undo.set(None);
    }

    /// "Answer" on a retired question: back into the dock with its draft.
    pub fn reopen(&self, item: &str) {
        let max_seq = self.chat_of(item).messages.with_untracked(|rows| rows.iter().map(|r| r.seq).max().unwrap_or(0));
        self.local.update(|l| {
            let e = l.entry(item.to_string()).or_default();
            e.reopened_after_seq = Some(max_seq);
            e.dismissed = false;
        });
        self.save_local(item);
        self.open_when_back.set(Some(format!("{ASYNC_PREFIX}{item}")));
    }
}
