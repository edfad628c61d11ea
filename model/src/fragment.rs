//! Reading `#token=…&gatewayUrl=…` from the address bar, and what to leave there.

/// Settings carried in the URL fragment.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FragmentSettings {
    pub token: Option<String>,
    pub gateway_url: Option<String>,
    /// The fragment to put back: everything except credentials (`token`, `password`).
    pub remaining: String,
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a `location.hash` (with or without the leading `#`).
pub fn parse_fragment(hash: &str) -> FragmentSettings {
    let body = hash.strip_prefix('#').unwrap_or(hash);
    let mut out = FragmentSettings::default();
    let mut keep: Vec<&str> = Vec::new();
    for part in body.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        match k {
            "token" => out.token = Some(percent_decode(v)).filter(|t| !t.is_empty()),
            // A password is never used from the URL, and never left in it.
            "password" => {}
            "gatewayUrl" => {
                out.gateway_url = Some(percent_decode(v)).filter(|u| !u.is_empty());
                keep.push(part);
            }
            _ => keep.push(part),
        }
    }
    out.remaining = if keep.is_empty() { String::new() } else { format!("#{}", keep.join("&")) };
    out
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

    use super::*;

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
        assert_eq!(f.remaining, "#gatewayUrl=ws%3A%2F%2F127.0.0.1%3A1&view=chat");
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
}
