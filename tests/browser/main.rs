//! `wasm-bindgen-test` in headless Chromium: the tests that can share one page, in one binary
//! (one link, one wasm-bindgen pass and one browser instead of one each). Each module uses its
//! own IndexedDB database and storage keys. Tests that need a page of their own stay separate:
//! `upgrade_from_v2` and `storage_reopen` (the app's own database), `panic_hook` (a real panic
//! leaves the instance's panic count raised).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test_configure;

wasm_bindgen_test_configure!(run_in_browser);

mod attachments_idb;
mod browser_storage;
mod crash_banner;
mod outbox_idb;
mod push_manager;
mod status_bar;
mod storage_idb;
mod unicode_case;
