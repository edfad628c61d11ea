//! The socket the page's loader opens to the page's own gateway while the wasm is still
//! downloading (`Trunk.toml`'s `pattern_script`, `window.ocuiSocket`), so that the WebSocket
//! handshake and the gateway's `connect.challenge` overlap the download instead of following it.
//! The loader keeps every text frame that arrives before the app takes the socket; the app
//! replays them first, in order.

use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;

/// How long the loader's socket may have waited for the app. The real gateway closes a socket
/// that has not sent `connect` after 10 s (ours too); past this, a fresh one is safer.
const FRESH_FOR_MS: f64 = 5_000.0;

/// The loader's socket, taken by the app.
pub struct EarlySocket {
    pub socket: web_sys::WebSocket,
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

/// Takes the loader's socket if it goes to `url` and is open or opening and fresh; closes it
/// otherwise (a link to another gateway, a gateway chosen in this tab). There is only one per
/// page: later calls get `None`.
pub fn take(url: &str) -> Option<EarlySocket> {
    let window = web_sys::window()?;
    let holder = js_sys::Reflect::get(&window, &"ocuiSocket".into()).ok().filter(|h| h.is_object())?;
    let _ = js_sys::Reflect::delete_property(&window, &"ocuiSocket".into());
    let socket: web_sys::WebSocket = js_sys::Reflect::get(&holder, &"socket".into()).ok()?.dyn_into().ok()?;
    let same_gateway = js_sys::Reflect::get(&holder, &"url".into())
        .ok()
        .and_then(|u| u.as_string())
        .is_some_and(|u| u.trim_end_matches('/') == url.trim_end_matches('/'));
    let opened_at = js_sys::Reflect::get(&holder, &"at".into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let fresh = js_sys::Date::now() - opened_at < FRESH_FOR_MS;
    let usable = matches!(socket.ready_state(), web_sys::WebSocket::CONNECTING | web_sys::WebSocket::OPEN);
    if same_gateway && fresh && usable {
        // For devtools and the e2e test: the app connects on the loader's socket.
        if let Some(p) = window.performance() {
            let _ = p.mark("ocui-early-socket-taken");
        }
        Some(EarlySocket { socket, holder })
    } else {
        let _ = socket.close_with_code(1000);
        None
    }
}
