//! Files attached in a composer and not sent yet. Like the composer's text, they are a draft
//! of their conversation: kept in IndexedDB (store `attachments`, owner `draft:<session>`),
//! shown in every pane and tab on that conversation, and moved into the outbox row, in one
//! transaction, when the message is queued. A file over the gateway's limits is refused
//! before it is kept; one that storage has no room for is kept in this tab, and says so.
//!
//! The few conversations with files live in small lists rather than maps: every map type is
//! code of its own in the bundle, and these lists hold a handful of entries.

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::attachment::{AttachmentLimits, AttachmentMeta, bytes_in_words, draft_owner};
use serde_json::{Value, json};

use crate::io::gateway_client::GatewayClient;
use crate::io::storage::{FILES, LocalDb, StoredFile, Write, is_quota_error};
use crate::io::tabs::{Channel, uuid};

/// A conversation's attached files, and what the last attempt to attach could not do.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DraftFilesState {
    /// In the order they were attached.
    pub files: Vec<AttachmentMeta>,
    /// Files refused, each with why (a limit in words).
    pub refused: Vec<String>,
    /// Files kept in this tab only, and why storage could not keep them.
    pub not_kept: Option<String>,
}

#[derive(Clone, Copy)]
pub struct AttachmentController {
    /// Per conversation (session key) that showed a composer.
    pub drafts: RwSignal<Vec<(String, DraftFilesState)>>,
    /// The bytes of files this tab attached, by key: until storage has them, and for good when
    /// storage could not keep them (full, failing).
    memory: StoredValue<Vec<(String, StoredFile)>, LocalStorage>,
    /// Files being written to storage: Send waits for them, so a file attached a moment before
    /// goes with the message it was attached to.
    pending: StoredValue<u32>,
    /// Ids of files being queued: a read of storage meanwhile does not list them again.
    queueing: StoredValue<Vec<String>>,
    /// Object URLs of image previews, by file id (made when a file is listed, revoked when it
    /// goes).
    previews: RwSignal<Vec<(String, String)>>,
    db: LocalDb,
    client: GatewayClient,
    channel: StoredValue<Channel, LocalStorage>,
}

