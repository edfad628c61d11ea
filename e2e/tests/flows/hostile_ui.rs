//! Hostile input to the UI in real Chromium: an XSS corpus through every field an agent
//! writes, the token's whereabouts, and frames that are malformed, out of order, duplicated
//! or skip `seq` numbers. Every test ends by checking what the page shows against the truth.

use std::time::Duration;

use e2e::LocalGateway;
use e2e::T;
use e2e::browser::Browser;
use serde_json::{Value, json};

/// Common filter-evasion vectors (OWASP XSS cheat sheet families). Each one that ran would
/// set `window.__xss` to its number.
const CORPUS: &[&str] = &[
    "<script>window.__xss=1</script>",
    "<img src=x onerror=window.__xss=2>",
    "<svg onload=window.__xss=3>",
    "<body onload=window.__xss=4>",
    "<iframe src=\"javascript:window.__xss=5\"></iframe>",
    "\"><script>window.__xss=6</script>",
    "'><img src=x onerror=window.__xss=7>",
    "<IMG SRC=\"jav&#x09;ascript:window.__xss=8\">",
    "<a href=\"javascript:window.__xss=9\">click me</a>",
    "<div style=\"background:url(javascript:window.__xss=10)\">styled</div>",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=11>",
    "<details open ontoggle=window.__xss=12>",
    "[a markdown link](javascript:window.__xss=13)",
    "![a markdown image](x\" onerror=\"window.__xss=14)",
    "<input autofocus onfocus=window.__xss=15>",
    "<video><source onerror=window.__xss=16></video>",
    "{{constructor.constructor('window.__xss=17')()}}",
    "<object data=\"javascript:window.__xss=18\"></object>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:window.__xss=19\">",
    "%3Cscript%3Ewindow.__xss=20%3C/script%3E",
    "<scr<script>ipt>window.__xss=21</scr</script>ipt>",
    "<style>body{display:none}</style>hidden?",
    "jaVasCript:/*-/*`/*\\`/*'/*\"/**/(/* */oNcliCk=window.__xss=23 )//%0D%0A%0d%0a//</stYle/</titLe/</teXtarEa/</scRipt/--!>\\x3csVg/<sVg/oNloAd=window.__xss=23//>\\x3e",
];

/// Short vectors for the 12-character question header.
const HEADERS: &[&str] = &["<b>h</b>", "<img src=x>", "<svg/onload>", "<i>x</i>"];

/// Listens for script that ran and for CSP violations from here on.
async fn watch(b: &Browser) {
    b.js("window.__xss = 0; window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));")
        .await;
}

/// Nothing ran, nothing was blocked, and no live markup from agent text is on the page (the
/// page's own menus, `<details>` of the status line and the conversation header, aside).
async fn assert_inert(b: &Browser, when: &str) {
    assert_eq!(b.js("return window.__xss;").await, json!(0), "a vector ran ({when})");
    assert_eq!(b.js("return window.__csp;").await, json!([]), "CSP violations ({when})");
    let live = b
        .js("return [...document.body.querySelectorAll('*')].filter(e => !e.matches('details.status-bar__more, details.conversation-header__menu, details.tasks')).filter(e => ['SCRIPT','IMG','SVG','IFRAME','OBJECT','VIDEO','SOURCE','MATH','DETAILS','META','STYLE'].includes(e.tagName.toUpperCase())
               || [...e.attributes].some(a => a.name.startsWith('on') || /^\\s*javascript:/i.test(a.value))).map(e => e.outerHTML.slice(0, 120));")
        .await;
    assert_eq!(live, json!([]), "live markup from agent text ({when})");
}

