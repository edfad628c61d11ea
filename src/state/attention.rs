//! A waiting question is seen from outside the page: the tab title counts it, the icon
//! carries a badge, and (opt-in, per gateway) a desktop notification says what is asked.
//!
//! The rules (which count, which notification when) are `model::attention`; this is the
//! browser side. Tabs race for a Web Lock per notification and share a record of those shown,
//! so a request is announced once however many tabs are open.

use leptos::prelude::*;
use model::attention::{AttentionSettings, Notice, NotifyChoice, Waiting, Watch};
use model::dock::Entry;
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::io::browser;
use crate::io::gateway_client::GatewayClient;
use crate::state::dock::DockController;

const SETTINGS_KEY: &str = "ocui.attention.v1";
const SHOWN_KEY: &str = "ocui.notified.v1";
/// Records of shown notifications are forgotten after this long (a question waits at most 1 h).
const SHOWN_TTL_MS: f64 = 2.0 * 3_600_000.0;

/// The browser's notification permission: `granted`, `denied`, `default`, or `unsupported`.
fn permission_now() -> String {
    let has_api = web_sys::window().is_some_and(|w| js_sys::Reflect::has(&w, &"Notification".into()).unwrap_or(false));
    if !has_api {
        return "unsupported".into();
    }
    match web_sys::Notification::permission() {
        web_sys::NotificationPermission::Granted => "granted",
        web_sys::NotificationPermission::Denied => "denied",
        _ => "default",
    }
    .into()
}

fn settings_key(gateway: &str) -> String {
    format!("{SETTINGS_KEY}:{gateway}")
}

fn load_settings(gateway: &str) -> AttentionSettings {
    browser::local_get(&settings_key(gateway)).and_then(|s| crate::io::json::decode(&s)).unwrap_or_default()
}

/// Hidden, or shown but not focused (another window in front): the person is elsewhere.
fn out_of_sight() -> bool {
    web_sys::window().and_then(|w| w.document()).is_none_or(|d| d.hidden() || !d.has_focus().unwrap_or(true))
}

/// The notification settings and permission of this page, for the control that changes them.
#[derive(Clone, Copy)]
pub struct Attention {
    pub settings: RwSignal<AttentionSettings>,
    pub permission: RwSignal<String>,
    client: GatewayClient,
}

impl Attention {
    pub fn new(client: GatewayClient, dock: DockController) -> Attention {
        let a = Attention {
            settings: RwSignal::new(load_settings(&client.url.get_untracked())),
            permission: RwSignal::new(permission_now()),
            client,
        };
        Effect::new(move |_| {
            let url = client.url.get();
            a.settings.set(load_settings(&url));
        });
        // The title and the icon's badge follow the dock.
        let counts = Memo::new(move |_| {
            dock.dock.with(|d| {
                let approvals = d.entries.iter().filter(|e| matches!(e, Entry::Approval { .. })).count();
                let blocking = d.entries.iter().filter(|e| !e.is_async()).count();
                model::attention::Counts { questions: blocking - approvals, approvals, asynchronous: d.entries.len() - blocking }
            })
        });
        Effect::new(move |_| {
            let counts = counts.get();
            let count_async = a.settings.with(|s| s.count_async);
            let n = counts.questions + counts.approvals + if count_async { counts.asynchronous } else { 0 };
            if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
                doc.set_title(&model::attention::title(counts, count_async));
                set_badge(&doc, model::attention::badge_text(n).as_deref());
            }
        });
        // Notifications: considered whenever the dock changes and on its clock's ticks.
        let watch = StoredValue::new(Watch::default());
        Effect::new(move |_| {
            // The dock's clock only says when to look again: it may be a while old when the
            // first request arrives, so the time left is taken now.
            let _ = dock.now.get();
            let now = browser::now_ms() as i64;
            let waiting: Vec<Waiting> = dock.dock.with(|d| {
                d.entries
                    .iter()
                    .filter_map(|e| match e {
                        Entry::Valid { record, .. } if !e.is_async() => {
                            let first = record.questions.first()?;
                            Some(Waiting {
                                id: record.id.clone(),
                                header: first.header.clone(),
                                question: first.question.clone(),
                                secret: record.questions.iter().any(|q| q.secret()),
                                expires_at_ms: record.expires_at_ms,
                                count: record.questions.len(),
                                approval: false,
                            })
                        }
                        Entry::Approval { approval, .. } => Some(Waiting {
                            id: approval.id.clone(),
                            header: approval.kind.noun().to_string(),
                            question: approval.subject().to_string(),
                            secret: false,
                            expires_at_ms: approval.expires_at_ms,
                            count: 1,
                            approval: true,
                        }),
                        _ => None,
                    })
                    .collect()
            });
            let enabled = a.settings.with(|s| s.notify == NotifyChoice::On) && a.permission.get() == "granted";
            let due = watch.try_update_value(|w| w.due(&waiting, now, out_of_sight(), enabled)).unwrap_or_default();
            let gateway = client.url.get_untracked();
            for notice in due {
                show_once(&gateway, notice, dock);
            }
        });
        // A request that ended (a receipt: answered, decided, expired, here or elsewhere) no
        // longer keeps the notification the service worker showed for it, which would offer a
        // choice that can no longer be made. (The real gateway replaces an approval's
        // notification when it is decided, but not a question's.)
        let ended = Memo::new(move |_| dock.dock.with(|d| d.receipts.iter().map(|r| r.id.clone()).collect::<Vec<_>>()));
        Effect::new(move |_| {
            let ids = ended.get();
            if !ids.is_empty() {
                wasm_bindgen_futures::spawn_local(crate::io::push::close_notifications(move |target, scope| {
                    model::push::notification_request(target, scope).is_some_and(|id| ids.iter().any(|e| e == id))
                }));
            }
        });
        // Permission can change in the browser's site settings while the page is open, and the
        // choice made in another tab applies here too.
        if let Some(w) = web_sys::window() {
            let on_visible = Closure::<dyn Fn()>::new(move || a.permission.set(permission_now()));
            if let Some(doc) = w.document() {
                let _ = doc.add_event_listener_with_callback("visibilitychange", on_visible.as_ref().unchecked_ref());
            }
            on_visible.forget();
            let on_storage = Closure::<dyn Fn()>::new(move || {
                a.settings.set(load_settings(&client.url.get_untracked()));
                a.permission.set(permission_now());
            });
            let _ = w.add_event_listener_with_callback("storage", on_storage.as_ref().unchecked_ref());
            on_storage.forget();
        }
        a
    }

    fn save(&self) {
        let gateway = self.client.url.get_untracked();
        self.settings.with_untracked(|s| browser::local_set(&settings_key(&gateway), &crate::io::json::encode(s)));
    }

    /// The person asked for notifications: the browser's prompt comes now, on their click, and
    /// its answer is kept (a refusal is never asked again unprompted).
    pub fn ask_permission(&self) {
        let this = *self;
        if this.permission.get_untracked() == "granted" {
            this.settings.update(|s| s.notify = NotifyChoice::On);
            this.save();
            return;
        }
        let Ok(promise) = web_sys::Notification::request_permission() else {
            this.permission.set("unsupported".into());
            return;
        };
        wasm_bindgen_futures::spawn_local(async move {
            let answer = wasm_bindgen_futures::JsFuture::from(promise).await.ok().and_then(|v| v.as_string()).unwrap_or_default();
            this.permission.set(permission_now());
            this.settings.update(|s| s.notify = if answer == "granted" { NotifyChoice::On } else { NotifyChoice::Off });
            this.save();
        });
    }

    pub fn turn_off(&self) {
        self.settings.update(|s| s.notify = NotifyChoice::Off);
        self.save();
    }

    pub fn set_count_async(&self, on: bool) {
        self.settings.update(|s| s.count_async = on);
        self.save();
    }
}

