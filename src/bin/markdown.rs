//! The page's markdown module: agent text turned into safe DOM (`model::markdown`, built by
//! `control_ui::components::markdown::fill`). The parser is about a tenth of the app's wasm and
//! most first views never need it (a question, a plain transcript), so it is its own module,
//! fetched the first time a message needs it (`io::markdown_module`) and kept by the service
//! worker from then on, instead of being part of every first download.
//!
//! Built by Trunk beside the app (`index.html`, a `rel="rust"` asset of type `worker`, which Trunk
//! builds and leaves to the page); `scripts/post-build.mjs` puts its glue into the page with the
//! loader, `window.ocuiRenderMarkdown(element, text)`. A panic logs its message and location and
//! shows the app's reload banner, as the app's own do.

use wasm_bindgen::prelude::wasm_bindgen;

/// Replaces `element`'s children with the nodes of the markdown `text` (untrusted agent text).
#[wasm_bindgen]
pub fn render(element: &web_sys::Element, text: &str) {
    control_ui::components::markdown::fill(element, text);
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        control_ui::io::crash::show_banner();
    }));
}
