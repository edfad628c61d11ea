//! One WebSocket connection: challenge, `connect`, then requests and events.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use protocol::error::ErrorShape;
use protocol::frame::{Frame, RequestFrame, ResponseFrame};
use serde_json::json;

use crate::Gateway;
use crate::handshake::{Transport, admit, hello_ok};
use crate::hub::{ConnSender, Outbound, Peer};
use crate::{log, methods, util};

/// Close codes.
pub const CLOSE_POLICY: u16 = 1008;
pub const CLOSE_TOO_BIG: u16 = 1009;

pub struct Headers {
    pub origin: Option<String>,
    pub host: Option<String>,
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

pub async fn handle(gw: Arc<Gateway>, socket: WebSocket, headers: Headers) {
    let conn_id = util::uuid_v4();
    let (mut sink, mut stream) = socket.split();
    let (sender, mut rx) = ConnSender::new();

    // The writer owns the sink: it numbers events, sends ticks, and closes.
    let tick_ms = gw.config.tick_interval_ms.max(10);
    let writer_sender = sender.clone();
    let writer = tokio::spawn(async move {
        let mut seq: u64 = 0;
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_millis(tick_ms), Duration::from_millis(tick_ms));
        let mut connected = false;
        loop {
            let out = tokio::select! {
                out = rx.recv() => match out { Some(o) => o, None => break },
                _ = tick.tick() => {
                    if !connected { continue; }
                    Outbound::Event { event: Arc::from("tick"), payload: Arc::from(json!({"ts": util::now_ms()}).to_string()) }
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
                    let _ = sink.send(Message::Close(Some(CloseFrame { code, reason: Utf8Bytes::from(reason) }))).await;
                    break;
                }
            };
            let sent = sink.send(Message::Text(Utf8Bytes::from(text))).await;
            writer_sender.sent(size);
            if sent.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });

    let nonce = util::uuid_v4();
    sender.send(Outbound::Event { event: Arc::from("connect.challenge"), payload: Arc::from(json!({"nonce": nonce, "ts": util::now_ms()}).to_string()) });

    let mut peer: Option<Peer> = None;
    while let Some(msg) = stream.next().await {
        let text = match msg {
            Ok(Message::Text(t)) => t,
            Ok(Message::Binary(_)) => {
                log::warn(&format!("conn {conn_id}: binary frame ignored"));
                continue;
            }
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        if peer.is_none() && text.len() > protocol::MAX_PRECONNECT_FRAME_BYTES {
            sender.send(Outbound::Close(CLOSE_TOO_BIG, "pre-connect frame exceeds 64 KiB".into()));
            break;
        }
        let frame = match Frame::parse_closed(&text) {
            Ok(Frame::Req(req)) => req,
            Ok(_) => {
                log::warn(&format!("conn {conn_id}: ignored a non-request frame from the client"));
                continue;
            }
            Err(e) => {
                // Answer if we can tell which request it was; otherwise log and go on.
                let id = serde_json::from_str::<serde_json::Value>(&text).ok().and_then(|v| v.get("id")?.as_str().map(str::to_string));
                log::warn(&format!("conn {conn_id}: malformed frame: {e}"));
                if let Some(id) = id.filter(|i| !i.is_empty()) {
                    sender.send(Outbound::Text(res_text(ResponseFrame::err(id, ErrorShape::invalid(e.0)))));
                }
                if peer.is_none() {
                    sender.send(Outbound::Close(CLOSE_POLICY, "first frame must be a connect request".into()));
                    break;
                }
                continue;
            }
        };
        match &peer {
            None => match connect(&gw, &frame, &headers, &nonce, &conn_id, &sender) {
                Ok(p) => {
                    gw.hub.join(p.clone());
                    peer = Some(p);
                }
                Err(()) => break,
            },
            Some(p) => {
                if frame.method == "connect" {
                    sender.send(Outbound::Text(res_text(ResponseFrame::err(frame.id, ErrorShape::invalid("already connected")))));
                    continue;
                }
                let gw = gw.clone();
                let p = p.clone();
                // Each request runs on its own task: a long `question.waitAnswer` must not
                // hold up the rest of the connection.
                tokio::spawn(async move {
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
                });
            }
        }
    }
    if peer.is_some() {
        gw.hub.leave(&conn_id);
    }
    drop(sender);
    let _ = tokio::time::timeout(Duration::from_secs(5), writer).await;
}

fn connect(gw: &Gateway, req: &RequestFrame, headers: &Headers, nonce: &str, conn_id: &str, sender: &ConnSender) -> Result<Peer, ()> {
    let fail = |e: ErrorShape| {
        log::warn(&format!("conn {conn_id}: connect refused: {} ({})", e.message, e.detail_code().unwrap_or(&e.code)));
        sender.send(Outbound::Text(res_text(ResponseFrame::err(req.id.clone(), e))));
        sender.send(Outbound::Close(CLOSE_POLICY, "connect refused".into()));
    };
    if req.method != "connect" {
        fail(ErrorShape::invalid(format!("the first request must be `connect`, not `{}`", protocol::frame::truncate(&req.method, 40))));
        return Err(());
    }
    let transport = Transport { origin: headers.origin.as_deref(), host: headers.host.as_deref(), challenge_nonce: nonce };
    let admitted = match admit(gw, req.params.clone().unwrap_or(json!({})), &transport) {
        Ok(a) => a,
        Err(e) => {
            fail(e);
            return Err(());
        }
    };
    let hello = hello_ok(gw, &admitted, conn_id);
    log::info(&format!("conn {conn_id}: connected {} with scopes [{}]", admitted.client_id, admitted.scopes.join(",")));
    sender.send(Outbound::Text(res_text(ResponseFrame::ok(req.id.clone(), serde_json::to_value(hello).unwrap_or_default()))));
    Ok(Peer { conn_id: conn_id.to_string(), scopes: admitted.scopes, owner: admitted.owner, sender: sender.clone() })
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
