//! The rows' IndexedDB mirror: loads that never interleave, atomic changes across tabs, and
//! the files of rows (in storage, or in this tab's memory when storage could not keep them).

use std::cell::Cell;
use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::attachment::bytes_in_words;
use model::outbox::{OutboxRow, SendState};
use serde_json::json;

use super::{FilesInMemory, LoadState, OUTBOX, OutboxController};
use crate::io::browser;
use crate::io::storage::{StoredFile, Write};

impl OutboxController {
    /// Reads the rows from storage. A load asked for while one runs makes that one read again
    /// when it ends, so the last storage state always wins and two loads never interleave.
    pub(super) async fn load(self) {
        let state = self.loading.get_value();
        if state.get() != LoadState::Idle {
            state.set(LoadState::RunningAgain);
            return;
        }
        // Rows recovered from an interrupted send on a pass whose result was then dropped
        // still need their reconcile.
        let mut recovered = false;
        loop {
            state.set(LoadState::Running);
            let applied = self.load_once(&mut recovered).await;
            if applied && state.get() == LoadState::Running {
                state.set(LoadState::Idle);
                return;
            }
        }
    }

    /// One read of storage into `rows`. Returns false, having changed nothing in memory, when
    /// `rows` was edited meanwhile (that edit may be newer than what was read): read again.
    pub(super) async fn load_once(self, recovered: &mut bool) -> bool {
        let edits = self.edits.get_value();
        let edits_at_start = edits.get();
        let mut stored: Vec<OutboxRow> = self.db.get_all(OUTBOX).await.iter().filter_map(|(_, v)| crate::io::json::decode(v)).collect();
        if !self.db.is_healthy() {
            return true;
        }
        let leader = self.leader.get_untracked();
        // Rows only this tab has (written while storage was failing) go back to storage.
        let memory_only: Vec<OutboxRow> =
            self.rows.with_untracked(|mine| mine.iter().filter(|r| !stored.iter().any(|s| s.id == r.id)).cloned().collect());
        for r in memory_only {
            self.persist(&r).await;
            stored.push(r);
        }
        if leader && !self.draining.get_value().get() {
            // A row stuck in Sending with no sender alive was interrupted (reload, crash).
            for r in stored.iter_mut().filter(|r| r.state == SendState::Sending) {
                r.recover_after_reload();
                *recovered = true;
                let r = r.clone();
                self.persist(&r).await;
            }
        }
        if leader {
            // Settled rows need not stay: confirmed ones after an hour, discard tombstones
            // after a day (long after any sender could have seen the row).
            let now = browser::now_ms();
            let old: Vec<String> = stored
                .iter()
                .filter(|r| {
                    (r.state == SendState::Confirmed && now - r.created_ms > 3_600_000.0)
                        || (r.discarded && now - r.created_ms > 86_400_000.0)
                })
                .map(|r| r.id.clone())
                .collect();
            // Files of settled rows: a confirmed row's go. A discarded row's go back to its
            // conversation's draft: only found here when the tab that discarded it closed
            // before it moved them, so only when this page starts (a live tab moving them at
            // this moment is then not raced).
            let first = !self.loaded.get_value();
            for r in stored.iter().filter(|r| !r.attachments.is_empty() && (r.discarded || r.state == SendState::Confirmed)) {
                if r.discarded && first {
                    let files = self.db.files(&r.id).await;
                    if !files.is_empty() {
                        self.files.restore(&r.session_key, files, Some(r.id.clone())).await;
                        continue;
                    }
                }
                if r.state == SendState::Confirmed || old.contains(&r.id) {
                    let _ = self.db.write_all(vec![Write::DeleteFiles { owner: r.id.clone() }]).await;
                }
            }
            for id in &old {
                self.db.delete(OUTBOX, id).await;
            }
            stored.retain(|r| !old.contains(&r.id));
        }
        model::order::sort_by_key(&mut stored, OutboxRow::queue_order);
        if edits.get() != edits_at_start {
            return false;
        }
        let first_load = !self.loaded.get_value();
        self.loaded.set_value(true);
        // Files held in memory for rows that are settled or gone are let go.
        self.memory_files.update_value(|m| m.retain(|held| stored.iter().any(|r| r.id == held.row_id && r.is_unsent())));
        let unsettled = stored.iter().any(|r| r.is_unsent());
        self.rows.set(stored);
        if (first_load && unsettled) || *recovered {
            // A reconcile that ran before the rows were loaded saw nothing: check again now.
            self.schedule_reconcile();
        } else {
            self.kick();
        }
        true
    }

    pub(super) async fn persist(&self, row: &OutboxRow) -> bool {
        self.db.put(OUTBOX, &row.id, &crate::io::json::encode(row)).await
    }

