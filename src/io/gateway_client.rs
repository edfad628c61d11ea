//! The typed gateway client: the only place that talks to the network.
//!
//! It waits for `connect.challenge`, signs `connect` with the device identity, correlates
//! requests with responses, watches ticks, reconnects with backoff, and bumps
//! [`GatewayClient::resync_epoch`] whenever an event `seq` gap shows that something was
//! missed. Components read its signals and call [`GatewayClient::request`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures_channel::{mpsc, oneshot};
use futures_util::future::{Either, select};
use futures_util::{SinkExt, StreamExt};
use gloo_net::websocket::futures::WebSocket;
use gloo_net::websocket::{Message, WebSocketError};
use leptos::prelude::*;
use model::connection::{
    ConnectFailure, SeqCheck, SeqTracker, backoff_ms, can_retry_with_device_token, classify_connect_error, describe_close,
    watchdog_deadline_ms,
};
use protocol::connect::{ConnectChallenge, HelloSummary};
use protocol::error::ErrorShape;
use protocol::frame::{Frame, RequestFrame};
use serde_json::Value;

use crate::io::browser;
use crate::io::connect_request::{self, ConnectRequest};
use crate::io::early_socket::SentConnect;
use crate::io::identity::{self, DeviceIdentity};

/// The scopes a gateway granted last, per gateway URL (not secret: they are shown on screen).
use crate::io::storage::LAST_SCOPES_PREFIX as LAST_SCOPES_KEY;

/// Where the connection stands, in terms a person can act on.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Connecting,
    Connected,
    /// Waiting to try again; `next_at_ms` is when.
    Reconnecting {
        attempt: u32,
        next_at_ms: f64,
        reason: String,
    },
    /// The token was rejected or is missing.
    NeedsToken {
        message: String,
    },
    /// Retrying will not help until something changes.
    Failed {
        message: String,
        reload: bool,
    },
}

/// Why a request did not get a payload.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    /// Not connected, or the connection dropped before the response came.
    Disconnected,
    /// The gateway answered with an error.
    Gateway(ErrorShape),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Disconnected => f.write_str("Not connected to the gateway. Try again after reconnecting."),
            RequestError::Gateway(e) => f.write_str(&e.message),
        }
    }
}

type Handler = Rc<dyn Fn(&Value)>;

/// A read sent behind `connect`, and where its answer will come.
struct PipelinedRead {
    method: &'static str,
    answer: oneshot::Receiver<Result<Value, RequestError>>,
}

