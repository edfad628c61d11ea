//! The conversation list: rows of `sessions.list` kept live by `sessions.changed`, paged with
//! Load more, searched by title on the gateway, with archived ones behind a filter; and which
//! conversations have news this browser has not shown yet.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Rows asked for per page.
pub const PAGE: u64 = 50;

/// One conversation as the list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    pub key: String,
    /// The gateway's id of the conversation's current transcript: archive and restore name it
    /// (`expectedSessionId`), so a conversation reset meanwhile is never archived by mistake.
    #[serde(default)]
    pub session_id: Option<String>,
    /// What a person named it (`label`), else the gateway's title for it; empty when neither.
    #[serde(default)]
    pub title: String,
    /// Whether `title` is a label a person gave (Rename starts from it).
    #[serde(default)]
    pub labelled: bool,
    /// Last activity, ms since the epoch.
    #[serde(default)]
    pub updated_at: i64,
    /// A run is active in it (`hasActiveRun`).
    #[serde(default)]
    pub running: bool,
    #[serde(default)]
    pub archived: bool,
    /// How its last run ended (`status`: `done`, `failed`, `killed`; `running` while one runs).
    #[serde(default)]
    pub status: Option<String>,
    /// Why its last run failed (`lastRunError`).
    #[serde(default)]
    pub last_run_error: Option<String>,
    /// The agent's main conversation (`isMain`): it cannot be archived.
    #[serde(default)]
    pub main: bool,
    /// Its model and thinking level (not in the saved copy: read again from the gateway).
    #[serde(skip)]
    pub settings: crate::run_settings::Settings,
    /// How full its context is, and its last run's tokens (not in the saved copy).
    #[serde(skip)]
    pub usage: crate::run_settings::Usage,
}

impl Conversation {
    /// Reads a row of `sessions.list` (or the `session` of a `sessions.changed` event).
    pub fn read(row: &Value) -> Option<Conversation> {
        let key = row.get("key").and_then(Value::as_str).filter(|k| !k.is_empty())?.to_string();
        let text = |name: &str| row.get(name).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()).map(str::to_string);
        let label = text("label");
        let title = label.clone().or_else(|| text("displayName")).or_else(|| text("derivedTitle")).unwrap_or_default();
        let number = |name: &str| row.get(name).and_then(Value::as_f64).map(|n| n as i64);
        let updated_at = number("lastInteractionAt").into_iter().chain(number("updatedAt")).max().unwrap_or(0);
        let archived = row.get("archived").and_then(Value::as_bool).unwrap_or(false) || number("archivedAt").is_some_and(|t| t > 0);
        Some(Conversation {
            session_id: text("sessionId"),
            labelled: label.is_some(),
            title: protocol::frame::truncate(&title, 200),
            updated_at,
            running: row.get("hasActiveRun").and_then(Value::as_bool).unwrap_or(false),
            archived,
            status: text("status"),
            last_run_error: text("lastRunError"),
            main: row.get("isMain").and_then(Value::as_bool).unwrap_or(false) || is_main(&key, None),
            settings: crate::run_settings::Settings::read(row),
            usage: crate::run_settings::Usage::read(row, None),
            key,
        })
    }

    /// The name to show: the title, or the key as a person reads it.
    pub fn name(&self) -> String {
        if self.title.is_empty() { short_name(&self.key) } else { self.title.clone() }
    }
}

/// A conversation's key as a person reads it (the part after `agent:main:`).
pub fn short_name(key: &str) -> String {
    match key.splitn(3, ':').collect::<Vec<_>>().as_slice() {
        ["agent", "main", rest] => rest.to_string(),
        ["agent", agent, rest] => format!("{agent}: {rest}"),
        _ => key.to_string(),
    }
}

/// Whether `key` is an agent's main conversation (`agent:<id>:main`), or the gateway's
/// `global` and `unknown` ones: the gateway refuses to archive those, so it is not offered.
pub fn is_main(key: &str, main_key: Option<&str>) -> bool {
    main_key == Some(key)
        || matches!(key, "global" | "unknown")
        || matches!(key.splitn(3, ':').collect::<Vec<_>>().as_slice(), ["agent", _, "main"])
}

