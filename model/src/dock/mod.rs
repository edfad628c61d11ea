//! The question dock's state machine: which blocking requests are pending, which one is
//! shown, what happened to the ones that left, and how to reconcile all of it with the
//! gateway after events, reconnects, reloads and lost acknowledgements.
//!
//! Nothing here ever answers for the person: expiry only marks a request unanswerable.

use std::collections::{HashMap, HashSet};

use protocol::approval::{Approval, ApprovalResolution, ApprovalSummary, Decision};
use protocol::error::{ErrorShape, reason};
use protocol::question::{Question, QuestionAnswers, QuestionRecord, QuestionResolveParams, QuestionStatus, validate_questions};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::draft::{Incomplete, QuestionDraft};

/// A record that breaks the schema: shown as a readable notice with its raw text.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidRecord {
    pub id: Option<String>,
    pub problem: String,
    pub raw: String,
}

/// Reads a `question.requested` payload (or a listed record) and checks it the way the
/// gateway checks a request.
pub fn read_record(v: &Value) -> Result<QuestionRecord, InvalidRecord> {
    let id = v.get("id").and_then(Value::as_str).map(str::to_string);
    let invalid =
        |problem: String| InvalidRecord { id: id.clone(), problem, raw: protocol::frame::truncate(&protocol::frame::compact(v), 4000) };
    let record: QuestionRecord =
        serde_json::from_value(v.clone()).map_err(|e| invalid(format!("the question does not match the protocol: {e}")))?;
    validate_questions(&record.questions).map_err(|e| invalid(format!("the question breaks the rules: {e}")))?;
    Ok(record)
}

/// Where a pending request stands locally.
#[derive(Debug, Clone, PartialEq)]
pub enum LocalState {
    Open,
    /// `question.resolve` is in flight; `answers` is `None` for Skip.
    Submitting {
        answers: Option<QuestionAnswers>,
    },
    /// The connection dropped after the answer was sent; reconciled on reconnect.
    Unconfirmed {
        answers: Option<QuestionAnswers>,
    },
    /// The last attempt failed; the draft is intact.
    Failed {
        message: String,
    },
}

/// Where a pending approval stands locally. A decision is sent once and never queued: there
/// is no state that sends it later.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalState {
    Open,
    /// Sent; waiting for the gateway's answer.
    Deciding(Decision),
    /// The connection dropped after sending: the gateway is asked how it ended on reconnect.
    Unconfirmed(Decision),
    /// Nothing was decided; the reason is shown and the person may decide again.
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Valid {
        record: QuestionRecord,
        state: LocalState,
    },
    Invalid(InvalidRecord),
    /// An exec, plugin or system-agent approval: it blocks the agent like a question.
    Approval {
        approval: Approval,
        state: ApprovalState,
    },
}

/// Async questions share the dock under ids with this prefix.
pub const ASYNC_PREFIX: &str = "async:";

impl Entry {
    /// Async questions do not block the agent or the composer.
    pub fn is_async(&self) -> bool {
        self.id().starts_with(ASYNC_PREFIX)
    }

    pub fn id(&self) -> &str {
        match self {
            Entry::Valid { record, .. } => &record.id,
            Entry::Invalid(i) => i.id.as_deref().unwrap_or(""),
            Entry::Approval { approval, .. } => &approval.id,
        }
    }

    /// A blocking question (not an approval, not async): a plain chat reply may answer it.
    pub fn is_blocking_question(&self) -> bool {
        !matches!(self, Entry::Approval { .. }) && !self.is_async()
    }

    /// Whether a plain chat reply can answer it: the gateway claims a reply only for a question
    /// that a run still going (`active_runs`, of its conversation) asked, and never for a secret.
    /// A question an attached MCP client or `question.request` raised carries no run id.
    pub fn plain_reply_answers(&self, active_runs: &[String]) -> bool {
        match self {
            Entry::Valid { record, .. } if self.is_blocking_question() => {
                record.run_id.as_ref().is_some_and(|r| active_runs.contains(r)) && !record.questions.iter().any(|q| q.secret())
            }
            _ => false,
        }
    }

    /// The conversation it belongs to, if it names one.
    pub fn session_key(&self) -> Option<&str> {
        match self {
            Entry::Valid { record, .. } => record.session_key.as_deref(),
            Entry::Invalid(_) => None,
            Entry::Approval { approval, .. } => approval.session_key.as_deref(),
        }
    }

    /// When it stops being answerable (`i64::MAX` for never).
    pub fn expires_at_ms(&self) -> Option<i64> {
        match self {
            Entry::Valid { record, .. } => Some(record.expires_at_ms),
            Entry::Invalid(_) => None,
            Entry::Approval { approval, .. } => Some(approval.expires_at_ms),
        }
    }
}

