//! What the composer does itself instead of sending: `/new` and `/stop` typed alone. The
//! incumbent sends both to the gateway as chat text, where `/new` resets the current
//! conversation in place and a queued `/stop` can stop newer work when it is replayed; here
//! they become `sessions.create` and `chat.abort`, which never go through the outbox.

/// A command typed alone in the composer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashCommand {
    /// Start a new conversation and switch this pane to it.
    New,
    /// Stop the conversation's run now.
    Stop,
}

/// The command `text` is, when it is exactly one (surrounding blanks and case aside). Anything
/// more (`/new plan the trip`, `/stop it`) is an ordinary message.
pub fn slash_command(text: &str) -> Option<SlashCommand> {
    match text.trim().to_ascii_lowercase().as_str() {
        "/new" => Some(SlashCommand::New),
        "/stop" | "/abort" => Some(SlashCommand::Stop),
        _ => None,
    }
}

/// What a Stop asks the gateway to stop: `chat.abort` params.
///
/// The exact run when exactly one is known to be running in the conversation, so a Stop
/// pressed over one run never ends another that started meanwhile; the conversation's run
/// otherwise (the gateway then aborts what is active).
pub fn abort_params(session_key: &str, active_runs: &[String]) -> serde_json::Value {
    match active_runs {
        [run] => serde_json::json!({"sessionKey": session_key, "runId": run}),
        _ => serde_json::json!({"sessionKey": session_key}),
    }
}

/// The request a Stop sends: `chat.abort` for the conversation's run ([`abort_params`]), or,
/// while sub-agents it started are working, `sessions.abort {key}`, which stops the
/// conversation's runs and every sub-agent it controls (`chat.abort` without a run stops none of
/// them, and with one only that run's own).
pub fn stop_request(session_key: &str, active_runs: &[String], sub_agents_running: bool) -> (&'static str, serde_json::Value) {
    if sub_agents_running {
        (protocol::methods::method::SESSIONS_ABORT, serde_json::json!({"key": session_key}))
    } else {
        (protocol::methods::method::CHAT_ABORT, abort_params(session_key, active_runs))
    }
}

/// What the page says after a Stop, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopOutcome {
    /// Sent; waiting for the gateway's answer.
    Stopping,
    /// The gateway stopped the run (`aborted: true`).
    Stopped { queued_here: usize },
    /// The gateway had nothing running to stop.
    NothingRunning { queued_here: usize },
    /// Not connected: nothing was sent, and nothing will be sent later.
    Offline,
    /// The gateway refused or failed, with its words.
    Failed(String),
}

impl StopOutcome {
    /// The sentence the pane shows.
    pub fn message(&self) -> String {
        let queued = |n: usize| {
            match n {
            0 => String::new(),
            1 => " 1 message of this conversation is still queued in this browser and stays queued: discard it in the outbox if it should not go.".into(),
            n => format!(" {n} messages of this conversation are still queued in this browser and stay queued: discard them in the outbox if they should not go."),
        }
        };
        match self {
            StopOutcome::Stopping => "Stopping…".into(),
            StopOutcome::Stopped { queued_here } => format!("Stopped.{}", queued(*queued_here)),
            StopOutcome::NothingRunning { queued_here } => format!("Nothing was running to stop.{}", queued(*queued_here)),
            StopOutcome::Offline => {
                "Not stopped: the gateway cannot be reached. Nothing is sent later; press Stop again once connected.".into()
            }
            StopOutcome::Failed(why) => format!("Not stopped: {why}"),
        }
    }

    /// Reads the gateway's answer to `chat.abort` (`{ok, aborted, runIds}`) or to
    /// `sessions.abort` (`{ok, abortedRunId, status}`; sent only while sub-agents worked, which it
    /// stops even when the conversation's own run had ended, so that is a stop too).
    pub fn from_reply(reply: &serde_json::Value, queued_here: usize) -> StopOutcome {
        let aborted = reply.get("aborted").and_then(serde_json::Value::as_bool).unwrap_or(true);
        if aborted { StopOutcome::Stopped { queued_here } } else { StopOutcome::NothingRunning { queued_here } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_command_typed_alone_is_a_command() {
        assert_eq!(slash_command("/new"), Some(SlashCommand::New));
        assert_eq!(slash_command("  /NEW \n"), Some(SlashCommand::New));
        assert_eq!(slash_command("/stop"), Some(SlashCommand::Stop));
        assert_eq!(slash_command("/abort"), Some(SlashCommand::Stop));
        assert_eq!(slash_command("/new plan the trip"), None);
        assert_eq!(slash_command("please /stop"), None);
        assert_eq!(slash_command("/newer"), None);
        assert_eq!(slash_command(""), None);
    }

    #[test]
    fn stop_names_the_run_only_when_exactly_one_is_known() {
        assert_eq!(abort_params("agent:main:main", &["r1".into()]), json!({"sessionKey": "agent:main:main", "runId": "r1"}));
        assert_eq!(abort_params("agent:main:main", &[]), json!({"sessionKey": "agent:main:main"}));
        assert_eq!(abort_params("s", &["a".into(), "b".into()]), json!({"sessionKey": "s"}));
    }

    #[test]
    fn a_stop_says_what_stays_queued_and_offline_says_nothing_is_sent_later() {
        let stopped = StopOutcome::from_reply(&json!({"ok": true, "aborted": true, "runIds": ["r"]}), 2);
        assert_eq!(stopped, StopOutcome::Stopped { queued_here: 2 });
        assert!(stopped.message().contains("2 messages of this conversation are still queued"));
        assert_eq!(StopOutcome::from_reply(&json!({"ok": true, "aborted": false}), 0).message(), "Nothing was running to stop.");
        let children = StopOutcome::from_reply(&json!({"ok": true, "status": "no-active-run"}), 0);
        assert_eq!(children, StopOutcome::Stopped { queued_here: 0 }, "sub-agents were stopped");
        assert!(StopOutcome::Offline.message().contains("Nothing is sent later"));
    }
}

#[cfg(test)]
mod stop_request_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stop_with_sub_agents_working_stops_them_too() {
        let runs = vec!["r1".to_string()];
        assert_eq!(stop_request("k", &runs, false), ("chat.abort", json!({"sessionKey": "k", "runId": "r1"})));
        assert_eq!(stop_request("k", &runs, true), ("sessions.abort", json!({"key": "k"})));
        assert_eq!(stop_request("k", &[], true), ("sessions.abort", json!({"key": "k"})));
    }
}