/// What the list is filtered by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Words to find in titles; empty: every conversation.
    pub search: String,
    /// Archived conversations instead of active ones.
    pub archived: bool,
}

impl ListQuery {
    /// `sessions.list` params for the page at `offset`.
    pub fn params(&self, offset: u64) -> Value {
        let mut p = json!({"limit": PAGE, "offset": offset, "includeDerivedTitles": true});
        if !self.search.trim().is_empty() {
            p["search"] = json!(self.search.trim());
        }
        if self.archived {
            p["archived"] = json!(true);
        }
        p
    }

    /// The unfiltered list, which live events extend.
    pub fn is_default(&self) -> bool {
        self.search.trim().is_empty() && !self.archived
    }
}

/// What a `sessions.changed` event asks of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Applied from the event's own row.
    Applied,
    /// The event carries no row (`{reason, ts}`): the first page is read again.
    Refetch,
}

/// The list as loaded so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConversationList {
    /// Newest activity first.
    pub rows: Vec<Conversation>,
    /// The gateway has more rows than are loaded.
    pub has_more: bool,
    /// Where the next page starts.
    pub next_offset: u64,
    pub query: ListQuery,
    /// Shown from this browser's saved copy (the gateway has not answered yet).
    pub saved: bool,
    /// The context window of a row that names none (`defaults.contextTokens`).
    pub default_window: Option<u64>,
    /// The agent's default model and its levels (`defaults`), for a conversation with no row yet.
    pub default_settings: crate::run_settings::Settings,
}

/// The rows of a `sessions.list` answer, each read by [`Conversation::read`]; rows that do not
/// read as a conversation are skipped. The one reader of session rows.
pub fn read_list(page: &Value) -> Vec<Conversation> {
    page.get("sessions").and_then(Value::as_array).map(|a| a.iter().filter_map(Conversation::read).collect()).unwrap_or_default()
}

impl ConversationList {
    /// Takes a `sessions.list` answer for the page at `offset` (0 starts the list again).
    pub fn apply_page(&mut self, page: &Value, offset: u64) {
        let rows = read_list(page);
        let count = rows.len() as u64;
        if offset == 0 {
            self.rows.clear();
            self.saved = false;
        }
        for row in rows {
            self.upsert(row);
        }
        if let Some(defaults) = page.get("defaults") {
            if let Some(w) = defaults.get("contextTokens").and_then(Value::as_u64) {
                self.default_window = Some(w);
            }
            let settings = crate::run_settings::Settings::read(defaults);
            if settings.model.is_some() {
                self.default_settings = settings;
            }
        }
        self.next_offset = page.get("nextOffset").and_then(Value::as_u64).unwrap_or(offset + count);
        self.has_more = page.get("hasMore").and_then(Value::as_bool).unwrap_or(false);
    }

    /// A `sessions.changed` event.
    pub fn apply_changed(&mut self, event: &Value) -> Change {
        let reason = event.get("reason").and_then(Value::as_str).unwrap_or("");
        let key = event.get("sessionKey").or_else(|| event.get("key")).and_then(Value::as_str);
        if matches!(reason, "deleted" | "delete" | "removed")
            && let Some(key) = key
        {
            self.rows.retain(|r| r.key != key);
            return Change::Applied;
        }
        let Some(mut row) = event.get("session").and_then(Conversation::read) else {
            // A run's phase without its row (`{phase, runId, sessionKey, hasActiveRun…}`): what
            // it says of a listed row is applied; anything else reads the list again.
            let running = event.get("hasActiveRun").and_then(Value::as_bool);
            return match (key.and_then(|k| self.rows.iter_mut().find(|r| r.key == k)), running) {
                (Some(known), Some(running)) => {
                    known.running = running;
                    Change::Applied
                }
                _ => Change::Refetch,
            };
        };
        if let Some(key) = key {
            row.key = key.to_string();
        }
        let known = self.rows.iter().any(|r| r.key == row.key);
        // A filtered list (a search, the archived ones) only updates rows it holds; a new row
        // may not match, and the next search shows it if it does.
        if !known && !self.query.is_default() {
            return Change::Applied;
        }
        if row.archived != self.query.archived {
            self.rows.retain(|r| r.key != row.key);
        } else {
            self.upsert(row);
        }
        Change::Applied
    }

