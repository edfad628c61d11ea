//! Our UI under the real OpenClaw gateway (2026.9.6) with `basePath: "/ui"`: a transcript with
//! tool calls and their results, thinking, images and an `ask_user` question with its answer,
//! as a real agent's turn saves them (injected with `chat.inject`, then rewritten in the store:
//! ../shared/docs/real-gateway.md §7). Then the gateway stops, and a reload still opens the page
//! from its service worker, under the base path, with the saved copy of the conversation.

use std::time::Duration;

use e2e::T;
use e2e::browser::Browser;
use e2e::real::RealGateway;
use serde_json::{Value, json};

const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The rows of one turn, as the real gateway's schemas describe them.
fn turn(nonce: &str) -> Vec<Value> {
    let call = format!("call_read_{nonce}");
    let ask = format!("call_ask_{nonce}");
    vec![
        json!({"role": "assistant", "stopReason": "toolUse", "content": [
            {"type": "thinking", "thinking": format!("Read the config first ({nonce}).")},
            {"type": "text", "text": format!("Checking the deploy config {nonce}.")},
            {"type": "toolCall", "id": call, "name": "read_file", "arguments": {"path": "deploy.toml"}},
            {"type": "toolCall", "id": ask, "name": "ask_user", "arguments": {"questions": [
                {"id": "deploy_target", "header": "Deploy", "question": format!("Where should change {nonce} be deployed?"),
                 "options": [{"label": "Staging (Recommended)", "description": "Safe default"}, {"label": "Production"}]}
            ], "timeoutSeconds": 30}}
        ]}),
        json!({"role": "toolResult", "toolCallId": call, "toolName": "read_file", "isError": false,
            "content": [{"type": "text", "text": "[deploy]\ntarget = \"staging\""}]}),
        json!({"role": "toolResult", "toolCallId": ask, "toolName": "ask_user", "isError": false,
            "content": [{"type": "text", "text": "Deploy: Production\n\n{\n  \"status\": \"answered\",\n  \"answers\": {\n    \"answers\": {\n      \"deploy_target\": [\n        \"Production\"\n      ]\n    }\n  }\n}"}]}),
        json!({"role": "assistant", "stopReason": "stop", "content": [
            {"type": "text", "text": format!("Deployed {nonce} to **production**.\n\n| step | result |\n|---|---|\n| build | ok |\n\n```sh\ndeploy --target production\n```\n\nLogs: <https://logs.example.com/{nonce}>")},
            {"type": "image", "mimeType": "image/png", "data": PIXEL},
            {"type": "mystery_widget", "payload": {"x": 1}}
        ]}),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_agent_turn_reads_whole_on_the_real_gateway_and_offline_under_its_base_path() {
    let gw = tokio::task::spawn_blocking(|| RealGateway::start_serving(&e2e::dist_dir_ui(), "/ui")).await.unwrap();
    let mut agent = gw.agent().await;
    let nonce = e2e::nonce();
    let rows = turn(&nonce);
    // Each test's real gateway starts with no state: its main conversation has no row until it is
    // used, and chat.inject needs one.
    agent.request("sessions.create", json!({"key": "agent:main:main", "agentId": "main"})).await.expect("sessions.create main");
    let mut patches = Vec::new();
    for (i, message) in rows.iter().enumerate() {
        let marker = format!("placeholder {i} of turn {nonce}");
        agent.request("chat.inject", json!({"sessionKey": "agent:main:main", "message": marker})).await.expect("chat.inject");
        patches.push(json!({"marker": marker, "message": message}));
    }
    tokio::task::block_in_place(|| gw.patch_transcript(&Value::Array(patches)));
    // What the gateway now serves (its projection strips the image bytes, for one).
    let h = agent.request("chat.history", json!({"sessionKey": "agent:main:main", "limit": 20})).await.unwrap();
    let served: Vec<&Value> = h["messages"].as_array().unwrap().iter().filter(|m| m.to_string().contains(&nonce)).collect();
    assert_eq!(served.len(), 4, "the four rows are served: {h}");
    eprintln!("served: {}", Value::Array(served.into_iter().cloned().collect()));

    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected_within(Duration::from_secs(90)).await;
    let text = b.wait_text("main", T, |t| t.contains(&format!("Deployed {nonce} to production."))).await;
    assert!(text.contains(&format!("Checking the deploy config {nonce}.")), "{text}");
    let card = b.js(&format!("const c = document.querySelector('[data-call=call_read_{nonce}]'); return c && [c.dataset.state, c.querySelector('[data-testid=tool-result] pre').textContent];")).await;
    assert_eq!(card, json!(["done", "[deploy]\ntarget = \"staging\""]), "the read_file card has its result");
    let thinking = b.js("return [...document.querySelectorAll('[data-testid=thinking]')].map(d => d.open);").await;
    assert!(
        thinking.as_array().is_some_and(|t| !t.is_empty() && t.iter().all(|o| o == &json!(false))),
        "thinking is shown, collapsed: {thinking}"
    );
    // The gateway's state outlives test runs: pick this run's summary among earlier ones.
    let deadline = tokio::time::Instant::now() + T;
    let receipt = loop {
        let found = b.js(&format!("return [...document.querySelectorAll('[data-testid=question-receipt]')].map(e => e.innerText).find(t => t.includes('{nonce}')) || null;")).await;
        if let Some(t) = found.as_str() {
            break t.to_string();
        }
        assert!(tokio::time::Instant::now() < deadline, "no question summary for this run's ask_user pair");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(receipt.starts_with("Answered") && receipt.contains("Production"), "the ask_user pair is a question summary: {receipt}");
    assert!(!b.exists(&format!("[data-call=call_ask_{nonce}]")).await, "not a tool card");
    assert!(text.contains("unsupported part: mystery_widget"), "{text}");
    // The agent's markdown is rendered under the real gateway (and its CSP) as well.
    b.wait_markdown_rendered().await;
    let md = b.js(&format!("const m = [...document.querySelectorAll('.md')].find(e => e.textContent.includes('Deployed {nonce}')); return m && [m.querySelector('strong').textContent, [...m.querySelectorAll('td')].map(c => c.textContent), m.querySelector('pre code').textContent, m.querySelector('a').dataset.host];")).await;
    assert_eq!(md, json!(["production", ["build", "ok"], "deploy --target production\n", "logs.example.com"]), "{md}");
    // The real gateway leaves image bytes out of history: the image is a note, not dropped.
    assert!(b.exists("[data-testid=image-omitted], [data-testid=image-part]").await, "the image has a view");
    b.js(&format!("document.querySelector('[data-call=call_read_{nonce}]').scrollIntoView(); return null;")).await;
    b.screenshot("real-gateway-transcript-parts").await;
    let log = b.browser_log().await;
    let csp: Vec<&String> = log.iter().filter(|l| l.contains("Content Security Policy") || l.contains("Refused to")).collect();
    assert!(csp.is_empty(), "CSP violations under the real gateway: {csp:?}");

    // The service worker, registered under the base path, has the page and its files (the
    // wasm as the loader fetched it: gzip'd, since the real gateway sends a configured root as is).
    let deadline = tokio::time::Instant::now() + T;
    let cached = loop {
        let keys = b.js_async("if (!navigator.serviceWorker.controller) return null; const c = await caches.open('ocui-shell-v1'); return (await c.keys()).map(r => new URL(r.url).pathname);").await;
        // The app's `markdown` module too: this first visit loaded it before the worker
        // controlled the page, and the page asked the worker to keep it.
        let has = |prefix: &str, end: &str| {
            keys.as_array().is_some_and(|k| k.iter().any(|p| p.as_str().is_some_and(|p| p.starts_with(prefix) && p.ends_with(end))))
        };
        if has("/ui/app-", "_bg.wasm.gz") && has("/ui/app-markdown-", ".wasm.gz") {
            break keys;
        }
        assert!(tokio::time::Instant::now() < deadline, "no service worker cache under /ui: {keys}; log {:#?}", b.browser_log().await);
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert!(cached.as_array().unwrap().iter().all(|p| p.as_str().unwrap().starts_with("/ui/")), "everything under the base path: {cached}");
    let scope = b.js_async("return (await navigator.serviceWorker.getRegistration()).scope;").await;
    assert_eq!(scope, json!(format!("{}/ui/", gw.base())));
    // Give the saved copy its moment to be written, then take the gateway away and reload.
    tokio::time::sleep(Duration::from_secs(2)).await;
    tokio::task::block_in_place(|| gw.stop());
    b.client.refresh().await.expect("the page reloads from its service worker");
    b.wait_text("[data-testid=saved-copy]", T, |t| t.starts_with("Saved copy")).await;
    let text = b.wait_text("main", T, |t| t.contains(&format!("Deployed {nonce} to production."))).await;
    assert!(text.contains(&format!("Where should change {nonce} be deployed?")), "{text}");
    // With the gateway gone, the markdown module comes from the worker's cache.
    b.wait_markdown_rendered().await;
    let offline_md = b.js(&format!("const m = [...document.querySelectorAll('.md')].find(e => e.textContent.includes('Deployed {nonce}')); return m && m.querySelector('strong').textContent;")).await;
    assert_eq!(offline_md, json!("production"), "markdown rendered offline");
    b.screenshot("real-gateway-offline-saved-copy").await;
    b.close().await;
}
