//! Headless Chromium through chromedriver, with polling helpers.

use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use tokio::process::{Child, Command};

/// The conversation menu's own actions (`components::conversation_header`).
const MENU_ACTIONS: [&str; 4] = ["New conversation", "Rename", "Archive", "Export as Markdown"];

pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

/// chromedriver runs in a process group of its own, with the Chromium it starts: ending the
/// group ends them all, so a test that fails or panics leaves no browser behind (killing
/// chromedriver alone would orphan Chromium to init).
fn end_group(driver: &Child) {
    // Only a group this Browser made (its leader is chromedriver, not yet reaped): never 0 or 1,
    // which would mean this process's own group or every process.
    if let Some(pid) = driver.id().and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 1) {
        // SAFETY: killpg only sends a signal; the group is the one spawned with process_group(0).
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

/// Which Chromium a test drives.
#[derive(Clone, Copy)]
enum Engine {
    /// Chromium's headless shell: the same engine without the desktop browser around it. A
    /// session starts on about a third of the desktop browser's CPU, which on a 2-core machine
    /// is most of what a hundred browser starts cost.
    Shell,
    /// The desktop browser, headless: tabs that hide one another, desktop notifications.
    Desktop { notifications_granted: bool },
}

/// The headless shell: `CHROMIUM_SHELL` if set, else the `chromium-headless-shell` package's
/// (which `make test` installs), else the desktop browser.
fn chromium() -> String {
    std::env::var("CHROMIUM_SHELL").unwrap_or_else(|_| {
        let shell = "/usr/bin/chromium-headless-shell";
        if std::path::Path::new(shell).exists() { shell.to_string() } else { desktop_chromium() }
    })
}

/// The desktop browser: `CHROMIUM` if set, else Debian's `chromium`.
fn desktop_chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())
}

impl Drop for Browser {
    fn drop(&mut self) {
        end_group(&self.driver);
    }
}

impl Browser {
    /// Starts chromedriver on a free port and a fresh headless browser profile, in
    /// Chromium's headless shell ([`chromium`]).
    pub async fn start() -> Browser {
        Self::start_sized(1280, 900).await
    }

    pub async fn start_sized(width: u32, height: u32) -> Browser {
        Self::start_with(width, height, Engine::Shell).await
    }

    /// Headless Chromium, the desktop browser: for what the headless shell does not have, a
    /// tab hidden behind another (`visibilitychange`) and desktop notifications.
    pub async fn start_desktop() -> Browser {
        Self::start_with(1280, 900, Engine::Desktop { notifications_granted: false }).await
    }

    /// The desktop browser with a profile that allows desktop notifications for every site, as
    /// a person who said yes to the permission prompt has.
    pub async fn start_with_notifications_granted() -> Browser {
        Self::start_with(1280, 900, Engine::Desktop { notifications_granted: true }).await
    }

