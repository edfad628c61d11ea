//! Chat and the outbox in real Chromium against the local gateway. Each fault case ends
//! with the gateway's database holding every intended message exactly once.

use std::time::Duration;

use e2e::T;
use e2e::browser::Browser;
use e2e::{LocalGateway, db_user_texts};
use fantoccini::key::Key;
use serde_json::json;

const MAIN: &str = "agent:main:main";

async fn last_assistant(b: &Browser, accept: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let texts = b
            .js("return [...document.querySelectorAll('[data-testid=message][data-role=assistant] .msg__text')].map(e => e.textContent);")
            .await;
        if let Some(last) = texts.as_array().and_then(|a| a.last()).and_then(|v| v.as_str()) {
            if accept(last) {
                return last.to_string();
            }
        }
        if tokio::time::Instant::now() > deadline {
            let shot = b.screenshot("timeout-assistant").await;
            panic!("no matching assistant message: {texts}; {shot}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn no_unsent(b: &Browser) {
    b.wait_gone("[data-testid=outbox-row]", T).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_streams_a_reply_and_is_confirmed_from_saved_history() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("hello there").await;
    last_assistant(&b, |t| t == "You said: hello there").await;
    no_unsent(&b).await;
    db_user_texts(&gw, MAIN, &["hello there"]).await;
    // Shift+Enter makes a new line instead of sending.
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys("line one").await.unwrap();
    area.send_keys(&format!("{}{}", Key::Shift, Key::Enter)).await.unwrap();
    area.send_keys("line two").await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    db_user_texts(&gw, MAIN, &["hello there"]).await;
    b.client.refresh().await.unwrap();
    b.wait_connected().await;
    let deadline = tokio::time::Instant::now() + T;
    let mut draft = None;
    while tokio::time::Instant::now() < deadline {
        draft = b.find_xpath("//textarea[@name='message']", T).await.prop("value").await.unwrap();
        if draft.as_deref() == Some("line one\nline two") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(draft.as_deref(), Some("line one\nline two"), "the multi-line draft survived the reload");
    b.screenshot("chat-confirmed").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_reply_answers_the_collapsed_question_and_the_dock_follows() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("pick a color").await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Which color")).await;
    b.click_button("Collapse").await;
    let hint = b.wait_text("[data-testid=composer-hint]", T, |t| !t.is_empty()).await;
    assert!(hint.contains("a number, an option label or your own words"), "{hint}");
    b.send_message("2").await;
    b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Answered elsewhere") && t.contains("Blue")).await;
    last_assistant(&b, |t| t == "Blue it is.").await;
    db_user_texts(&gw, MAIN, &["pick a color", "2"]).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_aborts_the_run_and_cancels_its_question() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("deploy the site").await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Where should")).await;
    b.click_button("Collapse").await;
    b.click_button("Stop").await;
    b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Skipped elsewhere")).await;
    let stopped = b
        .js("return [...document.querySelectorAll('[data-testid=message][data-role=assistant]')].map(e => e.textContent).join('|');")
        .await;
    let deadline = tokio::time::Instant::now() + T;
    let mut text = stopped.as_str().unwrap_or("").to_string();
    while !text.contains("Stopped") && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        text = b
            .js("return [...document.querySelectorAll('[data-testid=message], [data-testid=stream]')].map(e => e.textContent).join('|');")
            .await
            .as_str()
            .unwrap_or("")
            .to_string();
    }
    assert!(text.contains("Stopped"), "{text}");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_acknowledgement_is_reconciled_without_a_second_message() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    gw.gateway().faults.drop_before_response(Some("chat.send"));
    b.send_message("exactly once please").await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    gw.gateway().faults.drop_before_response(None);
    no_unsent(&b).await;
    db_user_texts(&gw, MAIN, &["exactly once please"]).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    db_user_texts(&gw, MAIN, &["exactly once please"]).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gateway_stopped_and_restarted_mid_send_delivers_once() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.send_message("sent while the gateway was down").await;
    b.wait_text("[data-testid=outbox-status]", T, |t| t == "Waiting for reconnect").await;
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("sent while the gateway was down")).await;
    b.screenshot("chat-waiting-for-reconnect").await;
    gw.restart_on(port).await;
    no_unsent(&b).await;
    db_user_texts(&gw, MAIN, &["sent while the gateway was down"]).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_mid_send_confirms_from_history_before_any_resend() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    gw.gateway().faults.drop_before_response(Some("chat.send"));
    b.send_message("survives a reload").await;
    b.client.refresh().await.unwrap();
    gw.gateway().faults.drop_before_response(None);
    b.wait_connected().await;
    no_unsent(&b).await;
    db_user_texts(&gw, MAIN, &["survives a reload"]).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn discard_puts_the_text_back_and_the_row_is_never_sent() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.send_message("oops, not this").await;
    b.wait_text("[data-testid=outbox-status]", T, |t| !t.is_empty()).await;
    b.find_xpath("//article[@data-testid='outbox-row']//button[normalize-space()='Discard']", T).await.click().await.unwrap();
    b.wait_gone("[data-testid=outbox-row]", T).await;
    let draft = b.find_xpath("//textarea[@name='message']", T).await.prop("value").await.unwrap();
    assert_eq!(draft.as_deref(), Some("oops, not this"));
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    db_user_texts(&gw, MAIN, &[]).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_row_waits_for_an_explicit_retry() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.js("localStorage.setItem('ocui.outbox.staleMs', '1');").await;
    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.send_message("old news").await;
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    let status = b.wait_text("[data-testid=outbox-status]", T, |t| t.starts_with("Held")).await;
    assert!(status.contains("not sent without you"), "{status}");
    db_user_texts(&gw, MAIN, &[]).await;
    b.find_xpath("//article[@data-testid='outbox-row']//button[normalize-space()='Retry']", T).await.click().await.unwrap();
    no_unsent(&b).await;
    db_user_texts(&gw, MAIN, &["old news"]).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_tabs_sending_at_once_deliver_each_message_once_and_stay_in_sync() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let first = b.client.window().await.unwrap();
    let second = b.client.new_window(true).await.unwrap();
    b.client.switch_to_window(second.handle.clone()).await.unwrap();
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    // Queue one message in each tab without waiting in between.
    b.send_message("from tab two").await;
    b.client.switch_to_window(first.clone()).await.unwrap();
    b.send_message("from tab one").await;
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let mut got = gw.gateway().store.user_texts(MAIN).unwrap();
        got.sort();
        if got == vec!["from tab one".to_string(), "from tab two".to_string()] {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "database holds {got:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Both tabs show both messages.
    for w in [first, second.handle] {
        b.client.switch_to_window(w).await.unwrap();
        let deadline = tokio::time::Instant::now() + T;
        loop {
            let texts = b.js("return [...document.querySelectorAll('[data-testid=message][data-role=user] .msg__text')].map(e => e.textContent).sort().join('|');").await;
            if texts == json!("from tab one|from tab two") {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "tab shows {texts}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn failing_indexeddb_writes_are_reported_and_sending_still_works() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.js("IDBObjectStore.prototype.put = function () { throw new DOMException('simulated full disk', 'QuotaExceededError'); };").await;
    b.send_message("despite storage").await;
    let warning = b.wait_text("[data-testid=storage-warning]", T, |t| !t.is_empty()).await;
    assert!(warning.contains("QuotaExceededError") && warning.contains("Sending still works"), "{warning}");
    last_assistant(&b, |t| t == "You said: despite storage").await;
    db_user_texts(&gw, MAIN, &["despite storage"]).await;
    b.screenshot("chat-storage-failing").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_arriving_while_typing_in_the_composer_does_not_take_it_away() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys("half a sentence").await.unwrap();
    let mut agent = gw.agent().await;
    agent.request("question.request", json!({"questions":[{"questionId":"c","header":"C","question":"Continue?","options":[{"label":"Yes"},{"label":"No"}]}],"timeoutMs":60000})).await.unwrap();
    b.wait_text("[data-testid=dock-bar]", T, |t| t.contains("1 pending")).await;
    let focus = b
        .js("return [document.activeElement && document.activeElement.name, document.activeElement && document.activeElement.value];")
        .await;
    assert_eq!(focus, json!(["message", "half a sentence"]), "still typing in the composer");
    b.close().await;
}

/// A hand-typed `?session=bare` names the same conversation as the gateway's canonical
/// `agent:main:bare`: a run started elsewhere streams live into the open page.
#[tokio::test(flavor = "multi_thread")]
async fn a_bare_session_in_the_url_shows_runs_started_elsewhere_live() {
    let gw = LocalGateway::start().await;
    let url = format!("{}/?session=bare-live#token={}", gw.base(), gw.ui_url().split("#token=").nth(1).unwrap());
    let b = Browser::open_connected(&url).await;
    // The page records every live stream text it shows: the run streams for about five seconds,
    // and a loaded machine must not make the test miss it (the saved reply replaces the stream).
    b.js("window.__streams = []; new MutationObserver(() => document.querySelectorAll('[data-testid=stream] .msg__text').forEach(e => window.__streams.push(e.textContent))).observe(document.body, {subtree: true, childList: true, characterData: true});").await;
    let mut agent = gw.agent().await;
    agent
        .request("chat.send", json!({"sessionKey": "bare-live", "message": "slow please", "idempotencyKey": "elsewhere-1"}))
        .await
        .unwrap();
    b.wait_js("return window.__streams.some(t => t.includes('Working on step 1'));", |v| v == &json!(true)).await;
    assert!(b.current_url().await.contains("session=agent%3Amain%3Abare-live"), "the URL names the canonical session");
}

async fn assistant_rows_with(b: &Browser, text: &str) -> u64 {
    let script = format!(
        "return [...document.querySelectorAll('[data-testid=message][data-role=assistant] .msg__text, [data-testid=stream] .msg__text')].filter(e => e.textContent.trim() === {text:?}).length;"
    );
    b.js(&script).await.as_u64().unwrap()
}

/// A reply shown live from its run's `final` event, which carries no saved id, and then saved
/// (`session.message`): one row, not two, as when the same message comes from history.
#[tokio::test(flavor = "multi_thread")]
async fn a_live_reply_without_its_saved_id_is_shown_once_when_its_saved_row_arrives() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&format!("{}/?session=agent%3Amain%3Amain#token={}", gw.base(), gw.token)).await;
    b.wait_connected().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (run, text, saved_run) in [("r-live-1", "Shown once (same run)", true), ("r-live-2", "Shown once (same words)", false)] {
        let content = json!([{"type": "text", "text": text}]);
        gw.hub().inject_raw(&json!({"type": "event", "event": "chat", "payload": {"runId": run, "sessionKey": MAIN, "state": "final", "message": {"role": "assistant", "content": content}}}).to_string());
        let deadline = tokio::time::Instant::now() + T;
        while assistant_rows_with(&b, text).await == 0 {
            assert!(tokio::time::Instant::now() < deadline, "the live reply shows");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut meta = json!({"id": format!("saved-{run}"), "seq": 900});
        if saved_run {
            meta["runId"] = json!(run);
        }
        gw.hub().inject_raw(&json!({"type": "event", "event": "session.message", "payload": {"sessionKey": MAIN, "message": {"role": "assistant", "content": content, "__openclaw": meta}}}).to_string());
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(assistant_rows_with(&b, text).await, 1, "{text} is shown once");
    }
    b.close().await;
}

/// The incumbent's conversation links open the same conversation here: the literal form
/// (`/chat/main/side`) and the short-id form (`/chat/main/<slug>-<first hex of the key's UUID>`).
#[tokio::test(flavor = "multi_thread")]
async fn incumbent_chat_links_open_the_conversation_they_name() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let uuid_key = "agent:main:dashboard:6db92d48-1111-4222-8333-444455556666";
    for (key, text) in [("agent:main:side", "hello from the side"), (uuid_key, "hello from the dashboard")] {
        agent.request("chat.send", json!({"sessionKey": key, "message": text, "idempotencyKey": format!("link-{text}")})).await.unwrap();
        db_user_texts(&gw, key, &[text]).await;
    }
    let b = Browser::start().await;
    for (path, key, text) in [
        ("/chat/main/side", "agent:main:side", "hello from the side"),
        ("/chat/main/deploy-monitor-6db92d48", uuid_key, "hello from the dashboard"),
    ] {
        b.goto(&format!("{}{path}#token={}", gw.base(), gw.token)).await;
        b.wait_connected().await;
        b.wait_text("[data-testid=message][data-role=user] .msg__text", T, |t| t == text).await;
        let selected = b.js("return document.querySelector('[data-testid=pane]').dataset.session;").await;
        assert_eq!(selected, json!(key), "{path} opens {key}");
    }
    // A short link that names no conversation says so, and opens the main one.
    b.goto(&format!("{}/chat/main/gone-0123abcd#token={}", gw.base(), gw.token)).await;
    let note = b.wait_text("[data-testid=link-error]", T, |t| !t.is_empty()).await;
    assert!(note.contains("No single conversation of agent main matches this link"), "{note}");
    b.close().await;
}

/// Edit in the outbox: a message queued while the gateway is down is edited, and once the
/// gateway is back exactly the edited text is sent, once.
#[tokio::test(flavor = "multi_thread")]
async fn a_queued_message_edited_while_the_gateway_is_down_is_sent_once_with_the_edited_text() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.send_message("deploy to prodution").await;
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("deploy to prodution")).await;
    b.click_button("Edit").await;
    let area = b.find_xpath("//div[@data-testid='tray-edit']//textarea", T).await;
    assert_eq!(area.prop("value").await.unwrap().as_deref(), Some("deploy to prodution"), "the editor starts from the queued text");
    b.set_field("[data-testid=tray-edit] textarea", "say hello to production").await;
    b.click_button("Save").await;
    b.wait_gone("[data-testid=tray-edit]", T).await;
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("say hello to production") && !t.contains("prodution")).await;
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    db_user_texts(&gw, MAIN, &["say hello to production"]).await;
    last_assistant(&b, |t| t == "You said: say hello to production").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(gw.gateway().store.user_texts(MAIN).unwrap(), vec!["say hello to production".to_string()], "only the edited text, once");
    b.close().await;
}

