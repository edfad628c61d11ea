//! Gateway questions (`ask_user`): shapes, events and the gateway's validation rules.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorShape, reason};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionOption {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretStore {
    pub name: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_hosts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One question of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    pub question_id: String,
    #[serde(default)]
    pub header: String,
    pub question: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub options: Vec<QuestionOption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_select: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_other: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_secret: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_store: Option<SecretStore>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_store_existing: Option<Value>,
}

impl Question {
    pub fn multi(&self) -> bool {
        self.multi_select == Some(true)
    }
    pub fn allows_free_text(&self) -> bool {
        self.is_other == Some(true) || self.options.is_empty()
    }
    pub fn secret(&self) -> bool {
        self.is_secret == Some(true)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuestionStatus {
    Pending,
    Answered,
    Cancelled,
    Expired,
}

impl QuestionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Answered => "answered",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
        }
    }
}

/// `{answers: {<questionId>: [values]}}`: every value is an array, also for single-select.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionAnswers {
    pub answers: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRecord {
    pub id: String,
    pub questions: Vec<Question>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub status: QuestionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<QuestionAnswers>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequestParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub questions: Vec<Question>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionResolveParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<QuestionAnswers>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_store_allowed_hosts: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionIdParams {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionWaitParams {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_resolution_id: Option<bool>,
}

/// `question.resolved` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionResolved {
    pub id: String,
    pub status: QuestionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<QuestionAnswers>,
}

fn valid_question_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some('a'..='z')) && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
}

fn valid_url(url: &str) -> bool {
    let rest = if let Some(r) = url.strip_prefix("https://") {
        r
    } else if let Some(r) = url.strip_prefix("http://") {
        r
    } else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    !url.is_empty() && url.len() <= 2048 && !authority.is_empty() && !authority.contains('@') && !url.chars().any(char::is_whitespace)
}

fn valid_secret_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('A'..='Z')) && name.len() <= 128 && chars.all(|c| matches!(c, 'A'..='Z' | '0'..='9' | '_'))
}

/// Validates the questions of a request (or a record) the way `question.request` does.
/// The error message is the gateway's.
pub fn validate_questions(questions: &[Question]) -> Result<(), String> {
    if questions.is_empty() || questions.len() > 3 {
        return Err(format!("questions must have 1 to 3 items, not {}", questions.len()));
    }
    let mut seen: Vec<&str> = Vec::new();
    for q in questions {
        let id = q.question_id.as_str();
        if !valid_question_id(id) {
            return Err(format!("question id '{}' must match ^[a-z][a-z0-9_]*$", crate::frame::truncate(id, 64)));
        }
        if seen.contains(&id) {
            return Err(format!("duplicate question id '{id}'"));
        }
        seen.push(id);
        if q.header.chars().count() > 12 {
            return Err(format!("question '{id}' header must be at most 12 characters"));
        }
        if q.question.trim().is_empty() {
            return Err(format!("question '{id}' must have question text"));
        }
        let n = q.options.len();
        if n == 1 || n > 4 {
            return Err(format!("question '{id}' must have either no options or 2 to 4 options"));
        }
        let mut labels: Vec<String> = Vec::new();
        for o in &q.options {
            let key = crate::text::lowercase(o.label.trim());
            if key.is_empty() {
                return Err(format!("question '{id}' has an empty option label"));
            }
            if labels.contains(&key) {
                return Err(format!("question '{id}' has duplicate option label '{}'", o.label.trim()));
            }
            labels.push(key);
        }
        if let Some(url) = &q.url {
            if !valid_url(url) {
                return Err(format!("question '{id}' requires an absolute HTTP(S) URL without credentials"));
            }
        }
        if let Some(store) = &q.secret_store {
            if !q.secret() {
                return Err(format!("question '{id}' secretStore requires isSecret"));
            }
            if questions.len() != 1 || !q.options.is_empty() || q.multi() {
                return Err(format!("question '{id}' secretStore requires exactly one free-text single-select question"));
            }
            if store.kind != "secret" || !valid_secret_name(&store.name) {
                return Err(format!("question '{id}' secretStore must have kind 'secret' and a name matching ^[A-Z][A-Z0-9_]{{0,127}}$"));
            }
            if store.reason.as_ref().is_some_and(|r| r.chars().count() > 200) {
                return Err(format!("question '{id}' secretStore reason must be at most 200 characters"));
            }
            if let Some(hosts) = &store.allowed_hosts {
                if hosts.len() > 128 || hosts.iter().any(|h| h.is_empty() || h.len() > 253) {
                    return Err(format!("question '{id}' secretStore allowedHosts must be at most 128 hosts of 1 to 253 characters"));
                }
            }
        }
    }
    Ok(())
}

