//! Approvals: an agent waits on a person's consent to run a command (exec), to let a plugin
//! act (plugin), or for a system agent (`openclaw.*`). Shapes as OpenClaw 2026.9.6 sends them
//! (see `docs/approvals-protocol-notes.md`): a pending approval is
//! `{id, request: {...}, createdAtMs, expiresAtMs}`, listed by `<kind>.approval.list` and
//! announced by `<kind>.approval.requested`; `<kind>.approval.resolved` carries
//! `{id, decision, resolvedBy?, ts}`. A decision is `allow-once`, `allow-always` or `deny`.
//!
//! The request object is open-ended (every kind and version adds fields), so it is read
//! leniently into [`Approval`], field by field, and anything an agent wrote stays text.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Which family an approval belongs to; each has its own methods and events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalKind {
    /// A shell command the agent wants to run.
    #[default]
    Exec,
    /// A plugin-defined action.
    Plugin,
    /// A system agent's (`openclaw.*`) request.
    System,
}

impl ApprovalKind {
    pub const ALL: [ApprovalKind; 3] = [ApprovalKind::Exec, ApprovalKind::Plugin, ApprovalKind::System];

    /// The method and event prefix (`exec.approval.list`, `openclaw.approval.requested`).
    pub fn prefix(self) -> &'static str {
        match self {
            ApprovalKind::Exec => "exec",
            ApprovalKind::Plugin => "plugin",
            ApprovalKind::System => "openclaw",
        }
    }

    /// The `kind` of `approval.resolve` and of `approval.history` rows.
    pub fn wire(self) -> &'static str {
        match self {
            ApprovalKind::Exec => "exec",
            ApprovalKind::Plugin => "plugin",
            ApprovalKind::System => "system-agent",
        }
    }

    pub fn from_wire(s: &str) -> Option<ApprovalKind> {
        match s {
            "exec" => Some(ApprovalKind::Exec),
            "plugin" => Some(ApprovalKind::Plugin),
            "system-agent" | "openclaw" | "system" => Some(ApprovalKind::System),
            _ => None,
        }
    }

    pub fn list_method(self) -> String {
        format!("{}.approval.list", self.prefix())
    }

    pub fn resolve_method(self) -> String {
        format!("{}.approval.resolve", self.prefix())
    }

    /// The kind and whether it is the resolution, for an event name this UI follows.
    pub fn from_event(event: &str) -> Option<(ApprovalKind, ApprovalEvent)> {
        let (prefix, what) = event.split_once(".approval.")?;
        let kind = ApprovalKind::ALL.into_iter().find(|k| k.prefix() == prefix)?;
        let what = match what {
            "requested" => ApprovalEvent::Requested,
            "resolved" => ApprovalEvent::Resolved,
            _ => return None,
        };
        Some((kind, what))
    }

    /// The events of this kind.
    pub fn events(self) -> [String; 2] {
        [format!("{}.approval.requested", self.prefix()), format!("{}.approval.resolved", self.prefix())]
    }

    /// What a person calls it.
    pub fn noun(self) -> &'static str {
        match self {
            ApprovalKind::Exec => "Command approval",
            ApprovalKind::Plugin => "Plugin approval",
            ApprovalKind::System => "System approval",
        }
    }
}

/// Which of a kind's two events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalEvent {
    Requested,
    Resolved,
}

/// What the person decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Decision {
    #[serde(rename = "allow-once")]
    AllowOnce,
    #[serde(rename = "allow-always")]
    AllowAlways,
    #[serde(rename = "deny")]
    Deny,
}

impl Decision {
    pub const ALL: [Decision; 3] = [Decision::AllowOnce, Decision::AllowAlways, Decision::Deny];

