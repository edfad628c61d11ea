//! Method dispatch with scope enforcement and closed-schema params.

use std::sync::Arc;

use protocol::error::ErrorShape;
use protocol::frame::RequestFrame;
use protocol::methods::{Access, access};
use protocol::question::{QuestionIdParams, QuestionRequestParams, QuestionResolveParams, QuestionWaitParams};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::hub::Peer;
use crate::{Gateway, approvals, chat, questions, sessions};
use protocol::approval::ApprovalKind;
use protocol::methods::method;

/// Methods this gateway implements (advertised in `hello-ok`).
pub const IMPLEMENTED: &[&str] = &[
    method::HEALTH,
    method::SESSIONS_LIST,
    method::SESSIONS_CREATE,
    method::SESSIONS_PATCH,
    method::SESSIONS_DESCRIBE,
    method::MODELS_LIST,
    method::SESSIONS_REWIND,
    method::SESSIONS_FORK,
    method::COMMANDS_LIST,
    method::SESSIONS_SEARCH,
    method::TASKS_LIST,
    method::TASKS_CANCEL,
    method::SESSIONS_ABORT,
    method::SESSIONS_SUBSCRIBE,
    method::SESSIONS_MESSAGES_SUBSCRIBE,
    method::SESSIONS_MESSAGES_UNSUBSCRIBE,
    method::CHAT_SEND,
    method::CHAT_HISTORY,
    method::CHAT_MESSAGE_GET,
    method::CHAT_ABORT,
    method::QUESTION_REQUEST,
    method::QUESTION_LIST,
    method::QUESTION_GET,
    method::QUESTION_RESOLVE,
    method::QUESTION_WAIT_ANSWER,
    method::EXEC_APPROVAL_REQUEST,
    method::EXEC_APPROVAL_LIST,
    method::EXEC_APPROVAL_GET,
    method::EXEC_APPROVAL_RESOLVE,
    method::EXEC_APPROVAL_WAIT_DECISION,
    method::PLUGIN_APPROVAL_REQUEST,
    method::PLUGIN_APPROVAL_LIST,
    method::PLUGIN_APPROVAL_RESOLVE,
    method::PLUGIN_APPROVAL_WAIT_DECISION,
    method::OPENCLAW_APPROVAL_LIST,
    method::APPROVAL_GET,
    method::APPROVAL_RESOLVE,
    method::APPROVAL_HISTORY,
    method::PUSH_VAPID_PUBLIC_KEY,
    method::PUSH_SUBSCRIBE,
    method::PUSH_UNSUBSCRIBE,
    method::PUSH_TEST,
    method::PUSH_PREFERENCES_GET,
    method::PUSH_PREFERENCES_SET,
];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubscribeParams {
    key: String,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    include_approvals: Option<bool>,
}

pub use crate::hub::Caller;

fn params<T: DeserializeOwned>(method: &str, v: Value) -> Result<T, ErrorShape> {
    // serde reads a struct from an array too (`[1, 2]` as `{limit: 1, offset: 2}`): params are
    // an object.
    if v.is_array() {
        return Err(ErrorShape::invalid(format!("invalid {method} params: invalid type: sequence, expected an object")));
    }
    protocol::closed::from_value_closed(v).map_err(|e| ErrorShape::invalid(format!("invalid {method} params: {e}")))
}

