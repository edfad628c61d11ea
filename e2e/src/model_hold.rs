//! A model provider on loopback that holds every model request open until the test releases it,
//! so a run of the real gateway stays active for exactly as long as a test needs it to (the real
//! gateway without a model fails each run within milliseconds, and a test that raced that would
//! fail on a loaded machine). Configured through [`crate::real::RealGateway::use_model`].
//!
//! The real gateway (openclaw 2026.9.6, the OpenAI JS SDK) only ever sends
//! `POST <baseUrl>/chat/completions`. Released requests get an HTTP status with an OpenAI-style
//! error: 400 is a "format" failure, which the gateway does not retry (500 would be retried for
//! about 80 s). Every request after the release gets that status at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// The model id the provider serves (`fake/hold` to the gateway).
pub const MODEL: &str = "hold";

pub struct ModelHold {
    pub port: u16,
    held: Arc<AtomicUsize>,
    changed: watch::Sender<()>,
    /// `Some(status)` once released: held and later requests get this status.
    release: watch::Sender<Option<u16>>,
    accept: tokio::task::JoinHandle<()>,
}

impl ModelHold {
    pub async fn start() -> ModelHold {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the model provider");
        let port = listener.local_addr().unwrap().port();
        let held = Arc::new(AtomicUsize::new(0));
        let (changed, _) = watch::channel(());
        let (release, _) = watch::channel(None::<u16>);
        let (h, c, r) = (held.clone(), changed.clone(), release.clone());
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, h.clone(), c.clone(), r.subscribe()));
            }
        });
        ModelHold { port, held, changed, release, accept }
    }

    /// The `baseUrl` to configure.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Waits until `n` model requests are held: the run is at the model and stays active.
    pub async fn wait_held(&self, n: usize, timeout: Duration) {
        let mut rx = self.changed.subscribe();
        let wait = async {
            while self.held.load(Ordering::SeqCst) < n {
                rx.changed().await.unwrap();
            }
        };
        tokio::time::timeout(timeout, wait).await.unwrap_or_else(|_| panic!("no model request reached the provider in {timeout:?}"));
    }

    /// Answers every held request, and every later one, with `status` (400: the run fails at once).
    pub fn release(&self, status: u16) {
        self.release.send_replace(Some(status));
    }
}

impl Drop for ModelHold {
    fn drop(&mut self) {
        self.release.send_replace(Some(503));
        self.accept.abort();
    }
}

async fn serve(
    mut stream: tokio::net::TcpStream,
    held: Arc<AtomicUsize>,
    changed: watch::Sender<()>,
    mut release: watch::Receiver<Option<u16>>,
) {
    // The request line and headers; the body is read on and thrown away.
    let mut head = Vec::new();
    let mut buf = [0u8; 8192];
    let end = loop {
        let Ok(n) = stream.read(&mut buf).await else { return };
        if n == 0 {
            return;
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if head.len() > 1 << 20 {
            return;
        }
    };
    let text = String::from_utf8_lossy(&head[..end]).to_string();
    let mut words = text.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (mut reader, mut writer) = stream.into_split();
    if method == "GET" && path.ends_with("/models") {
        let body = format!(r#"{{"object":"list","data":[{{"id":"{MODEL}","object":"model","created":0,"owned_by":"fake"}}]}}"#);
        let _ = writer.write_all(response(200, &body).as_bytes()).await;
        return;
    }
    if !(method == "POST" && path.ends_with("/completions")) {
        let _ = writer.write_all(response(404, r#"{"error":{"message":"no such route","type":"not_found"}}"#).as_bytes()).await;
        return;
    }
    tokio::spawn(async move { while matches!(reader.read(&mut buf).await, Ok(n) if n > 0) {} });
    held.fetch_add(1, Ordering::SeqCst);
    changed.send_replace(());
    let status = match release.wait_for(Option::is_some).await {
        Ok(s) => s.unwrap_or(503),
        Err(_) => 503,
    };
    held.fetch_sub(1, Ordering::SeqCst);
    let body = format!(
        r#"{{"error":{{"message":"the test's model provider failed this request (HTTP {status})","type":"invalid_request_error","code":"e2e_release"}}}}"#
    );
    let _ = writer.write_all(response(status, &body).as_bytes()).await;
    let _ = writer.shutdown().await;
}

fn response(status: u16, body: &str) -> String {
    format!("HTTP/1.1 {status} E2E\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
}
