//! The built UI as the gateway serves it: compressed by the server when the browser accepts it,
//! byte-for-byte identical once decoded, the wasm's gzip'd copy sent as it is (the page unpacks
//! it), with the real gateway's CSP on the page, and the WebSocket upgrade on the same route
//! untouched.

mod common;

use std::io::Read;

use common::header;

const TOKEN: &str = "static-59f8309fbb73e020661345d819417dba";

/// A GET with `Accept-Encoding` when given.
async fn get(addr: std::net::SocketAddr, path: &str, accept_encoding: Option<&str>) -> (String, Vec<(String, String)>, Vec<u8>) {
    common::http_get(addr, path, &accept_encoding.map(|v| format!("Accept-Encoding: {v}\r\n")).unwrap_or_default()).await
}

/// 200 KB that compress well, as a wasm module does.
fn wasm_like() -> Vec<u8> {
    (0..200_000u32).map(|i| (i % 251) as u8 ^ ((i / 1024) as u8)).collect()
}

#[tokio::test]
async fn assets_are_compressed_by_the_server_for_browsers_that_accept_it_and_identical_once_decoded() {
    let (gw, dir) = common::start_with(TOKEN, |_| {}).await;
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    let wasm = wasm_like();
    std::fs::write(ui.join("app-123_bg.wasm"), &wasm).unwrap();
    std::fs::write(ui.join("index.html"), r#"<!DOCTYPE html><html><head><script type="module">import init from "/app-123.js";init("/app-123_bg.wasm");</script></head><body></body></html>"#).unwrap();

    let (status, headers, body) = get(gw.addr, "/app-123_bg.wasm", Some("gzip, deflate, br, zstd")).await;
    assert!(status.contains("200"), "{status}");
    assert_eq!(header(&headers, "content-type"), Some("application/wasm"));
    let encoding = header(&headers, "content-encoding").expect("compressed for a browser that takes it");
    assert!(encoding == "br" || encoding == "gzip", "{encoding}");
    assert!(header(&headers, "vary").is_some_and(|v| v.to_ascii_lowercase().contains("accept-encoding")), "{headers:?}");
    assert!(body.len() * 4 < wasm.len(), "{} compressed bytes for {}", body.len(), wasm.len());

    let (_, headers, body) = get(gw.addr, "/app-123_bg.wasm", Some("gzip")).await;
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    let mut decoded = Vec::new();
    flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut decoded).unwrap();
    assert!(decoded == wasm, "gzip decodes to the file itself");

    let (_, headers, body) = get(gw.addr, "/app-123_bg.wasm", None).await;
    assert_eq!(header(&headers, "content-encoding"), None, "identity for a client that asks for nothing");
    assert!(body == wasm);

    let (_, headers, _) = get(gw.addr, "/app-123_bg.wasm", Some("gzip;q=0, identity")).await;
    assert_eq!(header(&headers, "content-encoding"), None, "a refused encoding is not used");

    // The page: compressed too, and still carrying the CSP with its inline loader's hash.
    let (status, headers, _) = get(gw.addr, "/ask/some-id", Some("gzip")).await;
    assert!(status.contains("200"), "{status}");
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    let csp = header(&headers, "content-security-policy").expect("a CSP");
    assert_eq!(csp.matches("'sha256-").count(), 1, "{csp}");
    gw.shutdown().await;
}

/// The page's loader unpacks `app-…_bg.wasm.gz` itself: compressing it again would cost the
/// gateway a gzip of 600 KB per load for nothing, and a `Content-Encoding` the loader does not
/// expect.
#[tokio::test]
async fn the_wasms_gzipped_copy_is_sent_as_it_is() {
    let (gw, dir) = common::start_with(TOKEN, |_| {}).await;
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    let packed = {
        let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut out, &wasm_like()).unwrap();
        out.finish().unwrap()
    };
    std::fs::write(ui.join("app-123_bg.wasm.gz"), &packed).unwrap();
    std::fs::write(ui.join("index.html"), "<!DOCTYPE html><html><head></head><body></body></html>").unwrap();
    let (status, headers, body) = get(gw.addr, "/app-123_bg.wasm.gz", Some("gzip, deflate, br, zstd")).await;
    assert!(status.contains("200"), "{status}");
    assert_eq!(header(&headers, "content-type"), Some("application/gzip"));
    assert_eq!(header(&headers, "content-encoding"), None, "{headers:?}");
    assert!(body == packed, "the file's own bytes");
    gw.shutdown().await;
}

#[tokio::test]
async fn the_websocket_upgrade_is_not_compressed_even_when_the_browser_offers_encodings() {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let (gw, _dir) = common::start_with(TOKEN, |_| {}).await;
    let mut req = format!("ws://{}/", gw.addr).into_client_request().unwrap();
    // What Chromium sends on an upgrade.
    req.headers_mut().insert("accept-encoding", "gzip, deflate, br, zstd".parse().unwrap());
    req.headers_mut().insert("origin", format!("http://{}", gw.addr).parse().unwrap());
    let (mut ws, resp) = tokio_tungstenite::connect_async(req).await.expect("the upgrade succeeds");
    assert_eq!(resp.status(), 101);
    assert!(resp.headers().get("content-encoding").is_none(), "{:?}", resp.headers());
    let first = tokio::time::timeout(common::T, ws.next()).await.unwrap().unwrap().unwrap();
    assert!(first.to_text().unwrap().contains("connect.challenge"), "{first:?}");
    gw.shutdown().await;
}
