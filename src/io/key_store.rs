//! The device key's record in its gateway's IndexedDB database (store [`DEVICE`]), through the
//! browser's own IndexedDB API rather than `indexed_db_futures`: the page's early module reads
//! it too, and stays small.
//!
//! The record is a structured-clone object, not JSON: `{version, deviceId, publicKey,
//! privateKey, createdAtMs}`, where `privateKey` is a non-extractable WebCrypto `CryptoKey`.
//! The browser keeps the key's bytes; no script, ours included, can read them back.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{CryptoKey, IdbDatabase, IdbOpenDbRequest, IdbRequest, IdbTransaction, IdbTransactionMode};

use crate::io::storage::{DB_VERSION, DEVICE, STORES};

/// The record's key in [`DEVICE`].
const RECORD_KEY: &str = "operator";

/// A device key as stored.
pub struct KeyRecord {
    pub device_id: String,
    /// The raw Ed25519 public key, base64url.
    pub public_key_b64: String,
    pub private_key: CryptoKey,
    pub created_at_ms: f64,
}

impl KeyRecord {
    fn to_js(&self) -> JsValue {
        let record = js_sys::Object::new();
        let _ = Reflect::set(&record, &"version".into(), &1.into());
        let _ = Reflect::set(&record, &"deviceId".into(), &self.device_id.as_str().into());
        let _ = Reflect::set(&record, &"publicKey".into(), &self.public_key_b64.as_str().into());
        let _ = Reflect::set(&record, &"privateKey".into(), &self.private_key);
        let _ = Reflect::set(&record, &"createdAtMs".into(), &self.created_at_ms.into());
        record.into()
    }

    fn from_js(record: &JsValue) -> Option<KeyRecord> {
        let text = |name: &str| Reflect::get(record, &name.into()).ok().and_then(|v| v.as_string());
        Some(KeyRecord {
            device_id: text("deviceId")?,
            public_key_b64: text("publicKey")?,
            private_key: Reflect::get(record, &"privateKey".into()).ok()?.dyn_into().ok()?,
            created_at_ms: Reflect::get(record, &"createdAtMs".into()).ok().and_then(|v| v.as_f64()).unwrap_or_default(),
        })
    }
}

/// What reading the store found.
pub enum Stored {
    Nothing,
    Key(KeyRecord),
    /// A record that is not a device key (written by something else, or damaged).
    Damaged,
}

/// How writing a new key went.
pub enum Added {
    Added,
    /// Another page (the early module, another tab) stored one first: use that one.
    AlreadyThere,
}

fn error_text(what: &str, error: Option<web_sys::DomException>) -> String {
    match error {
        Some(e) if !e.message().is_empty() => format!("{what}: {}: {}", e.name(), e.message()),
        Some(e) => format!("{what}: {}", e.name()),
        None => what.to_string(),
    }
}

/// Sets an `on…` handler to `callback`, called once. Boxed: one closure type for every
/// handler here, so its glue is compiled once.
fn listen(set: impl FnOnce(Option<&Function>), callback: impl FnOnce() + 'static) {
    let boxed: Box<dyn FnOnce()> = Box::new(callback);
    let f = Closure::once_into_js(boxed);
    set(Some(f.unchecked_ref()));
}

/// A connection to `name` at [`DB_VERSION`], creating the stores it lacks (as
/// `storage::IdbStore::open` does). Fails at once, rather than waiting, when a tab of an
/// older build holds the database open at its version.
pub async fn open(name: &str) -> Result<IdbDatabase, String> {
    let factory = web_sys::window().and_then(|w| w.indexed_db().ok().flatten()).ok_or("this browser gives this page no IndexedDB")?;
    let request: IdbOpenDbRequest =
        factory.open_with_u32(name, DB_VERSION).map_err(|e| format!("opening {name}: {}", crate::io::browser::js_error_text(&e)))?;
    let upgrading = request.clone();
    listen(
        |f| request.set_onupgradeneeded(f),
        move || {
            if let Some(db) = upgrading.result().ok().and_then(|r| r.dyn_into::<IdbDatabase>().ok()) {
                let existing = db.object_store_names();
                for store in STORES {
                    if !existing.contains(store) {
                        let _ = db.create_object_store(store);
                    }
                }
            }
        },
    );
    let gave_up = Rc::new(Cell::new(false));
    let promise = Promise::new(&mut |resolve, reject| {
        let (done, late) = (request.clone(), gave_up.clone());
        listen(
            |f| request.set_onsuccess(f),
            move || {
                let db = done.result().unwrap_or(JsValue::UNDEFINED);
                if late.get() {
                    // Opened after all, once the older tab let go: nobody is waiting for it.
                    if let Some(db) = db.dyn_ref::<IdbDatabase>() {
                        db.close();
                    }
                }
                let _ = resolve.call1(&JsValue::NULL, &db);
            },
        );
        let (failed, fail) = (request.clone(), reject.clone());
        listen(
            |f| request.set_onerror(f),
            move || {
                let why = error_text("opening the device key's store", failed.error().ok().flatten());
                let _ = fail.call1(&JsValue::NULL, &why.into());
            },
        );
        let blocked = gave_up.clone();
        listen(
            |f| request.set_onblocked(f),
            move || {
                blocked.set(true);
                let _ = reject.call1(&JsValue::NULL, &"the device key's store is held open by a tab of an older version".into());
            },
        );
    });
    let db = JsFuture::from(promise).await.map_err(|e| e.as_string().unwrap_or_else(|| crate::io::browser::js_error_text(&e)))?;
    db.dyn_into::<IdbDatabase>().map_err(|_| "IndexedDB opened something that is not a database".to_string())
}

