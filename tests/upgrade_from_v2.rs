//! In headless Chromium: what people already have in this browser survives the move to
//! `indexed_db_futures`. The rows in `tests/fixtures/ocui-v2/rows.json` were written by the
//! real UI of commit 00d90b7 (raw `web_sys` IndexedDB: database `ocui`, version 2, JSON strings
//! under string keys; see its README). They go into IndexedDB and localStorage exactly as that
//! code wrote them, then today's storage and controllers read and use them.
#![cfg(target_arch = "wasm32")]

use control_ui::io::storage::{DB_NAME, DB_VERSION, IdbStore, KvStore, LocalDb, STORES, StorageHealth};
use leptos::prelude::*;
use model::draft::QuestionDraft;
use model::outbox::{OutboxRow, SendState};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

mod common;
use common::*;

wasm_bindgen_test_configure!(run_in_browser);

const FIXTURE: &str = include_str!("fixtures/ocui-v2/rows.json");

// The writer of commit 00d90b7, in the browser's own API: `createObjectStore(name)` with no
// options in `onupgradeneeded`, then `put(jsonText, key)` per row.
#[wasm_bindgen(inline_js = r#"
export function seed_as_00d90b7(fixture) {
  const f = JSON.parse(fixture);
  for (const [k, v] of Object.entries(f.localStorage)) localStorage.setItem(k, v);
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(f.database, f.version);
    open.onupgradeneeded = () => {
      for (const s of Object.keys(f.stores)) if (!open.result.objectStoreNames.contains(s)) open.result.createObjectStore(s);
    };
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction(Object.keys(f.stores), "readwrite");
      for (const [s, rows] of Object.entries(f.stores)) for (const [k, v] of rows) tx.objectStore(s).put(v, k);
      tx.oncomplete = () => { db.close(); resolve(); };
      tx.onerror = () => reject(tx.error);
    };
  });
}
// The clock as it was a minute after the capture, so the rows are as fresh as they were for
// someone upgrading that day (the outbox prunes settled rows by age, as before).
export function pin_clock(ms) { Date.now = () => ms; }
"#)]
extern "C" {
    fn seed_as_00d90b7(fixture: &str) -> js_sys::Promise;
    fn pin_clock(ms: f64);
}

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).unwrap()
}

fn rows(store: &str) -> Vec<(String, String)> {
    let f = fixture();
    // A store added after version 2 (`transcripts`, version 3; `attachments`, version 4) starts empty.
    let mut out: Vec<(String, String)> = f["stores"][store]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out
}

async fn seed() {
    let f = fixture();
    assert_eq!(f["database"], DB_NAME);
    assert_eq!(f["version"], 2, "the fixture is of schema version 2");
    assert_eq!(
        DB_VERSION, 5,
        "this build opens version 5, which only adds the `transcripts` (3), `attachments` (4) and `device` (5) stores"
    );
    let captured_ms = f["stores"]["outbox"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| serde_json::from_str::<Value>(r[1].as_str().unwrap()).unwrap()["createdMs"].as_f64().unwrap())
        .fold(0.0, f64::max);
    pin_clock(captured_ms + 60_000.0);
    wasm_bindgen_futures::JsFuture::from(seed_as_00d90b7(FIXTURE)).await.expect("the old writer stores the fixture");
}

