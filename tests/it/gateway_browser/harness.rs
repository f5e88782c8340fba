//! What the browser tests stand on: a real `gitward gateway` process, Debian's chromium
//! behind its chromedriver, and a WebDriver session on the approval page.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Map, Value, json};

use crate::common::{Fixture, gitward_bin};

/// How long anything the page or the gateway does may take before the test gives up.
/// A bound against hanging, not a speed claim.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running `gitward gateway` on free loopback ports.
pub struct Gateway {
    child: Child,
    /// `127.0.0.1:PORT` of the handshake listener.
    pub handshake: String,
    /// `http://127.0.0.1:PORT/` of the approval page.
    pub ui: String,
    /// The one-time login link.
    pub login: String,
    http: ureq::Agent,
}

impl Gateway {
    /// Starts the gateway with the fixture's root as its allowed root, plus `args`.
    pub fn start(fx: &Fixture, args: &[&str]) -> Gateway {
        let mut cmd = Command::new(gitward_bin());
        cmd.args([
            "gateway",
            "--addr",
            "127.0.0.1:0",
            "--ui-addr",
            "127.0.0.1:0",
        ])
        .arg("--allowed-root")
        .arg(fx.root())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("gitward gateway starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let start: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("start-up line is not JSON ({e}): {line:?}"));
        let text = |k: &str| {
            start[k]
                .as_str()
                .unwrap_or_else(|| panic!("{k} in {start}"))
                .to_owned()
        };
        let http: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(PATIENCE))
            .build()
            .into();
        Gateway {
            child,
            handshake: text("handshake"),
            ui: text("ui"),
            login: text("login"),
            http,
        }
    }

    /// Proposes `operation` through the handshake API, as a sidecar would; returns the
    /// gateway's canonical preview id.
    pub fn propose(&self, operation: &str, repo: &Path, reason: &str, fields: Value) -> String {
        let mut body = Map::new();
        body.insert("agentId".into(), json!("claude-code"));
        body.insert("operationType".into(), json!(operation));
        body.insert("repoPath".into(), json!(repo.display().to_string()));
        body.insert("reason".into(), json!(reason));
        body.insert(
            "requestedAt".into(),
            json!(
                jiff::Timestamp::now()
                    .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
                    .to_string()
            ),
        );
        body.insert(
            "idempotencyKey".into(),
            json!(uuid::Uuid::new_v4().to_string()),
        );
        body.extend(fields.as_object().unwrap().clone());
        let url = format!(
            "http://{}/v1/mcp/operation/preview/{operation}",
            self.handshake
        );
        let (status, answer) = self.send(
            self.http
                .post(&url)
                .header("Content-Type", "application/json")
                .send(Value::Object(body).to_string()),
        );
        assert_eq!(status, 202, "proposal refused: {answer}");
        answer["previewId"].as_str().unwrap().to_owned()
    }

    /// The lifecycle record of `id` from the handshake listener.
    pub fn status(&self, id: &str) -> Value {
        let url = format!("http://{}/v1/mcp/operation/status/{id}", self.handshake);
        let (status, record) = self.send(self.http.get(&url).call());
        assert_eq!(status, 200, "{record}");
        record
    }

