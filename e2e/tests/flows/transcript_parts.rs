//! What real agents write, read from saved history: every content part has a view (thinking,
//! tool calls with their results, images, unknown parts), row labels say what a row is, and a
//! question's summary comes from the transcript, so a second browser shows it too.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use serde_json::{Value, json};

const MAIN: &str = "agent:main:main";
/// A 1×1 PNG.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn save(gw: &LocalGateway, message: Value) {
    gw.gateway().store.save_message(MAIN, message, json!({"id": uuid(), "runId": "run-parts"})).expect("saved");
}

fn uuid() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!("row-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// An agent's answer in markdown: a heading, emphasis, a task list, a table, a code block with a
/// line wider than any phone, an autolink and a link.
const MARKDOWN: &str = "## Build report\n\nThe **release** build *passed*; ~~two~~ one warning remains.\n\n- [x] compile\n- [ ] deploy\n\n| crate | size |\n|:--|--:|\n| app | 515 KB |\n\n```rust\nfn main() { println!(\"{}\", \"a line of code that is much wider than a phone screen, and must scroll inside its block\"); }\n```\n\nSee <https://docs.rs/leptos> and [the guide](https://book.leptos.dev/start).";

/// One row of every kind the real gateway serves (shapes from its 2026.9.6 schemas).
fn seed_every_part(gw: &LocalGateway) {
    save(gw, json!({"role": "user", "content": "Look at `main.rs` and tell me about the **build**.\n# not a heading", "timestamp": 1.0}));
    save(
        gw,
        json!({"role": "assistant", "stopReason": "toolUse", "timestamp": 2.0, "content": [
            {"type": "thinking", "thinking": "The user wants the entry point; read it first."},
            {"type": "text", "text": "Reading the entry point."},
            {"type": "toolCall", "id": "call_read", "name": "read_file", "arguments": {"path": "src/main.rs"}},
            {"type": "toolCall", "id": "call_build", "name": "run_build", "arguments": {"target": "release"}}
        ]}),
    );
    save(
        gw,
        json!({"role": "toolResult", "toolCallId": "call_read", "toolName": "read_file", "isError": false, "timestamp": 3.0,
        "content": [{"type": "text", "text": "fn main() {\n    println!(\"hi\");\n}"}]}),
    );
    save(
        gw,
        json!({"role": "toolResult", "toolCallId": "call_build", "toolName": "run_build", "isError": true, "timestamp": 4.0,
        "content": [{"type": "text", "text": "error[E0425]: cannot find value `x`"}]}),
    );
    save(
        gw,
        json!({"role": "toolResult", "toolCallId": "call_from_an_older_page", "toolName": "grep", "isError": false, "timestamp": 5.0,
        "content": [{"type": "text", "text": "3 matches"}]}),
    );
    save(
        gw,
        json!({"role": "assistant", "stopReason": "stop", "timestamp": 6.0, "content": [
            {"type": "thinking", "thinking": "", "redacted": true},
            {"type": "text", "text": "Here is the chart and the screenshot."},
            {"type": "image", "mimeType": "image/png", "data": PIXEL},
            {"type": "image", "mimeType": "image/png", "omitted": true, "bytes": 48213, "artifactId": "artifact_transcript_image_x"},
            {"type": "image_url", "image_url": {"url": "https://cdn.example.net/pixel.gif"}},
            {"type": "canvas", "html": "<b onclick=\"window.__xss=1\">canvas</b>"}
        ]}),
    );
    save(gw, json!({"role": "assistant", "stopReason": "stop", "timestamp": 6.5, "content": [{"type": "text", "text": MARKDOWN}]}));
    save(
        gw,
        json!({"role": "custom", "customType": "openclaw.system-note", "display": true, "content": "The model was switched to a faster one.", "timestamp": 7.0}),
    );
}

async fn check_every_part(b: &Browser) {
    let text = b.wait_text("main", T, |t| t.contains("Here is the chart")).await;
    for readable in [
        "Reading the entry point.",
        "read_file",
        "run_build",
        "Tool result",
        "grep",
        "3 matches",
        "unsupported part: canvas",
        "System note",
        "The model was switched",
    ] {
        assert!(text.contains(readable), "{readable:?} in: {text}");
    }
    assert!(!text.contains("Gateway"), "no row is called Gateway: {text}");
    // Thinking is collapsed and labelled; the redacted one says so.
    let thinking = b
        .js("return [...document.querySelectorAll('[data-testid=thinking]')].map(d => [d.open, d.querySelector('summary').textContent]);")
        .await;
    assert_eq!(thinking, json!([[false, "Thinking"], [false, "Thinking (hidden by the model's provider)"]]));
    // Each tool call is a card with its result beside it, its arguments collapsed; a failed one
    // says so.
    let cards = b.js("return [...document.querySelectorAll('[data-testid=tool-call]')].map(c => [c.dataset.call, c.dataset.state, c.querySelector('.tool-card__args').open, c.querySelector('[data-testid=tool-result] pre').textContent]);").await;
    assert_eq!(
        cards,
        json!([
            ["call_read", "done", false, "fn main() {\n    println!(\"hi\");\n}"],
            ["call_build", "failed", false, "error[E0425]: cannot find value `x`"]
        ])
    );
    assert_eq!(
        b.js("return document.querySelectorAll('[data-testid=message][data-role=toolResult]').length;").await,
        json!(1),
        "only the result without its call stands alone"
    );
    // Images: inline bytes at once, the gateway's omitted one as a note, another site's on request.
    let images =
        b.js("return [...document.querySelectorAll('[data-testid=image-part]')].map(i => i.getAttribute('src').slice(0, 22));").await;
    assert_eq!(images, json!(["data:image/png;base64,"]));
    let omitted = b.wait_text("[data-testid=image-omitted]", T, |t| !t.is_empty()).await;
    assert_eq!(omitted, "Image (not sent with the transcript, 48 KB)");
    let fetched = b.js("return performance.getEntriesByType('resource').some(e => e.name.includes('cdn.example.net'));").await;
    assert_eq!(fetched, json!(false), "another site's image is not fetched by itself");
    // The unknown part is kept, raw, behind its toggle, and inert.
    let raw = b.js("return document.querySelector('[data-testid=unsupported-part] pre').textContent;").await;
    assert!(raw.as_str().unwrap().contains("window.__xss=1"), "{raw}");
    assert_eq!(b.js("return document.querySelectorAll('main b').length + (window.__xss || 0);").await, json!(0));
    // The agent's markdown is rendered; the person's message stays exactly as typed.
    b.wait_markdown_rendered().await;
    let md = b.js("const m = [...document.querySelectorAll('.md')].find(e => e.textContent.includes('Build report')); return m && [m.querySelector('h4').textContent, m.querySelector('strong').textContent, m.querySelector('em').textContent, m.querySelector('del').textContent, [...m.querySelectorAll('input[type=checkbox]')].map(c => [c.checked, c.disabled]), [...m.querySelectorAll('th, td')].map(c => c.textContent), m.querySelector('pre code').textContent.startsWith('fn main() {'), [...m.querySelectorAll('a')].map(a => [a.getAttribute('href'), a.dataset.host, a.target, a.rel])];").await;
    assert_eq!(
        md,
        json!([
            "Build report",
            "release",
            "passed",
            "two",
            [[true, true], [false, true]],
            ["crate", "size", "app", "515 KB"],
            true,
            [
                ["https://docs.rs/leptos", "docs.rs", "_blank", "noopener noreferrer"],
                ["https://book.leptos.dev/start", "book.leptos.dev", "_blank", "noopener noreferrer"]
            ]
        ]),
        "{md}"
    );
    let user = b.js("return document.querySelector('[data-testid=message][data-role=user]').innerText;").await;
    assert!(
        user.as_str().unwrap().contains("Look at `main.rs` and tell me about the **build**.\n# not a heading"),
        "the person's text as typed: {user}"
    );
    assert_eq!(
        b.js("return document.querySelectorAll('[data-role=user] .md, [data-role=user] strong, [data-role=user] h1').length;").await,
        json!(0)
    );
    // The code block scrolls inside itself, and Copy says what happened.
    let code_scrolls = b.js("const p = [...document.querySelectorAll('.md pre')].find(p => p.textContent.includes('fn main')); return p.scrollWidth > p.clientWidth && getComputedStyle(p).overflowX;").await;
    assert_eq!(code_scrolls, json!("auto"), "the code block scrolls sideways");
    b.click_button("Copy").await;
    let copy = b.wait_text(".md-pre button[data-md=copy]", T, |t| t != "Copy").await;
    assert!(copy == "Copied" || copy == "Copy failed: select the code to copy it", "Copy reports the clipboard's answer: {copy}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_part_type_has_a_view_and_nothing_is_dropped() {
    let gw = LocalGateway::start().await;
    seed_every_part(&gw);
    // One browser per width; the theme changes in place.
    for width in [1000u32, 390] {
        let b = Browser::start_sized(width, 900).await;
        b.goto(&gw.ui_url()).await;
        b.wait_connected().await;
        check_every_part(&b).await;
        for theme in ["light", "dark"] {
            b.js(&format!("document.documentElement.dataset.theme = '{theme}'; document.querySelectorAll('.tool-card__args, [data-testid=thinking]').forEach(d => d.open = true);")).await;
            let (overflow, wide) = b.horizontal_overflow().await;
            assert_eq!(overflow, 0, "horizontal overflow at {width} px ({theme}), widest: {wide}");
            b.screenshot(&format!("transcript-parts-{width}-{theme}")).await;
        }
        b.close().await;
    }
}

/// The summary a question leaves is read from the transcript (the `ask_user` call and its
/// result), so a browser that never saw the question shows the same summary.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_answered_in_one_browser_shows_its_summary_in_a_second_fresh_browser() {
    let gw = LocalGateway::start().await;
    let first = Browser::open_connected(&gw.ui_url()).await;
    first.send_message("pick a color").await;
    first.wait_text("[data-testid=question-panel]", T, |t| t.contains("Which color")).await;
    first.option("Blue").await.click().await.unwrap();
    first.click_button("Submit").await;
    first.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Answered") && t.contains("Blue")).await;
    first.wait_text("main", T, |t| t.contains("Blue it is.")).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        first.js("return document.querySelectorAll('[data-testid=question-receipt]').length;").await,
        json!(1),
        "one summary, not this browser's and the transcript's"
    );
    first.close().await;

    let second = Browser::open_connected(&gw.ui_url()).await;
    let receipt = second.wait_text("[data-testid=question-receipt]", T, |t| !t.is_empty()).await;
    assert!(receipt.starts_with("Answered"), "{receipt}");
    assert!(receipt.contains("Which color should the new theme use?") && receipt.contains("Blue"), "{receipt}");
    assert_eq!(second.js("return document.querySelectorAll('[data-testid=question-receipt]').length;").await, json!(1));
    assert!(!second.exists("[data-testid=tool-call]").await, "an ask_user call is a question summary, not a tool card");
    second.close().await;
}

