//! The views other than the dock come from a lazily loaded wasm chunk (src/deferred_views.rs).
//! When that chunk cannot be fetched, the dock still answers and the page says what is missing;
//! "Load again" brings the views back once the gateway serves the chunk again, and so does the
//! next reconnect, by itself.

use std::path::Path;
use std::time::Duration;

use e2e::LocalGateway;
use e2e::browser::Browser;
use serde_json::json;

const T: Duration = Duration::from_secs(20);

/// The deferred chunk's file names in `dir` (the wasm and its gzip copy).
fn chunk_files(dir: &Path) -> Vec<String> {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("deferred-") && (n.ends_with(".wasm") || n.ends_with(".wasm.gz")))
        .collect();
    assert!(!names.is_empty(), "the build has a deferred chunk in {}", dir.display());
    names
}

/// A copy of the build in a temporary directory, with the deferred chunk moved to another one.
fn build_without_chunk() -> (tempfile::TempDir, tempfile::TempDir, Vec<String>) {
    let root = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(e2e::dist_dir()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), root.path().join(entry.file_name())).unwrap();
    }
    let aside = tempfile::tempdir().unwrap();
    let chunks = chunk_files(root.path());
    for name in &chunks {
        std::fs::rename(root.path().join(name), aside.path().join(name)).unwrap();
    }
    (root, aside, chunks)
}

fn put_back(root: &Path, aside: &Path, chunks: &[String]) {
    for name in chunks {
        std::fs::rename(aside.join(name), root.join(name)).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chunk_that_fails_to_load_leaves_the_dock_working_and_load_again_brings_the_views_back() {
    let (root, aside, chunks) = build_without_chunk();
    let gw = LocalGateway::start_with_ui_root(root.path()).await;
    let mut agent = gw.agent().await;
    // At phone width, where the banner has to wrap above the dock.
    let b = Browser::start_sized(390, 844).await;
    b.goto(&gw.ui_url()).await;
    b.wait_text("[data-testid=connection-status]", T, |t| t == "Connected").await;

    let failed = b.wait_text("[data-testid=views-failed]", T, |t| !t.is_empty()).await;
    assert!(failed.contains("did not load") && failed.contains("can still be answered"), "{failed}");
    assert!(!b.exists("textarea[name=message]").await, "no composer without its chunk");
    assert!(!b.exists(".conversation__empty").await, "no invitation to type without a composer");

    // The dock needs nothing from the chunk.
    let asked = agent
        .request("question.request", json!({"questions": [{"questionId": "q", "header": "Chunk", "question": "Ship it?", "options": [{"label": "Yes"}, {"label": "No"}]}], "timeoutMs": 60000}))
        .await
        .unwrap();
    let id = asked["id"].as_str().expect("question id").to_string();
    b.option("Yes").await;
    b.screenshot("deferred-views-failed-390").await;
    b.option("Yes").await.click().await.unwrap();
    b.click_button("Submit").await;
    let got = agent.request("question.waitAnswer", json!({"id": id, "timeoutMs": 10000})).await.unwrap();
    assert_eq!(got["status"], "answered");
    assert_eq!(got["answers"]["answers"]["q"], json!(["Yes"]));

    // The gateway serves the chunk again: one press loads it, with nothing reloaded.
    put_back(root.path(), aside.path(), &chunks);
    b.click_button("Load again").await;
    b.wait_gone("[data-testid=views-failed]", T).await;
    let receipt = b.wait_text("[data-testid=question-receipt]", T, |t| t.starts_with("Answered")).await;
    assert!(receipt.contains("Yes"), "the transcript shows what was answered meanwhile: {receipt}");
    b.send_message("hello chunk").await;
    b.wait_text("[data-testid=message][data-role=assistant] .msg__text", T, |t| t.contains("hello chunk")).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_failed_chunk_the_next_reconnect_loads_the_views_by_itself() {
    let (root, aside, chunks) = build_without_chunk();
    let mut gw = LocalGateway::start_with_ui_root(root.path()).await;
    let b = Browser::open_connected(&gw.ui_url()).await;
    b.wait_text("[data-testid=views-failed]", T, |t| t.contains("did not load")).await;

    let port = gw.port;
    gw.stop().await;
    let offline = b.wait_text("[data-testid=views-failed]", T, |t| t.contains("load by themselves")).await;
    assert!(!offline.contains("can still be answered"), "no promise of answering while disconnected: {offline}");
    put_back(root.path(), aside.path(), &chunks);
    gw.restart_on(port).await;

    b.wait_text("[data-testid=connection-status]", T, |t| t == "Connected").await;
    b.wait_gone("[data-testid=views-failed]", T).await;
    b.send_message("hello again").await;
    b.wait_text("[data-testid=message][data-role=assistant] .msg__text", T, |t| t.contains("hello again")).await;
    b.close().await;
}
