//! The approvals manager: `exec.approval.*`, `plugin.approval.*`, `openclaw.approval.list` and
//! the kind-agnostic `approval.get` / `approval.resolve` / `approval.history`, with the real
//! gateway's (OpenClaw 2026.9.6) behaviour as captured in `docs/approvals-protocol-notes.md`.
//!
//! Pending approvals live in memory (as in the real gateway). One that ends (decided, expired,
//! cancelled, or denied for want of a route) is written to SQLite with the boot that ended it,
//! so `approval.get` and `approval.history` survive a restart, while the kind methods call
//! an approval of an earlier boot unknown, as the real gateway does.
//!
//! A requester waits for the decision in its request: with `twoPhase` it first gets an
//! `accepted` response and later a second response with the same request id. Like the real
//! gateway, an approval nobody could see (no other connection holds `operator.approvals`) is
//! denied at once; the demo agent's own approvals always wait.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use protocol::approval::{ApprovalKind, Decision};
use protocol::error::{ErrorShape, code};
use protocol::frame::{Frame, ResponseFrame};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::Gateway;
use crate::hub::Caller;
use crate::hub::{Outbound, Peer};
use crate::util::{now_ms, uuid_v4};

/// `details.reason` values of approval errors (the real gateway's).
pub mod reason {
    pub const APPROVAL_NOT_FOUND: &str = "APPROVAL_NOT_FOUND";
    pub const APPROVAL_ALREADY_RESOLVED: &str = "APPROVAL_ALREADY_RESOLVED";
    pub const APPROVAL_ALLOW_ALWAYS_UNAVAILABLE: &str = "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE";
}

/// Exec approvals wait 30 minutes unless the requester says otherwise.
pub const EXEC_DEFAULT_TIMEOUT_MS: u64 = 1_800_000;
/// Plugin approvals wait 2 minutes by default, 10 at most.
pub const PLUGIN_DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const PLUGIN_MAX_TIMEOUT_MS: u64 = 600_000;
/// The shortest prefix `exec.approval.*` accepts for an id (the real one answers an 8-character one).
const MIN_ID_PREFIX: usize = 8;
/// `approval.history` page size.
const HISTORY_DEFAULT_LIMIT: u64 = 50;
const HISTORY_MAX_LIMIT: u64 = 100;
/// The resolver id of an approval denied for want of a route.
const NO_ROUTE_RESOLVER: &str = "no-approval-route";

/// Where an approval stands, as snapshots say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Allowed,
    Denied,
    Expired,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Allowed => "allowed",
            Status::Denied => "denied",
            Status::Expired => "expired",
            Status::Cancelled => "cancelled",
        }
    }
}

/// Why an approval ended (`reason` of snapshots, `terminalReason` of `waitDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// A person decided.
    User,
    Timeout,
    /// `approval.resolve` with a wrong kind or a decision not offered: recorded as deny.
    MalformedVerdict,
    /// Nobody could have seen it: denied at once.
    NoRoute,
    /// The agent run that asked was stopped.
    RunAborted,
    /// The gateway stopped while it was pending.
    GatewayRestart,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::User => "user",
            Reason::Timeout => "timeout",
            Reason::MalformedVerdict => "malformed-verdict",
            Reason::NoRoute => "no-route",
            Reason::RunAborted => "run-aborted",
            Reason::GatewayRestart => "gateway-restart",
        }
    }
}

/// Who ended an approval, as durable snapshots name it: `device` (a device client through
/// `approval.resolve`), `runtime` (a client id), or `system` (expiry, abort, no route).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolver {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Resolver {
    fn system(id: Option<&str>) -> Resolver {
        Resolver { kind: "system".into(), id: id.map(str::to_string) }
    }
    fn runtime(peer: &Peer) -> Resolver {
        Resolver { kind: "runtime".into(), id: Some(peer.client_id.clone()) }
    }
    /// The real gateway names the device when `approval.resolve` comes from one.
    fn device_or_runtime(peer: &Peer) -> Resolver {
        match &peer.device_id {
            Some(d) => Resolver { kind: "device".into(), id: Some(d.clone()) },
            None => Resolver::runtime(peer),
        }
    }
}

