//! A conversation's sub-agents: the tasks it started (`tasks.list {sessionKey}`, kept live by
//! the `task` events), running ones first, each with how long it has run, the tool it is using,
//! and the conversation where it works; stopped one by one with `tasks.cancel {taskId}`.

use serde_json::Value;

/// One task as the panel shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: String,
    /// The conversation that started it.
    pub requester: String,
    /// Where it works (its transcript), if it has one.
    pub child: Option<String>,
    pub title: String,
    /// `queued`, `running`, `completed`, `failed`, `cancelled`, `timed_out`.
    pub status: String,
    pub started_ms: Option<f64>,
    pub ended_ms: Option<f64>,
    /// The tool in use now, else the last one.
    pub tool: Option<String>,
    pub error: Option<String>,
}

fn time(v: &Value, key: &str) -> Option<f64> {
    match v.get(key)? {
        Value::Number(n) => n.as_f64(),
        // An ISO time: not read here (the gateway sends numbers for these).
        _ => None,
    }
}

impl Task {
    /// Reads a `TaskSummary`.
    pub fn read(v: &Value) -> Option<Task> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        let id = text("taskId").or_else(|| text("id"))?;
        let tool = v
            .get("execution")
            .and_then(|e| e.get("currentTool"))
            .and_then(|t| t.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| text("lastToolName"));
        Some(Task {
            id,
            requester: text("sessionKey").unwrap_or_default(),
            child: text("childSessionKey").filter(|_| v.get("hasTranscript").and_then(Value::as_bool) != Some(false)),
            title: text("title").or_else(|| text("label")).unwrap_or_else(|| "A sub-agent".into()),
            status: text("status").unwrap_or_else(|| "queued".into()),
            started_ms: time(v, "startedAt").or_else(|| time(v, "createdAt")),
            ended_ms: time(v, "endedAt"),
            tool,
            error: text("error").or_else(|| text("terminalSummary")),
        })
    }

    pub fn is_active(&self) -> bool {
        matches!(self.status.as_str(), "queued" | "running")
    }

    /// Its state in words, with how long it ran (or has been running at `now_ms`).
    pub fn state_words(&self, now_ms: f64) -> String {
        let took = |from: f64, to: f64| crate::transcript::duration_words((to - from).max(0.0));
        let status = match self.status.as_str() {
            "queued" => "Waiting to start".to_string(),
            "running" => match self.started_ms {
                Some(s) => format!("Running for {}", took(s, now_ms)),
                None => "Running".to_string(),
            },
            "completed" => "Finished".to_string(),
            "failed" => "Failed".to_string(),
            "cancelled" => "Stopped".to_string(),
            "timed_out" => "Timed out".to_string(),
            other => other.to_string(),
        };
        match (self.is_active(), self.started_ms, self.ended_ms) {
            (false, Some(s), Some(e)) => format!("{status} after {}", took(s, e)),
            _ => status,
        }
    }
}

/// The tasks of one conversation: running first (oldest first), then the ended ones (newest
/// first).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskList {
    pub tasks: Vec<Task>,
}

impl TaskList {
    /// From `tasks.list`'s answer.
    pub fn read(v: &Value) -> TaskList {
        let mut list = TaskList::default();
        for t in v.get("tasks").and_then(Value::as_array).into_iter().flatten().filter_map(Task::read) {
            list.put(t);
        }
        list
    }

    /// A `task` event's `upserted` task (or a `tasks.cancel` answer's).
    pub fn put(&mut self, task: Task) {
        match self.tasks.iter_mut().find(|t| t.id == task.id) {
            Some(t) => *t = task,
            None => self.tasks.push(task),
        }
        crate::order::sort_by(&mut self.tasks, |a, b| {
            b.is_active().cmp(&a.is_active()).then_with(|| {
                if a.is_active() {
                    a.started_ms.unwrap_or(0.0).total_cmp(&b.started_ms.unwrap_or(0.0))
                } else {
                    b.ended_ms.unwrap_or(0.0).total_cmp(&a.ended_ms.unwrap_or(0.0))
                }
            })
        });
    }

