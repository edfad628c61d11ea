//! Connection lifecycle rules: backoff, the tick watchdog, `seq` gaps, and turning a
//! refused `connect` into words a person can act on.

use protocol::error::{ErrorShape, detail};
use serde_json::Value;

/// Reconnect delay before attempt `attempt` (0-based): 800 ms × 1.7ⁿ, capped at 15 s.
pub fn backoff_ms(attempt: u32) -> u64 {
    let ms = 800.0 * 1.7f64.powi(attempt.min(32) as i32);
    ms.min(15_000.0).round() as u64
}

/// The watchdog closes the socket when nothing arrived for twice the tick interval.
pub fn watchdog_deadline_ms(tick_interval_ms: Option<u64>) -> u64 {
    2 * tick_interval_ms.unwrap_or(protocol::TICK_INTERVAL_MS).max(1_000)
}

/// Tracks per-connection event `seq`. A gap means events were dropped: resync.
#[derive(Debug, Default, Clone)]
pub struct SeqTracker {
    last: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqCheck {
    InOrder,
    /// Events between `expected` and `got` never arrived.
    Gap {
        expected: u64,
        got: u64,
    },
    /// The same `seq` again: a duplicate frame; ignore it.
    Duplicate,
    /// Lower than one already seen: the numbering was disturbed. Take this as the new
    /// baseline and resync (so one bogus number cannot silence every later event).
    OutOfOrder {
        last: u64,
        got: u64,
    },
    /// Events without `seq` (targeted ones) are not counted.
    Unnumbered,
}

impl SeqTracker {
    pub fn observe(&mut self, seq: Option<u64>) -> SeqCheck {
        let Some(seq) = seq else { return SeqCheck::Unnumbered };
        match self.last {
            Some(last) if seq == last => SeqCheck::Duplicate,
            Some(last) if seq < last => {
                self.last = Some(seq);
                SeqCheck::OutOfOrder { last, got: seq }
            }
            Some(last) if seq > last + 1 => {
                self.last = Some(seq);
                SeqCheck::Gap { expected: last + 1, got: seq }
            }
            _ => {
                self.last = Some(seq);
                SeqCheck::InOrder
            }
        }
    }
}

/// What the UI should do about a refused `connect`.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectFailure {
    /// The token was rejected or missing: ask the person for it.
    NeedsToken { message: String },
    /// Try again after this delay (the gateway is starting, or a transient failure).
    Retry { after_ms: Option<u64>, message: String },
    /// Retrying the same way will not help; the message says what to do.
    Fatal { message: String },
    /// The gateway was updated: reloading the page fixes it.
    ReloadRequired { message: String },
}

impl ConnectFailure {
    pub fn message(&self) -> &str {
        match self {
            Self::NeedsToken { message } | Self::Retry { message, .. } | Self::Fatal { message } | Self::ReloadRequired { message } => {
                message
            }
        }
    }
}

fn details_u64(e: &ErrorShape, key: &str) -> Option<u64> {
    e.details.as_ref()?.get(key)?.as_u64()
}

/// Whether a token mismatch may be retried once with the stored device token.
pub fn can_retry_with_device_token(e: &ErrorShape) -> bool {
    e.details.as_ref().and_then(|d| d.get("canRetryWithDeviceToken")).and_then(Value::as_bool) == Some(true)
}