/// One approval, pending or ended. Serialised as it is stored in SQLite.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    pub id: String,
    pub kind: ApprovalKind,
    /// The request object exactly as lists and events carry it.
    pub request: Value,
    /// The decisions offered (always with deny).
    pub allowed: Vec<Decision>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub status: Status,
    #[serde(default)]
    pub reason: Option<Reason>,
    #[serde(default)]
    pub decision: Option<Decision>,
    #[serde(default)]
    pub resolved_at_ms: Option<i64>,
    #[serde(default)]
    pub resolver: Option<Resolver>,
    /// The legacy events' `resolvedBy`: the resolving client's display name or id.
    #[serde(default)]
    pub resolved_by: Option<String>,
    /// The demo agent's run that asked: stopping the run cancels it.
    #[serde(default)]
    pub run_id: Option<String>,
}

fn text_of(v: &Value, key: &str) -> Value {
    v.get(key).cloned().unwrap_or(Value::Null)
}

fn wires(decisions: &[Decision]) -> Vec<&'static str> {
    decisions.iter().map(|d| d.wire()).collect()
}

impl ApprovalRecord {
    fn is_pending(&self) -> bool {
        self.status == Status::Pending
    }

    /// The list entry (`<kind>.approval.list`) and, with `approvalKind` first, the requested event.
    fn entry(&self) -> Value {
        json!({"id": self.id, "request": self.request, "createdAtMs": self.created_at_ms, "expiresAtMs": self.expires_at_ms, "approvalKind": self.kind.wire()})
    }

    /// What a reviewer is shown: never cwd or env ("reviewer-safe").
    fn presentation(&self) -> Value {
        let r = &self.request;
        let mut p = match self.kind {
            ApprovalKind::Exec => json!({
                "kind": "exec", "commandText": text_of(r, "command"), "commandPreview": null, "warningText": text_of(r, "warningText"),
                "host": text_of(r, "host"), "nodeId": text_of(r, "nodeId"), "agentId": text_of(r, "agentId"), "allowedDecisions": wires(&self.allowed),
            }),
            _ => json!({
                "kind": "plugin", "title": text_of(r, "title"), "description": text_of(r, "description"), "detail": text_of(r, "detail"),
                "severity": r.get("severity").filter(|s| s.is_string()).cloned().unwrap_or_else(|| json!("warning")),
                "pluginId": text_of(r, "pluginId"), "toolName": text_of(r, "toolName"), "agentId": text_of(r, "agentId"), "allowedDecisions": wires(&self.allowed),
            }),
        };
        if let Some(scope) = r.get("scope").filter(|s| !s.is_null()) {
            p["scope"] = scope.clone();
        }
        p
    }

    /// The durable snapshot (`approval.get`, `approval.resolve`, `approval.history`).
    pub fn snapshot(&self) -> Value {
        let mut s = json!({
            "id": self.id, "status": self.status.as_str(), "presentation": self.presentation(),
            "urlPath": format!("/approve/{}", crate::util::encode_uri_component(&self.id)),
            "createdAtMs": self.created_at_ms, "expiresAtMs": self.expires_at_ms,
        });
        if !self.is_pending() {
            s["resolvedAtMs"] = json!(self.resolved_at_ms);
            s["reason"] = json!(self.reason.map(Reason::as_str));
            if let Some(d) = self.decision {
                s["decision"] = json!(d.wire());
            }
            let mut source = serde_json::Map::new();
            for key in ["agentId", "sessionKey"] {
                if let Some(v) = self.request.get(key).filter(|v| v.is_string()) {
                    source.insert(key.into(), v.clone());
                }
            }
            s["source"] = Value::Object(source);
            s["resolver"] = serde_json::to_value(&self.resolver).unwrap_or_default();
        }
        s
    }

