//! Approvals in the dock: arrival and priority beside questions, one deliberate decision sent
//! once and only while connected, first answer wins, expiry, reconnects and history.

use model::dock::{ApprovalState, Dock, Effect, Entry, Lookup, Outcome, Receipt};
use protocol::approval::{ApprovalKind, Decision};
use protocol::error::ErrorShape;
use serde_json::{Value, json};

fn exec(id: &str, expires: i64) -> Value {
    json!({"approvalKind":"exec","id":id,"createdAtMs":1,"expiresAtMs":expires,
        "request":{"command":"ls -la /srv","cwd":"/srv","host":"gateway","agentId":"main","sessionKey":"agent:main:main",
        "allowedDecisions":["allow-once","allow-always","deny"],"commandAnalysis":{"warningLines":["Contains inline-eval: python3 -c"]}}})
}

fn plugin(id: &str) -> Value {
    json!({"approvalKind":"plugin","id":id,"createdAtMs":2,"expiresAtMs":99_000,
        "request":{"title":"Send weekly report","description":"Email 3 people","allowedDecisions":["allow-once","deny"],"sessionKey":"agent:main:b"}})
}

fn question(id: &str) -> Value {
    json!({"id": id, "questions": [{"questionId":"q","header":"H","question":"Which?","options":[{"label":"A"},{"label":"B"}]}],
        "createdAtMs": 1, "expiresAtMs": 99_000, "status": "pending"})
}

fn saved(fx: &[Effect]) -> Vec<Outcome> {
    fx.iter().filter_map(|e| if let Effect::SaveReceipt(r) = e { Some(r.outcome.clone()) } else { None }).collect()
}

#[test]
fn an_approval_is_a_blocking_request_beside_questions_with_the_same_arrows_and_priority() {
    let mut d = Dock::new();
    d.requested(&question("q1"), false);
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 99_000), false);
    assert_eq!(d.current.as_deref(), Some("a1"), "a new blocking request is shown");
    assert!(d.expanded && d.blocks("a1"));
    d.approval_requested(ApprovalKind::Plugin, &plugin("plugin:p1"), true);
    assert_eq!(d.current.as_deref(), Some("a1"), "no switch while the person types");
    let ids: Vec<&str> = d.entries.iter().map(Entry::id).collect();
    assert_eq!(ids, ["q1", "a1", "plugin:p1"]);
    let (a, _) = d.approval("a1").unwrap();
    assert_eq!(a.command.as_deref(), Some("ls -la /srv"));
    assert_eq!(a.warnings, ["Contains inline-eval: python3 -c"]);
    assert_eq!(d.entry("plugin:p1").unwrap().session_key(), Some("agent:main:b"));
    // The same approval listed again keeps its place and state.
    d.approvals_listed(ApprovalKind::Exec, &[exec("a1", 99_000)]);
    assert_eq!(d.len(), 3);
}

#[test]
fn a_decision_is_sent_once_only_while_connected_and_only_if_offered() {
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Plugin, &plugin("plugin:p1"), false);
    let offline = d.decide("plugin:p1", Decision::AllowOnce, false).unwrap_err();
    assert!(offline.contains("Reconnect to decide"), "{offline}");
    assert_eq!(d.approval("plugin:p1").unwrap().1, &ApprovalState::Open, "nothing queued for later");
    assert!(d.decide("plugin:p1", Decision::AllowAlways, true).unwrap_err().contains("does not offer"));
    let params = d.decide("plugin:p1", Decision::AllowOnce, true).unwrap();
    assert_eq!(params, json!({"id":"plugin:p1","kind":"plugin","decision":"allow-once"}));
    assert!(d.decide("plugin:p1", Decision::Deny, true).is_err(), "no second decision while one is in flight");
    let fx = d.decide_ok("plugin:p1", Decision::AllowOnce, &json!({"applied": true}));
    assert_eq!(saved(&fx), [Outcome::AllowedOnce]);
    assert!(d.is_empty());
    let r = &d.receipts[0];
    assert_eq!(r.approval.as_ref().unwrap().title, "Send weekly report");
    assert_eq!(r.session_key.as_deref(), Some("agent:main:b"));
}

