//! Closed-schema deserialisation for the gateway: an unknown field, a wrong type and a
//! missing field are all errors that say where (`questions.0.colour`, `message`,
//! `client.version`). The UI parses leniently and never links this.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The dotted path of a deserialisation error (`questions.0.header`), empty at the root.
fn dotted(path: &serde_path_to_error::Path) -> String {
    path.iter()
        .map(|s| match s {
            serde_path_to_error::Segment::Seq { index } => index.to_string(),
            serde_path_to_error::Segment::Map { key } => key.clone(),
            serde_path_to_error::Segment::Enum { variant } => variant.clone(),
            serde_path_to_error::Segment::Unknown => "?".to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Deserialises `value` as `T`, failing on the first field `T` does not know, on a wrong
/// type and on a missing field, with the field's path in the message.
pub fn from_value_closed<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    let mut unknown: Option<String> = None;
    let mut record = |path: serde_ignored::Path<'_>| {
        if unknown.is_none() {
            unknown = Some(path.to_string());
        }
    };
    let de = serde_ignored::Deserializer::new(value, &mut record);
    let parsed: Result<T, _> = serde_path_to_error::deserialize(de);
    let parsed = parsed.map_err(|e| {
        let path = dotted(e.path());
        let inner = e.into_inner().to_string();
        if path.is_empty() {
            return inner;
        }
        // serde names a missing field without its parent: put the parent in front.
        if let Some(rest) = inner.strip_prefix("missing field `") {
            return format!("missing field `{path}.{rest}");
        }
        format!("`{path}`: {inner}")
    })?;
    match unknown {
        Some(path) => Err(format!("unknown field `{path}`")),
        None => Ok(parsed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Inner {
        a: u32,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    #[serde(rename_all = "camelCase")]
    struct Outer {
        inner: Inner,
        list: Vec<Inner>,
        #[serde(default)]
        some_text: Option<String>,
    }

    #[test]
    fn unknown_missing_and_wrongly_typed_fields_are_named_with_their_path() {
        let e = from_value_closed::<Outer>(json!({"inner":{"a":1,"b":2},"list":[]})).unwrap_err();
        assert_eq!(e, "unknown field `inner.b`");
        let e = from_value_closed::<Outer>(json!({"inner":{"a":1},"list":[{"a":1,"zz":0}]})).unwrap_err();
        assert_eq!(e, "unknown field `list.0.zz`");
        let e = from_value_closed::<Outer>(json!({"inner":{"a":1},"list":[{"a":"x"}]})).unwrap_err();
        assert!(e.starts_with("`list.0.a`: invalid type: string"), "{e}");
        let e = from_value_closed::<Outer>(json!({"inner":{"a":1},"list":[],"someText":5})).unwrap_err();
        assert!(e.starts_with("`someText`: invalid type: integer `5`"), "{e}");
        let e = from_value_closed::<Outer>(json!({"inner":{},"list":[]})).unwrap_err();
        assert_eq!(e, "missing field `inner.a`");
        let e = from_value_closed::<Outer>(json!({"list":[]})).unwrap_err();
        assert_eq!(e, "missing field `inner`");
        let e = from_value_closed::<Outer>(json!(5)).unwrap_err();
        assert_eq!(e, "invalid type: integer `5`, expected struct Outer");
    }
}
