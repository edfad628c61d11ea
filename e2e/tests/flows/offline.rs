//! The page and the conversation offline: a reload with the gateway stopped opens the app from
//! its service worker, shows the saved copy of the conversation, and takes an answer into the
//! outbox, which is sent exactly once when the gateway is back. A new build served later
//! replaces the cached one, and the running page says so.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use serde_json::json;

const MAIN: &str = "agent:main:main";
const EXPECTED: &str = "> Which environment should I use?\n\nProduction\n\n> Which checks should run?\n\nunit";

async fn user_texts(gw: &LocalGateway, n: usize) -> Vec<String> {
    e2e::wait_user_texts(gw, MAIN, n).await
}

async fn count_messages(b: &Browser, text: &str) -> usize {
    b.js(&format!(
        "return [...document.querySelectorAll('[data-testid=message]')].filter(m => m.textContent.includes({})).length;",
        json!(text)
    ))
    .await
    .as_u64()
    .unwrap_or(0) as usize
}

/// Seals `dir/sw.js` to `dir/index.html` as the build does (scripts/seal-worker.mjs), for a
/// changed copy of the build.
fn seal_worker(dir: &std::path::Path) {
    let out = std::process::Command::new("node")
        .arg(e2e::repo_root().join("scripts/seal-worker.mjs"))
        .arg(dir)
        .output()
        .expect("node runs scripts/seal-worker.mjs");
    assert!(out.status.success(), "seal-worker failed: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// A copy of the build in a temporary directory (for a test that changes it while it is served).
fn copy_of_the_build() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(e2e::dist_dir()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

async fn reload_offline_then_answer_once_back(width: u32, shot: &str) {
    let mut gw = LocalGateway::start().await;
    let b = Browser::start_sized(width, 844).await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.send_message("hello").await;
    b.wait_text("[data-testid=message][data-role=assistant]", T, |t| t.contains("You said: hello")).await;
    b.send_message("async please").await;
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    b.wait_gone("[data-testid=stream]", T).await;
    let cached = b.wait_for_shell_cache().await;
    b.wait_for_saved_copy(MAIN, "Which checks should run?").await;
    // The worker keeps the page and the files it names, nothing else (no socket, no API).
    for url in cached.as_array().unwrap() {
        let url = url.as_str().unwrap();
        let path = url.trim_start_matches(&gw.base());
        assert!(
            path == "/" || [".js", ".wasm.gz", ".svg"].iter().any(|e| path.ends_with(e)),
            "the cache holds only the app's files: {cached}"
        );
    }

    let port = gw.port;
    gw.stop().await;
    b.client.refresh().await.expect("the page reloads from its service worker");
    // The app, not the browser's error page: its saved copy, marked as such, and the dock.
    let banner = b.wait_text("[data-testid=saved-copy]", T, |t| !t.is_empty()).await;
    assert!(banner.starts_with("Saved copy, last confirmed by the gateway at "), "{banner}");
    b.wait_text("[data-testid=message][data-role=assistant]", T, |t| t.contains("You said: hello")).await;
    assert_eq!(count_messages(&b, "async please").await, 1);
    b.wait_text("[data-testid=async-summary]", T, |t| t.contains("Waiting for your answer")).await;
    assert_ne!(b.js("return document.querySelector('[data-testid=connection-status]').textContent;").await, json!("Connected"));
    b.screenshot(&format!("{shot}-saved-copy")).await;

    // An answer given offline goes into the outbox.
    b.click_button("Expand question").await;
    b.option("Production").await.click().await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.click_button("Submit").await;
    b.wait_text("[data-testid=async-summary]", T, |t| t.contains("queued") || t.contains("Waiting for reconnect")).await;
    assert_eq!(gw.port, port);

    // The gateway comes back: the saved copy gives way to fresh history, without duplicates,
    // and the answer is sent exactly once.
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    b.wait_text("[data-testid=async-summary]", T, |t| t.starts_with("Answer sent")).await;
    b.wait_gone("[data-testid=saved-copy]", T).await;
    assert_eq!(user_texts(&gw, 3).await, vec!["hello".to_string(), "async please".to_string(), EXPECTED.to_string()]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(gw.gateway().store.user_texts(MAIN).unwrap().len(), 3, "nothing was sent twice");
    assert_eq!(count_messages(&b, "async please").await, 1, "fresh history replaced the saved copy without duplicates");
    assert_eq!(count_messages(&b, "You said: hello").await, 1);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_with_the_gateway_stopped_shows_the_saved_copy_and_the_answer_is_sent_once_it_is_back() {
    reload_offline_then_answer_once_back(1000, "offline-1000").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_at_390_px() {
    reload_offline_then_answer_once_back(390, "offline-390").await;
}

/// A build served after the page was cached replaces it on the next load, and the running old
/// page says a newer one is ready instead of going on as if it were current.
#[tokio::test(flavor = "multi_thread")]
async fn a_newer_build_replaces_the_cached_one_and_the_old_page_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let copy = |to: &std::path::Path| {
        for entry in std::fs::read_dir(e2e::dist_dir()).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    };
    let old = dir.path().join("old");
    let new = dir.path().join("new");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    copy(&old);
    copy(&new);
    // The new build: its app wasm under a new name (as every real build has), and a marker.
    let wasm = std::fs::read_dir(&new)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("app-") && n.ends_with("_bg.wasm"))
        .unwrap();
    let renamed = wasm.replace("_bg.wasm", "-new_bg.wasm");
    std::fs::rename(new.join(&wasm), new.join(&renamed)).unwrap();
    // The page loads the wasm by its gzip'd copy (src/loader.js).
    std::fs::rename(new.join(format!("{wasm}.gz")), new.join(format!("{renamed}.gz"))).unwrap();
    let index = std::fs::read_to_string(new.join("index.html")).unwrap();
    assert!(index.contains("<title>") && index.contains(&wasm), "{index}");
    std::fs::write(
        new.join("index.html"),
        index.replace(&wasm, &renamed).replacen("<title>", "<meta name=e2e-build content=new><title>", 1),
    )
    .unwrap();
    // As every real build does, it comes with its own service worker, sealed to its page.
    seal_worker(&new);

    let mut gw = LocalGateway::start_with_ui_root(&old).await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.wait_for_shell_cache().await;
    let port = gw.port;
    gw.stop().await;
    b.client.refresh().await.unwrap();
    b.wait_text("[data-testid=connection-status]", T, |t| t != "Connected" && !t.is_empty()).await;
    assert!(!b.exists("[data-testid=update-ready]").await);

    gw.ui_root = new.clone();
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    let banner = b.wait_text("[data-testid=update-ready]", T, |t| !t.is_empty()).await;
    assert!(banner.starts_with("A newer version of this page is ready."), "{banner}");
    assert_eq!(b.js("return !!document.querySelector('meta[name=e2e-build]');").await, json!(false), "the old page is still running");
    b.click_button("Reload").await;
    let deadline = tokio::time::Instant::now() + T;
    while b.js("return !!document.querySelector('meta[name=e2e-build]');").await != json!(true) {
        assert!(tokio::time::Instant::now() < deadline, "the reload did not open the new build");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    b.wait_connected().await;
    assert!(!b.exists("[data-testid=update-ready]").await);
    // The worker now holds the new build's files and none of the old one's.
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let cached = b.wait_for_shell_cache().await;
        let names: Vec<&str> = cached.as_array().unwrap().iter().filter_map(|u| u.as_str()).collect();
        if names.iter().any(|u| u.ends_with(&format!("{renamed}.gz"))) && !names.iter().any(|u| u.ends_with(&format!("/{wasm}.gz"))) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the cache should hold the new build's wasm and not the old one's: {cached}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_poisoned_cache_entry_is_never_served_and_only_the_apps_pages_get_the_shell() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.wait_for_shell_cache().await;
    // A same-origin script (an XSS, a malicious page under the origin) rewrites the cached app
    // code (the wasm; the JS glue is inside the page) to run its own code on the next load.
    let poisoned = b
        .js_async(
            "const c = await caches.open('ocui-shell-v1');
             const key = (await c.keys()).map(r => r.url).find(u => /\\/app-[^/]*_bg\\.wasm\\.gz$/.test(u));
             await c.put(key, new Response('pwned', {headers: {'content-type': 'application/gzip'}}));
             return key;",
        )
        .await;
    assert!(poisoned.as_str().is_some_and(|k| k.ends_with("_bg.wasm.gz")), "{poisoned}");

    // Online: the page the gateway serves names the real wasm's hash; the poisoned bytes do not
    // match, so they are never used (the app starts), and the cache holds the real wasm again.
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let body = b
            .js_async(&format!(
                "const r = await caches.match({poisoned}, {{cacheName: 'ocui-shell-v1'}}); return r ? (await r.arrayBuffer()).byteLength : null;"
            ))
            .await;
        if body.as_u64().is_some_and(|n| n > 100_000) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the cache still holds {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Offline: an app page still opens from the cache; any other page of the origin is not
    // answered with the app (the browser shows its own error).
    gw.stop().await;
    b.goto(&format!("{}/chat/main", gw.base())).await;
    b.wait_text("[data-testid=connection-status]", T, |t| !t.is_empty() && t != "Connected").await;
    match b.client.goto(&format!("{}/notes/report.txt", gw.base())).await {
        Err(e) => assert!(e.to_string().contains("ERR_CONNECTION_REFUSED"), "the browser's own error: {e}"),
        Ok(()) => {
            let app = b.js("return !!document.querySelector('meta[name=ocui-shell]');").await;
            assert_eq!(app, json!(false), "a page that is not the app's got the app shell");
        }
    }
    b.close().await;
}

const STATUS: &str = "[data-testid=connection-status]";

/// Writes a page into the worker's cache under the app's address, as any script of the origin
/// can. `make` is a JavaScript expression of `genuine`: the page the gateway serves (`from:
/// "network"`) or the page cached now (`from: "cache"`). Returns the page written.
async fn plant_page(b: &Browser, from: &str, make: &str) -> String {
    let source = match from {
        "network" => "await (await fetch('/', {cache: 'no-store'})).text()",
        _ => "await (await caches.match(key, {cacheName: 'ocui-shell-v1'})).text()",
    };
    let page = b
        .js_async(&format!(
            "const key = new URL('/', location.href).href;
             const genuine = {source};
             const page = {make};
             const c = await caches.open('ocui-shell-v1');
             await c.put(key, new Response(page, {{headers: {{'content-type': 'text/html; charset=utf-8'}}}}));
             return page;"
        ))
        .await;
    page.as_str().unwrap_or_else(|| panic!("planting failed: {page}")).to_string()
}

/// The page cached under the app's address (its text), or null.
async fn cached_page(b: &Browser) -> serde_json::Value {
    b.js_async(
        "const r = await caches.match(new URL('/', location.href).href, {cacheName: 'ocui-shell-v1'}); return r ? await r.text() : null;",
    )
    .await
}

/// What Chromium logged about the CSP since the last look.
async fn csp_lines(b: &Browser) -> Vec<String> {
    b.browser_log().await.into_iter().filter(|l| l.contains("Content Security Policy") || l.contains("Refused to")).collect()
}

/// A same-origin script (an XSS, or another page of the origin: on the real gateway its canvas
/// host shares it) writes its own page into the worker's cache under the app's address, and the
/// gateway goes down. A reload never shows that page: the worker serves a cached page only if
/// it hashes to what the build wrote into the worker, so it drops it and shows its own page
/// saying the gateway is unreachable, whose Reload opens the app once the gateway is back.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_planted_in_the_cache_is_never_served_offline() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.wait_for_shell_cache().await;
    // The worker the gateway serves is sealed to the page it serves (the build's last step).
    let sums = b
        .js_async(
            "const page = new Uint8Array(await crypto.subtle.digest('SHA-384', await (await fetch('/', {cache: 'no-store'})).arrayBuffer()));
             const worker = await (await fetch('/sw.js', {cache: 'no-store'})).text();
             const named = worker.match(/\"page\":\"(sha384-[^\"]+)\"/);
             return ['sha384-' + btoa(String.fromCharCode(...page)), named && named[1]];",
        )
        .await;
    assert!(sums[0].is_string() && sums[0] == sums[1], "sw.js names the SHA-384 of the page: {sums}");

    // The forged page: the app's own page (it carries the app's marker) with the attacker's
    // script and a visible mark at its end.
    let forged = plant_page(
        &b,
        "network",
        "genuine.replace(/<\\/body>\\s*<\\/html>\\s*$/, '<p id=forged>FORGED</p><script>window.__forged = 1</script></body></html>')",
    )
    .await;
    assert!(forged.contains("id=forged") && forged.contains("ocui-shell"), "the forged page was planted");

    let port = gw.port;
    gw.stop().await;
    b.client.refresh().await.expect("the page reloads with the gateway down");
    // Whichever page comes up: the worker's offline page, or the forged one.
    let shown = b
        .wait_js(
            "const e = document.querySelector('[data-testid=sw-offline], #forged'); return e ? (e.id || e.dataset.testid) : null;",
            |v| v.is_string(),
        )
        .await;
    assert_eq!(shown, json!("sw-offline"), "the page planted in the cache was served");
    let title = b.wait_text("[data-testid=sw-offline] h1", T, |t| !t.is_empty()).await;
    assert_eq!(title, "The gateway is unreachable");
    let reason = b.wait_text("[data-testid=sw-offline-reason]", T, |t| !t.is_empty()).await;
    assert!(reason.contains("The connection to it failed."), "{reason}");
    assert!(!b.exists("#forged").await, "the forged page was shown");
    assert_eq!(b.js("return window.__forged === undefined;").await, json!(true), "the forged page's script ran");
    b.screenshot("offline-planted-page-refused").await;
    // The worker dropped it.
    b.wait_js(
        "const r = await caches.match(new URL('/', location.href).href, {cacheName: 'ocui-shell-v1'}); return r === undefined;",
        |v| v == &json!(true),
    )
    .await;

    // The gateway is back: the offline page's Reload opens the app, and the worker keeps the
    // gateway's page again.
    gw.restart_on(port).await;
    b.click_button("Reload").await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    assert!(!b.exists("#forged").await);
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let page = cached_page(&b).await;
        if page.as_str().is_some_and(|p| p.contains("ocui-shell") && !p.contains("FORGED")) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the worker did not keep the gateway's page again");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    b.close().await;
}

/// The real gateway writes its attributes on the page's `<html>` tag (its base path, whether its
/// terminal is enabled, and an environment when one is configured), so the page it serves is
/// the build's page with exactly those added. Cached that way, it opens offline, under the CSP
/// the worker sets (the page's own inline scripts by their hashes, nothing else). The same page
/// naming another base path is not the build's page: it is dropped, never served.
#[tokio::test(flavor = "multi_thread")]
async fn the_page_as_the_real_gateway_sends_it_opens_offline_and_with_another_base_path_it_does_not() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.wait_for_shell_cache().await;
    let real = plant_page(
        &b,
        "network",
        "genuine.replace('<html', '<html data-openclaw-control-ui-base-path=\"\" data-openclaw-terminal-enabled=\"true\" data-openclaw-environment=\"{&quot;label&quot;:&quot;e2e&quot;}\"')",
    )
    .await;
    assert!(real.contains("<html data-openclaw-control-ui-base-path=\"\" data-openclaw-terminal-enabled=\"true\""), "planted");

    gw.stop().await;
    csp_lines(&b).await;
    b.client.refresh().await.unwrap();
    b.wait_text(STATUS, T, |t| !t.is_empty() && t != "Connected").await;
    assert!(!b.exists("[data-testid=sw-offline]").await);
    assert_eq!(
        b.js("return document.documentElement.getAttribute('data-openclaw-terminal-enabled');").await,
        json!("true"),
        "the page as planted"
    );
    // The app started offline under the worker's CSP without a violation; and that CSP is in
    // force: an inline script that is not the page's own does not run.
    assert_eq!(csp_lines(&b).await, Vec::<String>::new(), "CSP violations of the cached page");
    let ran = b
        .js_async(
            "const s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.head.append(s);
             await new Promise((r) => setTimeout(r, 100)); return window.__inline === 1;",
        )
        .await;
    assert_eq!(ran, json!(false), "an inline script the page does not name ran: no CSP on the cached page");
    assert!(!csp_lines(&b).await.is_empty(), "the refused inline script is logged");
    b.screenshot("offline-real-gateway-page").await;

    // The same page naming another base path than the worker's scope.
    let elsewhere = plant_page(
        &b,
        "cache",
        "genuine.replace('data-openclaw-control-ui-base-path=\"\"', 'data-openclaw-control-ui-base-path=\"/elsewhere\"')",
    )
    .await;
    assert!(elsewhere.contains("data-openclaw-control-ui-base-path=\"/elsewhere\""), "planted");
    b.client.refresh().await.unwrap();
    b.wait_text("[data-testid=sw-offline] h1", T, |t| t == "The gateway is unreachable").await;
    assert_eq!(cached_page(&b).await, json!(null), "the page naming another base path was dropped");
    b.close().await;
}

/// A gateway that is slow to answer is waited for: a reload shows the page the gateway sends,
/// however long it takes, never the cached one instead (the worker used to show the cached page
/// after 4 s). The gateway's answer is held by the test, not timed: the page it serves is a FIFO,
/// so its read waits until the test writes the page into it, 6 s after the gateway began to
/// read it; the page written carries a mark the cached one has not. A 5xx, by contrast, is an
/// outage: the cached page opens.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_gateway_is_waited_for_instead_of_the_cached_page() {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;

    let root = copy_of_the_build();
    let index = root.path().join("index.html");
    let genuine = std::fs::read_to_string(&index).unwrap();
    let mut gw = LocalGateway::start_with_ui_root(root.path()).await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.wait_for_shell_cache().await;

    // From now on the gateway's read of the page waits for the test.
    let real = root.path().join("index.real");
    let fifo = root.path().join("index.fifo");
    std::fs::rename(&index, &real).unwrap();
    let path = std::ffi::CString::new(index.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads a NUL-terminated path and creates a file; nothing else is touched.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0, "mkfifo: {}", std::io::Error::last_os_error());

    let client = b.client.clone();
    let reload = tokio::spawn(async move { client.refresh().await });
    // A non-blocking open for writing succeeds once a reader has the FIFO open: the gateway
    // is reading the page for the reload.
    let deadline = tokio::time::Instant::now() + T;
    let held = loop {
        match std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&index) {
            Ok(f) => break f,
            Err(e) => {
                assert!(tokio::time::Instant::now() < deadline, "the reload never reached the gateway ({e})");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(!reload.is_finished(), "the reload ended while the gateway had not answered");
    let from_network = genuine.replacen("<title>", "<meta name=e2e-from-network content=1><title>", 1);
    let index_path = index.clone();
    tokio::task::spawn_blocking(move || {
        let mut w = std::fs::OpenOptions::new().write(true).open(&index_path).unwrap();
        drop(held);
        w.write_all(from_network.as_bytes()).unwrap();
    })
    .await
    .unwrap();
    // The page is a file again; a reader that opened the FIFO after that write gets nothing.
    std::fs::rename(&index, &fifo).unwrap();
    std::fs::rename(&real, &index).unwrap();
    if let Ok(f) = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&fifo) {
        drop(f);
    }

    tokio::time::timeout(T, reload).await.expect("the reload ends once the gateway answers").unwrap().unwrap();
    assert_eq!(b.js("return !!document.querySelector('meta[name=e2e-from-network]');").await, json!(true), "the page came from the cache");
    b.wait_connected().await;

    // A 5xx is an outage too: without its page the gateway answers 503, and the worker's own
    // build opens from the cache (the page served above is not this worker's build, so it was
    // not kept). The gateway is up: the app connects.
    std::fs::rename(&index, &real).unwrap();
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    assert_eq!(b.js("return !!document.querySelector('meta[name=e2e-from-network]');").await, json!(false));
    assert!(!b.exists("[data-testid=sw-offline]").await);
    std::fs::rename(&real, &index).unwrap();
    gw.stop().await;
    b.close().await;
}
