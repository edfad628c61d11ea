//! Admission: everything `connect` checks, in the real gateway's order, and `hello-ok`.

use protocol::connect::{CONTROL_UI_CLIENT_ID, ConnectParams, Features, HelloAuth, HelloOk, Policy, ServerInfo, SessionDefaults, Snapshot};
use protocol::device::verify_connect;
use protocol::error::{ErrorShape, detail};
use protocol::methods::scope;
use serde_json::{Value, json};
use std::net::IpAddr;

use crate::Gateway;
use crate::util::{now_ms, secret_eq};

/// Who was let in.
#[derive(Debug, Clone)]
pub struct Admitted {
    pub client_id: String,
    pub scopes: Vec<String>,
    pub owner: String,
    pub device_token: Option<String>,
    pub display_name: Option<String>,
    pub device_id: Option<String>,
}

/// What the transport knows about the client.
pub struct Transport<'a> {
    pub origin: Option<&'a str>,
    /// The `Host` header: the gateway's own origin is `http://<host>`.
    pub host: Option<&'a str>,
    pub challenge_nonce: &'a str,
}

fn connect_error(message: &str, code: &str) -> ErrorShape {
    ErrorShape::invalid(message).with_details(json!({ "code": code }))
}

/// A `Host` header's name and port (`[::1]:8080` → `::1`, 8080; no port is 80).
fn host_and_port(host: &str) -> Option<(&str, u16)> {
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => {
            let (name, after) = rest.split_once(']')?;
            (name, if after.is_empty() { None } else { Some(after.strip_prefix(':')?) })
        }
        None => match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        },
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => 80,
    };
    (!name.is_empty()).then_some((name, port))
}

/// Whether a `Host` header names the gateway bound at `bind`:`port` by a name no DNS answer can
/// move elsewhere: its port, and `localhost` or a loopback address when bound to loopback,
/// the bound address itself when bound to one address, any address (or `localhost`) when
/// bound to all. Never a DNS name: a page of `http://evil.example:PORT` whose name was
/// rebound to 127.0.0.1 sends `Host: evil.example:PORT`.
pub fn host_is_the_gateway(bind: IpAddr, port: u16, host: &str) -> bool {
    let Some((name, host_port)) = host_and_port(host) else { return false };
    if host_port != port {
        return false;
    }
    if name.eq_ignore_ascii_case("localhost") {
        return bind.is_loopback() || bind.is_unspecified();
    }
    let Ok(ip) = name.parse::<IpAddr>() else { return false };
    if bind.is_unspecified() {
        true
    } else if bind.is_loopback() {
        ip.is_loopback()
    } else {
        ip == bind
    }
}

/// Whether a browser page from `origin` may use this gateway: a configured allowed origin
/// (`--allowed-origin`, `ALLOWED_ORIGINS`), or the gateway's own origin, `http(s)://<Host>`,
/// when the Host names the gateway itself ([`host_is_the_gateway`]). Any other page is refused,
/// a page on another `localhost` port too. Checked at the upgrade and at `connect`.
pub fn origin_allowed(gw: &Gateway, origin: &str, host: Option<&str>) -> bool {
    if gw.config.allowed_origins.iter().any(|o| o == origin) {
        return true;
    }
    let Some(host) = host else { return false };
    (origin == format!("http://{host}") || origin == format!("https://{host}")) && host_is_the_gateway(gw.config.bind, gw.config.port, host)
}

