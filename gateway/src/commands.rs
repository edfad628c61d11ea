//! `commands.list` as the real gateway answers it (`docs/conversation-tools-protocol-notes.md`
//! §3): the chat commands a person can type, with their text aliases, descriptions and
//! arguments. The demo agent's catalogue: the gateway's own commands and one skill.

use protocol::error::ErrorShape;
use serde_json::{Value, json};

use crate::Gateway;
use crate::hub::Caller;

pub const LIST_KEYS: &[&str] = &["sessionKey", "agentId", "provider", "scope", "includeArgs"];

/// `(name, text aliases, description, category, source, scope, args)`.
type Entry = (&'static str, &'static [&'static str], &'static str, &'static str, &'static str, &'static str, fn() -> Value);

fn no_args() -> Value {
    Value::Null
}

fn level() -> Value {
    let levels = ["off", "minimal", "low", "medium", "high"];
    json!([{"name": "level", "description": "How hard the model thinks", "type": "string",
        "choices": levels.iter().map(|l| json!({"value": l, "label": l})).collect::<Vec<_>>()}])
}

fn model_arg() -> Value {
    json!([{"name": "model", "description": "provider/model or an alias", "type": "string", "dynamic": true}])
}

fn words() -> Value {
    json!([{"name": "text", "description": "What to summarise", "type": "string"}])
}

const CATALOGUE: &[Entry] = &[
    ("help", &["/help"], "Show the available commands.", "status", "native", "both", no_args),
    ("status", &["/status"], "Show the session's model, context use and run.", "status", "native", "both", no_args),
    ("new", &["/new", "/reset"], "Start a new session.", "session", "native", "both", no_args),
    ("stop", &["/stop"], "Stop the current run.", "session", "native", "both", no_args),
    ("think", &["/think", "/thinking", "/t"], "Set the thinking level.", "options", "native", "both", level),
    ("model", &["/model"], "Show or set the session's model.", "options", "native", "both", model_arg),
    ("compact", &["/compact"], "Summarise earlier messages to free context.", "session", "native", "text", no_args),
    ("usage", &["/usage"], "Show the last run's token use.", "status", "native", "both", no_args),
    ("summarize", &["/summarize"], "Summarise a text (demo skill).", "tools", "skill", "text", words),
];

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListParams {
    #[serde(default)]
    session_key: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    include_args: Option<bool>,
}

/// `commands.list {sessionKey?, agentId?, provider?, scope?, includeArgs?}` → `{commands}`.
pub fn list(gw: &Gateway, caller: &Caller<'_>, p: ListParams) -> Result<Value, ErrorShape> {
    let scope = match p.scope.as_deref() {
        None => "both",
        Some(s @ ("text" | "native" | "both")) => s,
        Some(_) => return Err(ErrorShape::invalid("invalid commands.list params: at /scope: must be one of text, native, both")),
    };
    for (key, v) in [("sessionKey", &p.session_key), ("agentId", &p.agent_id), ("provider", &p.provider)] {
        if v.as_deref() == Some("") {
            return Err(ErrorShape::invalid(format!("invalid commands.list params: at /{key}: must be a non-empty string")));
        }
    }
    if let Some(a) = p.agent_id.as_deref().filter(|a| *a != crate::sessions::AGENT) {
        return Err(ErrorShape::invalid(format!("unknown agent id \"{a}\"")));
    }
    if let Some(key) = p.session_key.as_deref() {
        let key = crate::questions::canonical_session_key(key);
        let known = gw.store.session(&key).map_err(|e| ErrorShape::new(protocol::error::code::UNAVAILABLE, e.to_string()))?.is_some();
        // The main conversation has no row before its first message; it still has commands.
        if !known && !crate::sessions::is_main(&key) {
            return Err(ErrorShape::invalid("Session not found."));
        }
        crate::session_events::check_session(gw, caller, &key)?;
    }
    let include_args = p.include_args != Some(false);
    let commands: Vec<Value> = CATALOGUE
        .iter()
        .filter(|e| scope == "both" || e.5 == "both" || e.5 == scope)
        .map(|&(name, aliases, description, category, source, cmd_scope, args)| {
            let mut c = json!({"name": if scope == "text" { aliases[0].trim_start_matches('/') } else { name },
                "textAliases": aliases, "description": description, "category": category, "source": source,
                "scope": cmd_scope, "acceptsArgs": !args().is_null()});
            if source == "native" {
                c["nativeName"] = json!(name);
            }
            if source == "skill" {
                c["skillDisplayName"] = json!("Summarize");
                c["skillModelVisible"] = json!(true);
            }
            if include_args && !args().is_null() {
                c["args"] = args();
            }
            c
        })
        .collect();
    Ok(json!({"commands": commands}))
}
