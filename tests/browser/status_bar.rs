//! In headless Chromium: the status area tells the truth about an unreachable gateway.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use control_ui::components::status_bar::StatusBar;
use control_ui::io::gateway_client::{GatewayClient, Status};
use leptos::prelude::*;
use wasm_bindgen_test::*;

async fn sleep(ms: u64) {
    let (tx, rx) = futures_channel::oneshot::channel::<()>();
    set_timeout(
        move || {
            let _ = tx.send(());
        },
        Duration::from_millis(ms),
    );
    let _ = rx.await;
}

fn status_text() -> String {
    let doc = web_sys::window().unwrap().document().unwrap();
    doc.query_selector("[data-testid=connection-status]").unwrap().map(|e| e.text_content().unwrap_or_default()).unwrap_or_default()
}

#[wasm_bindgen_test]
async fn an_unreachable_gateway_shows_reconnecting_with_the_next_attempt() {
    // Port 9 (discard) on loopback: nothing answers.
    let client = GatewayClient::start("ws://127.0.0.1:9".into());
    let _handle = leptos::mount::mount_to_body(move || {
        provide_context(client);
        view! { <StatusBar on_settings=|_| {}/> }
    });
    let mut text = String::new();
    for _ in 0..50 {
        sleep(100).await;
        text = status_text();
        if text.starts_with("Reconnecting") {
            break;
        }
    }
    assert!(text.starts_with("Reconnecting — next attempt"), "{text}");
    assert!(matches!(client.status.get_untracked(), Status::Reconnecting { attempt: 1.., .. }));
    assert!(text.contains("could not be reached"), "{text}");
}

#[wasm_bindgen_test]
async fn a_non_websocket_url_fails_with_a_clear_message() {
    let client = GatewayClient::start("http://127.0.0.1:9".into());
    match client.status.get_untracked() {
        Status::Failed { message, .. } => assert!(message.contains("must start with ws:// or wss://"), "{message}"),
        other => panic!("expected a failure, got {other:?}"),
    }
}
