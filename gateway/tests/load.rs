//! The CI-sized load run: 20 signed clients for 5 s against the real gateway binary
//! (`make load` runs 200 clients for 60 s with the optimised build).

use std::time::Duration;

use gateway::load::{LoadOptions, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_clients_for_five_seconds_lose_and_duplicate_nothing() {
    let opts = LoadOptions {
        clients: 20,
        run_for: Duration::from_secs(5),
        gateway_bin: Some(env!("CARGO_BIN_EXE_gateway").into()),
        drain_for: Duration::from_secs(60),
        tick_ms: 500,
        ..Default::default()
    };
    let report = run(opts).await.expect("the load run completes");
    println!("{}", report.markdown("CI load: 20 clients for 5 s (debug build)"));
    assert_eq!(report.connected, 20, "{:?}", report.first_errors);
    assert_eq!(report.request_errors, 0, "{:?}", report.first_errors);
    assert!(report.drained, "every agent run ended within the drain time");
    // Every client did real work, and every client received every event (N × fan-out).
    assert!(report.questions_created >= 20 && report.questions_answered == report.questions_created);
    assert!(report.chat_sent >= 20 && report.runs_finished == report.chat_sent);
    assert!(report.events_expected >= 20 * (2 * report.questions_created as u64 + 4 * report.chat_sent as u64));
    assert!(report.events_received >= report.events_expected);
    assert_eq!(report.lost, 0, "lost events: {:?}", report.lost_by_kind);
    assert_eq!(report.duplicated, 0, "duplicated events");
    assert_eq!((report.seq_gaps, report.seq_repeats), (0, 0), "per-connection seq");
    assert_eq!(report.dropped_clients, 0);
    assert_eq!(report.gateway_errors, 0);
    assert_eq!(report.gateway_exit_ok, Some(true), "the gateway stopped cleanly on SIGTERM");
    assert!(report.gateway_peak_rss_kib.is_some_and(|k| k > 0));
}
