//! A waiting question is seen from outside the page: the tab title and the icon, and (opt-in)
//! desktop notifications, one per request however many tabs are open, whose click opens it.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use serde_json::{Value, json};

fn question(id: &str, header: &str, text: &str) -> Value {
    json!({"questions": [{"questionId": id, "header": header, "question": text, "options": [{"label": "Yes"}, {"label": "No"}]}], "timeoutMs": 600000})
}

async fn wait_title(b: &Browser, want: &str) {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let title = b.client.title().await.unwrap();
        if title == want {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "title is {title:?}, expected {want:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_raised_while_the_page_is_hidden_puts_a_count_in_the_title_and_a_badge_on_the_icon() {
    let gw = LocalGateway::start().await;
    // The desktop browser: the headless shell never hides a tab behind another.
    let b = Browser::start_desktop().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let ours = b.client.window().await.unwrap();
    assert_eq!(b.client.title().await.unwrap(), "OpenClaw Control");
    let icon = b.js("return document.querySelector(\"link[rel~='icon']\").getAttribute('href');").await;
    // What the tab's title was, and whether the tab was hidden, at every change of either.
    b.js("window.__seen = []; const note = () => __seen.push([document.visibilityState, document.title]);
          document.addEventListener('visibilitychange', note);
          new MutationObserver(note).observe(document.querySelector('title'), { childList: true, characterData: true, subtree: true });
          return null;")
        .await;
    // Another tab in front: ours is hidden while the question arrives.
    let other = b.client.new_window(true).await.unwrap();
    b.client.switch_to_window(other.handle.clone()).await.unwrap();
    b.goto(&format!("{}/elsewhere.txt", gw.base())).await;
    let mut agent = gw.agent().await;
    let first =
        agent.request("question.request", question("a", "Deploy", "Deploy now?")).await.unwrap()["id"].as_str().unwrap().to_string();
    let second =
        agent.request("question.request", question("b", "Notify", "Tell the team?")).await.unwrap()["id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    b.client.switch_to_window(ours.clone()).await.unwrap();
    wait_title(&b, "(2) Question waiting · OpenClaw Control").await;
    let seen = b.js("return __seen;").await;
    assert!(
        seen.as_array().unwrap().iter().any(|e| e[0] == "hidden" && e[1].as_str().unwrap().starts_with("(")),
        "the title changed while the tab was hidden: {seen}"
    );
    let badge = b.js("const l = document.querySelector(\"link[rel~='icon']\"); return [decodeURIComponent(l.getAttribute('href')), l.dataset.ocuiBadge];").await;
    let svg = badge[0].as_str().unwrap();
    assert!(svg.starts_with("data:image/svg+xml,<svg") && svg.contains(">2</text>"), "the icon carries the count: {svg}");
    assert_eq!(badge[1], "2");
    // Answered elsewhere, one after the other: the count follows, then both go back.
    agent.request("question.resolve", json!({"id": first, "answers": {"answers": {"a": ["Yes"]}}})).await.unwrap();
    wait_title(&b, "(1) Question waiting · OpenClaw Control").await;
    agent.request("question.resolve", json!({"id": second, "cancel": true})).await.unwrap();
    wait_title(&b, "OpenClaw Control").await;
    let back = b.js("return document.querySelector(\"link[rel~='icon']\").getAttribute('href');").await;
    assert_eq!(back, icon, "the icon is back as it was");
    b.close().await;
}

/// Records every notification the page creates (the browser's own still shows).
const SPY: &str = "window.__shown = [];
    window.Notification = new Proxy(window.Notification, { construct(target, args) {
      const n = new target(...args); window.__shown.push(n); return n; } });
    // The person is in another window: the page is out of sight.
    document.hasFocus = () => false;
    return null;";

#[tokio::test(flavor = "multi_thread")]
async fn with_permission_each_request_notifies_once_across_two_tabs_and_a_click_opens_that_request() {
    let gw = LocalGateway::start().await;
    let b = Browser::start_with_notifications_granted().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let tab_one = b.client.window().await.unwrap();
    let tab_two = b.client.new_window(true).await.unwrap().handle;
    b.client.switch_to_window(tab_two.clone()).await.unwrap();
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.js(SPY).await;
    b.client.switch_to_window(tab_one.clone()).await.unwrap();
    b.js(SPY).await;
    // Nothing is asked or shown before the person opts in.
    let mut agent = gw.agent().await;
    let before = agent.request("question.request", question("z", "Before", "Asked before opting in?")).await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    b.wait_text("[data-testid=dock-bar], [data-testid=question-panel]", T, |t| !t.is_empty()).await;
    agent.request("question.resolve", json!({"id": before, "cancel": true})).await.unwrap();
    // Opting in once, in tab one, applies to the other tab too (the same gateway).
    b.click_button("Notify me of questions").await;
    b.wait_content("[data-testid=notifications-toggle]", T, |t| t == "Question notifications: on").await;
    b.client.switch_to_window(tab_two.clone()).await.unwrap();
    b.wait_content("[data-testid=notifications-toggle]", T, |t| t == "Question notifications: on").await;

    let first = agent.request("question.request", question("a", "Deploy", "Deploy to production now?")).await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let second =
        agent.request("question.request", question("b", "Notify", "Tell the team?")).await.unwrap()["id"].as_str().unwrap().to_string();
    // Both tabs saw both requests; between them, each was announced exactly once.
    let count =
        |titles: &Value, needle: &str| titles.as_array().unwrap().iter().filter(|t| t.as_str().unwrap_or("").contains(needle)).count();
    let mut shown = (json!([]), json!([]));
    let deadline = tokio::time::Instant::now() + T;
    loop {
        for (tab, slot) in [(&tab_one, &mut shown.0), (&tab_two, &mut shown.1)] {
            b.client.switch_to_window(tab.clone()).await.unwrap();
            *slot = b.js("return window.__shown.map(n => n.title + ' | ' + n.body);").await;
        }
        let all: Vec<Value> = shown.0.as_array().unwrap().iter().chain(shown.1.as_array().unwrap()).cloned().collect();
        if count(&json!(all), "Deploy") >= 1 && count(&json!(all), "Notify") >= 1 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "notifications shown: {shown:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Time for a duplicate from the other tab, had there been one.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut all = Vec::new();
    let mut deploy_tab = None;
    for tab in [&tab_one, &tab_two] {
        b.client.switch_to_window(tab.clone()).await.unwrap();
        let titles = b.js("return window.__shown.map(n => n.title + ' | ' + n.body);").await;
        if count(&titles, "Deploy") == 1 {
            deploy_tab = Some(tab.clone());
        }
        all.extend(titles.as_array().unwrap().iter().cloned());
    }
    let all = json!(all);
    assert_eq!(count(&all, "Question waiting: Deploy"), 1, "one notification for the first request: {all}");
    assert_eq!(count(&all, "Question waiting: Notify"), 1, "one for the second: {all}");
    assert_eq!(all.as_array().unwrap().len(), 2, "nothing else: {all}");
    assert!(count(&all, "Deploy to production now?\n10 minutes left") == 1, "header, question text and time left: {all}");

    // A click on the first request's notification opens that request in its tab.
    let deploy_tab = deploy_tab.unwrap();
    b.client.switch_to_window(deploy_tab).await.unwrap();
    b.click_button("Collapse").await;
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("2 pending")).await;
    b.js("window.__shown.find(n => n.title.includes('Deploy')).dispatchEvent(new Event('click')); return null;").await;
    let header = b.wait_text("[data-testid=question-header]", T, |t| !t.is_empty()).await;
    assert_eq!(header, "Deploy", "the clicked request is the one shown");
    let _ = (first, second);
    b.close().await;
}
