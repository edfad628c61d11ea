//! A person's unfinished answer to one request: selections and typed text per question,
//! and the step they are on. Drafts are keyed by request id and never touch each other.

use std::collections::HashMap;

use protocol::question::{Question, QuestionAnswers, QuestionRecord};
use serde::{Deserialize, Serialize};

/// The draft of one question.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerDraft {
    /// Picked option labels (one at most for single-select).
    #[serde(default)]
    pub selected: Vec<String>,
    /// Typed free text, kept even while an option is picked so it can come back.
    #[serde(default)]
    pub other_text: String,
    /// Single-select: whether the typed text (not an option) is the answer.
    #[serde(default)]
    pub other_active: bool,
}

/// The draft of a whole request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionDraft {
    pub request_id: String,
    #[serde(default)]
    pub step: usize,
    #[serde(default)]
    pub answers: HashMap<String, AnswerDraft>,
    /// Values typed into secret questions: never serialised, so never stored.
    #[serde(skip)]
    pub secrets: HashMap<String, String>,
    /// Bumped on every change; storage writes only move forward. 0 means untouched.
    #[serde(default)]
    pub revision: u64,
    /// For async questions: the questions' signature; a different one resets the draft.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
    /// For a secrets request: the hosts the person allows the value to be sent to, once they
    /// changed the agent's list (`None`: as the agent proposed). Not secret, so kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_hosts: Option<Vec<String>>,
}

/// Why a host cannot be added to a secret's allowed hosts.
pub fn host_problem(host: &str) -> Option<String> {
    let h = host.trim();
    if h.is_empty() {
        return Some("Type a host name, for example api.example.com.".into());
    }
    if h.contains("://") || h.contains('/') {
        return Some(format!("{h} is an address, not a host name: type only the host, for example api.example.com."));
    }
    let (name, port) = match h.rsplit_once(':') {
        Some((n, p)) if !n.contains(':') => (n, Some(p)),
        _ => (h, None),
    };
    if let Some(p) = port
        && p.parse::<u16>().map_or(true, |p| p == 0)
    {
        return Some(format!("{h}: the port must be a number from 1 to 65535."));
    }
    let name = name.strip_prefix("*.").unwrap_or(name);
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if name.len() > 253 || !name.split('.').all(label_ok) {
        return Some(format!("{h} is not a host name: use letters, digits, hyphens and dots (a leading *. for every subdomain)."));
    }
    None
}

/// Why a request cannot be submitted yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incomplete {
    /// The first step without an answer.
    pub step: usize,
    pub message: String,
}

/// The hosts the agent proposed for a secrets request (its first secret question's).
pub fn proposed_hosts(record: &QuestionRecord) -> Vec<String> {
    record.questions.iter().find_map(|q| q.secret_store.as_ref()).and_then(|s| s.allowed_hosts.clone()).unwrap_or_default()
}

impl QuestionDraft {
    pub fn new(request_id: &str) -> Self {
        QuestionDraft { request_id: request_id.to_string(), ..Default::default() }
    }

    fn entry(&mut self, question_id: &str) -> &mut AnswerDraft {
        self.revision += 1;
        self.answers.entry(question_id.to_string()).or_default()
    }

    /// The hosts a secret may be sent to: the person's list once changed, else the agent's.
    pub fn hosts(&self, record: &QuestionRecord) -> Vec<String> {
        self.allowed_hosts.clone().unwrap_or_else(|| proposed_hosts(record))
    }

    /// Adds a host to the allowed list, or says why not.
    pub fn add_host(&mut self, record: &QuestionRecord, host: &str) -> Result<(), String> {
        if let Some(problem) = host_problem(host) {
            return Err(problem);
        }
        let host = host.trim().to_ascii_lowercase();
        let mut hosts = self.hosts(record);
        if hosts.iter().any(|h| h.eq_ignore_ascii_case(&host)) {
            return Err(format!("{host} is already allowed."));
        }
        hosts.push(host);
        self.allowed_hosts = Some(hosts);
        self.revision += 1;
        Ok(())
    }

    pub fn remove_host(&mut self, record: &QuestionRecord, host: &str) {
        let mut hosts = self.hosts(record);
        hosts.retain(|h| h != host);
        self.allowed_hosts = Some(hosts);
        self.revision += 1;
    }

    pub fn get(&self, question_id: &str) -> Option<&AnswerDraft> {
        self.answers.get(question_id)
    }

