//! The conversation: saved messages, question summaries where they happened, live run
//! streams, and unsent messages with their delivery state. The agent's text is markdown built
//! into safe DOM nodes (`components::markdown`); everything else renders as text.

use leptos::prelude::*;
use model::dock::Receipt;
use model::outbox::{OutboxRow, SendState, describe};

use std::collections::HashMap;

use model::parts::{ImageSource, Part, ToolResult};

use crate::components::markdown::Markdown;
use crate::components::message_actions::CutNotice;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::chat::{ChatController, TranscriptRow};
use crate::state::dock::DockController;
use crate::state::outbox::{OutboxController, stale_ms};
use model::transcript::{Run, RunEnd, ToolActivity, ToolStatus};

/// Whether this browser's summary `r` is of one of the `ask_user` calls `asked` (first
/// question's wording, call time) in `session`: the same wording, the same conversation, and
/// resolved after that call was made.
fn same_question(r: &Receipt, asked: &[(String, f64)], session: &str) -> bool {
    let in_session = r.session_key.as_deref().is_none_or(|k| k == session);
    in_session && r.questions.first().is_some_and(|q| asked.iter().any(|(w, at)| *w == q.question && r.at_ms >= *at))
}

/// The tool results of the transcript, by call id (a context for the message views).
#[derive(Clone, Copy)]
struct ToolResults(Memo<HashMap<String, ToolResult>>);

/// How each finished run ended and how long it took, by the key of its last saved row.
#[derive(Clone, Copy)]
struct RunDurations(Memo<HashMap<String, (RunEnd, f64)>>);

#[derive(Clone, PartialEq)]
enum Item {
    Message(TranscriptRow),
    Receipt(Receipt),
}

