//! The conversation list over real sockets, as OpenClaw 2026.9.6 does it
//! (`docs/sessions-protocol-notes.md`): `sessions.list` paging, search and archive filter,
//! `sessions.create`, `sessions.patch` (rename, archive, restore), `sessions.describe`, the
//! `sessions.changed` events, the `chat.history` display cap and `chat.message.get`.

use std::collections::HashSet;
use std::time::Duration;

mod common;

use gateway::Running;
use gateway::client::{Client, ClientOptions};
use protocol::device::DeviceIdentity;
use protocol::methods::scope;
use serde_json::{Value, json};

const TOKEN: &str = "sessions-aa1fefd012a9fd071e6b6dfbe07f41e9";
const T: Duration = Duration::from_secs(10);

async fn start() -> (Running, tempfile::TempDir) {
    common::start_with(TOKEN, |_| {}).await
}

async fn client(gw: &Running) -> Client {
    Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::ADMIN])).await.unwrap()
}

/// A Control UI device with only the guest scope (its own sessions).
async fn guest(gw: &Running, seed: u8) -> Client {
    let mut opts = ClientOptions::control_ui(
        &format!("ws://{}", gw.addr),
        TOKEN,
        &format!("http://{}", gw.addr),
        DeviceIdentity::from_seed([seed; 32]),
    );
    opts.scopes = vec![scope::SESSIONS_WRITE.into()];
    Client::connect(opts).await.unwrap()
}

async fn create(c: &mut Client, params: Value) -> Value {
    c.request("sessions.create", params).await.unwrap()
}

async fn describe(c: &mut Client, key: &str) -> Value {
    // (sessions.describe answers null for a key it does not know.)
    c.request("sessions.describe", json!({"key": key})).await.unwrap()["session"].clone()
}

fn keys(page: &Value) -> Vec<String> {
    page["sessions"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap().to_string()).collect()
}

/// Waits for `sessions.changed` with `reason` for `key`, skipping others.
async fn changed(c: &mut Client, key: &str, reason: &str) -> Value {
    loop {
        let ev = c.next_event("sessions.changed", T).await.unwrap_or_else(|| panic!("no sessions.changed {reason} for {key}"));
        let p = ev.payload.unwrap();
        if p["sessionKey"] == key && p["reason"] == reason {
            return p;
        }
    }
}

/// Waits for the run's terminal `chat` event.
async fn terminal(c: &mut Client, run_id: &str) -> Value {
    loop {
        let p = c.next_event("chat", T).await.expect("a chat event").payload.unwrap();
        if p["runId"] == run_id && ["final", "aborted", "error"].contains(&p["state"].as_str().unwrap_or("")) {
            return p;
        }
    }
}

fn is_uuid_v4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && s.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
        && parts[2].starts_with('4')
}

#[tokio::test]
async fn the_list_pages_with_next_offset_and_search_finds_one_beyond_the_first_hundred() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    // The needle is made first: the oldest, so the last row of the list.
    let needle = create(&mut c, json!({"agentId": "main", "label": "Needle In Hay"})).await;
    let needle_key = needle["key"].as_str().unwrap().to_string();
    let needle_id = needle["sessionId"].as_str().unwrap().to_string();
    for i in 0..150 {
        create(&mut c, json!({"label": format!("hay {i}")})).await;
    }
    let mut seen = Vec::new();
    let mut offset = 0u64;
    let mut pages = 0;
    loop {
        let page = c.request("sessions.list", json!({"limit": 50, "offset": offset, "includeDerivedTitles": true})).await.unwrap();
        pages += 1;
        assert_eq!(page["totalCount"], 151, "{page}");
        assert_eq!(page["limitApplied"], 50);
        assert_eq!(page["count"], page["sessions"].as_array().unwrap().len());
        seen.extend(keys(&page));
        match page["nextOffset"].as_u64() {
            Some(next) => {
                assert_eq!(page["hasMore"], true);
                assert_eq!(next, offset + 50);
                offset = next;
            }
            None => {
                assert!(page["nextOffset"].is_null(), "nextOffset is null at the end: {}", page["nextOffset"]);
                assert_eq!(page["hasMore"], false);
                assert_eq!(page["count"], 1, "the last page holds the one row after 150");
                break;
            }
        }
    }
    assert_eq!(pages, 4);
    assert_eq!(seen.len(), 151);
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 151, "no row twice");
    assert_eq!(seen.last(), Some(&needle_key), "newest first: the needle, made first, is last");
    assert!(!seen[..100].contains(&needle_key));
    // Newest activity first.
    let all = c.request("sessions.list", json!({"limit": 1000})).await.unwrap();
    let times: Vec<i64> = all["sessions"].as_array().unwrap().iter().map(|r| r["updatedAt"].as_i64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    // Search: case-insensitive, over the label, a fragment of the sessionId, the key.
    for search in ["nEEDLE in", &needle_id[..8].to_uppercase(), &needle_key[needle_key.len() - 10..]] {
        let found = c.request("sessions.list", json!({"search": search, "limit": 50})).await.unwrap();
        assert_eq!(keys(&found), vec![needle_key.clone()], "search {search}");
        assert_eq!((found["totalCount"].clone(), found["hasMore"].clone()), (json!(1), json!(false)));
    }
    let hay = c.request("sessions.list", json!({"search": "hay 1", "limit": 5})).await.unwrap();
    // "hay 1", "hay 10".."hay 19", "hay 100".."hay 149".
    assert_eq!((hay["totalCount"].clone(), hay["count"].clone(), hay["nextOffset"].clone()), (json!(61), json!(5), json!(5)));
    let none = c.request("sessions.list", json!({"search": "zebra"})).await.unwrap();
    assert_eq!((none["count"].clone(), none["totalCount"].clone()), (json!(0), json!(0)));
    // Rows carry what the list shows.
    let row = &c.request("sessions.list", json!({"search": "needle", "includeDerivedTitles": true})).await.unwrap()["sessions"][0];
    assert_eq!(row["sessionId"], needle_id.as_str());
    assert_eq!((row["kind"].as_str(), row["isMain"].as_bool(), row["archived"].as_bool()), (Some("direct"), Some(false), Some(false)));
    assert_eq!((row["label"].as_str(), row["displayName"].as_str()), (Some("Needle In Hay"), Some("Needle In Hay")));
    assert_eq!(row["derivedTitle"], "Needle In Hay");
    assert_eq!((row["hasActiveRun"].clone(), row["activeRunIds"].clone()), (json!(false), json!([])));
    assert!(row["createdAt"].is_i64() && row["updatedAt"].is_i64() && row["lastInteractionAt"].is_i64(), "{row}");
    // Closed params, as the real gateway's.
    let e = c.request("sessions.list", json!({"includeArchived": true})).await.unwrap_err();
    assert!(e.code == "INVALID_REQUEST" && e.message.contains("includeArchived"), "{e:?}");
    let e = c.request("sessions.list", json!({"limit": 0})).await.unwrap_err();
    assert_eq!(e.code, "INVALID_REQUEST");
}

