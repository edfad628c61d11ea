//! The command palette: what a person can type after `/`, from the gateway's
//! `commands.list {agentId, sessionKey, includeArgs: true, scope: "text"}` and this page's own
//! `/new` and `/stop` (`crate::command`), filtered as the person types, keyboard first.
//!
//! The palette only fills the composer: Enter or Tab puts the chosen command in (with a space
//! when it takes arguments); a command already typed whole is left to the composer's Enter,
//! which sends it. After `/think ` it offers the conversation's model levels, and after any
//! command with listed choices, those choices.

use serde_json::Value;

/// Where a command comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// This page's own (`/new`, `/stop`): never sent to the gateway as text.
    Page,
    /// The gateway's (`native`), a skill's or a plugin's, with the gateway's word for it.
    Gateway(String),
}

/// One choice of an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// An argument a command takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub name: String,
    pub description: String,
    pub required: bool,
    pub choices: Vec<Choice>,
}

/// A command the person can type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Without the slash, lowercase: `think`.
    pub name: String,
    /// Other names, without the slash.
    pub aliases: Vec<String>,
    pub description: String,
    pub args: Vec<Arg>,
    pub accepts_args: bool,
    pub source: Source,
}

impl Command {
    /// How it is written with its arguments: `/think <level>`, `/model [name]`.
    pub fn usage(&self) -> String {
        let mut s = format!("/{}", self.name);
        for a in &self.args {
            s.push(' ');
            s.push_str(&if a.required { format!("<{}>", a.name) } else { format!("[{}]", a.name) });
        }
        if self.args.is_empty() && self.accepts_args {
            s.push_str(" …");
        }
        s
    }
}

/// Most commands the palette keeps from one answer (the gateway sends at most 500).
const MAX_COMMANDS: usize = 500;

fn valid_name(n: &str) -> bool {
    let mut chars = n.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && n.len() <= 200
}

/// This page's own commands, which win over a gateway command of the same name.
pub fn page_commands() -> Vec<Command> {
    let own = |name: &str, aliases: &[&str], description: &str| Command {
        name: name.into(),
        aliases: aliases.iter().map(|a| a.to_string()).collect(),
        description: description.into(),
        args: Vec::new(),
        accepts_args: false,
        source: Source::Page,
    };
    vec![
        own("new", &[], "Start a new conversation in this pane (what you typed before stays in the old one)."),
        own("stop", &["abort"], "Stop the agent's run in this conversation now."),
    ]
}

fn text(v: &Value, key: &str, max: usize) -> String {
    protocol::frame::truncate(v.get(key).and_then(Value::as_str).unwrap_or_default(), max)
}

/// Reads `commands.list`'s answer: each command once, by its first text alias (lowercase,
/// without the slash), the page's own first; a gateway command whose name or alias is one of the
/// page's is left out (the page's runs instead). Entries with no usable name are skipped.
pub fn read_list(v: &Value) -> Vec<Command> {
    let mut out = page_commands();
    let taken = |out: &[Command], n: &str| out.iter().any(|c| c.name == n || c.aliases.iter().any(|a| a == n));
    for c in v.get("commands").and_then(Value::as_array).into_iter().flatten().take(MAX_COMMANDS) {
        let aliases: Vec<String> = c
            .get("textAliases")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(20)
            .filter_map(|a| a.as_str()?.strip_prefix('/').map(str::to_ascii_lowercase))
            .filter(|a| valid_name(a))
            .collect();
        let fallback = c.get("name").and_then(Value::as_str).map(str::to_ascii_lowercase).filter(|n| valid_name(n));
        let Some(name) = aliases.first().cloned().or(fallback) else { continue };
        let all: Vec<&String> = std::iter::once(&name).chain(aliases.iter()).collect();
        if all.iter().any(|n| taken(&out, n)) {
            continue;
        }
        let args = c
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(20)
            .filter_map(|a| {
                Some(Arg {
                    name: a.get("name")?.as_str()?.chars().take(200).collect(),
                    description: text(a, "description", 500),
                    required: a.get("required").and_then(Value::as_bool).unwrap_or(false),
                    choices: a
                        .get("choices")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .take(50)
                        .filter_map(|ch| {
                            let value = ch.get("value")?.as_str()?.to_string();
                            let label = ch.get("label").and_then(Value::as_str).unwrap_or(&value).to_string();
                            Some(Choice { value, label })
                        })
                        .collect(),
                })
            })
            .collect::<Vec<_>>();
        let source = c.get("source").and_then(Value::as_str).unwrap_or("native").to_string();
        out.push(Command {
            aliases: aliases.into_iter().filter(|a| *a != name).collect(),
            name,
            description: text(c, "description", 2000),
            accepts_args: c.get("acceptsArgs").and_then(Value::as_bool).unwrap_or(!args.is_empty()),
            args,
            source: Source::Gateway(source),
        });
    }
    out
}