/// Two tabs edit the same queued row: the last save wins, the other tab shows the saved text,
/// and only that text is sent, once.
#[tokio::test(flavor = "multi_thread")]
async fn two_tabs_editing_the_same_queued_row_the_last_save_wins_and_it_is_sent_once() {
    let mut gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let one = b.client.window().await.unwrap();
    let two = b.client.new_window(true).await.unwrap().handle;
    b.client.switch_to_window(two.clone()).await.unwrap();
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    let port = gw.port;
    gw.stop().await;
    b.client.switch_to_window(one.clone()).await.unwrap();
    b.wait_text("[data-testid=connection-status]", T, |t| t.starts_with("Reconnecting")).await;
    b.send_message("words as first typed").await;
    let edit = |text: &'static str| {
        let b = &b;
        async move {
            b.click_button("Edit").await;
            b.find_xpath("//div[@data-testid='tray-edit']//textarea", T).await;
            b.set_field("[data-testid=tray-edit] textarea", text).await;
            b.click_button("Save").await;
            b.wait_gone("[data-testid=tray-edit]", T).await;
        }
    };
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("words as first typed")).await;
    edit("words from tab one").await;
    b.client.switch_to_window(two.clone()).await.unwrap();
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("words from tab one")).await;
    edit("words from tab two").await;
    b.client.switch_to_window(one.clone()).await.unwrap();
    b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains("words from tab two") && !t.contains("tab one")).await;
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    db_user_texts(&gw, MAIN, &["words from tab two"]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(gw.gateway().store.user_texts(MAIN).unwrap(), vec!["words from tab two".to_string()], "the last save, once");
    b.close().await;
}

