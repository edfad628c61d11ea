//! `question.*` over real sockets, checked against the behaviour captured from the real gateway.

mod common;

use std::time::Duration;

use gateway::client::{Client, ClientOptions};
use gateway::{Config, Running};
use protocol::device::DeviceIdentity;
use protocol::methods::scope;
use serde_json::{Value, json};

const TOKEN: &str = "q-22b52c041593cfb02b5b6feed7920851";
const T: Duration = Duration::from_secs(5);

async fn start() -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config::local(TOKEN, dir.path().join("data"), dir.path().join("ui"));
    (gateway::start(cfg).await.unwrap(), dir)
}

async fn agent(gw: &Running) -> Client {
    Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::ADMIN])).await.unwrap()
}

async fn ui(gw: &Running, seed: u8) -> Client {
    common::ui_client(gw, TOKEN, seed).await
}

fn two_questions(timeout_ms: u64) -> Value {
    json!({"questions":[
        {"questionId":"deploy_target","header":"Deploy","question":"Where should this change be deployed?","options":[{"label":"Staging (Recommended)","description":"Safe default"},{"label":"Production"}],"isOther":true},
        {"questionId":"notify","header":"Notify","question":"Which channels should be notified?","multiSelect":true,"options":[{"label":"Email"},{"label":"Slack"},{"label":"Pager","description":"Only for incidents"}],"isOther":true}
    ],"timeoutMs": timeout_ms})
}

#[tokio::test]
async fn answer_flow_matches_the_real_gateway() {
    let (gw, _d) = start().await;
    let mut a = agent(&gw).await;
    let mut u = ui(&gw, 1).await;
    let created = a.request("question.request", two_questions(30_000)).await.unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 36);
    let ev = u.next_event("question.requested", T).await.unwrap();
    assert_eq!(ev.payload.as_ref().unwrap()["id"], id.as_str());
    assert_eq!(ev.payload.as_ref().unwrap()["status"], "pending");
    let listed = u.request("question.list", json!({})).await.unwrap();
    assert_eq!(listed["questions"].as_array().unwrap().len(), 1);
    let res = u
        .request("question.resolve", json!({"id": id, "answers": {"answers": {"deploy_target": [" Staging (Recommended) "], "notify": ["Email", "Slack", "Only on weekdays"]}}}))
        .await
        .unwrap();
    let expected = json!({"answers": {"deploy_target": ["Staging (Recommended)"], "notify": ["Email", "Slack", "Only on weekdays"]}});
    assert_eq!(res, json!({"status": "answered", "answers": expected}));
    // The resolved event reached the UI before (or with) its response.
    let resolved = u.next_event("question.resolved", Duration::from_millis(10)).await.expect("resolved before the response");
    assert_eq!(resolved.payload.unwrap(), json!({"id": id, "status": "answered", "answers": expected}));
    let again = u.request("question.resolve", json!({"id": id, "cancel": true})).await.unwrap_err();
    assert_eq!(again.message, format!("question '{id}' is already answered"));
    assert_eq!(again.detail_reason(), Some("QUESTION_ALREADY_TERMINAL"));
    let got = u.request("question.get", json!({"id": id})).await.unwrap();
    assert_eq!(got["question"]["status"], "answered");
    assert!(u.request("question.list", json!({})).await.unwrap()["questions"].as_array().unwrap().is_empty());
    let waited = a.request("question.waitAnswer", json!({"id": id, "includeResolutionId": true})).await.unwrap();
    assert_eq!(waited["status"], "answered");
    assert!(waited["resolutionId"].is_string());
}

