//! The socket the page's loader opens to the page's own gateway while the wasm is still
//! downloading (`src/loader.js`, `window.ocuiSocket`), so that the WebSocket
//! handshake and the gateway's `connect.challenge` overlap the download instead of following it.
//! The loader keeps every text frame that arrives before the app takes the socket; the app
//! replays them first, in order.
//!
//! The page's early module (`src/bin/early.rs`, `early_connect`) may already have
//! sent `connect` and the first reads on it: the holder then names their request ids
//! ([`SentConnect`]), and the app takes their answers as its own.

use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;

/// How long the loader's socket may have waited for the app. The real gateway closes a socket
/// that has not sent `connect` after 10 s (ours too); past this, a fresh one is safer.
const FRESH_FOR_MS: f64 = 5_000.0;

/// The name of the loader's holder on `window`: `{socket, url, at, messages, stop, ready,
/// settle}`, plus `sent` once the early module has sent `connect` and `taken` once the app has
/// the socket.
pub(crate) const HOLDER: &str = "ocuiSocket";

/// A request the early module sent, by its id.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SentRead {
    pub id: String,
    pub method: String,
}

/// What the early module sent on the loader's socket before the app took it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SentConnect {
    /// The `connect`'s request id: its answer (`hello-ok` or a refusal) is the app's to handle.
    pub connect_id: String,
    /// The reads sent right behind it (`connect_request::FIRST_READS`).
    pub reads: Vec<SentRead>,
}

/// The loader's socket, taken by the app.
pub struct EarlySocket {
    pub socket: web_sys::WebSocket,
    /// The `connect` the early module sent on it, if it did.
    pub sent: Option<SentConnect>,
    holder: JsValue,
}

impl EarlySocket {
    /// The frames the loader kept, oldest first; from now on the socket's own listeners (set up
    /// before this is called, in the same turn of the event loop) see every frame.
    pub fn take_frames(self) -> Vec<String> {
        let frames = js_sys::Reflect::get(&self.holder, &"messages".into())
            .ok()
            .map(|m| js_sys::Array::from(&m).iter().filter_map(|v| v.as_string()).collect())
            .unwrap_or_default();
        if let Some(stop) = js_sys::Reflect::get(&self.holder, &"stop".into()).ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok()) {
            let _ = stop.call0(&self.holder);
        }
        frames
    }
}

/// The loader's holder, while the app has not taken it.
pub(crate) fn holder() -> Option<JsValue> {
    js_sys::Reflect::get(&web_sys::window()?.into(), &HOLDER.into()).ok().filter(|h| h.is_object())
}

/// Waits until the early module has sent `connect` or given up (`holder.ready`), or `at_most`,
/// whichever comes first; at once when the loader opened no socket. The app loads the device
/// identity only after this: the early module may be creating it.
pub async fn settled(at_most: std::time::Duration) {
    let Some(ready) =
        holder().and_then(|h| js_sys::Reflect::get(&h, &"ready".into()).ok()).and_then(|r| r.dyn_into::<js_sys::Promise>().ok())
    else {
        return;
    };
    let timeout = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, at_most.as_millis() as i32);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::race(&js_sys::Array::of2(&ready, &timeout))).await;
}

/// Whether the early module has already sent `connect` on the loader's socket (and the app has
/// not taken it yet): then nothing the app does holds the `connect` back.
pub fn connect_sent() -> bool {
    holder().and_then(|h| js_sys::Reflect::get(&h, &"sent".into()).ok()).is_some_and(|s| s.is_string())
}

/// Takes the loader's socket if it goes to `url` and is open or opening, and either carries
/// the early module's `connect` or is fresh; closes it otherwise (a link to another gateway, a
/// gateway chosen in this tab). There is only one per page: later calls get `None`.
pub fn take(url: &str) -> Option<EarlySocket> {
    let window = web_sys::window()?;
    let holder = holder()?;
    let _ = js_sys::Reflect::delete_property(&window, &HOLDER.into());
    // From now on the early module sends nothing (it checks this before it sends).
    let _ = js_sys::Reflect::set(&holder, &"taken".into(), &JsValue::TRUE);
    let socket: web_sys::WebSocket = js_sys::Reflect::get(&holder, &"socket".into()).ok()?.dyn_into().ok()?;
    let same_gateway = js_sys::Reflect::get(&holder, &"url".into())
        .ok()
        .and_then(|u| u.as_string())
        .is_some_and(|u| u.trim_end_matches('/') == url.trim_end_matches('/'));
    let sent = js_sys::Reflect::get(&holder, &"sent".into())
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| serde_json::from_str::<SentConnect>(&s).ok());
    let opened_at = js_sys::Reflect::get(&holder, &"at".into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    // A socket that has sent `connect` is the gateway's to keep or close; one that has not is
    // closed by the gateway 10 s after it opened.
    let fresh = sent.is_some() || js_sys::Date::now() - opened_at < FRESH_FOR_MS;
    let usable = matches!(socket.ready_state(), web_sys::WebSocket::CONNECTING | web_sys::WebSocket::OPEN);
    if same_gateway && fresh && usable {
        // For devtools and the e2e test: the app connects on the loader's socket.
        if let Some(p) = window.performance() {
            let _ = p.mark("ocui-early-socket-taken");
        }
        Some(EarlySocket { socket, sent, holder })
    } else {
        let _ = socket.close_with_code(1000);
        None
    }
}
