//! Our UI served by the real OpenClaw gateway 2026.9.6 through `gateway.controlUi.root`.
//! One gateway for the scenarios of the first test, run in order; the interrupted-input
//! scenario has its own test and gateway. Every scenario checks what the agent receives.

use std::time::Duration;

use e2e::browser::Browser;
use e2e::questions::{other_input, two_questions};
use e2e::real::RealGateway;
use e2e::{T, TURN};
use serde_json::{Value, json};

async fn receipt_for(b: &Browser, id: &str, accept: impl Fn(&str) -> bool) -> String {
    b.wait_text(&format!("[data-testid=question-receipt][data-question-id='{id}']"), T, accept).await
}

/// Waits until no run is active in the main session. The backend client reads its socket only
/// when asked, so after a long stretch of browser steps the gateway may have dropped it as a slow
/// reader: then it connects again.
async fn wait_idle(gw: &e2e::real::RealGateway, agent: &mut gateway::client::Client) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let params = json!({"sessionKey": "agent:main:main", "limit": 1});
        let h = match agent.request("chat.history", params.clone()).await {
            Err(e) if e.code == "TRANSPORT" => {
                eprintln!("the backend client's socket is gone ({}); connecting again", e.message);
                *agent = gw.agent().await;
                agent.request("chat.history", params).await.unwrap()
            }
            r => r.unwrap(),
        };
        if h["sessionInfo"]["hasActiveRun"] != json!(true) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "the real gateway's run did not end");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn our_ui_on_the_real_gateway() {
    let gw = tokio::task::spawn_blocking(RealGateway::start).await.unwrap();
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    // The real gateway refuses `connect` for a moment after start (retryable); the UI retries.
    b.wait_connected_within(Duration::from_secs(90)).await;
    b.wait_content("[data-testid=server-version]", Duration::from_secs(10), |t| t == "2026.9.6").await;
    let scopes = b.wait_content("[data-testid=granted-scopes]", Duration::from_secs(10), |t| !t.is_empty()).await;
    assert!(scopes.contains("operator.questions") && scopes.contains("operator.read"), "{scopes}");
    b.screenshot("real-gateway-connected").await;
    let mut agent = gw.agent().await;

    // 1. A two-step answer with multiSelect plus free text. While it waits, the tab's title
    // says so; a pasted key as the free text is held, and the gateway never sees it.
    let id = agent.request("question.request", two_questions(300_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    assert_eq!(b.client.title().await.unwrap(), "(1) Question waiting · OpenClaw Control");
    let key = "ghp_Xy7Qw3Er5Ty9Ui1Op3As5Df7Gh9Jk1Lz3Xc5Vb";
    other_input(&b).await.send_keys(key).await.unwrap();
    b.click_button("Next").await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.click_button("Submit").await;
    let held = b.wait_text("[data-testid=credential-held]", T, |t| !t.is_empty()).await;
    assert!(held.contains("a GitHub token"), "{held}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let still = agent.request("question.get", json!({"id": id})).await.unwrap();
    assert_eq!(still["question"]["status"], "pending", "the real gateway got nothing: {still}");
    b.click_button("Edit").await;
    b.click_button("Back").await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    b.js("const i = document.querySelector('.dock__other input[type=text]'); i.value = ''; i.dispatchEvent(new Event('input', { bubbles: true })); return null;").await;
    b.option("Staging (Recommended)").await.click().await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.option("Email").await.click().await.unwrap();
    b.option("Slack").await.click().await.unwrap();
    other_input(&b).await.send_keys("Only on weekdays").await.unwrap();
    b.click_button("Submit").await;
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 10000})).await.unwrap();
    assert_eq!(got["status"], "answered", "{got}");
    assert_eq!(got["answers"]["answers"]["deploy_target"], json!(["Staging (Recommended)"]));
    assert_eq!(got["answers"]["answers"]["notify"], json!(["Email", "Slack", "Only on weekdays"]));
    receipt_for(&b, &id, |t| t.starts_with("Answered")).await;
    b.screenshot("real-gateway-answered").await;

    // 2. Skip.
    let id = agent.request("question.request", two_questions(300_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    b.click_button("Skip").await;
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 10000})).await.unwrap();
    assert_eq!(got["status"], "cancelled", "{got}");
    receipt_for(&b, &id, |t| t.starts_with("Skipped")).await;

    // 3. Answered elsewhere.
    let id = agent.request("question.request", two_questions(300_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    agent
        .request("question.resolve", json!({"id": id, "answers": {"answers": {"deploy_target": ["Production"], "notify": ["Pager"]}}}))
        .await
        .unwrap();
    let r = receipt_for(&b, &id, |t| t.starts_with("Answered elsewhere")).await;
    assert!(r.contains("Production") && r.contains("Pager"), "{r}");

    // 4. Restore after reload.
    let id = agent.request("question.request", two_questions(300_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    b.option("Production").await.click().await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.option("Pager").await.click().await.unwrap();
    other_input(&b).await.send_keys("and the on-call lead").await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    b.client.refresh().await.unwrap();
    b.wait_connected_within(Duration::from_secs(60)).await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    assert_eq!(other_input(&b).await.prop("value").await.unwrap().as_deref(), Some("and the on-call lead"));
    b.click_button("Submit").await;
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 10000})).await.unwrap();
    assert_eq!(got["answers"]["answers"]["deploy_target"], json!(["Production"]), "{got}");
    assert_eq!(got["answers"]["answers"]["notify"], json!(["Pager", "and the on-call lead"]), "{got}");

    // 5. Expiry: nothing is sent on the person's behalf.
    let id = agent.request("question.request", two_questions(5_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 20000})).await.unwrap();
    assert_eq!(got["status"], "expired", "{got}");
    receipt_for(&b, &id, |t| t.starts_with("Expired")).await;

    // 6. The real ask_user tool over the attach MCP path.
    let tool = gw.ask_user_via_mcp(&mut agent).await;
    b.wait_text("[data-testid=step-progress]", Duration::from_secs(60), |t| t == "1/2").await;
    b.option("Staging (Recommended)").await.click().await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.option("Slack").await.click().await.unwrap();
    other_input(&b).await.send_keys("Only on weekdays").await.unwrap();
    b.click_button("Submit").await;
    let result = tokio::time::timeout(Duration::from_secs(60), tool).await.expect("ask_user returns").unwrap();
    assert_eq!(result["status"], "answered", "{result}");
    assert_eq!(result["answers"]["answers"]["deploy_target"], json!(["Staging (Recommended)"]), "{result}");
    assert_eq!(result["answers"]["answers"]["notify"], json!(["Slack", "Only on weekdays"]), "{result}");
    b.screenshot("real-gateway-ask-user").await;
    // All of the above ran under the real gateway's own CSP: Chromium reported no violation
    // (from page load on; the hostile-UI test shows this log does catch one).
    let log = b.browser_log().await;
    let csp: Vec<&String> = log.iter().filter(|l| l.contains("Content Security Policy") || l.contains("Refused to")).collect();
    assert!(csp.is_empty(), "CSP violations under the real gateway: {csp:?}");
    b.close().await;

    // 7. Chat through the outbox. Without a model the real gateway saves the user message
    // and then fails the run: confirmation comes from saved history, the failure is shown.
    // The real gateway's state dir is reused between runs: make this run's texts unique.
    let nonce = e2e::nonce();
    let hello = format!("hello from the outbox {nonce}");
    let lost = format!("ack lost on the way {nonce}");
    let dedupe = format!("dedupe me {nonce}");
    let relay = e2e::relay::Relay::start(format!("ws://127.0.0.1:{}", gw.port)).await;
    let b = Browser::start().await;
    b.goto(&format!("{}/?session=agent%3Amain%3Amain#token={}&gatewayUrl={}", gw.base(), e2e::real::TOKEN, relay.url())).await;
    // The link names another gateway (the relay): the page asks first, and goes there on a click.
    let relay_host = relay.url().trim_start_matches("ws://").to_string();
    b.accept_gateway_switch(&relay.url()).await;
    b.wait_connected_within(Duration::from_secs(60)).await;
    assert_eq!(b.wait_content("[data-testid=gateway-host]", T, |t| !t.is_empty()).await, relay_host);
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys(&hello).await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    // The gateway's first turn.
    b.wait_gone("[data-testid=outbox-row]", TURN).await;
    let failure =
        b.wait_text("[data-testid=stream][data-state=error], [data-testid=message][data-role=custom]", TURN, |t| !t.is_empty()).await;
    assert!(failure.contains("Run failed") || failure.contains("failed"), "the failed run is shown: {failure}");
    b.screenshot("real-gateway-chat-failed-run").await;

    // 8. A dropped acknowledgement: the relay forwards chat.send and cuts the socket before
    // the response. After reconnecting, history confirms it; the gateway holds it once.
    // Wait until the failed run is over: a message sent during a run only becomes a pending
    // input of that run (and ends "interrupted" when it fails).
    wait_idle(&gw, &mut agent).await;
    relay.drop_after("\"method\":\"chat.send\"");
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys(&lost).await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    b.wait_gone("[data-testid=outbox-row]", Duration::from_secs(60)).await;
    assert!(relay.dropped.load(std::sync::atomic::Ordering::SeqCst), "the relay cut the connection");
    let h = agent.request("chat.history", json!({"sessionKey": "agent:main:main", "limit": 200})).await.unwrap();
    let count =
        |text: &str| h["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user" && e2e::message_text(m) == text).count();
    assert_eq!(count(&hello), 1, "{h}");
    assert_eq!(count(&lost), 1, "{h}");

    // 9. The same key again (what Retry sends) hits the real gateway's dedupe.
    wait_idle(&gw, &mut agent).await;
    let key = format!("e2e-dedupe-{nonce}");
    let first = agent.request("chat.send", json!({"sessionKey": "agent:main:main", "message": dedupe, "idempotencyKey": key})).await;
    let again = agent.request("chat.send", json!({"sessionKey": "agent:main:main", "message": dedupe, "idempotencyKey": key})).await;
    eprintln!("first send: {first:?}\nsame key again: {again:?}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let h = agent.request("chat.history", json!({"sessionKey": "agent:main:main", "limit": 200})).await.unwrap();
    let n = h["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user" && e2e::message_text(m) == dedupe).count();
    assert_eq!(n, 1, "one saved message for one key: {h}");

    b.close().await;
    tokio::task::spawn_blocking(move || drop(gw)).await.unwrap();

    // 11. Served under `gateway.controlUi.basePath: "/ui"`, from a `--public-url /ui/` build:
    // every file comes from under /ui/, the socket connects, a question is answered, and the
    // gateway's CSP (which hashes trunk's inline loader) is never violated.
    let gw = tokio::task::spawn_blocking(|| RealGateway::start_serving(&e2e::dist_dir_ui(), "/ui")).await.unwrap();
    let b = Browser::start().await;
    b.goto(&format!("{}/ui/ask/pending#token={}", gw.base(), e2e::real::TOKEN)).await;
    b.wait_connected_within(Duration::from_secs(90)).await;
    // Visits before: the service worker holds the early module (kept on use) under the base
    // path, and the link below starts it.
    b.hold_the_early_module(&format!("{}/ui/", gw.base())).await;
    let mut agent = gw.agent().await;
    // The link names the older of two pending requests: only `/ui/ask/<id>` read as the app's
    // `/ask/<id>` opens that one (the dock alone would show the newer, a one-step question).
    let id = agent.request("question.request", two_questions(300_000)).await.unwrap()["id"].as_str().unwrap().to_string();
    agent
        .request("question.request", json!({"questions":[{"questionId":"other","header":"Other","question":"A newer question?","options":[{"label":"Yes"},{"label":"No"}]}],"timeoutMs":300000}))
        .await
        .unwrap();
    b.goto(&format!("{}/ui/ask/{id}#token={}", gw.base(), e2e::real::TOKEN)).await;
    b.wait_text("[data-testid=step-progress]", Duration::from_secs(60), |t| t == "1/2").await;
    assert!(!b.exists("[data-testid=conversation-header]").await, "the deep link shows that request alone");
    b.option("Production").await.click().await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.option("Email").await.click().await.unwrap();
    b.click_button("Submit").await;
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 10000})).await.unwrap();
    assert_eq!(got["answers"]["answers"]["deploy_target"], json!(["Production"]), "{got}");
    let files = b.js("return performance.getEntriesByType('resource').map(e => e.name);").await;
    let files: Vec<&str> = files.as_array().unwrap().iter().filter_map(Value::as_str).collect();
    // The loader fetches the gzip'd wasm (the real gateway does not compress a configured root).
    assert!(files.iter().any(|f| f.ends_with("_bg.wasm.gz")), "{files:?}");
    // The early module (its glue imported, its wasm by its gzip'd copy), from the base path too,
    // sent the first `connect` under the real gateway's CSP, and the app took it as its own.
    for end in [".js", "_bg.wasm.gz"] {
        assert!(files.iter().any(|f| f.starts_with(&format!("{}/ui/early-", gw.base())) && f.ends_with(end)), "early-…{end}: {files:?}");
    }
    assert_eq!(b.js("return performance.getEntriesByName('ocui-early-connect-sent').length;").await, json!(1));
    assert_eq!(b.js("return performance.getEntriesByName('ocui-early-socket-taken').length;").await, json!(1));
    let outside: Vec<&&str> = files.iter().filter(|f| !f.starts_with(&format!("{}/ui/", gw.base()))).collect();
    assert!(outside.is_empty(), "every file under the base path: {outside:?}");
    let log = b.browser_log().await;
    let csp: Vec<&String> = log.iter().filter(|l| l.contains("Content Security Policy") || l.contains("Refused to")).collect();
    assert!(csp.is_empty(), "CSP violations under /ui: {csp:?}");
    // A deep link hides the conversation rail: the panes take the whole width, not the rail's
    // column (they were squeezed into 16rem at 1280 px).
    let widths = b.js("return [document.querySelector('main.panes').getBoundingClientRect().width, innerWidth];").await;
    let (panes, page) = (widths[0].as_f64().unwrap(), widths[1].as_f64().unwrap());
    assert!(!b.exists(".workspace > .conversations").await && panes > page * 0.9, "the panes span the page without the rail: {widths}");
    b.screenshot("real-gateway-base-path").await;

    // 12. Offline under /ui: the service worker kept the page as the real gateway sends it (its
    // base path and terminal attributes on <html>), which is the build's page with exactly those
    // added, so with the gateway stopped a reload opens the app from it, under the worker's CSP.
    b.wait_for_shell_cache().await;
    let gw = tokio::task::spawn_blocking(move || {
        gw.stop();
        gw
    })
    .await
    .unwrap();
    b.client.refresh().await.expect("the page reloads with the real gateway stopped");
    b.wait_text("[data-testid=connection-status]", T, |t| !t.is_empty() && t != "Connected").await;
    assert!(!b.exists("[data-testid=sw-offline]").await, "the worker refused the page the real gateway sent");
    assert_eq!(b.js("return document.documentElement.getAttribute('data-openclaw-control-ui-base-path');").await, json!("/ui"));
    let log = b.browser_log().await;
    let csp: Vec<&String> = log.iter().filter(|l| l.contains("Content Security Policy") || l.contains("Refused to")).collect();
    assert!(csp.is_empty(), "CSP violations of the page from the worker's cache: {csp:?}");
    b.screenshot("real-gateway-base-path-offline").await;
    b.close().await;
    tokio::task::spawn_blocking(move || drop(gw)).await.unwrap();
}

