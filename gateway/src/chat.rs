//! Chat: `chat.send` (idempotent on `idempotencyKey`), `chat.history` (with the display cap),
//! `chat.message.get`, `chat.abort`, and the `chat` / `session.message` events. Everything is
//! in SQLite.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use protocol::chat::ChatSendParams;
use protocol::error::{ErrorShape, code};
use protocol::question::claim_plain_text;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::hub::Caller;
use crate::questions::canonical_session_key;
pub use crate::session_events::{agent_event, broadcast_message, chat_event, check_session, peer_sees_session};
pub use crate::stop::{abort_all, abort_session, abort_waiting};
use crate::store::{Created, InboundMedia, SendStatus};
use crate::util::{now_ms, uuid_v4};
use crate::{Gateway, agent, questions, sessions};

/// Runs in progress, by session: the run id and a flag that aborts it.
#[derive(Default)]
pub struct Runs {
    active: Mutex<HashMap<String, ActiveRun>>,
}

#[derive(Clone)]
pub struct ActiveRun {
    pub run_id: String,
    pub abort: tokio::sync::watch::Sender<bool>,
}

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ActiveRun>> {
        self.active.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub fn active(&self, session: &str) -> Option<ActiveRun> {
        self.lock().get(session).cloned()
    }
    pub fn start(&self, session: &str, run_id: &str) -> Option<tokio::sync::watch::Receiver<bool>> {
        let mut m = self.lock();
        if m.contains_key(session) {
            return None;
        }
        let (tx, rx) = tokio::sync::watch::channel(false);
        m.insert(session.to_string(), ActiveRun { run_id: run_id.to_string(), abort: tx });
        Some(rx)
    }
    pub fn all(&self) -> Vec<ActiveRun> {
        self.lock().values().cloned().collect()
    }
    pub fn finish(&self, session: &str, run_id: &str) {
        let mut m = self.lock();
        if m.get(session).is_some_and(|r| r.run_id == run_id) {
            m.remove(session);
        }
    }
}

fn unavailable(e: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(code::UNAVAILABLE, format!("chat store unavailable: {e}"))
}

/// `chat.send`: saves the user row and starts a run; a repeated key is answered from the
/// dedupe record and never saves a second message.
pub fn send(gw: &Arc<Gateway>, caller: &Caller<'_>, p: ChatSendParams) -> Result<Value, ErrorShape> {
    // One agent, no per-send timeout or delivery targets here: accepted, not used.
    let _ = (&p.agent_id, p.timeout_ms, p.deliver, &p.thinking);
    if p.idempotency_key.is_empty() || p.idempotency_key.len() > 256 {
        return Err(ErrorShape::invalid("invalid chat.send params: `idempotencyKey` must be 1 to 256 characters"));
    }
    if let Some(mode) = &p.queue_mode {
        if !["steer", "followup", "collect", "interrupt"].contains(&mode.as_str()) {
            return Err(ErrorShape::invalid(format!(
                "invalid chat.send params: `queueMode` must be steer, followup, collect or interrupt, not `{}`",
                protocol::frame::truncate(mode, 20)
            )));
        }
    }
    let key = canonical_session_key(&p.session_key);
    if gw.store.session_owner(&key).map_err(unavailable)?.is_none() {
        // Sending to a new key makes the conversation, owned by the sender: not for a guest.
        if !caller.full {
            return Err(sessions::guest_may_not_name(&key));
        }
        let parent = format!("agent:{}:main", sessions::agent_of(&key));
        let owner = sessions::owner_for(&key, &caller.peer.owner);
        let made = gw.store.create_session(&key, owner, None, None, Some(&parent), now_ms()).map_err(unavailable)?;
        if let Created::New(_) = made {
            sessions::changed(gw, &key, "create", |_| {});
        }
    }
    check_session(gw, caller, &key)?;
    let media = read_attachments(&p.attachments)?;
    if p.message.trim().is_empty() && media.is_empty() {
        return Err(ErrorShape::invalid("invalid chat.send params: `message` must not be empty"));
    }
    // Dedupe first: a retry with the same key is answered from what happened the first time.
    if let Some(prev) = gw.store.send_status(&p.idempotency_key).map_err(unavailable)? {
        return Ok(match prev {
            SendStatus::InFlight => json!({"runId": p.idempotency_key, "status": "in_flight"}),
            SendStatus::Ok => json!({"runId": p.idempotency_key, "status": "ok"}),
            SendStatus::Error(summary) => json!({"runId": p.idempotency_key, "status": "error", "summary": summary}),
            SendStatus::Aborted => json!({"runId": p.idempotency_key, "status": "aborted"}),
        });
    }
    if gw.store.session(&key).map_err(unavailable)?.is_some_and(|r| r.archived_at.is_some()) {
        return Err(ErrorShape::invalid(format!("Session \"{key}\" is archived. Restore it before starting new work.")));
    }
    let run_id = p.idempotency_key.clone();
    let mut meta = json!({"id": uuid_v4(), "idempotencyKey": format!("{}:user", p.idempotency_key), "runId": run_id});
    if let Some(r) = &p.reply_to_id {
        meta["replyToId"] = json!(r);
    }
    if !media.is_empty() {
        // As the real gateway saves them: the text stays as written, the files are listed.
        meta["media"] = Value::Array(media.iter().map(|(_, entry)| entry.clone()).collect());
    }
    let media: Vec<InboundMedia> = media.into_iter().map(|(m, _)| m).collect();
    let message =
        json!({"role": "user", "content": p.message, "timestamp": now_ms(), "idempotencyKey": format!("{}:user", p.idempotency_key)});
    // The user row and the dedupe record commit together: a crash leaves both or neither.
    let saved = match gw.store.save_user_message(&key, &p.idempotency_key, message, meta, &media) {
        Ok(saved) => saved,
        // A concurrent send with the same key won the race: this one is a duplicate.
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::ConstraintViolation => {
            return Ok(json!({"runId": p.idempotency_key, "status": "in_flight"}));
        }
        Err(e) => return Err(unavailable(e)),
    };
    broadcast_message(gw, &key, &saved);
    let seq = saved["__openclaw"]["seq"].clone();
    // A pending question of the agent's run may claim a plain-text reply; then the run
    // goes on with that answer and the reply starts nothing new.
    if claim_reply(gw, &key, &p.message) {
        let _ = gw.store.set_send_status(&run_id, &SendStatus::Ok);
        // The run that asked goes on: the row says so as it is.
        sessions::changed(gw, &key, "send", |_| {});
        return Ok(json!({"runId": run_id, "status": "started", "messageSeq": seq, "claimedQuestion": true}));
    }
    // Before the run starts, so that its end (`agent.input.settled`) always comes after.
    sessions::changed_send(gw, &key, &run_id);
    agent::start_run(gw.clone(), key.clone(), run_id.clone(), p.message.clone());
    Ok(json!({"runId": run_id, "status": "started", "messageSeq": seq}))
}

