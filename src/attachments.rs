//! Files attached in a composer and not sent yet. Like the composer's text, they are a draft
//! of their conversation: kept in IndexedDB (store `attachments`, owner `draft:<session>`),
//! shown in every pane and tab on that conversation, and moved into the outbox row, in one
//! transaction, when the message is queued. A file over the gateway's limits is refused
//! before it is kept; one that storage has no room for is kept in this tab, and says so.

use std::collections::{BTreeMap, HashMap};

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::attachment::{AttachmentLimits, AttachmentMeta, bytes_in_words, draft_owner};
use serde_json::{Value, json};

use crate::coordination::{Channel, uuid};
use crate::gateway_client::GatewayClient;
use crate::storage::{FILES, LocalDb, StoredFile, Write, is_quota_error};

/// What a person is told about files they tried to attach: refusals and files kept in this tab
/// only. Cleared when they attach again or send.
#[derive(Clone, Debug, PartialEq)]
pub struct FilesNotice {
    pub refused: Vec<String>,
    pub not_kept: Option<String>,
}

#[derive(Clone, Copy)]
pub struct DraftFiles {
    /// The files attached per conversation, in the order they were attached.
    pub by_session: RwSignal<BTreeMap<String, Vec<AttachmentMeta>>>,
    /// What the last attempt to attach files in a conversation could not do.
    pub notice: RwSignal<BTreeMap<String, FilesNotice>>,
    /// Files storage could not keep (full, failing): their bytes live in this tab, by key.
    memory: StoredValue<HashMap<String, StoredFile>, LocalStorage>,
    /// Object URLs of image previews, by file id (revoked when the file goes).
    previews: StoredValue<HashMap<String, String>, LocalStorage>,
    db: LocalDb,
    client: GatewayClient,
    channel: StoredValue<Channel, LocalStorage>,
}

impl DraftFiles {
    pub fn new(client: GatewayClient, db: LocalDb) -> DraftFiles {
        let changed = RwSignal::new(None::<String>);
        let channel = Channel::open("ocui-files", move |msg| {
            if let Some(s) = msg.get("session").and_then(Value::as_str) {
                changed.set(Some(s.to_string()));
            }
        });
        let this = DraftFiles {
            by_session: RwSignal::new(BTreeMap::new()),
            notice: RwSignal::new(BTreeMap::new()),
            memory: StoredValue::new_local(HashMap::new()),
            previews: StoredValue::new_local(HashMap::new()),
            db,
            client,
            channel: StoredValue::new_local(channel),
        };
        // Another tab attached or sent files: read that conversation again.
        Effect::new(move |_| {
            if let Some(session) = changed.get() {
                this.load(&session);
            }
        });
        // Storage (re)opened: every conversation shown reads its files again.
        Effect::new(move |_| {
            if db.opened.get() > 0 {
                for session in this.by_session.with_untracked(|m| m.keys().cloned().collect::<Vec<_>>()) {
                    this.load(&session);
                }
            }
        });
        this
    }

    /// The limits the connected gateway announced.
    pub fn limits(&self) -> AttachmentLimits {
        self.client.hello.with_untracked(|h| match h {
            Some(h) => AttachmentLimits::announced(h.attachments_max_bytes, h.attachments_max_image_bytes),
            None => AttachmentLimits::DEFAULT,
        })
    }

    /// Reads a conversation's files (stored ones, then this tab's own) into `by_session`.
    pub fn load(&self, session: &str) {
        let this = *self;
        let session = session.to_string();
        spawn_local(async move {
            let owner = draft_owner(&session);
            let mut files: Vec<AttachmentMeta> = if this.db.opened.get_untracked() > 0 { this.db.files(&owner).await.into_iter().map(|f| f.meta).collect() } else { Vec::new() };
            this.memory.with_value(|m| {
                for f in m.iter().filter(|(k, _)| k.starts_with(&format!("{owner}/"))).map(|(_, f)| f) {
                    if !files.iter().any(|x| x.id == f.meta.id) {
                        files.push(f.meta.clone());
                    }
                }
            });
            this.by_session.update(|m| {
                m.insert(session, files);
            });
        });
    }

