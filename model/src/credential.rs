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
    /// `AWS_SECRET_ACCESS_KEY=…` (40 characters of base64).
    AwsSecretKey,
    /// A Slack, Discord or Teams webhook address: whoever holds it can post.
    WebhookUrl,
    /// `scheme://user:password@host`.
    UrlPassword,
    /// A generated value given to a setting named like a secret: `token=`, `api_key:`,
    /// `OPENCLAW_GATEWAY_TOKEN=`, `"password": "…"`, `?access_token=` and the like.
    AssignedSecret,
    /// This page's own gateway token (shared or device token), registered with
    /// [`set_own_secrets`].
    OwnGatewayToken,
    /// 64 hex digits alone, what `openssl rand -hex 32` gives: OpenClaw's usual gateway token.
    HexToken,
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
            CredentialKind::AwsSecretKey => "an AWS secret access key",
            CredentialKind::WebhookUrl => "a webhook address (anyone who has it can post)",
            CredentialKind::UrlPassword => "a password inside an address",
            CredentialKind::AssignedSecret => "a value given to a token, key, secret or password setting",
            CredentialKind::OwnGatewayToken => "this gateway's own access token",
            CredentialKind::HexToken => "a 64-digit hex token, the shape of a gateway token (or a SHA-256 hash)",
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
    let switches = case_switches(token);
    entropy(token) >= 4.2 && switches * 4 >= token.len()
}

/// This page's own secrets: the gateway's shared token and the device token it was given.
/// Text holding one of them is always held, whatever it looks like. The page registers them
/// when it connects ([`set_own_secrets`]); they live in memory only.
static OWN_SECRETS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Registers this page's own secrets (empty strings and ones under 8 characters are ignored:
/// they would match ordinary text). Replaces what was registered before.
pub fn set_own_secrets<S: AsRef<str>>(secrets: &[S]) {
    let own: Vec<String> = secrets.iter().map(|s| s.as_ref().trim().to_string()).filter(|s| s.len() >= 8).collect();
    if let Ok(mut g) = OWN_SECRETS.lock() {
        *g = own;
    }
}

fn own_secret_in(text: &str) -> Option<CredentialMatch> {
    let own = OWN_SECRETS.lock().ok()?;
    // Also with the whitespace taken out: a token pasted across two lines is still the token.
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    own.iter()
        .find(|s| text.contains(s.as_str()) || squeezed.contains(s.as_str()))
        .map(|s| CredentialMatch { kind: CredentialKind::OwnGatewayToken, preview: mask(s) })
}

fn is_base64_char(c: char) -> bool {
    is_token_char(c) || matches!(c, '+' | '/' | '=')
}

/// A piece of an identifier or path written by a person: a word (`settings`, `Panel`, `API`),
/// a number, or a word with a version (`v2`, `python3`).
fn plain_piece(p: &str) -> bool {
    let letters = p.trim_end_matches(|c: char| c.is_ascii_digit());
    letters.is_empty()
        || all(letters, |c| c.is_ascii_lowercase())
        || all(letters, |c| c.is_ascii_uppercase())
        || (letters.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && all(&letters[1..], |c| c.is_ascii_lowercase()))
}

/// Whether a value given to a secret-named setting was generated rather than written: at least
/// `min` characters of hex or base64, with letters and digits, and not words joined together
/// (`your-api-key-here`, `release-2026-12-03`) or one character repeated (`xxxxxxxx…`).
fn generated_value(v: &str, min: usize) -> bool {
    let v = v.trim_end_matches('=');
    if v.len() < min || v.len() > 1024 || !all(v, is_base64_char) {
        return false;
    }
    if v.as_bytes().windows(4).any(|w| w.iter().all(|b| *b == w[0])) {
        return false;
    }
    let digits = v.chars().filter(char::is_ascii_digit).count();
    let letters = v.chars().filter(char::is_ascii_alphabetic).count();
    if digits == 0 || letters == 0 {
        return false;
    }
    if all(v, |c| c.is_ascii_hexdigit()) {
        return true;
    }
    !v.split(['-', '_', '+', '/', '.']).filter(|p| !p.is_empty()).all(plain_piece)
}

/// Environment variables that hold a secret whatever its value looks like.
const SECRET_VARIABLES: &[&str] = &[
    "OPENCLAW_GATEWAY_TOKEN",
    "OPENCLAW_GATEWAY_PASSWORD",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "NPM_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "SLACK_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "TELEGRAM_BOT_TOKEN",
];

