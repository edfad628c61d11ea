//! The conversation: saved messages, question summaries where they happened, live run
//! streams, and unsent messages with their delivery state. The agent's text is markdown built
//! into safe DOM nodes (`components::markdown`); everything else renders as text.

use leptos::prelude::*;
use model::dock::Receipt;
use model::outbox::{OutboxRow, SendState, describe};

use crate::chat::{ChatController, RunStream, TranscriptRow};
use crate::components::markdown::Markdown;
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
        {move || chat.link_error.get().map(|e| view! { <p class="banner banner--warn" role="alert" data-testid="link-error">{e}</p> })}
        {move || chat.history_error.get().map(|e| view! { <p class="banner banner--warn" role="alert">{e}</p> })}
        <ol class="transcript" aria-label="Messages">
            <For each=move || items.get() key=Item::key let:item>
                {view! { <li>{match item {
                    Item::Message(m) => view! { <Message row=m/> }.into_any(),
                    Item::Receipt(r) => view! { <QuestionReceipt receipt=r/> }.into_any(),
                }}</li> }.into_any()}
            </For>
            <For
                each=move || { chat.streams.get().into_iter().collect::<Vec<(String, RunStream)>>() }
                key=|(run, s)| format!("{run}\u{1f}{}\u{1f}{}", s.state, s.text.len())
                children=|(run, stream)| view! { <li><Stream run=run stream=stream/></li> }.into_any()
            />
            <UnsentEchoes/>
        </ol>
    }
}

#[component]
fn Message(row: TranscriptRow) -> impl IntoView {
    if let Some(Ok(q)) = model::async_q::recognize(&row.raw) {
        return view! { <AsyncCard row=row question=q/> }.into_any();
    }
    view! { <PlainMessage row=row/> }.into_any()
}

/// An async question in the transcript, with where its answer is.
#[component]
fn AsyncCard(row: TranscriptRow, question: model::async_q::AsyncQuestion) -> impl IntoView {
    use crate::async_questions::{AsyncController, AsyncStatus};
    let ctl = expect_context::<AsyncController>();
    let outbox = expect_context::<OutboxController>();
    let q = StoredValue::new(question.clone());
    let item = StoredValue::new(question.item_id.clone());
    let status = Memo::new(move |_| q.with_value(|q| ctl.status(q)));
    let titles = question.items.iter().map(|it| view! { <li>{it.title.clone()}</li> }).collect_view();
    view! {
        <article class="msg msg--assistant msg--async" data-testid="async-question" data-item=question.item_id.clone()>
            <header class="msg__who">"Agent"<span class="msg__note">"Question (the agent keeps working)"</span></header>
            <p class="msg__text">{row.text}</p>
            <ul class="msg__titles">{titles}</ul>
            <div class="msg__summary" data-testid="async-summary">
                {move || match status.get() {
                    AsyncStatus::Pending => view! { <p>"Waiting for your answer in the dock."</p> }.into_any(),
                    AsyncStatus::Delivering(r) => {
                        let label = match &r.state {
                            SendState::Queued => "Answer queued".to_string(),
                            SendState::Sending => "Sending answer".to_string(),
                            SendState::WaitingReconnect => "Waiting for reconnect".to_string(),
                            SendState::AwaitingConfirmation => "Awaiting delivery confirmation".to_string(),
                            SendState::Failed { reason } => format!("Answer not sent: {reason}"),
                            SendState::Confirmed => "Answer sent".to_string(),
                        };
                        let id = StoredValue::new(r.id.clone());
                        let retry = r.can_retry() && !matches!(r.state, SendState::Queued);
                        let discard = r.can_discard();
                        view! {
                            <p>{label}</p>
                            <p class="msg__answer">{r.text.clone()}</p>
                            <div class="msg__actions">
                                {retry.then(|| view! { <button type="button" on:click=move |_| outbox.retry(&id.get_value())>"Retry answer"</button> })}
                                {discard.then(|| view! { <button type="button" on:click=move |_| outbox.discard(&id.get_value())>"Discard"</button> })}
                            </div>
                        }.into_any()
                    }
                    AsyncStatus::Sent { text, answers } => {
                        // Individual answers only when they split unambiguously.
                        let shown = match answers {
                            Some(a) => q.with_value(|q| q.items.iter().zip(a).map(|(it, ans)| format!("{}: {ans}", it.title)).collect::<Vec<_>>().join("\n")),
                            None => text,
                        };
                        view! { <p>"Answer sent"</p><p class="msg__answer">{shown}</p> }.into_any()
                    }
                    AsyncStatus::Dismissed => view! {
                        <p>"Dismissed"</p>
                        <div class="msg__actions"><button type="button" on:click=move |_| ctl.undo_dismiss(&item.get_value())>"Undo"</button></div>
                    }.into_any(),
                    AsyncStatus::Retired => view! {
                        <p>"No longer pending"</p>
                        <div class="msg__actions"><button type="button" on:click=move |_| ctl.reopen(&item.get_value())>"Answer"</button></div>
                    }.into_any(),
                }}
            </div>
        </article>
    }
}

#[component]
fn PlainMessage(row: TranscriptRow) -> impl IntoView {
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
    // The agent writes markdown; a person's own message stays exactly as typed.
    let body = if row.role == "assistant" { view! { <Markdown text=row.text/> }.into_any() } else { view! { <p class="msg__text">{row.text}</p> }.into_any() };
    view! {
        <article class=class data-testid="message" data-role=row.role.clone()>
            <header class="msg__who">{who}{note.map(|n| view! { <span class="msg__note">{n}</span> })}</header>
            {body}
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
            <Markdown text=stream.text/>
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
        <For each=move || rows.get() key=|r| format!("{}\u{1f}{}\u{1f}{}", r.id, r.state.key(), r.retry_requested_ms.map_or(0, |ms| ms as u64)) let:row>
            {view! { <li><OutboxEcho row=row/></li> }.into_any()}
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
