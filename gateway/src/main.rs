//! `gateway`: run the local gateway.
//!
//!   gateway [--port N] [--bind ADDR] [--allow-non-loopback] [--token T] [--data-dir DIR]
//!           [--ui-root DIR] [--tick-ms N] [--allowed-origin ORIGIN]...
//!
//! PORT, TOKEN, DATA_DIR, UI_ROOT and BIND are read from the environment when the flag is absent.

use std::net::IpAddr;
use std::path::PathBuf;

use gateway::{Config, log, util};

fn usage() -> ! {
    eprintln!(
        "usage: gateway [--port N] [--bind ADDR] [--allow-non-loopback] [--token T] [--data-dir DIR] [--ui-root DIR] [--tick-ms N] [--allowed-origin ORIGIN]..."
    );
    std::process::exit(2)
}

fn parse() -> Result<(Config, bool), String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut cfg = Config::local("", PathBuf::from(env("DATA_DIR").unwrap_or_else(|| ".data".into())), PathBuf::from(env("UI_ROOT").unwrap_or_else(|| "dist".into())));
    cfg.port = 18789;
    if let Some(p) = env("PORT") {
        cfg.port = p.parse().map_err(|_| format!("PORT must be a port number, not `{p}`"))?;
    }
    if let Some(b) = env("BIND") {
        cfg.bind = b.parse().map_err(|_| format!("BIND must be an IP address, not `{b}`"))?;
    }
    let mut token = env("TOKEN");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--port" => cfg.port = val("--port")?.parse().map_err(|_| "--port must be a port number".to_string())?,
            "--bind" => cfg.bind = val("--bind")?.parse::<IpAddr>().map_err(|_| "--bind must be an IP address".to_string())?,
            "--allow-non-loopback" => cfg.allow_non_loopback = true,
            "--token" => token = Some(val("--token")?),
            "--data-dir" => cfg.data_dir = PathBuf::from(val("--data-dir")?),
            "--ui-root" => cfg.ui_root = PathBuf::from(val("--ui-root")?),
            "--tick-ms" => cfg.tick_interval_ms = val("--tick-ms")?.parse().map_err(|_| "--tick-ms must be a number".to_string())?,
            "--allowed-origin" => cfg.allowed_origins.push(val("--allowed-origin")?),
            "-h" | "--help" => usage(),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let generated = token.is_none();
    cfg.token = token.unwrap_or_else(util::random_token);
    Ok((cfg, generated))
}

#[tokio::main]
async fn main() {
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
    let running = match gateway::start(cfg).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gateway: {e}");
            std::process::exit(1);
        }
    };
    if generated {
        println!("No token given (TOKEN or --token): generated one for this run.");
    }
    println!("Gateway listening on ws://{}", running.addr);
    println!("Open the Control UI: {}", running.ui_url());
    let _ = std::io::Write::flush(&mut std::io::stdout());
    wait_for_signal().await;
    log::info("stopping: telling clients and closing connections");
    running.shutdown().await;
}

async fn wait_for_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
