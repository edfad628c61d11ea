//! Sessions as the conversation list sees them, like OpenClaw 2026.9.6
//! (`docs/sessions-protocol-notes.md`): `sessions.list` (paged, searched, archive filter),
//! `sessions.create`, `sessions.patch` (rename, archive, restore), `sessions.describe`, and the
//! `sessions.changed` events (`create`, `send`, `agent.input.settled`, `patch`).

use std::sync::Arc;

use protocol::error::{ErrorShape, code};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

use crate::Gateway;
use crate::hub::Caller;
use crate::questions::canonical_session_key;
use crate::session_events::{check_session, peer_sees_session};
use crate::store::{ArchivedFilter, Created, Patched, SessionPatch, SessionRecord};
use crate::util::{now_ms, uuid_v4};

/// The only agent of this gateway.
pub const AGENT: &str = "main";

/// The owner of every agent's main conversation (`agent:<id>:main`), whoever uses it first.
/// No connection has it (a device's owner is its id, a backend's `client:<id>`, which any
/// backend may claim), so no guest ever owns a main conversation.
pub const OPERATOR_OWNER: &str = "gateway:operator";

/// Who owns `key` when `caller_owner` brings it into being: the operator for a main
/// conversation. (The main conversation has no row until first used, as on the real gateway,
/// so it is reserved here rather than made at start.)
pub fn owner_for<'a>(key: &str, caller_owner: &'a str) -> &'a str {
    if is_main(key) { OPERATOR_OWNER } else { caller_owner }
}

/// A guest may not bring a conversation into being under a key it chose: it would own it,
/// and so read whatever an operator later writes there. It makes its own with a key the
/// gateway picks (`sessions.create` without `key`).
pub(crate) fn guest_may_not_name(key: &str) -> ErrorShape {
    ErrorShape::invalid(format!(
        "session '{key}' was not found (a guest cannot name a new conversation: create one without `key` and use the key the gateway gives)"
    ))
}

/// Rows of a `sessions.list` page when the caller names no limit, and at most.
const DEFAULT_LIMIT: u64 = 200;
const MAX_LIMIT: u64 = 1000;

fn unavailable(e: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(code::UNAVAILABLE, format!("session store unavailable: {e}"))
}

/// The agent of a session key (`agent:<id>:…`).
pub fn agent_of(key: &str) -> &str {
    match key.splitn(3, ':').collect::<Vec<_>>().as_slice() {
        ["agent", agent, _] => agent,
        _ => AGENT,
    }
}

/// An agent's main session (`agent:<id>:main`): never archived.
pub fn is_main(key: &str) -> bool {
    matches!(key.splitn(3, ':').collect::<Vec<_>>().as_slice(), ["agent", _, "main"])
}

/// `Unknown agent id "<id>"` for any agent but this gateway's one.
fn check_agent(agent_id: Option<&str>) -> Result<(), ErrorShape> {
    match agent_id {
        Some(a) if a != AGENT => Err(ErrorShape::invalid(format!("Unknown agent id \"{}\"", protocol::frame::truncate(a, 64)))),
        _ => Ok(()),
    }
}

/// Params as the real gateway checks them: an unknown top-level key is named its way
/// (`at root: unexpected property 'k'`), the rest by the closed deserialiser.
pub fn params_strict<T: serde::de::DeserializeOwned>(method: &str, allowed: &[&str], v: Value) -> Result<T, ErrorShape> {
    if v.is_array() {
        return Err(ErrorShape::invalid(format!("invalid {method} params: invalid type: sequence, expected an object")));
    }
    if let Some(o) = v.as_object()
        && let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str()))
    {
        return Err(ErrorShape::invalid(format!(
            "invalid {method} params: at root: unexpected property '{}'",
            protocol::frame::truncate(k, 64)
        )));
    }
    protocol::closed::from_value_closed(v).map_err(|e| ErrorShape::invalid(format!("invalid {method} params: {e}")))
}

/// A string of `min..=max` characters, or the real gateway's words for one that is not.
fn check_len(method: &str, field: &str, s: &str, min: usize, max: usize) -> Result<(), ErrorShape> {
    let n = s.chars().count();
    if n < min {
        return Err(ErrorShape::invalid(format!("invalid {method} params: at /{field}: must not have fewer than {min} characters")));
    }
    if n > max {
        return Err(ErrorShape::invalid(format!("invalid {method} params: at /{field}: must not have more than {max} characters")));
    }
    Ok(())
}

