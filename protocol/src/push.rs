//! Web Push through the gateway (`push.web.*`): the notification payload a gateway sends, what
//! it may say, and the per-device preferences, as the real gateway 2026.9.6 has them
//! (`docs/conversation-tools-protocol-notes.md` has the rest of the wire).
//!
//! The payload is the real gateway's `{title, body, tag, renotify, url}`, `url` relative to the
//! Control UI's base path without a leading slash (`approve/<id>`, `ask/<id>`). This crate's
//! gateway adds two fields the real one does not send: `choices`, the options of a question a
//! notification may offer as its actions, and `secret`. The service worker (`public/sw.js`)
//! reads both, and decides again what a lock screen shows.

use serde::{Deserialize, Serialize};

use crate::question::Question;

/// The title of an approval's notification while it waits, and once it does not.
pub const APPROVAL_REQUESTED_TITLE: &str = "OpenClaw approval requested";
pub const APPROVAL_UPDATED_TITLE: &str = "OpenClaw approval updated";
pub const QUESTION_TITLE: &str = "OpenClaw needs an answer";
pub const FINISHED_TITLE: &str = "OpenClaw agent finished";
pub const TEST_TITLE: &str = "OpenClaw";
pub const TEST_BODY: &str = "Web push test notification";

/// The most actions a notification offers (the browser's limit on most platforms).
pub const MAX_ACTIONS: usize = 2;

/// What a gateway sends through the push service, encrypted (RFC 8291).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PushPayload {
    pub title: String,
    pub body: String,
    pub tag: String,
    #[serde(default)]
    pub renotify: bool,
    pub url: String,
    /// The options a tap may choose (a single, single-choice, non-secret question of at most
    /// [`MAX_ACTIONS`] options). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
}

fn link_id(id: &str) -> String {
    crate::text::encode_uri_component(id)
}

/// The Control UI's link to a conversation (`docs/web/urls.md` of `openclaw`), relative:
/// `chat/<agent>` for an agent's main session, else `chat/<agent>/~key/<segment>/…`, every
/// segment literal (`.`, `..` and a leading `~` escaped as the contract says).
pub fn chat_link(session_key: &str) -> String {
    let mut parts = session_key.split(':');
    let (Some("agent"), Some(agent)) = (parts.next(), parts.next()) else { return "sessions".into() };
    let rest: Vec<&str> = parts.collect();
    if rest == ["main"] {
        return format!("chat/{}", link_id(agent));
    }
    let segments: Vec<String> = rest
        .iter()
        .map(|s| match *s {
            "." => "~dot".to_string(),
            ".." => "~dotdot".to_string(),
            s if s.starts_with('~') => link_id(&format!("~{s}")),
            s => link_id(s),
        })
        .collect();
    format!("chat/{}/~key/{}", link_id(agent), segments.join("/"))
}

/// An approval waits. The lock screen learns only that one waits: never the command, its
/// directory, nor the plugin's details.
pub fn approval_requested(id: &str) -> PushPayload {
    PushPayload {
        title: APPROVAL_REQUESTED_TITLE.into(),
        body: "Open OpenClaw to review this request.".into(),
        tag: format!("openclaw-approval-{id}"),
        renotify: false,
        url: format!("approve/{}", link_id(id)),
        choices: None,
        secret: false,
    }
}

/// An approval was decided or expired: replaces its notification (same tag).
pub fn approval_updated(id: &str) -> PushPayload {
    PushPayload { title: APPROVAL_UPDATED_TITLE.into(), body: "This approval is no longer pending.".into(), ..approval_requested(id) }
}

/// The options a notification may offer for `questions`: one question, single choice, not
/// secret, without a free-text answer, of one or two options.
pub fn choices(questions: &[Question]) -> Option<Vec<String>> {
    let [q] = questions else { return None };
    let free_text = q.is_other == Some(true);
    let fits = (1..=MAX_ACTIONS).contains(&q.options.len());
    (!q.multi() && !q.secret() && q.secret_store.is_none() && !free_text && fits)
        .then(|| q.options.iter().map(|o| o.label.clone()).collect())
}

/// A question waits. A secrets request says only that a secret is asked; another question
/// shows its text when its options are offered as actions (a choice needs its question),
/// else only that a question waits.
pub fn question_requested(id: &str, questions: &[Question]) -> PushPayload {
    let secret = questions.iter().any(|q| q.secret() || q.secret_store.is_some());
    // Cut for the payload (a push carries at most 4 KB; a notification's button shows little):
    // the page picks by position, from the question itself.
    let choices = choices(questions).map(|c| c.iter().map(|l| crate::frame::truncate(l, 40)).collect::<Vec<_>>());
    let body = match (&choices, questions) {
        _ if secret => "An agent asks for a secret.".to_string(),
        (Some(_), [q]) => crate::frame::truncate(&q.question, 200),
        _ => "An agent has a question for you.".to_string(),
    };
    PushPayload {
        title: QUESTION_TITLE.into(),
        body,
        tag: format!("openclaw-question-{id}"),
        renotify: false,
        url: format!("ask/{}", link_id(id)),
        choices,
        secret,
    }
}