fn invalid_answer(question_id: &str, what: &str) -> ErrorShape {
    ErrorShape::question(reason::QUESTION_INVALID_ANSWER, format!("question '{question_id}' {what}"))
}

/// Checks and canonicalises an answer, in the gateway's order. A value equal (trimmed,
/// case-sensitive) to an option label becomes that label; other values stay as trimmed
/// free text, allowed only with `isOther` or when the question has no options.
pub fn canonicalize_answers(questions: &[Question], given: &QuestionAnswers) -> Result<QuestionAnswers, ErrorShape> {
    for key in given.answers.keys() {
        if !questions.iter().any(|q| &q.question_id == key) {
            return Err(invalid_answer(key, "is not part of this request"));
        }
    }
    let mut out = QuestionAnswers::default();
    for q in questions {
        let id = &q.question_id;
        let values = match given.answers.get(id) {
            Some(v) if !v.is_empty() => v,
            _ => return Err(invalid_answer(id, "requires an answer")),
        };
        let blank = |v: &String| if q.secret() { v.is_empty() } else { v.trim().is_empty() };
        if values.iter().any(blank) {
            return Err(invalid_answer(id, "contains an empty answer"));
        }
        if values.len() > 1 && !q.multi() {
            return Err(invalid_answer(id, "does not allow multiple answers"));
        }
        let mut canon = Vec::with_capacity(values.len());
        for v in values {
            let v = if q.secret() { v.as_str() } else { v.trim() };
            match q.options.iter().find(|o| o.label.trim() == v) {
                Some(o) => canon.push(o.label.clone()),
                None if q.allows_free_text() => canon.push(v.to_string()),
                None => return Err(invalid_answer(id, "contains an unknown option")),
            }
        }
        out.answers.insert(id.clone(), canon);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, labels: &[&str]) -> Question {
        Question {
            question_id: id.into(),
            header: "H".into(),
            question: "Which?".into(),
            url: None,
            options: labels.iter().map(|l| QuestionOption { label: l.to_string(), description: None }).collect(),
            multi_select: None,
            is_other: None,
            is_secret: None,
            secret_store: None,
            secret_store_existing: None,
        }
    }
    fn ans(pairs: &[(&str, &[&str])]) -> QuestionAnswers {
        QuestionAnswers { answers: pairs.iter().map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect())).collect() }
    }

    #[test]
    fn request_validation_uses_the_gateways_messages() {
        assert_eq!(validate_questions(&[q("a", &["x"])]).unwrap_err(), "question 'a' must have either no options or 2 to 4 options");
        assert_eq!(
            validate_questions(&[q("a", &["1", "2", "3", "4", "5"])]).unwrap_err(),
            "question 'a' must have either no options or 2 to 4 options"
        );
        assert_eq!(validate_questions(&[q("a", &["x", "y"]), q("a", &[])]).unwrap_err(), "duplicate question id 'a'");
        assert_eq!(validate_questions(&[q("a", &["Yes", " yes "])]).unwrap_err(), "question 'a' has duplicate option label 'yes'");
        assert!(validate_questions(&[q("Bad", &[])]).unwrap_err().contains("must match"));
        assert!(validate_questions(&[]).is_err());
        assert!(validate_questions(&[q("a", &[]), q("b", &[]), q("c", &[]), q("d", &[])]).is_err());
        let mut with_url = q("a", &[]);
        with_url.url = Some("https://user:pw@example.com/x".into());
        assert_eq!(
            validate_questions(&[with_url.clone()]).unwrap_err(),
            "question 'a' requires an absolute HTTP(S) URL without credentials"
        );
        with_url.url = Some("https://example.com/x?y=@".into());
        assert!(validate_questions(&[with_url]).is_ok());
        let mut long_header = q("a", &[]);
        long_header.header = "thirteen chrs".into();
        assert!(validate_questions(&[long_header]).is_err());
        assert!(validate_questions(&[q("a", &[]), q("b_2", &["x", "y"])]).is_ok());
    }

    #[test]
    fn answer_validation_runs_in_the_gateways_order() {
        let qs = vec![q("a", &["Red", "Blue"]), {
            let mut m = q("b", &["x", "y"]);
            m.multi_select = Some(true);
            m
        }];
        let reason = |e: ErrorShape| (e.message.clone(), e.detail_reason().map(str::to_string));
        assert_eq!(
            reason(canonicalize_answers(&qs, &ans(&[("zz", &["Red"])])).unwrap_err()),
            ("question 'zz' is not part of this request".into(), Some("QUESTION_INVALID_ANSWER".into()))
        );
        assert_eq!(canonicalize_answers(&qs, &ans(&[("a", &["Red"])])).unwrap_err().message, "question 'b' requires an answer");
        assert_eq!(canonicalize_answers(&qs, &ans(&[("a", &["Red"]), ("b", &[])])).unwrap_err().message, "question 'b' requires an answer");
        assert_eq!(
            canonicalize_answers(&qs, &ans(&[("a", &["  "]), ("b", &["x"])])).unwrap_err().message,
            "question 'a' contains an empty answer"
        );
        assert_eq!(
            canonicalize_answers(&qs, &ans(&[("a", &["Red", "Blue"]), ("b", &["x"])])).unwrap_err().message,
            "question 'a' does not allow multiple answers"
        );
        assert_eq!(
            canonicalize_answers(&qs, &ans(&[("a", &["red"]), ("b", &["x"])])).unwrap_err().message,
            "question 'a' contains an unknown option"
        );
        let ok = canonicalize_answers(&qs, &ans(&[("a", &[" Red "]), ("b", &["x", "y"])])).unwrap();
        assert_eq!(ok, ans(&[("a", &["Red"]), ("b", &["x", "y"])]));
    }

    #[test]
    fn free_text_is_kept_verbatim_when_other_is_allowed() {
        let mut other = q("a", &["Red", "Blue"]);
        other.is_other = Some(true);
        other.multi_select = Some(true);
        let ok = canonicalize_answers(&[other], &ans(&[("a", &["Red", "  only on weekdays "])])).unwrap();
        assert_eq!(ok, ans(&[("a", &["Red", "only on weekdays"])]));
        let open = q("b", &[]);
        assert_eq!(canonicalize_answers(&[open], &ans(&[("b", &["anything"])])).unwrap(), ans(&[("b", &["anything"])]));
    }
}

