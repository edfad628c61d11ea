//! The approval methods: the kind methods (`exec.approval.*`, `plugin.approval.*`), the
//! kind-agnostic `approval.get` / `approval.resolve` / `approval.history`, and the list.

use super::*;

/// `<kind>.approval.list`: a bare array of the pending approvals of that kind, oldest first.
/// `openclaw.approval.list` is always empty: this gateway has no system agent.
pub fn list(gw: &Gateway, kind: ApprovalKind) -> Value {
    let mut records: Vec<ApprovalRecord> =
        gw.approvals.entries().values().filter(|e| e.record.kind == kind && e.record.is_pending()).map(|e| e.record.clone()).collect();
    records.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
    Value::Array(records.iter().map(ApprovalRecord::entry).collect())
}

/// `exec.approval.get`: a pending exec approval, as a reviewer sees it.
pub fn exec_get(gw: &Gateway, id: &str) -> Result<Value, ErrorShape> {
    let r = find_for_kind(gw, ApprovalKind::Exec, id, "get")?;
    if !r.is_pending() {
        return Err(kind_not_found());
    }
    Ok(json!({
        "id": r.id, "commandText": text_of(&r.request, "command"), "commandPreview": null, "allowedDecisions": wires(&r.allowed),
        "host": text_of(&r.request, "host"), "nodeId": text_of(&r.request, "nodeId"), "agentId": text_of(&r.request, "agentId"), "expiresAtMs": r.expires_at_ms,
    }))
}

/// `exec.approval.resolve` / `plugin.approval.resolve`: `{ok: true}`; first answer wins, and
/// the same decision again is fine.
pub fn resolve_kind(gw: &Arc<Gateway>, caller: &Caller<'_>, kind: ApprovalKind, p: KindResolveParams) -> Result<Value, ErrorShape> {
    let method = format!("{}.approval.resolve", kind.prefix());
    check_grant_days(&method, p.grant_expires_in_days)?;
    let _ = p.reviewer;
    let decision = Decision::from_wire(&p.decision).ok_or_else(|| ErrorShape::invalid("invalid decision"))?;
    let record = find_for_kind(gw, kind, &p.id, "resolve")?;
    let ended = |r: &ApprovalRecord| if r.decision == Some(decision) { Ok(json!({"ok": true})) } else { Err(already_resolved()) };
    if !record.is_pending() {
        return ended(&record);
    }
    // A decision that was not offered leaves the approval pending.
    if !record.allowed.contains(&decision) {
        return Err(match kind {
            ApprovalKind::Exec => ErrorShape::invalid(format!("{} is unavailable for this command", decision.wire()))
                .with_details(json!({"reason": reason::APPROVAL_ALLOW_ALWAYS_UNAVAILABLE})),
            _ => ErrorShape::invalid(format!("{} is unavailable for this plugin approval", decision.wire()))
                .with_details(json!({"allowedDecisions": wires(&record.allowed)})),
        });
    }
    let status = if decision.allows() { Status::Allowed } else { Status::Denied };
    let end = End {
        status,
        reason: Reason::User,
        decision: Some(decision),
        resolver: Resolver::runtime(caller.peer),
        resolved_by: Some(label(caller.peer)),
    };
    match finish(gw, &record.id, end) {
        Ok(_) => Ok(json!({"ok": true})),
        Err(NotEnded::Already(r)) => ended(&r),
        // Ended and saved between the lookup and now.
        Err(NotEnded::Unknown) => match find(gw, &record.id, "resolve")? {
            Some(f) => ended(f.record()),
            None => Err(kind_not_found()),
        },
    }
}

/// The `resolvedBy` label of a client: its display name, else its id.
pub(super) fn label(peer: &Peer) -> String {
    peer.display_name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| protocol::frame::truncate(n, 128))
        .unwrap_or_else(|| peer.client_id.clone())
}

