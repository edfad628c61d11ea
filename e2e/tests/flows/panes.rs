//! Conversation panes in real Chromium against the local gateway: two panes never disagree
//! about a request (one draft, one answer, one outbox), the layout lives in the URL, and a
//! question in one pane leaves the other pane's composer free (openclaw#118787).

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use e2e::questions::ask;
use serde_json::{Value, json};

const MAIN: &str = "agent:main:main";
const ONE: &str = "(//section[@data-testid='pane'])[1]";
const TWO: &str = "(//section[@data-testid='pane'])[2]";

fn pane_css(n: usize) -> String {
    format!("main > section[data-testid=pane]:nth-of-type({n})")
}

fn question(session: &str) -> Value {
    json!({"sessionKey": session, "questions": [
        {"questionId": "target", "header": "Deploy", "question": "Where should this change be deployed?",
         "options": [{"label": "Staging"}, {"label": "Production"}], "isOther": true}
    ], "timeoutMs": 120_000})
}

async fn open(gw: &LocalGateway, width: u32, query: &str) -> Browser {
    let b = Browser::start_sized(width, 900).await;
    b.goto(&format!("{}/?{query}#token={}", gw.base(), gw.token)).await;
    b.wait_connected().await;
    b
}

/// An option's input in one pane, found by its label.
fn option(pane: &str, label: &str) -> String {
    format!(
        "{pane}//label[contains(@class,'option-item')][.//span[contains(@class,'option-item__label') and normalize-space()='{label}']]//input"
    )
}

async fn click(b: &Browser, xpath: &str) {
    b.click_xpath(xpath).await;
}

async fn value_of(b: &Browser, css: &str) -> Value {
    b.js(&format!("const e = document.querySelector({css:?}); return e ? e.value : null;")).await
}

