//! The markdown module (`src/bin/markdown.rs`), loaded the first time a message needs it. The
//! page's loader (`window.ocuiRenderMarkdown`, written by `scripts/post-build.mjs`) fetches and
//! starts it once, and again after a failed try; this is the app's only way to it.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::{JsValue, wasm_bindgen};
use web_sys::Element;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = window, js_name = ocuiRenderMarkdown, catch)]
    fn render_in_module(element: &Element, text: &str) -> Result<js_sys::Promise, JsValue>;
}

/// Why a message could not be formatted, in words for the person reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFormatted(pub String);

/// Fills `element` with the markdown `text` as safe DOM, once the module is there. Until then,
/// and if it cannot be loaded, `element` keeps what it holds.
pub async fn render(element: &Element, text: &str) -> Result<(), NotFormatted> {
    let promise = render_in_module(element, text).map_err(|e| NotFormatted(describe(&e)))?;
    wasm_bindgen_futures::JsFuture::from(promise).await.map(drop).map_err(|e| NotFormatted(describe(&e)))
}

fn describe(error: &JsValue) -> String {
    if let Some(e) = error.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    error.as_string().unwrap_or_else(|| "the markdown module could not be loaded".to_string())
}