    /// The first typed answer that looks like a credential. Values typed into secret questions
    /// live in `secrets`, never in `answers`, so they are not looked at.
    pub fn credential(&self) -> Option<crate::credential::CredentialMatch> {
        self.answers.values().filter(|a| !a.other_text.is_empty()).find_map(|a| crate::credential::detect(&a.other_text))
    }

    /// What may be written to storage: the draft without any credential-shaped typed answer
    /// (choices and the step are kept; the text stays in memory only).
    pub fn for_storage(&self) -> QuestionDraft {
        let mut d = self.clone();
        for a in d.answers.values_mut() {
            if crate::credential::detect(&a.other_text).is_some() {
                a.other_text.clear();
            }
        }
        d
    }

    /// An async question's starting draft: the first option of each question is selected
    /// (never sent on its own), and the draft counts as untouched.
    pub fn preselected(request_id: &str, questions: &[Question], signature: &str) -> Self {
        let mut d = QuestionDraft::new(request_id);
        for q in questions {
            if let Some(first) = q.options.first() {
                d.pick(q, &first.label);
            }
        }
        d.revision = 0;
        d.signature = signature.to_string();
        d
    }

    /// Whether the person changed anything (an untouched draft need not be stored).
    pub fn is_touched(&self) -> bool {
        if self.revision == 0 {
            return false;
        }
        self.step > 0 || self.answers.values().any(|a| !a.selected.is_empty() || !a.other_text.is_empty()) || !self.secrets.is_empty()
    }

    /// Single-select: picks `label` and sets the typed text aside (it is kept).
    pub fn pick(&mut self, q: &Question, label: &str) {
        let a = self.entry(&q.question_id);
        a.selected = vec![label.to_string()];
        a.other_active = false;
    }

    /// Multi-select: checks or unchecks `label`. Kept in option order.
    pub fn toggle(&mut self, q: &Question, label: &str) {
        let a = self.entry(&q.question_id);
        if let Some(i) = a.selected.iter().position(|s| s == label) {
            a.selected.remove(i);
        } else {
            a.selected.push(label.to_string());
            let order = |l: &String| q.options.iter().position(|o| &o.label == l).unwrap_or(usize::MAX);
            crate::order::sort_by_key(&mut a.selected, order);
        }
    }

    /// Typing free text. In single-select it becomes the answer and clears the radio; in
    /// multi-select it is sent in addition to the checked options.
    pub fn type_other(&mut self, q: &Question, text: &str) {
        if q.secret() {
            self.revision += 1;
            self.secrets.insert(q.question_id.clone(), text.to_string());
            return;
        }
        let multi = q.multi();
        let a = self.entry(&q.question_id);
        a.other_text = text.to_string();
        if !multi {
            a.other_active = !text.is_empty();
            if a.other_active {
                a.selected.clear();
            }
        }
    }

    /// Single-select: going back into the free-text field makes kept text the answer again.
    pub fn activate_other(&mut self, q: &Question) {
        if q.multi() || q.secret() {
            return;
        }
        let has_text = self.get(&q.question_id).is_some_and(|a| !a.other_text.is_empty());
        if has_text {
            let a = self.entry(&q.question_id);
            a.other_active = true;
            a.selected.clear();
        }
    }

    pub fn set_step(&mut self, step: usize) {
        if self.step != step {
            self.step = step;
            self.revision += 1;
        }
    }

    /// The values this question would be answered with, or `None` if it has no answer.
    /// Free text goes exactly as typed (trimmed), even when it equals an option label.
    pub fn answer_for(&self, q: &Question) -> Option<Vec<String>> {
        if q.secret() {
            return self.secrets.get(&q.question_id).filter(|v| !v.is_empty()).map(|v| vec![v.clone()]);
        }
        let a = self.get(&q.question_id)?;
        let text = a.other_text.trim();
        let allows_text = q.allows_free_text() || q.options.is_empty();
        let mut values: Vec<String> = Vec::new();
        if q.multi() {
            values.extend(a.selected.iter().cloned());
            if allows_text && !text.is_empty() && !values.iter().any(|v| v == text) {
                values.push(text.to_string());
            }
        } else if a.other_active && allows_text && !text.is_empty() {
            values.push(text.to_string());
        } else if let Some(s) = a.selected.first() {
            values.push(s.clone());
        }
        (!values.is_empty()).then_some(values)
    }

    pub fn is_answered(&self, q: &Question) -> bool {
        self.answer_for(q).is_some()
    }