#[tokio::test]
async fn archived_sessions_are_left_out_unless_asked_for() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let a = create(&mut c, json!({"label": "Alpha"})).await;
    let b = create(&mut c, json!({"label": "Beta"})).await;
    let (a_key, b_key) = (a["key"].as_str().unwrap(), b["key"].as_str().unwrap());
    let r = c.request("sessions.patch", json!({"key": a_key, "archived": true, "expectedSessionId": a["sessionId"]})).await.unwrap();
    assert!(r["entry"]["archivedAt"].is_i64(), "{r}");
    let default = c.request("sessions.list", json!({})).await.unwrap();
    assert_eq!(keys(&default), vec![b_key.to_string()]);
    let explicit = c.request("sessions.list", json!({"archived": false})).await.unwrap();
    assert_eq!(keys(&explicit), vec![b_key.to_string()]);
    let archived = c.request("sessions.list", json!({"archived": true})).await.unwrap();
    assert_eq!(keys(&archived), vec![a_key.to_string()]);
    assert_eq!(archived["sessions"][0]["archived"], true);
    assert!(archived["sessions"][0]["archivedAt"].is_i64());
    let all: HashSet<String> = keys(&c.request("sessions.list", json!({"archived": "all"})).await.unwrap()).into_iter().collect();
    assert_eq!(all, HashSet::from([a_key.to_string(), b_key.to_string()]));
    // Search applies within the filter.
    let none = c.request("sessions.list", json!({"search": "alpha"})).await.unwrap();
    assert_eq!(none["totalCount"], 0);
    let e = c.request("sessions.list", json!({"archived": "some"})).await.unwrap_err();
    assert_eq!(e.code, "INVALID_REQUEST");
}

#[tokio::test]
async fn create_makes_a_dashboard_key_and_refuses_a_used_label_or_an_unknown_agent() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let made = create(&mut c, json!({"agentId": "main", "label": "Probe Alpha"})).await;
    let key = made["key"].as_str().unwrap();
    let uuid = key.strip_prefix("agent:main:dashboard:").unwrap_or_else(|| panic!("generated key {key}"));
    assert!(is_uuid_v4(uuid), "{key}");
    assert!(is_uuid_v4(made["sessionId"].as_str().unwrap()), "{made}");
    assert_eq!((made["ok"].clone(), made["runStarted"].clone()), (json!(true), json!(false)));
    assert_eq!(made["entry"]["label"], "Probe Alpha");
    assert_eq!(made["entry"]["parentSessionKey"], "agent:main:main");
    // No label needed, and `/new`'s params are accepted.
    let bare = create(&mut c, json!({})).await;
    assert!(bare["key"].as_str().unwrap().starts_with("agent:main:dashboard:"));
    assert_ne!(bare["key"], made["key"]);
    let new = create(&mut c, json!({"agentId": "main", "parentSessionKey": key, "emitCommandHooks": true, "succeedsParent": false})).await;
    assert_eq!(new["entry"]["parentSessionKey"], key);
    // A used label is refused, and nothing is made.
    let e = c.request("sessions.create", json!({"agentId": "main", "label": "Probe Alpha"})).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("INVALID_REQUEST", "label already in use: Probe Alpha"));
    let e = c.request("sessions.create", json!({"agentId": "nope"})).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("INVALID_REQUEST", "Unknown agent id \"nope\""));
    let e = c.request("sessions.create", json!({"label": ""})).await.unwrap_err();
    assert!(e.message.contains("at /label: must not have fewer than 1 characters"), "{}", e.message);
    let listed = c.request("sessions.list", json!({})).await.unwrap();
    assert_eq!(listed["totalCount"], 3, "{listed}");
    // A literal key: the same key again is that session (same sessionId).
    let lit = create(&mut c, json!({"key": "probe-literal"})).await;
    assert_eq!(lit["key"], "agent:main:probe-literal");
    let again = create(&mut c, json!({"key": "probe-literal"})).await;
    assert_eq!(again["sessionId"], lit["sessionId"]);
}

