//! Gateway configuration: flags, environment and defaults.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

#[derive(Clone)]
pub struct Config {
    pub bind: IpAddr,
    pub port: u16,
    /// Exposing the gateway beyond loopback must be asked for explicitly.
    pub allow_non_loopback: bool,
    pub token: String,
    pub data_dir: PathBuf,
    /// The built UI (`dist/`).
    pub ui_root: PathBuf,
    pub tick_interval_ms: u64,
    /// Browser origins allowed besides loopback ones and the gateway's own.
    pub allowed_origins: Vec<String>,
    pub version: String,
    /// When set, connections with a device identity are granted at most these scopes.
    pub device_scopes: Option<Vec<String>>,
    /// Sockets that may be open at once without a successful `connect` (more get 503).
    pub max_unauthenticated: usize,
    /// Of those, how many one browser Origin may hold (more get 503), so one page cannot take
    /// every pre-connect slot. Sockets without an Origin count only towards the total.
    pub max_unauthenticated_per_origin: usize,
    /// A socket that has not connected this long after opening is closed.
    pub connect_deadline: std::time::Duration,
    /// Backoff after failed sign-ins, per remote address and Origin (`throttle`).
    pub auth_backoff: AuthBackoff,
    /// How often the gateway looks for devices revoked (`gateway devices revoke`, another
    /// process) while their sockets are open, and closes those sockets.
    pub revocation_poll: std::time::Duration,
    /// How often a connected socket is pinged; one that has not answered the last ping by the
    /// next is dropped without a close frame (a half-open or frozen peer). The real gateway
    /// pings every 25 s and allows 25 s for the pong.
    pub keepalive: std::time::Duration,
    /// A PEM certificate Web Push sends trust besides the system's roots (`PUSH_EXTRA_CA`; the
    /// tests' push service on loopback).
    pub push_extra_ca: Option<PathBuf>,
}

/// How failed sign-ins are slowed down (`throttle::AuthThrottle`).
#[derive(Clone, Debug)]
pub struct AuthBackoff {
    /// The failure (within `window`) from which each one locks its key: 3.
    pub free_failures: u32,
    /// The lock after that failure, doubled with each further one: 500 ms.
    pub first_delay: std::time::Duration,
    /// The longest lock: 5 s.
    pub max_delay: std::time::Duration,
    /// Failures older than this are forgotten: 5 minutes.
    pub window: std::time::Duration,
}

