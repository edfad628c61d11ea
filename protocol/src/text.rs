//! Text rules shared by the gateway and the UI.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What `encodeURIComponent` leaves as it is: letters, digits and `-_.!~*'()`.
const URI_COMPONENT: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'!').remove(b'~').remove(b'*').remove(b'\'').remove(b'(').remove(b')');

/// `s` as one query or path component (`encodeURIComponent`).
pub fn encode_uri_component(s: &str) -> String {
    utf8_percent_encode(s, URI_COMPONENT).to_string()
}

/// Unicode lowercase (default case conversion, final sigma included), for the protocol's
/// case-insensitive comparisons of option labels and reply keys.
///
/// In the browser this is JavaScript's own `toLowerCase()`, which is also what the real
/// gateway (Node) uses; Rust's `str::to_lowercase` would bring its Unicode case tables into
/// the UI bundle (about 8 KB gzip). Natively it is `str::to_lowercase`, and a browser test
/// checks the two agree.
pub fn lowercase(s: &str) -> String {
    #[cfg(target_arch = "wasm32")]
    {
        String::from(js_sys::JsString::from(s).to_lower_case())
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        s.to_lowercase()
    }
}
