//! The UI in real Chromium against the local gateway: connect, bad tokens, a stopped
//! gateway, and hostile frames.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;

const STATUS: &str = "[data-testid=connection-status]";

#[tokio::test(flavor = "multi_thread")]
async fn ui_connects_and_shows_server_version_and_granted_scopes() {
    let gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let scopes = b.wait_content("[data-testid=granted-scopes]", T, |t| t.contains("operator.questions")).await;
    assert_eq!(scopes, "operator.read, operator.write, operator.approvals, operator.questions, operator.admin");
    b.wait_content("[data-testid=server-version]", T, |t| t == env!("CARGO_PKG_VERSION")).await;
    // The token left the address bar and lives only in this tab's sessionStorage.
    let url = b.current_url().await;
    assert!(!url.contains("token"), "token still in the URL: {url}");
    let stores = b
        .js("return {local: JSON.stringify(Object.entries(localStorage)), session: JSON.stringify(Object.entries(sessionStorage))};")
        .await;
    assert!(!stores["local"].as_str().unwrap().contains(&gw.token), "token in localStorage");
    assert!(stores["session"].as_str().unwrap().contains(&gw.token), "token not kept in sessionStorage");
    b.screenshot("connected-1280").await;
    b.close().await;
}

/// The page's loader opens the gateway's socket while the wasm downloads, and the app connects on
/// that one: the gateway sees a single socket, not a second one opened after the download.
#[tokio::test(flavor = "multi_thread")]
async fn the_app_connects_on_the_socket_the_loader_opened_during_the_download() {
    let gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.wait_content("[data-testid=granted-scopes]", T, |t| t.contains("operator.questions")).await;
    let taken = b.js("return performance.getEntriesByName('ocui-early-socket-taken').length;").await;
    assert_eq!(taken, serde_json::json!(1), "the app took the loader's socket");
    assert_eq!(b.js("return 'ocuiSocket' in window;").await, serde_json::json!(false));
    let accepted = gw.gateway().sockets_accepted.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(accepted, 1, "one socket for the page, not the loader's and then the app's");
    b.close().await;
}

/// On a visit whose service worker holds it, the page's early module signs and sends `connect`
/// and the dock's first listing on the loader's socket while the app's wasm is still on its way.
/// Here the app's wasm never comes (the page's `ocuiWasm` fails), and the gateway still answers
/// the early `connect` with `hello-ok` and the listing with the question: the frames the loader
/// keeps for the app.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_connect_goes_out_before_the_app_wasm_has_arrived() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    agent
        .request(
            "question.request",
            serde_json::json!({"questions": [{"questionId": "q", "header": "Early", "question": "Listed before the app came?", "options": [{"label": "Yes"}, {"label": "No"}]}], "timeoutMs": 120000}),
        )
        .await
        .unwrap();
    let b = Browser::start().await;
    b.hold_the_early_module(&gw.ui_url()).await;
    // The app's wasm comes from the worker's cache, which no network block reaches: the page's
    // handle on it fails instead.
    let hold_back =
        "Object.defineProperty(window, 'ocuiWasm', { get() { return Promise.reject(new Error('held back by the test')); }, set(_) {} });";
    b.cdp("Page.addScriptToEvaluateOnNewDocument", serde_json::json!({"source": hold_back})).await;
    let before = gw.gateway().sockets_accepted.load(std::sync::atomic::Ordering::Relaxed);
    b.client.refresh().await.unwrap();
    let kept = b
        .wait_js("return ((window.ocuiSocket || {}).messages || []).map((f) => JSON.parse(f));", |v| {
            v.as_array().is_some_and(|frames| ["connect:early", "early:1"].iter().all(|id| frames.iter().any(|f| f["id"] == *id)))
        })
        .await;
    let frames = kept.as_array().unwrap();
    let answer = |id: &str| frames.iter().find(|f| f["id"] == id).cloned().unwrap_or_default();
    assert_eq!(answer("connect:early")["payload"]["type"], "hello-ok", "{frames:?}");
    assert!(answer("early:1")["payload"].to_string().contains("Listed before the app came?"), "{frames:?}");
    assert_eq!(b.js("return performance.getEntriesByName('ocui-early-connect-sent').length;").await, serde_json::json!(1));
    // The app itself never started: its wasm was blocked, and the page says so.
    b.wait_text("[role=alert]", T, |t| t.contains("could not start")).await;
    assert_eq!(gw.gateway().sockets_accepted.load(std::sync::atomic::Ordering::Relaxed) - before, 1, "the loader's socket only");
    b.close().await;
}

