//! The credential guard: does an answer look like a secret someone pasted by mistake?
//!
//! An answer to `ask_user`, an async answer or a chat reply enters the transcript and the
//! agent's context for good. OpenClaw's own documentation says never to answer with a
//! credential (the agent should ask through the `secrets` tool), but nothing checks. Here the
//! shapes of well-known keys, private-key blocks, JWTs, bearer tokens and long random tokens are
//! recognised, so the page can hold such an answer until the person means it.
//!
//! The rules are tuned against the corpus in `model/tests/credential_corpus/` (real shapes,
//! fake values; and ordinary answers: prose, option labels, UUIDs, git SHAs, URLs, paths,
//! base64 in code, numbers, emails), whose figures the README reports.

/// What was recognised, in words a person can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialKind {
    OpenAiKey,
    AnthropicKey,
    GitHubToken,
    SlackToken,
    AwsAccessKey,
    GoogleApiKey,
    GitLabToken,
    StripeSecretKey,
    PrivateKey,
    Jwt,
    BearerToken,
    /// A long token that looks random (high entropy, mixed characters).
    RandomToken,
}

impl CredentialKind {
    /// "an OpenAI API key", for "This looks like …".
    pub fn describe(self) -> &'static str {
        match self {
            CredentialKind::OpenAiKey => "an OpenAI API key",
            CredentialKind::AnthropicKey => "an Anthropic API key",
            CredentialKind::GitHubToken => "a GitHub token",
            CredentialKind::SlackToken => "a Slack token",
            CredentialKind::AwsAccessKey => "an AWS access key",
            CredentialKind::GoogleApiKey => "a Google API key",
            CredentialKind::GitLabToken => "a GitLab token",
            CredentialKind::StripeSecretKey => "a Stripe secret key",
            CredentialKind::PrivateKey => "a private key",
            CredentialKind::Jwt => "a JSON Web Token",
            CredentialKind::BearerToken => "a bearer token",
            CredentialKind::RandomToken => "a long random token (a password or API key?)",
        }
    }
}

/// One recognised credential: its kind and a masked preview (never the value itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialMatch {
    pub kind: CredentialKind,
    /// The first few and last two characters, e.g. `sk-pro…f3`, so the person sees which part
    /// of their text was meant without the page repeating the secret.
    pub preview: String,
}

fn mask(token: &str) -> String {
    let chars: Vec<char> = token.chars().collect();
    if chars.len() <= 8 {
        return "…".into();
    }
    let head: String = chars[..6].iter().collect();
    let tail: String = chars[chars.len() - 2..].iter().collect();
    format!("{head}…{tail}")
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_')
}

/// The maximal runs of `[A-Za-z0-9_-]` in `text` (what a key is made of).
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_token_char(c)).filter(|t| !t.is_empty())
}

fn all(s: &str, f: impl Fn(char) -> bool) -> bool {
    !s.is_empty() && s.chars().all(f)
}

