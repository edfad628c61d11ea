//! Unsent messages this browser keeps for other gateways. Each gateway has its own database
//! (`io::storage::bind_to_gateway`), and a row is only ever sent by a page bound to the
//! gateway it was queued for. Here the rows of the others are only read, to be listed as
//! "queued for <host>" with Discard, so nothing waits unseen.

use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::outbox::OutboxRow;

use crate::io::storage::store::{COMPOSER, OUTBOX};
use crate::io::storage::{IdbStore, KvStore, bound_db, known_gateways};

/// One unsent row of another gateway.
#[derive(Debug, Clone, PartialEq)]
pub struct ElsewhereRow {
    /// The gateway's host, as shown.
    pub host: String,
    /// Its database.
    pub db: String,
    pub row: OutboxRow,
}

/// Lists (and discards) other gateways' unsent rows. Never sends them.
#[derive(Clone, Copy)]
pub struct ElsewhereController {
    pub rows: RwSignal<Vec<ElsewhereRow>>,
    /// A database that could not be read, in words.
    pub problem: RwSignal<Option<String>>,
}

impl ElsewhereController {
    pub fn new() -> ElsewhereController {
        let c = ElsewhereController { rows: RwSignal::new(Vec::new()), problem: RwSignal::new(None) };
        // Off the first screen's path: other databases are read a moment after start.
        set_timeout(move || spawn_local(c.load()), Duration::from_millis(1500));
        c
    }

    async fn load(self) {
        let mine = bound_db();
        let mut found = Vec::new();
        for gateway in known_gateways().into_iter().filter(|g| g.db != mine) {
            let host = model::url::host_of(&gateway.url);
            match IdbStore::open(&gateway.db).await {
                Ok(db) => match db.get_all(OUTBOX).await {
                    Ok(rows) => found.extend(
                        rows.into_iter()
                            .filter_map(|(_, v)| crate::io::json::decode::<OutboxRow>(&v))
                            .filter(OutboxRow::is_unsent)
                            .map(|row| ElsewhereRow { host: host.clone(), db: gateway.db.clone(), row }),
                    ),
                    Err(e) => self.problem.set(Some(format!("The messages queued for {host} could not be read ({e})."))),
                },
                Err(e) => self.problem.set(Some(format!("The messages queued for {host} could not be read ({e})."))),
            }
        }
        model::order::sort_by(&mut found, |a, b| a.row.created_ms.total_cmp(&b.row.created_ms));
        self.rows.set(found);
    }

    /// Discard: that gateway never gets the row. Its text goes back to that gateway's composer
    /// draft of the conversation (in that gateway's database), so nothing typed is lost.
    pub fn discard(&self, item: &ElsewhereRow) {
        let this = *self;
        let item = item.clone();
        spawn_local(async move {
            let host = item.host.clone();
            let result = async {
                let db = IdbStore::open(&item.db).await?;
                let Some(current) = db.get(OUTBOX, &item.row.id).await?.and_then(|v| crate::io::json::decode::<OutboxRow>(&v)) else {
                    return Ok(());
                };
                let mut row = current;
                let Some(text) = row.discard() else { return Ok(()) };
                db.put(OUTBOX, &row.id, &crate::io::json::encode(&row)).await?;
                if !text.trim().is_empty() && model::credential::detect(&text).is_none() {
                    let draft =
                        db.get(COMPOSER, &row.session_key).await?.and_then(|v| crate::io::json::decode::<String>(&v)).unwrap_or_default();
                    let merged = if draft.is_empty() { text } else { format!("{draft}\n{text}") };
                    db.put(COMPOSER, &row.session_key, &crate::io::json::encode(&merged)).await?;
                }
                Ok::<(), String>(())
            }
            .await;
            if let Err(e) = result {
                this.problem.set(Some(format!("The message queued for {host} could not be discarded ({e}).")));
            }
            this.rows.update(|rows| rows.retain(|r| !(r.db == item.db && r.row.id == item.row.id)));
        });
    }
}
