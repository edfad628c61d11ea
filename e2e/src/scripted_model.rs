//! A scripted OpenAI-compatible model on loopback, owned by the project: the real gateway runs
//! real turns against it (`GET /v1/models`, `POST /v1/chat/completions` with SSE streaming,
//! `tool_calls` and `reasoning_content`). What it answers is decided by the person's last
//! words (`plan`), so a test (or `make bench`) writes the script in the message it sends:
//!
//! | the person writes | the model |
//! |---|---|
//! | `md: <words>` | streams a Markdown reply (heading, list, code) naming the words |
//! | `think: <words>` | streams its reasoning (`reasoning_content`), then a short answer |
//! | `ask: <question>` | calls `ask_user` through `tool_call`, then replies with the tool's result |
//! | `exec: <command>` | calls `exec {command}`, then replies with the tool's result |
//! | `vault: <NAME> <host>` | calls `secrets {action: request}` through `tool_call`, then replies with its result |
//! | `read: <path>` | calls `read {path}`, then replies with the tool's result |
//! | `list: <words>` | calls `agents_list` through `tool_call`, then replies with its result |
//! | `spawn: <script>` | starts a sub-agent (`sessions_spawn` through `tool_call`) whose task is `<script>` |
//! | `stream: <words>` | streams one numbered chunk every 150 ms for up to 3 minutes (Stop ends it) |
//! | `hold: <gate> <words>` | streams a first chunk, waits until the test opens `<gate>`, then finishes |
//! | anything else | `Echo: <words>` |
//!
//! The gateway wraps the person's words (a timestamp prefix, a `Runtime:` suffix, an internal
//! context message after them, a `Conversation info` envelope on queued follow-ups):
//! `person_words` takes them out. A continuation of the same run (the model is called again
//! with the tool's result) is the next step of the same script.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

/// The model id the provider serves (`scripted/scripted` to the gateway).
pub const MODEL: &str = "scripted";
/// The provider id it is configured under.
pub const PROVIDER: &str = "scripted";
/// The provider's second model (the same script).
pub const SECOND_MODEL: &str = "scripted-careful";

/// A tool call the model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub arguments: Value,
}

/// One model response, as a script decides it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// Reasoning chunks (`delta.reasoning_content`), streamed first.
    pub reasoning: Vec<String>,
    /// Text chunks (`delta.content`).
    pub text: Vec<String>,
    /// Pause before each chunk.
    pub chunk_delay: Duration,
    /// After the first text chunk, wait until the test opens this gate.
    pub gate: Option<String>,
    /// Tool calls (`finish_reason: "tool_calls"`).
    pub tool_calls: Vec<ToolCall>,
}

/// The person's words from a message the gateway wrapped, or `None` for a message that is not
/// the person's (the gateway's internal context).
pub fn person_words(raw: &str) -> Option<String> {
    let text = raw.trim();
    if text.starts_with("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>") {
        return None;
    }
    // A sub-agent's task (`sessions_spawn`): `[Subagent Context] …\n\n[Subagent Task]\n\n<task>\n\n
    // Begin. Execute the assigned task to completion.`; the task is its script.
    if let Some((_, task)) = text.split_once("[Subagent Task]\n\n") {
        let task = task.split_once("\n\nBegin. Execute the assigned task to completion.").map_or(task, |(t, _)| t);
        return Some(task.trim().to_string());
    }
    // `[Sat 2026-12-05 19:20 UTC] <words>\n\nRuntime: agent=… | session=…`
    let text = match text.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((_, rest)) => rest,
        None => text,
    };
    // A Control UI's message (and a follow-up queued while a run streamed) comes in an envelope:
    // `Conversation info: …```json … ```\n\n<words>`.
    let text = match text.strip_prefix("Conversation info:") {
        Some(rest) => rest.split_once("```json").and_then(|(_, r)| r.split_once("```")).map_or(rest, |(_, after)| after),
        None => text,
    };
    let text = match text.rfind("\n\nRuntime:") {
        Some(i) => &text[..i],
        None => text,
    };
    Some(text.trim().to_string())
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The person's last words in a chat completion request, and how many model turns of this
/// run came after them (0: the run's first call; 1: called again with a tool's result).
pub fn last_words(request: &Value) -> (String, usize, String) {
    let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut step = 0;
    let mut tool_result = String::new();
    for m in messages.iter().rev() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        match role {
            "assistant" => step += 1,
            "tool" if step == 0 && tool_result.is_empty() => tool_result = content_text(m.get("content").unwrap_or(&Value::Null)),
            "user" => {
                if let Some(words) = person_words(&content_text(m.get("content").unwrap_or(&Value::Null))) {
                    return (words, step, tool_result);
                }
            }
            _ => {}
        }
    }
    (String::new(), step, tool_result)
}