    /// Whether a conversation's files were read at least once.
    pub fn known(&self, session: &str) -> bool {
        self.by_session.with_untracked(|m| m.contains_key(session))
    }

    fn announce(&self, session: &str) {
        self.channel.with_value(|c| c.post(&json!({"session": session})));
    }

    /// Attaches `files` to a conversation's draft: each is checked against the gateway's
    /// limits (with the ones already attached), then kept.
    pub fn add(&self, session: &str, files: Vec<web_sys::File>) {
        let limits = self.limits();
        let mut accepted: Vec<StoredFile> = Vec::new();
        let mut refused = Vec::new();
        let mut attached = self.by_session.with_untracked(|m| m.get(session).cloned().unwrap_or_default());
        for file in files {
            let meta = AttachmentMeta { id: uuid(), file_name: file.name(), mime_type: file.type_(), size: file.size() as u64 };
            match limits.check(&meta, &attached) {
                Ok(()) => {
                    attached.push(meta.clone());
                    accepted.push(StoredFile { meta, blob: file.into() });
                }
                Err(why) => refused.push(why),
            }
        }
        self.notice.update(|n| {
            n.insert(session.to_string(), FilesNotice { refused, not_kept: None });
        });
        if accepted.is_empty() {
            return;
        }
        let this = *self;
        let session = session.to_string();
        spawn_local(async move {
            let owner = draft_owner(&session);
            let writes: Vec<Write> = accepted.iter().map(|f| Write::PutFile { owner: owner.clone(), file: f.clone() }).collect();
            let bytes = crate::storage::file_bytes(&writes);
            let stored = if this.db.is_healthy() { this.db.write_all(writes).await } else { Err(this.db_failure()) };
            if let Err(e) = stored {
                this.keep_in_memory(&session, &owner, &accepted, bytes, &e);
            }
            this.by_session.update(|m| m.entry(session.clone()).or_default().extend(accepted.into_iter().map(|f| f.meta)));
            this.announce(&session);
        });
    }

    fn db_failure(&self) -> String {
        match self.db.health.get_untracked() {
            crate::storage::StorageHealth::Degraded(e) => e,
            _ => "storage is not open yet".into(),
        }
    }

    /// Keeps files in this tab when storage could not, and says how much, and why.
    fn keep_in_memory(&self, session: &str, owner: &str, files: &[StoredFile], bytes: u64, error: &str) {
        self.memory.update_value(|m| {
            for f in files {
                m.insert(f.meta.blob_key(owner), f.clone());
            }
        });
        let names: Vec<&str> = files.iter().map(|f| f.meta.file_name.as_str()).collect();
        let why = if is_quota_error(error) { "this browser's storage is full" } else { "this browser's storage is not working" };
        let text = format!(
            "Kept in this tab only: {} ({}) could not be saved, because {why} ({error}). Sending from this tab still works; closing or reloading it first loses {}.",
            names.join(", "),
            bytes_in_words(bytes),
            if files.len() == 1 { "it" } else { "them" }
        );
        self.notice.update(|n| n.entry(session.to_string()).or_insert(FilesNotice { refused: Vec::new(), not_kept: None }).not_kept = Some(text));
    }

    /// Removes one file from a conversation's draft.
    pub fn remove(&self, session: &str, id: &str) {
        let owner = draft_owner(session);
        let Some(meta) = self.by_session.with_untracked(|m| m.get(session).and_then(|v| v.iter().find(|f| f.id == id).cloned())) else { return };
        let key = meta.blob_key(&owner);
        self.memory.update_value(|m| {
            m.remove(&key);
        });
        self.revoke_preview(id);
        self.by_session.update(|m| {
            if let Some(v) = m.get_mut(session) {
                v.retain(|f| f.id != id);
            }
        });
        let this = *self;
        let session = session.to_string();
        spawn_local(async move {
            if this.db.is_healthy() {
                let _ = this.db.write_all(vec![Write::Delete { store: FILES, key }]).await;
            }
            this.announce(&session);
        });
    }

