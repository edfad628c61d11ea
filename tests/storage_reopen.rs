//! In headless Chromium: when the open database is taken away (another tab deletes or upgrades
//! it, which closes this connection), the page says storage is not working, keeps going from
//! memory, and reopens the database by itself.
#![cfg(target_arch = "wasm32")]

use control_ui::io::storage::{DB_NAME, LocalDb, StorageHealth};
use leptos::prelude::*;
use wasm_bindgen_test::*;

mod common;
use common::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn a_database_closed_under_the_page_is_reported_and_reopened() {
    let _ = any_spawner::Executor::init_wasm_bindgen();
    let owner = Owner::new();
    owner.set();
    let db = LocalDb::new();
    eventually("the database to open", 5, || db.health.get_untracked() == StorageHealth::Ok).await;
    assert!(db.put("drafts", "before", "\"kept\"").await);
    let opened = db.opened.get_untracked();

    // Another tab deletes the database: this connection gets `versionchange` and lets go.
    let factory = web_sys::window().unwrap().indexed_db().unwrap().unwrap();
    let _delete = factory.delete_database(DB_NAME).unwrap();
    eventually(
        "the page to say storage is not working",
        5,
        || matches!(db.health.get_untracked(), StorageHealth::Degraded(ref m) if m.contains("another tab")),
    )
    .await;

    // It comes back by itself (a fresh, empty database: the other tab deleted it), and works.
    eventually("the database to be reopened", 15, || db.health.get_untracked() == StorageHealth::Ok && db.opened.get_untracked() > opened)
        .await;
    assert!(db.put("drafts", "after", "\"written after reopening\"").await);
    let rows = db.get_all("drafts").await;
    assert_eq!(rows, vec![("after".to_string(), "\"written after reopening\"".to_string())]);
}
