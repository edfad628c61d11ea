//! Stopping runs: one session's (`chat.abort`, deleting a session), every run at shutdown, or
//! those waiting on a person. Each also cancels the run's pending question and approval.

use std::sync::Arc;

use crate::{Gateway, approvals, questions};

/// Aborts the session's active run (only if it is `run_id`, when given) and cancels its
/// pending question and approval. Returns the aborted run's id.
pub fn abort_session(gw: &Arc<Gateway>, key: &str, run_id: Option<&str>) -> Option<String> {
    let run = gw.runs.active(key)?;
    if run_id.is_some_and(|r| r != run.run_id) {
        return None;
    }
    run.abort.send_replace(true);
    // An aborted run cancels its pending question and approval.
    questions::cancel_run(gw, &run.run_id);
    approvals::cancel_run(gw, &run.run_id);
    Some(run.run_id)
}

/// Aborts every active run and cancels its pending question (graceful shutdown at its
/// deadline). Runs still queued behind them see the stop and abort as they start.
pub fn abort_all(gw: &Arc<Gateway>) -> usize {
    gw.drain.mark_aborting();
    let runs = gw.runs.all();
    for run in &runs {
        run.abort.send_replace(true);
        questions::cancel_run(gw, &run.run_id);
        approvals::cancel_run(gw, &run.run_id);
    }
    runs.len()
}

/// Aborts the runs that wait for a person's answer (graceful shutdown does not wait for
/// those: nobody may answer before the deadline). Returns how many.
pub fn abort_waiting(gw: &Arc<Gateway>) -> usize {
    let waiting: Vec<_> =
        gw.runs.all().into_iter().filter(|r| gw.questions.run_is_waiting(&r.run_id) || gw.approvals.run_is_waiting(&r.run_id)).collect();
    for run in &waiting {
        run.abort.send_replace(true);
        questions::cancel_run(gw, &run.run_id);
        approvals::cancel_run(gw, &run.run_id);
    }
    waiting.len()
}
