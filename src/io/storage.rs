//! Durable local storage for drafts, receipts, the outbox, composer drafts and async questions,
//! behind a small trait.
//!
//! [`IdbStore`] is IndexedDB through `indexed_db_futures`. Values are JSON strings under
//! explicit string keys, so nothing depends on structured-clone quirks, and rows written by
//! earlier builds (database `ocui`, version 2, the same layout) read back unchanged.
//! [`MemoryStore`] keeps the app working when IndexedDB is blocked, full or closed: the UI
//! then says what is at risk.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use model::attachment::AttachmentMeta;
use wasm_bindgen::{JsCast, JsValue};

/// The database of builds before storage was kept per gateway; now the database of the
/// gateway that inherited it ([`bind_to_gateway`]).
pub const DB_NAME: &str = model::url::LEGACY_DB_NAME;

thread_local! {
    /// The database this page uses: the one of the gateway it is bound to.
    static BOUND_DB: std::cell::RefCell<String> = std::cell::RefCell::new(DB_NAME.to_string());
}

const LEGACY_OWNER_KEY: &str = "ocui.legacyOwner.v1";
/// What every earlier build wrote on its first connect (its one device identity).
const EARLIER_BUILDS_MARK: &str = "ocui.device.v1";
const KNOWN_GATEWAYS_KEY: &str = "ocui.gateways.v1";
/// The scopes each gateway granted this browser last time, under this prefix and the gateway's
/// address (`GatewayClient`); earlier builds recorded each gateway they connected to this way.
pub const LAST_SCOPES_PREFIX: &str = "ocui.lastScopes.v1:";

/// A gateway this browser keeps a database for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KnownGateway {
    /// Its normalised WebSocket address.
    pub url: String,
    /// Its IndexedDB database.
    pub db: String,
}

/// Every gateway this browser keeps a database for.
pub fn known_gateways() -> Vec<KnownGateway> {
    crate::io::browser::local_get(KNOWN_GATEWAYS_KEY).and_then(|s| crate::io::json::decode(&s)).unwrap_or_default()
}

/// The IndexedDB database of `gateway_url`, for a page served by `own_url`. The first build
/// that keys storage by gateway gives the earlier single database to
/// [`model::url::legacy_owner`] and records that choice, so it is made once per browser.
pub fn gateway_db(gateway_url: &str, own_url: &str) -> String {
    use crate::io::browser;
    let owner = browser::local_get(LEGACY_OWNER_KEY).filter(|o| !o.is_empty()).unwrap_or_else(|| {
        let owner = model::url::legacy_owner(own_url, &used_gateway_urls());
        // Earlier builds ran here (they all made the one device identity), and their storage
        // does not show which gateway their database was for: what it queued waits.
        if !owner.certain && browser::local_get(EARLIER_BUILDS_MARK).is_some() {
            set_identity_hold(&owner.url, Some(model::connection::Hold::EarlierSharedStore));
        }
        browser::local_set(LEGACY_OWNER_KEY, &owner.url);
        owner.url
    });
    model::url::gateway_db_name(gateway_url, &owner)
}

/// The gateways earlier builds recorded scopes for (by address).
pub fn used_gateway_urls() -> Vec<String> {
    crate::io::browser::local_keys().into_iter().filter_map(|k| k.strip_prefix(LAST_SCOPES_PREFIX).map(str::to_string)).collect()
}

fn identity_hold_key(gateway_url: &str) -> String {
    format!("ocui.identityHold.v1:{}", model::url::normalize_gateway_url(gateway_url))
}

/// Whether, and why, what is queued for `gateway_url` waits for the person
/// (`model::connection::Hold`). Kept across reloads.
pub fn identity_hold(gateway_url: &str) -> Option<model::connection::Hold> {
    crate::io::browser::local_get(&identity_hold_key(gateway_url)).map(|s| model::connection::Hold::from_stored(&s))
}

pub fn set_identity_hold(gateway_url: &str, hold: Option<model::connection::Hold>) {
    match hold {
        Some(h) => {
            crate::io::browser::local_set(&identity_hold_key(gateway_url), h.stored());
        }
        None => crate::io::browser::local_remove(&identity_hold_key(gateway_url)),
    }
}

