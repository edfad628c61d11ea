//! Method dispatch with scope enforcement.

use protocol::error::ErrorShape;
use protocol::frame::RequestFrame;
use protocol::methods::access;
use serde_json::{Value, json};

use crate::Gateway;
use crate::hub::Peer;

/// Methods this gateway implements (advertised in `hello-ok`).
pub const IMPLEMENTED: &[&str] = &["health"];

pub async fn dispatch(gw: &Gateway, peer: &Peer, req: RequestFrame) -> Result<Value, ErrorShape> {
    let method = req.method.as_str();
    if !IMPLEMENTED.contains(&method) {
        return Err(ErrorShape::invalid(format!("unknown method: {}", protocol::frame::truncate(method, 64))));
    }
    match access(method, &peer.scopes) {
        Some(Ok(_)) => {}
        Some(Err((missing, required))) => return Err(ErrorShape::missing_scope(missing, &required)),
        None => return Err(ErrorShape::invalid(format!("unknown method: {method}"))),
    }
    let params = req.params.unwrap_or(json!({}));
    match method {
        "health" => {
            closed_empty(&params, method)?;
            Ok(json!({"ok": true, "uptimeMs": gw.started.elapsed().as_millis() as u64, "connections": gw.hub.count()}))
        }
        _ => unreachable!("IMPLEMENTED lists only handled methods"),
    }
}

/// For methods whose params are the closed empty object.
fn closed_empty(params: &Value, method: &str) -> Result<(), ErrorShape> {
    match params.as_object() {
        Some(o) if o.is_empty() => Ok(()),
        Some(o) => Err(ErrorShape::invalid(format!("invalid {method} params: unknown field `{}`", o.keys().next().map(String::as_str).unwrap_or("")))),
        None => Err(ErrorShape::invalid(format!("invalid {method} params: expected an object"))),
    }
}
