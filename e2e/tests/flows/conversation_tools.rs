//! The conversation tools a daily user reaches for (issue 38), in real Chromium against the
//! local gateway and the real gateway (2026.9.6) running real turns on the project's scripted
//! model: Copy as Markdown puts the message as written on the clipboard; Rewind to here asks
//! first, takes the message and everything after it off the conversation and puts its text back
//! in the composer; Fork from here asks first and opens a new conversation with the messages
//! before it, the source untouched; neither shows without its scope.

use e2e::browser::Browser;
use e2e::{LocalGateway, T};
use protocol::methods::scope;
use serde_json::json;

const MAIN: &str = "agent:main:main";

/// The button `name` under the `n`-th (1-based) message of `role`.
fn under(role: &str, n: usize, name: &str) -> String {
    format!("(//article[@data-testid='message'][@data-role='{role}'])[{n}]//button[normalize-space()='{name}']")
}

async fn message_texts(b: &Browser) -> serde_json::Value {
    b.js("return [...document.querySelectorAll('[data-testid=pane] [data-testid=message]')].map(m => m.dataset.role);").await
}

async fn wait_users(b: &Browser, n: usize) {
    b.wait_js("return document.querySelectorAll('[data-testid=pane] [data-testid=message][data-role=user]').length;", |v| v == &json!(n))
        .await;
}

async fn wait_messages(b: &Browser, n: usize) {
    b.wait_js("return document.querySelectorAll('[data-testid=pane] [data-testid=message]').length;", |v| v == &json!(n)).await;
}

async fn composer(b: &Browser) -> serde_json::Value {
    b.js("return document.querySelector('textarea[name=message]').value;").await
}

#[tokio::test(flavor = "multi_thread")]
async fn copy_rewind_and_fork_on_the_local_gateway() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.grant_clipboard().await;
    for (n, text) in ["**first** and `one`", "second", "third"].iter().enumerate() {
        b.send_message(text).await;
        wait_messages(&b, 2 * (n + 1)).await;
        b.wait_gone("[data-testid=stream]", T).await;
    }

    // Copy as Markdown: the reply as written, not as shown.
    b.click_xpath(&under("assistant", 1, "Copy as Markdown")).await;
    b.wait_text("[data-role=assistant] [data-testid=message-actions] [role=status]", T, |t| !t.is_empty()).await;
    assert_eq!(b.clipboard_text().await, "You said: **first** and `one`");

    // Fork from the second message: asked first, then a new conversation with the first exchange.
    b.wait_js("return document.querySelector('[data-testid=message-actions] button:disabled') === null;", |v| v == &json!(true)).await;
    b.click_xpath(&under("user", 2, "Fork from here")).await;
    let q = b.wait_text("[data-testid=message-action-question]", T, |t| t.contains("Fork from this message?")).await;
    assert!(q.contains("starts with the 2 messages before it") && q.contains("stays as it is"), "{q}");
    for (w, h) in [(1000u32, 800u32), (390, 844)] {
        b.client.set_window_size(w, h).await.unwrap();
        assert_eq!(b.horizontal_overflow().await.0, 0, "horizontal overflow at {w} px");
        shots(&b, "message-actions-fork", w).await;
    }
    b.client.set_window_size(1000, 800).await.unwrap();
    b.click_xpath("//*[@data-testid='message-action-question']//button[normalize-space()='Fork']").await;
    let forked = b
        .wait_js("return document.querySelector('[data-testid=pane]').dataset.session;", |v| {
            v.as_str().is_some_and(|s| s.starts_with("agent:main:dashboard:"))
        })
        .await;
    let forked = forked.as_str().unwrap().to_string();
    wait_messages(&b, 2).await;
    b.wait_text("[data-testid=cut-notice]", T, |t| t.starts_with("Forked into a new conversation")).await;
    b.wait_js("return document.querySelector('textarea[name=message]').value;", |v| v == &json!("second")).await;
    assert_eq!(gw.gateway().store.user_texts(&forked).unwrap(), vec!["**first** and `one`".to_string()]);
    assert_eq!(gw.gateway().store.user_texts(MAIN).unwrap().len(), 3, "the source is untouched");

    // Back to the main conversation: Rewind to the second message, asked first.
    b.goto(&format!("{}/?session=agent%3Amain%3Amain#token={}", gw.base(), gw.token)).await;
    b.wait_connected().await;
    wait_messages(&b, 6).await;
    b.click_xpath(&under("user", 2, "Rewind to here")).await;
    let q = b.wait_text("[data-testid=message-action-question]", T, |t| t.contains("Rewind to this message?")).await;
    assert!(q.contains("The 3 messages after it leave the conversation too."), "{q}");
    // Cancel asks nothing of the gateway; asking again and confirming rewinds.
    b.click_xpath("//*[@data-testid='message-action-question']//button[normalize-space()='Cancel']").await;
    b.wait_gone("[data-testid=message-action-question]", T).await;
    assert_eq!(gw.gateway().store.user_texts(MAIN).unwrap().len(), 3);
    b.click_xpath(&under("user", 2, "Rewind to here")).await;
    b.click_xpath("//*[@data-testid='message-action-question']//button[normalize-space()='Rewind']").await;
    wait_messages(&b, 2).await;
    b.wait_text("[data-testid=cut-notice]", T, |t| t.starts_with("Rewound.")).await;
    assert_eq!(composer(&b).await, json!("second"));
    e2e::db_user_texts(&gw, MAIN, &["**first** and `one`"]).await;
    // Changed and sent again, it continues the conversation.
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys(", changed").await.unwrap();
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    e2e::db_user_texts(&gw, MAIN, &["**first** and `one`", "second, changed"]).await;
    wait_messages(&b, 4).await;
    assert_eq!(message_texts(&b).await, json!(["user", "assistant", "user", "assistant"]));
    b.close().await;
}

