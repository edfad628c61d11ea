//! The chat's rules: one conversation's saved rows (history pages and `session.message`), the
//! runs streaming in it (`chat` and `agent` events, with `caps: ["tool-events"]`), and what the
//! page shows of each, in order. Pure: the controller (`state::chat`) feeds it frames and
//! carries out the effects it returns.
//!
//! What the real gateway (OpenClaw 2026.9.6) does, and the rules that follow from it (captured
//! runs in `model/tests/fixtures/live-runs/`):
//! - Saved rows carry a per-conversation `seq` (`messageSeq`). Tool results are saved but never
//!   sent as `session.message`: a live row whose `seq` skips one means a row was missed, and the
//!   history is fetched again ([`Effect::SyncHistory`]); so does a run's end.
//! - A run's `chat` and `agent` events share one per-run `seq`; either kind may skip numbers
//!   (the gateway coalesces deltas). An event older than the newest of its kind is stale.
//! - `chat` `delta` carries the whole current message (`message`) and the new text
//!   (`deltaText`); a saved assistant row of the run ends that message.
//! - A follow-up sent while a run streams gets a run of its own that ends at once with an
//!   empty `final`; its words are answered inside the first run.
//! - `command_output` carries the command's whole output so far (a tail), not a delta.

use std::collections::HashMap;

use serde_json::Value;

use crate::parts::{Part, ToolResult};

/// One saved transcript row, reduced to what the page shows.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptRow {
    /// `__openclaw.id`, or a stand-in for rows without one.
    pub key: String,
    pub role: String,
    pub text: String,
    /// `__openclaw.seq`: the row's place in the conversation (0: unknown).
    pub seq: u64,
    pub timestamp: f64,
    /// `stopReason` for assistant rows, `customType` for custom rows.
    pub note: Option<String>,
    /// The run that wrote it (`__openclaw.runId`; for a person's row, its `idempotencyKey`).
    pub run_id: Option<String>,
    /// Ids of the tool calls in this row (their results are shown with them).
    pub tool_calls: Vec<String>,
    /// For a tool result row, the result (with the id of the call it answers).
    pub tool_result: Option<ToolResult>,
    /// For a nested tool row (`openclaw.nested-tool.v1`): the call that made it.
    pub parent_call: Option<String>,
    /// The first question's wording of each `ask_user` call in this row.
    pub asks: Vec<String>,
    /// Shown from this browser's saved copy, not (yet) from the gateway.
    pub from_saved_copy: bool,
    /// The gateway shortened it in the history (`__openclaw.truncated`).
    pub truncated: bool,
    pub raw: Value,
}

/// The custom row the gateway writes for a tool reached through `tool_call`.
pub const NESTED_TOOL: &str = "openclaw.nested-tool.v1";

impl TranscriptRow {
    pub fn from_message(m: &Value) -> TranscriptRow {
        let meta = m.get("__openclaw");
        let seq = meta.and_then(|o| o.get("seq")).and_then(Value::as_u64).unwrap_or(0);
        let key = meta
            .and_then(|o| o.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("seq-{seq}-{}", protocol::frame::compact(m).len()));
        let role = m.get("role").and_then(Value::as_str).unwrap_or("custom").to_string();
        // A stopped run's row says `stopReason: "stop"`; `openclawAbort` tells.
        let aborted = m.get("openclawAbort").and_then(|a| a.get("aborted")) == Some(&Value::Bool(true));
        let note = if aborted {
            Some("aborted".to_string())
        } else {
            m.get("stopReason").or_else(|| m.get("customType")).and_then(Value::as_str).map(str::to_string)
        };
        let timestamp = m
            .get("timestamp")
            .and_then(Value::as_f64)
            .or_else(|| meta.and_then(|o| o.get("recordTimestampMs")).and_then(Value::as_f64))
            .unwrap_or(0.0);
        let text = match crate::offline::withheld(m) {
            Some(reason) => format!("Not kept in this browser's saved copy: {reason}. It shows again when the gateway is back."),
            None => crate::message_text(m),
        };
        let run_id = meta.and_then(|o| o.get("runId")).and_then(Value::as_str).map(str::to_string).or_else(|| {
            let key = m.get("idempotencyKey").and_then(Value::as_str)?;
            key.strip_suffix(":user").map(str::to_string)
        });
        let (mut tool_calls, mut asks, mut parent_call) = (Vec::new(), Vec::new(), None);
        for part in crate::parts::parts(m) {
            if let Part::ToolCall { id, name, arguments, parent } = part {
                let (name, arguments) = crate::parts::inner_call(&name, &arguments);
                if name == "ask_user"
                    && let Some(q) = crate::parts::ask_questions(&arguments).into_iter().next()
                {
                    asks.push(q.question);
                }
                if parent.is_some() {
                    parent_call = parent;
                }
                if !id.is_empty() {
                    tool_calls.push(id);
                }
            }
        }
        let tool_result = crate::parts::tool_result(m).filter(|r| !r.call_id.is_empty());
        let truncated = meta.and_then(|o| o.get("truncated")).and_then(Value::as_bool).unwrap_or(false);
        TranscriptRow {
            key,
            role,
            text,
            seq,
            timestamp,
            note,
            run_id,
            tool_calls,
            tool_result,
            parent_call,
            asks,
            from_saved_copy: false,
            truncated,
            raw: m.clone(),
        }
    }

