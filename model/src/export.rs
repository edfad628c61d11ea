//! A conversation exported as Markdown, with every decision taken in it.
//!
//! The input is the whole history (`chat.history` paged in, oldest first), the gateway's ended
//! approvals (`approval.history`) and this browser's question receipts. The output names each
//! speaker and time, summarises tool calls (a line each, with how they ended), and puts each
//! decision where it happened: each question with its answer (a secret's value never: the
//! gateway does not keep it, and a receipt says only that one was given) and each approval with
//! what was asked, what was decided, by whom and when.
//!
//! Run by the app (`state::export`): what it reads (transcript rows, receipts, approval
//! snapshots) the app reads anyway, so the export adds only its own few functions.

use serde_json::Value;

use crate::dock::{Outcome, Receipt};
use crate::transcript::TranscriptRow;

/// What [`markdown`] reads.
#[derive(Debug, Default)]
pub struct Input {
    pub title: String,
    pub session_key: String,
    pub gateway: String,
    pub exported_at_ms: f64,
    /// Every message, oldest first.
    pub messages: Vec<Value>,
    /// `approval.history` items (any conversation's: those of this one are kept).
    pub approvals: Vec<Value>,
    /// This browser's question receipts for the conversation (`model::dock::Receipt`).
    pub receipts: Vec<Receipt>,
}

/// A moment as `2026-12-06 08:01:02 UTC`.
pub fn utc(ms: f64) -> String {
    let (y, m, d, h, min, sec) = protocol::time::civil(ms.floor() as i64);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{min:02}:{sec:02} UTC")
}

/// The file's name before its date: `chat-` and the title in lowercase ASCII letters, digits and
/// dashes (at most 60), so it is a safe file name everywhere. ASCII only: the app links no
/// Unicode case tables for this (about 13 KB).
pub fn file_stem(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.chars().count() >= 60 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() { "chat-conversation".into() } else { format!("chat-{slug}") }
}

/// One entry of the export, in time order.
enum Item {
    Message(TranscriptRow),
    Decision(Receipt),
}

fn when(item: &Item) -> f64 {
    match item {
        Item::Message(r) => r.timestamp,
        Item::Decision(r) => r.at_ms,
    }
}

/// Text as a Markdown block quote, line by line (agent text stays as written inside it).
fn quoted(text: &str) -> String {
    text.lines().map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") }).collect::<Vec<_>>().join("\n")
}

/// Inline code that survives backticks in `text`.
fn code(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown = crate::preview(&one_line, 200);
    if !shown.contains('`') {
        return format!("`{shown}`");
    }
    // Two backticks around text holding one, with spaces where the text starts or ends with one.
    let pad = if shown.starts_with('`') || shown.ends_with('`') { " " } else { "" };
    format!("``{pad}{shown}{pad}``")
}

fn answers_of(outcome: &Outcome) -> Option<&protocol::question::QuestionAnswers> {
    match outcome {
        Outcome::Answered { answers } | Outcome::AnsweredElsewhere { answers } => Some(answers),
        _ => None,
    }
}

fn decision(r: &Receipt) -> String {
    let at = utc(r.at_ms);
    if let Some(a) = &r.approval {
        let asked = match &a.command {
            Some(c) => format!("run {}", code(c)),
            None => format!("{} ({})", if a.title.is_empty() { "a plugin action".to_string() } else { code(&a.title) }, a.kind.wire()),
        };
        let (label, by) = match &r.outcome {
            Outcome::DecidedElsewhere { decision, by } => (Outcome::decided(*decision).label(), by.as_ref().map(|b| format!(" by {b}"))),
            o => (o.label(), None),
        };
        return format!("**Approval** ({at}): the agent asked to {asked}. **{label}**{}.", by.unwrap_or_default());
    }
    let mut s = format!("**Question** ({at}): {}.", r.outcome.label());
    let answers = answers_of(&r.outcome);
    for q in &r.questions {
        s.push_str(&format!("\n\n- {}", q.question.trim()));
        if q.is_secret == Some(true) {
            s.push_str("\n  - answer: a secret value (never exported)");
        } else if let Some(given) = answers.and_then(|a| a.answers.get(&q.question_id)) {
            s.push_str(&format!("\n  - answer: {}", given.join(", ")));
        }
    }
    s
}