pub fn admit(gw: &Gateway, params: Value, t: &Transport<'_>) -> Result<Admitted, ErrorShape> {
    let p: ConnectParams =
        protocol::closed::from_value_closed(params).map_err(|e| ErrorShape::invalid(format!("invalid connect params: {e}")))?;
    p.check().map_err(|e| ErrorShape::invalid(format!("invalid connect params: {e}")))?;
    if p.min_protocol > protocol::PROTOCOL_VERSION || p.max_protocol < protocol::PROTOCOL_VERSION {
        return Err(ErrorShape::invalid(format!(
            "protocol mismatch: the client speaks v{}–v{}, this gateway speaks v{}",
            p.min_protocol,
            p.max_protocol,
            protocol::PROTOCOL_VERSION
        ))
        .with_details(json!({"code": detail::PROTOCOL_MISMATCH, "expectedProtocol": protocol::PROTOCOL_VERSION, "minimumProbeProtocol": protocol::PROTOCOL_VERSION})));
    }
    let control_ui = p.client.id == CONTROL_UI_CLIENT_ID;
    if control_ui && !t.origin.is_some_and(|o| origin_allowed(gw, o, t.host)) {
        return Err(ErrorShape::invalid(
            "origin not allowed: open the Control UI from the gateway's own address, or add this origin to the allowed origins",
        )
        .with_details(json!({"code": detail::CONTROL_UI_ORIGIN_NOT_ALLOWED, "reason": "origin missing or invalid"})));
    }
    // A browser page (any Origin) must prove a device identity; so must the Control UI.
    if (control_ui || t.origin.is_some()) && p.device.is_none() {
        return Err(connect_error(
            "control ui requires device identity (use HTTPS or localhost secure context)",
            detail::CONTROL_UI_DEVICE_IDENTITY_REQUIRED,
        ));
    }
    let now = now_ms();
    if p.device.is_some() {
        verify_connect(&p, t.challenge_nonce, now).map_err(|e| connect_error(e.message(), e.code()))?;
    }
    let auth = p.auth.clone().unwrap_or_default();
    let known_device = match &p.device {
        Some(d) => gw
            .store
            .device(&d.id)
            .map_err(|e| ErrorShape::new(protocol::error::code::UNAVAILABLE, format!("device store unavailable: {e}")))?,
        None => None,
    };
    match (&auth.token, &auth.device_token) {
        (Some(token), _) => {
            if !secret_eq(token, &gw.config.token) {
                let can_retry = known_device.is_some() && auth.device_token.is_none();
                return Err(ErrorShape::invalid("unauthorized: gateway token mismatch (open the dashboard URL and paste the token in Control UI settings)")
                    .with_details(json!({"code": detail::AUTH_TOKEN_MISMATCH, "canRetryWithDeviceToken": can_retry, "recommendedNextStep": if can_retry { "retry_with_device_token" } else { "update_auth_credentials" }})));
            }
        }
        (None, Some(device_token)) => {
            let verdict = match &known_device {
                Some(d) => crate::devices::verify_for(gw, d, device_token, now),
                None => Err(crate::devices::Refused::Unknown),
            };
            if let Err(why) = verdict {
                let reason = match why {
                    crate::devices::Refused::Unknown => "device token mismatch",
                    crate::devices::Refused::Revoked => "this device's token was revoked",
                    crate::devices::Refused::SharedTokenChanged => "the gateway token changed since this device paired",
                    crate::devices::Refused::Expired => "this device's token expired (unused for 30 days)",
                };
                return Err(ErrorShape::invalid(format!("unauthorized: {reason} (paste the gateway token again)"))
                    .with_details(json!({"code": detail::AUTH_DEVICE_TOKEN_MISMATCH, "recommendedNextStep": "update_auth_credentials"})));
            }
        }
        (None, None) => {
            return Err(ErrorShape::invalid(
                "unauthorized: gateway token missing (open the dashboard URL with #token=… or paste the token in Control UI settings)",
            )
            .with_details(json!({"code": detail::AUTH_TOKEN_MISSING, "recommendedNextStep": "update_auth_credentials"})));
        }
    }
    // Loopback pairs automatically; grant what was asked among the scopes we know.
    let requested = p.scopes.clone().unwrap_or_default();
    let mut scopes: Vec<String> = Vec::new();
    for s in requested {
        if scope::ALL.contains(&s.as_str()) && !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    // Browser devices get at most the scopes they are approved for (a guest or a read-only
    // operator). Asking for a broad scope yields its narrow session-only form if only that
    // is approved.
    if let (Some(approved), Some(_)) = (&gw.config.device_scopes, &p.device) {
        let asked = scopes.clone();
        let broad_of = |narrow: &str| match narrow {
            scope::SESSIONS_WRITE => Some(scope::WRITE),
            scope::SESSIONS_READ => Some(scope::READ),
            _ => None,
        };
        scopes =
            approved.iter().filter(|a| asked.contains(a) || broad_of(a).is_some_and(|b| asked.iter().any(|x| x == b))).cloned().collect();
    }
    let (owner, device_token) = match &p.device {
        Some(d) => {
            let token = crate::devices::pair(gw, &d.id, &d.public_key, &p.client.id, now)
                .map_err(|e| ErrorShape::new(protocol::error::code::UNAVAILABLE, format!("device store unavailable: {e}")))?;
            (d.id.clone(), Some(token))
        }
        None => (format!("client:{}", p.client.id), None),
    };
    let device_id = p.device.as_ref().map(|d| d.id.clone());
    Ok(Admitted { client_id: p.client.id, scopes, owner, device_token, display_name: p.client.display_name, device_id })
}

/// Methods this gateway implements, as advertised in `hello-ok.features.methods`.
pub fn implemented_methods() -> Vec<String> {
    crate::methods::IMPLEMENTED.iter().map(|m| m.to_string()).collect()
}

pub fn hello_ok(gw: &Gateway, a: &Admitted, conn_id: &str) -> HelloOk {
    HelloOk {
        kind: "hello-ok".into(),
        protocol: protocol::PROTOCOL_VERSION,
        server: ServerInfo {
            version: gw.config.version.clone(),
            build_id: Some(format!("local-{}", gw.config.version)),
            boot_id: Some(gw.boot_id.clone()),
            control_ui_build_source: Some("configured".into()),
            conn_id: Some(conn_id.into()),
        },
        features: Features {
            methods: implemented_methods(),
            events: protocol::methods::EVENTS.iter().map(|e| e.to_string()).collect(),
            capabilities: vec![],
        },
        snapshot: Snapshot {
            session_defaults: Some(SessionDefaults {
                default_agent_id: Some("main".into()),
                main_key: Some("main".into()),
                main_session_key: Some("agent:main:main".into()),
                model_configured: Some(true),
                scope: Some("per-sender".into()),
            }),
            uptime_ms: Some(gw.started.elapsed().as_millis() as u64),
            auth_mode: Some("token".into()),
        },
        auth: HelloAuth {
            method: Some("token".into()),
            role: Some("operator".into()),
            scopes: a.scopes.clone(),
            device_token: a.device_token.clone(),
            issued_at_ms: Some(now_ms()),
        },
        policy: Policy {
            max_payload: Some(protocol::MAX_PAYLOAD_BYTES as u64),
            max_buffered_bytes: Some(protocol::MAX_BUFFERED_BYTES as u64),
            tick_interval_ms: Some(gw.config.tick_interval_ms),
            attachments: Some(protocol::connect::AttachmentPolicy {
                max_bytes: protocol::ATTACHMENTS_MAX_BYTES,
                max_image_bytes: protocol::ATTACHMENTS_MAX_IMAGE_BYTES,
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bound_address_and_its_loopback_names_are_the_gateways_host() {
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        for h in ["127.0.0.1:18789", "localhost:18789", "LOCALHOST:18789", "[::1]:18789", "127.0.0.2:18789"] {
            assert!(host_is_the_gateway(lo, 18789, h), "{h}");
        }
        for h in [
            "evil.example:18789",
            "127.0.0.1:5173",
            "localhost:5173",
            "127.0.0.1",
            "127.0.0.1.nip.io:18789",
            "192.168.1.5:18789",
            "[::1]",
            "[::1]x:18789",
            ":18789",
            "",
            "127.0.0.1:18789:1",
        ] {
            assert!(!host_is_the_gateway(lo, 18789, h), "{h}");
        }
        let lan: IpAddr = "192.168.1.5".parse().unwrap();
        assert!(host_is_the_gateway(lan, 80, "192.168.1.5"));
        assert!(!host_is_the_gateway(lan, 80, "localhost") && !host_is_the_gateway(lan, 80, "gw.lan"));
        let any: IpAddr = "0.0.0.0".parse().unwrap();
        assert!(host_is_the_gateway(any, 8080, "10.0.0.7:8080") && host_is_the_gateway(any, 8080, "localhost:8080"));
        assert!(!host_is_the_gateway(any, 8080, "gw.lan:8080"), "a DNS name can be rebound");
    }
}
