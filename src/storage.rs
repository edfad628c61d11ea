//! Durable local storage for drafts, receipts, the outbox, composer drafts and async questions,
//! behind a small trait.
//!
//! [`IdbStore`] is IndexedDB through `indexed_db_futures`. Values are JSON strings under
//! explicit string keys, so nothing depends on structured-clone quirks, and rows written by
//! earlier builds (database `ocui`, version 2, the same layout) read back unchanged.
//! [`MemoryStore`] keeps the app working when IndexedDB is blocked, full or closed: the UI
//! then says what is at risk.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use wasm_bindgen::JsCast;

pub const DB_NAME: &str = "ocui";
/// Bump with a migration in [`upgrade`] when stores change.
pub const DB_VERSION: u32 = 3;
/// Version 2 added `async` (dismissed and reopened async questions); version 3 added
/// `transcripts` (the saved copies of recent conversations, `model::offline`).
pub const STORES: &[&str] = &["drafts", "receipts", "outbox", "composer", "async", "transcripts"];

type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + 'a>>;

/// A key-value store of JSON strings, one namespace per store name.
pub trait KvStore {
    fn get<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, Option<String>>;
    fn get_all<'a>(&'a self, store: &'a str) -> Fut<'a, Vec<(String, String)>>;
    fn put<'a>(&'a self, store: &'a str, key: &'a str, json: &'a str) -> Fut<'a, ()>;
    fn delete<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, ()>;
    /// Reads, changes and writes one value in a single transaction, so no other tab can
    /// act in between. `change` returns the new value, or `None` to leave it as it was.
    fn update<'a>(&'a self, store: &'a str, key: &'a str, change: Box<dyn FnOnce(Option<String>) -> Option<String> + 'a>) -> Fut<'a, Option<String>>;
}

/// In-memory fallback (and a test double for pure logic).
#[derive(Default)]
pub struct MemoryStore {
    data: RefCell<BTreeMap<(String, String), String>>,
}

impl KvStore for MemoryStore {
    fn get<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, Option<String>> {
        let v = self.data.borrow().get(&(store.to_string(), key.to_string())).cloned();
        Box::pin(async move { Ok(v) })
    }
    fn get_all<'a>(&'a self, store: &'a str) -> Fut<'a, Vec<(String, String)>> {
        let rows = self.data.borrow().iter().filter(|((s, _), _)| s == store).map(|((_, k), v)| (k.clone(), v.clone())).collect();
        Box::pin(async move { Ok(rows) })
    }
    fn put<'a>(&'a self, store: &'a str, key: &'a str, json: &'a str) -> Fut<'a, ()> {
        self.data.borrow_mut().insert((store.into(), key.into()), json.into());
        Box::pin(async { Ok(()) })
    }
    fn delete<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, ()> {
        self.data.borrow_mut().remove(&(store.to_string(), key.to_string()));
        Box::pin(async { Ok(()) })
    }
    fn update<'a>(&'a self, store: &'a str, key: &'a str, change: Box<dyn FnOnce(Option<String>) -> Option<String> + 'a>) -> Fut<'a, Option<String>> {
        let k = (store.to_string(), key.to_string());
        let cur = self.data.borrow().get(&k).cloned();
        let new = change(cur);
        if let Some(v) = &new {
            self.data.borrow_mut().insert(k, v.clone());
        }
        Box::pin(async move { Ok(new) })
    }
}

/// The browser's own words for a failure (`QuotaExceededError: …`): the storage banner shows it.
fn idb_error(e: indexed_db_futures::error::Error) -> String {
    match &e {
        indexed_db_futures::error::Error::DomException(d) => {
            let sys: &web_sys::DomException = d.as_ref().unchecked_ref();
            format!("{}: {}", sys.name(), sys.message())
        }
        _ => e.to_string(),
    }
}

