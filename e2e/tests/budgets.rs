//! Deterministic budgets (bytes and counts, never wall-clock times): the size of what the
//! browser must fetch before the UI can start, and that nothing is fetched from any origin
//! other than the gateway's. Speed is measured by `make bench`, not here.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use e2e::LocalGateway;
use e2e::browser::Browser;
use serde_json::json;

/// Gzip bytes of the initial wasm + JS + CSS together. Issue 6 sets the goal at 250 KB; the
/// build is at about 285.2 KB (2026-11-30; it was 384 KB before that day's size work), so this is a
/// ratchet that stops growth while the design work to reach the goal is done. Lower it as the
/// bundle shrinks; never raise it.
const INITIAL_GZIP_BUDGET_BYTES: u64 = 286_000;

fn gzip_size(file: &Path) -> u64 {
    let out = Command::new("gzip").args(["-9", "-c"]).arg(file).output().expect("gzip runs");
    assert!(out.status.success(), "gzip failed on {}", file.display());
    out.stdout.len() as u64
}

/// The files `index.html` makes the browser fetch before the app runs.
fn initial_assets(dist: &Path) -> Vec<String> {
    let html = std::fs::read_to_string(dist.join("index.html")).expect("dist/index.html: run `make build` first");
    let mut assets: Vec<String> = html
        .split(['"', '\''])
        .filter(|s| s.starts_with('/') && (s.ends_with(".wasm") || s.ends_with(".js") || s.ends_with(".css")))
        .map(|s| s.trim_start_matches('/').to_string())
        .collect();
    assets.sort();
    assets.dedup();
    assets
}

#[test]
fn the_initial_wasm_js_and_css_fit_the_gzip_budget() {
    let dist = e2e::dist_dir();
    let assets = initial_assets(&dist);
    let kinds: Vec<&str> = assets.iter().map(|a| a.rsplit('.').next().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "wasm").count(), 1, "one wasm module at start: {assets:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "js").count(), 1, "one JS file at start: {assets:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "css").count(), 1, "one stylesheet at start: {assets:?}");
    let sizes: Vec<(String, u64)> = assets.iter().map(|a| (a.clone(), gzip_size(&dist.join(a)))).collect();
    let total: u64 = sizes.iter().map(|(_, s)| s).sum();
    println!("initial assets (gzip -9): {sizes:?}, total {total} bytes");
    assert!(total <= INITIAL_GZIP_BUDGET_BYTES, "initial bundle is {total} gzip bytes, over the {INITIAL_GZIP_BUDGET_BYTES}-byte budget: {sizes:?}");
}

const T: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread")]
async fn the_ui_fetches_nothing_outside_the_gateways_origin() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    // Exercise the dock and the chat, so lazily fetched things would show up too.
    let mut agent = gw.agent().await;
    agent
        .request("question.request", json!({"questions": [{"questionId": "q", "header": "Origin", "question": "Which origin?", "options": [{"label": "Ours"}, {"label": "Theirs"}]}], "timeoutMs": 60000}))
        .await
        .unwrap();
    b.option("Ours").await.click().await.unwrap();
    b.click_button("Submit").await;
    b.wait_gone("[data-testid=question-panel]", T).await;
    b.send_message("hello origin").await;
    b.wait_text("[data-testid=message][data-role=assistant] .msg__text", T, |t| t.contains("hello origin")).await;
    let origin = gw.base();
    let seen = b
        .js("return [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map(e => e.name)
             .concat([...document.querySelectorAll('[src],[href]')].map(e => e.src || e.href));")
        .await;
    let urls: Vec<&str> = seen.as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
    assert!(urls.len() >= 3, "the page loaded its HTML, JS and wasm: {urls:?}");
    let foreign: Vec<&&str> = urls.iter().filter(|u| !u.starts_with(&format!("{origin}/")) && !u.starts_with("data:")).collect();
    assert!(foreign.is_empty(), "fetched outside {origin}: {foreign:?}");
    // The local gateway sends the gzip copies: what crossed the wire fits the same budget.
    let wasm = b.js("const e = performance.getEntriesByType('resource').find(e => e.name.endsWith('.wasm')); return e ? [e.encodedBodySize, e.decodedBodySize] : null;").await;
    let (encoded, decoded) = (wasm[0].as_u64().unwrap(), wasm[1].as_u64().unwrap());
    assert!(encoded * 2 < decoded, "the wasm travelled compressed: {encoded} of {decoded} bytes");
    let sent = b.js("return performance.getEntriesByType('resource').filter(e => /\\.(wasm|js|css)$/.test(e.name)).reduce((n, e) => n + e.encodedBodySize, 0);").await;
    assert!(sent.as_u64().unwrap() <= INITIAL_GZIP_BUDGET_BYTES, "initial assets over the wire: {sent} bytes");
    // The WebSocket goes to the page's own host too.
    let status = b.js("return document.body.innerText").await;
    assert!(!status.as_str().unwrap_or_default().contains("ws://") || status.as_str().unwrap().contains(&origin.replace("http://", "ws://")), "WebSocket URL is the gateway's");
}
