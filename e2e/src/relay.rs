//! A WebSocket relay between the browser and a gateway, for faults the real gateway cannot
//! be asked to make: it can drop the connection right after forwarding a request, so the
//! response (the acknowledgement) never arrives.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};

pub struct Relay {
    pub port: u16,
    /// When set, the next client frame containing this text is forwarded and then both
    /// sides are closed before anything comes back.
    pub drop_after: Arc<std::sync::Mutex<Option<String>>>,
    pub dropped: Arc<AtomicBool>,
    /// Every text frame the browser sent, in order: what reached the gateway.
    pub sent: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Relay {
    pub async fn start(upstream: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let drop_after: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
        let dropped = Arc::new(AtomicBool::new(false));
        let sent: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let (d2, dropped2, sent2) = (drop_after.clone(), dropped.clone(), sent.clone());
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let (drop_after, dropped, sent) = (d2.clone(), dropped2.clone(), sent2.clone());
                tokio::spawn(async move {
                    let mut origin = None;
                    let Ok(client) = tokio_tungstenite::accept_hdr_async(tcp, |req: &Request, resp: Response| {
                        origin = req.headers().get("origin").cloned();
                        Ok(resp)
                    })
                    .await
                    else {
                        return;
                    };
                    let mut up_req = upstream.as_str().into_client_request().unwrap();
                    if let Some(o) = origin {
                        up_req.headers_mut().insert("origin", o);
                    }
                    let Ok((server, _)) = tokio_tungstenite::connect_async(up_req).await else { return };
                    let (mut c_tx, mut c_rx) = client.split();
                    let (mut s_tx, mut s_rx) = server.split();
                    loop {
                        tokio::select! {
                            m = c_rx.next() => {
                                let Some(Ok(m)) = m else { break };
                                if let Message::Text(t) = &m {
                                    sent.lock().unwrap().push(t.to_string());
                                }
                                let cut = match (&m, drop_after.lock().unwrap().clone()) {
                                    (Message::Text(t), Some(needle)) => t.contains(&needle),
                                    _ => false,
                                };
                                if s_tx.send(m).await.is_err() { break; }
                                if cut {
                                    *drop_after.lock().unwrap() = None;
                                    dropped.store(true, Ordering::SeqCst);
                                    break;
                                }
                            }
                            m = s_rx.next() => {
                                let Some(Ok(m)) = m else { break };
                                if c_tx.send(m).await.is_err() { break; }
                            }
                        }
                    }
                    // Dropping both halves closes both sockets without a goodbye.
                });
            }
        });
        Relay { port, drop_after, dropped, sent }
    }

    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    pub fn drop_after(&self, needle: &str) {
        *self.drop_after.lock().unwrap() = Some(needle.to_string());
    }
}
