//! The requests' and resolutions' params: closed objects, with the real schema's fields that
//! mean something here.

use super::*;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecRequestParams {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub command_argv: Option<Vec<String>>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub node_id: Option<String>,
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub security: Option<String>,
    #[serde(default)]
    pub ask: Option<String>,
    #[serde(default)]
    pub warning_text: Option<String>,
    /// The blast radius (`{kind:"message-send", …}`), shown as sent.
    #[serde(default)]
    pub scope: Option<Value>,
    #[serde(default)]
    pub unavailable_decisions: Option<Vec<String>>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub resolved_path: Option<String>,
    #[serde(default)]
    pub session_key: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub two_phase: Option<bool>,
    /// `false` keeps an approval nobody can see pending (`deliveryRoute: "none"`).
    #[serde(default)]
    pub require_delivery_route: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginRequestParams {
    pub title: String,
    pub description: String,
    #[serde(default)]
    pub plugin_id: Option<String>,
    /// Reviewer-only text.
    #[serde(default)]
    pub detail: Option<String>,
    #[serde(default)]
    pub severity: Option<String>,
    #[serde(default)]
    pub scope: Option<Value>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub allowed_decisions: Option<Vec<String>>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub session_key: Option<String>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub two_phase: Option<bool>,
    #[serde(default)]
    pub require_delivery_route: Option<bool>,
}

#[derive(Deserialize)]
pub struct IdParams {
    pub id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KindResolveParams {
    pub id: String,
    pub decision: String,
    /// A channel reviewer (`{channel, accountId, senderId}`); accepted, not used here.
    #[serde(default)]
    pub reviewer: Option<Value>,
    /// Only for allow-always on cron standing grants, which this gateway has none of.
    #[serde(default)]
    pub grant_expires_in_days: Option<u32>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolveParams {
    pub id: String,
    pub kind: String,
    pub decision: String,
    #[serde(default)]
    pub reviewer: Option<Value>,
    #[serde(default)]
    pub grant_expires_in_days: Option<u32>,
}

#[derive(Deserialize)]
pub struct HistoryParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default)]
    pub kind: Option<String>,
}

pub(super) fn check_grant_days(method: &str, days: Option<u32>) -> Result<(), ErrorShape> {
    match days {
        Some(d) if !(1..=3650).contains(&d) => Err(bad_params(method, "at /grantExpiresInDays: must be 1 to 3650")),
        _ => Ok(()),
    }
}
