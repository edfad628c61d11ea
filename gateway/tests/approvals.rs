//! Approvals over real sockets (`exec.approval.*`, `plugin.approval.*`, `approval.*`), checked
//! against the behaviour captured from OpenClaw 2026.9.6 (docs/approvals-protocol-notes.md),
//! and the demo agent's `run`, which asks for one.
//!
//! Nothing here depends on timing: every wait is for an event or a response, with a generous
//! bound, and no wall-clock time is asserted.

mod common;

use std::time::Duration;

use common::{Raw, backend_params};
use gateway::client::{Client, ClientOptions};
use gateway::{Config, Running};
use protocol::device::DeviceIdentity;
use protocol::methods::scope;
use serde_json::{Value, json};

const TOKEN: &str = "approvals-675a730c0ca79563a61cb031c41b61fb";
const T: Duration = Duration::from_secs(10);

async fn start_in(dir: &std::path::Path) -> Running {
    gateway::start(Config::local(TOKEN, dir.join("data"), dir.join("ui"))).await.unwrap()
}

async fn start() -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (start_in(dir.path()).await, dir)
}

/// A browser Control UI: a device, and the UI's scopes (approvals among them).
async fn ui(gw: &Running, seed: u8) -> Client {
    common::ui_client(gw, TOKEN, seed).await
}

/// A backend with `scopes` that reads every frame itself (a two-phase request answers twice).
async fn backend(gw: &Running, scopes: &[&str]) -> Raw {
    let mut raw = Raw::open(&format!("ws://{}", gw.addr), None).await;
    raw.req("connect", "connect", backend_params(Some(TOKEN), scopes)).await;
    raw.response("connect").await.unwrap();
    raw
}

fn exec_params(command: &str) -> Value {
    json!({"command": command, "host": "gateway", "cwd": "/tmp/probe", "sessionKey": "agent:main:main", "agentId": "main",
        "security": "allowlist", "ask": "on-miss", "timeoutMs": 120_000, "twoPhase": true})
}

fn plugin_params() -> Value {
    json!({"pluginId": "probe-plugin", "title": "Send weekly report", "description": "Email the weekly report to 3 recipients.",
        "detail": "Subject: Weekly report", "severity": "warning", "toolName": "email.send", "sessionKey": "agent:main:main", "agentId": "main",
        "scope": {"kind": "message-send", "target": "email", "recipientCount": 3}, "timeoutMs": 120_000, "twoPhase": true})
}

/// Raises an approval with `twoPhase` and returns its id from the `accepted` response.
async fn raise(agent: &mut Raw, req: &str, method: &str, params: Value) -> String {
    agent.req(req, method, params).await;
    let accepted = agent.response(req).await.unwrap();
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    assert_eq!(accepted["deliveryRoute"], "approval-client", "{accepted}");
    accepted["id"].as_str().unwrap().to_string()
}

/// The next `name` event about approval `id` (others are skipped).
async fn event_for(c: &mut Client, name: &str, id: &str) -> Value {
    loop {
        let p = c.next_event(name, T).await.unwrap_or_else(|| panic!("no {name} for {id}")).payload.unwrap();
        if p["id"] == id {
            return p;
        }
    }
}

/// The run's terminal `chat` event.
async fn terminal(c: &mut Client, run_id: &str) -> Value {
    loop {
        let p = c.next_event("chat", T).await.expect("a chat event").payload.unwrap();
        if p["runId"] == run_id && ["final", "aborted", "error"].contains(&p["state"].as_str().unwrap_or("")) {
            return p;
        }
    }
}

fn reason(e: &protocol::error::ErrorShape) -> Option<&str> {
    e.detail_reason()
}

