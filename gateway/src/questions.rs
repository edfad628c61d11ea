//! The question manager: `question.*` with the real gateway's behaviour.
//!
//! Records live in memory while pending (like the real gateway) and are written to SQLite
//! when they resolve, so an answered question is never lost across a restart. Secret
//! answers are reported and stored as `["stored"]`; their values stay in memory only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use protocol::error::{ErrorShape, reason};
use protocol::question::{
    QuestionAnswers, QuestionRecord, QuestionRequestParams, QuestionResolveParams, QuestionStatus, canonicalize_answers, validate_questions,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::Gateway;
use crate::hub::Caller;
use crate::hub::Peer;
use crate::util::{now_ms, uuid_v4};

/// The `ask_user` tool's default lifetime when a request gives none.
const DEFAULT_TIMEOUT_MS: u64 = 900_000;

struct Entry {
    record: QuestionRecord,
    /// Asked by the agent's own run: a plain chat reply in its session may answer it.
    /// Questions made by clients through `question.request` are never claimed by chat.
    claimable: bool,
    resolution_id: Option<String>,
    /// Wakes `question.waitAnswer` callers when the record resolves.
    done: watch::Sender<bool>,
}

#[derive(Default)]
pub struct Questions {
    entries: Mutex<HashMap<String, Entry>>,
    /// Secret values by secret name: memory only, never logged or persisted.
    secrets: Mutex<HashMap<String, String>>,
}

fn not_found(id: &str) -> ErrorShape {
    ErrorShape::question(reason::QUESTION_NOT_FOUND, format!("question '{}' was not found", protocol::frame::truncate(id, 128)))
}

impl Questions {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The secret value an agent asked for (memory only).
    pub fn secret(&self, name: &str) -> Option<String> {
        self.secrets.lock().unwrap_or_else(|p| p.into_inner()).get(name).cloned()
    }

    /// The newest pending agent-run question of a session that chat replies may claim.
    pub fn claimable_for_session(&self, session: &str) -> Option<QuestionRecord> {
        self.entries()
            .values()
            .filter(|e| e.claimable && e.record.status == QuestionStatus::Pending && e.record.session_key.as_deref() == Some(session))
            .max_by_key(|e| e.record.created_at_ms)
            .map(|e| e.record.clone())
    }

    fn mark_claimable(&self, id: &str) {
        if let Some(e) = self.entries().get_mut(id) {
            e.claimable = true;
        }
    }

    /// Waits until `id` resolves; returns its final record.
    pub async fn wait(&self, id: &str) -> Option<QuestionRecord> {
        let mut rx = self.entries().get(id)?.done.subscribe();
        let _ = rx.wait_for(|d| *d).await;
        self.entries().get(id).map(|e| e.record.clone())
    }

    /// Whether a run is waiting for a person to answer its question.
    pub fn run_is_waiting(&self, run_id: &str) -> bool {
        self.entries().values().any(|e| e.record.status == QuestionStatus::Pending && e.record.run_id.as_deref() == Some(run_id))
    }

    pub fn pending_count(&self) -> usize {
        self.entries().values().filter(|e| e.record.status == QuestionStatus::Pending).count()
    }
}

/// Whether `caller` may see `record`: broad access sees everything; a guest sees only the
/// questions of sessions it owns; sessionless questions need the broad scope.
pub fn visible(gw: &Gateway, caller: &Caller<'_>, record: &QuestionRecord) -> bool {
    if caller.full {
        return true;
    }
    match &record.session_key {
        Some(key) => gw.store.session_owner(key).ok().flatten().as_deref() == Some(caller.peer.owner.as_str()),
        None => false,
    }
}

/// Whether a connection should receive events about `record`.
fn peer_sees(gw: &Gateway, peer: &Peer, record: &QuestionRecord) -> bool {
    let full = peer.has_scope(protocol::methods::scope::QUESTIONS);
    if full {
        return true;
    }
    peer.scopes.iter().any(|s| s == protocol::methods::scope::SESSIONS_WRITE)
        && record.session_key.as_ref().is_some_and(|k| gw.store.session_owner(k).ok().flatten().as_deref() == Some(peer.owner.as_str()))
}

pub fn request(gw: &Arc<Gateway>, params: QuestionRequestParams) -> Result<Value, ErrorShape> {
    validate_questions(&params.questions).map_err(ErrorShape::invalid)?;
    for q in &params.questions {
        if q.secret_store.is_some() && !q.secret() {
            return Err(ErrorShape::invalid(format!("question '{}' secretStore requires isSecret", q.question_id)));
        }
    }
    let now = now_ms();
    let timeout = params.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).min(i64::MAX as u64 / 4);
    let id = match params.id {
        Some(id) if id.is_empty() || id.len() > 128 => return Err(ErrorShape::invalid("question id must be 1 to 128 characters")),
        Some(id) => id,
        None => uuid_v4(),
    };
    let session_key = params.session_key.map(|k| canonical_session_key(&k));
    let record = QuestionRecord {
        id: id.clone(),
        questions: params.questions,
        agent_id: params.agent_id.or_else(|| session_key.as_ref().map(|_| "main".to_string())),
        session_key,
        run_id: params.run_id,
        created_at_ms: now,
        expires_at_ms: now + timeout as i64,
        status: QuestionStatus::Pending,
        answers: None,
        resolved_by: None,
    };
    {
        let mut entries = gw.questions.entries();
        if entries.contains_key(&id) || gw.store.question_exists(&id).unwrap_or(false) {
            return Err(ErrorShape::question(reason::QUESTION_ID_IN_USE, format!("question id '{id}' is already in use")));
        }
        let (done, _) = watch::channel(false);
        entries.insert(id.clone(), Entry { record: record.clone(), claimable: false, resolution_id: None, done });
    }
    let payload = serde_json::to_value(&record).unwrap_or_default();
    gw.hub.broadcast("question.requested", &payload, |p| peer_sees(gw, p, &record));
    crate::push::question_requested(gw, &record);
    // Expiry: the gateway owns the deadline; nothing is ever answered on anyone's behalf.
    let gw2 = gw.clone();
    let expiry_id = id.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(timeout)).await;
        let _ = finish(&gw2, &expiry_id, QuestionStatus::Expired, None, Some("wait-timeout".into()), None);
    });
    Ok(json!({ "id": id, "expiresAtMs": record.expires_at_ms }))
}

