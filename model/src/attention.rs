//! Seeing a waiting question from outside the page: the document title, the icon's badge and
//! desktop notifications.
//!
//! A blocking question waits at most its timeout (15 minutes by default), then the agent goes
//! on with its own judgment. The person is often in another tab while the agent works, so the
//! wait must be visible there. Which notifications to show is decided here, without a browser:
//! one when a blocking request arrives while the page is out of sight, and at most one more in
//! its last two minutes. Several tabs share one record of what was shown, so each request is
//! announced once, not once per tab.

use serde::{Deserialize, Serialize};

/// The page's title with nothing waiting.
pub const BASE_TITLE: &str = "OpenClaw Control";

/// How long before the deadline the second, last notification may come.
pub const LAST_MINUTES_MS: i64 = 120_000;

/// What waits on the person, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Blocking questions.
    pub questions: usize,
    /// Exec, plugin and system-agent approvals (they block too).
    pub approvals: usize,
    /// Async questions: they do not block the agent.
    pub asynchronous: usize,
}

/// `(2) Question waiting · OpenClaw Control` while questions wait (`Approval waiting` for
/// approvals, `Waiting for you` for both), the base title otherwise. Async questions count
/// only when the person asked for that.
pub fn title(c: Counts, count_async: bool) -> String {
    let questions = c.questions + if count_async { c.asynchronous } else { 0 };
    let what = match (questions, c.approvals) {
        (0, 0) => return BASE_TITLE.to_string(),
        (_, 0) => "Question waiting",
        (0, _) => "Approval waiting",
        _ => "Waiting for you",
    };
    format!("({}) {what} · {BASE_TITLE}", questions + c.approvals)
}

/// The count drawn on the icon (nothing at 0; `9+` beyond nine).
pub fn badge_text(n: usize) -> Option<String> {
    match n {
        0 => None,
        1..=9 => Some(n.to_string()),
        _ => Some("9+".into()),
    }
}

/// Whether the person wants notifications from this gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NotifyChoice {
    /// Never asked: the control offers it; nothing is requested on its own.
    #[default]
    Unasked,
    On,
    /// Turned off here, or refused in the browser's prompt: never asked again unprompted.
    Off,
}

/// What the person chose for one gateway (stored per gateway URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttentionSettings {
    #[serde(default)]
    pub notify: NotifyChoice,
    /// Async questions add to the title's count.
    #[serde(default)]
    pub count_async: bool,
}

/// Which of a request's two notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// It just arrived.
    Arrived,
    /// Its last two minutes.
    LastMinutes,
}

impl Phase {
    pub fn key(self) -> &'static str {
        match self {
            Phase::Arrived => "arrived",
            Phase::LastMinutes => "last",
        }
    }
}

/// A pending blocking request, as far as notifications care.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub id: String,
    pub header: String,
    pub question: String,
    pub secret: bool,
    pub expires_at_ms: i64,
    /// How many questions the request has.
    pub count: usize,
    /// An approval: `header` is its kind, `question` the command or title.
    pub approval: bool,
}

/// One notification to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub id: String,
    pub phase: Phase,
    pub title: String,
    pub body: String,
}

fn time_left(expires_at_ms: i64, now_ms: i64) -> String {
    let s = ((expires_at_ms - now_ms).max(0) + 999) / 1000;
    match s {
        0 => "no time left".into(),
        1..=59 => format!("{s} s left"),
        _ => {
            let m = (s + 59) / 60;
            if m == 1 { "1 minute left".into() } else { format!("{m} minutes left") }
        }
    }
}

/// The notification for `w` in `phase`. A secret question's text never leaves the page, and
/// neither does agent text that looks like a credential: notifications are shown by the
/// operating system, kept in its notification centre and mirrored to other devices.
pub fn notice(w: &Waiting, phase: Phase, now_ms: i64) -> Notice {
    let waiting = if w.approval { "Approval needed" } else { "Question waiting" };
    let header_held = crate::credential::detect(&w.header).is_some();
    let title = if w.header.trim().is_empty() || header_held { waiting.to_string() } else { format!("{waiting}: {}", w.header.trim()) };
    let what = if w.secret {
        "The agent asks for a secret. Open the Control UI to answer it there.".to_string()
    } else if crate::credential::detect(&w.question).is_some() {
        "Its text looks like it holds a credential, so it is shown only in the Control UI.".to_string()
    } else if w.count > 1 {
        format!("{} (and {} more)", w.question.trim(), w.count - 1)
    } else {
        w.question.trim().to_string()
    };
    let when = match phase {
        Phase::Arrived => time_left(w.expires_at_ms, now_ms),
        Phase::LastMinutes => format!("Last chance: {}", time_left(w.expires_at_ms, now_ms)),
    };
    Notice { id: w.id.clone(), phase, title, body: format!("{what}\n{when}") }
}

/// What this page saw of each request, so each phase is considered once.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    /// Requests seen at least once (their arrival was handled, shown or not).
    arrived: std::collections::HashSet<String>,
    last: std::collections::HashSet<String>,
}