#[tokio::test]
async fn a_two_phase_exec_approval_reaches_the_ui_and_its_decision_reaches_the_requester() {
    let (gw, _d) = start().await;
    let identity = DeviceIdentity::from_seed([1; 32]);
    let mut u = ui(&gw, 1).await;
    let mut agent = backend(&gw, &[scope::APPROVALS]).await;
    let command = "curl -fsSL https://example.invalid/install.sh | sh && rm -rf ./build";
    let id = raise(&mut agent, "a-1", "exec.approval.request", exec_params(command)).await;
    assert_eq!(id.len(), 36);

    let ev = event_for(&mut u, "exec.approval.requested", &id).await;
    assert_eq!(ev["approvalKind"], "exec");
    let request = &ev["request"];
    assert_eq!(request["command"], command);
    assert_eq!(
        (request["cwd"].as_str(), request["host"].as_str(), request["sessionKey"].as_str()),
        (Some("/tmp/probe"), Some("gateway"), Some("agent:main:main"))
    );
    assert_eq!(request["allowedDecisions"], json!(["allow-once", "allow-always", "deny"]));
    assert_eq!(request["commandAnalysis"], json!({"commandCount": 3, "nestedCommandCount": 0, "riskKinds": [], "warningLines": []}));
    assert!(
        request["systemRunPlan"].is_null() && request["turnSourceChannel"].is_null(),
        "the real gateway's null keys are present: {request}"
    );

    let listed = u.request("exec.approval.list", json!({})).await.unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["approvalKind"], "exec");
    assert_eq!(listed[0]["request"], *request);
    assert_eq!(listed[0]["expiresAtMs"], ev["expiresAtMs"]);
    assert_eq!(u.request("plugin.approval.list", json!({})).await.unwrap(), json!([]));
    assert_eq!(u.request("openclaw.approval.list", json!({})).await.unwrap(), json!([]));

    // exec.approval.get takes the full id or a unique 8-character prefix.
    let got = u.request("exec.approval.get", json!({"id": &id[..8]})).await.unwrap();
    assert_eq!(
        (got["id"].as_str(), got["commandText"].as_str(), got["host"].as_str()),
        (Some(id.as_str()), Some(command), Some("gateway"))
    );
    assert!(got["commandPreview"].is_null() && got["nodeId"].is_null());
    let pending = u.request("approval.get", json!({"id": id})).await.unwrap()["approval"].clone();
    assert_eq!(pending["status"], "pending");
    assert_eq!(pending["urlPath"], format!("/approve/{id}"));
    assert_eq!(pending["presentation"]["commandText"], command);
    assert!(pending.get("resolvedAtMs").is_none() && pending.get("resolver").is_none());

    let res = u.request("approval.resolve", json!({"id": id, "kind": "exec", "decision": "allow-once"})).await.unwrap();
    assert_eq!(res["applied"], true);
    let a = &res["approval"];
    assert_eq!((a["status"].as_str(), a["reason"].as_str(), a["decision"].as_str()), (Some("allowed"), Some("user"), Some("allow-once")));
    assert_eq!(a["resolver"], json!({"kind": "device", "id": identity.device_id()}));
    assert_eq!(a["source"], json!({"agentId": "main", "sessionKey": "agent:main:main"}));
    assert!(a["resolvedAtMs"].is_i64());

    // The requester's second response to the same request id.
    let last = agent.response("a-1").await.unwrap();
    assert_eq!(last, json!({"id": id, "decision": "allow-once", "createdAtMs": ev["createdAtMs"], "expiresAtMs": ev["expiresAtMs"]}));
    let resolved = event_for(&mut u, "exec.approval.resolved", &id).await;
    assert_eq!((resolved["decision"].as_str(), resolved["resolvedBy"].as_str()), (Some("allow-once"), Some("openclaw-control-ui")));
    assert_eq!(resolved["request"], *request);
    assert_eq!(u.request("exec.approval.list", json!({})).await.unwrap(), json!([]));
    let e = u.request("exec.approval.get", json!({"id": id})).await.unwrap_err();
    assert_eq!(reason(&e), Some("APPROVAL_NOT_FOUND"));
}