    /// Waits until `id` reaches a state where nothing more happens to it.
    pub fn wait_terminal(&self, id: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let record = self.status(id);
            let state = record["status"].as_str().unwrap_or_default();
            if !["pending", "approved", "executing"].contains(&state) {
                return record;
            }
            assert!(Instant::now() < deadline, "{id} still {state}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn send(&self, result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, Value) {
        let mut response = result.expect("the gateway answers");
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// chromium and chromedriver, or `None` (with a note) outside CI when they are missing.
/// Under `CI` a missing browser fails the test: the suite must not pass by skipping.
fn browser_tools() -> Option<(PathBuf, PathBuf)> {
    let chromium = std::env::var_os("GITWARD_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| which::which("chromium").ok());
    let driver = which::which("chromedriver").ok();
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        _ if std::env::var_os("CI").is_some() => {
            panic!("chromium and chromedriver are required under CI (scripts/setup installs them)")
        }
        _ => {
            eprintln!(
                "skipping browser test: chromium or chromedriver not found (scripts/setup installs them)"
            );
            None
        }
    }
}

/// A headless chromium driven over WebDriver, with a fresh profile.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    async fn start(width: u32, height: u32) -> Option<Browser> {
        let (chromium, chromedriver) = browser_tools()?;
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile = tempfile::Builder::new()
            .prefix("gitward-chromium-")
            .tempdir()
            .unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            &format!("--window-size={width},{height}"),
            &format!("--user-data-dir={}", profile.path().display()),
        ];
        let mut caps = Map::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert(
            "goog:chromeOptions".into(),
            json!({"binary": chromium.display().to_string(), "args": args}),
        );
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + PATIENCE;
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(e) => {
                    if Instant::now() > deadline {
                        let _ = driver.kill();
                        panic!("no WebDriver session: {e}");
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        Some(Browser {
            client,
            driver,
            _profile: profile,
        })
    }

    async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Runs `test` against a fresh browser (skipped outside CI without one). The session is
/// closed even when the test panics, so no chromium outlives it.
pub fn with_browser<F, Fut>(test: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    with_browser_sized(1280, 1000, test)
}

/// [`with_browser`] with a window of `width` × `height`.
pub fn with_browser_sized<F, Fut>(width: u32, height: u32, test: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let Some(browser) = Browser::start(width, height).await else {
            return;
        };
        let outcome = tokio::spawn(test(browser.client.clone())).await;
        browser.close().await;
        if let Err(e) = outcome {
            if e.is_panic() {
                std::panic::resume_unwind(e.into_panic());
            }
            panic!("browser test did not finish: {e}");
        }
    });
}

/// The element `css` selects, once it exists.
pub async fn find(client: &Client, css: &str) -> Element {
    match client
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css(css))
        .await
    {
        Ok(el) => el,
        Err(e) => panic!("{css} never appeared ({e}); {}", page_report(client).await),
    }
}

/// The rendered text of every element `css` selects, read in one script so a card the
/// live queue re-renders meanwhile can never leave a stale element behind.
pub async fn texts(client: &Client, css: &str) -> Vec<String> {
    let found = client
        .execute(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText);",
            vec![Value::String(css.to_owned())],
        )
        .await
        .unwrap_or_default();
    found
        .as_array()
        .map(|all| {
            all.iter()
                .map(|t| t.as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// [`texts`] once every element `css` selects shows some text: a card the page just
/// rendered (or showed by switching tabs) can read as empty for a moment.
pub async fn shown_texts(client: &Client, css: &str) -> Vec<String> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let found = texts(client, css).await;
        let shown = !found.is_empty() && found.iter().all(|t| !t.trim().is_empty());
        if shown || Instant::now() > deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The attribute `name` of every element `css` selects, read in one script.
pub async fn attrs(client: &Client, css: &str, name: &str) -> Vec<String> {
    let found = client
        .execute(
            "return [...document.querySelectorAll(arguments[0])]\
             .map(e => e.getAttribute(arguments[1]) ?? '');",
            vec![
                Value::String(css.to_owned()),
                Value::String(name.to_owned()),
            ],
        )
        .await
        .unwrap_or_default();
    serde_json::from_value(found).unwrap_or_default()
}

/// Waits until the first element `css` selects shows `needle`, and returns its text.
pub async fn wait_text(client: &Client, css: &str, needle: &str) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(text) = texts(client, css).await.into_iter().next() {
            if text.contains(needle) {
                return text;
            }
        }
        if Instant::now() > deadline {
            panic!(
                "{css} never showed {needle:?}; {}",
                page_report(client).await
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What the page showed when a test gave up: its text, and a screenshot's path.
async fn page_report(client: &Client) -> String {
    let shot = screenshot(client, "last-failure").await;
    let text = client
        .execute("return document.body.innerText.slice(0, 3000);", vec![])
        .await
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    format!("screenshot {}; page text:\n{text}", shot.display())
}

/// Waits until `css` selects something that is displayed.
pub async fn visible(client: &Client, css: &str) -> Element {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(el) = client.find(Locator::Css(css)).await {
            if el.is_displayed().await.unwrap_or(false) {
                return el;
            }
        }
        if Instant::now() > deadline {
            panic!("{css} never became visible; {}", page_report(client).await);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Where screenshots go: `target/test-artifacts/` (git-ignored with `target/`).
pub fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Saves a screenshot of the page as `target/test-artifacts/<name>.png`.
pub async fn screenshot(client: &Client, name: &str) -> PathBuf {
    let png = client.screenshot().await.unwrap();
    let path = artifacts_dir().join(format!("{name}.png"));
    std::fs::write(&path, png).unwrap();
    path
}
