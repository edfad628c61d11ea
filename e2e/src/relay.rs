//! A WebSocket relay between the browser and a gateway, for faults the real gateway cannot
//! be asked to make: it can drop the connection right after forwarding a request, so the
//! response (the acknowledgement) never arrives, and it can take the gateway away from the
//! page (an outage) and give it back, while the gateway itself keeps running.

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
    /// While set (`hold_between`), the gateway's frames wait once the page has sent a frame
    /// holding the first text, until it sends one holding the second.
    hold: Arc<std::sync::Mutex<Option<(String, String)>>>,
    /// While set, connections are cut and new ones refused.
    blocked: Arc<AtomicBool>,
    cut: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Relay {
    pub async fn start(upstream: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let drop_after: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
        let dropped = Arc::new(AtomicBool::new(false));
        let sent: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let blocked = Arc::new(AtomicBool::new(false));
        let cut = Arc::new(tokio::sync::watch::channel(0u64).0);
        let hold: Arc<std::sync::Mutex<Option<(String, String)>>> = Arc::default();
        let (d2, dropped2, sent2, blocked2, cut2, hold2) =
            (drop_after.clone(), dropped.clone(), sent.clone(), blocked.clone(), cut.clone(), hold.clone());
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                if blocked2.load(Ordering::SeqCst) {
                    drop(tcp);
                    continue;
                }
                let upstream = upstream.clone();
                let (drop_after, dropped, sent, hold) = (d2.clone(), dropped2.clone(), sent2.clone(), hold2.clone());
                let mut cut = cut2.subscribe();
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
                    // The gateway's frames held back (`hold_between`), and whether holding has begun.
                    let mut held: Vec<Message> = Vec::new();
                    let mut holding = false;
                    loop {
                        tokio::select! {
                            _ = cut.changed() => break,
                            m = c_rx.next() => {
                                let Some(Ok(m)) = m else { break };
                                let mut release = false;
                                if let Message::Text(t) = &m {
                                    sent.lock().unwrap().push(t.to_string());
                                    let mut h = hold.lock().unwrap();
                                    if let Some((after, until)) = h.clone() {
                                        if holding && t.contains(&until) {
                                            *h = None;
                                            holding = false;
                                            release = true;
                                        } else if t.contains(&after) {
                                            holding = true;
                                        }
                                    }
                                }
                                let cut = match (&m, drop_after.lock().unwrap().clone()) {
                                    (Message::Text(t), Some(needle)) => t.contains(&needle),
                                    _ => false,
                                };
                                if s_tx.send(m).await.is_err() { break; }
                                if release {
                                    for h in held.drain(..) {
                                        if c_tx.send(h).await.is_err() { break; }
                                    }
                                }
                                if cut {
                                    *drop_after.lock().unwrap() = None;
                                    dropped.store(true, Ordering::SeqCst);
                                    break;
                                }
                            }
                            m = s_rx.next() => {
                                let Some(Ok(m)) = m else { break };
                                if holding {
                                    held.push(m);
                                    continue;
                                }
                                if c_tx.send(m).await.is_err() { break; }
                            }
                        }
                    }
                    // Dropping both halves closes both sockets without a goodbye.
                });
            }
        });
        Relay { port, drop_after, dropped, sent, hold, blocked, cut }
    }

    /// Cuts every connection and refuses new ones: to the page, the gateway is gone.
    pub fn block(&self) {
        self.blocked.store(true, Ordering::SeqCst);
        self.cut.send_modify(|n| *n += 1);
    }

    /// Lets connections through again.
    pub fn unblock(&self) {
        self.blocked.store(false, Ordering::SeqCst);
    }

    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// Once the page sends a frame holding `after`, the gateway's frames wait (nothing reaches
    /// the page) until the page sends one holding `until`; then they follow it, in order. Once.
    /// A page that waits for one of those frames before it sends `until` stays waiting.
    pub fn hold_between(&self, after: &str, until: &str) {
        *self.hold.lock().unwrap() = Some((after.to_string(), until.to_string()));
    }

    pub fn drop_after(&self, needle: &str) {
        *self.drop_after.lock().unwrap() = Some(needle.to_string());
    }
}