    /// A nested tool row (a tool reached through `tool_call`).
    pub fn is_nested_tool(&self) -> bool {
        self.role == "custom" && self.note.as_deref() == Some(NESTED_TOOL)
    }
}

/// Where a run is, in the words the page shows.
#[derive(Debug, Clone, PartialEq)]
pub enum RunPhase {
    /// Before the model (`chat` `status` `phase`: `preparing_workspace`, …).
    Preparing(String),
    /// The model is working (thinking or writing).
    Model,
    /// A tool of the run waits for a person's approval.
    WaitingApproval,
    /// The run asked the person something (`ask_user`, `secrets`) and waits for the answer.
    WaitingAnswer,
    /// A tool is running: what it runs (a command, or the tool's title).
    Tool(String),
    Finishing,
    Ended(RunEnd),
}

impl RunPhase {
    /// The phase in a person's words.
    pub fn words(&self) -> String {
        match self {
            RunPhase::Preparing(p) => match p.as_str() {
                "preparing_workspace" => "Preparing the workspace".into(),
                "preparing_context" => "Preparing the context".into(),
                "starting_model" => "Starting the model".into(),
                "naming_worktree" | "creating_worktree" => "Setting up a worktree".into(),
                "running_setup" => "Running setup".into(),
                "provisioning_environment" => "Provisioning the environment".into(),
                "memory_flushing" => "Saving memory".into(),
                other => format!("Preparing ({})", other.replace('_', " ")),
            },
            RunPhase::Model => "Working".into(),
            RunPhase::WaitingApproval => "Waiting for your approval".into(),
            RunPhase::WaitingAnswer => "Waiting for your answer".into(),
            RunPhase::Tool(what) => format!("Running {what}"),
            RunPhase::Finishing => "Finishing".into(),
            RunPhase::Ended(end) => end.words().into(),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    Done,
    /// Stopped (`chat.abort`).
    Stopped,
    Failed(String),
}

impl RunEnd {
    pub fn words(&self) -> &'static str {
        match self {
            RunEnd::Done => "Finished",
            RunEnd::Stopped => "Stopped",
            RunEnd::Failed(_) => "Failed",
        }
    }
}

/// A tool's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    Running,
    Done,
    Failed,
}

impl ToolStatus {
    pub fn name(self) -> &'static str {
        match self {
            ToolStatus::Running => "running",
            ToolStatus::Done => "done",
            ToolStatus::Failed => "failed",
        }
    }
}

/// What the page keeps of a command's output: the newest part, bounded.
pub const OUTPUT_KEPT_BYTES: usize = 64 * 1024;

/// A command's output as it streams: the newest [`OUTPUT_KEPT_BYTES`] of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Output {
    /// The kept tail, starting at a line.
    pub text: String,
    /// Bytes of the output the gateway sent that are not kept (older ones).
    pub cut_bytes: usize,
}

impl Output {
    /// The whole output so far (the gateway sends it whole each time, as a tail of its own).
    pub fn set(&mut self, whole: &str) {
        if whole.len() <= OUTPUT_KEPT_BYTES {
            self.text = whole.to_string();
            self.cut_bytes = 0;
            return;
        }
        let mut from = whole.len() - OUTPUT_KEPT_BYTES;
        while !whole.is_char_boundary(from) {
            from += 1;
        }
        // From the next line, so no line shows half.
        if let Some(nl) = whole[from..].find('\n') {
            from += nl + 1;
        }
        self.text = whole[from..].to_string();
        self.cut_bytes = from;
    }

    /// The last `n` lines (what is in view while it runs).
    pub fn tail(&self, n: usize) -> &str {
        let t = self.text.trim_end_matches('\n');
        let mut at = t.len();
        for _ in 0..n {
            match t[..at].rfind('\n') {
                Some(i) => at = i,
                None => return t,
            }
        }
        &t[at + 1..]
    }

    pub fn lines(&self) -> usize {
        let t = self.text.trim_end_matches('\n');
        if t.is_empty() { 0 } else { t.lines().count() }
    }
}

/// One tool of a run, as it happens.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolActivity {
    pub call_id: String,
    /// The `tool_call` that reached it, for a nested tool.
    pub parent: Option<String>,
    /// The real tool's name (`exec`, `ask_user`, …).
    pub name: String,
    /// The gateway's title (for `exec`, `Exec <command>`).
    pub title: String,
    /// For `exec`, the command.
    pub command: Option<String>,
    pub status: ToolStatus,
    pub output: Output,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<u64>,
    pub started_ms: Option<f64>,
}

