//! The question dock in real Chromium against the local gateway. Each scenario checks what
//! the agent receives, not just what the page shows.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use e2e::questions::{ask, other_input, two_questions};
use fantoccini::key::Key;
use serde_json::json;

const PANEL: &str = "[data-testid=question-panel]";

#[tokio::test(flavor = "multi_thread")]
async fn two_step_answer_with_multiselect_and_free_text_reaches_the_agent() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let id = ask(&mut agent, two_questions(120_000)).await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    assert_eq!(b.wait_text("[data-testid=question-header]", T, |t| !t.is_empty()).await, "Deploy");
    b.screenshot("dock-step1").await;
    let said = b.js("return document.querySelector('[data-testid=dock-announcer]').textContent;").await;
    assert_eq!(said.as_str(), Some("The agent is asking a question."), "arrival is announced politely");
    assert_eq!(
        b.js("return document.querySelector('[data-testid=dock-announcer]').getAttribute('aria-live');").await.as_str(),
        Some("polite")
    );
    b.option("Staging (Recommended)").await.click().await.unwrap();
    // Picking a single-select option moves on, and the step change is announced.
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    let said = b.js("return document.querySelector('[data-testid=dock-announcer]').textContent;").await;
    assert_eq!(said.as_str(), Some("Question 2 of 2: Which channels should be notified?"));
    b.option("Email").await.click().await.unwrap();
    b.option("Slack").await.click().await.unwrap();
    other_input(&b).await.send_keys("Only on weekdays").await.unwrap();
    b.screenshot("dock-step2-multiselect").await;
    b.click_button("Submit").await;
    let receipt = b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Answered")).await;
    assert!(receipt.contains("Email, Slack, Only on weekdays"), "{receipt}");
    assert!(receipt.contains("Where should this change be deployed?"), "the receipt keeps the wording: {receipt}");
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["status"], "answered");
    assert_eq!(got["answers"]["answers"]["deploy_target"], json!(["Staging (Recommended)"]));
    assert_eq!(got["answers"]["answers"]["notify"], json!(["Email", "Slack", "Only on weekdays"]));
    b.wait_gone(PANEL, T).await;
    b.screenshot("dock-answered").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn skip_declines_the_whole_prompt() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let id = ask(&mut agent, two_questions(120_000)).await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    b.click_button("Skip").await;
    b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Skipped")).await;
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["status"], "cancelled");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_answered_elsewhere_shows_the_winning_answers() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let id = ask(&mut agent, two_questions(120_000)).await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    b.option("Production").await.click().await.unwrap();
    agent
        .request(
            "question.resolve",
            json!({"id": id, "answers": {"answers": {"deploy_target": ["Staging (Recommended)"], "notify": ["Pager"]}}}),
        )
        .await
        .unwrap();
    let receipt = b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Answered elsewhere")).await;
    assert!(receipt.contains("Staging (Recommended)") && receipt.contains("Pager"), "{receipt}");
    b.wait_gone(PANEL, T).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn drafts_survive_switching_requests_collapse_and_reload() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let first = ask(&mut agent, two_questions(300_000)).await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    // Typed text that equals an option label must stay typed text.
    other_input(&b).await.send_keys("Production").await.unwrap();
    let second = ask(&mut agent, two_questions(300_000)).await;
    b.wait_text("[data-testid=request-position]", T, |t| t == "Request 1/2").await;
    // The person was typing: the new request waits behind the arrows.
    b.click_button("Next request").await;
    b.wait_text("[data-testid=request-position]", T, |t| t == "Request 2/2").await;
    b.option("Staging (Recommended)").await.click().await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.option("Slack").await.click().await.unwrap();
    b.click_button("Collapse").await;
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("2 pending")).await;
    b.click_button("Expand question").await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    // After the reload: the second request still on step 2 with Slack checked.
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    assert!(b.option("Slack").await.prop("checked").await.unwrap().as_deref() == Some("true"));
    assert!(b.option("Email").await.prop("checked").await.unwrap().as_deref() != Some("true"));
    b.click_button("Previous request").await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    let typed = other_input(&b).await.prop("value").await.unwrap();
    assert_eq!(typed.as_deref(), Some("Production"));
    assert!(
        b.option("Production").await.prop("checked").await.unwrap().as_deref() != Some("true"),
        "typed text did not turn into the radio"
    );
    // Submitting the first sends the typed text, not a pick.
    b.click_button("Next").await;
    b.option("Pager").await.click().await.unwrap();
    b.click_button("Submit").await;
    let got = agent.request("question.waitAnswer", json!({"id": first, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["answers"]["answers"]["deploy_target"], json!(["Production"]));
    let still = agent.request("question.get", json!({"id": second})).await.unwrap();
    assert_eq!(still["question"]["status"], "pending", "the other request was not touched");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn keyboard_digits_pick_enter_advances_and_escape_collapses() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let id = ask(&mut agent, two_questions(120_000)).await;
    b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
    let panel = b.find_xpath("//div[@data-testid='question-panel']", T).await;
    b.option("Production").await.send_keys("").await.ok();
    // Arrow keys move focus only.
    b.js("document.querySelector('.option-group input').focus();").await;
    b.client.active_element().await.unwrap().send_keys(&Key::Down.to_string()).await.unwrap();
    assert!(b.option("Production").await.prop("checked").await.unwrap().as_deref() != Some("true"), "arrow selected an option");
    b.client.active_element().await.unwrap().send_keys("2").await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.client.active_element().await.unwrap().send_keys("1").await.unwrap();
    b.client.active_element().await.unwrap().send_keys("3").await.unwrap();
    assert_eq!(b.option("Email").await.prop("checked").await.unwrap().as_deref(), Some("true"));
    assert_eq!(b.option("Pager").await.prop("checked").await.unwrap().as_deref(), Some("true"));
    b.client.active_element().await.unwrap().send_keys(&Key::Escape.to_string()).await.unwrap();
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    b.click_button("Expand question").await;
    let _ = panel;
    b.js("document.querySelector('.option-group input').focus();").await;
    b.client.active_element().await.unwrap().send_keys(&Key::Enter.to_string()).await.unwrap();
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["answers"]["answers"]["deploy_target"], json!(["Production"]));
    assert_eq!(got["answers"]["answers"]["notify"], json!(["Email", "Pager"]));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn expiry_marks_the_question_expired_and_keeps_typed_text_copyable() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let id = ask(&mut agent, two_questions(4_000)).await;
    b.wait_text("[data-testid=countdown]", T, |t| t.ends_with("left")).await;
    other_input(&b).await.send_keys("Blue-green please").await.unwrap();
    let receipt = b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Expired")).await;
    assert!(!receipt.contains("Answered"), "{receipt}");
    let unsent = b.find_xpath("//article[@data-testid='question-receipt']//textarea", T).await.prop("value").await.unwrap();
    assert_eq!(unsent.as_deref(), Some("Blue-green please"));
    assert!(!b.exists(PANEL).await, "an expired question never looks answerable");
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(got["status"], "expired", "nothing was submitted on the person's behalf");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_record_is_a_readable_notice_and_hostile_text_stays_inert() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.js("window.__xss = 0;").await;
    gw.hub().inject_raw(r#"{"type":"event","event":"question.requested","payload":{"id":"bad-1","questions":[{"questionId":"a","header":"H","question":"Pick one","options":[{"label":"1"},{"label":"2"},{"label":"3"},{"label":"4"},{"label":"5"}]}],"createdAtMs":1,"expiresAtMs":99999999999999,"status":"pending"},"seq":999}"#);
    let notice = b.wait_text("[data-testid=question-panel], .dock__panel--invalid", T, |t| t.contains("could not be shown")).await;
    assert!(notice.contains("2 to 4 options") && notice.contains("\"label\":\"5\""), "{notice}");
    let hostile = json!({"questions":[{"questionId":"x","header":"<b>hi</b>","question":"<img src=x onerror=\"window.__xss=1\"> Which?","options":[{"label":"<script>window.__xss=2</script>","description":"<a href=javascript:alert(1)>d</a>"},{"label":"Fine"}],"isOther":true}],"timeoutMs":60000});
    ask(&mut agent, hostile).await;
    let text = b.wait_text(".dock__question-text", T, |t| t.contains("Which?")).await;
    assert!(text.contains("<img src=x"), "shown as literal text: {text}");
    b.option("<script>window.__xss=2</script>").await;
    assert_eq!(b.js("return window.__xss;").await, json!(0));
    assert_eq!(b.js("return document.querySelectorAll('.dock img, .dock script, .dock b').length;").await, json!(0));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_answer_the_local_gateway_refuses_without_admin_says_why_and_keeps_the_field() {
    // The real gateway lets operator.questions answer a secret (the UI follows it and offers the
    // field); the local gateway asks for operator.admin. Its refusal is shown in words, and
    // nothing typed is lost or sent again by itself.
    let gw = LocalGateway::start_with_device_scopes(Some(&["operator.read", "operator.write", "operator.approvals", "operator.questions"]))
        .await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    ask(&mut agent, json!({"questions":[{"questionId":"token","header":"Token","question":"Paste the deploy token","options":[],"isSecret":true}],"timeoutMs":60000})).await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Paste the deploy token")).await;
    let field = b.find_xpath("//div[@data-testid='question-panel']//input[@type='password']", T).await;
    field.send_keys("tok-123-value").await.unwrap();
    b.click_button("Submit").await;
    let error = b.wait_text("[data-testid=dock-error]", T, |t| !t.is_empty()).await;
    assert!(error.contains("operator.admin"), "the refusal names the scope: {error}");
    assert!(b.exists("[data-testid=question-panel]").await, "the question stays, with its field");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dock_layout_at_390_and_430_in_light_and_dark() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    ask(&mut agent, two_questions(600_000)).await;
    // One browser per width; the theme changes in place.
    for width in [390u32, 430] {
        let b = Browser::start_sized(width, 844).await;
        b.goto(&gw.ui_url()).await;
        b.wait_text("[data-testid=step-progress]", T, |t| t == "1/2").await;
        for theme in ["light", "dark"] {
            b.js(&format!("document.documentElement.dataset.theme = '{theme}';")).await;
            let overflow = b.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth;").await;
            assert_eq!(overflow.as_i64(), Some(0), "horizontal overflow at {width} px ({theme})");
            b.screenshot(&format!("dock-{width}-{theme}")).await;
        }
        b.close().await;
    }
}