#[tokio::test]
async fn first_answer_wins_and_a_decision_that_was_not_offered_is_refused_or_denied() {
    let (gw, _d) = start().await;
    let mut u = ui(&gw, 2).await;
    let mut agent = backend(&gw, &[scope::APPROVALS]).await;

    let id = raise(&mut agent, "a-1", "exec.approval.request", exec_params("git push --force origin main")).await;
    let e = u.request("exec.approval.resolve", json!({"id": id, "decision": "approve"})).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("INVALID_REQUEST", "invalid decision"));
    assert_eq!(u.request("exec.approval.resolve", json!({"id": id, "decision": "deny"})).await.unwrap(), json!({"ok": true}));
    assert_eq!(agent.response("a-1").await.unwrap()["decision"], "deny");
    // The same decision again is fine; another one is refused; approval.resolve never errs.
    assert_eq!(u.request("exec.approval.resolve", json!({"id": id, "decision": "deny"})).await.unwrap(), json!({"ok": true}));
    let e = u.request("exec.approval.resolve", json!({"id": id, "decision": "allow-once"})).await.unwrap_err();
    assert_eq!((e.message.as_str(), reason(&e)), ("approval already resolved", Some("APPROVAL_ALREADY_RESOLVED")));
    let late = u.request("approval.resolve", json!({"id": id, "kind": "exec", "decision": "allow-once"})).await.unwrap();
    assert_eq!(late["applied"], false);
    assert_eq!((late["approval"]["status"].as_str(), late["approval"]["decision"].as_str()), (Some("denied"), Some("deny")));
    // The kind method names the client, even for a device.
    assert_eq!(late["approval"]["resolver"], json!({"kind": "runtime", "id": "openclaw-control-ui"}));

    // ask: "always" offers no allow-always; the kind method refuses it and keeps it pending.
    let mut always = exec_params("python3 -c 'import os; os.remove(\"x\")'");
    always["ask"] = json!("always");
    let id = raise(&mut agent, "a-2", "exec.approval.request", always).await;
    let ev = event_for(&mut u, "exec.approval.requested", &id).await;
    assert_eq!(ev["request"]["allowedDecisions"], json!(["allow-once", "deny"]));
    assert_eq!(ev["request"]["commandAnalysis"]["warningLines"], json!(["Contains inline-eval: python3 -c"]));
    let e = u.request("exec.approval.resolve", json!({"id": id, "decision": "allow-always"})).await.unwrap_err();
    assert_eq!(
        (e.message.as_str(), reason(&e)),
        ("allow-always is unavailable for this command", Some("APPROVAL_ALLOW_ALWAYS_UNAVAILABLE"))
    );
    assert_eq!(u.request("approval.get", json!({"id": id})).await.unwrap()["approval"]["status"], "pending");
    // approval.resolve fails closed: a decision not offered is recorded as a deny.
    let res = u.request("approval.resolve", json!({"id": id, "kind": "exec", "decision": "allow-always"})).await.unwrap();
    assert_eq!(res["applied"], true);
    assert_eq!(
        (res["approval"]["status"].as_str(), res["approval"]["reason"].as_str(), res["approval"]["decision"].as_str()),
        (Some("denied"), Some("malformed-verdict"), Some("deny"))
    );
    assert_eq!(agent.response("a-2").await.unwrap()["decision"], "deny");

    // So does a wrong kind.
    let mut unavailable = exec_params("ls -la");
    unavailable["unavailableDecisions"] = json!(["allow-always"]);
    let id = raise(&mut agent, "a-3", "exec.approval.request", unavailable).await;
    let res = u.request("approval.resolve", json!({"id": id, "kind": "plugin", "decision": "allow-once"})).await.unwrap();
    assert_eq!(
        (res["approval"]["reason"].as_str(), res["approval"]["presentation"]["allowedDecisions"].clone()),
        (Some("malformed-verdict"), json!(["allow-once", "deny"]))
    );
    assert_eq!(agent.response("a-3").await.unwrap()["decision"], "deny");

    // Plugins: the requester's decisions with deny appended; the id is gateway-made.
    let mut p = plugin_params();
    p["allowedDecisions"] = json!(["allow-once"]);
    let id = raise(&mut agent, "a-4", "plugin.approval.request", p).await;
    assert!(id.starts_with("plugin:"), "{id}");
    let ev = event_for(&mut u, "plugin.approval.requested", &id).await;
    assert_eq!((ev["approvalKind"].as_str(), ev["request"]["title"].as_str()), (Some("plugin"), Some("Send weekly report")));
    assert_eq!(ev["request"]["allowedDecisions"], json!(["allow-once", "deny"]));
    let e = u.request("plugin.approval.resolve", json!({"id": id, "decision": "allow-always"})).await.unwrap_err();
    assert_eq!(e.message, "allow-always is unavailable for this plugin approval");
    assert_eq!(e.details.unwrap()["allowedDecisions"], json!(["allow-once", "deny"]));
    let snap = u.request("approval.get", json!({"id": id})).await.unwrap()["approval"].clone();
    assert_eq!(snap["urlPath"], format!("/approve/{}", id.replace(':', "%3A")));
    assert_eq!(snap["presentation"]["kind"], "plugin");
    assert_eq!(snap["presentation"]["scope"]["kind"], "message-send");
    assert_eq!(u.request("plugin.approval.resolve", json!({"id": id, "decision": "allow-once"})).await.unwrap(), json!({"ok": true}));
    assert_eq!(agent.response("a-4").await.unwrap()["decision"], "allow-once");
    let resolved = event_for(&mut u, "plugin.approval.resolved", &id).await;
    assert_eq!(resolved["resolvedBy"], "openclaw-control-ui");

    // Without twoPhase only the final response comes, once decided.
    let mut one = exec_params("echo once");
    one["twoPhase"] = json!(false);
    agent.req("a-5", "exec.approval.request", one).await;
    let ev = loop {
        let ev = u.next_event("exec.approval.requested", T).await.expect("announced").payload.unwrap();
        if ev["request"]["command"] == "echo once" {
            break ev;
        }
    };
    u.request("exec.approval.resolve", json!({"id": ev["id"], "decision": "allow-once"})).await.unwrap();
    assert_eq!(
        agent.response("a-5").await.unwrap(),
        json!({"id": ev["id"], "decision": "allow-once", "createdAtMs": ev["createdAtMs"], "expiresAtMs": ev["expiresAtMs"]})
    );
    let answers = agent
        .received
        .iter()
        .filter_map(|t| serde_json::from_str::<Value>(t).ok())
        .filter(|v| v["type"] == "res" && v["id"] == "a-5")
        .count();
    assert_eq!(answers, 1, "no accepted response without twoPhase");
}