    pub fn wire(self) -> &'static str {
        match self {
            Decision::AllowOnce => "allow-once",
            Decision::AllowAlways => "allow-always",
            Decision::Deny => "deny",
        }
    }

    pub fn from_wire(s: &str) -> Option<Decision> {
        Decision::ALL.into_iter().find(|d| d.wire() == s)
    }

    pub fn allows(self) -> bool {
        self != Decision::Deny
    }

    /// The past tense, lowercase, for "Decided elsewhere: denied".
    pub fn past(self) -> &'static str {
        match self {
            Decision::AllowOnce => "allowed once",
            Decision::AllowAlways => "always allowed",
            Decision::Deny => "denied",
        }
    }
}

/// What a finished approval's summary keeps: what was asked, in a few fields (stored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalSummary {
    pub kind: ApprovalKind,
    /// The plugin's title (empty when the gateway no longer knows the approval).
    #[serde(default)]
    pub title: String,
    /// The command exactly as sent (exec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// A pending approval as the card shows it. Every string is agent- or gateway-written text.
/// Read by hand from the open-ended request ([`read_approval`]), never stored whole.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Approval {
    pub id: String,
    pub kind: ApprovalKind,
    /// The plugin's title, or for exec a fixed heading.
    pub title: String,
    /// The plugin's description (empty for exec).
    pub description: String,
    /// The command exactly as sent (exec only).
    pub command: Option<String>,
    pub host: Option<String>,
    pub cwd: Option<String>,
    pub agent_id: Option<String>,
    pub session_key: Option<String>,
    /// `info`, `warning` or `critical` (plugins).
    pub severity: Option<String>,
    /// The gateway's own analysis of the command, one line each.
    pub warnings: Vec<String>,
    /// What the requester (the agent's tool) wrote as its warning (`warningText`): its words,
    /// shown as such, apart from the gateway's analysis.
    pub requester_warnings: Vec<String>,
    /// The command as an argument list, when the request gives one (`commandArgv`,
    /// `systemRunPlan.argv`): shown quoted, one argument each, so boundaries are not lost.
    pub argv: Vec<String>,
    /// The names of the environment variables the command gets (`envKeys`, or `env`'s keys).
    pub env_keys: Vec<String>,
    /// The executable the gateway resolved the command to.
    pub resolved_path: Option<String>,
    /// The exec policy in force (`security`) and when it asks (`ask`).
    pub security: Option<String>,
    pub ask: Option<String>,
    /// What the approval lets the requester do beyond the command (`scope`), in words.
    pub scope: Option<String>,
    /// A plugin's detail for the reviewer (`detail`), as written.
    pub detail: Option<String>,
    /// The decisions offered, in the gateway's order.
    pub allowed: Vec<Decision>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

impl Approval {
    pub fn offers(&self, d: Decision) -> bool {
        self.allowed.contains(&d)
    }

    /// The line that names it in a summary: the command, else the title.
    pub fn subject(&self) -> &str {
        self.command.as_deref().unwrap_or(&self.title)
    }

