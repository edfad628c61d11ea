//! Every address the page reads or writes, in one place and all through the `percent-encoding`
//! crate: the fragment (`#token=…&gatewayUrl=…`), the query (`?session=A&pane=B`), request links
//! (`/ask/<id>`, `/approve/<id>`), the incumbent's conversation links (`/chat/…`), the gateway's
//! addresses, and the host a person should see for a link.
//!
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

use percent_encoding::percent_decode_str;

/// `s` as one query or path component (`encodeURIComponent`).
pub fn encode_component(s: &str) -> String {
    protocol::text::encode_uri_component(s)
}

/// A query or fragment value as `URLSearchParams` reads it: `+` is a space, `%XX` a byte,
/// a broken escape stays as written, and bytes that are not UTF-8 become U+FFFD.
fn form_decode(s: &str) -> String {
    percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned()
}

/// The pairs of a query string (`?a=1&b=2`, the `?` optional), decoded.
pub(crate) fn query_pairs(search: &str) -> impl Iterator<Item = (String, String)> + '_ {
    let body = search.strip_prefix('?').unwrap_or(search);
    body.split('&').filter(|p| !p.is_empty()).map(|p| {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        (form_decode(k), form_decode(v))
    })
}

/// The conversations the address names: `?session=` for the first pane, then `pane=` for each
/// further one, in order. Empty values name nothing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PageQuery {
    pub session: Option<String>,
    pub panes: Vec<String>,
}

/// Reads `location.search`.
pub fn parse_page_query(search: &str) -> PageQuery {
    let mut out = PageQuery::default();
    for (k, v) in query_pairs(search).filter(|(_, v)| !v.is_empty()) {
        match k.as_str() {
            "session" if out.session.is_none() => out.session = Some(v),
            "pane" => out.panes.push(v),
            _ => {}
        }
    }
    out
}

/// The query for panes open on `sessions`, left to right (`?session=A&pane=B`); empty when the
/// first pane has no conversation yet. Empty later entries are skipped.
pub fn page_query(sessions: &[String]) -> String {
    let Some(first) = sessions.first().filter(|s| !s.is_empty()) else {
        return String::new();
    };
    let mut query = format!("?session={}", encode_component(first));
    for s in sessions.iter().skip(1).filter(|s| !s.is_empty()) {
        query.push_str("&pane=");
        query.push_str(&encode_component(s));
    }
    query
}

/// The host a person should see for `url`, lowercased, without user info (which can be made to
/// look like a host: `https://bank.example@evil.example/` goes to `evil.example`). For `mailto:`,
/// the address's domain.
pub fn host_of(url: &str) -> String {
    let lower = url.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("mailto:") {
        return rest.split('?').next().unwrap_or("").rsplit('@').next().unwrap_or("").to_string();
    }
    let rest = lower.split_once("://").map_or(lower.as_str(), |(_, r)| r);
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    authority.rsplit('@').next().unwrap_or("").to_string()
}