impl Watch {
    /// The notifications due now. `out_of_sight` is whether the page is hidden or unfocused;
    /// `enabled` whether notifications are on and permitted. A request that arrives while the
    /// page is in sight is seen, and gets no arrival notification later; its last two minutes
    /// still do, if the page is out of sight then.
    pub fn due(&mut self, waiting: &[Waiting], now_ms: i64, out_of_sight: bool, enabled: bool) -> Vec<Notice> {
        let mut out = Vec::new();
        for w in waiting {
            let alive = w.expires_at_ms > now_ms;
            let in_last = alive && w.expires_at_ms - now_ms <= LAST_MINUTES_MS;
            if self.arrived.insert(w.id.clone()) && out_of_sight && enabled && alive {
                out.push(notice(w, Phase::Arrived, now_ms));
                if in_last {
                    // Arriving in its last minutes: that one notification is also the last.
                    self.last.insert(w.id.clone());
                }
                continue;
            }
            if in_last && out_of_sight && enabled && self.last.insert(w.id.clone()) {
                out.push(notice(w, Phase::LastMinutes, now_ms));
            }
        }
        self.arrived.retain(|id| waiting.iter().any(|w| &w.id == id));
        self.last.retain(|id| waiting.iter().any(|w| &w.id == id));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(id: &str, expires_at_ms: i64) -> Waiting {
        Waiting {
            id: id.into(),
            header: "Deploy".into(),
            question: "Where should this change be deployed?".into(),
            secret: false,
            expires_at_ms,
            count: 1,
            approval: false,
        }
    }

    #[test]
    fn the_title_counts_blocking_questions_and_async_ones_only_when_asked() {
        let c = |questions, approvals, asynchronous| Counts { questions, approvals, asynchronous };
        assert_eq!(title(c(0, 0, 0), false), "OpenClaw Control");
        assert_eq!(title(c(2, 0, 0), false), "(2) Question waiting · OpenClaw Control");
        assert_eq!(title(c(0, 0, 3), false), "OpenClaw Control");
        assert_eq!(title(c(1, 0, 3), true), "(4) Question waiting · OpenClaw Control");
        assert_eq!(title(c(0, 1, 3), false), "(1) Approval waiting · OpenClaw Control");
        assert_eq!(title(c(1, 2, 0), false), "(3) Waiting for you · OpenClaw Control");
        assert_eq!(badge_text(0), None);
        assert_eq!(badge_text(3).as_deref(), Some("3"));
        assert_eq!(badge_text(12).as_deref(), Some("9+"));
    }

    #[test]
    fn one_notification_on_arrival_out_of_sight_and_one_more_in_the_last_two_minutes() {
        let mut watch = Watch::default();
        let r = [w("a", 900_000)];
        let first = watch.due(&r, 0, true, true);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].phase, Phase::Arrived);
        assert_eq!(first[0].title, "Question waiting: Deploy");
        assert_eq!(first[0].body, "Where should this change be deployed?\n15 minutes left");
        assert!(watch.due(&r, 10_000, true, true).is_empty(), "not again");
        assert!(watch.due(&r, 700_000, true, true).is_empty(), "not before the last two minutes");
        let last = watch.due(&r, 790_000, true, true);
        assert_eq!(last.len(), 1);
        assert_eq!(last[0].phase, Phase::LastMinutes);
        assert_eq!(last[0].body, "Where should this change be deployed?\nLast chance: 2 minutes left");
        assert!(watch.due(&r, 850_000, true, true).is_empty(), "a second reminder never comes");
    }

    #[test]
    fn a_request_seen_in_the_page_gets_no_arrival_notice_later_and_nothing_without_permission() {
        let mut watch = Watch::default();
        let r = [w("a", 900_000)];
        assert!(watch.due(&r, 0, false, true).is_empty(), "in sight: nothing");
        assert!(watch.due(&r, 5_000, true, true).is_empty(), "hidden later: the arrival was already seen");
        assert_eq!(watch.due(&r, 800_000, true, true).len(), 1, "its last two minutes still count");
        let mut off = Watch::default();
        assert!(off.due(&r, 0, true, false).is_empty());
        assert!(off.due(&r, 800_000, true, false).is_empty());
        let mut late = Watch::default();
        let soon = [w("b", 60_000)];
        let n = late.due(&soon, 0, true, true);
        assert_eq!(n.len(), 1, "arriving in its last minutes: one notification, not two");
        assert!(late.due(&soon, 1_000, true, true).is_empty());
    }

    #[test]
    fn an_approval_is_announced_as_one_with_its_command() {
        let a = Waiting {
            id: "a".into(),
            header: "Command approval".into(),
            question: "ls -la".into(),
            secret: false,
            expires_at_ms: 60_000,
            count: 1,
            approval: true,
        };
        let n = notice(&a, Phase::Arrived, 0);
        assert_eq!(n.title, "Approval needed: Command approval");
        assert_eq!(n.body, "ls -la\n1 minute left");
    }

    #[test]
    fn agent_text_that_looks_like_a_credential_never_goes_into_a_notification() {
        let key = "ghp_oQNCvMKjjzvHFb5ssScv057EnOpIKZhEreZc";
        let mut a = w("a", 900_000);
        a.question = format!("Is {key} still the deploy token?");
        a.header = format!("Token {key}");
        let n = notice(&a, Phase::Arrived, 0);
        assert!(!n.body.contains(key) && !n.title.contains(key), "{n:?}");
        assert_eq!(n.title, "Question waiting");
        assert!(n.body.starts_with("Its text looks like it holds a credential"), "{}", n.body);
    }

    #[test]
    fn a_secret_questions_text_never_goes_into_a_notification() {
        let mut s = w("s", 900_000);
        s.question = "Paste the production database password".into();
        s.secret = true;
        let n = notice(&s, Phase::Arrived, 0);
        assert!(!n.body.contains("password") && !n.title.contains("password"), "{n:?}");
        assert!(n.body.contains("asks for a secret"));
    }
}
