//! "While you were away": on return to the page, one card of what finished, what failed and
//! what still waits, from the conversation rows that changed while no window of it was seen.

use crate::sessions::Conversation;

/// Gone for less than this is not away (a glance at another tab).
pub const AWAY_AFTER_MS: i64 = 60_000;

/// A conversation the card names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwayRow {
    pub key: String,
    pub name: String,
    /// Why its run failed (`lastRunError`), for the failed ones.
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwaySummary {
    /// When the person was last here (ms).
    pub since: i64,
    pub finished: Vec<AwayRow>,
    pub failed: Vec<AwayRow>,
    /// Requests (questions, approvals) still waiting for an answer.
    pub waiting: usize,
}

/// What happened between `since` and `now` in `rows`; `None` when the person was not away, or
/// nothing happened and nothing waits.
pub fn summarize(since: i64, now: i64, rows: &[Conversation], waiting: usize) -> Option<AwaySummary> {
    if since <= 0 || now - since < AWAY_AFTER_MS {
        return None;
    }
    let changed = || rows.iter().filter(|r| r.updated_at > since && !r.running && !r.archived);
    let row = |r: &Conversation, error: Option<String>| AwayRow { key: r.key.clone(), name: r.name(), error };
    let failed: Vec<AwayRow> = changed()
        .filter(|r| r.status.as_deref() == Some("failed") || (r.status.as_deref() != Some("done") && r.last_run_error.is_some()))
        .map(|r| row(r, r.last_run_error.clone().or_else(|| Some("The run failed.".into()))))
        .collect();
    let finished: Vec<AwayRow> = changed().filter(|r| r.status.as_deref() == Some("done")).map(|r| row(r, None)).collect();
    (!finished.is_empty() || !failed.is_empty() || waiting > 0).then_some(AwaySummary { since, finished, failed, waiting })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(key: &str, updated: i64, status: &str, error: Option<&str>) -> Conversation {
        Conversation::read(&json!({"key": key, "updatedAt": updated, "status": status, "lastRunError": error, "label": key})).unwrap()
    }

    #[test]
    fn what_finished_and_failed_while_away_and_what_still_waits() {
        let rows = [
            row("agent:main:a", 5_000_000, "done", None),
            row("agent:main:b", 5_000_000, "failed", Some("model timed out")),
            row("agent:main:old", 1_000, "done", None),
            row("agent:main:run", 5_000_000, "running", None),
        ];
        let s = summarize(100_000, 6_000_000, &rows, 2).unwrap();
        assert_eq!(s.finished.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["agent:main:a"]);
        assert_eq!(s.failed.len(), 1);
        assert_eq!(s.failed[0].error.as_deref(), Some("model timed out"));
        assert_eq!(s.waiting, 2);
    }

    #[test]
    fn not_away_or_nothing_new_shows_no_card() {
        let rows = [row("agent:main:a", 5_000_000, "done", None)];
        assert_eq!(summarize(0, 6_000_000, &rows, 3), None, "never here before");
        assert_eq!(summarize(5_990_000, 6_000_000, &rows, 3), None, "gone ten seconds");
        assert_eq!(summarize(5_500_000, 6_000_000, &rows, 0), None, "nothing changed since");
        assert!(summarize(5_500_000, 6_000_000, &rows, 1).is_some(), "something still waits");
    }
}
