//! Approvals in the dock: they arrive, wait and leave like blocking questions (same arrows,
//! priority, countdown and panes), but a decision is different from an answer:
//!
//! - it is sent once, only while connected, and never queued: consent given offline could
//!   apply to a situation that has changed by the time it arrives;
//! - the first decision wins at the gateway; one that loses says what won;
//! - an unknown or expired id reads as finished, never as an error loop.

use protocol::approval::{Approval, ApprovalKind, ApprovalResolution, Decision, read_approval, read_resolution, resolve_params};
use protocol::error::ErrorShape;
use serde_json::Value;

use super::{ApprovalState, Dock, Effect, Entry, GET_RETRY_MS, InvalidRecord, Lookup, Outcome, Receipt};

/// How a snapshot (`approval.get`, `approval.history`) says an approval stands.
#[derive(Debug, Clone, PartialEq)]
pub enum SnapshotStatus {
    Pending,
    Ended { outcome: Outcome, resolved_at_ms: i64 },
}

/// Who decided, in words, from the gateway's label of the client or its `resolver`.
fn who(v: &Value) -> Option<String> {
    let label = match v.get("resolver") {
        Some(r) => match r.get("kind").and_then(Value::as_str) {
            Some("channel") => Some("a chat channel".to_string()),
            Some("system") => None,
            Some("device") => Some("another device or tab".to_string()),
            Some(_) => r.get("id").and_then(Value::as_str).map(str::to_string),
            None => None,
        },
        None => v.get("resolvedBy").and_then(Value::as_str).map(str::to_string),
    }?;
    Some(match label.as_str() {
        "openclaw-control-ui" => "a Control UI".to_string(),
        "gateway-client" => "a gateway client".to_string(),
        "cli" => "the command line".to_string(),
        _ => protocol::frame::truncate(&label, 80),
    })
}

/// Reads an `approval.get` / `approval.history` snapshot: the approval as the card shows it
/// and how it stands.
pub fn read_snapshot(v: &Value) -> Option<(Approval, SnapshotStatus)> {
    let id = v.get("id").and_then(Value::as_str)?.to_string();
    let p = v.get("presentation").cloned().unwrap_or(Value::Null);
    let kind = p.get("kind").and_then(Value::as_str).and_then(ApprovalKind::from_wire).unwrap_or(ApprovalKind::Exec);
    let session =
        v.get("sourceSessionKey").or_else(|| v.get("source").and_then(|s| s.get("sessionKey"))).and_then(Value::as_str).map(str::to_string);
    // The presentation is the request's reviewer-safe projection: read it as a request.
    let mut request = p.clone();
    if let (Some(o), Some(cmd)) = (request.as_object_mut(), p.get("commandText").cloned()) {
        o.insert("command".into(), cmd);
    }
    if let (Some(o), Some(s)) = (request.as_object_mut(), &session) {
        o.insert("sessionKey".into(), Value::String(s.clone()));
    }
    let listed = serde_json::json!({"id": id, "request": request, "createdAtMs": v.get("createdAtMs"), "expiresAtMs": v.get("expiresAtMs").cloned().unwrap_or(Value::from(0))});
    let approval = read_approval(kind, &listed).ok()?;
    let status = v.get("status").and_then(Value::as_str).unwrap_or("pending");
    let decision = v.get("decision").and_then(Value::as_str).and_then(Decision::from_wire);
    let resolved_at_ms = v.get("resolvedAtMs").and_then(Value::as_i64).unwrap_or(0);
    let outcome = match (status, decision) {
        ("pending", _) => return Some((approval, SnapshotStatus::Pending)),
        ("expired", _) => Outcome::Expired,
        ("cancelled", _) => Outcome::Cancelled,
        ("allowed" | "denied", Some(d)) => Outcome::DecidedElsewhere { decision: d, by: who(v) },
        ("denied", None) => Outcome::DecidedElsewhere { decision: Decision::Deny, by: who(v) },
        _ => Outcome::Unavailable,
    };
    Some((approval, SnapshotStatus::Ended { outcome, resolved_at_ms }))
}

impl Receipt {
    /// The summary of an approval that ended with `outcome` at `resolved_at_ms`.
    pub fn for_approval(approval: &Approval, outcome: Outcome, resolved_at_ms: i64) -> Receipt {
        Receipt {
            id: approval.id.clone(),
            questions: Vec::new(),
            outcome,
            at_ms: resolved_at_ms as f64,
            unsent_text: String::new(),
            unsent_held: false,
            session_key: approval.session_key.clone(),
            approval: Some(approval.summary()),
        }
    }
}