/// Creates the stores a database at `old_version` lacks. Version 1 had the first four;
/// version 2 added `async`, version 3 `transcripts`. Nothing was ever renamed or reshaped, so creating what is missing
/// is the whole migration.
fn upgrade(db: &Database) -> indexed_db_futures::Result<()> {
    let existing: Vec<String> = db.object_store_names().collect();
    for store in STORES {
        if !existing.iter().any(|s| s == store) {
            db.create_object_store(*store).build()?;
        }
    }
    Ok(())
}

pub struct IdbStore {
    db: Database,
}

impl IdbStore {
    /// Opens (and creates or upgrades) the database.
    pub async fn open(name: &str) -> Result<IdbStore, String> {
        let db = Database::open(name)
            .with_version(DB_VERSION)
            .with_on_upgrade_needed(|_, db| upgrade(&db))
            // Another tab holding an old version blocks the upgrade: say so instead of hanging.
            .with_on_blocked(|_| {
                crate::browser::log_warn("IndexedDB upgrade blocked by another tab");
                Ok(())
            })
            .await
            .map_err(|e| match e {
                indexed_db_futures::error::OpenDbError::Base(e) => idb_error(e),
                other => other.to_string(),
            })?;
        Ok(IdbStore { db })
    }

    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Closes the connection (every later call fails, as after the browser closed it).
    pub fn close(&self) {
        self.db.clone().close();
    }
}

impl KvStore for IdbStore {
    fn get<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, Option<String>> {
        Box::pin(async move {
            let tx = self.db.transaction(store).build().map_err(idb_error)?;
            tx.object_store(store).map_err(idb_error)?.get(key).primitive().map_err(idb_error)?.await.map_err(idb_error)
        })
    }
    fn get_all<'a>(&'a self, store: &'a str) -> Fut<'a, Vec<(String, String)>> {
        Box::pin(async move {
            let tx = self.db.transaction(store).build().map_err(idb_error)?;
            let os = tx.object_store(store).map_err(idb_error)?;
            // Both requests go out before the first await, while the transaction is active.
            let keys = os.get_all_keys::<String>().primitive().map_err(idb_error)?;
            let values = os.get_all::<String>().primitive().map_err(idb_error)?;
            let keys = keys.await.map_err(idb_error)?;
            let values = values.await.map_err(idb_error)?;
            // Keys and values come in the same (key) order; a row that is not a string under a
            // string key was not written by this app and is skipped.
            Ok(keys.zip(values).filter_map(|(k, v)| Some((k.ok()?, v.ok()?))).collect())
        })
    }
    fn put<'a>(&'a self, store: &'a str, key: &'a str, json: &'a str) -> Fut<'a, ()> {
        Box::pin(async move {
            let tx = self.db.transaction(store).with_mode(TransactionMode::Readwrite).build().map_err(idb_error)?;
            tx.object_store(store).map_err(idb_error)?.put(json).with_key(key).primitive().map_err(idb_error)?.await.map_err(idb_error)?;
            tx.commit().await.map_err(idb_error)
        })
    }
    fn delete<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, ()> {
        Box::pin(async move {
            let tx = self.db.transaction(store).with_mode(TransactionMode::Readwrite).build().map_err(idb_error)?;
            tx.object_store(store).map_err(idb_error)?.delete(key).primitive().map_err(idb_error)?.await.map_err(idb_error)?;
            tx.commit().await.map_err(idb_error)
        })
    }
    fn update<'a>(&'a self, store: &'a str, key: &'a str, change: Box<dyn FnOnce(Option<String>) -> Option<String> + 'a>) -> Fut<'a, Option<String>> {
        Box::pin(async move {
            let tx = self.db.transaction(store).with_mode(TransactionMode::Readwrite).build().map_err(idb_error)?;
            let os = tx.object_store(store).map_err(idb_error)?;
            // The continuation runs in the microtask after the read's success event, while the
            // transaction is still active, so the write joins the same transaction.
            let current: Option<String> = os.get(key).primitive().map_err(idb_error)?.await.map_err(idb_error)?;
            let new = change(current);
            if let Some(v) = &new {
                os.put(v.as_str()).with_key(key).primitive().map_err(idb_error)?.await.map_err(idb_error)?;
            }
            tx.commit().await.map_err(idb_error)?;
            Ok(new)
        })
    }
}