pub async fn dispatch(gw: &Arc<Gateway>, peer: &Peer, req: RequestFrame) -> Result<Value, ErrorShape> {
    let method = req.method.as_str();
    if !IMPLEMENTED.contains(&method) {
        return Err(ErrorShape::invalid(format!("unknown method: {}", protocol::frame::truncate(method, 64))));
    }
    let full = match access(method, &peer.scopes) {
        Some(Ok(a)) => a == Access::Full,
        Some(Err((missing, required))) => return Err(ErrorShape::missing_scope(missing, &required)),
        None => return Err(ErrorShape::invalid(format!("unknown method: {method}"))),
    };
    let caller = Caller { peer, full };
    // Two-phase approval requests answer this id twice.
    let req_id = req.id;
    let p = req.params.unwrap_or(json!({}));
    match method {
        method::HEALTH => {
            closed_empty(&p, method)?;
            Ok(json!({"ok": true, "uptimeMs": gw.started.elapsed().as_millis() as u64, "connections": gw.hub.count()}))
        }
        method::SESSIONS_CREATE => sessions::create(gw, &caller, params(method, p)?),
        method::SESSIONS_LIST => sessions::list(gw, &caller, params(method, p)?),
        method::SESSIONS_PATCH => sessions::patch(gw, &caller, sessions::params_strict(method, sessions::PATCH_KEYS, p)?),
        method::MODELS_LIST => {
            let _: serde_json::Map<String, Value> = sessions::params_strict(method, crate::models::LIST_KEYS, p.clone())?;
            crate::models::list(&p)
        }
        method::COMMANDS_LIST => crate::commands::list(gw, &caller, sessions::params_strict(method, crate::commands::LIST_KEYS, p)?),
        method::SESSIONS_ABORT => crate::tasks::session_abort(gw, &caller, sessions::params_strict(method, crate::tasks::ABORT_KEYS, p)?),
        method::TASKS_LIST => crate::tasks::list(gw, &caller, sessions::params_strict(method, crate::tasks::LIST_KEYS, p)?),
        method::TASKS_CANCEL => crate::tasks::cancel(gw, &caller, sessions::params_strict(method, crate::tasks::CANCEL_KEYS, p)?),
        method::SESSIONS_SEARCH => sessions::search(gw, &caller, sessions::params_strict(method, sessions::SEARCH_KEYS, p)?),
        method::SESSIONS_REWIND => sessions::rewind(gw, &caller, sessions::params_strict(method, sessions::CUT_KEYS, p)?),
        method::SESSIONS_FORK => sessions::fork(gw, &caller, sessions::params_strict(method, sessions::CUT_KEYS, p)?),
        method::SESSIONS_DESCRIBE => sessions::describe(gw, &caller, sessions::params_strict(method, sessions::DESCRIBE_KEYS, p)?),
        // `sessions.changed` of every visible session goes to every connection; subscribing is
        // accepted for compatibility with clients of the real gateway. With list params it
        // answers with the list too.
        method::SESSIONS_SUBSCRIBE => {
            if p.as_object().is_some_and(|o| o.is_empty()) {
                Ok(json!({"subscribed": true}))
            } else {
                let list = sessions::list(gw, &caller, params(method, p)?)?;
                Ok(json!({"subscribed": true, "list": list}))
            }
        }
        method::SESSIONS_MESSAGES_SUBSCRIBE | method::SESSIONS_MESSAGES_UNSUBSCRIBE => {
            let sp: SubscribeParams = params(method, p)?;
            let _ = (sp.agent_id, sp.include_approvals);
            Ok(json!({"subscribed": method.ends_with(".subscribe"), "key": questions::canonical_session_key(&sp.key)}))
        }
        method::PUSH_VAPID_PUBLIC_KEY => {
            closed_empty(&p, method)?;
            crate::push::vapid_public_key(gw)
        }
        method::PUSH_SUBSCRIBE => crate::push::subscribe(gw, &caller, params(method, p)?),
        method::PUSH_UNSUBSCRIBE => crate::push::unsubscribe(gw, &caller, params(method, p)?),
        method::PUSH_TEST => crate::push::test(gw, params(method, p)?).await,
        method::PUSH_PREFERENCES_GET => crate::push::preferences_get(gw, &caller, params(method, p)?),
        method::PUSH_PREFERENCES_SET => crate::push::preferences_set(gw, &caller, params(method, p)?),
        method::CHAT_SEND => chat::send(gw, &caller, params(method, p)?),
        method::CHAT_HISTORY => chat::history(gw, &caller, params(method, p)?),
        method::CHAT_MESSAGE_GET => chat::message_get(gw, &caller, sessions::params_strict(method, chat::MESSAGE_GET_KEYS, p)?),
        method::CHAT_ABORT => chat::abort(gw, &caller, params(method, p)?),
        method::QUESTION_REQUEST => questions::request(gw, params::<QuestionRequestParams>(method, p)?),
        method::QUESTION_LIST => {
            closed_empty(&p, method)?;
            Ok(questions::list(gw, &caller))
        }
        method::QUESTION_GET => questions::get(gw, &caller, &params::<QuestionIdParams>(method, p)?.id),
        method::QUESTION_RESOLVE => questions::resolve(gw, &caller, params::<QuestionResolveParams>(method, p)?),
        method::QUESTION_WAIT_ANSWER => {
            let w: QuestionWaitParams = params(method, p)?;
            questions::wait_answer(gw, &caller, &w.id, w.timeout_ms, w.include_resolution_id == Some(true)).await
        }
        method::EXEC_APPROVAL_REQUEST => approvals::request_exec(gw, &caller, &req_id, params(method, p)?).await,
        method::PLUGIN_APPROVAL_REQUEST => approvals::request_plugin(gw, &caller, &req_id, params(method, p)?).await,
        method::EXEC_APPROVAL_LIST | method::PLUGIN_APPROVAL_LIST | method::OPENCLAW_APPROVAL_LIST => {
            closed_empty(&p, method)?;
            Ok(approvals::list(gw, kind_of(method)))
        }
        method::EXEC_APPROVAL_GET => approvals::exec_get(gw, &params::<approvals::IdParams>(method, p)?.id),
        method::EXEC_APPROVAL_RESOLVE | method::PLUGIN_APPROVAL_RESOLVE => {
            approvals::resolve_kind(gw, &caller, kind_of(method), params(method, p)?)
        }
        method::EXEC_APPROVAL_WAIT_DECISION | method::PLUGIN_APPROVAL_WAIT_DECISION => {
            approvals::wait_decision(gw, kind_of(method), &params::<approvals::IdParams>(method, p)?.id).await
        }
        method::APPROVAL_GET => approvals::get(gw, &params::<approvals::IdParams>(method, p)?.id),
        method::APPROVAL_RESOLVE => approvals::resolve(gw, &caller, params(method, p)?),
        method::APPROVAL_HISTORY => approvals::history(gw, params(method, p)?),
        _ => unreachable!("IMPLEMENTED lists only handled methods"),
    }
}

/// The approval kind of an `exec.*`, `plugin.*` or `openclaw.*` approval method.
fn kind_of(method: &str) -> ApprovalKind {
    ApprovalKind::ALL.into_iter().find(|k| method.starts_with(&format!("{}.", k.prefix()))).unwrap_or(ApprovalKind::Exec)
}

/// For methods whose params are the closed empty object.
fn closed_empty(params: &Value, method: &str) -> Result<(), ErrorShape> {
    match params.as_object() {
        Some(o) if o.is_empty() => Ok(()),
        Some(o) => Err(ErrorShape::invalid(format!(
            "invalid {method} params: unknown field `{}`",
            o.keys().next().map(String::as_str).unwrap_or("")
        ))),
        None => Err(ErrorShape::invalid(format!("invalid {method} params: expected an object"))),
    }
}
