//! Deterministic budgets (bytes and counts, never wall-clock times): the size of what the
//! browser fetches, and that nothing is fetched from any origin other than the gateway's.
//! Speed is measured by `make bench`, not here.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use e2e::LocalGateway;
use e2e::browser::Browser;
use serde_json::json;

/// Gzip -9 bytes of every wasm, JS and CSS file in the build together. A ratchet: it sits just
/// above the last measured build. Lower it when the bundle shrinks; raise it only with the reason
/// in the commit that does. The size history is in `docs/performance.md` and the commit log.
const TOTAL_GZIP_BUDGET_BYTES: u64 = 677_000;

fn gzip_size(file: &Path) -> u64 {
    let out = Command::new("gzip").args(["-9", "-c"]).arg(file).output().expect("gzip runs");
    assert!(out.status.success(), "gzip failed on {}", file.display());
    out.stdout.len() as u64
}

/// Every wasm, JS and CSS file in the build, anywhere under `dist/`.
fn all_assets(dist: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("dist is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "wasm" || e == "js" || e == "css") {
                out.push(path.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut all = Vec::new();
    walk(dist, dist, &mut all);
    all.sort();
    all
}

#[test]
fn every_wasm_js_and_css_file_of_the_build_fits_the_gzip_budget() {
    let dist = e2e::dist_dir();
    let assets = all_assets(&dist);
    let html = std::fs::read_to_string(dist.join("index.html")).unwrap();
    assert_eq!(assets.iter().filter(|a| a.ends_with(".wasm")).count(), 1, "one wasm module: {assets:?}");
    // The service worker is the one file the page does not name: the app registers it (and
    // counts in the budget like every other script).
    assert!(assets.iter().any(|a| a == "sw.js"), "the service worker is in the build: {assets:?}");
    for a in assets.iter().filter(|a| *a != "sw.js") {
        assert!(html.contains(a.as_str()), "index.html names every asset the build made (no stale files): {a}");
    }
    assert!(!assets.iter().any(|a| a.ends_with(".gz")), "no compressed copies: the server compresses");
    let sizes: Vec<(String, u64)> = assets.iter().map(|a| (a.clone(), gzip_size(&dist.join(a)))).collect();
    let total: u64 = sizes.iter().map(|(_, s)| s).sum();
    println!("assets (gzip -9): {sizes:?}, total {total} bytes");
    assert!(total <= TOTAL_GZIP_BUDGET_BYTES, "the build is {total} gzip bytes, over the {TOTAL_GZIP_BUDGET_BYTES}-byte budget: {sizes:?}");
}

const T: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread")]
async fn the_ui_fetches_nothing_outside_the_gateways_origin() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    // Exercise the dock and the chat, so anything fetched on use would show up too.
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
    // The local gateway compresses what it serves: what crossed the wire fits the same budget.
    let wasm = b.js("const e = performance.getEntriesByType('resource').find(e => e.name.endsWith('.wasm')); return e ? [e.encodedBodySize, e.decodedBodySize] : null;").await;
    let (encoded, decoded) = (wasm[0].as_u64().unwrap(), wasm[1].as_u64().unwrap());
    assert!(encoded * 2 < decoded, "the wasm travelled compressed: {encoded} of {decoded} bytes");
    let sent = b.js("return performance.getEntriesByType('resource').reduce((n, e) => n + e.encodedBodySize, 0);").await;
    assert!(sent.as_u64().unwrap() <= TOTAL_GZIP_BUDGET_BYTES, "everything fetched, over the wire: {sent} bytes");
    // The WebSocket goes to the page's own host too.
    let status = b.js("return document.body.innerText").await;
    assert!(
        !status.as_str().unwrap_or_default().contains("ws://") || status.as_str().unwrap().contains(&origin.replace("http://", "ws://")),
        "WebSocket URL is the gateway's"
    );
}