    /// Puts `row` in its place (newest activity first), replacing the row with its key.
    pub fn upsert(&mut self, row: Conversation) {
        self.rows.retain(|r| r.key != row.key);
        let at = self.rows.iter().position(|r| r.updated_at < row.updated_at).unwrap_or(self.rows.len());
        self.rows.insert(at, row);
    }

    pub fn get(&self, key: &str) -> Option<&Conversation> {
        self.rows.iter().find(|r| r.key == key)
    }
}

/// Which conversations this browser has shown, and up to what activity: a row with later
/// activity has news. Conversations this browser never showed count from when it first read
/// the list, so a first visit does not mark everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadMarks {
    /// When this browser first read the list (ms).
    #[serde(default)]
    pub since: i64,
    /// Activity last shown, by key.
    #[serde(default)]
    pub seen: HashMap<String, i64>,
}

/// At most this many conversations are remembered as read (the oldest go first).
const MAX_SEEN: usize = 500;

impl ReadMarks {
    /// Starts counting news from `now` if it has not started.
    pub fn start(&mut self, now: i64) -> bool {
        if self.since == 0 {
            self.since = now;
            return true;
        }
        false
    }

    pub fn unread(&self, row: &Conversation) -> bool {
        self.since > 0 && row.updated_at > self.seen.get(&row.key).copied().unwrap_or(self.since)
    }

    /// A pane shows `row`: its activity so far is read. Returns whether anything changed.
    pub fn mark_seen(&mut self, row: &Conversation) -> bool {
        if self.seen.get(&row.key).is_some_and(|t| *t >= row.updated_at) {
            return false;
        }
        self.seen.insert(row.key.clone(), row.updated_at);
        if self.seen.len() > MAX_SEEN
            && let Some(oldest) = self.seen.iter().min_by_key(|(_, t)| **t).map(|(k, _)| k.clone())
        {
            self.seen.remove(&oldest);
        }
        true
    }
}

/// The agent a session key belongs to (`agent:<id>:…`), `main` otherwise.
pub fn agent_of(key: &str) -> String {
    match key.splitn(3, ':').collect::<Vec<_>>().as_slice() {
        ["agent", agent, _] if !agent.is_empty() => agent.to_string(),
        _ => "main".into(),
    }
}

/// A message that matched a content search (`sessions.search`): its conversation and the
/// matching words around it.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageHit {
    pub session_key: String,
    pub message_id: String,
    /// `user` or `assistant`.
    pub role: String,
    pub timestamp: f64,
    /// The gateway's snippet, on one line, at most [`SNIPPET_CHARS`] characters.
    pub snippet: String,
}

/// How much of a hit's snippet is shown.
pub const SNIPPET_CHARS: usize = 160;

/// What a content search found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Found {
    /// The query these are for.
    pub query: String,
    /// One hit per conversation (its best), in the gateway's order.
    pub hits: Vec<MessageHit>,
    /// The gateway's index was still being built: more may match.
    pub indexing: bool,
    /// More matched than were sent.
    pub truncated: bool,
    /// The names of the conversations found (`sessions`, the rows the hits refer to), which the
    /// title-filtered list may not hold.
    pub names: Vec<(String, String)>,
}

impl Found {
    /// The name of the conversation `key` found, when the gateway sent its row.
    pub fn name(&self, key: &str) -> Option<&str> {
        self.names.iter().find(|(k, _)| k == key).map(|(_, n)| n.as_str())
    }
}

/// `sessions.search` params for the words typed, among archived conversations when `archived`;
/// `None` for fewer than two characters (every message would match).
pub fn search_params(query: &str, archived: bool) -> Option<Value> {
    let q = query.trim();
    if q.chars().count() < 2 {
        return None;
    }
    Some(serde_json::json!({"query": q, "limit": 25, "scope": {"archived": archived}}))
}

