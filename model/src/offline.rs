//! The saved copy of recent conversations, shown while the gateway cannot be reached: which
//! messages it keeps, what it leaves out because it may be secret, and which conversations
//! make way when there are too many.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Messages kept per conversation: the newest page.
pub const MAX_MESSAGES: usize = 200;
/// Conversations kept; the least recently used goes first.
pub const MAX_CONVERSATIONS: usize = 20;
/// Marks a message that the saved copy holds only as a placeholder.
pub const WITHHELD: &str = "__ocuiWithheld";

/// One conversation's saved copy, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedConversation {
    pub session_key: String,
    /// When the gateway last confirmed these messages (ms since the epoch).
    pub confirmed_ms: f64,
    pub messages: Vec<Value>,
}

/// Which conversations have a saved copy, and when each was last used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedIndex {
    /// (session key, last used ms), most recent first.
    pub used: Vec<(String, f64)>,
}

impl SavedIndex {
    /// Records a use of `session` and returns the conversations that no longer fit.
    pub fn touch(&mut self, session: &str, now_ms: f64) -> Vec<String> {
        self.used.retain(|(k, _)| k != session);
        self.used.insert(0, (session.to_string(), now_ms));
        crate::order::sort_by(&mut self.used, |a, b| b.1.total_cmp(&a.1));
        if self.used.len() <= MAX_CONVERSATIONS {
            return Vec::new();
        }
        self.used.split_off(MAX_CONVERSATIONS).into_iter().map(|(k, _)| k).collect()
    }

    /// The conversation used last, to open when the address names none.
    pub fn latest(&self) -> Option<&str> {
        self.used.first().map(|(k, _)| k.as_str())
    }
}

/// Tool call ids of `ask_user` calls that ask a secret question: their results hold the
/// secret answer.
fn secret_call_ids(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .flat_map(crate::parts::parts)
        .filter_map(|p| match p {
            crate::parts::Part::ToolCall { id, arguments, .. } if asks_secret(&arguments) => Some(id),
            _ => None,
        })
        .collect()
}

/// Whether a value (a tool call's arguments, a question) has a question marked secret.
fn asks_secret(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.get("isSecret") == Some(&Value::Bool(true)) || o.values().any(asks_secret),
        Value::Array(a) => a.iter().any(asks_secret),
        // Arguments may come as a JSON string.
        Value::String(s) if s.contains("isSecret") => serde_json::from_str::<Value>(s).is_ok_and(|v| asks_secret(&v)),
        _ => false,
    }
}

/// A message's own identifier fields: long and random by design, and set by the gateway, not
/// written by a person or agent. Only at the message's top level.
const MESSAGE_IDS: &[&str] = &["__openclaw", "id", "idempotencyKey", "parentId", "responseId", "runId", "toolCallId"];

/// A content part's identifier and signature fields (`thinkingSignature` is long base64 by
/// design). Only on the part itself; `data` is skipped only on an image part (its bytes).
const PART_IDS: &[&str] = &["id", "artifactId", "toolCallId", "thinkingSignature", "textSignature", "thoughtSignature", "mimeType"];

/// Whether any string anywhere in `v` looks like a credential (every field, at every depth).
fn any_credential(v: &Value) -> bool {
    match v {
        Value::String(s) => crate::credential::detect(s).is_some(),
        Value::Array(a) => a.iter().any(any_credential),
        Value::Object(o) => o.values().any(any_credential),
        _ => false,
    }
}

fn part_holds_credential(part: &Value) -> bool {
    let Value::Object(o) = part else { return any_credential(part) };
    let image = o.get("type").and_then(Value::as_str) == Some("image");
    o.iter().any(|(k, v)| !(PART_IDS.contains(&k.as_str()) || (image && k == "data")) && any_credential(v))
}

/// Whether any written string in `m` looks like a credential: text, thinking, tool arguments,
/// command output, summaries alike. Every field is judged, except the message's and its
/// parts' own identifiers and an image part's bytes: a field named `id` or `data` inside tool
/// arguments or results is judged like any other.
fn holds_credential(m: &Value) -> bool {
    let Value::Object(o) = m else { return any_credential(m) };
    o.iter().any(|(k, v)| match (k.as_str(), v) {
        (k, _) if MESSAGE_IDS.contains(&k) => false,
        ("content", Value::Array(parts)) => parts.iter().any(part_holds_credential),
        _ => any_credential(v),
    })
}