/// How a request left the dock. Shown in the conversation with the full wording.
/// Stored as `{"kind": …, "answers": …}` through [`OutcomeStored`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "OutcomeStored", into = "OutcomeStored")]
pub enum Outcome {
    Answered {
        answers: QuestionAnswers,
    },
    AnsweredElsewhere {
        answers: QuestionAnswers,
    },
    Skipped,
    SkippedElsewhere,
    Expired,
    Unavailable,
    /// Approvals: decided here.
    AllowedOnce,
    AlwaysAllowed,
    Denied,
    /// Approvals: another client (or person) decided first.
    DecidedElsewhere {
        decision: Decision,
        by: Option<String>,
    },
    /// Approvals: withdrawn without a decision (the run stopped, the gateway restarted).
    Cancelled,
}

impl Outcome {
    pub fn label(&self) -> String {
        match self {
            Outcome::Answered { .. } => "Answered".into(),
            Outcome::AnsweredElsewhere { .. } => "Answered elsewhere".into(),
            Outcome::Skipped => "Skipped".into(),
            Outcome::SkippedElsewhere => "Skipped elsewhere".into(),
            Outcome::Expired => "Expired".into(),
            Outcome::Unavailable => "Unavailable".into(),
            Outcome::AllowedOnce => "Allowed once".into(),
            Outcome::AlwaysAllowed => "Always allowed".into(),
            Outcome::Denied => "Denied".into(),
            Outcome::DecidedElsewhere { decision, by: Some(by) } => format!("Decided elsewhere by {by}: {}", decision.past()),
            Outcome::DecidedElsewhere { decision, by: None } => format!("Decided elsewhere: {}", decision.past()),
            Outcome::Cancelled => "Cancelled".into(),
        }
    }

    /// The outcome of a decision made here.
    pub fn decided(d: Decision) -> Outcome {
        match d {
            Decision::AllowOnce => Outcome::AllowedOnce,
            Decision::AllowAlways => Outcome::AlwaysAllowed,
            Decision::Deny => Outcome::Denied,
        }
    }
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum OutcomeKind {
    Answered,
    AnsweredElsewhere,
    Skipped,
    SkippedElsewhere,
    Expired,
    Unavailable,
    AllowedOnce,
    AlwaysAllowed,
    Denied,
    DecidedElsewhere,
    Cancelled,
}

/// An [`Outcome`] as stored: written out rather than as an internally tagged enum, which makes
/// serde buffer it through its generic `Content` tree (several KB of wasm). Same JSON.
#[derive(Serialize, Deserialize)]
struct OutcomeStored {
    kind: OutcomeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answers: Option<QuestionAnswers>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    decision: Option<Decision>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    by: Option<String>,
}

impl From<OutcomeStored> for Outcome {
    fn from(s: OutcomeStored) -> Outcome {
        match s.kind {
            OutcomeKind::Answered => Outcome::Answered { answers: s.answers.unwrap_or_default() },
            OutcomeKind::AnsweredElsewhere => Outcome::AnsweredElsewhere { answers: s.answers.unwrap_or_default() },
            OutcomeKind::Skipped => Outcome::Skipped,
            OutcomeKind::SkippedElsewhere => Outcome::SkippedElsewhere,
            OutcomeKind::Expired => Outcome::Expired,
            OutcomeKind::Unavailable => Outcome::Unavailable,
            OutcomeKind::AllowedOnce => Outcome::AllowedOnce,
            OutcomeKind::AlwaysAllowed => Outcome::AlwaysAllowed,
            OutcomeKind::Denied => Outcome::Denied,
            OutcomeKind::DecidedElsewhere => Outcome::DecidedElsewhere { decision: s.decision.unwrap_or(Decision::Deny), by: s.by },
            OutcomeKind::Cancelled => Outcome::Cancelled,
        }
    }
}

impl From<Outcome> for OutcomeStored {
    fn from(o: Outcome) -> OutcomeStored {
        let (kind, answers) = match o {
            Outcome::Answered { answers } => (OutcomeKind::Answered, Some(answers)),
            Outcome::AnsweredElsewhere { answers } => (OutcomeKind::AnsweredElsewhere, Some(answers)),
            Outcome::Skipped => (OutcomeKind::Skipped, None),
            Outcome::SkippedElsewhere => (OutcomeKind::SkippedElsewhere, None),
            Outcome::Expired => (OutcomeKind::Expired, None),
            Outcome::Unavailable => (OutcomeKind::Unavailable, None),
            Outcome::AllowedOnce => (OutcomeKind::AllowedOnce, None),
            Outcome::AlwaysAllowed => (OutcomeKind::AlwaysAllowed, None),
            Outcome::Denied => (OutcomeKind::Denied, None),
            Outcome::Cancelled => (OutcomeKind::Cancelled, None),
            Outcome::DecidedElsewhere { decision, by } => {
                return OutcomeStored { kind: OutcomeKind::DecidedElsewhere, answers: None, decision: Some(decision), by };
            }
        };
        OutcomeStored { kind, answers, decision: None, by: None }
    }
}

/// What a receipt shows for an answer to a secret question: never the value.
pub const MASKED_ANSWER: &str = "•••••• (secret, not kept)";

/// `answers` as a receipt keeps them (receipts are stored): an answer to a secret question is
/// masked, and an echoed answer that looks like a credential is replaced by what it looked like.
pub fn masked_answers(questions: &[Question], mut answers: QuestionAnswers) -> QuestionAnswers {
    for (qid, values) in answers.answers.iter_mut() {
        let secret = questions.iter().any(|q| &q.question_id == qid && q.secret());
        for v in values.iter_mut() {
            if secret {
                *v = MASKED_ANSWER.to_string();
            } else if let Some(found) = crate::credential::detect(v) {
                *v = format!("(not kept: it looked like {}, {})", found.kind.describe(), found.preview);
            }
        }
    }
    answers
}

impl Outcome {
    /// The outcome as a receipt keeps it ([`masked_answers`]).
    pub fn masked(self, questions: &[Question]) -> Outcome {
        match self {
            Outcome::Answered { answers } => Outcome::Answered { answers: masked_answers(questions, answers) },
            Outcome::AnsweredElsewhere { answers } => Outcome::AnsweredElsewhere { answers: masked_answers(questions, answers) },
            other => other,
        }
    }
}

/// The compact summary a resolved request leaves in the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    pub id: String,
    pub questions: Vec<Question>,
    pub outcome: Outcome,
    pub at_ms: f64,
    /// Text the person typed but could not send (expired, skipped elsewhere): copyable.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unsent_text: String,
    /// The person typed an answer that could not be sent, and it looked like a credential: it
    /// is not kept in the receipt (receipts are stored), only this mark that it existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsent_held: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// For an approval: what was asked (the command or title), instead of `questions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalSummary>,
}

