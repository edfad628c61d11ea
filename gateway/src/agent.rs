//! The demo agent: deterministic runs that stream replies, ask `ask_user` questions while
//! they wait, fail or get aborted, so every path of the UI can be seen and tested.
//!
//! | message contains | the run |
//! |---|---|
//! | `deploy` | asks where to deploy and whom to notify, waits, then replies with the answer |
//! | `color` / `colour` | asks for a color (single choice), waits, replies |
//! | `run` (the word: "run the tests", not "running") | asks for an exec approval to run `ls -la`; allowed, it streams the command's simulated output for about three seconds as the real gateway's tool events (`agent` `item` / `command_output`), then replies (never runs anything) |
//! | `slow` | streams for about five seconds (time to press Stop) |
//! | `fail` | fails with an error |
//! | `async` | asks two questions without stopping (Codex-style), keeps working, completes |
//! | `help` | lists these commands |
//! | anything else | echoes it back |

use std::sync::Arc;
use std::time::Duration;

use protocol::approval::Decision;
use protocol::question::{QuestionRecord, QuestionRequestParams, QuestionStatus};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::approvals::{self, ApprovalRecord, Status};
use crate::session_events::{agent_event, broadcast_message, chat_event};
use crate::store::SendStatus;
use crate::util::{now_ms, uuid_v4};
use crate::{Gateway, log, questions};

pub const HELP: &str = "I am the demo agent. Try: \"deploy the site\" (I ask where and whom to notify), \"pick a color\" (one choice), \"run the tests\" (I ask for approval to run a command), \"async\" (questions while I keep working), \"slow\" (a long reply you can Stop), \"fail\" (a run that errors), or anything else (I echo it).";

fn deploy_questions() -> Value {
    json!([
        {"questionId":"deploy_target","header":"Deploy","question":"Where should this change be deployed?",
         "options":[{"label":"Staging (Recommended)","description":"Safe default"},{"label":"Production"}],"isOther":true},
        {"questionId":"notify","header":"Notify","question":"Who should be notified?","multiSelect":true,
         "options":[{"label":"Email"},{"label":"Slack"},{"label":"Pager","description":"Only for incidents"}],"isOther":true}
    ])
}

fn color_questions() -> Value {
    json!([{"questionId":"color","header":"Color","question":"Which color should the new theme use?",
        "options":[{"label":"Red"},{"label":"Blue"},{"label":"Green"}],"isOther":true}])
}

/// Queues a run for `session`; runs of one session go one after another.
pub fn start_run(gw: Arc<Gateway>, session: String, run_id: String, text: String) {
    // Counted from acceptance, so graceful shutdown waits for (or aborts) queued runs too.
    let work = gw.drain.run();
    tokio::spawn(async move {
        let _work = work;
        let lane = gw.lanes.lane(&session);
        let _turn = lane.lock().await;
        let Some(abort) = gw.runs.start(&session, &run_id) else {
            log::warn(&format!("run {run_id}: session {session} is busy"));
            return;
        };
        if gw.drain.is_aborting() {
            // Shutdown reached its deadline while this run waited for its turn.
            if let Some(r) = gw.runs.active(&session) {
                r.abort.send_replace(true);
            }
        }
        let outcome = run(&gw, &session, &run_id, &text, abort).await;
        let status = match &outcome {
            Outcome::Done => SendStatus::Ok,
            Outcome::Failed(m) => SendStatus::Error(m.clone()),
            Outcome::Aborted => SendStatus::Aborted,
        };
        if let Err(e) = gw.store.set_send_status(&run_id, &status) {
            log::error(&format!("run {run_id}: cannot record its end: {e}"));
        }
        let (word, error) = match &outcome {
            Outcome::Done => ("done", None),
            Outcome::Failed(m) => ("failed", Some(m.as_str())),
            Outcome::Aborted => ("killed", None),
        };
        if let Err(e) = gw.store.set_run_status(&session, &run_id, word, error) {
            log::error(&format!("run {run_id}: cannot record its status: {e}"));
        }
        gw.runs.finish(&session, &run_id);
        if matches!(outcome, Outcome::Done) {
            crate::push::run_finished(&gw, &run_id, &session);
        }
        // Still in the session's lane: no next run has started, the row is idle.
        crate::sessions::changed(&gw, &session, "agent.input.settled", |_| {});
    });
}

