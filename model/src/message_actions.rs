//! What a person can do with one message: copy it as Markdown, rewind the conversation to it,
//! or fork a new conversation from it.
//!
//! Rewind and fork work on a person's message that the gateway saved (its `__openclaw.id`, the
//! transcript entry the real gateway's `sessions.rewind {sessionKey, entryId}` and
//! `sessions.fork {sessionKey, entryId}` take). Both ask first and say what happens to the later
//! messages; neither is offered while the agent works (the gateway refuses then), nor without the
//! scope (`sessions.rewind` needs `operator.admin`, `sessions.fork` `operator.write`).
//!
//! One request at a time per conversation: [`ActionState`] moves from asking to sending to done
//! or failed, and a second click while one is on its way sends nothing.

use serde_json::{Value, json};

use crate::transcript::TranscriptRow;

/// An action that changes the conversation, asked first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// `sessions.rewind`: the conversation goes back to before this message; its text returns
    /// to the composer.
    Rewind,
    /// `sessions.fork`: a new conversation with the messages before this one; its text goes
    /// into that conversation's composer.
    Fork,
}

impl Cut {
    pub fn method(self) -> &'static str {
        match self {
            Cut::Rewind => protocol::methods::method::SESSIONS_REWIND,
            Cut::Fork => protocol::methods::method::SESSIONS_FORK,
        }
    }

    /// The button that offers it.
    pub fn offer_label(self) -> &'static str {
        match self {
            Cut::Rewind => "Rewind to here",
            Cut::Fork => "Fork from here",
        }
    }

    /// The button that does it, once asked.
    pub fn confirm_label(self) -> &'static str {
        match self {
            Cut::Rewind => "Rewind",
            Cut::Fork => "Fork",
        }
    }

    /// The question asked first: what happens to this message and those after it (`later`:
    /// how many follow it in the conversation; `before`: how many precede it).
    pub fn question(self, later: usize, before: usize) -> String {
        match self {
            Cut::Rewind => {
                let after = match later {
                    0 => "Nothing was written after it.".to_string(),
                    1 => "The 1 message after it leaves the conversation too.".to_string(),
                    n => format!("The {n} messages after it leave the conversation too."),
                };
                format!(
                    "Rewind to this message? It leaves the conversation and its text comes back into the composer, to change and send again. {after} The gateway keeps what left as an earlier branch."
                )
            }
            Cut::Fork => {
                let kept = match before {
                    0 => "no earlier messages".to_string(),
                    1 => "the 1 message before it".to_string(),
                    n => format!("the {n} messages before it"),
                };
                format!(
                    "Fork from this message? A new conversation starts with {kept}, and this message's text goes into its composer. This conversation stays as it is, with every later message."
                )
            }
        }
    }

    /// Said when it failed.
    fn failed(self) -> &'static str {
        match self {
            Cut::Rewind => "Not rewound",
            Cut::Fork => "Not forked",
        }
    }
}

/// What the page knows when it offers actions on a row.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    /// The connection may call `sessions.rewind` (`operator.admin`).
    pub may_rewind: bool,
    /// The connection may call `sessions.fork` (`operator.write`).
    pub may_fork: bool,
    /// A run of the conversation is active: the gateway refuses both now.
    pub run_active: bool,
    pub connected: bool,
}

/// The actions a row shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Offer {
    pub copy: bool,
    pub cuts: Vec<Cut>,
    /// Why the cuts are shown but cannot be used now.
    pub blocked: Option<&'static str>,
}

/// The transcript entry a person's row is saved as, if it is one the gateway can cut at: a
/// saved user row (not a pending send, nor this browser's saved copy).
pub fn entry_id(row: &TranscriptRow) -> Option<&str> {
    if row.role != "user" || row.from_saved_copy {
        return None;
    }
    let meta = row.raw.get("__openclaw")?;
    if meta.get("kind").and_then(Value::as_str) == Some("pending-send") {
        return None;
    }
    meta.get("id").and_then(Value::as_str).filter(|id| !id.is_empty() && !id.starts_with("pending:"))
}

/// The actions `row` offers in `ctx`.
pub fn offer(row: &TranscriptRow, ctx: Context) -> Offer {
    let copy = matches!(row.role.as_str(), "user" | "assistant") && !copy_text(row).trim().is_empty();
    let mut cuts = Vec::new();
    if entry_id(row).is_some() {
        if ctx.may_rewind {
            cuts.push(Cut::Rewind);
        }
        if ctx.may_fork {
            cuts.push(Cut::Fork);
        }
    }
    let blocked = if cuts.is_empty() {
        None
    } else if !ctx.connected {
        Some("Rewind and fork need the gateway, which cannot be reached now.")
    } else if ctx.run_active {
        Some("Rewind and fork wait until the agent has finished.")
    } else {
        None
    };
    Offer { copy, cuts, blocked }
}

