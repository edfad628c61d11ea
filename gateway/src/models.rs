//! The demo agent's models: `models.list`, and the rules `sessions.patch` applies to `model`
//! and `thinkingLevel`, as the real gateway applies them (`provider/id`, a bare id or an alias;
//! thinking levels by their canonical ids, common aliases accepted, checked against the
//! model's levels; a model change moves a stored level to one the new model offers).

use serde_json::{Value, json};

/// One model of the demo catalogue.
pub struct Model {
    pub provider: &'static str,
    pub id: &'static str,
    pub name: &'static str,
    pub alias: &'static str,
    pub context_window: u64,
    /// Its thinking levels, lowest first; `["off"]` for a model that does not reason.
    pub levels: &'static [&'static str],
    pub thinking_default: &'static str,
}

/// The catalogue: the first is the agent's default.
pub const MODELS: &[Model] = &[
    Model {
        provider: "demo",
        id: "quick",
        name: "Demo quick",
        alias: "quick",
        context_window: 32_000,
        levels: &["off"],
        thinking_default: "off",
    },
    Model {
        provider: "demo",
        id: "deep",
        name: "Demo deep",
        alias: "deep",
        context_window: 200_000,
        levels: &["off", "minimal", "low", "medium", "high"],
        thinking_default: "low",
    },
];

pub fn default_model() -> &'static Model {
    &MODELS[0]
}

impl Model {
    pub fn value(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }

    /// `thinkingLevels` as the real gateway sends them.
    pub fn levels_json(&self) -> Value {
        Value::Array(self.levels.iter().map(|l| json!({"id": l, "label": l})).collect())
    }

    /// A `models.list` entry (`ModelChoice`).
    fn choice(&self) -> Value {
        json!({"id": self.id, "name": self.name, "provider": self.provider, "alias": self.alias, "available": true,
            "contextWindow": self.context_window, "reasoning": self.levels.len() > 1,
            "thinkingLevels": self.levels_json(), "thinkingDefault": self.thinking_default, "input": ["text", "image"]})
    }

    /// The stored level moved to the nearest one this model offers (not above it).
    pub fn clamp(&self, level: &str) -> &'static str {
        let rank = RANKS.iter().position(|r| *r == level).unwrap_or(0);
        self.levels.iter().rev().find(|l| RANKS.iter().position(|r| r == *l).unwrap_or(0) <= rank).copied().unwrap_or("off")
    }
}

/// Canonical thinking levels, lowest first.
const RANKS: &[&str] = &["off", "minimal", "low", "medium", "high", "adaptive", "xhigh", "max", "ultra"];

/// The model a stored value names (`provider/id`); the default for none or one no longer known.
pub fn stored(value: Option<&str>) -> &'static Model {
    value.and_then(|v| MODELS.iter().find(|m| m.value() == v)).unwrap_or_else(default_model)
}

/// `sessions.patch`'s `model`: `provider/id`, a bare id or an alias.
pub fn resolve(text: &str) -> Result<&'static Model, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("invalid model: empty".into());
    }
    MODELS
        .iter()
        .find(|m| m.value() == t || m.id == t || m.alias == t)
        .ok_or_else(|| format!("model not allowed: {}", protocol::frame::truncate(t, 120)))
}

/// `sessions.patch`'s `thinkingLevel`, normalised (`none` → `off`, `med` → `medium`, …) and
/// checked against `model`'s levels.
pub fn thinking(text: &str, model: &Model) -> Result<&'static str, String> {
    let t = text.trim().to_ascii_lowercase();
    let canonical = match t.as_str() {
        "none" => "off",
        "on" | "enable" | "thinkhard" => "low",
        "min" | "think" => "minimal",
        "mid" | "med" | "harder" => "medium",
        "ultrathink" | "highest" => "high",
        "auto" => "adaptive",
        "extrahigh" => "xhigh",
        other => RANKS.iter().find(|r| **r == other).copied().ok_or_else(|| format!("invalid thinkingLevel (use {})", RANKS.join("|")))?,
    };
    model
        .levels
        .iter()
        .find(|l| **l == canonical)
        .copied()
        .ok_or_else(|| format!("thinkingLevel \"{canonical}\" is not supported for {} (use {})", model.value(), model.levels.join("|")))
}

pub const LIST_KEYS: &[&str] = &[
    "agentId",
    "sessionKey",
    "provider",
    "authProfileId",
    "includeDetails",
    "includeProviderCapabilities",
    "includeDefaultModels",
    "preparedOnly",
    "refresh",
    "view",
];

/// `models.list`: `{models}`; every view of the demo catalogue is the whole catalogue.
pub fn list(params: &Value) -> Result<Value, protocol::error::ErrorShape> {
    if let Some(view) = params.get("view")
        && !view.as_str().is_some_and(|v| matches!(v, "default" | "configured" | "provider-config" | "all"))
    {
        return Err(protocol::error::ErrorShape::invalid(
            "invalid models.list params: at /view: must be one of default, configured, provider-config, all",
        ));
    }
    Ok(json!({"models": MODELS.iter().map(Model::choice).collect::<Vec<_>>()}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_named_by_its_value_its_id_or_its_alias() {
        assert_eq!(resolve("demo/deep").unwrap().id, "deep");
        assert_eq!(resolve("deep").unwrap().id, "deep");
        assert_eq!(resolve(" quick ").unwrap().id, "quick");
        assert_eq!(resolve("gpt-9").err().unwrap(), "model not allowed: gpt-9");
        assert_eq!(resolve("").err().unwrap(), "invalid model: empty");
        assert_eq!(stored(Some("gone/model")).id, "quick", "a model no longer known reads as the default");
    }

    #[test]
    fn thinking_levels_are_normalised_and_checked_against_the_model() {
        let deep = resolve("deep").unwrap();
        assert_eq!(thinking("MED", deep).unwrap(), "medium");
        assert_eq!(thinking("none", deep).unwrap(), "off");
        assert!(thinking("xhigh", deep).unwrap_err().contains("not supported for demo/deep"));
        assert!(thinking("loud", deep).unwrap_err().starts_with("invalid thinkingLevel"));
        assert!(thinking("low", default_model()).is_err(), "the quick model does not think");
        assert_eq!(default_model().clamp("high"), "off");
        assert_eq!(deep.clamp("xhigh"), "high");
        assert_eq!(deep.clamp("minimal"), "minimal");
    }
}