enum Outcome {
    Done,
    Failed(String),
    Aborted,
}

struct Stream<'a> {
    gw: &'a Gateway,
    session: &'a str,
    run_id: &'a str,
    seq: u64,
    text: String,
    /// The saved reply, for the `final` event.
    saved: Value,
    /// The conversation's model: its rows name it.
    model: &'static crate::models::Model,
}

impl Stream<'_> {
    /// An `agent` event of this run (`stream`: `lifecycle`, `item`, `command_output`, …), on the
    /// same per-run `seq` as its `chat` events, as the real gateway sends them.
    fn agent(&mut self, stream: &str, data: Value) {
        self.seq += 1;
        let p = json!({"runId": self.run_id, "sessionKey": self.session, "agentId": "main", "seq": self.seq, "stream": stream,
            "ts": now_ms(), "data": data});
        agent_event(self.gw, self.session, p);
    }

    fn event(&mut self, state: &str, extra: Value) {
        self.seq += 1;
        let mut p = json!({"runId": self.run_id, "sessionKey": self.session, "agentId": "main", "seq": self.seq, "state": state});
        if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        chat_event(self.gw, self.session, p);
    }

    /// Streams `text` in small deltas; false when aborted on the way.
    async fn say(&mut self, text: &str, pace_ms: u64, abort: &mut watch::Receiver<bool>) -> bool {
        let mut chunk = String::new();
        for word in text.split_inclusive(' ') {
            chunk.push_str(word);
            if chunk.len() < 12 {
                continue;
            }
            if !self.delta(std::mem::take(&mut chunk), pace_ms, abort).await {
                return false;
            }
        }
        chunk.is_empty() || self.delta(chunk, pace_ms, abort).await
    }

    async fn delta(&mut self, piece: String, pace_ms: u64, abort: &mut watch::Receiver<bool>) -> bool {
        if *abort.borrow() {
            return false;
        }
        self.text.push_str(&piece);
        self.event("delta", json!({"deltaText": piece}));
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(pace_ms)) => true,
            _ = abort.wait_for(|a| *a) => false,
        }
    }

    fn save(&self, stop_reason: &str, terminal: bool) -> Value {
        let message = json!({"role": "assistant", "content": [{"type": "text", "text": self.text}], "stopReason": stop_reason,
            "timestamp": now_ms(), "provider": self.model.provider, "model": self.model.id});
        let meta = json!({"id": uuid_v4(), "runId": self.run_id, "runTerminal": terminal});
        match self.gw.store.save_message(self.session, message, meta) {
            Ok(saved) => {
                broadcast_message(self.gw, self.session, &saved);
                saved
            }
            Err(e) => {
                log::error(&format!("run {}: cannot save the reply: {e}", self.run_id));
                Value::Null
            }
        }
    }
}

async fn ask(
    gw: &Arc<Gateway>,
    session: &str,
    run_id: &str,
    questions: Value,
    abort: &mut watch::Receiver<bool>,
) -> Option<QuestionRecord> {
    let params = QuestionRequestParams {
        id: None,
        questions: serde_json::from_value(questions).ok()?,
        agent_id: Some("main".into()),
        session_key: Some(session.to_string()),
        run_id: Some(run_id.to_string()),
        timeout_ms: Some(600_000),
    };
    let id = questions::ask_for_run(gw, params).ok()?;
    tokio::select! {
        r = gw.questions.wait(&id) => r,
        _ = abort.wait_for(|a| *a) => None,
    }
}

/// The questions as the model writes them in an `ask_user` call (`id`, no `isOther`).
fn as_tool_arguments(questions: &Value) -> Value {
    let qs: Vec<Value> = questions
        .as_array()
        .into_iter()
        .flatten()
        .map(|q| {
            let mut q = q.clone();
            if let Some(o) = q.as_object_mut() {
                if let Some(id) = o.remove("questionId") {
                    o.insert("id".into(), id);
                }
                o.remove("isOther");
            }
            q
        })
        .collect();
    json!({"questions": qs, "timeoutSeconds": 600})
}

