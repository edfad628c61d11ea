//! What a transcript message is made of, as the real gateway serves it (`chat.history` and
//! `session.message`, OpenClaw 2026.9.6): text, thinking, tool calls and images in a content
//! array, tool results as rows of their own, and the `ask_user` pair that a question leaves.
//! Anything else is kept as an unsupported part, never dropped.

use std::collections::BTreeMap;

use protocol::question::{Question, QuestionAnswers, QuestionOption};
use serde_json::Value;

use crate::dock::{Outcome, Receipt};

/// An image part, by where its bytes are.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSource {
    /// Inline bytes, as a `data:` URL of a raster type: shown at once.
    Inline(String),
    /// One of the gateway's media routes on the page's own origin: shown at once.
    SameOrigin(String),
    /// Another site's address: loads only when asked (it could be a tracking pixel).
    Remote { url: String, host: String },
    /// The gateway left the bytes out (`chat.history` does for every image).
    Omitted { bytes: Option<u64> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text(String),
    /// The model's reasoning. `redacted`: the provider hid it.
    Thinking {
        text: String,
        redacted: bool,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
        /// The `tool_call` that reached this tool (a nested tool row's call).
        parent: Option<String>,
    },
    /// A tool's result inside a row (a nested tool row's second part).
    ToolResult(ToolResult),
    Image {
        source: ImageSource,
        alt: String,
    },
    Unsupported {
        kind: String,
        raw: Value,
    },
}

/// A path on the page's own origin: `/` then path characters only. Browsers drop tabs and line
/// breaks anywhere in a URL and read `\` as `/`, so `"/\t/evil.example/p.gif"` would load from
/// another site: anything but plain path characters is refused.
/// The gateway's own media routes, the only same-origin images shown without a click:
/// `/media/inbound/<name>` (no query) and `/__openclaw__/assistant-media?source=media://…`.
/// Any other path (or one with another query) is a GET an agent could aim at this origin's
/// API, so it waits for a click like another site's image.
fn is_media_route(url: &str) -> bool {
    if let Some(name) = url.strip_prefix("/media/inbound/") {
        return !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || b"._-".contains(&c));
    }
    if let Some(query) = url.strip_prefix("/__openclaw__/assistant-media?") {
        let mut has_source = false;
        for pair in query.split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "source" => has_source = v.starts_with("media://inbound/") || v.starts_with("media%3A%2F%2Finbound%2F"),
                "sessionKey" => {}
                _ => return false,
            }
        }
        return has_source;
    }
    false
}

fn is_same_origin_path(url: &str) -> bool {
    let b = url.as_bytes();
    b.first() == Some(&b'/')
        && b.get(1).is_some_and(|c| *c != b'/')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"/._~%-+=&?:;,@!$'()*".contains(c))
}

/// Raster image types a `data:` URL may carry (SVG is left out: it is a document).
const INLINE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"];

fn image(part: &Value) -> Part {
    let alt = part.get("alt").or_else(|| part.get("fileName")).and_then(Value::as_str).unwrap_or("").to_string();
    let mime = part.get("mimeType").or_else(|| part.get("mime_type")).and_then(Value::as_str).unwrap_or("").to_ascii_lowercase();
    let url = part
        .get("url")
        .and_then(Value::as_str)
        .or_else(|| part.get("image_url").and_then(|u| u.as_str().or_else(|| u.get("url").and_then(Value::as_str))));
    let source = if let (Some(data), true) = (part.get("data").and_then(Value::as_str), INLINE_TYPES.contains(&mime.as_str())) {
        if data.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')) {
            ImageSource::Inline(format!("data:{mime};base64,{data}"))
        } else {
            ImageSource::Omitted { bytes: None }
        }
    } else if let Some(url) = url {
        let lower = url.to_ascii_lowercase();
        if lower.starts_with("data:") && INLINE_TYPES.iter().any(|t| lower.starts_with(&format!("data:{t};base64,"))) {
            ImageSource::Inline(url.to_string())
        } else if is_same_origin_path(url) && is_media_route(url) {
            ImageSource::SameOrigin(url.to_string())
        } else if is_same_origin_path(url) {
            ImageSource::Remote { url: url.to_string(), host: "this gateway".into() }
        } else if lower.starts_with("https://") || lower.starts_with("http://") {
            ImageSource::Remote { url: url.to_string(), host: crate::url::host_of(url) }
        } else {
            ImageSource::Omitted { bytes: None }
        }
    } else {
        ImageSource::Omitted { bytes: part.get("bytes").and_then(Value::as_u64) }
    };
    Part::Image { source, alt }
}