/// Pins a failure seen under load (stop 31): "Show the whole message" clicked on the saved copy
/// before the gateway answered was refused (not connected), and the history's row then drew
/// the button again, the refusal with it. The click now waits for the gateway's history and is
/// then carried out, and a reconnect's history (which shortens the row again) keeps it whole.
/// The relay holds the page offline for as long as the test needs.
#[tokio::test(flavor = "multi_thread")]
async fn show_the_whole_message_clicked_before_the_gateway_answers_waits_and_then_shows_it() {
    let gw = LocalGateway::start().await;
    let long = format!("long message {}", "x".repeat(20_000));
    // Saved, not sent: no run answers it, so it stays the one shortened row.
    gw.gateway().store.create_session(MAIN, "e2e", None, None, None, 0).expect("the session");
    save(&gw, json!({"role": "user", "content": long, "timestamp": 1.0}));
    let relay = e2e::relay::Relay::start(gw.ws()).await;
    // At a phone's width: the waiting line is looked at there (a screenshot, no overflow).
    let b = Browser::start_sized(390, 844).await;
    b.goto(&format!("{}/#token={}&gatewayUrl={}", gw.base(), gw.token, relay.url())).await;
    b.accept_gateway_switch(&relay.url()).await;
    b.wait_connected().await;
    let cut = "return document.querySelectorAll('[data-testid=message-cut]').length;";
    let longest = "return Math.max(0, ...[...document.querySelectorAll('[data-testid=message][data-role=user] .msg__text')].map(e => e.textContent.length));";
    b.wait_js(cut, |v| v.as_u64() == Some(1)).await;
    b.wait_for_saved_copy(MAIN, "long message").await;

    // Offline: the reload shows the saved copy, shortened, and the click waits.
    relay.block();
    b.client.refresh().await.unwrap();
    b.wait_js(cut, |v| v.as_u64() == Some(1)).await;
    assert_ne!(b.js("return document.querySelector('[data-testid=connection-status]').textContent;").await, json!("Connected"));
    b.click_button("Show the whole message").await;
    let waiting = b.wait_text("[data-testid=message-cut] [role=status]", T, |t| !t.is_empty()).await;
    assert!(waiting.contains("Waiting for the gateway"), "{waiting}");
    assert!(!b.exists("[data-testid=message-cut] [role=alert]").await, "nothing refused");
    b.js("document.querySelector('[data-testid=message-cut]').scrollIntoView();").await;
    assert_eq!(b.horizontal_overflow().await.0, 0, "no horizontal overflow at 390 px");
    b.screenshot("show-whole-waiting-390").await;
    // A second click while it waits asks nothing more.
    b.click_button("Show the whole message").await;

    relay.unblock();
    b.wait_connected().await;
    b.wait_js(cut, |v| v.as_u64() == Some(0)).await;
    b.wait_js(longest, |v| v.as_u64().is_some_and(|n| n >= long.len() as u64)).await;
    let asked = relay.sent.lock().unwrap().iter().filter(|f| f.contains("\"method\":\"chat.message.get\"")).count();
    assert_eq!(asked, 1, "fetched once");

    // A reconnect's history shortens the row again; the page keeps it whole. The row saved while
    // the page is offline reaches it only through that history.
    relay.block();
    b.wait_js("return document.querySelector('[data-testid=connection-status]').textContent;", |v| v != &json!("Connected")).await;
    save(&gw, json!({"role": "assistant", "content": [{"type": "text", "text": "Saved while you were away."}], "timestamp": 2.0}));
    relay.unblock();
    b.wait_text("main", T, |t| t.contains("Saved while you were away.")).await;
    assert_eq!(b.js(cut).await, json!(0), "still whole after the reconnect's history");
    assert!(b.js(longest).await.as_u64().is_some_and(|n| n >= long.len() as u64));
    b.close().await;
}