/// Turns a refused `connect` into words and an action.
pub fn classify_connect_error(e: &ErrorShape, our_protocol: u32, page_origin: &str) -> ConnectFailure {
    let code = e.detail_code().unwrap_or("");
    match code {
        detail::AUTH_TOKEN_MISMATCH | detail::AUTH_DEVICE_TOKEN_MISMATCH | "AUTH_UNAUTHORIZED" => ConnectFailure::NeedsToken {
            message: "The gateway rejected this token. Paste the current gateway token (it is printed when the gateway starts) to connect.".into(),
        },
        detail::AUTH_TOKEN_MISSING | "AUTH_REQUIRED" => {
            ConnectFailure::NeedsToken { message: "This gateway needs a token. Paste the gateway token to connect.".into() }
        }
        detail::AUTH_RATE_LIMITED => ConnectFailure::Retry {
            after_ms: e.retry_after_ms.or(Some(30_000)),
            message: "Too many failed sign-in attempts; the gateway asks us to wait before trying again.".into(),
        },
        detail::PROTOCOL_MISMATCH if e.details.as_ref().and_then(|d| d.get("reloadRequired")).and_then(Value::as_bool) == Some(true) => {
            ConnectFailure::ReloadRequired { message: "The gateway was updated. Reload this page to continue.".into() }
        }
        detail::PROTOCOL_MISMATCH => {
            let theirs = details_u64(e, "expectedProtocol").map(|v| format!("v{v}")).unwrap_or_else(|| "a different version".into());
            ConnectFailure::Fatal {
                message: format!("Protocol mismatch: this UI speaks protocol v{our_protocol}, the gateway speaks {theirs}. Use a UI and gateway of matching versions."),
            }
        }
        detail::CONTROL_UI_ORIGIN_NOT_ALLOWED => ConnectFailure::Fatal {
            message: format!("The gateway does not accept the Control UI from {page_origin}. Open the UI from the gateway's own address, or add this origin to the gateway's allowed origins."),
        },
        detail::CONTROL_UI_DEVICE_IDENTITY_REQUIRED => ConnectFailure::Fatal {
            message: "The gateway needs a device identity, which browsers only allow on HTTPS or localhost. Open the UI over HTTPS or from localhost.".into(),
        },
        detail::DEVICE_AUTH_SIGNATURE_EXPIRED => ConnectFailure::Retry {
            after_ms: None,
            message: "This device's clock differs from the gateway's by more than 2 minutes, so its signature was refused. Correct the clock; we keep retrying.".into(),
        },
        c if c.starts_with("DEVICE_AUTH_") => ConnectFailure::Fatal {
            message: format!("The gateway refused this browser's device identity ({c}). Clear this site's data to create a new identity."),
        },
        "PAIRING_REQUIRED" => ConnectFailure::Retry {
            after_ms: Some(5_000),
            message: "This browser is waiting for approval: approve the device on the gateway (openclaw devices approve).".into(),
        },
        _ if e.retryable == Some(true) => ConnectFailure::Retry { after_ms: e.retry_after_ms, message: format!("The gateway is not ready: {}", e.message) },
        _ => ConnectFailure::Fatal { message: format!("The gateway refused the connection: {}", e.message) },
    }
}

/// A close code the UI should explain.
pub fn describe_close(code: u16, reason: &str) -> String {
    let why = match code {
        1000 | 1001 => "the connection closed".to_string(),
        1006 => "the gateway could not be reached".to_string(),
        1008 => "the gateway refused the connection".to_string(),
        1009 => "a message was too large".to_string(),
        1011 => "the gateway hit an internal error".to_string(),
        1012 => "the gateway is restarting".to_string(),
        1013 => "the gateway is starting".to_string(),
        4000 => "no sign of life from the gateway (tick timeout)".to_string(),
        4001 => "the gateway's token changed".to_string(),
        c => format!("the connection closed (code {c})"),
    };
    if reason.is_empty() { why } else { format!("{why}: {reason}") }
}

/// Whether the gateway answering at a known address looks like another one: it issued this
/// browser's device a token other than the one it issued before at that address (another
/// gateway behind the same address, or the token was rotated). Stores are keyed by address, so
/// what was queued for the first one then waits for the person. No token either side proves
/// nothing either way.
pub fn gateway_changed(stored: Option<&str>, issued: Option<&str>) -> bool {
    matches!((stored, issued), (Some(before), Some(now)) if !before.is_empty() && !now.is_empty() && before != now)
}

/// Why what is queued for a gateway waits for the person before it is sent there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The gateway at this address issued another device token than before ([`gateway_changed`]).
    AnotherDeviceToken,
    /// Rows from the one database earlier builds kept for every gateway, given to this gateway
    /// when this browser's storage did not show which gateway they were queued for
    /// (`url::LegacyOwner::certain`).
    EarlierSharedStore,
}