fn alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// Well-known prefixes with the length and alphabet their keys have.
fn known_prefix(token: &str) -> Option<CredentialKind> {
    let rest_ok = |rest: &str, min: usize| rest.len() >= min && all(rest, is_token_char);
    if let Some(rest) = token.strip_prefix("sk-ant-") {
        return rest_ok(rest, 20).then_some(CredentialKind::AnthropicKey);
    }
    if let Some(rest) = token.strip_prefix("sk_live_").or_else(|| token.strip_prefix("rk_live_")) {
        return (rest.len() >= 16 && all(rest, alnum)).then_some(CredentialKind::StripeSecretKey);
    }
    if let Some(rest) = token.strip_prefix("sk-") {
        // sk-…, sk-proj-…, sk-svcacct-…: long, with digits somewhere (not a word like sk-learn).
        return (rest_ok(rest, 20) && rest.chars().any(|c| c.is_ascii_digit())).then_some(CredentialKind::OpenAiKey);
    }
    if let Some(rest) = token.strip_prefix("github_pat_") {
        return rest_ok(rest, 22).then_some(CredentialKind::GitHubToken);
    }
    for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        if let Some(rest) = token.strip_prefix(p) {
            return (rest.len() >= 30 && all(rest, alnum)).then_some(CredentialKind::GitHubToken);
        }
    }
    if let Some(rest) = token.strip_prefix("glpat-") {
        return rest_ok(rest, 20).then_some(CredentialKind::GitLabToken);
    }
    if token.len() > 5
        && token.starts_with("xox")
        && matches!(token.as_bytes()[3], b'a' | b'b' | b'p' | b'o' | b's' | b'r' | b'e')
        && token.as_bytes()[4] == b'-'
    {
        let rest = &token[5..];
        return (rest.len() >= 10 && rest.chars().filter(|c| c.is_ascii_digit()).count() >= 6).then_some(CredentialKind::SlackToken);
    }
    for p in ["AKIA", "ASIA"] {
        if let Some(rest) = token.strip_prefix(p) {
            return (rest.len() == 16 && all(rest, |c| c.is_ascii_uppercase() || c.is_ascii_digit()))
                .then_some(CredentialKind::AwsAccessKey);
        }
    }
    if let Some(rest) = token.strip_prefix("AIza") {
        return (rest.len() == 35 && all(rest, is_token_char)).then_some(CredentialKind::GoogleApiKey);
    }
    None
}

fn is_base64url(s: &str) -> bool {
    all(s, is_token_char)
}

/// `xxx.yyy.zzz` whose first part is a base64url JSON object (`eyJ` is `{"`).
fn jwt_in(text: &str) -> Option<&str> {
    text.split(|c: char| !(is_token_char(c) || c == '.')).find(|t| {
        let parts: Vec<&str> = t.split('.').collect();
        parts.len() == 3
            && parts[0].starts_with("eyJ")
            && parts[0].len() >= 10
            && parts[1].len() >= 10
            && parts[2].len() >= 16
            && parts.iter().all(|p| is_base64url(p))
    })
}

fn private_key_block(text: &str) -> bool {
    (text.contains("-----BEGIN") && text.contains("PRIVATE KEY")) || text.contains("PuTTY-User-Key-File")
}

/// `Bearer <token>` (also `Authorization: Bearer`), the token at least 20 characters.
fn bearer_in(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find("bearer") {
        let at = from + i + "bearer".len();
        let rest = &text[at..];
        let trimmed = rest.trim_start_matches([' ', '\t', ':']);
        if trimmed.len() < rest.len() {
            let token: &str = trimmed.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';')).next().unwrap_or("");
            if token.len() >= 20 && token.chars().all(|c| is_token_char(c) || matches!(c, '.' | '~' | '+' | '/' | '=')) {
                return Some(token);
            }
        }
        from = at;
    }
    None
}

/// Whether `s` is base64 (either alphabet, padded or not) of mostly printable text: encoded
/// configuration or prose in a code snippet, not a key. A random key decodes to random bytes,
/// of which only about a third are printable.
fn encodes_text(s: &str) -> bool {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const CONFIG: GeneralPurposeConfig =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent).with_decode_allow_trailing_bits(true);
    const STANDARD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, CONFIG);
    const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, CONFIG);
    if s.len() < 16 {
        return false;
    }
    let Ok(bytes) = STANDARD.decode(s).or_else(|_| URL_SAFE.decode(s)) else { return false };
    let printable = bytes.iter().filter(|b| matches!(b, 0x20..=0x7e | b'\n' | b'\r' | b'\t')).count();
    printable * 100 >= bytes.len() * 90
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 128];
    let mut n = 0u32;
    for b in s.bytes().filter(|b| *b < 128) {
        counts[b as usize] += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|&c| {
            let p = f64::from(c) / f64::from(n);
            -p * p.log2()
        })
        .sum()
}

