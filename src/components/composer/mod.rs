//! The composer. Enter sends, Shift+Enter adds a line; every message goes through the
//! outbox. While a blocking question is open, the dock takes the composer's place; while
//! it is collapsed, the composer says that a plain reply can answer it. Files join a message
//! by Attach files, by pasting or by dropping them on the composer.

use leptos::prelude::*;

use crate::components::attachment_list::DraftAttachments;
use crate::components::credential_notice::CredentialNotice;
use crate::components::run_settings::RunSettings;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::attachment::AttachmentController;
use crate::state::chat::ChatController;
use crate::state::composer::ComposerController;
use crate::state::dock::{DockController, DockView};

/// The message composer for the current session.
#[component]
pub fn Composer() -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let chat = expect_context::<ChatController>();
    let client = expect_context::<GatewayClient>();
    let files = expect_context::<AttachmentController>();
    // A conversation's files are read when a composer first shows it.
    Effect::new(move |_| {
        let s = chat.session.get();
        if !s.is_empty() && !files.known(&s) {
            files.load(&s);
        }
    });
    let attach = move |list: Option<web_sys::FileList>| {
        let Some(list) = list else { return };
        let picked: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
        if !picked.is_empty() {
            files.add(&chat.session.get_untracked(), picked);
        }
    };
    let composer = expect_context::<ComposerController>();
    // Only this pane's dock can take this pane's composer: a question in another pane leaves
    // this one free (openclaw#118787).
    let view = expect_context::<DockView>();
    let blocked = Memo::new(move |_| ctl.dock.with(|d| d.expanded) && view.current_is_blocking() && ctl.deep_link.get().is_none());
    let question_waiting = Memo::new(move |_| !ctl.dock.with(|d| d.expanded) && chat.active_runs.with(|runs| view.plain_reply_waits(runs)));
    let approval_waiting = Memo::new(move |_| !ctl.dock.with(|d| d.expanded) && view.approval_waits());
    let held = composer.held;
    let send = move || composer.send();
    let credential_typed = move || chat.draft.with(|t| model::credential::detect(t).is_some());
    // Something else can take the composer's place (here: a read-only connection); the dock
    // above stays available either way.
    let read_only = move || client.status.get() == Status::Connected && !composer.can_write();
    // The command palette: what can follow the `/` being typed.
    let commands = expect_context::<crate::state::commands::CommandsController>();
    let run_settings = expect_context::<crate::state::run_settings::RunSettingsController>();
    let palette = RwSignal::new(model::commands::Palette::default());
    Effect::new(move |_| {
        if chat.draft.with(|d| d.starts_with('/')) {
            commands.want(&chat.session.get());
        }
    });
    let lines = Memo::new(move |_| {
        if !chat.draft.with(|d| d.starts_with('/')) {
            return Vec::new();
        }
        let session = chat.session.get();
        let levels = run_settings.settings(&session).levels;
        chat.draft.with(|d| model::commands::suggestions(&commands.commands(&session), d, &levels))
    });
    let palette_open = Memo::new(move |_| palette.with(|p| chat.draft.with(|d| p.open(d, &lines.get()))));
    let active = Signal::derive(move || palette.with(|p| lines.with(|l| p.active(l))));
    let note = Signal::derive(move || if palette_open.get() { commands.note(&chat.session.get()) } else { None });
    let pane = view.pane;
    let pick = Callback::new(move |text: String| {
        palette.update(model::commands::Palette::typed);
        chat.set_draft(text);
    });
    view! {
        <Show when=move || !blocked.get() && read_only()>
            <p class="composer-replacement" role="note" data-testid="composer-replacement">
                "This conversation is read-only here: the connection has no operator.write scope. Questions above can still be answered."
            </p>
        </Show>
        <Show when=move || !blocked.get() && !read_only()>
            <form
                class="composer"
                on:submit=move |ev| { ev.prevent_default(); send(); }
                on:dragover=move |ev: leptos::ev::DragEvent| ev.prevent_default()
                on:drop=move |ev: leptos::ev::DragEvent| {
                    ev.prevent_default();
                    attach(ev.data_transfer().and_then(|d| d.files()));
                }
            >
                <Show when=move || approval_waiting.get()>
                    <p class="composer__hint" data-testid="composer-approval-hint">
                        "An approval is waiting above. A reply never decides it: expand it to allow or deny."
                    </p>
                </Show>
                <Show when=move || question_waiting.get()>
                    <p class="composer__hint" data-testid="composer-hint">
                        "A question is waiting. A plain reply can answer it: a number, an option label or your own words (commas for several choices)."
                    </p>
                </Show>
                <RunSettings/>
                {move || held.get().map(|hold| view! {
                    <CredentialNotice
                        found=hold.found
                        confirming=hold.confirming
                        on_edit=move |_| held.set(None)
                        on_send_anyway=move |_| held.update(|h| if let Some(h) = h { h.confirming = true })
                        on_confirm=move |_| composer.send_held()
                    />
                })}
                <Show when=move || palette_open.get()>
                    {move || crate::components::on_use::on_use(crate::components::command_palette::palette(pane, lines, active, note, pick))}
                </Show>
                <div class="composer__row">
                    <label class="composer__label">
                        <span class="sr-only">"Message"</span>
                        <textarea
                            rows="2"
                            name="message"
                            placeholder="Message the agent (Enter sends, Shift+Enter adds a line, / for commands)"
                            role="combobox"
                            aria-autocomplete="list"
                            aria-expanded=move || palette_open.get().to_string()
                            aria-controls=move || palette_open.get().then(|| crate::components::command_palette::list_id(pane))
                            aria-activedescendant=move || palette_open.get().then(|| crate::components::command_palette::line_id(pane, active.get()))
                            prop:value=move || chat.draft.get()
                            on:input=move |ev| {
                                let text = event_target_value(&ev);
                                ctl.typing_in_composer.set(!text.trim().is_empty());
                                chat.set_draft(text);
                                held.set(None);
                                palette.update(model::commands::Palette::typed);
                            }
                            on:focus=move |_| ctl.typing_in_composer.set(!chat.draft.get_untracked().trim().is_empty())
                            on:blur=move |_| ctl.typing_in_composer.set(false)
                            on:paste=move |ev: leptos::ev::ClipboardEvent| {
                                // Pasted files (a screenshot) are attached. Words go in as
                                // usual: a copy from a spreadsheet carries its words and a
                                // picture of them, and the words are what was meant.
                                let data = ev.clipboard_data();
                                let words = data.as_ref().and_then(|d| d.get_data("text/plain").ok()).is_some_and(|t| !t.is_empty());
                                let pasted = data.and_then(|d| d.files());
                                if !words && pasted.as_ref().is_some_and(|l| l.length() > 0) {
                                    ev.prevent_default();
                                    attach(pasted);
                                }
                            }
                            on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                                use model::commands::{Key, KeyOutcome};
                                let plain = !ev.shift_key() && !ev.is_composing() && !ev.ctrl_key() && !ev.alt_key() && !ev.meta_key();
                                let key = match ev.key().as_str() {
                                    "ArrowDown" => Some(Key::Down),
                                    "ArrowUp" => Some(Key::Up),
                                    "Enter" | "Tab" if plain => Some(Key::Choose),
                                    "Escape" => Some(Key::Escape),
                                    _ => None,
                                };
                                if let Some(key) = key {
                                    let draft = chat.draft.get_untracked();
                                    let outcome = lines.with_untracked(|l| palette.try_update(|p| p.key(key, &draft, l)));
                                    match outcome {
                                        Some(KeyOutcome::Insert(text)) => {
                                            ev.prevent_default();
                                            pick.run(text);
                                            return;
                                        }
                                        Some(KeyOutcome::Taken) => {
                                            ev.prevent_default();
                                            return;
                                        }
                                        _ => {}
                                    }
                                }
                                if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() && !ev.ctrl_key() && !ev.alt_key() && !ev.meta_key() {
                                    ev.prevent_default();
                                    send();
                                }
                            }
                        ></textarea>
                    </label>
                    <div class="composer__buttons">
                        <label class="composer__attach">
                            <input
                                type="file"
                                multiple
                                class="sr-only"
                                on:change=move |ev| {
                                    let input: web_sys::HtmlInputElement = event_target(&ev);
                                    attach(input.files());
                                    // The same file may be picked again after it was removed.
                                    input.set_value("");
                                }
                            />
                            <span>"Attach files"</span>
                        </label>
                        <button type="submit" class="composer__send">"Send"</button>
                    </div>
                </div>
                <DraftAttachments session=chat.session/>
                <Show when=credential_typed>
                    <p class="unsaved-note" data-testid="composer-not-saved">"Kept in this tab only: this looks like a credential, so it is not saved in this browser."</p>
                </Show>
            </form>
        </Show>
    }
}
