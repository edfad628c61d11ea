//! Base64url without padding, as used for device keys and signatures.
//! Hand-written so the UI bundle does not carry a general base64 crate.

const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64url without padding.
pub fn encode(bytes: &[u8]) -> String {
    encode_with(bytes, URL_SAFE, false)
}

/// Standard base64 with padding (CSP source hashes use it).
pub fn encode_standard(bytes: &[u8]) -> String {
    encode_with(bytes, STANDARD, true)
}

fn encode_with(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
        if pad {
            for _ in chars..4 {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes base64url; also accepts the standard alphabet and trailing `=` padding,
/// because other clients are not always strict about it.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits must be zero padding, or the text was not canonical.
    if acc != 0 {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors_round_trip() {
        for (raw, enc) in [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("\u{ff}\u{fe}", "w7_Dvg")] {
            assert_eq!(encode(raw.as_bytes()), enc);
            assert_eq!(decode(enc).unwrap(), raw.as_bytes());
        }
        assert_eq!(decode("Zg=="), Some(b"f".to_vec()));
        assert_eq!(encode_standard(b"f"), "Zg==");
        assert_eq!(encode_standard(&[0xfb, 0xff]), "+/8=");
        assert_eq!(decode("Z"), None);
        assert_eq!(decode("Zh"), None, "non-zero leftover bits are rejected");
        assert_eq!(decode("Zm9v!"), None);
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_round_trip(bytes: Vec<u8>) {
            proptest::prop_assert_eq!(decode(&encode(&bytes)), Some(bytes));
        }
        #[test]
        fn decode_never_panics(text: String) {
            let _ = decode(&text);
        }
    }
}