/// Why `m` is not kept in the saved copy, if it is not: anything in it looks like a
/// credential, it asks a secret question, or it answers one. An `ask_user` result whose call is
/// not on the page is withheld too: nothing says its question was not secret.
pub fn withhold_reason(m: &Value, secret_calls: &[String], calls_on_page: &[String]) -> Option<&'static str> {
    if asks_secret(m) {
        return Some("it asks for a secret");
    }
    let call = m.get("toolCallId").and_then(Value::as_str);
    if call.is_some_and(|id| secret_calls.iter().any(|s| s == id)) {
        return Some("it answers a secret question");
    }
    if m.get("toolName").and_then(Value::as_str) == Some("ask_user") && !call.is_some_and(|id| calls_on_page.iter().any(|c| c == id)) {
        return Some("it answers a question that may have been secret");
    }
    if holds_credential(m) {
        return Some("it looks like it holds a credential");
    }
    None
}

/// The part of a transcript page that is saved: the newest [`MAX_MESSAGES`], with every
/// message that may be secret replaced by a placeholder that keeps its place and id.
pub fn saved_page(messages: &[Value]) -> Vec<Value> {
    let from = messages.len().saturating_sub(MAX_MESSAGES);
    let secret_calls = secret_call_ids(messages);
    let calls_on_page = crate::parts::tool_call_ids(messages);
    messages[from..]
        .iter()
        .map(|m| match withhold_reason(m, &secret_calls, &calls_on_page) {
            None => m.clone(),
            Some(reason) => {
                let mut stub = json!({"role": m.get("role").cloned().unwrap_or(Value::Null), WITHHELD: reason});
                for field in ["__openclaw", "timestamp"] {
                    if let Some(v) = m.get(field) {
                        stub[field] = v.clone();
                    }
                }
                stub
            }
        })
        .collect()
}

