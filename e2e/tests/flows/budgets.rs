//! Deterministic budgets (bytes and counts, never wall-clock times): the size of what the
//! browser fetches, and that nothing is fetched from any origin other than the gateway's.
//! Speed is measured by `make bench`, not here.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use serde_json::json;

/// Gzip -9 bytes of every wasm, JS and CSS file in the build together, and of the page (which
/// carries the stylesheet and the loader). A ratchet: it sits just
/// above the last measured build. Lower it when the bundle shrinks; raise it only with the reason
/// in the commit that does. The size history is in `docs/performance-history.md` and the commit log.
/// Raised 922 → 965 KB by the split of the app's views (2026-12-06): the split-off modules are
/// compressed one by one, and each carries its own types and imports, so the same code is 43 KB
/// more in separate files than inside the one module (what a first visit fetches fell 52 KB).
/// Lowered to 957.5 KB by one instance of the standard sort (`model::order`) and the views moved
/// to split modules after it; raised to 958.5 KB by the rows queued for other gateways drawn on
/// first use (the build +1.5 KB, a first visit −4.2 KB), and to 959 KB by one Web Push
/// reconcile at a time and the conversation menu drawn on any opening (+0.3 KB). Lowered to
/// 929 KB by markdown as one of the app's split modules (2026-12-07): its own module had carried
/// its own copies of the standard library's and serde's code, and its glue.
const TOTAL_GZIP_BUDGET_BYTES: u64 = 929_000;

/// What a first visit moves over the wire when the real OpenClaw gateway serves the build from
/// its `controlUi.root`: the page compressed (the gateway compresses only HTML, counted here as
/// gzip -6, its level), and every other file it names for every load exactly as built, since it
/// compresses nothing else. The files kept on use are no part of it: the app's split modules
/// (markdown among them), fetched when a view first needs them, and the early module, which a
/// later visit starts once the service worker holds it.
/// A ratchet, like the one above. The aim is at most half of the incumbent's 1,482 KB (`make
/// bench`, benchmark 8), 741 KB. Issues 38 and 39 took it to 798 KB; splitting off the views a
/// first visit does not show (`components::on_use`: the approval card, tool cards and live runs,
/// a message's actions, the palette, receipts, the sub-agents panel, the notification setting,
/// the away card, the export) brought it back to 745 KB; closing the notifications of requests
/// that ended (`state::attention`) and the pane's top (the header and the sub-agents kept in
/// view together) took it to 745.6 KB, and the export's fallible load back to 744.9 KB. One
/// instance of the standard library's sort for every list of rows (`model::order`), a message's
/// saved files, the header's menu and rename form drawn on first use, and Web Push reconciled by
/// the `reach` module only for a browser that holds a subscription took it to 721.5 KB, below
/// the 721.7 KB of the day issue 38 (the conversation tools) began; the rows queued for other
/// gateways, drawn on first use, to 717.3 KB. Then (2026-12-07) to 645.5 KB, within the 646 KB
/// that the live-runs issue set: the early module (63.7 KB, and its glue in the page) is kept on
/// use and started on later visits, once the service worker holds it; markdown became one of
/// the app's split modules, its glue out of the page; the page's HTML comments go at build.
const FIRST_VISIT_WIRE_BUDGET_BYTES: u64 = 646_000;

fn gzip_level(file: &Path, level: &str) -> Vec<u8> {
    let out = Command::new("gzip").args([level, "-c", "-n"]).arg(file).output().expect("gzip runs");
    assert!(out.status.success(), "gzip failed on {}", file.display());
    out.stdout
}

/// The files the page loads, as its `<meta name=ocui-files>` names them (what the service worker
/// keeps).
fn named_files(html: &str) -> Vec<String> {
    named_in(html, "ocui-files")
}

/// The files the page loads only when it needs them, as its `<meta name=ocui-files-on-use>`
/// names them (the app's split modules and the early module; the service worker keeps them once
/// used).
fn on_use_files(html: &str) -> Vec<String> {
    named_in(html, "ocui-files-on-use")
}

fn named_in(html: &str, meta: &str) -> Vec<String> {
    let at = format!("name={meta} content=\"");
    let start = html.find(&at).unwrap_or_else(|| panic!("the page has <meta name={meta}>")) + at.len();
    let words: Vec<&str> = html[start..html[start..].find('"').unwrap() + start].split_whitespace().collect();
    words.chunks(2).map(|pair| pair[0].to_string()).collect()
}

fn gzip_size(file: &Path) -> u64 {
    gzip_level(file, "-9").len() as u64
}

