//! SQLite state under the data directory. Everything that must survive a restart is here.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

pub struct Store {
    db: Mutex<Connection>,
}

/// Schema migrations, applied in order; `PRAGMA user_version` records how many ran.
const MIGRATIONS: &[&str] = &[
    // 1: paired devices and the device tokens issued to them.
    "CREATE TABLE devices (
        device_id TEXT PRIMARY KEY,
        public_key TEXT NOT NULL,
        device_token TEXT NOT NULL,
        client_id TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        last_seen_ms INTEGER NOT NULL
    );",
    // 2: sessions (with the owner that created them, for guest visibility) and resolved
    // questions (pending ones live in memory, as in the real gateway).
    "CREATE TABLE sessions (
        key TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        label TEXT,
        created_at_ms INTEGER NOT NULL
    );
    CREATE TABLE questions (
        id TEXT PRIMARY KEY,
        session_key TEXT,
        status TEXT NOT NULL,
        record_json TEXT NOT NULL,
        resolved_at_ms INTEGER NOT NULL
    );",
    // 3: transcripts and the chat.send dedupe records (one per idempotency key).
    "CREATE TABLE messages (
        session_key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        id TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        idempotency_key TEXT,
        json TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        PRIMARY KEY (session_key, seq)
    );
    CREATE INDEX messages_idem ON messages (idempotency_key);
    CREATE TABLE sends (
        idempotency_key TEXT PRIMARY KEY,
        session_key TEXT NOT NULL,
        status TEXT NOT NULL,
        summary TEXT,
        created_ms INTEGER NOT NULL
    );",
    // 4: files sent with messages (`chat.send` attachments), served to the session's readers
    // by `/__openclaw__/assistant-media` as `media://inbound/<id>`.
    "CREATE TABLE media (
        id TEXT PRIMARY KEY,
        session_key TEXT NOT NULL,
        content_type TEXT NOT NULL,
        file_name TEXT NOT NULL,
        bytes BLOB NOT NULL,
        created_ms INTEGER NOT NULL
    );",
    // 5: approvals that ended (decided, expired, cancelled, denied for want of a route); pending
    // ones live in memory, as in the real gateway. `boot_id` tells the kind methods whether an
    // ended approval is one of this run of the gateway (already resolved) or of an earlier one
    // (unknown, as the real gateway says after a restart). History pages newest first.
    "CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        session_key TEXT,
        boot_id TEXT NOT NULL,
        record_json TEXT NOT NULL,
        resolved_at_ms INTEGER NOT NULL
    );
    CREATE INDEX approvals_history ON approvals (resolved_at_ms DESC, id DESC);",
    // 6: what the conversation list shows of a session, as the real gateway keeps it: the id of
    // its transcript (`sessionId`, named by archive and unarchive), the last activity, the
    // archive time, a display name, the title derived from the first user message (kept here so
    // that search and `sessions.changed` need no transcript reads), the session it was made from
    // and how its last run ended. Filled in for older rows after the migration (`backfill_v6`).
    "ALTER TABLE sessions ADD COLUMN session_id TEXT;
    ALTER TABLE sessions ADD COLUMN updated_at_ms INTEGER;
    ALTER TABLE sessions ADD COLUMN last_interaction_ms INTEGER;
    ALTER TABLE sessions ADD COLUMN archived_at_ms INTEGER;
    ALTER TABLE sessions ADD COLUMN display_name TEXT;
    ALTER TABLE sessions ADD COLUMN derived_title TEXT;
    ALTER TABLE sessions ADD COLUMN parent_session_key TEXT;
    ALTER TABLE sessions ADD COLUMN run_status TEXT;
    ALTER TABLE sessions ADD COLUMN last_run_id TEXT;
    ALTER TABLE sessions ADD COLUMN last_run_error TEXT;
    UPDATE sessions SET
        updated_at_ms = COALESCE((SELECT MAX(m.created_ms) FROM messages m WHERE m.session_key = sessions.key), created_at_ms),
        last_interaction_ms = COALESCE(
            (SELECT MAX(m.created_ms) FROM messages m WHERE m.session_key = sessions.key AND m.role = 'user'), created_at_ms);
    CREATE INDEX sessions_updated ON sessions (updated_at_ms DESC);
    CREATE INDEX sessions_label ON sessions (label);",
    // 7: device tokens are no longer kept: only their SHA-256 (`token_hash`) and the salt they
    // are derived from with the shared token they were paired under (`crate::devices`), so a
    // database copy gives no working token, and a new shared token ends every device token.
    // Plain tokens kept before cannot be bound to a shared token: they are dropped, and those
    // devices pair again with the shared token. `revoked_at_ms`: `gateway devices revoke`.
    "ALTER TABLE devices ADD COLUMN token_hash TEXT;
    ALTER TABLE devices ADD COLUMN token_salt TEXT;
    ALTER TABLE devices ADD COLUMN revoked_at_ms INTEGER;
    UPDATE devices SET device_token = '';
    CREATE INDEX devices_token_hash ON devices (token_hash);",
    // 8: the conversation's own model and thinking level (`sessions.patch`; none: the agent's
    // default), and its last run's usage: the context's tokens after it (`totalTokens`) and the
    // run's own input and output tokens.
    "ALTER TABLE sessions ADD COLUMN model TEXT;
    ALTER TABLE sessions ADD COLUMN thinking_level TEXT;
    ALTER TABLE sessions ADD COLUMN total_tokens INTEGER;
    ALTER TABLE sessions ADD COLUMN input_tokens INTEGER;
    ALTER TABLE sessions ADD COLUMN output_tokens INTEGER;",
    // 9: rows a rewind took off the conversation (`sessions.rewind`): kept, as the real gateway
    // keeps them as an earlier branch, but no longer in its history. 0: on the conversation;
    // n: left by the conversation's n-th rewind.
    "ALTER TABLE messages ADD COLUMN branch INTEGER NOT NULL DEFAULT 0;",
    // 10: Web Push (`push.rs`): one subscription per browser endpoint, bound to the device that
    // made it (with the scopes it had then), its device preferences; and the gateway's own
    // state that outlives a restart (its VAPID key).
    "CREATE TABLE push_subscriptions (
        endpoint TEXT PRIMARY KEY,
        subscription_id TEXT NOT NULL,
        p256dh TEXT NOT NULL,
        auth TEXT NOT NULL,
        device_id TEXT NOT NULL,
        scopes TEXT NOT NULL,
        preferences TEXT,
        created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER NOT NULL
    );
    CREATE TABLE machine_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
];