#[test]
fn the_first_answer_wins_and_a_losing_decision_says_what_won() {
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 99_000), false);
    d.decide("a1", Decision::AllowOnce, true).unwrap();
    let won = json!({"applied": false, "approval": {"id":"a1","status":"denied","decision":"deny","reason":"user",
        "presentation":{"kind":"exec","commandText":"ls -la /srv"},"createdAtMs":1,"expiresAtMs":99_000,"resolvedAtMs":5,"resolver":{"kind":"channel"}}});
    let fx = d.decide_ok("a1", Decision::AllowOnce, &won);
    assert_eq!(saved(&fx), [Outcome::DecidedElsewhere { decision: Decision::Deny, by: Some("a chat channel".into()) }]);
    assert_eq!(d.receipts[0].outcome.label(), "Decided elsewhere by a chat channel: denied");

    // The event can come before our own response: it says allowed-once like ours, then the
    // response says another decision won, and the summary is corrected.
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &exec("a2", 99_000), false);
    d.decide("a2", Decision::AllowOnce, true).unwrap();
    let fx = d.approval_resolved(&json!({"id":"a2","decision":"allow-once","resolvedBy":"openclaw-control-ui","ts":3}));
    assert_eq!(saved(&fx), [Outcome::AllowedOnce]);
    let fx = d.decide_ok(
        "a2",
        Decision::AllowOnce,
        &json!({"applied": false, "approval": {"id":"a2","status":"allowed","decision":"allow-once",
        "presentation":{"kind":"exec","commandText":"ls"},"createdAtMs":1,"expiresAtMs":9,"resolver":{"kind":"device","id":"x"}}}),
    );
    assert!(matches!(saved(&fx)[..], [Outcome::DecidedElsewhere { decision: Decision::AllowOnce, .. }]), "{fx:?}");
}

#[test]
fn decided_by_another_client_while_shown_closes_with_who_decided() {
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 99_000), false);
    let fx = d.approval_resolved(&json!({"id":"a1","decision":"allow-always","resolvedBy":"gateway-client","ts":3}));
    assert_eq!(saved(&fx), [Outcome::DecidedElsewhere { decision: Decision::AllowAlways, by: Some("a gateway client".into()) }]);
    assert!(!fx.iter().any(|e| matches!(e, Effect::GetApproval(_))), "a named decision needs no check");
    // A late listing of the same id never brings it back.
    d.approvals_listed(ApprovalKind::Exec, &[exec("a1", 99_000)]);
    assert!(d.is_empty());
}

#[test]
fn expiry_closes_an_approval_and_an_unnamed_deny_is_checked_with_the_gateway() {
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 5_000), false);
    assert!(!d.any_due(4_999));
    assert!(d.any_due(5_000));
    let fx = d.tick(5_000);
    assert_eq!(saved(&fx), [Outcome::Expired]);
    assert!(fx.contains(&Effect::GetApproval("a1".into())));
    // The gateway's record agrees: nothing changes.
    let snap = json!({"approval":{"id":"a1","status":"expired","reason":"timeout","presentation":{"kind":"exec","commandText":"ls -la /srv"},"createdAtMs":1,"expiresAtMs":5_000}});
    assert!(saved(&d.approval_got("a1", Lookup::Found(&snap))).is_empty());

    // Expiry announced by the gateway is a deny with nobody named: ask which it was.
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &exec("a2", 99_000), false);
    let fx = d.approval_resolved(&json!({"id":"a2","decision":"deny","resolvedBy":null,"ts":3}));
    assert!(fx.contains(&Effect::GetApproval("a2".into())));
    let snap = json!({"approval":{"id":"a2","status":"expired","reason":"timeout","presentation":{"kind":"exec","commandText":"ls"},"createdAtMs":1,"expiresAtMs":3}});
    assert_eq!(saved(&d.approval_got("a2", Lookup::Found(&snap))), [Outcome::Expired]);
    assert_eq!(d.receipts[0].outcome, Outcome::Expired);
}

