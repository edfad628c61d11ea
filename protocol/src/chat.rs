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

/// Where a run is, as a `chat` event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatEventState {
    /// More text (`deltaText`, appended or, with `replace`, instead).
    Delta,
    /// Still running, no new text.
    Status,
    /// Done; `message` may carry the saved reply.
    Final,
    /// Stopped by `chat.abort`.
    Aborted,
    /// Failed (`errorMessage`).
    Error,
    /// A state this UI does not know (a newer gateway): ignored.
    #[serde(other)]
    Other,
}

impl ChatEventState {
    /// Whether the run has ended.
    pub fn is_terminal(self) -> bool {
        matches!(self, ChatEventState::Final | ChatEventState::Aborted | ChatEventState::Error)
    }
}

/// A `chat` event: one step of a run's stream. The saved reply (`message`) stays JSON, like
/// every transcript message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatEvent {
    pub session_key: String,
    #[serde(default)]
    pub run_id: Option<String>,
    pub state: ChatEventState,
    #[serde(default)]
    pub delta_text: Option<String>,
    #[serde(default)]
    pub replace: bool,
    #[serde(default)]
    pub message: Option<Value>,
    #[serde(default)]
    pub error_message: Option<String>,
    /// The run's own order (shared with its `agent` events; it may skip numbers).
    #[serde(default)]
    pub seq: Option<u64>,
    /// For `status`: where the run is before the model (`preparing_workspace`, …).
    #[serde(default)]
    pub phase: Option<String>,
}

impl ChatEvent {
    /// Reads a `chat` event's payload; `None` when it is not one (no session or state).
    pub fn read(payload: &Value) -> Option<ChatEvent> {
        ChatEvent::deserialize(payload).ok()
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

#[cfg(test)]
mod dto_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chat_events_read_their_state_and_an_unknown_state_is_other() {
        let e = ChatEvent::read(&json!({"sessionKey": "s", "runId": "r", "state": "delta", "deltaText": "Hi", "seq": 3})).unwrap();
        assert_eq!((e.state, e.delta_text.as_deref(), e.replace, e.seq), (ChatEventState::Delta, Some("Hi"), false, Some(3)));
        let e = ChatEvent::read(&json!({"sessionKey": "s", "runId": "r", "state": "status", "phase": "starting_model"})).unwrap();
        assert_eq!(e.phase.as_deref(), Some("starting_model"));
        let e = ChatEvent::read(&json!({"sessionKey": "s", "runId": "r", "state": "error", "errorMessage": "boom"})).unwrap();
        assert!(e.state.is_terminal());
        assert_eq!(e.error_message.as_deref(), Some("boom"));
        assert_eq!(ChatEvent::read(&json!({"sessionKey": "s", "state": "thinking"})).unwrap().state, ChatEventState::Other);
        assert!(ChatEvent::read(&json!({"state": "final"})).is_none(), "no session");
    }
}