/// Binds this page's storage to one gateway, once, before any [`LocalDb`] opens: everything
/// stored from now on belongs to it, in its own database; cross-tab channels and locks are
/// named after it too ([`gateway_db`]).
pub fn bind_to_gateway(gateway_url: &str, own_url: &str) -> String {
    use crate::io::browser;
    let db = gateway_db(gateway_url, own_url);
    let url = model::url::normalize_gateway_url(gateway_url);
    let mut known = known_gateways();
    if !known.iter().any(|k| k.db == db) {
        known.push(KnownGateway { url, db: db.clone() });
        browser::local_set(KNOWN_GATEWAYS_KEY, &crate::io::json::encode(&known));
    }
    BOUND_DB.with_borrow_mut(|b| b.clone_from(&db));
    db
}

/// The database this page is bound to.
pub fn bound_db() -> String {
    BOUND_DB.with_borrow(Clone::clone)
}

/// A cross-tab channel or lock name for this page's gateway. The inheriting gateway keeps the
/// earlier builds' names, so a tab of an earlier build and one of this build never both send
/// from that database.
pub fn scoped(name: &str) -> String {
    let db = bound_db();
    if db == DB_NAME { name.to_string() } else { format!("{name}@{db}") }
}
/// Bump with a migration in [`upgrade`] when stores change.
pub const DB_VERSION: u32 = 5;
/// The stores of a gateway's database, by name: every reader and writer names them from here.
pub mod store {
    /// Question drafts (`model::draft`), by request id.
    pub const DRAFTS: &str = "drafts";
    /// Receipts of answered requests (`model::dock::Receipt`).
    pub const RECEIPTS: &str = "receipts";
    /// Outbox rows (`model::outbox::OutboxRow`).
    pub const OUTBOX: &str = "outbox";
    /// Composer drafts, by session key.
    pub const COMPOSER: &str = "composer";
    /// Dismissed and reopened async questions (`model::async_q`).
    pub const ASYNC: &str = "async";
    /// Saved copies of recent conversations (`model::offline`).
    pub const TRANSCRIPTS: &str = "transcripts";
    /// Attached files (see [`super::FILES`]).
    pub const FILES: &str = "attachments";
    /// This gateway's device key (see [`super::DEVICE`]).
    pub const DEVICE: &str = "device";
}

/// Version 2 added `async` (dismissed and reopened async questions); version 3 added
/// `transcripts` (the saved copies of recent conversations, `model::offline`); version 4 added
/// `attachments` (the bytes of files, beside the outbox row or composer draft that owns them);
/// version 5 added `device` (this gateway's device key, [`DEVICE`]).
pub const STORES: &[&str] =
    &[store::DRAFTS, store::RECEIPTS, store::OUTBOX, store::COMPOSER, store::ASYNC, store::TRANSCRIPTS, FILES, DEVICE];

/// The store of attached files: one record `{meta: "<AttachmentMeta JSON>", blob: Blob}` per
/// file, under `<owner>/<id>` ([`AttachmentMeta::blob_key`]). The owner is an outbox row's
/// id, or `draft:<session>` for files attached in a composer and not yet sent.
pub const FILES: &str = store::FILES;

/// The store of this gateway's device key: one structured-clone record holding a
/// non-extractable WebCrypto key (`io::key_store`), not JSON like the others.
pub const DEVICE: &str = store::DEVICE;

/// A file's description and its bytes.
#[derive(Clone)]
pub struct StoredFile {
    pub meta: AttachmentMeta,
    pub blob: web_sys::Blob,
}

