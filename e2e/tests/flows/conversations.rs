//! Conversations in real Chromium: a Stop that means now (local gateway, whose demo agent holds a
//! run on its question), and the conversation list, new conversations, rename, archive, search
//! and the marks on both the local and the real gateway.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::Target;
use e2e::browser::Browser;
use gateway::client::Client;
use serde_json::{Value, json};

const MAIN: &str = "agent:main:main";

/// Stop sits above the dock: with a blocking question expanded (the composer replaced by the
/// dock) it is still there, and it stops the run, which cancels the question.
#[tokio::test(flavor = "multi_thread")]
async fn stop_is_within_reach_while_the_dock_is_open_and_cancels_the_question() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("deploy the site").await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Where should")).await;
    assert!(!b.exists("textarea[name=message]").await, "the expanded dock holds the composer's place");
    b.click_button("Stop").await;
    b.wait_text("[data-testid=stop-outcome]", T, |t| t.starts_with("Stopped.")).await;
    b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Skipped elsewhere")).await;
    assert!(gw.gateway().runs.active(MAIN).is_none(), "the run was stopped");
    assert_eq!(gw.gateway().store.user_texts(MAIN).unwrap(), vec!["deploy the site".to_string()], "Stop sent no chat message");
    b.close().await;
}

/// `/stop` typed alone calls `chat.abort` at once: it is never a chat message. Offline it says
/// it cannot reach the gateway and nothing is queued, so nothing can stop newer work later:
/// the message sent after reconnecting is the only one the gateway ever receives.
#[tokio::test(flavor = "multi_thread")]
async fn a_stop_typed_offline_is_never_sent_after_reconnecting() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    // The run waits on its question (held until answered or stopped), with the dock collapsed
    // so that the composer shows; a plain reply would answer the question, /stop does not.
    b.send_message("deploy the site").await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Where should")).await;
    b.click_button("Collapse").await;
    b.send_message("/stop").await;
    b.wait_text("[data-testid=stop-outcome]", T, |t| t.starts_with("Stopped.")).await;
    b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Skipped elsewhere")).await;
    assert_eq!(gw.gateway().store.user_texts(MAIN).unwrap(), vec!["deploy the site".to_string()], "/stop is not a chat message");

    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.send_message("/stop").await;
    let said = b.wait_text("[data-testid=stop-outcome]", T, |t| t.starts_with("Not stopped")).await;
    assert!(said.contains("cannot be reached") && said.contains("Nothing is sent later"), "{said}");
    assert!(!b.exists("[data-testid=outbox-row]").await, "nothing was queued");
    // `/new` cannot create a conversation offline: it says so, and what was typed stays.
    b.send_message("/new").await;
    b.wait_text("[data-testid=conversation-notice]", T, |t| t.contains("cannot be reached") && t.contains("kept")).await;
    let kept = b.find_xpath("//textarea[@name='message']", T).await.prop("value").await.unwrap();
    assert_eq!(kept.as_deref(), Some("/new"), "the typed text is kept");
    b.set_field("textarea[name=message]", "").await;
    b.send_message("after the outage").await;
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("after the outage")).await;
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    // The outbox sends in order: a queued /stop would have gone before this message.
    e2e::db_user_texts(&gw, MAIN, &["deploy the site", "after the outage"]).await;
    b.close().await;
}

/// The gateway's row of `key` (`sessions.describe`).
async fn describe(agent: &mut Client, key: &str) -> Value {
    agent.request("sessions.describe", json!({"key": key})).await.unwrap_or_else(|e| panic!("sessions.describe {key}: {e:?}"))["session"]
        .clone()
}