/// Reads `sessions.search`'s answer for `query`.
pub fn read_search(query: &str, v: &Value) -> Found {
    let mut hits: Vec<MessageHit> = Vec::new();
    for h in v.get("results").and_then(Value::as_array).into_iter().flatten() {
        let Some(key) = h.get("sessionKey").and_then(Value::as_str) else { continue };
        if hits.iter().any(|x| x.session_key == key) {
            continue;
        }
        let snippet: String = h.get("snippet").and_then(Value::as_str).unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ");
        hits.push(MessageHit {
            session_key: key.to_string(),
            message_id: h.get("messageId").and_then(Value::as_str).unwrap_or_default().to_string(),
            role: h.get("role").and_then(Value::as_str).unwrap_or_default().to_string(),
            timestamp: h.get("timestamp").and_then(Value::as_f64).unwrap_or(0.0),
            snippet: protocol::frame::truncate(&snippet, SNIPPET_CHARS),
        });
    }
    let names = v
        .get("sessions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Conversation::read)
        .map(|c| (c.key.clone(), c.name()))
        .collect();
    Found {
        query: query.trim().to_string(),
        names,
        hits,
        indexing: v.get("indexing").and_then(Value::as_bool).unwrap_or(false),
        truncated: v.get("truncated").and_then(Value::as_bool).unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str, at: i64) -> Value {
        json!({"key": key, "sessionId": format!("id-{key}"), "updatedAt": at, "derivedTitle": format!("about {key}")})
    }

    #[test]
    fn the_one_reader_of_session_rows_reads_label_then_title_and_skips_what_is_no_row() {
        let rows = read_list(&json!({"sessions": [
            {"key": "agent:main:main", "label": "Deploys", "derivedTitle": "Check the deploy", "updatedAt": 5, "hasActiveRun": true},
            {"key": "agent:main:b", "label": "  ", "derivedTitle": "From the first message"},
            {"key": "agent:main:c"},
            {"label": "no key"},
        ]}));
        let names: Vec<String> = rows.iter().map(Conversation::name).collect();
        assert_eq!(names, ["Deploys", "From the first message", "c"]);
        assert!(rows[0].running && rows[0].labelled && !rows[1].labelled);
        assert!(read_list(&json!({})).is_empty());
    }

    #[test]
    fn a_row_reads_its_label_before_its_derived_title_and_its_latest_activity() {
        let c = Conversation::read(&json!({"key": "agent:main:a", "label": " Trip ", "derivedTitle": "plan", "updatedAt": 5, "lastInteractionAt": 9, "hasActiveRun": true})).unwrap();
        assert_eq!((c.title.as_str(), c.labelled, c.updated_at, c.running, c.archived), ("Trip", true, 9, true, false));
        let c = Conversation::read(&json!({"key": "agent:main:b", "archivedAt": 12})).unwrap();
        assert!(c.archived && !c.main);
        assert!(Conversation::read(&json!({"key": "agent:main:main", "isMain": true})).unwrap().main);
        assert_eq!(c.name(), "b");
        assert!(Conversation::read(&json!({"label": "no key"})).is_none());
    }

    #[test]
    fn pages_append_without_repeating_and_a_first_page_starts_again() {
        let mut list = ConversationList::default();
        list.apply_page(&json!({"sessions": [row("a", 30), row("b", 20)], "hasMore": true, "nextOffset": 2}), 0);
        assert_eq!((list.rows.len(), list.has_more, list.next_offset), (2, true, 2));
        list.apply_page(&json!({"sessions": [row("b", 20), row("c", 10)], "hasMore": false}), 2);
        assert_eq!(list.rows.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!((list.has_more, list.next_offset), (false, 4));
        list.saved = true;
        list.apply_page(&json!({"sessions": [row("z", 1)]}), 0);
        assert_eq!(list.rows.len(), 1);
        assert!(!list.saved);
    }

    #[test]
    fn a_change_moves_its_row_to_its_activity_and_a_new_conversation_appears() {
        let mut list = ConversationList::default();
        list.apply_page(&json!({"sessions": [row("a", 30), row("b", 20)]}), 0);
        assert_eq!(list.apply_changed(&json!({"sessionKey": "b", "session": row("b", 40)})), Change::Applied);
        assert_eq!(list.rows[0].key, "b");
        list.apply_changed(&json!({"sessionKey": "n", "reason": "created", "session": row("n", 50)}));
        assert_eq!(list.rows[0].key, "n");
        assert_eq!(list.apply_changed(&json!({"reason": "reset", "ts": 1})), Change::Refetch);
        assert_eq!(list.apply_changed(&json!({"sessionKey": "a", "phase": "end", "hasActiveRun": false})), Change::Applied);
        assert_eq!(list.apply_changed(&json!({"sessionKey": "unlisted", "phase": "end", "hasActiveRun": false})), Change::Refetch);
        list.apply_changed(&json!({"sessionKey": "a", "reason": "delete"}));
        assert!(list.get("a").is_none());
        // Archived elsewhere: it leaves the active list.
        let mut archived = row("b", 60);
        archived["archived"] = json!(true);
        list.apply_changed(&json!({"sessionKey": "b", "session": archived}));
        assert!(list.get("b").is_none());
    }

    #[test]
    fn a_search_result_takes_no_new_rows_from_events() {
        let mut list = ConversationList { query: ListQuery { search: "trip".into(), archived: false }, ..Default::default() };
        list.apply_page(&json!({"sessions": [row("a", 30)]}), 0);
        list.apply_changed(&json!({"sessionKey": "n", "session": row("n", 50)}));
        assert_eq!(list.rows.len(), 1);
        assert_eq!(list.query.params(0)["search"], "trip");
        assert!(ListQuery { search: " ".into(), archived: true }.params(50).get("search").is_none());
        assert_eq!(ListQuery { search: String::new(), archived: true }.params(50)["archived"], true);
    }

    #[test]
    fn news_is_activity_after_what_this_browser_showed_and_a_first_visit_marks_nothing() {
        let mut marks = ReadMarks::default();
        let a = Conversation::read(&row("a", 100)).unwrap();
        assert!(!marks.unread(&a), "nothing is news before the list was first read");
        assert!(marks.start(150));
        assert!(!marks.start(999), "it starts once");
        assert!(!marks.unread(&a), "older than the first read");
        let newer = Conversation::read(&row("a", 200)).unwrap();
        assert!(marks.unread(&newer));
        assert!(marks.mark_seen(&newer));
        assert!(!marks.unread(&newer));
        assert!(!marks.mark_seen(&newer));
        assert!(marks.unread(&Conversation::read(&row("a", 201)).unwrap()));
    }

    #[test]
    fn main_conversations_are_never_offered_for_archiving() {
        assert!(is_main("agent:main:main", Some("agent:main:main")));
        assert!(is_main("agent:ops:main", None));
        assert!(is_main("global", None));
        assert!(!is_main("agent:main:dashboard:1", Some("agent:main:main")));
        assert_eq!(short_name("agent:ops:x"), "ops: x");
    }

    #[test]
    fn a_content_search_keeps_one_hit_per_conversation_on_one_line() {
        assert_eq!(search_params(" a ", false), None, "one letter would match everything");
        assert_eq!(search_params(" quokka ", true), Some(serde_json::json!({"query": "quokka", "limit": 25, "scope": {"archived": true}})));
        let long = "word ".repeat(100);
        let v = serde_json::json!({"results": [
            {"sessionKey": "agent:main:a", "sessionId": "s", "messageId": "m1", "role": "user", "timestamp": 5, "snippet": "the  quokka\n plan", "score": 3.0},
            {"sessionKey": "agent:main:b", "sessionId": "s", "messageId": "m2", "role": "assistant", "timestamp": 4, "snippet": long, "score": 2.0},
            {"sessionKey": "agent:main:a", "sessionId": "s", "messageId": "m3", "role": "assistant", "timestamp": 3, "snippet": "again", "score": 1.0},
            {"snippet": "no session"},
        ], "indexing": true});
        let found = read_search(" quokka", &v);
        assert_eq!(found.query, "quokka");
        assert_eq!(found.hits.len(), 2);
        assert_eq!((found.hits[0].message_id.as_str(), found.hits[0].snippet.as_str()), ("m1", "the quokka plan"));
        assert_eq!(found.hits[1].snippet.chars().count(), SNIPPET_CHARS + 1, "cut, with an ellipsis");
        assert!(found.indexing && !found.truncated);
        let named = read_search("x", &serde_json::json!({"results": [], "sessions": [{"key": "agent:main:a", "label": "Zoo"}]}));
        assert_eq!(named.name("agent:main:a"), Some("Zoo"));
    }
}
