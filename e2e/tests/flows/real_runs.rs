//! Real agent runs: the real OpenClaw gateway (2026.9.6) runs real turns against the project's
//! scripted model on loopback (`e2e::scripted_model`, host exec in mode `ask`), and our UI,
//! served by that gateway, shows what the agent does while it does it: a streamed reply,
//! thinking, `ask_user` through `tool_call`, an exec approval and the command's output as it
//! prints, Stop, a follow-up sent while a reply streams, and a reload in the middle of a run.

use std::time::Duration;

use e2e::browser::Browser;
use e2e::real::{RealGateway, WithScriptedModel};
use e2e::scripted_model::ScriptedModel;
use e2e::{T, TURN, nonce};
use serde_json::{Value, json};

/// The conversation every run here goes to.
const MAIN: &str = "agent:main:main";

struct Setup {
    gw: RealGateway,
    model: ScriptedModel,
    agent: gateway::client::Client,
    b: Browser,
}

async fn setup() -> Setup {
    let WithScriptedModel { gw, model, agent } = RealGateway::start_with_scripted_model().await;
    let b = Browser::start_sized(1100, 900).await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected_within(Duration::from_secs(90)).await;
    Setup { gw, model, agent, b }
}

/// The text of the transcript (saved rows, live runs and unsent messages).
async fn transcript(b: &Browser) -> String {
    b.js("const t = document.querySelector('.transcript'); return t ? t.innerText : '';").await.as_str().unwrap_or_default().to_string()
}