impl Item {
    fn key(&self) -> String {
        match self {
            // A row shown whole after it was shortened is drawn again, and so is a row of the
            // saved copy once the gateway's history has it (its actions need the gateway's row).
            Item::Message(m) => {
                format!("m:{}{}{}", m.key, if m.truncated { ":cut" } else { "" }, if m.from_saved_copy { ":saved" } else { "" })
            }
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

/// Keeps the newest message in view, as a chat does: on opening, and whenever the list grows
/// while the person is at the bottom. Someone who scrolled up to read stays where they are.
///
/// The list's own size says when it grew, whatever made it grow: rows and streamed text, and
/// also what is drawn later than its row (a view whose code arrives on first use, a markdown
/// body, an image), which no signal of the chat announces. No work is done per streamed word
/// beyond the browser's own layout.
///
/// With panes side by side each pane scrolls by itself (`.shell--split .pane`); otherwise the
/// page does.
fn follow_the_newest(list: NodeRef<leptos::html::Ol>) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::Closure;
    let Some(window) = web_sys::window() else {
        return;
    };
    // `try_`: the listener outlives a closed pane's transcript, and then finds nothing.
    let pane = move || list.try_get_untracked().flatten().and_then(|l| l.closest(".shell--split .pane").ok().flatten());
    let at_bottom = std::rc::Rc::new(std::cell::Cell::new(true));
    let flag = at_bottom.clone();
    // Where the view's top was at the previous scroll event. Only a move up leaves the bottom:
    // the list growing under a view that has not scrolled yet is not the person leaving it (a
    // scroll event can come a frame after this code scrolled, when the list has grown again).
    let last_top = std::cell::Cell::new(0.0_f64);
    let w = window.clone();
    let on_scroll = Closure::<dyn Fn()>::new(move || {
        let (height, top, view) = match pane() {
            Some(p) => (f64::from(p.scroll_height()), f64::from(p.scroll_top()), f64::from(p.client_height())),
            None => {
                let Some(doc) = w.document().and_then(|d| d.document_element()) else {
                    return;
                };
                let view = w.inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(0.0);
                (f64::from(doc.scroll_height()), w.scroll_y().unwrap_or(0.0), view)
            }
        };
        if height - (top + view) < 120.0 {
            flag.set(true);
        } else if top < last_top.get() - 1.0 {
            flag.set(false);
        }
        last_top.set(top);
    });
    // Captured: a pane's own scrolling does not bubble.
    let _ = window.add_event_listener_with_callback_and_bool("scroll", on_scroll.as_ref().unchecked_ref(), true);
    // The listener lives as long as the page; after its pane closed it finds no list and
    // follows the page, harmlessly.
    on_scroll.forget();
    Effect::new(move |_| {
        let Some(el) = list.get() else { return };
        let at_bottom = at_bottom.clone();
        let w = window.clone();
        // Called after layout, before paint: the new height is known and the person never sees
        // the list above its end.
        let on_resize = Closure::<dyn Fn()>::new(move || {
            if !at_bottom.get() {
                return;
            }
            match pane() {
                Some(p) => p.set_scroll_top(p.scroll_height()),
                None => {
                    if let Some(doc) = w.document().and_then(|d| d.document_element()) {
                        w.scroll_to_with_x_and_y(0.0, f64::from(doc.scroll_height()));
                    }
                }
            }
        });
        let Ok(observer) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) else {
            return;
        };
        // Its first report, at once, brings an opened conversation to its newest row.
        observer.observe(&el);
        let held = StoredValue::new_local((observer, on_resize));
        on_cleanup(move || {
            held.try_with_value(|(o, _)| o.disconnect());
        });
    });
}

/// The transcript of the current session.
#[component]
pub fn Transcript() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let dock = expect_context::<DockController>();
    // Tool results, by the id of the call they answer: each call's card shows its result.
    let results = Memo::new(move |_| chat.messages.with(|rows| model::transcript::results(rows)));
    provide_context(ToolResults(results));
    // Recomputed when a run starts or ends, or rows change, not on every streamed word.
    let ended = Memo::new(move |_| chat.runs.with(|runs| runs.iter().map(Run::timing).collect::<Vec<_>>()));
    let durations = Memo::new(move |_| chat.messages.with(|rows| ended.with(|runs| model::transcript::run_durations(rows, runs))));
    provide_context(RunDurations(durations));
    let list = NodeRef::<leptos::html::Ol>::new();
    follow_the_newest(list);
    let items = Memo::new(move |_| {
        let session = chat.session.get();
        let deep = dock.deep_link.get();
        // A result is shown with its call, a nested tool row by the `tool_call` that reached it;
        // one whose call is not on this page stands alone.
        let mut items: Vec<Item> =
            chat.messages.with(|rows| model::transcript::shown_rows(rows).into_iter().cloned().map(Item::Message).collect());
        // The wording of every question asked through `ask_user` in this transcript: a summary
        // this browser keeps for one of them is shown by that call's card, not twice.
        let asked: Vec<(String, f64)> =
            chat.messages.with(|rows| rows.iter().flat_map(|r| r.asks.iter().map(move |q| (q.clone(), r.timestamp))).collect());
        dock.dock.with(|d| {
            for r in &d.receipts {
                if same_question(r, &asked, &session) {
                    continue;
                }
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
        model::order::sort_by(&mut items, |a, b| match (a, b) {
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
        {move || chat.saved_copy.get().map(|ms| view! {
            <p class="banner banner--info" role="status" data-testid="saved-copy">
                {format!("Saved copy, last confirmed by the gateway {}. It is replaced as soon as the gateway answers; answers you give now are queued.", when(ms))}
            </p>
        })}
        {move || chat.saved_copy_error.get().map(|e| view! { <p class="banner banner--warn" role="status" data-testid="saved-copy-error">{e}</p> })}
        <CutNotice/>
        <ol class="transcript" aria-label="Messages" node_ref=list>
            <For each=move || items.get() key=Item::key let:item>
                {view! { <li>{match item {
                    Item::Message(m) => view! { <Message row=m/> }.into_any(),
                    Item::Receipt(r) if r.approval.is_some() => crate::components::on_use::on_use(crate::components::approval_card::receipt(r)),
                    Item::Receipt(r) => crate::components::on_use::on_use(crate::components::question_receipt::receipt(r)),
                }}</li> }.into_any()}
            </For>
            <PendingInputs/>
            <For
                each=move || chat.runs.with(|runs| runs.iter().filter(|r| r.is_active() || r.unsaved_reply.is_some()).map(|r| r.id.clone()).collect::<Vec<_>>())
                key=|id| id.clone()
                children=|id| view! { <li>{crate::components::on_use::on_use(live_run(id))}</li> }.into_any()
            />
            <UnsentEchoes/>
        </ol>
    }
}

/// A moment in words: the time today, else the date and time.
fn when(ms: f64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms));
    let today = js_sys::Date::new_0().to_date_string() == d.to_date_string();
    let time = String::from(d.to_locale_time_string("default"));
    if today {
        format!("at {time}")
    } else {
        format!("on {} at {time}", String::from(d.to_locale_date_string("default", &wasm_bindgen::JsValue::UNDEFINED)))
    }
}

#[component]
fn Message(row: TranscriptRow) -> impl IntoView {
    if let Some(Ok(q)) = model::async_q::recognize(&row.raw) {
        return crate::components::on_use::on_use(async_card(row, q));
    }
    view! { <PlainMessage row=row/> }.into_any()
}

crate::components::on_use::split! { transcript_parts,
    /// An async question in the transcript, with where its answer is.
    /// An async question's card, its code fetched with the first one shown (`components::on_use`).
    fn async_card(row: TranscriptRow, question: model::async_q::AsyncQuestion) -> AnyView {
        view! { <AsyncCard row=row question=question/> }.into_any()
    }
}

#[component]
fn AsyncCard(row: TranscriptRow, question: model::async_q::AsyncQuestion) -> impl IntoView {
    use crate::state::async_q::{AsyncQController, AsyncStatus};
    let ctl = expect_context::<AsyncQController>();
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

/// What a row is, in a person's words, and whether it reports a failure.
fn row_label(row: &TranscriptRow) -> (&'static str, &'static str, Option<&'static str>) {
    match (row.role.as_str(), row.note.as_deref()) {
        ("user", _) => ("You", "msg msg--user", None),
        ("assistant", Some("aborted")) => ("Agent", "msg msg--assistant", Some("Stopped")),
        ("assistant", Some("error")) => ("Agent", "msg msg--assistant msg--failed", Some("Failed")),
        ("assistant", _) => ("Agent", "msg msg--assistant", None),
        ("custom", Some("run-failed-before-reply")) => ("Agent", "msg msg--note msg--failed", Some("Run failed")),
        ("custom", Some("openclaw.system-note")) => ("System note", "msg msg--note", None),
        ("custom", _) => ("Gateway note", "msg msg--note", None),
        ("bashExecution", _) => ("Command", "msg msg--note", None),
        ("compactionSummary" | "branchSummary", _) => ("Summary of earlier messages", "msg msg--note", None),
        ("system", _) => ("System", "msg msg--note", None),
        _ => ("Gateway note", "msg msg--note", None),
    }
}

#[component]
fn PlainMessage(row: TranscriptRow) -> impl IntoView {
    let withheld = model::offline::withheld(&row.raw).is_some();
    if let Some(result) = model::parts::tool_result(&row.raw).filter(|_| !withheld) {
        // A result whose call is not on this page (older, or a repair row).
        return view! {
            <article class="msg msg--tool" data-testid="message" data-role="toolResult">
                <header class="msg__who">"Tool result"<span class="msg__note">{result.name.clone()}</span></header>
                {crate::components::on_use::on_use(tool_output(result))}
            </article>
        }
        .into_any();
    }
    let (who, class, note) = row_label(&row);
    let parts = if withheld {
        vec![Part::Text(row.text.clone())]
    } else {
        match row.role.as_str() {
            "bashExecution" => vec![Part::Text(format!(
                "$ {}\n{}",
                row.raw.get("command").and_then(|v| v.as_str()).unwrap_or(""),
                row.raw.get("output").and_then(|v| v.as_str()).unwrap_or("")
            ))],
            "compactionSummary" | "branchSummary" => {
                vec![Part::Text(row.raw.get("summary").and_then(|v| v.as_str()).unwrap_or("").to_string())]
            }
            _ => model::parts::parts(&row.raw),
        }
    };
    let timestamp = row.timestamp;
    let by_model = model::run_settings::reply_model(&row.raw);
    let session = expect_context::<ChatController>().session.get_untracked();
    // Agents and their summaries write markdown; a person's message, a command's output and the
    // gateway's own notes are shown exactly as written.
    let markdown = matches!(row.role.as_str(), "assistant" | "compactionSummary" | "branchSummary") && !withheld;
    view! {
        <article class=class data-testid="message" data-role=row.role.clone() data-key=row.key.clone() data-seq=row.seq>
            <header class="msg__who">
                {who}
                {note.map(|n| view! { <span class="msg__note">{n}</span> })}
                {by_model.map(|m| view! { <span class="msg__model" data-testid="reply-model">{m}</span> })}
            </header>
            {parts.into_iter().map(|p| view! { <PartView part=p at_ms=timestamp session=session.clone() markdown=markdown/> }).collect_view()}
            {(!withheld).then(|| model::parts::saved_media(&row.raw)).filter(|media| !media.is_empty()).map(|media| crate::components::on_use::on_use(crate::components::attachment_list::saved_files(media, session.clone())))}
            {(row.truncated && !withheld).then(|| view! { <ShowWhole key=row.key.clone()/> })}
            <RunFooter key=row.key.clone()/>
            {(matches!(row.role.as_str(), "user" | "assistant") && !withheld).then(|| crate::components::on_use::on_use(crate::components::message_actions::actions(row.clone())))}
        </article>
    }
    .into_any()
}

/// Under a run's last row: how the run ended and how long it took.
#[component]
fn RunFooter(key: String) -> impl IntoView {
    let RunDurations(durations) = expect_context::<RunDurations>();
    let key = StoredValue::new(key);
    move || {
        key.with_value(|k| durations.with(|d| d.get(k).cloned())).map(|(end, ms)| {
            view! { <p class="msg__run" data-testid="run-took">{format!("{} in {}", end.words(), model::transcript::duration_words(ms))}</p> }
        })
    }
}

/// "Show the whole message" under a row the gateway shortened. The request and its outcome
/// are the conversation's (`ChatController::whole`): a click made before the gateway's history
/// is in waits for it, and a row drawn again keeps what was asked.
#[component]
fn ShowWhole(
    /// The row's key (`__openclaw.id`).
    key: String,
) -> impl IntoView {
    use crate::state::chat::WholeMessage;
    /// What the line under the row says about the request.
    struct Said {
        /// The button waits for an answer already on its way.
        busy: bool,
        /// `status`, or `alert` for a failure.
        role: &'static str,
        words: String,
    }
    let chat = expect_context::<ChatController>();
    let key = StoredValue::new(key);
    let said = move || {
        key.with_value(|k| {
            chat.whole.with(|w| match w.iter().find(|r| &r.key == k).map(|r| &r.state) {
                // Not busy while waiting: a click once the page is connected fetches it (a
                // request the history left waiting is never stuck).
                Some(WholeMessage::Waiting) => {
                    Said { busy: false, role: "status", words: " Waiting for the gateway: shown whole as soon as it answers.".into() }
                }
                Some(WholeMessage::Loading) => Said { busy: true, role: "status", words: " Loading…".into() },
                Some(WholeMessage::Failed(why)) => {
                    Said { busy: false, role: "alert", words: format!(" The whole message could not be shown: {why}") }
                }
                _ => Said { busy: false, role: "status", words: String::new() },
            })
        })
    };
    view! {
        <p class="msg__cut" data-testid="message-cut">
            "The gateway shortened this message. "
            <button type="button" disabled=move || said().busy on:click=move |_| chat.show_whole(key.get_value())>"Show the whole message"</button>
            <span role=move || said().role>{move || said().words}</span>
        </p>
    }
}

/// One content part of a message.
#[component]
fn PartView(
    part: Part,
    /// When the message was written (matches an `ask_user` call with its receipt).
    at_ms: f64,
    /// The conversation the message belongs to.
    session: String,
    /// Text parts are markdown (an agent's), not text to show as typed.
    markdown: bool,
) -> impl IntoView {
    match part {
        Part::Text(t) if markdown => view! { <Markdown text=t/> }.into_any(),
        Part::Text(t) => view! { <p class="msg__text">{t}</p> }.into_any(),
        Part::Thinking { text, redacted } => {
            let label = if redacted { "Thinking (hidden by the model's provider)" } else { "Thinking" };
            view! {
                <details class="part part--thinking" data-testid="thinking">
                    <summary>{label}</summary>
                    <p class="msg__text">{text}</p>
                </details>
            }
            .into_any()
        }
        Part::ToolCall { id, name, arguments, .. } => {
            // `tool_call {id, args}` reaches another tool: shown as that tool.
            let (name, arguments) = model::parts::inner_call(&name, &arguments);
            if name == "ask_user" {
                crate::components::on_use::on_use(ask_summary(id, arguments, at_ms, session))
            } else {
                crate::components::on_use::on_use(tool_card(id, name, arguments))
            }
        }
        Part::ToolResult(result) => crate::components::on_use::on_use(tool_output(result)),
        Part::Image { source, alt } => crate::components::on_use::on_use(image_part(source, alt)),
        Part::Unsupported { kind, raw } => view! {
            <details class="part part--unsupported" data-testid="unsupported-part">
                <summary>{format!("unsupported part: {kind}")}</summary>
                <pre>{serde_json::to_string_pretty(&raw).unwrap_or_default()}</pre>
            </details>
        }
        .into_any(),
    }
}

crate::components::on_use::split! { transcript_parts,
    /// A tool call: the real tool's name and what it works on (for a command, the command), its
    /// state as it happens (from the run's tool events: output as it prints, exit code, duration),
    /// its arguments behind a toggle, and its result once saved.
    /// A tool's card, its code fetched with the first tool call a conversation shows
    /// (`components::on_use`).
    fn tool_card(call_id: String, name: String, arguments: serde_json::Value) -> AnyView {
        view! { <ToolCard call_id=call_id name=name arguments=arguments/> }.into_any()
    }
}

#[component]
fn ToolCard(call_id: String, name: String, arguments: serde_json::Value) -> impl IntoView {
    let ToolResults(results) = expect_context::<ToolResults>();
    let chat = expect_context::<ChatController>();
    let id = StoredValue::new(call_id.clone());
    let result = Memo::new(move |_| id.with_value(|id| results.with(|r| r.get(id).cloned())));
    let live = Memo::new(move |_| {
        id.with_value(|id| chat.runs.with(|runs| runs.iter().flat_map(|r| r.tools.iter()).find(|t| t.call_id == *id).cloned()))
    });
    let command = arguments.get("command").and_then(|c| c.as_str()).map(str::to_string);
    let tool_name = name.clone();
    let args = match &arguments {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    let state = move || match (result.get(), live.with(|l| l.as_ref().map(|t| t.status))) {
        (Some(r), _) if r.is_error => ToolStatus::Failed,
        (Some(_), _) => ToolStatus::Done,
        (None, Some(s)) => s,
        (None, None) => ToolStatus::Running,
    };
    view! {
        <article class="part tool-card" data-testid="tool-call" data-call=call_id data-tool=tool_name data-state=move || state().name()>
            <header class="tool-card__head">
                <span class="tool-card__name">{name}</span>
                {command.map(|c| view! { <code class="tool-card__command" dir="ltr">{c}</code> })}
                <span class="tool-card__state" data-testid="tool-state">{move || tool_state_words(state(), live.get().as_ref())}</span>
            </header>
            {move || live.get().filter(|t| !t.output.text.is_empty() && result.with(Option::is_none)).map(|t| view! { <LiveOutput tool=t/> })}
            {(!args.is_empty()).then(|| view! { <details class="tool-card__args"><summary>"Arguments"</summary><pre>{args}</pre></details> })}
            {move || result.get().map(|r| view! { <ToolOutput result=r/> })}
        </article>
    }
}

/// A tool's state in words: running, or how it ended (exit code, how long it took).
fn tool_state_words(state: ToolStatus, live: Option<&ToolActivity>) -> String {
    let mut words = match state {
        ToolStatus::Running if live.is_some() => "running".to_string(),
        ToolStatus::Running => "waiting for its result".to_string(),
        ToolStatus::Done => "done".to_string(),
        ToolStatus::Failed => "failed".to_string(),
    };
    if let Some(t) = live {
        if let Some(code) = t.exit_code.filter(|_| state != ToolStatus::Running) {
            words.push_str(&format!(", exit code {code}"));
        }
        if let Some(ms) = t.duration_ms.filter(|_| state != ToolStatus::Running) {
            words.push_str(&format!(", {}", model::transcript::duration_words(ms as f64)));
        }
    }
    words
}

/// Lines of a running command's output kept in view; the rest on demand.
const TAIL_LINES: usize = 12;

/// A command's output as it prints: its last lines in view, all that is kept on demand.
#[component]
fn LiveOutput(tool: ToolActivity) -> impl IntoView {
    let all = RwSignal::new(false);
    let lines = tool.output.lines();
    let cut = tool.output.cut_bytes;
    let output = StoredValue::new(tool.output);
    view! {
        <div class="tool-card__output tool-card__output--live" data-testid="tool-output" aria-live="off">
            <pre>{move || output.with_value(|o| if all.get() { o.text.clone() } else { o.tail(TAIL_LINES).to_string() })}</pre>
            {(lines > TAIL_LINES || cut > 0).then(|| view! {
                <button type="button" class="tool-card__more" on:click=move |_| all.update(|a| *a = !*a)>
                    {move || if all.get() { "Show the last lines".to_string() } else { format!("Show all {lines} lines") }}
                </button>
                {(cut > 0).then(|| view! { <p class="tool-card__note">{format!("The first {} KB of output are not kept here; the saved result has what the gateway keeps.", cut.div_ceil(1024))}</p> })}
            })}
        </div>
    }
}

crate::components::on_use::split! { transcript_parts,
    /// A tool's saved result, its code fetched with the first one shown (`components::on_use`).
    fn tool_output(result: ToolResult) -> AnyView {
        view! { <ToolOutput result=result/> }.into_any()
    }
}

#[component]
fn ToolOutput(result: ToolResult) -> impl IntoView {
    let label = if result.is_error { "Error" } else { "Result" };
    let class = if result.is_error { "tool-card__output tool-card__output--error" } else { "tool-card__output" };
    view! {
        <div class=class data-testid="tool-result">
            <p class="tool-card__label">{label}</p>
            <pre>{if result.text.is_empty() { "(no output)".to_string() } else { result.text }}</pre>
        </div>
    }
}

crate::components::on_use::split! { transcript_parts,
    /// The summary an `ask_user` call leaves, read from the transcript (so every browser shows
    /// it): the full wording and how it ended. This browser's own record of the same question adds
    /// what the transcript cannot know (answered or skipped elsewhere, text left unsent).
    /// An `ask_user` call's summary, its code fetched with the first one shown (`components::on_use`).
    fn ask_summary(call_id: String, arguments: serde_json::Value, at_ms: f64, session: String) -> AnyView {
        view! { <AskSummary call_id=call_id arguments=arguments at_ms=at_ms session=session/> }.into_any()
    }
}

#[component]
fn AskSummary(call_id: String, arguments: serde_json::Value, at_ms: f64, session: String) -> impl IntoView {
    let ToolResults(results) = expect_context::<ToolResults>();
    let dock = expect_context::<DockController>();
    let id = call_id.clone();
    let args = StoredValue::new(arguments);
    let session = StoredValue::new(session);
    let receipt = Memo::new(move |_| {
        let wording = args.with_value(|a| model::parts::ask_questions(a).first().map(|q| q.question.clone()))?;
        // This browser's own summary of this very question: same wording and conversation,
        // resolved after the call was made (an earlier question with the same words never
        // stands in for an open one).
        let asked = [(wording, at_ms)];
        let here = session.get_value();
        let local = dock.dock.with(|d| d.receipts.iter().find(|r| same_question(r, &asked, &here)).cloned());
        let from_transcript =
            results.with(|r| r.get(&id).and_then(|res| args.with_value(|a| model::parts::ask_receipt(&id, a, Some(res), at_ms, &here))));
        match (from_transcript, local) {
            (Some(mut t), Some(l)) => {
                // What only this browser knows: answered or skipped elsewhere, text unsent.
                if matches!(l.outcome, model::dock::Outcome::AnsweredElsewhere { .. } | model::dock::Outcome::SkippedElsewhere)
                    || l.outcome.label() == t.outcome.label()
                {
                    t.outcome = l.outcome;
                    t.unsent_text = l.unsent_text;
                }
                Some(t)
            }
            (Some(t), None) => Some(t),
            // The result is not saved yet, but this browser saw the question end.
            (None, local) => local,
        }
    });
    move || match receipt.get() {
        Some(r) => crate::components::on_use::on_use(crate::components::question_receipt::receipt(r)),
        None => {
            let n = args.with_value(|a| model::parts::ask_questions(a).len());
            view! {
                <p class="msg__status" data-testid="ask-open">
                    {if n == 1 { "Asked a question; it is answered in the dock above the composer.".to_string() } else { format!("Asked {n} questions; they are answered in the dock above the composer.") }}
                </p>
            }
            .into_any()
        }
    }
}

crate::components::on_use::split! { transcript_parts,
    /// An image part: shown at once when its bytes are inline or on this page's own origin; from
    /// another site only when asked; a note when the gateway left it out.
    /// An image in a message, its code fetched with the first one shown (`components::on_use`).
    fn image_part(source: ImageSource, alt: String) -> AnyView {
        view! { <ImagePart source=source alt=alt/> }.into_any()
    }
}

#[component]
fn ImagePart(source: ImageSource, alt: String) -> impl IntoView {
    let alt_text = if alt.trim().is_empty() { "Image".to_string() } else { alt };
    match source {
        ImageSource::Inline(src) | ImageSource::SameOrigin(src) => view! { <img class="part part--image" src=src alt=alt_text loading="lazy" data-testid="image-part"/> }.into_any(),
        ImageSource::Remote { url, host } => {
            let shown = RwSignal::new(false);
            let url = StoredValue::new(url);
            let alt = StoredValue::new(alt_text);
            move || if shown.get() {
                view! { <img class="part part--image" src=url.get_value() alt=alt.get_value() referrerpolicy="no-referrer" data-testid="image-part"/> }.into_any()
            } else {
                let host = host.clone();
                view! {
                    <p class="part part--image-placeholder">
                        {format!("{} ({host}) ", alt.get_value())}
                        <button type="button" on:click=move |_| shown.set(true)>{format!("Load image from {host}")}</button>
                    </p>
                }
                .into_any()
            }
        }
        .into_any(),
        ImageSource::Omitted { bytes } => {
            let size = bytes.map(|b| if b >= 1024 { format!(", {} KB", b.div_ceil(1024)) } else { format!(", {b} bytes") }).unwrap_or_default();
            view! { <p class="part part--image-placeholder" data-testid="image-omitted">{format!("{alt_text} (not sent with the transcript{size})")}</p> }.into_any()
        }
    }
}

crate::components::on_use::split! { transcript_parts,
    /// A run as it happens: its phase, what it says it is about to do, its thinking, the tools it
    /// runs that no saved row shows yet, and the reply it is writing. Once it ended, the reply it
    /// wrote that is not saved (yet) stays, with how it ended.
    /// A run as it happens, its code fetched with the first run the page shows (`components::on_use`).
    fn live_run(id: String) -> AnyView {
        view! { <LiveRun id=id/> }.into_any()
    }
}

#[component]
fn LiveRun(id: String) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let id = StoredValue::new(id);
    // One memo for the run; the parts below read it (each part is redrawn when it changes).
    let run = Memo::new(move |_| id.with_value(|id| chat.runs.with(|runs| runs.iter().find(|r| r.id == *id).cloned())));
    let with = move |f: &dyn Fn(&Run) -> String| run.with(|r| r.as_ref().map(f).unwrap_or_default());
    let state = move || {
        with(&|r| {
            match r.end() {
                None => "running",
                Some(RunEnd::Done) => "done",
                Some(RunEnd::Stopped) => "aborted",
                Some(RunEnd::Failed(_)) => "error",
            }
            .to_string()
        })
    };
    // What it says it is about to do, unless that is the text it is writing anyway.
    let preamble = move || with(&|r| if r.is_active() && r.text.trim() != r.preamble.trim() { r.preamble.clone() } else { String::new() });
    let failure = move || with(&|r| if let Some(RunEnd::Failed(why)) = r.end() { why.clone() } else { String::new() });
    let reply = move || with(&|r| r.unsaved_reply.as_ref().map(model::message_text).unwrap_or_default());
    view! {
        <article class="msg msg--assistant msg--live" data-testid="stream" data-run=move || id.get_value() data-state=state>
            <header class="msg__who">"Agent"<span class="msg__note" role="status" data-testid="run-phase">{move || with(&|r| r.phase.words())}</span></header>
            {move || {
                let thinking = with(&|r| r.thinking.clone());
                (!thinking.is_empty()).then(|| view! {
                    <details class="part part--thinking" data-testid="thinking" data-live="true">
                        <summary>"Thinking"</summary>
                        <p class="msg__text">{thinking}</p>
                    </details>
                })
            }}
            {move || { let p = preamble(); (!p.is_empty()).then(|| view! { <p class="msg__status" data-testid="run-preamble">{p}</p> }) }}
            // Tools a saved row already holds are drawn by that row's card.
            {move || {
                let calls = run.with(|r| r.as_ref().map(|r| r.tools.iter().filter(|t| t.parent.is_none()).map(|t| t.call_id.clone()).collect::<Vec<_>>()).unwrap_or_default());
                chat.messages.with(|rows| calls.into_iter().filter(|c| !rows.iter().any(|r| r.tool_calls.contains(c))).collect::<Vec<_>>())
                    .into_iter()
                    .map(|call| view! { <LiveToolCard call_id=call/> })
                    .collect_view()
            }}
            {move || { let t = with(&|r| r.text.clone()); (!t.is_empty()).then(|| view! { <Markdown text=t/> }) }}
            {move || { let t = reply(); (!t.is_empty()).then(|| view! { <Markdown text=t/> }) }}
            {move || { let e = failure(); (!e.is_empty()).then(|| view! { <p class="msg__error" role="alert">{e}</p> }) }}
        </article>
    }
}

/// A tool of a running run that no saved row holds yet: drawn like a saved call's card.
#[component]
fn LiveToolCard(call_id: String) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let id = call_id.clone();
    let tool = chat.runs.with_untracked(|runs| runs.iter().flat_map(|r| r.tools.iter()).find(|t| t.call_id == id).cloned());
    let Some(tool) = tool else { return ().into_any() };
    let arguments = tool.command.as_ref().map(|c| serde_json::json!({"command": c})).unwrap_or(serde_json::Value::Null);
    crate::components::on_use::on_use(tool_card(call_id, tool.name.clone(), arguments))
}

/// Messages the gateway accepted while a run was busy, waiting for their turn. One this page
/// sent is shown once, by its outbox row (with its delivery state).
#[component]
fn PendingInputs() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let outbox = expect_context::<OutboxController>();
    let inputs = move || {
        let mine: Vec<String> = outbox.rows.with(|rows| rows.iter().map(|r| r.idempotency_key.clone()).collect());
        chat.pending_inputs.with(|p| p.iter().filter(|i| i.run_id.as_ref().is_none_or(|r| !mine.contains(r))).cloned().collect::<Vec<_>>())
    };
    move || {
        inputs()
            .into_iter()
            .map(|input| {
                view! {
                    <li>
                        <article class="msg msg--user msg--unsent" data-testid="pending-input" data-state=input.status.clone()>
                            <header class="msg__who">"You"<span class="msg__note">{match input.status.as_str() {
                                "interrupted" => "Interrupted: the run ended before it read this",
                                "cancelled" => "Cancelled: the agent will not read this",
                                _ => "Waiting for the agent's current run",
                            }}</span></header>
                            <p class="msg__text">{input.text}</p>
                        </article>
                    </li>
                }
            })
            .collect_view()
    }
}

/// Messages of this session that the gateway has not confirmed yet.
#[component]
fn UnsentEchoes() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let outbox = expect_context::<OutboxController>();
    let rows = Memo::new(move |_| {
        let s = chat.session.get();
        outbox.rows.with(|rows| {
            rows.iter().filter(|r| r.session_key == s && r.is_unsent() && r.async_item_id.is_none()).cloned().collect::<Vec<_>>()
        })
    });
    view! {
        <For each=move || rows.get() key=|r| format!("{}\u{1f}{}\u{1f}{}\u{1f}{}", r.id, r.state.key(), r.retry_requested_ms.map_or(0, |ms| ms as u64), r.edited_ms.map_or(0, |ms| ms as u64)) let:row>
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
        outbox.rows.with(|rows| describe(&r, rows, crate::io::browser::now_ms(), stale_ms()))
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
            <crate::components::attachment_list::FileChips files=row.with_value(|r| r.attachments.clone())/>
            {move || outbox.not_kept.with(|k| k.iter().find(|n| n.row_id == id.get_value()).map(|n| n.words.clone())).map(|t| view! { <p class="msg__status msg__status--warn" role="status" data-testid="outbox-not-kept">{t}</p> })}
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