/// What the page asks of its socket. The socket itself lives in its task ([`run_socket`]).
enum SocketCommand {
    Send(String),
    /// Every frame before this one is written: the first `connect` is on its way
    /// ([`GatewayClient::connect_underway`]).
    FirstConnectWritten,
    /// Close with our own code (the watchdog's 4000), reported as if the gateway had closed.
    Close(u16, &'static str),
}

/// The page's end of one socket: dropping it closes the socket without a report, which is
/// how an old socket is let go (reconnect, refused connect).
struct Socket {
    commands: mpsc::UnboundedSender<SocketCommand>,
}

impl Socket {
    /// False when the socket task has ended (the socket closed).
    fn send(&self, text: String) -> bool {
        self.commands.unbounded_send(SocketCommand::Send(text)).is_ok()
    }
}

struct Inner {
    url: String,
    identity: Option<DeviceIdentity>,
    /// WebCrypto is still loading the identity: the first socket opens when it is done.
    identity_loading: bool,
    /// Why WebCrypto could not give this browser a device identity, if it could not.
    identity_error: Option<String>,
    socket: Option<Socket>,
    /// Bumped for every socket, so late callbacks of an old socket are ignored.
    generation: u64,
    connected: bool,
    /// The connect of this socket was refused; its close must not trigger a retry.
    refused: bool,
    /// The shared token failed and we are trying the stored device token once.
    using_device_token: bool,
    connect_id: Option<String>,
    pending: HashMap<String, oneshot::Sender<Result<Value, RequestError>>>,
    /// Reads sent right behind every `connect` ([`GatewayClient::pipeline_after_connect`]).
    pipeline: Vec<&'static str>,
    /// Their answers on this socket, each taken once by [`GatewayClient::request`].
    pipelined: Vec<PipelinedRead>,
    /// Waiting for the first `connect` to be on its way ([`GatewayClient::connect_underway`]).
    underway: Vec<oneshot::Sender<()>>,
    /// The first `connect` has been sent, or could not be.
    first_connect_done: bool,
    next_id: u64,
    seq: SeqTracker,
    attempt: u32,
    last_inbound_ms: f64,
    tick_interval_ms: Option<u64>,
    handlers: Vec<(String, Handler)>,
    reconnect_timer: Option<TimeoutHandle>,
    watchdog: Option<IntervalHandle>,
}

/// A handle to the one gateway connection of this page. `Copy`, so components can keep it.
#[derive(Clone, Copy)]
pub struct GatewayClient {
    pub status: RwSignal<Status>,
    /// The last `hello-ok` (kept while reconnecting, so the version stays visible).
    pub hello: RwSignal<Option<HelloSummary>>,
    /// Bumped on every successful connect: hydrate state again when it changes.
    pub connected_epoch: RwSignal<u64>,
    /// Bumped when an event `seq` gap shows missed events: re-fetch state.
    pub resync_epoch: RwSignal<u64>,
    pub url: RwSignal<String>,
    /// What is queued for this address waits for the person, and why: the gateway there looks
    /// like another one than the one it was queued for (`model::connection::gateway_changed`),
    /// or the rows came from the earlier builds' shared database (`model::connection::Hold`).
    pub identity_held: RwSignal<Option<model::connection::Hold>>,
    inner: StoredValue<Rc<RefCell<Inner>>, LocalStorage>,
}

impl GatewayClient {
    /// Creates the client and starts connecting to `url`.
    pub fn start(url: String) -> GatewayClient {
        let client = GatewayClient {
            status: RwSignal::new(Status::Connecting),
            hello: RwSignal::new(None),
            connected_epoch: RwSignal::new(0),
            resync_epoch: RwSignal::new(0),
            url: RwSignal::new(url.clone()),
            identity_held: RwSignal::new(crate::io::storage::identity_hold(&url)),
            inner: StoredValue::new_local(Rc::new(RefCell::new(Inner {
                url,
                identity: None,
                identity_loading: true,
                identity_error: None,
                socket: None,
                generation: 0,
                connected: false,
                refused: false,
                using_device_token: false,
                connect_id: None,
                pending: HashMap::new(),
                pipeline: Vec::new(),
                pipelined: Vec::new(),
                underway: Vec::new(),
                first_connect_done: false,
                next_id: 0,
                seq: SeqTracker::default(),
                attempt: 0,
                last_inbound_ms: 0.0,
                tick_interval_ms: None,
                handlers: Vec::new(),
                reconnect_timer: None,
                watchdog: None,
            }))),
        };
        // Checks the URL at once (a bad one fails now); the socket opens once WebCrypto has
        // the identity.
        client.open();
        wasm_bindgen_futures::spawn_local(async move {
            // The page's early module may be creating the identity and sending the first
            // `connect` with it (src/io/early_connect.rs): one identity, one connect.
            super::early_socket::settled(EARLY_CONNECT_WAIT).await;
            let identity = identity::load_or_create(&client.url.get_untracked()).await;
            {
                let inner = client.inner();
                let mut i = inner.borrow_mut();
                match identity {
                    Ok(id) => i.identity = Some(id),
                    Err(e) => {
                        // The gateway decides whether it accepts a connect without a device;
                        // if it refuses, the status says why there was none.
                        browser::log_warn(&format!("no device identity, connecting without one: {e}"));
                        i.identity_error = Some(e);
                    }
                }
                i.identity_loading = false;
            }
            client.open();
        });
        client
    }

    fn inner(&self) -> Rc<RefCell<Inner>> {
        self.inner.get_value()
    }

