//! HTTP: the WebSocket upgrade and the built UI, with SPA fallback and the real gateway's CSP.
//! Responses are compressed here (gzip or brotli, as the browser accepts), not by the build.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{DefaultPredicate, NotForContentType, Predicate};

use crate::Gateway;

pub fn router(gw: Arc<Gateway>) -> Router {
    // The WebSocket upgrade has an empty body, which the default predicate never compresses. The
    // wasm's gzip'd copy is sent as it is: the page unpacks it itself (src/loader.js).
    let compress = DefaultPredicate::new().and(NotForContentType::const_new("application/gzip"));
    Router::new().fallback(handle).with_state(gw).layer(CompressionLayer::new().compress_when(compress))
}

async fn handle(State(gw): State<Arc<Gateway>>, method: Method, uri: Uri, headers: HeaderMap, request: axum::extract::Request) -> Response {
    if crate::upgrade::is_websocket(&headers) {
        return crate::upgrade::upgrade(gw, &method, &headers, request);
    }
    if method != Method::GET && method != Method::HEAD {
        return (StatusCode::METHOD_NOT_ALLOWED, "method not allowed").into_response();
    }
    if uri.path() == MEDIA_PATH {
        return serve_media(&gw, uri.query().unwrap_or(""), &headers);
    }
    serve_static(&gw.config.ui_root, uri.path()).await
}

/// Where files sent with messages are served, as on the real gateway.
pub const MEDIA_PATH: &str = "/__openclaw__/assistant-media";

/// `GET /__openclaw__/assistant-media?source=media://inbound/<id>&sessionKey=…[&meta=1]`: a file
/// saved with a message, for a caller with the gateway token or a device token it issued, in
/// `Authorization: Bearer …` only: a token in the query would end up in logs, history and
/// `Referer`s. `meta=1` answers what it is instead. Nothing is cached (`no-store`): the bytes
/// are private and a shared or disk cache must not keep them.
/// The bytes are never run as a page: `nosniff`, a sandboxing CSP, and anything but an image
/// is a download.
fn serve_media(gw: &Gateway, query: &str, headers: &HeaderMap) -> Response {
    let params: Vec<(String, String)> = url_query(query);
    let param = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let bearer = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
    let token = bearer.unwrap_or("");
    let shared = !token.is_empty() && crate::util::secret_eq(token, &gw.config.token);
    let device = if shared || token.is_empty() { None } else { crate::devices::device_with_token(gw, token, crate::util::now_ms()) };
    if !shared && device.is_none() {
        return json_response(StatusCode::UNAUTHORIZED, serde_json::json!({"error": {"message": "Unauthorized", "type": "unauthorized"}}));
    }
    let Some(session) = param("sessionKey").filter(|s| !s.is_empty()).map(crate::questions::canonical_session_key) else {
        return json_response(
            StatusCode::BAD_REQUEST,
            serde_json::json!({"available": false, "code": "invalid_request", "reason": "`sessionKey` names the conversation the file belongs to, and is required"}),
        );
    };
    // A device reads what its connections could read: every conversation when devices are
    // granted a read scope, else only the conversations it owns (a guest's).
    let reads_all = gw.config.device_scopes.as_ref().is_none_or(|s| {
        s.iter()
            .any(|x| x == protocol::methods::scope::READ || x == protocol::methods::scope::WRITE || x == protocol::methods::scope::ADMIN)
    });
    let may_read =
        shared || reads_all || gw.store.session_owner(&session).ok().flatten().is_some_and(|o| device.as_deref() == Some(o.as_str()));
    let id = param("source").and_then(|s| s.strip_prefix("media://inbound/")).unwrap_or("");
    let found = if id.is_empty() || !may_read { None } else { gw.store.media(id).ok().flatten() };
    let Some((_, content_type, file_name, bytes)) = found.filter(|(owner, ..)| *owner == session) else {
        return json_response(
            StatusCode::NOT_FOUND,
            serde_json::json!({"available": false, "code": "not_found", "reason": "no such file in this conversation"}),
        );
    };
    if param("meta") == Some("1") {
        return json_response(StatusCode::OK, serde_json::json!({"available": true, "mimeType": content_type, "sizeBytes": bytes.len()}));
    }
    // Only the raster types recognised from the bytes are shown inline; anything else, whatever
    // a client called it, is a download.
    let image = matches!(content_type.as_str(), "image/png" | "image/jpeg" | "image/gif" | "image/webp");
    let safe_name: String = file_name.chars().map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' { c } else { '_' }).collect();
    let mut resp = Response::new(Body::from(bytes));
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_str(&content_type).unwrap_or(HeaderValue::from_static("application/octet-stream")));
    let disposition = format!("{}; filename=\"{safe_name}\"", if image { "inline" } else { "attachment" });
    h.insert(header::CONTENT_DISPOSITION, HeaderValue::from_str(&disposition).unwrap_or(HeaderValue::from_static("attachment")));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'none'; sandbox"));
    security_headers(&mut resp);
    resp
}

