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
        self.used.sort_by(|a, b| b.1.total_cmp(&a.1));
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
    let mut ids = Vec::new();
    for m in messages {
        for part in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            if matches!(part.get("type").and_then(Value::as_str), Some("toolCall" | "tool_use" | "toolUse")) && asks_secret(part) {
                if let Some(id) = part.get("id").and_then(Value::as_str) {
                    ids.push(id.to_string());
                }
            }
        }
    }
    ids
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

/// Why `m` is not kept in the saved copy, if it is not: its text looks like a credential, it
/// asks a secret question, or it answers one.
pub fn withhold_reason(m: &Value, secret_calls: &[String]) -> Option<&'static str> {
    if asks_secret(m) {
        return Some("it asks for a secret");
    }
    let call = m.get("toolCallId").and_then(Value::as_str);
    if call.is_some_and(|id| secret_calls.iter().any(|s| s == id)) {
        return Some("it answers a secret question");
    }
    if crate::credential::detect(&crate::message_text(m)).is_some() {
        return Some("it looks like it holds a credential");
    }
    None
}

/// The part of a transcript page that is saved: the newest [`MAX_MESSAGES`], with every
/// message that may be secret replaced by a placeholder that keeps its place and id.
pub fn saved_page(messages: &[Value]) -> Vec<Value> {
    let from = messages.len().saturating_sub(MAX_MESSAGES);
    let secret_calls = secret_call_ids(messages);
    messages[from..]
        .iter()
        .map(|m| match withhold_reason(m, &secret_calls) {
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
        let page = saved_page(&[token, ask, ask_as_string, answer, plain_answer.clone()]);
        assert_eq!(withheld(&page[0]), Some("it looks like it holds a credential"));
        assert_eq!(page[0]["__openclaw"]["id"], "u1");
        assert_eq!(page[0]["timestamp"], 5.0);
        assert!(!page[0].to_string().contains("sk-proj"), "{}", page[0]);
        assert_eq!(withheld(&page[1]), Some("it asks for a secret"));
        assert_eq!(withheld(&page[2]), Some("it asks for a secret"));
        assert_eq!(withheld(&page[3]), Some("it answers a secret question"));
        assert!(!page[3].to_string().contains("hunter2"));
        assert_eq!(page[4], plain_answer, "an answer to an ordinary question is kept");
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
