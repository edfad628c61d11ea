//! Closed-schema deserialisation: the gateway rejects unknown fields and names them.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Deserialises `value` as `T`, failing on the first field `T` does not know.
/// The error names the field path (`client.foo`, `questions.0.bar`) or serde's own
/// message for a wrong type or a missing field.
pub fn from_value_closed<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    let mut unknown: Option<String> = None;
    let parsed: T = serde_ignored::deserialize(value, |path| {
        if unknown.is_none() {
            unknown = Some(path.to_string());
        }
    })
    .map_err(|e| e.to_string())?;
    match unknown {
        Some(path) => Err(format!("unknown field `{path}`")),
        None => Ok(parsed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Inner {
        a: u32,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Outer {
        inner: Inner,
        list: Vec<Inner>,
    }

    #[test]
    fn names_the_unknown_field_with_its_path() {
        let err = from_value_closed::<Outer>(serde_json::json!({"inner":{"a":1,"b":2},"list":[]})).unwrap_err();
        assert_eq!(err, "unknown field `inner.b`");
        let err = from_value_closed::<Outer>(serde_json::json!({"inner":{"a":1},"list":[{"a":1,"zz":0}]})).unwrap_err();
        assert_eq!(err, "unknown field `list.0.zz`");
    }

    #[test]
    fn wrong_type_and_missing_field_are_reported() {
        let err = from_value_closed::<Outer>(serde_json::json!({"inner":{"a":"x"},"list":[]})).unwrap_err();
        assert!(err.contains("invalid type"), "{err}");
        let err = from_value_closed::<Outer>(serde_json::json!({"list":[]})).unwrap_err();
        assert!(err.contains("missing field `inner`"), "{err}");
    }
}
