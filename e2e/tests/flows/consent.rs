//! Consent you can trust (`model::consent`, `model::reveal`), in real Chromium against the local
//! gateway and the real OpenClaw gateway: only a click meant for a decision decides it, and
//! what is allowed is what was shown. The gateway's own record (`approval.get`) is the judge.
//!
//! Clicks that must land within the moment a decision is inert are sent as one WebDriver
//! action sequence, and the page records when the card appeared and when each pointerdown
//! landed: an attempt whose click came too late to say anything is repeated with a new
//! request, never judged by the clock of the test.

use std::time::Duration;

use e2e::T;
use e2e::Target;
use e2e::approvals::{card, raise_exec, record, recorded};
use e2e::browser::Browser;
use gateway::client::Client;
use serde_json::{Value, json};

const MAIN: &str = "agent:main:main";
/// `model::consent::INERT_MS`.
const INERT_MS: f64 = 700.0;
const ATTEMPTS: usize = 5;

async fn status(agent: &mut Client, id: &str) -> Value {
    record(agent, id).await["status"].clone()
}

/// Still pending after the page had time to send anything it was going to send.
async fn still_pending(b: &Browser, agent: &mut Client, id: &str, why: &str) {
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let s = status(agent, id).await;
    if s != "pending" {
        let shot = b.screenshot("consent-decided").await;
        panic!("{why}: the approval is {s}; screenshot: {shot}");
    }
}

fn button(id: &str, name: &str) -> String {
    format!("//*[@data-testid='approval-card' and @data-approval-id='{id}']//button[normalize-space()='{name}']")
}

async fn click(b: &Browser, id: &str, name: &str) {
    b.click_xpath(&button(id, name)).await;
}

/// Records, in the page, when an element matching `css` appeared or went (`window.__seen`)
/// and when each pointerdown landed (`window.__downs`), on the clock of events' timeStamp.
async fn watch(b: &Browser, css: &str, appear: bool) {
    b.js(&format!(
        "window.__seen = null; window.__downs = [];
         if (window.__watch) window.__watch.disconnect();
         const test = () => !!document.querySelector({css}) === {appear};
         window.__watch = new MutationObserver(() => {{ if (window.__seen === null && test()) window.__seen = performance.now(); }});
         window.__watch.observe(document.body, {{subtree: true, childList: true, attributes: true}});
         if (!window.__downsHooked) {{ window.__downsHooked = true; addEventListener('pointerdown', (e) => window.__downs.push(e.timeStamp), true); }}
         return null;",
        css = json!(css)
    ))
    .await;
}

/// `(seen, pointerdowns)` as recorded by [`watch`].
async fn watched(b: &Browser) -> (Option<f64>, Vec<f64>) {
    // Nothing recorded if the page started again (a switch that went through).
    let v = b.js("return [window.__seen, window.__downs || []];").await;
    (v[0].as_f64(), v[1].as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default())
}

