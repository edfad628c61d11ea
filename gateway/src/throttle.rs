//! Backoff after failed sign-ins, per remote address and Origin.
//!
//! A wrong shared token or device token is a failure. The first [`AuthBackoff::free_failures`]
//! − 1 failures within [`AuthBackoff::window`] cost nothing; from the `free_failures`-th on,
//! each failure locks its key for `first_delay × 2^(n − free_failures)`, at most `max_delay`,
//! and that failure's answer is held back as long (its `retryAfterMs` says how long). While a
//! key is locked, a `connect` from it is refused at once with `AUTH_RATE_LIMITED` and its
//! token is not even compared, so many sockets in parallel guess no faster than one. Only the
//! attacker's key waits: the handshake answer is delayed on that socket alone, and a client
//! from another address or Origin (the person's own tab) is not slowed. A success clears the
//! key.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::config::AuthBackoff;

/// Whose attempts count together: the remote address and the page's Origin (none for a
/// program that is not a browser).
pub type Key = (IpAddr, Option<String>);

/// Keys remembered at most; past it, keys whose window ended are forgotten first.
const MAX_KEYS: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    first_at: Instant,
    locked_until: Option<Instant>,
}

#[derive(Default)]
pub struct AuthThrottle {
    entries: Mutex<HashMap<Key, Entry>>,
}

/// The key of a connection: its address (unspecified when unknown, as for in-process tests)
/// and its Origin, cut to 256 bytes.
pub fn key(remote: Option<IpAddr>, origin: Option<&str>) -> Key {
    let origin = origin.map(|o| o.get(..256).unwrap_or(o).to_string());
    (remote.unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)), origin)
}

impl AuthBackoff {
    /// How long the `failures`-th failure in a window locks its key.
    pub fn delay(&self, failures: u32) -> Option<Duration> {
        let over = failures.checked_sub(self.free_failures)?;
        let factor = 1u32.checked_shl(over.min(20)).unwrap_or(u32::MAX);
        Some(self.first_delay.saturating_mul(factor).min(self.max_delay))
    }
}

impl AuthThrottle {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long `key` must still wait, if it is locked.
    pub fn locked(&self, key: &Key, now: Instant) -> Option<Duration> {
        let until = self.entries().get(key)?.locked_until?;
        (until > now).then(|| until - now)
    }

    /// Records a failure; returns how long it locks the key (and holds its answer back).
    pub fn failed(&self, key: &Key, now: Instant, rule: &AuthBackoff) -> Option<Duration> {
        let mut entries = self.entries();
        if entries.len() >= MAX_KEYS && !entries.contains_key(key) {
            entries.retain(|_, e| now.duration_since(e.first_at) < rule.window || e.locked_until.is_some_and(|u| u > now));
        }
        let e = entries.entry(key.clone()).or_insert(Entry { failures: 0, first_at: now, locked_until: None });
        if now.duration_since(e.first_at) >= rule.window {
            *e = Entry { failures: 0, first_at: now, locked_until: None };
        }
        e.failures = e.failures.saturating_add(1);
        let delay = rule.delay(e.failures);
        e.locked_until = delay.map(|d| now + d);
        delay
    }

    /// A successful sign-in clears the key's failures.
    pub fn succeeded(&self, key: &Key) {
        self.entries().remove(key);
    }

    /// Failures counted for `key` in its current window (diagnostics and tests).
    pub fn failures(&self, key: &Key) -> u32 {
        self.entries().get(key).map_or(0, |e| e.failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_from_the_third_failure_up_to_the_cap_and_a_window_or_success_resets_it() {
        let rule = AuthBackoff::default();
        let delays: Vec<Option<u128>> = (1..=8).map(|n| rule.delay(n).map(|d| d.as_millis())).collect();
        assert_eq!(delays, [None, None, Some(500), Some(1000), Some(2000), Some(4000), Some(5000), Some(5000)]);
        assert_eq!(rule.delay(u32::MAX).map(|d| d.as_millis()), Some(5000));

        let t = AuthThrottle::default();
        let k = key(Some("127.0.0.1".parse().unwrap()), Some("http://evil.example"));
        let other = key(Some("127.0.0.1".parse().unwrap()), Some("http://127.0.0.1:18789"));
        let now = Instant::now();
        assert_eq!(t.failed(&k, now, &rule), None);
        assert_eq!(t.failed(&k, now, &rule), None);
        assert_eq!(t.locked(&k, now), None);
        assert_eq!(t.failed(&k, now, &rule), Some(Duration::from_millis(500)));
        assert_eq!(t.locked(&k, now + Duration::from_millis(100)), Some(Duration::from_millis(400)));
        assert_eq!(t.locked(&k, now + Duration::from_millis(500)), None, "the lock ends");
        assert_eq!(t.locked(&other, now), None, "another Origin is not locked");
        // After the window, counting starts again.
        let later = now + rule.window;
        assert_eq!(t.failed(&k, later, &rule), None);
        assert_eq!(t.failures(&k), 1);
        t.succeeded(&k);
        assert_eq!(t.failures(&k), 0);
    }
}