/// Waits until the gateway's row of `key` satisfies `accept` (an action applied by the time the
/// page shows it, but the check must not depend on which side is faster).
async fn described(agent: &mut Client, key: &str, accept: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let row = describe(agent, key).await;
        if accept(&row) {
            return row;
        }
        assert!(tokio::time::Instant::now() < deadline, "the gateway's row of {key} never matched: {row}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The user texts the gateway holds for `key`.
async fn user_texts(agent: &mut Client, key: &str) -> Vec<String> {
    let h = agent
        .request("chat.history", json!({"sessionKey": key, "limit": 200}))
        .await
        .unwrap_or_else(|e| panic!("chat.history {key}: {e:?}"));
    h["messages"].as_array().map(|a| a.iter().filter(|m| m["role"] == "user").map(e2e::message_text).collect()).unwrap_or_default()
}

async fn pane_session(b: &Browser) -> String {
    b.js("return document.querySelector('[data-testid=pane]').dataset.session;").await.as_str().unwrap_or("").to_string()
}

/// Waits until the (first) pane shows a conversation other than `old`; returns its key.
async fn switched_from(b: &Browser, old: &str) -> String {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let now = pane_session(b).await;
        if !now.is_empty() && now != old {
            return now;
        }
        assert!(tokio::time::Instant::now() < deadline, "the pane stayed on {old}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn row_css(key: &str) -> String {
    format!("[data-testid=conversation-row][data-key='{key}']")
}

/// What a daily user does with conversations, the same on both gateways: one made elsewhere
/// appears by itself; New conversation and `/new` switch to a fresh one and leave the old one
/// as it was; rename; archive with Undo; an archived one opened says so and restores; search
/// finds one beyond the first 100; the marks for waiting on you and news; screenshots.
async fn flows(t: Target, agent: &mut Client) {
    let nonce = e2e::nonce();
    let b = Browser::start_sized(1000, 900).await;
    b.goto(&t.ui("/")).await;
    b.wait_connected().await;

    // 1. Made by another client: the list shows it without a reload.
    let elsewhere_label = format!("Made elsewhere {nonce}");
    let made = agent.request("sessions.create", json!({"agentId": "main", "label": elsewhere_label})).await.expect("sessions.create");
    let elsewhere = made["key"].as_str().unwrap().to_string();
    b.wait_text(&row_css(&elsewhere), T, |s| s.contains(&elsewhere_label)).await;

    // 2. New conversation: a fresh one in this pane; the one it left is untouched.
    let first = pane_session(&b).await;
    let before = user_texts(agent, &first).await;
    b.click_button("New conversation").await;
    let fresh = switched_from(&b, &first).await;
    assert!(fresh.starts_with("agent:main:"), "{fresh}");
    let hello = format!("first words in a new conversation {nonce}");
    b.send_message(&hello).await;
    let deadline = tokio::time::Instant::now() + T;
    while !user_texts(agent, &fresh).await.contains(&hello) {
        assert!(tokio::time::Instant::now() < deadline, "the first message never reached {fresh}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(user_texts(agent, &first).await, before, "the conversation left behind is unchanged");

    // 3. `/new` typed alone does the same, and is never a message.
    b.send_message("/new").await;
    let newer = switched_from(&b, &fresh).await;
    assert_ne!(newer, first);
    assert_eq!(user_texts(agent, &fresh).await, vec![hello.clone()], "/new was not sent to the conversation it was typed in");
    assert!(user_texts(agent, &newer).await.is_empty(), "nor to the new one");
    let draft = b.find_xpath("//textarea[@name='message']", T).await.prop("value").await.unwrap();
    assert_eq!(draft.as_deref(), Some(""), "the composer is empty after /new");

    // 4. Rename.
    let name = format!("Renamed {nonce}");
    b.click_button("Rename").await;
    b.set_field("[data-testid=conversation-header] input[type=text]", &name).await;
    b.click_button("Save name").await;
    b.wait_text("[data-testid=conversation-name]", T, |s| s == name).await;
    described(agent, &newer, |r| r["label"] == name.as_str()).await;
    b.wait_text(&row_css(&newer), T, |s| s.contains(&name)).await;

    // 5. Archive with Undo.
    b.click_button("Archive").await;
    b.wait_text("[data-testid=archive-toast]", T, |s| s.contains(&name)).await;
    described(agent, &newer, |r| r["archived"] == true).await;
    b.wait_gone(&row_css(&newer), T).await;
    b.click_button("Undo").await;
    described(agent, &newer, |r| r["archived"] == false).await;
    b.wait_text(&row_css(&newer), T, |s| s.contains(&name)).await;

    // 6. An archived conversation opened from a link says so, and Restore brings it back.
    b.click_button("Archive").await;
    described(agent, &newer, |r| r["archived"] == true).await;
    b.goto(&t.ui(&format!("/?session={newer}"))).await;
    b.wait_text("[data-testid=archived-banner]", T, |s| s.contains("archived")).await;
    b.open_conversation_menu().await;
    let header = b.js("return document.querySelector('[data-testid=conversation-header]').textContent;").await;
    assert!(!header.as_str().unwrap().contains("Archive"), "an archived conversation is not offered Archive again: {header}");
    b.click_button("Restore").await;
    described(agent, &newer, |r| r["archived"] == false).await;
    b.wait_gone("[data-testid=archived-banner]", T).await;
    // The main conversation is never offered for archiving.
    b.goto(&t.ui(&format!("/?session={MAIN}"))).await;
    b.wait_connected().await;
    b.open_conversation_menu().await;
    b.wait_content("[data-testid=conversation-header]", T, |s| s.contains("Rename")).await;
    assert_eq!(pane_session(&b).await, MAIN);
    let actions = b.js("return document.querySelector('[data-testid=conversation-header]').textContent;").await;
    assert!(!actions.as_str().unwrap().contains("Archive"), "{actions}");

    // 8. Waiting on you: a question in a conversation no pane shows marks its row.
    let q = json!({"questions": [{"questionId": "ok", "header": "Check", "question": "Is this fine?", "options": [{"label": "Yes"}, {"label": "No"}]}],
        "sessionKey": elsewhere, "agentId": "main", "timeoutMs": 600000});
    let qid = agent.request("question.request", q).await.expect("question.request")["id"].as_str().unwrap().to_string();
    b.wait_text(&format!("{} [data-mark=waiting]", row_css(&elsewhere)), T, |s| s == "Waiting on you").await;

    // 9. News: once shown, a conversation is read; new activity there while another one is
    // shown marks it again.
    b.find_xpath(&format!("//button[@data-key='{elsewhere}']"), T).await.click().await.unwrap();
    b.wait_text("[data-testid=conversation-name]", T, |s| s == elsewhere_label).await;
    b.find_xpath(&format!("//button[@data-key='{newer}']"), T).await.click().await.unwrap();
    b.wait_text("[data-testid=conversation-name]", T, |s| s == name).await;
    assert!(!b.exists(&format!("{} [data-mark=unread]", row_css(&elsewhere))).await, "shown, so read");
    agent
        .request(
            "chat.send",
            json!({"sessionKey": elsewhere, "message": format!("news {nonce}"), "idempotencyKey": format!("news-{nonce}")}),
        )
        .await
        .expect("chat.send elsewhere");
    b.wait_text(&format!("{} [data-mark=unread]", row_css(&elsewhere)), T, |s| s == "New").await;

    // 10. Screenshots: the rail at 1000 px, the drawer at 390 px.
    for (w, h) in [(1000u32, 800u32), (390, 844)] {
        let s = Browser::start_sized(w, h).await;
        s.goto(&t.ui("/")).await;
        s.wait_connected().await;
        if w < 900 {
            s.click_button("Conversations").await;
        }
        s.wait_text(&row_css(&elsewhere), T, |x| x.contains("Waiting on you")).await;
        for theme in ["light", "dark"] {
            s.js(&format!("document.documentElement.dataset.theme = '{theme}';")).await;
            let (overflow, _) = s.horizontal_overflow().await;
            assert_eq!(overflow, 0, "horizontal overflow at {w} px ({theme})");
            s.screenshot(&format!("conversations-{}-{w}-{theme}", t.name)).await;
        }
        s.close().await;
    }

    b.find_xpath(&format!("//button[@data-key='{elsewhere}']"), T).await.click().await.unwrap();
    b.wait_text("[data-testid=conversation-name]", T, |s| s == elsewhere_label).await;
    b.wait_gone(&format!("{} [data-mark=unread]", row_css(&elsewhere)), T).await;
    // 10b. A message the gateway shortened in the history is read whole on request (a live one
    // arrives whole, so the page is reloaded to read it from the history).
    let long = format!("long {nonce} {}", "x".repeat(20_000));
    agent
        .request("chat.send", json!({"sessionKey": elsewhere, "message": long, "idempotencyKey": format!("long-{nonce}")}))
        .await
        .expect("chat.send a long message");
    b.goto(&t.ui(&format!("/?session={elsewhere}"))).await;
    // The saved copy shows the shortened row before the socket is up (a click then waits for the
    // history: transcript_parts pins that); here the row is read from the gateway's history.
    b.wait_connected().await;
    // The run the message started has ended (a reply, or a failed run on a gateway with no
    // model): nothing grows under the button while it is clicked.
    b.wait_js(
        "const rows = [...document.querySelectorAll('[data-testid=message]')]; const l = rows[rows.length - 1]; return !!l && l.dataset.role !== 'user';",
        |v| v == &json!(true),
    )
    .await;
    let cut = "return document.querySelectorAll('[data-testid=message-cut]').length;";
    let before = b.wait_js(cut, |v| v.as_u64().is_some_and(|n| n > 0)).await.as_u64().unwrap();
    let longest = "return Math.max(0, ...[...document.querySelectorAll('[data-testid=message][data-role=user] .msg__text')].map(e => e.textContent.length));";
    assert!(b.js(longest).await.as_u64().unwrap() < 20_000, "the history shortened it");
    b.click_button("Show the whole message").await;
    b.wait_js(cut, |v| v.as_u64() == Some(before - 1)).await;
    b.wait_js(longest, |v| v.as_u64().is_some_and(|n| n >= long.len() as u64)).await;

    // 11. Search finds a conversation beyond the first 100, and Load more pages (a fresh page
    // reads the first page; live events add to it after that).
    let needle = format!("needle {nonce}");
    agent.request("sessions.create", json!({"agentId": "main", "label": needle})).await.expect("create the needle");
    for i in 0..150 {
        agent.request("sessions.create", json!({"agentId": "main", "label": format!("hay {nonce} {i}")})).await.expect("seed");
    }
    b.goto(&t.ui(&format!("/?session={MAIN}"))).await;
    let rows = "return document.querySelectorAll('[data-testid=conversation-row]').length;";
    b.wait_js(rows, |v| v.as_u64() == Some(50)).await;
    b.click_button("Load more").await;
    b.wait_js(rows, |v| v.as_u64() == Some(100)).await;
    let listed = b.js("return document.querySelector('[data-testid=conversation-list]').textContent;").await;
    assert!(!listed.as_str().unwrap().contains(&needle), "the needle is beyond the first 100 rows");
    b.set_field("[data-testid=conversation-list] input[type=search]", &needle).await;
    b.wait_js("return [...document.querySelectorAll('[data-testid=conversation-row]')].map(r => r.textContent);", |v| {
        v.as_array().is_some_and(|a| a.len() == 1 && a[0].as_str().unwrap_or("").contains(&needle))
    })
    .await;
    b.set_field("[data-testid=conversation-list] input[type=search]", "").await;
    b.wait_js(rows, |v| v.as_u64() == Some(50)).await;

    let _ = agent.request("question.resolve", json!({"id": qid, "answers": {"ok": {"answers": ["Yes"]}}})).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn conversations_on_the_local_gateway() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    flows(Target { base: gw.base(), fragment: format!("#token={}", gw.token), name: "local" }, &mut agent).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn conversations_on_the_real_gateway() {
    let gw = tokio::task::spawn_blocking(e2e::real::RealGateway::start).await.unwrap();
    let mut agent = gw.agent().await;
    flows(Target { base: gw.base(), fragment: format!("#token={}", e2e::real::TOKEN), name: "real" }, &mut agent).await;
}

/// A read-only connection lists conversations but is offered nothing it may not do: no New
/// conversation, Rename, Archive or Stop.
#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_connection_is_offered_no_conversation_actions() {
    let gw = LocalGateway::start_with_device_scopes(Some(&["operator.read", "operator.questions"])).await;
    let mut agent = gw.agent().await;
    let made = agent.request("sessions.create", json!({"agentId": "main", "label": "Listed for a reader"})).await.unwrap();
    let key = made["key"].as_str().unwrap().to_string();
    // A run that waits on its question, so the run bar shows while the page looks.
    agent.request("chat.send", json!({"sessionKey": MAIN, "message": "deploy the site", "idempotencyKey": "reader-run"})).await.unwrap();
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.wait_text(&row_css(&key), T, |s| s.contains("Listed for a reader")).await;
    b.wait_text("[data-testid=run-bar]", T, |s| s.contains("The agent is working.")).await;
    // The menu opened, its actions drawn: those without the scope are not among them.
    b.open_conversation_menu().await;
    let page = b.js("return [...document.querySelectorAll('button')].map(e => e.textContent.trim());").await;
    for absent in ["New conversation", "Rename", "Archive", "Stop"] {
        assert!(!page.as_array().unwrap().iter().any(|t| t == absent), "{absent} is not offered without the scope: {page}");
    }
    b.close().await;
}

/// An offline reload lists the conversations this browser last read, marked as saved.
#[tokio::test(flavor = "multi_thread")]
async fn an_offline_reload_shows_the_last_list_marked_as_saved() {
    let mut gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let made = agent.request("sessions.create", json!({"agentId": "main", "label": "Kept for offline"})).await.unwrap();
    let key = made["key"].as_str().unwrap().to_string();
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.wait_text(&row_css(&key), T, |s| s.contains("Kept for offline")).await;
    assert!(!b.exists("[data-testid=conversations-saved]").await, "a list read from the gateway is not marked saved");
    b.wait_for_shell_cache().await;
    // The list is saved a moment after it changes.
    b.wait_js("const db = await new Promise((ok, no) => { const r = indexedDB.open('ocui'); r.onsuccess = () => ok(r.result); r.onerror = no; });
        const v = await new Promise((ok, no) => { const r = db.transaction('transcripts').objectStore('transcripts').get('\\u0000sessions'); r.onsuccess = () => ok(r.result); r.onerror = no; });
        db.close(); return JSON.stringify(v ?? null).includes('Kept for offline');", |v| v == true).await;
    gw.stop().await;
    b.client.refresh().await.expect("the page reloads from its service worker");
    b.wait_text("[data-testid=conversations-saved]", T, |s| s.contains("Saved list")).await;
    b.wait_text(&row_css(&key), T, |s| s.contains("Kept for offline")).await;
    b.close().await;
}
