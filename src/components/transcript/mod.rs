//! The conversation: saved messages, question summaries where they happened, live run
//! streams, and unsent messages with their delivery state. All text renders as text.

use leptos::prelude::*;
use model::dock::Receipt;
use model::outbox::{OutboxRow, SendState, describe};

use crate::chat::{ChatController, RunStream, TranscriptRow};
use crate::components::question_receipt::QuestionReceipt;
use crate::gateway_client::{GatewayClient, Status};
use crate::outbox::{OutboxController, stale_ms};
use crate::questions::DockController;

#[derive(Clone, PartialEq)]
enum Item {
    Message(TranscriptRow),
    Receipt(Receipt),
}

impl Item {
    fn key(&self) -> String {
        match self {
            Item::Message(m) => format!("m:{}", m.key),
            Item::Receipt(r) => format!("r:{}:{}:{}", r.id, r.outcome.label(), r.unsent_text.len()),
        }
    }
    fn time(&self) -> f64 {
        match self {
            Item::Message(m) => m.timestamp,
            Item::Receipt(r) => r.at_ms,
        }
    }
}

/// The transcript of the current session.
#[component]
pub fn Transcript() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let dock = expect_context::<DockController>();
    let items = Memo::new(move |_| {
        let session = chat.session.get();
        let deep = dock.deep_link.get();
        let mut items: Vec<Item> = chat.messages.get().into_iter().map(Item::Message).collect();
        dock.dock.with(|d| {
            for r in &d.receipts {
                let here = match (&deep, &r.session_key) {
                    (Some(id), _) => *id == r.id,
                    (None, Some(k)) => *k == session,
                    (None, None) => true,
                };
                if here {
                    items.push(Item::Receipt(r.clone()));
                }
            }
        });
        // Receipts go where they happened in time; messages keep their saved order.
        items.sort_by(|a, b| match (a, b) {
            (Item::Message(x), Item::Message(y)) if x.seq > 0 && y.seq > 0 => x.seq.cmp(&y.seq),
            _ => a.time().total_cmp(&b.time()),
        });
        items
    });
    view! {
        <Show when=move || chat.has_more.get()>
            <button type="button" class="transcript__older" disabled=move || chat.loading.get() on:click=move |_| chat.load_older()>
                "Load older messages"
            </button>
        </Show>
        {move || chat.history_error.get().map(|e| view! { <p class="banner banner--warn" role="alert">{e}</p> })}
        <ol class="transcript" aria-label="Messages">
            <For each=move || items.get() key=Item::key let:item>
                <li>{match item {
                    Item::Message(m) => view! { <Message row=m/> }.into_any(),
                    Item::Receipt(r) => view! { <QuestionReceipt receipt=r/> }.into_any(),
                }}</li>
            </For>
            <For
                each=move || { chat.streams.get().into_iter().collect::<Vec<(String, RunStream)>>() }
                key=|(run, s)| (run.clone(), s.state.clone(), s.text.len())
                children=|(run, stream)| view! { <li><Stream run=run stream=stream/></li> }
            />
            <UnsentEchoes/>
        </ol>
    }
}

#[component]
fn Message(row: TranscriptRow) -> impl IntoView {
    let (who, class) = match row.role.as_str() {
        "user" => ("You", "msg msg--user"),
        "assistant" => ("Agent", "msg msg--assistant"),
        _ => ("Gateway", "msg msg--custom"),
    };
    let note = match row.note.as_deref() {
        Some("aborted") => Some("Stopped"),
        Some("run-failed-before-reply") => Some("Run failed"),
        _ => None,
    };
    view! {
        <article class=class data-testid="message" data-role=row.role.clone()>
            <header class="msg__who">{who}{note.map(|n| view! { <span class="msg__note">{n}</span> })}</header>
            <p class="msg__text">{row.text}</p>
        </article>
    }
}

#[component]
fn Stream(run: String, stream: RunStream) -> impl IntoView {
    let label = match stream.state.as_str() {
        "aborted" => "Stopped",
        "error" => "Run failed",
        _ => "Writing…",
    };
    view! {
        <article class="msg msg--assistant msg--live" data-testid="stream" data-run=run data-state=stream.state.clone()>
            <header class="msg__who">"Agent"<span class="msg__note">{label}</span></header>
            <p class="msg__text">{stream.text}</p>
            {stream.error.map(|e| view! { <p class="msg__error" role="alert">{e}</p> })}
        </article>
    }
}

/// Messages of this session that the gateway has not confirmed yet.
#[component]
fn UnsentEchoes() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let outbox = expect_context::<OutboxController>();
    let rows = Memo::new(move |_| {
        let s = chat.session.get();
        outbox.rows.with(|rows| rows.iter().filter(|r| r.session_key == s && r.is_unsent() && r.async_item_id.is_none()).cloned().collect::<Vec<_>>())
    });
    view! {
        <For each=move || rows.get() key=|r| (r.id.clone(), serde_json::to_string(&r.state).unwrap_or_default(), r.retry_requested_ms.map(|x| x as u64)) let:row>
            <li><OutboxEcho row=row/></li>
        </For>
    }
}

/// One unsent message with its delivery state, Retry and Discard.
#[component]
pub fn OutboxEcho(row: OutboxRow) -> impl IntoView {
    let outbox = expect_context::<OutboxController>();
    let client = expect_context::<GatewayClient>();
    let id = StoredValue::new(row.id.clone());
    let row = StoredValue::new(row);
    let status = move || {
        let r = row.get_value();
        let connected = client.status.get() == Status::Connected;
        if !connected && r.state == SendState::Queued {
            return "Waiting for reconnect".to_string();
        }
        outbox.rows.with(|rows| describe(&r, rows, crate::browser::now_ms(), stale_ms()))
    };
    let state_name = move || match row.with_value(|r| r.state.clone()) {
        SendState::Queued => "queued",
        SendState::Sending => "sending",
        SendState::WaitingReconnect => "waiting-reconnect",
        SendState::AwaitingConfirmation => "awaiting-confirmation",
        SendState::Confirmed => "confirmed",
        SendState::Failed { .. } => "failed",
    };
    view! {
        <article class="msg msg--user msg--unsent" data-testid="outbox-row" data-state=state_name>
            <header class="msg__who">"You"</header>
            <p class="msg__text">{row.with_value(|r| r.text.clone())}</p>
            <p class="msg__status" data-testid="outbox-status">{status}</p>
            <div class="msg__actions">
                <Show when=move || row.with_value(OutboxRow::can_retry) && row.with_value(|r| r.state != SendState::Queued || r.retry_requested_ms.is_none())>
                    <button type="button" on:click=move |_| outbox.retry(&id.get_value())>"Retry"</button>
                </Show>
                <Show when=move || row.with_value(OutboxRow::can_discard)>
                    <button type="button" on:click=move |_| outbox.discard(&id.get_value())>"Discard"</button>
                </Show>
            </div>
        </article>
    }
}