use crate::push::PushSubscriptionRow;

const PUSH_COLUMNS: &str = "endpoint, subscription_id, p256dh, auth, device_id, scopes, preferences, created_at_ms, updated_at_ms";

fn push_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PushSubscriptionRow> {
    Ok(PushSubscriptionRow {
        endpoint: r.get(0)?,
        subscription_id: r.get(1)?,
        p256dh: r.get(2)?,
        auth: r.get(3)?,
        device_id: r.get(4)?,
        scopes: r.get(5)?,
        preferences: r.get(6)?,
        created_at_ms: r.get(7)?,
        updated_at_ms: r.get(8)?,
    })
}

/// How long a title derived from the first user message is (characters, then `…`).
pub const DERIVED_TITLE_CHARS: usize = 60;

/// The title of a session from its first user message: the first line, shortened.
pub fn derive_title(message: &serde_json::Value) -> Option<String> {
    let text = message.get("content")?.as_str()?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(protocol::frame::truncate(line, DERIVED_TITLE_CHARS))
}

/// A session as the conversation list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub key: String,
    pub owner: String,
    pub session_id: String,
    pub label: Option<String>,
    pub display_name: Option<String>,
    pub derived_title: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub last_interaction_at: i64,
    pub archived_at: Option<i64>,
    pub parent_session_key: Option<String>,
    /// How its last run ended (`done`, `failed`, `killed`); none before the first run.
    pub run_status: Option<String>,
    pub last_run_id: Option<String>,
    pub last_run_error: Option<String>,
    /// Its own model (`provider/id`); none: the agent's default.
    pub model: Option<String>,
    /// Its own thinking level; none: the model's default.
    pub thinking_level: Option<String>,
    /// The last run's usage (none before the first run).
    pub usage: Option<RunUsage>,
}

/// What a run used: the context after it, and its own input and output tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunUsage {
    pub context: i64,
    pub input: i64,
    pub output: i64,
}

/// Which sessions a list shows by their archive state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchivedFilter {
    Active,
    Archived,
    All,
}

/// What `create_session` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Created {
    /// A new session.
    New(SessionRecord),
    /// The key was taken: the session as it is (nothing changed).
    Existing(SessionRecord),
    /// Another session has this label.
    LabelInUse,
}

/// A change to a session (`sessions.patch`).
#[derive(Debug, Clone, Default)]
pub struct SessionPatch<'a> {
    /// `Some(None)` clears the label.
    pub label: Option<Option<&'a str>>,
    pub archived: Option<bool>,
    /// `Some(None)`: back to the agent's default model.
    pub model: Option<Option<&'a str>>,
    /// `Some(None)`: back to the model's default level.
    pub thinking_level: Option<Option<&'a str>>,
}

/// What `patch_session` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Patched {
    /// The session after the change.
    Done(Box<SessionRecord>),
    LabelInUse,
}

const SESSION_COLUMNS: &str = "key, owner, session_id, label, display_name, derived_title, created_at_ms,
    COALESCE(updated_at_ms, created_at_ms), COALESCE(last_interaction_ms, created_at_ms), archived_at_ms, parent_session_key,
    run_status, last_run_id, last_run_error, model, thinking_level, total_tokens, input_tokens, output_tokens";

fn session_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        key: r.get(0)?,
        owner: r.get(1)?,
        session_id: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
        label: r.get(3)?,
        display_name: r.get(4)?,
        derived_title: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        last_interaction_at: r.get(8)?,
        archived_at: r.get(9)?,
        parent_session_key: r.get(10)?,
        run_status: r.get(11)?,
        last_run_id: r.get(12)?,
        last_run_error: r.get(13)?,
        model: r.get(14)?,
        thinking_level: r.get(15)?,
        usage: match (r.get::<_, Option<i64>>(16)?, r.get::<_, Option<i64>>(17)?, r.get::<_, Option<i64>>(18)?) {
            (Some(context), Some(input), Some(output)) => Some(RunUsage { context, input, output }),
            _ => None,
        },
    })
}

/// How long ended approvals are kept for `approval.get` and `approval.history` (the real
/// gateway's retention).
pub const APPROVAL_RETENTION_MS: i64 = 30 * 24 * 60 * 60 * 1000;

/// A file received with a message, to be saved with it.
pub struct InboundMedia {
    pub id: String,
    pub content_type: String,
    pub file_name: String,
    pub bytes: Vec<u8>,
}

/// The error summary of a send whose run was cut off by a gateway restart.
pub const INTERRUPTED: &str = "interrupted: the gateway restarted during the run";

/// What became of a `chat.send`, for answering a retry with the same key.
#[derive(Debug, Clone, PartialEq)]
pub enum SendStatus {
    InFlight,
    Ok,
    Error(String),
    Aborted,
}

/// A paired device as stored: never its token, only the token's hash and salt.
#[derive(Debug, Clone)]
pub struct Device {
    pub device_id: String,
    pub public_key: String,
    pub client_id: String,
    pub token_hash: Option<String>,
    pub token_salt: Option<String>,
    pub created_at_ms: i64,
    pub last_seen_ms: i64,
    pub revoked_at_ms: Option<i64>,
}

const DEVICE_COLUMNS: &str = "device_id, public_key, client_id, token_hash, token_salt, created_at_ms, last_seen_ms, revoked_at_ms";