    pub fn summary(&self) -> ApprovalSummary {
        ApprovalSummary { kind: self.kind, title: self.title.clone(), command: self.command.clone() }
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(|x| x.as_i64().or_else(|| x.as_f64().map(|f| f as i64)))
}

fn lines(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}

/// Reads a listed or announced pending approval. `Err` says, in words, what is wrong with it.
pub fn read_approval(kind: ApprovalKind, v: &Value) -> Result<Approval, String> {
    let id = text(v, "id").ok_or("the approval has no id")?;
    let request = v.get("request").filter(|r| r.is_object()).ok_or("the approval has no request object")?;
    let expires_at_ms = int(v, "expiresAtMs").ok_or("the approval has no expiresAtMs")?;
    let created_at_ms = int(v, "createdAtMs").unwrap_or(0);
    // Exec: the command as the gateway displays it, else as requested; argv joined as a last resort.
    let command = match kind {
        ApprovalKind::Exec => text(v, "commandText")
            .or_else(|| text(request, "commandText"))
            .or_else(|| request.get("command").and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_string))
            .or_else(|| {
                let argv = lines(request.get("commandArgv"));
                (!argv.is_empty()).then(|| argv.join(" "))
            }),
        _ => None,
    };
    if kind == ApprovalKind::Exec && command.is_none() {
        return Err("the command approval names no command".into());
    }
    let title = text(request, "title").unwrap_or_else(|| match kind {
        ApprovalKind::Exec => "Run a command".into(),
        ApprovalKind::Plugin => "A plugin asks for approval".into(),
        ApprovalKind::System => "A system agent asks for approval".into(),
    });
    let allowed_raw = v.get("allowedDecisions").or_else(|| request.get("allowedDecisions"));
    let mut allowed: Vec<Decision> = match allowed_raw.and_then(Value::as_array) {
        Some(a) => a.iter().filter_map(|d| d.as_str().and_then(Decision::from_wire)).collect(),
        None => Decision::ALL.to_vec(),
    };
    // Deny is always possible: the gateway accepts it for every approval.
    if !allowed.contains(&Decision::Deny) {
        allowed.push(Decision::Deny);
    }
    let unavailable = lines(request.get("unavailableDecisions"));
    allowed.retain(|d| !unavailable.iter().any(|u| u == d.wire()) || *d == Decision::Deny);
    let mut warnings = lines(request.get("warnings"));
    if let Some(analysis) = request.get("commandAnalysis").or_else(|| v.get("commandAnalysis")) {
        warnings.extend(lines(analysis.get("warningLines")));
    }
    warnings.dedup();
    let requester_warnings = lines(request.get("warningText"));
    let plan = request.get("systemRunPlan").filter(|p| p.is_object());
    // Arguments exactly as given: neither trimmed nor dropped when empty.
    let argv_of = |a: Option<&Value>| -> Vec<String> {
        a.and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
    };
    let argv = match argv_of(request.get("commandArgv")) {
        a if a.is_empty() => argv_of(plan.and_then(|p| p.get("argv"))),
        a => a,
    };
    let mut env_keys = lines(request.get("envKeys"));
    if env_keys.is_empty() {
        if let Some(env) = request.get("env").and_then(Value::as_object) {
            env_keys = env.keys().cloned().collect();
        }
    }
    Ok(Approval {
        id,
        kind,
        title,
        description: text(request, "description").unwrap_or_default(),
        command,
        host: text(request, "host").or_else(|| text(request, "nodeId")),
        cwd: text(request, "cwd"),
        agent_id: text(request, "agentId"),
        session_key: text(request, "sessionKey"),
        severity: text(request, "severity"),
        warnings,
        requester_warnings,
        argv,
        env_keys,
        resolved_path: text(request, "resolvedPath"),
        security: text(request, "security"),
        ask: text(request, "ask"),
        scope: request.get("scope").and_then(scope_words),
        detail: request.get("detail").and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_string),
        allowed,
        created_at_ms,
        expires_at_ms,
    })
}

/// An approval's `scope` in words: the incumbent's sentences for the kinds it knows
/// (`Sends to 3 recipient(s) via email`), else its fields as `key: value` text.
fn scope_words(scope: &Value) -> Option<String> {
    let field = |k: &str| match scope.get(k) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    match scope {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Object(o) if !o.is_empty() => {
            let target = field("target");
            let known = match (field("kind").as_deref(), target) {
                (Some("message-send"), Some(t)) => {
                    Some(format!("Sends to {} recipient(s) via {t}", field("recipientCount").unwrap_or_else(|| "some".into())))
                }
                (Some("payment"), Some(t)) => Some(format!(
                    "Pays {} {} to {t}",
                    field("amount").unwrap_or_else(|| "an amount".into()),
                    field("currency").unwrap_or_default()
                )),
                _ => None,
            };
            // Plain values only, as text; a nested object or list is named, not written out.
            let all = o.iter().map(|(k, v)| match v {
                Value::String(s) => format!("{k}: {s}"),
                Value::Number(n) => format!("{k}: {n}"),
                Value::Bool(b) => format!("{k}: {b}"),
                Value::Null => format!("{k}: none"),
                Value::Array(a) => format!("{k}: {} item(s)", a.len()),
                Value::Object(_) => format!("{k}: (details)"),
            });
            Some(match known {
                Some(sentence) => format!("{sentence} ({})", all.collect::<Vec<_>>().join(", ")),
                None => all.collect::<Vec<_>>().join(", "),
            })
        }
        _ => None,
    }
}