/// The `ask_user` tool's result text as the real gateway writes it: a line per question, a
/// blank line, then the outcome as indented JSON.
fn ask_result_text(questions: &Value, record: Option<&QuestionRecord>) -> (String, bool) {
    let no_answer = serde_json::to_string_pretty(&json!({"status": "no_answer"})).unwrap_or_default();
    match record {
        Some(r) if r.status == QuestionStatus::Answered => {
            let answers = r.answers.as_ref().map(|a| a.answers.clone()).unwrap_or_default();
            let lines: Vec<String> = questions
                .as_array()
                .into_iter()
                .flatten()
                .map(|q| {
                    let id = q.get("questionId").and_then(Value::as_str).unwrap_or("");
                    let header = q.get("header").and_then(Value::as_str).unwrap_or(id);
                    let values = answers.get(id).map(|v| v.join(", ")).filter(|v| !v.is_empty()).unwrap_or_else(|| "(no answer)".into());
                    format!("{header}: {values}")
                })
                .collect();
            let outcome = serde_json::to_string_pretty(&json!({"status": "answered", "answers": {"answers": answers}})).unwrap_or_default();
            (format!("{}\n\n{outcome}", lines.join("\n")), false)
        }
        Some(r) if r.status == QuestionStatus::Expired => (format!("No answer arrived; proceed with best judgment.\n\n{no_answer}"), false),
        Some(_) => (format!("The question was cancelled; proceed with best judgment.\n\n{no_answer}"), false),
        None => ("Operation aborted".into(), true),
    }
}

/// Asks through `ask_user` the way a real agent's turn is saved: the text so far and the tool
/// call in one assistant row, then, once the question ends, the tool's result in a row of its
/// own. Any browser can then show the question and its outcome from the transcript alone.
async fn ask_user(s: &mut Stream<'_>, gw: &Arc<Gateway>, questions: Value, abort: &mut watch::Receiver<bool>) -> Option<QuestionRecord> {
    let call_id = format!("call_{}", uuid_v4().replace('-', ""));
    let mut content = Vec::new();
    if !s.text.is_empty() {
        content.push(json!({"type": "text", "text": s.text}));
    }
    content.push(json!({"type": "toolCall", "id": call_id, "name": "ask_user", "arguments": as_tool_arguments(&questions)}));
    let call = json!({"role": "assistant", "content": content, "stopReason": "toolUse", "timestamp": now_ms(), "provider": s.model.provider, "model": s.model.id});
    match gw.store.save_message(s.session, call, json!({"id": uuid_v4(), "runId": s.run_id, "runTerminal": false})) {
        Ok(saved) => broadcast_message(gw, s.session, &saved),
        Err(e) => log::error(&format!("run {}: cannot save the ask_user call: {e}", s.run_id)),
    }
    s.text.clear();
    let record = ask(gw, s.session, s.run_id, questions.clone(), abort).await;
    let (text, is_error) = ask_result_text(&questions, record.as_ref());
    let result = json!({"role": "toolResult", "toolCallId": call_id, "toolName": "ask_user", "content": [{"type": "text", "text": text}], "isError": is_error, "timestamp": now_ms()});
    match gw.store.save_message(s.session, result, json!({"id": uuid_v4(), "runId": s.run_id, "runTerminal": false})) {
        Ok(saved) => broadcast_message(gw, s.session, &saved),
        Err(e) => log::error(&format!("run {}: cannot save the ask_user result: {e}", s.run_id)),
    }
    record
}

/// The harmless command the demo agent asks to run (it never runs it).
const DEMO_COMMAND: &str = "ls -la";

/// Whether `text` holds `word` as a whole word ("run it", not "trunk" or "running").
fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case(word))
}

/// Whether the person's own words ask to `run` something. Quoted lines (`> …`) are not theirs:
/// an async answer quotes the agent's questions ("Which checks should run?").
fn asks_to_run(text: &str) -> bool {
    text.lines().filter(|l| !l.trim_start().starts_with('>')).any(|l| has_word(l, "run"))
}

