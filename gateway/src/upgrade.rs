//! The WebSocket upgrade, done here rather than by axum's extractor so that the transport
//! itself enforces what must hold before `connect`:
//! - a browser `Origin` that is not allowed is refused with 403 before any socket exists;
//! - at most [`crate::Config::max_unauthenticated`] sockets may be open without a `connect`,
//!   and at most [`crate::Config::max_unauthenticated_per_origin`] of one browser Origin (more
//!   get 503);
//! - until `connect` succeeds, the transport reads at most 64 KiB and a little framing
//!   ([`PreConnectLimit`]), so a client cannot make the gateway buffer a 50 MiB frame first;
//! - a socket that has not connected within [`crate::Config::connect_deadline`] is closed
//!   (`conn::handle`).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use crate::Gateway;
use crate::admission::{Full, PRE_CONNECT_TOO_BIG, PendingSlot};
use crate::conn::{self, Headers};

/// What the transport may read before `connect` succeeds: one pre-connect frame of 64 KiB,
/// its header and mask, and a close frame.
pub const PRE_CONNECT_READ_LIMIT: usize = protocol::MAX_PRECONNECT_FRAME_BYTES + 1024;

/// Whether a request asks for a WebSocket (`Upgrade: websocket`).
pub fn is_websocket(headers: &HeaderMap) -> bool {
    headers.get(header::UPGRADE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// An I/O stream that fails reading once more than [`PRE_CONNECT_READ_LIMIT`] bytes arrived
/// while `open` is false (no `connect` yet). After `connect`, it only passes bytes through.
pub struct PreConnectLimit<S> {
    inner: S,
    read: usize,
    connected: Arc<AtomicBool>,
}

impl<S> PreConnectLimit<S> {
    pub fn new(inner: S) -> (Self, Arc<AtomicBool>) {
        let connected = Arc::new(AtomicBool::new(false));
        (PreConnectLimit { inner, read: 0, connected: connected.clone() }, connected)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for PreConnectLimit<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if self.connected.load(Ordering::Acquire) {
            return Pin::new(&mut self.inner).poll_read(cx, buf);
        }
        if self.read >= PRE_CONNECT_READ_LIMIT {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, PRE_CONNECT_TOO_BIG)));
        }
        // Never read past the limit: the bytes beyond it stay in the kernel.
        let room = PRE_CONNECT_READ_LIMIT - self.read;
        let before = buf.filled().len();
        let result = if buf.remaining() > room {
            let mut limited = ReadBuf::new(buf.initialize_unfilled_to(room));
            let r = Pin::new(&mut self.inner).poll_read(cx, &mut limited);
            let n = limited.filled().len();
            buf.advance(n);
            r
        } else {
            Pin::new(&mut self.inner).poll_read(cx, buf)
        };
        let n = buf.filled().len() - before;
        self.read += n;
        result
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for PreConnectLimit<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

fn refuse(status: StatusCode, message: &str) -> Response {
    crate::log::warn(&format!("websocket upgrade refused ({status}): {message}"));
    (status, message.to_string()).into_response()
}

/// Answers an upgrade request: 101 and a socket handled by `conn::handle`, or a refusal.
pub fn upgrade(gw: Arc<Gateway>, method: &Method, headers: &HeaderMap, request: axum::extract::Request) -> Response {
    let key = headers.get(header::SEC_WEBSOCKET_KEY).map(HeaderValue::as_bytes).filter(|k| !k.is_empty());
    let version_ok = headers.get(header::SEC_WEBSOCKET_VERSION).is_some_and(|v| v == "13");
    let connection_upgrade = headers
        .get(header::CONNECTION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("upgrade")));
    let (Some(key), true, true, true) = (key, version_ok, connection_upgrade, method == Method::GET) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "not a valid WebSocket upgrade (GET, Connection: upgrade, Sec-WebSocket-Version: 13 and a key)",
        );
    };
    let h = Headers {
        origin: headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()).map(str::to_string),
        host: headers.get(header::HOST).and_then(|v| v.to_str().ok()).map(str::to_string),
        remote: request.extensions().get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip()),
    };
    // A browser page says where it comes from; only allowed origins get a socket at all.
    if let Some(origin) = &h.origin
        && !crate::handshake::origin_allowed(&gw, origin, h.host.as_deref())
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "origin not allowed: open the Control UI from the gateway's own address, or add this origin to the allowed origins",
        );
    }
    let slot = match PendingSlot::acquire(&gw, h.origin.as_deref()) {
        Ok(slot) => slot,
        Err(full) => {
            let why = match full {
                Full::All => "too many connections have not authenticated yet; try again shortly",
                Full::Origin => "too many connections from this page have not authenticated yet; try again shortly",
            };
            let mut r = refuse(StatusCode::SERVICE_UNAVAILABLE, why);
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            return r;
        }
    };
    let Some(on_upgrade) = { request }.extensions_mut().remove::<hyper::upgrade::OnUpgrade>() else {
        return refuse(StatusCode::UPGRADE_REQUIRED, "this connection cannot be upgraded");
    };
    let accept = derive_accept_key(key);
    tokio::spawn(async move {
        let upgraded = match on_upgrade.await {
            Ok(u) => u,
            Err(e) => {
                crate::log::warn(&format!("websocket upgrade failed: {e}"));
                return;
            }
        };
        let (io, connected) = PreConnectLimit::new(TokioIo::new(upgraded));
        // After `connect`, the transport reads up to twice maxPayload, so a frame just over
        // the limit is read whole and closed cleanly with 1009 by `conn::on_text`.
        let config = WebSocketConfig::default()
            .max_message_size(Some(2 * protocol::MAX_PAYLOAD_BYTES))
            .max_frame_size(Some(2 * protocol::MAX_PAYLOAD_BYTES));
        let socket = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
        conn::handle(gw, socket, h, connected, slot).await;
    });
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let hd = response.headers_mut();
    hd.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    hd.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Ok(v) = HeaderValue::from_str(&accept) {
        hd.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    response
}