/// The parts of a message, in order. A string `content` is one text part.
pub fn parts(m: &Value) -> Vec<Part> {
    let content = match m.get("content") {
        Some(Value::String(s)) => return if s.is_empty() { Vec::new() } else { vec![Part::Text(s.clone())] },
        Some(Value::Array(a)) => a,
        Some(Value::Null) | None => return Vec::new(),
        Some(other) => return vec![Part::Unsupported { kind: "content".into(), raw: other.clone() }],
    };
    content
        .iter()
        .map(|p| {
            let kind = p.get("type").and_then(Value::as_str).unwrap_or("");
            match kind {
                "text" | "input_text" | "output_text" => Part::Text(p.get("text").and_then(Value::as_str).unwrap_or("").to_string()),
                "thinking" | "reasoning" | "redacted_thinking" => Part::Thinking {
                    text: p.get("thinking").or_else(|| p.get("text")).and_then(Value::as_str).unwrap_or("").to_string(),
                    redacted: kind == "redacted_thinking" || p.get("redacted") == Some(&Value::Bool(true)),
                },
                kind if is_tool_call_type(kind) => Part::ToolCall {
                    id: p.get("id").and_then(Value::as_str).unwrap_or("").to_string(),
                    name: p.get("name").and_then(Value::as_str).unwrap_or("tool").to_string(),
                    arguments: p.get("arguments").or_else(|| p.get("input")).cloned().unwrap_or(Value::Null),
                    parent: p.get("parentToolCallId").and_then(Value::as_str).map(str::to_string),
                },
                "toolResult" | "tool_result" => Part::ToolResult(result_of(p)),
                "image" | "image_url" | "input_image" => image(p),
                _ => Part::Unsupported { kind: if kind.is_empty() { "untyped".into() } else { kind.to_string() }, raw: p.clone() },
            }
        })
        .collect()
}

/// The spellings of a tool call part that the gateway accepts.
pub fn is_tool_call_type(kind: &str) -> bool {
    matches!(kind, "toolCall" | "toolUse" | "tool_call" | "tool_use" | "tooluse")
}

/// A tool's result, from a row of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub call_id: String,
    pub name: String,
    pub text: String,
    pub is_error: bool,
}

/// Whether a row is a tool result (the spellings the gateway accepts).
pub fn is_tool_result(m: &Value) -> bool {
    matches!(m.get("role").and_then(Value::as_str), Some("toolResult" | "tool" | "tool_result" | "function"))
}

pub fn tool_result(m: &Value) -> Option<ToolResult> {
    is_tool_result(m).then(|| result_of(m))
}

/// A result from a row or part: its `toolCallId`, `toolName`, text content and `isError`.
fn result_of(m: &Value) -> ToolResult {
    let text = parts(m)
        .into_iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    ToolResult {
        call_id: m.get("toolCallId").or_else(|| m.get("tool_call_id")).and_then(Value::as_str).unwrap_or("").to_string(),
        name: m.get("toolName").and_then(Value::as_str).unwrap_or("tool").to_string(),
        text,
        is_error: m.get("isError") == Some(&Value::Bool(true)),
    }
}

