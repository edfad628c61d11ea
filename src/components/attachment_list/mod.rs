//! Files attached to a message: while it is a draft (with previews and Remove), and once it
//! is queued (names and sizes). A file's name is the person's own text, shown as text.

use leptos::prelude::*;
use model::attachment::{AttachmentMeta, bytes_in_words};

use crate::state::attachment::AttachmentController;

/// The files attached in a conversation's composer, each with its size, a preview for an
/// image, and a button that removes it.
#[component]
pub fn DraftAttachments(
    /// The conversation whose draft these files belong to.
    #[prop(into)]
    session: Signal<String>,
) -> impl IntoView {
    let files = expect_context::<AttachmentController>();
    let state = Memo::new(move |_| files.state(&session.get()));
    // One view of the whole list, drawn again when it changes: it holds a few files, and a
    // keyed list would be more code than it saves.
    move || {
        let s = state.get();
        let refused = (!s.refused.is_empty()).then(|| {
            view! {
                <ul class="attachments__refused" role="alert" data-testid="attachment-refused">
                    {s.refused.into_iter().map(|r| view! { <li>{r}</li> }).collect_view()}
                </ul>
            }
        });
        let not_kept =
            s.not_kept.map(|t| view! { <p class="attachments__not-kept" role="status" data-testid="attachment-not-kept">{t}</p> });
        let list = (!s.files.is_empty()).then(|| view! {
            <ul class="attachments" aria-label="Attached files" data-testid="draft-attachments">
                {s.files.into_iter().map(|file| {
                    let id = file.id.clone();
                    view! {
                        <li class="attachments__item" data-testid="draft-attachment">
                            {files.preview(&file.id).map(|src| view! { <img class="attachments__thumb" src=src alt=""/> })}
                            <span class="attachments__name">{file.file_name.clone()}</span>
                            <span class="attachments__size">{bytes_in_words(file.size)}</span>
                            <button type="button" class="attachments__remove" aria-label=format!("Remove {}", file.file_name) on:click=move |_| files.remove(&session.get_untracked(), &id)>"Remove"</button>
                        </li>
                    }
                }).collect_view()}
            </ul>
        });
        (refused, not_kept, list)
    }
}

/// The files of a queued or saved message, by name and size.
#[component]
pub fn FileChips(
    /// The files, as the row keeps them.
    files: Vec<AttachmentMeta>,
) -> impl IntoView {
    (!files.is_empty()).then(|| {
        view! {
            <ul class="attachments attachments--sent" aria-label="Attached files" data-testid="row-attachments">
                {files.into_iter().map(|f| view! {
                    <li class="attachments__item">
                        <span class="attachments__name">{f.file_name}</span>
                        <span class="attachments__size">{bytes_in_words(f.size)}</span>
                    </li>
                }).collect_view()}
            </ul>
        }
    })
}

thread_local! {
    /// Object URLs of files fetched from the gateway, by source: each is fetched once a page.
    static FETCHED: std::cell::RefCell<Vec<(String, String)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An object URL for a file the gateway saved, fetched once per page.
async fn fetched_url(
    client: crate::io::gateway_client::GatewayClient,
    source: String,
    session: String,
    image: bool,
) -> Result<String, String> {
    // One object URL per file and use: an image's and a download's types differ.
    let key = format!("{}{source}", if image { "i:" } else { "d:" });
    if let Some(url) = FETCHED.with(|f| f.borrow().iter().find(|(s, _)| *s == key).map(|(_, u)| u.clone())) {
        return Ok(url);
    }
    let blob = client.media(&source, &session).await?;
    // Re-wrapped with a type of ours: the gateway's type never reaches this origin.
    let kind = model::attachment::media_type_here(&blob.type_(), image)?;
    let blob = crate::io::browser::retype_blob(&blob, kind)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| crate::io::browser::js_error_text(&e))?;
    FETCHED.with(|f| f.borrow_mut().push((key, url.clone())));
    Ok(url)
}

/// Saves an object URL's bytes under `name`, as a link with `download` does (never opened as
/// a page: a file from an agent's conversation is not run).
fn save_as(url: &str, name: &str) {
    use wasm_bindgen::JsCast;
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    if let Ok(a) = doc.create_element("a") {
        let _ = a.set_attribute("href", url);
        let _ = a.set_attribute("download", name);
        if let Ok(a) = a.dyn_into::<web_sys::HtmlElement>() {
            a.click();
        }
    }
}

crate::components::on_use::split! { transcript_parts,
/// The files the gateway saved with a message: images shown (fetched from the gateway with
/// this page's credentials), other files named, with a button that downloads them. `media` as
/// `model::parts::saved_media` reads them; `session` the message's conversation (the gateway
/// checks that the file belongs to it). Drawn only for a message that has some (`components::on_use`); its code is fetched with the
/// other parts of a transcript the first time one is shown.
pub fn saved_files(media: Vec<model::parts::SavedMedia>, session: String) -> AnyView {
    let client = expect_context::<crate::io::gateway_client::GatewayClient>();
        view! {
            <ul class="attachments attachments--saved" aria-label="Attached files" data-testid="saved-attachments">
                {media.into_iter().map(|m| {
                    let size = m.size.map(|n| bytes_in_words(n)).unwrap_or_default();
                    match (m.source.clone(), m.image) {
                        (Some(source), true) => {
                            let session = session.clone();
                            let url = RwSignal::new(None::<Result<String, String>>);
                            leptos::task::spawn_local(async move { url.set(Some(fetched_url(client, source, session, true).await)) });
                            let alt = m.file_name.clone();
                            view! {
                                <li class="attachments__image" data-testid="saved-image">
                                    {move || match url.get() {
                                        Some(Ok(src)) => view! { <img class="part part--image" src=src alt=alt.clone() data-testid="saved-image-img"/> }.into_any(),
                                        Some(Err(e)) => view! { <p class="part part--image-placeholder">{format!("{} ({size}) could not be shown: {e}.", alt)}</p> }.into_any(),
                                        None => view! { <p class="part part--image-placeholder">{format!("Loading {}…", alt)}</p> }.into_any(),
                                    }}
                                </li>
                            }.into_any()
                        }
                        (source, _) => {
                            let session = session.clone();
                            let name = m.file_name.clone();
                            let failed = RwSignal::new(None::<String>);
                            let file_name = StoredValue::new(m.file_name.clone());
                            let open = move |source: String| {
                                let session = session.clone();
                                let file_name = file_name.get_value();
                                leptos::task::spawn_local(async move {
                                    match fetched_url(client, source, session, false).await {
                                        Ok(url) => save_as(&url, &file_name),
                                        Err(e) => failed.set(Some(e)),
                                    }
                                });
                            };
                            view! {
                                <li class="attachments__item" data-testid="saved-file">
                                    <span class="attachments__name">{m.file_name.clone()}</span>
                                    <span class="attachments__size">{size}</span>
                                    {source.map(|s| {
                                        let s = StoredValue::new(s);
                                        view! { <button type="button" aria-label=format!("Download {name}") on:click=move |_| open(s.get_value())>"Download"</button> }
                                    })}
                                    {move || failed.get().map(|e| view! { <span class="attachments__refused" role="alert">{e}</span> })}
                                </li>
                            }.into_any()
                        }
                    }
                }).collect_view()}
            </ul>
        }
        .into_any()
}
}
