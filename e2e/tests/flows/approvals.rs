//! Exec and plugin approvals in the dock, against the local gateway and the real OpenClaw
//! gateway (2026.9.6), raised by a backend client with `twoPhase: true` while the page is open:
//! shown at once and routed to this UI (`deliveryRoute: "approval-client"`), decided by one
//! deliberate click (never by a key press alone), first answer wins, still shown after a
//! reload, expiry, `/approve/<id>`, two panes on different conversations, the title count,
//! summaries rebuilt from `approval.history` in another browser, and screenshots at 1000 and
//! 390 px in light and dark. The gateway's own record (`approval.get`) is the judge of what
//! was decided.

use e2e::T;
use e2e::Target;
use e2e::approvals::{card, raise, raise_exec, record, recorded};
use e2e::browser::Browser;
use gateway::client::Client;
use serde_json::json;

const MAIN: &str = "agent:main:main";
const SIDE: &str = "agent:main:side";

fn receipt(id: &str) -> String {
    format!("[data-testid=approval-receipt][data-approval-id='{id}']")
}

/// Clicks the decision button `name` on the card of `id` with the pointer.
/// Clicks a decision once it is live (decisions are inert for a moment after they appear);
/// Always allow takes a second click, itself once live again.
async fn click_decision(b: &Browser, id: &str, name: &str) {
    let xpath = format!("//*[@data-approval-id='{id}' and @data-testid='approval-card']//button[normalize-space()='{name}']");
    let presses = if name.starts_with("Always allow") { 2 } else { 1 };
    for _ in 0..presses {
        b.wait_live(&xpath).await;
        b.find_xpath(&xpath, T).await.click().await.unwrap_or_else(|e| panic!("click {name}: {e}"));
    }
}

async fn screenshots(t: &Target, agent: &mut Client) {
    // A page is open when it is raised, so the gateway has an approval client to route it to.
    let first = Browser::start_sized(1000, 800).await;
    first.goto(&t.ui("/")).await;
    first.wait_connected().await;
    let id = raise_exec(
        agent,
        "python3 -c 'import shutil; shutil.rmtree(\"build\")' && ls -la /srv/conformance",
        json!({"warningText": "Deletes the build directory"}),
    )
    .await;
    // The first page at 1000 px, then one at 390 px; the theme changes in place.
    let mut first = Some(first);
    for (w, h) in [(1000u32, 800u32), (390, 844)] {
        let b = match first.take() {
            Some(b) => b,
            None => {
                let b = Browser::start_sized(w, h).await;
                b.goto(&t.ui("/")).await;
                b
            }
        };
        b.wait_text(&card(&id), T, |s| s.contains("shutil.rmtree")).await;
        for theme in ["light", "dark"] {
            b.js(&format!("document.documentElement.dataset.theme = '{theme}';")).await;
            let (overflow, _) = b.horizontal_overflow().await;
            assert_eq!(overflow, 0, "horizontal overflow at {w} px ({theme})");
            b.screenshot(&format!("approval-{}-{w}-{theme}", t.name)).await;
        }
        b.close().await;
    }
    agent.request("approval.resolve", json!({"id": id, "kind": "exec", "decision": "deny"})).await.unwrap();
}