fn shown_record() -> serde_json::Map<String, Value> {
    let now = browser::now_ms();
    let mut shown: serde_json::Map<String, Value> =
        browser::local_get(SHOWN_KEY).and_then(|s| crate::io::json::decode(&s)).unwrap_or_default();
    shown.retain(|_, at| at.as_f64().is_some_and(|t| now - t < SHOWN_TTL_MS));
    shown
}

/// Shows `notice` unless another tab (or this one) already did. Tabs deciding at the same
/// moment race for a Web Lock named after the notice, which the winner keeps for a while; tabs
/// that come later find the winner's record in localStorage.
fn show_once(gateway: &str, notice: Notice, dock: DockController) {
    let key = format!("{gateway}|{}|{}", notice.id, notice.phase.key());
    if shown_record().contains_key(&key) {
        return;
    }
    crate::io::tabs::claim(&format!("ocui-notify:{key}"), 60_000, move || {
        let mut shown = shown_record();
        if shown.contains_key(&key) {
            return;
        }
        shown.insert(key, Value::from(browser::now_ms()));
        browser::local_set(SHOWN_KEY, &crate::io::json::encode(&shown));
        show(notice, dock);
    });
}

fn show(notice: Notice, dock: DockController) {
    let options = web_sys::NotificationOptions::new();
    options.set_body(&notice.body);
    // The same tag replaces an older notification of this request instead of stacking.
    options.set_tag(&format!("ocui-question-{}", notice.id));
    let Ok(n) = web_sys::Notification::new_with_options(&notice.title, &options) else {
        browser::log_warn("the browser refused to show a notification");
        return;
    };
    let id = notice.id.clone();
    let n2 = n.clone();
    let on_click = Closure::<dyn Fn()>::new(move || {
        if let Some(w) = web_sys::window() {
            let _ = w.focus();
        }
        n2.close();
        dock.open_request(&id);
    });
    n.set_onclick(Some(on_click.as_ref().unchecked_ref()));
    on_click.forget();
}

/// The icon as it was in `index.html`, with a count in a red badge while questions wait.
fn set_badge(doc: &web_sys::Document, text: Option<&str>) {
    let Ok(Some(link)) = doc.query_selector("link[rel~='icon']") else { return };
    let original = match link.get_attribute("data-ocui-icon") {
        Some(o) => o,
        None => {
            let o = link.get_attribute("href").unwrap_or_default();
            let _ = link.set_attribute("data-ocui-icon", &o);
            o
        }
    };
    let href = match text {
        None => original,
        Some(t) => {
            let svg = format!(
                "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'><rect width='32' height='32' rx='7' fill='#1f2937'/>\
                 <path d='M9 22c0-6 3-11 7-13m-3 14c1-5 3-9 6-11m-2 12c1-4 3-7 5-8' fill='none' stroke='#f97316' stroke-width='2.6' stroke-linecap='round'/>\
                 <circle cx='23' cy='9' r='9' fill='#dc2626'/><text x='23' y='13' font-family='sans-serif' font-size='{}' font-weight='700' text-anchor='middle' fill='#fff'>{t}</text></svg>",
                if t.len() > 1 { 10 } else { 12 }
            );
            format!("data:image/svg+xml,{}", model::url::encode_component(&svg))
        }
    };
    let _ = link.set_attribute("href", &href);
    let _ = link.set_attribute("data-ocui-badge", text.unwrap_or(""));
}