#[tokio::test]
async fn rename_refuses_a_used_label_and_null_clears_it() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let a = create(&mut c, json!({"label": "First"})).await["key"].as_str().unwrap().to_string();
    let b = create(&mut c, json!({})).await["key"].as_str().unwrap().to_string();
    let r = c.request("sessions.patch", json!({"key": b, "label": "Probe Renamed"})).await.unwrap();
    assert_eq!((r["ok"].clone(), r["key"].clone(), r["entry"]["label"].clone()), (json!(true), json!(b), json!("Probe Renamed")));
    let row = describe(&mut c, &b).await;
    assert_eq!((row["label"].as_str(), row["displayName"].as_str()), (Some("Probe Renamed"), Some("Probe Renamed")));
    let e = c.request("sessions.patch", json!({"key": a, "label": "Probe Renamed"})).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("INVALID_REQUEST", "label already in use: Probe Renamed"));
    assert_eq!(describe(&mut c, &a).await["label"], "First", "the refused rename changed nothing");
    // Its own label again is fine.
    c.request("sessions.patch", json!({"key": b, "label": "Probe Renamed"})).await.unwrap();
    let r = c.request("sessions.patch", json!({"key": b, "label": null})).await.unwrap();
    assert!(r["entry"].get("label").is_none(), "{r}");
    let row = describe(&mut c, &b).await;
    assert!(row.get("label").is_none() && row.get("displayName").is_none(), "{row}");
    // Cleared, the label is free again.
    c.request("sessions.patch", json!({"key": a, "label": "Probe Renamed"})).await.unwrap();
    let e = c.request("sessions.patch", json!({"key": a, "verboseLevel": "on"})).await.unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("INVALID_REQUEST", "invalid sessions.patch params: at root: unexpected property 'verboseLevel'")
    );
    let e = c.request("sessions.patch", json!({"key": a, "label": ""})).await.unwrap_err();
    assert!(e.message.contains("at /label: must not have fewer than 1 characters"), "{}", e.message);
    let e = c.request("sessions.patch", json!({"key": a, "label": "x".repeat(513)})).await.unwrap_err();
    assert!(e.message.contains("must not have more than 512 characters"), "{}", e.message);
}

#[tokio::test]
async fn archive_needs_the_session_id_refuses_main_and_restores() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let made = create(&mut c, json!({"label": "Probe Alpha"})).await;
    let (key, id) = (made["key"].as_str().unwrap().to_string(), made["sessionId"].as_str().unwrap().to_string());
    let e = c.request("sessions.patch", json!({"key": key, "archived": true})).await.unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.clone()),
        ("INVALID_REQUEST", format!("expectedSessionId required for session lifecycle patch: {key}"))
    );
    let e = c.request("sessions.patch", json!({"key": key, "archived": true, "expectedSessionId": "not-it"})).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.message.clone()), ("INVALID_REQUEST", format!("Session {key} changed before patch. Retry.")));
    assert_eq!(e.detail_reason(), Some("session-changed"));
    assert_eq!(describe(&mut c, &key).await["archived"], false, "refused: still active");
    // The main session, used or not, is never archived.
    let main_id = describe(&mut c, "agent:main:main").await;
    assert!(main_id.is_null(), "main has no row until used: {main_id}");
    c.request("chat.send", json!({"sessionKey": "main", "message": "hi", "idempotencyKey": "m-1"})).await.unwrap();
    terminal(&mut c, "m-1").await;
    let main = describe(&mut c, "agent:main:main").await;
    assert_eq!(main["isMain"], true);
    for k in ["agent:main:main", "main"] {
        let e = c.request("sessions.patch", json!({"key": k, "archived": true, "expectedSessionId": main["sessionId"]})).await.unwrap_err();
        assert_eq!((e.code.as_str(), e.message.as_str()), ("INVALID_REQUEST", "Cannot archive an agent's main session."));
        assert!(e.details.is_none());
    }
    // Archive, again (idempotent), restore.
    let r = c.request("sessions.patch", json!({"key": key, "archived": true, "expectedSessionId": id})).await.unwrap();
    let at = r["entry"]["archivedAt"].as_i64().expect("archivedAt");
    assert_eq!(r["entry"]["sessionId"], id.as_str());
    let row = describe(&mut c, &key).await;
    assert_eq!((row["archived"].clone(), row["archivedAt"].clone()), (json!(true), json!(at)));
    let again = c.request("sessions.patch", json!({"key": key, "archived": true, "expectedSessionId": id})).await.unwrap();
    assert_eq!(again["entry"]["archivedAt"], at);
    let e = c.request("sessions.patch", json!({"key": key, "archived": false})).await.unwrap_err();
    assert!(e.message.starts_with("expectedSessionId required"), "{}", e.message);
    let r = c.request("sessions.patch", json!({"key": key, "archived": false, "expectedSessionId": id})).await.unwrap();
    assert!(r["entry"].get("archivedAt").is_none(), "{r}");
    let row = describe(&mut c, &key).await;
    assert!(row["archived"] == false && row.get("archivedAt").is_none(), "{row}");
    // A key that does not exist cannot match any id.
    let e = c.request("sessions.patch", json!({"key": "agent:main:ghost", "archived": true, "expectedSessionId": id})).await.unwrap_err();
    assert_eq!(e.detail_reason(), Some("session-changed"));
    assert!(describe(&mut c, "agent:main:ghost").await.is_null());
}

