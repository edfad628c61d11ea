//! A push service on loopback: what a browser's push service (FCM, Mozilla's autopush) is to a
//! gateway. It serves HTTPS with the test certificate (`e2e/fixtures/push-tls`), since gateways
//! send only to `https://` endpoints, answers every POST with 201 (a path ending in `/gone`
//! with 410, as for an expired subscription) and records it. [`TestSubscription`] is a browser's
//! side of a subscription: its keys, and the decryption of what the gateway sent (RFC 8291).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use web_push_native::p256;

/// One request the push service received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub struct PushService {
    pub port: u16,
    received: tokio::sync::mpsc::UnboundedReceiver<Received>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PushService {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn fixture(name: &str) -> PathBuf {
    crate::repo_root().join("e2e/fixtures/push-tls").join(name)
}

/// The certificate a gateway must trust to reach the push service.
pub fn ca_file() -> PathBuf {
    fixture("cert.pem")
}

async fn read_request(stream: &mut (impl AsyncReadExt + Unpin)) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())).collect();
    let length: usize = headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Received { path, headers, body })
}

impl PushService {
    pub async fn start() -> PushService {
        let identity =
            native_tls::Identity::from_pkcs8(&std::fs::read(fixture("cert.pem")).unwrap(), &std::fs::read(fixture("key.pem")).unwrap())
                .expect("the test certificate and key");
        let acceptor = tokio_native_tls::TlsAcceptor::from(native_tls::TlsAcceptor::new(identity).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, received) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                    while let Some(req) = read_request(&mut tls).await {
                        let gone = req.path.ends_with("/gone");
                        let _ = tx.send(req);
                        let status = if gone { "410 Gone" } else { "201 Created" };
                        let reply = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
                        if tls.write_all(reply.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        PushService { port, received, task }
    }

    pub fn endpoint(&self, name: &str) -> String {
        format!("https://127.0.0.1:{}/push/{name}", self.port)
    }

    /// The next request received, within `within`.
    pub async fn next(&mut self, within: Duration) -> Received {
        tokio::time::timeout(within, self.received.recv()).await.expect("the gateway sent a push in time").expect("the push service runs")
    }

    /// The next request received within `within`, if any.
    pub async fn next_within(&mut self, within: Duration) -> Option<Received> {
        tokio::time::timeout(within, self.received.recv()).await.ok().flatten()
    }

    /// Nothing more arrives within `within`.
    pub async fn nothing_within(&mut self, within: Duration) -> Option<Received> {
        tokio::time::timeout(within, self.received.recv()).await.ok().flatten()
    }
}

/// A browser's subscription: the keys it gives the gateway, and the private half that reads
/// what the gateway sends.
pub struct TestSubscription {
    pub endpoint: String,
    secret: p256::SecretKey,
    auth: [u8; 16],
}

impl TestSubscription {
    pub fn new(endpoint: String) -> TestSubscription {
        let seed: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(31).wrapping_add(endpoint.len() as u8) | 1);
        let secret = p256::SecretKey::from_slice(&seed).expect("a valid scalar");
        TestSubscription { endpoint, secret, auth: std::array::from_fn(|i| i as u8 + 7) }
    }

    /// `PushSubscription.toJSON().keys`.
    pub fn keys(&self) -> Value {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        let point = self.secret.public_key().to_encoded_point(false);
        json!({"p256dh": protocol::device::encode_b64url(point.as_bytes()), "auth": protocol::device::encode_b64url(&self.auth)})
    }

    /// `push.web.subscribe`'s params.
    pub fn params(&self) -> Value {
        json!({"endpoint": self.endpoint, "keys": self.keys()})
    }

    /// The payload a push carries, decrypted (`Content-Encoding: aes128gcm`).
    pub fn decrypt(&self, push: &Received) -> Value {
        assert_eq!(push.header("content-encoding"), Some("aes128gcm"), "an RFC 8291 payload: {:?}", push.headers);
        let auth = web_push_native::Auth::clone_from_slice(&self.auth);
        let plain =
            web_push_native::decrypt(push.body.clone(), &self.secret, &auth).expect("the payload decrypts with the subscription's keys");
        serde_json::from_slice(&plain).expect("the payload is JSON")
    }
}