/// The words a setting's name is made of: `OPENCLAW_GATEWAY_TOKEN`, `apiKey`, `x-api-key`,
/// `auth.token` all split into lower-case words.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Whether a setting's name says it holds a secret (its last word, or `apikey`-like words).
fn secret_name(name: &str, in_url: bool) -> bool {
    let words = name_words(name);
    let Some(last) = words.last() else { return false };
    let secretish = |w: &str| {
        matches!(
            w,
            "token"
                | "tokens"
                | "key"
                | "keys"
                | "apikey"
                | "secret"
                | "secrets"
                | "password"
                | "passwd"
                | "pwd"
                | "passphrase"
                | "auth"
                | "authorization"
                | "credential"
                | "credentials"
        ) || (in_url && matches!(w, "sig" | "signature" | "code"))
    };
    secretish(last) || (words.len() > 1 && words.iter().any(|w| matches!(w.as_str(), "secret" | "password" | "token")))
}

/// `name = value`, `name: value`, `"name": "value"`: each value given to a secret-named
/// setting, if it looks generated.
fn assigned_secret_in(text: &str) -> Option<CredentialMatch> {
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices(['=', ':']) {
        // The name: the identifier just before, skipping spaces and a closing quote.
        let before = text[..i].trim_end_matches([' ', '\t']).trim_end_matches(['"', '\'']);
        let name_start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))).map_or(0, |j| j + 1);
        let name = &before[name_start..];
        if name.is_empty() || (i + 1 < bytes.len() && bytes[i] == b':' && bytes[i + 1] == b'/') {
            continue; // no name, or `https://`
        }
        let well_known = SECRET_VARIABLES.iter().any(|v| v.eq_ignore_ascii_case(name));
        if !well_known && !secret_name(name, false) {
            continue;
        }
        let after = text[i + 1..].trim_start_matches([' ', '\t', '=']).trim_start_matches(['"', '\'', '`']);
        let value: &str = after.split(|c: char| !(is_base64_char(c) || c == '.' || c == '~')).next().unwrap_or("");
        let generated = generated_value(value, 16)
            || (well_known && value.len() >= 8 && generated_value(value, 8))
            || (words_say_password(name) && generated_value(value, 8));
        if generated {
            let kind = if name.eq_ignore_ascii_case("AWS_SECRET_ACCESS_KEY") || name.eq_ignore_ascii_case("aws_secret_access_key") {
                CredentialKind::AwsSecretKey
            } else {
                CredentialKind::AssignedSecret
            };
            return Some(CredentialMatch { kind, preview: mask(value) });
        }
    }
    None
}

fn words_say_password(name: &str) -> bool {
    name_words(name).iter().any(|w| matches!(w.as_str(), "password" | "passwd" | "pwd" | "passphrase"))
}

/// A value in a URL written as a placeholder, not a real password: `***`, `<password>`,
/// `${DB_PASSWORD}`, `{pass}`, `$PASS`, `xxx`, `password`.
fn placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    v.is_empty()
        || all(v, |c| matches!(c, '*' | 'x' | 'X' | '.' | '•'))
        || v.starts_with('<')
        || v.starts_with('$')
        || v.starts_with('{')
        || v.starts_with('[')
        || matches!(lower.as_str(), "password" | "pass" | "passwd" | "pwd" | "secret" | "changeme" | "redacted")
}

/// Slack, Discord and Microsoft Teams webhook addresses.
fn webhook(host: &str, path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    (host == "hooks.slack.com" && segments.first() == Some(&"services") && segments.len() >= 4)
        || (matches!(host, "discord.com" | "discordapp.com" | "canary.discord.com" | "ptb.discord.com")
            && segments.len() >= 4
            && segments[..2] == ["api", "webhooks"]
            && segments[3].len() >= 20)
        || ((host.ends_with(".webhook.office.com") || host.ends_with(".logic.azure.com")) && segments.len() >= 2)
}

