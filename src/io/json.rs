//! JSON text in and out of storage and channels. Everything goes through
//! `serde_json::Value`, so each stored type's (de)serializer is compiled once (for `Value`)
//! instead of once per reader/writer: a measurable share of the wasm bundle.

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

/// Parses stored JSON text into `T`; `None` when it is not JSON or not a `T`.
pub fn decode<T: DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_value(serde_json::from_str::<Value>(text).ok()?).ok()
}

/// JSON text of `value` (empty when it cannot be represented, which our types never hit).
pub fn encode<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_value(value).map(|v| protocol::frame::compact(&v)).unwrap_or_default()
}