/// A host as a person should read it: labels outside ASCII as punycode (`xn--pple-43d.com`
/// for `аpple.com`, whose first letter is Cyrillic), so a look-alike never passes for the host
/// it imitates. ASCII labels are kept as they are.
pub fn display_host(host: &str) -> String {
    host.split('.')
        .map(|label| {
            if label.is_ascii() {
                label.to_string()
            } else {
                idna::punycode::encode_str(label).map_or_else(|| label.to_string(), |p| format!("xn--{p}"))
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

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

/// A path segment with its `%XX` escapes decoded (`+` is a plus here); `None` when that is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    percent_decode_str(s).decode_utf8().ok().map(|c| c.into_owned())
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

/// Reads a path inside the app (see [`app_path`]); `None` unless it is a `/chat/…` link
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

/// Settings carried in the URL fragment.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FragmentSettings {
    pub token: Option<String>,
    pub gateway_url: Option<String>,
    /// The fragment to put back: everything except credentials (`token`, `password`).
    pub remaining: String,
}

/// Parses a `location.hash` (with or without the leading `#`).
pub fn parse_fragment(hash: &str) -> FragmentSettings {
    let body = hash.strip_prefix('#').unwrap_or(hash);
    let mut out = FragmentSettings::default();
    let mut keep: Vec<&str> = Vec::new();
    for part in body.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        match k {
            "token" => out.token = Some(form_decode(v)).filter(|t| !t.is_empty()),
            // A password is never used from the URL, and never left in it.
            "password" => {}
            // Taken out of the address bar too: a reload must not go to a gateway the person
            // never agreed to (`link_gateway`).
            "gatewayUrl" => out.gateway_url = Some(form_decode(v)).filter(|u| !u.is_empty()),
            _ => keep.push(part),
        }
    }
    out.remaining = if keep.is_empty() { String::new() } else { format!("#{}", keep.join("&")) };
    out
}

/// A gateway address spelled one way, to compare and to key what is stored per gateway:
/// scheme and host in lower case, the default port (80 for `ws`, 443 for `wss`) and a
/// trailing `/` dropped, the path kept.
pub fn normalize_gateway_url(url: &str) -> String {
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = rest.find(['/', '?', '#']).map_or((rest, ""), |i| rest.split_at(i));
    let mut authority = authority.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "ws" | "http" => ":80",
        "wss" | "https" => ":443",
        _ => "",
    };
    if !default_port.is_empty() && authority.ends_with(default_port) {
        authority.truncate(authority.len() - default_port.len());
    }
    format!("{scheme}://{authority}{}", path.trim_end_matches('/'))
}

/// The IndexedDB database that keeps what belongs to one gateway (outbox rows and their
/// files, drafts, receipts, async state, dismissals, saved transcripts, composer drafts).
/// `legacy_owner` is the gateway that owns the single database builds before 2026-12-03 kept
/// for every gateway (`ocui`): it goes on using it, so nothing of it moves or is lost.
pub fn gateway_db_name(gateway_url: &str, legacy_owner: &str) -> String {
    let gateway = normalize_gateway_url(gateway_url);
    if gateway == normalize_gateway_url(legacy_owner) { LEGACY_DB_NAME.to_string() } else { format!("{LEGACY_DB_NAME}@{gateway}") }
}

/// The one database earlier builds kept for every gateway.
pub const LEGACY_DB_NAME: &str = "ocui";

/// Which gateway inherits the earlier builds' single database, and whether this browser's
/// storage showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyOwner {
    /// The gateway's normalised address.
    pub url: String,
    /// The storage showed exactly this one gateway in use. When it did not (several, or none
    /// recorded), what was queued in that database waits for the person before it is sent.
    pub certain: bool,
}

/// Which gateway inherits the earlier builds' single database: the one this browser used, if
/// its storage shows exactly one (`used`: the gateways earlier builds recorded scopes for),
/// else the page's own gateway (`own`), uncertainly. Decided once per browser, on the first
/// start of a build that keys storage by gateway.
pub fn legacy_owner(own: &str, used: &[String]) -> LegacyOwner {
    // Exactly one distinct address, found without sorting (the page's early module links this).
    let mut addresses = used.iter().map(|u| normalize_gateway_url(u)).filter(|u| !u.is_empty());
    match addresses.next() {
        Some(first) if addresses.all(|u| u == first) => LegacyOwner { url: first, certain: true },
        _ => LegacyOwner { url: normalize_gateway_url(own), certain: false },
    }
}

/// What a link's `#gatewayUrl=` asks of this page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkGateway {
    /// No gateway named, or the one the page uses anyway: nothing to ask.
    Stay,
    /// Another gateway: ask first, showing its host; connect only after a click.
    Ask { url: String, host: String },
    /// Not a WebSocket address: say so, and stay.
    Invalid(String),
}

/// Reads a link's gateway against the one this page would use (`current`).
pub fn link_gateway(link: Option<&str>, current: &str) -> LinkGateway {
    let Some(link) = link.map(str::trim).filter(|l| !l.is_empty()) else { return LinkGateway::Stay };
    if let Err(e) = check_gateway_url(link) {
        return LinkGateway::Invalid(e);
    }
    if normalize_gateway_url(link) == normalize_gateway_url(current) {
        return LinkGateway::Stay;
    }
    LinkGateway::Ask { url: link.to_string(), host: host_of(link) }
}

/// The WebSocket URL for a page: same host, `ws`/`wss` by the page's scheme, under the
/// base path the gateway serves the UI from.
pub fn default_gateway_url(page_protocol: &str, host: &str, base_path: &str) -> String {
    let scheme = if page_protocol == "https:" { "wss" } else { "ws" };
    let base = base_path.trim_end_matches('/');
    format!("{scheme}://{host}{base}")
}