fn chunks(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size.max(1)).map(|c| c.iter().collect()).collect()
}

/// The most of a tool's result the reply repeats (a command that printed 20,000 lines is
/// summed up, not streamed back word by word).
const REPLY_MAX_CHARS: usize = 2000;

fn reply_with_result(tool_result: &str) -> Reply {
    // One line: the tool's JSON result flattened, so the reply stays readable.
    let flat = tool_result.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = match flat.char_indices().nth(REPLY_MAX_CHARS) {
        Some((cut, _)) => format!("The tool returned: {}… ({} lines in all)", &flat[..cut], tool_result.lines().count()),
        None => format!("The tool returned: {flat}"),
    };
    Reply { text: chunks(&text, 40), chunk_delay: Duration::from_millis(20), ..Reply::default() }
}

fn via_tool_call(id: &str, args: Value) -> ToolCall {
    ToolCall { name: "tool_call".into(), arguments: json!({"id": id, "args": args}) }
}

/// What the model answers to a request (pure: the script).
pub fn plan(request: &Value) -> Reply {
    let (words, step, tool_result) = last_words(request);
    let (verb, rest) = words.split_once(':').map_or(("", words.as_str()), |(v, r)| (v.trim(), r.trim()));
    let tool = |preamble: &str, call: ToolCall| Reply { text: vec![preamble.to_string()], tool_calls: vec![call], ..Reply::default() };
    match (verb, step) {
        ("md", _) => Reply {
            text: chunks(
                &format!(
                    "## Plan for {rest}\n\nHere is what I found:\n\n- **first**: the build passes\n- *second*: `cargo test` is green\n\n```sh\necho {rest}\n```\n\nDone with {rest}."
                ),
                12,
            ),
            chunk_delay: Duration::from_millis(40),
            ..Reply::default()
        },
        ("think", _) => Reply {
            reasoning: chunks(&format!("Let me weigh {rest} carefully. First the inputs, then the risk."), 10),
            text: chunks(&format!("After thinking: {rest} is fine."), 10),
            chunk_delay: Duration::from_millis(40),
            ..Reply::default()
        },
        ("ask", 0) => tool(
            "I need one decision from you.",
            via_tool_call(
                "ask_user",
                json!({"questions": [{"id": "target", "header": "Target", "question": rest,
                    "options": [{"label": "Staging", "description": "Safe default"}, {"label": "Production"}]}]}),
            ),
        ),
        ("exec", 0) => tool("Running it.", ToolCall { name: "exec".into(), arguments: json!({"command": rest}) }),
        ("read", 0) => tool("Reading it.", ToolCall { name: "read".into(), arguments: json!({"path": rest}) }),
        ("list", 0) => tool("Listing the agents.", via_tool_call("agents_list", json!({}))),
        // A sub-agent whose task is the rest, which is itself a script (`spawn: stream: job-1`).
        ("spawn", 0) => {
            tool("Starting a helper.", via_tool_call("sessions_spawn", json!({"task": rest, "label": format!("helper for {rest}")})))
        }
        ("vault", 0) => {
            let (name, host) = rest.split_once(' ').unwrap_or((rest, "api.demo.invalid"));
            tool(
                "I need a credential for this.",
                via_tool_call(
                    "secrets",
                    json!({"action": "request", "name": name, "reason": "To call the demo API on your behalf", "allowedHosts": [host.trim()]}),
                ),
            )
        }
        ("ask" | "exec" | "read" | "vault" | "list" | "spawn", _) => reply_with_result(&tool_result),
        ("stream", _) => Reply {
            text: (1..=1200).map(|i| format!("chunk {i} of {rest}. ")).collect(),
            chunk_delay: Duration::from_millis(150),
            ..Reply::default()
        },
        ("hold", _) => {
            let (gate, words) = rest.split_once(' ').unwrap_or((rest, ""));
            Reply {
                text: vec![format!("Working on {words}… "), format!("finished {words}.")],
                gate: Some(gate.to_string()),
                ..Reply::default()
            }
        }
        _ => Reply { text: vec![format!("Echo: {words}")], ..Reply::default() },
    }
}