    /// The device id shown in the status area.
    pub fn device_id(&self) -> Option<String> {
        self.inner().borrow().identity.as_ref().map(|i| i.device_id())
    }

    /// Granted scopes of the current connection; before this page first connects, those the
    /// same gateway granted last time (so that a page opened offline can queue answers it will
    /// be allowed to send; the gateway still decides when they are sent).
    pub fn scopes(&self) -> Vec<String> {
        // Only while the page has not been refused: after a refused token (or any refusal) it
        // knows nothing about what it may do.
        let waiting = matches!(self.status.get(), Status::Connecting | Status::Reconnecting { .. });
        self.hello.with(|h| match h {
            Some(h) => h.scopes.clone(),
            None if !waiting => Vec::new(),
            None => {
                let url = self.url.get_untracked();
                browser::local_get(&format!("{LAST_SCOPES_KEY}{url}")).and_then(|v| serde_json::from_str(&v).ok()).unwrap_or_default()
            }
        })
    }

    /// The bytes of a file the gateway saved with a message (`media://inbound/<id>`), from its
    /// `/__openclaw__/assistant-media` route, authorised like the incumbent UI: the device
    /// token this gateway issued, else the shared token. Errors are in words.
    pub async fn media(&self, source: &str, session_key: &str) -> Result<web_sys::Blob, String> {
        let url = self.url.get_untracked();
        let base = model::url::http_base(&url).ok_or("the gateway address is not ws:// or wss://")?;
        let query = format!("source={}&sessionKey={}", model::url::encode_component(source), model::url::encode_component(session_key));
        let device = self.device_id().and_then(|d| identity::device_token(&d, &url));
        let token = device.or_else(|| identity::session_token(&url)).unwrap_or_default();
        let response = gloo_net::http::Request::get(&format!("{base}/__openclaw__/assistant-media?{query}"))
            .header("Authorization", &format!("Bearer {token}"))
            .send()
            .await
            .map_err(|e| format!("the gateway could not be reached ({e})"))?;
        match response.status() {
            200 => {}
            401 | 403 => return Err(format!("the gateway did not allow this page to fetch it ({})", response.status())),
            404 => return Err("the gateway no longer has it".into()),
            n => return Err(format!("the gateway answered {n}")),
        }
        // The bytes stay in the browser (a Blob), not copied through this module's memory.
        let raw: web_sys::Response = response.into();
        let blob = raw.blob().map_err(|e| browser::js_error_text(&e))?;
        wasm_bindgen_futures::JsFuture::from(blob).await.map(wasm_bindgen::JsCast::unchecked_into).map_err(|e| browser::js_error_text(&e))
    }

    /// Calls `handler` with the payload of every `event` frame named `event`.
    pub fn on_event(&self, event: &str, handler: impl Fn(&Value) + 'static) {
        self.inner().borrow_mut().handlers.push((event.to_string(), Rc::new(handler)));
    }

    /// Uses a new shared token (from the connection form) and reconnects now.
    pub fn set_token(&self, token: &str) {
        let url = self.inner().borrow().url.clone();
        identity::set_session_token(&url, Some(token.trim()));
        self.reconnect_now();
    }

    /// The person chose: what waits goes to the gateway at this address now (or was discarded).
    pub fn release_identity_hold(&self) {
        crate::io::storage::set_identity_hold(&self.url.get_untracked(), None);
        self.identity_held.set(None);
    }

    /// Switches to another gateway URL and reconnects now.
    pub fn set_url(&self, url: String) {
        self.inner().borrow_mut().url = url.clone();
        self.url.set(url);
        self.reconnect_now();
    }

    /// Drops any socket or timer and connects at once, with a fresh backoff.
    pub fn reconnect_now(&self) {
        {
            let inner = self.inner();
            let mut i = inner.borrow_mut();
            i.attempt = 0;
            i.using_device_token = false;
        }
        self.open();
    }

