//! Which pane's dock shows which pending request, and which request a pane shows.
//!
//! There is one dock state per page (one draft per request, one outbox); each pane is a view
//! of it. A request shows in every pane on its conversation, so two panes on one conversation
//! never disagree. A request whose conversation no pane shows (or that names none) shows in the
//! first pane, so a question is never hidden by the layout.

use protocol::chat::canonical_session_key;

/// Whether a pane on `pane_session` shows a request of `request_session`.
pub fn pane_shows(request_session: Option<&str>, pane_session: &str, first_pane: bool, open_sessions: &[String]) -> bool {
    match request_session.map(canonical_session_key) {
        Some(s) if s == pane_session => true,
        Some(s) if open_sessions.contains(&s) => false,
        _ => first_pane,
    }
}

/// The request a pane shows among `ids` (its own, in arrival order): the page's current one
/// if it is here (so a new blocking request takes its place in the pane that shows it), else
/// the one this pane showed last, else its first.
pub fn pane_current(ids: &[String], page_current: Option<&str>, shown_last: Option<&str>) -> Option<String> {
    page_current
        .filter(|c| ids.iter().any(|i| i == c))
        .or(shown_last.filter(|c| ids.iter().any(|i| i == c)))
        .or(ids.first().map(String::as_str))
        .map(str::to_string)
}

/// The next or previous request of a pane, wrapping around.
pub fn pane_step(ids: &[String], current: Option<&str>, forward: bool) -> Option<String> {
    let n = ids.len();
    if n == 0 {
        return None;
    }
    let i = current.and_then(|c| ids.iter().position(|x| x == c)).unwrap_or(0);
    let j = if forward { (i + 1) % n } else { (i + n - 1) % n };
    Some(ids[j].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_request_shows_in_every_pane_on_its_conversation_and_only_there() {
        let open = v(&["agent:main:a", "agent:main:b"]);
        assert!(pane_shows(Some("agent:main:a"), "agent:main:a", true, &open));
        assert!(pane_shows(Some("a"), "agent:main:a", false, &open), "keys compare canonically");
        assert!(!pane_shows(Some("agent:main:b"), "agent:main:a", true, &open));
        assert!(pane_shows(Some("agent:main:b"), "agent:main:b", false, &open));
    }

    #[test]
    fn a_request_no_pane_shows_goes_to_the_first_pane_so_it_is_never_hidden() {
        let open = v(&["agent:main:a", "agent:main:b"]);
        assert!(pane_shows(Some("agent:main:elsewhere"), "agent:main:a", true, &open));
        assert!(!pane_shows(Some("agent:main:elsewhere"), "agent:main:b", false, &open));
        assert!(pane_shows(None, "agent:main:a", true, &open));
        assert!(!pane_shows(None, "agent:main:b", false, &open));
    }

    #[test]
    fn a_pane_keeps_its_own_request_while_another_pane_steps() {
        let mine = v(&["q1", "q2"]);
        assert_eq!(pane_current(&mine, Some("q2"), Some("q1")).as_deref(), Some("q2"), "the page's current one, when it is here");
        assert_eq!(pane_current(&mine, Some("other"), Some("q2")).as_deref(), Some("q2"), "else the one shown last");
        assert_eq!(pane_current(&mine, Some("other"), Some("gone")).as_deref(), Some("q1"));
        assert_eq!(pane_current(&[], Some("q1"), None), None);
    }

    #[test]
    fn stepping_wraps_within_the_panes_own_requests() {
        let mine = v(&["q1", "q2", "q3"]);
        assert_eq!(pane_step(&mine, Some("q3"), true).as_deref(), Some("q1"));
        assert_eq!(pane_step(&mine, Some("q1"), false).as_deref(), Some("q3"));
        assert_eq!(pane_step(&mine, None, true).as_deref(), Some("q2"));
        assert_eq!(pane_step(&[], None, true), None);
    }
}