impl AttachmentController {
    pub fn new(client: GatewayClient, db: LocalDb) -> AttachmentController {
        let changed = RwSignal::new(None::<String>);
        let channel = Channel::open(&crate::io::storage::scoped("ocui-files"), move |msg| {
            if let Some(s) = msg.get("session").and_then(Value::as_str) {
                changed.set(Some(s.to_string()));
            }
        });
        let this = AttachmentController {
            drafts: RwSignal::new(Vec::new()),
            memory: StoredValue::new_local(Vec::new()),
            pending: StoredValue::new(0),
            queueing: StoredValue::new(Vec::new()),
            previews: RwSignal::new(Vec::new()),
            db,
            client,
            channel: StoredValue::new_local(channel),
        };
        // Another tab attached or sent files: read that conversation again. Storage (re)opened:
        // every conversation shown reads its files again.
        Effect::new(move |_| {
            let _ = changed.get();
            if db.opened.get() == 0 {
                return;
            }
            let all: Vec<String> = this.drafts.with_untracked(|d| d.iter().map(|(s, _)| s.clone()).collect());
            for session in all {
                this.load(&session);
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

    /// A conversation's state (empty when it has none).
    pub fn state(&self, session: &str) -> DraftFilesState {
        self.drafts.with(|d| d.iter().find(|(s, _)| s == session).map(|(_, f)| f.clone()).unwrap_or_default())
    }

    /// Changes a conversation's state, making it first if need be.
    fn update(&self, session: &str, change: &mut dyn FnMut(&mut DraftFilesState)) {
        self.drafts.update(|d| match d.iter_mut().find(|(s, _)| s == session) {
            Some((_, f)) => change(f),
            None => {
                let mut f = DraftFilesState::default();
                change(&mut f);
                d.push((session.to_string(), f));
            }
        });
    }

    /// Whether a conversation's files were read at least once.
    pub fn known(&self, session: &str) -> bool {
        self.drafts.with_untracked(|d| d.iter().any(|(s, _)| s == session))
    }

    fn in_memory(&self, key: &str) -> Option<StoredFile> {
        self.memory.with_value(|m| m.iter().find(|(k, _)| k == key).map(|(_, f)| f.clone()))
    }

    /// Reads a conversation's files (stored ones, then this tab's own).
    pub fn load(&self, session: &str) {
        self.update(session, &mut |_| {});
        let this = *self;
        let session = session.to_string();
        spawn_local(async move {
            let owner = draft_owner(&session);
            let mut stored = if this.db.is_healthy() { this.db.files(&owner).await } else { Vec::new() };
            let prefix = format!("{owner}/");
            this.memory.with_value(|m| stored.extend(m.iter().filter(|(k, _)| k.starts_with(&prefix)).map(|(_, f)| f.clone())));
            this.add_previews(&stored);
            let mut files: Vec<AttachmentMeta> = Vec::new();
            for f in stored {
                if !files.iter().any(|x| x.id == f.meta.id) && !this.queueing.with_value(|q| q.contains(&f.meta.id)) {
                    files.push(f.meta);
                }
            }
            this.update(&session, &mut |s| s.files = std::mem::take(&mut files));
        });
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
        let mut attached = self.state(session).files;
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
        self.update(session, &mut |s| {
            s.refused = std::mem::take(&mut refused);
            s.not_kept = None;
        });
        if !accepted.is_empty() {
            let this = *self;
            let session = session.to_string();
            this.pending.update_value(|n| *n += 1);
            spawn_local(async move {
                this.keep(&session, accepted, Vec::new()).await;
                this.pending.update_value(|n| *n -= 1);
            });
        }
    }

    /// Whether files attached a moment ago are still being kept.
    pub fn busy(&self) -> bool {
        self.pending.get_value() > 0
    }

    /// Waits until every file attached so far is stored (or known not to be).
    pub async fn settled(&self) {
        while self.pending.get_value() > 0 {
            crate::io::browser::sleep_ms(20).await;
        }
    }

    /// Lists files in a conversation's draft at once (their bytes in this tab), then stores
    /// them, with `also` in the same transaction; when storage cannot, they stay in this tab,
    /// and the draft says how much and why.
    async fn keep(&self, session: &str, files: Vec<StoredFile>, also: Vec<Write>) {
        let owner = draft_owner(session);
        self.memory.update_value(|m| {
            for f in &files {
                let key = f.meta.blob_key(&owner);
                m.retain(|(k, _)| *k != key);
                m.push((key, f.clone()));
            }
        });
        self.add_previews(&files);
        self.update(session, &mut |s| {
            for f in &files {
                if !s.files.iter().any(|x| x.id == f.meta.id) {
                    s.files.push(f.meta.clone());
                }
            }
        });
        let mut writes: Vec<Write> = files.iter().map(|f| Write::PutFile { owner: owner.clone(), file: f.clone() }).collect();
        writes.extend(also);
        let stored = if self.db.is_healthy() { self.db.write_all(writes).await } else { Err(self.db_failure()) };
        if stored.is_ok() {
            // Storage has them: this tab need not hold the bytes any more.
            let keys: Vec<String> = files.iter().map(|f| f.meta.blob_key(&owner)).collect();
            self.memory.update_value(|m| m.retain(|(k, _)| !keys.contains(k)));
        }
        if let Err(e) = stored {
            let bytes = files.iter().map(|f| f.meta.size).sum();
            let names: Vec<&str> = files.iter().map(|f| f.meta.file_name.as_str()).collect();
            let why = if is_quota_error(&e) { "this browser's storage is full" } else { "this browser's storage is not working" };
            let mut note = Some(format!(
                "Kept in this tab only: {} ({}) could not be saved, because {why} ({e}). Sending from this tab still works; closing or reloading it first loses {}.",
                names.join(", "),
                bytes_in_words(bytes),
                if files.len() == 1 { "it" } else { "them" }
            ));
            self.update(session, &mut |s| s.not_kept = note.take());
        }
        self.announce(session);
    }

    fn db_failure(&self) -> String {
        match self.db.health.get_untracked() {
            crate::io::storage::StorageHealth::Degraded(e) => e,
            _ => "storage is not open yet".into(),
        }
    }

    /// Removes one file from a conversation's draft.
    pub fn remove(&self, session: &str, id: &str) {
        let key = format!("{}/{id}", draft_owner(session));
        self.memory.update_value(|m| m.retain(|(k, _)| *k != key));
        self.revoke_preview(id);
        self.update(session, &mut |s| s.files.retain(|f| f.id != id));
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
    /// [`AttachmentController::collect`]; [`AttachmentController::sent`] or [`AttachmentController::put_back`] ends it.
    pub fn take(&self, session: &str) -> Vec<AttachmentMeta> {
        let mut taken = Vec::new();
        self.update(session, &mut |s| taken = std::mem::take(&mut s.files));
        self.queueing.update_value(|q| q.extend(taken.iter().map(|f| f.id.clone())));
        taken
    }

    /// The bytes of `wanted` (files of a conversation's draft): this tab's own first, then
    /// the stored ones. An error names one that is in neither.
    pub async fn collect(&self, session: &str, wanted: &[AttachmentMeta]) -> Result<Vec<StoredFile>, String> {
        let owner = draft_owner(session);
        let stored = if self.db.is_healthy() { self.db.files(&owner).await } else { Vec::new() };
        let mut out = Vec::new();
        for meta in wanted {
            match self.in_memory(&meta.blob_key(&owner)).or_else(|| stored.iter().find(|f| f.meta.id == meta.id).cloned()) {
                Some(f) => out.push(f),
                None if !self.db.is_healthy() => {
                    return Err(format!(
                        "{} cannot be read while this browser's storage is not working ({}). Try again in a moment.",
                        meta.file_name,
                        self.db_failure()
                    ));
                }
                None => return Err(format!("{} is no longer kept in this browser; remove it and attach it again.", meta.file_name)),
            }
        }
        Ok(out)
    }

    /// Queueing failed: the files are the draft's again, with why.
    pub fn put_back(&self, session: &str, mut files: Vec<AttachmentMeta>, why: String) {
        self.queueing.update_value(|q| q.retain(|id| !files.iter().any(|f| f.id == *id)));
        let mut why = Some(why);
        self.update(session, &mut |s| {
            for f in std::mem::take(&mut s.files) {
                if !files.iter().any(|x| x.id == f.id) {
                    files.push(f);
                }
            }
            s.files = std::mem::take(&mut files);
            s.refused = why.take().into_iter().collect();
        });
    }

    /// `files` were queued (moved to their outbox row): the draft lets go of them.
    pub fn sent(&self, session: &str, files: &[AttachmentMeta]) {
        let owner = draft_owner(session);
        for f in files {
            self.revoke_preview(&f.id);
            let key = f.blob_key(&owner);
            self.memory.update_value(|m| m.retain(|(k, _)| *k != key));
        }
        self.queueing.update_value(|q| q.retain(|id| !files.iter().any(|f| f.id == *id)));
        // A read of storage that raced the move may have listed them again.
        self.update(session, &mut |s| {
            s.files.retain(|f| !files.iter().any(|x| x.id == f.id));
            s.refused.clear();
            s.not_kept = None;
        });
        self.announce(session);
    }

    /// Files given back by Discard: they join the conversation's draft (kept in this tab if
    /// storage has no room for them), moved from the discarded row `from` in one transaction.
    pub async fn restore(&self, session: &str, files: Vec<StoredFile>, from: Option<String>) {
        let also = from.map(|owner| Write::DeleteFiles { owner }).into_iter().collect();
        self.keep(session, files, also).await;
    }

    /// Says which files of a discarded message this browser no longer had.
    pub fn note_missing(&self, session: &str, missing: &[String]) {
        let text = format!(
            "Not given back: {} no longer kept in this browser (its storage was full or cleared). Attach {} again.",
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        );
        self.update(session, &mut |s| s.refused = vec![text.clone()]);
    }

    /// The object URL showing an image file of a draft, once it is made.
    pub fn preview(&self, id: &str) -> Option<String> {
        self.previews.with(|p| p.iter().find(|(i, _)| i == id).map(|(_, u)| u.clone()))
    }

    /// Makes object URLs for the images among `files` that have none yet.
    fn add_previews(&self, files: &[StoredFile]) {
        let missing: Vec<(String, String)> = files
            .iter()
            .filter(|f| f.meta.is_image() && self.previews.with_untracked(|p| !p.iter().any(|(i, _)| *i == f.meta.id)))
            .filter_map(|f| Some((f.meta.id.clone(), web_sys::Url::create_object_url_with_blob(&f.blob).ok()?)))
            .collect();
        if !missing.is_empty() {
            self.previews.update(|p| p.extend(missing));
        }
    }

    fn revoke_preview(&self, id: &str) {
        self.previews.update(|p| {
            p.retain(|(i, url)| {
                if i == id {
                    let _ = web_sys::Url::revoke_object_url(url);
                }
                i != id
            })
        });
    }
}