impl Dock {
    /// The pending approval `id` and where it stands locally.
    pub fn approval(&self, id: &str) -> Option<(&Approval, &ApprovalState)> {
        match self.entry(id)? {
            Entry::Approval { approval, state } => Some((approval, state)),
            _ => None,
        }
    }

    fn set_approval_state(&mut self, id: &str, new: ApprovalState) {
        for e in &mut self.entries {
            if let Entry::Approval { approval, state } = e {
                if approval.id == id {
                    *state = new;
                    return;
                }
            }
        }
    }

    /// `<kind>.approval.requested`: shown like a new blocking question.
    pub fn approval_requested(&mut self, kind: ApprovalKind, payload: &Value, typing: bool) -> Vec<Effect> {
        self.approval_arrive(kind, payload, typing, false)
    }

    fn approval_arrive(&mut self, kind: ApprovalKind, payload: &Value, typing: bool, listing: bool) -> Vec<Effect> {
        match read_approval(kind, payload) {
            Ok(approval) => {
                if self.tombstones.contains(&approval.id) {
                    return Vec::new();
                }
                if let Some(res) = self.early_approvals.remove(&approval.id) {
                    // Its resolution came first: never show it as decidable.
                    return self.approval_finish(approval, ApprovalState::Open, res);
                }
                self.place(Entry::Approval { approval, state: ApprovalState::Open }, typing, listing)
            }
            Err(problem) => {
                let id = payload.get("id").and_then(Value::as_str).map(str::to_string);
                if id.as_ref().is_some_and(|i| self.tombstones.contains(i)) {
                    return Vec::new();
                }
                let raw = protocol::frame::truncate(&protocol::frame::compact(payload), 4000);
                self.place(
                    Entry::Invalid(InvalidRecord {
                        id,
                        problem: format!("The {} does not match the protocol: {problem}.", kind.noun().to_ascii_lowercase()),
                        raw,
                    }),
                    typing,
                    listing,
                )
            }
        }
    }

    /// `<kind>.approval.list` after a (re)connect: pending approvals of that kind are shown;
    /// known ones it no longer lists are asked about (`approval.get`).
    pub fn approvals_listed(&mut self, kind: ApprovalKind, records: &[Value]) -> Vec<Effect> {
        let mut fx = Vec::new();
        let listed: Vec<&str> = records.iter().filter_map(|r| r.get("id").and_then(Value::as_str)).collect();
        for r in records {
            fx.extend(self.approval_arrive(kind, r, false, true));
        }
        for e in &mut self.entries {
            let Entry::Approval { approval, state } = e else { continue };
            if approval.kind != kind {
                continue;
            }
            if listed.contains(&approval.id.as_str()) {
                if let ApprovalState::Unconfirmed(_) = state {
                    // Still pending: the decision never landed. Never re-sent on its own.
                    *state = ApprovalState::Failed(
                        "The connection dropped before the gateway took your decision, so nothing was decided. Decide again.".into(),
                    );
                }
            } else {
                fx.push(Effect::GetApproval(approval.id.clone()));
            }
        }
        self.fix_current();
        fx
    }

    /// `<kind>.approval.resolved`. Expiry also comes as `deny` with nobody named, so an
    /// unnamed denial is checked with the gateway's snapshot.
    pub fn approval_resolved(&mut self, payload: &Value) -> Vec<Effect> {
        let Some(res) = read_resolution(payload) else { return Vec::new() };
        let unnamed_denial = res.decision == Some(Decision::Deny) && res.by.is_none();
        let mut fx = match self.approval(&res.id).map(|(a, s)| (a.clone(), s.clone())) {
            Some((approval, state)) => self.approval_finish(approval, state, res.clone()),
            None => {
                if !self.tombstones.contains(&res.id) {
                    self.early_approvals.insert(res.id.clone(), res.clone());
                }
                // An invalid approval resolved: it simply leaves.
                if let Some(pos) = self.entries.iter().position(|e| e.id() == res.id) {
                    self.entries.remove(pos);
                    self.tombstones.insert(res.id.clone());
                    self.fix_current();
                }
                return Vec::new();
            }
        };
        if unnamed_denial {
            fx.push(Effect::GetApproval(res.id));
        }
        fx
    }

    fn approval_finish(&mut self, approval: Approval, state: ApprovalState, res: ApprovalResolution) -> Vec<Effect> {
        let mine = match state {
            ApprovalState::Deciding(d) | ApprovalState::Unconfirmed(d) => Some(d),
            _ => None,
        };
        let outcome = match (res.decision, mine) {
            (None, _) => Outcome::Expired,
            // Ours, as far as the event tells; the resolve response has the last word.
            (Some(d), Some(m)) if d == m => Outcome::decided(d),
            (Some(d), _) => {
                Outcome::DecidedElsewhere { decision: d, by: res.by.map(|b| who(&serde_json::json!({"resolvedBy": b})).unwrap_or(b)) }
            }
        };
        self.leave_approval(approval, outcome)
    }