#[test]
fn an_unknown_or_gone_id_reads_as_finished_never_as_an_error_loop() {
    let mut d = Dock::new();
    let fx = d.approval_got("nope", Lookup::Unknown);
    assert_eq!(saved(&fx), [Outcome::Unavailable]);
    assert!(d.approval_got("nope", Lookup::Unknown).is_empty(), "asked again, nothing new happens");
    assert!(!fx.iter().any(|e| matches!(e, Effect::GetApproval(_) | Effect::GetApprovalAfter(..))));
    // A refused decision for an id the gateway no longer has asks once, then it is finished.
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 99_000), false);
    d.decide("a1", Decision::Deny, true).unwrap();
    let e = ErrorShape {
        code: "INVALID_REQUEST".into(),
        message: "approval not found".into(),
        details: Some(json!({"reason":"APPROVAL_NOT_FOUND"})),
        retryable: None,
        retry_after_ms: None,
    };
    assert_eq!(d.decide_failed("a1", Some(&e), true), vec![Effect::GetApproval("a1".into())]);
    assert_eq!(saved(&d.approval_got("a1", Lookup::Unknown)), [Outcome::Unavailable]);
    // Network trouble is retried three times, then said on the card.
    d.approval_requested(ApprovalKind::Exec, &exec("a3", 99_000), false);
    for delay in [1_000, 2_000, 4_000] {
        assert_eq!(d.approval_got("a3", Lookup::Failed("timeout")), vec![Effect::GetApprovalAfter("a3".into(), delay)]);
    }
    assert!(d.approval_got("a3", Lookup::Failed("timeout")).is_empty());
    assert!(matches!(d.approval("a3").unwrap().1, ApprovalState::Failed(m) if m.contains("timeout")));
}

#[test]
fn a_decision_cut_off_by_a_disconnect_is_never_resent_on_its_own() {
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 99_000), false);
    d.approval_requested(ApprovalKind::Exec, &exec("a2", 99_000), false);
    d.decide("a1", Decision::AllowOnce, true).unwrap();
    d.decide("a2", Decision::Deny, true).unwrap();
    d.decide_failed("a1", None, true);
    d.decide_failed("a2", None, true);
    assert_eq!(d.approval("a1").unwrap().1, &ApprovalState::Unconfirmed(Decision::AllowOnce));
    // Reconnected: a1 is still pending (the decision never landed), a2 is gone (ask how it ended).
    let fx = d.approvals_listed(ApprovalKind::Exec, &[exec("a1", 99_000)]);
    assert!(matches!(d.approval("a1").unwrap().1, ApprovalState::Failed(m) if m.contains("nothing was decided")));
    assert_eq!(fx, vec![Effect::GetApproval("a2".into())]);
    let snap = json!({"approval":{"id":"a2","status":"denied","decision":"deny","reason":"user","presentation":{"kind":"exec","commandText":"ls"},"createdAtMs":1,"expiresAtMs":9,"resolver":{"kind":"device","id":"ours"}}});
    assert_eq!(saved(&d.approval_got("a2", Lookup::Found(&snap))), [Outcome::Denied], "the decision we sent is the one recorded");
    // Sending while the page knows it is offline never leaves the browser.
    assert!(d.decide("a1", Decision::AllowOnce, false).is_err());
}

#[test]
fn history_rebuilds_summaries_another_browser_made() {
    let mut d = Dock::new();
    let rows = [
        json!({"id":"h1","status":"allowed","decision":"allow-always","presentation":{"kind":"exec","commandText":"make test"},"createdAtMs":1,"expiresAtMs":9,"resolvedAtMs":20,"source":{"sessionKey":"agent:main:main"}}),
        json!({"id":"plugin:h2","status":"expired","presentation":{"kind":"plugin","title":"Pay","description":"12 EUR"},"createdAtMs":1,"expiresAtMs":9,"resolvedAtMs":10}),
    ];
    let fx = d.approval_history(&rows);
    assert_eq!(saved(&fx), [Outcome::AlwaysAllowed, Outcome::Expired]);
    assert_eq!(d.receipts.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["plugin:h2", "h1"], "oldest first");
    assert_eq!(d.receipts[1].session_key.as_deref(), Some("agent:main:main"));
    assert!(d.approval_history(&rows).is_empty(), "merged by id");
    d.approvals_listed(ApprovalKind::Exec, &[exec("h1", 99_000)]);
    assert!(d.is_empty(), "a finished approval is never shown as pending again");
}

