//! Every live connection, and event fan-out with per-connection `seq`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

/// Close codes: a policy violation (refused, revoked), and a frame too big.
pub const CLOSE_POLICY: u16 = 1008;
pub const CLOSE_TOO_BIG: u16 = 1009;

/// What a connection's writer sends.
pub enum Outbound {
    /// An already-serialised frame (responses and seq-less events).
    Text(String),
    /// An event; the writer numbers it with the connection's next `seq`.
    Event { event: Arc<str>, payload: Arc<str> },
    /// Close the socket with this code and reason.
    Close(u16, String),
    /// Wait this long before writing what follows (a refused `connect`'s answer held back
    /// after repeated failed sign-ins; only this socket waits).
    Hold(std::time::Duration),
}

/// The sending half of a connection, with the byte count of what is queued but unsent.
#[derive(Clone)]
pub struct ConnSender {
    tx: mpsc::UnboundedSender<Outbound>,
    pub queued_bytes: Arc<AtomicUsize>,
    /// Set once the backlog went over `maxBufferedBytes`: the connection is being dropped.
    overflow: Arc<tokio::sync::watch::Sender<bool>>,
    /// Set once a close is queued: nothing the client sends after it is acted on.
    closing: Arc<std::sync::atomic::AtomicBool>,
}

impl ConnSender {
    pub fn new() -> (ConnSender, mpsc::UnboundedReceiver<Outbound>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (overflow, _) = tokio::sync::watch::channel(false);
        (
            ConnSender {
                tx,
                queued_bytes: Arc::new(AtomicUsize::new(0)),
                overflow: Arc::new(overflow),
                closing: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            },
            rx,
        )
    }

    /// Queues a frame. A client that lets more than `maxBufferedBytes` pile up is dropped:
    /// it is not reading, and it must not make the gateway hold unbounded memory. The
    /// writer and the reader of the connection stop at once (see [`Self::overflowed`]), so a
    /// socket whose buffers are full cannot hold the connection open.
    pub fn send(&self, out: Outbound) -> bool {
        if *self.overflow.borrow() {
            return false;
        }
        if matches!(out, Outbound::Close(..)) {
            self.closing.store(true, Ordering::Release);
        }
        let size = match &out {
            Outbound::Text(t) => t.len(),
            Outbound::Event { event, payload } => event.len() + payload.len() + 48,
            Outbound::Close(..) | Outbound::Hold(_) => 0,
        };
        let queued = self.queued_bytes.fetch_add(size, Ordering::AcqRel) + size;
        if queued > protocol::MAX_BUFFERED_BYTES {
            self.overflow.send_replace(true);
            return false;
        }
        self.tx.send(out).is_ok()
    }

    pub fn sent(&self, size: usize) {
        self.queued_bytes.fetch_sub(size.min(self.queued_bytes.load(Ordering::Acquire)), Ordering::AcqRel);
    }

    /// Resolves once the connection went over the buffer limit.
    pub fn overflowed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.overflow.subscribe();
        async move {
            let _ = rx.wait_for(|o| *o).await;
        }
    }

    pub fn is_overflowed(&self) -> bool {
        *self.overflow.borrow()
    }

    /// Whether a close was queued (a revoked device, a shutdown, a refused connect).
    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }
}

/// Who a connection is, for event visibility.
#[derive(Clone)]
pub struct Peer {
    pub conn_id: String,
    pub scopes: Vec<String>,
    /// Device id, or the client id for device-less backends: owner of guest sessions.
    pub owner: String,
    /// `client.id` of its `connect` (`openclaw-control-ui`, `gateway-client`).
    pub client_id: String,
    /// `client.displayName`, if it gave one: with the client id, the `resolvedBy` label.
    pub display_name: Option<String>,
    /// The signed device it connected with, if any.
    pub device_id: Option<String>,
    pub sender: ConnSender,
}

impl Peer {
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope || s == protocol::methods::scope::ADMIN)
    }
}

#[derive(Default)]
pub struct Hub {
    peers: Mutex<HashMap<String, Peer>>,
}

impl Hub {
    fn peers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Peer>> {
        self.peers.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn join(&self, peer: Peer) {
        self.peers().insert(peer.conn_id.clone(), peer);
    }

    pub fn leave(&self, conn_id: &str) {
        self.peers().remove(conn_id);
    }

    /// Whether any connection satisfies `f` (approval routing asks this).
    pub fn any(&self, f: impl Fn(&Peer) -> bool) -> bool {
        self.peers().values().any(f)
    }

    pub fn count(&self) -> usize {
        self.peers().len()
    }

    /// Bytes queued but not yet written, per connection (diagnostics and tests).
    pub fn backlogs(&self) -> Vec<(String, usize)> {
        self.peers().values().map(|p| (p.conn_id.clone(), p.sender.queued_bytes.load(Ordering::Acquire))).collect()
    }

    /// Sends an event to every connection `visible` accepts. The payload is serialised once.
    pub fn broadcast(&self, event: &str, payload: &serde_json::Value, visible: impl Fn(&Peer) -> bool) {
        let event: Arc<str> = Arc::from(event);
        let payload: Arc<str> = Arc::from(payload.to_string());
        let targets: Vec<ConnSender> = self.peers().values().filter(|p| visible(p)).map(|p| p.sender.clone()).collect();
        for t in targets {
            t.send(Outbound::Event { event: event.clone(), payload: payload.clone() });
        }
    }

    /// Sends a raw text frame to every connection, bypassing the protocol types: the test
    /// gateway mode uses it to inject malformed, duplicated or out-of-order frames.
    pub fn inject_raw(&self, text: &str) {
        for p in self.peers().values() {
            p.sender.send(Outbound::Text(text.to_string()));
        }
    }

    /// The device ids of the open connections that connected with one.
    pub fn device_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.peers().values().filter_map(|p| p.device_id.clone()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Takes every connection `f` picks out of the hub (no event reaches it from now on) and
    /// closes it with `code` and `reason`; how many.
    pub fn evict_where(&self, f: impl Fn(&Peer) -> bool, code: u16, reason: &str) -> usize {
        let targets: Vec<ConnSender> = {
            let mut peers = self.peers();
            let ids: Vec<String> = peers.values().filter(|p| f(p)).map(|p| p.conn_id.clone()).collect();
            ids.iter().filter_map(|id| peers.remove(id)).map(|p| p.sender).collect()
        };
        for t in &targets {
            t.send(Outbound::Close(code, reason.to_string()));
        }
        targets.len()
    }

    /// The `shutdown` event, then a going-away close, to everyone.
    pub fn shutdown(&self, reason: &str) {
        self.broadcast("shutdown", &serde_json::json!({ "reason": reason }), |_| true);
        for p in self.peers().values() {
            p.sender.send(Outbound::Close(1012, "gateway restarting".into()));
        }
    }
}

/// Who is calling a method, and how far their scopes reach (`methods::dispatch` decides; the
/// handlers of each feature read it).
pub struct Caller<'a> {
    pub peer: &'a Peer,
    /// Broad scope (or admin); otherwise guest access to own sessions only.
    pub full: bool,
}
