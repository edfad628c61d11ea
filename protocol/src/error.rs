//! The error shape and the codes the real gateway uses.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorShape {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    #[serde(default, rename = "retryAfterMs", skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

/// Top-level `error.code` values.
pub mod code {
    pub const INVALID_REQUEST: &str = "INVALID_REQUEST";
    pub const FORBIDDEN: &str = "FORBIDDEN";
    pub const UNAVAILABLE: &str = "UNAVAILABLE";
    pub const NOT_PAIRED: &str = "NOT_PAIRED";
}

/// `details.code` values of connect failures.
pub mod detail {
    pub const AUTH_TOKEN_MISSING: &str = "AUTH_TOKEN_MISSING";
    pub const AUTH_TOKEN_MISMATCH: &str = "AUTH_TOKEN_MISMATCH";
    pub const AUTH_DEVICE_TOKEN_MISMATCH: &str = "AUTH_DEVICE_TOKEN_MISMATCH";
    pub const AUTH_RATE_LIMITED: &str = "AUTH_RATE_LIMITED";
    pub const CONTROL_UI_ORIGIN_NOT_ALLOWED: &str = "CONTROL_UI_ORIGIN_NOT_ALLOWED";
    pub const CONTROL_UI_DEVICE_IDENTITY_REQUIRED: &str = "CONTROL_UI_DEVICE_IDENTITY_REQUIRED";
    pub const PROTOCOL_MISMATCH: &str = "PROTOCOL_MISMATCH";
    pub const DEVICE_AUTH_DEVICE_ID_MISMATCH: &str = "DEVICE_AUTH_DEVICE_ID_MISMATCH";
    pub const DEVICE_AUTH_SIGNATURE_EXPIRED: &str = "DEVICE_AUTH_SIGNATURE_EXPIRED";
    pub const DEVICE_AUTH_NONCE_REQUIRED: &str = "DEVICE_AUTH_NONCE_REQUIRED";
    pub const DEVICE_AUTH_NONCE_MISMATCH: &str = "DEVICE_AUTH_NONCE_MISMATCH";
    pub const DEVICE_AUTH_SIGNATURE_INVALID: &str = "DEVICE_AUTH_SIGNATURE_INVALID";
    pub const DEVICE_AUTH_PUBLIC_KEY_INVALID: &str = "DEVICE_AUTH_PUBLIC_KEY_INVALID";
    pub const MISSING_SCOPE: &str = "MISSING_SCOPE";
}

/// `details.reason` values of question errors.
pub mod reason {
    pub const QUESTION_INVALID_ANSWER: &str = "QUESTION_INVALID_ANSWER";
    pub const QUESTION_NOT_FOUND: &str = "QUESTION_NOT_FOUND";
    pub const QUESTION_ALREADY_TERMINAL: &str = "QUESTION_ALREADY_TERMINAL";
    pub const QUESTION_ID_IN_USE: &str = "QUESTION_ID_IN_USE";
    pub const QUESTION_REQUESTER_INACTIVE: &str = "QUESTION_REQUESTER_INACTIVE";
}

impl ErrorShape {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        ErrorShape { code: code.into(), message: message.into(), details: None, retryable: None, retry_after_ms: None }
    }
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }
    pub fn missing_scope(scope: &str, required: &[&str]) -> Self {
        Self::new(code::FORBIDDEN, format!("missing scope: {scope}"))
            .with_details(json!({"code": detail::MISSING_SCOPE, "missingScope": scope, "requiredScopes": required}))
    }
    pub fn question(reason: &str, message: impl Into<String>) -> Self {
        Self::invalid(message).with_details(json!({ "reason": reason }))
    }
    /// `details.code`, where a connect failure puts its stable code.
    pub fn detail_code(&self) -> Option<&str> {
        self.details.as_ref()?.get("code")?.as_str()
    }
    /// `details.reason`, where question errors put theirs.
    pub fn detail_reason(&self) -> Option<&str> {
        self.details.as_ref()?.get("reason")?.as_str()
    }
}