/// Asks for an exec approval to run `command` and waits for its end. `None` when the run was
/// stopped (its approval is then cancelled, `run-aborted`); `Err` when it could not be asked.
async fn ask_approval(
    gw: &Arc<Gateway>,
    session: &str,
    run_id: &str,
    command: &str,
    abort: &mut watch::Receiver<bool>,
) -> Option<Result<ApprovalRecord, String>> {
    let cwd = std::fs::canonicalize(&gw.config.data_dir).unwrap_or_else(|_| gw.config.data_dir.clone());
    let params = json!({"command": command, "cwd": cwd.display().to_string(), "host": "gateway", "security": "allowlist", "ask": "on-miss",
        "sessionKey": session, "agentId": "main", "runId": run_id, "timeoutMs": 600_000});
    let params = match serde_json::from_value(params) {
        Ok(p) => p,
        Err(e) => return Some(Err(e.to_string())),
    };
    let (id, waiter) = match approvals::request_for_run(gw, params, run_id) {
        Ok(w) => w,
        Err(e) => return Some(Err(e.message)),
    };
    let ended = tokio::select! {
        r = waiter.done() => r,
        _ = abort.wait_for(|a| *a) => None,
    };
    // Stopped: whoever stopped it cancelled the approval; make sure, then end aborted.
    if ended.is_none() || *abort.borrow() {
        approvals::cancel_run(gw, run_id);
        return None;
    }
    Some(ended.ok_or_else(|| format!("approval {id} ended without an outcome")))
}

fn approval_reply(outcome: Result<ApprovalRecord, String>, command: &str) -> String {
    match outcome {
        Ok(r) => match (r.status, r.decision) {
            (Status::Allowed, Some(Decision::AllowAlways)) => {
                format!(
                    "Always allowed: I would run `{command}` now, and next time without asking (the demo agent never executes anything)."
                )
            }
            (Status::Allowed, _) => {
                format!("Allowed once: I showed what `{command}` would print (the demo agent never executes anything).")
            }
            (Status::Denied, _) => format!("Denied: I will not run `{command}`."),
            (Status::Expired, _) => format!("The approval expired: I did not run `{command}`."),
            _ => format!("The approval was cancelled: I did not run `{command}`."),
        },
        Err(e) => format!("I could not ask for approval ({e}), so I did not run `{command}`."),
    }
}

fn answer_text(record: &QuestionRecord, id: &str) -> String {
    record.answers.as_ref().and_then(|a| a.answers.get(id)).map(|v| v.join(", ")).unwrap_or_default()
}

async fn run(gw: &Arc<Gateway>, session: &str, run_id: &str, text: &str, abort: watch::Receiver<bool>) -> Outcome {
    let record = gw.store.session(session).ok().flatten();
    let model = crate::models::stored(record.as_ref().and_then(|r| r.model.as_deref()));
    let mut s = Stream { gw, session, run_id, seq: 0, text: String::new(), saved: Value::Null, model };
    s.event("status", json!({"phase": "preparing_context"}));
    let started = now_ms();
    s.agent("lifecycle", json!({"phase": "start", "startedAt": started}));
    let outcome = run_steps(&mut s, gw, session, run_id, text, abort).await;
    let (aborted, error) = match &outcome {
        Outcome::Done => (false, None),
        Outcome::Failed(m) => (false, Some(m.clone())),
        Outcome::Aborted => (true, None),
    };
    // Its usage, as the real gateway records it: the context after the run (the context before
    // it, the message and the reply; about four characters a token), and the run's own input
    // (the context it was given) and output.
    let before = record.as_ref().and_then(|r| r.usage).map_or(0, |u| u.context);
    let input = before + (text.len() / 4) as i64 + 1;
    let output = (s.text.len() / 4) as i64 + 1;
    let usage = crate::store::RunUsage { context: input + output, input, output };
    if let Err(e) = gw.store.set_usage(session, usage) {
        log::error(&format!("run {run_id}: cannot record its usage: {e}"));
    }
    let phase = if error.is_some() { "error" } else { "end" };
    s.agent("lifecycle", json!({"phase": phase, "startedAt": started, "endedAt": now_ms(), "aborted": aborted, "error": error}));
    // As on the real gateway: the lifecycle's end, then the `final` with the saved reply.
    if matches!(outcome, Outcome::Done) {
        let saved = std::mem::take(&mut s.saved);
        s.event("final", json!({"message": saved, "stopReason": "stop"}));
    }
    outcome
}

/// Simulated output of the demo command: it is never run.
const DEMO_OUTPUT: [&str; 6] = [
    "demo agent: pretending to run ls -la (nothing is executed)",
    "total 24",
    "drwxr-xr-x  4 demo demo 4096 .",
    "drwxr-xr-x 12 demo demo 4096 ..",
    "-rw-r--r--  1 demo demo  512 README.md",
    "-rw-r--r--  1 demo demo 2048 notes.txt",
];

