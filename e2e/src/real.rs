//! The real OpenClaw gateway (npm `openclaw@2026.9.6`), installed, started and stopped by the
//! project's `scripts/real-gateway.sh`, serving our UI build from `gateway.controlUi.root`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// Where the real gateway is installed and keeps its state: outside the repo, reused.
pub fn install_dir() -> PathBuf {
    std::env::var("OPENCLAW_REAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/tmp".into())).join(".cache/ocui/openclaw-2026.9.6"))
}

pub const TOKEN: &str = "TEST";

/// A real gateway whose agent runs real turns on the project's scripted model, with the
/// trusted backend client that configured it ([`RealGateway::start_with_scripted_model`]).
pub struct WithScriptedModel {
    pub gw: RealGateway,
    pub model: crate::scripted_model::ScriptedModel,
    pub agent: gateway::client::Client,
}

pub struct RealGateway {
    pub port: u16,
    /// `gateway.controlUi.basePath` ("" at the root).
    pub base_path: String,
    /// This gateway's own directory: its state, config, logs and pid file, with `node/` and
    /// `app/` linked to the shared install. Every gateway has its own, so tests that each start
    /// one can run at the same time, and none sees another's conversations.
    dir: PathBuf,
    _own_dir: tempfile::TempDir,
    _ui_copy: tempfile::TempDir,
}

fn script() -> PathBuf {
    crate::repo_root().join("scripts/real-gateway.sh")
}