/// Every wasm, JS and CSS file in the build, anywhere under `dist/`, and the page.
fn all_assets(dist: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("dist is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "wasm" || e == "js" || e == "css" || e == "html") {
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
    // The app, the early module that sends the first `connect` while the app downloads (with its
    // glue, an ES module), and the app's split modules (`app-<what>-<hash>.wasm`), each fetched
    // the first time a view (or markdown) needs it.
    let modules: Vec<&String> = assets.iter().filter(|a| a.ends_with(".wasm")).collect();
    assert!(
        ["app-", "early-"].iter().all(|name| modules.iter().filter(|m| m.starts_with(name) && m.ends_with("_bg.wasm")).count() == 1),
        "one app and one early module: {assets:?}"
    );
    assert_eq!(assets.iter().filter(|a| a.starts_with("early-") && a.ends_with(".js")).count(), 1, "the early module's glue: {assets:?}");
    let parts: Vec<&&String> = modules.iter().filter(|m| !m.ends_with("_bg.wasm")).collect();
    assert!(parts.len() >= 8, "the app's views shown on first use are split off (the palette, the approval card, …): {assets:?}");
    assert!(parts.iter().any(|p| p.starts_with("app-markdown-")), "markdown is a split module: {assets:?}");
    // The service worker is the one file the page does not name: the app registers it (and
    // counts in the budget like every other script).
    assert!(assets.iter().any(|a| a == "sw.js"), "the service worker is in the build: {assets:?}");
    for a in assets.iter().filter(|a| *a != "sw.js" && *a != "index.html") {
        assert!(html.contains(a.as_str()), "index.html names every asset the build made (no stale files): {a}");
    }

    let sizes: Vec<(String, u64)> = assets.iter().map(|a| (a.clone(), gzip_size(&dist.join(a)))).collect();
    let total: u64 = sizes.iter().map(|(_, s)| s).sum();
    println!("assets (gzip -9): {sizes:?}, total {total} bytes");
    assert!(total <= TOTAL_GZIP_BUDGET_BYTES, "the build is {total} gzip bytes, over the {TOTAL_GZIP_BUDGET_BYTES}-byte budget: {sizes:?}");
}

/// The page loads each wasm module (the app, and the early module and split modules on use) by
/// its gzip'd copy, which holds exactly the module's bytes, and a first visit over the real
/// gateway fits the wire budget.
#[test]
fn a_first_visit_as_the_real_gateway_sends_it_fits_the_wire_budget() {
    let dist = e2e::dist_dir();
    let html = std::fs::read_to_string(dist.join("index.html")).unwrap();
    let files = named_files(&html);
    let wasm: Vec<&String> = files.iter().filter(|f| f.contains(".wasm")).collect();
    assert!(
        wasm.len() == 1 && wasm.iter().all(|w| w.starts_with("app-") && w.ends_with("_bg.wasm.gz")),
        "every load fetches the gzip'd copy of the app's module only: {files:?}"
    );
    let on_use = on_use_files(&html);
    let early: Vec<&String> = on_use.iter().filter(|f| f.starts_with("early-")).collect();
    assert!(
        early.len() == 2
            && early.iter().any(|f| f.ends_with("_bg.wasm.gz"))
            && early.iter().any(|f| f.ends_with(".js"))
            && on_use.iter().any(|f| f.starts_with("app-markdown-"))
            && on_use.iter().all(|f| early.contains(&f) || f.starts_with("app-") && !f.ends_with("_bg.wasm.gz") && f.ends_with(".wasm.gz")),
        "the early module (its glue and its gzip'd wasm) and the app's split modules are loaded on use: {on_use:?}"
    );
    for packed in wasm.into_iter().chain(on_use.iter().filter(|f| f.ends_with(".gz"))) {
        let plain = dist.join(packed.trim_end_matches(".gz"));
        let unpacked = Command::new("gzip").args(["-d", "-c"]).arg(dist.join(packed)).output().expect("gzip runs");
        assert!(unpacked.status.success() && unpacked.stdout == std::fs::read(&plain).unwrap(), "{packed} unpacks to the wasm itself");
    }
    assert!(!html.contains("rel=stylesheet"), "the stylesheet is in the page, which the gateway compresses");

    let page = gzip_level(&dist.join("index.html"), "-6").len() as u64;
    let mut sizes = vec![("index.html (gzip -6)".to_string(), page)];
    // The service worker is fetched by the app's registration, not named by the page.
    for f in files.iter().map(String::as_str).chain(["sw.js"]) {
        sizes.push((f.to_string(), std::fs::metadata(dist.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")).len()));
    }
    let total: u64 = sizes.iter().map(|(_, s)| s).sum();
    println!("a first visit over the real gateway: {sizes:?}, total {total} bytes");
    assert!(
        total <= FIRST_VISIT_WIRE_BUDGET_BYTES,
        "a first visit is {total} bytes over the wire, over the {FIRST_VISIT_WIRE_BUDGET_BYTES}-byte budget: {sizes:?}"
    );
}

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
    // The page fetched the files it names (the wasm by its gzip'd copy) and no others: what the
    // wire budget above counts is what a browser loads.
    let html = std::fs::read_to_string(e2e::dist_dir().join("index.html")).unwrap();
    let named = named_files(&html);
    let on_use = on_use_files(&html);
    let fetched: Vec<String> = urls
        .iter()
        .filter_map(|u| u.strip_prefix(&format!("{origin}/")))
        .filter(|p| [".js", ".wasm", ".gz", ".css", ".svg"].iter().any(|e| p.ends_with(e)))
        .map(str::to_string)
        .collect();
    assert!(fetched.iter().any(|f| f.starts_with("app-") && f.ends_with("_bg.wasm.gz")), "the app came by its gzip'd copy: {fetched:?}");
    // A first visit does not fetch the early module: its bytes would compete with the app's.
    assert!(!fetched.iter().any(|f| f.starts_with("early-")), "the early module was fetched on a first visit: {fetched:?}");
    assert!(!fetched.iter().any(|f| f.ends_with(".wasm")), "the plain wasm was never fetched: {fetched:?}");
    // The page preloads the app's wasm and the loader's fetch takes that response over: one
    // request, not two (a preload the fetch did not match would double the first visit).
    let app_requests =
        b.js("return performance.getEntriesByType('resource').filter(e => /\\/app-[0-9a-f]+_bg\\.wasm\\.gz$/.test(e.name)).length;").await;
    assert_eq!(app_requests, json!(1), "the app's wasm was requested once, preload included: {fetched:?}");
    // The reply ("You said: hello origin") is plain prose: it needed no markdown module.
    assert!(
        !fetched.iter().any(|f| f.starts_with("app-markdown-")),
        "the markdown module was fetched for plain prose: {fetched:?}, for {}",
        b.js("return [...document.querySelectorAll('.md[data-md]')].map(e => e.textContent)").await
    );
    // Besides those, the split modules of the views this visit showed (a message's actions),
    // which the wire budget below counts as fetched.
    for f in &fetched {
        assert!(
            named.contains(f) || f.starts_with("app-") && on_use.contains(f),
            "{f} was fetched but the page names it neither among what every load fetches ({named:?}) nor among the app's split modules"
        );
    }
    // What every load fetches fits the first visit's budget; the split modules this visit's
    // views needed come on top (the question's receipt and the message's actions: what a first
    // visit that shows neither does not fetch).
    let resources = b.js("return performance.getEntriesByType('resource').map(e => [e.name, e.encodedBodySize])").await;
    let (mut every_load, mut on_first_use) = (0u64, 0u64);
    for r in resources.as_array().unwrap() {
        let name = r[0].as_str().unwrap().strip_prefix(&format!("{origin}/")).unwrap_or_default();
        let bytes = r[1].as_u64().unwrap();
        if on_use.iter().any(|f| f == name) { on_first_use += bytes } else { every_load += bytes }
    }
    assert!(
        every_load <= FIRST_VISIT_WIRE_BUDGET_BYTES,
        "what every load fetches, over the wire: {every_load} bytes (and {on_first_use} of split modules): {resources}"
    );
    assert!(on_first_use > 0, "the receipt and the message's actions came from split modules: {resources}");
    // The WebSocket goes to the page's own host too.
    let status = b.js("return document.body.innerText").await;
    assert!(
        !status.as_str().unwrap_or_default().contains("ws://") || status.as_str().unwrap().contains(&origin.replace("http://", "ws://")),
        "WebSocket URL is the gateway's"
    );
}

/// The markdown module is fetched the first time an agent's message needs it, once, and never
/// for plain prose; until it is there, the message shows as written.
#[tokio::test(flavor = "multi_thread")]
async fn the_markdown_module_is_fetched_once_when_a_message_first_needs_it() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let fetches = "return performance.getEntriesByType('resource').filter(e => new URL(e.name).pathname.startsWith('/app-markdown-')).map(e => new URL(e.name).pathname);";
    let say = |id: &str, seq: u64, text: &str| {
        let frame = json!({"type": "event", "event": "session.message", "payload": {"sessionKey": "agent:main:main", "message": {
            "role": "assistant", "content": [{"type": "text", "text": text}], "__openclaw": {"id": id, "seq": seq}}}});
        gw.hub().inject_raw(&frame.to_string());
    };
    say("plain", 10, "Plain words only: nothing to format here.");
    b.wait_text("[data-testid=message][data-role=assistant] .md p", T, |t| t.contains("nothing to format")).await;
    assert!(!b.exists(".md[data-md]").await, "plain prose is rendered at once");
    assert_eq!(b.js(fetches).await, json!([]), "no markdown module for plain prose");

    say("bold", 11, "Now **bold** and `code`.");
    b.wait_text(".md strong", T, |t| t == "bold").await;
    b.wait_markdown_rendered().await;
    say("more", 12, "- one\n- two");
    b.wait_text(".md li", T, |t| t == "one").await;
    b.wait_markdown_rendered().await;
    let fetched = b.js(fetches).await;
    let files = fetched.as_array().unwrap();
    assert!(
        files.len() == 1 && files[0].as_str().unwrap().ends_with(".wasm.gz"),
        "the markdown module was fetched once, by its gzip'd copy: {fetched}"
    );
    let html = std::fs::read_to_string(e2e::dist_dir().join("index.html")).unwrap();
    let name = files[0].as_str().unwrap().trim_start_matches('/').to_string();
    assert!(on_use_files(&html).contains(&name), "a module the page names for use: {name}");
}

/// A message whose markdown module cannot be fetched stays readable: its text as written (inert
/// text), with a note saying why; the next message tries again and renders once the module can
/// be fetched.
#[tokio::test(flavor = "multi_thread")]
async fn markdown_without_its_module_shows_as_written_and_the_next_message_tries_again() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.cdp("Network.enable", json!({})).await;
    b.cdp("Network.setBlockedURLs", json!({"urls": ["*/app-markdown-*"]})).await;
    let say = |id: &str, seq: u64, text: &str| {
        let frame = json!({"type": "event", "event": "session.message", "payload": {"sessionKey": "agent:main:main", "message": {
            "role": "assistant", "content": [{"type": "text", "text": text}], "__openclaw": {"id": id, "seq": seq}}}});
        gw.hub().inject_raw(&frame.to_string());
    };
    say("blocked", 20, "Some **bold** <img src=x onerror=window.__xss=1> words");
    let note = b.wait_text(".md[data-md=failed] .md-note", T, |t| !t.is_empty()).await;
    assert_eq!(note, "Shown as written: the formatting could not be loaded.");
    let shown = b.js("const m = document.querySelector('.md[data-md=failed]'); return [m.querySelector('.md-source').textContent, m.querySelectorAll('strong, img').length, window.__xss || 0];").await;
    assert_eq!(shown, json!(["Some **bold** <img src=x onerror=window.__xss=1> words", 0, 0]), "as written, inert");

    b.cdp("Network.setBlockedURLs", json!({"urls": []})).await;
    // The page tries again at most every 3 s after a failure (a reply streaming meanwhile does
    // not fetch it on every update): the next message comes later than that.
    tokio::time::sleep(Duration::from_millis(3_200)).await;
    say("unblocked", 21, "Now *it* loads");
    b.wait_text(".md em", T, |t| t == "it").await;
    b.wait_gone(".md[data-md=pending]", T).await;
}

/// An approval whose card's code cannot be fetched (the gateway gone, or a newer build there)
/// says so where the card goes, with *Reload page*, and offers no decision; once the module can
/// be fetched, *Reload page* brings the card, and the approval is still pending.
#[tokio::test(flavor = "multi_thread")]
async fn an_approval_whose_card_cannot_be_fetched_says_so_and_decides_nothing() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.cdp("Network.enable", json!({})).await;
    b.cdp("Network.setBlockedURLs", json!({"urls": ["*/app-requests-*"]})).await;
    let mut agent = gw.agent().await;
    let id = e2e::approvals::raise_exec(&mut agent, "/usr/bin/true split-module", json!({})).await;
    let note = b.wait_text("[data-testid=not-loaded]", T, |t| !t.is_empty()).await;
    assert!(note.starts_with("This part of the page could not be loaded from the gateway."), "{note}");
    let buttons = b.js("return [...document.querySelectorAll('button')].map(e => e.textContent.trim())").await;
    assert!(
        !buttons
            .as_array()
            .unwrap()
            .iter()
            .any(|t| ["Allow once", "Deny", "Always allow"].iter().any(|d| t.as_str().unwrap().starts_with(d))),
        "no decision is offered without the card: {buttons}"
    );
    assert_eq!(e2e::approvals::record(&mut agent, &id).await["status"], "pending");

    b.cdp("Network.setBlockedURLs", json!({"urls": []})).await;
    b.click_button("Reload page").await;
    b.wait_text(&format!("{} [data-testid=approval-command]", e2e::approvals::card(&id)), T, |t| t.contains("split-module")).await;
    b.find_xpath("//button[normalize-space()='Allow once']", T).await;
    assert!(!b.exists("[data-testid=not-loaded]").await);
    assert_eq!(e2e::approvals::record(&mut agent, &id).await["status"], "pending", "nothing was decided");
}