    /// The decision a requester is told: none when it expired, was cancelled or had no route.
    fn final_decision(&self) -> Option<Decision> {
        if self.reason == Some(Reason::NoRoute) { None } else { self.decision }
    }

    /// The requester's final response.
    fn final_payload(&self) -> Value {
        json!({"id": self.id, "decision": self.final_decision().map(Decision::wire), "createdAtMs": self.created_at_ms, "expiresAtMs": self.expires_at_ms})
    }
}

struct Entry {
    record: ApprovalRecord,
    /// Wakes the requester and `waitDecision` callers with the final record.
    done: watch::Sender<Option<ApprovalRecord>>,
}

#[derive(Default)]
pub struct Approvals {
    entries: Mutex<HashMap<String, Entry>>,
}

impl Approvals {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn pending_count(&self) -> usize {
        self.entries().values().filter(|e| e.record.is_pending()).count()
    }

    /// Whether an agent run is waiting for a person to decide one of its approvals.
    pub fn run_is_waiting(&self, run_id: &str) -> bool {
        self.entries().values().any(|e| e.record.is_pending() && e.record.run_id.as_deref() == Some(run_id))
    }

    fn pending_ids(&self, filter: impl Fn(&ApprovalRecord) -> bool) -> Vec<String> {
        self.entries().values().filter(|e| e.record.is_pending() && filter(&e.record)).map(|e| e.record.id.clone()).collect()
    }
}

/// Waits for an approval's end.
pub struct Waiter(watch::Receiver<Option<ApprovalRecord>>);

impl Waiter {
    /// The final record (`None` only if the gateway dropped the approval without ending it).
    pub async fn done(mut self) -> Option<ApprovalRecord> {
        self.0.wait_for(|r| r.is_some()).await.ok().and_then(|r| r.clone())
    }
}

// ---------------------------------------------------------------------------------------
// Errors, with the real gateway's messages and reasons.

/// The kind methods' "not found" (also for an approval of an earlier boot).
fn kind_not_found() -> ErrorShape {
    ErrorShape::invalid("unknown or expired approval id").with_details(json!({
        "reason": reason::APPROVAL_NOT_FOUND,
        "remediation": "Re-request the action; pending approvals are cleared after expiry or restart.",
    }))
}

/// `approval.get` / `approval.resolve`'s "not found".
fn not_found() -> ErrorShape {
    ErrorShape::invalid("approval not found").with_details(json!({"reason": reason::APPROVAL_NOT_FOUND}))
}

fn already_resolved() -> ErrorShape {
    ErrorShape::invalid("approval already resolved").with_details(json!({"reason": reason::APPROVAL_ALREADY_RESOLVED}))
}

fn unavailable(op: &str, e: impl std::fmt::Display) -> ErrorShape {
    crate::log::error(&format!("approval {op}: storage failed: {e}"));
    ErrorShape::new(code::UNAVAILABLE, format!("approval {op} unavailable"))
}

fn bad_params(method: &str, what: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::invalid(format!("invalid {method} params: {what}"))
}

mod analysis;
mod methods;
mod params;

pub use analysis::analyze;
use analysis::{clean, join_argv};
pub use methods::*;
pub use params::*;

// ---------------------------------------------------------------------------------------
// Making approvals.

/// A validated request, not yet registered.
struct NewApproval {
    record: ApprovalRecord,
    timeout_ms: u64,
    two_phase: bool,
    require_route: bool,
}

fn new_record(id: String, kind: ApprovalKind, request: Value, allowed: Vec<Decision>, timeout_ms: u64) -> ApprovalRecord {
    let now = now_ms();
    ApprovalRecord {
        id,
        kind,
        request,
        allowed,
        created_at_ms: now,
        expires_at_ms: now.saturating_add(timeout_ms.min(i64::MAX as u64 / 4) as i64),
        status: Status::Pending,
        reason: None,
        decision: None,
        resolved_at_ms: None,
        resolver: None,
        resolved_by: None,
        run_id: None,
    }
}