/// Whether the newest message's bottom is inside the window, and the page's scroll offset.
const NEWEST_IN_VIEW: &str = "const rows = [...document.querySelectorAll('[data-testid=message]')];
    return [rows[rows.length - 1].getBoundingClientRect().bottom <= window.innerHeight + 1, window.scrollY];";

#[tokio::test(flavor = "multi_thread")]
async fn the_transcript_follows_the_newest_row_until_the_person_scrolls_up_to_read() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let send = |n: usize| json!({"sessionKey": MAIN, "message": format!("line {n} of a long conversation"), "idempotencyKey": format!("follow-{n}")});
    for n in 1..=24 {
        agent.request("chat.send", send(n)).await.unwrap();
    }
    let b = Browser::open_connected(&gw.ui_url()).await;
    last_assistant(&b, |t| t == "You said: line 24 of a long conversation").await;
    let page_scrolls = b.js("return document.documentElement.scrollHeight > window.innerHeight * 2;").await;
    assert_eq!(page_scrolls, json!(true), "the conversation is longer than two windows");
    b.wait_js(NEWEST_IN_VIEW, |v| v[0] == json!(true)).await;
    // Scrolled up to read: new rows arrive below, and the page stays where the person is.
    b.js("window.scrollTo(0, 0); return null;").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    agent.request("chat.send", send(25)).await.unwrap();
    last_assistant(&b, |t| t == "You said: line 25 of a long conversation").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = b.js(NEWEST_IN_VIEW).await;
    assert_eq!(seen, json!([false, 0]), "[the newest row in view, scrollY]: the page stayed where the person was reading");
    // Back at the bottom, the transcript follows again.
    b.js("window.scrollTo(0, document.documentElement.scrollHeight); return null;").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    agent.request("chat.send", send(26)).await.unwrap();
    last_assistant(&b, |t| t == "You said: line 26 of a long conversation").await;
    b.wait_js(NEWEST_IN_VIEW, |v| v[0] == json!(true)).await;
    b.close().await;
}
