//! Approvals raised by a backend client (the agent's side), and the gateway's record of them:
//! what `approvals.rs` and `consent.rs` share.

use crate::T;
use std::time::Duration;

use gateway::client::Client;
use serde_json::{Value, json};

/// Raises an approval with `method` (`twoPhase`), checks the gateway routed it to the open UI,
/// and returns its id.
pub async fn raise(agent: &mut Client, method: &str, params: Value) -> String {
    let mut params = params;
    params["twoPhase"] = json!(true);
    let accepted = agent.request(method, params).await.unwrap_or_else(|e| panic!("{method}: {e:?}"));
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    assert_eq!(accepted["deliveryRoute"], "approval-client", "routed to the open UI: {accepted}");
    accepted["id"].as_str().unwrap().to_string()
}

/// An exec approval for `command` in the main conversation, with `extra` fields of the request.
pub async fn raise_exec(agent: &mut Client, command: &str, extra: Value) -> String {
    let mut p = json!({"command": command, "host": "gateway", "cwd": "/tmp/approvals-e2e", "sessionKey": "agent:main:main", "agentId": "main", "timeoutMs": 300_000});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    raise(agent, "exec.approval.request", p).await
}

/// The gateway's record of `id`.
pub async fn record(agent: &mut Client, id: &str) -> Value {
    agent.request("approval.get", json!({"id": id})).await.unwrap_or_else(|e| panic!("approval.get {id}: {e:?}"))["approval"].clone()
}

/// Waits until the gateway records `id` as `status` (a decision is applied by the time the
/// UI shows it, but the check must not depend on which side is faster).
pub async fn recorded(agent: &mut Client, id: &str, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let r = record(agent, id).await;
        if r["status"] == status {
            return r;
        }
        assert!(tokio::time::Instant::now() < deadline, "{id} never became {status}: {r}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The card of pending approval `id`.
pub fn card(id: &str) -> String {
    format!("[data-testid=approval-card][data-approval-id='{id}']")
}
