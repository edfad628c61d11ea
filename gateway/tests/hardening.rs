//! The security review's hardening of the local gateway, one rule per test: the shared
//! token's strength and where it comes from, what the log never holds, backoff after failed
//! sign-ins, the Origin and Host rule, pre-connect slots per Origin, secrets behind the admin
//! scope, conversations a guest cannot claim, revoked devices, the data directory's mode and
//! the load generator's targets (`docs/reliability.md`, "Security review").

mod common;

use std::time::Duration;

use futures_util::StreamExt;

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

// ---------------------------------------------------------------------------------------
// 2. The token comes from the environment or a file, never the command line, and is never
// logged.

const TOKEN: &str = "hardening-3c1f9a7e5b2d4c6e8f0a1b3c5d7e9f21";

/// The gateway binary's exit status and everything it printed, for arguments that stop it
/// before it listens.
fn gateway_refuses(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gateway"));
    cmd.args(args).env_remove("TOKEN").env_remove("TOKEN_FILE");
    if args.first() == Some(&"ask") {
        cmd.args(["--file", "-"]);
    } else {
        cmd.args(["--port", "0", "--data-dir"]).arg(dir.path().join("data"));
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

#[tokio::test]
async fn the_token_comes_from_token_file_and_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    // As `openssl rand -hex 32 > file` writes it: with a newline.
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let gw = common::GatewayProcess::spawn_with_env(&dir.path().join("data"), &[("TOKEN_FILE", file.to_str().unwrap())], &[]);
    let c = gateway::client::Client::connect(gateway::client::ClientOptions::backend(&gw.url(), TOKEN, &[])).await;
    assert!(c.is_ok(), "the token from TOKEN_FILE connects: {:?}", c.err());
    let wrong = gateway::client::Client::connect(gateway::client::ClientOptions::backend(&gw.url(), "not-it", &[])).await;
    assert!(wrong.is_err(), "only the file's token");
    let out = String::from_utf8_lossy(&gw.logs()).into_owned();
    assert!(out.contains("Open the Control UI: http://") && !out.contains(TOKEN), "a given token is never printed: {out}");
}

#[test]
fn the_token_flag_is_refused_pointing_to_token_and_token_file() {
    for args in [&["--token", TOKEN][..], &["ask", "--token", TOKEN]] {
        let (code, said) = gateway_refuses(args, &[]);
        assert_ne!(code, Some(0), "{args:?}: {said}");
        assert!(said.contains("--token is not accepted") && said.contains("TOKEN=") && said.contains("TOKEN_FILE="), "{args:?}: {said}");
        assert!(!said.contains(TOKEN), "the refusal repeats the token: {said}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, TOKEN).unwrap();
    let (code, said) = gateway_refuses(&[], &[("TOKEN", TOKEN), ("TOKEN_FILE", file.to_str().unwrap())]);
    assert!(code != Some(0) && said.contains("TOKEN and TOKEN_FILE are both set"), "{said}");
    std::fs::write(&file, "\n").unwrap();
    let (code, said) = gateway_refuses(&[], &[("TOKEN_FILE", file.to_str().unwrap())]);
    assert!(code != Some(0) && said.contains("is empty"), "{said}");
    let missing = dir.path().join("missing");
    let (code, said) = gateway_refuses(&[], &[("TOKEN_FILE", missing.to_str().unwrap())]);
    assert!(code != Some(0) && said.contains("cannot read TOKEN_FILE"), "{said}");
}

/// A `connect` whose params are malformed in ways that make the parser quote them (a string
/// where an object goes, the token as an unknown field's name, as the frame's type or its
/// method) is refused, and the refusal's log line holds none of it.
#[tokio::test]
async fn a_malformed_connect_carrying_the_token_puts_none_of_it_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let gw = common::GatewayProcess::spawn(&dir.path().join("data"), TOKEN, &[]);
    let frames = [
        format!(r#"{{"type":"req","id":"c1","method":"connect","params":{{"minProtocol":4,"maxProtocol":4,"auth":"{TOKEN}"}}}}"#),
        format!(
            r#"{{"type":"req","id":"c2","method":"connect","params":{{"minProtocol":4,"maxProtocol":4,"client":{{"id":"gateway-client","version":"1","platform":"linux","mode":"backend"}},"role":"operator","auth":{{"token":"{TOKEN}","{TOKEN}":1}}}}}}"#
        ),
        format!(r#"{{"type":"{TOKEN}","id":"c3"}}"#),
        format!(r#"{{"type":"req","id":"c4","method":"{TOKEN}"}}"#),
        format!(r#"{{"type":"req","id":"c5","method":"connect","params":{{"minProtocol":"{TOKEN}"}}}}"#),
    ];
    for (i, frame) in frames.iter().enumerate() {
        let mut raw = common::Raw::open(&gw.url(), None).await;
        raw.send(frame.clone()).await;
        let end = raw.end().await;
        assert_eq!(end, common::End::Closed(1008), "frame {i} closes the socket");
        // The client itself is told what was wrong (its own bytes go back to it only).
        assert!(raw.received.iter().skip(1).all(|t| !t.contains("hello-ok")), "frame {i} was let in");
    }
    let deadline = std::time::Instant::now() + common::T;
    let refusals = |logs: &str| logs.matches("connect refused").count() + logs.matches("malformed frame").count();
    while refusals(&String::from_utf8_lossy(&gw.logs())) < frames.len() {
        assert!(std::time::Instant::now() < deadline, "every refusal is logged: {}", String::from_utf8_lossy(&gw.logs()));
        std::thread::sleep(Duration::from_millis(20));
    }
    let logs = String::from_utf8_lossy(&gw.logs()).into_owned();
    for part in [TOKEN, &TOKEN[..20], &TOKEN[TOKEN.len() - 20..]] {
        assert!(!logs.contains(part), "the log holds the token (or part of it): {logs}");
    }
}

// ---------------------------------------------------------------------------------------
// 3. Backoff after failed sign-ins, per remote address and Origin.

use common::{End, Raw, backend_params};
use protocol::methods::scope;

/// The attacker's key: a program on this machine (no Origin).
fn local_program() -> gateway::throttle::Key {
    gateway::throttle::key(Some("127.0.0.1".parse().unwrap()), None)
}

/// A dictionary attack from one address and Origin, one guess at a time: the first two
/// wrong tokens are answered at once, each later one is held back for its delay, which
/// doubles up to the cap and which its answer names (`retryAfterMs`). So N guesses take at
/// least the sum of the delays (a lower bound: never flaky on a slow machine).
#[tokio::test]
async fn a_dictionary_attack_waits_for_each_guesss_delay_and_the_answer_names_it() {
    let (gw, _d) = common::start_with(TOKEN, |c| {
        c.auth_backoff.first_delay = Duration::from_millis(200);
        c.auth_backoff.max_delay = Duration::from_millis(800);
    })
    .await;
    let url = format!("ws://{}", gw.addr);
    let started = std::time::Instant::now();
    let mut delays = Vec::new();
    for guess in 0..7 {
        let mut raw = Raw::open(&url, None).await;
        raw.req("c1", "connect", backend_params(Some(&format!("guess-{guess}")), &[scope::ADMIN])).await;
        let e = raw.response("c1").await.unwrap_err();
        assert_eq!(e.detail_code(), Some("AUTH_TOKEN_MISMATCH"), "guess {guess} is checked (each came after the last lock): {e:?}");
        assert_eq!(raw.end().await, End::Closed(1008));
        delays.push(e.retry_after_ms);
    }
    assert_eq!(delays, [None, None, Some(200), Some(400), Some(800), Some(800), Some(800)]);
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(3000), "7 guesses took {took:?}, less than their 3 s of backoff");
    assert_eq!(gw.gateway.auth_throttle.failures(&local_program()), 7);
    // The right token (after the last lock) connects and clears the count.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ok = gateway::client::Client::connect(gateway::client::ClientOptions::backend(&url, TOKEN, &[scope::READ])).await;
    assert!(ok.is_ok(), "{:?}", ok.err());
    assert_eq!(gw.gateway.auth_throttle.failures(&local_program()), 0);
}

/// While a key is locked, any `connect` from it is refused at once with `AUTH_RATE_LIMITED`
/// and `retryAfterMs`, the right token included (guessing on many sockets gains nothing),
/// and the failure that locked it has not been answered yet. The person's tab (another
/// Origin) connects meanwhile, and the lock stands.
#[tokio::test]
async fn a_locked_address_and_origin_is_refused_at_once_while_another_origin_connects() {
    let (gw, _d) = common::start_with(TOKEN, |c| {
        c.auth_backoff.free_failures = 1;
        c.auth_backoff.first_delay = Duration::from_secs(60);
        c.auth_backoff.max_delay = Duration::from_secs(60);
    })
    .await;
    let url = format!("ws://{}", gw.addr);
    let mut held = Raw::open(&url, None).await;
    held.req("c1", "connect", backend_params(Some("a-wrong-guess"), &[scope::ADMIN])).await;
    let deadline = std::time::Instant::now() + common::T;
    while gw.gateway.auth_throttle.failures(&local_program()) == 0 {
        assert!(std::time::Instant::now() < deadline, "the guess was never counted");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let locked_for = gw.gateway.auth_throttle.locked(&local_program(), std::time::Instant::now()).expect("the key is locked");
    assert!(locked_for > Duration::from_secs(50), "{locked_for:?}");

    for token in ["another-guess", TOKEN] {
        let mut raw = Raw::open(&url, None).await;
        raw.req("c1", "connect", backend_params(Some(token), &[scope::ADMIN])).await;
        let e = raw.response("c1").await.unwrap_err();
        assert_eq!(e.detail_code(), Some("AUTH_RATE_LIMITED"), "{e:?}");
        assert!(e.message.contains("too many failed sign-in attempts") && e.message.contains("retry after"), "{}", e.message);
        assert_eq!(e.retryable, Some(true));
        let ms = e.retry_after_ms.expect("retryAfterMs");
        assert!(ms > 50_000 && ms <= 60_000, "{ms}");
        assert_eq!(e.details.as_ref().unwrap()["retryAfterMs"], ms);
        assert_eq!(raw.end().await, End::Closed(1008));
    }
    assert_eq!(gw.gateway.auth_throttle.failures(&local_program()), 1, "refusals while locked are not compared, nor counted");

    // The Control UI from the gateway's own origin is another key: it connects now.
    let ui = common::ui_client(&gw, TOKEN, 9).await;
    assert!(ui.hello.auth.scopes.iter().any(|s| s == scope::ADMIN));
    assert!(gw.gateway.auth_throttle.locked(&local_program(), std::time::Instant::now()).is_some(), "the attacker's lock stands");
    // The guess that locked the key is still waiting for its answer.
    let waited = tokio::time::timeout(Duration::from_millis(300), held.ws.next()).await;
    assert!(waited.is_err(), "the locking failure was answered before its delay: {waited:?}");
}

// ---------------------------------------------------------------------------------------
// 4. The Origin rule: the gateway's own address, or a configured origin.

/// A DNS-rebinding page (`http://evil.example:PORT`, its name resolved to 127.0.0.1, so it
/// sends `Host: evil.example:PORT` and a matching Origin) and a page on any other local port
/// are refused at the upgrade; the gateway's own names (the bound address, `localhost` and
/// `[::1]` when bound to loopback) and a configured origin connect.
#[tokio::test]
async fn a_dns_rebinding_page_and_other_local_pages_are_refused_and_the_gateways_own_names_connect() {
    let (gw, _d) = common::start_with(TOKEN, |c| c.allowed_origins = vec!["http://127.0.0.1:8080".into()]).await;
    let url = format!("ws://{}", gw.addr);
    let port = gw.addr.port();
    let refused = [
        (format!("http://evil.example:{port}"), format!("evil.example:{port}")),
        (format!("http://127.0.0.1.nip.io:{port}"), format!("127.0.0.1.nip.io:{port}")),
        ("http://localhost:5173".to_string(), format!("127.0.0.1:{port}")),
        (format!("http://localhost:{}", port.wrapping_add(1)), format!("localhost:{}", port.wrapping_add(1))),
        (format!("http://192.168.1.5:{port}"), format!("192.168.1.5:{port}")),
        // The gateway's own origin, but the request went to another name.
        (format!("http://127.0.0.1:{port}"), format!("evil.example:{port}")),
    ];
    for (origin, host) in &refused {
        let status = common::upgrade_status_with(&url, &[("origin", origin), ("host", host)]).await;
        assert_eq!(status, Some(403), "Origin {origin} with Host {host}");
    }
    let accepted = [
        (format!("http://127.0.0.1:{port}"), format!("127.0.0.1:{port}")),
        (format!("http://localhost:{port}"), format!("localhost:{port}")),
        (format!("http://[::1]:{port}"), format!("[::1]:{port}")),
        // Configured (`--allowed-origin`, ALLOWED_ORIGINS): `trunk serve`'s page.
        ("http://127.0.0.1:8080".to_string(), format!("127.0.0.1:{port}")),
    ];
    for (i, (origin, host)) in accepted.iter().enumerate() {
        let mut raw = Raw::open_with_headers(&url, &[("origin", origin), ("host", host)]).await;
        let id = protocol::device::DeviceIdentity::from_seed([40 + i as u8; 32]);
        raw.req("c1", "connect", serde_json::to_value(common::ui_params(&id, &raw.challenge, TOKEN)).unwrap()).await;
        let hello = raw.response("c1").await;
        assert!(hello.is_ok(), "Origin {origin} with Host {host}: {:?}", hello.err());
    }
}

#[test]
fn allowed_origins_come_from_the_environment_too() {
    let dir = tempfile::tempdir().unwrap();
    let gw = common::GatewayProcess::spawn_with_env(
        &dir.path().join("data"),
        &[("TOKEN", TOKEN), ("ALLOWED_ORIGINS", "http://127.0.0.1:8080, https://ops.example.com")],
        &[],
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for (origin, expected) in [
        ("http://127.0.0.1:8080", None),
        ("https://ops.example.com", None),
        ("http://localhost:8080", Some(403)),
        ("http://evil.example", Some(403)),
    ] {
        assert_eq!(rt.block_on(common::upgrade_status_with(&gw.url(), &[("origin", origin)])), expected, "{origin}");
    }
}

// ---------------------------------------------------------------------------------------
// 5. Pre-connect slots per Origin.

/// One page (Origin) may hold 16 sockets that have not connected; the 17th gets 503, while
/// another Origin, a program without one and the person's own connect still get in. A
/// socket that connects gives its slot back.
#[tokio::test]
async fn one_origin_holds_at_most_16_pre_connect_sockets_and_others_still_get_in() {
    assert_eq!(Config::local("t", "d".into(), "u".into()).max_unauthenticated_per_origin, 16, "the default");
    let (gw, _d) = common::start_with(TOKEN, |c| c.allowed_origins = vec!["http://127.0.0.1:8080".into()]).await;
    let url = format!("ws://{}", gw.addr);
    let page = format!("http://{}", gw.addr);
    let mut idle = Vec::new();
    for _ in 0..16 {
        idle.push(Raw::open(&url, Some(&page)).await);
    }
    assert_eq!(common::upgrade_status_with(&url, &[("origin", &page)]).await, Some(503), "a 17th socket of the page is refused");
    assert_eq!(gw.gateway.pending_connects.load(std::sync::atomic::Ordering::Acquire), 16, "far from the 256 in all");
    // Another origin and a program without one are not held up by that page.
    let _other = Raw::open(&url, Some("http://127.0.0.1:8080")).await;
    let _program = Raw::open(&url, None).await;
    // A socket of the page that connects frees its slot for the next one.
    let first = &mut idle[0];
    let id = protocol::device::DeviceIdentity::from_seed([50; 32]);
    first.req("c1", "connect", serde_json::to_value(common::ui_params(&id, &first.challenge, TOKEN)).unwrap()).await;
    first.response("c1").await.expect("the page's own connect");
    let deadline = std::time::Instant::now() + common::T;
    while common::upgrade_status_with(&url, &[("origin", &page)]).await.is_some() {
        assert!(std::time::Instant::now() < deadline, "the connected socket's slot was never given back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ---------------------------------------------------------------------------------------
// 6. Secrets need the admin scope.

/// A secret question (`isSecret`, with or without a `secretStore`) is answered only with
/// `operator.admin`: a Control UI device granted the question scope but not admin, and a
/// backend with `operator.questions`, are refused (FORBIDDEN, missing scope operator.admin)
/// and the question stays pending; they still answer plain questions and may decline the
/// secret; an admin answers it.
#[tokio::test]
async fn a_secret_is_answered_only_with_the_admin_scope() {
    use gateway::client::{Client, ClientOptions};
    use serde_json::json;
    let (gw, _d) = common::start_with(TOKEN, |c| {
        c.device_scopes = Some(vec![scope::READ.into(), scope::WRITE.into(), scope::APPROVALS.into(), scope::QUESTIONS.into()])
    })
    .await;
    let url = format!("ws://{}", gw.addr);
    let mut admin = Client::connect(ClientOptions::backend(&url, TOKEN, &[scope::ADMIN])).await.unwrap();
    let ui = common::ui_client(&gw, TOKEN, 60).await;
    assert!(!ui.hello.auth.scopes.iter().any(|s| s == scope::ADMIN), "{:?}", ui.hello.auth.scopes);
    let questioner = Client::connect(ClientOptions::backend(&url, TOKEN, &[scope::QUESTIONS])).await.unwrap();
    let secret = |id: &str, store: bool| {
        let mut q =
            json!({"questionId": "token", "header": "Token", "question": "Paste the deploy token", "options": [], "isSecret": true});
        if store {
            q["secretStore"] = json!({"name": "DEPLOY_TOKEN", "kind": "secret"});
        }
        json!({"id": id, "timeoutMs": 60000, "questions": [q]})
    };
    let answer = |id: &str| json!({"id": id, "answers": {"answers": {"token": ["tok-value-1"]}}});
    admin.request("question.request", secret("s1", true)).await.unwrap();
    admin.request("question.request", secret("s2", false)).await.unwrap();
    admin
        .request("question.request", json!({"id": "plain", "timeoutMs": 60000, "questions": [{"questionId": "note", "header": "Note", "question": "Anything?", "options": []}]}))
        .await
        .unwrap();
    for mut who in [questioner, ui] {
        for id in ["s1", "s2"] {
            let e = who.request("question.resolve", answer(id)).await.unwrap_err();
            assert_eq!((e.code.as_str(), e.message.as_str()), ("FORBIDDEN", "missing scope: operator.admin"), "{id}: {e:?}");
            assert_eq!(e.details.as_ref().unwrap()["reason"], "answering a secret question needs operator.admin");
            assert_eq!(admin.request("question.get", json!({"id": id})).await.unwrap()["question"]["status"], "pending");
        }
        if who.hello.auth.scopes.iter().any(|s| s == scope::READ) {
            who.request("question.resolve", json!({"id": "plain", "answers": {"answers": {"note": ["fine"]}}})).await.unwrap();
            let declined = who.request("question.resolve", json!({"id": "s2", "cancel": true})).await.unwrap();
            assert_eq!(declined["status"], "cancelled", "declining a secret gives nothing away");
        }
    }
    let answered = admin.request("question.resolve", answer("s1")).await.unwrap();
    assert_eq!(answered["answers"]["answers"]["token"], json!(["stored"]));
    assert_eq!(gw.gateway.questions.secret("DEPLOY_TOKEN").as_deref(), Some("tok-value-1"));
}

// ---------------------------------------------------------------------------------------
// 7. Conversations a guest cannot claim.

/// A guest (the narrow `operator.sessions.write`) cannot bring a conversation into being
/// under a key it chose (by `sessions.create`, `chat.send` or `sessions.patch`), so it cannot
/// claim `agent:main:main` (or any key an operator will use) before it exists and then read
/// what is written there. The main conversation, whoever uses it first, belongs to the
/// operator: not even a backend guest sharing the admin's client id owns it. A guest still
/// makes its own conversations, under keys the gateway picks. A fresh gateway still lists no
/// conversation (the real gateway has no main row until it is used).
#[tokio::test]
async fn a_guest_cannot_claim_main_or_any_key_it_names_and_main_is_always_the_operators() {
    use gateway::client::{Client, ClientOptions};
    use serde_json::json;
    let (gw, _d) = common::start_with(TOKEN, |_| {}).await;
    let url = format!("ws://{}", gw.addr);
    let mut admin = Client::connect(ClientOptions::backend(&url, TOKEN, &[scope::ADMIN])).await.unwrap();
    assert_eq!(admin.request("sessions.list", json!({})).await.unwrap()["totalCount"], 0, "no row until used, as on the real gateway");
    let mut opts =
        ClientOptions::control_ui(&url, TOKEN, &format!("http://{}", gw.addr), protocol::device::DeviceIdentity::from_seed([70; 32]));
    opts.scopes = vec![scope::SESSIONS_WRITE.into()];
    let device_guest = Client::connect(opts).await.unwrap();
    // A backend guest: its owner is `client:gateway-client`, the admin backend's too.
    let backend_guest = Client::connect(ClientOptions::backend(&url, TOKEN, &[scope::SESSIONS_WRITE])).await.unwrap();
    for (n, mut guest) in [device_guest, backend_guest].into_iter().enumerate() {
        for key in ["main", "agent:main:main", "deploy-notes"] {
            let attempts = [
                ("sessions.create", json!({"key": key})),
                ("chat.send", json!({"sessionKey": key, "message": "mine now", "idempotencyKey": format!("claim-{key}")})),
                ("sessions.patch", json!({"key": key, "label": "Claimed"})),
            ];
            for (method, params) in attempts {
                let e = guest.request(method, params).await.unwrap_err();
                assert!(e.message.contains("a guest cannot name a new conversation"), "{method} {key}: {e:?}");
            }
            let canonical = gateway::questions::canonical_session_key(key);
            assert_eq!(gw.gateway.store.session_owner(&canonical).unwrap(), None, "{key} was made");
        }
        // Its own conversation, under a key the gateway picks, works.
        let own = guest.request("sessions.create", json!({"label": format!("own {n}")})).await;
        let own = own.unwrap_or_else(|e| panic!("{e:?}"))["key"].as_str().unwrap().to_string();
        guest.request("chat.send", json!({"sessionKey": own, "message": "hello", "idempotencyKey": format!("own-{own}")})).await.unwrap();
    }
    // The operator's first use makes main, owned by the operator, never by the client id.
    admin.request("chat.send", json!({"sessionKey": "main", "message": "private plans", "idempotencyKey": "op-1"})).await.unwrap();
    assert_eq!(gw.gateway.store.session_owner("agent:main:main").unwrap().as_deref(), Some(gateway::sessions::OPERATOR_OWNER));
    let mut backend_guest = Client::connect(ClientOptions::backend(&url, TOKEN, &[scope::SESSIONS_WRITE])).await.unwrap();
    let e = backend_guest.request("chat.history", json!({"sessionKey": "main"})).await.unwrap_err();
    assert!(e.message.contains("was not found"), "a backend guest read main: {e:?}");
    let e =
        backend_guest.request("chat.send", json!({"sessionKey": "main", "message": "x", "idempotencyKey": "g-main"})).await.unwrap_err();
    assert!(e.message.contains("was not found"), "{e:?}");
}

// ---------------------------------------------------------------------------------------
// 8. Revoking a device ends its sockets.

/// `gateway devices revoke <id>` (another process, on the data directory) closes that
/// device's open sockets with 1008 "device revoked"; another device stays connected.
#[tokio::test]
async fn revoking_a_device_closes_its_open_sockets_and_no_other() {
    use gateway::client::{Client, ClientOptions};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut cfg = Config::local(TOKEN, data.clone(), dir.path().join("ui"));
    cfg.revocation_poll = Duration::from_millis(100);
    let gw = gateway::start(cfg).await.unwrap();
    let url = format!("ws://{}", gw.addr);
    let origin = format!("http://{}", gw.addr);
    let revoked = protocol::device::DeviceIdentity::from_seed([80; 32]);
    let revoked_id = revoked.device_id();
    let mut a = Client::connect(ClientOptions::control_ui(&url, TOKEN, &origin, revoked)).await.unwrap();
    let mut a2 = Client::connect(ClientOptions::control_ui(&url, TOKEN, &origin, protocol::device::DeviceIdentity::from_seed([80; 32])))
        .await
        .unwrap();
    let mut b = Client::connect(ClientOptions::control_ui(&url, TOKEN, &origin, protocol::device::DeviceIdentity::from_seed([81; 32])))
        .await
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gateway"))
        .args(["devices", "revoke", &revoked_id, "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for c in [&mut a, &mut a2] {
        let closed = c.wait_closed(common::T).await;
        assert_eq!(closed, Some((1008, "device revoked".to_string())), "both of the revoked device's sockets are closed");
    }
    assert_eq!(b.request("health", serde_json::json!({})).await.unwrap()["ok"], true, "the other device is still connected");
    assert_eq!(gw.gateway.hub.device_ids(), vec![protocol::device::DeviceIdentity::from_seed([81; 32]).device_id()]);
}

// ---------------------------------------------------------------------------------------
// 9. The data directory's mode.

/// A data directory the gateway creates is 0700; an existing one keeps the mode its owner
/// gave it, and the gateway warns when group or others may read it.
#[cfg(unix)]
#[test]
fn an_existing_data_directory_keeps_its_mode_with_a_warning_and_a_new_one_is_0700() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o750)).unwrap();
    let mut gw = common::GatewayProcess::spawn(&shared, TOKEN, &[]);
    assert!(gw.terminate());
    assert_eq!(mode(&shared), 0o750, "an existing directory's mode is left alone");
    let logs = String::from_utf8_lossy(&gw.logs()).into_owned();
    assert!(logs.contains("WARN") && logs.contains("open to group or others (mode 750)") && logs.contains("chmod 700"), "{logs}");

    let private = dir.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut gw = common::GatewayProcess::spawn(&private, TOKEN, &[]);
    assert!(gw.terminate());
    assert!(!String::from_utf8_lossy(&gw.logs()).contains("group or others"), "no warning for a 0700 directory");

    let created = dir.path().join("new").join("data");
    let mut gw = common::GatewayProcess::spawn(&created, TOKEN, &[]);
    assert!(gw.terminate());
    assert_eq!(mode(&created), 0o700, "a directory the gateway creates is this user's only");
    assert!(!String::from_utf8_lossy(&gw.logs()).contains("group or others"));
    assert_eq!(gateway::devices::prepare_data_dir(&created).unwrap(), None);
    std::fs::set_permissions(&created, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(gateway::devices::prepare_data_dir(&created).unwrap().is_some_and(|w| w.contains("mode 755")));
    assert_eq!(mode(&created), 0o755);
}

// ---------------------------------------------------------------------------------------
// 10. The load generator stays on this machine and within bounds.

#[test]
fn the_load_generator_refuses_remote_targets_without_allow_remote_and_more_than_1000_clients() {
    use gateway::load::{MAX_CLIENTS, parse_args};
    let args = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let token = || Some(TOKEN.to_string());
    for url in ["ws://example.com:18789", "ws://192.168.1.5:18789", "ws://10.0.0.1", "ws://127.0.0.1.nip.io:1", "ws://user@evil.example:1/"]
    {
        let e = parse_args(&args(&format!("--url {url}")), token()).err().unwrap_or_else(|| panic!("{url} was accepted"));
        assert!(e.contains("not a loopback address") && e.contains("--allow-remote"), "{url}: {e}");
        let (opts, _) = parse_args(&args(&format!("--url {url} --allow-remote")), token()).unwrap().unwrap();
        assert!(opts.allow_remote && opts.url.as_deref() == Some(url));
    }
    for url in ["ws://127.0.0.1:18789", "ws://localhost:18789/", "ws://[::1]:18789", "ws://127.0.0.5:1"] {
        assert!(parse_args(&args(&format!("--url {url}")), token()).is_ok(), "{url}");
    }
    let e = parse_args(&args("--url http://127.0.0.1:1"), token()).unwrap_err();
    assert!(e.contains("must be ws://HOST:PORT"), "{e}");
    let e = parse_args(&args("--url ws://127.0.0.1:1"), None).unwrap_err();
    assert!(e.contains("TOKEN=") && e.contains("TOKEN_FILE="), "{e}");
    assert_eq!(MAX_CLIENTS, 1000);
    assert_eq!(parse_args(&args("--clients 1000"), None).unwrap().unwrap().0.clients, 1000);
    for n in ["1001", "0", "18446744073709551615"] {
        let e = parse_args(&args(&format!("--clients {n}")), None).unwrap_err();
        assert!(e.contains("--clients must be 1 to 1000"), "{n}: {e}");
    }
    let e = parse_args(&args(&format!("--token {TOKEN}")), None).unwrap_err();
    assert!(e.contains("--token is not accepted") && !e.contains(TOKEN), "{e}");
    // The library entry point checks the same.
    let opts = gateway::load::LoadOptions { url: Some("ws://example.com:1".into()), ..Default::default() };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    assert!(rt.block_on(gateway::load::run(opts)).err().unwrap().contains("not a loopback address"));
    // And the binary refuses before connecting anywhere.
    let out = std::process::Command::new(std::path::Path::new(env!("CARGO_BIN_EXE_gateway")).with_file_name("loadgen"))
        .args(["--url", "ws://example.com:18789", "--seconds", "1"])
        .env("TOKEN", TOKEN)
        .env_remove("TOKEN_FILE")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("not a loopback address"), "{said}");
}
