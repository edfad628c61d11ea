//! Minimal structured logging to stderr. Never pass secrets here.

use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences INFO and WARN (the fuzz harness feeds a million malformed frames); errors still print.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

fn now() -> String {
    let ms = crate::util::now_ms();
    format!("{}.{:03}", ms / 1000, ms % 1000)
}
pub fn info(msg: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("{} INFO  {msg}", now());
    }
}
pub fn warn(msg: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("{} WARN  {msg}", now());
    }
}
pub fn error(msg: &str) {
    eprintln!("{} ERROR {msg}", now());
}