/// What a URL gives away: a password in its user-info, a webhook address, or a secret in a
/// query or fragment value (`?access_token=…`, `#token=…`, `?key=AIza…`). Its path is not
/// judged (long random ids in paths are shared on purpose), except as a webhook.
fn url_secret(word: &str) -> Option<CredentialMatch> {
    let at = word.find("://")?;
    let url = word[at + 3..].trim_end_matches(|c: char| matches!(c, '.' | ',' | ';' | ')' | ']' | '>' | '"' | '\'' | '`'));
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, rest) = url.split_at(authority_end);
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    let host = match authority.rsplit_once('@') {
        Some((user_info, host)) => {
            if let Some((_, password)) = user_info.split_once(':') {
                let password = decode(password);
                if !placeholder(&password) {
                    return Some(CredentialMatch { kind: CredentialKind::UrlPassword, preview: mask(&password) });
                }
            }
            host
        }
        None => authority,
    };
    let host = host.split(':').next().unwrap_or("").to_ascii_lowercase();
    let path_end = rest.find(['?', '#']).unwrap_or(rest.len());
    if webhook(&host, &rest[..path_end]) {
        return Some(CredentialMatch { kind: CredentialKind::WebhookUrl, preview: mask(word) });
    }
    let params = rest[path_end..].split(['?', '#', '&']).filter(|p| p.contains('='));
    for pair in params {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = decode(value);
        if let Some(m) = judge_value(&value) {
            return Some(m);
        }
        if secret_name(&decode(name), true) && generated_value(&value, 16) {
            return Some(CredentialMatch { kind: CredentialKind::AssignedSecret, preview: mask(&value) });
        }
    }
    None
}

/// A value on its own: a well-known key, a JWT or a random token.
fn judge_value(value: &str) -> Option<CredentialMatch> {
    if let Some(jwt) = jwt_in(value) {
        return Some(CredentialMatch { kind: CredentialKind::Jwt, preview: mask(jwt) });
    }
    for token in tokens(value) {
        if let Some(kind) = known_prefix(token) {
            return Some(CredentialMatch { kind, preview: mask(token) });
        }
        if random_token(token) {
            return Some(CredentialMatch { kind: CredentialKind::RandomToken, preview: mask(token) });
        }
    }
    random_base64(value).then(|| CredentialMatch { kind: CredentialKind::RandomToken, preview: mask(value) })
}

