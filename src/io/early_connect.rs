//! The page's early module (`src/bin/early.rs`): a small wasm of its own, started from the
//! service worker's cache on the visits after the worker was asked to keep it, that signs and
//! sends the first `connect` and [`FIRST_READS`] on the loader's socket
//! ([`crate::io::early_socket`]) while the app's wasm is still being compiled. The gateway's
//! handshake then overlaps the app's start instead of following it, and the app finds
//! `hello-ok` and the dock's first listing among the socket's kept frames.
//!
//! It decides nothing the app would decide differently: the same identity (it creates it when
//! the browser has none, and the app waits for it to be done before loading it), the same
//! token, the same [`ConnectRequest`]. It sends nothing once the app has taken the socket, and
//! it always settles the loader's `ready` promise, which the app waits on.

use protocol::connect::ConnectChallenge;
use wasm_bindgen::{JsCast, JsValue};

use crate::io::browser;
use crate::io::connect_request::{ConnectRequest, FIRST_READS, read_frame};
use crate::io::early_socket::{self, SentConnect, SentRead};
use crate::io::identity;

/// The request id of the early `connect`; the app's own are `connect:<n>`.
pub const CONNECT_ID: &str = "connect:early";

/// How long it waits for the gateway's `connect.challenge` before leaving the connect to the app.
const CHALLENGE_WAIT_MS: i32 = 5_000;

/// Runs once, when the early module starts.
pub async fn run() {
    let Some(holder) = early_socket::holder() else {
        return;
    };
    match send_connect(&holder).await {
        Ok(sent) => {
            let _ = js_sys::Reflect::set(&holder, &"sent".into(), &serde_json::to_string(&sent).unwrap_or_default().into());
            if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
                // For devtools and the e2e test: the connect went before the app's wasm.
                let _ = p.mark("ocui-early-connect-sent");
            }
        }
        // Not an error: the app connects as it always did.
        Err(why) => browser::log_warn(&format!("the page's early connect was left to the app: {why}")),
    }
    settle_holder(&holder);
}

/// Tells the app the early module is done (the loader's `ready` promise). Called by the
/// module's panic hook, so the app never waits on a module that died.
pub fn settle() {
    if let Some(holder) = early_socket::holder() {
        settle_holder(&holder);
    }
}

fn settle_holder(holder: &JsValue) {
    if let Some(settle) = js_sys::Reflect::get(holder, &"settle".into()).ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok()) {
        let _ = settle.call0(&JsValue::UNDEFINED);
    }
}

fn taken(holder: &JsValue) -> bool {
    js_sys::Reflect::get(holder, &"taken".into()).ok().is_some_and(|t| t.is_truthy())
}

async fn send_connect(holder: &JsValue) -> Result<SentConnect, String> {
    let socket: web_sys::WebSocket =
        js_sys::Reflect::get(holder, &"socket".into()).ok().and_then(|s| s.dyn_into().ok()).ok_or("the loader kept no socket")?;
    let url = js_sys::Reflect::get(holder, &"url".into()).ok().and_then(|u| u.as_string()).ok_or("the loader kept no gateway URL")?;
    // A link's token, stored as the app stores it (`app::starting_gateway`, which also takes
    // it out of the address bar): the loader opened this socket only for the page's own gateway.
    let hash = browser::location().and_then(|l| l.hash().ok()).unwrap_or_default();
    let fragment = model::url::parse_fragment(&hash);
    if !matches!(model::url::link_gateway(fragment.gateway_url.as_deref(), &url), model::url::LinkGateway::Stay) {
        return Err("the link names another gateway".into());
    }
    if let Some(token) = &fragment.token {
        identity::set_session_token(&url, Some(token));
    }
    // Without an identity the app connects, and says why there is none.
    let identity = identity::load_or_create_early(&url).await?;
    let challenge = challenge(holder, &socket).await?;
    let request = ConnectRequest::new(&url, Some(identity), false);
    let text = request.frame(CONNECT_ID, &challenge).await;
    if taken(holder) {
        return Err("the app took the socket first".into());
    }
    if socket.ready_state() != web_sys::WebSocket::OPEN {
        return Err("the socket closed".into());
    }
    socket.send_with_str(&text).map_err(|e| browser::js_error_text(&e))?;
    let mut reads = Vec::new();
    for (n, method) in FIRST_READS.iter().enumerate() {
        let id = format!("early:{}", n + 1);
        if socket.send_with_str(&read_frame(&id, method)).is_err() {
            break;
        }
        reads.push(SentRead { id, method: method.to_string() });
    }
    Ok(SentConnect { connect_id: CONNECT_ID.to_string(), reads })
}

/// The gateway's `connect.challenge`: among the frames the loader kept, or the next ones.
async fn challenge(holder: &JsValue, socket: &web_sys::WebSocket) -> Result<ConnectChallenge, String> {
    let deadline = browser::now_ms() + f64::from(CHALLENGE_WAIT_MS);
    loop {
        let kept = js_sys::Reflect::get(holder, &"messages".into()).ok().map(|m| js_sys::Array::from(&m)).unwrap_or_default();
        if let Some(challenge) = kept.iter().filter_map(|v| v.as_string()).find_map(|t| ConnectChallenge::from_frame_text(&t)) {
            return Ok(challenge);
        }
        if taken(holder) {
            return Err("the app took the socket first".into());
        }
        let left = deadline - browser::now_ms();
        if left <= 0.0 || socket.ready_state() > web_sys::WebSocket::OPEN {
            return Err("no connect.challenge came".into());
        }
        next_frame(socket, left as i32).await;
    }
}

/// Resolves at the socket's next frame or close, or after `ms`. The loader's own listener,
/// added first, has kept the frame by then. Listeners, not the `on…` properties, so nothing of
/// anyone else's on the socket is replaced or cleared.
async fn next_frame(socket: &web_sys::WebSocket, ms: i32) {
    let mut wake_up = None;
    let wake = js_sys::Promise::new(&mut |resolve, _| {
        let _ = socket.add_event_listener_with_callback("message", &resolve);
        let _ = socket.add_event_listener_with_callback("close", &resolve);
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
        wake_up = Some(resolve);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(wake).await;
    if let Some(resolve) = wake_up {
        let _ = socket.remove_event_listener_with_callback("message", &resolve);
        let _ = socket.remove_event_listener_with_callback("close", &resolve);
    }
}