impl StoredFile {
    /// As stored, and as sent to other tabs: `{meta: "<AttachmentMeta JSON>", blob: Blob}`.
    pub fn to_js(&self) -> JsValue {
        let record = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&record, &"meta".into(), &crate::io::json::encode(&self.meta).into());
        let _ = js_sys::Reflect::set(&record, &"blob".into(), &self.blob);
        record.into()
    }

    /// A record written by [`StoredFile::to_js`]; `None` for anything else.
    pub fn from_js(record: &JsValue) -> Option<StoredFile> {
        let meta = js_sys::Reflect::get(record, &"meta".into()).ok()?.as_string()?;
        let blob = js_sys::Reflect::get(record, &"blob".into()).ok()?.dyn_into::<web_sys::Blob>().ok()?;
        Some(StoredFile { meta: crate::io::json::decode(&meta)?, blob })
    }
}

/// One change of [`KvStore::write_all`].
pub enum Write {
    /// A JSON value under `key` in `store`.
    Put { store: &'static str, key: String, json: String },
    /// A file of `owner`.
    PutFile { owner: String, file: StoredFile },
    /// The value under `key` in `store` (a file's key is [`AttachmentMeta::blob_key`]).
    Delete { store: &'static str, key: String },
    /// Every file of `owner`.
    DeleteFiles { owner: String },
}

impl Write {
    fn store(&self) -> &'static str {
        match self {
            Write::Put { store, .. } | Write::Delete { store, .. } => store,
            _ => FILES,
        }
    }
}

/// The key range of every file of `owner` (`/` sorts before every character a key can hold
/// after it, and `\u{ffff}` after).
fn owner_range(owner: &str) -> (String, String) {
    (format!("{owner}/"), format!("{owner}/\u{ffff}"))
}

/// The bytes a set of writes asks storage to keep, for saying how much could not be kept.
pub fn file_bytes(writes: &[Write]) -> u64 {
    writes.iter().map(|w| if let Write::PutFile { file, .. } = w { file.meta.size } else { 0 }).sum()
}

type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + 'a>>;

/// A key-value store of JSON strings, one namespace per store name.
pub trait KvStore {
    fn get<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, Option<String>>;
    fn get_all<'a>(&'a self, store: &'a str) -> Fut<'a, Vec<(String, String)>>;
    fn put<'a>(&'a self, store: &'a str, key: &'a str, json: &'a str) -> Fut<'a, ()>;
    fn delete<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, ()>;
    /// Reads, changes and writes one value in a single transaction, so no other tab can
    /// act in between. `change` returns the new value, or `None` to leave it as it was.
    fn update<'a>(
        &'a self,
        store: &'a str,
        key: &'a str,
        change: Box<dyn FnOnce(Option<String>) -> Option<String> + 'a>,
    ) -> Fut<'a, Option<String>>;
    /// Applies every write in one transaction: all of them, or (on any failure, a full disk
    /// among them) none.
    fn write_all<'a>(&'a self, writes: Vec<Write>) -> Fut<'a, ()>;
    /// The files of `owner`, in key order.
    fn files<'a>(&'a self, owner: &'a str) -> Fut<'a, Vec<StoredFile>>;
}

/// In-memory fallback (and a test double for pure logic).
#[derive(Default)]
pub struct MemoryStore {
    data: RefCell<Rows>,
    files: RefCell<Vec<(String, StoredFile)>>,
}

/// The memory store's rows, `(store, key, json)` in key order, as IndexedDB returns them. A
/// sorted list rather than a `BTreeMap`: the app has one other map of that kind, and each key
/// type of one costs about 10 KB of wasm.
#[derive(Default)]
struct Rows(Vec<(String, String, String)>);

impl Rows {
    fn find(&self, store: &str, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(s, k, _)| (s.as_str(), k.as_str()).cmp(&(store, key)))
    }
    fn get(&self, store: &str, key: &str) -> Option<String> {
        self.find(store, key).ok().map(|i| self.0[i].2.clone())
    }
    fn put(&mut self, store: &str, key: &str, json: String) {
        match self.find(store, key) {
            Ok(i) => self.0[i].2 = json,
            Err(i) => self.0.insert(i, (store.to_string(), key.to_string(), json)),
        }
    }
    fn remove(&mut self, store: &str, key: &str) {
        if let Ok(i) = self.find(store, key) {
            self.0.remove(i);
        }
    }
}