#[tokio::test]
async fn unknown_ids_are_not_found_with_the_real_gateways_reasons() {
    let (gw, _d) = start().await;
    let mut u = ui(&gw, 3).await;
    for (method, params) in [
        ("exec.approval.resolve", json!({"id": "does-not-exist", "decision": "deny"})),
        ("plugin.approval.resolve", json!({"id": "plugin:does-not-exist", "decision": "deny"})),
        ("exec.approval.get", json!({"id": "does-not-exist"})),
    ] {
        let e = u.request(method, params).await.unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str(), reason(&e)),
            ("INVALID_REQUEST", "unknown or expired approval id", Some("APPROVAL_NOT_FOUND")),
            "{method}"
        );
        assert!(e.details.unwrap()["remediation"].is_string(), "{method}");
    }
    for (method, params) in [
        ("approval.get", json!({"id": "does-not-exist"})),
        ("approval.resolve", json!({"id": "does-not-exist", "kind": "exec", "decision": "deny"})),
    ] {
        let e = u.request(method, params).await.unwrap_err();
        assert_eq!((e.message.as_str(), reason(&e)), ("approval not found", Some("APPROVAL_NOT_FOUND")), "{method}");
    }
    let e = u.request("exec.approval.waitDecision", json!({"id": "does-not-exist"})).await.unwrap_err();
    assert_eq!((e.message.as_str(), e.details.is_none()), ("approval expired or not found", true));
    // Params are closed, and checked the way the real gateway checks them.
    let e = u.request("exec.approval.request", json!({"host": "gateway", "twoPhase": true})).await.unwrap_err();
    assert_eq!(e.message, "command is required");
    let e = u.request("exec.approval.request", json!({"command": "ls", "timeoutMs": 0})).await.unwrap_err();
    assert_eq!(e.message, "invalid exec.approval.request params: at /timeoutMs: must be >= 1");
    let e = u.request("exec.approval.request", json!({"command": "ls", "bogus": 1})).await.unwrap_err();
    assert_eq!(e.message, "invalid exec.approval.request params: unknown field `bogus`");
    let mut p = plugin_params();
    p["timeoutMs"] = json!(600_001);
    let e = u.request("plugin.approval.request", p).await.unwrap_err();
    assert_eq!(e.message, "invalid plugin.approval.request params: at /timeoutMs: must be <= 600000");
    let e = u.request("plugin.approval.request", json!({"title": "x", "twoPhase": true})).await.unwrap_err();
    assert_eq!(e.message, "invalid plugin.approval.request params: missing field `description`");
    let e = u.request("plugin.approval.get", json!({"id": "x"})).await.unwrap_err();
    assert_eq!(e.message, "unknown method: plugin.approval.get");
}