#[tokio::test]
async fn skip_and_expiry_resolve_with_their_status() {
    let (gw, _d) = start().await;
    let mut a = agent(&gw).await;
    let mut u = ui(&gw, 2).await;
    let skip_id = a.request("question.request", two_questions(30_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    assert_eq!(u.request("question.resolve", json!({"id": skip_id, "cancel": true})).await.unwrap(), json!({"status": "cancelled"}));
    let expire_id = a.request("question.request", two_questions(300)).await.unwrap()["id"].as_str().unwrap().to_string();
    let waited = a.request("question.waitAnswer", json!({"id": expire_id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(waited, json!({"status": "expired"}));
    let mut statuses = Vec::new();
    while let Some(ev) = u.next_event("question.resolved", Duration::from_millis(500)).await {
        statuses.push(ev.payload.unwrap()["status"].as_str().unwrap().to_string());
    }
    assert_eq!(statuses, vec!["cancelled", "expired"]);
    let e = u
        .request(
            "question.resolve",
            json!({"id": expire_id, "answers": {"answers": {"deploy_target": ["Production"], "notify": ["Email"]}}}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.message, format!("question '{expire_id}' is already expired"));
}

#[tokio::test]
async fn invalid_requests_and_answers_carry_the_gateways_reasons() {
    let (gw, _d) = start().await;
    let mut a = agent(&gw).await;
    let bad = json!({"questions":[{"questionId":"a","header":"H","question":"Q?","options":[{"label":"1"},{"label":"2"},{"label":"3"},{"label":"4"},{"label":"5"}]}]});
    assert_eq!(a.request("question.request", bad).await.unwrap_err().message, "question 'a' must have either no options or 2 to 4 options");
    let unknown_field = json!({"questions":[{"questionId":"a","header":"H","question":"Q?","options":[],"colour":"red"}]});
    assert_eq!(
        a.request("question.request", unknown_field).await.unwrap_err().message,
        "invalid question.request params: unknown field `questions.0.colour`"
    );
    let strict = json!({"questions":[{"questionId":"a","header":"H","question":"Q?","options":[{"label":"Red"},{"label":"Blue"}]}]});
    let id = a.request("question.request", strict).await.unwrap()["id"].as_str().unwrap().to_string();
    let e = a.request("question.resolve", json!({"id": id, "answers": {"answers": {"a": ["Green"]}}})).await.unwrap_err();
    assert_eq!((e.message.as_str(), e.detail_reason()), ("question 'a' contains an unknown option", Some("QUESTION_INVALID_ANSWER")));
    let e = a.request("question.resolve", json!({"id": "nope", "cancel": true})).await.unwrap_err();
    assert_eq!((e.message.as_str(), e.detail_reason()), ("question 'nope' was not found", Some("QUESTION_NOT_FOUND")));
    let e = a
        .request("question.request", json!({"id": id, "questions":[{"questionId":"a","header":"","question":"Q?","options":[]}]}))
        .await
        .unwrap_err();
    assert_eq!(e.detail_reason(), Some("QUESTION_ID_IN_USE"));
    let e = a.request("question.list", json!({"x": 1})).await.unwrap_err();
    assert!(e.message.contains("unknown field `x`"), "{}", e.message);
}

#[tokio::test]
async fn a_guest_sees_and_answers_only_questions_of_its_own_sessions() {
    let (gw, _d) = start().await;
    let mut a = agent(&gw).await;
    let mut opts =
        ClientOptions::control_ui(&format!("ws://{}", gw.addr), TOKEN, &format!("http://{}", gw.addr), DeviceIdentity::from_seed([9; 32]));
    opts.scopes = vec![scope::SESSIONS_WRITE.into()];
    let mut guest = Client::connect(opts).await.unwrap();
    let created = guest.request("sessions.create", json!({"label": "guest-room"})).await.unwrap();
    let own_key = created["key"].as_str().unwrap().to_string();
    let mut own = two_questions(30_000);
    own["sessionKey"] = json!(own_key);
    let mut other = two_questions(30_000);
    other["sessionKey"] = json!("agent:main:main");
    let own_id = a.request("question.request", own).await.unwrap()["id"].as_str().unwrap().to_string();
    let other_id = a.request("question.request", other).await.unwrap()["id"].as_str().unwrap().to_string();
    let sessionless_id = a.request("question.request", two_questions(30_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    let ev = guest.next_event("question.requested", T).await.unwrap();
    assert_eq!(ev.payload.unwrap()["id"], own_id.as_str());
    assert!(guest.next_event("question.requested", Duration::from_millis(300)).await.is_none(), "the guest saw someone else's question");
    let listed = guest.request("question.list", json!({})).await.unwrap();
    let ids: Vec<&str> = listed["questions"].as_array().unwrap().iter().map(|q| q["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![own_id.as_str()]);
    for hidden in [&other_id, &sessionless_id] {
        let e = guest.request("question.get", json!({"id": hidden})).await.unwrap_err();
        assert_eq!(e.detail_reason(), Some("QUESTION_NOT_FOUND"));
        let e = guest.request("question.resolve", json!({"id": hidden, "cancel": true})).await.unwrap_err();
        assert_eq!(e.detail_reason(), Some("QUESTION_NOT_FOUND"));
    }
    let e = guest.request("question.request", two_questions(1000)).await.unwrap_err();
    assert_eq!(e.code, "FORBIDDEN");
    guest.request("question.resolve", json!({"id": own_id, "cancel": true})).await.unwrap();
}

#[tokio::test]
async fn secret_answers_are_reported_as_stored_and_never_saved() {
    let (gw, dir) = start().await;
    let mut a = agent(&gw).await;
    let q = json!({"questions":[{"questionId":"token","header":"Token","question":"Paste the deploy token","options":[],"isSecret":true,
        "secretStore":{"name":"DEPLOY_TOKEN","kind":"secret"}}]});
    let id = a.request("question.request", q).await.unwrap()["id"].as_str().unwrap().to_string();
    let res = a.request("question.resolve", json!({"id": id, "answers": {"answers": {"token": ["s3cr3t-value-XYZ"]}}})).await.unwrap();
    assert_eq!(res["answers"]["answers"]["token"], json!(["stored"]));
    assert_eq!(gw.gateway.questions.secret("DEPLOY_TOKEN").as_deref(), Some("s3cr3t-value-XYZ"));
    drop(a);
    gw.shutdown().await;
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir.path().join("data")).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        found.push(bytes.windows(16).any(|w| w == b"s3cr3t-value-XYZ"));
    }
    assert!(!found.is_empty() && found.iter().all(|f| !f), "the secret reached the data directory");
}

#[tokio::test]
async fn a_resolved_question_survives_a_restart_in_sqlite() {
    let (gw, dir) = start().await;
    let mut a = agent(&gw).await;
    let id = a.request("question.request", two_questions(30_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    a.request("question.resolve", json!({"id": id, "answers": {"answers": {"deploy_target": ["Production"], "notify": ["Pager"]}}}))
        .await
        .unwrap();
    drop(a);
    gw.shutdown().await;
    let store = gateway::store::Store::open(&dir.path().join("data")).unwrap();
    let saved = store.saved_question(&id).unwrap().unwrap();
    assert_eq!(saved.answers.unwrap().answers["notify"], vec!["Pager".to_string()]);
}