/// The allowed demo command, as a real run shows it: its call saved, a tool item that starts,
/// output that streams (whole so far, each time), its end with exit code and duration, and its
/// result saved. False when stopped on the way.
async fn simulate_command(s: &mut Stream<'_>, gw: &Arc<Gateway>, command: &str, abort: &mut watch::Receiver<bool>) -> bool {
    let call = format!("call_{}", uuid_v4().replace('-', "")[..12].to_string());
    let call_row = json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "exec", "arguments": {"command": command}}],
        "stopReason": "toolUse", "timestamp": now_ms(), "provider": s.model.provider, "model": s.model.id});
    if let Ok(saved) = gw.store.save_message(s.session, call_row, json!({"id": uuid_v4(), "runId": s.run_id, "runTerminal": false})) {
        broadcast_message(gw, s.session, &saved);
    }
    let started = now_ms();
    let title = format!("Exec {command}");
    let item = |phase: &str, status: &str| {
        json!({"itemId": format!("tool:{call}"), "toolCallId": call, "name": "exec", "kind": "tool", "phase": phase, "title": title,
            "status": status, "meta": command, "commandBearing": true, "startedAt": started})
    };
    s.agent("item", item("start", "running"));
    let mut output = String::new();
    for line in DEMO_OUTPUT {
        if !output.is_empty() {
            output.push('\n');
        }
        output.push_str(line);
        s.agent(
            "command_output",
            json!({"itemId": format!("command:{call}"), "phase": "delta", "title": format!("command {command}"),
            "toolCallId": call, "name": "exec", "output": output, "status": "running"}),
        );
        let stopped = tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(500)) => false,
            _ = abort.wait_for(|a| *a) => true,
        };
        if stopped {
            return false;
        }
    }
    let took = (now_ms() - started).max(0) as u64;
    s.agent(
        "command_output",
        json!({"itemId": format!("command:{call}"), "phase": "end", "title": format!("command {command}"),
        "toolCallId": call, "name": "exec", "output": output, "status": "completed", "exitCode": 0, "durationMs": took}),
    );
    let mut end = item("end", "completed");
    end["endedAt"] = json!(now_ms());
    s.agent("item", end);
    let result = json!({"role": "toolResult", "toolCallId": call, "toolName": "exec", "isError": false,
        "content": [{"type": "text", "text": output}], "details": {"status": "completed", "exitCode": 0, "durationMs": took}, "timestamp": now_ms()});
    if let Ok(saved) = gw.store.save_message(s.session, result, json!({"id": uuid_v4(), "runId": s.run_id})) {
        broadcast_message(gw, s.session, &saved);
    }
    true
}

