//! Thin adapters over browser APIs: storage, the address bar, time and randomness.
//! Every function degrades to "nothing stored" instead of panicking when an API is
//! unavailable (private mode, blocked storage).

use web_sys::Storage;

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

fn local() -> Option<Storage> {
    window()?.local_storage().ok().flatten()
}

fn session() -> Option<Storage> {
    window()?.session_storage().ok().flatten()
}

pub fn local_get(key: &str) -> Option<String> {
    local()?.get_item(key).ok().flatten()
}

/// Returns false when the value could not be stored (quota, blocked storage).
pub fn local_set(key: &str, value: &str) -> bool {
    local().is_some_and(|s| s.set_item(key, value).is_ok())
}

/// The same bytes as a Blob of type `kind` (no copy through wasm memory).
pub fn retype_blob(blob: &web_sys::Blob, kind: &str) -> Result<web_sys::Blob, String> {
    let parts = js_sys::Array::of1(blob);
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(kind);
    web_sys::Blob::new_with_blob_sequence_and_options(&parts, &options).map_err(|e| js_error_text(&e))
}

pub fn local_remove(key: &str) {
    if let Some(s) = local() {
        let _ = s.remove_item(key);
    }
}

/// Every key in `localStorage` (empty when it is unavailable).
pub fn local_keys() -> Vec<String> {
    let Some(s) = local() else { return Vec::new() };
    let n = s.length().unwrap_or(0);
    (0..n).filter_map(|i| s.key(i).ok().flatten()).collect()
}

/// Every key in this tab's `sessionStorage` (empty when it is unavailable).
pub fn session_keys() -> Vec<String> {
    let Some(s) = session() else { return Vec::new() };
    let n = s.length().unwrap_or(0);
    (0..n).filter_map(|i| s.key(i).ok().flatten()).collect()
}

pub fn session_get(key: &str) -> Option<String> {
    session()?.get_item(key).ok().flatten()
}

pub fn session_set(key: &str, value: &str) -> bool {
    session().is_some_and(|s| s.set_item(key, value).is_ok())
}

pub fn session_remove(key: &str) {
    if let Some(s) = session() {
        let _ = s.remove_item(key);
    }
}

pub fn location() -> Option<web_sys::Location> {
    Some(window()?.location())
}

/// The base path the real gateway serves the UI under (`data-openclaw-control-ui-base-path`
/// on `<html>`; empty at the root).
pub fn base_path() -> String {
    window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .and_then(|e| e.get_attribute("data-openclaw-control-ui-base-path"))
        .unwrap_or_default()
}

/// The gateway that serves this page: its origin's, under its base path.
pub fn own_gateway_url() -> String {
    location()
        .map(|l| model::url::default_gateway_url(&l.protocol().unwrap_or_default(), &l.host().unwrap_or_default(), &base_path()))
        .unwrap_or_default()
}

/// The page's path inside the app, without the base path (`/ask/<id>`, never `/ui/ask/<id>`).
pub fn app_path() -> String {
    let path = location().and_then(|l| l.pathname().ok()).unwrap_or_default();
    model::url::app_path(&path, &base_path()).to_string()
}

/// The conversations the address's query names (`?session=A&pane=B`).
pub fn page_query() -> model::url::PageQuery {
    model::url::parse_page_query(&location().and_then(|l| l.search().ok()).unwrap_or_default())
}

/// Puts `query` (from `model::url::page_query`) in the address bar, keeping the path and the
/// fragment, without a history entry.
pub fn set_page_query(query: &str) {
    let Some(loc) = location() else {
        return;
    };
    replace_url(&format!("{}{query}{}", loc.pathname().unwrap_or_default(), loc.hash().unwrap_or_default()));
}

/// `http://host:port` of the page.
pub fn page_origin() -> String {
    location().and_then(|l| l.origin().ok()).unwrap_or_default()
}

pub fn platform() -> String {
    window().and_then(|w| w.navigator().platform().ok()).filter(|p| !p.is_empty()).unwrap_or_else(|| "web".into())
}

/// Replaces the address bar's URL without navigating (used to drop `#token=`).
pub fn replace_url(url: &str) {
    if let Some(h) = window().and_then(|w| w.history().ok()) {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url));
    }
}

pub fn log_warn(msg: &str) {
    web_sys::console::warn_1(&msg.into());
}

/// A thrown JS value in words (an `Error`'s name and message, or the value itself).
pub fn js_error_text(e: &wasm_bindgen::JsValue) -> String {
    use wasm_bindgen::JsCast;
    match e.dyn_ref::<js_sys::Error>() {
        Some(err) => format!("{}: {}", String::from(err.name()), String::from(err.message())),
        None => e.as_string().unwrap_or_else(|| "an unknown error".into()),
    }
}

/// A Blob's bytes in standard padded base64, as `chat.send` takes a file's `content`. The
/// browser encodes (`FileReader.readAsDataURL`): the bytes are never copied into this module's
/// memory, only their base64 text.
pub async fn blob_base64(blob: &web_sys::Blob) -> Result<String, String> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let reader = web_sys::FileReader::new().map_err(|e| js_error_text(&e))?;
    let (done, finished) = futures_channel::oneshot::channel::<()>();
    let on_end = Closure::once(move || {
        let _ = done.send(());
    });
    reader.set_onloadend(Some(on_end.as_ref().unchecked_ref()));
    reader.read_as_data_url(blob).map_err(|e| js_error_text(&e))?;
    let _ = finished.await;
    let url = reader.result().ok().and_then(|r| r.as_string()).ok_or_else(|| {
        reader.error().map_or_else(|| "the file could not be read".to_string(), |e| format!("{}: {}", e.name(), e.message()))
    })?;
    // `data:<type>;base64,<content>`
    url.split_once(',').map(|(_, b64)| b64.to_string()).ok_or_else(|| "the file could not be read as base64".to_string())
}

/// Resolves after `ms` milliseconds.
pub async fn sleep_ms(ms: u64) {
    let (done, finished) = futures_channel::oneshot::channel::<()>();
    leptos::prelude::set_timeout(
        move || {
            let _ = done.send(());
        },
        std::time::Duration::from_millis(ms),
    );
    let _ = finished.await;
}

/// Saves `text` as the file `name` (the browser's download), typed `kind`.
pub fn download(name: &str, text: &str, kind: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(kind);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).map_err(|e| js_error_text(&e))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| js_error_text(&e))?;
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let link = document.create_element("a").map_err(|e| js_error_text(&e))?;
    let _ = link.set_attribute("href", &url);
    let _ = link.set_attribute("download", name);
    link.unchecked_ref::<web_sys::HtmlElement>().click();
    // After the browser took the click: the file's bytes are not kept in the page.
    leptos::prelude::set_timeout(move || drop(web_sys::Url::revoke_object_url(&url)), std::time::Duration::from_secs(30));
    Ok(())
}