#[tokio::test]
async fn an_archived_session_takes_no_new_message_and_archiving_stops_its_run() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let made = create(&mut c, json!({"label": "Busy"})).await;
    let (key, id) = (made["key"].as_str().unwrap().to_string(), made["sessionId"].clone());
    c.request("chat.send", json!({"sessionKey": key, "message": "slow please", "idempotencyKey": "slow-1"})).await.unwrap();
    // The run is going (its first delta), then the archive stops it.
    loop {
        let p = c.next_event("chat", T).await.unwrap().payload.unwrap();
        if p["runId"] == "slow-1" && p["state"] == "delta" {
            break;
        }
    }
    c.request("sessions.patch", json!({"key": key, "archived": true, "expectedSessionId": id})).await.unwrap();
    assert_eq!(terminal(&mut c, "slow-1").await["state"], "aborted");
    let settled = changed(&mut c, &key, "agent.input.settled").await;
    assert_eq!((settled["session"]["status"].as_str(), settled["session"]["hasActiveRun"].as_bool()), (Some("killed"), Some(false)));
    let e = c.request("chat.send", json!({"sessionKey": key, "message": "more", "idempotencyKey": "after-archive"})).await.unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.message.clone()),
        ("INVALID_REQUEST", format!("Session \"{key}\" is archived. Restore it before starting new work."))
    );
    assert_eq!(gw.gateway.store.user_texts(&key).unwrap(), vec!["slow please".to_string()], "nothing was saved");
    c.request("sessions.patch", json!({"key": key, "archived": false, "expectedSessionId": id})).await.unwrap();
    let ack = c.request("chat.send", json!({"sessionKey": key, "message": "back", "idempotencyKey": "after-restore"})).await.unwrap();
    assert_eq!(ack["status"], "started");
    terminal(&mut c, "after-restore").await;
}

#[tokio::test]
async fn another_connection_sees_create_send_settled_and_patch_and_a_guest_only_its_own() {
    let (gw, _d) = start().await;
    let mut a = client(&gw).await;
    let mut watcher = client(&gw).await;
    let mut g = guest(&gw, 41).await;
    assert_eq!(watcher.request("sessions.subscribe", json!({})).await.unwrap(), json!({"subscribed": true}));
    let made = create(&mut a, json!({"agentId": "main", "label": "Watched"})).await;
    let key = made["key"].as_str().unwrap().to_string();
    let ev = changed(&mut watcher, &key, "create").await;
    assert_eq!((ev["agentId"].as_str(), ev["sessionId"].clone()), (Some("main"), made["sessionId"].clone()));
    assert!(ev["ts"].is_i64());
    let row = &ev["session"];
    assert_eq!(
        (row["key"].as_str(), row["label"].as_str(), row["derivedTitle"].as_str()),
        (Some(key.as_str()), Some("Watched"), Some("Watched"))
    );
    assert_eq!((row["hasActiveRun"].clone(), row["activeRunIds"].clone()), (json!(false), json!([])));

    a.request("chat.send", json!({"sessionKey": key, "message": "hello watcher", "idempotencyKey": "w-1"})).await.unwrap();
    let send = changed(&mut watcher, &key, "send").await;
    let row = &send["session"];
    assert_eq!(
        (row["hasActiveRun"].clone(), row["activeRunIds"].clone(), row["status"].clone()),
        (json!(true), json!(["w-1"]), json!("running"))
    );
    let settled = changed(&mut watcher, &key, "agent.input.settled").await;
    let row = &settled["session"];
    assert_eq!((row["hasActiveRun"].clone(), row["activeRunIds"].clone(), row["status"].clone()), (json!(false), json!([]), json!("done")));
    assert_eq!(row["lastRunId"], "w-1");

    a.request("chat.send", json!({"sessionKey": key, "message": "fail now", "idempotencyKey": "w-2"})).await.unwrap();
    let settled = changed(&mut watcher, &key, "agent.input.settled").await;
    assert_eq!(settled["session"]["status"], "failed");

    a.request("sessions.patch", json!({"key": key, "label": "Watched Renamed"})).await.unwrap();
    let patch = changed(&mut watcher, &key, "patch").await;
    assert_eq!(patch["session"]["label"], "Watched Renamed");
    a.request("sessions.patch", json!({"key": key, "archived": true, "expectedSessionId": made["sessionId"]})).await.unwrap();
    let patch = changed(&mut watcher, &key, "patch").await;
    assert_eq!(patch["session"]["archived"], true);
    assert!(patch["session"]["archivedAt"].is_i64());

    // A session first made by chat.send: create, then send.
    a.request("chat.send", json!({"sessionKey": "fresh-by-send", "message": "hi", "idempotencyKey": "w-3"})).await.unwrap();
    let ev = watcher.next_event("sessions.changed", T).await.unwrap().payload.unwrap();
    assert_eq!((ev["sessionKey"].as_str(), ev["reason"].as_str()), (Some("agent:main:fresh-by-send"), Some("create")));
    let ev = watcher.next_event("sessions.changed", T).await.unwrap().payload.unwrap();
    assert_eq!((ev["sessionKey"].as_str(), ev["reason"].as_str()), (Some("agent:main:fresh-by-send"), Some("send")));

    // The guest sees the events of its own session only.
    let own = create(&mut g, json!({"label": "Guest own"})).await;
    let own_key = own["key"].as_str().unwrap().to_string();
    assert!(own_key.starts_with("agent:main:dashboard:"), "a guest's conversation gets a key the gateway picks: {own}");
    g.request("sessions.patch", json!({"key": own_key, "label": "Mine"})).await.unwrap();
    // Every change the guest received, from its first moment on.
    let mut reasons = Vec::new();
    while let Some(ev) = g.next_event("sessions.changed", Duration::from_millis(500)).await {
        let p = ev.payload.unwrap();
        assert_eq!(p["sessionKey"], own_key.as_str(), "the guest saw another session's change: {p}");
        assert_eq!(p["session"]["key"], own_key.as_str());
        reasons.push(p["reason"].as_str().unwrap().to_string());
    }
    assert_eq!(reasons, ["create", "patch"]);
    assert_eq!(keys(&g.request("sessions.list", json!({"archived": "all"})).await.unwrap()), vec![own_key.clone()]);
    assert!(g.request("sessions.describe", json!({"key": key})).await.unwrap()["session"].is_null());
    let e = g.request("sessions.patch", json!({"key": key, "label": "Taken over"})).await.unwrap_err();
    assert!(e.message.contains("was not found"), "{}", e.message);
    // Subscribing with list params answers with the list too.
    let sub = watcher.request("sessions.subscribe", json!({"limit": 1})).await.unwrap();
    assert_eq!((sub["subscribed"].clone(), sub["list"]["count"].clone()), (json!(true), json!(1)));
}

