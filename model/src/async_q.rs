//! Async (non-blocking) questions: recognised in assistant transcript messages that carry
//! `openclawAsyncDelivery`, answered by an ordinary chat message in an exact quoted format,
//! confirmed from saved history, and retired into history by a later successful run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One question of an async delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsyncItem {
    pub title: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// An async question message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AsyncQuestion {
    pub item_id: String,
    /// The message's `__openclaw.id` (only when it has a `seq` and is not imported).
    pub source_message_id: Option<String>,
    pub seq: u64,
    pub run_id: Option<String>,
    pub items: Vec<AsyncItem>,
}

impl AsyncQuestion {
    /// A stable id for the dock and storage.
    pub fn key(&self) -> String {
        format!("async:{}", self.item_id)
    }

    /// The questions' signature: a changed question resets its draft.
    pub fn signature(&self) -> String {
        serde_json::to_string(&self.items).unwrap_or_default()
    }

    /// The dock's view: one question per item, free text always allowed.
    pub fn as_questions(&self) -> Vec<protocol::question::Question> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, it)| protocol::question::Question {
                question_id: format!("q{i}"),
                header: if it.options.is_empty() { "Answer".into() } else { crate::preview(&it.title, 12) },
                question: it.title.clone(),
                url: None,
                options: it.options.iter().map(|o| protocol::question::QuestionOption { label: o.clone(), description: None }).collect(),
                multi_select: None,
                is_other: Some(true),
                is_secret: None,
                secret_store: None,
                secret_store_existing: None,
            })
            .collect()
    }
}

/// Reads a transcript message. `None`: not an async question (plain text, or a background
/// update without questions). `Some(Err)`: metadata that breaks the limits, so the message
/// is shown as its plain text.
pub fn recognize(m: &Value) -> Option<Result<AsyncQuestion, String>> {
    if m.get("role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    let d = m.get("openclawAsyncDelivery")?;
    if !d.is_object() {
        return Some(Err("openclawAsyncDelivery is not an object".into()));
    }
    let questions = d.get("questions")?;
    Some(read_delivery(m, d, questions))
}

fn read_delivery(m: &Value, d: &Value, questions: &Value) -> Result<AsyncQuestion, String> {
    let item_id = d.get("itemId").and_then(Value::as_str).ok_or("itemId is missing")?;
    if item_id.trim().is_empty() || item_id.chars().count() > 256 {
        return Err("itemId must be 1 to 256 characters".into());
    }
    let list = questions.as_array().ok_or("questions is not a list")?;
    if list.is_empty() || list.len() > 12 {
        return Err(format!("an async delivery has 1 to 12 questions, not {}", list.len()));
    }
    let mut items = Vec::with_capacity(list.len());
    for q in list {
        let title = q.get("title").and_then(Value::as_str).ok_or("a question has no title")?;
        if title.trim().is_empty() || title.chars().count() > 4096 {
            return Err("a question title must be 1 to 4096 characters".into());
        }
        let options = match q.get("options") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => {
                if a.is_empty() || a.len() > 4 {
                    return Err(format!("a question has 1 to 4 options, not {}", a.len()));
                }
                let mut out = Vec::new();
                for o in a {
                    let s = o.as_str().ok_or("an option is not text")?;
                    if s.trim().is_empty() || s.chars().count() > 256 {
                        return Err("an option must be 1 to 256 characters".into());
                    }
                    out.push(s.to_string());
                }
                out
            }
            Some(_) => return Err("options is not a list".into()),
        };
        items.push(AsyncItem { title: title.to_string(), options });
    }
    let meta = m.get("__openclaw");
    let seq = meta.and_then(|o| o.get("seq")).and_then(Value::as_u64);
    let imported = meta.and_then(|o| o.get("importedFrom")).is_some_and(|v| !v.is_null());
    let source_message_id =
        if seq.is_some() && !imported { meta.and_then(|o| o.get("id")).and_then(Value::as_str).map(str::to_string) } else { None };
    let run_id = meta.and_then(|o| o.get("runId")).and_then(Value::as_str).map(str::to_string);
    Ok(AsyncQuestion { item_id: item_id.to_string(), source_message_id, seq: seq.unwrap_or(0), run_id, items })
}

/// `"> " + title` cut to whole code points within 512 UTF-8 bytes, line breaks as spaces.
pub fn quote(title: &str) -> String {
    let mut end = 0;
    for (i, c) in title.char_indices() {
        if i + c.len_utf8() > 512 {
            break;
        }
        end = i + c.len_utf8();
    }
    format!("> {}", title[..end].replace(['\r', '\n'], " "))
}

