//! The incumbent Control UI's conversation links, `/chat/<agentId>/<rest of the session key>`,
//! read as the conversation they name (people keep and share those links). The grammar is the
//! gateway's documented URL contract (`docs/web/urls.md` of `openclaw`):
//!
//! - `/chat/<agentId>` is that agent's main session, `agent:<agentId>:main`;
//! - one segment that is reserved (`main`, `global`, `boot`, `sessions`) or holds no short id is
//!   literal: `/chat/main/side` is `agent:main:side`;
//! - one segment ending in a short id (8 to 32 lowercase hex characters, the start of the key's
//!   trailing UUID without dashes, after an optional display-name slug) names the session whose
//!   key ends in that UUID: `/chat/main/deploy-monitor-6db92d48`;
//! - two or more segments are literal, one key segment each: `/chat/main/telegram/12345` is
//!   `agent:main:telegram:12345`;
//! - `~key` before the rest forces literal reading; `~dot`, `~dotdot` and a doubled leading `~`
//!   escape `.`, `..` and `~`.

/// Which kind of request a deep link opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// `/ask/<id>`, the incumbent's question page.
    Question,
    /// `/approve/<id>`, the incumbent's approval page (its notifications link there).
    Approval,
}

/// A link to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestLink {
    pub id: String,
    pub kind: RequestKind,
}

/// Reads `/ask/<id>` and `/approve/<id>` (the id percent-decoded: plugin ids hold a `:`).
pub fn parse_request_link(path: &str) -> Option<RequestLink> {
    let (rest, kind) = match path.strip_prefix("/ask/") {
        Some(r) => (r, RequestKind::Question),
        None => (path.strip_prefix("/approve/")?, RequestKind::Approval),
    };
    let raw = rest.trim_end_matches('/');
    if raw.is_empty() || raw.contains('/') {
        return None;
    }
    let id = percent_decode(raw).unwrap_or_else(|| raw.to_string());
    Some(RequestLink { id, kind })
}

/// What a `/chat/…` path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatRoute {
    /// A session key, complete.
    Key(String),
    /// A short reference: the session of `agent` whose key's trailing UUID (dashes removed)
    /// starts with `id_prefix`. Resolved against the gateway's session list.
    ShortId { agent: String, id_prefix: String },
}

const RESERVED: [&str; 4] = ["main", "global", "boot", "sessions"];

/// A path segment with its `%XX` escapes decoded; `None` when that is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    percent_encoding::percent_decode_str(s).decode_utf8().ok().map(|c| c.into_owned())
}

fn unescape(segment: &str) -> String {
    match segment {
        "~dot" => ".".into(),
        "~dotdot" => "..".into(),
        s if s.starts_with("~~") => s[1..].to_string(),
        s => s.to_string(),
    }
}

/// The short id a one-segment reference ends in, if any.
fn short_id(segment: &str) -> Option<&str> {
    let last = segment.rsplit('-').next()?;
    let is_id = (8..=32).contains(&last.len()) && last.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    is_id.then_some(last)
}

/// Reads a path inside the app (see `fragment::app_path`); `None` unless it is a `/chat/…` link
/// with an agent.
pub fn parse_chat_path(path: &str) -> Option<ChatRoute> {
    let rest = path.strip_prefix("/chat/")?;
    let mut segments: Vec<String> = rest.split('/').filter(|s| !s.is_empty()).map(percent_decode).collect::<Option<_>>()?;
    if segments.is_empty() {
        return None;
    }
    let agent = segments.remove(0);
    let literal = segments.first().is_some_and(|s| s == "~key");
    if literal {
        segments.remove(0);
    }
    let key = |segs: &[String]| format!("agent:{agent}:{}", segs.iter().map(|s| unescape(s)).collect::<Vec<_>>().join(":"));
    match segments.len() {
        0 => Some(ChatRoute::Key(format!("agent:{agent}:main"))),
        1 if !literal && !RESERVED.contains(&segments[0].as_str()) => match short_id(&segments[0]) {
            Some(id) => Some(ChatRoute::ShortId { agent: agent.clone(), id_prefix: id.to_string() }),
            None => Some(ChatRoute::Key(key(&segments))),
        },
        _ => Some(ChatRoute::Key(key(&segments))),
    }
}