    pub(super) fn announce_change(&self) {
        self.channel.with_value(|c| c.post(&json!({"type": "changed"})));
    }

    pub(super) fn set_row(&self, row: OutboxRow) {
        self.edits.with_value(|e| e.set(e.get() + 1));
        self.rows.update(|rows| match rows.iter_mut().find(|r| r.id == row.id) {
            Some(r) => *r = row,
            None => {
                rows.push(row);
                model::order::sort_by_key(rows, OutboxRow::queue_order);
            }
        });
    }

    pub(super) fn hold_in_memory(&self, row: &str, files: &[StoredFile]) {
        self.memory_files.update_value(|m| {
            m.retain(|held| held.row_id != row);
            m.push(FilesInMemory { row_id: row.to_string(), files: files.to_vec() });
        });
    }

    /// A row's files with their bytes: this tab's own, else storage's. An error names the
    /// first one that is in neither.
    pub(super) async fn row_files(&self, row: &OutboxRow) -> Result<Vec<StoredFile>, String> {
        if row.attachments.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(files) = self.memory_files.with_value(|m| m.iter().find(|held| held.row_id == row.id).map(|held| held.files.clone())) {
            return Ok(files);
        }
        let stored = self.db.files(&row.id).await;
        row.attachments
            .iter()
            .map(|meta| {
                stored.iter().find(|f| f.meta.id == meta.id).cloned().ok_or_else(|| {
                    format!(
                        "{} ({}) is not kept in this browser any more (its storage was full or cleared), and the message is not sent without it. Discard puts the message back in the composer; attach the file again there.",
                        meta.file_name,
                        bytes_in_words(meta.size)
                    )
                })
            })
            .collect()
    }

    /// A discarded row's files go back to its conversation's draft, moved in one transaction;
    /// any this browser no longer has are named there.
    pub(super) async fn give_back_files(&self, row: &OutboxRow) {
        let mut found = self
            .memory_files
            .with_value(|m| m.iter().find(|held| held.row_id == row.id).map(|held| held.files.clone()))
            .unwrap_or_default();
        if found.is_empty() {
            found = self.db.files(&row.id).await;
        }
        let missing: Vec<String> = row
            .attachments
            .iter()
            .filter(|a| !found.iter().any(|f| f.meta.id == a.id))
            .map(|a| format!("{} ({})", a.file_name, bytes_in_words(a.size)))
            .collect();
        self.files.restore(&row.session_key, found, Some(row.id.clone())).await;
        if !missing.is_empty() {
            self.files.note_missing(&row.session_key, &missing);
        }
        self.forget_files(row);
    }

    /// The files of a row that is settled (confirmed, discarded) go.
    pub(super) fn forget_files(&self, row: &OutboxRow) {
        if row.attachments.is_empty() {
            return;
        }
        self.memory_files.update_value(|m| m.retain(|held| held.row_id != row.id));
        if self.not_kept.with_untracked(|k| k.iter().any(|n| n.row_id == row.id)) {
            self.not_kept.update(|k| k.retain(|n| n.row_id != row.id));
        }
        let this = *self;
        let owner = row.id.clone();
        spawn_local(async move {
            let _ = this.db.write_all(vec![Write::DeleteFiles { owner }]).await;
        });
    }

    /// Applies `change` to a row in storage and in memory, atomically across tabs.
    pub(super) async fn change(&self, id: &str, change: impl FnOnce(&mut OutboxRow) -> bool + 'static) -> Option<OutboxRow> {
        if self.db.is_healthy() {
            let changed = Rc::new(Cell::new(false));
            let flag = changed.clone();
            let result = self
                .db
                .store()
                .update(
                    OUTBOX,
                    id,
                    Box::new(move |cur| {
                        let mut row: OutboxRow = crate::io::json::decode(&cur?)?;
                        if change(&mut row) {
                            flag.set(true);
                            Some(crate::io::json::encode(&row))
                        } else {
                            None
                        }
                    }),
                )
                .await;
            return match result {
                Ok(Some(json)) if changed.get() => {
                    let row: OutboxRow = crate::io::json::decode(&json)?;
                    if row.state == SendState::Confirmed {
                        self.forget_files(&row);
                    }
                    self.set_row(row.clone());
                    self.announce_change();
                    Some(row)
                }
                Ok(_) => None,
                Err(e) => {
                    self.db.fail(e);
                    None
                }
            };
        }
        // Storage is failing: the rows in memory are the truth for this tab.
        let mut row = self.rows.with_untracked(|rows| rows.iter().find(|r| r.id == id).cloned())?;
        if !change(&mut row) {
            return None;
        }
        self.set_row(row.clone());
        Some(row)
    }
}