/// The raster types a file is recognised as from its first bytes. The type a client names is
/// only a hint (the real gateway detects it the same way).
fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

/// Reads `chat.send`'s `attachments`: standard padded base64 `content` (a plain
/// `data:<type>;base64,` prefix is dropped), each file within the limits `hello-ok` announces.
/// Returns each file with its `__openclaw.media` entry; a bad one is refused by name.
fn read_attachments(items: &[Value]) -> Result<Vec<(InboundMedia, Value)>, ErrorShape> {
    use base64::Engine;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let text = |k: &str| item.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
        let name = text("fileName").map(str::to_string).unwrap_or_else(|| format!("attachment-{}", i + 1));
        let shown = protocol::frame::truncate(&name, 80);
        let Some(content) = item.get("content").and_then(Value::as_str) else {
            return Err(ErrorShape::invalid(format!("invalid chat.send params: attachment {shown}: `content` must be base64 text")));
        };
        let content = match content.split_once(',') {
            Some((head, rest))
                if head.starts_with("data:") && head.ends_with(";base64") && !head[5..head.len() - 7].contains([';', ',']) =>
            {
                rest
            }
            _ => content,
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(content)
            .map_err(|_| ErrorShape::invalid(format!("attachment {shown}: invalid base64 content")))?;
        if bytes.is_empty() {
            return Err(ErrorShape::invalid(format!("attachment {shown}: empty payload")));
        }
        let image = sniff_image(&bytes);
        let size = bytes.len() as u64;
        if image.is_some() && size > protocol::ATTACHMENTS_MAX_IMAGE_BYTES {
            return Err(ErrorShape::invalid(format!(
                "attachment {shown}: image exceeds size limit ({size} > {} bytes)",
                protocol::ATTACHMENTS_MAX_IMAGE_BYTES
            )));
        }
        if size > protocol::ATTACHMENTS_MAX_BYTES {
            return Err(ErrorShape::invalid(format!(
                "attachment {shown}: file exceeds size limit ({size} > {} bytes)",
                protocol::ATTACHMENTS_MAX_BYTES
            )));
        }
        // Bytes that are not a recognised image are never called one, whatever the client said.
        let named = text("mimeType").map(|m| m.trim().to_ascii_lowercase()).filter(|m| !m.starts_with("image/"));
        let content_type = image.map(str::to_string).or(named).unwrap_or_else(|| "application/octet-stream".into());
        // `<label>---<uuid>.<ext>`, the real gateway's media id: a safe label from the name.
        let (stem, ext) = name
            .rsplit_once('.')
            .filter(|(s, e)| !s.is_empty() && !e.is_empty() && e.len() <= 8 && e.bytes().all(|b| b.is_ascii_alphanumeric()))
            .unwrap_or((name.as_str(), "bin"));
        let label: String = stem.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(40).collect();
        let id = format!("{}---{}.{}", if label.is_empty() { "file" } else { &label }, uuid_v4(), ext.to_ascii_lowercase());
        let entry = json!({
            "url": format!("media://inbound/{id}"),
            "contentType": content_type,
            "kind": if image.is_some() { "image" } else { "document" },
            "fileName": name,
            "sizeBytes": size,
        });
        out.push((InboundMedia { id, content_type, file_name: name, bytes }, entry));
    }
    Ok(out)
}

