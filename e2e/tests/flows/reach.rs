//! Reach the person with no tab open (issue 39), in real Chromium: the app is installable
//! (Chromium's own check) at the root and under a base path; Web Push through the local
//! gateway and the real gateway (2026.9.6) to a push service on loopback (`e2e::push_service`),
//! the payload decrypted with the subscription's keys; the service worker shows it (generic
//! text for an approval, Deny as its one action, never Allow; the two options of a question)
//! and shows nothing while a window of the app is visible; and a notification's choice opens
//! the card with it chosen, sent by one click there.
//!
//! `PushManager.subscribe` needs the browser's push service, which test machines cannot reach:
//! the page's `PushManager` is replaced by a stub that hands out the loopback subscription
//! (`stub_push_manager`). Everything after it is real: the page's subscribe and preferences
//! requests, the gateway's encryption and delivery, the worker's push and its notification.

use std::time::Duration;

use e2e::browser::Browser;
use e2e::push_service::{PushService, TestSubscription};
use e2e::{LocalGateway, T};
use serde_json::{Value, json};

/// Replaces the page's `PushManager` with one whose subscription is `sub` (the loopback push
/// service's endpoint and the test's keys), made with the key the page passes in.
async fn stub_push_manager(b: &Browser, sub: &TestSubscription) {
    let script = format!(
        "const E = {endpoint}, K = {keys};
         let held = null;
         const make = (key) => ({{ endpoint: E, options: {{ applicationServerKey: key, userVisibleOnly: true }},
           toJSON() {{ return {{ endpoint: E, expirationTime: null, keys: K }}; }},
           async unsubscribe() {{ held = null; return true; }} }});
         PushManager.prototype.subscribe = async function (o) {{
           const k = o.applicationServerKey;
           held = make(k instanceof ArrayBuffer ? k : k.buffer.slice(k.byteOffset, k.byteOffset + k.byteLength));
           window.ocuiTestSubscribed = (window.ocuiTestSubscribed || 0) + 1;
           return held;
         }};
         PushManager.prototype.getSubscription = async function () {{ return held; }};
         return true;",
        endpoint = json!(sub.endpoint),
        keys = sub.keys(),
    );
    b.js(&script).await;
}

