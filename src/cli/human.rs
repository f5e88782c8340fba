//! How the CLI verbs reach a running gateway: `<runDir>/gateway/ui.json` says where its
//! human listener is, `<runDir>/gateway/cli-token` holds the bearer token of this start
//! (both 0600, written by the gateway). Requests go to loopback only, without proxies or
//! redirects, and name their channel `tty`.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::config;

/// The largest answer read.
const MAX_ANSWER: u64 = 8 * 1024 * 1024;

/// A running gateway's human API.
pub struct HumanApi {
    base: String,
    token: String,
    agent: ureq::Agent,
}

/// A refusal from the gateway: its HTTP status and `{error}` body.
pub struct Refused {
    pub status: u16,
    pub body: Value,
}

impl Refused {
    pub fn message(&self) -> String {
        self.body["error"]["message"]
            .as_str()
            .map_or_else(|| format!("HTTP {}", self.status), str::to_owned)
    }
}

fn gateway_dir() -> Result<PathBuf, String> {
    config::run_dir(&config::Env::read())
        .map(|d| d.join("gateway"))
        .ok_or_else(|| format!("no run directory: set {}", config::vars::RUN_DIR))
}

impl HumanApi {
    /// Finds the gateway this user started last.
    pub fn find() -> Result<HumanApi, String> {
        let dir = gateway_dir()?;
        let not_running = |e: std::io::Error| {
            format!(
                "no gateway found in {} ({e}); start one with `gitward gateway`",
                dir.display()
            )
        };
        let ui = std::fs::read_to_string(dir.join("ui.json")).map_err(not_running)?;
        let token = std::fs::read_to_string(dir.join("cli-token")).map_err(not_running)?;
        let ui: Value = serde_json::from_str(&ui)
            .map_err(|e| format!("{}: {e}", dir.join("ui.json").display()))?;
        let url = ui["ui"].as_str().unwrap_or_default();
        let base = url.trim_end_matches('/').to_owned();
        let authority = base.strip_prefix("http://").unwrap_or_default();
        if crate::gateway::server::run::parse_listen(authority).is_err() {
            return Err(format!("{}: not a loopback address: {url}", dir.display()));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .proxy(None)
            .max_redirects(0)
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Ok(HumanApi {
            base,
            token: token.trim().to_owned(),
            agent,
        })
    }

    fn finish(
        response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Value, Result<Refused, String>> {
        let mut response =
            response.map_err(|e| Err(format!("the gateway does not answer: {e}")))?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_vec()
            .map_err(|e| Err(format!("unreadable answer: {e}")))?;
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            Ok(body)
        } else {
            Err(Ok(Refused { status, body }))
        }
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Result<Value, Result<Refused, String>> {
        let response = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {}", self.token))
            .header("X-Gitward-Channel", "tty")
            .call();
        HumanApi::finish(response)
    }

    /// `POST path` with a JSON body.
    pub fn post(&self, path: &str, body: &Value) -> Result<Value, Result<Refused, String>> {
        let response = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {}", self.token))
            .header("X-Gitward-Channel", "tty")
            .header("Content-Type", "application/json")
            .send(body.to_string());
        HumanApi::finish(response)
    }
}

/// Prints a failed call and gives the exit code.
pub fn fail(verb: &str, error: Result<Refused, String>) -> std::process::ExitCode {
    match error {
        Ok(refused) => eprintln!("gitward {verb}: {}", refused.message()),
        Err(why) => eprintln!("gitward {verb}: {why}"),
    }
    std::process::ExitCode::FAILURE
}

/// How long ago `time` (RFC 3339) was, shortly: `42s`, `5m`, `3h`, `2d`.
pub fn age(time: &str) -> String {
    let Ok(then) = time.parse::<jiff::Timestamp>() else {
        return "?".into();
    };
    let secs = jiff::Timestamp::now().as_second() - then.as_second();
    match secs.max(0) {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}