/// The key among `keys` that a short reference names: the one session of that agent whose
/// key ends in a UUID starting with the prefix. `None` when none does, or several do.
pub fn resolve_short_id<'a>(agent: &str, id_prefix: &str, keys: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let head = format!("agent:{agent}:");
    let mut found = keys.into_iter().filter(|k| {
        if !k.starts_with(&head) || k.len() < 36 {
            return false;
        }
        let uuid = &k[k.len() - 36..];
        let plain: String = uuid.chars().filter(|c| *c != '-').collect();
        uuid.chars().filter(|c| *c == '-').count() == 4 && plain.len() == 32 && plain.starts_with(id_prefix)
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_links_name_a_question_or_an_approval_with_the_id_decoded() {
        assert_eq!(parse_request_link("/ask/abc"), Some(RequestLink { id: "abc".into(), kind: RequestKind::Question }));
        assert_eq!(
            parse_request_link("/approve/plugin%3Aca16-7b/"),
            Some(RequestLink { id: "plugin:ca16-7b".into(), kind: RequestKind::Approval })
        );
        assert_eq!(parse_request_link("/approve/"), None);
        assert_eq!(parse_request_link("/approve/a/b"), None);
        assert_eq!(parse_request_link("/chat/main"), None);
    }

    fn key(s: &str) -> Option<ChatRoute> {
        Some(ChatRoute::Key(s.into()))
    }

    #[test]
    fn chat_links_read_as_the_sessions_they_name() {
        assert_eq!(parse_chat_path("/chat/main"), key("agent:main:main"));
        assert_eq!(parse_chat_path("/chat/research/"), key("agent:research:main"));
        assert_eq!(parse_chat_path("/chat/main/side"), key("agent:main:side"));
        assert_eq!(parse_chat_path("/chat/main/telegram/12345"), key("agent:main:telegram:12345"));
        assert_eq!(parse_chat_path("/chat/main/cron/nightly/run/8821"), key("agent:main:cron:nightly:run:8821"));
        assert_eq!(parse_chat_path("/chat/research/global"), key("agent:research:global"), "reserved names are literal");
        assert_eq!(parse_chat_path("/chat/research/~key/global"), key("agent:research:global"));
        assert_eq!(parse_chat_path("/chat/main/~key/release-deadbeef"), key("agent:main:release-deadbeef"), "~key forces literal");
        assert_eq!(parse_chat_path("/chat/main/a/~dot/~dotdot/~~x"), key("agent:main:a:.:..:~x"));
        assert_eq!(parse_chat_path("/chat/main/dm%3Aalice"), key("agent:main:dm:alice"));
        assert_eq!(
            parse_chat_path("/chat/main/deploy-monitor-6db92d48"),
            Some(ChatRoute::ShortId { agent: "main".into(), id_prefix: "6db92d48".into() })
        );
        assert_eq!(
            parse_chat_path("/chat/main/6db92d48aa"),
            Some(ChatRoute::ShortId { agent: "main".into(), id_prefix: "6db92d48aa".into() })
        );
        assert_eq!(
            parse_chat_path("/chat/main/release-deadbee"),
            key("agent:main:release-deadbee"),
            "seven hex characters are no short id"
        );
        assert_eq!(parse_chat_path("/chat"), None);
        assert_eq!(parse_chat_path("/chat/"), None);
        assert_eq!(parse_chat_path("/ask/q1"), None);
        assert_eq!(parse_chat_path("/chat/main/%FF"), None, "an escape that is not UTF-8 names nothing");
    }

    #[test]
    fn a_short_id_resolves_to_the_one_session_whose_uuid_starts_with_it() {
        let keys = [
            "agent:main:main",
            "agent:main:dashboard:6db92d48-1111-4222-8333-444455556666",
            "agent:main:task:7aa00000-1111-4222-8333-444455556666",
            "agent:other:x:6db92d48-9999-4222-8333-444455556666",
            "agent:main:task:7aa00001-1111-4222-8333-444455556666",
        ];
        assert_eq!(resolve_short_id("main", "6db92d48", keys), Some("agent:main:dashboard:6db92d48-1111-4222-8333-444455556666"));
        assert_eq!(resolve_short_id("main", "6db92d481111", keys), Some("agent:main:dashboard:6db92d48-1111-4222-8333-444455556666"));
        assert_eq!(resolve_short_id("main", "7aa0000", keys), None, "ambiguous");
        assert_eq!(resolve_short_id("main", "12345678", keys), None, "unknown");
    }
}
