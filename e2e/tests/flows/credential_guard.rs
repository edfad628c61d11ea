//! An answer that looks like a credential never leaves the page without a deliberate second
//! action, and is never written to IndexedDB: checked in the frames that reach the gateway
//! (through a relay), in the gateway's own state, and in the browser's database.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use e2e::questions::other_input;
use e2e::relay::Relay;
use fantoccini::key::Key;
use serde_json::{Value, json};

const MAIN: &str = "agent:main:main";
/// The shape of an OpenAI project key; the value is made up.
const KEY: &str = "sk-proj-Zq8vN3xL5tR1mK7pW2yB9cD4fG6hJ0sAe3Ui";

fn key_question() -> Value {
    json!({"questions": [{"questionId": "key", "header": "Key", "question": "Which key should the deploy use?", "options": [{"label": "The staging key"}, {"label": "The production key"}], "isOther": true}], "timeoutMs": 600000})
}

/// Every value stored in one IndexedDB store of the UI, in every gateway's database, as text.
async fn stored(b: &Browser, store: &str) -> String {
    let v = b
        .js_async(&format!(
            "const names = (await indexedDB.databases()).map(d => d.name).filter(n => n === 'ocui' || n.startsWith('ocui@'));
             const all = [];
             for (const name of names) {{
               all.push(await new Promise((resolve) => {{
                 const open = indexedDB.open(name);
                 open.onsuccess = () => {{
                   const tx = open.result.transaction('{store}');
                   const req = tx.objectStore('{store}').getAll();
                   req.onsuccess = () => {{ open.result.close(); resolve(JSON.stringify(req.result)); }};
                 }};
                 open.onerror = () => resolve('open failed');
               }}));
             }}
             return all.join('\\n');"
        ))
        .await;
    v.as_str().unwrap().to_string()
}

