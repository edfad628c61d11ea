//! The handshake: `connect.challenge`, `connect` params and `hello-ok`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Payload of the `connect.challenge` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectChallenge {
    pub nonce: String,
    pub ts: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
}

impl ConnectChallenge {
    /// The challenge in a gateway frame's text, when the frame is a `connect.challenge` event
    /// with a nonce. Read straight into these types, without a `Value` in between: the page's
    /// early module reads nothing else and stays small.
    pub fn from_frame_text(text: &str) -> Option<ConnectChallenge> {
        #[derive(Deserialize)]
        struct ChallengeEvent {
            #[serde(rename = "type")]
            kind: String,
            event: String,
            payload: ConnectChallenge,
        }
        serde_json::from_str::<ChallengeEvent>(text)
            .ok()
            .filter(|f| f.kind == "event" && f.event == "connect.challenge" && !f.payload.nonce.is_empty())
            .map(|f| f.payload)
    }
}

/// Valid `client.id` values (closed enum on the gateway).
pub const CLIENT_IDS: &[&str] = &[
    "webchat-ui",
    "openclaw-control-ui",
    "openclaw-browser-copilot",
    "openclaw-tui",
    "webchat",
    "cli",
    "gateway-client",
    "openclaw-macos",
    "openclaw-linux",
    "openclaw-ios",
    "openclaw-watchos",
    "openclaw-android",
    "node-host",
    "openclaw-worker",
    "test",
    "fingerprint",
    "openclaw-probe",
];
/// Valid `client.mode` values.
pub const CLIENT_MODES: &[&str] = &["webchat", "cli", "ui", "backend", "node", "worker", "probe", "test"];

/// What a Control UI identifies as.
pub const CONTROL_UI_CLIENT_ID: &str = "openclaw-control-ui";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    pub id: String,
    pub version: String,
    pub platform: String,
    pub mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_family: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_identifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceAuth {
    pub id: String,
    pub public_key: String,
    pub signature: String,
    pub signed_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
}