fn run(dir: &Path, port: u16, args: &[&str], ui_root: Option<(&Path, &str)>) -> std::process::Output {
    let mut cmd = Command::new("bash");
    cmd.arg(script()).arg(dir).args(args).env("PORT", port.to_string()).env("TOKEN", TOKEN);
    // One V8 code cache for every gateway of every test (Node's compile cache, which openclaw
    // enables; it checks each entry against its source and rejects a stale or cut one): a
    // gateway in a fresh directory then starts in about 12.7 s instead of 15.3 s here.
    cmd.env("NODE_COMPILE_CACHE", install_dir().join("node-compile-cache"));
    // Web Push reaches the tests' push service on loopback (`crate::push_service`), whose
    // certificate only the tests trust.
    cmd.env("NODE_EXTRA_CA_CERTS", crate::push_service::ca_file());
    if let Some((root, base_path)) = ui_root {
        cmd.env("CONTROL_UI_ROOT", root);
        if !base_path.is_empty() {
            cmd.env("CONTROL_UI_BASE_PATH", base_path);
        }
    }
    cmd.output().expect("scripts/real-gateway.sh runs")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            // A copy, never a hard link: the real gateway refuses hard-linked UI files.
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

impl RealGateway {
    /// Installs (once; cached), then starts the real gateway serving a copy of our build.
    pub fn start() -> RealGateway {
        Self::start_serving(&crate::dist_dir(), "")
    }

    /// Starts the real gateway (as [`RealGateway::start`]) with the scripted model as its agent's
    /// model provider.
    pub async fn start_with_scripted_model() -> WithScriptedModel {
        let gw = tokio::task::spawn_blocking(RealGateway::start).await.expect("the real gateway starts");
        let model = crate::scripted_model::ScriptedModel::start().await;
        let mut agent = gw.agent().await;
        gw.use_scripted_model(&mut agent, &model).await;
        WithScriptedModel { gw, model, agent }
    }

    /// Starts the real gateway serving a copy of `dist` under `base_path` ("" for the root,
    /// or e.g. "/ui", for a build made with `--public-url /ui/`).
    pub fn start_serving(dist: &Path, base_path: &str) -> RealGateway {
        let install = install_dir();
        std::fs::create_dir_all(&install).unwrap();
        let port = crate::free_port();
        // One install at a time across every test and every e2e binary (they run in parallel
        // processes): a second install that finds Node half unpacked fails with "Text file
        // busy". Each call opens the file anew, so the lock also orders threads of one binary.
        // The install is skipped when present; `make test-e2e` installs before any test.
        let out = {
            let lock = std::fs::File::create(install.join(".install.lock")).expect("install lock file");
            lock.lock().expect("lock the real gateway's install");
            run(&install, port, &["install"], None)
        };
        assert!(
            out.status.success(),
            "real gateway install failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let own_dir = tempfile::Builder::new().prefix("ocui-real-gateway-").tempdir().unwrap();
        for shared in ["node", "app"] {
            std::os::unix::fs::symlink(install.join(shared), own_dir.path().join(shared)).unwrap();
        }
        let dir = own_dir.path().to_path_buf();
        let ui_copy = tempfile::tempdir().unwrap();
        copy_dir(dist, ui_copy.path());
        let out = run(&dir, port, &["start"], Some((ui_copy.path(), base_path)));
        let gw = RealGateway { port, base_path: base_path.to_string(), dir, _own_dir: own_dir, _ui_copy: ui_copy };
        assert!(
            out.status.success(),
            "real gateway did not start:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        gw
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn ui_url(&self) -> String {
        format!("{}{}/#token={TOKEN}", self.base(), self.base_path)
    }

    /// A trusted backend client (like the real `gateway-client`), retrying while the
    /// gateway is still starting.
    pub async fn agent(&self) -> gateway::client::Client {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(90);
        loop {
            let opts = gateway::client::ClientOptions::backend(
                &format!("ws://127.0.0.1:{}", self.port),
                TOKEN,
                &[protocol::methods::scope::ADMIN],
            );
            match gateway::client::Client::connect(opts).await {
                Ok(c) => return c,
                Err(e) if tokio::time::Instant::now() < deadline => {
                    eprintln!("real gateway not ready yet: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                }
                Err(e) => panic!("cannot connect to the real gateway: {e}"),
            }
        }
    }

    /// Points every run at `model` (a provider that holds each model request until the test
    /// releases it), with `followup` queueing: a message sent while a run is active then waits as
    /// that run's pending input. (The default, `steer`, hands it to the active run instead.)
    /// Applied at once over `config.patch`.
    pub async fn use_model(&self, agent: &mut gateway::client::Client, model: &crate::model_hold::ModelHold) {
        let provider = serde_json::json!({
            "baseUrl": model.base_url(), "apiKey": "e2e", "api": "openai-completions", "timeoutSeconds": 600,
            "models": [{"id": crate::model_hold::MODEL, "name": "Held by the test", "reasoning": false, "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 128000, "maxTokens": 4096}],
        });
        let patch = serde_json::json!({
            "models": {"providers": {"fake": provider}},
            "agents": {"defaults": {"model": {"primary": format!("fake/{}", crate::model_hold::MODEL)}}},
            "messages": {"queue": {"mode": "followup"}},
        });
        config_patch(agent, &patch, None).await;
    }

    /// Points every run at the project's scripted model ([`crate::scripted_model`]) and has host
    /// exec ask a person for commands off the allowlist (`tools.exec.mode: "ask"`), as a person
    /// who set the gateway up for real work would. Applied at once over `config.patch`.
    pub async fn use_scripted_model(&self, agent: &mut gateway::client::Client, model: &crate::scripted_model::ScriptedModel) {
        use crate::scripted_model::{MODEL, PROVIDER};
        let patch = serde_json::json!({
            "models": {"mode": "merge", "providers": {PROVIDER: model.provider_config()}},
            "agents": {"defaults": {"model": {"primary": format!("{PROVIDER}/{MODEL}")}}},
            "tools": {"exec": {"mode": "ask"}},
        });
        config_patch(agent, &patch, None).await;
    }

    /// The agent's workspace, where its commands run (`<state dir>/workspace`).
    pub fn workspace(&self) -> PathBuf {
        let dir = self.dir.join("state/workspace");
        std::fs::create_dir_all(&dir).expect("the agent's workspace");
        dir
    }

    /// Removes the provider [`Self::use_model`] added, so that a run that is still to start (a
    /// queued input's follow-up) fails before it takes its input: the input ends "interrupted".
    pub async fn remove_model(&self, agent: &mut gateway::client::Client) {
        config_patch(agent, &serde_json::json!({"models": {"providers": {"fake": null}}}), Some(&["models.providers.fake.models"])).await;
    }

    /// The last `lines` lines holding `filter` of the gateway's own log (`logs/openclaw.log`) and
    /// its output, for a failure's message.
    pub fn log_tail(&self, lines: usize, filter: &str) -> String {
        let mut out = String::new();
        for f in ["logs/openclaw.log", "gateway.out"] {
            let text = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
            let all: Vec<&str> = text.lines().filter(|l| l.contains(filter)).collect();
            out.push_str(&format!("--- {f}\n{}\n", all[all.len().saturating_sub(lines)..].join("\n")));
        }
        out
    }

    /// Stops the gateway now (the page then finds it unreachable, as in an outage).
    pub fn stop(&self) {
        let out = run(&self.dir, self.port, &["stop"], None);
        assert!(
            out.status.success(),
            "real gateway did not stop:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Rewrites rows saved by `chat.inject` into the shapes a real agent's turn saves (tool
    /// calls, tool results, thinking, images): `patches` is `[{marker, message}]`, see
    /// `e2e/scripts/patch-transcript.mjs`.
    pub fn patch_transcript(&self, patches: &serde_json::Value) {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), patches.to_string()).unwrap();
        let node = self.dir.join("node/package/bin/node");
        let db = self.dir.join("state/agents/main/agent/openclaw-agent.sqlite");
        let out = Command::new(&node)
            .arg(crate::repo_root().join("e2e/scripts/patch-transcript.mjs"))
            .arg(&db)
            .arg(file.path())
            .output()
            .expect("node runs");
        assert!(
            out.status.success(),
            "patching the transcript failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Calls the real `ask_user` tool through the gateway's attach grant and its loopback MCP
    /// server (`attach.grant`, then `initialize`, `tools/list`, `tools/call`), as an attached
    /// coding agent does. The task ends with the tool's result (`{status, answers}`) once the
    /// question is answered, skipped or expired.
    pub async fn ask_user_via_mcp(&self, agent: &mut gateway::client::Client) -> tokio::task::JoinHandle<Value> {
        let grant = agent
            .request("attach.grant", json!({"sessionKey": "main", "ttlMs": 15 * 60 * 1000}))
            .await
            .unwrap_or_else(|e| panic!("attach.grant: {e:?}"));
        let url = grant["mcpConfig"]["mcpServers"]["openclaw"]["url"].as_str().unwrap_or_else(|| panic!("no MCP url: {grant}")).to_string();
        let token = grant["token"].as_str().unwrap_or_else(|| panic!("no MCP token: {grant}")).to_string();
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "the MCP server is on loopback: {url}");
        mcp_call(
            &url,
            &token,
            "initialize",
            json!({"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "ocui-e2e", "version": "0"}}),
        )
        .await;
        let tools = mcp_call(&url, &token, "tools/list", json!({})).await;
        assert!(
            tools["result"]["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "ask_user")),
            "the MCP tools include ask_user: {tools}"
        );
        let questions = json!([
            {"id": "deploy_target", "header": "Deploy", "question": "Where should this change be deployed?",
             "options": [{"label": "Staging (Recommended)", "description": "Safe default"}, {"label": "Production"}]},
            {"id": "notify", "header": "Notify", "question": "Which channels should be notified?", "multiSelect": true,
             "options": [{"label": "Email"}, {"label": "Slack"}, {"label": "Pager", "description": "Only for incidents"}]},
        ]);
        tokio::spawn(async move {
            let r = mcp_call(
                &url,
                &token,
                "tools/call",
                json!({"name": "ask_user", "arguments": {"questions": questions, "timeoutSeconds": 300}}),
            )
            .await;
            // The tool answers in words, then its JSON.
            let text = r["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no ask_user text: {r}")).to_string();
            let at = text.find('{').unwrap_or_else(|| panic!("no JSON in the ask_user result: {text}"));
            serde_json::from_str(&text[at..]).unwrap_or_else(|e| panic!("the ask_user result ({e}): {text}"))
        })
    }
}

/// One JSON-RPC call to the gateway's loopback MCP server. Sent as HTTP/1.0, so the answer is
/// the body up to the close, with no chunks to undo; a long call's answer is padded with
/// keep-alive line breaks, or comes as server-sent events (`data:` lines).
async fn mcp_call(url: &str, token: &str, method: &str, params: Value) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").unwrap_or_else(|| panic!("an http MCP url: {url}"));
    let (host, path) = rest.split_once('/').map(|(h, p)| (h, format!("/{p}"))).unwrap_or((rest, "/".into()));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut socket = tokio::net::TcpStream::connect(host).await.unwrap_or_else(|e| panic!("MCP {host}: {e}"));
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.expect("MCP request sent");
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.expect("MCP answer read");
    let answer = String::from_utf8_lossy(&answer);
    let content = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b).trim();
    let json = if content.starts_with('{') {
        content
    } else {
        content.lines().filter_map(|l| l.strip_prefix("data:")).last().unwrap_or("").trim()
    };
    serde_json::from_str(json).unwrap_or_else(|e| panic!("MCP {method} answered ({e}):\n{answer}"))
}

/// `config.patch` against the gateway's current config (its hash), applied without a restart.
async fn config_patch(agent: &mut gateway::client::Client, patch: &serde_json::Value, replace_paths: Option<&[&str]>) {
    let current = agent.request("config.get", serde_json::json!({})).await.expect("config.get");
    let hash = current["hash"].as_str().unwrap_or_else(|| panic!("config.get names no hash: {current}")).to_string();
    let mut params = serde_json::json!({"raw": patch.to_string(), "baseHash": hash});
    if let Some(paths) = replace_paths {
        params["replacePaths"] = serde_json::json!(paths);
    }
    let done = agent.request("config.patch", params).await.unwrap_or_else(|e| panic!("config.patch {patch}: {e:?}"));
    eprintln!("config.patch changed {}", done["changedPaths"]);
}

impl Drop for RealGateway {
    fn drop(&mut self) {
        // `stop` does not wait for pending work (a question would hold SIGTERM for minutes).
        let out = run(&self.dir, self.port, &["stop"], None);
        if !out.status.success() {
            eprintln!("real gateway stop failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