#[tokio::test]
async fn history_caps_long_texts_and_chat_message_get_returns_them_whole() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let long = "U".repeat(9000);
    c.request("chat.send", json!({"sessionKey": "long", "message": long, "idempotencyKey": "long-1"})).await.unwrap();
    terminal(&mut c, "long-1").await;
    let h = c.request("chat.history", json!({"sessionKey": "long"})).await.unwrap();
    let (user, reply) = (&h["messages"][0], &h["messages"][1]);
    let shown = user["content"].as_str().unwrap();
    assert_eq!(shown.len(), 8018);
    assert_eq!(shown, format!("{}\n...(truncated)...", "U".repeat(8000)));
    assert_eq!((user["__openclaw"]["truncated"].clone(), user["__openclaw"]["reason"].clone()), (json!(true), json!("display-cap")));
    let reply_text = reply["content"][0]["text"].as_str().unwrap();
    assert_eq!(reply_text.chars().count(), 8018);
    assert!(reply_text.starts_with("You said: UUU") && reply_text.ends_with("\n...(truncated)..."));
    assert_eq!(reply["__openclaw"]["reason"], "display-cap");
    let small = c.request("chat.history", json!({"sessionKey": "long", "maxChars": 100})).await.unwrap();
    assert_eq!(small["messages"][0]["content"], format!("{}\n...(truncated)...", "U".repeat(100)));
    let whole_cap = c.request("chat.history", json!({"sessionKey": "long", "maxChars": 500000})).await.unwrap();
    assert_eq!(whole_cap["messages"][0]["content"], long.as_str());
    assert!(whole_cap["messages"][0]["__openclaw"].get("truncated").is_none());
    for bad in [0u64, 500_001] {
        let e = c.request("chat.history", json!({"sessionKey": "long", "maxChars": bad})).await.unwrap_err();
        assert!(e.code == "INVALID_REQUEST" && e.message.contains("maxChars"), "{e:?}");
    }
    // Short rows are untouched.
    c.request("chat.send", json!({"sessionKey": "long", "message": "short", "idempotencyKey": "long-2"})).await.unwrap();
    terminal(&mut c, "long-2").await;
    let h = c.request("chat.history", json!({"sessionKey": "long"})).await.unwrap();
    assert_eq!(h["messages"][2]["content"], "short");
    assert!(h["messages"][2]["__openclaw"].get("truncated").is_none());

    // The whole message by its id.
    let id = user["__openclaw"]["id"].as_str().unwrap();
    let got = c.request("chat.message.get", json!({"sessionKey": "long", "messageId": id})).await.unwrap();
    assert_eq!(got["ok"], true);
    assert_eq!(got["message"]["content"], long.as_str());
    assert!(got["message"]["__openclaw"].get("truncated").is_none());
    assert_eq!(got["message"]["__openclaw"]["id"], id);
    let reply_id = reply["__openclaw"]["id"].as_str().unwrap();
    let got = c.request("chat.message.get", json!({"sessionKey": "agent:main:long", "messageId": reply_id})).await.unwrap();
    assert_eq!(got["message"]["content"][0]["text"], format!("You said: {long}"));
    let capped = c.request("chat.message.get", json!({"sessionKey": "long", "messageId": id, "maxChars": 100})).await.unwrap();
    assert_eq!(capped["message"]["content"], format!("{}\n...(truncated)...", "U".repeat(100)));
    assert_eq!(capped["message"]["__openclaw"]["reason"], "display-cap");
    for (session, message) in [("long", "no-such-id"), ("no-such-session", id), ("main", id)] {
        let r = c.request("chat.message.get", json!({"sessionKey": session, "messageId": message})).await.unwrap();
        assert_eq!(r, json!({"ok": false, "unavailableReason": "not_found"}), "{session} {message}");
    }
    let e = c.request("chat.message.get", json!({"sessionKey": "long", "messageId": id, "maxChars": 2_000_001})).await.unwrap_err();
    assert_eq!(e.code, "INVALID_REQUEST");
    let e = c.request("chat.message.get", json!({"sessionKey": "long", "messageId": id, "bogus": 1})).await.unwrap_err();
    assert_eq!(e.message, "invalid chat.message.get params: at root: unexpected property 'bogus'");
    // A guest may not read another's message.
    let mut g = guest(&gw, 42).await;
    let r = g.request("chat.message.get", json!({"sessionKey": "long", "messageId": id})).await.unwrap();
    assert_eq!(r["ok"], false);
}

