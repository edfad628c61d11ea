//! In headless Chromium: the browser's lowercase (what the UI uses for case-insensitive
//! option labels and reply keys) agrees with Rust's, which the local gateway uses.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::*;

#[wasm_bindgen_test]
fn browser_lowercase_matches_rust_lowercase() {
    let samples = [
        "Staging",
        "PRODUCTION",
        "ÄÖÜ straße",
        "ẞ",
        "ΣΑΣ ΟΔΟΣ",
        "Σ",
        "İstanbul",
        "ǅ ǈ ǋ",
        "ДЕПЛОЙ",
        "Ｆｕｌｌｗｉｄｔｈ",
        "ꞫꞬꞭ",
        "𐐀𐐁",
        "Ⅻ",
        "ǰ",
        "",
        "  mixed Case 123 ",
    ];
    for s in samples {
        assert_eq!(protocol::text::lowercase(s), s.to_lowercase(), "{s:?}");
    }
    // Not the ASCII shortcut: non-ASCII letters fold too.
    assert_eq!(protocol::text::lowercase("ÄRGER"), "ärger");
}
