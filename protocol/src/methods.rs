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

/// Every gateway method's name, once: the UI's requests, the scope table below and the local
/// gateway's dispatch all name methods from here.
pub mod method {
    pub const HEALTH: &str = "health";
    pub const SESSIONS_LIST: &str = "sessions.list";
    pub const SESSIONS_SUBSCRIBE: &str = "sessions.subscribe";
    pub const SESSIONS_CREATE: &str = "sessions.create";
    pub const SESSIONS_PATCH: &str = "sessions.patch";
    pub const SESSIONS_DESCRIBE: &str = "sessions.describe";
    pub const MODELS_LIST: &str = "models.list";
    pub const SESSIONS_REWIND: &str = "sessions.rewind";
    pub const SESSIONS_FORK: &str = "sessions.fork";
    pub const COMMANDS_LIST: &str = "commands.list";
    pub const SESSIONS_SEARCH: &str = "sessions.search";
    pub const TASKS_LIST: &str = "tasks.list";
    pub const TASKS_CANCEL: &str = "tasks.cancel";
    pub const SESSIONS_MESSAGES_SUBSCRIBE: &str = "sessions.messages.subscribe";
    pub const SESSIONS_MESSAGES_UNSUBSCRIBE: &str = "sessions.messages.unsubscribe";
    pub const CHAT_HISTORY: &str = "chat.history";
    pub const CHAT_MESSAGE_GET: &str = "chat.message.get";
    pub const CHAT_SEND: &str = "chat.send";
    pub const CHAT_ABORT: &str = "chat.abort";
    pub const SESSIONS_ABORT: &str = "sessions.abort";
    pub const CHAT_INJECT: &str = "chat.inject";
    pub const QUESTION_LIST: &str = "question.list";
    pub const QUESTION_GET: &str = "question.get";
    pub const QUESTION_RESOLVE: &str = "question.resolve";
    pub const QUESTION_REQUEST: &str = "question.request";
    pub const QUESTION_WAIT_ANSWER: &str = "question.waitAnswer";
    pub const EXEC_APPROVAL_REQUEST: &str = "exec.approval.request";
    pub const EXEC_APPROVAL_LIST: &str = "exec.approval.list";
    pub const EXEC_APPROVAL_GET: &str = "exec.approval.get";
    pub const EXEC_APPROVAL_RESOLVE: &str = "exec.approval.resolve";
    pub const EXEC_APPROVAL_WAIT_DECISION: &str = "exec.approval.waitDecision";
    pub const PLUGIN_APPROVAL_REQUEST: &str = "plugin.approval.request";
    pub const PLUGIN_APPROVAL_LIST: &str = "plugin.approval.list";
    pub const PLUGIN_APPROVAL_RESOLVE: &str = "plugin.approval.resolve";
    pub const PLUGIN_APPROVAL_WAIT_DECISION: &str = "plugin.approval.waitDecision";
    pub const OPENCLAW_APPROVAL_LIST: &str = "openclaw.approval.list";
    pub const APPROVAL_GET: &str = "approval.get";
    pub const APPROVAL_RESOLVE: &str = "approval.resolve";
    pub const APPROVAL_HISTORY: &str = "approval.history";
    pub const PUSH_VAPID_PUBLIC_KEY: &str = "push.web.vapidPublicKey";
    pub const PUSH_SUBSCRIBE: &str = "push.web.subscribe";
    pub const PUSH_UNSUBSCRIBE: &str = "push.web.unsubscribe";
    pub const PUSH_TEST: &str = "push.web.test";
    pub const PUSH_PREFERENCES_GET: &str = "push.web.preferences.get";
    pub const PUSH_PREFERENCES_SET: &str = "push.web.preferences.set";
}

