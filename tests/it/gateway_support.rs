//! The real `gitward gateway` process, started on port 0 and found through its start-up
//! line, and a small HTTP client that can send what browsers and attackers send.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::common::{Fixture, gitward_bin};

/// A running gateway; killed when dropped.
pub struct Gateway {
    pub child: Child,
    /// `127.0.0.1:PORT` of the handshake listener.
    pub handshake: String,
    /// `127.0.0.1:PORT` of the human listener.
    pub ui: String,
    pub login: String,
    pub stderr: Option<std::process::ChildStderr>,
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// No CORS header, whatever the answer.
    pub fn assert_no_cors(&self) {
        for (k, _) in &self.headers {
            assert!(
                !k.to_ascii_lowercase().starts_with("access-control-"),
                "CORS header {k} on {self:?}"
            );
        }
    }
}

/// The fixture's environment plus `extra`, for the gateway and the CLI.
pub fn command(fixture: &Fixture, args: &[&str], extra: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(gitward_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fixture.env())
        .envs(extra.iter().copied());
    cmd
}

impl Gateway {
    /// Starts `gitward gateway --addr 127.0.0.1:0 --allowed-root <fixture>` plus `args`.
    pub fn start(fixture: &Fixture, args: &[&str], env: &[(&str, &str)]) -> Gateway {
        let root = fixture.root().display().to_string();
        let mut all = vec!["gateway", "--addr", "127.0.0.1:0", "--allowed-root", &root];
        all.extend_from_slice(args);
        let mut child = command(fixture, &all, env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut stderr = child.stderr.take();
        let start: Value = match serde_json::from_str(&line) {
            Ok(start) => start,
            Err(e) => {
                let mut err = String::new();
                if let Some(s) = stderr.as_mut() {
                    let _ = s.read_to_string(&mut err);
                }
                panic!("no start-up line ({e}): {line:?} {err}")
            }
        };
        let ui = start["ui"].as_str().unwrap();
        Gateway {
            handshake: start["handshake"].as_str().unwrap().to_owned(),
            ui: ui
                .trim_start_matches("http://")
                .trim_end_matches('/')
                .to_owned(),
            login: start["login"].as_str().unwrap().to_owned(),
            child,
            stderr,
        }
    }

    /// The one-time token from the login link.
    pub fn login_token(&self) -> String {
        self.login.split_once('#').unwrap().1.to_owned()
    }

    /// Proposes a commit of everything in `repo`.
    pub fn propose_commit(&self, repo: &Path, agent: &str, key: Option<&str>) -> Answer {
        let mut body = json!({
            "agentId": agent,
            "operationType": "commit",
            "repoPath": repo,
            "reason": "save the work",
            "requestedAt": "2026-05-28T11:42:09.512Z",
            "message": "a commit",
            "stageAll": true,
        });
        if let Some(key) = key {
            body["idempotencyKey"] = json!(key);
        }
        self.post_handshake("/v1/mcp/operation/preview/commit", &body)
    }

    pub fn post_handshake(&self, path: &str, body: &Value) -> Answer {
        let host = self.handshake.clone();
        request(
            &self.handshake,
            "POST",
            path,
            &[("Host", &host), ("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
    }

    pub fn get_handshake(&self, path: &str) -> Answer {
        let host = self.handshake.clone();
        request(&self.handshake, "GET", path, &[("Host", &host)], b"")
    }

    /// Logs in with the login link: the session token and the CSRF token.
    pub fn login(&self) -> Session {
        let answer = self.ui_post_raw(
            "/api/login",
            &[("Origin", &format!("http://{}", self.ui))],
            &json!({"token": self.login_token()}),
        );
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(answer.header("set-cookie"), None, "{answer:?}");
        Session {
            token: answer.json()["session"].as_str().unwrap().to_owned(),
            csrf: answer.json()["csrf"].as_str().unwrap().to_owned(),
            ui: self.ui.clone(),
        }
    }

    /// A POST to the human listener with only `headers` (plus Host and Content-Type).
    pub fn ui_post_raw(&self, path: &str, headers: &[(&str, &str)], body: &Value) -> Answer {
        let mut all = vec![
            ("Host", self.ui.as_str()),
            ("Content-Type", "application/json"),
        ];
        all.extend_from_slice(headers);
        request(&self.ui, "POST", path, &all, body.to_string().as_bytes())
    }

    pub fn ui_get_raw(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        let mut all = vec![("Host", self.ui.as_str())];
        all.extend_from_slice(headers);
        request(&self.ui, "GET", path, &all, b"")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the process with SIGKILL and waits for it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A logged-in browser.
#[derive(Clone)]
pub struct Session {
    /// Sent as `X-Gitward-Session`, as the page sends it.
    pub token: String,
    pub csrf: String,
    pub ui: String,
}

impl Session {
    pub fn get(&self, path: &str) -> Answer {
        request(
            &self.ui,
            "GET",
            path,
            &[("Host", &self.ui), ("X-Gitward-Session", &self.token)],
            b"",
        )
    }

    /// A POST as the page makes it: session header, CSRF token, own origin. An approval waits, as
    /// the page's button does, until git's preview is on the card.
    pub fn post(&self, path: &str, body: &Value) -> Answer {
        if let Some(card) = path.strip_suffix("/approve") {
            self.wait_preview(card);
        }
        self.post_now(path, body)
    }

    /// The card at `card_path` once it no longer waits for its preview.
    pub fn wait_preview(&self, card_path: &str) {
        for _ in 0..600 {
            if self.get(card_path).json()["previewPending"] != true {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the preview of {card_path} never came");
    }

    /// Approves `id` once its preview is there, on a gateway set to crash while executing:
    /// no answer is expected, so none is read.
    pub fn approve_into_crash(&self, id: &str) {
        self.wait_preview(&format!("/api/proposals/{id}"));
        let origin = format!("http://{}", self.ui);
        let _ = try_request(
            &self.ui,
            "POST",
            &format!("/api/proposals/{id}/approve"),
            &[
                ("Host", &self.ui),
                ("X-Gitward-Session", &self.token),
                ("X-CSRF-Token", &self.csrf),
                ("Origin", &origin),
                ("Content-Type", "application/json"),
            ],
            br#"{"confirmDestructive":false}"#,
        );
    }

    /// [`Session::post`] without waiting for anything.
    pub fn post_now(&self, path: &str, body: &Value) -> Answer {
        let origin = format!("http://{}", self.ui);
        request(
            &self.ui,
            "POST",
            path,
            &[
                ("Host", &self.ui),
                ("X-Gitward-Session", &self.token),
                ("X-CSRF-Token", &self.csrf),
                ("Origin", &origin),
                ("Content-Type", "application/json"),
            ],
            body.to_string().as_bytes(),
        )
    }
}

/// One HTTP/1.1 request over a fresh connection, written by hand so a test can send any
/// `Host` and `Origin` it likes.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer (413) before reading everything; a reset then is fine.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse(&raw)
}

fn parse(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw);
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// A repository with one commit and an uncommitted change, ready for a commit proposal.
pub fn dirty_repo(fixture: &Fixture, name: &str) -> PathBuf {
    let repo = fixture.init(name, &[]);
    fixture.commit(&repo, "a.txt", "one\n", "first");
    fixture.write(&repo, "a.txt", "two lines\nnow\n");
    repo
}

/// The proposal id of a 202 or 200 answer.
pub fn preview_id(answer: &Answer) -> String {
    assert!(matches!(answer.status, 200 | 202), "{answer:?}");
    answer.json()["previewId"].as_str().unwrap().to_owned()
}

/// [`request`], or `None` when the connection ended without an answer (a crashed server).
pub fn try_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Option<Answer> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).ok()?;
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    (!raw.is_empty()).then(|| parse(&raw))
}