    /// Sends `method` with empty params right behind every `connect`, before `hello-ok`: the
    /// gateway queues what arrives during its handshake and answers it once the connect is
    /// through, so the answer comes a round trip sooner than a request sent after `hello-ok`
    /// (on a cold load, the first question is on screen that much sooner). The first
    /// `request(method, {})` after the connect takes that answer; later ones are sent as usual.
    /// A read the connection turns out to lack the scope for is answered with an error nobody
    /// takes.
    pub fn pipeline_after_connect(&self, method: &'static str) {
        self.inner().borrow_mut().pipeline.push(method);
    }

    /// Resolves once this page's first `connect` has been sent (or could not be), or after
    /// `at_most`, whichever comes first. The page builds its view only then: building it keeps
    /// the main thread busy for about 90 ms, which then overlaps the gateway's handshake
    /// instead of delaying the `connect` (the early socket usually holds the challenge already).
    pub async fn connect_underway(&self, at_most: Duration) {
        let (tx, rx) = oneshot::channel();
        {
            let inner = self.inner();
            let mut i = inner.borrow_mut();
            // The early module's `connect` is out already: the view can be built now, while
            // WebCrypto loads the identity. The socket's kept frames are handled only after
            // that, so after the view, with its handlers, exists.
            if i.first_connect_done || super::early_socket::connect_sent() {
                return;
            }
            i.underway.push(tx);
        }
        let inner = self.inner();
        set_timeout(move || first_connect_done(&mut inner.borrow_mut()), at_most);
        // Woken by the socket's own task right after it wrote the frames, within the same turn
        // of the event loop: no answer can be handled before what runs next (the view, with
        // every controller's event handlers) exists.
        let _ = rx.await;
    }

    /// Sends a request; resolves with the payload or the gateway's error.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RequestError> {
        let rx = {
            let inner = self.inner();
            let mut i = inner.borrow_mut();
            if !i.connected {
                return Err(RequestError::Disconnected);
            }
            let empty = params.as_object().is_some_and(serde_json::Map::is_empty);
            if let Some(at) = i.pipelined.iter().position(|p| empty && p.method == method) {
                let read = i.pipelined.swap_remove(at);
                drop(i);
                return read.answer.await.unwrap_or(Err(RequestError::Disconnected));
            }
            i.next_id += 1;
            let id = format!("{}:{}", i.next_id, i.generation);
            let text = Frame::Req(RequestFrame::new(id.clone(), method, params)).to_json();
            let Some(sock) = &i.socket else { return Err(RequestError::Disconnected) };
            if !sock.send(text) {
                return Err(RequestError::Disconnected);
            }
            let (tx, rx) = oneshot::channel();
            i.pending.insert(id, tx);
            rx
        };
        rx.await.unwrap_or(Err(RequestError::Disconnected))
    }

    fn open(&self) {
        let inner = self.inner();
        let mut i = inner.borrow_mut();
        if let Some(t) = i.reconnect_timer.take() {
            t.clear();
        }
        if let Some(w) = i.watchdog.take() {
            w.clear();
        }
        // Dropping the old socket's handle closes it; its task reports nothing.
        i.socket = None;
        fail_pending(&mut i);
        i.pipelined.clear();
        i.generation += 1;
        i.connected = false;
        i.refused = false;
        i.connect_id = None;
        i.seq = SeqTracker::default();
        let generation = i.generation;
        if let Err(e) = model::url::check_gateway_url(&i.url) {
            drop(i);
            self.status.set(Status::Failed { message: e, reload: false });
            return;
        }
        if i.identity_loading {
            return; // the identity loader opens the socket when it is done
        }
        // The first socket may already be open: the page's loader opened it during the download.
        let early = super::early_socket::take(&i.url);
        let adopted = early.as_ref().and_then(|e| e.sent.clone());
        let opened = match early {
            Some(early) => WebSocket::try_from(early.socket.clone()).map(|ws| (ws, early.take_frames())),
            None => WebSocket::open(&i.url).map(|ws| (ws, Vec::new())),
        };
        let (ws, replay) = match opened {
            Ok(opened) => opened,
            Err(_) => {
                let message = format!("Cannot open a connection to {}: the browser refused the address.", i.url);
                drop(i);
                self.status.set(Status::Failed { message, reload: false });
                return;
            }
        };
        if let Some(sent) = adopted {
            // Before the socket's task exists: the view (woken here) is built before the kept
            // frames, `hello-ok` among them, are handled.
            adopt_early_connect(&mut i, sent);
        }
        let (commands, queue) = mpsc::unbounded();
        wasm_bindgen_futures::spawn_local(run_socket(*self, generation, ws, replay, queue));
        i.last_inbound_ms = browser::now_ms();
        i.socket = Some(Socket { commands });
        drop(i);
        if !matches!(self.status.get_untracked(), Status::Reconnecting { .. }) {
            self.status.set(Status::Connecting);
        }
    }