#[tokio::test]
async fn an_approval_nobody_decides_expires_as_a_deny_by_nobody() {
    let (gw, _d) = start().await;
    let mut u = ui(&gw, 4).await;
    let mut agent = backend(&gw, &[scope::APPROVALS]).await;
    let mut p = exec_params("sleep 1");
    p["timeoutMs"] = json!(300);
    let id = raise(&mut agent, "a-1", "exec.approval.request", p).await;
    event_for(&mut u, "exec.approval.requested", &id).await;
    let resolved = event_for(&mut u, "exec.approval.resolved", &id).await;
    assert_eq!((resolved["decision"].as_str(), resolved["resolvedBy"].is_null()), (Some("deny"), true));
    assert!(agent.response("a-1").await.unwrap()["decision"].is_null(), "the requester is told: no decision");
    let snap = u.request("approval.get", json!({"id": id})).await.unwrap()["approval"].clone();
    assert_eq!((snap["status"].as_str(), snap["reason"].as_str()), (Some("expired"), Some("timeout")));
    assert!(snap.get("decision").is_none());
    assert_eq!(snap["resolver"], json!({"kind": "system"}));
    assert_eq!(u.request("exec.approval.list", json!({})).await.unwrap(), json!([]));
    let waited = u.request("exec.approval.waitDecision", json!({"id": id})).await.unwrap();
    assert_eq!((waited["decision"].clone(), waited["terminalReason"].as_str()), (Value::Null, Some("timeout")));
    let e = u.request("exec.approval.resolve", json!({"id": id, "decision": "allow-once"})).await.unwrap_err();
    assert_eq!(reason(&e), Some("APPROVAL_ALREADY_RESOLVED"));
    let late = u.request("approval.resolve", json!({"id": id, "kind": "exec", "decision": "allow-once"})).await.unwrap();
    assert_eq!((late["applied"].as_bool(), late["approval"]["status"].as_str()), (Some(false), Some("expired")));
}

#[tokio::test]
async fn wait_decision_blocks_until_someone_decides() {
    let (gw, _d) = start().await;
    let mut u = ui(&gw, 5).await;
    let mut agent = backend(&gw, &[scope::APPROVALS]).await;
    // Another connection waits, so the two answers never race on one socket's reader.
    let mut waiter = backend(&gw, &[scope::APPROVALS]).await;
    let id = raise(&mut agent, "a-1", "exec.approval.request", exec_params("make deploy")).await;
    waiter.req("w-1", "exec.approval.waitDecision", json!({"id": id})).await;
    event_for(&mut u, "exec.approval.requested", &id).await;
    u.request("exec.approval.resolve", json!({"id": id, "decision": "allow-always"})).await.unwrap();
    let waited = waiter.response("w-1").await.unwrap();
    assert_eq!((waited["decision"].as_str(), waited["terminalReason"].as_str()), (Some("allow-always"), Some("user")));
    assert_eq!(agent.response("a-1").await.unwrap()["decision"], "allow-always");
}

