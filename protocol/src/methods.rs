//! Methods, events and the scopes each method needs.

pub mod scope {
    pub const ADMIN: &str = "operator.admin";
    pub const READ: &str = "operator.read";
    pub const WRITE: &str = "operator.write";
    pub const APPROVALS: &str = "operator.approvals";
    pub const QUESTIONS: &str = "operator.questions";
    pub const PAIRING: &str = "operator.pairing";
    pub const SESSIONS_READ: &str = "operator.sessions.read";
    pub const SESSIONS_WRITE: &str = "operator.sessions.write";
    pub const TALK_SECRETS: &str = "operator.talk.secrets";

    /// Every operator scope a gateway knows.
    pub const ALL: &[&str] = &[ADMIN, READ, WRITE, APPROVALS, QUESTIONS, PAIRING, SESSIONS_READ, SESSIONS_WRITE, TALK_SECRETS];
}

/// The scopes this UI asks for, in the order it signs them.
/// `operator.admin` as the incumbent asks for it: the real gateway routes an approval only to
/// approval clients that may see it, and only admin sees those of runs started elsewhere (a
/// channel, the CLI, cron). Without it such approvals are denied at once for want of a route.
/// The gateway decides what it grants; the UI offers only what the granted scopes allow.
pub const UI_SCOPES: &[&str] = &[scope::READ, scope::WRITE, scope::APPROVALS, scope::QUESTIONS, scope::ADMIN];

/// Method → the broad scope it needs, and the narrow guest scope that allows it for the
/// caller's own sessions only (if any).
pub const METHOD_SCOPES: &[(&str, &str, Option<&str>)] = &[
    ("health", scope::READ, None),
    ("sessions.list", scope::READ, Some(scope::SESSIONS_READ)),
    ("sessions.subscribe", scope::READ, Some(scope::SESSIONS_READ)),
    ("sessions.create", scope::WRITE, Some(scope::SESSIONS_WRITE)),
    ("sessions.patch", scope::WRITE, Some(scope::SESSIONS_WRITE)),
    ("sessions.describe", scope::READ, Some(scope::SESSIONS_READ)),
    ("sessions.messages.subscribe", scope::READ, Some(scope::SESSIONS_READ)),
    ("sessions.messages.unsubscribe", scope::READ, Some(scope::SESSIONS_READ)),
    ("chat.history", scope::READ, Some(scope::SESSIONS_READ)),
    ("chat.message.get", scope::READ, Some(scope::SESSIONS_READ)),
    ("chat.send", scope::WRITE, Some(scope::SESSIONS_WRITE)),
    ("chat.abort", scope::WRITE, Some(scope::SESSIONS_WRITE)),
    ("chat.inject", scope::ADMIN, None),
    ("question.list", scope::QUESTIONS, Some(scope::SESSIONS_WRITE)),
    ("question.get", scope::QUESTIONS, Some(scope::SESSIONS_WRITE)),
    ("question.resolve", scope::QUESTIONS, Some(scope::SESSIONS_WRITE)),
    ("question.request", scope::QUESTIONS, None),
    ("question.waitAnswer", scope::QUESTIONS, Some(scope::SESSIONS_WRITE)),
    ("exec.approval.request", scope::APPROVALS, None),
    ("exec.approval.list", scope::APPROVALS, None),
    ("exec.approval.get", scope::APPROVALS, None),
    ("exec.approval.resolve", scope::APPROVALS, None),
    ("exec.approval.waitDecision", scope::APPROVALS, None),
    ("plugin.approval.request", scope::APPROVALS, None),
    ("plugin.approval.list", scope::APPROVALS, None),
    ("plugin.approval.resolve", scope::APPROVALS, None),
    ("plugin.approval.waitDecision", scope::APPROVALS, None),
    ("openclaw.approval.list", scope::APPROVALS, None),
    ("approval.get", scope::APPROVALS, None),
    ("approval.resolve", scope::APPROVALS, None),
    ("approval.history", scope::APPROVALS, None),
];