    fn handle_text(&self, generation: u64, text: &str) {
        let inner = self.inner();
        {
            let mut i = inner.borrow_mut();
            if i.generation != generation {
                return;
            }
            i.last_inbound_ms = browser::now_ms();
        }
        let frame = match Frame::parse(text) {
            Ok(f) => f,
            Err(e) => {
                // A malformed frame is reported and skipped; the connection goes on.
                browser::log_warn(&format!("ignored a malformed frame from the gateway: {e} ({})", protocol::frame::truncate(text, 120)));
                return;
            }
        };
        match frame {
            Frame::Event(ev) if ev.event == "connect.challenge" => {
                let challenge: Result<ConnectChallenge, _> = serde_json::from_value(ev.payload.unwrap_or_default());
                match challenge {
                    Ok(c) => self.send_connect(&c),
                    Err(e) => browser::log_warn(&format!("ignored a connect.challenge without a nonce: {e}")),
                }
            }
            Frame::Event(ev) => {
                let check = {
                    let mut i = inner.borrow_mut();
                    if !i.connected {
                        return;
                    }
                    i.seq.observe(ev.seq)
                };
                match check {
                    SeqCheck::Duplicate => return,
                    SeqCheck::Gap { expected, got } => {
                        browser::log_warn(&format!("missed events {expected}..{}; resyncing", got - 1));
                        // A resync reads afresh, never an answer from the connect.
                        inner.borrow_mut().pipelined.clear();
                        self.resync_epoch.update(|n| *n += 1);
                    }
                    SeqCheck::OutOfOrder { last, got } => {
                        browser::log_warn(&format!("event seq went back from {last} to {got}; resyncing"));
                        inner.borrow_mut().pipelined.clear();
                        self.resync_epoch.update(|n| *n += 1);
                    }
                    SeqCheck::InOrder | SeqCheck::Unnumbered => {}
                }
                if ev.event == "shutdown" {
                    let reason =
                        ev.payload.as_ref().and_then(|p| p.get("reason")).and_then(Value::as_str).unwrap_or("stopping").to_string();
                    browser::log_warn(&format!("gateway is shutting down: {reason}"));
                }
                let payload = ev.payload.unwrap_or(Value::Null);
                let handlers: Vec<Handler> =
                    inner.borrow().handlers.iter().filter(|(n, _)| *n == ev.event).map(|(_, h)| h.clone()).collect();
                for h in handlers {
                    h(&payload);
                }
            }
            Frame::Res(res) => {
                let is_connect = inner.borrow().connect_id.as_deref() == Some(res.id.as_str());
                if is_connect {
                    inner.borrow_mut().connect_id = None;
                    self.handle_connect_response(res.ok, res.payload, res.error);
                    return;
                }
                let tx = inner.borrow_mut().pending.remove(&res.id);
                match tx {
                    Some(tx) => {
                        let result = if res.ok {
                            Ok(res.payload.unwrap_or(Value::Null))
                        } else {
                            Err(RequestError::Gateway(
                                res.error.unwrap_or_else(|| ErrorShape::new("UNKNOWN", "the gateway reported an error without details")),
                            ))
                        };
                        let _ = tx.send(result);
                    }
                    None => {
                        browser::log_warn(&format!("ignored a response to an unknown request `{}`", protocol::frame::truncate(&res.id, 40)))
                    }
                }
            }
            Frame::Req(req) => {
                browser::log_warn(&format!("ignored a request frame from the gateway (`{}`)", protocol::frame::truncate(&req.method, 40)))
            }
        }
    }

