//! Export a conversation as Markdown with every decision taken in it (`model::export`): the
//! whole history paged in (texts whole, not the
//! display cap), the gateway's ended approvals of the conversation (`approval.history`) and this
//! browser's question receipts, saved as a file.

use leptos::prelude::*;
use leptos::task::spawn_local;
use protocol::methods::method;
use serde_json::{Value, json};

use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::dock::DockController;
use crate::state::sessions::SessionsController;

/// Rows per history page (the real gateway's most), and the most pages read.
const PAGE: usize = 1000;
const MAX_PAGES: usize = 100;
/// Approvals per `approval.history` page (its most), and the most pages read.
const APPROVAL_PAGE: usize = 100;
const MAX_APPROVAL_PAGES: usize = 20;

/// Where an export is, in words for the conversation's header.
#[derive(Clone, PartialEq)]
pub enum ExportState {
    Working { session: String },
    Done { session: String, said: String },
    Failed { session: String, said: String },
}

impl ExportState {
    pub fn session(&self) -> &str {
        match self {
            ExportState::Working { session } | ExportState::Done { session, .. } | ExportState::Failed { session, .. } => session,
        }
    }
}

#[derive(Clone, Copy)]
pub struct ExportController {
    client: GatewayClient,
    sessions: SessionsController,
    dock: DockController,
    pub state: RwSignal<Option<ExportState>>,
}

impl ExportController {
    pub fn new(client: GatewayClient, sessions: SessionsController, dock: DockController) -> Self {
        ExportController { client, sessions, dock, state: RwSignal::new(None) }
    }

    /// Whether an export can start now (tracked): it reads the history from the gateway.
    pub fn can(&self) -> bool {
        self.client.status.get() == Status::Connected && self.sessions.may(method::CHAT_HISTORY)
    }

    /// Exports `session`, one at a time.
    pub fn export(&self, session: String) {
        if matches!(self.state.get_untracked(), Some(ExportState::Working { .. })) || session.is_empty() {
            return;
        }
        self.state.set(Some(ExportState::Working { session: session.clone() }));
        let this = *self;
        spawn_local(async move {
            let outcome = match exporter(this, session.clone()).await {
                Ok(export) => export.await,
                Err(_) => Err("its code could not be loaded from the gateway. Reload the page, then try again.".to_string()),
            };
            this.state.set(Some(match outcome {
                Ok(said) => ExportState::Done { session, said },
                Err(why) => ExportState::Failed { session, said: format!("Not exported: {why}") },
            }));
        });
    }
}

/// An export's work, [`run`]. In the release build (feature `split`) its code (paging,
/// `model::export`'s writer) is a module of its own, fetched the first time a conversation is
/// exported (as the views of `components::on_use`); a module that cannot be fetched is an
/// error the export reports, and the next export tries again.
type Export = std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, String>>>>;

#[cfg(feature = "split")]
#[leptos::wasm_split::wasm_split(export, wasm_split_path = ::leptos::wasm_split, fallible)]
fn exporter(this: ExportController, session: String) -> Result<Export, leptos::wasm_split::SplitLoaderError> {
    Ok(Box::pin(run(this, session)))
}

#[cfg(not(feature = "split"))]
async fn exporter(this: ExportController, session: String) -> Result<Export, leptos::wasm_split::SplitLoaderError> {
    Ok(Box::pin(run(this, session)))
}

/// Reads the whole conversation and its decisions, writes the Markdown and hands it to the
/// browser as a download.
async fn run(this: ExportController, session: String) -> Result<String, String> {
    let session = session.as_str();
    // The whole history, newest page first; each page is oldest first.
    let mut messages: Vec<Value> = Vec::new();
    for page in 0.. {
        if page == MAX_PAGES {
            return Err(format!("the conversation has more than {} messages.", PAGE * MAX_PAGES));
        }
        let params = json!({"sessionKey": session, "limit": PAGE, "offset": messages.len(), "maxChars": 500_000});
        let v = this.client.request(method::CHAT_HISTORY, params).await.map_err(|e| e.to_string())?;
        let mut rows = v.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
        let more = v.get("hasMore").and_then(Value::as_bool).unwrap_or(false) && !rows.is_empty();
        rows.append(&mut messages);
        messages = rows;
        if !more {
            break;
        }
    }
    let first_ms = messages.first().and_then(|m| m.get("timestamp")).and_then(Value::as_f64).unwrap_or(0.0);
    // Ended approvals, newest first, back to the conversation's first message.
    let mut approvals: Vec<Value> = Vec::new();
    if this.sessions.may(method::APPROVAL_HISTORY) {
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_APPROVAL_PAGES {
            let mut params = json!({"limit": APPROVAL_PAGE});
            if let Some(c) = &cursor {
                params["cursor"] = json!(c);
            }
            let v =
                this.client.request(method::APPROVAL_HISTORY, params).await.map_err(|e| format!("the approvals could not be read: {e}"))?;
            let items = v.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
            let older = items.last().and_then(|i| i.get("resolvedAtMs")).and_then(Value::as_f64).is_some_and(|t| t < first_ms);
            approvals.extend(items);
            cursor = v.get("nextCursor").and_then(Value::as_str).map(str::to_string);
            if cursor.is_none() || older {
                break;
            }
        }
    }
    let receipts: Vec<model::dock::Receipt> = this.dock.dock.with_untracked(|d| {
        d.receipts.iter().filter(|r| r.approval.is_none() && r.session_key.as_deref().is_none_or(|k| k == session)).cloned().collect()
    });
    let title = this.sessions.row(session).map(|r| r.name()).unwrap_or_else(|| model::sessions::short_name(session));
    let now = browser::now_ms();
    let count = messages.iter().filter(|m| matches!(m.get("role").and_then(Value::as_str), Some("user" | "assistant"))).count();
    let input = model::export::Input {
        title: title.clone(),
        session_key: session.to_string(),
        gateway: model::url::host_of(&this.client.url.get_untracked()),
        exported_at_ms: now,
        messages,
        approvals,
        receipts,
    };
    let text = model::export::markdown(&input);
    let name = format!("{}-{}.md", model::export::file_stem(&title), &model::export::utc(now)[..10]);
    browser::download(&name, &text, "text/markdown")?;
    Ok(format!("Exported {count} messages as {name}."))
}