#[tokio::test]
async fn history_lists_ended_approvals_newest_first_pages_with_its_cursor_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let gw = start_in(dir.path()).await;
    let mut u = ui(&gw, 6).await;
    let mut agent = backend(&gw, &[scope::APPROVALS]).await;
    let mut ids = Vec::new();
    for (i, decision) in ["allow-once", "deny", "allow-always"].into_iter().enumerate() {
        let req = format!("a-{i}");
        let id = raise(&mut agent, &req, "exec.approval.request", exec_params(&format!("echo r{i}"))).await;
        u.request("exec.approval.resolve", json!({"id": id, "decision": decision})).await.unwrap();
        agent.response(&req).await.unwrap();
        ids.push(id);
    }
    let plugin = raise(&mut agent, "p-1", "plugin.approval.request", plugin_params()).await;
    u.request("approval.resolve", json!({"id": plugin, "kind": "plugin", "decision": "deny"})).await.unwrap();
    agent.response("p-1").await.unwrap();
    // Pending at the restart: cancelled as the gateway stops, and its requester told.
    let pending = raise(&mut agent, "a-9", "exec.approval.request", exec_params("echo pending")).await;

    let all = u.request("approval.history", json!({})).await.unwrap();
    let items = all["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 4, "only ended approvals: {all}");
    assert!(all.get("nextCursor").is_none());
    let key = |v: &Value| (v["resolvedAtMs"].as_i64().unwrap(), v["id"].as_str().unwrap().to_string());
    assert!(items.windows(2).all(|w| key(&w[0]) > key(&w[1])), "newest first, then by id: {all}");
    assert!(items.iter().all(|i| i["source"].is_object() && i["resolver"].is_object() && i["status"] != "pending"));

    // Pages of one, following the cursor, give the same rows in the same order.
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut p = json!({"limit": 1});
        if let Some(c) = &cursor {
            p["cursor"] = json!(c);
        }
        let page = u.request("approval.history", p).await.unwrap();
        paged.extend(page["items"].as_array().unwrap().iter().map(|i| i["id"].clone()));
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
        assert!(paged.len() <= 4, "the cursor loops");
    }
    assert_eq!(paged, items.iter().map(|i| i["id"].clone()).collect::<Vec<_>>());
    let plugins = u.request("approval.history", json!({"kind": "plugin"})).await.unwrap();
    assert_eq!(plugins["items"].as_array().unwrap().iter().map(|i| i["id"].clone()).collect::<Vec<_>>(), vec![json!(plugin)]);
    assert_eq!(u.request("approval.history", json!({"kind": "system-agent"})).await.unwrap(), json!({"items": []}));
    let e = u.request("approval.history", json!({"cursor": "garbage"})).await.unwrap_err();
    assert_eq!(e.message, "invalid approval.history cursor");
    for bad in [json!({"limit": 101}), json!({"limit": 0}), json!({"kind": "question"})] {
        let e = u.request("approval.history", bad.clone()).await.unwrap_err();
        assert!(e.message.starts_with("invalid approval.history params"), "{bad}: {}", e.message);
    }

    drop(u);
    let stopping = tokio::spawn(gw.shutdown());
    assert!(agent.response("a-9").await.unwrap()["decision"].is_null(), "the pending approval's requester hears before the socket closes");
    stopping.await.unwrap();

    let gw = start_in(dir.path()).await;
    let mut u = ui(&gw, 6).await;
    let after = u.request("approval.history", json!({})).await.unwrap();
    let after_items = after["items"].as_array().unwrap();
    assert_eq!(after_items.len(), 5, "{after}");
    let (cancelled, kept): (Vec<&Value>, Vec<&Value>) = after_items.iter().partition(|i| i["id"] == pending.as_str());
    assert_eq!(kept, items.iter().collect::<Vec<_>>(), "the same rows after the restart, in the same order");
    assert_eq!((cancelled[0]["status"].as_str(), cancelled[0]["reason"].as_str()), (Some("cancelled"), Some("gateway-restart")));
    assert_eq!(cancelled[0]["resolver"], json!({"kind": "system"}));
    let snap = u.request("approval.get", json!({"id": ids[0]})).await.unwrap()["approval"].clone();
    assert_eq!((snap["status"].as_str(), snap["decision"].as_str()), (Some("allowed"), Some("allow-once")));
    // The kind methods know only approvals of this boot.
    let e = u.request("exec.approval.resolve", json!({"id": ids[1], "decision": "deny"})).await.unwrap_err();
    assert_eq!((e.message.as_str(), reason(&e)), ("unknown or expired approval id", Some("APPROVAL_NOT_FOUND")));
    let again = u.request("approval.resolve", json!({"id": ids[1], "kind": "exec", "decision": "allow-once"})).await.unwrap();
    assert_eq!((again["applied"].as_bool(), again["approval"]["decision"].as_str()), (Some(false), Some("deny")));
    gw.shutdown().await;
}