impl Hold {
    /// As kept in storage.
    pub fn stored(self) -> &'static str {
        match self {
            Hold::AnotherDeviceToken => "token",
            Hold::EarlierSharedStore => "shared-store",
        }
    }

    /// From storage; anything else (the `1` of the first build that held) is a token change.
    pub fn from_stored(text: &str) -> Hold {
        if text == "shared-store" { Hold::EarlierSharedStore } else { Hold::AnotherDeviceToken }
    }

    /// What the tray says, for the gateway at `host`.
    pub fn notice(self, host: &str) -> String {
        let why = match self {
            Hold::AnotherDeviceToken => format!(
                "Queued for the gateway at {host}, which now looks different: it gave this browser another device token than before (another gateway behind the same address, or its token was rotated)."
            ),
            Hold::EarlierSharedStore => format!(
                "Queued by an earlier version of this UI, which kept one store for every gateway: this browser does not show that they were meant for the gateway at {host}."
            ),
        };
        format!("{why} Nothing queued is sent until you choose.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backoff_grows_by_1_7_from_800ms_and_caps_at_15s() {
        assert_eq!(backoff_ms(0), 800);
        assert_eq!(backoff_ms(1), 1360);
        assert_eq!(backoff_ms(2), 2312);
        assert_eq!(backoff_ms(6), 15_000);
        assert_eq!(backoff_ms(1_000), 15_000);
    }

    #[test]
    fn watchdog_is_twice_the_tick_with_a_floor() {
        assert_eq!(watchdog_deadline_ms(Some(30_000)), 60_000);
        assert_eq!(watchdog_deadline_ms(None), 60_000);
        assert_eq!(watchdog_deadline_ms(Some(10)), 2_000);
    }

    #[test]
    fn seq_gaps_duplicates_and_unnumbered_events() {
        let mut t = SeqTracker::default();
        assert_eq!(t.observe(None), SeqCheck::Unnumbered);
        assert_eq!(t.observe(Some(1)), SeqCheck::InOrder);
        assert_eq!(t.observe(Some(2)), SeqCheck::InOrder);
        assert_eq!(t.observe(Some(2)), SeqCheck::Duplicate);
        assert_eq!(t.observe(Some(5)), SeqCheck::Gap { expected: 3, got: 5 });
        assert_eq!(t.observe(Some(6)), SeqCheck::InOrder);
        // A bogus high number must not silence what follows.
        assert_eq!(t.observe(Some(999)), SeqCheck::Gap { expected: 7, got: 999 });
        assert_eq!(t.observe(Some(7)), SeqCheck::OutOfOrder { last: 999, got: 7 });
        assert_eq!(t.observe(Some(8)), SeqCheck::InOrder);
        // A new connection starts a new tracker; the first seq may be anything.
        let mut fresh = SeqTracker::default();
        assert_eq!(fresh.observe(Some(40)), SeqCheck::InOrder);
    }

    fn err(code: &str, details: serde_json::Value) -> ErrorShape {
        ErrorShape::invalid("m").with_details(
            json!({"code": code}).as_object().unwrap().clone().into_iter().chain(details.as_object().unwrap().clone()).collect(),
        )
    }

    #[test]
    fn rejected_tokens_ask_for_the_token() {
        for code in ["AUTH_TOKEN_MISMATCH", "AUTH_TOKEN_MISSING", "AUTH_DEVICE_TOKEN_MISMATCH"] {
            assert!(matches!(classify_connect_error(&err(code, json!({})), 4, "x"), ConnectFailure::NeedsToken { .. }), "{code}");
        }
        assert!(can_retry_with_device_token(&err("AUTH_TOKEN_MISMATCH", json!({"canRetryWithDeviceToken": true}))));
        assert!(!can_retry_with_device_token(&err("AUTH_TOKEN_MISMATCH", json!({}))));
    }

    #[test]
    fn protocol_mismatch_names_both_versions_or_asks_for_a_reload() {
        let f = classify_connect_error(&err("PROTOCOL_MISMATCH", json!({"expectedProtocol": 5})), 4, "x");
        assert_eq!(
            f.message(),
            "Protocol mismatch: this UI speaks protocol v4, the gateway speaks v5. Use a UI and gateway of matching versions."
        );
        let f = classify_connect_error(&err("PROTOCOL_MISMATCH", json!({"reloadRequired": true})), 4, "x");
        assert!(matches!(f, ConnectFailure::ReloadRequired { .. }));
    }

    #[test]
    fn a_starting_gateway_is_retried_after_its_delay() {
        let mut e = ErrorShape::new("UNAVAILABLE", "gateway starting; retry shortly").with_details(json!({"reason": "startup-sidecars"}));
        e.retryable = Some(true);
        e.retry_after_ms = Some(500);
        assert_eq!(
            classify_connect_error(&e, 4, "x"),
            ConnectFailure::Retry { after_ms: Some(500), message: "The gateway is not ready: gateway starting; retry shortly".into() }
        );
        let origin = classify_connect_error(&err("CONTROL_UI_ORIGIN_NOT_ALLOWED", json!({})), 4, "http://evil");
        assert!(origin.message().contains("http://evil"));
    }

    #[test]
    fn close_codes_read_as_words() {
        assert_eq!(describe_close(4000, ""), "no sign of life from the gateway (tick timeout)");
        assert_eq!(describe_close(1008, "connect refused"), "the gateway refused the connection: connect refused");
        assert_eq!(describe_close(4444, ""), "the connection closed (code 4444)");
    }

    #[test]
    fn a_gateway_that_issues_another_device_token_at_the_same_address_looks_different() {
        assert!(gateway_changed(Some("token-a"), Some("token-b")));
        assert!(!gateway_changed(Some("token-a"), Some("token-a")), "the same token: the same gateway");
        assert!(!gateway_changed(None, Some("token-b")), "first contact proves nothing");
        assert!(!gateway_changed(Some("token-a"), None), "no token issued: nothing to compare");
    }

    #[test]
    fn a_hold_keeps_its_reason_across_storage_and_the_first_builds_mark_is_a_token_change() {
        for hold in [Hold::AnotherDeviceToken, Hold::EarlierSharedStore] {
            assert_eq!(Hold::from_stored(hold.stored()), hold);
        }
        assert_eq!(Hold::from_stored("1"), Hold::AnotherDeviceToken);
        assert!(Hold::EarlierSharedStore.notice("gw:1").contains("earlier version of this UI"));
        assert!(Hold::AnotherDeviceToken.notice("gw:1").contains("gw:1, which now looks different"));
    }
}