#[tokio::test]
async fn describe_gives_the_row_with_its_derived_title_or_null() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    assert_eq!(c.request("sessions.describe", json!({"key": "agent:main:main"})).await.unwrap(), json!({"session": null}));
    assert!(describe(&mut c, "nothing-here").await.is_null());
    c.request(
        "chat.send",
        json!({"sessionKey": "described", "message": "Plan the quarterly review\nwith details", "idempotencyKey": "d-1"}),
    )
    .await
    .unwrap();
    terminal(&mut c, "d-1").await;
    let row = describe(&mut c, "described").await;
    assert_eq!(row["key"], "agent:main:described");
    assert_eq!(row["derivedTitle"], "Plan the quarterly review");
    assert!(row.get("label").is_none());
    assert_eq!((row["kind"].as_str(), row["isMain"].as_bool(), row["status"].as_str()), (Some("direct"), Some(false), Some("done")));
    assert!(is_uuid_v4(row["sessionId"].as_str().unwrap()));
    // The list shows the derived title only when asked for, and the last message with its flag.
    let list = c.request("sessions.list", json!({})).await.unwrap();
    assert!(list["sessions"][0].get("derivedTitle").is_none(), "{list}");
    let list = c.request("sessions.list", json!({"includeDerivedTitles": true, "includeLastMessage": true})).await.unwrap();
    assert_eq!(list["sessions"][0]["derivedTitle"], "Plan the quarterly review");
    assert!(list["sessions"][0]["lastMessagePreview"].as_str().unwrap().starts_with("You said: Plan"), "{list}");
    // The title derived from the first message is searched; the rest of the text is not.
    let found = c.request("sessions.list", json!({"search": "QUARTERLY"})).await.unwrap();
    assert_eq!(found["totalCount"], 1);
    for unsearched in ["with details", "You said"] {
        let found = c.request("sessions.list", json!({"search": unsearched})).await.unwrap();
        assert_eq!(found["totalCount"], 0, "{unsearched}");
    }
    let e = c.request("sessions.describe", json!({"key": "described", "agentId": "other"})).await.unwrap_err();
    assert_eq!(e.message, "Unknown agent id \"other\"");
    let e = c.request("sessions.describe", json!({"key": "described", "x": 1})).await.unwrap_err();
    assert_eq!(e.message, "invalid sessions.describe params: at root: unexpected property 'x'");
}

/// The demo agent's models, as the real gateway offers a configured catalogue: `models.list`
/// names both, a conversation's row names its model and levels, `sessions.patch` changes the
/// model (by value or alias) and the level (checked against the model, which a new model
/// clamps), and after a run the row carries the context's tokens and the run's own, its reply
/// naming the model that wrote it.
#[tokio::test]
async fn a_conversation_changes_its_model_and_effort_and_reports_its_usage() {
    let (gw, _dir) = start().await;
    let mut c = client(&gw).await;
    let models = c.request("models.list", json!({"view": "configured"})).await.unwrap();
    let ids: Vec<&str> = models["models"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["quick", "deep"]);
    assert_eq!(models["models"][1]["thinkingLevels"][4], json!({"id": "high", "label": "high"}));
    assert!(c.request("models.list", json!({"view": "mine"})).await.is_err());

    let key = create(&mut c, json!({"label": "models"})).await["key"].as_str().unwrap().to_string();
    let row = describe(&mut c, &key).await;
    assert_eq!((row["modelProvider"].as_str(), row["model"].as_str()), (Some("demo"), Some("quick")));
    assert_eq!(row["contextTokens"], 32000);
    assert!(row.get("thinkingLevel").is_none() && row.get("totalTokens").is_none(), "{row}");

    let refused = c.request("sessions.patch", json!({"key": key, "thinkingLevel": "high"})).await.unwrap_err();
    assert!(refused.message.contains("not supported for demo/quick"), "{refused:?}");
    let unknown = c.request("sessions.patch", json!({"key": key, "model": "gpt-9"})).await.unwrap_err();
    assert_eq!(unknown.message, "model not allowed: gpt-9");

    let done = c.request("sessions.patch", json!({"key": key, "model": "deep"})).await.unwrap();
    assert_eq!(done["resolved"]["model"], "deep");
    assert_eq!(done["resolved"]["thinkingLevel"], "low", "the new model's default");
    let patched = changed(&mut c, &key, "patch").await;
    assert_eq!(patched["session"]["model"], "deep");
    c.request("sessions.patch", json!({"key": key, "thinkingLevel": "HIGH"})).await.unwrap();
    assert_eq!(describe(&mut c, &key).await["thinkingLevel"], "high");
    let back = c.request("sessions.patch", json!({"key": key, "model": "demo/quick"})).await.unwrap();
    assert_eq!(back["resolved"]["thinkingLevel"], "off", "a level the new model lacks is clamped");
    c.request("sessions.patch", json!({"key": key, "model": "deep", "thinkingLevel": null})).await.unwrap();
    let row = describe(&mut c, &key).await;
    assert!(row.get("thinkingLevel").is_none(), "null: the model's default again: {row}");

    let sent = c.request("chat.send", json!({"sessionKey": key, "message": "hello models", "idempotencyKey": "models-1"})).await.unwrap();
    let fin = terminal(&mut c, sent["runId"].as_str().unwrap()).await;
    assert_eq!(fin["message"]["model"], "deep", "the reply names the model that wrote it: {fin}");
    let row = describe(&mut c, &key).await;
    assert!(row["totalTokens"].as_u64().is_some_and(|n| n > 0), "{row}");
    assert_eq!(row["totalTokensFresh"], true);
    assert!(row["inputTokens"].as_u64().is_some() && row["outputTokens"].as_u64().is_some(), "{row}");
    let list = c.request("sessions.list", json!({})).await.unwrap();
    assert_eq!(list["defaults"]["contextTokens"], 32000);
}