/// `a=b&c=d` decoded (`+` is a space).
fn url_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let dec = |s: &str| percent_decode(&s.replace('+', " ")).unwrap_or_default();
            (dec(k), dec(v))
        })
        .collect()
}

fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    security_headers(&mut resp);
    resp
}

/// Maps a URL path into the UI root, refusing anything that climbs out of it.
fn resolve(root: &Path, url_path: &str) -> Option<PathBuf> {
    let mut out = root.to_path_buf();
    for c in Path::new(url_path.trim_start_matches('/')).components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "gz" => "application/gzip",
        "json" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

async fn serve_static(root: &Path, url_path: &str) -> Response {
    let decoded = percent_decode(url_path);
    let Some(path) = decoded.as_deref().and_then(|p| resolve(root, p)) else {
        return (StatusCode::BAD_REQUEST, "bad path").into_response();
    };
    if path != root && path.is_file() && path.file_name().is_some_and(|n| n != "index.html") {
        return match tokio::fs::read(&path).await {
            Ok(bytes) => file_response(bytes, content_type(&path)),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("cannot read file: {e}")).into_response(),
        };
    }
    // A missing asset is a 404; every other route is the single-page app.
    let looks_like_file = Path::new(url_path).extension().is_some();
    if looks_like_file && !path.is_dir() && !url_path.ends_with("index.html") {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    match tokio::fs::read_to_string(root.join("index.html")).await {
        Ok(html) => html_response(html),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "1")],
            format!("Control UI assets are missing: no index.html in {}. Build the UI first (make build).", root.display()),
        )
            .into_response(),
    }
}

/// The path with its `%XX` escapes decoded; `None` when that is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    percent_encoding::percent_decode_str(s).decode_utf8().ok().map(|c| c.into_owned())
}

fn security_headers(resp: &mut Response) {
    let h = resp.headers_mut();
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
}

fn file_response(bytes: Vec<u8>, ctype: &'static str) -> Response {
    let mut resp = Response::new(Body::from(bytes));
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    security_headers(&mut resp);
    resp
}

fn html_response(html: String) -> Response {
    let csp = csp_for(&html);
    let mut resp = Response::new(Body::from(html));
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    security_headers(&mut resp);
    resp
}

/// The bodies of inline `<script>` elements (those without `src`).
fn inline_scripts(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        let after = &rest[start..];
        let Some(tag_end) = after.find('>') else { break };
        let tag = &after[..tag_end];
        let body_start = tag_end + 1;
        let Some(close) = after[body_start..].find("</script>") else { break };
        if !tag.contains(" src=") {
            out.push(&after[body_start..body_start + close]);
        }
        rest = &after[body_start + close..];
    }
    out
}

/// The CSP the real gateway sends for a configured UI root (terminal enabled, so
/// `'wasm-unsafe-eval'` is present), with a hash for every inline script.
pub fn csp_for(html: &str) -> String {
    let hashes: Vec<String> =
        inline_scripts(html).iter().map(|s| format!("'sha256-{}'", STANDARD.encode(Sha256::digest(s.as_bytes())))).collect();
    format!(
        "default-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'; frame-src 'self' http: https:; \
         script-src 'self' {} 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https:; \
         media-src 'self' data: blob:; font-src 'self'; worker-src 'self'; connect-src 'self' ws: wss:",
        hashes.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csp_hashes_only_inline_scripts() {
        let html = r#"<html><script type="module">import x from "/a.js";</script><script src="/b.js"></script><script>1</script></html>"#;
        assert_eq!(inline_scripts(html), vec![r#"import x from "/a.js";"#, "1"]);
        let csp = csp_for(html);
        assert_eq!(csp.matches("'sha256-").count(), 2);
        assert!(csp.contains("'wasm-unsafe-eval'"));
        // sha256("1") in standard base64
        assert!(csp.contains("'sha256-a4ayc/80/OGda4BO/1o/V0etpOqiLx1JwB5S3beHW0s='"), "{csp}");
    }

    #[test]
    fn paths_cannot_leave_the_root() {
        let root = Path::new("/srv/ui");
        assert_eq!(resolve(root, "/assets/app.js"), Some(PathBuf::from("/srv/ui/assets/app.js")));
        assert_eq!(resolve(root, "/../etc/passwd"), None);
        assert_eq!(resolve(root, "/a/../../x"), None);
        assert_eq!(percent_decode("/%2e%2e/x").as_deref(), Some("/../x"));
    }
}