fn new_exec(p: ExecRequestParams) -> Result<NewApproval, ErrorShape> {
    const M: &str = "exec.approval.request";
    if let Some(id) = &p.id {
        if id.is_empty() || id.chars().count() > 128 {
            return Err(bad_params(M, "at /id: must be 1 to 128 characters"));
        }
        if id.starts_with("plugin:") || id.starts_with("system-agent:") {
            return Err(bad_params(M, "at /id: must not start with plugin: or system-agent:"));
        }
    }
    let timeout_ms = p.timeout_ms.unwrap_or(EXEC_DEFAULT_TIMEOUT_MS);
    if timeout_ms < 1 {
        return Err(bad_params(M, "at /timeoutMs: must be >= 1"));
    }
    let unavailable = p.unavailable_decisions.unwrap_or_default();
    if unavailable.iter().any(|d| d != Decision::AllowAlways.wire()) {
        return Err(bad_params(M, "at /unavailableDecisions: may only hold allow-always"));
    }
    // The command as sent; from argv only when no command text came.
    let command = match p.command.filter(|c| !c.trim().is_empty()) {
        Some(c) => c,
        None => match &p.command_argv {
            Some(argv) if argv.iter().any(|a| !a.trim().is_empty()) => join_argv(argv),
            _ => return Err(ErrorShape::invalid("command is required")),
        },
    };
    let allowed = if p.ask.as_deref() == Some("always") || !unavailable.is_empty() {
        vec![Decision::AllowOnce, Decision::Deny]
    } else {
        Decision::ALL.to_vec()
    };
    let mut request = json!({
        "command": command, "systemRunBinding": null, "systemRunPlan": null, "cwd": p.cwd, "nodeId": p.node_id,
        "host": p.host, "security": p.security, "ask": p.ask, "warningText": clean(p.warning_text), "scope": p.scope,
        "commandAnalysis": analyze(&command), "allowedDecisions": wires(&allowed), "agentId": p.agent_id,
        "resolvedPath": p.resolved_path, "sessionKey": p.session_key.map(|k| protocol::chat::canonical_session_key(&k)),
        "sessionId": p.session_id, "runId": p.run_id, "toolCallId": p.tool_call_id,
        "turnSourceChannel": null, "turnSourceTo": null, "turnSourceAccountId": null, "turnSourceThreadId": null,
        "cronExecutionSource": null, "cronOperationBinding": null,
    });
    if let Some(argv) = p.command_argv {
        request["commandArgv"] = json!(argv);
    }
    if !unavailable.is_empty() {
        request["unavailableDecisions"] = json!(unavailable);
    }
    let id = p.id.unwrap_or_else(uuid_v4);
    Ok(NewApproval {
        record: new_record(id, ApprovalKind::Exec, request, allowed, timeout_ms),
        timeout_ms,
        two_phase: p.two_phase == Some(true),
        require_route: p.require_delivery_route != Some(false),
    })
}

