//! Which model answers in a conversation, how hard it thinks, and how full its context is.
//!
//! Read from the conversation's session row (`sessions.list`, `sessions.changed`,
//! `chat.history`'s `sessionInfo`) and from `models.list {view: "configured"}`; changed with
//! `sessions.patch {key, model}` or `{key, thinkingLevel}` (`operator.write`). A send waits while
//! a patch is on its way, so a message never goes to the model it was not meant for.
//!
//! The context meter reads `totalTokens`: the real gateway writes there the prompt tokens of the
//! conversation's last model call (the context now), never a sum over runs; `inputTokens`,
//! `outputTokens` and `estimatedCostUsd` are the last run's, summed over its tool loops, and are
//! shown as that run's, never against the window (the incumbent's ring did, and overstated it).

use serde_json::{Value, json};

/// A model as a conversation names it: `provider/id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub id: String,
}

impl ModelRef {
    /// The value `sessions.patch` takes and the picker's option value: `provider/id`, or the id
    /// alone when it already names its provider.
    pub fn value(&self) -> String {
        if self.provider.is_empty() || self.id.starts_with(&format!("{}/", self.provider)) {
            self.id.clone()
        } else {
            format!("{}/{}", self.provider, self.id)
        }
    }
}

/// One thinking level a model offers (`thinkingLevels[]`): `off`, `low`, `high`, …
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    pub id: String,
    pub label: String,
}

/// What a session row says about its model and effort.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The selected model (the conversation's own, or the agent's default).
    pub model: Option<ModelRef>,
    /// The conversation's own level; `None`: the model's default.
    pub thinking: Option<String>,
    pub thinking_default: Option<String>,
    /// The levels the selected model offers; empty: no effort to choose.
    pub levels: Vec<Level>,
}

/// The last run's tokens and cost, as the gateway reports them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunTokens {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub cost_usd: Option<f64>,
}

/// What the context is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// The prompt budget the gateway estimated before the last run (`contextBudgetStatus`).
    PromptBudget,
    /// The model's context window (`contextTokens`).
    ContextWindow,
}

/// How full a conversation's context is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// Tokens in the context now (`totalTokens`); `None` when the gateway has no figure.
    pub context: Option<u64>,
    /// The figure is the last call's (`totalTokensFresh`); an older one is shown as approximate.
    pub fresh: bool,
    pub limit: Option<(u64, LimitKind)>,
    pub last_run: RunTokens,
}

/// How the meter is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    Normal,
    /// 85 % or more of the limit.
    Warn,
    /// 95 % or more.
    Danger,
}

fn text(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()).map(str::to_string)
}

fn count(v: &Value, name: &str) -> Option<u64> {
    v.get(name).and_then(Value::as_f64).filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as u64)
}

fn model_ref(row: &Value, provider: &str, model: &str) -> Option<ModelRef> {
    let id = text(row, model)?;
    Some(ModelRef { provider: text(row, provider).unwrap_or_default(), id })
}

/// A row's thinking levels: `[{id, label}]`, or labels alone (`thinkingOptions`).
fn read_levels(row: &Value) -> Vec<Level> {
    let listed = row.get("thinkingLevels").and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(|l| match l {
                Value::String(id) => Some(Level { id: id.clone(), label: id.clone() }),
                _ => {
                    let id = text(l, "id")?;
                    Some(Level { label: text(l, "label").unwrap_or_else(|| id.clone()), id })
                }
            })
            .collect::<Vec<_>>()
    });
    listed.unwrap_or_default()
}

impl Settings {
    /// Reads a session row (or `sessionInfo`).
    pub fn read(row: &Value) -> Settings {
        let model = model_ref(row, "modelProvider", "model");
        Settings { model, thinking: text(row, "thinkingLevel"), thinking_default: text(row, "thinkingDefault"), levels: read_levels(row) }
    }

    /// Whether there is an effort to choose: more than one level, or one other than `off`.
    pub fn offers_effort(&self) -> bool {
        self.levels.len() > 1 || self.levels.iter().any(|l| l.id != "off")
    }

    /// The level in effect: the conversation's own, else the model's default.
    pub fn effective_thinking(&self) -> Option<&str> {
        self.thinking.as_deref().or(self.thinking_default.as_deref())
    }
}