#[test]
fn an_approval_summary_is_stored_and_read_back_with_what_won() {
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 99_000), false);
    d.approval_resolved(&json!({"id":"a1","decision":"deny","resolvedBy":"Ana's phone","ts":3}));
    let json = serde_json::to_string(&d.receipts[0]).unwrap();
    let back: Receipt = serde_json::from_str(&json).unwrap();
    assert_eq!(back, d.receipts[0]);
    assert_eq!(back.outcome.label(), "Decided elsewhere by Ana's phone: denied");
    assert_eq!(back.approval.unwrap().command.as_deref(), Some("ls -la /srv"));
}

#[test]
fn a_malformed_approval_is_shown_as_a_readable_notice() {
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &json!({"id":"bad","request":{"cwd":"/"},"expiresAtMs":9}), false);
    match d.entry("bad").unwrap() {
        Entry::Invalid(i) => assert!(i.problem.contains("names no command"), "{}", i.problem),
        other => panic!("{other:?}"),
    }
}

/// Every approval frame captured from openclaw 2026.9.6 reads into the card's shape.
#[test]
fn every_captured_approval_frame_of_the_real_gateway_reads() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../protocol/tests/data/openclaw-2026.9.6-approvals.jsonl")).unwrap();
    let (mut requested, mut listed, mut snapshots) = (0, 0, 0);
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let f = &v["frame"];
        if let Some((kind, protocol::approval::ApprovalEvent::Requested)) = f["event"].as_str().and_then(ApprovalKind::from_event) {
            let a = protocol::approval::read_approval(kind, &f["payload"]).unwrap_or_else(|e| panic!("{e}: {line}"));
            assert!(a.command.is_some() || !a.title.is_empty());
            assert!(a.allowed.contains(&Decision::Deny));
            requested += 1;
        }
        if let Some(arr) = f["payload"].as_array() {
            for entry in arr.iter().filter(|e| e.get("request").is_some()) {
                let kind = entry["approvalKind"].as_str().and_then(ApprovalKind::from_wire).unwrap();
                protocol::approval::read_approval(kind, entry).unwrap();
                listed += 1;
            }
        }
        if let Some(snap) = f["payload"].get("approval").filter(|s| s.get("presentation").is_some()) {
            model::dock::read_snapshot(snap).unwrap_or_else(|| panic!("unread snapshot: {line}"));
            snapshots += 1;
        }
    }
    assert!(requested >= 4 && listed >= 2 && snapshots >= 4, "requested {requested}, listed {listed}, snapshots {snapshots}");
}

#[test]
fn an_approval_withdrawn_by_a_stopped_run_reads_as_cancelled() {
    let mut d = Dock::new();
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 99_000), false);
    let fx = d.approval_resolved(&json!({"id":"a1","decision":"deny","resolvedBy":null,"ts":3}));
    assert!(fx.contains(&Effect::GetApproval("a1".into())), "a deny by nobody is checked");
    let snap = json!({"approval":{"id":"a1","status":"cancelled","reason":"run-aborted","presentation":{"kind":"exec","commandText":"ls"},"createdAtMs":1,"expiresAtMs":99_000}});
    assert_eq!(saved(&d.approval_got("a1", Lookup::Found(&snap))), [Outcome::Cancelled]);
    assert_eq!(d.receipts[0].outcome.label(), "Cancelled");
}

#[test]
fn when_a_question_leaves_the_approval_behind_it_waits_in_the_collapsed_bar_not_under_the_pointer() {
    let mut d = Dock::new();
    d.requested(&question("q1"), false);
    d.approval_requested(ApprovalKind::Exec, &exec("a1", 99_000), true);
    assert_eq!(d.current.as_deref(), Some("q1"), "the question stays in front while the person works on it");
    assert!(d.expanded);
    // A double-click on Skip: the first click skips, and the question leaves.
    d.skip("q1").unwrap();
    d.submit_ok("q1", &json!({"status": "cancelled"}));
    assert_eq!(d.current.as_deref(), Some("a1"));
    assert!(!d.expanded, "the approval is not drawn where the second click lands");
    assert_eq!(d.approvals_waiting(), 1);
    // A question behind a question is shown as before.
    let mut d = Dock::new();
    d.requested(&question("q1"), false);
    d.requested(&question("q2"), true);
    d.skip("q1").unwrap();
    d.submit_ok("q1", &json!({"status": "cancelled"}));
    assert_eq!(d.current.as_deref(), Some("q2"));
    assert!(d.expanded);
}
