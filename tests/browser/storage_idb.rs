//! In headless Chromium: the IndexedDB store keeps what it is given, across reopen.
#![cfg(target_arch = "wasm32")]

use control_ui::io::storage::{IdbStore, KvStore};
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
async fn put_get_all_and_delete_survive_reopening_the_database() {
    let name = format!("ocui-test-{}", js_sys::Math::random());
    {
        let db = IdbStore::open(&name).await.unwrap();
        db.put("drafts", "r1", r#"{"requestId":"r1","step":1}"#).await.unwrap();
        db.put("drafts", "r2", r#"{"requestId":"r2"}"#).await.unwrap();
        db.put("drafts", "r1", r#"{"requestId":"r1","step":2}"#).await.unwrap();
        db.put("receipts", "x", "{}").await.unwrap();
        db.close();
    }
    let db = IdbStore::open(&name).await.unwrap();
    let rows = db.get_all("drafts").await.unwrap();
    assert_eq!(
        rows,
        vec![("r1".to_string(), r#"{"requestId":"r1","step":2}"#.to_string()), ("r2".to_string(), r#"{"requestId":"r2"}"#.to_string())]
    );
    db.delete("drafts", "r1").await.unwrap();
    assert_eq!(db.get_all("drafts").await.unwrap().len(), 1);
    assert_eq!(db.get_all("receipts").await.unwrap().len(), 1);
    assert!(db.get_all("no-such-store").await.is_err(), "a missing store is an error, not a panic");
}

#[wasm_bindgen_test]
async fn a_secret_typed_into_a_draft_never_reaches_indexeddb() {
    use model::draft::QuestionDraft;
    use protocol::question::Question;
    let q: Question =
        serde_json::from_value(serde_json::json!({"questionId":"token","header":"T","question":"Token?","options":[],"isSecret":true}))
            .unwrap();
    let mut d = QuestionDraft::new("sec");
    d.type_other(&q, "hunter2-very-secret");
    d.set_step(0);
    let name = format!("ocui-test-{}", js_sys::Math::random());
    let db = IdbStore::open(&name).await.unwrap();
    db.put("drafts", "sec", &serde_json::to_string(&d).unwrap()).await.unwrap();
    let rows = db.get_all("drafts").await.unwrap();
    assert!(!rows[0].1.contains("hunter2"), "{}", rows[0].1);
}