/// A long token that looks generated rather than written: at least 32 characters of
/// `[A-Za-z0-9_-]` with upper case, lower case and digits all present, high entropy, and not one
/// of the ordinary long tokens (hex such as git SHAs and hashes, UUIDs, words joined by `-` or
/// `_`). Base64 with `+`, `/` or `=` is split apart by the tokenizer, so snippets in code pass.
fn random_token(token: &str) -> bool {
    if token.len() < 32 || token.len() > 512 {
        return false;
    }
    // Subresource-integrity hashes are public.
    if ["sha256-", "sha384-", "sha512-"].iter().any(|p| token.starts_with(p)) {
        return false;
    }
    // Base64 of binary data (images, fonts) has runs like `AAAA` (zero bytes); a generated key
    // of 62 symbols almost never repeats one four times.
    if token.as_bytes().windows(4).any(|w| w.iter().all(|b| *b == w[0])) {
        return false;
    }
    if encodes_text(token) {
        return false;
    }
    if all(token, |c| c.is_ascii_hexdigit() || c == '-') {
        return false; // git SHAs, sha256 sums, UUIDs
    }
    let upper = token.chars().filter(char::is_ascii_uppercase).count();
    let lower = token.chars().filter(char::is_ascii_lowercase).count();
    let digits = token.chars().filter(char::is_ascii_digit).count();
    if upper < 2 || lower < 2 || digits < 2 {
        return false;
    }
    // identifiers_like_this or kebab-case-words: every piece is short and mostly letters.
    let pieces: Vec<&str> = token.split(['-', '_']).filter(|p| !p.is_empty()).collect();
    if pieces.len() > 1 && pieces.iter().all(|p| p.len() <= 12) {
        return false;
    }
    // Case changes: random text switches case far more often than CamelCaseIdentifiers.
    let switches = token
        .as_bytes()
        .windows(2)
        .filter(|w| {
            (w[0].is_ascii_uppercase() && w[1].is_ascii_lowercase())
                || (w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
                || (w[0].is_ascii_digit() != w[1].is_ascii_digit())
        })
        .count();
    entropy(token) >= 4.2 && switches * 4 >= token.len()
}

/// The first credential-shaped part of `text`, if any.
pub fn detect(text: &str) -> Option<CredentialMatch> {
    if private_key_block(text) {
        return Some(CredentialMatch { kind: CredentialKind::PrivateKey, preview: "-----BEGIN … PRIVATE KEY-----".into() });
    }
    if let Some(jwt) = jwt_in(text) {
        return Some(CredentialMatch { kind: CredentialKind::Jwt, preview: mask(jwt) });
    }
    if let Some(token) = bearer_in(text) {
        return Some(CredentialMatch { kind: CredentialKind::BearerToken, preview: mask(token) });
    }
    for token in tokens(text) {
        if let Some(kind) = known_prefix(token) {
            return Some(CredentialMatch { kind, preview: mask(token) });
        }
    }
    // Long random tokens, outside URLs (a URL's path or query may be long and random, and is
    // shared on purpose; a token in its query is caught by its known prefix above).
    let mut previous = "";
    for word in text.split_whitespace() {
        // An SSH public key (`ssh-ed25519 AAAA…`) is meant to be shared.
        let public_key = previous.starts_with("ssh-") || previous.starts_with("ecdsa-sha2-");
        previous = word;
        if public_key || word.contains("://") || word.starts_with("www.") || word.starts_with("data:") {
            continue;
        }
        // A base64 string with `+` or `/` is split into pieces by the tokenizer; judge it whole.
        let core = word.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_')));
        if encodes_text(core) {
            continue;
        }
        if let Some(t) = tokens(word).find(|t| random_token(t)) {
            return Some(CredentialMatch { kind: CredentialKind::RandomToken, preview: mask(t) });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preview_never_repeats_the_secret() {
        let m = detect("my key is sk-proj-4fK9sL2mQ8xZ7vB3nH6jT1rW5yE0uI9oP2aS").unwrap();
        assert_eq!(m.kind, CredentialKind::OpenAiKey);
        assert_eq!(m.preview, "sk-pro…aS");
        assert!(!m.preview.contains("4fK9sL2mQ8"));
    }

    #[test]
    fn ordinary_answers_pass() {
        for t in [
            "Staging (Recommended)",
            "Yes",
            "",
            "deploy after the 15:00 standup",
            "3f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c",
            "550e8400-e29b-41d4-a716-446655440000",
            "sk-learn is fine",
        ] {
            assert_eq!(detect(t), None, "{t}");
        }
    }
}
