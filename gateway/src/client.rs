//! A native protocol client: signs in like the UI or like a trusted backend, correlates
//! requests and collects events. Used by `gateway ask`, the load generator and the tests.

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use protocol::connect::{AuthParams, ClientInfo, ConnectChallenge, ConnectParams, HelloOk};
use protocol::device::DeviceIdentity;
use protocol::error::ErrorShape;
use protocol::frame::{EventFrame, Frame, RequestFrame};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How to present ourselves.
pub struct ClientOptions {
    pub url: String,
    pub token: Option<String>,
    pub device_token: Option<String>,
    pub origin: Option<String>,
    pub client_id: String,
    pub mode: String,
    pub scopes: Vec<String>,
    pub identity: Option<DeviceIdentity>,
    pub platform: String,
}

impl ClientOptions {
    /// A trusted loopback backend (no device, no Origin), like the real `gateway-client`.
    pub fn backend(url: &str, token: &str, scopes: &[&str]) -> Self {
        ClientOptions {
            url: url.into(),
            token: Some(token.into()),
            device_token: None,
            origin: None,
            client_id: "gateway-client".into(),
            mode: "backend".into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            identity: None,
            platform: "linux".into(),
        }
    }

    /// A browser Control UI: an Origin header and a signed device.
    pub fn control_ui(url: &str, token: &str, origin: &str, identity: DeviceIdentity) -> Self {
        ClientOptions {
            url: url.into(),
            token: Some(token.into()),
            device_token: None,
            origin: Some(origin.into()),
            client_id: protocol::connect::CONTROL_UI_CLIENT_ID.into(),
            mode: "webchat".into(),
            scopes: protocol::methods::UI_SCOPES.iter().map(|s| s.to_string()).collect(),
            identity: Some(identity),
            platform: "linux".into(),
        }
    }
}

pub struct Client {
    /// Frames to send, written by the pump task.
    out: mpsc::UnboundedSender<Message>,
    /// What the pump read, in order.
    incoming: mpsc::UnboundedReceiver<Incoming>,
    next_id: u64,
    pub hello: HelloOk,
    /// Events received while waiting for something else.
    pub events: VecDeque<EventFrame>,
    /// Close code and reason, once the server closed.
    pub closed: Option<(u16, String)>,
    /// The connection has ended (closed or failed).
    ended: bool,
    /// Pings the pump read (and so answered).
    pings: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// A signed-in socket before anything reads it: for callers that read and write on their own
/// (the load generator). They must keep reading, or the gateway's pings go unanswered.
pub struct Handshake {
    pub socket: Socket,
    pub hello: HelloOk,
    /// Events received during the handshake.
    pub events: VecDeque<EventFrame>,
}

/// One thing the pump read.
enum Incoming {
    Frame(Frame),
    /// A text frame that is not a protocol frame; the socket stays open.
    Malformed(String),
    /// The server closed (its code and reason, when it gave one).
    Closed(Option<(u16, String)>),
    /// The transport failed.
    Failed(String),
}

/// A connect that failed: the gateway's error, or a transport failure.
#[derive(Debug)]
pub enum ConnectError {
    Refused(ErrorShape),
    Transport(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Refused(e) => write!(f, "{}: {}", e.detail_code().unwrap_or(&e.code), e.message),
            ConnectError::Transport(e) => f.write_str(e),
        }
    }
}

async fn read_frame(socket: &mut Socket) -> Result<Frame, String> {
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(t))) => return Frame::parse(&t).map_err(|e| e.0),
            Some(Ok(Message::Close(c))) => {
                return Err(format!("closed by the gateway: {:?}", c.map(|c| (u16::from(c.code), c.reason.to_string()))));
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(e.to_string()),
            None => return Err("connection ended".into()),
        }
    }
}

/// Owns the socket for a [`Client`]: writes what the client sends and reads all the time, so
/// the gateway's keepalive pings are answered while the client waits on something else (the
/// real gateway ends a connection that misses its pongs). Ends when the client is dropped (it
/// closes the socket then) or the connection ends.
async fn pump(
    mut socket: Socket,
    mut out: mpsc::UnboundedReceiver<Message>,
    tx: mpsc::UnboundedSender<Incoming>,
    pings: std::sync::Arc<std::sync::atomic::AtomicU64>,
) {
    loop {
        tokio::select! {
            m = out.recv() => match m {
                Some(m) => {
                    if let Err(e) = socket.send(m).await {
                        let _ = tx.send(Incoming::Failed(e.to_string()));
                        return;
                    }
                }
                None => {
                    let _ = socket.close(None).await;
                    return;
                }
            },
            r = socket.next() => {
                let item = match r {
                    Some(Ok(Message::Text(t))) => match Frame::parse(&t) {
                        Ok(f) => Incoming::Frame(f),
                        Err(e) => Incoming::Malformed(e.0),
                    },
                    // Pings are answered by tungstenite on the next read.
                    Some(Ok(Message::Ping(_))) => {
                        pings.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        continue;
                    }
                    Some(Ok(Message::Close(c))) => Incoming::Closed(c.map(|c| (u16::from(c.code), c.reason.to_string()))),
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => Incoming::Failed(e.to_string()),
                    None => Incoming::Failed("connection ended".into()),
                };
                let last = !matches!(item, Incoming::Frame(_) | Incoming::Malformed(_));
                if tx.send(item).is_err() || last {
                    return;
                }
            }
        }
    }
}