/// Who decided an approval, from its `resolver`: a device (by the start of its id), a client,
/// a chat channel.
fn resolver(v: &Value) -> Option<String> {
    let r = v.get("resolver")?;
    let id = r.get("id").and_then(Value::as_str).map(|i| crate::preview(i, 12));
    match (r.get("kind").and_then(Value::as_str), id) {
        (Some("device"), Some(id)) => Some(format!("device {id}")),
        (Some("channel"), _) => Some("a chat channel".into()),
        (Some("system"), _) => None,
        (_, Some(id)) => Some(id),
        _ => None,
    }
}

/// A tool call's line: its name, what it was given, and how it ended.
fn tool_line(name: &str, arguments: &Value, result: Option<&crate::parts::ToolResult>) -> String {
    let what = match arguments.get("command").or_else(|| arguments.get("path")).and_then(Value::as_str) {
        Some(s) => format!(" {}", code(s)),
        None => String::new(),
    };
    let ended = match result {
        None => "no result".to_string(),
        Some(r) if r.is_error => format!("failed: {}", crate::preview(&r.text, 120)),
        Some(r) if r.text.trim().is_empty() => "done".to_string(),
        Some(r) => format!("returned {}", code(&r.text)),
    };
    format!("- Tool `{name}`{what}: {ended}")
}