    /// Takes a conversation's files out of its draft for queueing: the list empties at once,
    /// so a second press of Send cannot queue them twice. Their bytes follow with
    /// [`DraftFiles::collect`]; [`DraftFiles::sent`] or [`DraftFiles::put_back`] ends it.
    pub fn take(&self, session: &str) -> Vec<AttachmentMeta> {
        self.by_session.try_update(|m| m.insert(session.to_string(), Vec::new())).flatten().unwrap_or_default()
    }

    /// The bytes of `wanted` (files of a conversation's draft): this tab's own first, then
    /// the stored ones. An error names one that is in neither.
    pub async fn collect(&self, session: &str, wanted: &[AttachmentMeta]) -> Result<Vec<StoredFile>, String> {
        let owner = draft_owner(session);
        let stored = if self.db.is_healthy() { self.db.files(&owner).await } else { Vec::new() };
        let mut out = Vec::new();
        for meta in wanted {
            let found = self.memory.with_value(|m| m.get(&meta.blob_key(&owner)).cloned()).or_else(|| stored.iter().find(|f| f.meta.id == meta.id).cloned());
            match found {
                Some(f) => out.push(f),
                None => return Err(format!("{} is no longer kept in this browser; remove it and attach it again.", meta.file_name)),
            }
        }
        Ok(out)
    }

    /// Queueing failed: the files are the draft's again, with why.
    pub fn put_back(&self, session: &str, files: Vec<AttachmentMeta>, why: String) {
        self.by_session.update(|m| {
            let v = m.entry(session.to_string()).or_default();
            let later = std::mem::replace(v, files);
            v.extend(later);
        });
        self.notice.update(|n| {
            n.insert(session.to_string(), FilesNotice { refused: vec![why], not_kept: None });
        });
    }

    /// `files` were queued (moved to their outbox row): the draft lets go of them.
    pub fn sent(&self, session: &str, files: &[AttachmentMeta]) {
        let owner = draft_owner(session);
        for f in files {
            self.revoke_preview(&f.id);
        }
        self.memory.update_value(|m| {
            for f in files {
                m.remove(&f.blob_key(&owner));
            }
        });
        self.notice.update(|n| {
            n.remove(session);
        });
        self.announce(session);
    }

    /// Files given back by Discard: they join the conversation's draft (kept in this tab if
    /// storage has no room for them).
    pub async fn restore(&self, session: &str, files: Vec<StoredFile>) {
        if files.is_empty() {
            return;
        }
        let owner = draft_owner(session);
        let writes: Vec<Write> = files.iter().map(|f| Write::PutFile { owner: owner.clone(), file: f.clone() }).collect();
        let bytes = crate::storage::file_bytes(&writes);
        let stored = if self.db.is_healthy() { self.db.write_all(writes).await } else { Err(self.db_failure()) };
        if let Err(e) = stored {
            self.keep_in_memory(session, &owner, &files, bytes, &e);
        }
        self.by_session.update(|m| {
            let v = m.entry(session.to_string()).or_default();
            for f in files {
                if !v.iter().any(|x| x.id == f.meta.id) {
                    v.push(f.meta);
                }
            }
        });
        self.announce(session);
    }

    /// An object URL showing an image file of a conversation's draft, made once per file.
    pub async fn preview(&self, session: &str, meta: &AttachmentMeta) -> Option<String> {
        if !meta.is_image() {
            return None;
        }
        if let Some(url) = self.previews.with_value(|p| p.get(&meta.id).cloned()) {
            return Some(url);
        }
        let owner = draft_owner(session);
        let key = meta.blob_key(&owner);
        let blob = match self.memory.with_value(|m| m.get(&key).map(|f| f.blob.clone())) {
            Some(b) => b,
            None => self.db.files(&owner).await.into_iter().find(|f| f.meta.id == meta.id)?.blob,
        };
        let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
        self.previews.update_value(|p| {
            p.insert(meta.id.clone(), url.clone());
        });
        Some(url)
    }

    fn revoke_preview(&self, id: &str) {
        if let Some(url) = self.previews.try_update_value(|p| p.remove(id)).flatten() {
            let _ = web_sys::Url::revoke_object_url(&url);
        }
    }
}