fn new_plugin(p: PluginRequestParams) -> Result<NewApproval, ErrorShape> {
    const M: &str = "plugin.approval.request";
    let length = |field: &str, v: &str, max: usize| -> Result<(), ErrorShape> {
        let n = v.chars().count();
        if n < 1 {
            return Err(bad_params(M, format!("at /{field}: must NOT have fewer than 1 characters")));
        }
        if n > max {
            return Err(bad_params(M, format!("at /{field}: must NOT have more than {max} characters")));
        }
        Ok(())
    };
    length("title", &p.title, 80)?;
    length("description", &p.description, 512)?;
    if let Some(d) = &p.detail {
        if d.chars().count() > 16_384 {
            return Err(bad_params(M, "at /detail: must NOT have more than 16384 characters"));
        }
    }
    if p.severity.as_deref().is_some_and(|s| !["info", "warning", "critical"].contains(&s)) {
        return Err(bad_params(M, "at /severity: must be info, warning or critical"));
    }
    let timeout_ms = p.timeout_ms.unwrap_or(PLUGIN_DEFAULT_TIMEOUT_MS);
    if timeout_ms < 1 {
        return Err(bad_params(M, "at /timeoutMs: must be >= 1"));
    }
    if timeout_ms > PLUGIN_MAX_TIMEOUT_MS {
        return Err(bad_params(M, format!("at /timeoutMs: must be <= {PLUGIN_MAX_TIMEOUT_MS}")));
    }
    // The requester's choice of decisions, deny always among them; all three by default.
    let allowed = match &p.allowed_decisions {
        None => Decision::ALL.to_vec(),
        Some(given) => {
            if given.is_empty() || given.len() > 3 {
                return Err(bad_params(M, "at /allowedDecisions: must hold 1 to 3 decisions"));
            }
            let parsed: Option<Vec<Decision>> = given.iter().map(|d| Decision::from_wire(d)).collect();
            let parsed = parsed.ok_or_else(|| bad_params(M, "at /allowedDecisions: must be allow-once, allow-always or deny"))?;
            Decision::ALL.into_iter().filter(|d| parsed.contains(d) || *d == Decision::Deny).collect()
        }
    };
    let mut request = json!({
        "pluginId": p.plugin_id, "title": p.title, "description": p.description, "scope": p.scope, "detail": p.detail,
        "severity": p.severity, "toolName": p.tool_name, "toolCallId": p.tool_call_id, "agentId": p.agent_id,
        "sessionKey": p.session_key.map(|k| protocol::chat::canonical_session_key(&k)), "runId": null,
        "turnSourceChannel": null, "turnSourceTo": null, "turnSourceAccountId": null, "turnSourceThreadId": null,
    });
    // Listed only when the requester chose (absent means all three), as the real gateway does.
    if p.allowed_decisions.is_some() {
        request["allowedDecisions"] = json!(wires(&allowed));
    }
    Ok(NewApproval {
        record: new_record(format!("plugin:{}", uuid_v4()), ApprovalKind::Plugin, request, allowed, timeout_ms),
        timeout_ms,
        two_phase: p.two_phase == Some(true),
        require_route: p.require_delivery_route != Some(false),
    })
}

/// Whether someone other than the requester could decide: a connection holding
/// `operator.approvals` (or admin).
fn has_route(gw: &Gateway, requester: &str) -> bool {
    gw.hub.any(|p| p.conn_id != requester && sees_approvals(p))
}

/// Approval events go only to connections that may decide approvals.
fn sees_approvals(peer: &Peer) -> bool {
    peer.has_scope(protocol::methods::scope::APPROVALS)
}

/// Registers a pending approval: announces it and starts its expiry.
fn register(gw: &Arc<Gateway>, record: ApprovalRecord, timeout_ms: u64) -> Result<Waiter, ErrorShape> {
    let id = record.id.clone();
    let rx = {
        let mut entries = gw.approvals.entries();
        // Checked under the lock that `cancel_all` takes: an approval made while the gateway
        // stops would otherwise wait out the drain.
        if gw.drain.is_stopping() {
            let mut e = ErrorShape::new(code::UNAVAILABLE, "gateway stopping; request the approval again after it restarts");
            e.retryable = Some(true);
            return Err(e);
        }
        check_id_free(gw, &entries, &id)?;
        let (done, rx) = watch::channel(None);
        entries.insert(id.clone(), Entry { record: record.clone(), done });
        rx
    };
    let event = format!("{}.approval.requested", record.kind.prefix());
    let entry = record.entry();
    let payload = json!({"approvalKind": record.kind.wire(), "id": id, "request": entry["request"], "createdAtMs": record.created_at_ms, "expiresAtMs": record.expires_at_ms});
    gw.hub.broadcast(&event, &payload, sees_approvals);
    crate::push::approval_requested(gw, &id, record.expires_at_ms);
    // The gateway owns the deadline; nobody decides on anyone's behalf.
    let gw2 = gw.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(timeout_ms)).await;
        let _ = finish(
            &gw2,
            &id,
            End { status: Status::Expired, reason: Reason::Timeout, decision: None, resolver: Resolver::system(None), resolved_by: None },
        );
    });
    Ok(Waiter(rx))
}