impl Receipt {
    /// Oldest first: the order receipts are kept and shown in. One named comparison for every
    /// place that sorts them, so the browser build carries one copy of the sort.
    pub fn by_time(a: &Receipt, b: &Receipt) -> std::cmp::Ordering {
        a.at_ms.total_cmp(&b.at_ms)
    }
}

/// What the glue should do after a transition.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Call `question.get` for this id now.
    Get(String),
    /// Call `question.get` again after a delay (recovery retries: 1, 2, 4 s).
    GetAfter(String, u64),
    /// Say this in the polite live region.
    Announce(String),
    /// The request left the dock: its draft can go.
    DropDraft(String),
    /// The request left the dock on the word of an event: keep its typed text in the receipt,
    /// but keep the draft too until a listing confirms the request is closed.
    ParkDraft(String),
    /// Store this receipt.
    SaveReceipt(Receipt),
    /// Forget this stored receipt: the gateway says the request is still pending.
    DropReceipt(String),
    /// Ask the gateway how this approval stands (`approval.get`).
    GetApproval(String),
    /// The same after a delay (recovery retries).
    GetApprovalAfter(String, u64),
}

/// The retry delays of `question.get` during recovery.
pub const GET_RETRY_MS: [u64; 3] = [1_000, 2_000, 4_000];

#[derive(Debug, Default, Clone)]
pub struct Dock {
    /// Pending requests in arrival order.
    pub entries: Vec<Entry>,
    pub current: Option<String>,
    pub expanded: bool,
    /// Summaries of requests that left, oldest first.
    pub receipts: Vec<Receipt>,
    /// Ids that are resolved: a later listing never brings them back.
    tombstones: HashSet<String>,
    /// Resolutions that arrived before their request (kept, and applied on arrival).
    early: HashMap<String, (QuestionStatus, Option<QuestionAnswers>)>,
    /// Approval resolutions that arrived before their request.
    early_approvals: HashMap<String, ApprovalResolution>,
    get_attempts: HashMap<String, usize>,
    /// Counts resolutions taken from `question.resolved` events ...
    resolution_clock: u64,
    /// ... and remembers when each id was closed that way. An event can be a lie (a broken
    /// or replayed frame); a listing asked for after it is the truth.
    closed_by_event: HashMap<String, u64>,
}