impl Usage {
    /// Reads a session row (or `sessionInfo`); `default_window` is the list's default
    /// `contextTokens` for a row that names none.
    pub fn read(row: &Value, default_window: Option<u64>) -> Usage {
        let budget = row.get("contextBudgetStatus").and_then(|b| count(b, "promptBudgetBeforeReserve")).filter(|n| *n > 0);
        let limit = budget
            .map(|b| (b, LimitKind::PromptBudget))
            .or_else(|| count(row, "contextTokens").or(default_window).filter(|n| *n > 0).map(|w| (w, LimitKind::ContextWindow)));
        Usage {
            context: count(row, "totalTokens"),
            fresh: row.get("totalTokensFresh").and_then(Value::as_bool).unwrap_or(false),
            limit,
            last_run: RunTokens {
                input: count(row, "inputTokens"),
                output: count(row, "outputTokens"),
                cost_usd: row.get("estimatedCostUsd").and_then(Value::as_f64).filter(|c| c.is_finite() && *c >= 0.0),
            },
        }
    }

    /// The same, measured against `window` when the row named no limit.
    pub fn or_window(mut self, window: Option<u64>) -> Usage {
        if self.limit.is_none() {
            self.limit = window.filter(|w| *w > 0).map(|w| (w, LimitKind::ContextWindow));
        }
        self
    }

    /// The share of the limit in use, 0 to 100; `None` without both figures.
    pub fn percent(&self) -> Option<u8> {
        let (used, (limit, _)) = (self.context?, self.limit?);
        Some(((used as f64 / limit as f64) * 100.0).round().min(100.0) as u8)
    }

    /// How the meter is drawn: a warning only on a fresh figure.
    pub fn fill(&self) -> Fill {
        match self.percent() {
            Some(p) if self.fresh && p >= 95 => Fill::Danger,
            Some(p) if self.fresh && p >= 85 => Fill::Warn,
            _ => Fill::Normal,
        }
    }

    /// The meter's words: "12.3k of 200k tokens (6 %)", "~" before an older figure.
    pub fn summary(&self) -> Option<String> {
        let used = self.context?;
        let approx = if self.fresh { "" } else { "~" };
        Some(match (self.limit, self.percent()) {
            (Some((limit, kind)), Some(p)) => {
                let of = match kind {
                    LimitKind::PromptBudget => "prompt budget",
                    LimitKind::ContextWindow => "context window",
                };
                format!("{approx}{} of {} tokens ({p}%) · {of}", tokens(used), tokens(limit))
            }
            _ => format!("{approx}{} tokens in context", tokens(used)),
        })
    }

    /// The last run's words: "Last run: 1.2k in, 340 out · $0.0123"; `None` without figures.
    pub fn last_run_summary(&self) -> Option<String> {
        let r = &self.last_run;
        let mut parts = Vec::new();
        if let Some(i) = r.input {
            parts.push(format!("{} in", tokens(i)));
        }
        if let Some(o) = r.output {
            parts.push(format!("{} out", tokens(o)));
        }
        if parts.is_empty() && r.cost_usd.is_none() {
            return None;
        }
        let mut s = format!("Last run: {}", if parts.is_empty() { "tokens not reported".into() } else { parts.join(", ") });
        if let Some(c) = r.cost_usd {
            s.push_str(&format!(" · ${}", dollars(c)));
        }
        Some(s)
    }
}

/// A token count as a person reads it: 950, 12.3k, 1.3M (halves up).
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => trim_point(n, 1_000, "k"),
        _ => trim_point(n, 1_000_000, "M"),
    }
}

/// `n / unit`, to one decimal below 100 (without a `.0`), whole from 100 on.
fn trim_point(n: u64, unit: u64, suffix: &str) -> String {
    // Divided first, rounded half up, so no count overflows.
    let rounded = |by: u64| n / by + u64::from(n % by >= by / 2);
    let tenths = rounded(unit / 10);
    if tenths >= 1_000 {
        format!("{}{suffix}", rounded(unit))
    } else if tenths % 10 == 0 {
        format!("{}{suffix}", tenths / 10)
    } else {
        format!("{}.{}{suffix}", tenths / 10, tenths % 10)
    }
}

/// Dollars to four decimals, as the gateway's estimates are small: 0.0123.
fn dollars(c: f64) -> String {
    let units = (c.max(0.0) * 10_000.0).round() as u64;
    format!("{}.{:04}", units / 10_000, units % 10_000)
}

/// The model that wrote an agent's reply (its row's `provider` and `model`), as
/// `provider/id`; `None` for other rows and for the gateway's own notes (`openclaw`).
pub fn reply_model(row: &Value) -> Option<String> {
    if row.get("role").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    let m = model_ref(row, "provider", "model")?;
    (m.provider != "openclaw").then(|| m.value())
}