fn check_id_free(gw: &Gateway, entries: &HashMap<String, Entry>, id: &str) -> Result<(), ErrorShape> {
    if entries.contains_key(id) {
        return Err(ErrorShape::invalid("approval id already pending"));
    }
    match gw.store.saved_approval(id) {
        Ok(None) => Ok(()),
        Ok(Some(_)) => Err(ErrorShape::invalid("approval id already used")),
        Err(e) => Err(unavailable("request", e)),
    }
}

/// A client's `*.approval.request`: registers it and waits for its end in the request.
async fn submit(gw: &Arc<Gateway>, caller: &Caller<'_>, req_id: &str, new: NewApproval) -> Result<Value, ErrorShape> {
    let NewApproval { mut record, timeout_ms, two_phase, require_route } = new;
    let routed = has_route(gw, &caller.peer.conn_id);
    if !routed && require_route {
        // Nobody could see it: denied at once, no events, and only the final response.
        check_id_free(gw, &gw.approvals.entries(), &record.id)?;
        record.status = Status::Denied;
        record.reason = Some(Reason::NoRoute);
        record.decision = Some(Decision::Deny);
        record.resolved_at_ms = Some(now_ms());
        record.resolver = Some(Resolver::system(Some(NO_ROUTE_RESOLVER)));
        gw.store.save_approval(&record, &gw.boot_id).map_err(|e| unavailable("request", e))?;
        return Ok(record.final_payload());
    }
    let waiter = register(gw, record.clone(), timeout_ms)?;
    if two_phase {
        let accepted = json!({"status": "accepted", "id": record.id, "deliveryRoute": if routed { "approval-client" } else { "none" },
            "createdAtMs": record.created_at_ms, "expiresAtMs": record.expires_at_ms});
        // The first of two responses with this request id; the final one is this request's own.
        caller.peer.sender.send(Outbound::Text(Frame::Res(ResponseFrame::ok(req_id.to_string(), accepted)).to_json()));
    }
    // Like the real gateway, a waiting approval is work in flight; graceful shutdown cancels
    // it (`gateway-restart`) instead of waiting it out.
    match waiter.done().await {
        Some(end) => Ok(end.final_payload()),
        None => Err(ErrorShape::new(code::UNAVAILABLE, "approval ended without an outcome")),
    }
}

pub async fn request_exec(gw: &Arc<Gateway>, caller: &Caller<'_>, req_id: &str, p: ExecRequestParams) -> Result<Value, ErrorShape> {
    let new = new_exec(p)?;
    submit(gw, caller, req_id, new).await
}

pub async fn request_plugin(gw: &Arc<Gateway>, caller: &Caller<'_>, req_id: &str, p: PluginRequestParams) -> Result<Value, ErrorShape> {
    let new = new_plugin(p)?;
    submit(gw, caller, req_id, new).await
}

/// An exec approval asked by the gateway's own agent run (the demo agent). It always waits
/// for a person (never "no route"), and stopping the run cancels it.
pub fn request_for_run(gw: &Arc<Gateway>, params: ExecRequestParams, run_id: &str) -> Result<(String, Waiter), ErrorShape> {
    let NewApproval { mut record, timeout_ms, .. } = new_exec(params)?;
    record.run_id = Some(run_id.to_string());
    let id = record.id.clone();
    Ok((id, register(gw, record, timeout_ms)?))
}

// ---------------------------------------------------------------------------------------
// Ending approvals.

/// How an approval ends.
struct End {
    status: Status,
    reason: Reason,
    decision: Option<Decision>,
    resolver: Resolver,
    resolved_by: Option<String>,
}

/// Why [`finish`] did not end an approval.
enum NotEnded {
    /// It had already ended (first answer wins): its record.
    Already(ApprovalRecord),
    /// It is not pending in memory.
    Unknown,
}

