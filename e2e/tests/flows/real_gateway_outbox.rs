//! The outbox against the real OpenClaw gateway (2026.9.6): an image sent with a message is
//! saved in its transcript and shown from the gateway's own media route; an async answer
//! edited in the outbox while the gateway is out of reach is sent once with its `replyToId`,
//! and saved history confirms it by that id, also after a reload; in two panes on one
//! conversation, Discard of a queued answer reopens its draft in both, and nothing is sent.

use std::time::Duration;

use e2e::browser::Browser;
use e2e::real::{RealGateway, TOKEN};
use e2e::relay::Relay;
use e2e::{T, TURN};
use serde_json::{Value, json};

const MAIN: &str = "agent:main:main";

const PNG: &[u8] = e2e::PNG_2X2;

async fn history(agent: &mut gateway::client::Client) -> Vec<Value> {
    agent.request("chat.history", json!({"sessionKey": MAIN, "limit": 200})).await.unwrap()["messages"].as_array().unwrap().clone()
}

/// Polls saved history until exactly one user message holds `text`; returns it. (TURN: the
/// first is a fresh gateway's first turn.)
async fn saved_once(agent: &mut gateway::client::Client, text: &str) -> Value {
    let deadline = tokio::time::Instant::now() + TURN;
    loop {
        let found: Vec<Value> = history(agent).await.into_iter().filter(|m| m["role"] == "user" && e2e::message_text(m) == text).collect();
        if !found.is_empty() {
            assert_eq!(found.len(), 1, "saved once: {found:?}");
            return found[0].clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "the real gateway never saved {text:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Waits until the session has no active run (the real gateway, without a model, fails each).
async fn wait_idle(agent: &mut gateway::client::Client) {
    let deadline = tokio::time::Instant::now() + TURN;
    loop {
        let h = agent.request("chat.history", json!({"sessionKey": MAIN, "limit": 1})).await.unwrap();
        if h["sessionInfo"]["hasActiveRun"] != json!(true) && h["sessionInfo"]["activeRunIds"].as_array().is_none_or(|a| a.is_empty()) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "the run never ended: {h}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The summary of this run's async question (the message holding `nonce`), once `accept`
/// takes it.
async fn summary(b: &Browser, nonce: &str, accept: impl Fn(&str) -> bool) -> String {
    summary_in(b, "", nonce, accept).await
}

/// The same, inside the element matching `scope` (a pane), or anywhere for "".
async fn summary_in(b: &Browser, scope: &str, nonce: &str, accept: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let found = b.js(&format!("const s = [...document.querySelectorAll('{scope} [data-testid=async-summary]')].find(e => (e.closest('article') || e).innerText.includes('{nonce}')); return s ? s.innerText : null;")).await;
        if let Some(t) = found.as_str().filter(|t| accept(t)) {
            return t.to_string();
        }
        if tokio::time::Instant::now() > deadline {
            let shot = b.screenshot("real-async-summary-timeout").await;
            panic!("no async summary for {nonce} as expected; last {found}; screenshot {shot}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn attachments_and_edited_async_answers_on_the_real_gateway() {
    let gw = tokio::task::spawn_blocking(RealGateway::start).await.unwrap();
    let mut agent = gw.agent().await;
    let nonce = e2e::nonce();

    // 1. An image sent from the composer: saved by the real gateway with its message, and
    // shown in the transcript from the gateway's media route with this page's credentials.
    let files = tempfile::tempdir().unwrap();
    let png = files.path().join("red.png");
    std::fs::write(&png, PNG).unwrap();
    let b = Browser::start().await;
    b.goto(&format!("{}/?session=agent%3Amain%3Amain#token={TOKEN}", gw.base())).await;
    b.wait_connected_within(Duration::from_secs(90)).await;
    wait_idle(&mut agent).await;
    b.attach_files(&[&png]).await;
    b.wait_text("[data-testid=draft-attachments]", T, |t| t.contains("red.png")).await;
    let text = format!("a red square {nonce}");
    b.send_message(&text).await;
    let saved = saved_once(&mut agent, &text).await;
    eprintln!("saved with an image: {saved}");
    let media = saved["__openclaw"]["media"].as_array().unwrap_or_else(|| panic!("no media saved: {saved}")).clone();
    assert_eq!(media.len(), 1, "{saved}");
    assert_eq!(
        (media[0]["kind"].as_str(), media[0]["fileName"].as_str(), media[0]["sizeBytes"].as_u64()),
        (Some("image"), Some("red.png"), Some(PNG.len() as u64)),
        "{saved}"
    );
    b.wait_gone("[data-testid=outbox-row]", T).await;
    let shown = b.wait_js(&format!("const m = [...document.querySelectorAll('[data-testid=message]')].find(e => e.innerText.includes('{text}')); const i = m && m.querySelector('[data-testid=saved-image-img]'); return i && i.complete ? i.naturalWidth : (m ? m.innerText : null);"), |w| w == &json!(2)).await;
    assert_eq!(shown, json!(2), "the 2×2 image came back from the real gateway");
    // Once confirmed, the browser keeps no copy of the file.
    b.wait_js("const db = await new Promise(ok => { const r = indexedDB.open('ocui'); r.onsuccess = () => ok(r.result); }); const n = await new Promise(ok => { const r = db.transaction('attachments').objectStore('attachments').count(); r.onsuccess = () => ok(r.result); }); db.close(); return n;", |n| n == &json!(0)).await;
    b.screenshot("real-gateway-image-attachment").await;
    let log = b.browser_log().await;
    let csp: Vec<&String> = log.iter().filter(|l| l.contains("Content Security Policy") || l.contains("Refused to")).collect();
    assert!(csp.is_empty(), "CSP violations under the real gateway: {csp:?}");
    b.close().await;

    // 2. An async question, as a Codex harness run saves it (chat.inject, then the row
    // rewritten in the store). The page reaches the gateway through a relay that can take it
    // away: the answer waits in the outbox, is edited there, and goes once it is back.
    wait_idle(&mut agent).await;
    let question = format!("Which environment for {nonce}?");
    let source_id = ask_async(
        &gw,
        &mut agent,
        &format!("item-{nonce}"),
        &format!("One question while I keep working ({nonce}):"),
        &question,
        &["Staging", "Production"],
    )
    .await;

    let relay = Relay::start(format!("ws://127.0.0.1:{}", gw.port)).await;
    let b = Browser::start().await;
    b.goto(&format!("{}/?session=agent%3Amain%3Amain#token={TOKEN}&gatewayUrl={}", gw.base(), relay.url())).await;
    b.accept_gateway_switch(&relay.url()).await;
    b.wait_connected_within(Duration::from_secs(60)).await;
    summary(&b, &nonce, |t| t.contains("Waiting for your answer")).await;
    b.wait_for_shell_cache().await;
    relay.block();
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    show_in_dock(&b, "(//section[@data-testid='pane'])[1]", "main > section[data-testid=pane]:nth-of-type(1)", &question).await;
    b.option("Production").await.click().await.unwrap();
    b.click_button("Submit").await;
    summary(&b, &nonce, |t| t.contains("queued") || t.contains("Waiting for reconnect")).await;
    b.find_xpath("//section[@data-testid='outbox-tray']//button[normalize-space()='Edit']", T).await.click().await.unwrap();
    b.find_xpath("//div[@data-testid='tray-edit']//textarea", T).await;
    let edited = format!("Production, but only after the backup ({nonce})");
    b.set_field("[data-testid=tray-edit] textarea", &edited).await;
    b.click_button("Save").await;
    b.wait_gone("[data-testid=tray-edit]", T).await;
    // A reload while it waits keeps the edited answer.
    b.client.refresh().await.unwrap();
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains(&edited)).await;
    relay.unblock();
    b.wait_connected_within(Duration::from_secs(60)).await;

    let saved = saved_once(&mut agent, &edited).await;
    eprintln!("the edited answer as saved: {saved}");
    assert_eq!(saved["__openclaw"]["replyToId"], json!(source_id), "sent as the answer to that question: {saved}");
    let sends = relay.sent.lock().unwrap().iter().filter(|f| f.contains("\"chat.send\"") && f.contains(&nonce)).count();
    assert_eq!(sends, 1, "one chat.send for the answer");
    let confirmed = summary(&b, &nonce, |t| t.starts_with("Answer sent") && t.contains(&edited)).await;
    assert!(confirmed.contains(&edited), "confirmed by replyToId, with the words as saved: {confirmed}");
    b.client.refresh().await.unwrap();
    b.wait_connected_within(Duration::from_secs(60)).await;
    // The confirmed row left IndexedDB without its text (a sent message is the gateway's to
    // keep): after the reload the words come from the gateway's saved copy.
    let again = summary(&b, &nonce, |t| t.starts_with("Answer sent") && t.contains(&edited)).await;
    assert!(again.contains(&edited), "still confirmed after a reload, with the words as saved: {again}");
    b.screenshot("real-gateway-edited-async-answer").await;
    b.close().await;

    // 3. Two panes on the same conversation: an answer queued in one, discarded in the other,
    // reopens its draft in both, and is never sent.
    let second = format!("Which region for {nonce}?");
    let second_id = ask_async(
        &gw,
        &mut agent,
        &format!("item-2-{nonce}"),
        &format!("Another question, still working ({nonce}):"),
        &second,
        &["Europe", "America"],
    )
    .await;
    let b = Browser::start_sized(1400, 900).await;
    b.goto(&format!("{}/?session=agent%3Amain%3Amain&pane=agent%3Amain%3Amain#token={TOKEN}&gatewayUrl={}", gw.base(), relay.url())).await;
    b.accept_gateway_switch(&relay.url()).await;
    b.wait_connected_within(Duration::from_secs(60)).await;
    let pane = |n: usize| format!("main > section[data-testid=pane]:nth-of-type({n})");
    for n in [1, 2] {
        summary_in(&b, &pane(n), &format!("Another question, still working ({nonce})"), |t| t.contains("Waiting for your answer")).await;
    }
    relay.block();
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    let one = "(//section[@data-testid='pane'])[1]";
    show_in_dock(&b, one, &pane(1), &second).await;
    let america = |p: &str| {
        format!(
            "{p}//label[contains(@class,'option-item')][.//span[contains(@class,'option-item__label') and normalize-space()='America']]//input"
        )
    };
    b.find_xpath(&america(one), T).await.click().await.unwrap();
    b.find_xpath(&format!("{one}//button[normalize-space()='Submit']"), T).await.click().await.unwrap();
    for n in [1, 2] {
        summary_in(&b, &pane(n), &format!("Another question, still working ({nonce})"), |t| {
            t.contains("queued") || t.contains("Waiting for reconnect")
        })
        .await;
    }
    // Discard from the other pane.
    let two = "(//section[@data-testid='pane'])[2]";
    let discard = format!(
        "{two}//article[contains(., 'Another question, still working ({nonce})')]//div[@data-testid='async-summary']//button[normalize-space()='Discard']"
    );
    b.find_xpath(&discard, T).await;
    b.js(&format!("document.evaluate({}, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.scrollIntoView({{block: 'center'}}); return null;", json!(discard))).await;
    b.find_xpath(&discard, T).await.click().await.unwrap();
    // Back in both panes' docks with the choice as it was.
    for (n, p) in [(1, one), (2, two)] {
        // The discard reaches the other pane through its store a moment later: until then the
        // pane may show neither a panel nor a collapsed bar. Expand the bar once it is there.
        let deadline = tokio::time::Instant::now() + T;
        while !b.exists(&format!("{} [data-testid=question-panel]", pane(n))).await {
            if b.exists(&format!("{} [data-testid=dock-bar]", pane(n))).await {
                b.find_xpath(&format!("{p}//button[normalize-space()='Expand question']"), T).await.click().await.unwrap();
            }
            assert!(tokio::time::Instant::now() < deadline, "pane {n} never showed the reopened question in its dock");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let deadline = tokio::time::Instant::now() + T;
        loop {
            let shown = b.wait_text(&format!("{} [data-testid=question-panel]", pane(n)), T, |t| !t.is_empty()).await;
            if shown.contains(&second) {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "pane {n} never showed the reopened question: {shown}");
            b.find_xpath(&format!("{p}//button[normalize-space()='Next request' or @aria-label='Next request']"), T)
                .await
                .click()
                .await
                .unwrap();
        }
        let checked = b.find_xpath(&america(p), T).await.prop("checked").await.unwrap();
        assert_eq!(checked.as_deref(), Some("true"), "the preserved draft in pane {n}");
    }
    b.screenshot("real-gateway-panes-discard").await;
    relay.unblock();
    b.wait_connected_within(Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let answered =
        history(&mut agent).await.into_iter().filter(|m| m["role"] == "user" && m["__openclaw"]["replyToId"] == json!(second_id)).count();
    assert_eq!(answered, 0, "a discarded answer is never sent");
    b.close().await;
    tokio::task::spawn_blocking(move || drop(gw)).await.unwrap();
}

/// An async question as a Codex harness run saves it: a `chat.inject` row rewritten in the
/// real gateway's store. Returns its message id (what an answer's `replyToId` names).
async fn ask_async(
    gw: &RealGateway,
    agent: &mut gateway::client::Client,
    item_id: &str,
    text: &str,
    title: &str,
    options: &[&str],
) -> String {
    let marker = format!("placeholder for {item_id}");
    agent.request("chat.inject", json!({"sessionKey": MAIN, "message": marker})).await.expect("chat.inject");
    tokio::task::block_in_place(|| {
        gw.patch_transcript(&json!([{"marker": marker, "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "openclawAsyncDelivery": {"itemId": item_id, "questions": [{"title": title, "options": options}]}
        }}]))
    });
    let served = history(agent).await.into_iter().find(|m| m.to_string().contains(item_id)).expect("the async question is served");
    served["__openclaw"]["id"].as_str().expect("it has an id").to_string()
}

/// Expands the dock of one pane (`xpath` and `css` name it) and shows the question titled
/// `title`. The real gateway's state outlives test runs, so an earlier run's question may still
/// wait: those are dismissed until this one is shown.
async fn show_in_dock(b: &Browser, xpath: &str, css: &str, title: &str) {
    let button = |name: &str| format!("{xpath}//button[normalize-space()='{name}']");
    b.find_xpath(&button("Expand question"), T).await.click().await.unwrap();
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let shown = b.wait_text(&format!("{css} [data-testid=question-panel]"), T, |t| !t.is_empty()).await;
        if shown.contains(title) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{title} never showed: {shown}");
        b.find_xpath(&button("Dismiss"), T).await.click().await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        if !b.exists(&format!("{css} [data-testid=question-panel]")).await {
            b.find_xpath(&button("Expand question"), T).await.click().await.unwrap();
        }
    }
}
