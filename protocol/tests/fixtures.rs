//! Round-trips the frames captured from the real OpenClaw gateway 2026.9.6 through our types,
//! and checks the captured device signatures with our verifier.

use protocol::closed::from_value_closed;
use protocol::connect::{ConnectChallenge, ConnectParams, HelloOk};
use protocol::device::{PayloadVersion, verify_connect};
use protocol::frame::Frame;
use protocol::question::{QuestionRecord, QuestionRequestParams, QuestionResolveParams, QuestionResolved, validate_questions};
use serde_json::Value;

const FILES: &[&str] = &[
    include_str!("data/rpc-answer-skip-expire.jsonl"),
    include_str!("data/mcp-ask_user-answer-skip-expire.jsonl"),
    include_str!("data/bundled-ui-answer.jsonl"),
    include_str!("data/bundled-ui-skip.jsonl"),
];

/// Every gateway frame (not the MCP JSON-RPC lines) in the captures.
fn frames() -> Vec<Value> {
    FILES
        .iter()
        .flat_map(|f| f.lines())
        .map(|l| serde_json::from_str::<Value>(l).expect("capture line is JSON"))
        .filter(|rec| rec.get("conn").and_then(Value::as_str) != Some("mcp"))
        .map(|rec| rec["frame"].clone())
        .collect()
}

fn payload_of(frame: &Value, field: &str) -> Value {
    frame.get(field).cloned().unwrap_or(Value::Null)
}

#[test]
fn every_captured_frame_parses_and_round_trips() {
    let all = frames();
    assert!(all.len() > 150, "expected the full captures, got {}", all.len());
    for raw in &all {
        let text = raw.to_string();
        let parsed = Frame::parse(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        let back: Value = serde_json::from_str(&parsed.to_json()).unwrap();
        assert_eq!(&back, raw, "frame changed in a round trip");
        // What clients send must also pass the gateway's closed parse.
        if raw["type"] == "req" {
            Frame::parse_closed(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        }
    }
}

#[test]
fn typed_payloads_round_trip_exactly() {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for raw in frames() {
        let name = raw.get("method").or_else(|| raw.get("event")).and_then(Value::as_str).unwrap_or("");
        match (raw["type"].as_str().unwrap(), name) {
            ("req", "connect") => {
                let p: ConnectParams = from_value_closed(payload_of(&raw, "params")).unwrap();
                p.check().unwrap();
                assert_eq!(serde_json::to_value(&p).unwrap(), raw["params"]);
                *counts.entry("connect").or_default() += 1;
            }
            ("req", "question.request") => {
                let p: QuestionRequestParams = from_value_closed(payload_of(&raw, "params")).unwrap();
                validate_questions(&p.questions).unwrap();
                assert_eq!(serde_json::to_value(&p).unwrap(), raw["params"]);
                *counts.entry("question.request").or_default() += 1;
            }
            ("req", "question.resolve") => {
                let p: QuestionResolveParams = from_value_closed(payload_of(&raw, "params")).unwrap();
                assert_eq!(serde_json::to_value(&p).unwrap(), raw["params"]);
                *counts.entry("question.resolve").or_default() += 1;
            }
            ("event", "connect.challenge") => {
                let p: ConnectChallenge = from_value_closed(payload_of(&raw, "payload")).unwrap();
                assert_eq!(serde_json::to_value(&p).unwrap(), raw["payload"]);
                *counts.entry("connect.challenge").or_default() += 1;
            }
            ("event", "question.requested") => {
                let p: QuestionRecord = from_value_closed(payload_of(&raw, "payload")).unwrap();
                validate_questions(&p.questions).unwrap();
                assert_eq!(serde_json::to_value(&p).unwrap(), raw["payload"]);
                *counts.entry("question.requested").or_default() += 1;
            }
            ("event", "question.resolved") => {
                let p: QuestionResolved = from_value_closed(payload_of(&raw, "payload")).unwrap();
                assert_eq!(serde_json::to_value(&p).unwrap(), raw["payload"]);
                *counts.entry("question.resolved").or_default() += 1;
            }
            ("res", _) => {
                let payload = payload_of(&raw, "payload");
                if payload.get("type").and_then(Value::as_str) == Some("hello-ok") {
                    // The captures abridge the feature lists; the full ones are in their own file.
                    let mut payload = payload.clone();
                    payload["features"] = serde_json::from_str(include_str!("data/hello-ok-features.json")).unwrap();
                    // ... and the snapshot; this one is the documented fresh-gateway snapshot.
                    payload["snapshot"] = serde_json::json!({"uptimeMs": 1, "authMode": "token", "sessionDefaults": {"defaultAgentId":"main","modelConfigured":false,"ownership":"sole","selectionRequired":false,"mainKey":"main","mainSessionKey":"agent:main:main","scope":"per-sender"}});
                    // What the UI reads of it agrees with the full decode.
                    let summary = protocol::connect::HelloSummary::read(&payload).unwrap();
                    let h: HelloOk = serde_json::from_value(payload).unwrap();
                    assert_eq!(summary.protocol, u64::from(h.protocol));
                    assert_eq!(summary.server_version, h.server.version);
                    assert_eq!(summary.scopes, h.auth.scopes);
                    assert_eq!(summary.device_token, h.auth.device_token);
                    assert_eq!(summary.tick_interval_ms, h.policy.tick_interval_ms);
                    assert_eq!(summary.main_session_key.as_deref(), Some("agent:main:main"));
                    assert_eq!(h.snapshot.session_defaults.unwrap().main_session_key.as_deref(), Some("agent:main:main"));
                    assert!(h.features.methods.iter().any(|m| m == "question.resolve"));
                    assert!(h.features.events.iter().any(|m| m == "question.resolved"));
                    assert_eq!(h.protocol, 4);
                    assert_eq!(h.server.version, "2026.9.6");
                    assert!(!h.auth.scopes.is_empty());
                    *counts.entry("hello-ok").or_default() += 1;
                }
                if let Some(q) = payload.get("question") {
                    let r: QuestionRecord = from_value_closed(q.clone()).unwrap();
                    assert_eq!(&serde_json::to_value(&r).unwrap(), q);
                    *counts.entry("question.get").or_default() += 1;
                }
            }
            _ => {}
        }
    }
    for kind in [
        "connect",
        "question.request",
        "question.resolve",
        "connect.challenge",
        "question.requested",
        "question.resolved",
        "hello-ok",
        "question.get",
    ] {
        assert!(counts.get(kind).copied().unwrap_or(0) > 0, "no {kind} seen in the captures: {counts:?}");
    }
}

#[test]
fn captured_device_signatures_verify_v3_and_v2() {
    let mut versions = Vec::new();
    for raw in frames() {
        if raw["method"] != "connect" {
            continue;
        }
        let p: ConnectParams = serde_json::from_value(raw["params"].clone()).unwrap();
        let Some(device) = &p.device else { continue };
        let nonce = device.nonce.clone().unwrap();
        let v = verify_connect(&p, &nonce, device.signed_at).expect("a signature the real gateway accepted");
        versions.push(v);
        // One flipped scope breaks it.
        let mut tampered = p.clone();
        tampered.scopes.as_mut().unwrap().reverse();
        assert!(verify_connect(&tampered, &nonce, device.signed_at).is_err());
    }
    assert!(versions.contains(&PayloadVersion::V3), "{versions:?}");
    assert!(versions.contains(&PayloadVersion::V2), "{versions:?}");
}