async fn wait_transcript(b: &Browser, what: &str, accept: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let t = transcript(b).await;
        if accept(&t) {
            return t;
        }
        if tokio::time::Instant::now() > deadline {
            let shot = b.screenshot("real-runs-timeout").await;
            let rows = b.js("return [...document.querySelectorAll('[data-testid=message]')].map(e => e.dataset.key + ' ' + e.dataset.seq + ' ' + e.dataset.role);").await;
            panic!("the transcript never showed {what}; screenshot {shot}; rows {rows}; it shows:\n{t}");
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

/// A backend request; when the backend socket is gone (the client answers the gateway's
/// keepalive pings while it waits, so this is a real outage), connects again and asks once more.
async fn request(gw: &RealGateway, agent: &mut gateway::client::Client, method: &str, params: Value) -> Value {
    match agent.request(method, params.clone()).await {
        Err(e) if e.code == "TRANSPORT" => {
            eprintln!("the backend client's socket is gone ({}); connecting again", e.message);
            *agent = gw.agent().await;
            agent.request(method, params).await.unwrap_or_else(|e| panic!("{method}: {e:?}"))
        }
        r => r.unwrap_or_else(|e| panic!("{method}: {e:?}")),
    }
}

/// The saved rows of the main conversation, as the gateway serves them.
async fn history(gw: &RealGateway, agent: &mut gateway::client::Client) -> Value {
    request(gw, agent, "chat.history", json!({"sessionKey": MAIN, "limit": 200})).await
}

/// Waits until no run is active in the main conversation.
async fn wait_idle(gw: &RealGateway, agent: &mut gateway::client::Client) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let h = request(gw, agent, "chat.history", json!({"sessionKey": MAIN, "limit": 1})).await;
        if h["sessionInfo"]["hasActiveRun"] != json!(true) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "the run never ended: {}", h["sessionInfo"]);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The live run's element: `[state, phase, text]`.
async fn live_run(b: &Browser) -> Value {
    b.js("const s = [...document.querySelectorAll('[data-testid=stream]')].pop(); return s ? [s.dataset.state, s.querySelector('[data-testid=run-phase]').textContent, s.innerText] : null;").await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_run_streams_thinks_asks_and_stops_and_a_follow_up_is_answered_once() {
    let Setup { gw, model, mut agent, b } = setup().await;
    let n = nonce();

    // 1. A reply held after its first words: the run is shown while it writes.
    b.send_message(&format!("hold: g1 reply-{n}")).await;
    let deadline = tokio::time::Instant::now() + TURN;
    let live = loop {
        let v = live_run(&b).await;
        if v[2].as_str().is_some_and(|t| t.contains(&format!("Working on reply-{n}"))) {
            break v;
        }
        assert!(tokio::time::Instant::now() < deadline, "the streaming reply was never shown: {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(live[0], "running", "{live}");
    assert!(b.exists("[data-testid=run-bar] .run-bar__stop").await, "Stop is offered while the run works");
    b.screenshot("real-run-streaming").await;
    model.open_gate("g1");
    // The run says how long it took.
    wait_transcript(&b, "the finished reply and its run's time", |t| {
        t.contains(&format!("finished reply-{n}.")) && t.contains("Finished in")
    })
    .await;
    b.wait_gone("[data-testid=stream]", T).await;

    // 2. Markdown, streamed and rendered.
    b.send_message(&format!("md: plan-{n}")).await;
    wait_transcript(&b, "the markdown reply", |t| t.contains(&format!("Done with plan-{n}."))).await;
    b.wait_markdown_rendered().await;
    let md = b.wait_js(&format!("const m = [...document.querySelectorAll('[data-testid=message] .md')].find(e => e.textContent.includes('Done with plan-{n}')); return m && m.querySelector('h1,h2,h3,h4') && [m.querySelector('h1,h2,h3,h4').textContent, m.querySelectorAll('li').length, m.querySelector('pre code').textContent];"), |v| v.is_array()).await;
    assert_eq!(md, json!([format!("Plan for plan-{n}"), 2, format!("echo plan-{n}\n")]));

    // 3. Thinking: the saved reply keeps it, in its disclosure.
    b.send_message(&format!("think: risk-{n}")).await;
    wait_transcript(&b, "the answer after thinking", |t| t.contains(&format!("After thinking: risk-{n} is fine."))).await;
    let thinking = b.js(&format!("return [...document.querySelectorAll('[data-testid=thinking]')].map(d => d.textContent).find(t => t.includes('risk-{n}')) || null;")).await;
    assert!(thinking.as_str().is_some_and(|t| t.contains("First the inputs")), "{thinking}");

    // 4. ask_user, called by the run through tool_call: answered in the dock; the run goes on
    //    with the answer, and its card is a question summary, not "tool_call".
    b.send_message(&format!("ask: Which target for {n}?")).await;
    b.wait_text("section.dock", TURN, |t| t.contains(&format!("Which target for {n}?"))).await;
    b.option("Production").await.click().await.unwrap();
    b.click_button("Submit").await;
    let text =
        wait_transcript(&b, "the run's reply with the answer", |t| t.contains("The tool returned:") && t.contains("Target: Production"))
            .await;
    assert!(!text.contains("tool_call"), "the tool is named as the agent reached it:\n{text}");
    assert!(!text.contains("unsupported part"), "{text}");
    let summary = b.js(&format!("return [...document.querySelectorAll('[data-testid=question-receipt]')].map(e => e.innerText).find(t => t.includes('Which target for {n}?')) || null;")).await;
    assert!(summary.as_str().is_some_and(|s| s.starts_with("Answered") && s.contains("Production")), "{summary}");

    // 5. Stop while a reply streams.
    b.send_message(&format!("stream: long-{n}")).await;
    wait_transcript(&b, "the streaming words", |t| t.contains(&format!("chunk 3 of long-{n}."))).await;
    b.click_xpath("//div[@data-testid='run-bar']//button[normalize-space()='Stop']").await;
    b.wait_text("[data-testid=stop-outcome]", T, |t| !t.contains("Stopping")).await;
    wait_idle(&gw, &mut agent).await;
    let text = wait_transcript(&b, "the stopped reply, saved", |t| t.contains("Stopped in")).await;
    assert!(text.contains(&format!("chunk 1 of long-{n}.")), "what it wrote stays:\n{text}");
    b.wait_gone("[data-testid=stream][data-state=running]", T).await;

    // 6. A follow-up while a reply streams: delivered once, answered, and everything shown.
    b.send_message(&format!("hold: g6 first-{n}")).await;
    wait_transcript(&b, "the first reply streaming", |t| t.contains(&format!("Working on first-{n}"))).await;
    b.send_message(&format!("md: follow-{n}")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    model.open_gate("g6");
    let text = wait_transcript(&b, "the follow-up's answer", |t| t.contains(&format!("Done with follow-{n}."))).await;
    assert!(text.contains(&format!("finished first-{n}.")), "the first reply stays:\n{text}");
    assert_eq!(text.matches(&format!("md: follow-{n}")).count(), 1, "the follow-up is shown once:\n{text}");
    wait_idle(&gw, &mut agent).await;
    let h = history(&gw, &mut agent).await;
    let sent: Vec<&Value> =
        h["messages"].as_array().unwrap().iter().filter(|m| e2e::message_text(m) == format!("md: follow-{n}")).collect();
    assert_eq!(sent.len(), 1, "delivered once");
    b.wait_gone("[data-testid=outbox-row]", T).await;
    b.screenshot("real-run-follow-up").await;
    // Every row the gateway saved is on the page, none as unsupported.
    let text = transcript(&b).await;
    assert!(!text.contains("unsupported part"), "{text}");
    b.close().await;
}

/// A script in the agent's workspace: prints, then waits for `release-<arg>` before it ends.
const LIVE_SCRIPT: &str =
    "#!/bin/sh\necho \"early-42-$1\"\ni=0\nwhile [ ! -f \"release-$1\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\necho late\n";

#[tokio::test(flavor = "multi_thread")]
async fn an_exec_approval_from_a_real_run_shows_the_commands_output_while_it_runs_and_a_reload_keeps_the_run() {
    let Setup { gw, model, mut agent, b } = setup().await;
    let n = nonce();
    let ws = gw.workspace();
    std::fs::write(ws.join("demo-ok.sh"), "#!/bin/sh\necho \"ok-42-$1\"\n").unwrap();
    std::fs::write(ws.join("demo-live.sh"), LIVE_SCRIPT).unwrap();

    // 1. The run asks to run a command; allowed once; its output and the run's reply.
    b.send_message(&format!("exec: sh demo-ok.sh {n}")).await;
    b.wait_text("section.dock", TURN, |t| t.contains(&format!("sh demo-ok.sh {n}"))).await;
    // The run says what it waits for (its event follows the approval's own).
    b.wait_js("const s = [...document.querySelectorAll('[data-testid=stream]')].pop(); return s && s.querySelector('[data-testid=run-phase]').textContent;", |v| v == "Waiting for your approval").await;
    b.click_button("Allow once").await;
    wait_transcript(&b, "the run's reply", |t| t.contains(&format!("The tool returned: ok-42-{n}")) && t.contains("Finished in")).await;
    let h = history(&gw, &mut agent).await;
    eprintln!(
        "HISTORY IDS: {:?}",
        h["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| format!("{} {} {}", m["__openclaw"]["id"], m["__openclaw"]["seq"], m["role"]))
            .collect::<Vec<_>>()
    );
    let card = b.wait_js(&format!("const c = [...document.querySelectorAll('[data-testid=tool-call][data-tool=exec]')].find(e => e.innerText.includes('demo-ok.sh {n}')); return c && [c.dataset.state, c.querySelector('[data-testid=tool-result] pre') && c.querySelector('[data-testid=tool-result] pre').textContent];"), |v| v[1].is_string()).await;
    assert_eq!(card, json!(["done", format!("ok-42-{n}")]), "the saved result is fetched although the gateway never sends it live");

    // 2. A command that prints, then works: its output is shown while it runs.
    b.send_message(&format!("exec: sh demo-live.sh {n}")).await;
    b.wait_text("section.dock", TURN, |t| t.contains(&format!("sh demo-live.sh {n}"))).await;
    b.click_button("Allow once").await;
    let running = b
        .wait_js(
            &format!("const c = [...document.querySelectorAll('[data-testid=tool-call][data-tool=exec]')].find(e => e.innerText.includes('demo-live.sh {n}')); const o = c && c.querySelector('[data-testid=tool-output]'); return c && [c.dataset.state, o ? o.innerText : null, c.querySelector('[data-testid=tool-state]').textContent];"),
            |v| v[1].as_str().is_some_and(|o| o.contains("early-42")),
        )
        .await;
    assert_eq!(running[0], "running", "{running}");
    assert!(!ws.join(format!("release-{n}")).exists(), "the command is still waiting: its output was shown while it ran");
    b.screenshot("real-run-command-output").await;
    std::fs::write(ws.join(format!("release-{n}")), "").unwrap();
    let text = wait_transcript(&b, "the command's reply", |t| t.contains(&format!("The tool returned: early-42-{n} late"))).await;
    assert!(text.contains("exit code 0") || text.contains("done"), "{text}");
    wait_idle(&gw, &mut agent).await;

    // 3. A reload in the middle of a run shows the run so far.
    b.send_message(&format!("hold: g3 reload-{n}")).await;
    wait_transcript(&b, "the held run", |t| t.contains(&format!("Working on reload-{n}"))).await;
    b.client.refresh().await.unwrap();
    b.wait_connected_within(Duration::from_secs(60)).await;
    let live = b
        .wait_js(
            "const s = [...document.querySelectorAll('[data-testid=stream]')].pop(); return s ? [s.dataset.state, s.innerText] : null;",
            |v| v[0] == "running",
        )
        .await;
    eprintln!("after reload: {live}");
    assert!(b.exists("[data-testid=run-bar] .run-bar__stop").await, "the run is known active after the reload");
    model.open_gate("g3");
    wait_transcript(&b, "the held run's end", |t| t.contains(&format!("finished reload-{n}."))).await;
    b.wait_gone("[data-testid=stream][data-state=running]", T).await;
    let log = b.browser_log().await;
    assert!(!log.iter().any(|l| l.contains("panicked")), "{log:#?}");
    b.close().await;
}

/// Sends `text` from the backend client and waits until its run has ended with a reply.
async fn run_to_end(agent: &mut gateway::client::Client, text: &str, key: &str) {
    agent.request("chat.send", json!({"sessionKey": MAIN, "message": text, "idempotencyKey": key})).await.expect("chat.send");
    // TURN: the first of them is a fresh gateway's first turn.
    let deadline = tokio::time::Instant::now() + TURN;
    loop {
        let h = agent.request("chat.history", json!({"sessionKey": MAIN, "limit": 6})).await.unwrap();
        let replied = h["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["__openclaw"]["runId"] == key && m["role"] == "assistant" && m["stopReason"] == "stop");
        if replied && h["sessionInfo"]["hasActiveRun"] != json!(true) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "run {key} ({text}) never ended: {}", h["sessionInfo"]);
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_of_40_real_runs_opens_on_its_newest_row_and_shows_a_new_runs_rows() {
    let WithScriptedModel { gw, model: _model, mut agent } = RealGateway::start_with_scripted_model().await;
    let ws = gw.workspace();
    let n = nonce();
    // 40 real runs: tool calls (read), tools reached through tool_call, markdown and thinking.
    for i in 1..=40 {
        let text = match i % 4 {
            0 => {
                std::fs::write(ws.join(format!("notes-{i}.txt")), format!("note {i} of {n}\n")).unwrap();
                format!("read: notes-{i}.txt")
            }
            1 => format!("list: agents {i}"),
            2 => format!("md: run-{i}-{n}"),
            _ => format!("think: run-{i}-{n}"),
        };
        run_to_end(&mut agent, &text, &format!("run-{i}-{n}")).await;
    }
    agent
        .request("chat.inject", json!({"sessionKey": MAIN, "message": format!("Injected after the runs {n}.")}))
        .await
        .expect("chat.inject");
    let h = agent.request("chat.history", json!({"sessionKey": MAIN, "limit": 100})).await.unwrap();
    let saved = h["messages"].as_array().unwrap().len();
    eprintln!("saved rows on the newest page: {saved}, hasMore {}", h["hasMore"]);
    assert!(h["hasMore"] == json!(true), "the conversation is longer than a page");

    let b = Browser::start_sized(1100, 900).await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected_within(Duration::from_secs(90)).await;
    let text = wait_transcript(&b, "the newest rows", |t| t.contains(&format!("Injected after the runs {n}."))).await;
    assert!(text.contains("note 40 of"), "the 40th run's result is shown:\n{}", &text[text.len().saturating_sub(1500)..]);
    assert!(!text.contains("unsupported part"), "nothing the gateway wrote is unsupported");
    // The newest row is the last one on the page, and in view.
    let last = b.js("const rows = [...document.querySelectorAll('[data-testid=message]')]; const l = rows[rows.length - 1]; const r = l.getBoundingClientRect(); return [l.innerText, r.bottom <= window.innerHeight + 1];").await;
    assert!(last[0].as_str().unwrap().contains(&format!("Injected after the runs {n}.")), "{last}");
    assert_eq!(last[1], json!(true), "the newest row is in view");
    assert!(b.exists(".transcript__older").await, "older rows can be loaded");
    // A new run's rows appear as it runs: its tool's card, its result and its reply.
    std::fs::write(ws.join("notes-41.txt"), format!("note 41 of {n}\n")).unwrap();
    b.send_message("read: notes-41.txt").await;
    let text = wait_transcript(&b, "the new run's reply", |t| t.contains(&format!("The tool returned: note 41 of {n}"))).await;
    let card = b.wait_js("const c = [...document.querySelectorAll('[data-testid=tool-call][data-tool=read]')].pop(); return c && [c.dataset.state, c.querySelector('[data-testid=tool-result] pre') && c.querySelector('[data-testid=tool-result] pre').textContent];", |v| v[1].is_string()).await;
    assert_eq!(card[0], "done", "{card}");
    assert!(
        card[1].as_str().is_some_and(|r| r.contains(&format!("note 41 of {n}"))),
        "{card}\n{}",
        &text[text.len().saturating_sub(800)..]
    );
    b.screenshot("real-run-40-runs").await;
    b.close().await;
}

/// Every value the UI keeps in IndexedDB, in every gateway's database and store, as text.
async fn everything_stored(b: &Browser) -> String {
    let v = b
        .js_async(
            "const all = [];
             for (const { name } of await indexedDB.databases()) {
               all.push(await new Promise((resolve) => {
                 const open = indexedDB.open(name);
                 open.onsuccess = () => {
                   const db = open.result;
                   const names = [...db.objectStoreNames];
                   if (!names.length) { db.close(); resolve(''); return; }
                   const tx = db.transaction(names);
                   const out = [];
                   let left = names.length;
                   for (const s of names) {
                     const req = tx.objectStore(s).getAll();
                     req.onsuccess = () => { out.push(s + ': ' + JSON.stringify(req.result)); if (--left === 0) { db.close(); resolve(out.join('\\n')); } };
                   }
                 };
                 open.onerror = () => resolve('open failed');
               }));
             }
             return all.join('\\n');",
        )
        .await;
    v.as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secrets_request_from_a_real_run_shows_who_asks_why_and_where_the_value_may_go_and_the_value_is_kept_nowhere() {
    let Setup { gw, model: _model, mut agent, b } = setup().await;
    let n = nonce();
    let name = format!("CONF_KEY_{}", n.to_uppercase());
    let value = format!("v-{n}-Zq9-secret");
    b.send_message(&format!("vault: {name} api.demo.invalid")).await;
    // The run's first turn on a fresh gateway: it may take long to prepare its context.
    let card = b.wait_text("[data-testid=secret-request]", TURN, |t| t.contains(&name)).await;
    assert!(card.contains("Agent main, in conversation main"), "who asks:\n{card}");
    assert!(card.contains("To call the demo API on your behalf"), "the agent's reason:\n{card}");
    assert!(card.contains("No entry with this name is stored yet"), "{card}");
    assert!(card.contains("api.demo.invalid"), "the proposed host:\n{card}");
    // The composer does not offer a plain reply for a secret.
    assert!(!b.exists("[data-testid=composer-hint]").await, "a plain reply never answers a secret");
    // An address is refused as a host, with the reason; a host name is added.
    b.set_field("[data-testid=secret-hosts] input", "https://evil.example/x").await;
    b.click_button("Allow host").await;
    b.wait_text("[data-testid=secret-host-problem]", T, |t| t.contains("is an address, not a host name")).await;
    b.set_field("[data-testid=secret-hosts] input", "backup.demo.invalid").await;
    b.click_button("Allow host").await;
    b.wait_text("[data-testid=secret-hosts]", T, |t| t.contains("backup.demo.invalid")).await;
    let field = b.find_xpath("//div[@data-testid='question-panel']//input[@type='password']", T).await;
    field.send_keys(&value).await.unwrap();
    b.screenshot("real-run-secret-request").await;
    // On a phone's width nothing sticks out sideways.
    b.client.set_window_size(390, 844).await.unwrap();
    let (overflow, wide) = b.horizontal_overflow().await;
    assert_eq!(overflow, 0, "horizontal overflow at 390 px, widest: {wide}");
    b.screenshot("real-run-secret-request-390").await;
    b.client.set_window_size(1100, 900).await.unwrap();
    b.click_button("Submit").await;
    let text = wait_transcript(&b, "the run's reply after the secret was stored", |t| {
        t.contains("Stored; value hidden") && t.contains("Finished in")
    })
    .await;
    assert!(text.contains("backup.demo.invalid"), "the edited hosts reached the gateway (its current policy):\n{text}");
    assert!(!text.contains(&value), "the value is not shown");
    wait_idle(&gw, &mut agent).await;
    let h = history(&gw, &mut agent).await;
    assert!(!h.to_string().contains(&value), "the value is in no saved row");
    let stored = everything_stored(&b).await;
    assert!(stored.contains(&name), "the check reads the stores (the request's draft or receipt names the entry)");
    assert!(!stored.contains(&value), "the value is nowhere in IndexedDB");
    b.close().await;
}