/// A message sent while a run is active is held by the real gateway as a pending input; when
/// that run fails first, it was never delivered, and the row says so. The run is held at a
/// model provider of the test's until the second message is held, then failed: nothing here
/// depends on how fast either process is. (Its own test, so it can be run alone and often:
/// `real_gateway interrupted`.)
#[tokio::test(flavor = "multi_thread")]
async fn a_message_sent_during_a_held_run_reads_interrupted_when_the_run_fails() {
    let gw = tokio::task::spawn_blocking(RealGateway::start).await.unwrap();
    let b = Browser::start().await;
    b.goto(&format!("{}/?session=agent%3Amain%3Amain#token={}", gw.base(), e2e::real::TOKEN)).await;
    b.wait_connected_within(Duration::from_secs(90)).await;
    let mut agent = gw.agent().await;
    let nonce = e2e::nonce();
    let model = e2e::model_hold::ModelHold::start().await;
    gw.use_model(&mut agent, &model).await;
    let busy = format!("first while idle {nonce}");
    let behind = format!("second during the run {nonce}");
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys(&busy).await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    model.wait_held(1, Duration::from_secs(120)).await;
    area.send_keys(&behind).await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let h = agent.request("chat.history", json!({"sessionKey": "agent:main:main", "limit": 1})).await.unwrap();
        let items = h["pendingInputs"]["items"].as_array().cloned().unwrap_or_default();
        if items.iter().any(|i| i["state"] == "queued" && i.to_string().contains(&behind)) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the second message never waited behind the held run: {h}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    gw.remove_model(&mut agent).await;
    model.release(400);
    let status = b
        .wait_text("[data-testid=outbox-row][data-state=failed] [data-testid=outbox-status]", Duration::from_secs(60), |t| {
            t.contains("interrupted")
        })
        .await;
    assert!(status.starts_with("Not sent"), "{status}");
    b.screenshot("real-gateway-interrupted-input").await;

    b.close().await;
    tokio::task::spawn_blocking(move || drop(gw)).await.unwrap();
}