#[tokio::test(flavor = "multi_thread")]
async fn two_panes_on_one_conversation_share_the_draft_and_an_answer_in_one_closes_the_other_at_once() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = open(&gw, 1400, &format!("session={MAIN}&pane={MAIN}")).await;
    assert_eq!(b.js("return document.querySelectorAll('[data-testid=pane]').length;").await, json!(2), "the URL opens two panes");
    let id = ask(&mut agent, question(MAIN)).await;
    for n in [1, 2] {
        b.wait_text(&format!("{} [data-testid=question-header]", pane_css(n)), T, |t| t == "Deploy").await;
    }
    // A draft typed in one pane shows in the other at once.
    let other = |pane: &str| format!("{pane}//label[contains(@class,'dock__other')]//input");
    b.find_xpath(&other(ONE), T).await.send_keys("Canary first").await.unwrap();
    let other_css = |n: usize| format!("{} .dock__other input", pane_css(n));
    b.wait_js(&format!("const e = document.querySelector({:?}); return e && e.value;", other_css(2)), |v| v == "Canary first").await;
    b.screenshot("panes-1400-light").await;
    b.js("document.documentElement.dataset.theme = 'dark'; return null;").await;
    b.screenshot("panes-1400-dark").await;
    b.js("document.documentElement.dataset.theme = 'light'; return null;").await;
    // Answered in the second pane: the first closes too, and both transcripts keep the summary.
    click(&b, &format!("{TWO}//button[normalize-space()='Submit']")).await;
    for n in [1, 2] {
        b.wait_gone(&format!("{} [data-testid=question-panel]", pane_css(n)), T).await;
        b.wait_text(&format!("{} [data-testid=question-receipt]", pane_css(n)), T, |t| {
            t.starts_with("Answered") && t.contains("Canary first")
        })
        .await;
    }
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["status"], "answered");
    assert_eq!(got["answers"]["answers"]["target"], json!(["Canary first"]), "answered once, with the shared draft");
    // The composer draft is one per conversation too.
    b.find_xpath(&format!("{ONE}//textarea[@name='message']"), T).await.send_keys("typed in the first pane").await.unwrap();
    b.wait_js(&format!("const e = document.querySelector({:?}); return e && e.value;", format!("{} textarea", pane_css(2))), |v| {
        v == "typed in the first pane"
    })
    .await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_in_one_pane_leaves_the_other_panes_composer_free_and_focus_stays_put() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = open(&gw, 1400, &format!("session={MAIN}&pane=agent:main:side")).await;
    // The person is typing in the second pane when a question arrives for the first.
    let area = b.find_xpath(&format!("{TWO}//textarea[@name='message']"), T).await;
    area.send_keys("notes for the side conversation").await.unwrap();
    ask(&mut agent, question(MAIN)).await;
    b.wait_text(&format!("{} [data-testid=dock-bar], {} [data-testid=question-panel]", pane_css(1), pane_css(1)), T, |t| !t.is_empty())
        .await;
    assert!(
        !b.exists(&format!("{} [data-testid=question-panel], {} [data-testid=dock-bar]", pane_css(2), pane_css(2))).await,
        "the question is not in the other conversation's pane"
    );
    let focus = b.js("const a = document.activeElement; return [a.tagName, a.closest('[data-testid=pane]') === document.querySelectorAll('[data-testid=pane]')[1]];").await;
    assert_eq!(focus, json!(["TEXTAREA", true]), "focus stays where the person was typing");
    // The second pane's composer still sends.
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    let texts = e2e::wait_user_texts(&gw, "agent:main:side", 1).await;
    assert_eq!(texts, vec!["notes for the side conversation".to_string()]);
    // And the first pane's question is answered in the first pane.
    b.click_button("Expand question").await;
    click(&b, &option(ONE, "Production")).await;
    click(&b, &format!("{ONE}//button[normalize-space()='Submit']")).await;
    b.wait_text(&format!("{} [data-testid=question-receipt]", pane_css(1)), T, |t| t.contains("Production")).await;
    assert!(!b.exists(&format!("{} [data-testid=question-receipt]", pane_css(2))).await, "its summary belongs to its own conversation");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_layout_is_in_the_url_and_closing_a_pane_keeps_its_draft_and_queued_message() {
    let mut gw = LocalGateway::start().await;
    gw.agent().await.request("sessions.create", json!({"key": "agent:main:side"})).await.unwrap();
    let b = open(&gw, 1400, &format!("session={MAIN}")).await;
    assert_eq!(b.js("return document.querySelectorAll('[data-testid=pane]').length;").await, json!(1));
    b.click_button("Open another pane").await;
    b.wait_text(&format!("{} [data-testid=conversation-header]", pane_css(2)), T, |_| true).await;
    // Point the new pane (the focused one) at another conversation from the list, and reload:
    // the layout comes back.
    b.find_xpath("//button[@data-testid='conversation-row' and @data-key='agent:main:side']", T).await.click().await.unwrap();
    let url = b.wait_js("return location.search;", |v| v.as_str().is_some_and(|s| s.contains("pane=agent%3Amain%3Aside"))).await;
    assert_eq!(url, json!("?session=agent%3Amain%3Amain&pane=agent%3Amain%3Aside"));
    b.goto(&format!("{}/{}#token={}", gw.base(), url.as_str().unwrap(), gw.token)).await;
    b.wait_connected().await;
    let sessions = b.js("return [...document.querySelectorAll('[data-testid=pane]')].map(p => p.dataset.session);").await;
    assert_eq!(sessions, json!([MAIN, "agent:main:side"]), "the reload restores both panes");
    // With the gateway stopped, a message is queued and a draft typed in the second pane.
    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    let area = b.find_xpath(&format!("{TWO}//textarea[@name='message']"), T).await;
    area.send_keys("queued while down").await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    area.send_keys("a draft for later").await.unwrap();
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("queued while down")).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    click(&b, &format!("{TWO}//button[normalize-space()='Close pane']")).await;
    assert_eq!(b.js("return document.querySelectorAll('[data-testid=pane]').length;").await, json!(1));
    assert_eq!(b.js("return location.search;").await, json!("?session=agent%3Amain%3Amain"), "the URL follows");
    // Nothing was touched: the queued message is sent once the gateway is back, and the
    // draft is there when the conversation opens again.
    gw.restart_on(port).await;
    let texts = e2e::wait_user_texts(&gw, "agent:main:side", 1).await;
    assert_eq!(texts, vec!["queued while down".to_string()]);
    b.click_button("Open another pane").await;
    b.wait_text(&format!("{} [data-testid=conversation-header]", pane_css(2)), T, |_| true).await;
    b.find_xpath("//button[@data-testid='conversation-row' and @data-key='agent:main:side']", T).await.click().await.unwrap();
    b.wait_js(&format!("const e = document.querySelector({:?}); return e && e.value;", format!("{} textarea", pane_css(2))), |v| {
        v == "a draft for later"
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(e2e::wait_user_texts(&gw, "agent:main:side", 1).await.len(), 1, "sent exactly once");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn discard_of_an_async_answer_reopens_its_draft_in_both_panes() {
    let mut gw = LocalGateway::start().await;
    let b = open(&gw, 1400, &format!("session={MAIN}&pane={MAIN}")).await;
    b.find_xpath(&format!("{ONE}//textarea[@name='message']"), T).await.send_keys("async\n").await.unwrap();
    for n in [1, 2] {
        b.wait_text(&format!("{} [data-testid=dock-bar]", pane_css(n)), T, |t| t.contains("1 pending")).await;
    }
    b.wait_gone("[data-testid=stream]", T).await;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    click(&b, &format!("{ONE}//button[normalize-space()='Expand question']")).await;
    click(&b, &option(ONE, "Production")).await;
    b.wait_text(&format!("{} [data-testid=step-progress]", pane_css(1)), T, |t| t == "2/2").await;
    click(&b, &format!("{ONE}//button[normalize-space()='Submit']")).await;
    for n in [1, 2] {
        b.wait_gone(&format!("{} [data-testid=question-panel]", pane_css(n)), T).await;
        b.wait_text(&format!("{} [data-testid=async-summary]", pane_css(n)), T, |t| {
            t.contains("queued") || t.contains("Waiting for reconnect")
        })
        .await;
    }
    click(&b, &format!("{TWO}//div[@data-testid='async-summary']//button[normalize-space()='Discard']")).await;
    // Back in the dock of both panes, with the draft as it was.
    for n in [1, 2] {
        b.wait_text(&format!("{} [data-testid=dock-bar], {} [data-testid=question-panel]", pane_css(n), pane_css(n)), T, |t| !t.is_empty())
            .await;
    }
    if b.exists("[data-testid=dock-bar]").await {
        b.click_button("Expand question").await;
    }
    for n in [1, 2] {
        let progress = b.wait_text(&format!("{} [data-testid=step-progress]", pane_css(n)), T, |t| !t.is_empty()).await;
        let pane = if n == 1 { ONE } else { TWO };
        if progress == "2/2" {
            click(&b, &format!("{pane}//button[normalize-space()='Back']")).await;
        }
        let checked = b.find_xpath(&option(pane, "Production"), T).await.prop("checked").await.unwrap();
        assert_eq!(checked.as_deref(), Some("true"), "the preserved draft in pane {n}");
    }
    assert_eq!(value_of(&b, &format!("{} textarea", pane_css(1))).await, json!(""), "an async answer does not land in the composer");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn below_900_px_one_pane_shows_with_a_switcher_that_names_the_open_conversations() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = open(&gw, 390, &format!("session={MAIN}&pane=agent:main:side")).await;
    let switcher = b.wait_text("[data-testid=pane-switcher]", T, |t| t.contains("main") && t.contains("side")).await;
    assert!(switcher.contains("main") && switcher.contains("side"), "{switcher}");
    let shown = || {
        b.js(
            "return [...document.querySelectorAll('[data-testid=pane]')].filter(p => p.offsetParent !== null).map(p => p.dataset.session);",
        )
    };
    assert_eq!(shown().await, json!([MAIN]));
    // A question for the pane out of sight is said on its button.
    ask(&mut agent, question("agent:main:side")).await;
    b.wait_text("[data-testid=pane-switcher]", T, |t| t.contains("side · 1 question")).await;
    for theme in ["light", "dark"] {
        b.js(&format!("document.documentElement.dataset.theme = '{theme}'; return null;")).await;
        b.screenshot(&format!("pane-switcher-390-{theme}")).await;
    }
    click(&b, "//nav[@data-testid='pane-switcher']//button[contains(normalize-space(),'side')]").await;
    b.wait_js(
        "return [...document.querySelectorAll('[data-testid=pane]')].filter(p => p.offsetParent !== null).map(p => p.dataset.session);",
        |v| v == &json!(["agent:main:side"]),
    )
    .await;
    b.wait_text(&format!("{} [data-testid=question-header]", pane_css(2)), T, |t| t == "Deploy").await;
    let overflow = b.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth;").await;
    assert_eq!(overflow, json!(0), "no sideways scrolling at 390 px");
    b.close().await;
}