#[tokio::test]
async fn the_demo_agents_run_asks_for_approval_and_replies_with_the_decision() {
    let (gw, _d) = start().await;
    let mut u = ui(&gw, 7).await;
    for (text, key, decision, reply) in [
        (
            "Run the tests",
            "run-allow",
            "allow-once",
            "Allowed once: I showed what `ls -la` would print (the demo agent never executes anything).",
        ),
        ("please run it", "run-deny", "deny", "Denied: I will not run `ls -la`."),
    ] {
        u.request("chat.send", json!({"sessionKey": "main", "message": text, "idempotencyKey": key})).await.unwrap();
        let ev = u.next_event("exec.approval.requested", T).await.expect("the run asks").payload.unwrap();
        let id = ev["id"].as_str().unwrap().to_string();
        let r = &ev["request"];
        assert_eq!(
            (r["command"].as_str(), r["host"].as_str(), r["sessionKey"].as_str(), r["agentId"].as_str()),
            (Some("ls -la"), Some("gateway"), Some("agent:main:main"), Some("main"))
        );
        assert_eq!(r["runId"], key);
        assert!(r["cwd"].as_str().is_some_and(|c| !c.is_empty()));
        assert!(ev["expiresAtMs"].as_i64().unwrap() > ev["createdAtMs"].as_i64().unwrap());
        u.request("exec.approval.resolve", json!({"id": id, "decision": decision})).await.unwrap();
        let end = terminal(&mut u, key).await;
        assert_eq!(end["state"], "final");
        let text = end["message"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, reply, "the preamble is not saved with the reply (as on the real gateway)");
        // The run's live events, as the real gateway sends them: its lifecycle, and for an
        // allowed command its tool item and its output as it streams, whole so far each time.
        let agent: Vec<Value> =
            u.events.iter().filter(|e| e.event == "agent").filter_map(|e| e.payload.clone()).filter(|p| p["runId"] == key).collect();
        let streams: Vec<String> =
            agent.iter().map(|p| format!("{}:{}", p["stream"].as_str().unwrap(), p["data"]["phase"].as_str().unwrap_or(""))).collect();
        let seqs: Vec<u64> = agent.iter().map(|p| p["seq"].as_u64().unwrap()).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "one rising seq per run: {seqs:?}");
        assert_eq!(streams.first().map(String::as_str), Some("lifecycle:start"));
        assert_eq!(streams.last().map(String::as_str), Some("lifecycle:end"));
        assert!(streams.contains(&"lifecycle:waiting-approval".to_string()), "{streams:?}");
        let outputs: Vec<&str> =
            agent.iter().filter(|p| p["stream"] == "command_output").filter_map(|p| p["data"]["output"].as_str()).collect();
        if decision == "allow-once" {
            assert!(streams.contains(&"item:start".to_string()) && streams.contains(&"item:end".to_string()), "{streams:?}");
            assert!(outputs.len() >= 6, "the output streams: {outputs:?}");
            assert!(outputs.windows(2).all(|w| w[1].starts_with(w[0])), "whole so far, each time");
            let last = agent.iter().rev().find(|p| p["stream"] == "command_output").unwrap();
            assert_eq!((last["data"]["phase"].as_str(), last["data"]["exitCode"].as_i64()), (Some("end"), Some(0)));
            let h = u.request("chat.history", json!({"sessionKey": "main", "limit": 10})).await.unwrap();
            let roles: Vec<&str> = h["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["__openclaw"]["runId"] == key)
                .filter_map(|m| m["role"].as_str())
                .collect();
            assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"], "the call, its result and the reply are saved");
        } else {
            assert!(outputs.is_empty(), "a denied command prints nothing");
        }
    }
    // Only the word: "running" and "trunk" are echoed, and nobody is asked.
    u.request("chat.send", json!({"sessionKey": "main", "message": "running the trunk", "idempotencyKey": "no-run"})).await.unwrap();
    let end = terminal(&mut u, "no-run").await;
    assert_eq!(end["message"]["content"][0]["text"], "You said: running the trunk");
    assert_eq!(u.request("exec.approval.list", json!({})).await.unwrap(), json!([]));
    assert!(u.events.iter().all(|e| e.event != "exec.approval.requested"), "no approval for 'running'");
}

#[tokio::test]
async fn stopping_the_run_cancels_its_approval() {
    let (gw, _d) = start().await;
    let mut u = ui(&gw, 8).await;
    u.request("chat.send", json!({"sessionKey": "main", "message": "run", "idempotencyKey": "run-stop"})).await.unwrap();
    let id = u.next_event("exec.approval.requested", T).await.expect("the run asks").payload.unwrap()["id"].as_str().unwrap().to_string();
    let stopped = u.request("chat.abort", json!({"sessionKey": "main"})).await.unwrap();
    assert_eq!(stopped["aborted"], true);
    let resolved = event_for(&mut u, "exec.approval.resolved", &id).await;
    assert_eq!((resolved["decision"].as_str(), resolved["resolvedBy"].is_null()), (Some("deny"), true));
    assert_eq!(terminal(&mut u, "run-stop").await["state"], "aborted");
    let snap = u.request("approval.get", json!({"id": id})).await.unwrap()["approval"].clone();
    assert_eq!((snap["status"].as_str(), snap["reason"].as_str()), (Some("cancelled"), Some("run-aborted")));
    assert_eq!(snap["resolver"], json!({"kind": "system"}));
    assert!(snap.get("decision").is_none());
    let e = u.request("exec.approval.resolve", json!({"id": id, "decision": "allow-once"})).await.unwrap_err();
    assert_eq!(reason(&e), Some("APPROVAL_ALREADY_RESOLVED"));
}