/// Maps one reply part to an option label (by 1-based number or case-insensitive label),
/// or keeps it as free text where free text is allowed.
fn map_reply_part(q: &Question, part: &str) -> Option<String> {
    let t = part.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(n) = t.parse::<usize>() {
        if n >= 1 && n <= q.options.len() {
            return Some(q.options[n - 1].label.clone());
        }
    }
    if let Some(o) = q
        .options
        .iter()
        .find(|o| o.label.trim().eq_ignore_ascii_case(t) || crate::text::lowercase(o.label.trim()) == crate::text::lowercase(t))
    {
        return Some(o.label.clone());
    }
    q.allows_free_text().then(|| t.to_string())
}

fn reply_for_question(q: &Question, text: &str) -> Option<Vec<String>> {
    if !q.multi() {
        return map_reply_part(q, text).map(|v| vec![v]);
    }
    let whole = text.trim();
    if let Some(o) = q.options.iter().find(|o| crate::text::lowercase(o.label.trim()) == crate::text::lowercase(whole)) {
        return Some(vec![o.label.clone()]);
    }
    let mut out: Vec<String> = Vec::new();
    for part in whole.split([',', ';', '\n']) {
        if part.trim().is_empty() {
            continue;
        }
        let v = map_reply_part(q, part)?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// How a plain chat reply answers a pending question (protocol §7.2): a number, an option
/// label or free text; commas for several choices; `key: value` lines for several questions.
/// `None` when the reply does not make a valid answer (the question then stays pending).
pub fn claim_plain_text(questions: &[Question], text: &str) -> Option<QuestionAnswers> {
    let mut answers = QuestionAnswers::default();
    if questions.len() == 1 {
        answers.answers.insert(questions[0].question_id.clone(), reply_for_question(&questions[0], text)?);
    } else {
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let keyed = |line: &str| -> Option<(usize, String)> {
            let pos = line.find([':', '=', '-'])?;
            let (key, value) = (crate::text::lowercase(line[..pos].trim()), line[pos + 1..].trim().to_string());
            let idx = questions.iter().enumerate().position(|(i, q)| {
                key == crate::text::lowercase(&q.question_id)
                    || (!q.header.trim().is_empty() && key == crate::text::lowercase(q.header.trim()))
                    || key == crate::text::lowercase(q.question.trim())
                    || key == (i + 1).to_string()
            })?;
            Some((idx, value))
        };
        for (i, line) in lines.iter().enumerate() {
            let (idx, value) = keyed(line).unwrap_or((i, line.to_string()));
            let q = questions.get(idx)?;
            answers.answers.insert(q.question_id.clone(), reply_for_question(q, &value)?);
        }
    }
    canonicalize_answers(questions, &answers).ok()
}

#[cfg(test)]
mod claim_tests {
    use super::*;

    fn q(id: &str, header: &str, labels: &[&str], multi: bool, other: bool) -> Question {
        Question {
            question_id: id.into(),
            header: header.into(),
            question: format!("{id}?"),
            url: None,
            options: labels.iter().map(|l| QuestionOption { label: l.to_string(), description: None }).collect(),
            multi_select: multi.then_some(true),
            is_other: other.then_some(true),
            is_secret: None,
            secret_store: None,
            secret_store_existing: None,
        }
    }
    fn get(a: &QuestionAnswers, k: &str) -> Vec<String> {
        a.answers[k].clone()
    }

    #[test]
    fn single_select_takes_a_number_a_label_or_free_text() {
        let qs = [q("target", "Deploy", &["Staging", "Production"], false, true)];
        assert_eq!(get(&claim_plain_text(&qs, " 2 ").unwrap(), "target"), vec!["Production"]);
        assert_eq!(get(&claim_plain_text(&qs, "staging").unwrap(), "target"), vec!["Staging"]);
        assert_eq!(get(&claim_plain_text(&qs, "canary first").unwrap(), "target"), vec!["canary first"]);
        let strict = [q("target", "Deploy", &["Staging", "Production"], false, false)];
        assert!(claim_plain_text(&strict, "canary").is_none(), "no free text without isOther");
        assert!(claim_plain_text(&strict, "3").is_none());
    }

    #[test]
    fn multi_select_splits_on_commas_semicolons_and_newlines_and_dedupes() {
        let qs = [q("notify", "Notify", &["Email", "Slack", "Pager"], true, true)];
        assert_eq!(
            get(&claim_plain_text(&qs, "1, slack;email\nweekdays only").unwrap(), "notify"),
            vec!["Email", "Slack", "weekdays only"]
        );
        let strict = [q("notify", "Notify", &["Email", "Slack"], true, false)];
        assert!(claim_plain_text(&strict, "email, fax").is_none());
    }

    #[test]
    fn several_questions_by_key_or_by_line() {
        let qs = [q("target", "Deploy", &["Staging", "Production"], false, true), q("notify", "Notify", &["Email", "Slack"], true, true)];
        let a = claim_plain_text(&qs, "notify: 2\ndeploy = production").unwrap();
        assert_eq!(get(&a, "target"), vec!["Production"]);
        assert_eq!(get(&a, "notify"), vec!["Slack"]);
        let a = claim_plain_text(&qs, "1\nEmail, Slack").unwrap();
        assert_eq!(get(&a, "target"), vec!["Staging"]);
        assert_eq!(get(&a, "notify"), vec!["Email", "Slack"]);
        assert!(claim_plain_text(&qs, "just one line").is_none(), "partial answers stay pending");
    }
}