async fn flows(t: Target, agent: &mut Client) {
    let b = Browser::start_sized(1000, 900).await;
    b.goto(&t.ui("/")).await;
    b.wait_connected().await;

    // 1. Exec, allow once. Shown with the command exactly as sent, where and for whom, and the
    // gateway's analysis; nothing is focused on Allow; a key press alone does not allow.
    let command = "python3 -c 'print(1)' && ls -la /tmp  <b>not bold</b>";
    let id = raise_exec(agent, command, json!({})).await;
    let shown = b.wait_text(&format!("{} [data-testid=approval-command]", card(&id)), T, |s| !s.is_empty()).await;
    assert_eq!(shown, command, "the command exactly as sent, as text");
    let text = b.wait_text(&card(&id), T, |s| s.contains("Allow once")).await;
    assert!(text.contains("gateway") && text.contains("/tmp/approvals-e2e") && text.contains("main"), "host, cwd, conversation: {text}");
    let warnings = b.wait_text(&format!("{} [data-testid=approval-warnings]", card(&id)), T, |s| !s.is_empty()).await;
    assert!(warnings.contains("inline-eval"), "the gateway's command analysis: {warnings}");
    assert_eq!(b.js("return document.querySelectorAll('.dock b').length;").await, json!(0), "agent text is inert");
    assert_eq!(b.js("return document.title;").await, json!("(1) Approval waiting · OpenClaw Control"));
    assert_eq!(
        b.js("return !!document.activeElement.closest('[data-testid=approval-card]');").await,
        json!(false),
        "nothing focused on the card"
    );
    // Enter on a focused Allow once arms it and asks for a second press; nothing is decided.
    let allow_xpath = format!("//*[@data-approval-id='{id}']//button[normalize-space()='Allow once']");
    b.wait_live(&allow_xpath).await;
    let allow = b.find_xpath(&allow_xpath, T).await;
    allow.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    b.wait_text(&format!("{} [data-testid=approval-confirm]", card(&id)), T, |s| s.contains("again")).await;
    assert_eq!(record(agent, &id).await["status"], "pending", "one key press never allows");
    click_decision(&b, &id, "Allow once").await;
    let r = recorded(agent, &id, "allowed").await;
    assert_eq!(r["decision"], "allow-once");
    b.wait_text(&receipt(&id), T, |s| s.contains("Allowed once") && s.contains("ls -la /tmp")).await;
    assert_eq!(b.js("return document.title;").await, json!("OpenClaw Control"));

    // 2. Exec, deny; "Always allow here" is not offered when the gateway does not offer it.
    let id2 = raise_exec(agent, "rm -rf ./build", json!({"ask": "always"})).await;
    b.wait_text(&card(&id2), T, |s| s.contains("Deny")).await;
    assert!(!b.exists(&format!("{} .approval__always", card(&id2))).await, "allow-always not offered");
    click_decision(&b, &id2, "Deny").await;
    assert_eq!(recorded(agent, &id2, "denied").await["decision"], "deny");
    b.wait_text(&receipt(&id2), T, |s| s.contains("Denied")).await;

    // 3. Plugin, always allow: title and description, decided with its own words.
    let pid = raise(agent, "plugin.approval.request", json!({"title": "Send weekly report", "description": "Email the weekly report to 3 recipients.", "severity": "warning", "sessionKey": MAIN, "agentId": "main", "timeoutMs": 300_000})).await;
    let text = b.wait_text(&card(&pid), T, |s| s.contains("Always allow")).await;
    assert!(text.contains("Send weekly report") && text.contains("Email the weekly report"), "{text}");
    click_decision(&b, &pid, "Always allow").await;
    assert_eq!(recorded(agent, &pid, "allowed").await["decision"], "allow-always");
    b.wait_text(&receipt(&pid), T, |s| s.contains("Always allowed")).await;

    // 4. Still shown after a reload; then decided by another client while shown: the card goes
    // and the summary says what won.
    let id4 = raise_exec(agent, "make deploy", json!({})).await;
    b.wait_text(&card(&id4), T, |s| s.contains("make deploy")).await;
    b.goto(&t.ui("/")).await;
    b.wait_text(&card(&id4), T, |s| s.contains("make deploy")).await;
    agent.request("exec.approval.resolve", json!({"id": id4, "decision": "deny"})).await.unwrap();
    let said = b.wait_text(&receipt(&id4), T, |s| s.contains("Decided elsewhere")).await;
    assert!(said.contains("denied"), "{said}");
    b.wait_gone(&card(&id4), T).await;

    // 5. Expiry: the countdown runs out, the card leaves, and the summary says so.
    let id5 = raise_exec(agent, "sleep 1", json!({"timeoutMs": 4_000})).await;
    b.wait_text(&format!("{} [data-testid=countdown]", card(&id5)), T, |s| s.ends_with("left")).await;
    b.wait_text(&receipt(&id5), T, |s| s.contains("Expired")).await;
    recorded(agent, &id5, "expired").await;

    // 6. `/approve/<id>`: one approval, pending (decided there) or finished (its summary), and an
    // unknown id reads as finished.
    let id6 = raise_exec(agent, "git push --force", json!({})).await;
    let b2 = Browser::start_sized(1000, 900).await;
    b2.goto(&t.ui(&format!("/approve/{id6}"))).await;
    b2.wait_text(&card(&id6), T, |s| s.contains("git push --force")).await;
    click_decision(&b2, &id6, "Deny").await;
    recorded(agent, &id6, "denied").await;
    b2.wait_text(&receipt(&id6), T, |s| s.contains("Denied")).await;
    b2.goto(&t.ui(&format!("/approve/{id}"))).await;
    b2.wait_text(&receipt(&id), T, |s| s.contains("Allowed once")).await;
    b2.goto(&t.ui("/approve/00000000-0000-4000-8000-000000000000")).await;
    b2.wait_text("[data-testid=approval-receipt]", T, |s| s.contains("no longer known")).await;
    // 7. Another browser rebuilds the summaries from the gateway's history.
    b2.goto(&t.ui("/")).await;
    b2.wait_text(&receipt(&pid), T, |s| s.contains("Always allowed")).await;
    b2.wait_text(&receipt(&id2), T, |s| s.contains("Denied") && s.contains("rm -rf ./build")).await;
    b2.close().await;
    b.close().await;

    // 8. Two panes on different conversations: an approval shows in the pane of its own
    // conversation only, and is decided there.
    let b3 = Browser::start_sized(1400, 900).await;
    b3.goto(&t.ui(&format!("/?session={MAIN}&pane={SIDE}"))).await;
    b3.wait_connected().await;
    let id8 = raise_exec(agent, "ls side", json!({"sessionKey": SIDE})).await;
    let in_side = format!("[data-testid=pane][data-session='{SIDE}'] {}", card(&id8));
    b3.wait_text(&in_side, T, |s| s.contains("ls side")).await;
    assert!(!b3.exists(&format!("[data-testid=pane][data-session='{MAIN}'] {}", card(&id8))).await, "not in the other pane");
    b3.click_xpath(&format!(
        "//*[@data-testid='pane' and @data-session='{SIDE}']//*[@data-approval-id='{id8}']//button[normalize-space()='Allow once']"
    ))
    .await;
    recorded(agent, &id8, "allowed").await;
    b3.close().await;

    screenshots(&t, agent).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn approvals_on_the_local_gateway() {
    let gw = e2e::LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let url = gw.ui_url();
    let fragment = url[url.find('#').unwrap()..].to_string();
    flows(Target { base: gw.base(), fragment, name: "local" }, &mut agent).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn approvals_on_the_real_gateway() {
    let gw = tokio::task::spawn_blocking(e2e::real::RealGateway::start).await.unwrap();
    let mut agent = gw.agent().await;
    flows(Target { base: gw.base(), fragment: format!("#token={}", e2e::real::TOKEN), name: "real" }, &mut agent).await;
}

/// `make run`'s demo agent: a message with the word `run` asks for an exec approval in the
/// dock, and the reply says what was decided; Stop (the dock collapsed) cancels the next one.
#[tokio::test(flavor = "multi_thread")]
async fn the_demo_agent_asks_for_approval_in_the_dock_and_stop_cancels_it() {
    let gw = e2e::LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    // Every state the command's card shows, with its output then (the page records them, so a
    // loaded machine cannot make the test miss the three seconds it runs).
    b.js("window.__cards = []; new MutationObserver(() => document.querySelectorAll('[data-testid=tool-call][data-tool=exec]').forEach(c => { const o = c.querySelector('[data-testid=tool-output]'); window.__cards.push([c.dataset.state, o ? o.innerText : '']); })).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});").await;
    b.send_message("run the tests").await;
    let text = b.wait_text("[data-testid=approval-card]", T, |s| s.contains("Allow once")).await;
    assert!(text.contains("ls -la"), "{text}");
    b.click_button("Allow once").await;
    let done = b.wait_text(".transcript", T, |s| s.contains("Allowed once: I showed what ls -la would print")).await;
    assert!(done.contains("done, exit code 0") && done.contains("total 24"), "the command's card with its output:\n{done}");
    let running = b.js("return window.__cards.filter(([s, o]) => s === 'running' && o.includes('pretending to run')).length;").await;
    assert!(running.as_u64().unwrap_or(0) > 0, "the output was shown while the command ran");
    b.wait_text("[data-testid=approval-receipt]", T, |s| s.contains("Allowed once")).await;

    b.send_message("run it again").await;
    b.wait_text("[data-testid=approval-card]", T, |s| s.contains("Deny")).await;
    b.click_button("Collapse").await;
    b.wait_text("[data-testid=composer-approval-hint]", T, |s| s.contains("never decides")).await;
    b.click_button("Stop").await;
    b.wait_gone("[data-testid=approval-card], [data-testid=dock-bar]", T).await;
    b.wait_text(".transcript", T, |s| s.contains("Command approval: Cancelled")).await;
    b.close().await;
}