async fn run_steps(
    s: &mut Stream<'_>,
    gw: &Arc<Gateway>,
    session: &str,
    run_id: &str,
    text: &str,
    mut abort: watch::Receiver<bool>,
) -> Outcome {
    let lower = text.to_lowercase();
    let reply: String = if lower.contains("fail") {
        tokio::time::sleep(Duration::from_millis(150)).await;
        let message = "The demo agent failed on purpose (you asked it to).";
        s.event("error", json!({"errorMessage": message, "errorKind": "unknown"}));
        let row =
            json!({"role": "custom", "customType": "run-failed-before-reply", "content": message, "display": true, "timestamp": now_ms()});
        if let Ok(saved) = gw.store.save_message(session, row, json!({"id": uuid_v4(), "runId": run_id})) {
            broadcast_message(gw, session, &saved);
        }
        return Outcome::Failed(message.into());
    } else if lower.contains("deploy") {
        if !s.say("Before I deploy, I need two answers from you. ", 40, &mut abort).await {
            return aborted(s);
        }
        match ask_user(s, gw, deploy_questions(), &mut abort).await {
            Some(r) if r.status == QuestionStatus::Answered => {
                format!("Deploying to {}. I will notify: {}.", answer_text(&r, "deploy_target"), answer_text(&r, "notify"))
            }
            Some(r) if r.status == QuestionStatus::Expired => "No answer arrived, so I did not deploy anything.".into(),
            Some(_) => "Understood: I will not deploy.".into(),
            None => return aborted(s),
        }
    } else if lower.contains("color") || lower.contains("colour") {
        match ask_user(s, gw, color_questions(), &mut abort).await {
            Some(r) if r.status == QuestionStatus::Answered => format!("{} it is.", answer_text(&r, "color")),
            Some(r) if r.status == QuestionStatus::Expired => "No answer arrived; I kept the current color.".into(),
            Some(_) => "Fine, no new color.".into(),
            None => return aborted(s),
        }
    } else if asks_to_run(&lower) {
        if !s.say(&format!("I need your approval to run `{DEMO_COMMAND}`. "), 30, &mut abort).await {
            return aborted(s);
        }
        s.agent("lifecycle", json!({"phase": "waiting-approval"}));
        let outcome = match ask_approval(gw, session, run_id, DEMO_COMMAND, &mut abort).await {
            Some(outcome) => outcome,
            None => return aborted(s),
        };
        s.agent("lifecycle", json!({"phase": "approval-resolved"}));
        let allowed = matches!(&outcome, Ok(r) if r.status == Status::Allowed);
        // The text so far was the preamble; the reply is a message of its own.
        s.text.clear();
        if allowed && !simulate_command(s, gw, DEMO_COMMAND, &mut abort).await {
            return aborted(s);
        }
        approval_reply(outcome, DEMO_COMMAND)
    } else if lower.contains("async") {
        if !s.say("I will keep working; meanwhile I have two questions for you. ", 30, &mut abort).await {
            return aborted(s);
        }
        // An assistant row carrying the questions, as a Codex harness run writes it.
        let delivery = json!({"role": "assistant", "content": [{"type": "text", "text": "Two questions while I keep working:"}],
        "stopReason": "toolUse", "timestamp": now_ms(),
        "openclawAsyncDelivery": {"itemId": uuid_v4(), "questions": [
            {"title": "Which environment should I use?", "options": ["Staging", "Production"]},
            {"title": "Which checks should run?", "options": ["unit", "e2e", "lint"]}
        ]}});
        match gw.store.save_message(session, delivery, json!({"id": uuid_v4(), "runId": run_id, "runTerminal": false})) {
            Ok(saved) => broadcast_message(gw, session, &saved),
            Err(e) => log::error(&format!("run {run_id}: cannot save the async questions: {e}")),
        }
        s.text.clear();
        for step in ["Compiling… ", "running the build… ", "packaging… "] {
            if !s.delta(step.to_string(), 200, &mut abort).await {
                return aborted(s);
            }
        }
        "The build is ready; answer the questions whenever you like.".into()
    } else if lower.contains("delegate") {
        match crate::tasks::spawn(gw, session, text) {
            Ok(task) => {
                start_run(gw.clone(), task.child.clone(), task.run_id.clone(), "slow: the helper's steps".into());
                format!(
                    "I asked a helper to work on it (“{}”). It works in its own conversation: follow it or stop it under Sub-agents.",
                    task.title
                )
            }
            Err(e) => format!("I could not start a helper: {e}"),
        }
    } else if lower.contains("slow") {
        for i in 1..=10 {
            if !s.delta(format!("Working on step {i} of 10… "), 500, &mut abort).await {
                return aborted(s);
            }
        }
        "Done with all ten steps.".into()
    } else if lower.trim() == "help" {
        HELP.into()
    } else {
        format!("You said: {text}")
    };
    if !s.say(&reply, 30, &mut abort).await {
        return aborted(s);
    }
    s.saved = s.save("stop", true);
    Outcome::Done
}

fn aborted(s: &mut Stream<'_>) -> Outcome {
    // What it wrote so far stays; stopped before writing anything (while its command ran), there
    // is no reply to keep.
    if !s.text.is_empty() {
        s.save("aborted", true);
    }
    s.event("aborted", json!({"stopReason": "aborted"}));
    Outcome::Aborted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_is_a_word_of_the_persons_own_not_of_a_quoted_question() {
        assert!(asks_to_run("run the tests"));
        assert!(asks_to_run("please Run it"));
        assert!(!asks_to_run("running late; trunk is fine"));
        assert!(!asks_to_run("> Which checks should run?\n\nunit"), "an async answer quoting the agent");
        assert!(asks_to_run("> Which checks should run?\n\nrun all of them"));
    }
}
