//! Chat and session shapes. Transcript messages stay close to JSON (`serde_json::Value`)
//! because their content varies by role and by gateway version; accessors read what the
//! UI needs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatSendParams {
    pub session_key: String,
    pub message: String,
    pub idempotency_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to_id: Option<String>,
}

/// A row of `sessions.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRow {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_active_run: Option<bool>,
}

/// A transcript message as `chat.history` and `session.message` carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage(pub Value);

impl ChatMessage {
    pub fn role(&self) -> Option<&str> {
        self.0.get("role")?.as_str()
    }
    fn meta(&self, key: &str) -> Option<&Value> {
        self.0.get("__openclaw")?.get(key)
    }
    pub fn id(&self) -> Option<&str> {
        self.meta("id")?.as_str()
    }
    pub fn seq(&self) -> Option<u64> {
        self.meta("seq")?.as_u64()
    }
    pub fn idempotency_key(&self) -> Option<&str> {
        self.meta("idempotencyKey").or_else(|| self.0.get("idempotencyKey"))?.as_str()
    }
    pub fn reply_to_id(&self) -> Option<&str> {
        self.meta("replyToId")?.as_str()
    }
    pub fn text(&self) -> String {
        message_text(&self.0)
    }
}

/// The plain text of a transcript message: a string `content`, or the `text` parts of an
/// array `content`.
pub fn message_text(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text")?.as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}