#[wasm_bindgen_test]
async fn rows_written_by_the_raw_web_sys_build_are_read_back_unchanged_and_used_by_the_controllers() {
    seed().await;

    // The storage layer reads every row of every store byte for byte.
    {
        let db = IdbStore::open(DB_NAME).await.expect("today's code opens the old database");
        assert_eq!(db.database().version() as u32, DB_VERSION, "opening upgraded it");
        for store in STORES {
            let mut got = db.get_all(store).await.unwrap();
            got.sort();
            assert_eq!(got, rows(store), "store {store}");
        }
        db.close();
    }

    // The device identity (its seed is base64url, now read by the `base64` crate) is the same
    // device for the gateway that paired it, and its token is found: the gateway keeps
    // recognising this browser.
    let f = fixture();
    let stored_identity: Value = serde_json::from_str(f["localStorage"]["ocui.device.v1"].as_str().unwrap()).unwrap();
    let gateway = format!("ws://127.0.0.1:{}", f["gatewayPort"]);
    let identity = control_ui::io::identity::load_or_create(&gateway).await.unwrap();
    assert_eq!(identity.device_id(), stored_identity["deviceId"].as_str().unwrap(), "the same device, not a new one");
    let token_key = f["localStorage"].as_object().unwrap().keys().find(|k| k.starts_with("ocui.deviceToken.v1:")).unwrap().clone();
    assert_eq!(
        control_ui::io::identity::device_token(&identity.device_id(), &gateway).as_deref(),
        f["localStorage"][&token_key].as_str(),
        "the device token is still found"
    );

    // The controllers load them into the page's state. The gateway is unreachable, so nothing
    // is sent and nothing may change state.
    let _ = any_spawner::Executor::init_wasm_bindgen();
    let owner = Owner::new();
    owner.set();
    let url = "ws://127.0.0.1:9/";
    let client = control_ui::io::gateway_client::GatewayClient::start(url.into());
    control_ui::io::browser::replace_url("/?session=agent%3Amain%3Amain");
    let db = LocalDb::new();
    let dock = control_ui::state::dock::DockController::new(client, db);
    let panes = control_ui::state::panes::Panes::new(client, db);
    let chat = panes.chat(0);
    let files = control_ui::state::attachment::AttachmentController::new(client, db);
    let outbox = control_ui::state::outbox::OutboxController::new(client, db, files);
    let asyncq = control_ui::state::async_q::AsyncQController::new(panes, outbox, dock, db);
    eventually("the database to open", 5, || db.health.get_untracked() == StorageHealth::Ok).await;

    let fixture_rows: Vec<OutboxRow> = rows("outbox").iter().map(|(_, v)| serde_json::from_str(v).unwrap()).collect();
    eventually("the outbox rows to load", 5, || outbox.rows.with_untracked(|r| r.len() == fixture_rows.len())).await;
    for want in &fixture_rows {
        let got = outbox
            .rows
            .with_untracked(|r| r.iter().find(|r| r.id == want.id).cloned())
            .unwrap_or_else(|| panic!("row {} ({:?}) was dropped", want.id, want.state));
        assert_eq!(got, *want, "row {} is loaded as it was written", want.id);
    }
    let states: Vec<SendState> = fixture_rows.iter().map(|r| r.state.clone()).collect();
    for s in [SendState::Queued, SendState::WaitingReconnect, SendState::Confirmed] {
        assert!(states.contains(&s), "the fixture covers {s:?}: {states:?}");
    }
    assert!(states.iter().any(|s| matches!(s, SendState::Failed { .. })), "the fixture covers a failed row: {states:?}");
    let unsent = outbox.rows.with_untracked(|r| r.iter().filter(|r| r.is_unsent()).count());
    assert_eq!(unsent, fixture_rows.iter().filter(|r| r.is_unsent()).count());

    let drafts: Vec<QuestionDraft> = rows("drafts").iter().map(|(_, v)| serde_json::from_str(v).unwrap()).collect();
    eventually("the drafts to load", 5, || dock.drafts.with_untracked(|d| d.len() == drafts.len())).await;
    for want in &drafts {
        let got = dock
            .drafts
            .with_untracked(|d| d.get(&want.request_id).map(|s| s.get_untracked()))
            .unwrap_or_else(|| panic!("draft {} was dropped", want.request_id));
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(want).unwrap(),
            "draft {} keeps its choices, text and step",
            want.request_id
        );
    }
    let receipt_ids: Vec<String> = rows("receipts").into_iter().map(|(k, _)| k).collect();
    eventually("the receipts to load", 5, || {
        dock.dock.with_untracked(|d| receipt_ids.iter().all(|id| d.receipts.iter().any(|r| &r.id == id)))
    })
    .await;

    let composer: String = serde_json::from_str(&rows("composer").into_iter().find(|(k, _)| k == "agent:main:main").unwrap().1).unwrap();
    eventually("the composer draft of the open conversation", 5, || chat.draft.get_untracked() == composer).await;

    let dismissed: Vec<String> = rows("async").into_iter().map(|(k, _)| k).collect();
    eventually("the dismissed async questions", 5, || {
        asyncq.local.with_untracked(|l| dismissed.iter().all(|k| l.get(k).is_some_and(|x| x.dismissed)))
    })
    .await;

    // A while later, with the gateway still unreachable: storage holds the same rows.
    sleep(500).await;
    let db = IdbStore::open(DB_NAME).await.unwrap();
    for store in ["outbox", "drafts", "receipts", "composer", "async"] {
        let mut got = db.get_all(store).await.unwrap();
        got.sort();
        assert_eq!(got, rows(store), "store {store} after the controllers loaded it");
    }
}