/// The text a message shows, shortened (`lastMessagePreview`).
fn preview(message: &Value) -> Option<String> {
    let text = protocol::chat::message_text(message);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then(|| protocol::frame::truncate(&text, 120))
}

/// A session row as `sessions.list` sends it. `derived`: with `derivedTitle`.
pub fn row(gw: &Gateway, rec: &SessionRecord, derived: bool) -> Value {
    let active = gw.runs.active(&rec.key);
    let mut r = Map::new();
    r.insert("key".into(), json!(rec.key));
    r.insert("sessionId".into(), json!(rec.session_id));
    r.insert("kind".into(), json!("direct"));
    r.insert("agentId".into(), json!(agent_of(&rec.key)));
    r.insert("isMain".into(), json!(is_main(&rec.key)));
    let display = rec.label.as_ref().or(rec.display_name.as_ref());
    if let Some(l) = &rec.label {
        r.insert("label".into(), json!(l));
    }
    if let Some(d) = display {
        r.insert("displayName".into(), json!(d));
    }
    if derived && let Some(t) = display.or(rec.derived_title.as_ref()) {
        r.insert("derivedTitle".into(), json!(t));
    }
    r.insert("createdAt".into(), json!(rec.created_at));
    r.insert("updatedAt".into(), json!(rec.updated_at));
    r.insert("lastInteractionAt".into(), json!(rec.last_interaction_at));
    r.insert("archived".into(), json!(rec.archived_at.is_some()));
    if let Some(at) = rec.archived_at {
        r.insert("archivedAt".into(), json!(at));
        r.insert("archiveReason".into(), json!("manual"));
    }
    if let Some(p) = &rec.parent_session_key {
        r.insert("parentSessionKey".into(), json!(p));
    }
    r.insert("hasActiveRun".into(), json!(active.is_some()));
    // Its sub-agents, as the real gateway's rows carry them (absent when none).
    let children = gw.tasks.children(&rec.key);
    if !children.is_empty() {
        r.insert("childSessions".into(), json!(children));
    }
    if gw.tasks.any_running(&rec.key) {
        r.insert("hasActiveSubagentRun".into(), json!(true));
    }
    r.insert("activeRunIds".into(), json!(active.as_ref().map(|a| vec![a.run_id.clone()]).unwrap_or_default()));
    // Before its first run a session has no status (the real gateway's status is its runs').
    match (&active, &rec.run_status) {
        (Some(_), _) => {
            r.insert("status".into(), json!("running"));
        }
        (None, Some(s)) => {
            r.insert("status".into(), json!(s));
        }
        (None, None) => {}
    }
    if let Some(id) = &rec.last_run_id {
        r.insert("lastRunId".into(), json!(id));
    }
    if let Some(e) = &rec.last_run_error {
        r.insert("lastRunError".into(), json!(e));
    }
    settings_fields(&mut r, rec);
    Value::Object(r)
}

/// The model, thinking and usage fields of a row, as the real gateway sends them: the selected
/// model, its levels, the conversation's own level (absent when none), the context window, and
/// after a run the context's tokens (`totalTokens`, fresh) and the run's own.
fn settings_fields(r: &mut Map<String, Value>, rec: &SessionRecord) {
    let model = crate::models::stored(rec.model.as_deref());
    r.insert("model".into(), json!(model.id));
    r.insert("modelProvider".into(), json!(model.provider));
    r.insert("modelOverrideSource".into(), if rec.model.is_some() { json!("user") } else { Value::Null });
    r.insert("thinkingLevels".into(), model.levels_json());
    r.insert("thinkingDefault".into(), json!(model.thinking_default));
    if let Some(t) = &rec.thinking_level {
        r.insert("thinkingLevel".into(), json!(t));
    }
    r.insert("contextTokens".into(), json!(model.context_window));
    if let Some(u) = rec.usage {
        r.insert("totalTokens".into(), json!(u.context));
        r.insert("totalTokensFresh".into(), json!(true));
        r.insert("inputTokens".into(), json!(u.input));
        r.insert("outputTokens".into(), json!(u.output));
    }
}