/// Screenshots at width `w` in light and dark (the page's theme switched as its setting does).
async fn shots(b: &Browser, name: &str, w: u32) {
    for theme in ["light", "dark"] {
        b.js(&format!("document.documentElement.dataset.theme = '{theme}'; return null;")).await;
        b.screenshot(&format!("{name}-{w}-{theme}")).await;
    }
    b.js("delete document.documentElement.dataset.theme; return null;").await;
}

/// The palette's lines, as shown.
async fn palette_lines(b: &Browser) -> Vec<String> {
    let v = b.js("return [...document.querySelectorAll('[data-testid=command-palette] [role=option] .command-palette__usage')].map(e => e.textContent);").await;
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

async fn wait_palette(b: &Browser, accept: impl Fn(&[String]) -> bool) -> Vec<String> {
    let v = b
        .wait_js("return [...document.querySelectorAll('[data-testid=command-palette] [role=option] .command-palette__usage')].map(e => e.textContent);", |v| {
            let lines: Vec<String> = v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect();
            accept(&lines)
        })
        .await;
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

async fn press(area: &fantoccini::elements::Element, key: fantoccini::key::Key) {
    area.send_keys(&key.to_string()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_command_palette_lists_the_gateways_commands_and_the_keyboard_chooses() {
    use fantoccini::key::Key;
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("hello").await;
    wait_messages(&b, 2).await;
    // A model that thinks, so `/think` has levels to offer.
    b.wait_js("const s = document.querySelector('[data-testid=model-picker]'); return !!s && !s.disabled;", |v| v == &json!(true)).await;
    b.js("const s = document.querySelector('[data-testid=model-picker]'); s.value = 'demo/deep'; s.dispatchEvent(new Event('change', {bubbles: true})); return null;").await;
    b.wait_js("return !!document.querySelector('[data-testid=thinking-picker]');", |v| v == &json!(true)).await;

    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys("/").await.unwrap();
    // The page's own commands first, then the gateway's.
    let all = wait_palette(&b, |l| l.iter().any(|u| u == "/think [level]")).await;
    assert_eq!(&all[..2], ["/new", "/stop"], "{all:?}");
    assert!(all.iter().any(|u| u == "/compact"), "{all:?}");
    assert!(!all.iter().any(|u| u == "/reset"), "the gateway's /new (alias /reset) gives way to the page's own: {all:?}");
    assert_eq!(b.js("return document.querySelector('textarea[name=message]').getAttribute('aria-expanded');").await, json!("true"));
    for (w, h) in [(1000u32, 800u32), (390, 844)] {
        b.client.set_window_size(w, h).await.unwrap();
        assert_eq!(b.horizontal_overflow().await.0, 0, "horizontal overflow at {w} px");
        shots(&b, "command-palette", w).await;
    }
    b.client.set_window_size(1000, 800).await.unwrap();

    // Filtered as the person types; Enter puts the command in, and does not send.
    area.send_keys("th").await.unwrap();
    assert_eq!(wait_palette(&b, |l| l.len() == 1).await, ["/think [level]"]);
    press(&area, Key::Enter).await;
    assert_eq!(composer(&b).await, json!("/think "));
    // After /think, the model's levels.
    let levels = wait_palette(&b, |l| !l.is_empty()).await;
    assert_eq!(levels, ["off", "minimal", "low", "medium", "high"]);
    press(&area, Key::Down).await;
    press(&area, Key::Down).await;
    assert_eq!(
        b.js("return document.querySelector('[role=option][aria-selected=true] .command-palette__usage').textContent;").await,
        json!("low")
    );
    assert_eq!(
        b.js("const t = document.querySelector('textarea[name=message]'); return document.getElementById(t.getAttribute('aria-activedescendant')).getAttribute('aria-selected');").await,
        json!("true"),
        "the composer points at the active line"
    );
    press(&area, Key::Tab).await;
    assert_eq!(composer(&b).await, json!("/think low"));
    b.wait_gone("[data-testid=command-palette]", T).await;
    assert_eq!(gw.gateway().store.user_texts(MAIN).unwrap(), vec!["hello".to_string()], "nothing was sent");

    // Esc closes it for what is typed; typing opens it again.
    b.set_field("textarea[name=message]", "").await;
    area.send_keys("/s").await.unwrap();
    assert_eq!(wait_palette(&b, |l| !l.is_empty()).await, ["/stop", "/status", "/summarize [text]"]);
    press(&area, Key::Escape).await;
    b.wait_gone("[data-testid=command-palette]", T).await;
    assert_eq!(composer(&b).await, json!("/s"));
    area.send_keys("u").await.unwrap();
    let lines = wait_palette(&b, |l| !l.is_empty()).await;
    assert_eq!(lines[0], "/summarize [text]", "{lines:?}");
    // A click on a line puts it in too.
    b.click_xpath("//*[@data-testid='command-palette']//li[@role='option']").await;
    assert_eq!(composer(&b).await, json!("/summarize "));
    assert!(palette_lines(&b).await.is_empty());
    b.close().await;
}

/// Lets the page save files into a new folder, and returns it.
async fn downloads(b: &Browser) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    b.cdp("Browser.setDownloadBehavior", json!({"behavior": "allow", "downloadPath": dir.path().to_str().unwrap()})).await;
    dir
}

/// The one Markdown file saved into `dir`: its name and text.
async fn saved_file(dir: &std::path::Path) -> (String, String) {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let files: Vec<std::path::PathBuf> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "md")).collect();
        if let [f] = files.as_slice() {
            return (f.file_name().unwrap().to_string_lossy().to_string(), std::fs::read_to_string(f).unwrap());
        }
        assert!(tokio::time::Instant::now() < deadline, "no exported file in {dir:?}: {files:?}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_export_holds_every_message_and_every_decision_on_the_local_gateway() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let dir = downloads(&b).await;
    b.send_message("pick a color").await;
    b.wait_text("[data-testid=question-panel]", T, |t| t.contains("Which color")).await;
    b.option("Blue").await.click().await.unwrap();
    b.click_button("Submit").await;
    b.wait_text("main", T, |t| t.contains("Blue it is.")).await;
    b.send_message("run the tests").await;
    b.wait_text("[data-testid=approval-card]", T, |s| s.contains("Deny")).await;
    b.click_button("Deny").await;
    b.wait_text("[data-testid=approval-receipt]", T, |s| s.contains("Denied")).await;
    b.wait_gone("[data-testid=stream]", T).await;
    b.send_message("**done** for today").await;
    b.wait_text("main", T, |t| t.contains("You said: done for today")).await;

    // The conversation's actions are one menu; Export is in it.
    b.click_button("Export as Markdown").await;
    let said = b.wait_text("[data-testid=export-status]", T, |t| t.starts_with("Exported") || t.starts_with("Not exported")).await;
    assert!(said.starts_with("Exported ") && said.contains(" messages as chat-pick-a-color-"), "{said}");
    let (name, md) = saved_file(dir.path()).await;
    assert!(name.starts_with("chat-pick-a-color-") && name.ends_with(".md"), "{name}");
    assert!(md.starts_with("# pick a color\n\nConversation `agent:main:main` on 127.0.0.1:"), "{md}");
    assert!(md.contains("1 questions, 1 approvals"), "{md}");
    assert!(md.contains("- Which color should the new theme use?\n  - answer: Blue"), "the answered question: {md}");
    assert!(md.contains("the agent asked to run `ls -la`. **Denied**"), "the denied approval: {md}");
    assert!(md.contains("> **done** for today") && md.contains("You said: **done** for today"), "the words as written: {md}");
    let question = md.find("**Question**").unwrap();
    let approval = md.find("**Approval**").unwrap();
    assert!(question < md.find("Blue it is.").unwrap() && approval < md.find("> **done** for today").unwrap(), "in order: {md}");
    for (w, h) in [(1000u32, 800u32), (390, 844)] {
        b.client.set_window_size(w, h).await.unwrap();
        b.open_conversation_menu().await;
        assert_eq!(b.horizontal_overflow().await.0, 0, "horizontal overflow at {w} px");
        shots(&b, "conversation-menu", w).await;
    }
    b.close().await;
}

/// An export whose code cannot be fetched says so, and the next one, once it can, exports.
#[tokio::test(flavor = "multi_thread")]
async fn an_export_whose_code_cannot_be_fetched_says_so_and_the_next_one_exports() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let _dir = downloads(&b).await;
    b.send_message("hello export").await;
    b.wait_text("main", T, |t| t.contains("You said: hello export")).await;
    b.cdp("Network.enable", json!({})).await;
    b.cdp("Network.setBlockedURLs", json!({"urls": ["*/app-export-*"]})).await;
    b.click_button("Export as Markdown").await;
    let said = b.wait_text("[data-testid=export-status]", T, |t| t.starts_with("Exported") || t.starts_with("Not exported")).await;
    assert!(said.starts_with("Not exported: its code could not be loaded from the gateway."), "{said}");
    b.cdp("Network.setBlockedURLs", json!({"urls": []})).await;
    b.click_button("Export as Markdown").await;
    b.wait_text("[data-testid=export-status]", T, |t| t.starts_with("Exported ")).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_word_only_inside_a_message_finds_its_conversation_on_the_local_gateway() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let zoo = agent.request("sessions.create", json!({"label": "Zoo"})).await.unwrap()["key"].as_str().unwrap().to_string();
    for (n, text) in ["hello", "the quokka plan is ready"].iter().enumerate() {
        agent.request("chat.send", json!({"sessionKey": zoo, "message": text, "idempotencyKey": format!("zoo-{n}")})).await.unwrap();
    }
    e2e::db_user_texts(&gw, &zoo, &["hello", "the quokka plan is ready"]).await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("hello").await;
    wait_messages(&b, 2).await;
    b.set_field("input[type=search]", "Quokka plan").await;
    let hit = b.wait_text("[data-testid=message-hit]", T, |t| !t.is_empty()).await;
    assert!(hit.starts_with("Zoo") && hit.contains("quokka plan is ready"), "the conversation and the words around the match: {hit}");
    assert_eq!(b.js("return document.querySelectorAll('[data-testid=conversation-row]').length;").await, json!(0), "no title matches");
    for (w, h) in [(1000u32, 800u32), (390, 844)] {
        b.client.set_window_size(w, h).await.unwrap();
        if w < 900 {
            b.click_button("Conversations").await;
        }
        assert_eq!(b.horizontal_overflow().await.0, 0, "horizontal overflow at {w} px");
        shots(&b, "content-search", w).await;
    }
    b.click_xpath("//button[@data-testid='message-hit']").await;
    b.wait_js("return document.querySelector('[data-testid=pane]').dataset.session;", |v| v.as_str() == Some(zoo.as_str())).await;
    // Archived conversations are behind the same filter.
    b.client.set_window_size(1000, 800).await.unwrap();
    b.click_xpath("//label[contains(@class,'conversations__filter')]//input").await;
    b.wait_gone("[data-testid=message-hit]", T).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agent_is_listed_and_stopped_alone_on_the_local_gateway() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("delegate the report").await;
    let state = b.wait_text("[data-testid=task] [data-testid=task-state]", T, |t| t.starts_with("Running for")).await;
    assert!(state.ends_with("using demo_steps"), "the tool in use: {state}");
    b.wait_text("[data-testid=tasks-panel] summary", T, |t| t == "Sub-agents: 1 running").await;
    b.wait_text("main", T, |t| t.contains("I asked a helper to work on it")).await;
    for (w, h) in [(1000u32, 800u32), (390, 844)] {
        b.client.set_window_size(w, h).await.unwrap();
        assert_eq!(b.horizontal_overflow().await.0, 0, "horizontal overflow at {w} px");
        shots(&b, "sub-agents", w).await;
    }
    // On a short window the conversation scrolls under its header and sub-agents, which stay
    // in view.
    b.client.set_window_size(390, 480).await.unwrap();
    let seen = b
        .js("const d = document.documentElement; window.scrollTo(0, d.scrollHeight);
             const r = document.querySelector('[data-testid=tasks-panel]').getBoundingClientRect();
             const h = document.querySelector('.conversation-header').getBoundingClientRect();
             return [d.scrollHeight > window.innerHeight, window.scrollY > 0, h.top >= 0 && r.top >= h.bottom - 1 && r.bottom <= window.innerHeight];")
        .await;
    assert_eq!(seen, json!([true, true, true]), "[the page scrolls, it scrolled, the header and the sub-agents are in view]");
    b.js("window.scrollTo(0, 0);").await;
    b.client.set_window_size(1000, 800).await.unwrap();
    // Stop: that task alone.
    b.click_xpath("//li[@data-testid='task']//button[normalize-space()='Stop']").await;
    b.wait_text("[data-testid=task] [data-testid=task-state]", T, |t| t.starts_with("Stopped after")).await;
    b.wait_text("[data-testid=tasks-panel] summary", T, |t| t == "Sub-agents").await;
    let rows = gw.gateway().store.sessions(None, gateway::store::ArchivedFilter::Active).unwrap();
    let helper = rows.iter().find(|r| r.key.starts_with("agent:main:subagent:")).expect("the helper's conversation");
    assert_eq!(helper.run_status.as_deref(), Some("killed"), "its run was stopped");
    assert_eq!(
        gw.gateway().store.session(MAIN).unwrap().unwrap().run_status.as_deref(),
        Some("done"),
        "the conversation's own run was not"
    );
    // Its transcript is one click away.
    b.click_xpath("//li[@data-testid='task']//button[normalize-space()='Open']").await;
    b.wait_js("return document.querySelector('[data-testid=pane]').dataset.session;", |v| v.as_str() == Some(helper.key.as_str())).await;
    b.wait_text("main", T, |t| t.contains("Working on step 1 of 10")).await;

    // Back in the conversation: its own Stop, once its run has ended, stops the helper it started.
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    b.send_message("delegate the summary").await;
    b.wait_text("main", T, |t| t.contains("(“delegate the summary”)")).await;
    b.wait_js("return [...document.querySelectorAll('[data-testid=task]')].filter(t => t.dataset.status === 'running').length;", |v| {
        v == &json!(1)
    })
    .await;
    b.wait_gone("[data-testid=stream]", T).await;
    b.wait_text("[data-testid=run-bar]", T, |t| t.contains("The agent is working.")).await;
    b.click_xpath("//div[@data-testid='run-bar']//button[normalize-space()='Stop']").await;
    b.wait_text("[data-testid=stop-outcome]", T, |t| t.starts_with("Stopped")).await;
    b.wait_js("return [...document.querySelectorAll('[data-testid=task]')].map(t => t.dataset.status);", |v| {
        v == &json!(["cancelled", "cancelled"])
    })
    .await;
    b.close().await;
}

/// A reply that streams plain prose shows it once, however many updates it took (each update
/// used to draw the whole text again below the last).
#[tokio::test(flavor = "multi_thread")]
async fn a_streaming_reply_shows_its_words_once() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("slow please").await;
    let live = b.wait_text("[data-testid=stream] .md", T, |t| t.contains("Working on step 3 of 10")).await;
    assert_eq!(live.matches("Working on step 1 of 10").count(), 1, "{live}");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rewind_is_not_offered_without_the_admin_scope_nor_either_while_the_agent_works() {
    let gw = LocalGateway::start_with_device_scopes(Some(&[scope::READ, scope::WRITE])).await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.send_message("hello").await;
    wait_messages(&b, 2).await;
    b.find_xpath(&under("user", 1, "Fork from here"), T).await;
    assert!(
        b.client.find(fantoccini::Locator::XPath(&under("user", 1, "Rewind to here"))).await.is_err(),
        "no Rewind without operator.admin"
    );
    // While a run works, Fork is shown but waits.
    b.send_message("slow please").await;
    b.wait_js(
        &format!(
            "const b = document.evaluate(\"{}\", document, null, 9, null).singleNodeValue; return !!b && b.disabled;",
            under("user", 1, "Fork from here")
        ),
        |v| v == &json!(true),
    )
    .await;
    b.close().await;
}

/// Against the real gateway with the scripted model: Copy as Markdown of a streamed Markdown
/// reply, a fork, and a rewind (the real gateway keeps what left as a branch).
#[tokio::test(flavor = "multi_thread")]
async fn copy_rewind_and_fork_on_the_real_gateway() {
    let e2e::real::WithScriptedModel { gw, model: _scripted, mut agent } = e2e::real::RealGateway::start_with_scripted_model().await;
    let b = Browser::start().await;
    b.goto(&format!("{}/?session=agent%3Amain%3Amain#token={}", gw.base(), e2e::real::TOKEN)).await;
    b.wait_connected_within(std::time::Duration::from_secs(90)).await;
    b.grant_clipboard().await;
    let nonce = e2e::nonce();
    b.send_message(&format!("md: alpha {nonce}")).await;
    b.wait_text("[data-testid=run-took]", e2e::TURN, |_| true).await;
    b.send_message(&format!("beta {nonce}")).await;
    let echo = format!("Echo: beta {nonce}");
    b.wait_js("return [...document.querySelectorAll('[data-testid=pane] [data-testid=message]')].pop()?.textContent ?? '';", |v| {
        v.as_str().is_some_and(|t| t.contains(&echo))
    })
    .await;
    b.wait_gone("[data-testid=stream]", e2e::TURN).await;

    b.click_xpath(&under("assistant", 1, "Copy as Markdown")).await;
    b.wait_text("[data-role=assistant] [data-testid=message-actions] [role=status]", T, |t| !t.is_empty()).await;
    let copied = b.clipboard_text().await;
    assert!(copied.starts_with(&format!("## Plan for alpha {nonce}")) && copied.contains("```sh\necho alpha"), "{copied}");

    // Fork from the second message: the real gateway answers with the new conversation.
    b.click_xpath(&under("user", 2, "Fork from here")).await;
    b.click_xpath("//*[@data-testid='message-action-question']//button[normalize-space()='Fork']").await;
    b.wait_js("return document.querySelector('[data-testid=pane]').dataset.session;", |v| {
        v.as_str().is_some_and(|s| s != MAIN && s.starts_with("agent:main:"))
    })
    .await;
    b.wait_text("[data-testid=cut-notice]", T, |t| t.starts_with("Forked")).await;
    let forked = b.js("return document.querySelector('[data-testid=pane]').dataset.session;").await.as_str().unwrap().to_string();
    b.wait_js("return document.querySelector('textarea[name=message]').value;", |v| v == &json!(format!("beta {nonce}"))).await;
    wait_users(&b, 1).await;

    // Rewind the main conversation to the second message.
    b.goto(&format!("{}/?session=agent%3Amain%3Amain#token={}", gw.base(), e2e::real::TOKEN)).await;
    b.wait_connected_within(std::time::Duration::from_secs(90)).await;
    wait_users(&b, 2).await;
    b.click_xpath(&under("user", 2, "Rewind to here")).await;
    b.click_xpath("//*[@data-testid='message-action-question']//button[normalize-space()='Rewind']").await;
    wait_users(&b, 1).await;
    b.wait_js("return document.querySelector('textarea[name=message]').value;", |v| v == &json!(format!("beta {nonce}"))).await;
    let h = agent.request("chat.history", json!({"sessionKey": MAIN, "limit": 50})).await.unwrap();
    let users: Vec<String> =
        h["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user").map(protocol::chat::message_text).collect();
    assert_eq!(users.len(), 1, "the real gateway's conversation after the rewind: {users:?}");
    b.screenshot("message-actions-real").await;

    // The command palette lists the real gateway's commands (`commands.list`).
    b.set_field("textarea[name=message]", "").await;
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    area.send_keys("/").await.unwrap();
    let all = wait_palette(&b, |l| l.iter().any(|u| u.starts_with("/think"))).await;
    assert_eq!(&all[..2], ["/new", "/stop"], "{all:?}");
    assert!(all.len() > 20, "every command of the real gateway, to discover: {all:?}");
    area.send_keys("compa").await.unwrap();
    let lines = wait_palette(&b, |l| l.first().is_some_and(|u| u.starts_with("/compact"))).await;
    area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    b.wait_js("return document.querySelector('textarea[name=message]').value;", |v| v.as_str().is_some_and(|t| t.starts_with("/compact")))
        .await;
    b.screenshot("command-palette-real").await;
    assert!(!lines.is_empty());

    // Export: a conversation with an answered question and a denied approval holds both.
    b.set_field("textarea[name=message]", "").await;
    let dir = downloads(&b).await;
    b.send_message(&format!("ask: Which target for {nonce}?")).await;
    b.wait_text("section.dock", e2e::TURN, |t| t.contains(&format!("Which target for {nonce}?"))).await;
    b.option("Production").await.click().await.unwrap();
    b.click_button("Submit").await;
    b.wait_js("return document.querySelector('main').innerText;", |v| v.as_str().is_some_and(|t| t.contains("Target: Production"))).await;
    b.wait_gone("[data-testid=stream]", e2e::TURN).await;
    // The real gateway asks only about a script that exists.
    std::fs::write(gw.workspace().join(format!("never-{nonce}.sh")), "#!/bin/sh\necho never\n").unwrap();
    b.send_message(&format!("exec: sh never-{nonce}.sh")).await;
    b.wait_text("section.dock", e2e::TURN, |t| t.contains(&format!("never-{nonce}.sh"))).await;
    b.click_button("Deny").await;
    b.wait_text("[data-testid=approval-receipt]", T, |s| s.contains("Denied")).await;
    b.wait_gone("[data-testid=stream]", e2e::TURN).await;
    b.click_button("Export as Markdown").await;
    let said = b.wait_text("[data-testid=export-status]", T, |t| t.starts_with("Exported") || t.starts_with("Not exported")).await;
    assert!(said.starts_with("Exported"), "{said}");
    let (_, md) = saved_file(dir.path()).await;
    assert!(md.contains(&format!("- Which target for {nonce}?\n  - answer: Production")), "the answered question: {md}");
    assert!(md.contains(&format!("the agent asked to run `sh never-{nonce}.sh`. **Denied**")), "the denied approval: {md}");
    assert!(md.contains(&format!("## Plan for alpha {nonce}")), "the Markdown reply as written: {md}");

    // Search by content: words only inside a message of the main conversation find it, from
    // the forked one (the real gateway's full-text index).
    b.goto(&format!("{}/?session={}#token={}", gw.base(), forked.replace(':', "%3A"), e2e::real::TOKEN)).await;
    b.wait_connected_within(std::time::Duration::from_secs(90)).await;
    b.set_field("input[type=search]", &format!("never {nonce}")).await;
    let hit = b.wait_text("[data-testid=message-hit]", T, |t| !t.is_empty()).await;
    assert!(hit.contains(&format!("never-{nonce}")), "{hit}");
    assert_eq!(b.js("return [...document.querySelectorAll('[data-testid=message-hit]')].map(h => h.dataset.key);").await, json!([MAIN]));
    b.click_xpath("//button[@data-testid='message-hit']").await;
    b.wait_js("return document.querySelector('[data-testid=pane]').dataset.session;", |v| v.as_str() == Some(MAIN)).await;
    b.screenshot("content-search-real").await;

    // A sub-agent the run starts (`sessions_spawn`): listed under the conversation while it works,
    // and stopped alone (`tasks.cancel`).
    b.set_field("input[type=search]", "").await;
    b.send_message(&format!("spawn: stream: sub-{nonce}")).await;
    let state = b.wait_text("[data-testid=task] [data-testid=task-state]", e2e::TURN, |t| t.starts_with("Running")).await;
    let title = b.wait_text("[data-testid=task] .tasks__title", T, |t| !t.is_empty()).await;
    assert!(title.contains(&format!("sub-{nonce}")), "{title} / {state}");
    b.screenshot("sub-agents-real").await;
    b.click_xpath("//li[@data-testid='task']//button[normalize-space()='Stop']").await;
    b.wait_text("[data-testid=task] [data-testid=task-state]", T, |t| t.starts_with("Stopped")).await;
    let listed = agent.request("tasks.list", json!({"sessionKey": MAIN})).await.unwrap();
    let statuses: Vec<&str> = listed["tasks"].as_array().unwrap().iter().filter_map(|t| t["status"].as_str()).collect();
    assert_eq!(statuses, ["cancelled"], "{listed}");
    b.close().await;
    tokio::task::spawn_blocking(move || drop(gw)).await.unwrap();
}
