//! One WebSocket connection: challenge, `connect`, then requests and events.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use protocol::error::ErrorShape;
use protocol::frame::{Frame, RequestFrame, ResponseFrame};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::Gateway;
use crate::handshake::{Transport, admit, hello_ok};
use crate::hub::{ConnSender, Outbound, Peer};
use crate::{log, methods, util};

/// Close codes (kept by the hub, which closes sockets with them too).
pub use crate::hub::{CLOSE_POLICY, CLOSE_TOO_BIG};

pub struct Headers {
    pub origin: Option<String>,
    pub host: Option<String>,
    /// The peer's address (None when a test drives the connection without a socket).
    pub remote: Option<std::net::IpAddr>,
}

fn event_text(event: &str, payload: &str, seq: Option<u64>) -> String {
    let event = serde_json::to_string(event).unwrap_or_default();
    match seq {
        Some(seq) => format!(r#"{{"type":"event","event":{event},"payload":{payload},"seq":{seq}}}"#),
        None => format!(r#"{{"type":"event","event":{event},"payload":{payload}}}"#),
    }
}

fn res_text(res: ResponseFrame) -> String {
    Frame::Res(res).to_json()
}

/// The text frames a connection receives, one at a time: [`on_text`] decides what each one
/// does without touching the socket, so tests and the fuzz harness can drive it directly.
pub struct ConnState {
    pub conn_id: String,
    /// The `connect.challenge` nonce this connection must sign.
    pub nonce: String,
    pub headers: Headers,
    pub peer: Option<Peer>,
    pub sender: ConnSender,
}

/// What the connection does after a frame.
pub enum Step {
    /// Keep reading.
    Continue,
    /// Run this request (on its own task in the server) with [`run_request`].
    Dispatch(Peer, RequestFrame, crate::Work),
    /// Stop reading: the socket is being closed.
    Stop,
}

/// Reads a frame with the gateway's closed schema; a `req` frame with a wrong type or a
/// missing field gets a message naming the field.
pub fn parse_frame(text: &str) -> Result<Frame, String> {
    match Frame::parse_closed(text) {
        Ok(f) => Ok(f),
        Err(e) => {
            if let Ok(serde_json::Value::Object(mut o)) = serde_json::from_str::<serde_json::Value>(text) {
                if o.remove("type") == Some(serde_json::Value::String("req".into())) {
                    if let Err(named) = protocol::closed::from_value_closed::<RequestFrame>(serde_json::Value::Object(o)) {
                        return Err(format!("invalid `req` frame: {named}"));
                    }
                }
            }
            Err(e.0)
        }
    }
}

/// Handles one text frame from the client. Whatever it answers goes through `st.sender`.
pub fn on_text(gw: &Arc<Gateway>, st: &mut ConnState, text: &str) -> Step {
    let conn_id = &st.conn_id;
    // Closing (its device was revoked, the gateway is stopping): what still arrives is not
    // acted on.
    if st.peer.is_some() && st.sender.is_closing() {
        return Step::Continue;
    }
    if st.peer.is_none() && text.len() > protocol::MAX_PRECONNECT_FRAME_BYTES {
        st.sender.send(Outbound::Close(CLOSE_TOO_BIG, "pre-connect frame exceeds 64 KiB".into()));
        return Step::Stop;
    }
    if text.len() > protocol::MAX_PAYLOAD_BYTES {
        log::warn(&format!("conn {conn_id}: frame of {} bytes exceeds maxPayload", text.len()));
        st.sender.send(Outbound::Close(CLOSE_TOO_BIG, "frame exceeds maxPayload".into()));
        return Step::Stop;
    }
    let frame = match parse_frame(text) {
        Ok(Frame::Req(req)) => req,
        Ok(_) => {
            log::warn(&format!("conn {conn_id}: ignored a non-request frame from the client"));
            return Step::Continue;
        }
        Err(e) => {
            // Answer if we can tell which request it was; otherwise log and go on.
            let id = serde_json::from_str::<serde_json::Value>(text).ok().and_then(|v| v.get("id")?.as_str().map(str::to_string));
            // The parser's words can quote the frame (`unknown variant \`<token>\``): they go to
            // the sender only, and the log says what happened without any of its content.
            let when = if st.peer.is_some() { "" } else { " before connect" };
            log::warn(&format!("conn {conn_id}: malformed frame of {} bytes{when} (answered INVALID_REQUEST)", text.len()));
            if let Some(id) = id.filter(|i| !i.is_empty()) {
                st.sender.send(Outbound::Text(res_text(ResponseFrame::err(id, ErrorShape::invalid(e)))));
            }
            if st.peer.is_none() {
                st.sender.send(Outbound::Close(CLOSE_POLICY, "first frame must be a connect request".into()));
                return Step::Stop;
            }
            return Step::Continue;
        }
    };
    match &st.peer {
        None => match connect(gw, &frame, &st.headers, &st.nonce, conn_id, &st.sender) {
            Ok(p) => {
                gw.hub.join(p.clone());
                st.peer = Some(p);
                Step::Continue
            }
            Err(()) => Step::Stop,
        },
        Some(p) => {
            if frame.method == "connect" {
                st.sender.send(Outbound::Text(res_text(ResponseFrame::err(frame.id, ErrorShape::invalid("already connected")))));
                return Step::Continue;
            }
            match gw.drain.request() {
                Some(work) => Step::Dispatch(p.clone(), frame, work),
                None => {
                    let mut e = ErrorShape::new(protocol::error::code::UNAVAILABLE, "gateway stopping; retry after it restarts");
                    e.retryable = Some(true);
                    st.sender.send(Outbound::Text(res_text(ResponseFrame::err(frame.id, e))));
                    Step::Continue
                }
            }
        }
    }
}

/// Runs a connected client's request and queues its response.
pub async fn run_request(gw: Arc<Gateway>, p: Peer, frame: RequestFrame, work: crate::Work) {
    let id = frame.id.clone();
    let method = frame.method.clone();
    let drop_it = gw.fault_drops(&method);
    if drop_it {
        // Lose everything from here on: no events, no response.
        gw.hub.leave(&p.conn_id);
    }
    let res = match methods::dispatch(&gw, &p, frame).await {
        Ok(payload) => ResponseFrame::ok(id, payload),
        Err(e) => ResponseFrame::err(id, e),
    };
    if drop_it {
        log::warn(&format!("fault injection: dropping the connection before the `{method}` response"));
        p.sender.send(Outbound::Close(1011, "fault injection".into()));
        return;
    }
    p.sender.send(Outbound::Text(res_text(res)));
    // The response is queued before the request stops counting as in flight, so graceful
    // shutdown closes the socket only after it.
    drop(work);
}

/// How long the reader keeps going after the writer sent a close (for the client's reply).
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Serves one upgraded socket. `connected` opens the transport's pre-connect read limit
/// (`upgrade::PreConnectLimit`) once `connect` succeeds; `slot` counts the socket as not yet
/// connected until then.
pub async fn handle<S>(
    gw: Arc<Gateway>,
    socket: WebSocketStream<S>,
    headers: Headers,
    connected: Arc<std::sync::atomic::AtomicBool>,
    mut slot: crate::admission::PendingSlot,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let conn_id = util::uuid_v4();
    let (mut sink, mut stream) = socket.split();
    let (sender, mut rx) = ConnSender::new();
    let (writer_done_tx, mut writer_done) = tokio::sync::watch::channel(false);

    // The writer owns the sink: it numbers events, sends ticks and keepalive pings, and closes.
    let tick_ms = gw.config.tick_interval_ms.max(10);
    let writer_sender = sender.clone();
    // Set by the reader when a pong arrives; the writer's keepalive takes it.
    let pong = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer_pong = pong.clone();
    let keepalive_every = gw.config.keepalive;
    let writer_conn_id = conn_id.clone();
    let writer = tokio::spawn(async move {
        let mut seq: u64 = 0;
        let mut tick =
            tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_millis(tick_ms), Duration::from_millis(tick_ms));
        let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + keepalive_every, keepalive_every);
        keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut awaiting_pong = false;
        let mut connected = false;
        let overflow = writer_sender.overflowed();
        tokio::pin!(overflow);
        let mut close: Option<(u16, String)> = None;
        loop {
            let out = tokio::select! {
                biased;
                _ = &mut overflow => {
                    close = Some((CLOSE_POLICY, "slow consumer: send buffer limit exceeded".into()));
                    break;
                }
                out = rx.recv() => match out { Some(o) => o, None => break },
                _ = tick.tick() => {
                    if !connected { continue; }
                    Outbound::Event { event: Arc::from("tick"), payload: Arc::from(json!({"ts": util::now_ms()}).to_string()) }
                }
                _ = keepalive.tick() => {
                    if !connected { continue; }
                    if awaiting_pong && !writer_pong.swap(false, std::sync::atomic::Ordering::AcqRel) {
                        log::warn(&format!("conn {writer_conn_id}: no pong within {keepalive_every:?}: dropped"));
                        break;
                    }
                    writer_pong.store(false, std::sync::atomic::Ordering::Release);
                    awaiting_pong = true;
                    // A peer that reads nothing cannot hold the writer here: the send buffer's
                    // limit still drops it, and a ping not written within the keepalive time
                    // counts as a missed pong.
                    let sent = tokio::select! {
                        biased;
                        _ = &mut overflow => {
                            close = Some((CLOSE_POLICY, "slow consumer: send buffer limit exceeded".into()));
                            break;
                        }
                        sent = sink.send(Message::Ping(Default::default())) => sent.is_ok(),
                        _ = tokio::time::sleep(keepalive_every) => false,
                    };
                    if !sent {
                        log::warn(&format!("conn {writer_conn_id}: keepalive ping not written within {keepalive_every:?}: dropped"));
                        break;
                    }
                    continue;
                }
            };
            let (text, size) = match out {
                Outbound::Text(t) => {
                    // The first response on a connection is connect's; ticks start after it.
                    connected = true;
                    let n = t.len();
                    (t, n)
                }
                Outbound::Event { event, payload } => {
                    let with_seq = &*event != "connect.challenge";
                    if with_seq {
                        seq += 1;
                    }
                    let n = event.len() + payload.len() + 48;
                    (event_text(&event, &payload, with_seq.then_some(seq)), n)
                }
                Outbound::Close(code, reason) => {
                    close = Some((code, reason));
                    break;
                }
                Outbound::Hold(d) => {
                    tokio::time::sleep(d).await;
                    continue;
                }
            };
            let sent = tokio::select! {
                biased;
                _ = &mut overflow => {
                    close = Some((CLOSE_POLICY, "slow consumer: send buffer limit exceeded".into()));
                    break;
                }
                sent = sink.send(Message::Text(Utf8Bytes::from(text))) => sent,
            };
            writer_sender.sent(size);
            if sent.is_err() {
                break;
            }
        }
        if let Some((code, reason)) = close {
            if writer_sender.is_overflowed() {
                log::warn(&format!(
                    "conn: dropping a slow consumer ({} bytes queued)",
                    writer_sender.queued_bytes.load(std::sync::atomic::Ordering::Acquire)
                ));
            }
            // A client that does not read cannot hold the close up for long.
            let _ = tokio::time::timeout(
                CLOSE_GRACE,
                sink.send(Message::Close(Some(CloseFrame { code: code.into(), reason: Utf8Bytes::from(reason) }))),
            )
            .await;
        }
        let _ = tokio::time::timeout(CLOSE_GRACE, sink.close()).await;
        writer_done_tx.send_replace(true);
    });

    let nonce = util::uuid_v4();
    sender.send(Outbound::Event {
        event: Arc::from("connect.challenge"),
        payload: Arc::from(json!({"nonce": nonce, "ts": util::now_ms()}).to_string()),
    });

    let mut st = ConnState { conn_id: conn_id.clone(), nonce, headers, peer: None, sender: sender.clone() };
    let writer_finished = async move {
        let _ = writer_done.wait_for(|d| *d).await;
        tokio::time::sleep(CLOSE_GRACE).await;
    };
    tokio::pin!(writer_finished);
    let deadline = tokio::time::sleep(gw.config.connect_deadline);
    tokio::pin!(deadline);
    loop {
        let msg = tokio::select! {
            msg = stream.next() => msg,
            // The writer closed (or dropped a slow consumer): stop reading soon after.
            _ = &mut writer_finished => break,
            _ = &mut deadline, if st.peer.is_none() => {
                log::warn(&format!("conn {conn_id}: no connect within {:?}: closed", gw.config.connect_deadline));
                sender.send(Outbound::Close(CLOSE_POLICY, "connect timed out".into()));
                // The writer sends the close; the reader stops when it is done.
                let _ = tokio::time::timeout(CLOSE_GRACE * 2, &mut writer_finished).await;
                break;
            }
        };
        let text = match msg {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Binary(_))) => {
                log::warn(&format!("conn {conn_id}: binary frame ignored"));
                continue;
            }
            Some(Err(e)) => {
                // The transport's own limit (twice maxPayload) or a broken socket.
                let msg = e.to_string();
                if msg.contains(crate::admission::PRE_CONNECT_TOO_BIG) {
                    log::warn(&format!("conn {conn_id}: {msg}"));
                    sender.send(Outbound::Close(CLOSE_TOO_BIG, crate::admission::PRE_CONNECT_TOO_BIG.into()));
                    let _ = tokio::time::timeout(CLOSE_GRACE * 2, &mut writer_finished).await;
                } else if msg.contains("too long") || msg.contains("too big") || msg.contains("Space limit") {
                    log::warn(&format!("conn {conn_id}: {msg}"));
                    sender.send(Outbound::Close(CLOSE_TOO_BIG, "frame exceeds maxPayload".into()));
                }
                break;
            }
            Some(Ok(Message::Close(_))) | None => break,
            Some(Ok(Message::Pong(_))) => {
                pong.store(true, std::sync::atomic::Ordering::Release);
                continue;
            }
            Some(Ok(_)) => continue,
        };
        let was_connected = st.peer.is_some();
        let step = on_text(&gw, &mut st, &text);
        if !was_connected && st.peer.is_some() {
            // Connected: the transport may now read frames up to maxPayload.
            connected.store(true, std::sync::atomic::Ordering::Release);
            slot.release();
        }
        match step {
            Step::Continue => {}
            Step::Stop => break,
            // Each request runs on its own task: a long `question.waitAnswer` must not
            // hold up the rest of the connection.
            Step::Dispatch(p, frame, work) => {
                tokio::spawn(run_request(gw.clone(), p, frame, work));
            }
        }
    }
    if st.peer.is_some() {
        gw.hub.leave(&conn_id);
    }
    drop(st);
    drop(sender);
    // The writer may be holding a refused connect's answer back (`throttle`).
    let _ = tokio::time::timeout(Duration::from_secs(5) + gw.config.auth_backoff.max_delay, writer).await;
}

