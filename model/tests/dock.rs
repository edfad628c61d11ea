//! The dock state machine: drafts, priority, hydration and reconciliation, expiry and races.

use model::dock::{Dock, Effect, LocalState, Lookup, Outcome, countdown};
use model::draft::QuestionDraft;
use protocol::error::ErrorShape;
use serde_json::{Value, json};

fn rec(id: &str, created: i64, expires: i64) -> Value {
    json!({"id": id, "questions": [
        {"questionId":"target","header":"Deploy","question":"Where?","options":[{"label":"Staging"},{"label":"Production"}],"isOther":true},
        {"questionId":"notify","header":"Notify","question":"Who?","multiSelect":true,"options":[{"label":"Email"},{"label":"Slack"}],"isOther":true}
    ], "createdAtMs": created, "expiresAtMs": expires, "status": "pending"})
}

fn answered_draft(dock: &Dock, id: &str) -> QuestionDraft {
    let r = dock.record(id).unwrap();
    let mut d = QuestionDraft::new(id);
    d.pick(&r.questions[0], "Staging");
    d.toggle(&r.questions[1], "Email");
    d.type_other(&r.questions[1], "weekdays only");
    d
}

fn receipts(fx: &[Effect]) -> Vec<Outcome> {
    fx.iter().filter_map(|e| if let Effect::SaveReceipt(r) = e { Some(r.outcome.clone()) } else { None }).collect()
}

