//! In headless Chromium: files kept as Blobs in IndexedDB beside the row that owns them,
//! written together with it or not at all, moved between owners in one transaction, and read
//! back byte for byte after the database is closed and opened again.
#![cfg(target_arch = "wasm32")]

use control_ui::io::storage::{FILES, IdbStore, KvStore, StoredFile, Write};
use model::attachment::{AttachmentMeta, draft_owner};
use model::outbox::OutboxRow;
use wasm_bindgen_test::*;

fn blob(bytes: &[u8]) -> web_sys::Blob {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    web_sys::Blob::new_with_u8_array_sequence(&parts).unwrap()
}

async fn bytes_of(b: &web_sys::Blob) -> Vec<u8> {
    let buf = wasm_bindgen_futures::JsFuture::from(b.array_buffer()).await.unwrap();
    js_sys::Uint8Array::new(&buf).to_vec()
}

fn file(id: &str, name: &str, bytes: &[u8]) -> StoredFile {
    StoredFile {
        meta: AttachmentMeta {
            id: id.into(),
            file_name: name.into(),
            mime_type: "application/octet-stream".into(),
            size: bytes.len() as u64,
        },
        blob: blob(bytes),
    }
}

#[wasm_bindgen_test]
async fn a_row_and_its_files_are_kept_together_moved_together_and_read_back_byte_for_byte() {
    let name = format!("ocui-files-test-{}", js_sys::Math::random());
    let session = "agent:main:a/b";
    let draft = draft_owner(session);
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    {
        let db = IdbStore::open(&name).await.unwrap();
        // Attached in the composer: the draft owns them.
        db.write_all(vec![
            Write::PutFile { owner: draft.clone(), file: file("f1", "one.bin", b"one") },
            Write::PutFile { owner: draft.clone(), file: file("f2", "big.bin", &big) },
        ])
        .await
        .unwrap();
        // Another conversation whose key starts the same way keeps its own files.
        db.write_all(vec![Write::PutFile { owner: draft_owner("agent:main:a"), file: file("g1", "other.bin", b"other") }]).await.unwrap();
        assert_eq!(db.files(&draft).await.unwrap().len(), 2);
        assert_eq!(db.files(&draft_owner("agent:main:a")).await.unwrap().len(), 1);

        // Queued: the row, its files under it, and out of the draft, in one transaction.
        let mut row = OutboxRow::new("row-1", session, "with files", "key-1", 1.0, 1);
        let files = db.files(&draft).await.unwrap();
        row.attachments = files.iter().map(|f| f.meta.clone()).collect();
        let mut writes = vec![Write::Put { store: "outbox", key: row.id.clone(), json: serde_json::to_string(&row).unwrap() }];
        writes.extend(files.iter().map(|f| Write::Delete { store: FILES, key: f.meta.blob_key(&draft) }));
        writes.extend(files.into_iter().map(|f| Write::PutFile { owner: row.id.clone(), file: f }));
        db.write_all(writes).await.unwrap();
        assert!(db.files(&draft).await.unwrap().is_empty(), "the draft let go of them");
        db.close();
    }

    // After the database closes and opens again (a reload), the bytes are all there.
    let db = IdbStore::open(&name).await.unwrap();
    let kept = db.files("row-1").await.unwrap();
    let names: Vec<&str> = kept.iter().map(|f| f.meta.file_name.as_str()).collect();
    assert_eq!(names, vec!["one.bin", "big.bin"]);
    assert_eq!(bytes_of(&kept[0].blob).await, b"one");
    assert_eq!(bytes_of(&kept[1].blob).await, big, "300 KB back byte for byte");
    let row: OutboxRow = serde_json::from_str(&db.get("outbox", "row-1").await.unwrap().unwrap()).unwrap();
    assert_eq!(row.attachments.iter().map(|a| a.size).collect::<Vec<_>>(), vec![3, 300_000]);

    // All or nothing: a batch with one write that cannot happen (a store that does not exist)
    // leaves everything as it was. (A full disk, which aborts at commit, is the e2e test.)
    let failed = db
        .write_all(vec![
            Write::DeleteFiles { owner: "row-1".into() },
            Write::Put { store: "no-such-store", key: "x".into(), json: "{}".into() },
        ])
        .await;
    assert!(failed.is_err());
    assert_eq!(db.files("row-1").await.unwrap().len(), 2, "nothing was deleted by the failed batch");

    // Confirmed: its files go; the other conversation's stay.
    db.write_all(vec![Write::DeleteFiles { owner: "row-1".into() }]).await.unwrap();
    assert!(db.files("row-1").await.unwrap().is_empty());
    assert_eq!(db.files(&draft_owner("agent:main:a")).await.unwrap().len(), 1);

    // A record this app did not write is skipped, not a panic.
    let raw = db.database().transaction(FILES).with_mode(indexed_db_futures::transaction::TransactionMode::Readwrite).build().unwrap();
    use indexed_db_futures::prelude::*;
    raw.object_store(FILES).unwrap().put("just text").with_key("row-2/x").primitive().unwrap().await.unwrap();
    raw.commit().await.unwrap();
    assert!(db.files("row-2").await.unwrap().is_empty());
}