/// The ids of the user rows of `key`'s history, and every row's text.
async fn history(c: &mut Client, key: &str) -> (Vec<String>, Vec<String>) {
    let h = c.request("chat.history", json!({"sessionKey": key, "limit": 100})).await.unwrap();
    let rows = h["messages"].as_array().unwrap();
    let users = rows.iter().filter(|m| m["role"] == "user").map(|m| m["__openclaw"]["id"].as_str().unwrap().to_string()).collect();
    (users, rows.iter().map(protocol::chat::message_text).collect())
}

#[tokio::test]
async fn rewind_takes_a_message_and_the_rows_after_it_off_and_fork_copies_the_rows_before_it() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let key = create(&mut c, json!({"label": "Cut"})).await["key"].as_str().unwrap().to_string();
    for (n, text) in ["first", "second", "third"].iter().enumerate() {
        c.request("chat.send", json!({"sessionKey": key, "message": text, "idempotencyKey": format!("cut-{n}")})).await.unwrap();
        terminal(&mut c, &format!("cut-{n}")).await;
    }
    let (users, texts) = history(&mut c, &key).await;
    assert_eq!(users.len(), 3);
    assert_eq!(texts.len(), 6, "each message and its reply: {texts:?}");
    let before = describe(&mut c, &key).await;

    // Fork from the second message: a new conversation with the first exchange, the source as it was.
    let forked = c.request("sessions.fork", json!({"sessionKey": key, "entryId": users[1]})).await.unwrap();
    assert_eq!(forked["editorText"], "second");
    let new_key = forked["sessionKey"].as_str().unwrap().to_string();
    assert!(new_key.starts_with("agent:main:dashboard:"), "{new_key}");
    assert_eq!(changed(&mut c, &new_key, "fork").await["sessionKey"], new_key);
    let (_, fork_texts) = history(&mut c, &new_key).await;
    assert_eq!(fork_texts, texts[..2].to_vec());
    assert_eq!(history(&mut c, &key).await.1, texts, "the source is untouched");

    // Rewind to the second message: it and everything after leave; the session has a new transcript id.
    let rewound = c.request("sessions.rewind", json!({"sessionKey": key, "entryId": users[1]})).await.unwrap();
    assert_eq!(rewound, json!({"editorText": "second"}));
    changed(&mut c, &key, "rewind").await;
    assert_eq!(history(&mut c, &key).await.1, texts[..2].to_vec());
    assert_ne!(describe(&mut c, &key).await["sessionId"], before["sessionId"]);
    // A message that left is no longer on the active path; a reply is not a user message.
    let e = c.request("sessions.rewind", json!({"sessionKey": key, "entryId": users[2]})).await.unwrap_err();
    assert_eq!(e.message, format!("message entry is not on the active path: {}", users[2]));
    let h = c.request("chat.history", json!({"sessionKey": key, "limit": 10})).await.unwrap();
    let reply = h["messages"][1]["__openclaw"]["id"].as_str().unwrap().to_string();
    let e = c.request("sessions.fork", json!({"sessionKey": key, "entryId": reply})).await.unwrap_err();
    assert_eq!(e.message, format!("entry is not a user message: {reply}"));
    let e = c.request("sessions.fork", json!({"sessionKey": key, "entryId": "nope"})).await.unwrap_err();
    assert_eq!(e.message, "message entry not found: nope");
    // A new message continues the rewound conversation.
    c.request("chat.send", json!({"sessionKey": key, "message": "second, again", "idempotencyKey": "cut-again"})).await.unwrap();
    terminal(&mut c, "cut-again").await;
    assert_eq!(gw.gateway.store.user_texts(&key).unwrap(), vec!["first".to_string(), "second, again".to_string()]);
}

#[tokio::test]
async fn rewind_needs_admin_and_neither_cuts_while_the_agent_works() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let key = create(&mut c, json!({"label": "Busy cut"})).await["key"].as_str().unwrap().to_string();
    c.request("chat.send", json!({"sessionKey": key, "message": "slow please", "idempotencyKey": "busy-1"})).await.unwrap();
    let (users, _) = history(&mut c, &key).await;
    for method in ["sessions.rewind", "sessions.fork"] {
        let e = c.request(method, json!({"sessionKey": key, "entryId": users[0]})).await.unwrap_err();
        assert_eq!(e.code, "UNAVAILABLE", "{method}: {e:?}");
        assert!(e.message.ends_with("is unavailable while the agent is working."), "{}", e.message);
    }
    let mut writer =
        Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::READ, scope::WRITE])).await.unwrap();
    let e = writer.request("sessions.rewind", json!({"sessionKey": key, "entryId": users[0]})).await.unwrap_err();
    assert!(e.message.contains("operator.admin"), "{e:?}");
    let e = writer.request("sessions.rewind", json!({"sessionKey": key, "entryId": users[0], "key": key})).await.unwrap_err();
    assert!(e.message.contains("operator.admin"), "scope first: {e:?}");
}