fn frames_with(relay: &Relay, needle: &str) -> usize {
    relay.sent.lock().unwrap().iter().filter(|f| f.contains(needle)).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_key_in_the_dock_is_held_never_reaches_the_gateway_and_send_anyway_sends_it_once() {
    let gw = LocalGateway::start().await;
    let relay = Relay::start(gw.ws()).await;
    let b = Browser::start().await;
    b.goto(&format!("{}&gatewayUrl={}", gw.ui_url(), relay.url())).await;
    b.accept_gateway_switch(&relay.url()).await;
    b.wait_connected().await;
    let mut agent = gw.agent().await;
    let id = agent.request("question.request", key_question()).await.unwrap()["id"].as_str().unwrap().to_string();
    other_input(&b).await.send_keys(KEY).await.unwrap();
    b.find_xpath("//p[@data-testid='not-saved-note']", T).await;
    b.click_button("Submit").await;
    let notice = b.wait_text("[data-testid=credential-held]", T, |t| !t.is_empty()).await;
    assert!(notice.contains("Not sent: this looks like an OpenAI API key (sk-pro…Ui)"), "{notice}");
    assert!(notice.contains("secrets tool") && notice.contains("transcript"), "says why and where credentials go: {notice}");
    assert!(!notice.contains(KEY), "the notice does not repeat the key");
    b.screenshot("credential-held-1000").await;
    // Enter does not get around it either.
    other_input(&b).await.send_keys(&Key::Enter.to_string()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let got = agent.request("question.get", json!({"id": id})).await.unwrap();
    assert_eq!(got["question"]["status"], "pending", "{got}");
    assert_eq!(frames_with(&relay, KEY), 0, "no frame with the key reached the gateway");
    assert!(!stored(&b, "drafts").await.contains(KEY), "the key is not in IndexedDB");

    // Send anyway, then the deliberate second click: sent, exactly once.
    b.click_button("Send anyway").await;
    b.wait_text("[data-testid=credential-held]", T, |t| t.contains("cannot be taken back")).await;
    assert_eq!(frames_with(&relay, KEY), 0, "the first click sends nothing");
    b.click_button("Yes, send it").await;
    let answer = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 10000})).await.unwrap();
    assert_eq!(answer["answers"]["answers"]["key"], json!([KEY]), "{answer}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(frames_with(&relay, KEY), 1, "one resolve carried it");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_draft_is_kept_in_the_tab_only_and_is_not_in_indexeddb_after_a_reload() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let mut agent = gw.agent().await;
    agent.request("question.request", key_question()).await.unwrap();
    other_input(&b).await.send_keys(&format!("use {KEY} please")).await.unwrap();
    b.click_button("Submit").await;
    b.wait_text("[data-testid=credential-held]", T, |t| !t.is_empty()).await;
    // Drafts are written a moment after typing: give them that moment.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let drafts = stored(&b, "drafts").await;
    assert!(drafts.contains("otherActive") && !drafts.contains(KEY), "the draft is stored without the key: {drafts}");
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    let input = other_input(&b).await;
    assert_eq!(input.prop("value").await.unwrap().as_deref(), Some(""), "the key did not survive the reload");
    assert!(!stored(&b, "drafts").await.contains(KEY));
    // Ordinary text is kept as before.
    input.send_keys("the staging one from last week").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(stored(&b, "drafts").await.contains("the staging one from last week"));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_reply_that_would_answer_a_waiting_question_is_held_too_at_390_px() {
    let gw = LocalGateway::start().await;
    let b = Browser::start_sized(390, 844).await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let mut agent = gw.agent().await;
    agent.request("question.request", key_question()).await.unwrap();
    other_input(&b).await.send_keys(KEY).await.unwrap();
    b.click_button("Submit").await;
    b.wait_text("[data-testid=credential-held]", T, |t| !t.is_empty()).await;
    b.screenshot("credential-held-390").await;
    b.click_button("Edit").await;
    b.wait_gone("[data-testid=credential-held]", T).await;
    b.click_button("Collapse").await;
    b.send_message(&format!("here you go: {KEY}")).await;
    let notice = b.wait_text("[data-testid=credential-held]", T, |t| !t.is_empty()).await;
    assert!(notice.contains("OpenAI API key"), "{notice}");
    b.find_xpath("//p[@data-testid='composer-not-saved']", T).await;
    b.screenshot("credential-held-composer-390").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(gw.gateway().store.user_texts(MAIN).unwrap().is_empty(), "nothing was sent");
    assert!(!stored(&b, "outbox").await.contains(KEY) && !stored(&b, "composer").await.contains(KEY), "nor queued, nor kept as a draft");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_typed_into_a_queued_message_in_the_tray_is_held_while_a_question_waits_and_never_stored() {
    let gw = LocalGateway::start().await;
    let relay = Relay::start(gw.ws()).await;
    let b = Browser::start().await;
    b.goto(&format!("{}&gatewayUrl={}", gw.ui_url(), relay.url())).await;
    b.accept_gateway_switch(&relay.url()).await;
    b.wait_connected().await;
    let mut agent = gw.agent().await;
    agent.request("question.request", key_question()).await.unwrap();
    b.click_button("Collapse").await;
    // The gateway is out of reach: the message waits in the outbox, editable.
    relay.block();
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.send_message("deploy notes").await;
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("deploy notes")).await;
    b.click_button("Edit").await;
    let editor = b.find_xpath("//div[@data-testid='tray-edit']//textarea", T).await;
    editor.send_keys(&format!(" with {KEY}")).await.unwrap();
    b.click_xpath("//div[@data-testid='tray-edit']//button[normalize-space()='Save']").await;
    let notice = b.wait_text("[data-testid=outbox-tray] [data-testid=credential-held]", T, |t| !t.is_empty()).await;
    assert!(notice.contains("OpenAI API key"), "{notice}");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(!stored(&b, "outbox").await.contains(KEY), "the held edit is not in IndexedDB");
    assert!(stored(&b, "outbox").await.contains("deploy notes"), "the row keeps its text");
    b.screenshot("credential-held-tray-edit").await;
    // Edit goes back to the text; nothing was sent meanwhile.
    b.click_xpath("//div[@data-testid='tray-edit']//button[normalize-space()='Edit']").await;
    b.wait_gone("[data-testid=outbox-tray] [data-testid=credential-held]", T).await;
    assert_eq!(frames_with(&relay, KEY), 0);
    b.close().await;
}

/// A bare 64-hex value (what `openssl rand -hex 32` gives, OpenClaw's usual gateway token) is
/// asked about before any chat message carries it, question or not, and even though this tab
/// never registered it; after **Yes, send it** it goes exactly once, and the confirmed row's
/// text leaves IndexedDB.
#[tokio::test(flavor = "multi_thread")]
async fn a_bare_64_hex_value_is_held_in_any_chat_message_and_sent_once_when_confirmed() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    let text = format!("the other gateway's token is {hex}");
    b.send_message(&text).await;
    let notice = b.wait_text("[data-testid=credential-held]", T, |t| !t.is_empty()).await;
    assert!(notice.contains("64-digit hex") && !notice.contains(&hex[6..60]), "{notice}");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(gw.gateway().store.user_texts(MAIN).unwrap().is_empty(), "nothing was sent");
    assert!(!stored(&b, "outbox").await.contains(hex), "nor queued");
    b.click_button("Send anyway").await;
    b.click_button("Yes, send it").await;
    e2e::db_user_texts(&gw, MAIN, &[text.as_str()]).await;
    // Confirmed: the row may stay a while, its text does not.
    let deadline = tokio::time::Instant::now() + T;
    while stored(&b, "outbox").await.contains(hex) {
        assert!(tokio::time::Instant::now() < deadline, "the confirmed row's text stayed in IndexedDB");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    b.close().await;
}