#[derive(Clone)]
struct Shared {
    gates: watch::Sender<HashSet<String>>,
    /// Numbers each response's id.
    calls: Arc<AtomicUsize>,
}

/// The running model server; dropped, it stops.
pub struct ScriptedModel {
    pub port: u16,
    shared: Shared,
    server: tokio::task::JoinHandle<()>,
}

impl ScriptedModel {
    /// Starts on a free loopback port (or `port`, when not 0).
    pub async fn start_on(port: u16) -> ScriptedModel {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind the scripted model");
        let port = listener.local_addr().unwrap().port();
        let shared = Shared { gates: watch::channel(HashSet::new()).0, calls: Arc::new(AtomicUsize::new(0)) };
        let app = Router::new()
            .route("/v1/models", get(models))
            .route("/v1/chat/completions", post(completions))
            .fallback(|| async { (StatusCode::NOT_FOUND, r#"{"error":{"message":"no such route"}}"#) })
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ScriptedModel { port, shared, server }
    }

    pub async fn start() -> ScriptedModel {
        Self::start_on(0).await
    }

    /// The `baseUrl` to configure.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Lets every reply waiting at `gate` (and every later one) finish.
    pub fn open_gate(&self, gate: &str) {
        self.shared.gates.send_modify(|g| {
            g.insert(gate.to_string());
        });
    }

    /// The provider entry for `models.providers.<PROVIDER>` in the gateway's config.
    pub fn provider_config(&self) -> Value {
        json!({
            "baseUrl": self.base_url(), "apiKey": "scripted", "api": "openai-completions", "timeoutSeconds": 60,
            "models": [{"id": MODEL, "name": "Scripted", "reasoning": true, "input": ["text", "image"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 128000, "maxTokens": 4096},
                // A second model, so a conversation can change models: the script answers both.
                {"id": SECOND_MODEL, "name": "Scripted careful", "reasoning": true, "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 64000, "maxTokens": 4096}],
        })
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn models() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": PROVIDER},
            {"id": SECOND_MODEL, "object": "model", "created": 0, "owned_by": PROVIDER}]})
        .to_string(),
    )
}

fn chunk(id: &str, delta: Value, finish: Option<&str>) -> Bytes {
    let body = json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    Bytes::from(format!("data: {body}\n\n"))
}

async fn completions(State(shared): State<Shared>, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, r#"{"error":{"message":"the body is not JSON","type":"invalid_request_error"}}"#).into_response();
    };
    let reply = plan(&request);
    let n = shared.calls.fetch_add(1, Ordering::SeqCst) + 1;
    let id = format!("chatcmpl-{n}");
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    let mut gates = shared.gates.subscribe();
    tokio::spawn(async move {
        // A send fails once the gateway closed the response (a Stop): the script ends there.
        let send = |b: Bytes| {
            let tx = tx.clone();
            async move { tx.send(Ok(b)).await.is_ok() }
        };
        if !send(chunk(&id, json!({"role": "assistant", "content": ""}), None)).await {
            return;
        }
        for r in &reply.reasoning {
            tokio::time::sleep(reply.chunk_delay).await;
            if !send(chunk(&id, json!({"reasoning_content": r}), None)).await {
                return;
            }
        }
        for (i, t) in reply.text.iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(reply.chunk_delay).await;
            }
            if i == 1
                && let Some(gate) = &reply.gate
                && gates.wait_for(|g| g.contains(gate)).await.is_err()
            {
                return;
            }
            if !send(chunk(&id, json!({"content": t}), None)).await {
                return;
            }
        }
        for (i, call) in reply.tool_calls.iter().enumerate() {
            let delta = json!({"tool_calls": [{"index": i, "id": format!("call_{n}_{i}"), "type": "function",
                "function": {"name": call.name, "arguments": call.arguments.to_string()}}]});
            if !send(chunk(&id, delta, None)).await {
                return;
            }
        }
        let finish = if reply.tool_calls.is_empty() { "stop" } else { "tool_calls" };
        if !send(chunk(&id, json!({}), Some(finish))).await {
            return;
        }
        let usage = json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": MODEL, "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}});
        let _ = send(Bytes::from(format!("data: {usage}\n\n"))).await;
        let _ = send(Bytes::from_static(b"data: [DONE]\n\n")).await;
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_persons_words_are_taken_out_of_the_gateways_wrapping() {
        assert_eq!(
            person_words("[Sat 2026-12-05 19:20 UTC] ask: Which target?\n\nRuntime: agent=main | session=agent:main:main").as_deref(),
            Some("ask: Which target?")
        );
        assert_eq!(person_words("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nstuff"), None);
        assert_eq!(
            person_words("Conversation info: ⟦openclaw:ctx⟧\n```json\n{\"a\": 1}\n```\n\nmd: second").as_deref(),
            Some("md: second")
        );
        // As a Control UI's message reaches the model (captured from the real gateway).
        let ui = "[Sat 2026-12-05 19:40 UTC] Conversation info: ⟦openclaw:ctx⟧\n```json\n{\"sender\":{\"id\":\"gateway-owner\"}}\n```\n\nmd: probe\n\nRuntime: agent=main | session=agent:main:main | channel=webchat";
        assert_eq!(person_words(ui).as_deref(), Some("md: probe"));
        // A sub-agent's task, as the real gateway hands it to the child run.
        let child = "[Subagent Context] You are running as a subagent (depth 1/5).\n\n[Subagent Task]\n\nstream: job-1\n\nBegin. Execute the assigned task to completion.";
        assert_eq!(person_words(child).as_deref(), Some("stream: job-1"));
    }

    #[test]
    fn a_tool_script_calls_the_tool_first_and_replies_with_its_result_after() {
        let first = json!({"messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "[Sat 2026-12-05 19:20 UTC] exec: sh demo.sh x\n\nRuntime: agent=main"},
            {"role": "user", "content": "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>> ctx"},
        ]});
        let r = plan(&first);
        assert_eq!(r.tool_calls, vec![ToolCall { name: "exec".into(), arguments: json!({"command": "sh demo.sh x"}) }]);
        let second = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "exec: sh demo.sh x"}]},
            {"role": "assistant", "content": "Running it.", "tool_calls": []},
            {"role": "tool", "tool_call_id": "call_1_0", "content": "ok-42\n"},
        ]});
        let r = plan(&second);
        assert!(r.tool_calls.is_empty());
        assert_eq!(r.text.concat(), "The tool returned: ok-42");
    }

    #[test]
    fn a_long_result_is_summed_up() {
        let long: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let r = reply_with_result(&long);
        let text = r.text.concat();
        assert!(text.starts_with("The tool returned: line 0 line 1"));
        assert!(text.ends_with("(20000 lines in all)"), "{}", &text[text.len() - 40..]);
        assert!(text.len() < 2100);
    }

    #[test]
    fn unknown_words_are_echoed() {
        let r = plan(&json!({"messages": [{"role": "user", "content": "hello there"}]}));
        assert_eq!(r.text, vec!["Echo: hello there".to_string()]);
    }
}