#[test]
fn a_new_request_takes_priority_unless_the_person_is_typing_in_the_dock() {
    let mut d = Dock::new();
    d.requested(&rec("a", 1, 10_000), false);
    assert_eq!(d.current.as_deref(), Some("a"));
    d.requested(&rec("b", 2, 10_000), false);
    assert_eq!(d.current.as_deref(), Some("b"), "the newest blocking request is shown");
    let fx = d.requested(&rec("c", 3, 10_000), true);
    assert_eq!(d.current.as_deref(), Some("b"), "no switch under the person's fingers");
    assert!(matches!(&fx[0], Effect::Announce(t) if t.contains("3 requests are waiting")));
    // The arrows step through the pending requests in arrival order (a pane's `DockView`).
    let ids: Vec<String> = d.entries.iter().map(|e| e.id().to_string()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    let step = |d: &mut Dock, forward| {
        let next = model::panes::pane_step(&ids, d.current.as_deref(), forward).unwrap();
        d.select(&next);
    };
    step(&mut d, true);
    assert_eq!(d.current.as_deref(), Some("c"));
    step(&mut d, true);
    assert_eq!(d.current.as_deref(), Some("a"), "arrows wrap");
    step(&mut d, false);
    assert_eq!(d.current.as_deref(), Some("c"));
}

#[test]
fn an_invalid_record_becomes_a_readable_notice_not_a_crash() {
    let mut d = Dock::new();
    let mut bad = rec("x", 1, 10_000);
    bad["questions"][0]["options"] = json!([{"label":"1"},{"label":"2"},{"label":"3"},{"label":"4"},{"label":"5"}]);
    d.requested(&bad, false);
    match d.entry("x").unwrap() {
        model::dock::Entry::Invalid(i) => {
            assert!(i.problem.contains("2 to 4 options"), "{}", i.problem);
            assert!(i.raw.contains("\"label\":\"5\""));
        }
        other => panic!("expected an invalid entry, got {other:?}"),
    }
    d.requested(&json!({"id": "y", "questions": "nope"}), false);
    assert_eq!(d.len(), 2);
    d.requested(&json!(42), false);
    assert_eq!(d.len(), 3);
}

#[test]
fn submit_then_resolved_with_our_answers_is_answered_and_other_answers_are_answered_elsewhere() {
    let mut d = Dock::new();
    d.requested(&rec("a", 1, 10_000), false);
    d.requested(&rec("b", 2, 10_000), false);
    let draft = answered_draft(&d, "a");
    let params = d.submit("a", &draft).unwrap();
    assert_eq!(params.answers.as_ref().unwrap().answers["notify"], vec!["Email", "weekdays only"]);
    assert!(d.submit("a", &draft).is_err(), "no double submission while waiting");
    let fx =
        d.resolved(&json!({"id":"a","status":"answered","answers":{"answers":{"target":["Staging"],"notify":["Email","weekdays only"]}}}));
    assert_eq!(receipts(&fx), vec![Outcome::Answered { answers: params.answers.clone().unwrap() }]);
    assert!(fx.contains(&Effect::DropDraft("a".into())));
    // b was answered by someone else.
    let fx = d.resolved(&json!({"id":"b","status":"answered","answers":{"answers":{"target":["Production"],"notify":["Slack"]}}}));
    assert!(matches!(&receipts(&fx)[0], Outcome::AnsweredElsewhere { answers } if answers.answers["target"] == vec!["Production"]));
    assert!(d.is_empty());
    // A late submit response changes nothing.
    assert!(d.submit_ok("a", &json!({"status":"answered"})).is_empty());
}

#[test]
fn a_resolution_before_its_request_is_kept_and_the_id_never_comes_back() {
    let mut d = Dock::new();
    assert!(d.resolved(&json!({"id":"early","status":"cancelled"})).is_empty());
    let fx = d.requested(&rec("early", 1, 10_000), false);
    assert_eq!(receipts(&fx), vec![Outcome::SkippedElsewhere]);
    assert!(d.is_empty());
    // A stale listing cannot resurrect it.
    d.listed(&[rec("early", 1, 10_000)]);
    assert!(d.is_empty());
}

#[test]
fn reconnect_hydrates_from_the_list_and_gets_the_missing_ones() {
    let mut d = Dock::new();
    d.requested(&rec("kept", 1, 10_000), false);
    d.requested(&rec("gone", 2, 10_000), false);
    let fx = d.listed(&[rec("kept", 1, 10_000), rec("new", 3, 10_000)]);
    assert!(fx.contains(&Effect::Get("gone".into())));
    assert!(!fx.iter().any(|e| matches!(e, Effect::Get(id) if id == "kept")));
    assert_eq!(d.len(), 3);
    let fx = d.got("gone", Lookup::Unknown);
    assert_eq!(receipts(&fx), vec![Outcome::Unavailable]);
    // A transient failure is retried after 1, 2 and 4 s, then reported.
    d.requested(&rec("flaky", 4, 10_000), false);
    assert_eq!(d.got("flaky", Lookup::Failed("boom")), vec![Effect::GetAfter("flaky".into(), 1000)]);
    assert_eq!(d.got("flaky", Lookup::Failed("boom")), vec![Effect::GetAfter("flaky".into(), 2000)]);
    assert_eq!(d.got("flaky", Lookup::Failed("boom")), vec![Effect::GetAfter("flaky".into(), 4000)]);
    assert!(d.got("flaky", Lookup::Failed("boom")).is_empty());
    assert!(matches!(d.state("flaky"), Some(LocalState::Failed { message }) if message.contains("boom")));
}

#[test]
fn a_lost_acknowledgement_keeps_the_local_answer() {
    let mut d = Dock::new();
    d.requested(&rec("a", 1, 10_000), false);
    let draft = answered_draft(&d, "a");
    let params = d.submit("a", &draft).unwrap();
    d.submit_failed("a", None, true);
    assert!(matches!(d.state("a"), Some(LocalState::Unconfirmed { .. })));
    // After reconnect it is gone from the list and from the gateway: keep what we sent.
    let fx = d.listed(&[]);
    assert!(fx.contains(&Effect::Get("a".into())));
    let fx = d.got("a", Lookup::Unknown);
    assert_eq!(receipts(&fx), vec![Outcome::Answered { answers: params.answers.unwrap() }]);
}

#[test]
fn an_answer_that_never_landed_reopens_with_the_draft_intact() {
    let mut d = Dock::new();
    d.requested(&rec("a", 1, 10_000), false);
    let draft = answered_draft(&d, "a");
    d.submit("a", &draft).unwrap();
    d.submit_failed("a", None, true);
    d.listed(&[rec("a", 1, 10_000)]);
    assert!(matches!(d.state("a"), Some(LocalState::Failed { message }) if message.contains("submit again")));
    assert!(d.submit("a", &draft).is_ok(), "can be sent again");
}

#[test]
fn errors_are_non_destructive_and_already_terminal_is_reconciled() {
    let mut d = Dock::new();
    d.requested(&rec("a", 1, 10_000), false);
    let draft = answered_draft(&d, "a");
    d.submit("a", &draft).unwrap();
    d.submit_failed("a", None, false);
    assert!(matches!(d.state("a"), Some(LocalState::Failed { message }) if message.starts_with("Not connected")));
    d.submit("a", &draft).unwrap();
    let invalid = ErrorShape::question("QUESTION_INVALID_ANSWER", "question 'target' contains an unknown option");
    d.submit_failed("a", Some(&invalid), true);
    assert!(matches!(d.state("a"), Some(LocalState::Failed { message }) if message.contains("unknown option")));
    d.submit("a", &draft).unwrap();
    let done = ErrorShape::question("QUESTION_ALREADY_TERMINAL", "question 'a' is already answered");
    assert_eq!(d.submit_failed("a", Some(&done), true), vec![Effect::Get("a".into())]);
    let fx = d.got("a", Lookup::Found(&json!({"question": {"id":"a","questions":rec("a",1,1)["questions"],"createdAtMs":1,"expiresAtMs":2,"status":"answered","answers":{"answers":{"target":["Production"],"notify":["Slack"]}}}})));
    assert!(matches!(&receipts(&fx)[0], Outcome::AnsweredElsewhere { .. }));
}

#[test]
fn skip_is_its_own_outcome_and_expiry_never_answers() {
    let mut d = Dock::new();
    d.requested(&rec("s", 1, 10_000), false);
    d.requested(&rec("e", 2, 5_000), false);
    let p = d.skip("s").unwrap();
    assert_eq!(p.cancel, Some(true));
    assert!(p.answers.is_none());
    assert_eq!(receipts(&d.submit_ok("s", &json!({"status":"cancelled"}))), vec![Outcome::Skipped]);
    assert!(d.tick(4_999).is_empty());
    let fx = d.tick(5_000);
    assert_eq!(receipts(&fx), vec![Outcome::Expired]);
    assert!(fx.contains(&Effect::Get("e".into())));
    assert!(d.is_empty());
    // The gateway says someone answered it just in time: the receipt is corrected.
    let fx = d.got("e", Lookup::Found(&json!({"question": {"id":"e","questions":rec("e",1,1)["questions"],"createdAtMs":1,"expiresAtMs":2,"status":"answered","answers":{"answers":{"target":["Staging"],"notify":["Email"]}}}})));
    assert!(matches!(&receipts(&fx)[0], Outcome::AnsweredElsewhere { .. }));
    let texts = d.keep_unsent_text("e", "typed".into());
    assert!(texts.is_some());
}

#[test]
fn a_held_answer_is_never_copied_into_a_stored_receipt() {
    let mut d = Dock::new();
    d.requested(&rec("e", 1, 5_000), false);
    assert_eq!(receipts(&d.tick(5_000)), vec![Outcome::Expired]);
    let key = "ghp_oQNCvMKjjzvHFb5ssScv057EnOpIKZhEreZc";
    let r = d.keep_unsent_text("e", format!("use {key}")).expect("the receipt changes");
    assert!(r.unsent_held);
    assert!(r.unsent_text.is_empty());
    assert!(!serde_json::to_string(&r).unwrap().contains(key), "the stored receipt holds no trace of it");
    assert!(d.keep_unsent_text("e", "plain text".into()).is_none(), "once held, the receipt is settled");
}

#[test]
fn countdown_is_m_ss_and_draws_attention_in_the_last_two_minutes() {
    assert_eq!(countdown(600_000, 0), ("10:00".into(), false));
    assert_eq!(countdown(121_000, 0), ("2:01".into(), false));
    assert_eq!(countdown(120_000, 0), ("2:00".into(), true));
    assert_eq!(countdown(1_500, 1_000), ("0:01".into(), true));
    assert_eq!(countdown(0, 5_000), ("0:00".into(), true));
}

fn async_record(id: &str) -> protocol::question::QuestionRecord {
    serde_json::from_value(json!({"id": format!("async:{id}"), "questions": [{"questionId":"q0","header":"Env","question":"Which env?","options":[{"label":"A"},{"label":"B"}],"isOther":true}],
        "createdAtMs": 1, "expiresAtMs": i64::MAX, "status": "pending"})).unwrap()
}

#[test]
fn async_questions_arrive_collapsed_behind_blocking_ones_and_leave_when_no_longer_wanted() {
    let mut d = Dock::new();
    d.sync_async(vec![async_record("x")]);
    assert!(!d.expanded, "an async question arrives collapsed");
    assert!(!d.blocks(d.current.as_deref().unwrap()));
    d.requested(&rec("block", 2, 10_000), false);
    assert!(d.expanded && d.blocks(d.current.as_deref().unwrap()), "a blocking question takes priority and is shown");
    d.sync_async(vec![async_record("x"), async_record("y")]);
    assert_eq!(d.current.as_deref(), Some("block"), "async arrivals never take the front");
    assert_eq!(d.len(), 3);
    // Reconnect listing does not ask the gateway about async entries.
    let fx = d.listed(&[rec("block", 2, 10_000)]);
    assert!(!fx.iter().any(|e| matches!(e, Effect::Get(id) if id.starts_with("async:"))));
    d.sync_async(vec![async_record("y")]);
    assert_eq!(d.len(), 2);
    let fx = d.tick(i64::MAX - 1);
    assert!(fx.iter().all(|e| !matches!(e, Effect::SaveReceipt(r) if r.id.starts_with("async:"))), "async questions never expire");
    assert!(d.entry("async:y").is_some());
}

/// After a reload the transcript's async questions may come before `question.list`: the
/// blocking request it lists still comes first, shown (the real-gateway e2e test found it
/// hidden behind a collapsed async one).
#[test]
fn a_blocking_request_listed_after_async_questions_comes_first_and_is_shown() {
    let mut d = Dock::new();
    d.sync_async(vec![async_record("x"), async_record("y")]);
    assert!(!d.expanded);
    d.listed(&[rec("block", 2, 10_000)]);
    assert_eq!(d.current.as_deref(), Some("block"));
    assert!(d.expanded, "it takes the composer's place, as when it arrives live");
    // With a blocking request already in front, a listing leaves the dock as the person set it.
    d.expanded = false;
    d.listed(&[rec("block", 2, 10_000), rec("second", 3, 10_000)]);
    assert_eq!((d.current.as_deref(), d.expanded), (Some("block"), false));
}

#[test]
fn a_question_arriving_while_the_person_types_in_the_composer_waits_collapsed() {
    let mut d = Dock::new();
    assert!(d.expanded);
    d.requested(&rec("a", 1, 10_000), true);
    assert_eq!(d.current.as_deref(), Some("a"));
    assert!(!d.expanded, "the composer is not taken away mid-sentence");
}

#[test]
fn a_resolution_the_gateway_never_made_is_undone_by_a_listing_asked_for_after_it() {
    let mut d = Dock::new();
    d.requested(&rec("real", 1, 10_000), false);
    // A broken or replayed frame says it was answered elsewhere.
    let fx = d.resolved(&json!({"id": "real", "status": "answered", "answers": {"answers": {"target": ["Production"]}}}));
    assert_eq!(
        receipts(&fx),
        vec![Outcome::AnsweredElsewhere { answers: serde_json::from_value(json!({"answers": {"target": ["Production"]}})).unwrap() }]
    );
    assert!(d.is_empty());
    // The resync's listing, asked for after that event, still has it pending: it comes back.
    let mark = d.list_mark();
    let fx = d.listed_since(&[rec("real", 1, 10_000)], mark);
    assert!(fx.contains(&Effect::DropReceipt("real".into())), "{fx:?}");
    assert_eq!(d.len(), 1);
    assert!(d.receipts.is_empty());
    assert_eq!(d.current.as_deref(), Some("real"));
}

#[test]
fn a_listing_asked_for_before_a_resolution_cannot_bring_it_back() {
    let mut d = Dock::new();
    d.requested(&rec("real", 1, 10_000), false);
    let mark = d.list_mark();
    d.resolved(&json!({"id": "real", "status": "cancelled"}));
    let fx = d.listed_since(&[rec("real", 1, 10_000)], mark);
    assert!(!fx.contains(&Effect::DropReceipt("real".into())));
    assert!(d.is_empty(), "a stale listing must not resurrect a closed request");
    assert_eq!(d.receipts.len(), 1);
}

#[test]
fn a_draft_closed_on_an_events_word_waits_for_the_listing_that_confirms_it() {
    let mut d = Dock::new();
    d.requested(&rec("kept", 1, 10_000), false);
    d.requested(&rec("gone", 2, 10_000), false);
    let fx = d.resolved(&json!({"id": "kept", "status": "cancelled"}));
    assert!(fx.contains(&Effect::ParkDraft("kept".into())) && !fx.contains(&Effect::DropDraft("kept".into())), "{fx:?}");
    let fx = d.resolved(&json!({"id": "gone", "status": "cancelled"}));
    assert!(fx.contains(&Effect::ParkDraft("gone".into())));
    // The listing asked for afterwards still has "kept" (the event lied) but not "gone".
    let mark = d.list_mark();
    let fx = d.listed_since(&[rec("kept", 1, 10_000)], mark);
    assert!(fx.contains(&Effect::DropDraft("gone".into())), "the real closure drops its draft: {fx:?}");
    assert!(!fx.contains(&Effect::DropDraft("kept".into())), "the draft of the request that came back stays: {fx:?}");
    assert_eq!(d.len(), 1);
}

/// Receipts already stored keep reading back: an outcome is `{"kind": …}`, with `answers`
/// for the answered kinds, exactly as earlier builds wrote it.
#[test]
fn stored_outcomes_keep_their_json_form() {
    let answers: protocol::question::QuestionAnswers = serde_json::from_value(json!({"answers": {"q": ["A"]}})).unwrap();
    let cases = [
        (Outcome::Answered { answers: answers.clone() }, json!({"kind": "answered", "answers": {"answers": {"q": ["A"]}}})),
        (Outcome::AnsweredElsewhere { answers }, json!({"kind": "answeredElsewhere", "answers": {"answers": {"q": ["A"]}}})),
        (Outcome::Skipped, json!({"kind": "skipped"})),
        (Outcome::SkippedElsewhere, json!({"kind": "skippedElsewhere"})),
        (Outcome::Expired, json!({"kind": "expired"})),
        (Outcome::Unavailable, json!({"kind": "unavailable"})),
    ];
    for (outcome, stored) in cases {
        assert_eq!(serde_json::to_value(&outcome).unwrap(), stored);
        assert_eq!(serde_json::from_value::<Outcome>(stored).unwrap(), outcome);
    }
    assert!(serde_json::from_value::<Outcome>(json!({"kind": "vanished"})).is_err());
}

#[test]
fn a_plain_reply_answers_only_a_question_a_running_run_asked_and_never_a_secret() {
    let fixture = |name: &str, event: &str| -> Value {
        let path = format!("{}/tests/fixtures/live-runs/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|l| l["frame"]["event"] == event)
            .map(|l| l["frame"]["payload"].clone())
            .unwrap()
    };
    let mut d = Dock::new();
    // `ask_user` called by a real run, and a secrets request from another.
    let asked = fixture("ask-user-from-run", "question.requested");
    let secret = fixture("secrets-request-from-run", "question.requested");
    d.requested(&asked, false);
    d.requested(&secret, false);
    let run = asked["runId"].as_str().unwrap().to_string();
    let secret_run = secret["runId"].as_str().unwrap().to_string();
    let ask = d.entry(asked["id"].as_str().unwrap()).unwrap();
    assert!(ask.plain_reply_answers(std::slice::from_ref(&run)), "asked by a run still going");
    assert!(!ask.plain_reply_answers(&[]), "its run ended: a reply starts a new run instead");
    let s = d.entry(secret["id"].as_str().unwrap()).unwrap();
    assert!(!s.plain_reply_answers(&[secret_run]), "never a secret");
    // A question raised by `question.request` or an attached MCP client carries no run id.
    d.requested(&rec("q-mcp", 1, i64::MAX), false);
    assert!(!d.entry("q-mcp").unwrap().plain_reply_answers(&[run]));
}

#[test]
fn a_secrets_request_is_submitted_with_the_hosts_the_person_allowed_and_its_value_never_stored() {
    let path = format!("{}/tests/fixtures/live-runs/secrets-request-from-run.jsonl", env!("CARGO_MANIFEST_DIR"));
    let req = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["frame"]["event"] == "question.requested")
        .map(|l| l["frame"]["payload"].clone())
        .unwrap();
    let id = req["id"].as_str().unwrap().to_string();
    let mut d = Dock::new();
    d.requested(&req, false);
    let record = d.record(&id).unwrap().clone();
    let mut draft = QuestionDraft::new(&id);
    assert_eq!(draft.hosts(&record), vec!["api.demo.invalid".to_string()], "as the agent proposed");
    assert_eq!(
        draft.add_host(&record, "https://evil.example/x"),
        Err("https://evil.example/x is an address, not a host name: type only the host, for example api.example.com.".into())
    );
    assert!(draft.add_host(&record, "bad host").is_err());
    assert!(draft.add_host(&record, "API.Demo.invalid").is_err(), "already allowed");
    draft.add_host(&record, "*.backup.example:8443").unwrap();
    draft.remove_host(&record, "api.demo.invalid");
    draft.type_other(&record.questions[0], "v-secret-Zq9");
    let stored = serde_json::to_string(&draft).unwrap();
    assert!(!stored.contains("v-secret-Zq9"), "the value is never in what is stored: {stored}");
    assert!(stored.contains("*.backup.example:8443"), "the hosts are kept with the draft");
    let params = d.submit(&id, &draft).unwrap();
    assert_eq!(params.secret_store_allowed_hosts, Some(vec!["*.backup.example:8443".to_string()]));
    assert_eq!(params.answers.unwrap().answers["secret_value"], vec!["v-secret-Zq9".to_string()]);
}

#[test]
fn a_receipt_masks_a_secret_answer_and_never_keeps_an_echoed_credential() {
    let mut d = Dock::new();
    d.requested(
        &json!({"id": "s", "questions": [
            {"questionId":"pw","header":"Password","question":"The database password?","options":[],"isOther":true,"isSecret":true},
            {"questionId":"note","header":"Note","question":"Anything else?","options":[],"isOther":true}
        ], "createdAtMs": 1, "expiresAtMs": 99_000, "status": "pending"}),
        false,
    );
    // Answered elsewhere, and the gateway echoes what was answered.
    let fx = d.resolved(&json!({"id": "s", "status": "answered", "answers": {"answers": {
        "pw": ["hunter2-correct-horse"],
        "note": ["use ghp_4fK9sL2mQ8xZ7vB3nH6jT1rW5yE0uI9oP2aS"]
    }}}));
    let saved = format!("{:?}", receipts(&fx));
    assert!(!saved.contains("hunter2"), "the secret answer is masked: {saved}");
    assert!(saved.contains(model::dock::MASKED_ANSWER), "{saved}");
    assert!(!saved.contains("4fK9sL2mQ8"), "an echoed credential is not kept: {saved}");
    assert!(saved.contains("a GitHub token"), "{saved}");
    // A receipt saved by an earlier build is masked when it is read back.
    let mut old = d.receipts[0].clone();
    old.outcome =
        Outcome::AnsweredElsewhere { answers: serde_json::from_value(json!({"answers": {"pw": ["hunter2-correct-horse"]}})).unwrap() };
    let mut d2 = Dock::new();
    d2.restore_receipts(vec![old]);
    assert!(!format!("{:?}", d2.receipts).contains("hunter2"));
}