impl KvStore for MemoryStore {
    fn get<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, Option<String>> {
        let v = self.data.borrow().get(store, key);
        Box::pin(async move { Ok(v) })
    }
    fn get_all<'a>(&'a self, store: &'a str) -> Fut<'a, Vec<(String, String)>> {
        let rows = self.data.borrow().0.iter().filter(|(s, _, _)| s == store).map(|(_, k, v)| (k.clone(), v.clone())).collect();
        Box::pin(async move { Ok(rows) })
    }
    fn put<'a>(&'a self, store: &'a str, key: &'a str, json: &'a str) -> Fut<'a, ()> {
        self.data.borrow_mut().put(store, key, json.into());
        Box::pin(async { Ok(()) })
    }
    fn delete<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, ()> {
        self.data.borrow_mut().remove(store, key);
        Box::pin(async { Ok(()) })
    }
    fn update<'a>(
        &'a self,
        store: &'a str,
        key: &'a str,
        change: Box<dyn FnOnce(Option<String>) -> Option<String> + 'a>,
    ) -> Fut<'a, Option<String>> {
        let cur = self.data.borrow().get(store, key);
        let new = change(cur);
        if let Some(v) = &new {
            self.data.borrow_mut().put(store, key, v.clone());
        }
        Box::pin(async move { Ok(new) })
    }
    fn write_all<'a>(&'a self, writes: Vec<Write>) -> Fut<'a, ()> {
        for w in writes {
            match w {
                Write::Put { store, key, json } => {
                    self.data.borrow_mut().put(store, &key, json);
                }
                Write::PutFile { owner, file } => {
                    let key = file.meta.blob_key(&owner);
                    let mut files = self.files.borrow_mut();
                    files.retain(|(k, _)| *k != key);
                    files.push((key, file));
                }
                Write::Delete { store, key } => {
                    if store == FILES {
                        self.files.borrow_mut().retain(|(k, _)| *k != key);
                    } else {
                        self.data.borrow_mut().remove(store, &key);
                    }
                }
                Write::DeleteFiles { owner } => {
                    let (from, to) = owner_range(&owner);
                    self.files.borrow_mut().retain(|(k, _)| !(*k >= from && *k <= to));
                }
            }
        }
        Box::pin(async { Ok(()) })
    }
    fn files<'a>(&'a self, owner: &'a str) -> Fut<'a, Vec<StoredFile>> {
        let (from, to) = owner_range(owner);
        // In the order they were written (IndexedDB gives key order; no caller depends on it).
        let files = self.files.borrow().iter().filter(|(k, _)| *k >= from && *k <= to).map(|(_, f)| f.clone()).collect();
        Box::pin(async move { Ok(files) })
    }
}