/// The gateway's HTTP address for its WebSocket address: the same host and path, `http` for
/// `ws` and `https` for `wss`, without a trailing `/`. `None` for anything else.
pub fn http_base(gateway_url: &str) -> Option<String> {
    let (scheme, rest) = gateway_url.split_once("://")?;
    let http = match scheme.to_ascii_lowercase().as_str() {
        "ws" => "http",
        "wss" => "https",
        _ => return None,
    };
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    Some(format!("{http}://{}", rest.trim_end_matches('/')))
}

/// The page's path inside the app: `pathname` without the gateway's base path, so that
/// `/ui/ask/<id>` under `basePath: "/ui"` is the app's `/ask/<id>`. A path outside the base
/// path is left as it is.
pub fn app_path<'a>(pathname: &'a str, base_path: &str) -> &'a str {
    let base = base_path.trim_end_matches('/');
    if base.is_empty() {
        return pathname;
    }
    match pathname.strip_prefix(base) {
        Some("") => "/",
        Some(rest) if rest.starts_with('/') => rest,
        _ => pathname,
    }
}

/// Whether a gateway URL is one we may connect to: `ws:` or `wss:` with a host.
pub fn check_gateway_url(url: &str) -> Result<(), String> {
    let rest = url.strip_prefix("ws://").or_else(|| url.strip_prefix("wss://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') => Ok(()),
        _ => Err(format!("“{url}” is not a WebSocket address; it must start with ws:// or wss://, for example ws://127.0.0.1:18789")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_to_another_gateway_asks_first_and_the_pages_own_needs_no_prompt() {
        let own = "ws://127.0.0.1:18789";
        assert_eq!(link_gateway(None, own), LinkGateway::Stay);
        assert_eq!(link_gateway(Some("ws://127.0.0.1:18789/"), own), LinkGateway::Stay, "the same gateway spelled otherwise");
        assert_eq!(
            link_gateway(Some("wss://elsewhere.example"), own),
            LinkGateway::Ask { url: "wss://elsewhere.example".into(), host: "elsewhere.example".into() }
        );
        assert_eq!(
            link_gateway(Some("ws://127.0.0.1:19890"), own),
            LinkGateway::Ask { url: "ws://127.0.0.1:19890".into(), host: "127.0.0.1:19890".into() }
        );
        assert!(matches!(link_gateway(Some("javascript:alert(1)"), own), LinkGateway::Invalid(_)));
        assert_eq!(normalize_gateway_url("WSS://Example.COM:443/ui/"), "wss://example.com/ui");
        assert_eq!(normalize_gateway_url("ws://h:80"), "ws://h");
        assert_eq!(normalize_gateway_url("ws://h:8080/"), "ws://h:8080");
    }

    #[test]
    fn the_earlier_single_database_stays_with_the_gateway_that_used_it_and_others_get_their_own() {
        let own = "ws://127.0.0.1:18789";
        let owner = |url: &str, certain| LegacyOwner { url: url.into(), certain };
        assert_eq!(legacy_owner(own, &[]), owner("ws://127.0.0.1:18789", false), "none recorded: the page's own gateway, uncertainly");
        assert_eq!(
            legacy_owner(own, &["ws://10.0.0.2:18789/".into(), "WS://10.0.0.2:18789".into()]),
            owner("ws://10.0.0.2:18789", true),
            "the one gateway this browser used"
        );
        assert_eq!(
            legacy_owner(own, &["ws://10.0.0.2:18789".into(), "ws://10.0.0.3:1".into()]),
            owner(own, false),
            "several: the page's own, uncertainly"
        );
        assert_eq!(gateway_db_name("ws://127.0.0.1:18789/", own), "ocui");
        assert_eq!(gateway_db_name("wss://elsewhere.example", own), "ocui@wss://elsewhere.example");
    }

    #[test]
    fn the_query_names_the_first_pane_then_the_others_in_order() {
        let q = parse_page_query("?session=agent%3Amain%3Amain&pane=b+c&x=1&pane=&pane=d%2Fe");
        assert_eq!(q.session.as_deref(), Some("agent:main:main"));
        assert_eq!(q.panes, vec!["b c".to_string(), "d/e".to_string()]);
        assert_eq!(parse_page_query(""), PageQuery::default());
        assert_eq!(parse_page_query("?session=&pane=a").session, None);
        assert_eq!(parse_page_query("?session=%FF").session.as_deref(), Some("\u{fffd}"));
    }

    #[test]
    fn the_query_written_for_the_panes_reads_back_as_the_same_panes() {
        let sessions = vec!["agent:main:main".to_string(), String::new(), "agent:main:dm:ann & bob/100%".to_string()];
        let q = page_query(&sessions);
        assert_eq!(q, "?session=agent%3Amain%3Amain&pane=agent%3Amain%3Adm%3Aann%20%26%20bob%2F100%25");
        let back = parse_page_query(&q);
        assert_eq!(back.session.as_deref(), Some("agent:main:main"));
        assert_eq!(back.panes, vec!["agent:main:dm:ann & bob/100%".to_string()]);
        assert_eq!(page_query(&[String::new(), "b".into()]), "");
    }

    #[test]
    fn components_are_encoded_as_encode_uri_component_does() {
        assert_eq!(encode_component("a-b_c.d!e~f*g'h(i)j"), "a-b_c.d!e~f*g'h(i)j");
        assert_eq!(encode_component("é /?#&=+"), "%C3%A9%20%2F%3F%23%26%3D%2B");
    }

    #[test]
    fn the_host_shown_for_a_link_is_the_one_it_goes_to() {
        assert_eq!(host_of("https://bank.example@evil.example/login"), "evil.example");
        assert_eq!(host_of("HTTPS://Docs.Example.com:8443/a?b#c"), "docs.example.com:8443");
        assert_eq!(host_of("https://evil.example\\@bank.example/"), "evil.example");
        assert_eq!(host_of("mailto:Ann@Example.org?subject=x"), "example.org");
    }

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

    #[test]
    fn the_app_path_drops_the_gateways_base_path() {
        assert_eq!(app_path("/ask/q1", ""), "/ask/q1");
        assert_eq!(app_path("/ui/ask/q1", "/ui"), "/ask/q1");
        assert_eq!(app_path("/ui/ask/q1", "/ui/"), "/ask/q1");
        assert_eq!(app_path("/ui", "/ui"), "/");
        assert_eq!(app_path("/ui/", "/ui"), "/");
        assert_eq!(app_path("/uix/ask/q1", "/ui"), "/uix/ask/q1", "only a whole segment is the base path");
        assert_eq!(app_path("/ask/q1", "/ui"), "/ask/q1");
    }

    #[test]
    fn the_gateway_http_base_follows_its_websocket_address() {
        assert_eq!(http_base("ws://127.0.0.1:18789").as_deref(), Some("http://127.0.0.1:18789"));
        assert_eq!(http_base("wss://gw.example/ui/").as_deref(), Some("https://gw.example/ui"));
        assert_eq!(http_base("WS://h/p?x=1#y").as_deref(), Some("http://h/p"));
        assert_eq!(http_base("http://h"), None);
    }

    #[test]
    fn token_and_password_are_taken_out_and_other_parts_stay() {
        let f = parse_fragment("#token=ab%2Bc&password=x&gatewayUrl=ws%3A%2F%2F127.0.0.1%3A1&view=chat");
        assert_eq!(f.token.as_deref(), Some("ab+c"));
        assert_eq!(f.gateway_url.as_deref(), Some("ws://127.0.0.1:1"));
        assert_eq!(f.remaining, "#view=chat");
        assert_eq!(parse_fragment("#token=T").remaining, "");
        assert_eq!(parse_fragment("").token, None);
        assert_eq!(parse_fragment("#token=").token, None);
        assert_eq!(parse_fragment("#token=%zz%").token.as_deref(), Some("%zz%"));
    }

    #[test]
    fn default_url_follows_the_page() {
        assert_eq!(default_gateway_url("http:", "127.0.0.1:18789", ""), "ws://127.0.0.1:18789");
        assert_eq!(default_gateway_url("https:", "gw.example", "/ui/"), "wss://gw.example/ui");
    }

    #[test]
    fn only_websocket_urls_are_accepted() {
        assert!(check_gateway_url("ws://127.0.0.1:18789").is_ok());
        assert!(check_gateway_url("wss://x/ui").is_ok());
        assert!(check_gateway_url("http://x").is_err());
        assert!(check_gateway_url("ws://").is_err());
        assert!(check_gateway_url("javascript:alert(1)").is_err());
    }

    #[test]
    fn a_host_outside_ascii_is_shown_as_punycode() {
        assert_eq!(display_host("\u{430}pple.com"), "xn--pple-43d.com");
        assert_eq!(display_host("bücher.example"), "xn--bcher-kva.example");
        assert_eq!(display_host("docs.openclaw.ai"), "docs.openclaw.ai");
    }
}
