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
];

pub struct Device {
    pub device_id: String,
    pub public_key: String,
    pub device_token: String,
}

impl Store {
    pub fn open(data_dir: &Path) -> Result<Store, String> {
        std::fs::create_dir_all(data_dir).map_err(|e| format!("cannot create data directory {}: {e}", data_dir.display()))?;
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
        Ok(Store { db: Mutex::new(conn) })
    }

    fn db(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite itself consistent; keep serving.
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn device(&self, device_id: &str) -> rusqlite::Result<Option<Device>> {
        self.db()
            .query_row("SELECT device_id, public_key, device_token FROM devices WHERE device_id = ?1", [device_id], |r| {
                Ok(Device { device_id: r.get(0)?, public_key: r.get(1)?, device_token: r.get(2)? })
            })
            .optional()
    }

    /// Pairs a device (first time) or touches it, and returns its device token.
    pub fn pair_device(&self, device_id: &str, public_key: &str, client_id: &str, now_ms: i64, new_token: &str) -> rusqlite::Result<String> {
        let db = self.db();
        db.execute(
            "INSERT INTO devices (device_id, public_key, device_token, client_id, created_at_ms, last_seen_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)
             ON CONFLICT(device_id) DO UPDATE SET last_seen_ms = excluded.last_seen_ms",
            params![device_id, public_key, new_token, client_id, now_ms],
        )?;
        db.query_row("SELECT device_token FROM devices WHERE device_id = ?1", [device_id], |r| r.get(0))
    }
}

impl Store {
    /// Creates a session owned by `owner`; false when it already existed.
    pub fn create_session(&self, key: &str, owner: &str, label: Option<&str>, now_ms: i64) -> rusqlite::Result<bool> {
        let n = self.db().execute(
            "INSERT INTO sessions (key, owner, label, created_at_ms) VALUES (?1, ?2, ?3, ?4) ON CONFLICT(key) DO NOTHING",
            params![key, owner, label, now_ms],
        )?;
        Ok(n == 1)
    }

    pub fn session_owner(&self, key: &str) -> rusqlite::Result<Option<String>> {
        self.db().query_row("SELECT owner FROM sessions WHERE key = ?1", [key], |r| r.get(0)).optional()
    }

    /// Persists a resolved question (secret values were already replaced by "stored").
    pub fn save_question(&self, record: &protocol::question::QuestionRecord, now_ms: i64) -> rusqlite::Result<()> {
        let json = serde_json::to_string(record).unwrap_or_default();
        self.db().execute(
            "INSERT INTO questions (id, session_key, status, record_json, resolved_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(id) DO UPDATE SET status = excluded.status, record_json = excluded.record_json, resolved_at_ms = excluded.resolved_at_ms",
            params![record.id, record.session_key, record.status.as_str(), json, now_ms],
        )?;
        Ok(())
    }

    pub fn question_exists(&self, id: &str) -> rusqlite::Result<bool> {
        Ok(self.db().query_row("SELECT 1 FROM questions WHERE id = ?1", [id], |_| Ok(())).optional()?.is_some())
    }

    /// A resolved question as it was saved.
    pub fn saved_question(&self, id: &str) -> rusqlite::Result<Option<protocol::question::QuestionRecord>> {
        let json: Option<String> = self.db().query_row("SELECT record_json FROM questions WHERE id = ?1", [id], |r| r.get(0)).optional()?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_device_keeps_its_token_across_reopen() {
        let dir = std::env::temp_dir().join(format!("gw-store-{}", crate::util::uuid_v4()));
        let token = {
            let s = Store::open(&dir).unwrap();
            s.pair_device("dev1", "pk", "openclaw-control-ui", 1, "tok-a").unwrap()
        };
        let s = Store::open(&dir).unwrap();
        assert_eq!(token, "tok-a");
        assert_eq!(s.pair_device("dev1", "pk", "openclaw-control-ui", 2, "tok-b").unwrap(), "tok-a");
        assert_eq!(s.device("dev1").unwrap().unwrap().device_token, "tok-a");
        assert!(s.device("nope").unwrap().is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
