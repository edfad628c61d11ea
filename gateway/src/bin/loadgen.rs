//! `loadgen`: a bounded loopback load against the local gateway (see `gateway::load`).
//!
//!   loadgen [--clients 200] [--seconds 60] [--think-ms 0] [--drain-seconds 60]
//!           [--gateway PATH | --url ws://HOST:PORT [--allow-remote]] [--out FILE]
//!
//! Without --gateway or --url it starts the `gateway` binary that sits beside it, on a free
//! loopback port with a fresh data directory, and stops it with SIGTERM at the end. Prints
//! the report (Markdown) and writes it to --out. Exits 1 when anything was lost, duplicated
//! or failed. With --url, the running gateway's token comes from TOKEN or TOKEN_FILE, and a
//! host beyond loopback is refused unless --allow-remote is given. At most 1000 clients.

use std::time::Duration;

use gateway::load::{MAX_CLIENTS, parse_args, run, write_report};

fn main() {
    let fail = |m: String| -> ! {
        eprintln!("loadgen: {m}");
        std::process::exit(2)
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    // The token matters only with --url (a started gateway gets a random one).
    let token = if args.iter().any(|a| a == "--url") {
        gateway::config::token_from_env(env("TOKEN"), env("TOKEN_FILE")).unwrap_or_else(|e| fail(e))
    } else {
        None
    };
    let (mut opts, out) = match parse_args(&args, token) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            println!(
                "usage: loadgen [--clients N (1 to {MAX_CLIENTS})] [--seconds T] [--think-ms M] [--drain-seconds D] [--gateway PATH | --url ws://HOST:PORT [--allow-remote]] [--out FILE]\n       with --url: TOKEN=… or TOKEN_FILE=path for the running gateway's token; a host beyond loopback needs --allow-remote"
            );
            return;
        }
        Err(e) => fail(e),
    };
    if opts.gateway_bin.is_none() && opts.url.is_none() {
        let beside = std::env::current_exe().ok().and_then(|e| Some(e.parent()?.join("gateway")));
        match beside.filter(|p| p.is_file()) {
            Some(p) => opts.gateway_bin = Some(p),
            None => fail("no gateway binary beside loadgen: pass --gateway PATH or --url".into()),
        }
    }
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build().expect("runtime");
    let title = format!("Gateway load: {} clients for {} s", opts.clients, opts.run_for.as_secs());
    eprintln!("loadgen: {title} (think {} ms)…", opts.think.as_millis());
    // Stop by ourselves whatever happens: run + drain + a margin for start and shutdown.
    let hard_limit = opts.run_for + opts.drain_for + Duration::from_secs(120);
    std::thread::spawn(move || {
        std::thread::sleep(hard_limit);
        eprintln!("loadgen: hard time limit reached, giving up");
        std::process::exit(3);
    });
    let report = match rt.block_on(run(opts)) {
        Ok(r) => r,
        Err(e) => fail(e),
    };
    let mut text = report.markdown(&title);
    text.push_str(&format!(
        "\nMeasured {} on {} ({} cores); loadgen and gateway on the same machine over loopback.\n",
        date_utc(),
        std::fs::read_to_string("/etc/hostname").unwrap_or_default().trim(),
        threads
    ));
    println!("{text}");
    if let Some(path) = out {
        if let Err(e) = write_report(&path, &text) {
            fail(format!("cannot write {}: {e}", path.display()));
        }
        eprintln!("loadgen: report written to {}", path.display());
    }
    std::process::exit(if report.clean() { 0 } else { 1 });
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn date_utc() -> String {
    let days = (gateway::util::now_ms() / 86_400_000) as i64;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    format!("{:04}-{:02}-{:02}", if m <= 2 { y + 1 } else { y }, m, d)
}