/// The results inside a row (a nested tool row carries its call and its result as parts).
pub fn nested_results(m: &Value) -> Vec<ToolResult> {
    parts(m)
        .into_iter()
        .filter_map(|p| match p {
            Part::ToolResult(r) if !r.call_id.is_empty() => Some(r),
            _ => None,
        })
        .collect()
}

/// The tool a call really reaches: OpenClaw's `tool_call {id, args}` calls the tool `id` with
/// `args` (how agents reach `ask_user`, `secrets` and most tools); any other call is itself.
pub fn inner_call(name: &str, arguments: &Value) -> (String, Value) {
    if name == "tool_call"
        && let Some(id) = arguments.get("id").and_then(Value::as_str)
    {
        return (id.to_string(), arguments.get("args").cloned().unwrap_or(Value::Null));
    }
    (name.to_string(), arguments.clone())
}

/// The tool call ids of a page's tool calls (their results are shown with them).
pub fn tool_call_ids(messages: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = messages
        .iter()
        .flat_map(parts)
        .filter_map(|p| match p {
            Part::ToolCall { id, .. } if !id.is_empty() => Some(id),
            _ => None,
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The questions of an `ask_user` call's arguments (the model writes `id`; `questionId` is
/// read too). Questions that are not objects with wording are left out.
pub fn ask_questions(arguments: &Value) -> Vec<Question> {
    let args = match arguments {
        Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
        other => other.clone(),
    };
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    args.get("questions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, q)| q.get("question").and_then(Value::as_str).is_some())
        .map(|(i, q)| Question {
            question_id: q
                .get("id")
                .or_else(|| q.get("questionId"))
                .and_then(Value::as_str)
                .map_or_else(|| format!("q{i}"), str::to_string),
            header: text(q, "header"),
            question: text(q, "question"),
            url: None,
            options: q
                .get("options")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|o| {
                    Some(QuestionOption {
                        label: o.get("label")?.as_str()?.to_string(),
                        description: o.get("description").and_then(Value::as_str).map(str::to_string),
                    })
                })
                .collect(),
            multi_select: q.get("multiSelect").and_then(Value::as_bool),
            is_other: None,
            is_secret: q.get("isSecret").and_then(Value::as_bool),
            secret_store: None,
            secret_store_existing: None,
        })
        .collect()
}

/// How an `ask_user` call ended, read from its result's text: a summary, a blank line, then
/// the JSON of the outcome (the gateway strips the result's `details` on the wire, so the
/// text is the only record history has).
pub fn ask_outcome(result: &ToolResult) -> Outcome {
    if result.is_error {
        return Outcome::Unavailable;
    }
    let json = result
        .text
        .rfind("\n\n{")
        .map(|i| &result.text[i + 2..])
        .or_else(|| result.text.trim_start().starts_with('{').then_some(result.text.trim_start()));
    let outcome: Value = json.and_then(|j| serde_json::from_str(j).ok()).unwrap_or(Value::Null);
    match outcome.get("status").and_then(Value::as_str) {
        Some("answered") => {
            let answers: BTreeMap<String, Vec<String>> = outcome
                .get("answers")
                .and_then(|a| a.get("answers"))
                .and_then(|a| serde_json::from_value(a.clone()).ok())
                .unwrap_or_default();
            Outcome::Answered { answers: QuestionAnswers { answers } }
        }
        Some("no_answer") if result.text.starts_with("No answer arrived") => Outcome::Expired,
        Some("no_answer") => Outcome::Skipped,
        _ => Outcome::Unavailable,
    }
}

/// The summary an `ask_user` call and its result leave, in the dock's own terms, so that a
/// question answered in another browser reads the same as one answered here. `None` while the
/// call has no result yet (the question is still open).
pub fn ask_receipt(call_id: &str, arguments: &Value, result: Option<&ToolResult>, at_ms: f64, session: &str) -> Option<Receipt> {
    let result = result?;
    Some(Receipt {
        id: format!("call:{call_id}"),
        questions: ask_questions(arguments),
        outcome: ask_outcome(result),
        at_ms,
        unsent_text: String::new(),
        unsent_held: false,
        session_key: Some(session.to_string()),
        approval: None,
    })
}

/// A file the gateway saved with a message (`__openclaw.media[]`, OpenClaw 2026.9.6): the
/// files a person sent, kept by the gateway under `media://inbound/<id>` and served by its
/// `/__openclaw__/assistant-media` route.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedMedia {
    /// `media://inbound/<id>`, only when the id is plain (letters, digits, `.`, `_`, `~`, `-`):
    /// anything else is named but never fetched.
    pub source: Option<String>,
    pub image: bool,
    pub file_name: String,
    pub content_type: String,
    pub size: Option<u64>,
}

/// The files saved with a message, in order.
pub fn saved_media(m: &Value) -> Vec<SavedMedia> {
    let Some(list) = m.get("__openclaw").and_then(|o| o.get("media")).and_then(Value::as_array) else { return Vec::new() };
    list.iter()
        .filter(|e| e.is_object())
        .map(|e| {
            let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let url = text("url");
            let source = url
                .strip_prefix("media://inbound/")
                .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._~-".contains(&b)))
                .map(|_| url.clone());
            let content_type = text("contentType").to_ascii_lowercase();
            let image = text("kind") == "image" || (text("kind").is_empty() && INLINE_TYPES.contains(&content_type.as_str()));
            let file_name =
                Some(text("fileName")).filter(|n| !n.is_empty()).unwrap_or_else(|| url.rsplit('/').next().unwrap_or("file").to_string());
            SavedMedia {
                source,
                image: image && INLINE_TYPES.contains(&content_type.as_str()),
                file_name,
                content_type,
                size: e.get("sizeBytes").and_then(Value::as_u64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_saved_with_a_message_are_read_from_openclaw_media() {
        // As the real gateway saved an image and a text file sent with one message.
        let m = serde_json::json!({"role":"user","content":"image + text file","__openclaw":{"media":[
            {"url":"media://inbound/red---f0c09bed-1111-2222-3333-444455556666.png","contentType":"image/png","kind":"image","fileName":"red.png","sizeBytes":73},
            {"url":"media://inbound/note---a0ed00d2-1111-2222-3333-444455556666.txt","contentType":"text/plain","kind":"document","fileName":"note.txt","sizeBytes":30,"hydrationSuppressed":true},
            {"url":"media://inbound/../../etc/passwd","contentType":"image/svg+xml","kind":"image","fileName":"x.svg"},
            "junk"
        ]}});
        let media = saved_media(&m);
        assert_eq!(media.len(), 3);
        assert_eq!(
            media[0],
            SavedMedia {
                source: Some("media://inbound/red---f0c09bed-1111-2222-3333-444455556666.png".into()),
                image: true,
                file_name: "red.png".into(),
                content_type: "image/png".into(),
                size: Some(73)
            }
        );
        assert!(!media[1].image && media[1].source.is_some() && media[1].file_name == "note.txt");
        assert_eq!(media[2].source, None, "a path in the id is never fetched");
        assert!(!media[2].image, "SVG is a document, not an image to show");
        assert!(saved_media(&serde_json::json!({"role":"user","content":"hi"})).is_empty());
    }
    use serde_json::json;

    #[test]
    fn every_part_type_of_a_real_assistant_row_is_read_and_unknown_ones_are_kept() {
        let m = json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Need the deploy target."},
            {"type": "thinking", "thinking": "", "redacted": true},
            {"type": "text", "text": "I need one decision first."},
            {"type": "toolCall", "id": "call_a1", "name": "ask_user", "arguments": {"questions": []}},
            {"type": "image", "mimeType": "image/png", "artifactId": "artifact_x", "omitted": true, "bytes": 48213},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
            {"type": "image_url", "image_url": {"url": "https://cdn.example.net/a.png"}},
            {"type": "image", "url": "/media/inbound/ab12.png"},
            {"type": "canvas", "html": "<b>x</b>"}
        ]});
        assert_eq!(
            parts(&m),
            vec![
                Part::Thinking { text: "Need the deploy target.".into(), redacted: false },
                Part::Thinking { text: "".into(), redacted: true },
                Part::Text("I need one decision first.".into()),
                Part::ToolCall { id: "call_a1".into(), name: "ask_user".into(), arguments: json!({"questions": []}), parent: None },
                Part::Image { source: ImageSource::Omitted { bytes: Some(48213) }, alt: "".into() },
                Part::Image { source: ImageSource::Inline("data:image/png;base64,iVBORw0KGgo=".into()), alt: "".into() },
                Part::Image { source: ImageSource::Omitted { bytes: None }, alt: "".into() },
                Part::Image {
                    source: ImageSource::Remote { url: "https://cdn.example.net/a.png".into(), host: "cdn.example.net".into() },
                    alt: "".into()
                },
                Part::Image { source: ImageSource::SameOrigin("/media/inbound/ab12.png".into()), alt: "".into() },
                Part::Unsupported { kind: "canvas".into(), raw: json!({"type": "canvas", "html": "<b>x</b>"}) },
            ]
        );
        assert_eq!(parts(&json!({"role": "user", "content": "hello"})), vec![Part::Text("hello".into())]);
        assert!(parts(&json!({"role": "user"})).is_empty());
    }

    #[test]
    fn images_never_come_from_a_script_url_or_another_site_by_themselves() {
        for url in [
            "javascript:alert(1)",
            "//evil.example/p.gif",
            "/\t/evil.example/p.gif",
            "/\n/evil.example/p.gif",
            "/\r/evil.example/p.gif",
            "/\\evil.example/p.gif",
            "/ /x",
            "data:text/html;base64,PHNjcmlwdD4=",
            "data:image/svg+xml;base64,PHN2Zz4=",
        ] {
            let p = parts(&json!({"content": [{"type": "image", "url": url}]}));
            assert_eq!(p, vec![Part::Image { source: ImageSource::Omitted { bytes: None }, alt: "".into() }], "{url}");
        }
        let p = parts(&json!({"content": [{"type": "image", "mimeType": "image/png", "data": "\"><script>"}]}));
        assert_eq!(
            p,
            vec![Part::Image { source: ImageSource::Omitted { bytes: None }, alt: "".into() }],
            "bytes that are not base64 are not put in a URL"
        );
    }

    #[test]
    fn only_the_gateways_media_routes_load_from_this_origin_without_a_click() {
        let source = |url: &str| match parts(&json!({"content": [{"type": "image", "url": url}]})).remove(0) {
            Part::Image { source, .. } => source,
            other => panic!("{other:?}"),
        };
        for url in ["/media/inbound/ab12.png", "/__openclaw__/assistant-media?source=media://inbound/ab12&sessionKey=agent:main:main"] {
            assert_eq!(source(url), ImageSource::SameOrigin(url.into()), "{url}");
        }
        for url in [
            "/api/sessions/delete?key=agent:main:main",
            "/media/inbound/ab12.png?logout=1",
            "/__openclaw__/assistant-media?source=media://inbound/ab12&action=delete",
            "/__openclaw__/canvas/x.png",
            "/chat?session=agent:main:other",
        ] {
            assert_eq!(source(url), ImageSource::Remote { url: url.into(), host: "this gateway".into() }, "{url} waits for a click");
        }
    }

    fn result(text: &str, is_error: bool) -> ToolResult {
        ToolResult { call_id: "call_a1".into(), name: "ask_user".into(), text: text.into(), is_error }
    }

    #[test]
    fn an_ask_user_result_says_how_the_question_ended() {
        // The texts as the real gateway writes them (captured live).
        let answered = "Deploy: Staging (Recommended)\nNotify: Email, Slack, Only on weekdays\n\n{\n  \"status\": \"answered\",\n  \"answers\": {\n    \"answers\": {\n      \"deploy_target\": [\n        \"Staging (Recommended)\"\n      ],\n      \"notify\": [\n        \"Email\",\n        \"Slack\",\n        \"Only on weekdays\"\n      ]\n    }\n  }\n}";
        match ask_outcome(&result(answered, false)) {
            Outcome::Answered { answers } => {
                assert_eq!(answers.answers["deploy_target"], vec!["Staging (Recommended)"]);
                assert_eq!(answers.answers["notify"], vec!["Email", "Slack", "Only on weekdays"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            ask_outcome(&result("The question was cancelled; proceed with best judgment.\n\n{\n  \"status\": \"no_answer\"\n}", false)),
            Outcome::Skipped
        );
        assert_eq!(
            ask_outcome(&result("No answer arrived; proceed with best judgment.\n\n{\n  \"status\": \"no_answer\"\n}", false)),
            Outcome::Expired
        );
        assert_eq!(
            ask_outcome(&result(
                "The prompt became visible, but its controls failed to deliver.\n\n{\n  \"status\": \"delivery_failed\"\n}",
                false
            )),
            Outcome::Unavailable
        );
        assert_eq!(ask_outcome(&result("Operation aborted", true)), Outcome::Unavailable);
        assert_eq!(ask_outcome(&result("free text with no JSON", false)), Outcome::Unavailable);
    }

    #[test]
    fn the_questions_of_an_ask_user_call_keep_their_full_wording() {
        let args = json!({"questions": [
            {"id": "deploy_target", "header": "Deploy", "question": "Where should this change be deployed?", "options": [{"label": "Staging (Recommended)", "description": "Safe default"}, {"label": "Production"}]},
            {"id": "notify", "header": "Notify", "question": "Which channels should be notified?", "multiSelect": true, "options": [{"label": "Email"}, {"label": "Slack"}]},
            {"header": "broken"}
        ], "timeoutSeconds": 30});
        let qs = ask_questions(&args);
        assert_eq!(qs.len(), 2);
        assert_eq!(qs[0].question_id, "deploy_target");
        assert_eq!(qs[0].question, "Where should this change be deployed?");
        assert_eq!(qs[0].options[0].description.as_deref(), Some("Safe default"));
        assert_eq!(qs[1].multi_select, Some(true));
        assert_eq!(ask_questions(&json!(args.to_string())), qs, "arguments given as a JSON string read the same");
        let r = result("No answer arrived; proceed with best judgment.\n\n{\"status\":\"no_answer\"}", false);
        let receipt = ask_receipt("call_a1", &args, Some(&r), 5.0, "agent:main:main").unwrap();
        assert_eq!(receipt.outcome, Outcome::Expired);
        assert_eq!(receipt.questions, qs);
        assert!(ask_receipt("call_a1", &args, None, 5.0, "s").is_none(), "no summary while it is open");
    }

    #[test]
    fn tool_results_are_read_from_their_rows() {
        let m = json!({"role": "toolResult", "toolCallId": "call_7", "toolName": "read_file", "content": [{"type": "text", "text": "fn main() {}"}], "isError": false});
        assert_eq!(
            tool_result(&m),
            Some(ToolResult { call_id: "call_7".into(), name: "read_file".into(), text: "fn main() {}".into(), is_error: false })
        );
        assert!(tool_result(&json!({"role": "assistant", "content": "x"})).is_none());
        let page = vec![
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": "b", "name": "x"}, {"type": "toolCall", "id": "a", "name": "y"}]}),
            m,
        ];
        assert_eq!(tool_call_ids(&page), vec!["a".to_string(), "b".to_string()]);
    }
}