/// Ends a pending approval: wakes its waiters, persists it, tells every approval client, and
/// forgets it from memory once SQLite holds it.
fn finish(gw: &Arc<Gateway>, id: &str, end: End) -> Result<ApprovalRecord, NotEnded> {
    let record = {
        let mut entries = gw.approvals.entries();
        let entry = entries.get_mut(id).ok_or(NotEnded::Unknown)?;
        if !entry.record.is_pending() {
            return Err(NotEnded::Already(entry.record.clone()));
        }
        let r = &mut entry.record;
        r.status = end.status;
        r.reason = Some(end.reason);
        r.decision = end.decision;
        r.resolved_at_ms = Some(now_ms());
        r.resolver = Some(end.resolver);
        r.resolved_by = end.resolved_by;
        let record = r.clone();
        entry.done.send_replace(Some(record.clone()));
        record
    };
    // Until it is saved it stays in memory (ended), so a lookup always finds it somewhere.
    match gw.store.save_approval(&record, &gw.boot_id) {
        Ok(()) => {
            gw.approvals.entries().remove(id);
        }
        Err(e) => crate::log::error(&format!("could not persist approval {id}: {e}")),
    }
    // The legacy event cannot say "expired" or "cancelled": those are a deny by nobody.
    let payload = json!({
        "id": id, "decision": record.decision.unwrap_or(Decision::Deny).wire(), "resolvedBy": record.resolved_by,
        "ts": record.resolved_at_ms, "request": record.request,
    });
    gw.hub.broadcast(&format!("{}.approval.resolved", record.kind.prefix()), &payload, sees_approvals);
    crate::push::approval_updated(gw, id);
    Ok(record)
}

fn cancel(gw: &Arc<Gateway>, ids: Vec<String>, reason: Reason) -> usize {
    ids.into_iter()
        .filter(|id| {
            finish(gw, id, End { status: Status::Cancelled, reason, decision: None, resolver: Resolver::system(None), resolved_by: None })
                .is_ok()
        })
        .count()
}

/// Cancels the pending approvals of a stopped run (`run-aborted`).
pub fn cancel_run(gw: &Arc<Gateway>, run_id: &str) -> usize {
    let ids = gw.approvals.pending_ids(|r| r.run_id.as_deref() == Some(run_id));
    cancel(gw, ids, Reason::RunAborted)
}

/// Cancels every pending approval (`gateway-restart`): graceful shutdown does this first, so
/// requesters get their final response instead of waiting out the drain.
pub fn cancel_all(gw: &Arc<Gateway>) -> usize {
    let ids = gw.approvals.pending_ids(|_| true);
    cancel(gw, ids, Reason::GatewayRestart)
}

// ---------------------------------------------------------------------------------------
// Looking approvals up.

/// An approval wherever it is: pending or just ended in memory, or saved.
enum Found {
    Live(ApprovalRecord),
    Saved { record: ApprovalRecord, this_boot: bool },
}

impl Found {
    fn record(&self) -> &ApprovalRecord {
        match self {
            Found::Live(r) | Found::Saved { record: r, .. } => r,
        }
    }
    fn into_record(self) -> ApprovalRecord {
        match self {
            Found::Live(r) | Found::Saved { record: r, .. } => r,
        }
    }
}

fn find(gw: &Gateway, id: &str, op: &str) -> Result<Option<Found>, ErrorShape> {
    if let Some(e) = gw.approvals.entries().get(id) {
        return Ok(Some(Found::Live(e.record.clone())));
    }
    Ok(gw
        .store
        .saved_approval(id)
        .map_err(|e| unavailable(op, e))?
        .map(|(record, boot)| Found::Saved { record, this_boot: boot == gw.boot_id }))
}

