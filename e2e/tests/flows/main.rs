//! Every e2e flow, one module each, in one test binary: one compile and one link instead of one
//! per file. `scripts/tests.sh e2e` runs the binary once per module (`<module>::` as its
//! filter), two modules at a time, so each module keeps its own log and time.

mod approvals;
mod async_questions;
mod attachments;
mod attention;
mod budgets;
mod chat;
mod connection;
mod consent;
mod conversation_tools;
mod conversations;
mod credential_guard;
mod dock;
mod dock_recovery;
mod gateway_stores;
mod hostile_ui;
mod offline;
mod package;
mod panes;
mod reach;
mod real_gateway;
mod real_gateway_outbox;
mod real_gateway_transcript;
mod real_runs;
mod run_settings;
mod transcript_parts;
mod upgrade;