/// Resolves with the request's result, or its error in words.
async fn settle(request: &IdbRequest, what: &'static str) -> Result<JsValue, String> {
    let promise = Promise::new(&mut |resolve, reject| {
        let done = request.clone();
        listen(
            |f| request.set_onsuccess(f),
            move || {
                let _ = resolve.call1(&JsValue::NULL, &done.result().unwrap_or(JsValue::UNDEFINED));
            },
        );
        let failed = request.clone();
        listen(
            |f| request.set_onerror(f),
            move || {
                let _ = reject.call1(&JsValue::NULL, &error_text(what, failed.error().ok().flatten()).into());
            },
        );
    });
    JsFuture::from(promise).await.map_err(|e| e.as_string().unwrap_or_default())
}

/// Resolves once the transaction committed; its error (by name) when it aborted.
async fn committed(tx: &IdbTransaction) -> Result<(), (String, String)> {
    let promise = Promise::new(&mut |resolve, reject| {
        listen(
            |f| tx.set_oncomplete(f),
            move || {
                let _ = resolve.call0(&JsValue::NULL);
            },
        );
        let aborted = tx.clone();
        listen(
            |f| tx.set_onabort(f),
            move || {
                let error = aborted.error();
                let name = error.as_ref().map(|e| e.name()).unwrap_or_default();
                let pair = js_sys::Array::of2(&name.into(), &error_text("storing the device key", error).into());
                let _ = reject.call1(&JsValue::NULL, &pair);
            },
        );
    });
    JsFuture::from(promise).await.map(|_| ()).map_err(|e| {
        let pair = js_sys::Array::from(&e);
        (pair.get(0).as_string().unwrap_or_default(), pair.get(1).as_string().unwrap_or_default())
    })
}

/// The device key stored in `db`.
pub async fn read(db: &IdbDatabase) -> Result<Stored, String> {
    let tx = db.transaction_with_str(DEVICE).map_err(|e| format!("reading the device key: {}", crate::io::browser::js_error_text(&e)))?;
    let store = tx.object_store(DEVICE).map_err(|e| crate::io::browser::js_error_text(&e))?;
    let request = store.get(&RECORD_KEY.into()).map_err(|e| crate::io::browser::js_error_text(&e))?;
    let record = settle(&request, "reading the device key").await?;
    if record.is_undefined() {
        return Ok(Stored::Nothing);
    }
    Ok(KeyRecord::from_js(&record).map_or(Stored::Damaged, Stored::Key))
}

/// Stores `record` unless a key is already there (`replace`: over a damaged one).
pub async fn add(db: &IdbDatabase, record: &KeyRecord, replace: bool) -> Result<Added, String> {
    let tx = db
        .transaction_with_str_and_mode(DEVICE, IdbTransactionMode::Readwrite)
        .map_err(|e| format!("storing the device key: {}", crate::io::browser::js_error_text(&e)))?;
    let store = tx.object_store(DEVICE).map_err(|e| crate::io::browser::js_error_text(&e))?;
    let value = record.to_js();
    let request = if replace { store.put_with_key(&value, &RECORD_KEY.into()) } else { store.add_with_key(&value, &RECORD_KEY.into()) };
    // An `add` over an existing key fails its request and aborts the transaction: that
    // abort, by its error's name, is the answer.
    request.map_err(|e| format!("storing the device key: {}", crate::io::browser::js_error_text(&e)))?;
    match committed(&tx).await {
        Ok(()) => Ok(Added::Added),
        Err((name, _)) if name == "ConstraintError" => Ok(Added::AlreadyThere),
        Err((_, why)) => Err(why),
    }
}
