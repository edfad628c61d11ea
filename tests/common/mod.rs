//! Helpers shared by the browser tests.
#![allow(dead_code)]

/// Resolves after `ms` milliseconds.
pub async fn sleep(ms: u64) {
    control_ui::io::browser::sleep_ms(ms).await
}

/// Polls `check` every 50 ms for up to `secs` seconds; panics naming `what` if it never holds.
pub async fn eventually(what: &str, secs: u64, check: impl Fn() -> bool) {
    for _ in 0..secs * 20 {
        if check() {
            return;
        }
        sleep(50).await;
    }
    panic!("timed out waiting for {what}");
}