    fn send_connect(&self, challenge: &ConnectChallenge) {
        let inner = self.inner();
        let (generation, id, request) = {
            let mut i = inner.borrow_mut();
            if i.connected || i.connect_id.is_some() {
                return;
            }
            let request = ConnectRequest::new(&i.url, i.identity.clone(), i.using_device_token);
            identity::guard_held_tokens(&request.own_secrets());
            let id = format!("connect:{}", i.generation);
            // Claimed now, so a repeated challenge while WebCrypto signs sends nothing twice.
            i.connect_id = Some(id.clone());
            (i.generation, id, request)
        };
        let challenge = challenge.clone();
        let this = *self;
        wasm_bindgen_futures::spawn_local(async move {
            let text = request.frame(&id, &challenge).await;
            let inner = this.inner();
            let mut i = inner.borrow_mut();
            if i.generation != generation || i.connect_id.as_deref() != Some(id.as_str()) {
                first_connect_done(&mut i);
                return; // the socket this was signed for is gone
            }
            if !i.socket.as_ref().is_some_and(|s| s.send(text)) {
                i.connect_id = None;
                first_connect_done(&mut i);
                return;
            }
            for method in i.pipeline.clone() {
                i.next_id += 1;
                let id = format!("{}:{}", i.next_id, i.generation);
                let text = connect_request::read_frame(&id, method);
                if !i.socket.as_ref().is_some_and(|s| s.send(text)) {
                    break;
                }
                let (tx, answer) = oneshot::channel();
                i.pending.insert(id, tx);
                i.pipelined.push(PipelinedRead { method, answer });
            }
            if !i.first_connect_done
                && !i.socket.as_ref().is_some_and(|s| s.commands.unbounded_send(SocketCommand::FirstConnectWritten).is_ok())
            {
                first_connect_done(&mut i);
            }
        });
    }

    fn handle_connect_response(&self, ok: bool, payload: Option<Value>, error: Option<ErrorShape>) {
        let inner = self.inner();
        if ok {
            let hello = match payload.as_ref().map(HelloSummary::read) {
                Some(Ok(h)) => h,
                other => {
                    let why = match other {
                        Some(Err(e)) => e,
                        _ => "empty payload".into(),
                    };
                    self.refuse(Status::Failed {
                        message: format!("The gateway's hello-ok could not be read ({why}). Is this an OpenClaw protocol v4 gateway?"),
                        reload: false,
                    });
                    return;
                }
            };
            {
                let mut i = inner.borrow_mut();
                i.connected = true;
                i.attempt = 0;
                i.using_device_token = false;
                i.tick_interval_ms = hello.tick_interval_ms;
                if let (Some(token), Some(id)) = (&hello.device_token, i.identity.as_ref().map(|x| x.device_id())) {
                    // The token this address's gateway issued before is the proof of who it is.
                    if model::connection::gateway_changed(identity::device_token(&id, &i.url).as_deref(), Some(token)) {
                        crate::io::storage::set_identity_hold(&i.url, Some(model::connection::Hold::AnotherDeviceToken));
                    }
                    identity::store_device_token(&id, &i.url, token);
                    let shared = identity::session_token(&i.url);
                    identity::guard_held_tokens(&[token.as_str(), shared.as_deref().unwrap_or("")]);
                }
            }
            self.start_watchdog();
            let url = self.url.get_untracked();
            browser::local_set(&format!("{LAST_SCOPES_KEY}{url}"), &serde_json::to_string(&hello.scopes).unwrap_or_default());
            self.identity_held.set(crate::io::storage::identity_hold(&url));
            self.hello.set(Some(hello));
            self.status.set(Status::Connected);
            self.connected_epoch.update(|n| *n += 1);
            return;
        }
        let e = error.unwrap_or_else(|| ErrorShape::new("UNKNOWN", "connect failed without details"));
        let (has_device_token, tried) = {
            let i = inner.borrow();
            let has = i.identity.as_ref().is_some_and(|id| identity::device_token(&id.device_id(), &i.url).is_some());
            (has, i.using_device_token)
        };
        if can_retry_with_device_token(&e) && has_device_token && !tried {
            // Once, with the device token this browser was issued before.
            inner.borrow_mut().using_device_token = true;
            self.open();
            return;
        }
        let failure = classify_connect_error(&e, protocol::PROTOCOL_VERSION, &browser::page_origin());
        match failure {
            ConnectFailure::NeedsToken { message } => {
                let url = inner.borrow().url.clone();
                identity::set_session_token(&url, None);
                self.refuse(Status::NeedsToken { message });
            }
            ConnectFailure::Fatal { mut message } => {
                if let Some(why) = inner
                    .borrow()
                    .identity_error
                    .as_deref()
                    .filter(|_| e.detail_code() == Some(protocol::error::detail::CONTROL_UI_DEVICE_IDENTITY_REQUIRED))
                {
                    message = format!(
                        "The gateway needs a device identity, and this browser could not create one ({why}). Use a current browser with WebCrypto Ed25519 (Chrome or Edge 137+, Firefox 129+, Safari 17+)."
                    );
                }
                self.refuse(Status::Failed { message, reload: false })
            }
            ConnectFailure::ReloadRequired { message } => self.refuse(Status::Failed { message, reload: true }),
            ConnectFailure::Retry { after_ms, message } => {
                inner.borrow_mut().refused = true;
                self.schedule_reconnect(after_ms, message);
            }
        }
    }

