//! Who may see a session, and the events each of its changes sends: the rules every feature
//! that touches sessions shares (`chat`, `sessions`, `agent`), below all of them.

use serde_json::{Value, json};

use crate::Gateway;
use crate::hub::Caller;
use protocol::error::{ErrorShape, code};

fn unavailable(e: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(code::UNAVAILABLE, format!("chat store unavailable: {e}"))
}

/// A guest may only touch sessions it owns; others see no such session.
pub fn check_session(gw: &Gateway, caller: &Caller<'_>, key: &str) -> Result<(), ErrorShape> {
    if caller.full {
        return Ok(());
    }
    match gw.store.session_owner(key).map_err(unavailable)? {
        Some(owner) if owner == caller.peer.owner => Ok(()),
        _ => Err(ErrorShape::invalid(format!("session '{key}' was not found"))),
    }
}

/// Whether a connection may receive events of a session.
pub fn peer_sees_session(gw: &Gateway, peer: &crate::hub::Peer, key: &str) -> bool {
    if peer.has_scope(protocol::methods::scope::READ) || peer.has_scope(protocol::methods::scope::WRITE) {
        return true;
    }
    let guest = peer.scopes.iter().any(|s| s == protocol::methods::scope::SESSIONS_READ || s == protocol::methods::scope::SESSIONS_WRITE);
    guest && gw.store.session_owner(key).ok().flatten().as_deref() == Some(peer.owner.as_str())
}

pub fn broadcast_message(gw: &Gateway, session: &str, saved: &Value) {
    let payload = json!({
        "sessionKey": session,
        "agentId": "main",
        "message": saved,
        "messageId": saved["__openclaw"]["id"],
        "messageSeq": saved["__openclaw"]["seq"],
        "hasActiveRun": gw.runs.active(session).is_some(),
    });
    gw.hub.broadcast("session.message", &payload, |p| peer_sees_session(gw, p, session));
}

/// An `agent` event for a run (its lifecycle and tool events).
pub fn agent_event(gw: &Gateway, session: &str, payload: Value) {
    gw.hub.broadcast("agent", &payload, |p| peer_sees_session(gw, p, session));
}

/// A `chat` event for a run.
pub fn chat_event(gw: &Gateway, session: &str, payload: Value) {
    gw.hub.broadcast("chat", &payload, |p| peer_sees_session(gw, p, session));
}