/// Method → the broad scope it needs, and the narrow guest scope that allows it for the
/// caller's own sessions only (if any).
pub const METHOD_SCOPES: &[(&str, &str, Option<&str>)] = &[
    (method::HEALTH, scope::READ, None),
    (method::SESSIONS_LIST, scope::READ, Some(scope::SESSIONS_READ)),
    (method::SESSIONS_SUBSCRIBE, scope::READ, Some(scope::SESSIONS_READ)),
    (method::SESSIONS_CREATE, scope::WRITE, Some(scope::SESSIONS_WRITE)),
    (method::SESSIONS_PATCH, scope::WRITE, Some(scope::SESSIONS_WRITE)),
    (method::SESSIONS_DESCRIBE, scope::READ, Some(scope::SESSIONS_READ)),
    (method::MODELS_LIST, scope::READ, None),
    (method::SESSIONS_REWIND, scope::ADMIN, None),
    (method::COMMANDS_LIST, scope::READ, None),
    (method::SESSIONS_SEARCH, scope::READ, Some(scope::SESSIONS_READ)),
    (method::TASKS_LIST, scope::READ, None),
    (method::TASKS_CANCEL, scope::WRITE, None),
    (method::SESSIONS_FORK, scope::WRITE, Some(scope::SESSIONS_WRITE)),
    (method::SESSIONS_MESSAGES_SUBSCRIBE, scope::READ, Some(scope::SESSIONS_READ)),
    (method::SESSIONS_MESSAGES_UNSUBSCRIBE, scope::READ, Some(scope::SESSIONS_READ)),
    (method::CHAT_HISTORY, scope::READ, Some(scope::SESSIONS_READ)),
    (method::CHAT_MESSAGE_GET, scope::READ, Some(scope::SESSIONS_READ)),
    (method::CHAT_SEND, scope::WRITE, Some(scope::SESSIONS_WRITE)),
    (method::CHAT_ABORT, scope::WRITE, Some(scope::SESSIONS_WRITE)),
    (method::SESSIONS_ABORT, scope::WRITE, Some(scope::SESSIONS_WRITE)),
    (method::CHAT_INJECT, scope::ADMIN, None),
    (method::QUESTION_LIST, scope::QUESTIONS, Some(scope::SESSIONS_WRITE)),
    (method::QUESTION_GET, scope::QUESTIONS, Some(scope::SESSIONS_WRITE)),
    (method::QUESTION_RESOLVE, scope::QUESTIONS, Some(scope::SESSIONS_WRITE)),
    (method::QUESTION_REQUEST, scope::QUESTIONS, None),
    (method::QUESTION_WAIT_ANSWER, scope::QUESTIONS, Some(scope::SESSIONS_WRITE)),
    (method::EXEC_APPROVAL_REQUEST, scope::APPROVALS, None),
    (method::EXEC_APPROVAL_LIST, scope::APPROVALS, None),
    (method::EXEC_APPROVAL_GET, scope::APPROVALS, None),
    (method::EXEC_APPROVAL_RESOLVE, scope::APPROVALS, None),
    (method::EXEC_APPROVAL_WAIT_DECISION, scope::APPROVALS, None),
    (method::PLUGIN_APPROVAL_REQUEST, scope::APPROVALS, None),
    (method::PLUGIN_APPROVAL_LIST, scope::APPROVALS, None),
    (method::PLUGIN_APPROVAL_RESOLVE, scope::APPROVALS, None),
    (method::PLUGIN_APPROVAL_WAIT_DECISION, scope::APPROVALS, None),
    (method::OPENCLAW_APPROVAL_LIST, scope::APPROVALS, None),
    (method::APPROVAL_GET, scope::APPROVALS, None),
    (method::APPROVAL_RESOLVE, scope::APPROVALS, None),
    (method::APPROVAL_HISTORY, scope::APPROVALS, None),
    // Web Push, as the real gateway 2026.9.6 scopes it (reading preferences needs read only).
    (method::PUSH_VAPID_PUBLIC_KEY, scope::WRITE, None),
    (method::PUSH_SUBSCRIBE, scope::WRITE, None),
    (method::PUSH_UNSUBSCRIBE, scope::WRITE, None),
    (method::PUSH_TEST, scope::WRITE, None),
    (method::PUSH_PREFERENCES_GET, scope::READ, None),
    (method::PUSH_PREFERENCES_SET, scope::WRITE, None),
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
    "task",
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