/// With both modules arriving (the early one from the service worker, which holds it after the
/// earlier visits), the app takes the early module's `connect` and listing as its own: one
/// `connect` and one `question.list` leave the page, and the question the listing carried is on
/// screen.
#[tokio::test(flavor = "multi_thread")]
async fn the_app_takes_the_early_connect_and_its_listing_as_its_own() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    agent
        .request(
            "question.request",
            serde_json::json!({"questions": [{"questionId": "q", "header": "Early", "question": "Shown from the early listing?", "options": [{"label": "Yes"}, {"label": "No"}]}], "timeoutMs": 120000}),
        )
        .await
        .unwrap();
    let b = Browser::start().await;
    b.hold_the_early_module(&gw.ui_url()).await;
    let before = gw.gateway().sockets_accepted.load(std::sync::atomic::Ordering::Relaxed);
    // Every frame the page sends, recorded before any of its scripts runs.
    let record = "window.__sent = []; const send = WebSocket.prototype.send; WebSocket.prototype.send = function (d) { window.__sent.push(String(d)); return send.call(this, d); };";
    b.cdp("Page.addScriptToEvaluateOnNewDocument", serde_json::json!({"source": record})).await;
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Shown from the early listing?")).await;
    let sent: Vec<String> = serde_json::from_value(b.js("return window.__sent;").await).unwrap();
    let count = |needle: &str| sent.iter().filter(|f| f.contains(needle)).count();
    assert_eq!(count("\"method\":\"connect\""), 1, "one connect: {sent:?}");
    assert_eq!(count("\"id\":\"connect:early\""), 1, "the early module's: {sent:?}");
    assert_eq!(count("\"method\":\"question.list\""), 1, "listed once: {sent:?}");
    assert_eq!(gw.gateway().sockets_accepted.load(std::sync::atomic::Ordering::Relaxed) - before, 1, "one socket for the page");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_token_asks_for_the_token_and_the_right_one_connects() {
    let gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&format!("{}/#token=not-the-token", gw.base())).await;
    let problem = b.wait_text("[data-testid=auth-problem]", T, |t| !t.is_empty()).await;
    assert!(problem.contains("rejected this token"), "{problem}");
    b.wait_text(STATUS, T, |t| t == "Not connected: token needed").await;
    b.screenshot("wrong-token").await;
    let input = b.client.find(fantoccini::Locator::Css("input[name=token]")).await.unwrap();
    input.send_keys(&gw.token).await.unwrap();
    b.client.find(fantoccini::Locator::XPath("//button[normalize-space()='Connect']")).await.unwrap().click().await.unwrap();
    b.wait_connected().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_gateway_shows_reconnecting_with_the_next_attempt_and_recovers() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let port = gw.port;
    gw.stop().await;
    let text = b.wait_text(STATUS, T, |t| t.starts_with("Reconnecting — next attempt")).await;
    assert!(text.contains("attempt"), "{text}");
    b.screenshot("reconnecting").await;
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_and_unknown_frames_are_logged_and_ignored_and_the_connection_survives() {
    let gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.js("window.__warns = []; const w = console.warn.bind(console); console.warn = (...a) => { window.__warns.push(a.join(' ')); w(...a); };").await;
    let hub = &gw.running.as_ref().unwrap().gateway.hub;
    hub.inject_raw("{this is not json");
    hub.inject_raw(r#"{"type":"surprise","id":"1"}"#);
    hub.inject_raw(r#"{"type":"res","id":"nobody-asked","ok":true,"payload":{}}"#);
    let deadline = tokio::time::Instant::now() + T;
    let warns = loop {
        let w = b.js("return window.__warns;").await;
        let list: Vec<String> = w.as_array().unwrap().iter().map(|v| v.as_str().unwrap_or("").to_string()).collect();
        if list.len() >= 3 || tokio::time::Instant::now() > deadline {
            break list;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(warns.iter().any(|w| w.contains("ignored a malformed frame") && w.contains("not JSON")), "{warns:?}");
    assert!(warns.iter().any(|w| w.contains("unknown frame type `surprise`")), "{warns:?}");
    assert!(warns.iter().any(|w| w.contains("unknown request `nobody-asked`")), "{warns:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    b.wait_connected().await;
    assert_eq!(hub.count(), 1, "the UI kept its one connection");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn layout_holds_at_390px() {
    let gw = LocalGateway::start().await;
    let b = Browser::start_sized(390, 844).await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let overflow = b.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth;").await;
    assert_eq!(overflow.as_i64(), Some(0), "horizontal overflow at 390 px");
    b.screenshot("connected-390").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_to_another_gateway_asks_first_and_connects_there_only_after_a_click() {
    let own = LocalGateway::start().await;
    let other = LocalGateway::start().await;
    // The link's gateway sits behind a relay that records every frame sent to it.
    let relay = e2e::relay::Relay::start(format!("ws://127.0.0.1:{}", other.port)).await;
    let link_host = relay.url().trim_start_matches("ws://").to_string();
    let own_host = own.base().trim_start_matches("http://").to_string();
    let b = Browser::start().await;
    b.goto(&format!("{}/#token={}&gatewayUrl={}", own.base(), other.token, relay.url())).await;
    b.wait_text("[data-testid=gateway-switch-link]", T, |t| t == relay.url()).await;
    assert_eq!(b.wait_text("[data-testid=gateway-switch-current]", T, |t| !t.is_empty()).await, own_host);
    assert_eq!(b.wait_content("[data-testid=gateway-host]", T, |t| !t.is_empty()).await, own_host, "the status area names the host in use");
    let url = b.current_url().await;
    assert!(!url.contains("gatewayUrl") && !url.contains("token"), "the link's parameters left the address bar: {url}");
    assert!(relay.sent.lock().unwrap().is_empty(), "nothing went to the link's gateway before the click");
    b.screenshot("gateway-switch-asks").await;

    b.click_button(&format!("Switch to {link_host}")).await;
    b.wait_connected().await;
    assert_eq!(b.wait_content("[data-testid=gateway-host]", T, |t| !t.is_empty()).await, link_host);
    assert!(!relay.sent.lock().unwrap().is_empty(), "connected through the link's gateway");
    assert!(!b.exists("[data-testid=gateway-switch]").await);

    // A reload of this tab stays where the person chose, without asking again.
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    assert_eq!(b.wait_content("[data-testid=gateway-host]", T, |t| !t.is_empty()).await, link_host);
    assert!(!b.exists("[data-testid=gateway-switch]").await);
    b.close().await;

    // Keep current gateway: the page stays on its own, and the link's token was never stored.
    let b = Browser::start().await;
    b.goto(&format!("{}/#token={}&gatewayUrl={}", own.base(), other.token, relay.url())).await;
    b.wait_text("[data-testid=gateway-switch-link]", T, |t| t == relay.url()).await;
    b.click_button("Keep current gateway").await;
    assert!(!b.exists("[data-testid=gateway-switch]").await);
    assert_eq!(b.wait_content("[data-testid=gateway-host]", T, |t| !t.is_empty()).await, own_host);
    let session = b.js("return JSON.stringify(Object.entries(sessionStorage));").await;
    assert!(!session.as_str().unwrap().contains(&other.token), "the link's token is not kept: {session}");
    b.close().await;
}

/// The first `question.list` of a connection rides right behind its `connect`: the relay holds
/// every frame of the gateway (`hello-ok` too) from the page's `connect` until the page sends
/// `question.list`, so a page that waited for `hello-ok` before asking would never show the
/// question. The gateway queues what comes during its handshake and answers it after `hello-ok`.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_question_list_is_sent_behind_connect_before_hello_ok() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    agent
        .request(
            "question.request",
            serde_json::json!({"questions": [{"questionId": "q", "header": "Early", "question": "Asked before the page came?", "options": [{"label": "Yes"}, {"label": "No"}]}], "timeoutMs": 120000}),
        )
        .await
        .unwrap();
    let relay = e2e::relay::Relay::start(gw.ws()).await;
    relay.hold_between("\"method\":\"connect\"", "\"method\":\"question.list\"");
    let b = Browser::start().await;
    b.goto(&format!("{}/#token={}&gatewayUrl={}", gw.base(), gw.token, relay.url())).await;
    b.accept_gateway_switch(&relay.url()).await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Asked before the page came?")).await;
    let sent = relay.sent.lock().unwrap().clone();
    let at = |needle: &str| sent.iter().position(|f| f.contains(needle));
    let (connect, list) = (at("\"method\":\"connect\""), at("\"method\":\"question.list\""));
    assert!(connect.is_some() && list > connect, "connect, then question.list: {sent:?}");
    assert_eq!(sent.iter().filter(|f| f.contains("\"method\":\"question.list\"")).count(), 1, "listed once: {sent:?}");
    b.close().await;
}