    /// Every question's answer, or the first step that still needs one (the gateway accepts
    /// no partial answers).
    pub fn build(&self, record: &QuestionRecord) -> Result<QuestionAnswers, Incomplete> {
        let mut out = QuestionAnswers::default();
        for (i, q) in record.questions.iter().enumerate() {
            match self.answer_for(q) {
                Some(v) => {
                    out.answers.insert(q.question_id.clone(), v);
                }
                None => {
                    let n = record.questions.len();
                    let what = if q.header.trim().is_empty() {
                        format!("question {}", i + 1)
                    } else {
                        format!("“{}” (question {} of {n})", q.header.trim(), i + 1)
                    };
                    return Err(Incomplete { step: i, message: format!("Answer {what} before submitting.") });
                }
            }
        }
        Ok(out)
    }

    /// The typed text of every question, for copying out of an expired or cancelled
    /// question (secrets excluded).
    pub fn typed_text(&self, questions: &[Question]) -> String {
        questions
            .iter()
            .filter_map(|q| self.get(&q.question_id).map(|a| a.other_text.trim()).filter(|t| !t.is_empty()).map(|t| t.to_string()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Drops draft entries for questions the record does not have (a changed request).
    pub fn fit(&mut self, record: &QuestionRecord) {
        self.answers.retain(|k, _| record.questions.iter().any(|q| &q.question_id == k));
        for q in &record.questions {
            if let Some(a) = self.answers.get_mut(&q.question_id) {
                a.selected.retain(|l| q.options.iter().any(|o| &o.label == l));
            }
        }
        self.step = self.step.min(record.questions.len().saturating_sub(1));
    }
}

/// Where text that Discard gives back to a conversation's composer goes, when no pane shows
/// that conversation: into its stored draft, unless the result would hold a credential (stored
/// drafts never do); then it waits in the tab's memory until a pane opens the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restore {
    /// Store this as the conversation's draft.
    Store(String),
    /// Keep this in memory only.
    HoldInMemory(String),
}

/// `text` joined below the conversation's `stored` draft (not twice).
pub fn restore_into_stored_draft(stored: &str, text: &str) -> Restore {
    let merged = if stored.is_empty() {
        text.to_string()
    } else if stored.contains(text) {
        stored.to_string()
    } else {
        format!("{stored}\n{text}")
    };
    if crate::credential::detect(&merged).is_some() { Restore::HoldInMemory(text.to_string()) } else { Restore::Store(merged) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discarded_text_with_a_credential_never_goes_into_a_stored_draft() {
        assert_eq!(restore_into_stored_draft("", "deploy now"), Restore::Store("deploy now".into()));
        assert_eq!(restore_into_stored_draft("first", "deploy now"), Restore::Store("first\ndeploy now".into()));
        assert_eq!(restore_into_stored_draft("deploy now", "deploy now"), Restore::Store("deploy now".into()));
        let key = "ghp_oQNCvMKjjzvHFb5ssScv057EnOpIKZhEreZc";
        assert_eq!(restore_into_stored_draft("first", &format!("use {key}")), Restore::HoldInMemory(format!("use {key}")));
        // A key split across the stored draft and the restored text is caught too.
        assert_eq!(
            restore_into_stored_draft("ghp_oQNCvMKjjzvHFb5s", "sScv057EnOpIKZhEreZc"),
            Restore::HoldInMemory("sScv057EnOpIKZhEreZc".into())
        );
    }
    use protocol::question::{QuestionOption, QuestionStatus};

    #[test]
    fn a_credential_typed_as_an_answer_is_found_and_left_out_of_storage() {
        let q: Question = serde_json::from_value(
            serde_json::json!({"questionId":"key","header":"K","question":"Which key?","options":[{"label":"The old one"}],"isOther":true}),
        )
        .unwrap();
        let mut d = QuestionDraft::new("r");
        d.pick(&q, "The old one");
        assert_eq!(d.credential(), None);
        d.type_other(&q, "use ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b");
        let found = d.credential().expect("a GitHub token");
        assert_eq!(found.kind, crate::credential::CredentialKind::GitHubToken);
        let stored = d.for_storage();
        assert_eq!(stored.get("key").unwrap().other_text, "", "the token stays in memory");
        assert!(stored.credential().is_none());
        assert_eq!(stored.revision, d.revision);
        assert!(!serde_json::to_string(&stored).unwrap().contains("ghp_"));
        // Ordinary text is stored as typed.
        d.type_other(&q, "the one from last week");
        assert_eq!(d.for_storage().get("key").unwrap().other_text, "the one from last week");
    }

    pub fn q(id: &str, labels: &[&str], multi: bool) -> Question {
        Question {
            question_id: id.into(),
            header: id.to_uppercase(),
            question: format!("{id}?"),
            url: None,
            options: labels.iter().map(|l| QuestionOption { label: l.to_string(), description: None }).collect(),
            multi_select: multi.then_some(true),
            is_other: Some(true),
            is_secret: None,
            secret_store: None,
            secret_store_existing: None,
        }
    }

    fn record(qs: Vec<Question>) -> QuestionRecord {
        QuestionRecord {
            id: "r1".into(),
            questions: qs,
            agent_id: None,
            session_key: None,
            run_id: None,
            created_at_ms: 0,
            expires_at_ms: 1,
            status: QuestionStatus::Pending,
            answers: None,
            resolved_by: None,
        }
    }

    #[test]
    fn single_select_typing_clears_the_radio_and_picking_keeps_the_text_for_later() {
        let q1 = q("target", &["Staging", "Production"], false);
        let mut d = QuestionDraft::new("r1");
        d.pick(&q1, "Staging");
        assert_eq!(d.answer_for(&q1), Some(vec!["Staging".into()]));
        d.type_other(&q1, "Canary");
        assert_eq!(d.answer_for(&q1), Some(vec!["Canary".into()]));
        assert!(d.get("target").unwrap().selected.is_empty());
        d.pick(&q1, "Production");
        assert_eq!(d.answer_for(&q1), Some(vec!["Production".into()]));
        assert_eq!(d.get("target").unwrap().other_text, "Canary", "typed text is kept");
        d.activate_other(&q1);
        assert_eq!(d.answer_for(&q1), Some(vec!["Canary".into()]));
    }

    #[test]
    fn typed_text_equal_to_a_label_stays_free_text() {
        let q1 = q("target", &["Staging", "Production"], false);
        let mut d = QuestionDraft::new("r1");
        d.type_other(&q1, "Staging");
        assert!(d.get("target").unwrap().selected.is_empty());
        assert!(d.get("target").unwrap().other_active);
        let back: QuestionDraft = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert_eq!(back.get("target"), d.get("target"), "survives storage as free text");
    }

    #[test]
    fn multi_select_sends_free_text_in_addition_to_checked_options_in_option_order() {
        let q2 = q("notify", &["Email", "Slack", "Pager"], true);
        let mut d = QuestionDraft::new("r1");
        d.toggle(&q2, "Slack");
        d.toggle(&q2, "Email");
        d.type_other(&q2, "  Only on weekdays ");
        assert_eq!(d.answer_for(&q2), Some(vec!["Email".into(), "Slack".into(), "Only on weekdays".into()]));
        d.toggle(&q2, "Email");
        assert_eq!(d.answer_for(&q2), Some(vec!["Slack".into(), "Only on weekdays".into()]));
        d.type_other(&q2, "Slack");
        assert_eq!(d.answer_for(&q2), Some(vec!["Slack".into()]), "no duplicate value");
    }

    #[test]
    fn build_names_the_first_unanswered_question() {
        let r = record(vec![q("target", &["A", "B"], false), q("notify", &["E", "S"], true)]);
        let mut d = QuestionDraft::new("r1");
        d.pick(&r.questions[0], "A");
        let e = d.build(&r).unwrap_err();
        assert_eq!(e.step, 1);
        assert_eq!(e.message, "Answer “NOTIFY” (question 2 of 2) before submitting.");
        d.toggle(&r.questions[1], "S");
        let a = d.build(&r).unwrap();
        assert_eq!(a.answers["target"], vec!["A"]);
        assert_eq!(a.answers["notify"], vec!["S"]);
        // What we build is what the gateway accepts.
        assert!(protocol::question::canonicalize_answers(&r.questions, &a).is_ok());
    }

    #[test]
    fn secrets_are_never_serialised() {
        let mut sq = q("token", &[], false);
        sq.is_secret = Some(true);
        let mut d = QuestionDraft::new("r1");
        d.type_other(&sq, "hunter2");
        assert_eq!(d.answer_for(&sq), Some(vec!["hunter2".into()]));
        let json = serde_json::to_string(&d).unwrap();
        assert!(!json.contains("hunter2"), "{json}");
    }

    #[test]
    fn untouched_drafts_are_not_worth_storing_and_fit_drops_stale_entries() {
        let r = record(vec![q("target", &["A", "B"], false)]);
        let mut d = QuestionDraft::new("r1");
        assert!(!d.is_touched());
        d.pick(&r.questions[0], "A");
        d.answers.insert("gone".into(), AnswerDraft::default());
        d.step = 5;
        d.fit(&r);
        assert!(d.is_touched());
        assert_eq!(d.answers.len(), 1);
        assert_eq!(d.step, 0);
    }
}
