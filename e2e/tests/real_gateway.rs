//! Our UI served by the real OpenClaw gateway 2026.9.6 through `gateway.controlUi.root`.

use std::time::Duration;

use e2e::browser::Browser;
use e2e::real::RealGateway;

#[tokio::test(flavor = "multi_thread")]
async fn ui_served_by_the_real_gateway_connects_and_shows_its_version() {
    let gw = tokio::task::spawn_blocking(RealGateway::start).await.unwrap();
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    // The real gateway refuses `connect` for a moment after start (retryable); we retry.
    b.wait_text("[data-testid=connection-status]", Duration::from_secs(90), |t| t == "Connected").await;
    b.wait_text("[data-testid=server-version]", Duration::from_secs(10), |t| t == "2026.9.6").await;
    let scopes = b.wait_text("[data-testid=granted-scopes]", Duration::from_secs(10), |t| !t.is_empty()).await;
    assert!(scopes.contains("operator.questions") && scopes.contains("operator.read"), "{scopes}");
    b.screenshot("real-gateway-connected").await;
    b.close().await;
    tokio::task::spawn_blocking(move || drop(gw)).await.unwrap();
}