/// A run in this conversation, seen live.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub id: String,
    pub phase: RunPhase,
    pub started_ms: Option<f64>,
    pub ended_ms: Option<f64>,
    /// The message being written now (shown until its saved row arrives).
    pub text: String,
    /// The model's reasoning, as it streams.
    pub thinking: String,
    /// What the model says it is about to do (a preamble before a tool call).
    pub preamble: String,
    pub tools: Vec<ToolActivity>,
    /// The newest `chat` and `agent` `seq` seen.
    chat_seq: u64,
    agent_seq: u64,
    /// The transcript's `event_mark` when this run's last event arrived.
    last_event: u64,
    /// The reply a `final` or `aborted` event carried, when no saved row of the run shows it yet.
    pub unsaved_reply: Option<Value>,
    /// The texts of this run's saved assistant rows (stream text equal to one is not shown twice).
    saved_texts: Vec<String>,
}

impl Run {
    fn new(id: &str) -> Run {
        Run {
            id: id.to_string(),
            phase: RunPhase::Preparing("preparing_workspace".into()),
            started_ms: None,
            ended_ms: None,
            text: String::new(),
            thinking: String::new(),
            preamble: String::new(),
            tools: Vec::new(),
            chat_seq: 0,
            agent_seq: 0,
            last_event: 0,
            unsaved_reply: None,
            saved_texts: Vec::new(),
        }
    }

    pub fn end(&self) -> Option<&RunEnd> {
        match &self.phase {
            RunPhase::Ended(e) => Some(e),
            _ => None,
        }
    }

    pub fn is_active(&self) -> bool {
        self.end().is_none()
    }

    /// How long it took, once ended and both ends are known.
    pub fn duration_ms(&self) -> Option<f64> {
        Some(self.ended_ms? - self.started_ms?).filter(|d| *d >= 0.0)
    }

    fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolActivity> {
        self.tools.iter_mut().find(|t| t.call_id == call_id)
    }

    fn finish(&mut self, end: RunEnd, at: Option<f64>) {
        if self.end().is_some() {
            return;
        }
        self.phase = RunPhase::Ended(end);
        if at.is_some() {
            self.ended_ms = at;
        }
        for t in &mut self.tools {
            if t.status == ToolStatus::Running {
                t.status = ToolStatus::Failed;
            }
        }
    }
}

/// When a run started and how it ended: what its rows' footer needs (a view recomputes it when
/// a run starts or ends, not on every word it streams).
#[derive(Debug, Clone, PartialEq)]
pub struct RunTiming {
    pub id: String,
    pub end: Option<RunEnd>,
    pub duration_ms: Option<f64>,
}

impl Run {
    pub fn timing(&self) -> RunTiming {
        RunTiming { id: self.id.clone(), end: self.end().cloned(), duration_ms: self.duration_ms() }
    }
}

/// What the controller does for the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Fetch the newest history page again: a saved row was missed (a gap in `seq`), or a run
    /// ended (its tool results are never sent live).
    SyncHistory,
    /// The rows changed: the saved copy is due.
    SaveCopy,
}

/// A message accepted while a run was busy, not yet answered (`chat.history` `pendingInputs`).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingInput {
    pub id: String,
    /// The run its `chat.send` started (its idempotency key), when the gateway names it.
    pub run_id: Option<String>,
    pub text: String,
    /// `pending`, `interrupted`, …
    pub status: String,
}

/// One conversation's transcript.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Transcript {
    pub session_key: String,
    pub rows: Vec<TranscriptRow>,
    pub has_more: bool,
    /// Runs seen in this conversation, in the order they started (ended ones stay, for their
    /// duration and outcome, until the conversation changes).
    pub runs: Vec<Run>,
    pub pending_inputs: Vec<PendingInput>,
    /// The newest saved `seq` known (for gap detection).
    newest_seq: u64,
    /// A history fetch is due or under way: gaps meanwhile need no second one.
    sync_due: bool,
    /// Counts changes to `rows` (a view copies them out only when it moved).
    pub rows_version: u64,
    /// Counts changes to `runs`.
    pub runs_version: u64,
    /// Counts live run events: a history page asked for at mark `m` knows nothing of a run
    /// whose events came after `m` ([`Transcript::history_since`]).
    pub event_mark: u64,
}

fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

impl Transcript {
    pub fn new(session_key: &str) -> Transcript {
        Transcript { session_key: session_key.to_string(), ..Transcript::default() }
    }

    /// Whether any run is going on.
    pub fn run_active(&self) -> bool {
        self.runs.iter().any(Run::is_active)
    }

    /// The ids of the runs going on.
    pub fn active_run_ids(&self) -> Vec<String> {
        self.runs.iter().filter(|r| r.is_active()).map(|r| r.id.clone()).collect()
    }

    pub fn run(&self, id: &str) -> Option<&Run> {
        self.runs.iter().find(|r| r.id == id)
    }

    fn run_mut(&mut self, id: &str) -> &mut Run {
        match self.runs.iter().position(|r| r.id == id) {
            Some(i) => &mut self.runs[i],
            None => {
                self.runs.push(Run::new(id));
                self.runs.last_mut().unwrap()
            }
        }
    }

    /// The live state of tool call `call_id`, in any run.
    pub fn tool(&self, call_id: &str) -> Option<&ToolActivity> {
        self.runs.iter().flat_map(|r| r.tools.iter()).find(|t| t.call_id == call_id)
    }

    /// Whether a saved row holds tool call `call_id` (its card is drawn there, not in the run).
    pub fn call_is_saved(&self, call_id: &str) -> bool {
        self.rows.iter().any(|r| r.tool_calls.iter().any(|c| c == call_id))
    }

