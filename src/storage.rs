//! Durable local storage for drafts, receipts (and later the outbox), behind a small trait.
//!
//! [`IdbStore`] is IndexedDB through raw `web_sys` (values are JSON strings under explicit
//! keys, so nothing depends on structured-clone quirks). [`MemoryStore`] keeps the app
//! working when IndexedDB is blocked, full or closed: the UI then says what is at risk.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use futures_channel::oneshot;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{IdbDatabase, IdbOpenDbRequest, IdbRequest, IdbTransactionMode};

pub const DB_NAME: &str = "ocui";
/// Bump with a migration in `upgrade` when stores change.
pub const DB_VERSION: u32 = 1;
pub const STORES: &[&str] = &["drafts", "receipts", "outbox"];

type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + 'a>>;

/// A key-value store of JSON strings, one namespace per store name.
pub trait KvStore {
    fn get_all<'a>(&'a self, store: &'a str) -> Fut<'a, Vec<(String, String)>>;
    fn put<'a>(&'a self, store: &'a str, key: &'a str, json: &'a str) -> Fut<'a, ()>;
    fn delete<'a>(&'a self, store: &'a str, key: &'a str) -> Fut<'a, ()>;
}

/// In-memory fallback (and a test double for pure logic).
#[derive(Default)]
pub struct MemoryStore {
    data: RefCell<BTreeMap<(String, String), String>>,
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
}