/// A random key in standard base64 (`+` and `/`), judged whole: the tokenizer would cut it
/// into pieces too short to judge. Paths and `words/joined+together` are written, not random.
fn random_base64(core: &str) -> bool {
    let body = core.trim_end_matches('=');
    if body.len() < 32
        || body.len() > 512
        || !body.contains(['+', '/'])
        || !all(body, |c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/'))
    {
        return false;
    }
    if body.starts_with('/') || body.as_bytes().windows(4).any(|w| w.iter().all(|b| *b == w[0])) || encodes_text(core) {
        return false;
    }
    let upper = body.chars().filter(char::is_ascii_uppercase).count();
    let lower = body.chars().filter(char::is_ascii_lowercase).count();
    let digits = body.chars().filter(char::is_ascii_digit).count();
    if upper < 2 || lower < 2 || digits < 2 || body.split(['+', '/']).filter(|p| !p.is_empty()).all(plain_piece) {
        return false;
    }
    entropy(body) >= 4.2 && case_switches(body) * 4 >= body.len()
}

/// How often the characters switch between upper case, lower case and digits.
fn case_switches(token: &str) -> usize {
    token
        .as_bytes()
        .windows(2)
        .filter(|w| {
            (w[0].is_ascii_uppercase() && w[1].is_ascii_lowercase())
                || (w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
                || (w[0].is_ascii_digit() != w[1].is_ascii_digit())
        })
        .count()
}

/// The trimmed core of a whitespace-separated word: what a key could be made of.
fn word_core(word: &str) -> &str {
    word.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_')))
}

/// 64 hex digits standing alone, what `openssl rand -hex 32` gives (OpenClaw's usual gateway
/// token): asked about once. Not when the text names it as a hash (`sha256:`, `checksum=`,
/// `@sha256:`), which is shared on purpose.
fn bare_hex_token(text: &str) -> Option<&str> {
    const NAMED: [&str; 5] = ["sha256", "sha-256", "checksum", "digest", "hash"];
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        // Where the word starts in `text` (a separator may take several bytes).
        let start = word.as_ptr() as usize - text.as_ptr() as usize;
        if word.len() != 64 || !all(word, |c| c.is_ascii_hexdigit()) {
            continue;
        }
        let before = text[..start].char_indices().rev().nth(23).map_or(&text[..start], |(i, _)| &text[i..start]).to_ascii_lowercase();
        if !NAMED.iter().any(|n| before.contains(n)) {
            return Some(word);
        }
    }
    None
}

/// The first credential-shaped part of `text`, if any.
pub fn detect(text: &str) -> Option<CredentialMatch> {
    if let Some(m) = own_secret_in(text) {
        return Some(m);
    }
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
    for word in text.split_whitespace() {
        if let Some(m) = url_secret(word) {
            return Some(m);
        }
    }
    if let Some(m) = assigned_secret_in(text) {
        return Some(m);
    }
    if let Some(hex) = bare_hex_token(text) {
        return Some(CredentialMatch { kind: CredentialKind::HexToken, preview: mask(hex) });
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    // A well-known key wrapped onto two lines is named as what it is, before its halves are
    // judged as random tokens.
    if let Some(m) = split_key(&words, true) {
        return Some(m);
    }
    // Long random tokens, outside URLs (a URL's path may be long and random, and is shared on
    // purpose; its user-info, query and fragment were judged above).
    for (i, word) in words.iter().enumerate() {
        // An SSH public key (`ssh-ed25519 AAAA…`) is meant to be shared.
        let previous = if i > 0 { words[i - 1] } else { "" };
        if public_key_after(previous) || skipped_word(word) {
            continue;
        }
        // A base64 string with `+` or `/` is split into pieces by the tokenizer; judge it whole.
        let core = word_core(word);
        if encodes_text(core) {
            continue;
        }
        if random_base64(core) {
            return Some(CredentialMatch { kind: CredentialKind::RandomToken, preview: mask(core) });
        }
        if let Some(t) = tokens(word).find(|t| random_token(t)) {
            return Some(CredentialMatch { kind: CredentialKind::RandomToken, preview: mask(t) });
        }
    }
    split_key(&words, false)
}

fn public_key_after(previous: &str) -> bool {
    previous.starts_with("ssh-") || previous.starts_with("ecdsa-sha2-")
}

fn skipped_word(word: &str) -> bool {
    word.contains("://") || word.starts_with("www.") || word.starts_with("data:")
}

/// A key wrapped onto two or three lines, or with a space inside: consecutive words that are
/// each made only of key characters, judged joined.
fn split_key(words: &[&str], known_only: bool) -> Option<CredentialMatch> {
    // Each piece looks generated on its own: a digit, or case changing inside the word (not
    // just a capital first letter), so words of prose never join into a "key".
    let keyish = |w: &str| {
        w.len() >= 6
            && all(w, is_base64_char)
            && (w.chars().any(|c| c.is_ascii_digit()) || w.chars().skip(1).filter(char::is_ascii_uppercase).count() >= 2)
    };
    for i in 0..words.len() {
        if i > 0 && public_key_after(words[i - 1]) {
            continue;
        }
        let mut joined = String::new();
        for w in words.iter().skip(i).take(3) {
            if !keyish(w) || skipped_word(w) {
                break;
            }
            joined.push_str(w);
            if joined.len() == w.len() {
                continue; // one word alone was judged already
            }
            if let Some(kind) = known_prefix(&joined) {
                return Some(CredentialMatch { kind, preview: mask(&joined) });
            }
            if !known_only && !encodes_text(&joined) && (random_token(&joined) || random_base64(&joined)) {
                return Some(CredentialMatch { kind: CredentialKind::RandomToken, preview: mask(&joined) });
            }
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
    fn this_tabs_own_token_is_always_held_even_when_it_looks_ordinary() {
        // Hex, like `openssl rand -hex 32` makes, and words: neither shape is held on its own.
        let shared = "a7c41e09d2b85f36e01c9ab472d5e8f3";
        let device = "plain-words-device-token";
        assert_eq!(detect(&format!("the token is {shared}")), None);
        set_own_secrets(&[shared, device, "short"]);
        for text in [format!("the token is {shared}"), format!("{}\n{}", &shared[..16], &shared[16..]), format!("use {device} here")] {
            let m = detect(&text).unwrap_or_else(|| panic!("held: {text}"));
            assert_eq!(m.kind, CredentialKind::OwnGatewayToken);
            assert!(!m.preview.contains(&shared[6..30]));
        }
        assert_eq!(detect("a short answer"), None, "secrets under 8 characters are not registered");
        set_own_secrets::<&str>(&[]);
        assert_eq!(detect(&format!("use {device} here")), None);
    }

    #[test]
    fn a_bare_64_hex_token_is_held_whoever_registered_it() {
        let token = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        let m = detect(&format!("here it is {token}")).unwrap();
        assert_eq!(m.kind, CredentialKind::HexToken);
        assert!(!m.preview.contains(&token[6..60]));
        assert_eq!(detect(&format!("{token}ab")), None, "66 digits are not that shape");
        assert_eq!(detect("commit 3f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c"), None, "a git SHA (40) passes");
        assert_eq!(detect(&format!("sha256: {token}")), None, "a hash named as one passes");
        assert_eq!(detect(&format!("éé→ {token}")).unwrap().kind, CredentialKind::HexToken, "after separators of several bytes");
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
