//! Faults: a slow consumer, graceful shutdown with work in flight, and kill -9 during writes.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{End, GatewayProcess, Raw, T, backend_params};
use futures_util::StreamExt;
use gateway::client::{Client, ClientOptions};
use gateway::store::{SendStatus, Store};
use protocol::methods::scope;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

const TOKEN: &str = "reliability-ffed8731deb41b5fc1941bf431b53a94";

/// Reads frames until `done` says so; every frame is kept in `raw.received`.
async fn read_until(raw: &mut Raw, what: &str, done: impl Fn(&[String]) -> bool) {
    let deadline = tokio::time::Instant::now() + T * 3;
    while !done(&raw.received) {
        match tokio::time::timeout_at(deadline, raw.ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => raw.received.push(t.to_string()),
            Ok(Some(Ok(Message::Close(c)))) => panic!("closed while waiting for {what}: {c:?}"),
            Ok(Some(Ok(_))) => {}
            Ok(other) => panic!("socket ended while waiting for {what}: {other:?}"),
            Err(_) => panic!("timed out waiting for {what}"),
        }
    }
}

fn events(received: &[String]) -> Vec<Value> {
    received.iter().map(|t| serde_json::from_str::<Value>(t).unwrap()).filter(|v| v["type"] == "event").collect()
}

fn terminal_runs(received: &[String]) -> HashSet<String> {
    events(received)
        .into_iter()
        .filter(|e| e["event"] == "chat" && matches!(e["payload"]["state"].as_str(), Some("final" | "error" | "aborted")))
        .map(|e| e["payload"]["runId"].as_str().unwrap().to_string())
        .collect()
}