/// The message as Markdown, as written: a person's text as typed, an agent's reply as the
/// Markdown it wrote (its text parts; not its thinking, nor its tool calls).
pub fn copy_text(row: &TranscriptRow) -> String {
    match row.raw.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str).is_none_or(|t| t == "text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => row.text.clone(),
    }
}

/// The request for `cut` at `entry` of `session`.
pub fn params(session: &str, entry: &str) -> Value {
    json!({"sessionKey": session, "entryId": entry})
}

/// What a rewind or fork answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutDone {
    pub cut: Cut,
    /// The conversation to show now: the new one after a fork, the same after a rewind.
    pub session: String,
    /// The message's text, for the composer (`editorText`).
    pub editor_text: Option<String>,
    /// Files the message carried, which the composer cannot take back (`editorAttachments`).
    pub attachments_left: usize,
}

/// Reads the gateway's answer to `cut` of `session`.
pub fn read_done(cut: Cut, session: &str, v: &Value) -> Result<CutDone, String> {
    let target = match cut {
        Cut::Rewind => session.to_string(),
        Cut::Fork => match v.get("sessionKey").and_then(Value::as_str).filter(|k| !k.is_empty()) {
            Some(k) => k.to_string(),
            None => return Err("the gateway's answer named no new conversation".into()),
        },
    };
    let editor_text = v.get("editorText").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
    let attachments_left = v.get("editorAttachments").and_then(Value::as_array).map_or(0, Vec::len);
    Ok(CutDone { cut, session: target, editor_text, attachments_left })
}

/// Where a conversation's rewind or fork is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ActionState {
    #[default]
    Idle,
    /// The question is shown under the row `key`.
    Asking {
        key: String,
        cut: Cut,
    },
    /// The request is on its way.
    Sending {
        key: String,
        cut: Cut,
    },
    /// It went; what the page says about it.
    Done {
        key: String,
        said: String,
    },
    Failed {
        key: String,
        said: String,
    },
}

impl ActionState {
    /// The row the state is about.
    pub fn key(&self) -> Option<&str> {
        match self {
            ActionState::Idle => None,
            ActionState::Asking { key, .. }
            | ActionState::Sending { key, .. }
            | ActionState::Done { key, .. }
            | ActionState::Failed { key, .. } => Some(key),
        }
    }

    /// Shows the question for `cut` under `key`; nothing while a request is on its way.
    pub fn ask(&mut self, key: &str, cut: Cut) {
        if !matches!(self, ActionState::Sending { .. }) {
            *self = ActionState::Asking { key: key.to_string(), cut };
        }
    }

    pub fn cancel(&mut self) {
        if !matches!(self, ActionState::Sending { .. }) {
            *self = ActionState::Idle;
        }
    }

    /// The confirming click on the question under `key`: the request to send, once.
    pub fn confirm(&mut self, key: &str) -> Option<Cut> {
        match self {
            ActionState::Asking { key: k, cut } if k == key => {
                let cut = *cut;
                *self = ActionState::Sending { key: key.to_string(), cut };
                Some(cut)
            }
            _ => None,
        }
    }

    /// The gateway answered (or the connection closed first).
    pub fn settle(&mut self, result: &Result<CutDone, String>) {
        let ActionState::Sending { key, cut } = self else {
            return;
        };
        let key = key.clone();
        *self = match result {
            Ok(done) => ActionState::Done { key, said: done_words(done) },
            Err(why) => ActionState::Failed { key, said: format!("{}: {why}", cut.failed()) },
        };
    }
}

fn done_words(done: &CutDone) -> String {
    let files = match done.attachments_left {
        0 => String::new(),
        1 => " Its file did not come back: attach it again if you need it.".into(),
        n => format!(" Its {n} files did not come back: attach them again if you need them."),
    };
    match done.cut {
        Cut::Rewind => format!("Rewound. The message is back in the composer.{files}"),
        Cut::Fork => format!("Forked into a new conversation, open here; the message is in its composer.{files}"),
    }
}

