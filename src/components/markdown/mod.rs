//! Agent text rendered from markdown (`model::markdown`): DOM nodes built one by one with
//! `createElement` and `createTextNode`, never `innerHTML`. Links open in a new tab without an
//! opener or referrer and show their host on hover and focus; images wait for a click; code
//! blocks keep their whitespace, scroll sideways and have a Copy button.
//!
//! The tree is built with the browser's DOM calls rather than one `view!` per kind of node: a
//! message is static once rendered, and one small builder is a fraction of the code that a
//! typed view per element kind compiles to. One click listener on the message serves every
//! Copy and image button inside it.
//!
//! The parser and the builder ([`fill`]) are the app's `markdown` split module
//! (`components::on_use`), fetched the first time a message needs it and kept by the service
//! worker from then on: the parser is about a tenth of the app's code, and most first views never
//! need it (a question, a plain transcript). A blank text and a message of plain prose
//! (`model::markdown::parse_without_parser`) are shown at once as what they parse to; any other
//! shows as written until the module is there, then as markdown.

use crate::components::on_use::NotLoaded;
use leptos::prelude::*;
use model::markdown::{Align, Kind, MdNode};
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, Node};

/// Markdown of an agent's message, as safe DOM.
#[component]
pub fn Markdown(
    /// The markdown source (agent text: untrusted).
    text: String,
) -> impl IntoView {
    view! { <div class="msg__text md" use:markdown_dom=text on:click=on_click></div> }
}

/// Fills `el` with the message. The directive runs when the element is created, and again on
/// the same element with the newer text while a reply streams: what it drew before goes first.
fn markdown_dom(el: Element, text: String) {
    let Some(doc) = el.owner_document() else {
        return;
    };
    el.set_text_content(None);
    if let Some(nodes) = model::markdown::parse_without_parser(&text) {
        build(&doc, &el, &nodes);
        return;
    }
    // As written until the module has rendered it: readable, and inert (a text node).
    let _ = el.set_attribute("data-md", "pending");
    if let Some(p) = element(&doc, &el, "p", "md-source") {
        self::text(&doc, &p, &text);
    }
    leptos::task::spawn_local(async move {
        match render(el.clone(), text).await {
            Ok(()) => {
                let _ = el.set_attribute("data-md", "rendered");
            }
            Err(NotLoaded) => {
                let _ = el.set_attribute("data-md", "failed");
                if let Some(note) = element(&doc, &el, "p", "md-note") {
                    self::text(&doc, &note, "Shown as written: the formatting could not be loaded.");
                }
            }
        }
    });
}

thread_local! {
    /// When the module last failed to arrive (`io::browser::now_ms`).
    static FAILED_AT: std::cell::Cell<Option<f64>> = const { std::cell::Cell::new(None) };
}

/// After a failed fetch of the module, messages within the next 3 s are shown as written without
/// another try: a reply streaming while the gateway cannot be reached would otherwise fetch it
/// again on every update.
const RETRY_AFTER_MS: f64 = 3_000.0;

/// The module's work, fetching it the first time (and again after a failure, at most every
/// [`RETRY_AFTER_MS`]).
async fn render(el: Element, text: String) -> Result<(), NotLoaded> {
    let now = crate::io::browser::now_ms();
    if FAILED_AT.get().is_some_and(|at| now - at < RETRY_AFTER_MS) {
        return Err(NotLoaded);
    }
    let done = fill_in_module(el, text).await;
    if done.is_err() {
        FAILED_AT.set(Some(crate::io::browser::now_ms()));
    }
    done
}

crate::components::on_use::split! { markdown,
    /// [`fill`], in the `markdown` module.
    fn fill_in_module(el: Element, text: String) -> () {
        fill(&el, &text)
    }
}

/// Replaces `el`'s children with the nodes of the markdown `text` (the `markdown` module's work).
fn fill(el: &Element, text: &str) {
    let Some(doc) = el.owner_document() else {
        return;
    };
    el.set_text_content(None);
    build(&doc, el, &model::markdown::parse(text));
}

fn element(doc: &Document, parent: &Node, tag: &str, class: &str) -> Option<Element> {
    let el = doc.create_element(tag).ok()?;
    if !class.is_empty() {
        el.set_class_name(class);
    }
    parent.append_child(&el).ok()?;
    Some(el)
}

fn text(doc: &Document, parent: &Node, t: &str) {
    let _ = parent.append_child(&doc.create_text_node(t));
}

fn align_class(a: Align) -> &'static str {
    match a {
        Align::None => "",
        Align::Left => "md-left",
        Align::Center => "md-center",
        Align::Right => "md-right",
    }
}