/// Events a gateway may send to an operator UI.
pub const EVENTS: &[&str] = &[
    "connect.challenge",
    "tick",
    "shutdown",
    "question.requested",
    "question.resolved",
    "chat",
    "session.message",
    "sessions.changed",
    "exec.approval.requested",
    "exec.approval.resolved",
    "plugin.approval.requested",
    "plugin.approval.resolved",
    "openclaw.approval.requested",
    "openclaw.approval.resolved",
];

/// How far a connection may use a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Holds the broad scope (or admin).
    Full,
    /// Holds only the narrow guest scope: own sessions only.
    OwnSessions,
}

/// Whether `granted` may call `method`. `Err` carries the missing scope and the list of
/// scopes that would do; `None` means the method is unknown.
pub fn access(method: &str, granted: &[String]) -> Option<Result<Access, (&'static str, Vec<&'static str>)>> {
    let &(_, broad, narrow) = METHOD_SCOPES.iter().find(|(m, _, _)| *m == method)?;
    let has = |s: &str| granted.iter().any(|g| g == s);
    if has(scope::ADMIN) || has(broad) {
        return Some(Ok(Access::Full));
    }
    if let Some(n) = narrow {
        // Writing one's own sessions includes reading them.
        if has(n) || (n == scope::SESSIONS_READ && has(scope::SESSIONS_WRITE)) {
            return Some(Ok(Access::OwnSessions));
        }
    }
    let mut required = vec![broad];
    required.extend(narrow);
    if broad != scope::ADMIN {
        required.push(scope::ADMIN);
    }
    Some(Err((broad, required)))
}

/// Whether the granted scopes let a person decide approvals.
pub fn can_decide_approvals(granted: &[String]) -> bool {
    matches!(access("approval.resolve", granted), Some(Ok(_)))
}

/// Whether the granted scopes let a person send chat messages (broadly or to own sessions).
pub fn can_send_messages(granted: &[String]) -> bool {
    matches!(access("chat.send", granted), Some(Ok(_)))
}

/// Whether the granted scopes let a person answer questions (broadly or as a guest).
pub fn can_answer_questions(granted: &[String]) -> bool {
    matches!(access("question.resolve", granted), Some(Ok(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn admin_satisfies_everything_and_unknown_methods_are_none() {
        for (m, _, _) in METHOD_SCOPES {
            assert_eq!(access(m, &s(&[scope::ADMIN])), Some(Ok(Access::Full)), "{m}");
        }
        assert_eq!(access("no.such", &s(&[scope::ADMIN])), None);
    }

    #[test]
    fn every_method_fails_without_its_scope() {
        for (m, broad, _) in METHOD_SCOPES {
            let Some(Err((missing, required))) = access(m, &[]) else { panic!("{m} allowed with no scopes") };
            assert_eq!(missing, *broad);
            assert!(required.contains(broad));
        }
    }

    #[test]
    fn guest_scope_gives_own_session_access_to_questions_only_where_listed() {
        let guest = s(&[scope::SESSIONS_WRITE]);
        assert_eq!(access("question.resolve", &guest), Some(Ok(Access::OwnSessions)));
        assert!(matches!(access("question.request", &guest), Some(Err(_))));
        assert!(can_answer_questions(&guest));
        assert!(!can_answer_questions(&s(&[scope::READ, scope::WRITE])));
    }

    #[test]
    fn messages_need_write_admin_or_the_guest_scope() {
        assert!(can_send_messages(&s(&[scope::WRITE])));
        assert!(can_send_messages(&s(&[scope::ADMIN])));
        assert!(can_send_messages(&s(&[scope::SESSIONS_WRITE])));
        assert!(!can_send_messages(&s(&[scope::READ, scope::QUESTIONS, scope::APPROVALS])));
    }
}