    /// Moves an approval out of the dock into its summary.
    pub(super) fn leave_approval(&mut self, approval: Approval, outcome: Outcome) -> Vec<Effect> {
        let id = approval.id.clone();
        let label = outcome.label();
        self.entries.retain(|e| e.id() != id);
        self.tombstones.insert(id.clone());
        self.get_attempts.remove(&id);
        let receipt = Receipt {
            id: id.clone(),
            questions: Vec::new(),
            outcome,
            at_ms: 0.0,
            unsent_text: String::new(),
            unsent_held: false,
            session_key: approval.session_key.clone(),
            approval: Some(approval.summary()),
        };
        self.receipts.retain(|r| r.id != id);
        self.receipts.push(receipt.clone());
        self.fix_current();
        let left = self.entries.len();
        let more = if left == 0 { String::new() } else { format!(" {left} still waiting.") };
        vec![Effect::SaveReceipt(receipt), Effect::Announce(format!("Approval closed: {label}.{more}"))]
    }

    /// Starts a decision: the `approval.resolve` params, or why it cannot be sent now. Only
    /// while connected, only a decision the approval offers, only once.
    pub fn decide(&mut self, id: &str, decision: Decision, connected: bool) -> Result<Value, String> {
        let (approval, state) = self.approval(id).ok_or("This approval is no longer pending.")?;
        if matches!(state, ApprovalState::Deciding(_) | ApprovalState::Unconfirmed(_)) {
            return Err("Already sending a decision for this approval.".into());
        }
        if !approval.offers(decision) {
            return Err(format!("This approval does not offer “{}”.", decision.wire()));
        }
        if !connected {
            return Err("Reconnect to decide: a decision is only sent while connected, never queued.".into());
        }
        let params = resolve_params(id, approval.kind, decision);
        self.set_approval_state(id, ApprovalState::Deciding(decision));
        Ok(params)
    }

    /// A decision could not start (offline, not offered): the card says why; nothing else changes.
    pub fn refuse_decision(&mut self, id: &str, message: String) {
        if let Some((_, ApprovalState::Open | ApprovalState::Failed(_))) = self.approval(id) {
            self.set_approval_state(id, ApprovalState::Failed(message));
        }
    }

    /// `approval.resolve` answered: `{applied, approval: snapshot}`. Not applied means another
    /// decision won first: the summary says which.
    pub fn decide_ok(&mut self, id: &str, decision: Decision, payload: &Value) -> Vec<Effect> {
        let applied = payload.get("applied").and_then(Value::as_bool).unwrap_or(true);
        let ended = payload.get("approval").and_then(read_snapshot).and_then(|(_, s)| match s {
            SnapshotStatus::Ended { outcome, .. } => Some(outcome),
            SnapshotStatus::Pending => None,
        });
        let outcome = if applied { Outcome::decided(decision) } else { ended.unwrap_or(Outcome::Unavailable) };
        if let Some(approval) = self.approval(id).map(|(a, _)| a.clone()) {
            return self.leave_approval(approval, outcome);
        }
        // The event came first and closed it; the response corrects who decided.
        match self.receipts.iter_mut().find(|r| r.id == id) {
            Some(r) if r.outcome != outcome && !applied => {
                r.outcome = outcome;
                vec![Effect::SaveReceipt(r.clone())]
            }
            _ => Vec::new(),
        }
    }

    /// A decision failed. `sent`: it left this browser (then the gateway is asked on
    /// reconnect; it is never sent again on its own).
    pub fn decide_failed(&mut self, id: &str, error: Option<&ErrorShape>, sent: bool) -> Vec<Effect> {
        let Some((_, ApprovalState::Deciding(d))) = self.approval(id).map(|(a, s)| (a.clone(), s.clone())) else { return Vec::new() };
        match error {
            None if sent => {
                self.set_approval_state(id, ApprovalState::Unconfirmed(d));
                vec![Effect::Announce("Connection lost while sending the decision; checking with the gateway after reconnecting.".into())]
            }
            None => {
                self.set_approval_state(
                    id,
                    ApprovalState::Failed("Not connected to the gateway, so nothing was decided. Reconnect to decide.".into()),
                );
                Vec::new()
            }
            Some(e) if matches!(e.detail_reason(), Some("APPROVAL_NOT_FOUND" | "APPROVAL_ALREADY_RESOLVED")) => {
                self.set_approval_state(id, ApprovalState::Open);
                vec![Effect::GetApproval(id.to_string())]
            }
            Some(e) => {
                self.set_approval_state(id, ApprovalState::Failed(describe_decide_error(e)));
                Vec::new()
            }
        }
    }