/// The browser's own words for a failure (`QuotaExceededError: …`): the storage banner shows it.
fn idb_error(e: indexed_db_futures::error::Error) -> String {
    match &e {
        indexed_db_futures::error::Error::DomException(d) => {
            let sys: &web_sys::DomException = d.as_ref().unchecked_ref();
            match sys.message() {
                m if m.is_empty() => sys.name(),
                m => format!("{}: {m}", sys.name()),
            }
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
                crate::io::browser::log_warn("IndexedDB upgrade blocked by another tab");
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
    fn update<'a>(
        &'a self,
        store: &'a str,
        key: &'a str,
        change: Box<dyn FnOnce(Option<String>) -> Option<String> + 'a>,
    ) -> Fut<'a, Option<String>> {
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
    fn write_all<'a>(&'a self, writes: Vec<Write>) -> Fut<'a, ()> {
        Box::pin(async move {
            let mut stores: Vec<&str> = writes.iter().map(Write::store).collect();
            stores.sort_unstable();
            stores.dedup();
            let tx = self.db.transaction(stores).with_mode(TransactionMode::Readwrite).build().map_err(idb_error)?;
            // The transaction commits by itself once its requests are done. Its end is watched
            // instead of calling `commit`, which reports an abort without its reason: a full
            // disk (QuotaExceededError) is only known from the transaction's own error.
            let done = tx.on_done().map_err(idb_error)?;
            // Every request is made before the first await, while the transaction is active;
            // a failed one (QuotaExceededError) aborts the transaction, and commit reports it.
            let mut pending: Vec<Pin<Box<dyn Future<Output = indexed_db_futures::Result<()>>>>> = Vec::with_capacity(writes.len());
            for w in &writes {
                let os = tx.object_store(w.store()).map_err(idb_error)?;
                pending.push(match w {
                    Write::Put { key, json, .. } => {
                        let req = os.put(json.as_str()).with_key(key.as_str()).primitive().map_err(idb_error)?;
                        Box::pin(async move { req.await.map(drop) })
                    }
                    Write::PutFile { owner, file } => {
                        let req = os.put(file.to_js()).with_key(file.meta.blob_key(owner)).primitive().map_err(idb_error)?;
                        Box::pin(async move { req.await.map(drop) })
                    }
                    Write::Delete { key, .. } => {
                        let req = os.delete(key.as_str()).primitive().map_err(idb_error)?;
                        Box::pin(req)
                    }
                    Write::DeleteFiles { owner } => {
                        let (from, to) = owner_range(owner);
                        let req = os
                            .delete::<String, _>(indexed_db_futures::KeyRange::Bound(from, false, to, false))
                            .primitive()
                            .map_err(idb_error)?;
                        Box::pin(req)
                    }
                });
            }
            let mut errors = Vec::new();
            for p in pending {
                if let Err(e) = p.await {
                    errors.push(idb_error(e));
                }
            }
            if done.await != indexed_db_futures::transaction::TransactionFinishKind::Ok {
                errors.push(tx.error().map_or_else(|| "the browser aborted the write".to_string(), idb_error));
            }
            // A full disk aborts the transaction: its requests then fail as aborted, and the
            // reason that matters (QuotaExceededError) may come last.
            match errors.iter().position(|e| is_quota_error(e)) {
                Some(i) => Err(errors.swap_remove(i)),
                None => errors.into_iter().next().map_or(Ok(()), Err),
            }
        })
    }
    fn files<'a>(&'a self, owner: &'a str) -> Fut<'a, Vec<StoredFile>> {
        Box::pin(async move {
            let tx = self.db.transaction(FILES).build().map_err(idb_error)?;
            let os = tx.object_store(FILES).map_err(idb_error)?;
            let (from, to) = owner_range(owner);
            let records = os
                .get_all::<JsValue>()
                .with_query::<String, _>(indexed_db_futures::KeyRange::Bound(from, false, to, false))
                .primitive()
                .map_err(idb_error)?
                .await
                .map_err(idb_error)?;
            // A record this app did not write (no JSON meta, no Blob) is skipped.
            Ok(records.filter_map(|r| StoredFile::from_js(&r.ok()?)).collect())
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
        match IdbStore::open(&bound_db()).await {
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
                    Err(e) => crate::io::browser::log_warn(&format!("cannot watch the database for closing: {}", idb_error(e))),
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
        let was_ok =
            self.health.get_untracked() != StorageHealth::Opening && !matches!(self.health.get_untracked(), StorageHealth::Degraded(_));
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

    /// [`KvStore::write_all`]; a failure is returned in the browser's words, and only a
    /// failure other than a full disk marks the whole of storage as failing: a file too big
    /// for the space left says so where it was attached, and everything else is still kept.
    pub async fn write_all(&self, writes: Vec<Write>) -> Result<(), String> {
        let result = self.store().write_all(writes).await;
        if let Err(e) = &result {
            if !is_quota_error(e) {
                self.fail(e.clone());
            }
        }
        result
    }

    /// The files of `owner`, or none when storage cannot be read.
    pub async fn files(&self, owner: &str) -> Vec<StoredFile> {
        match self.store().files(owner).await {
            Ok(files) => files,
            Err(e) => {
                self.fail(e);
                Vec::new()
            }
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

/// Whether a storage error is the browser saying it has no room (`QuotaExceededError`).
pub fn is_quota_error(e: &str) -> bool {
    e.contains("QuotaExceededError")
}

impl Default for LocalDb {
    fn default() -> Self {
        Self::new()
    }
}