/// How many shown rows come after `key`, and how many before it.
pub fn around(rows: &[&TranscriptRow], key: &str) -> (usize, usize) {
    match rows.iter().position(|r| r.key == key) {
        Some(i) => (rows.len() - i - 1, i),
        None => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(m: Value) -> TranscriptRow {
        TranscriptRow::from_message(&m)
    }

    fn user(id: &str, text: &str) -> TranscriptRow {
        row(json!({"role": "user", "content": text, "__openclaw": {"id": id, "seq": 1}}))
    }

    const ALL: Context = Context { may_rewind: true, may_fork: true, run_active: false, connected: true };

    #[test]
    fn a_saved_person_message_offers_copy_rewind_and_fork() {
        let o = offer(&user("e1", "hello"), ALL);
        assert_eq!(o, Offer { copy: true, cuts: vec![Cut::Rewind, Cut::Fork], blocked: None });
    }

    #[test]
    fn rewind_needs_admin_and_fork_write() {
        let r = user("e1", "hello");
        assert_eq!(offer(&r, Context { may_rewind: false, ..ALL }).cuts, vec![Cut::Fork]);
        assert_eq!(offer(&r, Context { may_fork: false, ..ALL }).cuts, vec![Cut::Rewind]);
        let none = offer(&r, Context { may_rewind: false, may_fork: false, ..ALL });
        assert_eq!(none, Offer { copy: true, cuts: vec![], blocked: None });
    }

    #[test]
    fn an_agent_reply_a_pending_send_or_a_saved_copy_row_cannot_be_cut() {
        let reply = row(json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}], "__openclaw": {"id": "e2"}}));
        assert_eq!(offer(&reply, ALL).cuts, vec![]);
        assert!(offer(&reply, ALL).copy);
        let pending = row(json!({"role": "user", "content": "x", "__openclaw": {"id": "pending:1", "kind": "pending-send"}}));
        assert_eq!(entry_id(&pending), None);
        let mut saved = user("e3", "x");
        saved.from_saved_copy = true;
        assert_eq!(entry_id(&saved), None);
        let no_id = row(json!({"role": "user", "content": "x"}));
        assert_eq!(entry_id(&no_id), None);
    }

    #[test]
    fn cuts_wait_for_the_run_and_the_connection_and_say_why() {
        let r = user("e1", "hello");
        let busy = offer(&r, Context { run_active: true, ..ALL });
        assert_eq!(busy.blocked, Some("Rewind and fork wait until the agent has finished."));
        let off = offer(&r, Context { connected: false, ..ALL });
        assert!(off.blocked.unwrap().contains("cannot be reached"));
    }

    #[test]
    fn copy_is_the_markdown_as_written_without_thinking_or_tool_calls() {
        let reply = row(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "# Title\n\n- **a**"},
            {"type": "toolCall", "id": "c1", "name": "exec", "arguments": {}},
            {"type": "text", "text": "`done`"},
        ]}));
        assert_eq!(copy_text(&reply), "# Title\n\n- **a**\n\n`done`");
        assert_eq!(copy_text(&user("e", "*as typed*")), "*as typed*");
        let empty = row(json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "x", "arguments": {}}]}));
        assert!(!offer(&empty, ALL).copy);
    }

    #[test]
    fn the_questions_say_what_happens_to_later_messages() {
        assert!(Cut::Rewind.question(3, 2).contains("The 3 messages after it leave the conversation too."));
        assert!(Cut::Rewind.question(1, 0).contains("The 1 message after it"));
        assert!(Cut::Rewind.question(0, 4).contains("Nothing was written after it."));
        assert!(Cut::Fork.question(5, 2).contains("starts with the 2 messages before it"));
        assert!(Cut::Fork.question(5, 2).contains("stays as it is"));
    }

    #[test]
    fn one_confirming_click_sends_once_and_a_second_sends_nothing() {
        let mut s = ActionState::default();
        assert_eq!(s.confirm("e1"), None, "nothing asked yet");
        s.ask("e1", Cut::Rewind);
        assert_eq!(s.confirm("e2"), None, "another row's button");
        assert_eq!(s.confirm("e1"), Some(Cut::Rewind));
        assert_eq!(s.confirm("e1"), None, "already on its way");
        s.ask("e9", Cut::Fork);
        s.cancel();
        assert!(matches!(s, ActionState::Sending { .. }), "a request on its way is not replaced");
        s.settle(&Err("Rewind is unavailable while the agent is working.".into()));
        assert_eq!(
            s,
            ActionState::Failed { key: "e1".into(), said: "Not rewound: Rewind is unavailable while the agent is working.".into() }
        );
        s.cancel();
        assert_eq!(s, ActionState::Idle);
    }

    #[test]
    fn a_fork_answer_names_the_new_conversation_and_the_text() {
        let v = json!({"sessionKey": "agent:main:dashboard:1", "editorText": "again", "editorAttachments": [{"mimeType": "image/png", "data": "AA=="}]});
        let done = read_done(Cut::Fork, "agent:main:main", &v).unwrap();
        assert_eq!(done.session, "agent:main:dashboard:1");
        assert_eq!(done.editor_text.as_deref(), Some("again"));
        assert_eq!(done.attachments_left, 1);
        assert!(read_done(Cut::Fork, "k", &json!({})).is_err());
        let rewound = read_done(Cut::Rewind, "k", &json!({})).unwrap();
        assert_eq!((rewound.session.as_str(), rewound.editor_text), ("k", None));
        let mut s = ActionState::Sending { key: "e".into(), cut: Cut::Fork };
        s.settle(&Ok(done));
        assert!(matches!(s, ActionState::Done { said, .. } if said.contains("Its file did not come back")));
    }

    #[test]
    fn around_counts_the_rows_after_and_before() {
        let rows = [user("a", "1"), user("b", "2"), user("c", "3"), user("d", "4")];
        let shown: Vec<&TranscriptRow> = rows.iter().collect();
        assert_eq!(around(&shown, "b"), (2, 1));
        assert_eq!(around(&shown, "zz"), (0, 0));
    }
}