impl DeviceAuth {
    /// The device block for a signature over `challenge` (signed at the challenge's `ts`).
    pub fn signed(device_id: String, public_key_b64: String, signature_b64: String, challenge: &ConnectChallenge) -> DeviceAuth {
        DeviceAuth {
            id: device_id,
            public_key: public_key_b64,
            signature: signature_b64,
            signed_at: challenge.ts,
            nonce: Some(challenge.nonce.clone()),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_runtime_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_runtime_identity_token: Option<String>,
}

impl AuthParams {
    /// The credential that goes into the signed payload: token, else device token, else
    /// bootstrap token, else nothing.
    pub fn signing_token(&self) -> &str {
        self.token.as_deref().or(self.device_token.as_deref()).or(self.bootstrap_token.as_deref()).unwrap_or("")
    }
}

/// The cap that asks the gateway for a run's tool events.
pub const CAP_TOOL_EVENTS: &str = "tool-events";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectParams {
    pub min_protocol: u32,
    pub max_protocol: u32,
    pub client: ClientInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceAuth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_catalog: Option<Value>,
    // Node/worker fields: accepted so the closed schema matches the real gateway's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_env: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computer_use: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_runs: Option<Value>,
}

impl ClientInfo {
    /// A client with just the required fields.
    pub fn new(id: &str, version: &str, platform: &str, mode: &str) -> ClientInfo {
        ClientInfo {
            id: id.into(),
            version: version.into(),
            platform: platform.into(),
            mode: mode.into(),
            display_name: None,
            device_family: None,
            model_identifier: None,
            instance_id: None,
            build_id: None,
            time_zone: None,
        }
    }
}

impl ConnectParams {
    /// `connect` params for an operator, speaking protocol v4, with the device signature
    /// (v3 payload over the challenge) when an identity is given.
    #[cfg(feature = "ed25519")]
    pub fn operator(
        client: ClientInfo,
        scopes: Vec<String>,
        auth: AuthParams,
        identity: Option<&crate::device::DeviceIdentity>,
        challenge: &ConnectChallenge,
    ) -> ConnectParams {
        let device = identity.map(|id| {
            let device_id = id.device_id();
            let signature = id.sign_b64(&Self::operator_payload(&client, &scopes, &auth, &device_id, challenge));
            DeviceAuth::signed(device_id, id.public_key_b64(), signature, challenge)
        });
        Self::operator_signed(client, scopes, auth, device)
    }

    /// The v3 payload an operator's device signs for these params and this challenge.
    pub fn operator_payload(
        client: &ClientInfo,
        scopes: &[String],
        auth: &AuthParams,
        device_id: &str,
        challenge: &ConnectChallenge,
    ) -> String {
        crate::device::SignedFields {
            device_id,
            client_id: &client.id,
            client_mode: &client.mode,
            role: "operator",
            scopes,
            signed_at_ms: challenge.ts,
            token: auth.signing_token(),
            nonce: &challenge.nonce,
            platform: &client.platform,
            device_family: client.device_family.as_deref().unwrap_or(""),
        }
        .payload_v3()
    }

    /// `connect` params for an operator, speaking protocol v4, with a device signature made
    /// elsewhere (the UI signs [`ConnectParams::operator_payload`] with WebCrypto).
    pub fn operator_signed(client: ClientInfo, scopes: Vec<String>, auth: AuthParams, device: Option<DeviceAuth>) -> ConnectParams {
        ConnectParams {
            min_protocol: crate::PROTOCOL_VERSION,
            max_protocol: crate::PROTOCOL_VERSION,
            client,
            role: Some("operator".into()),
            scopes: Some(scopes),
            // Tool events: each tool of a run as it starts, streams and ends (`agent` events
            // with `stream: item | tool | command_output`), handled by `model::transcript`.
            caps: Some(vec![CAP_TOOL_EVENTS.into()]),
            device,
            auth: Some(auth),
            locale: None,
            user_agent: None,
            model_catalog: None,
            commands: None,
            permissions: None,
            path_env: None,
            computer_use: None,
            worker_runs: None,
        }
    }

    /// Field rules beyond the types (enums, non-empty strings, lengths). The message names
    /// the field.
    pub fn check(&self) -> Result<(), String> {
        if self.min_protocol < 1 || self.max_protocol < 1 {
            return Err("`minProtocol` and `maxProtocol` must be at least 1".into());
        }
        if !CLIENT_IDS.contains(&self.client.id.as_str()) {
            return Err(format!("`client.id` must be one of the known client ids, not `{}`", crate::frame::truncate(&self.client.id, 40)));
        }
        if !CLIENT_MODES.contains(&self.client.mode.as_str()) {
            return Err(format!(
                "`client.mode` must be one of {}, not `{}`",
                CLIENT_MODES.join(", "),
                crate::frame::truncate(&self.client.mode, 40)
            ));
        }
        for (name, v) in [("client.version", &self.client.version), ("client.platform", &self.client.platform)] {
            if v.is_empty() {
                return Err(format!("`{name}` must be non-empty"));
            }
        }
        if let Some(b) = &self.client.build_id {
            if b.is_empty() || b.chars().count() > 96 {
                return Err("`client.buildId` must be 1 to 96 characters".into());
            }
        }
        if let Some(tz) = &self.client.time_zone {
            if tz.is_empty() || tz.chars().count() > 64 {
                return Err("`client.timeZone` must be 1 to 64 characters".into());
            }
        }
        if let Some(d) = &self.device {
            if d.signed_at < 0 {
                return Err("`device.signedAt` must be ≥ 0".into());
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_ui_build_source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Features {
    #[serde(default)]
    pub methods: Vec<String>,
    #[serde(default)]
    pub events: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelloAuth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default)]
    pub scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_payload: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_buffered_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_interval_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attachments: Option<AttachmentPolicy>,
}

/// `policy.attachments`: the limits on files sent with `chat.send`, in decoded bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentPolicy {
    pub max_bytes: u64,
    pub max_image_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDefaults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_session_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_configured: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_defaults: Option<SessionDefaults>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_mode: Option<String>,
}

/// `hello-ok`, the payload of a successful `connect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloOk {
    #[serde(rename = "type")]
    pub kind: String,
    pub protocol: u32,
    pub server: ServerInfo,
    #[serde(default)]
    pub features: Features,
    #[serde(default)]
    pub snapshot: Snapshot,
    pub auth: HelloAuth,
    pub policy: Policy,
}

/// What the UI uses of `hello-ok`, read field by field from the payload.
///
/// The UI reads these six fields and nothing else, so it does not decode the whole [`HelloOk`]:
/// that would link serde code for every nested struct (about 4 KB gzip of the bundle) only to
/// refuse a gateway over fields it never looks at. Each problem names its field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HelloSummary {
    pub protocol: u64,
    pub server_version: String,
    pub scopes: Vec<String>,
    pub device_token: Option<String>,
    pub tick_interval_ms: Option<u64>,
    pub main_session_key: Option<String>,
    /// `policy.attachments.maxBytes` and `maxImageBytes`: the limits on files sent with a
    /// message. Read leniently (a limit that is not a whole number is left out, and the UI uses
    /// its default): attachments are no reason to refuse a gateway.
    pub attachments_max_bytes: Option<u64>,
    pub attachments_max_image_bytes: Option<u64>,
    /// `policy.maxPayload`: the largest frame the gateway reads (read leniently, like the
    /// attachment limits).
    pub max_payload: Option<u64>,
}

impl HelloSummary {
    pub fn read(v: &Value) -> Result<HelloSummary, String> {
        fn object<'a>(v: &'a Value, field: &str) -> Result<&'a Value, String> {
            v.get(field.rsplit('.').next().unwrap_or(field))
                .filter(|o| o.is_object())
                .ok_or_else(|| format!("`{field}` is missing or not an object"))
        }
        fn text(v: &Value, key: &str, field: &str) -> Result<Option<String>, String> {
            match v.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("`{field}` is not text")),
            }
        }
        if !v.is_object() {
            return Err("hello-ok is not a JSON object".into());
        }
        let protocol = v.get("protocol").and_then(Value::as_u64).ok_or("`protocol` is missing or not a whole number")?;
        let server = object(v, "server")?;
        let server_version = text(server, "version", "server.version")?.ok_or("`server.version` is missing")?;
        let auth = object(v, "auth")?;
        let scopes = match auth.get("scopes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or("`auth.scopes` is not a list of text")?,
            Some(_) => return Err("`auth.scopes` is not a list of text".into()),
        };
        let device_token = text(auth, "deviceToken", "auth.deviceToken")?;
        let policy = object(v, "policy")?;
        let tick_interval_ms = match policy.get("tickIntervalMs") {
            None | Some(Value::Null) => None,
            Some(n) => Some(n.as_u64().ok_or("`policy.tickIntervalMs` is not a whole number")?),
        };
        let main_session_key = match v.get("snapshot").and_then(|s| s.get("sessionDefaults")) {
            Some(d) if d.is_object() => text(d, "mainSessionKey", "snapshot.sessionDefaults.mainSessionKey")?,
            _ => None,
        };
        let limit = |k: &str| policy.get("attachments").and_then(|a| a.get(k)).and_then(Value::as_u64);
        Ok(HelloSummary {
            protocol,
            server_version,
            scopes,
            device_token,
            tick_interval_ms,
            main_session_key,
            attachments_max_bytes: limit("maxBytes"),
            attachments_max_image_bytes: limit("maxImageBytes"),
            max_payload: policy.get("maxPayload").and_then(Value::as_u64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_is_read_from_its_event_and_from_nothing_else() {
        let read = ConnectChallenge::from_frame_text(
            r#"{"type":"event","event":"connect.challenge","payload":{"nonce":"n-1","ts":1796368645099,"extra":1},"seq":0}"#,
        );
        assert_eq!(read, Some(ConnectChallenge { nonce: "n-1".into(), ts: 1796368645099, capabilities: vec![] }));
        for other in [
            r#"{"type":"event","event":"tick","payload":{"nonce":"n-1","ts":1}}"#,
            r#"{"type":"res","id":"connect:early","ok":true,"payload":{"nonce":"n-1","ts":1}}"#,
            r#"{"type":"event","event":"connect.challenge","payload":{"nonce":"","ts":1}}"#,
            r#"{"type":"event","event":"connect.challenge","payload":{"ts":1}}"#,
            r#"{"type":"event","event":"connect.challenge"#,
        ] {
            assert_eq!(ConnectChallenge::from_frame_text(other), None, "{other}");
        }
    }

    #[test]
    fn hello_summary_reads_the_used_fields_and_names_a_bad_one() {
        let hello = serde_json::json!({
            "type": "hello-ok", "protocol": 4,
            "server": {"version": "2026.9.6", "connId": "c1"},
            "features": {"methods": ["chat.send"], "events": []},
            "snapshot": {"sessionDefaults": {"mainSessionKey": "agent:main:main"}},
            "auth": {"role": "operator", "scopes": ["operator.read", "operator.questions"], "deviceToken": "dt"},
            "policy": {"maxPayload": 26214400, "tickIntervalMs": 30000, "attachments": {"maxBytes": 19464192, "maxImageBytes": 6291456}},
        });
        let s = HelloSummary::read(&hello).unwrap();
        assert_eq!(
            s,
            HelloSummary {
                protocol: 4,
                server_version: "2026.9.6".into(),
                scopes: vec!["operator.read".into(), "operator.questions".into()],
                device_token: Some("dt".into()),
                tick_interval_ms: Some(30000),
                main_session_key: Some("agent:main:main".into()),
                attachments_max_bytes: Some(19464192),
                attachments_max_image_bytes: Some(6291456),
                max_payload: Some(26214400),
            }
        );
        let mut bare = hello.clone();
        bare["snapshot"] = Value::Null;
        bare["auth"] = serde_json::json!({});
        bare["policy"] = serde_json::json!({});
        let s = HelloSummary::read(&bare).unwrap();
        assert_eq!((s.scopes.len(), s.device_token, s.tick_interval_ms, s.main_session_key), (0, None, None, None));
        assert_eq!((s.attachments_max_bytes, s.attachments_max_image_bytes), (None, None));
        let mut odd = hello.clone();
        odd["policy"]["attachments"] = serde_json::json!({"maxBytes": "big", "maxImageBytes": 5});
        let s = HelloSummary::read(&odd).unwrap();
        assert_eq!((s.attachments_max_bytes, s.attachments_max_image_bytes), (None, Some(5)), "a bad limit is left out, not a refusal");
        for (path, bad, named) in [
            ("/protocol", serde_json::json!("4"), "`protocol`"),
            ("/server/version", serde_json::json!(7), "`server.version`"),
            ("/auth/scopes", serde_json::json!(["ok", 1]), "`auth.scopes`"),
            ("/auth/deviceToken", serde_json::json!(true), "`auth.deviceToken`"),
            ("/policy/tickIntervalMs", serde_json::json!(-1), "`policy.tickIntervalMs`"),
            ("/snapshot/sessionDefaults/mainSessionKey", serde_json::json!({}), "`snapshot.sessionDefaults.mainSessionKey`"),
        ] {
            let mut v = hello.clone();
            *v.pointer_mut(path).unwrap() = bad;
            let e = HelloSummary::read(&v).unwrap_err();
            assert!(e.contains(named), "{path}: {e}");
        }
        let mut no_policy = hello.clone();
        no_policy.as_object_mut().unwrap().remove("policy");
        assert!(HelloSummary::read(&no_policy).unwrap_err().contains("`policy` is missing"));
        assert!(HelloSummary::read(&serde_json::json!([1])).unwrap_err().contains("not a JSON object"));
    }

    #[test]
    fn signing_token_prefers_token_then_device_then_bootstrap() {
        let mut a = AuthParams { bootstrap_token: Some("b".into()), ..Default::default() };
        assert_eq!(a.signing_token(), "b");
        a.device_token = Some("d".into());
        assert_eq!(a.signing_token(), "d");
        a.token = Some("t".into());
        assert_eq!(a.signing_token(), "t");
        assert_eq!(AuthParams::default().signing_token(), "");
    }
}