    pub fn remove(&mut self, id: &str) {
        self.tasks.retain(|t| t.id != id);
    }

    pub fn running(&self) -> usize {
        self.tasks.iter().filter(|t| t.is_active()).count()
    }
}

/// What a `task` event says.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskEvent {
    Upserted(Task),
    Deleted(String),
    /// The gateway reloaded its ledger: every list is read again.
    Restored,
}

pub fn read_event(p: &Value) -> Option<TaskEvent> {
    match p.get("action").and_then(Value::as_str)? {
        "upserted" => Task::read(p.get("task")?).map(TaskEvent::Upserted),
        "deleted" => p.get("taskId").and_then(Value::as_str).map(|id| TaskEvent::Deleted(id.to_string())),
        "restored" => Some(TaskEvent::Restored),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary(id: &str, status: &str, started: i64, ended: Option<i64>) -> Value {
        let mut t = json!({"id": id, "taskId": id, "kind": "subagent", "runtime": "subagent", "status": status, "title": format!("job {id}"),
            "sessionKey": "agent:main:main", "childSessionKey": format!("agent:main:subagent:{id}"), "hasTranscript": true,
            "createdAt": started, "startedAt": started, "lastToolName": "read"});
        if let Some(e) = ended {
            t["endedAt"] = json!(e);
        }
        t
    }

    #[test]
    fn running_tasks_come_first_and_say_how_long_and_which_tool() {
        let mut v = json!({"tasks": [summary("a", "completed", 1_000, Some(9_000)), summary("b", "running", 5_000, None), summary("c", "running", 2_000, None)]});
        v["tasks"][1]["execution"] = json!({"state": "running", "currentTool": {"name": "exec", "startedAt": 6_000}});
        let list = TaskList::read(&v);
        let ids: Vec<&str> = list.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "a"]);
        assert_eq!(list.running(), 2);
        assert_eq!(list.tasks[1].tool.as_deref(), Some("exec"), "the tool in use, before the last one");
        assert_eq!(list.tasks[0].tool.as_deref(), Some("read"));
        assert_eq!(list.tasks[0].state_words(14_000.0), "Running for 12 s");
        assert_eq!(list.tasks[2].state_words(99_000.0), "Finished after 8.0 s");
        assert_eq!(list.tasks[0].child.as_deref(), Some("agent:main:subagent:c"));
    }

    #[test]
    fn events_update_remove_and_restore() {
        let mut list = TaskList::default();
        let up = read_event(&json!({"action": "upserted", "task": summary("a", "running", 1_000, None)})).unwrap();
        let TaskEvent::Upserted(t) = up else { panic!() };
        list.put(t);
        let TaskEvent::Upserted(t) =
            read_event(&json!({"action": "upserted", "task": summary("a", "cancelled", 1_000, Some(3_000))})).unwrap()
        else {
            panic!()
        };
        list.put(t);
        assert_eq!(list.tasks.len(), 1);
        assert_eq!(list.tasks[0].state_words(0.0), "Stopped after 2.0 s");
        assert_eq!(read_event(&json!({"action": "deleted", "taskId": "a"})), Some(TaskEvent::Deleted("a".into())));
        list.remove("a");
        assert!(list.tasks.is_empty());
        assert_eq!(read_event(&json!({"action": "restored"})), Some(TaskEvent::Restored));
        assert_eq!(read_event(&json!({"action": "upserted", "task": {"title": "no id"}})), None);
    }

    #[test]
    fn a_task_without_a_transcript_offers_none() {
        let mut s = summary("x", "running", 0, None);
        s["hasTranscript"] = json!(false);
        assert_eq!(Task::read(&s).unwrap().child, None);
    }
}
