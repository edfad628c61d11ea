//! The three frames: `req`, `res` and `event`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorShape;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestFrame {
    pub id: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    #[serde(default, rename = "expectedProfileId", skip_serializing_if = "Option::is_none")]
    pub expected_profile_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseFrame {
    pub id: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorShape>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventFrame {
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    #[serde(default, rename = "stateVersion", skip_serializing_if = "Option::is_none")]
    pub state_version: Option<Value>,
    #[serde(default, rename = "recipientProfileId", skip_serializing_if = "Option::is_none")]
    pub recipient_profile_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Req(RequestFrame),
    Res(ResponseFrame),
    Event(EventFrame),
}

/// Why a text could not be read as a frame. The message is meant for logs and people.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameError(pub String);

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The text of a `req` frame with typed `params`, serialised without a `Value` in between (the
/// page's early module sends `connect` and its first reads with this alone).
pub fn request_text<P: Serialize>(id: &str, method: &str, params: &P) -> String {
    #[derive(Serialize)]
    struct Request<'a, P> {
        #[serde(rename = "type")]
        kind: &'static str,
        id: &'a str,
        method: &'a str,
        params: &'a P,
    }
    serde_json::to_string(&Request { kind: "req", id, method, params }).unwrap_or_default()
}

/// Empty `params`: `{}`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct NoParams {}

impl Frame {
    /// Lenient parse, for the UI: unknown fields are ignored, the frame kind and the
    /// required fields must be right.
    pub fn parse(text: &str) -> Result<Frame, FrameError> {
        let value: Value = serde_json::from_str(text).map_err(|e| FrameError(format!("not JSON: {e}")))?;
        Self::from_value::<false>(value)
    }

    /// Closed parse, for the gateway: an unknown top-level or frame field is an error that
    /// names the field.
    pub fn parse_closed(text: &str) -> Result<Frame, FrameError> {
        let value: Value = serde_json::from_str(text).map_err(|e| FrameError(format!("not JSON: {e}")))?;
        Self::from_value::<true>(value)
    }

    // CLOSED is a const so the UI, which only parses leniently, never links the closed reader.
    fn from_value<const CLOSED: bool>(mut value: Value) -> Result<Frame, FrameError> {
        let obj = value.as_object_mut().ok_or_else(|| FrameError("frame is not a JSON object".into()))?;
        let kind = match obj.remove("type") {
            Some(Value::String(s)) => s,
            Some(_) => return Err(FrameError("frame field `type` is not a string".into())),
            None => return Err(FrameError("frame has no `type`".into())),
        };
        fn read<T: serde::de::DeserializeOwned, const CLOSED: bool>(v: Value, kind: &str) -> Result<T, FrameError> {
            let r = if CLOSED { crate::closed::from_value_closed(v) } else { serde_json::from_value(v).map_err(|e| e.to_string()) };
            r.map_err(|e| FrameError(format!("invalid `{kind}` frame: {e}")))
        }
        match kind.as_str() {
            "req" => {
                let f: RequestFrame = read::<_, CLOSED>(value, "req")?;
                if f.id.is_empty() {
                    return Err(FrameError("invalid `req` frame: `id` must be non-empty".into()));
                }
                if f.method.is_empty() {
                    return Err(FrameError("invalid `req` frame: `method` must be non-empty".into()));
                }
                Ok(Frame::Req(f))
            }
            "res" => Ok(Frame::Res(read::<_, CLOSED>(value, "res")?)),
            "event" => Ok(Frame::Event(read::<_, CLOSED>(value, "event")?)),
            other => Err(FrameError(format!("unknown frame type `{}`", truncate(other, 40)))),
        }
    }

    pub fn to_json(&self) -> String {
        let (kind, mut v) = match self {
            Frame::Req(f) => ("req", serde_json::to_value(f)),
            Frame::Res(f) => ("res", serde_json::to_value(f)),
            Frame::Event(f) => ("event", serde_json::to_value(f)),
        };
        let v = v.as_mut().expect("frames always serialise");
        v.as_object_mut().expect("frames are objects").insert("type".into(), Value::String(kind.into()));
        compact(v)
    }
}

/// A JSON value as compact text. `Value`'s `Display` would also link the pretty printer
/// (`{:#}`), which the UI never uses; every UI path writes JSON through here instead.
pub fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

impl RequestFrame {
    pub fn new(id: impl Into<String>, method: impl Into<String>, params: Value) -> Self {
        RequestFrame { id: id.into(), method: method.into(), params: Some(params), traceparent: None, expected_profile_id: None }
    }
}

impl ResponseFrame {
    pub fn ok(id: impl Into<String>, payload: Value) -> Self {
        ResponseFrame { id: id.into(), ok: true, payload: Some(payload), error: None }
    }
    pub fn err(id: impl Into<String>, error: ErrorShape) -> Self {
        ResponseFrame { id: id.into(), ok: false, payload: None, error: Some(error) }
    }
}

/// Cuts `s` to at most `max` characters, for echoing untrusted input in messages.
pub fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_text_is_the_same_frame_as_a_value_built_one() {
        let params = serde_json::json!({"questions": [], "note": "a \"quoted\" \u{2028} line"});
        let typed = request_text("connect:early", "connect", &params);
        assert_eq!(Frame::parse_closed(&typed).unwrap(), Frame::Req(RequestFrame::new("connect:early", "connect", params)));
        assert_eq!(
            request_text("early:1", "question.list", &NoParams {}),
            r#"{"type":"req","id":"early:1","method":"question.list","params":{}}"#
        );
    }

    #[test]
    fn closed_parse_names_an_unknown_top_level_field() {
        let err = Frame::parse_closed(r#"{"type":"req","id":"1","method":"x","params":{},"bogus":1}"#).unwrap_err();
        assert_eq!(err.0, "invalid `req` frame: unknown field `bogus`");
        // The lenient parse keeps going.
        assert!(Frame::parse(r#"{"type":"req","id":"1","method":"x","params":{},"bogus":1}"#).is_ok());
    }

    #[test]
    fn rejects_what_is_not_a_frame() {
        assert_eq!(Frame::parse("[1]").unwrap_err().0, "frame is not a JSON object");
        assert_eq!(Frame::parse(r#"{"id":"1"}"#).unwrap_err().0, "frame has no `type`");
        assert_eq!(Frame::parse(r#"{"type":"cancel","id":"1"}"#).unwrap_err().0, "unknown frame type `cancel`");
        assert!(Frame::parse(r#"{"type":"req","id":"","method":"m"}"#).unwrap_err().0.contains("non-empty"));
        assert!(Frame::parse("{").unwrap_err().0.starts_with("not JSON"));
    }

    #[test]
    fn to_json_round_trips_through_the_closed_parser() {
        let f = Frame::Event(EventFrame {
            event: "tick".into(),
            payload: Some(serde_json::json!({"ts":1})),
            seq: Some(7),
            state_version: None,
            recipient_profile_id: None,
        });
        let text = f.to_json();
        assert!(text.contains(r#""type":"event""#), "{text}");
        assert_eq!(Frame::parse_closed(&text).unwrap(), f);
    }
}