fn build(doc: &Document, parent: &Node, nodes: &[MdNode]) {
    for node in nodes {
        match node {
            MdNode::Text(t) => text(doc, parent, t),
            MdNode::Code(c) => {
                if let Some(el) = element(doc, parent, "code", "md-code") {
                    text(doc, &el, c);
                }
            }
            MdNode::Break => {
                element(doc, parent, "br", "");
            }
            MdNode::Rule => {
                element(doc, parent, "hr", "");
            }
            MdNode::Task(done) => {
                if let Some(el) = element(doc, parent, "input", "md-task") {
                    let _ = el.set_attribute("type", "checkbox");
                    let _ = el.set_attribute("disabled", "");
                    if *done {
                        let _ = el.set_attribute("checked", "");
                    }
                    let _ = el.set_attribute("aria-label", if *done { "done" } else { "not done" });
                }
            }
            MdNode::Link { href, host, children } => {
                if let Some(a) = element(doc, parent, "a", "md-link") {
                    // `href` passed `model::markdown::safe_url`: http, https or mailto only.
                    for (k, v) in [
                        ("href", href.as_str()),
                        ("target", "_blank"),
                        ("rel", "noopener noreferrer"),
                        ("title", host.as_str()),
                        ("data-host", host.as_str()),
                    ] {
                        let _ = a.set_attribute(k, v);
                    }
                    let _ = a.set_attribute("aria-label", &format!("{} ({host})", model::markdown::plain_text(children)));
                    build(doc, &a, children);
                }
            }
            MdNode::Image { src, alt, host } => {
                let Some(holder) = element(doc, parent, "span", "md-img-placeholder") else {
                    continue;
                };
                let label = if alt.trim().is_empty() { format!("Image ({host})") } else { format!("Image: {alt} ({host})") };
                if let Some(s) = element(doc, &holder, "span", "") {
                    text(doc, &s, &label);
                }
                if let Some(b) = element(doc, &holder, "button", "") {
                    let _ = b.set_attribute("type", "button");
                    let _ = b.set_attribute("data-md", "load-image");
                    let _ = b.set_attribute("data-src", src);
                    let _ = b.set_attribute("data-alt", alt);
                    text(doc, &b, &format!("Load image from {host}"));
                }
            }
            MdNode::CodeBlock { lang, code } => {
                let Some(wrap) = element(doc, parent, "div", "md-pre") else {
                    continue;
                };
                if let Some(bar) = element(doc, &wrap, "div", "md-pre__bar") {
                    if let Some(l) = element(doc, &bar, "span", "md-pre__lang") {
                        text(doc, &l, lang);
                    }
                    if let Some(b) = element(doc, &bar, "button", "") {
                        let _ = b.set_attribute("type", "button");
                        let _ = b.set_attribute("data-md", "copy");
                        text(doc, &b, "Copy");
                    }
                }
                if let Some(pre) = element(doc, &wrap, "pre", "")
                    && let Some(c) = element(doc, &pre, "code", "")
                {
                    text(doc, &c, code);
                }
            }
            MdNode::El(kind, children) => {
                let (tag, class) = match kind {
                    Kind::P => ("p", ""),
                    Kind::H(1) => ("h3", "md-h1"),
                    Kind::H(2) => ("h4", "md-h2"),
                    Kind::H(_) => ("h5", "md-h3"),
                    Kind::Quote => ("blockquote", ""),
                    Kind::Ul => ("ul", ""),
                    Kind::Ol(_) => ("ol", ""),
                    Kind::Li => ("li", ""),
                    Kind::Em => ("em", ""),
                    Kind::Strong => ("strong", ""),
                    Kind::Del => ("del", ""),
                    Kind::Table => ("div", "md-table"),
                    Kind::Head => ("thead", ""),
                    Kind::Row => ("tr", ""),
                    Kind::Th(a) => ("th", align_class(*a)),
                    Kind::Td(a) => ("td", align_class(*a)),
                    Kind::Div => ("div", ""),
                };
                let Some(mut el) = element(doc, parent, tag, class) else {
                    continue;
                };
                match kind {
                    Kind::Ol(start) if *start != 1 => {
                        let _ = el.set_attribute("start", &start.to_string());
                    }
                    // A wide table scrolls inside its own box instead of widening the page.
                    Kind::Table => match element(doc, &el, "table", "") {
                        Some(t) => el = t,
                        None => continue,
                    },
                    Kind::Head => match element(doc, &el, "tr", "") {
                        Some(r) => el = r,
                        None => continue,
                    },
                    _ => {}
                }
                build(doc, &el, children);
            }
        }
    }
}

/// Copy and image buttons, for every message through one listener on it.
fn on_click(ev: web_sys::MouseEvent) {
    let Some(button) = ev.target().and_then(|t| t.dyn_into::<Element>().ok()).and_then(|t| t.closest("button[data-md]").ok().flatten())
    else {
        return;
    };
    match button.get_attribute("data-md").as_deref() {
        Some("copy") => {
            let code = button
                .closest(".md-pre")
                .ok()
                .flatten()
                .and_then(|w| w.query_selector("pre").ok().flatten())
                .and_then(|pre| pre.text_content())
                .unwrap_or_default();
            let Some(w) = web_sys::window() else { return };
            let copied = wasm_bindgen_futures::JsFuture::from(w.navigator().clipboard().write_text(&code));
            // Say "Copied" only once the browser has it: a refused clipboard says so instead.
            leptos::task::spawn_local(async move {
                let label = if copied.await.is_ok() { "Copied" } else { "Copy failed: select the code to copy it" };
                button.set_text_content(Some(label));
            });
        }
        Some("load-image") => {
            // The address was checked when the message was parsed (http or https only).
            let (Some(src), Some(holder), Some(doc)) = (button.get_attribute("data-src"), button.parent_element(), button.owner_document())
            else {
                return;
            };
            let Ok(img) = doc.create_element("img") else {
                return;
            };
            img.set_class_name("md-img");
            let _ = img.set_attribute("referrerpolicy", "no-referrer");
            let _ = img.set_attribute("alt", &button.get_attribute("data-alt").unwrap_or_default());
            let _ = img.set_attribute("src", &src);
            let _ = holder.replace_with_with_node_1(&img);
        }
        _ => {}
    }
}
