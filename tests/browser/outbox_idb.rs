//! In headless Chromium: outbox rows in IndexedDB, changed atomically the way the draining
//! tab changes them.
#![cfg(target_arch = "wasm32")]

use control_ui::io::storage::{IdbStore, KvStore};
use model::outbox::{DEFAULT_STALE_MS, OutboxRow, SendResult, SendState};
use wasm_bindgen_test::*;

async fn change(db: &IdbStore, id: &str, f: impl FnOnce(&mut OutboxRow) -> bool + 'static) -> Option<OutboxRow> {
    db.update(
        "outbox",
        id,
        Box::new(move |cur| {
            let mut row: OutboxRow = serde_json::from_str(&cur?).ok()?;
            f(&mut row).then(|| serde_json::to_string(&row).unwrap())
        }),
    )
    .await
    .unwrap()
    .map(|j| serde_json::from_str(&j).unwrap())
}

#[wasm_bindgen_test]
async fn rows_move_through_their_states_in_storage_and_a_discarded_row_is_never_picked_up() {
    let db = IdbStore::open(&format!("ocui-outbox-test-{}", js_sys::Math::random())).await.unwrap();
    let now = js_sys::Date::now();
    let a = OutboxRow::new("a", "s", "first", "key-a", now, 1);
    let b = OutboxRow::new("b", "s", "second", "key-b", now, 2);
    for r in [&a, &b] {
        db.put("outbox", &r.id, &serde_json::to_string(r).unwrap()).await.unwrap();
    }
    let sending = change(&db, "a", move |r| r.begin_send(now, DEFAULT_STALE_MS)).await.unwrap();
    assert_eq!(sending.state, SendState::Sending);
    assert_eq!(sending.attempts, 1);
    // A second sender cannot take the same row: it is no longer Queued.
    assert!(change(&db, "a", move |r| r.begin_send(now, DEFAULT_STALE_MS)).await.is_none());
    let accepted = change(&db, "a", |r| {
        r.finish_send(SendResult::Accepted);
        true
    })
    .await
    .unwrap();
    assert_eq!(accepted.state, SendState::AwaitingConfirmation);
    assert_eq!(accepted.idempotency_key, "key-a");
    // Discard in one tab; the sender in another finds a tombstone.
    let discarded = change(&db, "b", |r| r.discard().is_some()).await.unwrap();
    assert!(discarded.discarded);
    assert!(change(&db, "b", move |r| r.begin_send(now, DEFAULT_STALE_MS)).await.is_none());
    let rows: Vec<OutboxRow> = db.get_all("outbox").await.unwrap().iter().map(|(_, v)| serde_json::from_str(v).unwrap()).collect();
    assert_eq!(rows.len(), 2);
    assert!(change(&db, "missing", |_| true).await.is_none(), "a missing row changes nothing");
}