/// `approval.resolve`: never an error on an ended approval (`applied: false` with what was
/// recorded). It fails closed: a wrong kind, or a decision that was not offered, is recorded
/// as a deny (`malformed-verdict`), exactly like the real gateway.
pub fn resolve(gw: &Arc<Gateway>, caller: &Caller<'_>, p: ResolveParams) -> Result<Value, ErrorShape> {
    check_grant_days("approval.resolve", p.grant_expires_in_days)?;
    let _ = p.reviewer;
    let kind = ApprovalKind::from_wire(&p.kind)
        .filter(|_| ["exec", "plugin", "system-agent"].contains(&p.kind.as_str()))
        .ok_or_else(|| bad_params("approval.resolve", "at /kind: must be exec, plugin or system-agent"))?;
    let record = find(gw, &p.id, "resolve")?.ok_or_else(not_found)?.into_record();
    let not_applied = |r: &ApprovalRecord| json!({"applied": false, "approval": r.snapshot()});
    if !record.is_pending() {
        return Ok(not_applied(&record));
    }
    let verdict = Decision::from_wire(&p.decision).filter(|d| kind == record.kind && record.allowed.contains(d));
    let end = match verdict {
        Some(d) => End {
            status: if d.allows() { Status::Allowed } else { Status::Denied },
            reason: Reason::User,
            decision: Some(d),
            resolver: Resolver::device_or_runtime(caller.peer),
            resolved_by: Some(label(caller.peer)),
        },
        None => End {
            status: Status::Denied,
            reason: Reason::MalformedVerdict,
            decision: Some(Decision::Deny),
            resolver: Resolver::device_or_runtime(caller.peer),
            resolved_by: Some(label(caller.peer)),
        },
    };
    match finish(gw, &record.id, end) {
        Ok(r) => Ok(json!({"applied": true, "approval": r.snapshot()})),
        Err(NotEnded::Already(r)) => Ok(not_applied(&r)),
        Err(NotEnded::Unknown) => Ok(not_applied(&find(gw, &record.id, "resolve")?.ok_or_else(not_found)?.into_record())),
    }
}

/// `approval.get`: pending or ended, any kind, exact id.
pub fn get(gw: &Gateway, id: &str) -> Result<Value, ErrorShape> {
    let record = find(gw, id, "get")?.ok_or_else(not_found)?.into_record();
    Ok(json!({"approval": record.snapshot()}))
}

/// `<kind>.approval.waitDecision`: waits until the approval ends.
pub async fn wait_decision(gw: &Gateway, kind: ApprovalKind, id: &str) -> Result<Value, ErrorShape> {
    let gone = || ErrorShape::invalid("approval expired or not found");
    let record =
        find_for_kind(gw, kind, id, "wait").map_err(|e| if e.detail_reason() == Some(reason::APPROVAL_NOT_FOUND) { gone() } else { e })?;
    let record = if record.is_pending() {
        let waiter = gw.approvals.entries().get(&record.id).map(|e| Waiter(e.done.subscribe()));
        match waiter {
            Some(w) => w.done().await.ok_or_else(gone)?,
            // Ended and saved since the lookup.
            None => find(gw, &record.id, "wait")?.ok_or_else(gone)?.into_record(),
        }
    } else {
        record
    };
    let mut out = record.final_payload();
    out["terminalReason"] = json!(record.reason.map(Reason::as_str));
    Ok(out)
}

/// The opaque `approval.history` cursor: base64url of `{"v":1,"resolvedAtMs":…,"id":"…"}`,
/// as the real gateway makes it.
pub(super) fn encode_cursor(r: &ApprovalRecord) -> String {
    protocol::device::encode_b64url(json!({"v": 1, "resolvedAtMs": r.resolved_at_ms.unwrap_or(0), "id": r.id}).to_string().as_bytes())
}

pub(super) fn decode_cursor(cursor: &str) -> Option<(i64, String)> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor.trim_end_matches('=')).ok()?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    if v.get("v")? != 1 {
        return None;
    }
    Some((v.get("resolvedAtMs")?.as_i64()?, v.get("id")?.as_str()?.to_string()))
}

/// `approval.history`: ended approvals, newest first, a page at a time.
pub fn history(gw: &Gateway, p: HistoryParams) -> Result<Value, ErrorShape> {
    const M: &str = "approval.history";
    let limit = p.limit.unwrap_or(HISTORY_DEFAULT_LIMIT);
    if !(1..=HISTORY_MAX_LIMIT).contains(&limit) {
        return Err(bad_params(M, format!("at /limit: must be 1 to {HISTORY_MAX_LIMIT}")));
    }
    let kind = match p.kind.as_deref() {
        None => None,
        Some(k @ ("exec" | "plugin" | "system-agent")) => Some(k),
        Some(_) => return Err(bad_params(M, "at /kind: must be exec, plugin or system-agent")),
    };
    let before = match &p.cursor {
        None => None,
        Some(c) if c.is_empty() || c.chars().count() > 512 => return Err(bad_params(M, "at /cursor: must be 1 to 512 characters")),
        Some(c) => Some(decode_cursor(c).ok_or_else(|| ErrorShape::invalid("invalid approval.history cursor"))?),
    };
    let mut rows = gw
        .store
        .approval_history(kind, before.as_ref().map(|(ms, id)| (*ms, id.as_str())), limit as usize + 1)
        .map_err(|e| unavailable("history", e))?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let mut out = json!({"items": rows.iter().map(ApprovalRecord::snapshot).collect::<Vec<_>>()});
    if more {
        if let Some(last) = rows.last() {
            out["nextCursor"] = json!(encode_cursor(last));
        }
    }
    Ok(out)
}