/// A run ended with a reply; `url` opens its conversation.
pub fn run_finished(run_id: &str, session_key: &str) -> PushPayload {
    PushPayload {
        title: FINISHED_TITLE.into(),
        body: "An agent completed its response.".into(),
        tag: format!("openclaw-agent-finished-{run_id}"),
        renotify: false,
        url: chat_link(session_key),
        choices: None,
        secret: false,
    }
}

/// A background task (a sub-agent) failed or timed out; `url` opens the conversation that
/// started it.
pub fn task_failed(task_id: &str, session_key: &str) -> PushPayload {
    PushPayload {
        title: "OpenClaw background task failed".into(),
        body: "A background task needs attention.".into(),
        tag: format!("openclaw-task-failed-{task_id}"),
        renotify: false,
        url: chat_link(session_key),
        choices: None,
        secret: false,
    }
}

/// Which notifications a device wants (`push.web.preferences.*`, the real gateway's names).
/// The real gateway has no category for a secrets request (it comes as a question) nor for a
/// failed run (a failed background task or scheduled task is its nearest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Categories {
    pub approval_requested: bool,
    pub agent_question: bool,
    pub agent_finished: bool,
    pub background_task_failed: bool,
    pub scheduled_task_failed: bool,
}

impl Default for Categories {
    /// The real gateway's defaults: approvals only.
    fn default() -> Self {
        Categories {
            approval_requested: true,
            agent_question: false,
            agent_finished: false,
            background_task_failed: false,
            scheduled_task_failed: false,
        }
    }
}

/// `push.web.preferences.set {endpoint, scope: "device", preferences}`'s `preferences`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevicePreferences {
    pub enabled: bool,
    #[serde(default)]
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Categories>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::QuestionOption;

    fn q(labels: &[&str]) -> Question {
        Question {
            question_id: "q".into(),
            header: "Deploy".into(),
            question: "Deploy to staging now?".into(),
            url: None,
            options: labels.iter().map(|l| QuestionOption { label: l.to_string(), description: None }).collect(),
            multi_select: None,
            is_other: None,
            is_secret: None,
            secret_store: None,
            secret_store_existing: None,
        }
    }

    #[test]
    fn an_approval_tells_the_lock_screen_only_that_one_waits() {
        let p = approval_requested("exec:1/2");
        assert_eq!(p.url, "approve/exec%3A1%2F2");
        assert_eq!(p.tag, "openclaw-approval-exec:1/2");
        assert!(p.choices.is_none() && !p.body.contains("exec"));
        let over = approval_updated("exec:1/2");
        assert_eq!((over.tag.as_str(), over.title.as_str()), (p.tag.as_str(), APPROVAL_UPDATED_TITLE));
    }

    #[test]
    fn two_options_of_one_single_choice_question_become_the_actions_with_the_question() {
        let p = question_requested("r1", &[q(&["Yes", "No"])]);
        assert_eq!(p.choices, Some(vec!["Yes".to_string(), "No".to_string()]));
        assert_eq!(p.body, "Deploy to staging now?");
        assert_eq!(p.url, "ask/r1");
    }

    #[test]
    fn no_actions_for_three_options_a_multi_choice_free_text_two_questions_or_a_secret() {
        assert_eq!(question_requested("r", &[q(&["A", "B", "C"])]).choices, None);
        let mut multi = q(&["A", "B"]);
        multi.multi_select = Some(true);
        assert_eq!(question_requested("r", &[multi]).choices, None);
        let mut other = q(&["A", "B"]);
        other.is_other = Some(true);
        assert_eq!(question_requested("r", &[other]).choices, None);
        let two = question_requested("r", &[q(&["A"]), q(&["B"])]);
        assert_eq!((two.choices, two.body.as_str()), (None, "An agent has a question for you."));
        let mut secret = q(&[]);
        secret.is_secret = Some(true);
        secret.question = "Your API key for prod".into();
        let s = question_requested("r", &[secret]);
        assert!(s.secret && s.choices.is_none());
        assert_eq!(s.body, "An agent asks for a secret.", "never the question's own words: they may name the secret");
    }

    #[test]
    fn a_conversations_link_is_the_control_uis_literal_one() {
        assert_eq!(chat_link("agent:main:main"), "chat/main");
        assert_eq!(chat_link("agent:main:telegram:12 3"), "chat/main/~key/telegram/12%203");
        assert_eq!(chat_link("agent:main:..:~x"), "chat/main/~key/~dotdot/~~x");
        assert_eq!(chat_link("global"), "sessions");
    }

    #[test]
    fn the_payload_reads_the_real_gateways_shape() {
        let real = serde_json::json!({"title": "OpenClaw approval requested", "body": "Open OpenClaw to review this request.", "tag": "openclaw-approval-a", "renotify": false, "url": "approve/a"});
        let p: PushPayload = serde_json::from_value(real.clone()).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), real, "nothing added where the real gateway sends nothing");
    }
}