/// What the gateway answered to a `question.get` or `approval.get`.
#[derive(Debug, Clone, Copy)]
pub enum Lookup<'a> {
    /// Its payload.
    Found(&'a Value),
    /// The gateway does not know the id (`QUESTION_NOT_FOUND`, `APPROVAL_NOT_FOUND`).
    Unknown,
    /// The call failed for another reason, in these words: it is tried again.
    Failed(&'a str),
}

impl Dock {
    pub fn new() -> Self {
        Dock { expanded: true, ..Default::default() }
    }

    /// Restores receipts saved earlier (they also tombstone their ids).
    pub fn restore_receipts(&mut self, mut receipts: Vec<Receipt>) {
        crate::order::sort_by(&mut receipts, Receipt::by_time);
        for mut r in receipts {
            // Saved by an earlier build, perhaps with an answer it should not have kept.
            r.outcome = r.outcome.masked(&r.questions);
            self.tombstones.insert(r.id.clone());
            if matches!(r.outcome, Outcome::AnsweredElsewhere { .. } | Outcome::SkippedElsewhere) {
                // Closed on an event's word before the reload: any listing may correct it.
                self.closed_by_event.entry(r.id.clone()).or_insert(0);
            }
            self.entries.retain(|e| e.id() != r.id);
            if !self.receipts.iter().any(|x| x.id == r.id) {
                self.receipts.push(r);
            }
        }
        self.fix_current();
    }

    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id() == id)
    }

    pub fn record(&self, id: &str) -> Option<&QuestionRecord> {
        match self.entry(id)? {
            Entry::Valid { record, .. } => Some(record),
            Entry::Invalid(_) | Entry::Approval { .. } => None,
        }
    }

    pub fn state(&self, id: &str) -> Option<&LocalState> {
        match self.entry(id)? {
            Entry::Valid { state, .. } => Some(state),
            Entry::Invalid(_) | Entry::Approval { .. } => None,
        }
    }

    fn set_state(&mut self, id: &str, new: LocalState) {
        for e in &mut self.entries {
            if let Entry::Valid { record, state } = e {
                if record.id == id {
                    *state = new;
                    return;
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn fix_current(&mut self) {
        let valid = self.current.as_deref().is_some_and(|c| self.entries.iter().any(|e| e.id() == c));
        if !valid {
            let left = self.current.is_some();
            self.current = self.entries.first().map(|e| e.id().to_string());
            // The request the person was looking at left (answered, skipped, decided, closed
            // elsewhere): an approval next in line is not drawn where their pointer is, ready
            // for a click meant for what left. The collapsed bar says it waits.
            if left && self.expanded && matches!(self.entries.first(), Some(Entry::Approval { .. })) {
                self.expanded = false;
            }
        }
    }

    /// How many approvals wait (the collapsed bar says so).
    pub fn approvals_waiting(&self) -> usize {
        self.entries.iter().filter(|e| matches!(e, Entry::Approval { .. })).count()
    }

    pub fn select(&mut self, id: &str) {
        if self.entries.iter().any(|e| e.id() == id) {
            self.current = Some(id.to_string());
        }
    }

    /// A request arrived (`question.requested`, or a listed record).
    ///
    /// A new blocking request takes priority and is shown, unless the person is typing (in
    /// the dock or the composer): then it waits behind the arrows or in the collapsed bar and
    /// is announced, and nothing they typed moves.
    pub fn requested(&mut self, payload: &Value, typing_in_dock: bool) -> Vec<Effect> {
        self.arrive(payload, typing_in_dock, false)
    }

    /// `listing`: the record comes from a (re)connect listing, not a new arrival: it is
    /// added quietly and the dock keeps its expanded state.
    fn arrive(&mut self, payload: &Value, typing_in_dock: bool, listing: bool) -> Vec<Effect> {
        let entry = match read_record(payload) {
            Ok(record) => {
                if self.tombstones.contains(&record.id) || record.status != QuestionStatus::Pending {
                    return Vec::new();
                }
                if let Some((status, answers)) = self.early.remove(&record.id) {
                    // Its resolution came first: never show it as answerable.
                    return self.finish_from_gateway(record, status, answers);
                }
                Entry::Valid { record, state: LocalState::Open }
            }
            Err(invalid) => Entry::Invalid(invalid),
        };
        self.place(entry, typing_in_dock, listing)
    }

    /// Puts a pending request in the dock, or refreshes the one it already has (keeping its
    /// local state). The priority rules are the same for questions and approvals.
    fn place(&mut self, entry: Entry, typing_in_dock: bool, listing: bool) -> Vec<Effect> {
        let mut fx = Vec::new();
        let id = entry.id().to_string();
        if let Some(existing) = self.entries.iter_mut().find(|e| e.id() == id) {
            // Already known: take the newer record, keep the local state.
            match (&mut *existing, entry) {
                (Entry::Valid { record: old, .. }, Entry::Valid { record: new, .. }) => *old = new,
                (Entry::Approval { approval: old, .. }, Entry::Approval { approval: new, .. }) => *old = new,
                _ => {}
            }
            return fx;
        }
        let blocking = !entry.is_async();
        let approval = matches!(entry, Entry::Approval { .. });
        self.entries.push(entry);
        let n = self.entries.len();
        if listing {
            // Async questions never stand in front of a blocking one: after a reload they may be
            // read from the transcript before the listing comes, and the dock they left
            // collapsed opens for the blocking request.
            let showing_async = self.current.as_deref().is_some_and(|c| self.entries.iter().any(|e| e.id() == c && e.is_async()));
            if self.current.is_none() || (showing_async && blocking) {
                self.current = Some(id);
                if showing_async {
                    self.expanded = true;
                }
            }
            return fx;
        }
        let what = if approval { "approval" } else { "question" };
        if typing_in_dock && self.current.is_some() {
            fx.push(Effect::Announce(format!("A new {what} request arrived. {n} requests are waiting; use the request arrows to see it.")));
        } else if typing_in_dock {
            // Typing in the composer: the request waits in the collapsed bar instead of
            // taking the composer away mid-sentence.
            self.current = Some(id);
            self.expanded = false;
            fx.push(Effect::Announce(format!("The agent is waiting for your {what}; it waits above the composer.")));
        } else {
            self.current = Some(id);
            // A blocking request is shown: it takes the composer's place.
            self.expanded = true;
            let asks = if approval { "The agent asks for your approval" } else { "The agent is asking a question" };
            fx.push(Effect::Announce(if n == 1 { format!("{asks}.") } else { format!("{asks} ({n} waiting).") }));
        }
        fx
    }

    /// Whether pending request `id` blocks the agent (shown, it takes the composer's place).
    pub fn blocks(&self, id: &str) -> bool {
        self.entry(id).is_some_and(|e| !e.is_async())
    }

    /// Makes the async entries exactly `wanted` (records with `ASYNC_PREFIX` ids). New ones
    /// arrive quietly: no focus, no expanding, never in front of a blocking question.
    pub fn sync_async(&mut self, wanted: Vec<QuestionRecord>) -> Vec<Effect> {
        let was_empty = self.entries.is_empty();
        self.entries.retain(|e| !e.is_async() || wanted.iter().any(|w| w.id == e.id()));
        let mut added = 0;
        for record in wanted {
            match self.entries.iter_mut().find(|e| e.id() == record.id) {
                Some(Entry::Valid { record: old, .. }) => *old = record,
                Some(Entry::Invalid(_) | Entry::Approval { .. }) => {}
                None => {
                    self.entries.push(Entry::Valid { record, state: LocalState::Open });
                    added += 1;
                }
            }
        }
        if was_empty && added > 0 {
            self.expanded = false;
        }
        self.fix_current();
        let pending = self.entries.iter().filter(|e| e.is_async()).count();
        if added > 0 {
            vec![Effect::Announce(format!("The agent asked a question without stopping its work ({pending} unanswered)."))]
        } else {
            vec![]
        }
    }

    /// The pending records after a (re)connect. Listed records are shown at once; known
    /// ids missing from the list are reconciled with `question.get`.
    pub fn listed(&mut self, records: &[Value]) -> Vec<Effect> {
        self.listed_since(records, 0)
    }

    /// The mark to pass to [`Dock::listed_since`] for a `question.list` sent now.
    pub fn list_mark(&self) -> u64 {
        self.resolution_clock
    }

    /// `question.list`, sent when [`Dock::list_mark`] returned `mark`. A request the list
    /// still shows as pending, closed by an event received before the list was asked for,
    /// was never closed: it comes back (its receipt goes). A listing asked for before the
    /// event is stale and brings nothing back.
    pub fn listed_since(&mut self, records: &[Value], mark: u64) -> Vec<Effect> {
        let mut fx = Vec::new();
        // `question.list` holds the pending requests only.
        let listed: HashSet<String> = records.iter().filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_string)).collect();
        let mut due: Vec<String> = self.closed_by_event.iter().filter(|(_, at)| **at <= mark).map(|(id, _)| id.clone()).collect();
        // By id: the map's order is arbitrary, the effects' order is not.
        due.sort_unstable();
        for id in due {
            self.closed_by_event.remove(&id);
            if listed.contains(&id) {
                // The event was wrong: the gateway still has it open. It arrives again below.
                self.tombstones.remove(&id);
                self.early.remove(&id);
                self.receipts.retain(|x| x.id != id);
                fx.push(Effect::DropReceipt(id));
                fx.push(Effect::Announce("A question the gateway still has open is back.".into()));
            } else {
                // The closure was real: the parked draft can go.
                fx.push(Effect::DropDraft(id));
            }
        }
        for r in records {
            fx.extend(self.arrive(r, false, true));
        }
        for e in &mut self.entries {
            if let Entry::Valid { record, state } = e {
                if record.id.starts_with(ASYNC_PREFIX) {
                    continue;
                }
                if listed.contains(&record.id) {
                    if let LocalState::Unconfirmed { .. } = state {
                        // Still pending: the answer never landed. Say so; the draft is intact.
                        *state = LocalState::Failed {
                            message: "The connection dropped before the gateway took the answer. Your answer is kept; submit again.".into(),
                        };
                    }
                } else {
                    fx.push(Effect::Get(record.id.clone()));
                }
            }
        }
        self.fix_current();
        fx
    }

    /// `question.resolved` from the gateway.
    pub fn resolved(&mut self, payload: &Value) -> Vec<Effect> {
        let Some(id) = payload.get("id").and_then(Value::as_str) else { return vec![] };
        let status: QuestionStatus = match payload.get("status").cloned().map(serde_json::from_value) {
            Some(Ok(s)) => s,
            _ => return vec![],
        };
        let answers: Option<QuestionAnswers> = payload.get("answers").cloned().and_then(|a| serde_json::from_value(a).ok());
        if status != QuestionStatus::Pending && !id.starts_with(ASYNC_PREFIX) && (self.entry(id).is_some() || !self.tombstones.contains(id))
        {
            self.resolution_clock += 1;
            self.closed_by_event.insert(id.to_string(), self.resolution_clock);
        }
        match self.record(id).cloned() {
            Some(record) => self.finish_from_gateway(record, status, answers),
            None => {
                if !self.tombstones.contains(id) && self.entry(id).is_none() {
                    self.early.insert(id.to_string(), (status, answers));
                }
                if let Some(pos) = self.entries.iter().position(|e| e.id() == id) {
                    // An invalid record resolved: it simply leaves.
                    self.entries.remove(pos);
                    self.tombstones.insert(id.to_string());
                    self.fix_current();
                    return vec![Effect::DropDraft(id.to_string())];
                }
                vec![]
            }
        }
    }

    fn finish_from_gateway(&mut self, record: QuestionRecord, status: QuestionStatus, answers: Option<QuestionAnswers>) -> Vec<Effect> {
        let mine = match self.state(&record.id) {
            Some(LocalState::Submitting { answers: a }) | Some(LocalState::Unconfirmed { answers: a }) => Some(a.clone()),
            _ => None,
        };
        let outcome = match (status, mine) {
            (QuestionStatus::Answered, Some(Some(ours))) => {
                let theirs = answers.unwrap_or_default();
                if same_answers(&ours, &theirs) {
                    Outcome::Answered { answers: theirs }
                } else {
                    Outcome::AnsweredElsewhere { answers: theirs }
                }
            }
            (QuestionStatus::Answered, _) => Outcome::AnsweredElsewhere { answers: answers.unwrap_or_default() },
            (QuestionStatus::Cancelled, Some(None)) => Outcome::Skipped,
            (QuestionStatus::Cancelled, _) => Outcome::SkippedElsewhere,
            (QuestionStatus::Expired, _) => Outcome::Expired,
            (QuestionStatus::Pending, _) => return vec![],
        };
        self.leave(record, outcome, String::new())
    }

    /// Moves a request out of the dock into a receipt.
    fn leave(&mut self, record: QuestionRecord, outcome: Outcome, unsent_text: String) -> Vec<Effect> {
        let id = record.id.clone();
        let label = outcome.label();
        // Closed by someone else on an event's word: the draft waits for a listing to confirm.
        let park =
            matches!(outcome, Outcome::AnsweredElsewhere { .. } | Outcome::SkippedElsewhere) && self.closed_by_event.contains_key(&id);
        self.entries.retain(|e| e.id() != id);
        self.tombstones.insert(id.clone());
        self.get_attempts.remove(&id);
        // A held (credential-shaped) text is never put in a receipt: receipts are stored.
        let unsent_held = !unsent_text.is_empty() && crate::credential::detect(&unsent_text).is_some();
        let outcome = outcome.masked(&record.questions);
        let receipt = Receipt {
            id: id.clone(),
            questions: record.questions,
            outcome,
            at_ms: 0.0,
            unsent_text: if unsent_held { String::new() } else { unsent_text },
            unsent_held,
            session_key: record.session_key,
            approval: None,
        };
        self.receipts.retain(|r| r.id != id);
        self.receipts.push(receipt.clone());
        self.fix_current();
        let left = self.entries.len();
        let more = if left == 0 { String::new() } else { format!(" {left} still waiting.") };
        let draft = if park { Effect::ParkDraft(id) } else { Effect::DropDraft(id) };
        vec![Effect::SaveReceipt(receipt), draft, Effect::Announce(format!("Question closed: {label}.{more}"))]
    }

    /// Attaches text the person typed to an unanswerable request's receipt, so it stays
    /// copyable after the panel closes.
    pub fn keep_unsent_text(&mut self, id: &str, text: String) -> Option<Receipt> {
        let r = self.receipts.iter_mut().find(|r| r.id == id)?;
        if text.trim().is_empty() || !r.unsent_text.is_empty() {
            return None;
        }
        if matches!(r.outcome, Outcome::Answered { .. }) || r.unsent_held {
            return None;
        }
        if crate::credential::detect(&text).is_some() {
            r.unsent_held = true;
            return Some(r.clone());
        }
        r.unsent_text = text;
        Some(r.clone())
    }

    /// The result of `question.get` during recovery.
    pub fn got(&mut self, id: &str, result: Lookup<'_>) -> Vec<Effect> {
        match result {
            Lookup::Found(payload) => {
                let Some(v) = payload.get("question") else { return vec![] };
                let Ok(fresh) = serde_json::from_value::<QuestionRecord>(v.clone()) else { return vec![] };
                if fresh.status == QuestionStatus::Pending {
                    if self.record(id).is_none() && !self.tombstones.contains(id) {
                        return self.arrive(v, false, true);
                    }
                    return vec![];
                }
                if let Some(record) = self.record(id).cloned() {
                    return self.finish_from_gateway(record, fresh.status, fresh.answers);
                }
                // Expired here by the clock, but the gateway says it ended otherwise.
                let locally_expired = self.receipts.iter().any(|r| r.id == id && r.outcome == Outcome::Expired);
                if locally_expired && fresh.status != QuestionStatus::Expired {
                    let outcome = match fresh.status {
                        QuestionStatus::Answered => Outcome::AnsweredElsewhere { answers: fresh.answers.clone().unwrap_or_default() },
                        _ => Outcome::SkippedElsewhere,
                    };
                    if let Some(r) = self.receipts.iter_mut().find(|r| r.id == id) {
                        r.outcome = outcome;
                        return vec![Effect::SaveReceipt(r.clone())];
                    }
                }
                if !self.receipts.iter().any(|r| r.id == id) {
                    // Finished before we ever saw it (a deep link): show how it ended.
                    let outcome = match fresh.status {
                        QuestionStatus::Answered => Outcome::Answered { answers: fresh.answers.clone().unwrap_or_default() },
                        QuestionStatus::Cancelled => Outcome::Skipped,
                        _ => Outcome::Expired,
                    };
                    return self.leave(fresh, outcome, String::new());
                }
                vec![]
            }
            Lookup::Unknown => {
                let Some(record) = self.record(id).cloned() else {
                    if self.receipts.iter().any(|r| r.id == id) {
                        return vec![];
                    }
                    // Never seen and unknown to the gateway (a deep link to an old id).
                    let unknown = QuestionRecord {
                        id: id.to_string(),
                        questions: vec![],
                        agent_id: None,
                        session_key: None,
                        run_id: None,
                        created_at_ms: 0,
                        expires_at_ms: 0,
                        status: QuestionStatus::Expired,
                        answers: None,
                        resolved_by: None,
                    };
                    return self.leave(unknown, Outcome::Unavailable, String::new());
                };
                // Gone from the gateway. If our answer was sent, keep the local answer.
                let outcome = match self.state(id) {
                    Some(LocalState::Submitting { answers: Some(a) }) | Some(LocalState::Unconfirmed { answers: Some(a) }) => {
                        Outcome::Answered { answers: a.clone() }
                    }
                    Some(LocalState::Submitting { answers: None }) | Some(LocalState::Unconfirmed { answers: None }) => Outcome::Skipped,
                    _ => Outcome::Unavailable,
                };
                self.leave(record, outcome, String::new())
            }
            Lookup::Failed(message) => {
                let n = self.get_attempts.entry(id.to_string()).or_insert(0);
                let attempt = *n;
                *n += 1;
                match GET_RETRY_MS.get(attempt) {
                    Some(delay) => vec![Effect::GetAfter(id.to_string(), *delay)],
                    None => {
                        self.set_state(
                            id,
                            LocalState::Failed { message: format!("Could not check this question with the gateway: {message}") },
                        );
                        vec![]
                    }
                }
            }
        }
    }

    /// Marks requests whose deadline passed as expired locally (never answerable again)
    /// and asks for reconciliation. Returns effects for the glue.
    pub fn tick(&mut self, now_ms: i64) -> Vec<Effect> {
        let mut questions = Vec::new();
        let mut approvals = Vec::new();
        for e in &self.entries {
            match e {
                Entry::Valid { record, state }
                    if record.expires_at_ms <= now_ms
                        && !record.id.starts_with(ASYNC_PREFIX)
                        && !matches!(state, LocalState::Submitting { .. } | LocalState::Unconfirmed { .. }) =>
                {
                    questions.push(record.clone())
                }
                Entry::Approval { approval, state }
                    if approval.expires_at_ms <= now_ms && !matches!(state, ApprovalState::Deciding(_) | ApprovalState::Unconfirmed(_)) =>
                {
                    approvals.push(approval.clone())
                }
                _ => {}
            }
        }
        let mut fx = Vec::new();
        for record in questions {
            let id = record.id.clone();
            fx.extend(self.leave(record, Outcome::Expired, String::new()));
            // The gateway has the last word: if it was answered elsewhere, `got` corrects it.
            fx.push(Effect::Get(id));
        }
        for approval in approvals {
            let id = approval.id.clone();
            fx.extend(self.leave_approval(approval, Outcome::Expired));
            fx.push(Effect::GetApproval(id));
        }
        fx
    }

    /// Whether any request's deadline has passed (the clock then calls [`Dock::tick`]).
    pub fn any_due(&self, now_ms: i64) -> bool {
        self.entries.iter().any(|e| match e {
            Entry::Valid { record, state } => record.expires_at_ms <= now_ms && *state != LocalState::Submitting { answers: None },
            Entry::Approval { approval, state } => {
                approval.expires_at_ms <= now_ms && !matches!(state, ApprovalState::Deciding(_) | ApprovalState::Unconfirmed(_))
            }
            Entry::Invalid(_) => false,
        })
    }

    /// Starts Submit: the params to send, or why the draft is not complete yet.
    pub fn submit(&mut self, id: &str, draft: &QuestionDraft) -> Result<QuestionResolveParams, Incomplete> {
        let record = self.record(id).cloned().ok_or(Incomplete { step: 0, message: "This question is no longer pending.".into() })?;
        if matches!(self.state(id), Some(LocalState::Submitting { .. })) {
            return Err(Incomplete { step: draft.step, message: "Already sending this answer.".into() });
        }
        let answers = draft.build(&record)?;
        self.set_state(id, LocalState::Submitting { answers: Some(answers.clone()) });
        // A secrets request: the hosts the person allowed, as shown (the agent's, or edited).
        let hosts = record.questions.iter().any(|q| q.secret_store.is_some()).then(|| draft.hosts(&record));
        Ok(QuestionResolveParams {
            id: id.to_string(),
            answers: Some(answers),
            cancel: None,
            resolved_by: None,
            resolution_id: None,
            secret_store_allowed_hosts: hosts,
        })
    }

    /// Starts Skip (declines the whole prompt).
    pub fn skip(&mut self, id: &str) -> Option<QuestionResolveParams> {
        if self.record(id).is_none() || matches!(self.state(id), Some(LocalState::Submitting { .. })) {
            return None;
        }
        self.set_state(id, LocalState::Submitting { answers: None });
        Some(QuestionResolveParams {
            id: id.to_string(),
            answers: None,
            cancel: Some(true),
            resolved_by: None,
            resolution_id: None,
            secret_store_allowed_hosts: None,
        })
    }

    /// The gateway accepted Submit or Skip.
    pub fn submit_ok(&mut self, id: &str, payload: &Value) -> Vec<Effect> {
        let Some(record) = self.record(id).cloned() else { return vec![] };
        let answers = payload.get("answers").cloned().and_then(|a| serde_json::from_value(a).ok());
        let status = if payload.get("status").and_then(Value::as_str) == Some("cancelled") {
            QuestionStatus::Cancelled
        } else {
            QuestionStatus::Answered
        };
        self.finish_from_gateway(record, status, answers)
    }

    /// Submit or Skip failed. Never destructive: the draft stays, the reason is shown.
    /// `sent` tells whether the request left this browser (then the outcome is unknown
    /// until reconnect).
    pub fn submit_failed(&mut self, id: &str, error: Option<&ErrorShape>, sent: bool) -> Vec<Effect> {
        let answers = match self.state(id) {
            Some(LocalState::Submitting { answers }) => answers.clone(),
            _ => return vec![],
        };
        match error {
            None if sent => {
                self.set_state(id, LocalState::Unconfirmed { answers });
                vec![Effect::Announce("Connection lost while sending; checking with the gateway after reconnecting.".into())]
            }
            None => {
                self.set_state(
                    id,
                    LocalState::Failed {
                        message: "Not connected to the gateway. Your answer is kept; submit again after reconnecting.".into(),
                    },
                );
                vec![]
            }
            Some(e)
                if e.detail_reason() == Some(reason::QUESTION_ALREADY_TERMINAL)
                    || e.detail_reason() == Some(reason::QUESTION_NOT_FOUND) =>
            {
                // Someone else got there first, or it expired: ask what happened.
                self.set_state(id, LocalState::Open);
                vec![Effect::Get(id.to_string())]
            }
            Some(e) => {
                self.set_state(id, LocalState::Failed { message: describe_resolve_error(e) });
                vec![]
            }
        }
    }
}

/// Words for a refused `question.resolve`.
pub fn describe_resolve_error(e: &ErrorShape) -> String {
    if e.code == protocol::error::code::FORBIDDEN {
        return format!("The gateway did not accept this answer: {}. Ask an operator for the missing scope.", e.message);
    }
    match e.detail_reason() {
        Some(reason::QUESTION_INVALID_ANSWER) => format!("The gateway did not accept this answer: {}.", e.message),
        Some(reason::QUESTION_REQUESTER_INACTIVE) => "The agent that asked is no longer running, so the answer cannot be delivered.".into(),
        _ => format!("The gateway could not take the answer: {}", e.message),
    }
}

fn same_answers(a: &QuestionAnswers, b: &QuestionAnswers) -> bool {
    // The gateway trims and canonicalises; compare the same way.
    let norm = |x: &QuestionAnswers| {
        x.answers.iter().map(|(k, v)| (k.clone(), v.iter().map(|s| s.trim().to_string()).collect::<Vec<_>>())).collect::<HashMap<_, _>>()
    };
    norm(a) == norm(b) || b.answers.values().any(|v| v.iter().any(|s| s == "stored"))
}

/// `m:ss` left until `expires_at_ms`, and whether it is time to draw attention.
pub fn countdown(expires_at_ms: i64, now_ms: i64) -> (String, bool) {
    let left = ((expires_at_ms - now_ms).max(0) + 999) / 1000;
    let (m, s) = (left / 60, left % 60);
    (format!("{m}:{s:02}"), left <= 120)
}

pub mod approvals;
pub use approvals::{SnapshotStatus, describe_decide_error, read_snapshot};