/// One model the picker offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChoice {
    pub model: ModelRef,
    pub label: String,
    /// Why it cannot be chosen now; `None`: it can.
    pub unavailable: Option<String>,
}

/// The choices of a `models.list {view: "configured"}` answer: the ones that can be chosen
/// first, each model once (an unavailable duplicate of an available one goes), none that the
/// gateway does not allow to be picked by hand; labels made unique.
pub fn read_models(answer: &Value) -> Vec<ModelChoice> {
    let rows = answer.get("models").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut out: Vec<ModelChoice> = Vec::new();
    for r in &rows {
        if r.get("manualSelectionAllowed") == Some(&Value::Bool(false)) {
            continue;
        }
        let (Some(id), Some(provider)) = (text(r, "id"), text(r, "provider")) else { continue };
        let name = text(r, "name").unwrap_or_else(|| id.clone());
        let label = match text(r, "alias") {
            Some(a) if a != name => format!("{name} · {a}"),
            _ => name,
        };
        let available = r.get("available").and_then(Value::as_bool).unwrap_or(true);
        let unavailable = (!available).then(|| match r.get("unavailableReason").and_then(Value::as_str) {
            Some("missing-auth") => "no credentials for its provider".to_string(),
            Some("auth-failed") => "its provider refused the credentials".to_string(),
            Some("cooldown") => "cooling down after errors".to_string(),
            Some("unsupported-runtime") => "not supported by this agent's runtime".to_string(),
            _ => "not available now".to_string(),
        });
        out.push(ModelChoice { model: ModelRef { provider, id }, label, unavailable });
    }
    // An id available from one provider: its unavailable copies go.
    let available_ids: Vec<String> = out.iter().filter(|c| c.unavailable.is_none()).map(|c| c.model.id.clone()).collect();
    out.retain(|c| c.unavailable.is_none() || !available_ids.contains(&c.model.id));
    // The same label twice: say whose.
    let labels: Vec<String> = out.iter().map(|c| c.label.clone()).collect();
    for c in &mut out {
        if labels.iter().filter(|l| **l == c.label).count() > 1 {
            c.label = format!("{} · {}", c.label, c.model.provider);
        }
    }
    let (mut available, unavailable): (Vec<ModelChoice>, Vec<ModelChoice>) = out.into_iter().partition(|c| c.unavailable.is_none());
    available.extend(unavailable);
    available
}

/// A change asked of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `None`: back to the agent's default.
    Model(Option<String>),
    /// `None`: back to the model's default.
    Thinking(Option<String>),
}

impl Change {
    /// The `sessions.patch` params.
    pub fn params(&self, key: &str) -> Value {
        match self {
            Change::Model(m) => json!({"key": key, "model": m}),
            Change::Thinking(t) => json!({"key": key, "thinkingLevel": t}),
        }
    }

    /// What it does, for the status line while it is on its way and after a failure.
    pub fn describe(&self) -> String {
        match self {
            Change::Model(Some(m)) => format!("switching to {m}"),
            Change::Model(None) => "switching to the agent's default model".into(),
            Change::Thinking(Some(t)) => format!("setting thinking to {t}"),
            Change::Thinking(None) => "setting thinking to the model's default".into(),
        }
    }
}

/// A conversation's patch in flight, or the last one's failure.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum PatchState {
    #[default]
    Idle,
    /// Sent; a send waits until it settles.
    Sending(Change),
    /// Refused or lost; the conversation kept its settings.
    Failed { change: Change, reason: String },
}

impl PatchState {
    /// Whether a send must wait.
    pub fn holds_sends(&self) -> bool {
        matches!(self, PatchState::Sending(_))
    }

    /// Starts `change` unless one is already on its way (then `false`: one at a time).
    pub fn start(&mut self, change: Change) -> bool {
        if self.holds_sends() {
            return false;
        }
        *self = PatchState::Sending(change);
        true
    }

    /// The gateway's answer: the settings it resolved (merged into `settings`), or its error.
    /// An answer to a patch already given up on (`lost`) changes nothing: the next session row
    /// says what the gateway has.
    pub fn settle(&mut self, answer: Result<&Value, String>, settings: &mut Settings) {
        let PatchState::Sending(change) = self else { return };
        let change = change.clone();
        *self = PatchState::Idle;
        match answer {
            Ok(v) => {
                if let Some(resolved) = v.get("resolved") {
                    apply_resolved(settings, &change, resolved);
                }
            }
            Err(reason) => *self = PatchState::Failed { change, reason },
        }
    }