fn connect(gw: &Gateway, req: &RequestFrame, headers: &Headers, nonce: &str, conn_id: &str, sender: &ConnSender) -> Result<Peer, ()> {
    let fail = |e: ErrorShape| {
        // Only the code: a refusal's message can quote the client's params (a closed-schema
        // error names a field or a value, and a token may be either).
        log::warn(&format!("conn {conn_id}: connect refused ({})", e.detail_code().unwrap_or(&e.code)));
        sender.send(Outbound::Text(res_text(ResponseFrame::err(req.id.clone(), e))));
        sender.send(Outbound::Close(CLOSE_POLICY, "connect refused".into()));
    };
    if req.method != "connect" {
        fail(ErrorShape::invalid(format!("the first request must be `connect`, not `{}`", protocol::frame::truncate(&req.method, 40))));
        return Err(());
    }
    // Backoff after failed sign-ins (`throttle`): a locked key is refused before anything is
    // checked, so guessing in parallel gains nothing.
    let key = crate::throttle::key(headers.remote, headers.origin.as_deref());
    if let Some(wait) = gw.auth_throttle.locked(&key, std::time::Instant::now()) {
        let ms = (wait.as_millis() as u64).max(1);
        let mut e = ErrorShape::invalid(format!("too many failed sign-in attempts from this address and origin: retry after {ms} ms"))
            .with_details(json!({"code": protocol::error::detail::AUTH_RATE_LIMITED, "retryAfterMs": ms}));
        e.retryable = Some(true);
        e.retry_after_ms = Some(ms);
        fail(e);
        return Err(());
    }
    let transport = Transport { origin: headers.origin.as_deref(), host: headers.host.as_deref(), challenge_nonce: nonce };
    let admitted = match admit(gw, req.params.clone().unwrap_or(json!({})), &transport) {
        Ok(a) => a,
        Err(mut e) => {
            let guessed = matches!(
                e.detail_code(),
                Some(protocol::error::detail::AUTH_TOKEN_MISMATCH | protocol::error::detail::AUTH_DEVICE_TOKEN_MISMATCH)
            );
            if guessed && let Some(delay) = gw.auth_throttle.failed(&key, std::time::Instant::now(), &gw.config.auth_backoff) {
                // This failure locks the key: its answer is held back as long, on this socket only.
                e.retry_after_ms = Some((delay.as_millis() as u64).max(1));
                sender.send(Outbound::Hold(delay));
            }
            fail(e);
            return Err(());
        }
    };
    gw.auth_throttle.succeeded(&key);
    let hello = hello_ok(gw, &admitted, conn_id);
    log::info(&format!("conn {conn_id}: connected {} with scopes [{}]", admitted.client_id, admitted.scopes.join(",")));
    sender.send(Outbound::Text(res_text(ResponseFrame::ok(req.id.clone(), serde_json::to_value(hello).unwrap_or_default()))));
    Ok(Peer {
        conn_id: conn_id.to_string(),
        scopes: admitted.scopes,
        owner: admitted.owner,
        client_id: admitted.client_id,
        display_name: admitted.display_name,
        device_id: admitted.device_id,
        sender: sender.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_built_event_frames_parse_as_protocol_events() {
        let Frame::Event(e) = Frame::parse_closed(&event_text("tick", r#"{"ts":1}"#, Some(3))).unwrap() else { panic!() };
        assert_eq!((e.event.as_str(), e.seq), ("tick", Some(3)));
        let Frame::Event(e) = Frame::parse_closed(&event_text("a\"b", "{}", None)).unwrap() else { panic!() };
        assert_eq!((e.event.as_str(), e.seq), ("a\"b", None));
    }
}
