//! `make package`'s tarball, installed with npm as an OpenClaw user installs it, serves a working
//! UI from a real gateway's `gateway.controlUi.root`, and a question from the real `ask_user`
//! tool is answered through it. The package's checksums hold for what npm unpacked.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use e2e::T;
use e2e::browser::Browser;
use e2e::real::RealGateway;
use serde_json::{Value, json};

/// The tarball `make package` (and `make test`, before the e2e tier) wrote.
fn tarball() -> PathBuf {
    let dir = e2e::repo_root().join("target/package");
    let found = std::fs::read_dir(&dir)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "tgz"));
    found.unwrap_or_else(|| panic!("no package in {}: run `make package` (or `make test`, which builds it) first", dir.display()))
}

fn crate_version() -> String {
    let manifest = std::fs::read_to_string(e2e::repo_root().join("Cargo.toml")).unwrap();
    manifest.lines().find_map(|l| l.strip_prefix("version = \"")).and_then(|v| v.strip_suffix('"')).expect("a version").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_npm_package_installs_into_a_real_gateway_and_answers_a_question() {
    // Installed as the package's README says, into a folder of the user's.
    let home = tempfile::tempdir().unwrap();
    let tgz = tarball();
    let out = Command::new("npm")
        .args(["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix"])
        .arg(home.path())
        .arg(&tgz)
        .env("npm_config_cache", home.path().join(".npm"))
        .output()
        .expect("npm runs");
    assert!(out.status.success(), "npm install {} failed:\n{}", tgz.display(), String::from_utf8_lossy(&out.stderr));
    let pkg = home.path().join("node_modules/openclaw-control-ui-rs");
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(pkg.join("package.json")).unwrap()).unwrap();
    assert_eq!(manifest["version"], json!(crate_version()), "the package carries the build's version");
    assert!(tgz.to_string_lossy().ends_with(&format!("openclaw-control-ui-rs-{}.tgz", crate_version())));
    let check = Command::new("sha256sum").args(["-c", "--quiet", "SHA256SUMS"]).current_dir(&pkg).output().unwrap();
    assert!(check.status.success(), "the checksums do not hold:\n{}", String::from_utf8_lossy(&check.stdout));
    let sums = std::fs::read_to_string(pkg.join("SHA256SUMS")).unwrap();
    for file in ["dist/index.html", "dist-ui/index.html", "dist/sw.js"] {
        assert!(sums.lines().any(|l| l.ends_with(&format!("  {file}"))), "{file} is not summed:\n{sums}");
    }
    assert!(std::fs::read_to_string(pkg.join("dist-ui/index.html")).unwrap().contains("/ui/"), "dist-ui is the /ui/ build");

    // Served by the real gateway from the installed `dist/`.
    let dist = pkg.join("dist");
    let gw = tokio::task::spawn_blocking(move || RealGateway::start_serving(&dist, "")).await.unwrap();
    let b = Browser::start().await;
    b.goto(&gw.ui_url()).await;
    b.wait_connected_within(Duration::from_secs(90)).await;
    let mut agent = gw.agent().await;
    let tool = gw.ask_user_via_mcp(&mut agent).await;
    b.wait_text("[data-testid=step-progress]", Duration::from_secs(60), |t| t == "1/2").await;
    b.option("Staging (Recommended)").await.click().await.unwrap();
    b.wait_text("[data-testid=step-progress]", T, |t| t == "2/2").await;
    b.option("Slack").await.click().await.unwrap();
    b.click_button("Submit").await;
    let result = tokio::time::timeout(Duration::from_secs(60), tool).await.expect("ask_user returns").unwrap();
    assert_eq!(result["status"], "answered", "{result}");
    assert_eq!(result["answers"]["answers"]["deploy_target"], json!(["Staging (Recommended)"]), "{result}");
    assert_eq!(result["answers"]["answers"]["notify"], json!(["Slack"]), "{result}");
    let log = b.browser_log().await;
    let csp: Vec<&String> = log.iter().filter(|l| l.contains("Content Security Policy") || l.contains("Refused to")).collect();
    assert!(csp.is_empty(), "CSP violations under the real gateway: {csp:?}");
    b.close().await;
}