    /// The connection went away with the patch unanswered: it may or may not have landed, and
    /// the next session row says which. Nothing is held.
    pub fn lost(&mut self) {
        if let PatchState::Sending(change) = self {
            let change = change.clone();
            *self = PatchState::Failed { change, reason: "the connection closed before the gateway answered".into() };
        }
    }
}

/// `sessions.patch`'s `resolved` (`{modelProvider, model, thinkingLevel, thinkingLevels}`).
fn apply_resolved(settings: &mut Settings, change: &Change, resolved: &Value) {
    if let Change::Model(_) = change {
        if let Some(m) = model_ref(resolved, "modelProvider", "model") {
            settings.model = Some(m);
        }
    }
    if resolved.get("thinkingLevels").is_some() {
        settings.levels = read_levels(resolved);
    }
    match change {
        Change::Thinking(t) => settings.thinking = t.clone(),
        // A model change clamps the level to one the new model offers.
        Change::Model(_) => {
            if let Some(t) = text(resolved, "thinkingLevel") {
                if settings.thinking.is_some() {
                    settings.thinking = Some(t);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of the real gateway (2026.9.6) after a run of the scripted model.
    fn row() -> Value {
        json!({"key": "agent:main:main", "model": "scripted", "modelProvider": "scripted",
            "thinkingLevels": [{"id": "off", "label": "off"}, {"id": "low", "label": "low"}, {"id": "high", "label": "high"}],
            "thinkingDefault": "off", "contextTokens": 128000, "totalTokens": 6400, "totalTokensFresh": true,
            "inputTokens": 51200, "outputTokens": 310, "estimatedCostUsd": 0.0123})
    }

    #[test]
    fn a_row_names_its_model_its_levels_and_the_level_in_effect() {
        let s = Settings::read(&row());
        assert_eq!(s.model.as_ref().map(ModelRef::value).as_deref(), Some("scripted/scripted"));
        assert_eq!(s.levels.iter().map(|l| l.id.as_str()).collect::<Vec<_>>(), ["off", "low", "high"]);
        assert_eq!(s.effective_thinking(), Some("off"));
        assert!(s.offers_effort());
        let only_off = Settings::read(&json!({"thinkingLevels": [{"id": "off"}]}));
        assert!(!only_off.offers_effort(), "a model that cannot think offers no effort");
        let id_with_provider = ModelRef { provider: "openai".into(), id: "openai/gpt-x".into() };
        assert_eq!(id_with_provider.value(), "openai/gpt-x");
    }

    #[test]
    fn a_reply_names_the_model_that_wrote_it() {
        let reply = json!({"role": "assistant", "provider": "scripted", "model": "scripted", "content": []});
        assert_eq!(reply_model(&reply).as_deref(), Some("scripted/scripted"));
        assert_eq!(reply_model(&json!({"role": "user", "provider": "x", "model": "y"})), None);
        assert_eq!(reply_model(&json!({"role": "assistant", "provider": "openclaw", "model": "delivery-mirror"})), None);
        assert_eq!(reply_model(&json!({"role": "assistant"})), None);
    }

    #[test]
    fn the_meter_reads_the_context_now_and_never_the_runs_tokens() {
        let u = Usage::read(&row(), None);
        // 51,200 input tokens of a run with tool loops is more than a third of the window; the
        // context now is 6,400 tokens: 5 %.
        assert_eq!(u.percent(), Some(5));
        assert_eq!(u.summary().as_deref(), Some("6.4k of 128k tokens (5%) · context window"));
        assert_eq!(u.last_run_summary().as_deref(), Some("Last run: 51.2k in, 310 out · $0.0123"));
        let no_context = Usage::read(&json!({"inputTokens": 900000, "outputTokens": 10, "contextTokens": 128000}), None);
        assert_eq!(no_context.percent(), None, "no context figure: no percentage, whatever the run used");
        assert_eq!(no_context.summary(), None);
    }

    #[test]
    fn the_prompt_budget_comes_before_the_window_and_an_old_figure_is_approximate() {
        let mut r = row();
        r["contextBudgetStatus"] = json!({"promptBudgetBeforeReserve": 100000});
        r["totalTokens"] = json!(90000);
        let u = Usage::read(&r, None);
        assert_eq!(u.limit, Some((100000, LimitKind::PromptBudget)));
        assert_eq!(u.fill(), Fill::Warn);
        r["totalTokens"] = json!(99000);
        assert_eq!(Usage::read(&r, None).fill(), Fill::Danger);
        r["totalTokensFresh"] = json!(false);
        let stale = Usage::read(&r, None);
        assert_eq!(stale.fill(), Fill::Normal, "no warning on an old figure");
        assert!(stale.summary().unwrap().starts_with('~'));
        let default_window = Usage::read(&json!({"totalTokens": 1000, "totalTokensFresh": true}), Some(200000));
        assert_eq!(default_window.limit, Some((200000, LimitKind::ContextWindow)));
        assert_eq!(tokens(999), "999");
        assert_eq!(tokens(1000), "1k");
        assert_eq!(tokens(200_000), "200k");
        assert_eq!(tokens(1_250_000), "1.3M", "half up");
        assert_eq!(tokens(12_340), "12.3k");
        assert_eq!(tokens(99_960), "100k");
        assert_eq!(tokens(123_456), "123k");
        assert_eq!(tokens(u64::MAX), "18446744073710M", "no overflow");
        assert_eq!(dollars(0.01234), "0.0123");
        assert_eq!(dollars(2.5), "2.5000");
    }

    #[test]
    fn the_picker_offers_each_model_once_available_first_with_unique_labels() {
        let answer = json!({"models": [
            {"id": "slow", "name": "Careful", "provider": "b", "available": false, "unavailableReason": "missing-auth"},
            {"id": "fast", "name": "Quick", "provider": "a", "available": true},
            {"id": "fast", "name": "Quick", "provider": "c", "available": false, "unavailableReason": "cooldown"},
            {"id": "hidden", "name": "Hidden", "provider": "a", "manualSelectionAllowed": false},
            {"id": "twin", "name": "Twin", "provider": "a", "available": true},
            {"id": "twin2", "name": "Twin", "provider": "b", "available": true, "alias": "Twin"},
            {"id": "aka", "name": "Named", "provider": "a", "alias": "nick"},
            {"name": "no id", "provider": "a"}
        ]});
        let c = read_models(&answer);
        let shown: Vec<(String, String, bool)> = c.iter().map(|c| (c.model.value(), c.label.clone(), c.unavailable.is_none())).collect();
        assert_eq!(
            shown,
            [
                ("a/fast".into(), "Quick".into(), true),
                ("a/twin".into(), "Twin · a".into(), true),
                ("b/twin2".into(), "Twin · b".into(), true),
                ("a/aka".into(), "Named · nick".into(), true),
                ("b/slow".into(), "Careful".into(), false),
            ]
        );
        assert_eq!(c[4].unavailable.as_deref(), Some("no credentials for its provider"));
    }

    #[test]
    fn a_patch_holds_sends_until_it_settles_and_a_failure_keeps_the_settings() {
        let mut settings = Settings::read(&row());
        let mut p = PatchState::default();
        assert!(p.start(Change::Model(Some("other/deep".into()))));
        assert!(p.holds_sends());
        assert!(!p.start(Change::Thinking(Some("high".into()))), "one patch at a time");
        assert_eq!(Change::Model(Some("other/deep".into())).params("k"), json!({"key": "k", "model": "other/deep"}));
        assert_eq!(Change::Thinking(None).params("k"), json!({"key": "k", "thinkingLevel": null}));
        let resolved =
            json!({"ok": true, "resolved": {"modelProvider": "other", "model": "deep", "thinkingLevels": [{"id": "off"}, {"id": "max"}]}});
        p.settle(Ok(&resolved), &mut settings);
        assert_eq!(p, PatchState::Idle);
        assert_eq!(settings.model.as_ref().map(ModelRef::value).as_deref(), Some("other/deep"));
        assert_eq!(settings.levels.len(), 2);

        assert!(p.start(Change::Thinking(Some("max".into()))));
        p.settle(Err("thinkingLevel \"max\" is not supported".into()), &mut settings);
        assert!(matches!(&p, PatchState::Failed { reason, .. } if reason.contains("not supported")));
        assert!(!p.holds_sends());
        assert_eq!(settings.thinking, None, "a refused level is not shown as set");

        assert!(p.start(Change::Thinking(Some("off".into()))));
        p.lost();
        assert!(!p.holds_sends(), "a lost answer holds nothing");
        // The request's own failure arrives after the connection was given up on: still failed,
        // so a send waiting for it does not go.
        p.settle(Err("Not connected".into()), &mut settings);
        assert!(matches!(&p, PatchState::Failed { reason, .. } if reason.contains("connection closed")), "{p:?}");
        // Every later attempt to reconnect finds it failed, never settled.
        p.lost();
        assert!(matches!(&p, PatchState::Failed { .. }), "{p:?}");
    }
}
