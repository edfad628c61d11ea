//! The page's early module: signs and sends the first `connect` while the app's wasm is still
//! on its way (`control_ui::io::early_connect`). Built by Trunk beside the app (`index.html`,
//! a `rel="rust"` asset of type `worker`, which Trunk builds and leaves to the page to load);
//! its glue and wasm are kept on use, and the loader's part "early" (`src/loader.js`) imports
//! and starts it on visits whose service worker holds both.
//!
//! It links only what sending `connect` needs: the identity, the token and the request, none of
//! the views. If it panics, the message goes to the console and the loader's `ready` promise
//! is settled without a `connect`: the app connects by itself.

fn main() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        control_ui::io::early_connect::settle();
    }));
    wasm_bindgen_futures::spawn_local(control_ui::io::early_connect::run());
}