/// The answer message (protocol §8.2).
pub fn format_answer(items: &[AsyncItem], answers: &[Vec<String>]) -> String {
    items.iter().zip(answers).map(|(it, a)| format!("{}\n\n{}", quote(&it.title), a.join(", "))).collect::<Vec<_>>().join("\n\n")
}

/// Reads a saved message back as answers (protocol §8.3). `None` when the text does not
/// split unambiguously into one non-blank answer per question.
pub fn parse_answer(items: &[AsyncItem], text: &str) -> Option<Vec<String>> {
    let first = format!("{}\n\n", quote(&items.first()?.title));
    let mut rest = text.strip_prefix(&first)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, _) in items.iter().enumerate() {
        if i + 1 == items.len() {
            if rest.trim().is_empty() {
                return None;
            }
            out.push(rest.to_string());
            break;
        }
        let sep = format!("\n\n{}\n\n", quote(&items[i + 1].title));
        let at = rest.find(&sep)?;
        // The separator again later: free text may hold quoted headings; do not guess.
        if rest[at + sep.len()..].contains(&sep) {
            return None;
        }
        let answer = &rest[..at];
        if answer.trim().is_empty() {
            return None;
        }
        out.push(answer.to_string());
        rest = &rest[at + sep.len()..];
    }
    Some(out)
}

/// An answer is "selected options" only if it splits on `", "` into known labels and joins
/// back to the same text; otherwise it is free text.
pub fn split_selected(answer: &str, options: &[String]) -> Option<Vec<String>> {
    let parts: Vec<&str> = answer.split(", ").collect();
    (parts.iter().all(|p| options.iter().any(|o| o == p)) && parts.join(", ") == answer)
        .then(|| parts.iter().map(|s| s.to_string()).collect())
}

fn meta<'a>(m: &'a Value, key: &str) -> Option<&'a Value> {
    m.get("__openclaw")?.get(key)
}

/// A saved, human-sent user message (the only kind that confirms an answer).
fn is_saved_human_message(m: &Value) -> bool {
    let saved = meta(m, "id").is_some() && meta(m, "seq").and_then(Value::as_u64).is_some();
    let imported = meta(m, "importedFrom").is_some_and(|v| !v.is_null());
    let provenance = m.get("provenance").and_then(|p| p.get("kind")).and_then(Value::as_str);
    m.get("role").and_then(Value::as_str) == Some("user") && saved && !imported && matches!(provenance, None | Some("external_user"))
}

/// Which of the `unresolved` questions a saved message answers (protocol §8.4). With a
/// `replyToId` only that question is considered; more than one match answers nothing.
pub fn confirmed_item(unresolved: &[AsyncQuestion], m: &Value) -> Option<String> {
    if !is_saved_human_message(m) {
        return None;
    }
    let text = crate::message_text(m);
    let reply_to = meta(m, "replyToId").and_then(Value::as_str);
    let candidates: Vec<&AsyncQuestion> = match reply_to {
        Some(r) => unresolved.iter().filter(|q| q.source_message_id.as_deref() == Some(r)).collect(),
        None => unresolved.iter().collect(),
    };
    let matches: Vec<&AsyncQuestion> = candidates
        .into_iter()
        .filter(|q| parse_answer(&q.items, &text).is_some() || (reply_to.is_some() && !text.trim().is_empty()))
        .collect();
    match matches.as_slice() {
        [one] => Some(one.item_id.clone()),
        _ => None,
    }
}

/// Whether `m` completes a run successfully (protocol §8.5).
pub fn is_successful_completion(m: &Value) -> bool {
    if m.get("role").and_then(Value::as_str) != Some("assistant") || m.get("openclawAsyncDelivery").is_some() {
        return false;
    }
    if m.get("provenance").and_then(|p| p.get("kind")).and_then(Value::as_str) == Some("inter_session") {
        return false;
    }
    let stop = m.get("stopReason").and_then(Value::as_str);
    if matches!(stop, Some("toolUse" | "aborted" | "cancelled" | "error" | "timeout"))
        || m.get("phase").and_then(Value::as_str) == Some("commentary")
    {
        return false;
    }
    if m.get("errorMessage").is_some() {
        return false;
    }
    let terminal = meta(m, "runTerminal").and_then(Value::as_bool) == Some(true);
    let mirrored = meta(m, "mirrorOrigin").and_then(Value::as_str) == Some("codex-app-server");
    terminal || (!mirrored && (m.get("phase").and_then(Value::as_str) == Some("final_answer") || stop == Some("stop")))
}

