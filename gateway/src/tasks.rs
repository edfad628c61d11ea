//! Sub-agent tasks as the real gateway lists them (`docs/conversation-tools-protocol-notes.md`
//! §6): `tasks.list`, `tasks.cancel` and the `task` events. The demo agent's `delegate` starts one:
//! a child conversation (`agent:main:subagent:<uuid>`, made from the requester) where a helper
//! run works for about five seconds, so a person can follow it and stop it alone.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use protocol::error::{ErrorShape, code};
use serde_json::{Value, json};

use crate::Gateway;
use crate::hub::Caller;
use crate::session_events::{check_session, peer_sees_session};
use crate::util::{now_ms, uuid_v4};

#[derive(Clone)]
pub struct Task {
    pub id: String,
    /// The conversation that started it.
    pub requester: String,
    pub child: String,
    pub run_id: String,
    pub title: String,
    /// `running`, `completed`, `failed`, `cancelled`.
    pub status: &'static str,
    pub created_at: i64,
    pub ended_at: Option<i64>,
    pub error: Option<String>,
}

impl Task {
    /// The `TaskSummary` the real gateway sends.
    pub fn summary(&self) -> Value {
        let running = self.status == "running";
        let mut t = json!({"id": self.id, "taskId": self.id, "kind": "subagent", "runtime": "subagent", "status": self.status,
            "title": self.title, "agentId": "main", "sessionKey": self.requester, "childSessionKey": self.child, "hasTranscript": true,
            "ownerKey": self.requester, "runId": self.run_id, "createdAt": self.created_at, "updatedAt": self.ended_at.unwrap_or(self.created_at),
            "startedAt": self.created_at, "deliveryStatus": if running { "pending" } else { "delivered" }});
        if running {
            t["execution"] = json!({"state": "running", "currentTool": {"name": "demo_steps", "startedAt": self.created_at}});
            t["lastToolName"] = json!("demo_steps");
        }
        if let Some(at) = self.ended_at {
            t["endedAt"] = json!(at);
        }
        if let Some(e) = &self.error {
            t["error"] = json!(e);
        }
        t
    }
}

#[derive(Default)]
pub struct Tasks {
    all: Mutex<Vec<Task>>,
}

impl Tasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Task>> {
        self.all.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a task started by `requester` is running (`hasActiveSubagentRun` of its row).
    pub fn any_running(&self, requester: &str) -> bool {
        self.lock().iter().any(|t| t.requester == requester && t.status == "running")
    }

    /// The child conversations `requester` started (`childSessions` of its row).
    pub fn children(&self, requester: &str) -> Vec<String> {
        self.lock().iter().filter(|t| t.requester == requester).map(|t| t.child.clone()).collect()
    }

    fn get(&self, id: &str) -> Option<Task> {
        self.lock().iter().find(|t| t.id == id).cloned()
    }

    fn update(&self, id: &str, f: impl FnOnce(&mut Task)) -> Option<Task> {
        let mut all = self.lock();
        let t = all.iter_mut().find(|t| t.id == id)?;
        f(t);
        Some(t.clone())
    }
}

fn unavailable(e: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(code::UNAVAILABLE, format!("tasks unavailable: {e}"))
}

/// `task` `upserted`, to the connections that may see the requester conversation.
fn announce(gw: &Gateway, task: &Task) {
    let payload = json!({"action": "upserted", "task": task.summary()});
    gw.hub.broadcast("task", &payload, |p| peer_sees_session(gw, p, &task.requester));
    crate::sessions::changed(gw, &task.requester, "task", |_| {});
}

/// Registers a helper for `requester` on `words`: its child conversation and its task, ended
/// when the run `task.run_id` in the child conversation ends (the caller starts that run).
pub fn spawn(gw: &Arc<Gateway>, requester: &str, words: &str) -> Result<Task, String> {
    let owner =
        gw.store.session_owner(requester).map_err(|e| e.to_string())?.unwrap_or_else(|| crate::sessions::OPERATOR_OWNER.to_string());
    let child = format!("agent:main:subagent:{}", uuid_v4());
    let title = protocol::frame::truncate(words.trim(), 120);
    gw.store
        .create_session(&child, &owner, None, Some(&format!("Helper: {title}")), Some(requester), now_ms())
        .map_err(|e| e.to_string())?;
    let task = Task {
        id: uuid_v4(),
        requester: requester.to_string(),
        child: child.clone(),
        run_id: uuid_v4(),
        title,
        status: "running",
        created_at: now_ms(),
        ended_at: None,
        error: None,
    };
    gw.tasks.lock().push(task.clone());
    announce(gw, &task);
    // The task ends when its run does: the run's end is recorded on the child's row.
    let (gw, id) = (gw.clone(), task.id.clone());
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let Some(t) = gw.tasks.get(&id).filter(|t| t.status == "running") else { return };
            let rec = match gw.store.session(&t.child) {
                Ok(Some(rec)) => rec,
                // Its conversation is gone: the task cannot go on.
                Ok(None) => {
                    if let Some(t) = gw.tasks.update(&id, |t| {
                        t.status = "failed";
                        t.ended_at = Some(now_ms());
                        t.error = Some("its conversation is gone".into());
                    }) {
                        announce(&gw, &t);
                    }
                    return;
                }
                Err(_) => continue,
            };
            if rec.last_run_id.as_deref() != Some(t.run_id.as_str()) {
                continue;
            }
            let status = match rec.run_status.as_deref() {
                Some("done") => "completed",
                Some("killed") => "cancelled",
                _ => "failed",
            };
            // A task stopped meanwhile (`tasks.cancel`, `sessions.abort`) keeps that end.
            let mut ended = false;
            let t = gw.tasks.update(&id, |t| {
                if t.status == "running" {
                    t.status = status;
                    t.ended_at = Some(now_ms());
                    t.error = rec.last_run_error.clone();
                    ended = true;
                }
            });
            if let Some(t) = t.filter(|_| ended) {
                announce(&gw, &t);
                if t.status == "failed" {
                    crate::push::task_failed(&gw, &t.id, &t.requester);
                }
            }
            return;
        }
    });
    Ok(task)
}