/// The conversation as Markdown.
pub fn markdown(input: &Input) -> String {
    let rows: Vec<TranscriptRow> = input.messages.iter().map(TranscriptRow::from_message).collect();
    let results = crate::transcript::results(&rows);
    let mut items: Vec<Item> = Vec::new();
    let mut decisions = (0usize, 0usize);
    let mut asked: Vec<String> = Vec::new();
    for row in &rows {
        if row.tool_result.is_some() || row.is_nested_tool() {
            continue;
        }
        // A question asked through `ask_user` in this conversation, from its call and result.
        for part in crate::parts::parts(&row.raw) {
            if let crate::parts::Part::ToolCall { id, name, arguments, .. } = part {
                let (name, arguments) = crate::parts::inner_call(&name, &arguments);
                if name == "ask_user"
                    && let Some(r) = crate::parts::ask_receipt(&id, &arguments, results.get(&id), row.timestamp, &input.session_key)
                {
                    asked.extend(r.questions.first().map(|q| q.question.clone()));
                    decisions.0 += 1;
                    items.push(Item::Decision(Receipt { at_ms: row.timestamp + 0.5, ..r }));
                }
            }
        }
        items.push(Item::Message(row.clone()));
    }
    for r in &input.receipts {
        let again = r.questions.first().is_some_and(|q| asked.contains(&q.question));
        if r.approval.is_none() && !again && r.session_key.as_deref().is_none_or(|k| k == input.session_key) {
            decisions.0 += 1;
            items.push(Item::Decision(r.clone()));
        }
    }
    let mut seen: Vec<String> = Vec::new();
    for v in &input.approvals {
        let Some((approval, crate::dock::approvals::SnapshotStatus::Ended { outcome, resolved_at_ms })) =
            crate::dock::approvals::read_snapshot(v)
        else {
            continue;
        };
        if approval.session_key.as_deref() != Some(input.session_key.as_str()) || seen.contains(&approval.id) {
            continue;
        }
        seen.push(approval.id.clone());
        decisions.1 += 1;
        // Who decided, as the gateway records it (not relative to this browser).
        let outcome = match outcome {
            Outcome::DecidedElsewhere { decision, .. } => Outcome::DecidedElsewhere { decision, by: resolver(v) },
            o => o,
        };
        items.push(Item::Decision(Receipt::for_approval(&approval, outcome, resolved_at_ms)));
    }
    crate::order::sort_by(&mut items, |a, b| when(a).total_cmp(&when(b)));

    let title = if input.title.trim().is_empty() { input.session_key.as_str() } else { input.title.trim() };
    let mut out = format!("# {title}\n\n");
    out.push_str(&format!(
        "Conversation `{}` on {}, exported {}: {} messages, {} questions, {} approvals.\n",
        input.session_key,
        if input.gateway.is_empty() { "the gateway" } else { input.gateway.as_str() },
        utc(input.exported_at_ms),
        rows.iter().filter(|r| matches!(r.role.as_str(), "user" | "assistant")).count(),
        decisions.0,
        decisions.1
    ));
    for item in &items {
        out.push('\n');
        match item {
            Item::Decision(r) => out.push_str(&format!("{}\n", decision(r))),
            Item::Message(row) => {
                let who = match row.role.as_str() {
                    "user" => "You".to_string(),
                    "assistant" => match crate::run_settings::reply_model(&row.raw) {
                        Some(m) => format!("Agent ({m})"),
                        None => "Agent".to_string(),
                    },
                    "bashExecution" => "Command".to_string(),
                    _ => "Gateway note".to_string(),
                };
                out.push_str(&format!("## {who} · {}\n\n", utc(row.timestamp)));
                let text = match row.role.as_str() {
                    "user" | "assistant" => crate::message_actions::copy_text(row),
                    _ => row.text.clone(),
                };
                if !text.trim().is_empty() {
                    // An agent writes Markdown: kept as written. Anything else is quoted.
                    if row.role == "assistant" {
                        out.push_str(text.trim_end());
                        // A reply cut off inside a code block (stopped) does not swallow the rest.
                        if text.lines().filter(|l| l.trim_start().starts_with("```")).count() % 2 == 1 {
                            out.push_str("\n```");
                        }
                    } else {
                        out.push_str(&quoted(text.trim_end()));
                    }
                    out.push('\n');
                }
                let calls: Vec<String> = crate::parts::parts(&row.raw)
                    .into_iter()
                    .filter_map(|p| match p {
                        crate::parts::Part::ToolCall { id, name, arguments, .. } => {
                            let (name, arguments) = crate::parts::inner_call(&name, &arguments);
                            (name != "ask_user").then(|| tool_line(&name, &arguments, results.get(&id)))
                        }
                        _ => None,
                    })
                    .collect();
                if !calls.is_empty() {
                    if !text.trim().is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&calls.join("\n"));
                    out.push('\n');
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_moment_reads_as_utc() {
        assert_eq!(utc(0.0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_796_220_562_166.0), "2026-12-02 14:09:22 UTC");
        assert_eq!(utc(951_782_400_000.0), "2000-02-29 00:00:00 UTC");
    }

    fn input() -> Input {
        let t = 1_796_220_000_000.0;
        let ms = |dt: i64| 1_796_220_000_000i64 + dt;
        Input {
            title: "Deploy".into(),
            session_key: "agent:main:main".into(),
            gateway: "127.0.0.1:18789".into(),
            exported_at_ms: t + 60_000.0,
            messages: vec![
                json!({"role": "user", "content": "ship it", "timestamp": t, "__openclaw": {"id": "u1", "seq": 1}}),
                json!({"role": "assistant", "provider": "scripted", "model": "scripted", "timestamp": t + 1000.0, "__openclaw": {"id": "a1", "seq": 2},
                    "content": [{"type": "text", "text": "Asking first."},
                        {"type": "toolCall", "id": "c1", "name": "ask_user", "arguments": {"questions": [{"question": "Which colour?", "options": [{"label": "Blue"}, {"label": "Red"}]}]}},
                        {"type": "toolCall", "id": "c2", "name": "exec", "arguments": {"command": "scripts/deploy.sh --prod"}}]}),
                json!({"role": "toolResult", "toolCallId": "c1", "toolName": "ask_user", "timestamp": t + 2000.0, "__openclaw": {"id": "r1", "seq": 3},
                    "content": [{"type": "text", "text": "{\"status\":\"answered\",\"answers\":{\"answers\":{\"q0\":[\"Blue\"]}}}"}]}),
                json!({"role": "toolResult", "toolCallId": "c2", "toolName": "exec", "isError": true, "timestamp": t + 3000.0, "__openclaw": {"id": "r2", "seq": 4},
                    "content": [{"type": "text", "text": "Exec denied by the operator"}]}),
                json!({"role": "assistant", "timestamp": t + 4000.0, "__openclaw": {"id": "a2", "seq": 5}, "content": [{"type": "text", "text": "## Done\n\n- **not** deployed"}]}),
            ],
            approvals: vec![
                json!({"id": "ap1", "status": "denied", "decision": "deny", "presentation": {"kind": "exec", "commandText": "scripts/deploy.sh --prod"},
                    "createdAtMs": ms(2400), "expiresAtMs": ms(99_000), "resolvedAtMs": ms(2500), "source": {"agentId": "main", "sessionKey": "agent:main:main"},
                    "resolver": {"kind": "device", "id": "dev-1234567890"}}),
                json!({"id": "ap2", "status": "approved", "decision": "allow-once", "presentation": {"kind": "exec", "commandText": "ls"},
                    "createdAtMs": ms(0), "resolvedAtMs": ms(10), "source": {"sessionKey": "agent:main:other"}}),
            ],
            receipts: Vec::new(),
        }
    }

    #[test]
    fn the_export_names_speakers_summarises_tools_and_places_each_decision() {
        let md = markdown(&input());
        assert!(md.starts_with("# Deploy\n\nConversation `agent:main:main` on 127.0.0.1:18789, exported 2026-12-02 14:01:00 UTC: 3 messages, 1 questions, 1 approvals.\n"), "{md}");
        assert!(md.contains("## You · 2026-12-02 14:00:00 UTC\n\n> ship it\n"), "{md}");
        assert!(md.contains("## Agent (scripted/scripted) · 2026-12-02 14:00:01 UTC\n\nAsking first.\n\n- Tool `exec` `scripts/deploy.sh --prod`: failed: Exec denied by the operator\n"), "{md}");
        let question = md.find("**Question**").expect("the question");
        let approval = md.find("**Approval**").expect("the approval");
        let last = md.find("## Done").unwrap();
        assert!(question < approval && approval < last, "in time order: {md}");
        assert!(md.contains("- Which colour?\n  - answer: Blue"), "{md}");
        assert!(md.contains("the agent asked to run `scripts/deploy.sh --prod`. **Denied** by device dev-12345678…"), "{md}");
        assert!(!md.contains("`ls`"), "another conversation's approval is left out");
        assert!(md.contains("## Done\n\n- **not** deployed"), "the agent's Markdown as written");
    }

    #[test]
    fn a_secret_answer_is_never_exported_and_a_receipt_is_not_counted_twice() {
        let mut i = input();
        let secret = Receipt {
            id: "q9".into(),
            questions: vec![protocol::question::Question {
                question_id: "k".into(),
                header: String::new(),
                question: "API key?".into(),
                url: None,
                options: Vec::new(),
                multi_select: None,
                is_other: None,
                is_secret: Some(true),
                secret_store: None,
                secret_store_existing: None,
            }],
            outcome: Outcome::Answered {
                answers: protocol::question::QuestionAnswers { answers: [("k".to_string(), vec!["hunter2".to_string()])].into() },
            },
            at_ms: 1_796_220_005_000.0,
            unsent_text: String::new(),
            unsent_held: false,
            session_key: Some("agent:main:main".into()),
            approval: None,
        };
        let mut twice = secret.clone();
        twice.questions[0].question = "Which colour?".into();
        i.receipts = vec![secret, twice];
        let md = markdown(&i);
        assert!(md.contains("- API key?\n  - answer: a secret value (never exported)"), "{md}");
        assert!(!md.contains("hunter2"));
        assert_eq!(md.matches("Which colour?").count(), 1, "the call's question is not repeated by its receipt");
        assert!(md.contains("2 questions"), "{md}");
    }

    #[test]
    fn a_reply_stopped_inside_a_code_block_is_closed() {
        let mut i = input();
        i.messages.truncate(1);
        i.approvals.clear();
        i.messages.push(json!({"role": "assistant", "timestamp": 1_796_220_001_000.0, "content": "Here:\n\n```sh\necho half"}));
        let md = markdown(&i);
        assert!(md.ends_with("```sh\necho half\n```\n"), "{md}");
    }

    #[test]
    fn the_file_name_is_safe() {
        assert_eq!(file_stem("Deploy: prod / EU!"), "chat-deploy-prod-eu");
        assert_eq!(file_stem("../../etc"), "chat-etc");
        assert_eq!(file_stem("  "), "chat-conversation");
        assert_eq!(file_stem("Ärger über Öl"), "chat-rger-ber-l");
        assert_eq!(file_stem("日本"), "chat-conversation");
    }

    #[test]
    fn backticks_in_a_command_stay_inline_code() {
        assert_eq!(code("echo `date`"), "`` echo `date` ``");
        assert_eq!(code("a `b` c"), "``a `b` c``");
        assert_eq!(code("a\n  b"), "`a b`");
    }
}
