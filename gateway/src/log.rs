//! Minimal structured logging to stderr. Never pass secrets here.

fn now() -> String {
    let ms = crate::util::now_ms();
    format!("{}.{:03}", ms / 1000, ms % 1000)
}
pub fn info(msg: &str) {
    eprintln!("{} INFO  {msg}", now());
}
pub fn warn(msg: &str) {
    eprintln!("{} WARN  {msg}", now());
}
pub fn error(msg: &str) {
    eprintln!("{} ERROR {msg}", now());
}
