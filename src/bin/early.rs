//! The page's early module: signs and sends the first `connect` while the app's wasm is still
//! on its way (`control_ui::io::early_connect`). Built by Trunk beside the app (`index.html`,
//! a `rel="rust"` asset of type `worker`, which Trunk builds and leaves to the page to load)
//! and started by the module script that `scripts/post-build.mjs` puts into the page.
//!
//! It links only what sending `connect` needs: the identity, the token and the request, none of
//! the views. If it panics, the message goes to the console, the loader's `ready` promise is
//! never settled, and the app connects by itself after its wait (`EARLY_CONNECT_WAIT`).

fn main() {
    console_error_panic_hook::set_once();
    wasm_bindgen_futures::spawn_local(control_ui::io::early_connect::run());
}
