//! Durable local storage for drafts, receipts (and later the outbox), behind a small trait.
//!
//! [`IdbStore`] is IndexedDB through raw `web_sys` (values are JSON strings under explicit
//! keys, so nothing depends on structured-clone quirks). [`MemoryStore`] keeps the app
//! working when IndexedDB is blocked, full or closed: the UI then says what is at risk.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use futures_channel::oneshot;
use protocol::sorted_map::SortedMap;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{IdbDatabase, IdbOpenDbRequest, IdbRequest, IdbTransactionMode};

pub const DB_NAME: &str = "ocui";
/// Bump with a migration in `upgrade` when stores change.
pub const DB_VERSION: u32 = 2;
/// Version 2 added `async` (dismissed and reopened async questions).
pub const STORES: &[&str] = &["drafts", "receipts", "outbox", "composer", "async"];

type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + 'a>>;

/// A key-value store of JSON strings, one namespace per store name.
pub trait KvStore {
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
    data: RefCell<SortedMap<(String, String), String>>,
}

impl KvStore for MemoryStore {
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

fn dom_error(e: JsValue) -> String {
    if let Some(d) = e.dyn_ref::<web_sys::DomException>() {
        return format!("{}: {}", d.name(), d.message());
    }
    e.as_string().unwrap_or_else(|| "unknown IndexedDB error".into())
}

/// Resolves when an IDB request succeeds or fails. The handlers are attached before this
/// returns, so no event can be missed between making the request and awaiting it.
fn request(req: &IdbRequest) -> impl Future<Output = Result<JsValue, String>> + use<> {
    let (tx, rx) = oneshot::channel::<Result<JsValue, String>>();
    let tx = Rc::new(RefCell::new(Some(tx)));
    let (t1, t2) = (tx.clone(), tx);
    let r1 = req.clone();
    let ok = Closure::once(move |_: web_sys::Event| {
        if let Some(t) = t1.borrow_mut().take() {
            let _ = t.send(r1.result().map_err(dom_error));
        }
    });
    let r2 = req.clone();
    let err = Closure::once(move |_: web_sys::Event| {
        if let Some(t) = t2.borrow_mut().take() {
            let e = r2.error().ok().flatten().map(|d| format!("{}: {}", d.name(), d.message())).unwrap_or_else(|| "request failed".into());
            let _ = t.send(Err(e));
        }
    });
    req.set_onsuccess(Some(ok.as_ref().unchecked_ref()));
    req.set_onerror(Some(err.as_ref().unchecked_ref()));
    let req = req.clone();
    async move {
        let out = rx.await.unwrap_or_else(|_| Err("request abandoned".into()));
        req.set_onsuccess(None);
        req.set_onerror(None);
        drop((ok, err));
        out
    }
}

/// Resolves when a transaction commits (durable), or fails/aborts. Handlers attach at once.
fn committed(tx: &web_sys::IdbTransaction) -> impl Future<Output = Result<(), String>> + use<> {
    let (s, r) = oneshot::channel::<Result<(), String>>();
    let s = Rc::new(RefCell::new(Some(s)));
    let (a, b, c) = (s.clone(), s.clone(), s);
    let done = Closure::once(move |_: web_sys::Event| {
        if let Some(t) = a.borrow_mut().take() {
            let _ = t.send(Ok(()));
        }
    });
    let t2 = tx.clone();
    let fail = Closure::once(move |_: web_sys::Event| {
        if let Some(t) = b.borrow_mut().take() {
            let e = t2.error().map(|d| format!("{}: {}", d.name(), d.message())).unwrap_or_else(|| "transaction failed".into());
            let _ = t.send(Err(e));
        }
    });
    let abort = Closure::once(move |_: web_sys::Event| {
        if let Some(t) = c.borrow_mut().take() {
            let _ = t.send(Err("transaction aborted".into()));
        }
    });
    tx.set_oncomplete(Some(done.as_ref().unchecked_ref()));
    tx.set_onerror(Some(fail.as_ref().unchecked_ref()));
    tx.set_onabort(Some(abort.as_ref().unchecked_ref()));
    let tx = tx.clone();
    async move {
        let out = r.await.unwrap_or_else(|_| Err("transaction abandoned".into()));
        tx.set_oncomplete(None);
        tx.set_onerror(None);
        tx.set_onabort(None);
        drop((done, fail, abort));
        out
    }
}

pub struct IdbStore {
    db: IdbDatabase,
}

impl IdbStore {
    /// Opens (and creates or upgrades) the database.
    pub async fn open(name: &str) -> Result<IdbStore, String> {
        let factory = web_sys::window()
            .ok_or("no window")?
            .indexed_db()
            .map_err(dom_error)?
            .ok_or("IndexedDB is not available in this browser context")?;
        let open: IdbOpenDbRequest = factory.open_with_u32(name, DB_VERSION).map_err(dom_error)?;
        let upgrade = Closure::<dyn FnMut(web_sys::IdbVersionChangeEvent)>::new(move |ev: web_sys::IdbVersionChangeEvent| {
            let Some(req) = ev.target().and_then(|t| t.dyn_into::<IdbOpenDbRequest>().ok()) else { return };
            let Ok(db) = req.result().and_then(|r| r.dyn_into::<IdbDatabase>()) else { return };
            let names = db.object_store_names();
            for s in STORES {
                if !names.contains(s) {
                    let _ = db.create_object_store(s);
                }
            }
        });
        open.set_onupgradeneeded(Some(upgrade.as_ref().unchecked_ref()));
        // Another tab holding an old version blocks the upgrade: say so instead of hanging.
        let blocked = Closure::<dyn FnMut(web_sys::Event)>::new(|_| crate::browser::log_warn("IndexedDB upgrade blocked by another tab"));
        open.set_onblocked(Some(blocked.as_ref().unchecked_ref()));
        let result = request(&open).await;
        open.set_onupgradeneeded(None);
        open.set_onblocked(None);
        drop((upgrade, blocked));
        let db: IdbDatabase = result?.dyn_into().map_err(|_| "IndexedDB returned no database".to_string())?;
        Ok(IdbStore { db })
    }

