//! `gateway`: run the local gateway.
//!
//!   gateway [--port N] [--bind ADDR] [--allow-non-loopback] [--data-dir DIR]
//!           [--ui-root DIR] [--tick-ms N] [--allowed-origin ORIGIN]... [--device-scopes a,b]
//!
//! PORT, DATA_DIR, UI_ROOT and BIND are read from the environment when the flag is absent;
//! ALLOWED_ORIGINS (comma-separated) adds to --allowed-origin. The
//! shared token comes only from the environment: TOKEN, or TOKEN_FILE naming a file that holds
//! it; never from the command line, where every user of the machine sees it (`ps`,
//! `/proc/<pid>/cmdline`) and the shell history keeps it.
//!
//!   gateway ask --file q.json [--url ws://127.0.0.1:18789] [--wait]
//!
//! raises a question on a running gateway (as a trusted backend client) without writing code.
//! The file holds `question.request` params, or just the array of questions.
//!
//!   gateway devices list [--data-dir DIR]
//!   gateway devices revoke <device id> [--data-dir DIR]
//!
//! lists the paired browsers, or revokes one's device token (it pairs again only with the
//! shared token). Works while the gateway runs.

use std::net::IpAddr;
use std::path::PathBuf;

use gateway::{Config, log, util};

fn usage() -> ! {
    eprintln!(
        "usage: gateway [--port N] [--bind ADDR] [--allow-non-loopback] [--data-dir DIR] [--ui-root DIR] [--tick-ms N] [--allowed-origin ORIGIN]... [--device-scopes a,b]\n       the token: TOKEN=… or TOKEN_FILE=path in the environment (default: a random one, printed)"
    );
    std::process::exit(2)
}

fn parse() -> Result<(Config, bool), String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut cfg = Config::local(
        "",
        PathBuf::from(env("DATA_DIR").unwrap_or_else(|| ".data".into())),
        PathBuf::from(env("UI_ROOT").unwrap_or_else(|| "dist".into())),
    );
    cfg.port = 18789;
    if let Some(p) = env("PORT") {
        cfg.port = p.parse().map_err(|_| format!("PORT must be a port number, not `{p}`"))?;
    }
    // Browser origins allowed besides the gateway's own (a reverse proxy's name, `trunk serve`
    // on http://127.0.0.1:8080), separated by commas or spaces.
    if let Some(list) = env("ALLOWED_ORIGINS") {
        cfg.allowed_origins.extend(list.split([',', ' ']).map(str::trim).filter(|o| !o.is_empty()).map(str::to_string));
    }
    // Web Push to a push service whose certificate the system does not trust (tests).
    cfg.push_extra_ca = env("PUSH_EXTRA_CA").map(PathBuf::from);
    if let Some(b) = env("BIND") {
        cfg.bind = b.parse().map_err(|_| format!("BIND must be an IP address, not `{b}`"))?;
    }
    let token = gateway::config::token_from_env(env("TOKEN"), env("TOKEN_FILE"))?;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--port" => cfg.port = val("--port")?.parse().map_err(|_| "--port must be a port number".to_string())?,
            "--bind" => cfg.bind = val("--bind")?.parse::<IpAddr>().map_err(|_| "--bind must be an IP address".to_string())?,
            "--allow-non-loopback" => cfg.allow_non_loopback = true,
            "--token" => return Err(gateway::config::TOKEN_FLAG_REFUSED.into()),
            "--data-dir" => cfg.data_dir = PathBuf::from(val("--data-dir")?),
            "--ui-root" => cfg.ui_root = PathBuf::from(val("--ui-root")?),
            "--tick-ms" => cfg.tick_interval_ms = val("--tick-ms")?.parse().map_err(|_| "--tick-ms must be a number".to_string())?,
            "--allowed-origin" => cfg.allowed_origins.push(val("--allowed-origin")?),
            "--device-scopes" => {
                cfg.device_scopes =
                    Some(val("--device-scopes")?.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
            }
            "-h" | "--help" => usage(),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let generated = token.is_none();
    cfg.token = token.unwrap_or_else(util::random_token);
    Ok((cfg, generated))
}

