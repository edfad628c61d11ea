//! A native protocol client: signs in like the UI or like a trusted backend, correlates
//! requests and collects events. Used by `gateway ask`, the load generator and the tests.

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use protocol::connect::{AuthParams, ClientInfo, ConnectChallenge, ConnectParams, HelloOk};
use protocol::device::DeviceIdentity;
use protocol::error::ErrorShape;
use protocol::frame::{EventFrame, Frame, RequestFrame};
use serde_json::{Value, json};
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
    socket: Socket,
    next_id: u64,
    pub hello: HelloOk,
    /// Events received while waiting for something else.
    pub events: VecDeque<EventFrame>,
    /// Close code and reason, once the server closed.
    pub closed: Option<(u16, String)>,
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

async fn read_frame(socket: &mut Socket, closed: &mut Option<(u16, String)>) -> Result<Frame, String> {
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(t))) => return Frame::parse(&t).map_err(|e| e.0),
            Some(Ok(Message::Close(c))) => {
                *closed = c.map(|c| (u16::from(c.code), c.reason.to_string()));
                return Err(format!("closed by the gateway: {closed:?}"));
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(e.to_string()),
            None => return Err("connection ended".into()),
        }
    }
}

impl Client {
    pub async fn connect(opts: ClientOptions) -> Result<Client, ConnectError> {
        let mut req = opts.url.as_str().into_client_request().map_err(|e| ConnectError::Transport(e.to_string()))?;
        if let Some(o) = &opts.origin {
            req.headers_mut().insert("origin", o.parse().map_err(|_| ConnectError::Transport("bad origin".into()))?);
        }
        let (mut socket, _) = tokio_tungstenite::connect_async(req).await.map_err(|e| ConnectError::Transport(e.to_string()))?;
        let mut closed = None;
        let challenge: ConnectChallenge = loop {
            match read_frame(&mut socket, &mut closed).await.map_err(ConnectError::Transport)? {
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
        let mut client = Client { socket, next_id: 0, hello: placeholder_hello(), events: VecDeque::new(), closed };
        let hello = client.request("connect", serde_json::to_value(params).expect("params serialise")).await;
        match hello {
            Ok(v) => {
                client.hello = serde_json::from_value(v).map_err(|e| ConnectError::Transport(format!("bad hello-ok: {e}")))?;
                Ok(client)
            }
            Err(e) if e.code == "TRANSPORT" => Err(ConnectError::Transport(e.message)),
            Err(e) => Err(ConnectError::Refused(e)),
        }
    }

    /// The socket and the events received so far, for callers that read and write on their
    /// own after the handshake (the load generator).
    pub fn into_parts(self) -> (Socket, VecDeque<EventFrame>) {
        (self.socket, self.events)
    }

    /// Sends a raw text frame (for hostile-input tests).
    pub async fn send_raw(&mut self, text: String) -> Result<(), String> {
        self.socket.send(Message::Text(text.into())).await.map_err(|e| e.to_string())
    }

    /// Sends a request and waits for its response; events that arrive meanwhile are kept.
    /// A transport failure comes back as an error with code `TRANSPORT`.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, ErrorShape> {
        self.next_id += 1;
        let id = format!("c-{}", self.next_id);
        let frame = Frame::Req(RequestFrame::new(id.clone(), method, params));
        self.socket.send(Message::Text(frame.to_json().into())).await.map_err(|e| ErrorShape::new("TRANSPORT", e.to_string()))?;
        loop {
            match read_frame(&mut self.socket, &mut self.closed).await.map_err(|e| ErrorShape::new("TRANSPORT", e))? {
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
            let frame = tokio::time::timeout_at(deadline, read_frame(&mut self.socket, &mut self.closed)).await.ok()?.ok()?;
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
            match tokio::time::timeout_at(deadline, read_frame(&mut self.socket, &mut self.closed)).await {
                Ok(Ok(Frame::Event(e))) => self.events.push_back(e),
                Ok(Ok(_)) => {}
                Ok(Err(_)) => break,
                Err(_) => return None,
            }
        }
        self.closed.clone()
    }
}

fn placeholder_hello() -> HelloOk {
    serde_json::from_value(json!({"type":"hello-ok","protocol":4,"server":{"version":""},"auth":{"scopes":[]},"policy":{}}))
        .expect("static hello")
}