/// What the person is typing, as the palette reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    /// `/th`: a command's name, partly.
    Name(String),
    /// `/think hi`: the first argument of `command`, partly.
    Arg { command: String, partial: String },
}

/// Reads the composer's text: a palette only for one line that starts with `/`.
pub fn typed(draft: &str) -> Option<Typed> {
    let rest = draft.strip_prefix('/')?;
    if rest.contains('\n') {
        return None;
    }
    match rest.split_once(' ') {
        None => Some(Typed::Name(rest.to_ascii_lowercase())),
        Some((command, partial)) if !partial.contains(' ') => {
            Some(Typed::Arg { command: command.to_ascii_lowercase(), partial: partial.to_ascii_lowercase() })
        }
        Some(_) => None,
    }
}

/// One line of the palette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// What the composer holds once it is chosen.
    pub insert: String,
    /// `/think <level>`, or an argument's label.
    pub label: String,
    pub detail: String,
    /// Who provides it, in words (`this page`, `skill`, …); empty for an argument.
    pub from: String,
}

fn from_words(s: &Source) -> String {
    match s {
        Source::Page => "this page".into(),
        Source::Gateway(g) if g == "native" => "gateway".into(),
        Source::Gateway(g) => g.clone(),
    }
}

/// The palette's lines for `draft`: commands whose name starts with what is typed first, then
/// those with an alias starting with it, then (from three letters on) those whose name contains
/// it or with a word of their description starting with it; after
/// a command and a space, its choices (`levels` for `/think`). Empty: no palette.
pub fn suggestions(commands: &[Command], draft: &str, levels: &[crate::run_settings::Level]) -> Vec<Suggestion> {
    match typed(draft) {
        None => Vec::new(),
        Some(Typed::Name(q)) => {
            let rank = |c: &Command| {
                if c.name.starts_with(&q) {
                    Some(0)
                } else if c.aliases.iter().any(|a| a.starts_with(&q)) {
                    Some(1)
                } else if q.len() >= 3
                    && (c.name.contains(&q)
                        || c.description.to_ascii_lowercase().split(|ch: char| !ch.is_alphanumeric()).any(|w| w.starts_with(&q)))
                {
                    Some(2)
                } else {
                    None
                }
            };
            let mut found: Vec<(usize, &Command)> = commands.iter().filter_map(|c| rank(c).map(|r| (r, c))).collect();
            crate::order::sort_by_key(&mut found, |(r, _)| *r);
            // A command typed whole (and nothing else like it) needs no palette: Enter sends it.
            if found.len() == 1 && found[0].1.name == q {
                return Vec::new();
            }
            found
                .into_iter()
                .map(|(_, c)| Suggestion {
                    insert: if c.accepts_args { format!("/{} ", c.name) } else { format!("/{}", c.name) },
                    label: c.usage(),
                    detail: c.description.clone(),
                    from: from_words(&c.source),
                })
                .collect()
        }
        Some(Typed::Arg { command, partial }) => {
            let Some(c) = commands.iter().find(|c| c.name == command || c.aliases.contains(&command)) else {
                return Vec::new();
            };
            let mut choices: Vec<Choice> = c.args.first().map(|a| a.choices.clone()).unwrap_or_default();
            if c.name == "think" && !levels.is_empty() {
                choices = levels.iter().map(|l| Choice { value: l.id.clone(), label: l.label.clone() }).collect();
            }
            let exact = choices.iter().any(|ch| ch.value.eq_ignore_ascii_case(&partial));
            if exact {
                return Vec::new();
            }
            choices
                .into_iter()
                .filter(|ch| ch.value.to_ascii_lowercase().starts_with(&partial) || ch.label.to_ascii_lowercase().starts_with(&partial))
                .map(|ch| Suggestion {
                    insert: format!("/{} {}", c.name, ch.value),
                    detail: if ch.label != ch.value { ch.label.clone() } else { String::new() },
                    label: ch.value,
                    from: String::new(),
                })
                .collect()
        }
    }
}