    /// `approval.get`: its payload, unknown for APPROVAL_NOT_FOUND, or a failure
    /// for anything else (retried, then said on the card).
    pub fn approval_got(&mut self, id: &str, result: Lookup<'_>) -> Vec<Effect> {
        match result {
            Lookup::Found(payload) => {
                let Some((fresh, status)) = payload.get("approval").and_then(read_snapshot) else { return Vec::new() };
                match status {
                    SnapshotStatus::Pending => {
                        if self.approval(id).is_none() && !self.tombstones.contains(id) {
                            return self.place(Entry::Approval { approval: fresh, state: ApprovalState::Open }, false, true);
                        }
                        Vec::new()
                    }
                    SnapshotStatus::Ended { outcome, .. } => {
                        if let Some((approval, state)) = self.approval(id).map(|(a, s)| (a.clone(), s.clone())) {
                            let ours = match (state, &outcome) {
                                (
                                    ApprovalState::Deciding(m) | ApprovalState::Unconfirmed(m),
                                    Outcome::DecidedElsewhere { decision, .. },
                                ) if m == *decision => Outcome::decided(m),
                                _ => outcome,
                            };
                            return self.leave_approval(approval, ours);
                        }
                        match self.receipts.iter_mut().find(|r| r.id == id) {
                            // Closed here on the clock or on an unnamed event: the gateway knows better.
                            Some(r)
                                if matches!(
                                    r.outcome,
                                    Outcome::Expired | Outcome::DecidedElsewhere { decision: Decision::Deny, by: None }
                                ) && r.outcome != outcome =>
                            {
                                r.outcome = outcome;
                                vec![Effect::SaveReceipt(r.clone())]
                            }
                            Some(_) => Vec::new(),
                            // Finished before we ever saw it (a deep link): show how it ended.
                            None => self.leave_approval(fresh, outcome),
                        }
                    }
                }
            }
            Lookup::Unknown => {
                if let Some(approval) = self.approval(id).map(|(a, _)| a.clone()) {
                    return self.leave_approval(approval, Outcome::Unavailable);
                }
                if self.receipts.iter().any(|r| r.id == id) {
                    return Vec::new();
                }
                // Never seen and unknown to the gateway (a deep link to an old id).
                let unknown = Approval { id: id.to_string(), kind: ApprovalKind::Exec, ..Approval::default() };
                self.leave_approval(unknown, Outcome::Unavailable)
            }
            Lookup::Failed(message) => {
                let n = self.get_attempts.entry(id.to_string()).or_insert(0);
                let attempt = *n;
                *n += 1;
                match GET_RETRY_MS.get(attempt) {
                    Some(delay) => vec![Effect::GetApprovalAfter(id.to_string(), *delay)],
                    None => {
                        if let Some((_, ApprovalState::Open)) = self.approval(id) {
                            self.set_approval_state(
                                id,
                                ApprovalState::Failed(format!("Could not check this approval with the gateway: {message}")),
                            );
                        }
                        Vec::new()
                    }
                }
            }
        }
    }

    /// `approval.history` rows (terminal snapshots): summaries this browser does not have yet,
    /// so another browser shows what was decided too.
    pub fn approval_history(&mut self, rows: &[Value]) -> Vec<Effect> {
        let mut fx = Vec::new();
        for row in rows {
            let Some((approval, SnapshotStatus::Ended { outcome, resolved_at_ms })) = read_snapshot(row) else { continue };
            if self.receipts.iter().any(|r| r.id == approval.id) || self.entry(&approval.id).is_some() {
                continue;
            }
            self.tombstones.insert(approval.id.clone());
            // From the record: what was decided, not by whom relative to this browser.
            let outcome = match outcome {
                Outcome::DecidedElsewhere { decision, .. } => Outcome::decided(decision),
                o => o,
            };
            let receipt = Receipt::for_approval(&approval, outcome, resolved_at_ms);
            self.receipts.push(receipt.clone());
            fx.push(Effect::SaveReceipt(receipt));
        }
        crate::order::sort_by(&mut self.receipts, Receipt::by_time);
        fx
    }
}

/// Words for a refused decision.
pub fn describe_decide_error(e: &ErrorShape) -> String {
    if e.code == protocol::error::code::FORBIDDEN {
        return format!("The gateway did not accept this decision: {}. Ask an operator for the operator.approvals scope.", e.message);
    }
    match e.detail_reason() {
        Some("APPROVAL_ALLOW_ALWAYS_UNAVAILABLE") => {
            "The gateway does not allow “Always allow” for this command. Nothing was decided; choose another option.".into()
        }
        _ => format!("The gateway could not take the decision: {}. Nothing was decided.", e.message),
    }
}