async fn wait_body(b: &Browser, needle: &str) {
    let deadline = tokio::time::Instant::now() + T;
    while !body_text(b).await.contains(needle) {
        if tokio::time::Instant::now() > deadline {
            let shot = b.screenshot("wait-body").await;
            panic!("the page never showed {needle:?}; {shot}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn body_text(b: &Browser) -> String {
    b.js("return document.body.innerText;").await.as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_xss_corpus_through_every_agent_field_runs_nothing_and_stays_readable() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    watch(&b).await;
    let n = CORPUS.len();

    // The dock: header, question, option label and description, one request per vector.
    for i in 0..n {
        let question = format!("{} (question {i})", CORPUS[i]);
        let params = json!({"questions": [{"questionId": "x", "header": HEADERS[i % HEADERS.len()], "question": question,
            "options": [{"label": CORPUS[(i + 1) % n], "description": CORPUS[(i + 2) % n]}, {"label": "Plain"}], "isOther": true}], "timeoutMs": 120000});
        agent.request("question.request", params).await.unwrap();
        let shown = b.wait_text(".dock__question-text", T, |t| t.ends_with(&format!("(question {i})"))).await;
        assert_eq!(shown, question, "the question reads literally");
        let panel = b.wait_text("[data-testid=question-panel]", T, |_| true).await;
        assert!(
            panel.contains(CORPUS[(i + 1) % n]) && panel.contains(CORPUS[(i + 2) % n]),
            "label and description read literally: {panel}"
        );
        assert!(panel.contains(HEADERS[i % HEADERS.len()]), "header reads literally: {panel}");
        let picked = b
            .js(&format!("const want = {}; const l = [...document.querySelectorAll('[data-testid=question-panel] label.option-item')].find(l => l.querySelector('.option-item__label')?.textContent === want); l?.querySelector('input').click(); return !!l && l.querySelector('input').checked;", json!(CORPUS[(i + 1) % n])))
            .await;
        assert_eq!(picked, json!(true), "the option labelled {:?} is a radio that can be picked", CORPUS[(i + 1) % n]);
        assert_inert(&b, &format!("dock, vector {i}")).await;
        b.click_button("Skip").await;
        b.wait_gone("[data-testid=question-panel]", T).await;
    }

    // Async questions: titles and options are agent text too (three titles per message).
    for (m, chunk) in CORPUS.chunks(3).enumerate() {
        let questions: Vec<Value> = chunk.iter().map(|v| json!({"title": v, "options": [CORPUS[(m + 5) % n], "Plain"]})).collect();
        let frame = json!({"type": "event", "event": "session.message", "payload": {"sessionKey": "agent:main:main", "message": {
            "role": "assistant", "content": [{"type": "text", "text": format!("Async batch {m}: {}", chunk[0])}],
            "openclawAsyncDelivery": {"itemId": format!("xss-{m}"), "questions": questions},
            "__openclaw": {"id": format!("xss-msg-{m}"), "seq": 100 + m}}}});
        gw.hub().inject_raw(&frame.to_string());
        let card = b.wait_text(&format!("[data-testid=async-question][data-item=xss-{m}]"), T, |t| !t.is_empty()).await;
        for v in chunk {
            assert!(card.contains(v), "async title reads literally: {v} in {card}");
        }
    }
    assert_inert(&b, "async questions").await;

    // Chat: the agent's reply text, and what it echoes of the person's own message.
    let frame = json!({"type": "event", "event": "session.message", "payload": {"sessionKey": "agent:main:main", "message": {
        "role": "assistant", "content": [{"type": "text", "text": CORPUS.join("\n")}], "__openclaw": {"id": "xss-chat", "seq": 200}}}});
    gw.hub().inject_raw(&frame.to_string());
    b.wait_text("[data-testid=message][data-role=assistant]", T, |t| t.contains("window.__xss=21")).await;
    b.send_message(CORPUS[1]).await;
    wait_body(&b, &format!("You said: {}", CORPUS[1])).await;
    let text = body_text(&b).await;
    for v in CORPUS {
        assert!(text.contains(v.lines().next().unwrap()), "chat text reads literally: {v}");
    }
    assert_inert(&b, "chat").await;
    // Chromium's own log, from page load on: no CSP violation from our code.
    let csp_lines = |log: Vec<String>| {
        log.into_iter().filter(|l| l.contains("Content Security Policy") || l.contains("Refused to")).collect::<Vec<_>>()
    };
    assert_eq!(csp_lines(b.browser_log().await), Vec::<String>::new(), "CSP violations under the local gateway");
    // ...and the log does report one when it happens.
    b.js("const s = document.createElement('script'); s.src = 'http://127.0.0.2:9/x.js'; document.head.appendChild(s);").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!csp_lines(b.browser_log().await).is_empty(), "a blocked foreign script shows in the log");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_never_reaches_local_storage_the_url_or_a_log_line() {
    let mut gw = LocalGateway::start().await;
    let token = gw.ui_url().split("#token=").nth(1).unwrap().to_string();
    let b = Browser::open_connected(&gw.ui_url()).await;
    // Log lines from here on, through a reconnect (the noisiest path).
    b.js("window.__logs = []; for (const k of ['log','info','warn','error','debug']) { const o = console[k].bind(console); console[k] = (...a) => { window.__logs.push(a.map(String).join(' ')); o(...a); }; }")
        .await;
    let port = gw.port;
    gw.stop().await;
    b.wait_text("[data-testid=connection-status]", T, |t| t.contains("Reconnecting") || t.contains("Disconnected")).await;
    gw.restart_on(port).await;
    b.wait_connected_within(Duration::from_secs(40)).await;
    let url = b.current_url().await;
    assert!(!url.contains(&token), "token left in the URL: {url}");
    let local = b.js("return Object.keys(localStorage).map(k => k + '=' + localStorage.getItem(k)).join('\\n');").await;
    assert!(!local.as_str().unwrap().contains(&token), "token in localStorage: {local}");
    let session = b.js("return Object.keys(sessionStorage).map(k => sessionStorage.getItem(k)).join('\\n');").await;
    assert!(session.as_str().unwrap().contains(&token), "the tab keeps it in sessionStorage (so the check above could fail)");
    let logs = b.js("return window.__logs;").await;
    assert!(logs.as_array().is_some_and(|l| !l.is_empty()), "the reconnect logged something: {logs}");
    assert!(!logs.to_string().contains(&token), "token in a log line: {logs}");
    // Chromium's own log covers the page load too (before the hook above existed).
    let browser_log = b.browser_log().await;
    assert!(!browser_log.iter().any(|l| l.contains(&token)), "token in Chromium's log: {browser_log:?}");
    let idb = b
        .js_async("const db = await new Promise(r => { const q = indexedDB.open('ocui'); q.onsuccess = () => r(q.result); });
                   const out = [];
                   for (const name of db.objectStoreNames) { const all = await new Promise(r => { const q = db.transaction(name).objectStore(name).getAll(); q.onsuccess = () => r(q.result); }); out.push(JSON.stringify(all)); }
                   return out.join('\\n');")
        .await;
    assert!(!idb.as_str().unwrap_or_default().contains(&token), "token in IndexedDB");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_out_of_order_duplicated_and_gapped_frames_end_in_the_truth() {
    let gw = LocalGateway::start().await;
    let mut agent = gw.agent().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    let real = agent
        .request("question.request", json!({"questions": [{"questionId": "q", "header": "Real", "question": "The real question?", "options": [{"label": "Yes"}, {"label": "No"}]}], "timeoutMs": 120000}))
        .await
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    b.wait_text(".dock__question-text", T, |t| t == "The real question?").await;
    // The person has started answering.
    b.option("Yes").await.click().await.unwrap();

    // Garbage: not JSON, not an object, an unknown frame type, an event without a name.
    for junk in ["{\"type\":\"event\",", "[1,2,3]", "{\"type\":\"bogus\"}", "{\"type\":\"event\",\"payload\":{}}", "\u{0}\u{1}"] {
        gw.hub().inject_raw(junk);
    }
    // A lie with a seq gap: a question the gateway never had.
    gw.hub().inject_raw(&json!({"type": "event", "event": "question.requested", "seq": 5000, "payload": {"id": "ghost", "questions": [{"questionId": "g", "header": "Ghost", "question": "A ghost question?", "options": [{"label": "A"}, {"label": "B"}]}], "createdAtMs": 1, "expiresAtMs": 99999999999999u64, "status": "pending"}}).to_string());
    // A lie out of order (seq goes back): the real question resolved.
    gw.hub().inject_raw(&json!({"type": "event", "event": "question.resolved", "seq": 3, "payload": {"id": real, "status": "answered", "answers": {"answers": {"q": ["No"]}}}}).to_string());
    // A duplicated chat message: shown once.
    let dup = json!({"type": "event", "event": "session.message", "payload": {"sessionKey": "agent:main:main", "message": {"role": "assistant", "content": [{"type": "text", "text": "Said once"}], "__openclaw": {"id": "dup-1", "seq": 1}}}});
    gw.hub().inject_raw(&dup.to_string());
    gw.hub().inject_raw(&dup.to_string());

    // The truth after the resync: the real question is still pending and answerable, the
    // ghost cannot be answered (at most a receipt says it is unavailable), and the page works.
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let text = body_text(&b).await;
        let panel = b.js("return document.querySelector('[data-testid=question-panel]')?.innerText ?? '';").await;
        let panel = panel.as_str().unwrap_or_default();
        let ghost = b.js("return [...document.querySelectorAll('[data-testid=question-receipt]')].filter(r => r.innerText.includes('A ghost question?')).map(r => r.dataset.outcome);").await;
        let ghost_only_unavailable = ghost.as_array().is_some_and(|a| a.iter().all(|o| o == "unavailable"));
        if panel.contains("The real question?")
            && !panel.contains("ghost")
            && ghost_only_unavailable
            && !b.exists("[data-outcome=answered-elsewhere]").await
        {
            break;
        }
        if tokio::time::Instant::now() > deadline {
            let shot = b.screenshot("hostile-frames").await;
            panic!("after the resync the page shows: {text}; {shot}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        b.js("return [...document.querySelectorAll('[data-testid=message]')].filter(e => e.textContent.includes('Said once')).length;")
            .await,
        json!(1)
    );
    b.wait_connected().await;
    assert!(b.option("Yes").await.is_selected().await.unwrap(), "the draft came back with the question");
    b.click_button("Submit").await;
    // (the agent's own connection got the junk too and gave up on it: a new one asks)
    let mut agent = gw.agent().await;
    let got = agent.request("question.waitAnswer", json!({"id": real, "timeoutMs": 10000})).await.unwrap();
    assert_eq!(got["answers"]["answers"]["q"], json!(["Yes"]), "the person's answer, not the injected one: {got}");
    b.close().await;
}

/// A panic in the release build logs its message, then aborts (`panic = "abort"`), and the
/// abort surfaces as a `WebAssembly.RuntimeError`; a trap without a panic (an `unreachable` in
/// foreign code) looks the same. A real trap, thrown uncaught from a tiny module whose only
/// function is `unreachable`, must put up the reload banner rather than leave a page that
/// silently ignores clicks.
#[tokio::test(flavor = "multi_thread")]
async fn a_wasm_trap_puts_up_the_reload_banner_instead_of_a_silent_page() {
    let gw = LocalGateway::start().await;
    // Phone width: the banner and its button must fit the narrowest supported screen.
    let b = Browser::start_sized(390, 844).await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected().await;
    assert!(!b.exists("#ocui-crash").await, "no banner before anything went wrong");
    b.js("const trap = new Uint8Array([0,97,115,109,1,0,0,0, 1,4,1,96,0,0, 3,2,1,0, 7,5,1,1,102,0,0, 10,5,1,3,0,0,11]);
         WebAssembly.instantiate(trap).then(({instance}) => setTimeout(() => instance.exports.f(), 0));
         return null;")
        .await;
    let text = b.wait_text("#ocui-crash[role=alert]", T, |t| t.contains("reload the page")).await;
    assert!(text.contains("drafts and queued answers are saved"), "{text}");
    b.find_xpath("//*[@id='ocui-crash']//button[normalize-space()='Reload page']", T).await;
    b.screenshot("crash-banner-390").await;
    b.close().await;
}

/// Markdown vectors in the agent's text (it is rendered as markdown now): link schemes in
/// every spelling, autolinks, reference links, HTML blocks and inline HTML, entity tricks and
/// image URLs. Nothing runs, nothing is fetched, and the text stays readable.
const MARKDOWN_CORPUS: &[&str] = &[
    "[click 31](javascript:window.__xss=31)",
    "[click 32](JAVASCRIPT:window.__xss=32)",
    "[click 33](jav&#x61;script:window.__xss=33)",
    "[click 34](&#x6A;avascript:window.__xss=34)",
    "<javascript:window.__xss=35>",
    "[reference 36][r36]\n\n[r36]: javascript:window.__xss=36",
    "[data 37](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3M9Mzc8L3NjcmlwdD4=)",
    "[vb 38](vbscript:window.__xss=38)",
    "![pixel 39](https://tracker.example/p.gif?id=39)",
    "![svg 40](data:image/svg+xml,<svg onload=window.__xss=40>)",
    "<div onmouseover=\"window.__xss=41\">html block 41</div>",
    "inline <b onclick=\"window.__xss=42\">bold 42</b> html",
    "```html\n<script>window.__xss=43</script>\n```",
    "[ok 44](https://docs.example.org/tools?x=1 \"a title\")",
    "bare https://docs.example.org/bare45 link",
];

#[tokio::test(flavor = "multi_thread")]
async fn markdown_vectors_run_nothing_fetch_nothing_and_stay_readable() {
    let gw = LocalGateway::start().await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    watch(&b).await;
    let frame = json!({"type": "event", "event": "session.message", "payload": {"sessionKey": "agent:main:main", "message": {
        "role": "assistant", "content": [{"type": "text", "text": MARKDOWN_CORPUS.join("\n\n")}], "__openclaw": {"id": "md-xss", "seq": 300}}}});
    gw.hub().inject_raw(&frame.to_string());
    b.wait_text("[data-testid=message][data-role=assistant]", T, |t| t.contains("bare45")).await;
    b.wait_markdown_rendered().await;
    assert_inert(&b, "markdown").await;
    let text = body_text(&b).await;
    for readable in [
        "[click 31](javascript:window.__xss=31)",
        "[click 32]",
        "[click 33]",
        "[click 34]",
        "javascript:window.__xss=35",
        "[reference 36][r36]",
        "[data 37]",
        "[vb 38]",
        "Image: pixel 39 (tracker.example)",
        "![svg 40]",
        "html block 41",
        "bold 42",
        "<script>window.__xss=43</script>",
        "ok 44",
    ] {
        assert!(text.contains(readable), "{readable:?} is readable in: {text}");
    }
    // The only links are the two http(s) ones, opening safely in a new tab.
    let links =
        b.js("return [...document.querySelectorAll('.md a')].map(a => [a.getAttribute('href'), a.target, a.rel, a.dataset.host]);").await;
    assert_eq!(
        links,
        json!([
            ["https://docs.example.org/tools?x=1", "_blank", "noopener noreferrer", "docs.example.org"],
            ["https://docs.example.org/bare45", "_blank", "noopener noreferrer", "docs.example.org"]
        ]),
        "{links}"
    );
    // The image is not fetched until asked; then it is.
    let fetched = || b.js("return performance.getEntriesByType('resource').some(e => e.name.includes('tracker.example'));");
    assert_eq!(fetched().await, json!(false), "the image was not fetched on its own");
    b.click_button("Load image from tracker.example").await;
    b.find_xpath("//img[@src='https://tracker.example/p.gif?id=39']", T).await;
    assert_eq!(b.js("return window.__xss;").await, json!(0));
    b.close().await;
}