/// Why a saved message is only a placeholder (see [`saved_page`]).
pub fn withheld(m: &Value) -> Option<&str> {
    m.get(WITHHELD).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(i: usize) -> Value {
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("message {i}")}], "__openclaw": {"id": format!("m{i}"), "seq": i}})
    }

    #[test]
    fn only_the_newest_page_is_kept() {
        let all: Vec<Value> = (0..250).map(msg).collect();
        let page = saved_page(&all);
        assert_eq!(page.len(), MAX_MESSAGES);
        assert_eq!(page[0]["__openclaw"]["id"], "m50");
        assert_eq!(page[MAX_MESSAGES - 1]["__openclaw"]["id"], "m249");
        assert_eq!(saved_page(&all[..3]), all[..3].to_vec(), "a short page is kept whole and unchanged");
    }

    #[test]
    fn a_message_that_may_be_secret_keeps_only_its_place() {
        let token = json!({"role": "user", "content": "my key is sk-proj-4fT9xQ2mZ7vB1nK8rL3pW6yH0dS5aJ", "timestamp": 5.0, "__openclaw": {"id": "u1", "seq": 1}});
        let ask = json!({"role": "assistant", "content": [{"type": "toolCall", "id": "call_9", "name": "ask_user", "arguments": {"questions": [{"questionId": "k", "question": "API key?", "isSecret": true}]}}], "__openclaw": {"id": "a1", "seq": 2}});
        let ask_as_string = json!({"role": "assistant", "content": [{"type": "toolCall", "id": "call_10", "name": "ask_user", "arguments": "{\"questions\":[{\"isSecret\":true}]}"}], "__openclaw": {"id": "a2", "seq": 3}});
        let answer = json!({"role": "toolResult", "toolCallId": "call_9", "toolName": "ask_user", "content": [{"type": "text", "text": "hunter2"}], "__openclaw": {"id": "r1", "seq": 4}});
        let plain_answer = json!({"role": "toolResult", "toolCallId": "call_other", "toolName": "ask_user", "content": [{"type": "text", "text": "Production"}], "__openclaw": {"id": "r2", "seq": 5}});
        let plain_call = json!({"role": "assistant", "content": [{"type": "toolCall", "id": "call_other", "name": "ask_user", "arguments": {"questions": [{"id": "env", "question": "Which environment?"}]}}], "__openclaw": {"id": "a3", "seq": 6}});
        let page = saved_page(&[token, ask, ask_as_string, answer, plain_answer.clone(), plain_call]);
        assert_eq!(withheld(&page[0]), Some("it looks like it holds a credential"));
        assert_eq!(page[0]["__openclaw"]["id"], "u1");
        assert_eq!(page[0]["timestamp"], 5.0);
        assert!(!page[0].to_string().contains("sk-proj"), "{}", page[0]);
        assert_eq!(withheld(&page[1]), Some("it asks for a secret"));
        assert_eq!(withheld(&page[2]), Some("it asks for a secret"));
        assert_eq!(withheld(&page[3]), Some("it answers a secret question"));
        assert!(!page[3].to_string().contains("hunter2"));
        assert_eq!(page[4], plain_answer, "an answer to an ordinary question is kept");
        // Without its call on the page, nothing says an answer's question was not secret.
        let orphan = saved_page(&[plain_answer]);
        assert_eq!(withheld(&orphan[0]), Some("it answers a question that may have been secret"));
    }

    #[test]
    fn a_credential_anywhere_in_a_message_withholds_it() {
        let key = "sk-proj-4fT9xQ2mZ7vB1nK8rL3pW6yH0dS5aJ";
        let shapes = [
            json!({"role": "assistant", "content": [{"type": "thinking", "thinking": format!("the key is {key}")}]}),
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "exec", "arguments": {"cmd": format!("curl -H 'Authorization: Bearer {key}' https://api.example")}}]}),
            json!({"role": "bashExecution", "command": "env", "output": format!("OPENAI_API_KEY={key}")}),
            json!({"role": "compactionSummary", "summary": format!("The user shared {key} earlier.")}),
            json!({"role": "toolResult", "toolCallId": "c1", "toolName": "exec", "content": [{"type": "text", "text": key}]}),
            // Fields named like identifiers or bytes are judged inside arguments and results.
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c2", "name": "http", "arguments": {"id": key, "data": {"data": key}}}]}),
            json!({"role": "toolResult", "toolCallId": "c2", "content": [{"type": "text", "text": "ok", "data": key}], "details": {"id": key}}),
        ];
        for m in shapes {
            let page = saved_page(std::slice::from_ref(&m));
            assert!(withheld(&page[0]).is_some(), "{m}");
            assert!(!page[0].to_string().contains("sk-proj"), "{}", page[0]);
        }
        // Identifiers are long and random by design: the real gateway's image artifact ids, for one.
        let ordinary = json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "read the config"},
            {"type": "toolCall", "id": "call_9fQ2xK7mZ4vB8nL1rT6wY3pH", "name": "read_file", "arguments": {"path": "deploy.toml"}},
            {"type": "image", "mimeType": "image/png", "omitted": true, "bytes": 70, "artifactId": "artifact_transcript_image_eyJzIjoiaHJUMVY3Qm0yRjZRdjR4c2p3bFAyakUiLCJxIjoxNTN9"}
        ], "__openclaw": {"id": "0f8e4c1a-9b2d-4e7f-8a6c-3d5b1e9f7a2c", "seq": 1}});
        assert_eq!(saved_page(std::slice::from_ref(&ordinary)), vec![ordinary], "ordinary rows are kept as they are");
    }

    #[test]
    fn the_least_recently_used_conversation_makes_way() {
        let mut index = SavedIndex::default();
        for i in 0..MAX_CONVERSATIONS {
            assert!(index.touch(&format!("s{i}"), i as f64).is_empty());
        }
        assert_eq!(index.latest(), Some("s19"));
        // Using s0 again keeps it; the next new one pushes out s1, the oldest now.
        assert!(index.touch("s0", 100.0).is_empty());
        assert_eq!(index.touch("new", 101.0), vec!["s1".to_string()]);
        assert_eq!(index.used.len(), MAX_CONVERSATIONS);
        assert_eq!(index.latest(), Some("new"));
    }
}