/// The per-connection `seq` of every event is 1, 2, 3, … with nothing missing or repeated.
fn assert_contiguous_seq(received: &[String]) {
    let seqs: Vec<u64> = events(received).iter().filter_map(|e| e["seq"].as_u64()).collect();
    let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
    assert_eq!(seqs, expected, "per-connection seq has gaps or repeats");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_is_dropped_at_the_buffer_limit_and_the_others_miss_nothing() {
    let (gw, _d) = common::start_with(TOKEN, |_| {}).await;
    let url = format!("ws://{}", gw.addr);
    let mut fast = Raw::open(&url, None).await;
    fast.req("c", "connect", backend_params(Some(TOKEN), &[scope::ADMIN])).await;
    fast.response("c").await.unwrap();
    let mut slow = Raw::open(&url, None).await;
    slow.req("c", "connect", backend_params(Some(TOKEN), &[scope::ADMIN])).await;
    slow.response("c").await.unwrap();
    let slow_conn = slow
        .received
        .iter()
        .find_map(|t| serde_json::from_str::<Value>(t).ok()?["payload"]["server"]["connId"].as_str().map(str::to_string))
        .unwrap();
    // From here on `slow` is never read again.
    let mut sender = Client::connect(ClientOptions::backend(&url, TOKEN, &[scope::ADMIN])).await.unwrap();
    // Each send fans out about 4 × 3 MiB to every connection (the user row, the echoed
    // delta, the final and the saved reply), in its own session so runs go in parallel.
    let big = "x".repeat(3 * 1024 * 1024);
    let mut send = async |i: usize| {
        let ack = sender
            .request("chat.send", json!({"sessionKey": format!("big-{i}"), "message": big, "idempotencyKey": format!("big-{i}")}))
            .await
            .unwrap();
        assert_eq!(ack["status"], "started");
    };
    let backlog_of_slow = |gw: &gateway::Running| gw.gateway.hub.backlogs().into_iter().find(|(c, _)| *c == slow_conn).map(|(_, b)| b);
    // Phase 1: about 36 MiB for each connection. The slow one holds a large backlog, under
    // the limit, and is still connected.
    for i in 0..3 {
        send(i).await;
    }
    read_until(&mut fast, "three runs", |r| terminal_runs(r).len() == 3).await;
    let backlog = backlog_of_slow(&gw).expect("the slow consumer is still connected under the limit");
    assert!(backlog > 20 * 1024 * 1024 && backlog <= protocol::MAX_BUFFERED_BYTES, "backlog {backlog}");
    // Phase 2: as much again. Past maxBufferedBytes the slow consumer is dropped.
    for i in 3..6 {
        send(i).await;
    }
    let deadline = tokio::time::Instant::now() + T;
    while backlog_of_slow(&gw).is_some() {
        assert!(tokio::time::Instant::now() < deadline, "the slow consumer was not dropped: backlog {:?}", backlog_of_slow(&gw));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The fast client received every event of all six runs, in order, and stays connected.
    read_until(&mut fast, "six runs", |r| terminal_runs(r).len() == 6).await;
    let evs = events(&fast.received);
    for i in 0..6 {
        let run = format!("big-{i}");
        let of_run = |name: &str| {
            evs.iter()
                .filter(|e| {
                    e["event"] == name
                        && (e["payload"]["runId"] == run.as_str() || e["payload"]["message"]["__openclaw"]["runId"] == run.as_str())
                })
                .count()
        };
        assert_eq!(of_run("session.message"), 2, "{run}: the user row and the reply");
        // A run's `chat` and `agent` events share one `seq`.
        let chat_seqs: Vec<u64> = evs
            .iter()
            .filter(|e| (e["event"] == "chat" || e["event"] == "agent") && e["payload"]["runId"] == run.as_str())
            .map(|e| e["payload"]["seq"].as_u64().unwrap())
            .collect();
        assert_eq!(chat_seqs, (1..=chat_seqs.len() as u64).collect::<Vec<_>>(), "{run}: chat and agent events");
        assert!(chat_seqs.len() >= 3, "{run}: status, delta, final");
    }
    assert_contiguous_seq(&fast.received);
    fast.req("h", "health", json!({})).await;
    assert_eq!(fast.response("h").await.unwrap()["connections"], 2, "the fast client and the sender remain");
    // The slow consumer, reading at last, finds its connection ended (closed or reset), and
    // it got less than everything.
    let mut got = 0usize;
    let end = loop {
        match tokio::time::timeout(T, slow.ws.next()).await.expect("the dropped socket ends") {
            Some(Ok(Message::Text(t))) => got += t.len(),
            Some(Ok(Message::Close(c))) => break c.map(|c| End::Closed(u16::from(c.code))).unwrap_or(End::Dropped),
            Some(Ok(_)) => {}
            None | Some(Err(_)) => break End::Dropped,
        }
    };
    assert!(matches!(end, End::Closed(1008) | End::Dropped), "{end:?}");
    assert!(got < 72 * 1024 * 1024, "the slow consumer did not get everything ({got} bytes)");
}

/// A connected backend socket on an in-process gateway.
async fn backend_raw(url: &str) -> Raw {
    let mut raw = Raw::open(url, None).await;
    raw.req("c", "connect", backend_params(Some(TOKEN), &[scope::ADMIN])).await;
    raw.response("c").await.unwrap();
    raw
}

fn responses(received: &[String]) -> HashMap<String, Value> {
    let mut out = HashMap::new();
    for t in received {
        let v: Value = serde_json::from_str(t).unwrap();
        if v["type"] == "res" {
            assert!(out.insert(v["id"].as_str().unwrap().to_string(), v.clone()).is_none(), "two responses to {}", v["id"]);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_answers_every_request_in_flight_and_keeps_every_acknowledged_effect() {
    let (gw, dir) = common::start_with(TOKEN, |_| {}).await;
    let url = format!("ws://{}", gw.addr);
    let mut a = backend_raw(&url).await;
    // Runs in progress at shutdown: two slow ones (5 s, longer than the drain time) and a
    // pending question that nobody answers, with an agent waiting on it.
    for (i, text) in ["slow one", "slow two", "hello"].iter().enumerate() {
        a.req(
            &format!("run-{i}"),
            "chat.send",
            json!({"sessionKey": format!("g-{i}"), "message": text, "idempotencyKey": format!("g-run-{i}")}),
        )
        .await;
        assert_eq!(a.response(&format!("run-{i}")).await.unwrap()["status"], "started");
    }
    a.req(
        "q-open",
        "question.request",
        json!({"id": "g-open", "timeoutMs": 600000, "questions": [{"questionId": "a", "header": "H", "question": "Q?", "options": []}]}),
    )
    .await;
    a.response("q-open").await.unwrap();
    a.req("wait", "question.waitAnswer", json!({"id": "g-open"})).await;
    // A burst of pipelined requests, and shutdown while they are being handled.
    let mut ids = vec!["wait".to_string()];
    for i in 0..20 {
        a.req(
            &format!("send-{i}"),
            "chat.send",
            json!({"sessionKey": format!("g-burst-{}", i % 4), "message": format!("burst {i}"), "idempotencyKey": format!("g-burst-{i}")}),
        )
        .await;
        a.req(&format!("ask-{i}"), "question.request", json!({"id": format!("g-q-{i}"), "timeoutMs": 600000, "questions": [{"questionId": "a", "header": "H", "question": "Q?", "options": []}]})).await;
        a.req(
            &format!("answer-{i}"),
            "question.resolve",
            json!({"id": format!("g-q-{i}"), "answers": {"answers": {"a": [format!("answer {i}")]}}}),
        )
        .await;
        ids.extend([format!("send-{i}"), format!("ask-{i}"), format!("answer-{i}")]);
    }
    // Stop once the first of the burst is answered: the rest is being read or handled.
    read_until(&mut a, "the first burst response", |r| r.iter().any(|t| t.contains(r#""id":"send-0""#))).await;
    let gateway = gw.gateway.clone();
    let stopping = tokio::spawn(gw.shutdown_within(Duration::from_secs(2)));
    let end = a.end().await;
    tokio::time::timeout(T * 2, stopping).await.expect("shutdown finishes").unwrap();
    assert_eq!(end, End::Closed(1012), "the socket closes with 1012 after the drain");
    let res = responses(&a.received);
    for id in &ids {
        let r = res.get(id).unwrap_or_else(|| panic!("no response to {id} before the close"));
        if r["ok"] == false {
            let code = r["error"]["code"].as_str().unwrap();
            let msg = r["error"]["message"].as_str().unwrap();
            // Refused because the gateway was stopping, or a resolve that overtook its request.
            assert!(code == "UNAVAILABLE" && r["error"]["retryable"] == true || msg.contains("was not found"), "{id}: {r}");
        }
    }
    assert_eq!(res["wait"]["error"]["code"], "UNAVAILABLE", "the waiter is told the gateway stopped");
    let evs = events(&a.received);
    assert!(evs.iter().any(|e| e["event"] == "shutdown"), "the shutdown event arrives");
    // The close came after every response.
    let last_res = a.received.iter().rposition(|t| t.contains(r#""type":"res""#)).unwrap();
    let shutdown_at = a.received.iter().position(|t| t.contains(r#""event":"shutdown""#)).unwrap();
    assert!(last_res < shutdown_at, "every response precedes the shutdown event");
    assert_eq!(gateway.drain.in_flight(), (0, 0), "nothing is left in flight");
    drop(gateway);

    // Every acknowledged effect is in SQLite; every acknowledged run has a recorded end.
    let store = Store::open(&dir.path().join("data")).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let mut acked = (0, 0);
    for i in 0..20 {
        if res[&format!("send-{i}")]["ok"] == true {
            acked.0 += 1;
            assert_eq!(store.count_messages_with_key(&format!("g-burst-{i}:user")).unwrap(), 1, "send-{i}");
            let status = store.send_status(&format!("g-burst-{i}")).unwrap().unwrap();
            assert!(matches!(status, SendStatus::Ok | SendStatus::Aborted), "send-{i}: {status:?}");
        }
        if res[&format!("answer-{i}")]["ok"] == true {
            acked.1 += 1;
            let saved = store.saved_question(&format!("g-q-{i}")).unwrap().expect("an acknowledged answer is saved");
            assert_eq!(saved.answers.unwrap().answers["a"], vec![format!("answer {i}")]);
        }
    }
    assert!(acked.0 + acked.1 > 0, "some of the burst was handled before the stop");
    println!(
        "graceful shutdown: {} of 20 sends and {} of 20 answers acknowledged, all saved; the rest refused as retryable",
        acked.0, acked.1
    );
    for i in 0..2 {
        // The slow runs outlived the drain time: aborted, with their aborted reply saved.
        assert_eq!(store.send_status(&format!("g-run-{i}")).unwrap(), Some(SendStatus::Aborted));
        let (rows, _) = store.history(&format!("agent:main:g-{i}"), 10, 0).unwrap();
        assert_eq!(rows.last().unwrap()["stopReason"], "aborted");
    }
    assert_eq!(store.send_status("g-run-2").unwrap(), Some(SendStatus::Ok), "the short run finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_gateway_binary_after_the_work_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut gw = GatewayProcess::spawn(&data, TOKEN, &[]);
    let mut a = backend_raw(&gw.url()).await;
    // A slow run (about 5 s) is within the binary's drain time: it finishes normally.
    a.req("slow", "chat.send", json!({"sessionKey": "t", "message": "slow please", "idempotencyKey": "t-slow"})).await;
    assert_eq!(a.response("slow").await.unwrap()["status"], "started");
    // A run waiting for a person's answer is aborted at once (its question cancelled).
    a.req("deploy", "chat.send", json!({"sessionKey": "t-ask", "message": "deploy", "idempotencyKey": "t-deploy"})).await;
    assert_eq!(a.response("deploy").await.unwrap()["status"], "started");
    read_until(&mut a, "the deploy question", |r| r.iter().any(|t| t.contains(r#""event":"question.requested""#))).await;
    for i in 0..10 {
        a.req(&format!("ask-{i}"), "question.request", json!({"id": format!("t-q-{i}"), "timeoutMs": 600000, "questions": [{"questionId": "a", "header": "H", "question": "Q?", "options": []}]})).await;
        a.req(&format!("answer-{i}"), "question.resolve", json!({"id": format!("t-q-{i}"), "answers": {"answers": {"a": ["yes"]}}})).await;
    }
    let pid = gw.child.id();
    std::process::Command::new("kill").arg("-TERM").arg(pid.to_string()).status().unwrap();
    let end = a.end().await;
    assert_eq!(end, End::Closed(1012));
    assert!(gw.terminate(), "exit status 0");
    let res = responses(&a.received);
    for i in 0..10 {
        assert!(
            res.contains_key(&format!("ask-{i}")) && res.contains_key(&format!("answer-{i}")),
            "request {i} was answered before the close"
        );
    }
    let finished = terminal_runs(&a.received);
    assert!(finished.contains("t-slow"), "the slow run finished before the gateway stopped");
    let store = Store::open(&data).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    assert_eq!(store.send_status("t-slow").unwrap(), Some(SendStatus::Ok));
    assert_eq!(store.send_status("t-deploy").unwrap(), Some(SendStatus::Aborted));
    let evs = events(&a.received);
    let asked =
        evs.iter().find(|e| e["event"] == "question.requested" && e["payload"]["runId"] == "t-deploy").expect("the deploy question");
    let cancelled = evs
        .iter()
        .find(|e| e["event"] == "question.resolved" && e["payload"]["id"] == asked["payload"]["id"])
        .expect("the deploy question was resolved");
    assert_eq!(cancelled["payload"]["status"], "cancelled");
    for i in 0..10 {
        if res[&format!("answer-{i}")]["ok"] == true {
            assert!(store.saved_question(&format!("t-q-{i}")).unwrap().is_some(), "t-q-{i}");
        }
    }
    let log = String::from_utf8_lossy(&gw.stderr.lock().unwrap()).to_string();
    assert!(log.contains("stopping: draining"), "{log}");
}

/// What the storm's clients had acknowledged before the kill.
#[derive(Default)]
struct Acked {
    sends: Vec<(String, String)>,
    answers: Vec<(String, String)>,
}

/// Clients writing as fast as they can until their connection dies.
async fn storm(url: &str, round: usize, acked: Arc<Mutex<Acked>>) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    for c in 0..6 {
        let mut client = Client::connect(ClientOptions::backend(url, TOKEN, &[scope::ADMIN])).await.unwrap();
        let acked = acked.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0.. {
                let session = format!("k-{round}-{c}");
                let key = format!("k-{round}-{c}-{n}");
                match client.request("chat.send", json!({"sessionKey": session, "message": format!("storm {n}"), "idempotencyKey": key})).await {
                    Ok(v) if v["status"] == "started" => acked.lock().unwrap().sends.push((format!("agent:main:{session}"), key)),
                    Ok(v) => panic!("unexpected ack {v}"),
                    Err(_) => return,
                }
                let qid = format!("kq-{round}-{c}-{n}");
                let q = json!({"id": qid, "timeoutMs": 600000, "questions": [{"questionId": "a", "header": "H", "question": "Q?", "options": []}]});
                if client.request("question.request", q).await.is_err() {
                    return;
                }
                let answer = format!("answer-{round}-{c}-{n}");
                match client.request("question.resolve", json!({"id": qid, "answers": {"answers": {"a": [answer]}}})).await {
                    Ok(_) => acked.lock().unwrap().answers.push((qid, answer)),
                    Err(_) => return,
                }
            }
        }));
    }
    tasks
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_write_storm_loses_no_acknowledged_message_or_answer() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let acked: Arc<Mutex<Acked>> = Arc::default();
    for round in 0..3 {
        let mut gw = GatewayProcess::spawn(&data, TOKEN, &[]);
        let tasks = storm(&gw.url(), round, acked.clone()).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        gw.kill9();
        for t in tasks {
            tokio::time::timeout(T, t).await.expect("the storm's clients stop when the gateway dies").unwrap();
        }
    }
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    assert!(
        acked.sends.len() > 30 && acked.answers.len() > 30,
        "the storm wrote: {} sends, {} answers",
        acked.sends.len(),
        acked.answers.len()
    );

    // Restarted on the same data directory, the gateway serves every acknowledged message.
    let mut gw = GatewayProcess::spawn(&data, TOKEN, &[]);
    let mut c = Client::connect(ClientOptions::backend(&gw.url(), TOKEN, &[scope::ADMIN])).await.unwrap();
    let mut by_session: HashMap<&str, Vec<&str>> = HashMap::new();
    for (session, key) in &acked.sends {
        by_session.entry(session).or_default().push(key);
    }
    for (session, keys) in &by_session {
        let h = c.request("chat.history", json!({"sessionKey": session, "limit": 1000})).await.unwrap();
        let saved: HashSet<String> = h["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["__openclaw"]["idempotencyKey"].as_str().map(str::to_string))
            .collect();
        for k in keys {
            assert!(saved.contains(&format!("{k}:user")), "{k} was acknowledged but is missing after the restart");
        }
    }
    // A send whose run the kill cut off answers a retry (it is not stuck in flight).
    let (session, key) = acked.sends.last().unwrap();
    let retry = c.request("chat.send", json!({"sessionKey": session, "message": "again", "idempotencyKey": key})).await.unwrap();
    assert_ne!(retry["status"], "in_flight", "{retry}");
    drop(c);
    assert!(gw.terminate());

    let store = Store::open(&data).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    for (_, key) in &acked.sends {
        assert_eq!(store.count_messages_with_key(&format!("{key}:user")).unwrap(), 1, "{key}");
        assert_ne!(store.send_status(key).unwrap(), Some(SendStatus::InFlight), "{key}");
    }
    for (id, answer) in &acked.answers {
        let saved = store.saved_question(id).unwrap().unwrap_or_else(|| panic!("answer to {id} was acknowledged but is missing"));
        assert_eq!(saved.answers.unwrap().answers["a"], vec![answer.clone()]);
    }
    println!(
        "kill -9 ×3: {} acknowledged messages and {} acknowledged answers all present; integrity_check ok",
        acked.sends.len(),
        acked.answers.len()
    );
}