    async fn start_with(width: u32, height: u32, engine: Engine) -> Browser {
        let port = crate::free_port();
        let chromedriver = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        // chromedriver makes the browser's fresh profile in its TMPDIR, this temporary directory,
        // removed when the Browser is dropped. (Chromium's headless shell given a
        // `--user-data-dir` never tells chromedriver its DevTools port, and the session hangs.)
        let profile = tempfile::tempdir().expect("profile dir");
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .env("TMPDIR", profile.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {chromedriver}: {e} (make test installs chromium-driver)"));
        // Chromium keeps windows at least 500 px wide; narrower layouts use device emulation.
        let emulation = if width < 500 {
            json!({"deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0}})
        } else {
            serde_json::Value::Null
        };
        let mut caps = json!({
            "goog:chromeOptions": {
                "binary": match engine { Engine::Shell => chromium(), Engine::Desktop { .. } => desktop_chromium() },
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                    "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    format!("--window-size={width},{height}"),
                ]
            },
            "goog:loggingPrefs": { "browser": "ALL" }
        });
        if !emulation.is_null() {
            caps["goog:chromeOptions"]["mobileEmulation"] = emulation;
        }
        if let Engine::Desktop { notifications_granted: true } = engine {
            caps["goog:chromeOptions"]["prefs"] = json!({"profile.default_content_setting_values.notifications": 1});
        }
        let caps = caps.as_object().expect("object").clone();
        let url = format!("http://127.0.0.1:{port}");
        let mut last_err = String::new();
        for _ in 0..100 {
            match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => return Browser { client, driver, _profile: profile },
                Err(e) => {
                    last_err = e.to_string();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        panic!("chromedriver did not start a session: {last_err}");
    }

    /// A fresh browser on `url`, waiting until the UI says it is connected.
    pub async fn open_connected(url: &str) -> Browser {
        let b = Browser::start().await;
        b.goto(url).await;
        b.wait_connected().await;
        b
    }

    /// Types `text` into the composer and presses Enter.
    pub async fn send_message(&self, text: &str) {
        let area = self.find_xpath("//textarea[@name='message']", Duration::from_secs(20)).await;
        area.send_keys(text).await.unwrap();
        area.send_keys(&fantoccini::key::Key::Enter.to_string()).await.unwrap();
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap_or_else(|e| panic!("goto {url}: {e}"));
    }

    /// Polls until the element matching `css` has text that `accept` takes; returns it.
    /// Waits (up to [`crate::T`]) until the status bar says **Connected**.
    pub async fn wait_connected(&self) -> String {
        self.wait_connected_within(crate::T).await
    }

    /// Waits up to `timeout` until the status bar says **Connected** (a real gateway's first
    /// start, a reconnect after a backoff).
    pub async fn wait_connected_within(&self, timeout: Duration) -> String {
        self.wait_text("[data-testid=connection-status]", timeout, |t| t == "Connected").await
    }

    pub async fn wait_text(&self, css: &str, timeout: Duration, accept: impl Fn(&str) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut last = String::from("<no element>");
        loop {
            if let Ok(el) = self.client.find(Locator::Css(css)).await {
                if let Ok(t) = el.text().await {
                    if accept(&t) {
                        return t;
                    }
                    last = t;
                }
            }
            if tokio::time::Instant::now() > deadline {
                let shot = self.screenshot("timeout").await;
                panic!("timed out waiting on `{css}`; last text: {last:?}; screenshot: {shot}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Like [`Self::wait_text`], but the element's text content, shown or not: what sits in a
    /// closed menu (`<details>`, the status line's Details, the conversation's Actions).
    pub async fn wait_content(&self, css: &str, timeout: Duration, accept: impl Fn(&str) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + timeout;
        let script = format!("const e = document.querySelector({}); return e ? e.textContent.trim() : null;", json!(css));
        loop {
            let v = self.js(&script).await;
            if let Some(t) = v.as_str().filter(|t| accept(t)) {
                return t.to_string();
            }
            if tokio::time::Instant::now() > deadline {
                let shot = self.screenshot("timeout").await;
                panic!("timed out waiting on the content of `{css}`; last: {v}; screenshot: {shot}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Finds an element by XPath, waiting for it to appear.
    pub async fn find_xpath(&self, xpath: &str, timeout: Duration) -> fantoccini::elements::Element {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Ok(el) = self.client.find(Locator::XPath(xpath)).await {
                return el;
            }
            if tokio::time::Instant::now() > deadline {
                let shot = self.screenshot("timeout-xpath").await;
                panic!("no element for {xpath}; screenshot: {shot}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the button whose visible name is `name`. A conversation's own actions (New
    /// conversation, Rename, Archive, Export as Markdown) are drawn the first time its menu is
    /// opened: not on the page yet, the menu is opened first, as a person would.
    pub async fn click_button(&self, name: &str) {
        let xpath = format!("//button[normalize-space()='{name}' or @aria-label='{name}']");
        if MENU_ACTIONS.contains(&name) && self.client.find(Locator::XPath(&xpath)).await.is_err() {
            self.open_conversation_menu().await;
        }
        self.click_xpath(&xpath).await;
    }

    /// Opens the first conversation menu that is closed and waits for its actions to be drawn
    /// (their code is fetched the first time: `components::on_use`). *Export as Markdown* is
    /// always among them, offered or not.
    pub async fn open_conversation_menu(&self) {
        self.js(
            "const s = document.querySelector('details.conversation-header__menu:not([open]) > summary'); if (s) s.click(); return null;",
        )
        .await;
        self.find_xpath(
            "//details[contains(@class,'conversation-header__menu')]//button[normalize-space()='Export as Markdown']",
            crate::T,
        )
        .await;
    }

    /// Clicks the first element `xpath` finds, once it is in the middle of its scroller: the
    /// page has a sticky header above and a sticky dock below, and an element WebDriver finds
    /// "in view" may sit under either.
    /// A control drawn inert (`aria-disabled`, as a decision is for a moment after it appears:
    /// `model::consent`) is clicked once it is live, as a person who read it would; one in a closed
    /// menu (`<details>`) after the menu is opened, as a person would.
    pub async fn click_xpath(&self, xpath: &str) {
        self.wait_live(xpath).await;
        let e = self.find_xpath(xpath, Duration::from_secs(10)).await;
        let script = format!(
            "const e = document.evaluate({}, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue; const m = e && e.closest('details:not([open])'); if (m) m.querySelector(':scope > summary').click(); if (e) e.scrollIntoView({{block: 'center'}}); return null;",
            json!(xpath)
        );
        // A page still laying out (a history page arriving above) can move the element under
        // another between the scroll and the click: scrolled again and clicked again, for a while.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            self.js(&script).await;
            match e.click().await {
                Ok(()) => return,
                Err(err) if err.to_string().contains("click intercepted") && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(err) => {
                    let shot = self.screenshot("click-failed").await;
                    panic!("click {xpath}: {err}; screenshot {shot}");
                }
            }
        }
    }

    /// The centre of the first element `css` matches, in viewport coordinates.
    pub async fn centre(&self, css: &str) -> (f64, f64) {
        let r = self
            .js(&format!(
                "const e = document.querySelector({}); if (!e) return null; const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2];",
                json!(css)
            ))
            .await;
        let r = r.as_array().unwrap_or_else(|| panic!("no element {css} to point at"));
        (r[0].as_f64().unwrap(), r[1].as_f64().unwrap())
    }

    /// Left clicks at viewport point `(x, y)`, `pause` apart (two make a double-click), as one
    /// sequence the browser performs without a round trip between them.
    pub async fn clicks_at(&self, (x, y): (f64, f64), clicks: usize, pause: Duration) {
        use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
        let mut mouse = MouseActions::new("mouse".into()).then(PointerAction::MoveTo { duration: None, x: x.round(), y: y.round() });
        for i in 0..clicks {
            if i > 0 {
                mouse = mouse.pause(pause);
            }
            mouse = mouse.then(PointerAction::Down { button: MOUSE_BUTTON_LEFT }).then(PointerAction::Up { button: MOUSE_BUTTON_LEFT });
        }
        self.client.perform_actions(mouse).await.unwrap_or_else(|e| panic!("clicks at ({x}, {y}): {e}"));
    }

    /// Waits until the first element `xpath` finds is not `aria-disabled`.
    pub async fn wait_live(&self, xpath: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let e = self.find_xpath(xpath, Duration::from_secs(10)).await;
            if e.attr("aria-disabled").await.ok().flatten().as_deref() != Some("true") {
                return;
            }
            if tokio::time::Instant::now() > deadline {
                let shot = self.screenshot("timeout-inert").await;
                panic!("{xpath} stayed aria-disabled; screenshot: {shot}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The radio or checkbox labelled by `label`.
    pub async fn option(&self, label: &str) -> fantoccini::elements::Element {
        self.find_xpath(&format!("//label[contains(@class,'option-item')][.//span[contains(@class,'option-item__label') and normalize-space()='{label}']]//input"), Duration::from_secs(10)).await
    }

    /// A link named another gateway (`#gatewayUrl=`): the page asks first; this clicks
    /// **Switch to <host>** (the page starts again on that gateway).
    pub async fn accept_gateway_switch(&self, gateway_url: &str) {
        self.wait_text("[data-testid=gateway-switch-link]", Duration::from_secs(20), |t| t == gateway_url).await;
        let host = gateway_url.split_once("://").map_or(gateway_url, |(_, h)| h).trim_end_matches('/');
        self.click_button(&format!("Switch to {host}")).await;
    }

    /// Waits until this browser's saved copy of `session` (in any gateway's database) holds a
    /// message with `text`: a reload may then show it before the gateway answers.
    pub async fn wait_for_saved_copy(&self, session: &str, text: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        let read = format!(
            "const copies = [];
             for (const {{ name }} of await indexedDB.databases()) {{
               copies.push(await new Promise((resolve) => {{
                 const open = indexedDB.open(name);
                 open.onsuccess = () => {{
                   const db = open.result;
                   if (!db.objectStoreNames.contains('transcripts')) {{ db.close(); return resolve(null); }}
                   const get = db.transaction('transcripts').objectStore('transcripts').get({session});
                   get.onsuccess = () => {{ db.close(); resolve(get.result || null); }};
                   get.onerror = () => {{ db.close(); resolve(null); }};
                 }};
                 open.onerror = () => resolve(null);
               }}));
             }}
             return JSON.stringify(copies);",
            session = json!(session)
        );
        loop {
            let saved = self.js_async(&read).await;
            if saved.as_str().is_some_and(|s| s.contains(text)) {
                return;
            }
            assert!(tokio::time::Instant::now() < deadline, "no saved copy of {session} with {text:?}: {saved}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Whether an element matching `css` is present now.
    pub async fn exists(&self, css: &str) -> bool {
        self.client.find(Locator::Css(css)).await.is_ok()
    }

    /// Waits until no element matches `css`.
    pub async fn wait_gone(&self, css: &str, timeout: Duration) {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.exists(css).await {
            if tokio::time::Instant::now() > deadline {
                let shot = self.screenshot("timeout-gone").await;
                let texts = self.js(&format!("return [...document.querySelectorAll({css:?})].map(e => e.textContent).join(' | ');")).await;
                panic!("`{css}` did not go away ({texts}); screenshot: {shot}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until every agent message in markdown has been rendered by the markdown module
    /// (`.md[data-md=pending]` shows its text as written until then), and checks none failed.
    pub async fn wait_markdown_rendered(&self) {
        self.wait_gone(".md[data-md=pending]", Duration::from_secs(20)).await;
        let failed = self.js("return [...document.querySelectorAll('.md[data-md=failed]')].map(e => e.textContent);").await;
        assert_eq!(failed, serde_json::json!([]), "markdown that could not be rendered");
    }

    /// Runs JavaScript in the page and returns its value.
    /// Replaces the value of the field `css` with `text`, as typing would (an `input` event).
    pub async fn set_field(&self, css: &str, text: &str) {
        let script = format!(
            "const a = document.querySelector({}); a.value = {}; a.dispatchEvent(new Event('input', {{ bubbles: true }})); return null;",
            json!(css),
            json!(text)
        );
        self.js(&script).await;
    }

    pub async fn js(&self, script: &str) -> serde_json::Value {
        self.client.execute(script, vec![]).await.unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// The device id this page uses for the gateway whose IndexedDB database is `db` (`ocui`
    /// for the page's own gateway in a fresh browser), as the app stored it; empty until then.
    pub async fn device_id(&self, db: &str) -> String {
        let script = format!(
            "return await new Promise((resolve) => {{
               const o = indexedDB.open({db});
               o.onerror = () => resolve('');
               o.onsuccess = () => {{
                 const d = o.result;
                 if (!d.objectStoreNames.contains('device')) {{ d.close(); resolve(''); return; }}
                 const r = d.transaction('device').objectStore('device').get('operator');
                 r.onsuccess = () => {{ d.close(); resolve(r.result ? r.result.deviceId : ''); }};
               }};
             }});",
            db = serde_json::Value::from(db)
        );
        self.js_async(&script).await.as_str().unwrap_or_default().to_string()
    }

    /// Runs an async script body (it may `await`; its `return` value comes back).
    pub async fn js_async(&self, body: &str) -> serde_json::Value {
        let script = format!(
            "const done = arguments[arguments.length - 1]; (async () => {{ {body} }})().then(done, e => done('script error: ' + e));"
        );
        self.client.execute_async(&script, vec![]).await.unwrap_or_else(|e| panic!("script failed: {e}\n{body}"))
    }

    /// Everything Chromium logged since the last call (console, network errors and CSP
    /// violations, from page load on), through chromedriver's log endpoint.
    pub async fn browser_log(&self) -> Vec<String> {
        #[derive(Debug)]
        struct GetLog;
        impl fantoccini::wd::WebDriverCompatibleCommand for GetLog {
            fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
                base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
            }
            fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
                (http::Method::POST, Some(r#"{"type":"browser"}"#.into()))
            }
        }
        let v = self.client.issue_cmd(GetLog).await.unwrap_or_else(|e| panic!("browser log: {e}"));
        v.as_array()
            .map(|a| a.iter().map(|e| format!("{} {}", e["level"].as_str().unwrap_or(""), e["message"].as_str().unwrap_or(""))).collect())
            .unwrap_or_default()
    }

    /// Runs a Chrome DevTools Protocol command through chromedriver (`goog/cdp/execute`), for
    /// what WebDriver cannot do (a storage quota for an origin, say).
    pub async fn cdp(&self, cmd: &str, params: serde_json::Value) -> serde_json::Value {
        #[derive(Debug)]
        struct Cdp(String);
        impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
            fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
                base.join(&format!("session/{}/goog/cdp/execute", session.unwrap_or_default()))
            }
            fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
                (http::Method::POST, Some(self.0.clone()))
            }
        }
        let body = json!({"cmd": cmd, "params": params}).to_string();
        self.client.issue_cmd(Cdp(body)).await.unwrap_or_else(|e| panic!("CDP {cmd}: {e}"))
    }

    /// Delivers a push message to the page's service worker, as the browser does when its push
    /// service sends one (CDP `ServiceWorker.deliverPushMessage`). The registration's id comes
    /// only as an event, which chromedriver's CDP command cannot wait for: this speaks to the
    /// page's DevTools socket itself (`goog:chromeOptions.debuggerAddress`).
    pub async fn deliver_push(&self, data: &str) {
        let scope = self.js_async("return (await navigator.serviceWorker.ready).scope;").await.as_str().unwrap_or_default().to_string();
        let origin = self.js("return location.origin;").await.as_str().unwrap_or_default().to_string();
        self.deliver_push_to(&origin, &scope, data).await;
    }

    /// The same, to the worker of `scope` on `origin`, whatever page is open (none of the app's,
    /// say: `about:blank`).
    pub async fn deliver_push_to(&self, origin: &str, scope: &str, data: &str) {
        use futures_util::{SinkExt, StreamExt};
        use tokio_tungstenite::tungstenite::Message;
        let caps = self.client.capabilities().cloned().unwrap_or_default();
        let address = caps
            .get("goog:chromeOptions")
            .and_then(|o| o["debuggerAddress"].as_str())
            .expect("chromedriver names the DevTools address")
            .to_string();
        let page_url = self.current_url().await;
        let targets = devtools_get(&address, "/json/list").await;
        let ws = targets
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page" && t["url"] == json!(page_url)))
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .unwrap_or_else(|| panic!("no DevTools target for {page_url}: {targets}"))
            .to_string();
        let (mut socket, _) = tokio_tungstenite::connect_async(&ws).await.expect("the page's DevTools socket");
        socket.send(Message::text(json!({"id": 1, "method": "ServiceWorker.enable"}).to_string())).await.unwrap();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        let mut registration = None;
        let mut delivered = false;
        while tokio::time::Instant::now() < deadline && !delivered {
            let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout_at(deadline, socket.next()).await else { continue };
            let m: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if m["method"] == "ServiceWorker.workerRegistrationUpdated" && registration.is_none() {
                registration = m["params"]["registrations"]
                    .as_array()
                    .and_then(|r| r.iter().find(|r| r["scopeURL"] == json!(scope) && r["isDeleted"] != true))
                    .and_then(|r| r["registrationId"].as_str())
                    .map(str::to_string);
                if let Some(id) = &registration {
                    let params = json!({"origin": origin, "registrationId": id, "data": data});
                    socket
                        .send(Message::text(json!({"id": 2, "method": "ServiceWorker.deliverPushMessage", "params": params}).to_string()))
                        .await
                        .unwrap();
                }
            }
            if m["id"] == 2 {
                assert!(m.get("error").is_none(), "deliverPushMessage failed: {m}");
                delivered = true;
            }
        }
        assert!(delivered, "the push was delivered to the service worker of {scope} (registration {registration:?})");
        let _ = socket.close(None).await;
    }

    /// The notifications the page's service worker shows: `{title, body, tag, actions, data}`.
    pub async fn notifications(&self) -> serde_json::Value {
        self.js_async(
            "const r = await navigator.serviceWorker.ready;
             return (await r.getNotifications()).map(n => ({title: n.title, body: n.body, tag: n.tag, data: n.data,
               actions: (n.actions || []).map(a => ({action: a.action, title: a.title}))}));",
        )
        .await
    }

    /// Lets the page write and read the clipboard, as a person's focused tab may.
    pub async fn grant_clipboard(&self) {
        let origin = self.js("return location.origin;").await;
        self.cdp("Browser.grantPermissions", json!({"origin": origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}))
            .await;
        self.cdp("Emulation.setFocusEmulationEnabled", json!({"enabled": true})).await;
    }

    /// What the clipboard holds (after [`Self::grant_clipboard`]).
    pub async fn clipboard_text(&self) -> String {
        self.js_async("return await navigator.clipboard.readText();").await.as_str().unwrap_or_default().to_string()
    }

    /// Polls a script (an async body: it may `await`, and `return`s its value) until `accept`
    /// takes its value, for up to 20 s; returns that value.
    pub async fn wait_js(&self, script: &str, accept: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let v = self.js_async(script).await;
            if accept(&v) {
                return v;
            }
            if tokio::time::Instant::now() > deadline {
                let shot = self.screenshot("timeout-js").await;
                panic!("timed out on {script}: last {v}; screenshot: {shot}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// How far the page is wider than the window (0 when nothing sticks out sideways), and the
    /// elements of `main` that stick out, for the message when it is not 0.
    pub async fn horizontal_overflow(&self) -> (i64, serde_json::Value) {
        let overflow = self.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth;").await;
        let wide = self.js("const w = document.documentElement.clientWidth; return [...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > w + 1).slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));").await;
        (overflow.as_i64().unwrap_or(i64::MAX), wide)
    }

    /// Waits until the service worker controls the page and has stored the page and its files
    /// (a reload then opens the app without the gateway). Returns the cached URLs.
    pub async fn wait_for_shell_cache(&self) -> serde_json::Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let keys = self
                .js_async(
                    "if (!navigator.serviceWorker.controller) return null;
                     const names = await caches.keys();
                     if (!names.includes('ocui-shell-v1')) return null;
                     const c = await caches.open('ocui-shell-v1');
                     return (await c.keys()).map(r => r.url);",
                )
                .await;
            if keys.as_array().is_some_and(|k| k.iter().any(|u| u.as_str().is_some_and(|u| u.ends_with(".wasm.gz")))) {
                return keys;
            }
            if tokio::time::Instant::now() >= deadline {
                let regs = self.js_async("const r = await navigator.serviceWorker.getRegistrations(); return {controller: !!navigator.serviceWorker.controller, caches: await caches.keys(), registrations: r.map(x => [x.scope, !!x.active, !!x.installing, !!x.waiting])};").await;
                panic!(
                    "the service worker never controlled the page with its files cached: {keys}; registrations {regs}; browser log {:#?}",
                    self.browser_log().await
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Makes the service worker hold the page's early module (its glue and wasm, kept on use),
    /// as a person's earlier visits do: the first visit at `url` registers the worker, and a
    /// visit the worker controls asks it to keep the module once the app has started. The next
    /// load of the page starts the early module from the worker's cache. (The visit that asks is
    /// a reload: the address may differ from `url` only by its `#token=` fragment, which `goto`
    /// would take as a move within the page.)
    pub async fn hold_the_early_module(&self, url: &str) {
        const HELD: &str = "const files = document.querySelector('meta[name=ocui-files-on-use]').content.split(/\\s+/).filter(f => f.startsWith('early-'));
             const scope = (await navigator.serviceWorker.ready).scope;
             const held = await Promise.all(files.map(f => caches.match(new URL(f, scope).href)));
             return files.length === 2 && held.every(Boolean);";
        self.goto(url).await;
        self.wait_connected().await;
        self.wait_for_shell_cache().await;
        // A visit that the worker controlled from its load on (an earlier one registered it)
        // has asked already.
        let controlled_from_load = self.js("return performance.getEntriesByType('navigation')[0].workerStart > 0;").await;
        if controlled_from_load == json!(true) {
            self.wait_js(HELD, |v| v == &json!(true)).await;
            return;
        }
        self.client.refresh().await.expect("the page reloads");
        self.wait_connected().await;
        // A visit whose worker does not hold the module yet settles the early wait at once: the
        // app took the loader's socket while it was fresh (after the app's 10 s wait for a
        // module that never came, it would be stale and closed).
        let marks = self
            .js("return ['ocui-early-connect-sent', 'ocui-early-socket-taken'].map(n => performance.getEntriesByName(n).length);")
            .await;
        assert_eq!(marks, json!([0, 1]), "no early connect, and the app connected on the loader's socket");
        self.wait_js(HELD, |v| v == &json!(true)).await;
    }

    /// Attaches files to the first composer, as picking them in its file dialog does.
    pub async fn attach_files(&self, paths: &[&std::path::Path]) {
        let input = self.find_xpath("//form[contains(@class,'composer')]//input[@type='file']", Duration::from_secs(20)).await;
        let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        input.send_keys(&list.join("\n")).await.unwrap_or_else(|e| panic!("attach {list:?}: {e}"));
    }

    pub async fn current_url(&self) -> String {
        self.client.current_url().await.expect("url").to_string()
    }

    /// Saves a PNG under target/e2e-artifacts and returns its path.
    pub async fn screenshot(&self, name: &str) -> String {
        let path = crate::artifacts_dir().join(format!("{name}.png"));
        match self.client.screenshot().await {
            Ok(png) => {
                let _ = std::fs::write(&path, png);
                path.display().to_string()
            }
            Err(e) => format!("<no screenshot: {e}>"),
        }
    }

    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        end_group(&self.driver);
        let _ = self.driver.kill().await;
    }
}

/// A GET of Chromium's DevTools HTTP endpoint (`/json/list`), as JSON. Read up to its
/// `Content-Length`: the endpoint keeps the connection open.
async fn devtools_get(address: &str, path: &str) -> serde_json::Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(address).await.expect("the DevTools endpoint");
    tcp.write_all(format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let mut chunk = [0u8; 16384];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let text = String::from_utf8_lossy(&out).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0)));
            if length.is_some_and(|n| body.len() >= n) {
                return serde_json::from_str(body).unwrap_or_else(|e| panic!("DevTools {path} at {address}: {e}: {text}"));
            }
        }
        match tokio::time::timeout_at(deadline, tcp.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => out.extend_from_slice(&chunk[..n]),
            other => panic!("DevTools {path} at {address}: no whole answer ({other:?}): {}", String::from_utf8_lossy(&out)),
        }
    }
}