/// Opens the status bar's Details and turns notifications on.
async fn turn_on(b: &Browser) {
    // The setting is drawn, and its code fetched, once the details are opened.
    assert!(!b.exists("[data-testid=push-settings]").await, "the setting waits for the details to open");
    b.click_xpath("//details[contains(@class, 'status-bar__more')]/summary").await;
    let settings = b.wait_content("[data-testid=push-settings]", T, |t| !t.contains("Checked once connected")).await;
    assert!(settings.contains("Turn on notifications"), "the setting offers to turn on: {settings}");
    b.click_xpath("//section[@data-testid='push-settings']//button[normalize-space()='Turn on notifications']").await;
    b.wait_content("[data-testid=push-settings]", T, |t| t.contains("Turn off")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn chromium_finds_the_app_installable_at_the_root_and_under_a_base_path() {
    let gw = LocalGateway::start().await;
    let real = e2e::real::RealGateway::start_serving(&e2e::dist_dir_ui(), "/ui");
    let b = Browser::start().await;
    for url in [gw.ui_url(), real.ui_url()] {
        b.goto(&url).await;
        b.wait_connected().await;
        b.wait_for_shell_cache().await;
        let manifest = b.js("return document.querySelector('link[rel=manifest]').href;").await;
        let errors = b.cdp("Page.getInstallabilityErrors", json!({})).await;
        assert_eq!(errors["installabilityErrors"], json!([]), "{url}: Chromium's installability check ({manifest})");
        let app = b.cdp("Page.getAppManifest", json!({})).await;
        assert!(app["errors"].as_array().is_some_and(|e| e.is_empty()), "{url}: the manifest parses without errors: {app}");
        let parsed: Value = serde_json::from_str(app["data"].as_str().unwrap_or("{}")).unwrap();
        assert_eq!(parsed["start_url"], "./", "{url}");
        let base = if url.contains("/ui/") { "/ui/" } else { "/" };
        assert!(manifest.as_str().unwrap().ends_with(&format!("{base}app.webmanifest")), "{url}: {manifest}");
        let icons: Vec<(String, Value)> =
            parsed["icons"].as_array().unwrap().iter().map(|i| (i["sizes"].as_str().unwrap().to_string(), i["purpose"].clone())).collect();
        assert!(icons.contains(&("512x512".into(), json!("maskable"))) && icons.iter().any(|(s, _)| s == "192x192"), "{icons:?}");
    }
    real.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_gateway_pushes_an_approval_and_a_question_and_a_notifications_choice_is_sent_by_one_click() {
    let mut push = PushService::start().await;
    let gw = LocalGateway::start().await;
    let b = Browser::start_with_notifications_granted().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.wait_for_shell_cache().await;
    let sub = TestSubscription::new(push.endpoint("local"));
    stub_push_manager(&b, &sub).await;
    turn_on(&b).await;
    assert_eq!(b.js("return window.ocuiTestSubscribed;").await, json!(1), "the page subscribed once");
    let categories = b.js("return [...document.querySelectorAll('[data-testid=push-settings] input[type=checkbox]')].map(i => [i.parentElement.textContent.trim(), i.checked]);").await;
    assert_eq!(categories[0], json!(["Approvals", true]), "{categories}");
    assert_eq!(categories[1], json!(["Questions and secrets requests", true]), "{categories}");

    // An approval: the push service gets the generic payload, encrypted for the subscription.
    let mut agent = gw.agent().await;
    let id = e2e::approvals::raise_exec(&mut agent, "rm -rf /tmp/secret-build-dir", json!({})).await;
    let received = push.next(T).await;
    assert_eq!(received.path, "/push/local");
    assert_eq!(received.header("urgency"), Some("high"));
    let vapid = gw.gateway().store.machine_state_or("webPush.vapidKeys", String::new).unwrap();
    assert!(!vapid.is_empty());
    let auth = received.header("authorization").unwrap_or_default().to_string();
    assert!(auth.starts_with("vapid t=") && auth.contains(", k="), "a VAPID token: {auth}");
    let payload = sub.decrypt(&received);
    assert_eq!(payload["title"], "OpenClaw approval requested");
    assert_eq!(payload["url"], json!(format!("approve/{id}")));
    assert!(!payload.to_string().contains("rm -rf") && !payload.to_string().contains("secret-build-dir"), "never the command: {payload}");

    // The worker shows nothing while a window of the app is visible…
    b.deliver_push(&payload.to_string()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(b.notifications().await, json!([]), "a visible window shows the approval already");
    // …and with no window of the app open, the notification: generic, Deny its only action.
    let origin = gw.base();
    b.goto("about:blank").await;
    b.deliver_push_to(&origin, &format!("{origin}/"), &payload.to_string()).await;
    b.goto(&format!("{origin}/approve/{id}?choice=deny")).await;
    let shown = b.notifications().await;
    let n = &shown[0];
    assert_eq!(n["title"], "OpenClaw approval requested", "{shown}");
    assert!(!n["body"].as_str().unwrap().contains("rm"), "{n}");
    assert_eq!(n["actions"], json!([{"action": "deny", "title": "Deny"}]), "Deny only, never Allow: {n}");
    assert_eq!(n["data"]["url"], json!(format!("{origin}/approve/{id}")));

    // Its Deny opens the card with Deny chosen: one click there sends it.
    b.wait_connected().await;
    let note = b.wait_text("[data-testid=notification-choice]", T, |t| !t.is_empty()).await;
    assert!(note.contains("You chose “Deny” in a notification"), "{note}");
    assert!(!b.current_url().await.contains("choice="), "the choice leaves the address: a reload chooses nothing");
    assert_eq!(e2e::approvals::record(&mut agent, &id).await["status"], "pending", "nothing was sent before the click");
    b.click_xpath(&format!("//*[@data-approval-id='{id}']//button[normalize-space()='Deny']")).await;
    e2e::approvals::recorded(&mut agent, &id, "denied").await;
    // Decided, the approval's notification goes: its Deny can no longer be given.
    let open_for = |target: String| {
        format!(
            "const r = await navigator.serviceWorker.ready; return (await r.getNotifications()).filter(n => n.data && n.data.url === {target:?}).length;"
        )
    };
    b.wait_js(&open_for(format!("{origin}/approve/{id}")), |v| v == &json!(0)).await;
    let update = sub.decrypt(&push.next(T).await);
    assert_eq!(
        (update["title"].as_str(), update["tag"].as_str()),
        (Some("OpenClaw approval updated"), payload["tag"].as_str()),
        "{update}"
    );

    // A question of two options: its text and both options, as the notification's actions.
    let asked = agent
        .request("question.request", json!({"questions": [{"questionId": "q", "header": "Deploy", "question": "Ship the build now?", "options": [{"label": "Ship it"}, {"label": "Hold"}]}], "timeoutMs": 600000}))
        .await
        .unwrap();
    let qid = asked["id"].as_str().unwrap().to_string();
    let payload = sub.decrypt(&push.next(T).await);
    assert_eq!(payload["choices"], json!(["Ship it", "Hold"]), "{payload}");
    assert_eq!(payload["body"], "Ship the build now?");
    b.goto("about:blank").await;
    b.deliver_push_to(&origin, &format!("{origin}/"), &payload.to_string()).await;
    b.goto(&format!("{origin}/ask/{qid}?choice=option-1")).await;
    let shown = b.notifications().await;
    let n = shown.as_array().unwrap().iter().find(|n| n["tag"] == payload["tag"]).unwrap_or_else(|| panic!("{shown}"));
    assert_eq!(n["actions"], json!([{"action": "choose-0", "title": "Ship it"}, {"action": "choose-1", "title": "Hold"}]));
    b.wait_connected().await;
    b.wait_text("[data-testid=notification-choice]", T, |t| t.contains("You chose “Hold”")).await;
    let checked = b.wait_js("return [...document.querySelectorAll('[data-testid=question-panel] [aria-checked=true], [data-testid=question-panel] input:checked')].map(e => e.closest('label, [role=radio]')?.textContent.trim());", |v| v.as_array().is_some_and(|a| !a.is_empty())).await;
    assert!(checked.to_string().contains("Hold"), "the option is chosen: {checked}");
    let record = agent.request("question.get", json!({"id": qid})).await.unwrap();
    assert_eq!(record["question"]["status"], "pending", "nothing was sent before the click: {record}");
    b.click_button("Submit").await;
    let answered = agent.request("question.waitAnswer", json!({"id": qid, "timeoutMs": 20000})).await.unwrap();
    assert!(answered.to_string().contains("\"Hold\"") && !answered.to_string().contains("Ship it\"]"), "answered exactly Hold: {answered}");
    // Answered, the question's notification goes too (the gateway sends no update for it).
    b.wait_js(&open_for(format!("{origin}/ask/{qid}")), |v| v == &json!(0)).await;

    // Turned off: unsubscribed at the gateway and in the browser; nothing more is sent. (A new
    // page has the browser's own PushManager again: stubbed and turned on once more, which
    // registers the same endpoint again.)
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    stub_push_manager(&b, &sub).await;
    turn_on(&b).await;
    b.click_xpath("//section[@data-testid='push-settings']//button[normalize-space()='Turn off']").await;
    b.wait_content("[data-testid=push-settings]", T, |t| t.contains("Turn on notifications")).await;
    e2e::approvals::raise_exec(&mut agent, "ls", json!({})).await;
    assert!(push.nothing_within(Duration::from_secs(2)).await.is_none(), "nothing is sent after turning off");
}

#[tokio::test(flavor = "multi_thread")]
async fn coming_back_after_a_while_shows_what_finished_and_what_still_waits() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("hello while away").await;
    b.wait_text("[data-testid=message][data-role=assistant] .msg__text", T, |t| t.contains("hello while away")).await;
    assert!(!b.exists("[data-testid=away-card]").await, "no card for someone who never left");
    let mut agent = gw.agent().await;
    agent
        .request("question.request", json!({"questions": [{"questionId": "q", "header": "Away", "question": "Still there?", "options": [{"label": "Yes"}, {"label": "Later"}]}], "timeoutMs": 600000}))
        .await
        .unwrap();
    // The person left ten minutes ago: the time is written on a page of the origin that is not
    // the app (the app writes its own on every hide, a navigation included).
    b.goto(&format!("{}/sw.js", gw.base())).await;
    b.js("for (const k of Object.keys(localStorage)) if (k.startsWith('ocui.away.v1:')) localStorage.setItem(k, String(Date.now() - 600000)); return true;").await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let card = b.wait_text("[data-testid=away-card]", T, |t| t.contains("Finished")).await;
    assert!(card.contains("1 request still waits for your answer."), "{card}");
    assert!(!card.contains("Failed"), "{card}");
    b.screenshot("reach-away-card").await;
    b.click_xpath("//section[@data-testid='away-card']//button[normalize-space()='Dismiss']").await;
    b.wait_gone("[data-testid=away-card]", T).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_real_gateway_pushes_a_runs_approval_that_a_notifications_deny_denies_with_one_click() {
    let mut push = PushService::start().await;
    let e2e::real::WithScriptedModel { gw: real, model: _model, mut agent } = e2e::real::RealGateway::start_with_scripted_model().await;
    std::fs::write(real.workspace().join("deploy-secret.sh"), "#!/bin/sh\necho deployed\n").unwrap();
    let b = Browser::start_with_notifications_granted().await;
    b.goto(&real.ui_url()).await;
    b.wait_connected_within(Duration::from_secs(90)).await;
    b.wait_for_shell_cache().await;
    let sub = TestSubscription::new(push.endpoint("real"));
    stub_push_manager(&b, &sub).await;
    turn_on(&b).await;

    // A real run asks to run a command (host exec in mode `ask`): the gateway pushes its approval.
    b.send_message("exec: sh deploy-secret.sh").await;
    let Some(received) = push.next_within(e2e::TURN).await else { panic!("the real gateway sent no push:\n{}", real.log_tail(30, "push")) };
    assert_eq!(received.path, "/push/real");
    let payload = sub.decrypt(&received);
    assert_eq!(payload["title"], "OpenClaw approval requested", "{payload}");
    assert!(!payload.to_string().contains("deploy-secret"), "the real gateway never sends the command: {payload}");
    let id = payload["url"].as_str().and_then(|u| u.strip_prefix("approve/")).unwrap_or_else(|| panic!("{payload}")).to_string();
    let id = id.replace("%3A", ":");

    // With no window of the app open, the worker shows it with Deny; Deny opens the card with
    // Deny chosen; one click there denies it.
    let origin = real.base();
    b.goto("about:blank").await;
    b.deliver_push_to(&origin, &format!("{origin}/"), &payload.to_string()).await;
    b.goto(&format!("{origin}/{}?choice=deny", payload["url"].as_str().unwrap())).await;
    let shown = b.notifications().await;
    let n = shown.as_array().unwrap().iter().find(|n| n["tag"] == payload["tag"]).unwrap_or_else(|| panic!("{shown}"));
    assert_eq!(n["actions"], json!([{"action": "deny", "title": "Deny"}]), "{n}");
    b.wait_connected().await;
    b.wait_text("[data-testid=notification-choice]", T, |t| t.contains("You chose “Deny”")).await;
    assert_eq!(e2e::approvals::record(&mut agent, &id).await["status"], "pending", "nothing was sent before the click");
    b.click_xpath(&format!("//*[@data-approval-id='{id}']//button[normalize-space()='Deny']")).await;
    e2e::approvals::recorded(&mut agent, &id, "denied").await;
    // Decided, the approval's notification goes: its Deny can no longer be given.
    let open_for = |target: String| {
        format!(
            "const r = await navigator.serviceWorker.ready; return (await r.getNotifications()).filter(n => n.data && n.data.url === {target:?}).length;"
        )
    };
    b.wait_js(&open_for(format!("{origin}/approve/{id}")), |v| v == &json!(0)).await;
    real.stop();
}