impl Client {
    /// Signs in and hands back the socket, unread since (see [`Handshake`]).
    pub async fn handshake(opts: ClientOptions) -> Result<Handshake, ConnectError> {
        let mut req = opts.url.as_str().into_client_request().map_err(|e| ConnectError::Transport(e.to_string()))?;
        if let Some(o) = &opts.origin {
            req.headers_mut().insert("origin", o.parse().map_err(|_| ConnectError::Transport("bad origin".into()))?);
        }
        let (mut socket, _) = tokio_tungstenite::connect_async(req).await.map_err(|e| ConnectError::Transport(e.to_string()))?;
        let challenge: ConnectChallenge = loop {
            match read_frame(&mut socket).await.map_err(ConnectError::Transport)? {
                Frame::Event(e) if e.event == "connect.challenge" => {
                    break serde_json::from_value(e.payload.unwrap_or_default()).map_err(|e| ConnectError::Transport(e.to_string()))?;
                }
                _ => continue,
            }
        };
        let auth = AuthParams { token: opts.token.clone(), device_token: opts.device_token.clone(), ..Default::default() };
        let mut info = ClientInfo::new(&opts.client_id, env!("CARGO_PKG_VERSION"), &opts.platform, &opts.mode);
        info.build_id = Some("dev".into());
        let params = ConnectParams::operator(info, opts.scopes.clone(), auth, opts.identity.as_ref(), &challenge);
        let id = "c-connect";
        let frame = Frame::Req(RequestFrame::new(id.to_string(), "connect", serde_json::to_value(params).expect("params serialise")));
        socket.send(Message::Text(frame.to_json().into())).await.map_err(|e| ConnectError::Transport(e.to_string()))?;
        let mut events = VecDeque::new();
        loop {
            match read_frame(&mut socket).await.map_err(ConnectError::Transport)? {
                Frame::Res(r) if r.id == id => {
                    if !r.ok {
                        return Err(ConnectError::Refused(r.error.unwrap_or_else(|| ErrorShape::new("UNKNOWN", "error without a shape"))));
                    }
                    let hello = serde_json::from_value(r.payload.unwrap_or(Value::Null))
                        .map_err(|e| ConnectError::Transport(format!("bad hello-ok: {e}")))?;
                    return Ok(Handshake { socket, hello, events });
                }
                Frame::Event(e) => events.push_back(e),
                _ => {}
            }
        }
    }

    /// Signs in; from then on a task reads the socket (see [`pump`]).
    pub async fn connect(opts: ClientOptions) -> Result<Client, ConnectError> {
        let Handshake { socket, hello, events } = Self::handshake(opts).await?;
        let (out, out_rx) = mpsc::unbounded_channel();
        let (tx, incoming) = mpsc::unbounded_channel();
        let pings = std::sync::Arc::default();
        tokio::spawn(pump(socket, out_rx, tx, std::sync::Arc::clone(&pings)));
        Ok(Client { out, incoming, next_id: 0, hello, events, closed: None, ended: false, pings })
    }

    /// How many of the gateway's keepalive pings this client has answered.
    pub fn pings_answered(&self) -> u64 {
        self.pings.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sends a raw text frame (for hostile-input tests).
    pub async fn send_raw(&mut self, text: String) -> Result<(), String> {
        self.out.send(Message::Text(text.into())).map_err(|_| self.gone())
    }

    fn gone(&self) -> String {
        match &self.closed {
            Some(c) => format!("closed by the gateway: {c:?}"),
            None => "connection ended".into(),
        }
    }

    /// The next frame the pump read; an error once the connection has ended (and then always).
    async fn next_frame(&mut self) -> Result<Frame, String> {
        let item = self.incoming.recv().await;
        self.ended |= !matches!(item, Some(Incoming::Frame(_) | Incoming::Malformed(_)));
        match item {
            Some(Incoming::Frame(f)) => Ok(f),
            Some(Incoming::Malformed(e)) => Err(e),
            Some(Incoming::Closed(c)) => {
                self.closed = c;
                Err(self.gone())
            }
            Some(Incoming::Failed(e)) => Err(e),
            None => Err(self.gone()),
        }
    }

    /// Sends a request and waits for its response; events that arrive meanwhile are kept.
    /// A transport failure comes back as an error with code `TRANSPORT`.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, ErrorShape> {
        self.next_id += 1;
        let id = format!("c-{}", self.next_id);
        let frame = Frame::Req(RequestFrame::new(id.clone(), method, params));
        self.out.send(Message::Text(frame.to_json().into())).map_err(|_| ErrorShape::new("TRANSPORT", self.gone()))?;
        loop {
            match self.next_frame().await.map_err(|e| ErrorShape::new("TRANSPORT", e))? {
                Frame::Res(r) if r.id == id => {
                    return if r.ok {
                        Ok(r.payload.unwrap_or(Value::Null))
                    } else {
                        Err(r.error.unwrap_or_else(|| ErrorShape::new("UNKNOWN", "error without a shape")))
                    };
                }
                Frame::Event(e) => self.events.push_back(e),
                _ => {}
            }
        }
    }

    /// Waits for the next event named `name` (taking earlier ones from the backlog first).
    pub async fn next_event(&mut self, name: &str, timeout: Duration) -> Option<EventFrame> {
        if let Some(i) = self.events.iter().position(|e| e.event == name) {
            return self.events.remove(i);
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.next_frame()).await.ok()?.ok()?;
            if let Frame::Event(e) = frame {
                if e.event == name {
                    return Some(e);
                }
                self.events.push_back(e);
            }
        }
    }

    /// Reads until the server closes; returns the close code and reason.
    pub async fn wait_closed(&mut self, timeout: Duration) -> Option<(u16, String)> {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.closed.is_none() {
            match tokio::time::timeout_at(deadline, self.next_frame()).await {
                Ok(Ok(Frame::Event(e))) => self.events.push_back(e),
                Ok(Ok(_)) => {}
                Ok(Err(_)) if self.ended => break,
                Ok(Err(_)) => {}
                Err(_) => return None,
            }
        }
        self.closed.clone()
    }
}