    /// The newest page of history (`chat.history`): it replaces the rows it covers; rows that
    /// arrived live after it stay. `active` is `sessionInfo.activeRunIds`.
    pub fn history(&mut self, page: &Value) -> Vec<Effect> {
        self.history_since(page, u64::MAX)
    }

    /// A history page asked for when `event_mark` was `mark`: a run that sent events after that
    /// is newer than what the page knows, and its state stays as those events left it.
    pub fn history_since(&mut self, page: &Value, mark: u64) -> Vec<Effect> {
        self.rows_version += 1;
        self.runs_version += 1;
        let mut rows = page_rows(page);
        self.has_more = page.get("hasMore").and_then(Value::as_bool).unwrap_or(false);
        let page_newest = rows.iter().map(|r| r.seq).max().unwrap_or(0);
        let page_oldest = rows.iter().map(|r| r.seq).filter(|s| *s > 0).min().unwrap_or(0);
        // Older rows this page does not cover, that were loaded before (Load older), stay in
        // front; live rows newer than the page stay behind it; the saved copy's rows all go.
        let kept = std::mem::take(&mut self.rows);
        let (older, newer): (Vec<_>, Vec<_>) = kept
            .into_iter()
            .filter(|r| !r.from_saved_copy && !rows.iter().any(|x| x.key == r.key))
            .filter(|r| r.seq > 0 && (r.seq < page_oldest || r.seq > page_newest))
            .partition(|r| r.seq < page_oldest);
        let mut all = older;
        all.append(&mut rows);
        all.extend(newer);
        self.rows = all;
        self.newest_seq = self.rows.iter().map(|r| r.seq).max().unwrap_or(0);
        self.sync_due = false;
        // `{id, runId?, message, acceptedAt, state: queued | cancelled | interrupted}`; `message` is
        // the person's row as it will be saved.
        self.pending_inputs = page
            .get("pendingInputs")
            .and_then(|p| p.get("items"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| {
                let text = match i.get("message")? {
                    Value::String(s) => s.clone(),
                    m => crate::message_text(m),
                };
                Some(PendingInput {
                    id: str_of(i, "id").unwrap_or("").to_string(),
                    run_id: str_of(i, "runId").map(str::to_string),
                    text,
                    status: str_of(i, "state").or_else(|| str_of(i, "status")).unwrap_or("queued").to_string(),
                })
            })
            .collect();
        let saved_runs: Vec<&str> = self.rows.iter().filter(|r| r.role == "user").filter_map(|r| r.run_id.as_deref()).collect();
        self.pending_inputs.retain(|p| p.run_id.as_deref().is_none_or(|r| !saved_runs.contains(&r)));
        // Runs the gateway no longer calls active have ended (their end was missed while away).
        // `activeRunIds` is often null while a run goes on: only `hasActiveRun: false`, or a
        // list that leaves a run out, ends one, and only a run the page is not newer than.
        if let Some(info) = page.get("sessionInfo") {
            let has_active = info.get("hasActiveRun").and_then(Value::as_bool).unwrap_or(false);
            let active: Vec<&str> =
                info.get("activeRunIds").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            for r in self.runs.iter_mut().filter(|r| r.is_active() && r.last_event <= mark) {
                if !has_active || (!active.is_empty() && !active.contains(&r.id.as_str())) {
                    r.finish(RunEnd::Done, None);
                }
            }
            for id in active {
                self.run_mut(id);
            }
        }
        if let Some(flight) = page.get("inFlightRun").filter(|f| f.is_object()) {
            self.adopt_in_flight(flight);
        }
        self.settle_saved();
        vec![Effect::SaveCopy]
    }

    /// A reload in the middle of a run: `chat.history`'s `inFlightRun` (`{runId, text, startedAt?,
    /// events?}`): the text so far, and its stored `agent` events (its tools, preamble, phase)
    /// replayed as if they arrived live.
    fn adopt_in_flight(&mut self, flight: &Value) {
        let Some(id) = str_of(flight, "runId").map(str::to_string) else { return };
        let saved: Vec<String> = self
            .rows
            .iter()
            .filter(|r| r.role == "assistant" && r.run_id.as_deref() == Some(id.as_str()))
            .map(|r| r.text.clone())
            .collect();
        let run = self.run_mut(&id);
        if !run.is_active() {
            return;
        }
        if let Some(at) = flight.get("startedAt").and_then(Value::as_f64) {
            run.started_ms = Some(at);
        }
        if let Some(text) = str_of(flight, "text") {
            run.text = unsaved_part(text, &saved).to_string();
        }
        for event in flight.get("events").and_then(Value::as_array).into_iter().flatten() {
            if str_of(event, "runId").is_some_and(|r| r == id) {
                self.agent(event);
            }
        }
    }

    /// An older page (Load older): prepended, without rows already shown.
    pub fn older(&mut self, page: &Value) {
        self.rows_version += 1;
        let older = page_rows(page);
        self.has_more = page.get("hasMore").and_then(Value::as_bool).unwrap_or(false);
        let mut merged: Vec<TranscriptRow> = older.into_iter().filter(|o| !self.rows.iter().any(|x| x.key == o.key)).collect();
        merged.append(&mut self.rows);
        self.rows = merged;
    }

    /// This browser's saved copy, until the gateway answers.
    pub fn saved_copy(&mut self, messages: &[Value]) {
        self.rows_version += 1;
        self.rows = messages.iter().map(|m| TranscriptRow { from_saved_copy: true, ..TranscriptRow::from_message(m) }).collect();
    }

    /// A `session.message` event for this conversation.
    pub fn saved_row(&mut self, payload: &Value) -> Vec<Effect> {
        let Some(m) = payload.get("message").filter(|m| m.is_object()) else { return Vec::new() };
        let mut row = TranscriptRow::from_message(m);
        if row.seq == 0
            && let Some(seq) = payload.get("messageSeq").and_then(Value::as_u64)
        {
            row.seq = seq;
        }
        let mut effects = Vec::new();
        // The same row again (a steered follow-up's row is sent twice, the second copy naming
        // the run it steered): the later copy wins, in place.
        if let Some(same) = self.rows.iter_mut().find(|r| r.key == row.key) {
            *same = row;
            self.rows_version += 1;
            return effects;
        }
        // A row skipped: the gateway saved one it did not send (a tool's result).
        if row.seq > 0 && self.newest_seq > 0 && row.seq > self.newest_seq + 1 && !self.sync_due {
            self.sync_due = true;
            effects.push(Effect::SyncHistory);
        }
        let at = if row.seq > 0 {
            // After the last row that comes before it (rows without a seq stay where they are).
            self.rows
                .iter()
                .rposition(|r| r.seq > 0 && r.seq < row.seq)
                .map_or_else(|| if self.rows.iter().any(|r| r.seq > row.seq) { 0 } else { self.rows.len() }, |i| i + 1)
        } else {
            self.rows.len()
        };
        self.newest_seq = self.newest_seq.max(row.seq);
        // A message that waited for its turn is saved now: it no longer waits.
        if row.role == "user" {
            self.pending_inputs.retain(|p| p.run_id.is_none() || p.run_id != row.run_id);
        }
        // A reply that a `final` showed before it was saved, saved without its run's id.
        if row.role == "assistant" && row.run_id.is_none() {
            for run in self.runs.iter_mut().filter(|r| r.end().is_some()) {
                if run.unsaved_reply.as_ref().is_some_and(|m| crate::message_text(m).trim() == row.text.trim()) {
                    run.unsaved_reply = None;
                }
            }
        }
        self.rows.insert(at, row);
        self.rows_version += 1;
        self.runs_version += 1;
        self.settle_saved();
        effects.push(Effect::SaveCopy);
        effects
    }

    /// A saved row of a run ends the message it streamed: the stream stops showing it.
    fn settle_saved(&mut self) {
        for run in &mut self.runs {
            settle_run(run, &self.rows);
        }
    }

    /// A `chat` event for this conversation.
    pub fn chat(&mut self, p: &Value) -> Vec<Effect> {
        use protocol::chat::{ChatEvent, ChatEventState as State};
        let Some(event) = ChatEvent::read(p) else { return Vec::new() };
        let Some(id) = event.run_id.as_deref() else { return Vec::new() };
        self.runs_version += 1;
        let seq = event.seq.unwrap_or(0);
        let known = self.runs.iter().any(|r| r.id == id);
        // The empty `final` of a follow-up's own run: nothing to show.
        let message = event.message.as_ref().filter(|m| m.is_object());
        if !known && event.state == State::Final && message.is_none() {
            return Vec::new();
        }
        self.event_mark += 1;
        let mark = self.event_mark;
        let run = self.run_mut(id);
        run.last_event = mark;
        if seq > 0 && seq < run.chat_seq {
            return Vec::new();
        }
        run.chat_seq = run.chat_seq.max(seq);
        let mut effects = Vec::new();
        match event.state {
            State::Status => {
                if run.is_active()
                    && let Some(phase) = event.phase
                {
                    run.phase = RunPhase::Preparing(phase);
                }
            }
            State::Delta => {
                if !run.is_active() {
                    return effects;
                }
                let delta = event.delta_text.as_deref().unwrap_or("");
                let text = match message {
                    Some(m) => crate::message_text(m),
                    None if event.replace => delta.to_string(),
                    None => format!("{}{delta}", run.text),
                };
                run.text = unsaved_part(&text, &run.saved_texts).to_string();
                if matches!(run.phase, RunPhase::Preparing(_)) {
                    run.phase = RunPhase::Model;
                }
            }
            State::Final | State::Aborted | State::Error => {
                let end = match event.state {
                    State::Final => RunEnd::Done,
                    State::Aborted => RunEnd::Stopped,
                    _ => RunEnd::Failed(event.error_message.unwrap_or_else(|| "the run failed".to_string())),
                };
                // A failure's words count even after another end was seen.
                if let (RunEnd::Failed(_), Some(RunEnd::Done)) = (&end, run.end()) {
                    run.phase = RunPhase::Preparing(String::new());
                }
                if let Some(m) = message {
                    let text = crate::message_text(m);
                    let rest = unsaved_part(&text, &run.saved_texts);
                    if !rest.is_empty() {
                        run.unsaved_reply = Some(serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": rest}]}));
                    }
                } else if !run.text.is_empty() && event.state != State::Final {
                    run.unsaved_reply = Some(serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": run.text}]}));
                }
                run.text.clear();
                run.finish(end, None);
                effects.push(Effect::SyncHistory);
                self.sync_due = true;
            }
            State::Other => {}
        }
        // Only this run changed (every row-changing path settles all runs).
        if let Some(run) = self.runs.iter_mut().find(|r| r.id == id) {
            settle_run(run, &self.rows);
        }
        effects
    }

    /// An `agent` event for this conversation (with `caps: ["tool-events"]`).
    pub fn agent(&mut self, p: &Value) -> Vec<Effect> {
        let Some(id) = str_of(p, "runId") else { return Vec::new() };
        self.runs_version += 1;
        let seq = p.get("seq").and_then(Value::as_u64).unwrap_or(0);
        let stream = str_of(p, "stream").unwrap_or("");
        let empty = Value::Null;
        let data = p.get("data").unwrap_or(&empty);
        self.event_mark += 1;
        let mark = self.event_mark;
        let run = self.run_mut(id);
        run.last_event = mark;
        if seq > 0 && seq < run.agent_seq {
            return Vec::new();
        }
        run.agent_seq = run.agent_seq.max(seq);
        let ts = p.get("ts").and_then(Value::as_f64);
        match stream {
            // The gateway lost events of this run on its way here: the saved rows tell the rest.
            "error" if str_of(data, "reason") == Some("seq gap") => {
                if !self.sync_due {
                    self.sync_due = true;
                    return vec![Effect::SyncHistory];
                }
            }
            "run_status" => {
                if run.is_active()
                    && let Some(phase) = str_of(data, "phase")
                {
                    run.phase = RunPhase::Preparing(phase.to_string());
                }
            }
            "lifecycle" => match str_of(data, "phase").unwrap_or("") {
                "start" => {
                    run.started_ms = data.get("startedAt").and_then(Value::as_f64).or(ts);
                }
                "model" if data.get("provider").is_some_and(|p| !p.is_null()) && run.is_active() => run.phase = RunPhase::Model,
                "waiting-approval" if run.is_active() => run.phase = RunPhase::WaitingApproval,
                "approval-resolved" if run.is_active() => run.phase = RunPhase::Model,
                "finishing" if run.is_active() => run.phase = RunPhase::Finishing,
                "end" | "error" => {
                    if run.started_ms.is_none() {
                        run.started_ms = data.get("startedAt").and_then(Value::as_f64);
                    }
                    let ended = data.get("endedAt").and_then(Value::as_f64).or(ts);
                    let end = if data.get("aborted") == Some(&Value::Bool(true)) {
                        RunEnd::Stopped
                    } else if str_of(data, "phase") == Some("error") {
                        RunEnd::Failed(str_of(data, "error").unwrap_or("the run failed").to_string())
                    } else {
                        RunEnd::Done
                    };
                    if run.ended_ms.is_none() {
                        run.ended_ms = ended;
                    }
                    run.finish(end, ended);
                }
                _ => {}
            },
            "thinking" => {
                if let Some(t) = str_of(data, "text") {
                    run.thinking = t.to_string();
                } else if let Some(d) = str_of(data, "delta") {
                    run.thinking.push_str(d);
                }
                if run.is_active() {
                    run.phase = RunPhase::Model;
                }
            }
            "item" => {
                let kind = str_of(data, "kind").unwrap_or("");
                if kind == "preamble" {
                    if let Some(t) = str_of(data, "progressText") {
                        run.preamble = t.to_string();
                    }
                } else if let Some(call) = str_of(data, "toolCallId") {
                    let phase = str_of(data, "phase").unwrap_or("");
                    if run.tool_mut(call).is_none() {
                        run.tools.push(tool_from_item(data));
                    }
                    let t = run.tool_mut(call).unwrap();
                    if let Some(title) = str_of(data, "title") {
                        t.title = title.to_string();
                    }
                    if phase == "end" {
                        t.status = match str_of(data, "status") {
                            Some("failed" | "error" | "cancelled") => ToolStatus::Failed,
                            _ if data.get("isError") == Some(&Value::Bool(true)) => ToolStatus::Failed,
                            _ => ToolStatus::Done,
                        };
                        if let (Some(a), Some(b)) =
                            (data.get("startedAt").and_then(Value::as_f64), data.get("endedAt").and_then(Value::as_f64))
                            && t.duration_ms.is_none()
                        {
                            t.duration_ms = Some((b - a).max(0.0) as u64);
                        }
                    }
                    let title = t.command.clone().unwrap_or_else(|| t.title.clone());
                    let running = t.status == ToolStatus::Running;
                    let asks = matches!(t.name.as_str(), "ask_user" | "secrets");
                    if run.is_active() && running && asks {
                        run.phase = RunPhase::WaitingAnswer;
                    } else if run.is_active() && running && !matches!(run.phase, RunPhase::WaitingApproval | RunPhase::WaitingAnswer) {
                        run.phase = RunPhase::Tool(title);
                    } else if run.is_active() && !running && run.tools.iter().all(|t| t.status != ToolStatus::Running) {
                        run.phase = RunPhase::Model;
                    }
                }
            }
            "tool" => {
                if let Some(call) = str_of(data, "toolCallId") {
                    if run.tool_mut(call).is_none() {
                        run.tools.push(tool_from_item(data));
                    }
                    let t = run.tool_mut(call).unwrap();
                    match str_of(data, "phase") {
                        Some("update") => {
                            let partial = data.get("partialResult").map(result_text).unwrap_or_default();
                            if !partial.is_empty() && t.command.is_some() {
                                t.output.set(&partial);
                            }
                        }
                        Some("result") => {
                            t.status = if data.get("isError") == Some(&Value::Bool(true)) { ToolStatus::Failed } else { ToolStatus::Done };
                            let details = data.get("result").and_then(|r| r.get("details"));
                            if let Some(code) = details.and_then(|d| d.get("exitCode")).and_then(Value::as_i64) {
                                t.exit_code = Some(code);
                            }
                            if let Some(ms) = details.and_then(|d| d.get("durationMs")).and_then(Value::as_u64) {
                                t.duration_ms = Some(ms);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "command_output" => {
                if let Some(call) = str_of(data, "toolCallId") {
                    if run.tool_mut(call).is_none() {
                        run.tools.push(tool_from_item(data));
                    }
                    let t = run.tool_mut(call).unwrap();
                    if let Some(out) = str_of(data, "output") {
                        t.output.set(out);
                    }
                    if t.command.is_none() {
                        t.command = str_of(data, "title").map(|s| s.strip_prefix("command ").unwrap_or(s).to_string());
                    }
                    if str_of(data, "phase") == Some("end") {
                        t.exit_code = data.get("exitCode").and_then(Value::as_i64).or(t.exit_code);
                        t.duration_ms = data.get("durationMs").and_then(Value::as_u64).or(t.duration_ms);
                        t.status = match (str_of(data, "status"), t.exit_code) {
                            (Some("failed" | "error"), _) => ToolStatus::Failed,
                            (_, Some(c)) if c != 0 => ToolStatus::Failed,
                            _ => ToolStatus::Done,
                        };
                    }
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// The rows a person reads, in order ([`shown_rows`]).
    pub fn shown_rows(&self) -> Vec<&TranscriptRow> {
        shown_rows(&self.rows)
    }

    /// Each tool call's result, by call id ([`results`]).
    pub fn results(&self) -> HashMap<String, ToolResult> {
        results(&self.rows)
    }

    /// The real tool behind call `parent` ([`nested_call`]).
    pub fn nested_call(&self, parent: &str) -> Option<(String, Value)> {
        nested_call(&self.rows, parent)
    }

    /// How long each run took ([`run_durations`]).
    pub fn run_durations(&self) -> HashMap<String, (RunEnd, f64)> {
        run_durations(&self.rows, &self.runs.iter().map(Run::timing).collect::<Vec<_>>())
    }
}

/// A history page's rows, each once: the real gateway's page can hold one row twice (a run's
/// tool-call row, seen on 2026.9.6); the later copy wins, in the first one's place.
fn page_rows(page: &Value) -> Vec<TranscriptRow> {
    let mut rows: Vec<TranscriptRow> = Vec::new();
    for m in page.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        let row = TranscriptRow::from_message(m);
        match rows.iter_mut().find(|r| r.key == row.key) {
            Some(same) => *same = row,
            None => rows.push(row),
        }
    }
    rows
}

/// The rows a person reads, in order: nested tool rows whose `tool_call` is on the page are
/// drawn by that call's card, and tool results by their call's card.
pub fn shown_rows(rows: &[TranscriptRow]) -> Vec<&TranscriptRow> {
    let calls: std::collections::HashSet<&str> = rows.iter().flat_map(|r| r.tool_calls.iter().map(String::as_str)).collect();
    rows.iter()
        .filter(|r| {
            let result_shown = r.tool_result.as_ref().is_some_and(|t| calls.contains(t.call_id.as_str()));
            let nested_shown = r.is_nested_tool() && r.parent_call.as_deref().is_some_and(|p| calls.contains(p));
            !result_shown && !nested_shown
        })
        .collect()
}

/// Each tool call's result, by call id: a result row's, and for a `tool_call` that reached
/// another tool, that tool's own result (from its nested row) rather than the wrapper's.
pub fn results(rows: &[TranscriptRow]) -> HashMap<String, ToolResult> {
    let mut out: HashMap<String, ToolResult> = HashMap::new();
    for r in rows {
        if let Some(t) = &r.tool_result {
            out.entry(t.call_id.clone()).or_insert_with(|| t.clone());
        }
    }
    for r in rows.iter().filter(|r| r.is_nested_tool()) {
        for nested in crate::parts::nested_results(&r.raw) {
            if let Some(parent) = r.parent_call.clone() {
                out.insert(parent, nested.clone());
            }
            out.insert(nested.call_id.clone(), nested);
        }
    }
    out
}

/// The real tool a nested row names for call `parent` (the tool behind a `tool_call`), with
/// its arguments.
pub fn nested_call(rows: &[TranscriptRow], parent: &str) -> Option<(String, Value)> {
    rows.iter().filter(|r| r.is_nested_tool() && r.parent_call.as_deref() == Some(parent)).find_map(|r| {
        crate::parts::parts(&r.raw).into_iter().find_map(|p| match p {
            Part::ToolCall { name, arguments, .. } => Some((name, arguments)),
            _ => None,
        })
    })
}

/// How long each run took, by the key of its last saved row: from the live run when it was
/// seen (`runs`), else from its rows (the person's row to the run's last).
pub fn run_durations(rows: &[TranscriptRow], runs: &[RunTiming]) -> HashMap<String, (RunEnd, f64)> {
    let mut last: HashMap<&str, (&TranscriptRow, f64)> = HashMap::new();
    for r in rows {
        let Some(run) = r.run_id.as_deref() else { continue };
        // The footer goes under a row a person sees: not a tool's result or nested row (drawn
        // inside their call's card).
        if r.tool_result.is_some() || r.is_nested_tool() {
            continue;
        }
        let first = last.get(run).map_or(r.timestamp, |(_, f)| *f);
        last.insert(run, (r, first.min(r.timestamp)));
    }
    let mut out = HashMap::new();
    for (run, (row, first)) in last {
        if row.role == "user" {
            continue;
        }
        match runs.iter().find(|r| r.id == run) {
            Some(RunTiming { end: None, .. }) => {}
            Some(RunTiming { end: Some(end), duration_ms, .. }) => {
                out.insert(row.key.clone(), (end.clone(), duration_ms.unwrap_or(row.timestamp - first)));
            }
            None if first > 0.0 && row.timestamp >= first => {
                let end = if row.note.as_deref() == Some("aborted") { RunEnd::Stopped } else { RunEnd::Done };
                out.insert(row.key.clone(), (end, row.timestamp - first));
            }
            None => {}
        }
    }
    out
}

/// What run `run` still shows once its saved rows (`rows`) are in: a streamed message a row
/// shows is no longer streamed; an ended run keeps only its tools' end (status, exit code,
/// duration), as their output is in the saved results.
fn settle_run(run: &mut Run, rows: &[TranscriptRow]) {
    let saved: Vec<&str> =
        rows.iter().filter(|r| r.role == "assistant" && r.run_id.as_deref() == Some(run.id.as_str())).map(|r| r.text.as_str()).collect();
    if saved.is_empty() {
        return;
    }
    if run.saved_texts.len() != saved.len() {
        run.saved_texts = saved.iter().map(|t| t.to_string()).collect();
    }
    run.text = unsaved_part(&run.text, &run.saved_texts).to_string();
    if run.unsaved_reply.as_ref().is_some_and(|m| unsaved_part(&crate::message_text(m), &run.saved_texts).is_empty()) {
        run.unsaved_reply = None;
    }
    if run.end().is_some() {
        run.unsaved_reply = None;
        run.text.clear();
        run.thinking.clear();
        run.preamble.clear();
        for t in &mut run.tools {
            t.output = Output::default();
        }
    }
}

/// What of a run's streamed text no saved row shows yet: the gateway streams the run's messages
/// as one text, joined by blank lines, and trims what the saved rows keep (trailing spaces).
pub fn unsaved_part<'a>(streamed: &'a str, saved: &[String]) -> &'a str {
    let mut rest = streamed.trim_start();
    for s in saved {
        let s = s.trim();
        if !s.is_empty() && rest.starts_with(s) {
            rest = rest[s.len()..].trim_start();
        }
    }
    rest
}

fn result_text(v: &Value) -> String {
    v.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

fn tool_from_item(data: &Value) -> ToolActivity {
    let name = str_of(data, "name").unwrap_or("tool").to_string();
    let command = if name == "exec" || name == "bash" || data.get("commandBearing") == Some(&Value::Bool(true)) {
        str_of(data, "meta").map(str::to_string).or_else(|| data.get("args").and_then(|a| str_of(a, "command")).map(str::to_string))
    } else {
        None
    };
    ToolActivity {
        call_id: str_of(data, "toolCallId").unwrap_or("").to_string(),
        parent: str_of(data, "parentToolCallId").map(str::to_string),
        title: str_of(data, "title").map(str::to_string).unwrap_or_else(|| name.clone()),
        name,
        command,
        status: ToolStatus::Running,
        output: Output::default(),
        exit_code: None,
        duration_ms: None,
        started_ms: data.get("startedAt").and_then(Value::as_f64),
    }
}

/// A duration in words: `0.4 s`, `12 s`, `3 min 5 s`.
pub fn duration_words(ms: f64) -> String {
    // Whole numbers only: no float formatting is linked for this.
    let tenths = (ms.max(0.0) / 100.0).round() as u64;
    if tenths < 100 {
        format!("{}.{} s", tenths / 10, tenths % 10)
    } else if tenths < 600 {
        format!("{} s", (tenths + 5) / 10)
    } else {
        let total = (tenths + 5) / 10;
        format!("{} min {} s", total / 60, total % 60)
    }
}