async fn flows(t: Target, agent: &mut Client) {
    let b = Browser::start_sized(1000, 800).await;
    b.goto(&t.ui("/")).await;
    b.wait_connected().await;

    // 1. One click on Always allow does not decide it; it asks again.
    let id = raise_exec(agent, "ls /tmp/consent-always", json!({})).await;
    b.wait_text(&card(&id), T, |s| s.contains("Always allow here")).await;
    click(&b, &id, "Always allow here").await;
    b.wait_text(&format!("{} [data-testid=approval-confirm]", card(&id)), T, |s| s.contains("again")).await;
    still_pending(&b, agent, &id, "one click on Always allow decided it").await;
    click(&b, &id, "Deny").await;
    recorded(agent, &id, "denied").await;

    // 2. Hidden characters are shown as escapes, with a warning that names them.
    let id = raise_exec(agent, "echo \u{202E}gnp.exe\u{200B} done", json!({})).await;
    let shown = b.wait_text(&format!("{} [data-testid=approval-command]", card(&id)), T, |s| !s.is_empty()).await;
    assert!(shown.contains("\\u{202E}") && shown.contains("\\u{200B}"), "both shown as escapes: {shown:?}");
    assert!(!shown.contains('\u{202E}') && !shown.contains('\u{200B}'), "neither drawn as it is: {shown:?}");
    let warning = b.wait_text(&format!("{} [data-testid=approval-hidden-chars]", card(&id)), T, |s| !s.is_empty()).await;
    assert!(warning.contains("U+202E") && warning.contains("U+200B") && warning.contains("direction"), "{warning}");
    let dir = b
        .js(&format!(
            "return getComputedStyle(document.querySelector({})).direction;",
            json!(format!("{} [data-testid=approval-command]", card(&id)))
        ))
        .await;
    assert_eq!(dir, json!("ltr"), "the command is drawn left-to-right");
    click(&b, &id, "Deny").await;
    recorded(agent, &id, "denied").await;

    // 3. A 60-line command cannot be allowed before its last line was in view.
    let long: Vec<String> = (1..=60).map(|i| format!("echo line-{i}")).collect();
    let id = raise_exec(agent, &long.join("\n"), json!({})).await;
    let lines = b.wait_text(&format!("{} [data-testid=approval-lines]", card(&id)), T, |s| !s.is_empty()).await;
    assert!(lines.starts_with("60 lines"), "{lines}");
    let allow = format!("{} .approval__allow", card(&id));
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let disabled = b.js(&format!("return document.querySelector({}).getAttribute('aria-disabled');", json!(allow))).await;
    assert_eq!(disabled, json!("true"), "Allow waits for the command's end");
    b.clicks_at(b.centre(&allow).await, 1, Duration::ZERO).await;
    b.wait_text(&format!("{} [data-testid=approval-too-early]", card(&id)), T, |s| s.contains("to its end")).await;
    still_pending(&b, agent, &id, "a command allowed before its end was in view").await;
    b.js(&format!(
        "const p = document.querySelector({}); p.scrollTop = p.scrollHeight; return null;",
        json!(format!("{} [data-testid=approval-command]", card(&id)))
    ))
    .await;
    click(&b, &id, "Allow once").await;
    recorded(agent, &id, "allowed").await;

    // 4. A held Enter does not allow: the first press arms, auto-repeat and a press without a
    // release between never confirm.
    let id = raise_exec(agent, "ls /tmp/consent-held-enter", json!({})).await;
    b.wait_live(&button(&id, "Allow once")).await;
    b.js(&format!(
        "document.evaluate({}, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.focus(); return null;",
        json!(button(&id, "Allow once"))
    ))
    .await;
    {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let enter = char::from(fantoccini::key::Key::Enter);
        let held = KeyActions::new("keyboard".into())
            .then(KeyAction::Down { value: enter })
            .pause(Duration::from_millis(900))
            .then(KeyAction::Down { value: enter })
            .pause(Duration::from_millis(900))
            .then(KeyAction::Down { value: enter });
        b.client.perform_actions(held).await.unwrap();
    }
    b.wait_text(&format!("{} [data-testid=approval-confirm]", card(&id)), T, |s| s.contains("again")).await;
    still_pending(&b, agent, &id, "a held Enter allowed").await;
    b.client.release_actions().await.unwrap();
    click(&b, &id, "Deny").await;
    recorded(agent, &id, "denied").await;

    // 5. A double-click on Skip, with an approval queued behind the question: the approval
    // waits in the collapsed bar, and stays pending.
    let approval = raise_exec(agent, "rm -rf /tmp/consent-behind", json!({})).await;
    b.wait_text(&card(&approval), T, |s| s.contains("consent-behind")).await;
    let mut judged = false;
    for attempt in 0..ATTEMPTS {
        let q = json!({"questions": [{"questionId": "q", "header": "Deploy", "question": format!("Deploy now? ({attempt})"), "options": [{"label": "Yes"}, {"label": "No"}]}], "timeoutMs": 600000, "sessionKey": MAIN});
        agent.request("question.request", q).await.unwrap();
        b.wait_text("[data-testid=question-panel]", T, |s| s.contains(&format!("({attempt})"))).await;
        b.wait_live("//*[@data-testid='question-panel']//button[normalize-space()='Skip']").await;
        watch(&b, "[data-testid=question-panel]", false).await;
        let skip = b.centre("[data-testid=question-panel] .dock__skip").await;
        b.clicks_at(skip, 2, Duration::from_millis(350)).await;
        b.wait_gone("[data-testid=question-panel]", T).await;
        let (left, downs) = watched(&b).await;
        still_pending(&b, agent, &approval, "a double-click on Skip decided the approval behind the question").await;
        let count = b.wait_text("[data-testid=dock-bar-count]", T, |s| !s.is_empty()).await;
        assert_eq!(count, "1 approval waiting", "the dock says what waits instead of drawing it under the pointer");
        // Judged only when the question had left before the second click came down.
        if let (Some(left), Some(second)) = (left, downs.get(1)) {
            if left < *second {
                judged = true;
                break;
            }
        }
    }
    assert!(judged, "in {ATTEMPTS} attempts the question never left between the two clicks of a double-click");

    // 6. An approval drawn under the pointer ignores the click that was already on its way.
    b.click_button("Expand approval").await;
    let at = b.centre(&format!("{} .approval__allow", card(&approval))).await;
    click(&b, &approval, "Deny").await;
    recorded(agent, &approval, "denied").await;
    let mut judged = None;
    for attempt in 0..ATTEMPTS {
        watch(&b, "[data-testid=approval-card]", true).await;
        let id = raise_exec(agent, &format!("ls /tmp/consent-under-pointer-{attempt}"), json!({})).await;
        b.wait_text(&card(&id), T, |s| s.contains("under-pointer")).await;
        b.clicks_at(at, 1, Duration::ZERO).await;
        let (drawn, downs) = watched(&b).await;
        match (drawn, downs.first()) {
            (Some(drawn), Some(down)) if down - drawn < INERT_MS => {
                b.wait_text(&format!("{} [data-testid=approval-too-early]", card(&id)), T, |s| s.contains("too soon")).await;
                still_pending(&b, agent, &id, "a click on its way when the card appeared decided it").await;
                judged = Some(id);
                break;
            }
            _ => {
                click(&b, &id, "Deny").await;
                recorded(agent, &id, "denied").await;
            }
        }
    }
    let id = judged.unwrap_or_else(|| panic!("in {ATTEMPTS} attempts no click landed within {INERT_MS} ms of the card"));
    // The same place, clicked once the card could be read, decides.
    b.wait_live(&button(&id, "Allow once")).await;
    b.clicks_at(at, 1, Duration::ZERO).await;
    recorded(agent, &id, "allowed").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn consent_on_the_local_gateway() {
    let gw = e2e::LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let url = gw.ui_url();
    let fragment = url[url.find('#').unwrap()..].to_string();
    flows(Target { base: gw.base(), fragment, name: "local" }, &mut agent).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn consent_on_the_real_gateway() {
    let gw = tokio::task::spawn_blocking(e2e::real::RealGateway::start).await.unwrap();
    let mut agent = gw.agent().await;
    flows(Target { base: gw.base(), fragment: format!("#token={}", e2e::real::TOKEN), name: "real" }, &mut agent).await;
}

/// The gateway switch ignores a click that came before it could be read, and Keep comes first.
#[tokio::test(flavor = "multi_thread")]
async fn the_gateway_switch_ignores_an_early_click() {
    let own = e2e::LocalGateway::start().await;
    let other = e2e::LocalGateway::start().await;
    let link = format!("ws://127.0.0.1:{}", other.port);
    let host = format!("127.0.0.1:{}", other.port);
    let b = Browser::start().await;
    let mut judged = false;
    for attempt in 0..ATTEMPTS {
        b.goto(&format!("{}/?try={attempt}#token={}&gatewayUrl={link}", own.base(), other.token)).await;
        // Judged only if the dialog appeared after the page's watch began.
        b.js("window.__early = !!document.querySelector('[data-testid=gateway-switch]'); return null;").await;
        watch(&b, "[data-testid=gateway-switch]", true).await;
        b.wait_text("[data-testid=gateway-switch-link]", T, |t| t == link).await;
        let order = b.js("return [...document.querySelectorAll('.gateway-switch__actions button')].map(e => e.textContent);").await;
        assert_eq!(order, json!(["Keep current gateway", format!("Switch to {host}")]), "Keep comes first");
        b.clicks_at(b.centre(".gateway-switch__switch").await, 1, Duration::ZERO).await;
        let (drawn, downs) = watched(&b).await;
        let early = b.js("return window.__early !== false;").await == json!(true);
        if let (false, Some(drawn), Some(down)) = (early, drawn, downs.first()) {
            if down - drawn < INERT_MS {
                b.wait_text("[data-testid=gateway-switch-too-early]", T, |s| s.contains("too soon")).await;
                assert!(b.exists("[data-testid=gateway-switch]").await, "the early click did not switch");
                judged = true;
                break;
            }
        }
        // Too late to judge (and perhaps switched): start again from our own gateway.
        b.js("sessionStorage.clear(); return null;").await;
    }
    assert!(judged, "in {ATTEMPTS} attempts no click landed within {INERT_MS} ms of the dialog");
    b.click_button(&format!("Switch to {host}")).await;
    b.wait_content("[data-testid=gateway-host]", T, |t| t == host).await;
    b.close().await;
}
