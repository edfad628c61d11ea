//! Helpers shared by the browser tests.
#![allow(dead_code)]

use std::time::Duration;

/// Resolves after `ms` milliseconds.
pub async fn sleep(ms: u64) {
    let (tx, rx) = futures_channel::oneshot::channel::<()>();
    leptos::prelude::set_timeout(
        move || {
            let _ = tx.send(());
        },
        Duration::from_millis(ms),
    );
    let _ = rx.await;
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