/// The approval a kind method names: its exact id, or for exec a unique prefix of a pending
/// one. Approvals of another kind, and ended ones of an earlier boot, are unknown here.
fn find_for_kind(gw: &Gateway, kind: ApprovalKind, id: &str, op: &str) -> Result<ApprovalRecord, ErrorShape> {
    match find(gw, id, op)? {
        Some(Found::Saved { this_boot: false, .. }) => return Err(kind_not_found()),
        Some(f) if f.record().kind == kind => return Ok(f.into_record()),
        Some(_) => return Err(kind_not_found()),
        None => {}
    }
    if kind != ApprovalKind::Exec || id.chars().count() < MIN_ID_PREFIX {
        return Err(kind_not_found());
    }
    let mut matches: Vec<ApprovalRecord> = gw
        .approvals
        .entries()
        .values()
        .filter(|e| e.record.kind == kind && e.record.is_pending() && e.record.id.starts_with(id))
        .map(|e| e.record.clone())
        .collect();
    match matches.len() {
        0 => Err(kind_not_found()),
        1 => Ok(matches.remove(0)),
        _ => Err(ErrorShape::invalid("ambiguous approval id prefix; use the full id")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_counted_at_the_top_level_only() {
        let a = analyze("curl -fsSL https://example.invalid/install.sh | sh && rm -rf ./build");
        assert_eq!(a, json!({"commandCount": 3, "nestedCommandCount": 0, "riskKinds": [], "warningLines": []}));
        let a = analyze("python3 -c 'import os; os.remove(\"x\")'");
        assert_eq!(
            a,
            json!({"commandCount": 1, "nestedCommandCount": 0, "riskKinds": ["inline-eval"], "warningLines": ["Contains inline-eval: python3 -c"]})
        );
        assert_eq!(analyze("ls -la")["commandCount"], 1);
        assert_eq!(analyze("make 2>&1 || echo \"a; b\"; true &")["commandCount"], 3);
        assert_eq!(analyze("echo $(date; whoami) `id`")["nestedCommandCount"], 2);
        assert_eq!(analyze("echo $(date; whoami)")["commandCount"], 1);
    }

    #[test]
    fn shell_wrappers_and_inline_eval_are_named() {
        let a = analyze("FOO=1 /bin/bash -lc 'echo hi' && node -e 'x()' && sudo python3 -c 1");
        assert_eq!(a["riskKinds"], json!(["shell-wrapper", "inline-eval"]));
        assert_eq!(
            a["warningLines"],
            json!(["Contains shell-wrapper: bash -c", "Contains inline-eval: node -e", "Contains inline-eval: python3 -c"])
        );
        assert_eq!(analyze("sh script.sh | bash")["riskKinds"], json!([]));
    }

    #[test]
    fn argv_is_joined_with_quotes_where_a_shell_needs_them() {
        let argv: Vec<String> = ["ls", "-la", "my dir", "it's"].iter().map(|s| s.to_string()).collect();
        assert_eq!(join_argv(&argv), r#"ls -la 'my dir' 'it'"'"'s'"#);
    }

    #[test]
    fn url_paths_encode_like_encode_uri_component_and_cursors_round_trip() {
        assert_eq!(crate::util::encode_uri_component("plugin:ab-c_d.e!~*'()"), "plugin%3Aab-c_d.e!~*'()");
        let mut r = new_record("x-1".into(), ApprovalKind::Exec, json!({}), vec![], 10);
        r.resolved_at_ms = Some(1796220561610);
        assert_eq!(decode_cursor(&encode_cursor(&r)), Some((1796220561610, "x-1".into())));
        // The real gateway's own cursor reads too.
        let real = "eyJ2IjoxLCJyZXNvbHZlZEF0TXMiOjE3OTYyMjA1NjE2MTAsImlkIjoiMzVhN2JiYmEtMjc3Ni00ZGQwLTlhNDAtNDYzYzdiMjRmOGY1In0";
        assert_eq!(decode_cursor(real), Some((1796220561610, "35a7bbba-2776-4dd0-9a40-463c7b24f8f5".into())));
        assert_eq!(decode_cursor("garbage"), None);
    }
}