    /// Marks this socket's connect as refused and shows `status` until the person acts.
    fn refuse(&self, status: Status) {
        // What this gateway granted before no longer says anything about this connection.
        if let Some(storage) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
            let _ = storage.remove_item(&format!("{LAST_SCOPES_KEY}{}", self.url.get_untracked()));
        }
        let inner = self.inner();
        let mut i = inner.borrow_mut();
        i.refused = true;
        i.socket = None;
        first_connect_done(&mut i);
        drop(i);
        self.status.set(status);
    }

    fn handle_close(&self, generation: u64, code: u16, reason: &str) {
        let inner = self.inner();
        let refused = {
            let mut i = inner.borrow_mut();
            if i.generation != generation {
                return;
            }
            i.socket = None;
            i.connected = false;
            if let Some(w) = i.watchdog.take() {
                w.clear();
            }
            fail_pending(&mut i);
            i.refused
        };
        if refused {
            return;
        }
        self.schedule_reconnect(None, describe_close(code, reason));
    }

    fn schedule_reconnect(&self, after_ms: Option<u64>, reason: String) {
        let inner = self.inner();
        let mut i = inner.borrow_mut();
        let delay = after_ms.unwrap_or_else(|| backoff_ms(i.attempt));
        i.attempt += 1;
        let attempt = i.attempt;
        let this = *self;
        if let Some(t) = i.reconnect_timer.take() {
            t.clear();
        }
        i.reconnect_timer = set_timeout_with_handle(move || this.open(), Duration::from_millis(delay)).ok();
        drop(i);
        self.status.set(Status::Reconnecting { attempt, next_at_ms: browser::now_ms() + delay as f64, reason });
    }

    fn start_watchdog(&self) {
        let inner = self.inner();
        let mut i = inner.borrow_mut();
        let deadline = watchdog_deadline_ms(i.tick_interval_ms) as f64;
        let every = Duration::from_millis((deadline as u64 / 4).clamp(250, 5_000));
        let this = *self;
        let generation = i.generation;
        i.watchdog = set_interval_with_handle(
            move || {
                let inner = this.inner();
                let i = inner.borrow();
                if i.generation != generation || !i.connected {
                    return;
                }
                if browser::now_ms() - i.last_inbound_ms > deadline {
                    if let Some(s) = &i.socket {
                        // Our own close code; `handle_close` then reconnects.
                        let _ = s.commands.unbounded_send(SocketCommand::Close(4000, "tick timeout"));
                    }
                }
            },
            every,
        )
        .ok();
    }
}