/// `gateway ask`: raise a question from a JSON file and optionally wait for the answer.
async fn ask(args: Vec<String>) -> Result<(), String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut file = None;
    let mut url = format!("ws://127.0.0.1:{}", env("PORT").unwrap_or_else(|| "18789".into()));
    let token = gateway::config::token_from_env(env("TOKEN"), env("TOKEN_FILE"))?;
    let mut wait = false;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--file" => file = it.next(),
            "--url" => url = it.next().ok_or("--url needs a value")?,
            "--token" => return Err(gateway::config::TOKEN_FLAG_REFUSED.into()),
            "--wait" => wait = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let file = file.ok_or("ask needs --file FILE (or --file - for standard input)")?;
    let text = if file == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| e.to_string())?
    } else {
        std::fs::read_to_string(&file).map_err(|e| format!("cannot read {file}: {e}"))?
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{file} is not JSON: {e}"))?;
    let params = if value.is_array() { serde_json::json!({ "questions": value }) } else { value };
    let token = token.ok_or("ask needs the gateway token: TOKEN=… or TOKEN_FILE=path")?;
    let opts = gateway::client::ClientOptions::backend(&url, &token, &[protocol::methods::scope::ADMIN]);
    let mut client = gateway::client::Client::connect(opts).await.map_err(|e| format!("cannot connect to {url}: {e}"))?;
    let created = client.request("question.request", params).await.map_err(|e| format!("question.request failed: {}", e.message))?;
    let id = created["id"].as_str().unwrap_or_default().to_string();
    println!("QUESTION_ID={id}");
    if wait {
        let answer = client
            .request("question.waitAnswer", serde_json::json!({ "id": id }))
            .await
            .map_err(|e| format!("question.waitAnswer failed: {}", e.message))?;
        println!("{answer}");
    }
    Ok(())
}

/// `gateway devices list|revoke`: on the data directory's database, directly.
fn devices(args: Vec<String>) -> Result<(), String> {
    let mut data_dir = PathBuf::from(std::env::var("DATA_DIR").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| ".data".into()));
    let mut rest = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--data-dir" => data_dir = PathBuf::from(it.next().ok_or("--data-dir needs a value")?),
            _ => rest.push(a),
        }
    }
    let store = gateway::store::Store::open(&data_dir)?;
    let now = util::now_ms();
    match rest.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["list"] => {
            print!("{}", gateway::devices::list(&store, now).map_err(|e| e.to_string())?);
            Ok(())
        }
        ["revoke", id] => {
            if store.revoke_device(id, now).map_err(|e| e.to_string())? {
                println!("Revoked the device token of {id}: it works nowhere now. The device pairs again only with the gateway token.");
                Ok(())
            } else {
                Err(format!("no paired device `{id}` (see `gateway devices list`)"))
            }
        }
        _ => Err("usage: gateway devices list | gateway devices revoke <device id>  [--data-dir DIR]".into()),
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("devices") {
        args.next();
        if let Err(e) = devices(args.collect()) {
            eprintln!("gateway devices: {e}");
            std::process::exit(1);
        }
        return;
    }
    if args.peek().map(String::as_str) == Some("ask") {
        args.next();
        if let Err(e) = ask(args.collect()).await {
            eprintln!("gateway ask: {e}");
            std::process::exit(1);
        }
        return;
    }
    let (cfg, generated) = match parse() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gateway: {e}");
            usage();
        }
    };
    if !cfg.ui_root.join("index.html").is_file() {
        log::warn(&format!("no index.html in {}: the UI will answer 503 until it is built", cfg.ui_root.display()));
    }
    // The signal handlers exist before the ready line is printed: a SIGTERM right after it
    // (a supervisor, a test) stops the gateway gracefully instead of killing it.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).expect("SIGINT handler");
    let running = match gateway::start(cfg).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gateway: {e}");
            std::process::exit(1);
        }
    };
    println!("Gateway listening on ws://{}", running.addr);
    // A token the gateway made is printed once, in the link (nobody else knows it); one given
    // in TOKEN or TOKEN_FILE is never printed.
    if generated {
        println!("No token given (TOKEN or TOKEN_FILE): generated one for this run.");
        println!("Open the Control UI: {}", running.ui_url());
    } else {
        println!(
            "Open the Control UI: http://{}/ and give it the token (add #token=<the token> to the address, or paste it)",
            running.addr
        );
    }
    let _ = std::io::Write::flush(&mut std::io::stdout());
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = term.recv() => {}
    }
    log::info("stopping: telling clients and closing connections");
    running.shutdown().await;
}