    pub fn database(&self) -> &IdbDatabase {
        &self.db
    }

    fn tx(&self, store: &str, mode: IdbTransactionMode) -> Result<(web_sys::IdbTransaction, web_sys::IdbObjectStore), String> {
        let tx = self.db.transaction_with_str_and_mode(store, mode).map_err(dom_error)?;
        let os = tx.object_store(store).map_err(dom_error)?;
        Ok((tx, os))
    }
}

impl KvStore for IdbStore {
    fn get_all<'a>(&'a self, store: &'a str) -> Fut<'a, Vec<(String, String)>> {
        Box::pin(async move {
            let (_tx, os) = self.tx(store, IdbTransactionMode::Readonly)?;
            // Both requests go out before the first await, while the transaction is active.
            let keys = request(&os.get_all_keys().map_err(dom_error)?);
            let values = request(&os.get_all().map_err(dom_error)?);
            let (keys, values) = (keys.await?, values.await?);
            let keys: js_sys::Array = keys.dyn_into().map_err(|_| "keys are not an array".to_string())?;
            let values: js_sys::Array = values.dyn_into().map_err(|_| "values are not an array".to_string())?;
            Ok(keys.iter().zip(values.iter()).filter_map(|(k, v)| Some((k.as_string()?, v.as_string()?))).collect())
        })
    }
    fn put<'a>(&'a self, store: &'a str, key: &'a str, json: &'a str) -> Fut<'a, ()> {
        Box::pin(async move {
            let (tx, os) = self.tx(store, IdbTransactionMode::Readwrite)?;
            os.put_with_key(&JsValue::from_str(json), &JsValue::from_str(key)).map_err(dom_error)?;
            committed(&tx).await
        })
    }
    fn delete<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, ()> {
        Box::pin(async move {
            let (tx, os) = self.tx(store, IdbTransactionMode::Readwrite)?;
            os.delete(&JsValue::from_str(key)).map_err(dom_error)?;
            committed(&tx).await
        })
    }
    fn update<'a>(&'a self, store: &'a str, key: &'a str, change: Box<dyn FnOnce(Option<String>) -> Option<String> + 'a>) -> Fut<'a, Option<String>> {
        Box::pin(async move {
            let (tx, os) = self.tx(store, IdbTransactionMode::Readwrite)?;
            let done = committed(&tx);
            // The continuation runs in the microtask after the success event, while the
            // transaction is still active, so the write joins the same transaction.
            let cur = request(&os.get(&JsValue::from_str(key)).map_err(dom_error)?).await?;
            let new = change(cur.as_string());
            if let Some(v) = &new {
                os.put_with_key(&JsValue::from_str(v), &JsValue::from_str(key)).map_err(dom_error)?;
            }
            done.await?;
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
                // The browser may close the connection (storage pressure, deletion): say so and reopen.
                let this = self;
                let on_close = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
                    this.fail("the browser closed the database".into());
                });
                idb.database().set_onclose(Some(on_close.as_ref().unchecked_ref()));
                on_close.forget();
                let on_versionchange = Closure::<dyn FnMut(web_sys::Event)>::new({
                    let db = idb.database().clone();
                    move |_| db.close()
                });
                idb.database().set_onversionchange(Some(on_versionchange.as_ref().unchecked_ref()));
                on_versionchange.forget();
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