#[tokio::test]
async fn search_finds_a_word_inside_a_message_with_its_snippet_and_refuses_bad_params() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let a = create(&mut c, json!({"label": "Zoo"})).await["key"].as_str().unwrap().to_string();
    let b = create(&mut c, json!({"label": "Other"})).await["key"].as_str().unwrap().to_string();
    for (n, (key, text)) in [(&a, "hello there"), (&a, "the quokka plan is ready"), (&b, "nothing here")].iter().enumerate() {
        c.request("chat.send", json!({"sessionKey": key, "message": text, "idempotencyKey": format!("s-{n}")})).await.unwrap();
        terminal(&mut c, &format!("s-{n}")).await;
    }
    let found = c.request("sessions.search", json!({"query": "QUOKKA plan", "limit": 25, "scope": {"archived": false}})).await.unwrap();
    let hits = found["results"].as_array().unwrap();
    // The person's message and the demo agent's echo of it, both in the first conversation.
    assert_eq!(hits.len(), 2, "{found}");
    assert!(hits.iter().all(|h| h["sessionKey"] == a.as_str()), "{found}");
    assert!(hits.iter().any(|h| h["role"] == "user" && h["snippet"] == "the quokka plan is ready"), "{found}");
    let none = c.request("sessions.search", json!({"query": "quokka", "scope": {"archived": true}})).await.unwrap();
    assert_eq!(none["results"], json!([]), "archived only: none");
    for (params, words) in [
        (json!({"query": "  "}), "query must not be empty"),
        (json!({"query": "x", "limit": 26}), "must be >= 1 and <= 25"),
        (json!({"query": "x", "scope": {}, "agentId": "main"}), "scope cannot be combined"),
        (json!({"query": "x", "bogus": 1}), "bogus"),
    ] {
        let e = c.request("sessions.search", params.clone()).await.unwrap_err();
        assert!(e.message.contains(words), "{params}: {}", e.message);
    }
}

#[tokio::test]
async fn delegate_starts_a_sub_agent_task_that_is_listed_and_stopped_alone() {
    let (gw, _d) = start().await;
    let mut c = client(&gw).await;
    let key = create(&mut c, json!({"label": "Boss"})).await["key"].as_str().unwrap().to_string();
    c.request("chat.send", json!({"sessionKey": key, "message": "delegate the report", "idempotencyKey": "boss-1"})).await.unwrap();
    let task = loop {
        let p = c.next_event("task", T).await.expect("a task event").payload.unwrap();
        if p["action"] == "upserted" && p["task"]["status"] == "running" {
            break p["task"].clone();
        }
    };
    assert_eq!((task["sessionKey"].as_str(), task["runtime"].as_str()), (Some(key.as_str()), Some("subagent")));
    assert_eq!(task["title"], "delegate the report");
    let child = task["childSessionKey"].as_str().unwrap().to_string();
    assert!(child.starts_with("agent:main:subagent:"), "{child}");
    assert_eq!(terminal(&mut c, "boss-1").await["state"], "final", "the requester's run ends; the helper goes on");
    let listed = c.request("tasks.list", json!({"sessionKey": key, "status": ["queued", "running"]})).await.unwrap();
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 1, "{listed}");
    let row = describe(&mut c, &key).await;
    assert_eq!((row["childSessions"].clone(), row["hasActiveSubagentRun"].clone()), (json!([child]), json!(true)));
    assert_eq!(describe(&mut c, &child).await["parentSessionKey"], key.as_str());

    let id = task["taskId"].as_str().unwrap();
    let cancelled = c.request("tasks.cancel", json!({"taskId": id})).await.unwrap();
    assert_eq!(
        (cancelled["found"].clone(), cancelled["cancelled"].clone(), cancelled["task"]["status"].clone()),
        (json!(true), json!(true), json!("cancelled"))
    );
    let run = task["runId"].as_str().unwrap();
    assert_eq!(terminal(&mut c, run).await["state"], "aborted", "the helper's run is stopped");
    let again = c.request("tasks.cancel", json!({"taskId": id})).await.unwrap();
    assert_eq!((again["cancelled"].clone(), again["reason"].clone()), (json!(false), json!("task is cancelled")));
    assert_eq!(c.request("tasks.cancel", json!({"taskId": "nope"})).await.unwrap(), json!({"found": false, "cancelled": false}));
    assert_eq!(describe(&mut c, &key).await.get("hasActiveSubagentRun"), None);

    // The conversation's Stop (`sessions.abort {key}`) stops its sub-agents too.
    c.request("chat.send", json!({"sessionKey": key, "message": "delegate again", "idempotencyKey": "boss-2"})).await.unwrap();
    terminal(&mut c, "boss-2").await;
    let running = c.request("tasks.list", json!({"sessionKey": key, "status": "running"})).await.unwrap();
    let run = running["tasks"][0]["runId"].as_str().unwrap().to_string();
    let stopped = c.request("sessions.abort", json!({"key": key})).await.unwrap();
    assert_eq!((stopped["ok"].clone(), stopped["status"].clone()), (json!(true), json!("no-active-run")), "{stopped}");
    assert_eq!(terminal(&mut c, &run).await["state"], "aborted");
    let left = c.request("tasks.list", json!({"sessionKey": key, "status": "running"})).await.unwrap();
    assert_eq!(left["tasks"], json!([]));
}
