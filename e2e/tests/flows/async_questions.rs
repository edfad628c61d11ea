//! Async (non-blocking) questions in real Chromium against the local gateway's demo agent.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use serde_json::Value;

const MAIN: &str = "agent:main:main";
const EXPECTED: &str = "> Which environment should I use?\n\nProduction\n\n> Which checks should run?\n\nunit";

async fn summary(b: &Browser, accept: impl Fn(&str) -> bool) -> String {
    b.wait_text("[data-testid=async-summary]", T, accept).await
}

async fn wait_quiet(b: &Browser) {
    b.wait_gone("[data-testid=stream]", T).await;
}

async fn user_texts(gw: &LocalGateway, n: usize) -> Vec<String> {
    e2e::wait_user_texts(gw, MAIN, n).await
}

async fn answer_in_dock(b: &Browser) {
    b.option("Production").await.click().await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    assert_eq!(b.option("unit").await.prop("checked").await.unwrap().as_deref(), Some("true"), "the first option starts selected");
    b.click_button("Submit").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn async_questions_arrive_collapsed_and_are_answered_through_the_outbox() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("async please").await;
    let bar = b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    assert!(!bar.is_empty());
    // The composer stays usable and keeps focus; the agent keeps working.
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys("my own draft").await.unwrap();
    let focused = b.js("return document.activeElement && document.activeElement.name;").await;
    assert_eq!(focused, Value::from("message"));
    wait_quiet(&b).await;
    // Its own completed turn does not dismiss it.
    summary(&b, |t| t.contains("Waiting for your answer")).await;
    b.click_button("Expand question").await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    assert_eq!(b.option("Staging").await.prop("checked").await.unwrap().as_deref(), Some("true"), "the first option starts selected");
    b.screenshot("async-expanded").await;
    answer_in_dock(&b).await;
    summary(&b, |t| t.starts_with("Answer sent")).await;
    let texts = user_texts(&gw, 2).await;
    assert_eq!(texts, vec!["async please".to_string(), EXPECTED.to_string()]);
    let draft = b.find_xpath("//textarea[@name='message']", T).await.prop("value").await.unwrap();
    assert_eq!(draft.as_deref(), Some("my own draft"), "the composer's own draft is untouched");
    // Confirmed stays confirmed after a reload.
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    summary(&b, |t| t.starts_with("Answer sent")).await;
    assert!(!b.exists("[data-testid=dock-bar]").await && !b.exists("[data-testid=question-panel]").await);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dismiss_offers_undo_and_lasts_across_reload() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("async").await;
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    b.click_button("Expand question").await;
    b.click_button("Dismiss").await;
    b.wait_text("[data-testid=dismiss-toast]", T, |t| t.contains("Question dismissed. Work continues.")).await;
    summary(&b, |t| t.starts_with("Dismissed")).await;
    b.find_xpath("//div[@data-testid='dismiss-toast']//button[normalize-space()='Undo']", T).await.click().await.unwrap();
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    b.click_button("Expand question").await;
    b.click_button("Dismiss").await;
    summary(&b, |t| t.starts_with("Dismissed")).await;
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    summary(&b, |t| t.starts_with("Dismissed")).await;
    assert_eq!(user_texts(&gw, 1).await, vec!["async".to_string()], "nothing was sent");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_later_successful_run_retires_it_a_failed_one_does_not_and_answer_reopens_it() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("async").await;
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    wait_quiet(&b).await;
    b.send_message("fail now").await;
    b.wait_text("[data-testid=stream][data-state=error], [data-testid=message][data-role=custom]", T, |t| !t.is_empty()).await;
    summary(&b, |t| t.contains("Waiting for your answer")).await;
    b.send_message("hello").await;
    summary(&b, |t| t.starts_with("No longer pending")).await;
    assert!(!b.exists("[data-testid=dock-bar]").await, "retired questions leave the dock");
    b.click_xpath("//div[@data-testid='async-summary']//button[normalize-space()='Answer']").await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    answer_in_dock(&b).await;
    summary(&b, |t| t.starts_with("Answer sent")).await;
    assert!(user_texts(&gw, 4).await.contains(&EXPECTED.to_string()));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn discard_reopens_the_preserved_draft_and_reload_keeps_a_queued_answer() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("async").await;
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    wait_quiet(&b).await;
    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.click_button("Expand question").await;
    answer_in_dock(&b).await;
    summary(&b, |t| t.contains("queued") || t.contains("Waiting for reconnect")).await;
    b.find_xpath("//div[@data-testid='async-summary']//button[normalize-space()='Discard']", T).await.click().await.unwrap();
    // Back in the dock with the draft as it was; nothing goes to the composer.
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    b.click_button("Expand question").await;
    b.wait_text("[data-testid=step-progress]", T, |t| !t.is_empty()).await;
    if b.js("return document.querySelector('[data-testid=step-progress]').textContent;").await == Value::from("2/2") {
        b.click_button("Back").await;
    }
    assert_eq!(b.option("Production").await.prop("checked").await.unwrap().as_deref(), Some("true"), "the preserved draft");
    let composer = b.find_xpath("//textarea[@name='message']", T).await.prop("value").await;
    assert!(composer.is_err() || composer.unwrap().unwrap_or_default().is_empty(), "an async answer does not land in the composer");
    // Answer again; it waits; the gateway comes back; a reload in between loses nothing.
    b.click_button("Next").await;
    b.click_button("Submit").await;
    summary(&b, |t| t.contains("queued") || t.contains("Waiting for reconnect")).await;
    gw.restart_on(port).await;
    b.client.refresh().await.unwrap();
    b.wait_connected_within(Duration::from_secs(40)).await;
    summary(&b, |t| t.starts_with("Answer sent")).await;
    let texts = user_texts(&gw, 2).await;
    assert_eq!(texts, vec!["async".to_string(), EXPECTED.to_string()], "the discarded answer was never sent, the second exactly once");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_that_breaks_the_limits_is_shown_as_plain_text() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.wait_text(".conversation__empty", T, |t| t.contains("Say hello")).await;
    let bad = r#"{"type":"event","event":"session.message","payload":{"sessionKey":"agent:main:main","message":{"role":"assistant","content":[{"type":"text","text":"Pick one of five"}],"openclawAsyncDelivery":{"itemId":"bad","questions":[{"title":"Which?","options":["1","2","3","4","5"]}]},"__openclaw":{"id":"bad-msg","seq":1}}}}"#;
    gw.hub().inject_raw(bad);
    let text = b.wait_text("[data-testid=message][data-role=assistant]", T, |t| t.contains("Pick one of five")).await;
    assert!(!text.is_empty());
    assert!(!b.exists("[data-testid=async-question]").await, "never a broken form");
    assert!(!b.exists("[data-testid=dock-bar]").await);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_in_one_tab_shows_as_sent_in_the_other() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("async").await;
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    wait_quiet(&b).await;
    let first = b.client.window().await.unwrap();
    let second = b.client.new_window(true).await.unwrap();
    b.client.switch_to_window(second.handle.clone()).await.unwrap();
    b.goto(&gw.ui_url()).await;
    summary(&b, |t| t.contains("Waiting for your answer")).await;
    b.client.switch_to_window(first).await.unwrap();
    b.click_button("Expand question").await;
    answer_in_dock(&b).await;
    summary(&b, |t| t.starts_with("Answer sent")).await;
    b.client.switch_to_window(second.handle).await.unwrap();
    summary(&b, |t| t.starts_with("Answer sent")).await;
    assert!(!b.exists("[data-testid=dock-bar]").await && !b.exists("[data-testid=question-panel]").await);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dock_stays_available_when_something_replaces_the_composer() {
    let gw = LocalGateway::start_with_device_scopes(Some(&["operator.read", "operator.questions"])).await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.wait_text("[data-testid=composer-replacement]", T, |t| t.contains("read-only")).await;
    let mut agent = gw.agent().await;
    let q = serde_json::json!({"questions":[{"questionId":"ok","header":"OK","question":"Proceed?","options":[{"label":"Yes"},{"label":"No"}]}],"timeoutMs":60000});
    let id = agent.request("question.request", q).await.unwrap()["id"].as_str().unwrap().to_string();
    b.option("Yes").await.click().await.unwrap();
    b.click_button("Submit").await;
    let got = agent.request("question.waitAnswer", serde_json::json!({"id": id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["answers"]["answers"]["ok"], serde_json::json!(["Yes"]));
    b.wait_text("[data-testid=composer-replacement]", T, |t| !t.is_empty()).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn async_dock_layout_at_390_and_430_in_light_and_dark() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    agent
        .request("chat.send", serde_json::json!({"sessionKey": MAIN, "message": "async", "idempotencyKey": "layout-async"}))
        .await
        .unwrap();
    // One browser per width: the bar in both themes, then the panel in both (the theme changes
    // in place).
    for width in [390u32, 430] {
        let b = Browser::start_sized(width, 844).await;
        b.goto(&gw.ui_url()).await;
        b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
        for theme in ["light", "dark"] {
            b.js(&format!("document.documentElement.dataset.theme = '{theme}';")).await;
            let overflow = b.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth;").await;
            assert_eq!(overflow.as_i64(), Some(0), "horizontal overflow at {width} px ({theme})");
            b.screenshot(&format!("async-bar-{width}-{theme}")).await;
        }
        b.click_button("Expand question").await;
        b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
        for theme in ["light", "dark"] {
            b.js(&format!("document.documentElement.dataset.theme = '{theme}';")).await;
            let overflow = b.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth;").await;
            assert_eq!(overflow.as_i64(), Some(0), "horizontal overflow at {width} px ({theme}), expanded");
            b.screenshot(&format!("async-panel-{width}-{theme}")).await;
        }
        b.close().await;
    }
}

/// An async answer edited in the outbox keeps its reply target: once sent, saved history
/// confirms it by `replyToId` (the edited words no longer parse as the quoted format), and the
/// summary shows the words as saved, also after a reload.
#[tokio::test(flavor = "multi_thread")]
async fn an_edited_async_answer_is_confirmed_by_its_reply_target_and_stays_confirmed_after_reload() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("async").await;
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    wait_quiet(&b).await;
    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.click_button("Expand question").await;
    answer_in_dock(&b).await;
    summary(&b, |t| t.contains("queued") || t.contains("Waiting for reconnect")).await;
    b.find_xpath("//section[@data-testid='outbox-tray']//button[normalize-space()='Edit']", T).await.click().await.unwrap();
    b.find_xpath("//div[@data-testid='tray-edit']//textarea", T).await;
    let edited = "Production please, and only the unit checks";
    b.set_field("[data-testid=tray-edit] textarea", edited).await;
    b.click_button("Save").await;
    b.wait_gone("[data-testid=tray-edit]", T).await;
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    summary(&b, |t| t.starts_with("Answer sent") && t.contains(edited)).await;
    assert_eq!(user_texts(&gw, 2).await, vec!["async".to_string(), edited.to_string()], "only the edited answer, once");
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    summary(&b, |t| t.starts_with("Answer sent") && t.contains(edited)).await;
    assert!(!b.exists("[data-testid=dock-bar]").await, "the question stays answered");
    b.close().await;
}