pub const LIST_KEYS: &[&str] = &["status", "agentId", "sessionKey", "limit", "cursor", "sortBy"];

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListParams {
    #[serde(default)]
    status: Option<Value>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    session_key: Option<String>,
    #[serde(default)]
    limit: Option<u64>,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    sort_by: Option<String>,
}

/// `tasks.list {sessionKey?, status?, limit?}` → `{tasks}`, newest first.
pub fn list(gw: &Gateway, caller: &Caller<'_>, p: ListParams) -> Result<Value, ErrorShape> {
    let _ = (&p.agent_id, &p.cursor, &p.sort_by);
    let limit = match p.limit {
        None => 100,
        Some(n @ 1..=500) => n as usize,
        Some(_) => return Err(ErrorShape::invalid("invalid tasks.list params: at /limit: must be >= 1 and <= 500")),
    };
    let statuses: Option<Vec<String>> = match &p.status {
        None => None,
        Some(Value::String(s)) => Some(vec![s.clone()]),
        Some(Value::Array(a)) => Some(a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect()),
        Some(_) => return Err(ErrorShape::invalid("invalid tasks.list params: at /status: must be a status or a list of them")),
    };
    let session = p.session_key.as_deref().map(crate::questions::canonical_session_key);
    if let Some(s) = &session {
        check_session(gw, caller, s)?;
    }
    let mut tasks: Vec<Task> = gw
        .tasks
        .lock()
        .iter()
        .filter(|t| session.as_deref().is_none_or(|s| t.requester == s))
        .filter(|t| statuses.as_ref().is_none_or(|st| st.iter().any(|s| s == t.status)))
        .filter(|t| caller.full || gw.store.session_owner(&t.requester).ok().flatten().as_deref() == Some(caller.peer.owner.as_str()))
        .cloned()
        .collect();
    tasks.reverse();
    tasks.truncate(limit);
    Ok(json!({"tasks": tasks.iter().map(Task::summary).collect::<Vec<_>>()}))
}

pub const ABORT_KEYS: &[&str] = &["key", "runId", "agentId", "clearQueued"];

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortParams {
    key: String,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    clear_queued: Option<bool>,
}

/// `sessions.abort {key, runId?}` → `{ok, abortedRunId, status}`: stops the conversation's run
/// and, without `runId`, every sub-agent task it started (with `runId`, those that run started),
/// as the real gateway does.
pub fn session_abort(gw: &Arc<Gateway>, caller: &Caller<'_>, p: AbortParams) -> Result<Value, ErrorShape> {
    let _ = (&p.agent_id, p.clear_queued);
    let key = crate::questions::canonical_session_key(&p.key);
    check_session(gw, caller, &key)?;
    let aborted = crate::stop::abort_session(gw, &key, p.run_id.as_deref());
    let running: Vec<Task> = gw.tasks.lock().iter().filter(|t| t.requester == key && t.status == "running").cloned().collect();
    for task in running {
        crate::stop::abort_session(gw, &task.child, Some(&task.run_id));
        if let Some(t) = gw.tasks.update(&task.id, |t| {
            t.status = "cancelled";
            t.ended_at = Some(now_ms());
        }) {
            announce(gw, &t);
        }
    }
    Ok(json!({"ok": true, "abortedRunId": aborted, "status": if aborted.is_some() { "aborted" } else { "no-active-run" }}))
}

pub const CANCEL_KEYS: &[&str] = &["taskId", "reason"];

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelParams {
    task_id: String,
    #[serde(default)]
    reason: Option<String>,
}

/// `tasks.cancel {taskId}` → `{found, cancelled, reason?, task?}`: stops the task's run alone (the
/// conversation that started it goes on). A task the caller cannot see is not found.
pub fn cancel(gw: &Arc<Gateway>, caller: &Caller<'_>, p: CancelParams) -> Result<Value, ErrorShape> {
    let _ = &p.reason;
    let id = p.task_id.as_str();
    let Some(task) = gw.tasks.get(id).filter(|t| check_session(gw, caller, &t.requester).is_ok()) else {
        return Ok(json!({"found": false, "cancelled": false}));
    };
    if task.status != "running" {
        return Ok(json!({"found": true, "cancelled": false, "reason": format!("task is {}", task.status), "task": task.summary()}));
    }
    let _ = gw.store.session(&task.child).map_err(unavailable)?;
    crate::stop::abort_session(gw, &task.child, Some(&task.run_id));
    let task = gw
        .tasks
        .update(id, |t| {
            t.status = "cancelled";
            t.ended_at = Some(now_ms());
        })
        .unwrap_or(task);
    announce(gw, &task);
    Ok(json!({"found": true, "cancelled": true, "task": task.summary()}))
}