impl Default for AuthBackoff {
    fn default() -> Self {
        AuthBackoff {
            free_failures: 3,
            first_delay: std::time::Duration::from_millis(500),
            max_delay: std::time::Duration::from_secs(5),
            window: std::time::Duration::from_secs(300),
        }
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("bind", &self.bind)
            .field("port", &self.port)
            .field("token", &"<redacted>")
            .field("data_dir", &self.data_dir)
            .field("ui_root", &self.ui_root)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Defaults for tests: loopback, a free port, the given token and directories.
    pub fn local(token: &str, data_dir: PathBuf, ui_root: PathBuf) -> Self {
        Config {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            allow_non_loopback: false,
            token: token.to_string(),
            data_dir,
            ui_root,
            tick_interval_ms: protocol::TICK_INTERVAL_MS,
            allowed_origins: Vec::new(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            device_scopes: None,
            max_unauthenticated: 256,
            max_unauthenticated_per_origin: 16,
            connect_deadline: std::time::Duration::from_secs(10),
            auth_backoff: AuthBackoff::default(),
            revocation_poll: std::time::Duration::from_secs(1),
            keepalive: std::time::Duration::from_secs(25),
            push_extra_ca: None,
        }
    }

    /// What must hold before the gateway listens: a loopback address (unless allowed
    /// otherwise) and a shared token strong enough to be the only lock on it.
    pub fn check(&self) -> Result<(), String> {
        if !self.bind.is_loopback() && !self.allow_non_loopback {
            return Err(format!(
                "refusing to listen on {}: it is not a loopback address, so anyone on the network could reach the gateway. Pass --allow-non-loopback to do it anyway.",
                self.bind
            ));
        }
        if self.token.is_empty() {
            return Err("the gateway token must not be empty".into());
        }
        check_token_strength(&self.token)
    }
}

/// Why `--token` is refused (by the gateway, `gateway ask` and `loadgen`).
pub const TOKEN_FLAG_REFUSED: &str = "--token is not accepted: a token on the command line is visible to every user of this machine (ps, /proc/<pid>/cmdline) and stays in the shell history. Give it in the environment instead: TOKEN=… or TOKEN_FILE=path (a file holding only the token).";

/// The shared token from the environment: `TOKEN`, or the file `TOKEN_FILE` names (its
/// content without surrounding whitespace, so `openssl rand -hex 32 > file` works). Both set
/// is an error; neither is `None`. Messages name the file, never its content.
pub fn token_from_env(token: Option<String>, token_file: Option<String>) -> Result<Option<String>, String> {
    match (token, token_file) {
        (Some(_), Some(_)) => Err("TOKEN and TOKEN_FILE are both set: give the token one way only".into()),
        (Some(t), None) => Ok(Some(t)),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read TOKEN_FILE {path}: {e}"))?;
            let t = text.trim();
            if t.is_empty() {
                return Err(format!("TOKEN_FILE {path} is empty"));
            }
            if t.lines().count() > 1 {
                return Err(format!("TOKEN_FILE {path} holds more than one line: it must hold only the token"));
            }
            Ok(Some(t.to_string()))
        }
        (None, None) => Ok(None),
    }
}

/// The least entropy a shared token may have, in bits.
pub const MIN_TOKEN_BITS: f64 = 128.0;

/// A conservative estimate of a token's entropy in bits: the length of the token (of its
/// repeating unit, if it repeats itself) times log2 of the alphabet its character classes
/// span: digits 10, hex digits of one case 16, lower case 26, upper case 26, anything else 33
/// (summed over the classes used). It is an upper bound for anything a person made up, so it
/// only tells a random token from an obviously weak one.
pub fn token_bits(token: &str) -> f64 {
    let chars: Vec<char> = token.chars().collect();
    if chars.is_empty() {
        return 0.0;
    }
    let all = |f: fn(&char) -> bool| chars.iter().all(f);
    let alphabet = if all(char::is_ascii_digit) {
        10
    } else if all(|c| c.is_ascii_digit() || ('a'..='f').contains(c)) || all(|c| c.is_ascii_digit() || ('A'..='F').contains(c)) {
        16
    } else {
        let any = |f: fn(&char) -> bool| u32::from(chars.iter().any(f));
        26 * any(char::is_ascii_lowercase)
            + 26 * any(char::is_ascii_uppercase)
            + 10 * any(char::is_ascii_digit)
            + 33 * any(|c| !c.is_ascii_alphanumeric())
    };
    repeating_unit(&chars) as f64 * f64::from(alphabet).log2()
}

/// The length of the shortest prefix the token repeats (`abcabcab` → 3): the KMP failure
/// function's last value taken from the length.
fn repeating_unit(chars: &[char]) -> usize {
    let mut fail = vec![0usize; chars.len()];
    let mut k = 0;
    for i in 1..chars.len() {
        while k > 0 && chars[i] != chars[k] {
            k = fail[k - 1];
        }
        if chars[i] == chars[k] {
            k += 1;
        }
        fail[i] = k;
    }
    chars.len() - fail.last().copied().unwrap_or(0)
}

/// Refuses a shared token under [`MIN_TOKEN_BITS`], or one of obviously low variety (few
/// different characters, mostly runs like `aaaa` or sequences like `abcd`). The message never
/// repeats the token.
pub fn check_token_strength(token: &str) -> Result<(), String> {
    const HOW: &str = "Make one with `openssl rand -hex 32` and give it in TOKEN (or in a file named by TOKEN_FILE).";
    let chars: Vec<char> = token.chars().collect();
    let distinct = chars.iter().collect::<std::collections::HashSet<_>>().len();
    if distinct < 8 {
        return Err(format!("the gateway token is too weak: it uses only {distinct} different characters. {HOW}"));
    }
    let steps = chars.windows(2).filter(|w| (w[0] as i64 - w[1] as i64).abs() <= 1).count();
    if steps * 2 > chars.len() - 1 {
        return Err(format!("the gateway token is too weak: it is mostly runs or sequences (like `aaaa` or `abcd`). {HOW}"));
    }
    let bits = token_bits(token);
    if bits < MIN_TOKEN_BITS {
        return Err(format!(
            "the gateway token is too weak: about {bits:.0} bits of entropy (its length times log2 of the alphabet it uses), and at least {MIN_TOKEN_BITS:.0} are needed. {HOW}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repeating_unit_is_the_shortest_prefix_the_token_repeats() {
        let unit = |s: &str| repeating_unit(&s.chars().collect::<Vec<_>>());
        assert_eq!((unit("abcabcab"), unit("aaaa"), unit("abcd"), unit("a"), unit("abab")), (3, 1, 4, 1, 2));
    }

    #[test]
    fn hex_digits_and_decimal_digits_count_as_their_own_small_alphabets() {
        assert_eq!(token_bits(&"0123456789abcdef".repeat(4)), 16.0 * 4.0, "a repeated unit counts once");
        assert_eq!(token_bits("9f86d081884c7d659a2feaa0c55ad015"), 32.0 * 4.0);
        assert!((token_bits("1234567890") - 10.0 * 10f64.log2()).abs() < 1e-9);
        assert!((token_bits("aZ9-") - 4.0 * 95f64.log2()).abs() < 1e-9);
    }
}
