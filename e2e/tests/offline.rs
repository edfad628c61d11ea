//! The page and the conversation offline: a reload with the gateway stopped opens the app from
//! its service worker, shows the saved copy of the conversation, and takes an answer into the
//! outbox, which is sent exactly once when the gateway is back. A new build served later
//! replaces the cached one, and the running page says so.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::browser::Browser;
use serde_json::json;

const T: Duration = Duration::from_secs(20);
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

async fn reload_offline_then_answer_once_back(width: u32, shot: &str) {
    let mut gw = LocalGateway::start().await;
    let b = Browser::start_sized(width, 844).await;
    b.goto(&gw.ui_url()).await;
    b.wait_text("[data-testid=connection-status]", T, |t| t == "Connected").await;
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
    b.wait_text("[data-testid=connection-status]", Duration::from_secs(40), |t| t == "Connected").await;
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
    // The page loads the wasm by its gzip'd copy (Trunk.toml's loader).
    std::fs::rename(new.join(format!("{wasm}.gz")), new.join(format!("{renamed}.gz"))).unwrap();
    let index = std::fs::read_to_string(new.join("index.html")).unwrap();
    assert!(index.contains("<title>") && index.contains(&wasm), "{index}");
    std::fs::write(
        new.join("index.html"),
        index.replace(&wasm, &renamed).replacen("<title>", "<meta name=e2e-build content=new><title>", 1),
    )
    .unwrap();

    let mut gw = LocalGateway::start_with_ui_root(&old).await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_text("[data-testid=connection-status]", T, |t| t == "Connected").await;
    b.wait_for_shell_cache().await;
    let port = gw.port;
    gw.stop().await;
    b.client.refresh().await.unwrap();
    b.wait_text("[data-testid=connection-status]", T, |t| t != "Connected" && !t.is_empty()).await;
    assert!(!b.exists("[data-testid=update-ready]").await);

    gw.ui_root = new.clone();
    gw.restart_on(port).await;
    b.wait_text("[data-testid=connection-status]", Duration::from_secs(40), |t| t == "Connected").await;
    let banner = b.wait_text("[data-testid=update-ready]", T, |t| !t.is_empty()).await;
    assert!(banner.starts_with("A newer version of this page is ready."), "{banner}");
    assert_eq!(b.js("return !!document.querySelector('meta[name=e2e-build]');").await, json!(false), "the old page is still running");
    b.click_button("Reload").await;
    let deadline = tokio::time::Instant::now() + T;
    while b.js("return !!document.querySelector('meta[name=e2e-build]');").await != json!(true) {
        assert!(tokio::time::Instant::now() < deadline, "the reload did not open the new build");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    b.wait_text("[data-testid=connection-status]", T, |t| t == "Connected").await;
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
    b.wait_text("[data-testid=connection-status]", T, |t| t == "Connected").await;
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
    b.wait_text("[data-testid=connection-status]", T, |t| t == "Connected").await;
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