/// How long the app waits for the page's early module to send `connect` before it loads the
/// identity and connects itself. The early module is a tenth of the app's size, started only
/// from the service worker's cache (a visit that does not start it settles the wait at once),
/// and settles the wait on every path (a failed fetch and a panic included), so this only bounds
/// a module whose start stalled; generous, so a loaded machine never races the two.
const EARLY_CONNECT_WAIT: Duration = Duration::from_secs(10);

/// Takes the `connect` and reads the early module sent as this client's own: their answers,
/// among the socket's kept frames, are handled as if this client had sent them.
fn adopt_early_connect(i: &mut Inner, sent: SentConnect) {
    let request = ConnectRequest::new(&i.url, i.identity.clone(), i.using_device_token);
    identity::guard_held_tokens(&request.own_secrets());
    i.connect_id = Some(sent.connect_id);
    for read in sent.reads {
        let (tx, answer) = oneshot::channel();
        i.pending.insert(read.id, tx);
        // A read this page does not pipeline (an older module's) is answered to nobody.
        if let Some(method) = i.pipeline.iter().copied().find(|m| *m == read.method) {
            i.pipelined.push(PipelinedRead { method, answer });
        }
    }
    first_connect_done(i);
}

/// The first `connect` is on its way, or will not be: whoever waits for it goes on.
fn first_connect_done(i: &mut Inner) {
    i.first_connect_done = true;
    for tx in i.underway.drain(..) {
        let _ = tx.send(());
    }
}

fn fail_pending(i: &mut Inner) {
    for (_, tx) in std::mem::take(&mut i.pending) {
        let _ = tx.send(Err(RequestError::Disconnected));
    }
}

/// One socket's life: frames in go to [`GatewayClient::handle_text`] in order, commands from
/// the page go out, and the close (the gateway's, the network's or our own watchdog's) is
/// reported once to [`GatewayClient::handle_close`]. When the page drops the [`Socket`], the
/// task ends and dropping `ws` closes the connection, with no report.
/// Runs one socket: the frames that came before the app took it (`replay`) first, then the
/// socket's own and the commands, until it closes.
async fn run_socket(
    client: GatewayClient,
    generation: u64,
    mut ws: WebSocket,
    replay: Vec<String>,
    mut commands: mpsc::UnboundedReceiver<SocketCommand>,
) {
    for text in replay {
        client.handle_text(generation, &text);
    }
    loop {
        let step = match select(ws.next(), commands.next()).await {
            Either::Left((incoming, _)) => Either::Left(incoming),
            Either::Right((command, _)) => Either::Right(command),
        };
        match step {
            Either::Left(Some(Ok(Message::Text(text)))) => client.handle_text(generation, &text),
            Either::Left(Some(Ok(Message::Bytes(_)))) => browser::log_warn("ignored a binary frame from the gateway"),
            // The `error` event carries no detail; the close event that follows says why.
            Either::Left(Some(Err(WebSocketError::ConnectionError))) => {}
            Either::Left(Some(Err(WebSocketError::ConnectionClose(close)))) => {
                client.handle_close(generation, close.code, &close.reason);
                return;
            }
            Either::Left(Some(Err(e))) => browser::log_warn(&format!("WebSocket error: {e}")),
            // The stream ended without a close event: the connection is gone all the same.
            Either::Left(None) => {
                client.handle_close(generation, 1006, "");
                return;
            }
            Either::Right(Some(SocketCommand::Send(text))) => {
                if let Err(e) = ws.send(Message::Text(text)).await {
                    browser::log_warn(&format!("a frame could not be sent: {e}"));
                }
            }
            Either::Right(Some(SocketCommand::FirstConnectWritten)) => first_connect_done(&mut client.inner().borrow_mut()),
            Either::Right(Some(SocketCommand::Close(code, reason))) => {
                let _ = ws.close(Some(code), Some(reason));
                client.handle_close(generation, code, reason);
                return;
            }
            Either::Right(None) => return,
        }
    }
}
