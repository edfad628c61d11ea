//! The composer's model and thinking pickers and the context meter, in real Chromium against
//! the local gateway (its two demo models): the model a conversation uses is shown and changed,
//! the thinking levels follow the model, each reply names the model that wrote it, the meter
//! shows the context after a run; and a Send pressed while a change is on its way waits for it,
//! and does not go at all when the change never landed.

use e2e::browser::Browser;
use e2e::relay::Relay;
use e2e::{LocalGateway, T};
use serde_json::json;

const MAIN: &str = "agent:main:main";

/// Picks `value` in the `<select>` with `testid`, as a person does (a change event).
async fn pick(b: &Browser, testid: &str, value: &str) {
    b.wait_js(&format!("const s = document.querySelector('[data-testid={testid}]'); return !!s && !s.disabled && [...s.options].some(o => o.value === '{value}' && !o.disabled);"), |v| v == &json!(true)).await;
    b.js(&format!("const s = document.querySelector('[data-testid={testid}]'); s.value = '{value}'; s.dispatchEvent(new Event('change', {{bubbles: true}})); return null;")).await;
}

async fn picked(b: &Browser, testid: &str) -> String {
    b.js(&format!("const s = document.querySelector('[data-testid={testid}]'); return s ? s.value : null;"))
        .await
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Waits until the gateway's row of `MAIN` has `field` = `want` (`sessions.describe`).
async fn row_has(agent: &mut gateway::client::Client, field: &str, want: &str) {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let row = agent.request("sessions.describe", json!({"key": MAIN})).await.unwrap();
        if row["session"][field] == want {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "the gateway's row never had {field} = {want}: {row}");
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_and_thinking_are_shown_and_changed_and_a_reply_names_its_model() {
    let gw = LocalGateway::start().await;
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let mut agent = gw.agent().await;
    // Give the main conversation its row (a first message), then read what it shows.
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys("hello").await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    b.wait_text("[data-testid=reply-model]", T, |t| t == "demo/quick").await;
    b.wait_js("return document.querySelector('[data-testid=model-picker]')?.value;", |v| v == &json!("demo/quick")).await;
    assert!(!b.exists("[data-testid=thinking-picker]").await, "the quick model does not think: no effort to choose");
    let usage = b.wait_text("[data-testid=context-usage]", T, |t| t.contains("of 32k tokens")).await;
    assert!(usage.contains("context window"), "{usage}");
    b.wait_text("[data-testid=last-run-usage]", T, |t| t.starts_with("Last run:")).await;

    // The deep model: its levels appear, its default named; a level is set on the gateway.
    pick(&b, "model-picker", "demo/deep").await;
    b.wait_text("[data-testid=thinking-picker] option:first-child", T, |t| t == "Default (low)").await;
    row_has(&mut agent, "model", "deep").await;
    pick(&b, "thinking-picker", "high").await;
    row_has(&mut agent, "thinkingLevel", "high").await;
    assert_eq!(picked(&b, "thinking-picker").await, "high");
    area.send_keys("and now?").await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    b.wait_js("return [...document.querySelectorAll('[data-testid=reply-model]')].map(e => e.textContent);", |v| {
        v.as_array().is_some_and(|a| a.len() == 2 && a[1] == "demo/deep")
    })
    .await;
    b.wait_text("[data-testid=context-usage]", T, |t| t.contains("of 200k tokens")).await;
    // A change made elsewhere reaches the picker (`sessions.changed`).
    gw.agent().await.request("sessions.patch", json!({"key": MAIN, "model": "quick"})).await.unwrap();
    b.wait_js("return document.querySelector('[data-testid=model-picker]')?.value;", |v| v == &json!("demo/quick")).await;
    for (w, h) in [(1000u32, 800u32), (390, 844)] {
        b.client.set_window_size(w, h).await.unwrap();
        let (overflow, _) = b.horizontal_overflow().await;
        assert_eq!(overflow, 0, "horizontal overflow at {w} px");
        b.screenshot(&format!("run-settings-{w}")).await;
    }
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_send_waits_for_a_model_change_and_does_not_go_when_it_never_landed() {
    let gw = LocalGateway::start().await;
    let relay = Relay::start(gw.ws()).await;
    let b = Browser::start().await;
    b.goto(&format!("{}/#token={}&gatewayUrl={}", gw.base(), gw.token, relay.url())).await;
    b.accept_gateway_switch(&relay.url()).await;
    b.wait_connected().await;
    b.wait_js("return document.querySelector('[data-testid=model-picker]')?.value;", |v| v == &json!("demo/quick")).await;
    // The gateway's answers are held from the patch on: the change stays on its way.
    relay.hold_between("\"method\":\"sessions.patch\"", "never sent by the page");
    pick(&b, "model-picker", "demo/deep").await;
    b.wait_text("[data-testid=settings-status]", T, |t| t.contains("Sending waits for it")).await;
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys("meant for the deep model").await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!b.exists("[data-testid=outbox-row]").await, "the message did not go while the change was on its way");
    assert!(!relay.sent.lock().unwrap().iter().any(|f| f.contains("meant for the deep model")), "nothing reached the gateway");
    // The connection goes with the change unanswered: nothing is sent, the words stay.
    relay.block();
    b.wait_text("[data-testid=settings-status]", T, |t| t.starts_with("Not changed")).await;
    assert_eq!(b.js("return document.querySelector('textarea[name=message]').value;").await, json!("meant for the deep model"));
    relay.unblock();
    b.wait_connected().await;
    // The gateway had applied it: the row says so, and a Send now goes.
    b.wait_js("return document.querySelector('[data-testid=model-picker]')?.value;", |v| v == &json!("demo/deep")).await;
    b.click_button("Send").await;
    b.wait_text("[data-testid=reply-model]", T, |t| t == "demo/deep").await;
    let sent = relay.sent.lock().unwrap().iter().filter(|f| f.contains("meant for the deep model")).count();
    assert_eq!(sent, 1, "sent once");
    b.close().await;
}

/// The same against the real gateway (2026.9.6) running real turns on the project's scripted
/// model, which offers two models: the pickers show and change what the real gateway keeps,
/// and each reply names the model that wrote it.
#[tokio::test(flavor = "multi_thread")]
async fn the_model_and_thinking_on_the_real_gateway() {
    use e2e::scripted_model::{MODEL, PROVIDER, SECOND_MODEL};
    let e2e::real::WithScriptedModel { gw, model: _scripted, mut agent } = e2e::real::RealGateway::start_with_scripted_model().await;
    let b = Browser::start().await;
    b.goto(&format!("{}/?session=agent%3Amain%3Amain#token={}", gw.base(), e2e::real::TOKEN)).await;
    b.wait_connected_within(std::time::Duration::from_secs(90)).await;
    let nonce = e2e::nonce();
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys(&format!("hello {nonce}")).await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    let first = format!("{PROVIDER}/{MODEL}");
    b.wait_text("[data-testid=reply-model]", e2e::TURN, |t| t == first).await;
    b.wait_js("return document.querySelector('[data-testid=model-picker]')?.value;", |v| v.as_str() == Some(first.as_str())).await;
    b.wait_text("[data-testid=context-usage]", T, |t| t.contains("tokens")).await;

    let second = format!("{PROVIDER}/{SECOND_MODEL}");
    pick(&b, "model-picker", &second).await;
    row_has(&mut agent, "model", SECOND_MODEL).await;
    b.wait_js("return document.querySelector('[data-testid=model-picker]')?.value;", |v| v.as_str() == Some(second.as_str())).await;
    // A reasoning model offers levels; one is set on the real gateway.
    pick(&b, "thinking-picker", "low").await;
    row_has(&mut agent, "thinkingLevel", "low").await;
    area.send_keys(&format!("again {nonce}")).await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    b.wait_js("return [...document.querySelectorAll('[data-testid=reply-model]')].map(e => e.textContent);", |v| {
        v.as_array().and_then(|a| a.last()).and_then(|l| l.as_str()) == Some(second.as_str())
    })
    .await;
    b.screenshot("run-settings-real").await;
    b.close().await;
    tokio::task::spawn_blocking(move || drop(gw)).await.unwrap();
}
