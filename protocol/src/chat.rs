//! Chat and session shapes. Transcript messages stay JSON (`serde_json::Value`) because
//! their content varies by role and by gateway version.

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Files sent with the message: `{type, mimeType, fileName, content}` with `content` in
    /// standard padded base64 (OpenClaw 2026.9.6's `ChatAttachmentSchema`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Value>,
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

/// The plain text of a transcript message: a string `content`, or the `text` parts of an
/// array `content`.
pub fn message_text(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text")?.as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The canonical form of a session key, as the gateway reports it in events and history:
/// a bare `main` (or any key without the `agent:` prefix) belongs to the default agent.
pub fn canonical_session_key(key: &str) -> String {
    if key.starts_with("agent:") { key.to_string() } else { format!("agent:main:{key}") }
}

#[cfg(test)]
mod session_key_tests {
    use super::canonical_session_key;

    #[test]
    fn a_bare_session_key_belongs_to_the_default_agent() {
        assert_eq!(canonical_session_key("main"), "agent:main:main");
        assert_eq!(canonical_session_key("bench-long"), "agent:main:bench-long");
        assert_eq!(canonical_session_key("agent:ops:night"), "agent:ops:night");
    }
}
