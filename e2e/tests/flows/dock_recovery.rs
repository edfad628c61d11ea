//! The dock when things go wrong: lost acknowledgements, disconnects, deep links, and
//! connections with fewer scopes.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use e2e::questions::{ask, one_question};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_acknowledgement_keeps_the_answer_and_reconciles_after_reconnect() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let id = ask(&mut agent, one_question(120_000)).await;
    b.option("Blue").await.click().await.unwrap();
    gw.gateway().faults.drop_before_response(Some("question.resolve"));
    b.click_button("Submit").await;
    // The socket dropped with neither the response nor the event; the UI reconnects and asks.
    let receipt = b.wait_text(&format!("[data-question-id='{id}']"), T, |t| t.starts_with("Answered")).await;
    gw.gateway().faults.drop_before_response(None);
    assert!(receipt.contains("Blue") && !receipt.contains("elsewhere"), "{receipt}");
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["answers"]["answers"]["color"], json!(["Blue"]));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn submitting_while_disconnected_says_so_and_keeps_the_draft() {
    let mut gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let id = ask(&mut agent, one_question(120_000)).await;
    b.option("Red").await.click().await.unwrap();
    let port = gw.port;
    drop(agent);
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.click_button("Submit").await;
    let err = b.wait_text("[data-testid=dock-error]", T, |t| !t.is_empty()).await;
    assert!(err.starts_with("Not connected"), "{err}");
    assert_eq!(b.option("Red").await.prop("checked").await.unwrap().as_deref(), Some("true"), "the draft is intact");
    b.screenshot("dock-disconnected").await;
    // The local gateway, like the real one, forgets pending questions on restart: the
    // dock says so instead of pretending it can still be answered.
    gw.restart_on(port).await;
    let r = b.wait_text(&format!("[data-question-id='{id}']"), Duration::from_secs(40), |t| t.starts_with("Unavailable")).await;
    assert!(r.contains("Pick a color?"), "the wording stays: {r}");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deep_link_opens_one_question_and_shows_terminal_and_unknown_ones() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let first = ask(&mut agent, one_question(120_000)).await;
    let second = ask(&mut agent, one_question(120_000)).await;
    let b = Browser::open_connected(&format!("{}/ask/{second}#token={}", gw.base(), gw.token)).await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Pick a color?")).await;
    assert!(!b.exists("[data-testid=request-position]").await, "only the linked request is shown");
    b.option("Red").await.click().await.unwrap();
    b.click_button("Submit").await;
    b.wait_text(&format!("[data-question-id='{second}']"), T, |t| t.starts_with("Answered")).await;
    let still = agent.request("question.get", json!({"id": first})).await.unwrap();
    assert_eq!(still["question"]["status"], "pending");
    b.goto(&format!("{}/ask/{second}", gw.base())).await;
    let r = b.wait_text(&format!("[data-question-id='{second}']"), T, |t| t.starts_with("Answered")).await;
    assert!(r.contains("Red"), "{r}");
    b.goto(&format!("{}/ask/no-such-question", gw.base())).await;
    b.wait_text("[data-question-id='no-such-question']", T, |t| t.starts_with("Unavailable")).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_question_scope_the_ui_says_why_and_offers_nothing() {
    let gw = LocalGateway::start_with_device_scopes(Some(&["operator.read", "operator.write"])).await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let notice = b.wait_text("[data-testid=no-question-scope]", T, |t| !t.is_empty()).await;
    assert!(notice.contains("operator.questions"), "{notice}");
    let mut agent = gw.agent().await;
    ask(&mut agent, one_question(60_000)).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!b.exists("[data-testid=question-panel]").await);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_guest_answers_only_questions_of_its_own_sessions_and_gets_them_back_after_reload() {
    let gw = LocalGateway::start_with_device_scopes(Some(&["operator.sessions.write"])).await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.wait_content("[data-testid=granted-scopes]", T, |t| t == "operator.sessions.write").await;
    let device_id = &b.device_id("ocui").await;
    assert_eq!(device_id.len(), 64, "the page's device key is in its gateway's store");
    gw.gateway().store.create_session("agent:main:guest", device_id, None, None, None, 0).unwrap();
    let mut agent = gw.agent().await;
    let mut own = one_question(120_000);
    own["sessionKey"] = json!("agent:main:guest");
    let mut theirs = one_question(120_000);
    theirs["sessionKey"] = json!("agent:main:main");
    let theirs_id = ask(&mut agent, theirs).await;
    let own_id = ask(&mut agent, own).await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Pick a color?")).await;
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Pick a color?")).await;
    assert!(!b.exists("[data-testid=request-position]").await, "the other session's question is not shown");
    b.option("Blue").await.click().await.unwrap();
    b.click_button("Submit").await;
    let got = agent.request("question.waitAnswer", json!({"id": own_id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["answers"]["answers"]["color"], json!(["Blue"]));
    assert_eq!(agent.request("question.get", json!({"id": theirs_id})).await.unwrap()["question"]["status"], "pending");
    // Its summary lives in its own conversation.
    b.goto(&format!("{}/?session=agent%3Amain%3Aguest", gw.base())).await;
    b.wait_text(&format!("[data-question-id='{own_id}']"), T, |t| t.starts_with("Answered")).await;
    b.close().await;
}
