//! Chat and the demo agent over real sockets.

use std::time::Duration;

use gateway::client::{Client, ClientOptions};
use gateway::{Config, Running};
use protocol::methods::scope;
use serde_json::{Value, json};

const TOKEN: &str = "chat-16b693e7ab345d6d34711ee947b93b3b";
const T: Duration = Duration::from_secs(10);

async fn start() -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config::local(TOKEN, dir.path().join("data"), dir.path().join("ui"));
    (gateway::start(cfg).await.unwrap(), dir)
}

async fn client(gw: &Running) -> Client {
    Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::ADMIN])).await.unwrap()
}

async fn send(c: &mut Client, session: &str, text: &str, key: &str) -> Value {
    c.request("chat.send", json!({"sessionKey": session, "message": text, "idempotencyKey": key})).await.unwrap()
}

/// Waits for the run's terminal `chat` event and returns it.
async fn terminal(c: &mut Client, run_id: &str) -> Value {
    loop {
        let ev = c.next_event("chat", T).await.expect("a chat event");
        let p = ev.payload.unwrap();
        if p["runId"] == run_id && ["final", "aborted", "error"].contains(&p["state"].as_str().unwrap_or("")) {
            return p;
        }
    }
}

#[tokio::test]
async fn send_streams_a_reply_and_history_holds_both_rows() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let ack = send(&mut c, "main", "hello there", "k-1").await;
    assert_eq!((ack["runId"].as_str(), ack["status"].as_str()), (Some("k-1"), Some("started")));
    let msg = c.next_event("session.message", T).await.unwrap().payload.unwrap();
    assert_eq!(msg["sessionKey"], "agent:main:main");
    assert_eq!(msg["message"]["__openclaw"]["idempotencyKey"], "k-1:user");
    assert_eq!(msg["message"]["content"], "hello there");
    let mut deltas = String::new();
    loop {
        let p = c.next_event("chat", T).await.unwrap().payload.unwrap();
        match p["state"].as_str().unwrap() {
            "delta" => deltas.push_str(p["deltaText"].as_str().unwrap()),
            "final" => break,
            _ => {}
        }
    }
    assert_eq!(deltas, "You said: hello there");
    let h = c.request("chat.history", json!({"sessionKey": "main"})).await.unwrap();
    let msgs = h["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[1]["content"][0]["text"], "You said: hello there");
    assert_eq!(msgs[1]["__openclaw"]["runTerminal"], true);
}

#[tokio::test]
async fn a_repeated_idempotency_key_never_saves_a_second_message() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    send(&mut c, "main", "only once", "dup-1").await;
    let again = send(&mut c, "main", "only once", "dup-1").await;
    assert!(["in_flight", "ok"].contains(&again["status"].as_str().unwrap()), "{again}");
    terminal(&mut c, "dup-1").await;
    let later = send(&mut c, "main", "only once", "dup-1").await;
    assert_eq!(later["status"], "ok");
    assert_eq!(gw.gateway.store.count_messages_with_key("dup-1:user").unwrap(), 1);
}

#[tokio::test]
async fn deploy_asks_a_question_a_plain_reply_answers_it_and_the_run_uses_it() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    send(&mut c, "main", "please deploy the site", "run-d").await;
    let q = c.next_event("question.requested", T).await.unwrap().payload.unwrap();
    assert_eq!(q["sessionKey"], "agent:main:main");
    assert_eq!(q["runId"], "run-d");
    let ack = send(&mut c, "main", "2\nEmail, Slack", "reply-1").await;
    assert_eq!(ack["claimedQuestion"], true, "{ack}");
    let resolved = c.next_event("question.resolved", T).await.unwrap().payload.unwrap();
    assert_eq!(resolved["answers"]["answers"]["deploy_target"], json!(["Production"]));
    assert_eq!(resolved["answers"]["answers"]["notify"], json!(["Email", "Slack"]));
    let fin = terminal(&mut c, "run-d").await;
    assert_eq!(fin["state"], "final");
    let text = fin["message"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Deploying to Production. I will notify: Email, Slack."), "{text}");
}

#[tokio::test]
async fn abort_cancels_the_runs_pending_question() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    send(&mut c, "main", "deploy", "run-a").await;
    let q = c.next_event("question.requested", T).await.unwrap().payload.unwrap();
    let r = c.request("chat.abort", json!({"sessionKey": "main"})).await.unwrap();
    assert_eq!(r["aborted"], true);
    let resolved = c.next_event("question.resolved", T).await.unwrap().payload.unwrap();
    assert_eq!((resolved["id"].clone(), resolved["status"].clone()), (q["id"].clone(), json!("cancelled")));
    assert_eq!(terminal(&mut c, "run-a").await["state"], "aborted");
    assert_eq!(send(&mut c, "main", "deploy", "run-a").await["status"], "aborted");
}

#[tokio::test]
async fn a_failing_run_reports_an_error_and_a_retry_says_so() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    send(&mut c, "main", "fail please", "run-f").await;
    let e = terminal(&mut c, "run-f").await;
    assert_eq!(e["state"], "error");
    assert!(e["errorMessage"].as_str().unwrap().contains("failed on purpose"));
    let again = send(&mut c, "main", "fail please", "run-f").await;
    assert_eq!(again["status"], "error");
    assert_eq!(gw.gateway.store.count_messages_with_key("run-f:user").unwrap(), 1);
}

#[tokio::test]
async fn history_pages_back_and_sessions_are_listed() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    for i in 0..5 {
        send(&mut c, "paging", &format!("m{i}"), &format!("p-{i}")).await;
        terminal(&mut c, &format!("p-{i}")).await;
    }
    let tail = c.request("chat.history", json!({"sessionKey": "paging", "limit": 4})).await.unwrap();
    assert_eq!(tail["totalMessages"], 10);
    assert_eq!(tail["hasMore"], true);
    assert_eq!(tail["messages"][0]["content"], "m3");
    let older = c.request("chat.history", json!({"sessionKey": "paging", "limit": 4, "offset": 8})).await.unwrap();
    assert_eq!(older["hasMore"], false);
    assert_eq!(older["messages"].as_array().unwrap().len(), 2);
    assert_eq!(older["messages"][0]["content"], "m0");
    let list = c.request("sessions.list", json!({"limit": 50, "includeGlobal": true, "includeDerivedTitles": true})).await.unwrap();
    let row = list["sessions"].as_array().unwrap().iter().find(|s| s["key"] == "agent:main:paging").unwrap().clone();
    assert_eq!(row["derivedTitle"], "m0");
    let e = c.request("chat.send", json!({"sessionKey": "x", "message": "", "idempotencyKey": "e"})).await.unwrap_err();
    assert!(e.message.contains("must not be empty"), "{}", e.message);
    let e = c.request("chat.send", json!({"sessionKey": "x", "message": "hi", "idempotencyKey": "e", "bogus": 1})).await.unwrap_err();
    assert!(e.message.contains("unknown field `bogus`"), "{}", e.message);
}