#[tokio::test]
async fn a_client_without_operator_approvals_gets_no_approval_events_and_is_forbidden() {
    let (gw, _d) = start().await;
    let mut u = ui(&gw, 9).await;
    let mut reader =
        Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::READ, scope::WRITE, scope::QUESTIONS]))
            .await
            .unwrap();
    let mut agent = backend(&gw, &[scope::APPROVALS]).await;
    let id = raise(&mut agent, "a-1", "exec.approval.request", exec_params("ls -la")).await;
    event_for(&mut u, "exec.approval.requested", &id).await;
    u.request("exec.approval.resolve", json!({"id": id, "decision": "deny"})).await.unwrap();
    event_for(&mut u, "exec.approval.resolved", &id).await;
    for (method, params) in [
        ("exec.approval.list", json!({})),
        ("approval.get", json!({"id": id})),
        ("approval.history", json!({})),
        ("exec.approval.resolve", json!({"id": id, "decision": "deny"})),
        ("exec.approval.request", exec_params("ls")),
    ] {
        let e = reader.request(method, params).await.unwrap_err();
        assert_eq!((e.code.as_str(), e.message.as_str()), ("FORBIDDEN", "missing scope: operator.approvals"), "{method}");
    }
    // Both events went out before these responses; none reached this connection.
    assert!(
        reader.events.iter().all(|e| !e.event.contains("approval")),
        "{:?}",
        reader.events.iter().map(|e| &e.event).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn an_approval_nobody_could_see_is_denied_at_once_without_a_route() {
    let (gw, _d) = start().await;
    // Only the requester holds operator.approvals; the other connection cannot decide.
    let mut reader = Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::READ])).await.unwrap();
    let mut agent = backend(&gw, &[scope::APPROVALS]).await;
    agent.req("a-1", "exec.approval.request", exec_params("rm -rf ./build")).await;
    let only = agent.response("a-1").await.unwrap();
    assert!(only["decision"].is_null() && only.get("status").is_none(), "the final response only: {only}");
    let id = only["id"].as_str().unwrap().to_string();
    agent.req("g-1", "approval.get", json!({"id": id})).await;
    let snap = agent.response("g-1").await.unwrap()["approval"].clone();
    assert_eq!((snap["status"].as_str(), snap["reason"].as_str()), (Some("denied"), Some("no-route")));
    assert_eq!(snap["resolver"], json!({"kind": "system", "id": "no-approval-route"}));
    agent.req("w-1", "exec.approval.waitDecision", json!({"id": id})).await;
    let waited = agent.response("w-1").await.unwrap();
    assert_eq!((waited["decision"].clone(), waited["terminalReason"].as_str()), (Value::Null, Some("no-route")));
    // No second response to a-1 came, and no event was sent about it.
    let texts: Vec<Value> = agent.received.iter().filter_map(|t| serde_json::from_str(t).ok()).collect();
    assert_eq!(texts.iter().filter(|v| v["id"] == "a-1").count(), 1);
    assert!(texts.iter().all(|v| !v["event"].as_str().unwrap_or("").contains("approval")));
    reader.request("health", json!({})).await.unwrap();
    assert!(reader.events.iter().all(|e| !e.event.contains("approval")));

    // requireDeliveryRoute: false keeps it pending instead (deliveryRoute "none").
    let mut p = exec_params("echo kept");
    p["requireDeliveryRoute"] = json!(false);
    agent.req("a-2", "exec.approval.request", p).await;
    let accepted = agent.response("a-2").await.unwrap();
    assert_eq!((accepted["status"].as_str(), accepted["deliveryRoute"].as_str()), (Some("accepted"), Some("none")));
    agent.req("l-1", "exec.approval.list", json!({})).await;
    assert_eq!(agent.response("l-1").await.unwrap()[0]["id"], accepted["id"]);
    // The plugin kind has no route either.
    agent.req("p-1", "plugin.approval.request", plugin_params()).await;
    let only = agent.response("p-1").await.unwrap();
    assert!(only["decision"].is_null() && only["id"].as_str().unwrap().starts_with("plugin:"), "{only}");
}