fn claim_reply(gw: &Arc<Gateway>, session: &str, text: &str) -> bool {
    let Some(record) = gw.questions.claimable_for_session(session) else { return false };
    // A secret is never answered by a chat message (it would be saved in the transcript).
    if record.questions.iter().any(|q| q.secret()) {
        return false;
    }
    match claim_plain_text(&record.questions, text) {
        Some(answers) => {
            questions::finish(gw, &record.id, protocol::question::QuestionStatus::Answered, Some(answers), Some("plain-text".into()), None)
                .is_ok()
        }
        None => false,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryParams {
    session_key: String,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
    /// Skip this many of the newest messages (the next older page starts there).
    #[serde(default)]
    offset: Option<usize>,
    /// The display cap: longer texts are cut to this many UTF-16 units (1..=500000).
    #[serde(default)]
    max_chars: Option<u64>,
}

/// `chat.history`'s display cap when the caller names none (the real gateway's).
pub const HISTORY_MAX_CHARS: usize = 8000;
const HISTORY_MAX_CHARS_LIMIT: u64 = 500_000;
/// `chat.message.get`'s cap when the caller names none, and the largest it takes.
const MESSAGE_GET_MAX_CHARS: usize = 1_000_000;
const MESSAGE_GET_MAX_CHARS_LIMIT: u64 = 2_000_000;
/// A `chat.history` row larger than this (as JSON, after the cap) is replaced by a placeholder.
pub const HISTORY_MAX_MESSAGE_BYTES: usize = 131_072;
/// What a cut text ends with.
pub const TRUNCATED_SUFFIX: &str = "\n...(truncated)...";

/// `maxChars` within `1..=limit`, or the real gateway's words for one that is not.
fn max_chars(method: &str, v: Option<u64>, default: usize, limit: u64) -> Result<usize, ErrorShape> {
    match v {
        None => Ok(default),
        Some(0) => Err(ErrorShape::invalid(format!("invalid {method} params: at /maxChars: must be >= 1"))),
        Some(n) if n > limit => Err(ErrorShape::invalid(format!("invalid {method} params: at /maxChars: must be <= {limit}"))),
        Some(n) => Ok(n as usize),
    }
}

/// `text` cut to `max` UTF-16 units (never inside a character) plus the suffix, if longer.
fn cap_text(text: &str, max: usize) -> Option<String> {
    // Fewer bytes than `max` means fewer UTF-16 units too.
    if text.len() <= max {
        return None;
    }
    let mut units = 0;
    for (i, c) in text.char_indices() {
        if units + c.len_utf16() > max {
            return Some(format!("{}{TRUNCATED_SUFFIX}", &text[..i]));
        }
        units += c.len_utf16();
    }
    None
}

/// The display projection of a saved message: every text longer than `max` (a string
/// `content`, or the `text` of a `content` part) is cut, and the row is marked
/// `__openclaw.truncated: true, reason: "display-cap"`.
pub fn display_cap(mut message: Value, max: usize) -> Value {
    let mut cut = false;
    match message.get_mut("content") {
        Some(Value::String(s)) => {
            if let Some(c) = cap_text(s, max) {
                *s = c;
                cut = true;
            }
        }
        Some(Value::Array(parts)) => {
            for part in parts {
                if let Some(Value::String(s)) = part.get_mut("text")
                    && let Some(c) = cap_text(s, max)
                {
                    *s = c;
                    cut = true;
                }
            }
        }
        _ => {}
    }
    if cut {
        if let Some(meta) = message.get_mut("__openclaw").and_then(Value::as_object_mut) {
            meta.insert("truncated".into(), json!(true));
            meta.insert("reason".into(), json!("display-cap"));
        } else if let Some(m) = message.as_object_mut() {
            m.insert("__openclaw".into(), json!({"truncated": true, "reason": "display-cap"}));
        }
    }
    message
}

/// A row too large for `chat.history` even after the cap, as the real gateway replaces it.
fn oversized_placeholder(message: &Value) -> Value {
    let meta = &message["__openclaw"];
    let mut m = json!({"id": meta["id"], "seq": meta["seq"], "truncated": true, "reason": "oversized"});
    if let Some(k) = meta.get("idempotencyKey") {
        m["idempotencyKey"] = k.clone();
    }
    json!({"role": message["role"], "timestamp": message["timestamp"],
        "content": [{"type": "text", "text": "[chat.history omitted: message too large]"}], "__openclaw": m})
}

pub fn history(gw: &Gateway, caller: &Caller<'_>, p: HistoryParams) -> Result<Value, ErrorShape> {
    let _ = &p.agent_id;
    let cap = max_chars("chat.history", p.max_chars, HISTORY_MAX_CHARS, HISTORY_MAX_CHARS_LIMIT)?;
    let key = canonical_session_key(&p.session_key);
    if gw.store.session_owner(&key).map_err(unavailable)?.is_some() {
        check_session(gw, caller, &key)?;
    }
    let limit = p.limit.unwrap_or(200).clamp(1, 1000);
    // Any offset is accepted; past the end (up to u64::MAX, found by the fuzz harness) it is
    // an empty page, never an overflow.
    let offset = p.offset.unwrap_or(0).min(i64::MAX as usize);
    let (messages, total) = gw.store.history(&key, limit, offset).map_err(unavailable)?;
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|m| {
            let shown = display_cap(m, cap);
            if shown.to_string().len() > HISTORY_MAX_MESSAGE_BYTES { oversized_placeholder(&shown) } else { shown }
        })
        .collect();
    let active = gw.runs.active(&key);
    Ok(json!({
        "sessionKey": key,
        "messages": messages,
        "hasMore": total > offset.saturating_add(limit),
        "totalMessages": total,
        "pendingInputs": {"items": [], "total": 0},
        "sessionInfo": {"hasActiveRun": active.is_some(), "activeRunIds": active.map(|r| vec![r.run_id]).unwrap_or_default()},
    }))
}

pub const MESSAGE_GET_KEYS: &[&str] = &["sessionKey", "messageId", "agentId", "maxChars"];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageGetParams {
    session_key: String,
    message_id: String,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    max_chars: Option<u64>,
}

/// `chat.message.get`: one saved message whole (up to `maxChars`, a million by default):
/// `{ok:true, message}`, or `{ok:false, unavailableReason:"not_found"}` for an id this session
/// does not have (or a session the caller may not see).
pub fn message_get(gw: &Gateway, caller: &Caller<'_>, p: MessageGetParams) -> Result<Value, ErrorShape> {
    let _ = &p.agent_id;
    let cap = max_chars("chat.message.get", p.max_chars, MESSAGE_GET_MAX_CHARS, MESSAGE_GET_MAX_CHARS_LIMIT)?;
    let key = canonical_session_key(&p.session_key);
    let not_found = json!({"ok": false, "unavailableReason": "not_found"});
    if gw.store.session_owner(&key).map_err(unavailable)?.is_none() || check_session(gw, caller, &key).is_err() {
        return Ok(not_found);
    }
    Ok(match gw.store.message(&key, &p.message_id).map_err(unavailable)? {
        Some(m) => json!({"ok": true, "message": display_cap(m, cap)}),
        None => not_found,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortParams {
    session_key: String,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    preserve_side_runs: Option<bool>,
}

pub fn abort(gw: &Arc<Gateway>, caller: &Caller<'_>, p: AbortParams) -> Result<Value, ErrorShape> {
    let _ = (&p.agent_id, p.preserve_side_runs);
    let key = canonical_session_key(&p.session_key);
    check_session(gw, caller, &key)?;
    Ok(match abort_session(gw, &key, p.run_id.as_deref()) {
        Some(run_id) => json!({"ok": true, "aborted": true, "runId": run_id, "runIds": [run_id]}),
        None => json!({"ok": true, "aborted": false, "runIds": []}),
    })
}
