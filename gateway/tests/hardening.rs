//! The security review's hardening of the local gateway, one rule per test: the shared
//! token's strength and where it comes from, what the log never holds, backoff after failed
//! sign-ins, the Origin and Host rule, pre-connect slots per Origin, secrets behind the admin
//! scope, conversations a guest cannot claim, revoked devices, the data directory's mode and
//! the load generator's targets (`docs/reliability.md`, "Security review").

mod common;

use std::time::Duration;

use gateway::Config;

// ---------------------------------------------------------------------------------------
// 1. The shared token is strong.

#[tokio::test]
async fn a_weak_shared_token_is_refused_at_start_and_a_random_one_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = |token: &str| Config::local(token, dir.path().join("data"), dir.path().join("ui"));
    let weak = [
        "secret".to_string(),
        "changeme-please".into(),
        "correct horse battery".into(),
        "a".repeat(64),
        "ab".repeat(32),
        "0123456789abcdef".repeat(4),
        "1234567890".repeat(4),
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".into(),
        "9f86d081884c7d659a2feaa0c55ad01".into(), // 31 hex digits: 124 bits
    ];
    for w in &weak {
        let e = gateway::start(cfg(w)).await.err().unwrap_or_else(|| panic!("{w:?} was accepted"));
        assert!(e.starts_with("the gateway token is too weak") && e.contains("openssl rand -hex 32"), "{w:?}: {e}");
        assert!(!e.contains(w.as_str()), "the refusal repeats the token: {e}");
    }
    // `openssl rand -hex 32`, and a random base64url of 32 and of 43 characters (the gateway's
    // own generated token): accepted.
    let hex: String = gateway::util::random_bytes::<32>().iter().map(|b| format!("{b:02x}")).collect();
    let b64 = gateway::util::random_token();
    for good in [hex.as_str(), &b64[..32], b64.as_str(), "9f86d081884c7d659a2feaa0c55ad015"] {
        let running = gateway::start(cfg(good)).await.unwrap_or_else(|e| panic!("{good} refused: {e}"));
        running.shutdown_within(Duration::from_secs(1)).await;
    }
    // A generated token always passes (it is what the gateway uses when none is given).
    for _ in 0..2000 {
        let t = gateway::util::random_token();
        assert_eq!(gateway::config::check_token_strength(&t), Ok(()), "{t}");
        let t: String = gateway::util::random_bytes::<32>().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(gateway::config::check_token_strength(&t), Ok(()), "{t}");
    }
}

#[test]
fn the_gateway_binary_refuses_a_weak_token_from_the_environment_without_printing_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gateway"))
        .args(["--port", "0", "--data-dir"])
        .arg(dir.path().join("data"))
        .env("TOKEN", "hunter2-hunter2")
        .env_remove("TOKEN_FILE")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a weak token must stop the gateway: {said}");
    assert!(said.contains("the gateway token is too weak") && said.contains("128"), "{said}");
    assert!(!said.contains("hunter2"), "the refusal printed the token: {said}");
    assert!(!said.contains("Gateway listening"), "{said}");
}