/// A question asked by the gateway's own agent run (the demo agent), claimable by chat.
pub fn ask_for_run(gw: &Arc<Gateway>, params: QuestionRequestParams) -> Result<String, ErrorShape> {
    let created = request(gw, params)?;
    let id = created["id"].as_str().unwrap_or_default().to_string();
    gw.questions.mark_claimable(&id);
    Ok(id)
}

pub use protocol::chat::canonical_session_key;

pub fn list(gw: &Gateway, caller: &Caller<'_>) -> Value {
    let mut records: Vec<QuestionRecord> =
        gw.questions.entries().values().filter(|e| e.record.status == QuestionStatus::Pending).map(|e| e.record.clone()).collect();
    records.retain(|r| visible(gw, caller, r));
    records.sort_by_key(|r| r.created_at_ms);
    json!({ "questions": records })
}

pub fn get(gw: &Gateway, caller: &Caller<'_>, id: &str) -> Result<Value, ErrorShape> {
    let record = gw.questions.entries().get(id).map(|e| e.record.clone()).ok_or_else(|| not_found(id))?;
    if !visible(gw, caller, &record) {
        return Err(not_found(id));
    }
    Ok(json!({ "question": record }))
}

pub fn resolve(gw: &Arc<Gateway>, caller: &Caller<'_>, params: QuestionResolveParams) -> Result<Value, ErrorShape> {
    let record = gw.questions.entries().get(&params.id).map(|e| e.record.clone()).ok_or_else(|| not_found(&params.id))?;
    if !visible(gw, caller, &record) {
        return Err(not_found(&params.id));
    }
    if record.status != QuestionStatus::Pending {
        return Err(already_terminal(&record));
    }
    if let Some(rid) = &params.resolution_id {
        if rid.is_empty() || rid.len() > 128 {
            return Err(ErrorShape::invalid("resolutionId must be 1 to 128 characters"));
        }
    }
    if params.cancel == Some(true) {
        if params.answers.is_some() {
            return Err(ErrorShape::invalid("question.resolve takes either answers or cancel, not both"));
        }
        finish(gw, &params.id, QuestionStatus::Cancelled, None, params.resolved_by, params.resolution_id)?;
        return Ok(json!({ "status": "cancelled" }));
    }
    // A secret's value is handed to the gateway's secret store: only an admin may give one.
    // (Declining, `cancel`, gives nothing away and needs only the question scope.)
    if record.questions.iter().any(|q| q.secret()) && !caller.peer.scopes.iter().any(|s| s == protocol::methods::scope::ADMIN) {
        let mut e = ErrorShape::missing_scope(protocol::methods::scope::ADMIN, &[protocol::methods::scope::ADMIN]);
        if let Some(d) = e.details.as_mut() {
            d["reason"] = json!("answering a secret question needs operator.admin");
        }
        return Err(e);
    }
    let given = params.answers.ok_or_else(|| ErrorShape::invalid("question.resolve needs answers or cancel: true"))?;
    let canonical = canonicalize_answers(&record.questions, &given)?;
    // Secret values go to the memory-only secret map; everything else sees "stored".
    let mut reported = canonical.clone();
    for q in record.questions.iter().filter(|q| q.secret()) {
        if let Some(values) = reported.answers.get_mut(&q.question_id) {
            if let (Some(store), Some(v)) = (&q.secret_store, values.first()) {
                gw.questions.secrets.lock().unwrap_or_else(|p| p.into_inner()).insert(store.name.clone(), v.clone());
            }
            *values = vec!["stored".to_string()];
        }
    }
    finish(gw, &params.id, QuestionStatus::Answered, Some(reported.clone()), params.resolved_by, params.resolution_id)?;
    Ok(json!({ "status": "answered", "answers": reported }))
}