/// How an approval ended, as `*.approval.resolved` or `approval.get` tell it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalResolution {
    pub id: String,
    /// `None`: it ended without a decision (expired, cancelled).
    pub decision: Option<Decision>,
    /// Who decided, in words the gateway gives (a client or device name), if it says.
    pub by: Option<String>,
    pub expired: bool,
}

/// Reads `*.approval.resolved`, or a terminal `approval.get` / `approval.history` row.
pub fn read_resolution(v: &Value) -> Option<ApprovalResolution> {
    let id = text(v, "id")?;
    let decision = v.get("decision").and_then(Value::as_str).and_then(Decision::from_wire);
    let status = text(v, "status").or_else(|| text(v, "state")).unwrap_or_default();
    let reason = text(v, "terminalReason").or_else(|| text(v, "reason")).unwrap_or_default();
    let expired = decision.is_none()
        && (status.contains("expire") || reason.contains("expire") || reason.contains("timeout") || status.contains("timeout"));
    let by = text(v, "resolvedBy")
        .or_else(|| v.get("resolvedBy").and_then(|b| text(b, "displayName").or_else(|| text(b, "clientId")).or_else(|| text(b, "id"))))
        .or_else(|| text(v, "resolvedByDeviceName"));
    Some(ApprovalResolution { id, decision, by, expired })
}

/// The params of `approval.resolve`, the kind-agnostic method every kind accepts.
pub fn resolve_params(id: &str, kind: ApprovalKind, decision: Decision) -> Value {
    json!({"id": id, "kind": kind.wire(), "decision": decision.wire()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exec_approval_is_read_with_its_command_exactly_and_only_the_decisions_offered() {
        let v = json!({"id":"a1","createdAtMs":1,"expiresAtMs":9,"allowedDecisions":["allow-once","deny"],
            "request":{"command":"rm -rf  /tmp/x && echo '<b>'","cwd":"/srv","host":"gateway","agentId":"main","sessionKey":"agent:main:main",
            "warnings":["Contains shell-wrapper: sh -c"]}});
        let a = read_approval(ApprovalKind::Exec, &v).unwrap();
        assert_eq!(a.command.as_deref(), Some("rm -rf  /tmp/x && echo '<b>'"), "never trimmed inside or interpreted");
        assert_eq!(a.allowed, vec![Decision::AllowOnce, Decision::Deny]);
        assert_eq!(a.session_key.as_deref(), Some("agent:main:main"));
        assert_eq!(a.warnings, vec!["Contains shell-wrapper: sh -c"]);
    }

    #[test]
    fn an_approval_without_what_it_asks_is_refused_in_words() {
        assert!(read_approval(ApprovalKind::Exec, &json!({"id":"a","expiresAtMs":1,"request":{}})).unwrap_err().contains("no command"));
        assert!(read_approval(ApprovalKind::Plugin, &json!({"id":"a","request":{"title":"x"}})).unwrap_err().contains("expiresAtMs"));
        assert!(read_approval(ApprovalKind::Plugin, &json!({"request":{}})).unwrap_err().contains("no id"));
    }

    #[test]
    fn events_and_methods_are_named_per_kind() {
        assert_eq!(ApprovalKind::from_event("plugin.approval.resolved"), Some((ApprovalKind::Plugin, ApprovalEvent::Resolved)));
        assert_eq!(ApprovalKind::from_event("openclaw.approval.requested"), Some((ApprovalKind::System, ApprovalEvent::Requested)));
        assert_eq!(ApprovalKind::from_event("question.requested"), None);
        assert_eq!(ApprovalKind::Exec.list_method(), "exec.approval.list");
    }
}