/// `sessions.changed` for `key` to every connection that may see it: `{sessionKey, sessionId,
/// agentId, reason, ts, session}`. `adjust` changes the row first (a run that is accepted
/// but not yet started is already running for the list). One read of the session by key.
pub fn changed(gw: &Gateway, key: &str, reason: &str, adjust: impl FnOnce(&mut Value)) {
    let rec = match gw.store.session(key) {
        Ok(Some(rec)) => rec,
        Ok(None) => return,
        Err(e) => {
            crate::log::warn(&format!("sessions.changed {reason} for {key}: {e}"));
            return;
        }
    };
    changed_row(gw, &rec, reason, adjust);
}

fn changed_row(gw: &Gateway, rec: &SessionRecord, reason: &str, adjust: impl FnOnce(&mut Value)) {
    let mut session = row(gw, rec, true);
    adjust(&mut session);
    let payload = json!({
        "sessionKey": rec.key,
        "sessionId": rec.session_id,
        "agentId": agent_of(&rec.key),
        "reason": reason,
        "ts": now_ms(),
        "session": session,
    });
    gw.hub.broadcast("sessions.changed", &payload, |p| peer_sees_session(gw, p, &rec.key));
}

/// `sessions.changed` `send`: the run `run_id` was accepted.
pub fn changed_send(gw: &Gateway, key: &str, run_id: &str) {
    changed(gw, key, "send", |r| {
        r["hasActiveRun"] = json!(true);
        r["activeRunIds"] = json!([run_id]);
        r["status"] = json!("running");
    });
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // Filters of the real gateway's list that mean nothing with one agent: accepted.
pub struct ListParams {
    #[serde(default)]
    limit: Option<u64>,
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    search: Option<String>,
    /// `true`, `false` or `"all"`.
    #[serde(default)]
    archived: Option<Value>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    include_derived_titles: Option<bool>,
    #[serde(default)]
    include_last_message: Option<bool>,
    #[serde(default)]
    include_global: Option<bool>,
    #[serde(default)]
    include_unknown: Option<bool>,
    #[serde(default)]
    configured_agents_only: Option<bool>,
    #[serde(default)]
    owner_first: Option<bool>,
}

/// Whether `rec` matches a search: a case-insensitive part of its key, label, names or id.
fn matches_search(rec: &SessionRecord, needle: &str) -> bool {
    let hit = |s: &str| s.to_lowercase().contains(needle);
    hit(&rec.key)
        || hit(&rec.session_id)
        || rec.label.as_deref().is_some_and(hit)
        || rec.display_name.as_deref().is_some_and(hit)
        || rec.derived_title.as_deref().is_some_and(hit)
}

/// `sessions.list`: `{ts, count, totalCount, limitApplied, nextOffset, hasMore, sessions,
/// defaults}`, newest activity first, of the sessions the caller may see.
pub fn list(gw: &Gateway, caller: &Caller<'_>, p: ListParams) -> Result<Value, ErrorShape> {
    let archived = match &p.archived {
        None | Some(Value::Bool(false)) => ArchivedFilter::Active,
        Some(Value::Bool(true)) => ArchivedFilter::Archived,
        Some(Value::String(s)) if s == "all" => ArchivedFilter::All,
        Some(_) => return Err(ErrorShape::invalid("invalid sessions.list params: `archived` must be true, false or \"all\"")),
    };
    if p.limit == Some(0) {
        return Err(ErrorShape::invalid("invalid sessions.list params: at /limit: must be >= 1"));
    }
    if let Some(label) = &p.label {
        check_len("sessions.list", "label", label, 1, 512)?;
    }
    let limit = p.limit.unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT) as usize;
    let offset = usize::try_from(p.offset.unwrap_or(0)).unwrap_or(usize::MAX);
    let owner = (!caller.full).then_some(caller.peer.owner.as_str());
    let needle = p.search.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_lowercase);
    let rows: Vec<SessionRecord> = gw
        .store
        .sessions(owner, archived)
        .map_err(unavailable)?
        .into_iter()
        .filter(|r| p.agent_id.as_deref().is_none_or(|a| agent_of(&r.key) == a))
        .filter(|r| p.label.as_deref().is_none_or(|l| r.label.as_deref() == Some(l)))
        .filter(|r| needle.as_deref().is_none_or(|n| matches_search(r, n)))
        .collect();
    let total = rows.len();
    let derived = p.include_derived_titles == Some(true);
    let last = p.include_last_message == Some(true);
    let page: Vec<Value> = rows
        .iter()
        .skip(offset)
        .take(limit)
        .map(|rec| {
            let mut r = row(gw, rec, derived);
            if last && let Some(text) = gw.store.last_message(&rec.key).ok().flatten().as_ref().and_then(preview) {
                r["lastMessagePreview"] = json!(text);
            }
            r
        })
        .collect();
    let end = offset.saturating_add(page.len());
    let next = (end < total).then_some(end);
    Ok(json!({
        "ts": now_ms(),
        "count": page.len(),
        "totalCount": total,
        "limitApplied": limit,
        "nextOffset": next,
        "hasMore": next.is_some(),
        "sessions": page,
        "defaults": {"defaultAgentId": AGENT, "mainSessionKey": "agent:main:main", "modelProvider": crate::models::default_model().provider,
            "model": crate::models::default_model().id, "contextTokens": crate::models::default_model().context_window,
            "thinkingLevels": crate::models::default_model().levels_json(), "thinkingDefault": crate::models::default_model().thinking_default},
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateParams {
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    parent_session_key: Option<String>,
    /// `/new` in the incumbent UI sends these; there are no command hooks here.
    #[serde(default)]
    emit_command_hooks: Option<bool>,
    #[serde(default)]
    succeeds_parent: Option<bool>,
    #[serde(default)]
    idempotency_key: Option<String>,
}

/// The stored entry of a session, as `sessions.create` and `sessions.patch` return it.
fn entry(rec: &SessionRecord) -> Value {
    let mut e = json!({"sessionId": rec.session_id, "createdAt": rec.created_at, "updatedAt": rec.updated_at});
    if let Some(l) = &rec.label {
        e["label"] = json!(l);
    }
    if let Some(d) = &rec.display_name {
        e["displayName"] = json!(d);
    }
    if let Some(at) = rec.archived_at {
        e["archivedAt"] = json!(at);
    }
    if let Some(p) = &rec.parent_session_key {
        e["parentSessionKey"] = json!(p);
    }
    if let Some(s) = &rec.run_status {
        e["status"] = json!(s);
    }
    e
}

/// `sessions.create`: `{ok, key, sessionId, entry, runStarted:false, created}`. Without a key,
/// `agent:main:dashboard:<uuid>`; a taken key returns that session (a guest only its own); a
/// guest cannot name a new one.
pub fn create(gw: &Gateway, caller: &Caller<'_>, p: CreateParams) -> Result<Value, ErrorShape> {
    let _ = (p.emit_command_hooks, p.succeeds_parent, &p.idempotency_key);
    check_agent(p.agent_id.as_deref())?;
    if let Some(l) = &p.label {
        check_len("sessions.create", "label", l, 1, 512)?;
    }
    if let Some(d) = &p.display_name {
        check_len("sessions.create", "displayName", d, 1, 500)?;
    }
    let agent = p.agent_id.as_deref().unwrap_or(AGENT);
    let key = match &p.key {
        Some(k) => canonical_session_key(k),
        None => format!("agent:{agent}:dashboard:{}", uuid_v4()),
    };
    if !caller.full && p.key.is_some() && gw.store.session_owner(&key).map_err(unavailable)?.is_none() {
        return Err(guest_may_not_name(&key));
    }
    let parent = p.parent_session_key.as_deref().map(canonical_session_key).unwrap_or_else(|| format!("agent:{agent}:main"));
    let made = gw
        .store
        .create_session(&key, owner_for(&key, &caller.peer.owner), p.label.as_deref(), p.display_name.as_deref(), Some(&parent), now_ms())
        .map_err(unavailable)?;
    let (rec, created) = match made {
        Created::New(rec) => (rec, true),
        Created::Existing(rec) => {
            if !caller.full && rec.owner != caller.peer.owner {
                return Err(ErrorShape::invalid(format!("session '{key}' already exists")));
            }
            (rec, false)
        }
        Created::LabelInUse => {
            return Err(ErrorShape::invalid(format!("label already in use: {}", p.label.as_deref().unwrap_or_default())));
        }
    };
    if created {
        changed_row(gw, &rec, "create", |_| {});
    }
    Ok(json!({"ok": true, "key": rec.key, "sessionId": rec.session_id, "entry": entry(&rec), "runStarted": false, "created": created}))
}

/// Absent stays `None`; `null` is `Some(None)`.
fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

pub const PATCH_KEYS: &[&str] = &["key", "agentId", "expectedSessionId", "label", "archived", "model", "thinkingLevel"];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchParams {
    key: String,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    expected_session_id: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    label: Option<Option<String>>,
    #[serde(default)]
    archived: Option<bool>,
    #[serde(default, deserialize_with = "nullable")]
    model: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    thinking_level: Option<Option<String>>,
}

/// `sessions.patch`: rename (`label`, `null` clears), archive and restore (`archived`, with
/// `expectedSessionId`), the model (`model`: `provider/id`, an id or an alias; `null`: the
/// agent's default) and the thinking level (`thinkingLevel`, checked against the model's levels;
/// `null`: the model's default). A new model moves a stored level to one it offers. `{ok, key,
/// entry, resolved}`, then `sessions.changed` `patch`.
pub fn patch(gw: &Arc<Gateway>, caller: &Caller<'_>, p: PatchParams) -> Result<Value, ErrorShape> {
    check_agent(p.agent_id.as_deref())?;
    let key = canonical_session_key(&p.key);
    if let Some(Some(l)) = &p.label {
        check_len("sessions.patch", "label", l, 1, 512)?;
    }
    let existing = gw.store.session(&key).map_err(unavailable)?;
    if existing.is_some() {
        check_session(gw, caller, &key)?;
    } else if !caller.full {
        // Patching a missing key makes it (as on the real gateway): not for a guest.
        return Err(guest_may_not_name(&key));
    }
    if let Some(archived) = p.archived {
        if archived && is_main(&key) {
            return Err(ErrorShape::invalid("Cannot archive an agent's main session."));
        }
        let Some(expected) = &p.expected_session_id else {
            return Err(ErrorShape::invalid(format!("expectedSessionId required for session lifecycle patch: {key}")));
        };
        if existing.as_ref().map(|r| &r.session_id) != Some(expected) {
            return Err(ErrorShape::invalid(format!("Session {key} changed before patch. Retry."))
                .with_details(json!({"reason": "session-changed"})));
        }
        // Archiving stops the session's work first.
        if archived {
            crate::stop::abort_session(gw, &key, None);
        }
    }
    // The model the session will have, and the level it will keep.
    let model_value = match &p.model {
        Some(Some(m)) => Some(Some(crate::models::resolve(m).map_err(ErrorShape::invalid)?.value())),
        Some(None) => Some(None),
        None => None,
    };
    let current = existing.as_ref().and_then(|r| r.model.clone());
    let model = crate::models::stored(model_value.clone().unwrap_or(current).as_deref());
    let level = match &p.thinking_level {
        Some(Some(t)) => Some(Some(crate::models::thinking(t, model).map_err(ErrorShape::invalid)?.to_string())),
        Some(None) => Some(None),
        None if model_value.is_some() => {
            existing.as_ref().and_then(|r| r.thinking_level.as_deref()).map(|t| Some(model.clamp(t).to_string()))
        }
        None => None,
    };
    let change = SessionPatch {
        label: p.label.as_ref().map(|l| l.as_deref()),
        archived: p.archived,
        model: model_value.as_ref().map(|m| m.as_deref()),
        thinking_level: level.as_ref().map(|l| l.as_deref()),
    };
    let rec = match gw.store.patch_session(&key, owner_for(&key, &caller.peer.owner), &change, now_ms()).map_err(unavailable)? {
        Patched::Done(rec) => *rec,
        Patched::LabelInUse => {
            return Err(ErrorShape::invalid(format!(
                "label already in use: {}",
                p.label.as_ref().and_then(|l| l.as_deref()).unwrap_or_default()
            )));
        }
    };
    changed_row(gw, &rec, "patch", |_| {});
    let model = crate::models::stored(rec.model.as_deref());
    let resolved = json!({"modelProvider": model.provider, "model": model.id, "contextWindow": model.context_window,
        "thinkingLevel": rec.thinking_level.as_deref().unwrap_or(model.thinking_default), "thinkingLevels": model.levels_json()});
    Ok(json!({"ok": true, "key": key, "entry": entry(&rec), "resolved": resolved}))
}

pub const SEARCH_KEYS: &[&str] = &["query", "limit", "agentId", "sessionKeys", "scope"];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchParams {
    query: String,
    #[serde(default)]
    limit: Option<u64>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    session_keys: Option<Vec<String>>,
    #[serde(default)]
    scope: Option<Map<String, Value>>,
}

/// The words of `text` around the first place `words` occur: at most about 48 words, ` … `
/// where it was cut, like the real gateway's FTS snippet.
fn snippet(text: &str, words: &[String]) -> String {
    let all: Vec<&str> = text.split_whitespace().collect();
    let at = all.iter().position(|w| words.iter().any(|q| w.to_lowercase().contains(q.as_str()))).unwrap_or(0);
    let start = at.saturating_sub(16);
    let end = (start + 48).min(all.len());
    let mut s = all[start..end].join(" ");
    if start > 0 {
        s = format!(" … {s}");
    }
    if end < all.len() {
        s.push_str(" … ");
    }
    protocol::frame::truncate(&s, 500)
}

/// `sessions.search {query, limit?, agentId?, sessionKeys?, scope?}`: the user and assistant
/// messages holding every word of `query` (case aside), in the conversations the caller may see
/// (`scope.archived`: `true` archived only, `"all"`, else active ones), most occurrences first,
/// then newest: `{results: [{sessionKey, sessionId, messageId, role, timestamp, snippet, score}]}`.
pub fn search(gw: &Gateway, caller: &Caller<'_>, p: SearchParams) -> Result<Value, ErrorShape> {
    let query = p.query.trim();
    if query.is_empty() {
        return Err(ErrorShape::invalid("query must not be empty"));
    }
    check_len("sessions.search", "query", query, 1, 4096)?;
    let limit = match p.limit {
        None => 10,
        Some(n @ 1..=25) => n as usize,
        Some(_) => return Err(ErrorShape::invalid("invalid sessions.search params: at /limit: must be >= 1 and <= 25")),
    };
    if p.scope.is_some() && (p.agent_id.is_some() || p.session_keys.is_some()) {
        return Err(ErrorShape::invalid("invalid sessions.search params: scope cannot be combined with agentId or sessionKeys"));
    }
    check_agent(p.agent_id.as_deref())?;
    let archived = match p.scope.as_ref().and_then(|s| s.get("archived")) {
        None | Some(Value::Bool(false)) => ArchivedFilter::Active,
        Some(Value::Bool(true)) => ArchivedFilter::Archived,
        Some(Value::String(a)) if a == "all" => ArchivedFilter::All,
        Some(_) => return Err(ErrorShape::invalid("invalid sessions.search params: at /scope/archived: must be true, false or \"all\"")),
    };
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let owner = (!caller.full).then_some(caller.peer.owner.as_str());
    let mut hits: Vec<(usize, i64, Value)> = Vec::new();
    for rec in gw.store.sessions(owner, archived).map_err(unavailable)? {
        if p.session_keys.as_ref().is_some_and(|keys| !keys.iter().any(|k| canonical_session_key(k) == rec.key)) {
            continue;
        }
        for (id, role, at, message) in gw.store.searchable(&rec.key).map_err(unavailable)? {
            let text = protocol::chat::message_text(&message);
            let lower = text.to_lowercase();
            if !words.iter().all(|w| lower.contains(w.as_str())) {
                continue;
            }
            let score = words.iter().map(|w| lower.matches(w.as_str()).count()).sum::<usize>();
            let ts = message.get("timestamp").and_then(Value::as_i64).unwrap_or(at);
            hits.push((
                score,
                ts,
                json!({"sessionKey": rec.key, "sessionId": rec.session_id, "messageId": id, "role": role,
                "timestamp": ts, "snippet": snippet(&text, &words), "score": score as f64}),
            ));
        }
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let truncated = hits.len() > limit;
    let results: Vec<Value> = hits.into_iter().take(limit).map(|h| h.2).collect();
    let mut out = json!({"results": results});
    // A scope search also sends the rows its hits refer to, as the real gateway does.
    if p.scope.is_some() {
        let mut rows: Vec<Value> = Vec::new();
        for key in results.iter().filter_map(|h| h["sessionKey"].as_str()) {
            if !rows.iter().any(|r| r["key"] == key)
                && let Some(rec) = gw.store.session(key).map_err(unavailable)?
            {
                rows.push(row(gw, &rec, true));
            }
        }
        out["sessions"] = json!(rows);
    }
    if truncated {
        out["truncated"] = json!(true);
    }
    Ok(out)
}

pub const CUT_KEYS: &[&str] = &["sessionKey", "agentId", "entryId"];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CutParams {
    session_key: String,
    #[serde(default)]
    agent_id: Option<String>,
    entry_id: String,
}

/// What a rewind or fork gives the composer: the cut message's text, and its files (which
/// this gateway keeps as `media://` references, not bytes: none are sent back).
fn editor(message: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let text = protocol::chat::message_text(message);
    if !text.is_empty() {
        out.insert("editorText".into(), json!(text));
    }
    out
}

/// The checks rewind and fork share (the real gateway's): the session exists and the caller
/// may use it, and no run is working in it.
fn cut_session(gw: &Gateway, caller: &Caller<'_>, p: &CutParams, action: &str) -> Result<(String, SessionRecord), ErrorShape> {
    check_agent(p.agent_id.as_deref())?;
    check_len(action, "entryId", &p.entry_id, 1, 512)?;
    let key = canonical_session_key(&p.session_key);
    let rec = gw.store.session(&key).map_err(unavailable)?.ok_or_else(|| ErrorShape::invalid(format!("session not found: {key}")))?;
    check_session(gw, caller, &key)?;
    if gw.runs.active(&key).is_some() {
        let what = if action == "sessions.rewind" { "Rewind" } else { "Fork" };
        return Err(ErrorShape::new(code::UNAVAILABLE, format!("{what} is unavailable while the agent is working.")));
    }
    Ok((key, rec))
}

/// `sessions.rewind {sessionKey, entryId}` (admin): the conversation goes back to before the
/// user message `entryId`, which leaves it with every later row (kept as a branch); a new
/// transcript id, the last run's usage cleared. `{editorText?}`, then `sessions.changed` `rewind`.
pub fn rewind(gw: &Gateway, caller: &Caller<'_>, p: CutParams) -> Result<Value, ErrorShape> {
    let (key, rec) = cut_session(gw, caller, &p, "sessions.rewind")?;
    if rec.archived_at.is_some() {
        return Err(ErrorShape::invalid("Rewind is unavailable for archived sessions."));
    }
    let message = gw.store.rewind(&key, &p.entry_id, &uuid_v4(), now_ms()).map_err(unavailable)?.map_err(ErrorShape::invalid)?;
    changed(gw, &key, "rewind", |_| {});
    Ok(Value::Object(editor(&message)))
}

/// `sessions.fork {sessionKey, entryId}`: a new conversation `agent:<id>:dashboard:<uuid>`,
/// the caller's, with the rows before the user message `entryId` and the source's model; the
/// source stays as it is. `{sessionKey, editorText?}`, then `sessions.changed` `fork` (the new key).
pub fn fork(gw: &Gateway, caller: &Caller<'_>, p: CutParams) -> Result<Value, ErrorShape> {
    let (key, _) = cut_session(gw, caller, &p, "sessions.fork")?;
    let new_key = format!("agent:{}:dashboard:{}", agent_of(&key), uuid_v4());
    let (rec, message) =
        gw.store.fork(&key, &p.entry_id, &new_key, &caller.peer.owner, now_ms()).map_err(unavailable)?.map_err(ErrorShape::invalid)?;
    changed_row(gw, &rec, "fork", |_| {});
    let mut out = editor(&message);
    out.insert("sessionKey".into(), json!(new_key));
    Ok(Value::Object(out))
}

pub const DESCRIBE_KEYS: &[&str] = &["key", "agentId"];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeParams {
    key: String,
    #[serde(default)]
    agent_id: Option<String>,
}

/// `sessions.describe`: `{session: <row> | null}` (null also for a session a guest may not see).
pub fn describe(gw: &Gateway, caller: &Caller<'_>, p: DescribeParams) -> Result<Value, ErrorShape> {
    check_agent(p.agent_id.as_deref())?;
    let key = canonical_session_key(&p.key);
    let rec = gw.store.session(&key).map_err(unavailable)?.filter(|r| caller.full || r.owner == caller.peer.owner);
    Ok(json!({"session": rec.map(|r| row(gw, &r, true))}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_sessions_and_agents_are_read_from_the_key() {
        assert!(is_main("agent:main:main"));
        assert!(is_main("agent:ops:main"));
        assert!(!is_main("agent:main:dashboard:1"));
        assert!(!is_main("main"));
        assert_eq!(agent_of("agent:ops:x:y"), "ops");
        assert_eq!(agent_of("weird"), "main");
    }
}