fn is_restart_recovery(m: &Value) -> bool {
    let p = m.get("provenance");
    p.and_then(|p| p.get("kind")).and_then(Value::as_str) == Some("internal_system")
        && p.and_then(|p| p.get("sourceTool")).and_then(Value::as_str) == Some("main_session_restart_recovery")
}

/// Whether a pending async question is retired into history by what came after it:
/// a later successful completion of another run. The question's own run, failed, aborted
/// or overlapping runs, commentary and a bare restart never retire it; a restart recovery
/// counts only together with its own successful completion; a question with no owning run
/// needs a completed human turn after it.
pub fn is_retired<'a>(q: &AsyncQuestion, later: impl IntoIterator<Item = &'a Value>) -> bool {
    let after: Vec<&Value> = later.into_iter().filter(|m| meta(m, "seq").and_then(Value::as_u64).is_some_and(|s| s > q.seq)).collect();
    // Runs that started after the question: a user turn or a restart recovery opens one.
    let mut human_turn_seen = false;
    let mut recovery_runs: Vec<String> = Vec::new();
    for m in &after {
        let run = meta(m, "runId").and_then(Value::as_str).map(str::to_string);
        if is_restart_recovery(m) {
            if let Some(r) = run {
                recovery_runs.push(r);
            }
            continue;
        }
        if is_saved_human_message(m) {
            human_turn_seen = true;
            continue;
        }
        if !is_successful_completion(m) {
            continue;
        }
        if run.is_some() && run == q.run_id {
            continue; // its own turn completing does not retire it
        }
        let via_recovery = run.as_ref().is_some_and(|r| recovery_runs.contains(r));
        if q.run_id.is_none() && !human_turn_seen && !via_recovery {
            continue;
        }
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn delivery(id: &str, seq: u64, run: &str, questions: Value) -> Value {
        json!({"role":"assistant","content":[{"type":"text","text":"Some questions"}],"openclawAsyncDelivery":{"itemId": id, "questions": questions},
            "__openclaw":{"id": format!("m-{id}"), "seq": seq, "runId": run}})
    }

    fn items() -> Vec<AsyncItem> {
        vec![
            AsyncItem { title: "Which environment should I use?".into(), options: vec!["Staging".into(), "Production".into()] },
            AsyncItem { title: "Which checks?".into(), options: vec!["unit".into(), "e2e".into()] },
        ]
    }

    #[test]
    fn the_documented_example_formats_and_parses_back() {
        let text = format_answer(&items(), &[vec!["Staging".into()], vec!["unit".into(), "e2e".into()]]);
        assert_eq!(text, "> Which environment should I use?\n\nStaging\n\n> Which checks?\n\nunit, e2e");
        assert_eq!(parse_answer(&items(), &text), Some(vec!["Staging".into(), "unit, e2e".into()]));
        assert_eq!(split_selected("unit, e2e", &items()[1].options), Some(vec!["unit".into(), "e2e".into()]));
        assert_eq!(split_selected("unit, and more", &items()[1].options), None);
    }

    #[test]
    fn titles_are_cut_at_512_utf8_bytes_on_a_character_boundary() {
        let title = format!("{}é tail", "a".repeat(511));
        let q = quote(&title);
        assert_eq!(q.len(), 2 + 511, "é would cross 512 bytes");
        assert!(quote(&"é".repeat(300)).len() <= 514);
        assert_eq!(quote("line\r\nbreak"), "> line  break");
    }

    #[test]
    fn quoted_headings_inside_answers_make_parsing_refuse_to_guess() {
        let tricky = "> Which environment should I use?\n\nStaging\n\n> Which checks?\n\nfake\n\n> Which checks?\n\nunit";
        assert_eq!(parse_answer(&items(), tricky), None);
        assert_eq!(parse_answer(&items(), "> Which environment should I use?\n\n \n\n> Which checks?\n\nunit"), None, "blank answer");
        assert_eq!(parse_answer(&items(), "hello"), None);
    }

    #[test]
    fn recognition_enforces_the_limits_and_keeps_bad_metadata_as_text() {
        let ok = delivery("i1", 3, "r1", json!([{"title":"T","options":["a","b"]}]));
        let q = recognize(&ok).unwrap().unwrap();
        assert_eq!(q.source_message_id.as_deref(), Some("m-i1"));
        assert_eq!(q.as_questions()[0].question_id, "q0");
        for bad in [
            json!([{"title":"T","options":["1","2","3","4","5"]}]),
            json!([{"title":"  "}]),
            json!([]),
            json!((0..13).map(|i| json!({"title": format!("t{i}")})).collect::<Vec<_>>()),
        ] {
            assert!(recognize(&delivery("x", 1, "r", bad.clone())).unwrap().is_err(), "{bad}");
        }
        let update = json!({"role":"assistant","openclawAsyncDelivery":{"itemId":"u"}});
        assert!(recognize(&update).is_none(), "a background update is not a question");
        assert!(recognize(&json!({"role":"user","openclawAsyncDelivery":{}})).is_none());
    }

    fn user(seq: u64, text: &str, reply_to: Option<&str>) -> Value {
        let mut m = json!({"role":"user","content": text,"__openclaw":{"id": format!("u{seq}"), "seq": seq}});
        if let Some(r) = reply_to {
            m["__openclaw"]["replyToId"] = json!(r);
        }
        m
    }

    #[test]
    fn confirmation_by_exact_parse_or_by_reply_to_and_ambiguity_resolves_nothing() {
        let a = recognize(&delivery("a", 1, "r1", json!([{"title":"Which checks?","options":["unit","e2e"]}]))).unwrap().unwrap();
        let b = recognize(&delivery("b", 2, "r1", json!([{"title":"Which checks?","options":["unit","e2e"]}]))).unwrap().unwrap();
        let text = format_answer(&a.items, &[vec!["unit".into()]]);
        assert_eq!(confirmed_item(std::slice::from_ref(&a), &user(5, &text, None)), Some("a".into()));
        assert_eq!(
            confirmed_item(&[a.clone(), b.clone()], &user(5, &text, None)),
            None,
            "two pending questions with the same title: ambiguous"
        );
        assert_eq!(confirmed_item(&[a.clone(), b.clone()], &user(5, &text, Some("m-b"))), Some("b".into()), "replyToId picks one");
        assert_eq!(
            confirmed_item(&[a.clone(), b.clone()], &user(5, "edited by hand", Some("m-a"))),
            Some("a".into()),
            "replyToId alone confirms edited text"
        );
        assert_eq!(confirmed_item(&[a.clone()], &user(5, &text, Some("m-unrelated"))), None, "an unrelated replyToId confirms nothing");
        let unsaved = json!({"role":"user","content": text});
        assert_eq!(confirmed_item(&[a], &unsaved), None, "only saved history confirms");
    }

    fn reply(seq: u64, run: &str, stop: &str) -> Value {
        json!({"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason": stop,"__openclaw":{"id": format!("a{seq}"), "seq": seq, "runId": run, "runTerminal": stop == "stop"}})
    }

    #[test]
    fn archival_needs_a_later_successful_completion_of_another_run() {
        let q = recognize(&delivery("a", 2, "r1", json!([{"title":"T"}]))).unwrap().unwrap();
        assert!(!is_retired(&q, &[reply(3, "r1", "stop")]), "its own turn completing");
        assert!(!is_retired(&q, &[user(4, "hi", None), reply(5, "r2", "aborted")]), "an aborted run");
        assert!(!is_retired(&q, &[user(4, "hi", None), reply(5, "r2", "error")]), "a failed run");
        let mut commentary = reply(5, "r2", "stop");
        commentary["phase"] = json!("commentary");
        commentary["__openclaw"]["runTerminal"] = json!(false);
        commentary["stopReason"] = json!("toolUse");
        assert!(!is_retired(&q, &[commentary]), "commentary");
        assert!(is_retired(&q, &[user(4, "hi", None), reply(5, "r2", "stop")]), "a later successful run");
        let recovery = json!({"role":"user","content":"resume","provenance":{"kind":"internal_system","sourceTool":"main_session_restart_recovery"},"__openclaw":{"id":"x","seq":4,"runId":"r3"}});
        assert!(!is_retired(&q, std::slice::from_ref(&recovery)), "a restart on its own");
        assert!(is_retired(&q, &[recovery, reply(5, "r3", "stop")]), "a successful restart recovery");
        let orphan = AsyncQuestion { run_id: None, ..q.clone() };
        assert!(!is_retired(&orphan, &[reply(5, "r9", "stop")]), "no owning run: needs a human turn first");
        assert!(is_retired(&orphan, &[user(4, "next", None), reply(5, "r9", "stop")]));
    }
}