/// Whether local storage works, and what is at risk when it does not.
#[derive(Debug, Clone, PartialEq)]
pub enum StorageHealth {
    Opening,
    Ok,
    /// IndexedDB failed: state lives in memory until it can be reopened.
    Degraded(String),
}

/// The page's storage: IndexedDB when it works, memory when it does not. Failures are
/// visible through `health`, and the database is reopened in the background.
#[derive(Clone, Copy)]
pub struct LocalDb {
    pub health: leptos::prelude::RwSignal<StorageHealth>,
    store: leptos::prelude::StoredValue<Rc<dyn KvStore>, leptos::prelude::LocalStorage>,
    /// Bumped whenever a (re)opened database becomes available: reload from it.
    pub opened: leptos::prelude::RwSignal<u64>,
}

impl LocalDb {
    pub fn new() -> LocalDb {
        use leptos::prelude::*;
        let db = LocalDb {
            health: RwSignal::new(StorageHealth::Opening),
            store: StoredValue::new_local(Rc::new(MemoryStore::default()) as Rc<dyn KvStore>),
            opened: RwSignal::new(0),
        };
        leptos::task::spawn_local(async move { db.open().await });
        db
    }

    async fn open(self) {
        use leptos::prelude::*;
        match IdbStore::open(DB_NAME).await {
            Ok(idb) => {
                // The browser may close the connection (storage pressure, deletion), and another
                // tab may need it closed to upgrade: say so, and reopen a little later.
                match idb.database().version_changes() {
                    Ok(mut changes) => {
                        let this = self;
                        let db = idb.database().clone();
                        leptos::task::spawn_local(async move {
                            match changes.recv().await {
                                Some(_) => {
                                    db.close();
                                    this.fail("another tab is upgrading the database".into());
                                }
                                None => this.fail("the browser closed the database".into()),
                            }
                        });
                    }
                    Err(e) => crate::browser::log_warn(&format!("cannot watch the database for closing: {}", idb_error(e))),
                }
                self.store.set_value(Rc::new(idb));
                self.health.set(StorageHealth::Ok);
                self.opened.update(|n| *n += 1);
            }
            Err(e) => self.fail(e),
        }
    }

    /// Marks storage as failing and tries to reopen it a little later.
    pub fn fail(&self, e: String) {
        use leptos::prelude::*;
        let was_ok = self.health.get_untracked() != StorageHealth::Opening && !matches!(self.health.get_untracked(), StorageHealth::Degraded(_));
        self.health.set(StorageHealth::Degraded(e));
        if was_ok || self.opened.get_untracked() == 0 {
            let this = *self;
            set_timeout(move || leptos::task::spawn_local(async move { this.open().await }), std::time::Duration::from_secs(5));
        }
    }

    pub fn store(&self) -> Rc<dyn KvStore> {
        use leptos::prelude::*;
        self.store.get_value()
    }

    pub fn is_healthy(&self) -> bool {
        use leptos::prelude::*;
        self.health.get_untracked() == StorageHealth::Ok
    }

    pub async fn put(&self, store: &str, key: &str, json: &str) -> bool {
        match self.store().put(store, key, json).await {
            Ok(()) => true,
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }

    pub async fn delete(&self, store: &str, key: &str) {
        if let Err(e) = self.store().delete(store, key).await {
            self.fail(e);
        }
    }

    pub async fn get_all(&self, store: &str) -> Vec<(String, String)> {
        match self.store().get_all(store).await {
            Ok(rows) => rows,
            Err(e) => {
                self.fail(e);
                Vec::new()
            }
        }
    }
}

impl Default for LocalDb {
    fn default() -> Self {
        Self::new()
    }
}