fn device_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Device> {
    Ok(Device {
        device_id: r.get(0)?,
        public_key: r.get(1)?,
        client_id: r.get(2)?,
        token_hash: r.get(3)?,
        token_salt: r.get(4)?,
        created_at_ms: r.get(5)?,
        last_seen_ms: r.get(6)?,
        revoked_at_ms: r.get(7)?,
    })
}

impl Store {
    pub fn open(data_dir: &Path) -> Result<Store, String> {
        let warning = prepare_data_dir(data_dir).map_err(|e| format!("cannot create data directory {}: {e}", data_dir.display()))?;
        if let Some(w) = warning {
            crate::log::warn(&w);
        }
        let path = data_dir.join("gateway.sqlite");
        let conn = Connection::open(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Self::init(conn).map_err(|e| format!("cannot prepare {}: {e}", path.display()))
    }

    pub fn in_memory() -> Store {
        Self::init(Connection::open_in_memory().expect("in-memory SQLite")).expect("schema")
    }

    fn init(conn: Connection) -> rusqlite::Result<Store> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let version: usize = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            conn.execute_batch(&format!("BEGIN; {sql} PRAGMA user_version = {}; COMMIT;", i + 1))?;
        }
        if version < 6 {
            Self::backfill_v6(&conn)?;
        }
        // No run survives a restart: a send the previous process left in flight (it was
        // killed mid-run) is recorded as interrupted, so a retry with its key gets an answer.
        conn.execute("UPDATE sends SET status = 'error', summary = ?1 WHERE status = 'in_flight'", [INTERRUPTED])?;
        conn.execute("DELETE FROM approvals WHERE resolved_at_ms < ?1", [crate::util::now_ms() - APPROVAL_RETENTION_MS])?;
        Ok(Store { db: Mutex::new(conn) })
    }

    /// Sessions made before migration 6 get a transcript id and the title of their first user
    /// message (done once, in Rust: the title is shortened by characters).
    fn backfill_v6(conn: &Connection) -> rusqlite::Result<()> {
        let keys: Vec<String> = conn
            .prepare("SELECT key FROM sessions WHERE session_id IS NULL")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for key in keys {
            let first: Option<String> = conn
                .prepare_cached("SELECT json FROM messages WHERE session_key = ?1 AND role = 'user' ORDER BY seq LIMIT 1")?
                .query_row([&key], |r| r.get(0))
                .optional()?;
            let title = first.and_then(|j| serde_json::from_str::<serde_json::Value>(&j).ok()).and_then(|m| derive_title(&m));
            conn.prepare_cached("UPDATE sessions SET session_id = ?2, derived_title = ?3 WHERE key = ?1")?.execute(params![
                key,
                crate::util::uuid_v4(),
                title
            ])?;
        }
        Ok(())
    }

    /// `PRAGMA integrity_check`: "ok", or the problems SQLite found.
    pub fn integrity_check(&self) -> rusqlite::Result<String> {
        let db = self.db();
        let mut stmt = db.prepare("PRAGMA integrity_check")?;
        let rows: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        Ok(rows.join("; "))
    }

    /// Moves the WAL into the database file (graceful shutdown does this last).
    pub fn checkpoint(&self) -> rusqlite::Result<()> {
        self.db().query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
    }

    fn db(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite itself consistent; keep serving.
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A value of the gateway's own lasting state; `init` makes and keeps it on first use, and
    /// every caller gets the value kept first.
    pub fn machine_state_or(&self, key: &str, init: impl FnOnce() -> String) -> rusqlite::Result<String> {
        let db = self.db();
        if let Some(v) = db.query_row("SELECT value FROM machine_state WHERE key = ?1", [key], |r| r.get(0)).optional()? {
            return Ok(v);
        }
        db.execute("INSERT OR IGNORE INTO machine_state (key, value) VALUES (?1, ?2)", rusqlite::params![key, init()])?;
        db.query_row("SELECT value FROM machine_state WHERE key = ?1", [key], |r| r.get(0))
    }

    pub fn push_subscription(&self, endpoint: &str) -> rusqlite::Result<Option<PushSubscriptionRow>> {
        self.db().query_row(&format!("SELECT {PUSH_COLUMNS} FROM push_subscriptions WHERE endpoint = ?1"), [endpoint], push_row).optional()
    }

    pub fn push_subscriptions(&self) -> rusqlite::Result<Vec<PushSubscriptionRow>> {
        let db = self.db();
        let mut stmt = db.prepare(&format!("SELECT {PUSH_COLUMNS} FROM push_subscriptions ORDER BY created_at_ms"))?;
        stmt.query_map([], push_row)?.collect()
    }

    pub fn put_push_subscription(&self, row: &PushSubscriptionRow) -> rusqlite::Result<()> {
        self.db().execute(
            &format!("INSERT OR REPLACE INTO push_subscriptions ({PUSH_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
            rusqlite::params![
                row.endpoint,
                row.subscription_id,
                row.p256dh,
                row.auth,
                row.device_id,
                row.scopes,
                row.preferences,
                row.created_at_ms,
                row.updated_at_ms
            ],
        )?;
        Ok(())
    }

    pub fn delete_push_subscription(&self, endpoint: &str) -> rusqlite::Result<bool> {
        Ok(self.db().execute("DELETE FROM push_subscriptions WHERE endpoint = ?1", [endpoint])? > 0)
    }

    pub fn device(&self, device_id: &str) -> rusqlite::Result<Option<Device>> {
        self.db()
            .prepare_cached(&format!("SELECT {DEVICE_COLUMNS} FROM devices WHERE device_id = ?1"))?
            .query_row([device_id], device_row)
            .optional()
    }

    /// Every paired device, the most recently seen first (`gateway devices list`).
    pub fn devices(&self) -> rusqlite::Result<Vec<Device>> {
        self.db()
            .prepare_cached(&format!("SELECT {DEVICE_COLUMNS} FROM devices ORDER BY last_seen_ms DESC"))?
            .query_map([], device_row)?
            .collect()
    }

    /// The device whose token hashes to `token_hash`, if any.
    pub fn device_by_token_hash(&self, token_hash: &str) -> rusqlite::Result<Option<Device>> {
        self.db()
            .prepare_cached(&format!("SELECT {DEVICE_COLUMNS} FROM devices WHERE token_hash = ?1"))?
            .query_row([token_hash], device_row)
            .optional()
    }

    /// Pairs a device (first time) or touches it, keeping its salt unless `new_salt` must
    /// replace it (none yet, or revoked), and records the hash of the token it now holds.
    /// Returns the salt the token is derived from.
    pub fn pair_device(
        &self,
        device_id: &str,
        public_key: &str,
        client_id: &str,
        now_ms: i64,
        new_salt: &str,
        token_for: impl Fn(&str) -> String,
    ) -> rusqlite::Result<String> {
        let db = self.db();
        let existing: Option<(Option<String>, Option<i64>)> = db
            .prepare_cached("SELECT token_salt, revoked_at_ms FROM devices WHERE device_id = ?1")?
            .query_row([device_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let salt = match existing {
            Some((Some(salt), None)) => salt,
            _ => new_salt.to_string(),
        };
        let hash = crate::util::hash_token(&token_for(&salt));
        db.prepare_cached(
            "INSERT INTO devices (device_id, public_key, device_token, client_id, created_at_ms, last_seen_ms, token_hash, token_salt)
             VALUES (?1, ?2, '', ?3, ?4, ?4, ?5, ?6)
             ON CONFLICT(device_id) DO UPDATE SET last_seen_ms = excluded.last_seen_ms, token_hash = excluded.token_hash,
                 token_salt = excluded.token_salt, revoked_at_ms = NULL",
        )?
        .execute(params![device_id, public_key, client_id, now_ms, hash, salt])?;
        Ok(salt)
    }

    /// Marks a device's token as used now (its expiry counts from its last use).
    pub fn touch_device(&self, device_id: &str, now_ms: i64) -> rusqlite::Result<()> {
        self.db().prepare_cached("UPDATE devices SET last_seen_ms = ?2 WHERE device_id = ?1")?.execute(params![device_id, now_ms])?;
        Ok(())
    }

    /// The devices revoked now (not paired again since).
    pub fn revoked_devices(&self) -> rusqlite::Result<Vec<String>> {
        self.db().prepare_cached("SELECT device_id FROM devices WHERE revoked_at_ms IS NOT NULL")?.query_map([], |r| r.get(0))?.collect()
    }

    /// Revokes a device's token: it works nowhere from now on, until the device pairs again
    /// with the shared token. False when no such device is paired.
    pub fn revoke_device(&self, device_id: &str, now_ms: i64) -> rusqlite::Result<bool> {
        let n = self
            .db()
            .prepare_cached("UPDATE devices SET revoked_at_ms = ?2, token_hash = NULL, token_salt = NULL WHERE device_id = ?1")?
            .execute(params![device_id, now_ms])?;
        Ok(n > 0)
    }
}

impl Store {
    /// Creates a session owned by `owner`, with a new transcript id. A taken key leaves the
    /// session as it is; a label another session has refuses.
    pub fn create_session(
        &self,
        key: &str,
        owner: &str,
        label: Option<&str>,
        display_name: Option<&str>,
        parent: Option<&str>,
        now_ms: i64,
    ) -> rusqlite::Result<Created> {
        let mut db = self.db();
        let tx = db.transaction()?;
        if let Some(existing) = Self::session_in(&tx, key)? {
            if label.is_some_and(|l| existing.label.as_deref() != Some(l)) && Self::label_taken(&tx, label, key)? {
                return Ok(Created::LabelInUse);
            }
            return Ok(Created::Existing(existing));
        }
        if Self::label_taken(&tx, label, key)? {
            return Ok(Created::LabelInUse);
        }
        tx.prepare_cached(
            "INSERT INTO sessions (key, owner, label, created_at_ms, session_id, updated_at_ms, last_interaction_ms, display_name, parent_session_key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?4, ?4, ?6, ?7)",
        )?
        .execute(params![key, owner, label, now_ms, crate::util::uuid_v4(), display_name, parent])?;
        let made = Self::session_in(&tx, key)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        tx.commit()?;
        Ok(Created::New(made))
    }

    /// Whether a session other than `key` has `label`.
    fn label_taken(tx: &rusqlite::Transaction<'_>, label: Option<&str>, key: &str) -> rusqlite::Result<bool> {
        let Some(label) = label else { return Ok(false) };
        Ok(tx
            .prepare_cached("SELECT 1 FROM sessions WHERE label = ?1 AND key <> ?2")?
            .query_row(params![label, key], |_| Ok(()))
            .optional()?
            .is_some())
    }

    fn session_in(db: &Connection, key: &str) -> rusqlite::Result<Option<SessionRecord>> {
        db.prepare_cached(&format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE key = ?1"))?.query_row([key], session_record).optional()
    }

    /// A session by key.
    pub fn session(&self, key: &str) -> rusqlite::Result<Option<SessionRecord>> {
        Self::session_in(&self.db(), key)
    }

    /// Sessions, newest activity first (then newest made first): `owner`'s only when given,
    /// by their archive state.
    pub fn sessions(&self, owner: Option<&str>, archived: ArchivedFilter) -> rusqlite::Result<Vec<SessionRecord>> {
        let mode = match archived {
            ArchivedFilter::Active => 0,
            ArchivedFilter::Archived => 1,
            ArchivedFilter::All => 2,
        };
        let db = self.db();
        let mut stmt = db.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions
             WHERE (?1 IS NULL OR owner = ?1)
               AND (?2 = 2 OR (?2 = 0 AND archived_at_ms IS NULL) OR (?2 = 1 AND archived_at_ms IS NOT NULL))
             ORDER BY COALESCE(updated_at_ms, created_at_ms) DESC, rowid DESC"
        ))?;
        let rows = stmt.query_map(params![owner, mode], session_record)?;
        rows.collect()
    }

    /// Renames and archives or restores a session; a missing one is made (owned by `owner`),
    /// as the real gateway does. Archiving an archived session keeps its archive time.
    pub fn patch_session(&self, key: &str, owner: &str, patch: &SessionPatch<'_>, now_ms: i64) -> rusqlite::Result<Patched> {
        let mut db = self.db();
        let tx = db.transaction()?;
        if let Some(Some(label)) = patch.label
            && Self::label_taken(&tx, Some(label), key)?
        {
            return Ok(Patched::LabelInUse);
        }
        if Self::session_in(&tx, key)?.is_none() {
            tx.prepare_cached(
                "INSERT INTO sessions (key, owner, created_at_ms, session_id, updated_at_ms, last_interaction_ms) VALUES (?1, ?2, ?3, ?4, ?3, ?3)",
            )?
            .execute(params![key, owner, now_ms, crate::util::uuid_v4()])?;
        }
        if let Some(label) = patch.label {
            tx.prepare_cached("UPDATE sessions SET label = ?2 WHERE key = ?1")?.execute(params![key, label])?;
        }
        if let Some(model) = patch.model {
            tx.prepare_cached("UPDATE sessions SET model = ?2 WHERE key = ?1")?.execute(params![key, model])?;
        }
        if let Some(level) = patch.thinking_level {
            tx.prepare_cached("UPDATE sessions SET thinking_level = ?2 WHERE key = ?1")?.execute(params![key, level])?;
        }
        match patch.archived {
            Some(true) => {
                tx.prepare_cached("UPDATE sessions SET archived_at_ms = COALESCE(archived_at_ms, ?2) WHERE key = ?1")?
                    .execute(params![key, now_ms])?;
            }
            Some(false) => {
                tx.prepare_cached("UPDATE sessions SET archived_at_ms = NULL WHERE key = ?1")?.execute([key])?;
            }
            None => {}
        }
        tx.prepare_cached("UPDATE sessions SET updated_at_ms = MAX(COALESCE(updated_at_ms, 0), ?2) WHERE key = ?1")?
            .execute(params![key, now_ms])?;
        let record = Self::session_in(&tx, key)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        tx.commit()?;
        Ok(Patched::Done(Box::new(record)))
    }

    /// Records how a session's run ended (`done`, `failed`, `killed`).
    pub fn set_run_status(&self, key: &str, run_id: &str, status: &str, error: Option<&str>) -> rusqlite::Result<()> {
        self.db()
            .prepare_cached("UPDATE sessions SET run_status = ?2, last_run_id = ?3, last_run_error = ?4 WHERE key = ?1")?
            .execute(params![key, status, run_id, error])?;
        Ok(())
    }

    /// Records a run's usage on its session.
    pub fn set_usage(&self, key: &str, usage: RunUsage) -> rusqlite::Result<()> {
        self.db()
            .prepare_cached("UPDATE sessions SET total_tokens = ?2, input_tokens = ?3, output_tokens = ?4 WHERE key = ?1")?
            .execute(params![key, usage.context, usage.input, usage.output])?;
        Ok(())
    }

    /// The newest user or assistant message of a session (`lastMessagePreview`).
    pub fn last_message(&self, key: &str) -> rusqlite::Result<Option<serde_json::Value>> {
        let json: Option<String> = self
            .db()
            .prepare_cached("SELECT json FROM messages WHERE session_key = ?1 AND branch = 0 AND role IN ('user', 'assistant') ORDER BY seq DESC LIMIT 1")?
            .query_row([key], |r| r.get(0))
            .optional()?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    /// One saved message of a session by its id (`__openclaw.id`).
    pub fn message(&self, session: &str, id: &str) -> rusqlite::Result<Option<serde_json::Value>> {
        let json: Option<String> = self
            .db()
            .prepare_cached("SELECT json FROM messages WHERE id = ?1 AND session_key = ?2")?
            .query_row(params![id, session], |r| r.get(0))
            .optional()?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    pub fn session_owner(&self, key: &str) -> rusqlite::Result<Option<String>> {
        self.db().prepare_cached("SELECT owner FROM sessions WHERE key = ?1")?.query_row([key], |r| r.get(0)).optional()
    }

    /// Persists a resolved question (secret values were already replaced by "stored").
    pub fn save_question(&self, record: &protocol::question::QuestionRecord, now_ms: i64) -> rusqlite::Result<()> {
        let json = serde_json::to_string(record).unwrap_or_default();
        self.db().prepare_cached("INSERT INTO questions (id, session_key, status, record_json, resolved_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(id) DO UPDATE SET status = excluded.status, record_json = excluded.record_json, resolved_at_ms = excluded.resolved_at_ms")?.execute(
            params![record.id, record.session_key, record.status.as_str(), json, now_ms],
        )?;
        Ok(())
    }

    pub fn question_exists(&self, id: &str) -> rusqlite::Result<bool> {
        Ok(self.db().prepare_cached("SELECT 1 FROM questions WHERE id = ?1")?.query_row([id], |_| Ok(())).optional()?.is_some())
    }

    /// A resolved question as it was saved.
    pub fn saved_question(&self, id: &str) -> rusqlite::Result<Option<protocol::question::QuestionRecord>> {
        let json: Option<String> =
            self.db().prepare_cached("SELECT record_json FROM questions WHERE id = ?1")?.query_row([id], |r| r.get(0)).optional()?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }
}

impl Store {
    /// Persists an approval that ended, with the boot of the gateway that ended it.
    pub fn save_approval(&self, record: &crate::approvals::ApprovalRecord, boot_id: &str) -> rusqlite::Result<()> {
        let json = serde_json::to_string(record).unwrap_or_default();
        let session = record.request.get("sessionKey").and_then(serde_json::Value::as_str);
        self.db().prepare_cached("INSERT INTO approvals (id, kind, status, session_key, boot_id, record_json, resolved_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(id) DO UPDATE SET status = excluded.status, boot_id = excluded.boot_id, record_json = excluded.record_json, resolved_at_ms = excluded.resolved_at_ms")?.execute(
            params![record.id, record.kind.wire(), record.status.as_str(), session, boot_id, json, record.resolved_at_ms.unwrap_or(0)],
        )?;
        Ok(())
    }

    /// An ended approval as it was saved, and the boot that ended it.
    pub fn saved_approval(&self, id: &str) -> rusqlite::Result<Option<(crate::approvals::ApprovalRecord, String)>> {
        let row: Option<(String, String)> = self
            .db()
            .prepare_cached("SELECT record_json, boot_id FROM approvals WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(row.and_then(|(j, boot)| serde_json::from_str(&j).ok().map(|r| (r, boot))))
    }

    /// Up to `limit` ended approvals, newest first by end time then id, of one kind if given,
    /// strictly after `before` (the `(resolvedAtMs, id)` of the last row of the previous page).
    pub fn approval_history(
        &self,
        kind: Option<&str>,
        before: Option<(i64, &str)>,
        limit: usize,
    ) -> rusqlite::Result<Vec<crate::approvals::ApprovalRecord>> {
        let db = self.db();
        let mut stmt = db.prepare_cached(
            "SELECT record_json FROM approvals
             WHERE (?1 IS NULL OR kind = ?1) AND resolved_at_ms >= ?2
               AND (?3 IS NULL OR resolved_at_ms < ?3 OR (resolved_at_ms = ?3 AND id < ?4))
             ORDER BY resolved_at_ms DESC, id DESC LIMIT ?5",
        )?;
        let since = crate::util::now_ms() - APPROVAL_RETENTION_MS;
        let rows =
            stmt.query_map(params![kind, since, before.map(|b| b.0), before.map(|b| b.1), limit as i64], |r| r.get::<_, String>(0))?;
        Ok(rows.filter_map(|r| r.ok()).filter_map(|j| serde_json::from_str(&j).ok()).collect())
    }
}

impl Store {
    pub fn send_status(&self, key: &str) -> rusqlite::Result<Option<SendStatus>> {
        let row: Option<(String, Option<String>)> = self
            .db()
            .prepare_cached("SELECT status, summary FROM sends WHERE idempotency_key = ?1")?
            .query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(row.map(|(s, summary)| match s.as_str() {
            "ok" => SendStatus::Ok,
            "error" => SendStatus::Error(summary.unwrap_or_default()),
            "aborted" => SendStatus::Aborted,
            _ => SendStatus::InFlight,
        }))
    }

    pub fn set_send_status(&self, key: &str, status: &SendStatus) -> rusqlite::Result<()> {
        let (s, summary) = match status {
            SendStatus::InFlight => ("in_flight", None),
            SendStatus::Ok => ("ok", None),
            SendStatus::Error(m) => ("error", Some(m.as_str())),
            SendStatus::Aborted => ("aborted", None),
        };
        self.db()
            .prepare_cached("UPDATE sends SET status = ?2, summary = ?3 WHERE idempotency_key = ?1")?
            .execute(params![key, s, summary])?;
        Ok(())
    }

    fn insert_message(
        tx: &rusqlite::Transaction<'_>,
        session: &str,
        mut message: serde_json::Value,
        mut meta: serde_json::Value,
    ) -> rusqlite::Result<serde_json::Value> {
        let seq: i64 = tx
            .prepare_cached("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_key = ?1")?
            .query_row([session], |r| r.get(0))?;
        let now = crate::util::now_ms();
        meta["seq"] = serde_json::json!(seq);
        meta["recordTimestampMs"] = serde_json::json!(now);
        let id = meta["id"].as_str().unwrap_or_default().to_string();
        let idem = meta["idempotencyKey"].as_str().map(str::to_string);
        message["__openclaw"] = meta;
        let role = message["role"].as_str().unwrap_or("custom").to_string();
        tx.prepare_cached(
            "INSERT INTO messages (session_key, seq, id, role, idempotency_key, json, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![session, seq, id, role, idem, message.to_string(), now])?;
        // The list's activity time, and the title from the first user message.
        let user = role == "user";
        let title = if user { derive_title(&message) } else { None };
        tx.prepare_cached(
            "UPDATE sessions SET updated_at_ms = ?2,
                last_interaction_ms = CASE WHEN ?3 THEN ?2 ELSE last_interaction_ms END,
                derived_title = COALESCE(derived_title, ?4)
             WHERE key = ?1",
        )?
        .execute(params![session, now, user, title])?;
        Ok(message)
    }

    /// Saves a user message together with its dedupe record. `Ok(None)` when the key was
    /// already taken (a concurrent retry): the caller answers from the dedupe record.
    /// Its files are saved in the same transaction.
    pub fn save_user_message(
        &self,
        session: &str,
        key: &str,
        message: serde_json::Value,
        meta: serde_json::Value,
        media: &[InboundMedia],
    ) -> rusqlite::Result<serde_json::Value> {
        let mut db = self.db();
        let tx = db.transaction()?;
        let now = crate::util::now_ms();
        tx.prepare_cached("INSERT INTO sends (idempotency_key, session_key, status, created_ms) VALUES (?1, ?2, 'in_flight', ?3)")?
            .execute(params![key, session, now])?;
        for m in media {
            tx.prepare_cached(
                "INSERT INTO media (id, session_key, content_type, file_name, bytes, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![m.id, session, m.content_type, m.file_name, m.bytes, now])?;
        }
        let saved = Self::insert_message(&tx, session, message, meta)?;
        tx.commit()?;
        Ok(saved)
    }

    /// Saves an assistant or custom row (a run's reply or failure).
    pub fn save_message(&self, session: &str, message: serde_json::Value, meta: serde_json::Value) -> rusqlite::Result<serde_json::Value> {
        let mut db = self.db();
        let tx = db.transaction()?;
        let saved = Self::insert_message(&tx, session, message, meta)?;
        tx.commit()?;
        Ok(saved)
    }

    /// The user row `entry` of `session`'s conversation, for a rewind or fork: its seq and
    /// message, or why it cannot be cut there (the real gateway's words).
    fn cut_point(tx: &rusqlite::Transaction<'_>, session: &str, entry: &str) -> rusqlite::Result<Result<(i64, serde_json::Value), String>> {
        let row: Option<(i64, String, String, i64)> = tx
            .prepare_cached("SELECT seq, role, json, branch FROM messages WHERE session_key = ?1 AND id = ?2")?
            .query_row(params![session, entry], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?;
        Ok(match row {
            None => Err(format!("message entry not found: {entry}")),
            Some((_, role, _, _)) if role != "user" => Err(format!("entry is not a user message: {entry}")),
            Some((_, _, _, branch)) if branch != 0 => Err(format!("message entry is not on the active path: {entry}")),
            Some((seq, _, json, _)) => Ok((seq, serde_json::from_str(&json).unwrap_or_default())),
        })
    }

    /// `sessions.rewind`: the user row `entry` and every row after it leave the conversation
    /// (kept as a branch); the session gets a new transcript id and loses its last run's
    /// usage. The cut row's message, for the composer.
    pub fn rewind(
        &self,
        session: &str,
        entry: &str,
        new_session_id: &str,
        now_ms: i64,
    ) -> rusqlite::Result<Result<serde_json::Value, String>> {
        let mut db = self.db();
        let tx = db.transaction()?;
        let (seq, message) = match Self::cut_point(&tx, session, entry)? {
            Ok(found) => found,
            Err(why) => return Ok(Err(why)),
        };
        let branch: i64 = tx
            .prepare_cached("SELECT COALESCE(MAX(branch), 0) + 1 FROM messages WHERE session_key = ?1")?
            .query_row([session], |r| r.get(0))?;
        tx.prepare_cached("UPDATE messages SET branch = ?3 WHERE session_key = ?1 AND branch = 0 AND seq >= ?2")?
            .execute(params![session, seq, branch])?;
        tx.prepare_cached(
            "UPDATE sessions SET session_id = ?2, updated_at_ms = ?3, run_status = NULL, last_run_id = NULL, last_run_error = NULL,
                total_tokens = NULL, input_tokens = NULL, output_tokens = NULL WHERE key = ?1",
        )?
        .execute(params![session, new_session_id, now_ms])?;
        tx.commit()?;
        Ok(Ok(message))
    }

    /// `sessions.fork`: a new session `new_key` (owned by `owner`, made from `session`) whose
    /// conversation is a copy of `session`'s rows before the user row `entry`. The cut row's
    /// message, for the new conversation's composer.
    pub fn fork(
        &self,
        session: &str,
        entry: &str,
        new_key: &str,
        owner: &str,
        now_ms: i64,
    ) -> rusqlite::Result<Result<(SessionRecord, serde_json::Value), String>> {
        let mut db = self.db();
        let tx = db.transaction()?;
        let (seq, message) = match Self::cut_point(&tx, session, entry)? {
            Ok(found) => found,
            Err(why) => return Ok(Err(why)),
        };
        let source = Self::session_in(&tx, session)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        tx.prepare_cached(
            "INSERT INTO sessions (key, owner, created_at_ms, session_id, updated_at_ms, last_interaction_ms, parent_session_key,
                derived_title, model, thinking_level) VALUES (?1, ?2, ?3, ?4, ?3, ?3, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            new_key,
            owner,
            now_ms,
            crate::util::uuid_v4(),
            session,
            source.derived_title,
            source.model,
            source.thinking_level
        ])?;
        let rows: Vec<(i64, String, Option<String>, String)> = tx
            .prepare_cached(
                "SELECT seq, role, idempotency_key, json FROM messages WHERE session_key = ?1 AND branch = 0 AND seq < ?2 ORDER BY seq",
            )?
            .query_map(params![session, seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (seq, role, _idem, json) in rows {
            // Every row gets its own id in the copy (ids are unique across conversations); the
            // dedupe key stays with the original send.
            let id = crate::util::uuid_v4();
            let mut m: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            m["__openclaw"]["id"] = serde_json::json!(id);
            m["__openclaw"]["forkedFrom"] = serde_json::json!({"sessionKey": session});
            tx.prepare_cached(
                "INSERT INTO messages (session_key, seq, id, role, idempotency_key, json, created_ms) VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6)",
            )?
            .execute(params![new_key, seq, id, role, m.to_string(), now_ms])?;
        }
        let record = Self::session_in(&tx, new_key)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        tx.commit()?;
        Ok(Ok((record, message)))
    }

    /// Every user and assistant message of `session`'s conversation (not a rewind's branch), as
    /// `(id, role, timestamp, message)`, oldest first: what a content search reads.
    pub fn searchable(&self, session: &str) -> rusqlite::Result<Vec<(String, String, i64, serde_json::Value)>> {
        let db = self.db();
        let mut stmt = db.prepare_cached(
            "SELECT id, role, created_ms, json FROM messages WHERE session_key = ?1 AND branch = 0 AND role IN ('user', 'assistant') ORDER BY seq",
        )?;
        let rows = stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, String>(3)?)))?;
        Ok(rows.filter_map(|r| r.ok()).map(|(id, role, at, j)| (id, role, at, serde_json::from_str(&j).unwrap_or_default())).collect())
    }

    /// A page of the transcript: the `limit` messages before the newest `offset`, oldest
    /// first, and the total count.
    pub fn history(&self, session: &str, limit: usize, offset: usize) -> rusqlite::Result<(Vec<serde_json::Value>, usize)> {
        let db = self.db();
        let total: i64 =
            db.prepare_cached("SELECT COUNT(*) FROM messages WHERE session_key = ?1 AND branch = 0")?.query_row([session], |r| r.get(0))?;
        let mut stmt =
            db.prepare("SELECT json FROM messages WHERE session_key = ?1 AND branch = 0 ORDER BY seq DESC LIMIT ?2 OFFSET ?3")?;
        let mut rows: Vec<serde_json::Value> = stmt
            .query_map(params![session, limit as i64, offset as i64], |r| r.get::<_, String>(0))?
            .filter_map(|r| r.ok().and_then(|j| serde_json::from_str(&j).ok()))
            .collect();
        rows.reverse();
        Ok((rows, total as usize))
    }

    /// A saved file: its session, content type, name and bytes.
    pub fn media(&self, id: &str) -> rusqlite::Result<Option<(String, String, String, Vec<u8>)>> {
        self.db()
            .prepare_cached("SELECT session_key, content_type, file_name, bytes FROM media WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()
    }

    /// Every saved message of a session with this idempotency key (tests count them).
    pub fn count_messages_with_key(&self, key: &str) -> rusqlite::Result<usize> {
        let n: i64 =
            self.db().prepare_cached("SELECT COUNT(*) FROM messages WHERE idempotency_key = ?1")?.query_row([key], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// The text of every user message of a session, oldest first (tests compare these).
    pub fn user_texts(&self, session: &str) -> rusqlite::Result<Vec<String>> {
        let db = self.db();
        let mut stmt = db.prepare("SELECT json FROM messages WHERE session_key = ?1 AND branch = 0 AND role = 'user' ORDER BY seq")?;
        let rows = stmt.query_map([session], |r| r.get::<_, String>(0))?;
        Ok(rows
            .filter_map(|r| r.ok())
            .filter_map(|j| serde_json::from_str::<serde_json::Value>(&j).ok()?["content"].as_str().map(str::to_string))
            .collect())
    }
}

/// Prepares the data directory, which holds transcripts, answers and device records. One the
/// gateway creates (with its missing parents) is readable by this user only (0700 on Unix). An
/// existing one keeps its mode, which its owner chose (a shared group directory, say): the
/// gateway only says so, returning a warning when group or others may read or enter it.
pub fn prepare_data_dir(dir: &std::path::Path) -> std::io::Result<Option<String>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {
                let mode = m.permissions().mode() & 0o777;
                Ok((mode & 0o077 != 0).then(|| {
                    format!(
                        "the data directory {} is open to group or others (mode {mode:o}): it holds transcripts, answers and device records. Left as it is; `chmod 700 {}` keeps it to this user.",
                        dir.display(),
                        dir.display()
                    )
                }))
            }
            Ok(_) => Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "it exists and is not a directory")),
            Err(_) => {
                std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
                Ok(None)
            }
        }
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)?;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_device_keeps_its_salt_across_reopen_and_only_the_tokens_hash_is_stored() {
        let dir = std::env::temp_dir().join(format!("gw-store-{}", crate::util::uuid_v4()));
        let token_for = |salt: &str| format!("token-from-{salt}");
        let salt = {
            let s = Store::open(&dir).unwrap();
            s.pair_device("dev1", "pk", "openclaw-control-ui", 1, "salt-a", token_for).unwrap()
        };
        let s = Store::open(&dir).unwrap();
        assert_eq!(salt, "salt-a");
        assert_eq!(s.pair_device("dev1", "pk", "openclaw-control-ui", 2, "salt-b", token_for).unwrap(), "salt-a");
        let d = s.device("dev1").unwrap().unwrap();
        assert_eq!(d.token_hash.as_deref(), Some(crate::util::hash_token("token-from-salt-a").as_str()));
        assert!(s.device("nope").unwrap().is_none());
        assert!(s.revoke_device("dev1", 3).unwrap());
        assert!(s.device("dev1").unwrap().unwrap().token_hash.is_none());
        assert_eq!(
            s.pair_device("dev1", "pk", "openclaw-control-ui", 4, "salt-c", token_for).unwrap(),
            "salt-c",
            "a new salt after a revoke"
        );
        drop(s);
        let bytes = std::fs::read(dir.join("gateway.sqlite")).unwrap();
        assert!(!bytes.windows(16).any(|w| w == b"token-from-salt-"), "no token in the database file");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn sessions_of_an_older_database_get_an_id_a_title_and_their_activity_time() {
        let dir = std::env::temp_dir().join(format!("gw-store-{}", crate::util::uuid_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        {
            // The database as version 5 left it.
            let conn = Connection::open(dir.join("gateway.sqlite")).unwrap();
            for (i, sql) in MIGRATIONS.iter().enumerate().take(5) {
                conn.execute_batch(&format!("BEGIN; {sql} PRAGMA user_version = {}; COMMIT;", i + 1)).unwrap();
            }
            conn.execute_batch(
                r#"INSERT INTO sessions (key, owner, label, created_at_ms) VALUES ('agent:main:old', 'o', NULL, 10), ('agent:main:empty', 'o', 'E', 20);
                INSERT INTO messages (session_key, seq, id, role, json, created_ms) VALUES
                    ('agent:main:old', 1, 'm1', 'user', '{"role":"user","content":"\nFirst words here\nmore"}', 30),
                    ('agent:main:old', 2, 'm2', 'assistant', '{"role":"assistant","content":[]}', 40);"#,
            )
            .unwrap();
        }
        let s = Store::open(&dir).unwrap();
        let old = s.session("agent:main:old").unwrap().unwrap();
        assert_eq!(old.session_id.len(), 36);
        assert_eq!(old.derived_title.as_deref(), Some("First words here"));
        assert_eq!((old.created_at, old.updated_at, old.last_interaction_at), (10, 40, 30));
        let empty = s.session("agent:main:empty").unwrap().unwrap();
        assert_eq!((empty.label.as_deref(), empty.derived_title.as_deref(), empty.updated_at), (Some("E"), None, 20));
        assert_ne!(empty.session_id, old.session_id);
        let listed: Vec<String> = s.sessions(None, ArchivedFilter::Active).unwrap().into_iter().map(|r| r.key).collect();
        assert_eq!(listed, ["agent:main:old", "agent:main:empty"]);
        drop(s);
        // Reopened: the ids stay.
        let s = Store::open(&dir).unwrap();
        assert_eq!(s.session("agent:main:old").unwrap().unwrap().session_id, old.session_id);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
