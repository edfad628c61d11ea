//! Sockets that have not connected yet: the slots they hold ([`PendingSlot`], counted in all and
//! per browser Origin) and the error their read limit raises. Below both the upgrade, which
//! takes a slot, and the connection, which gives it back on `connect` (`crate::upgrade`,
//! `crate::conn`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::Gateway;

/// The error text the limit raises (the connection closes with 1009 on it).
pub const PRE_CONNECT_TOO_BIG: &str = "pre-connect frame exceeds 64 KiB";

/// One socket counted as not yet connected (in all, and for its Origin); released when it
/// connects or ends.
pub struct PendingSlot(Option<(Arc<Gateway>, Option<String>)>);

/// Why no slot was free.
pub enum Full {
    All,
    Origin,
}

impl PendingSlot {
    pub fn acquire(gw: &Arc<Gateway>, origin: Option<&str>) -> Result<PendingSlot, Full> {
        let max = gw.config.max_unauthenticated;
        // The per-Origin count is checked and taken under its lock, the total within it.
        let mut by_origin = gw.pending_by_origin.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(o) = origin
            && by_origin.get(o).copied().unwrap_or(0) >= gw.config.max_unauthenticated_per_origin
        {
            return Err(Full::Origin);
        }
        gw.pending_connects.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < max).then_some(n + 1)).map_err(|_| Full::All)?;
        if let Some(o) = origin {
            *by_origin.entry(o.to_string()).or_default() += 1;
        }
        gw.sockets_accepted.fetch_add(1, Ordering::Relaxed);
        Ok(PendingSlot(Some((gw.clone(), origin.map(str::to_string)))))
    }

    /// The socket connected: it no longer counts.
    pub fn release(&mut self) {
        if let Some((gw, origin)) = self.0.take() {
            if let Some(o) = origin {
                let mut by_origin = gw.pending_by_origin.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(n) = by_origin.get_mut(&o) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        by_origin.remove(&o);
                    }
                }
            }
            gw.pending_connects.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for PendingSlot {
    fn drop(&mut self) {
        self.release();
    }
}