fn already_terminal(record: &QuestionRecord) -> ErrorShape {
    ErrorShape::question(reason::QUESTION_ALREADY_TERMINAL, format!("question '{}' is already {}", record.id, record.status.as_str()))
}

/// Moves a pending record to a terminal status, persists it, tells everyone who can see it,
/// wakes waiters, and forgets it after the terminal grace.
pub fn finish(
    gw: &Arc<Gateway>,
    id: &str,
    status: QuestionStatus,
    answers: Option<QuestionAnswers>,
    resolved_by: Option<String>,
    resolution_id: Option<String>,
) -> Result<QuestionRecord, ErrorShape> {
    let record = {
        let mut entries = gw.questions.entries();
        let entry = entries.get_mut(id).ok_or_else(|| not_found(id))?;
        if entry.record.status != QuestionStatus::Pending {
            return Err(already_terminal(&entry.record));
        }
        entry.record.status = status;
        entry.record.answers = answers.clone();
        entry.record.resolved_by = resolved_by;
        entry.resolution_id = Some(resolution_id.unwrap_or_else(uuid_v4));
        entry.done.send_replace(true);
        entry.record.clone()
    };
    if let Err(e) = gw.store.save_question(&record, now_ms()) {
        crate::log::error(&format!("could not persist question {id}: {e}"));
    }
    let mut payload = json!({ "id": id, "status": status.as_str() });
    if let Some(a) = &answers {
        payload["answers"] = serde_json::to_value(a).unwrap_or_default();
    }
    gw.hub.broadcast("question.resolved", &payload, |p| peer_sees(gw, p, &record));
    let gw2 = gw.clone();
    let id2 = id.to_string();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(protocol::QUESTION_TERMINAL_GRACE_MS as u64)).await;
        gw2.questions.entries().remove(&id2);
    });
    Ok(record)
}

pub async fn wait_answer(
    gw: &Gateway,
    caller: &Caller<'_>,
    id: &str,
    timeout_ms: Option<u64>,
    include_resolution_id: bool,
) -> Result<Value, ErrorShape> {
    let (record, mut rx) = {
        let entries = gw.questions.entries();
        let e = entries.get(id).ok_or_else(|| not_found(id))?;
        (e.record.clone(), e.done.subscribe())
    };
    if !visible(gw, caller, &record) {
        return Err(not_found(id));
    }
    let wait = async {
        let _ = rx.wait_for(|done| *done).await;
    };
    let bounded = async {
        match timeout_ms {
            Some(ms) => {
                let _ = tokio::time::timeout(Duration::from_millis(ms), wait).await;
            }
            None => wait.await,
        }
    };
    // Graceful shutdown ends every wait with an answer the caller can act on.
    tokio::select! {
        _ = bounded => {}
        _ = gw.drain.stopping() => {
            let mut e = ErrorShape::new(protocol::error::code::UNAVAILABLE, "gateway stopping: wait again after it restarts");
            e.retryable = Some(true);
            return Err(e);
        }
    }
    let entries = gw.questions.entries();
    let Some(e) = entries.get(id) else { return Err(not_found(id)) };
    let mut out = json!({ "status": e.record.status.as_str() });
    if let Some(a) = &e.record.answers {
        out["answers"] = serde_json::to_value(a).unwrap_or_default();
    }
    if include_resolution_id && e.record.status != QuestionStatus::Pending {
        if let Some(r) = &e.resolution_id {
            out["resolutionId"] = json!(r);
        }
    }
    Ok(out)
}

/// Cancels every pending question of a run (an aborted run cancels its question).
pub fn cancel_run(gw: &Arc<Gateway>, run_id: &str) {
    let ids: Vec<String> = gw
        .questions
        .entries()
        .values()
        .filter(|e| e.record.status == QuestionStatus::Pending && e.record.run_id.as_deref() == Some(run_id))
        .map(|e| e.record.id.clone())
        .collect();
    for id in ids {
        let _ = finish(gw, &id, QuestionStatus::Cancelled, None, Some("run-abort".into()), None);
    }
}