/// The palette's keyboard state: which line is active, and whether Esc closed it for what is
/// typed now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Palette {
    pub active: usize,
    /// The text the palette was closed on (Esc); it opens again once the text changes.
    pub closed_on: Option<String>,
}

/// What a key does while the palette shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Down,
    Up,
    /// Enter or Tab.
    Choose,
    Escape,
}

/// What the composer does with a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyOutcome {
    /// Not the palette's key (or no palette): the composer handles it as usual.
    Pass,
    /// Taken by the palette (the line moved, or it closed).
    Taken,
    /// The composer's text becomes this.
    Insert(String),
}

impl Palette {
    /// Whether the palette shows for `draft` with `lines`.
    pub fn open(&self, draft: &str, lines: &[Suggestion]) -> bool {
        !lines.is_empty() && self.closed_on.as_deref() != Some(draft)
    }

    /// The active line, kept within `lines`.
    pub fn active(&self, lines: &[Suggestion]) -> usize {
        self.active.min(lines.len().saturating_sub(1))
    }

    /// The text changed: the first line is active again.
    pub fn typed(&mut self) {
        self.active = 0;
    }

    pub fn key(&mut self, key: Key, draft: &str, lines: &[Suggestion]) -> KeyOutcome {
        if !self.open(draft, lines) {
            return KeyOutcome::Pass;
        }
        let n = lines.len();
        let at = self.active(lines);
        match key {
            Key::Down => {
                self.active = (at + 1) % n;
                KeyOutcome::Taken
            }
            Key::Up => {
                self.active = (at + n - 1) % n;
                KeyOutcome::Taken
            }
            Key::Escape => {
                self.closed_on = Some(draft.to_string());
                KeyOutcome::Taken
            }
            // Already what is typed (`/stop`, which `/stop-all` also matches): Enter is the
            // composer's, and sends it.
            Key::Choose if lines[at].insert == draft => KeyOutcome::Pass,
            Key::Choose => {
                self.active = 0;
                KeyOutcome::Insert(lines[at].insert.clone())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_settings::Level;
    use serde_json::json;

    fn gateway_list() -> Value {
        json!({"commands": [
            {"name": "think", "textAliases": ["/think", "/thinking", "/t"], "description": "Set the thinking level.", "source": "native",
             "scope": "both", "acceptsArgs": true, "args": [{"name": "level", "description": "The level", "type": "string",
             "choices": [{"value": "off", "label": "off"}, {"value": "low", "label": "low"}, {"value": "high", "label": "high"}]}]},
            {"name": "compact", "textAliases": ["/compact"], "description": "Summarise earlier messages to free context.", "source": "native", "scope": "text", "acceptsArgs": true},
            {"name": "new", "textAliases": ["/new", "/reset"], "description": "Reset the session.", "source": "native", "scope": "text", "acceptsArgs": false},
            {"name": "model", "textAliases": ["/model"], "description": "Show or set the model.", "source": "native", "scope": "text", "acceptsArgs": true,
             "args": [{"name": "model", "description": "provider/model", "type": "string", "dynamic": true}]},
            {"name": "Weird Name", "description": "no alias, bad name", "source": "plugin", "scope": "text", "acceptsArgs": false},
            {"name": "weather", "textAliases": ["/weather"], "description": "Look up the weather.", "source": "skill", "skillDisplayName": "Weather", "scope": "text", "acceptsArgs": true},
        ]})
    }

    fn names(s: &[Suggestion]) -> Vec<&str> {
        s.iter().map(|x| x.insert.as_str()).collect()
    }

    #[test]
    fn the_list_keeps_the_pages_own_commands_first_and_drops_a_gateway_one_of_the_same_name() {
        let list = read_list(&gateway_list());
        let n: Vec<&str> = list.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(n, ["new", "stop", "think", "compact", "model", "weather"]);
        assert_eq!(list[0].source, Source::Page, "the page's /new, not the gateway's reset");
        let think = &list[2];
        assert_eq!(think.aliases, ["thinking", "t"]);
        assert_eq!(think.usage(), "/think [level]");
        assert_eq!(think.args[0].choices.len(), 3);
        assert_eq!(list[3].usage(), "/compact …");
        assert_eq!(list[5].source, Source::Gateway("skill".into()));
    }

    #[test]
    fn typing_filters_by_name_then_alias_then_words() {
        let list = read_list(&gateway_list());
        assert_eq!(names(&suggestions(&list, "/", &[])).len(), 6);
        assert_eq!(names(&suggestions(&list, "/th", &[])), ["/think "]);
        assert_eq!(names(&suggestions(&list, "/T", &[])), ["/think "], "by alias, case aside");
        assert_eq!(names(&suggestions(&list, "/context", &[])), ["/compact "], "by its description");
        assert_eq!(names(&suggestions(&list, "/s", &[])), ["/stop"]);
        assert!(suggestions(&list, "/zzz", &[]).is_empty());
        assert!(suggestions(&list, "hello /th", &[]).is_empty(), "only at the start");
        assert!(suggestions(&list, "/think hard about it", &[]).is_empty(), "a sentence, not a command");
        assert!(suggestions(&list, "/th\nmore", &[]).is_empty());
    }

    #[test]
    fn a_command_typed_whole_leaves_enter_to_the_composer() {
        let list = read_list(&gateway_list());
        assert!(suggestions(&list, "/stop", &[]).is_empty());
        assert!(suggestions(&list, "/think low", &[]).is_empty());
        // `/new` is a prefix of nothing else: typed whole, no palette.
        assert!(suggestions(&list, "/new", &[]).is_empty());
    }

    #[test]
    fn after_think_the_models_levels_are_offered() {
        let list = read_list(&gateway_list());
        let levels = vec![
            Level { id: "off".into(), label: "off".into() },
            Level { id: "minimal".into(), label: "minimal".into() },
            Level { id: "medium".into(), label: "medium".into() },
        ];
        assert_eq!(names(&suggestions(&list, "/think ", &levels)), ["/think off", "/think minimal", "/think medium"]);
        assert_eq!(names(&suggestions(&list, "/think m", &levels)), ["/think minimal", "/think medium"]);
        assert_eq!(names(&suggestions(&list, "/t h", &[])), ["/think high"], "the gateway's own choices, by alias");
        assert!(suggestions(&list, "/model ", &levels).is_empty(), "dynamic choices are not listed");
    }

    #[test]
    fn the_keyboard_moves_chooses_and_closes() {
        let list = read_list(&gateway_list());
        let draft = "/";
        let lines = suggestions(&list, draft, &[]);
        let mut p = Palette::default();
        assert!(p.open(draft, &lines));
        assert_eq!(p.key(Key::Up, draft, &lines), KeyOutcome::Taken);
        assert_eq!(p.active(&lines), lines.len() - 1, "up from the first wraps to the last");
        assert_eq!(p.key(Key::Down, draft, &lines), KeyOutcome::Taken);
        assert_eq!(p.key(Key::Down, draft, &lines), KeyOutcome::Taken);
        assert_eq!(p.key(Key::Choose, draft, &lines), KeyOutcome::Insert("/stop".into()));
        assert_eq!(p.key(Key::Escape, draft, &lines), KeyOutcome::Taken);
        assert!(!p.open(draft, &lines));
        assert_eq!(p.key(Key::Choose, draft, &lines), KeyOutcome::Pass, "closed: Enter is the composer's again");
        let typed_more = "/t";
        assert!(p.open(typed_more, &suggestions(&list, typed_more, &[])), "it opens again once the text changes");
        assert_eq!(Palette::default().key(Key::Choose, "hello", &[]), KeyOutcome::Pass);
        // A whole command that another one also matches: Enter sends it, it is not put in again.
        let both = vec![
            Suggestion { insert: "/stop".into(), label: "/stop".into(), detail: String::new(), from: String::new() },
            Suggestion { insert: "/stop-all".into(), label: "/stop-all".into(), detail: String::new(), from: String::new() },
        ];
        assert_eq!(Palette::default().key(Key::Choose, "/stop", &both), KeyOutcome::Pass);
    }
}
