//! A `gitward serve --http` child and a raw HTTP/1.1 client for it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Fixture, gitward_bin};

/// A running HTTP server; killed when dropped.
pub(crate) struct HttpServer {
    child: Child,
    /// `127.0.0.1:PORT`, as the server printed it.
    pub addr: String,
}

impl HttpServer {
    /// Starts on a free port.
    pub fn start(fx: &Fixture, args: &[&str], env: &[(String, String)]) -> HttpServer {
        HttpServer::start_at(fx, "127.0.0.1:0", args, env)
    }

    pub fn start_at(
        fx: &Fixture,
        addr: &str,
        args: &[&str],
        env: &[(String, String)],
    ) -> HttpServer {
        let mut child = Command::new(gitward_bin())
            .args(["serve", "--http", addr])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(fx.env())
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("gitward starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let start: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("no start-up line from serve --http: {line:?}"));
        let url = start["http"].as_str().unwrap();
        let addr = url
            .strip_prefix("http://")
            .and_then(|u| u.strip_suffix("/mcp"))
            .unwrap()
            .to_owned();
        HttpServer { child, addr }
    }

    /// The server's process id (its git children are its own children).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A POST sent whole whose answer is left to the caller: the open connection.
    pub fn post_open(&self, path: &str, headers: &[(&str, &str)], body: &str) -> TcpStream {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        let mut stream = self.request("POST", path, &all, body.len());
        stream.write_all(body.as_bytes()).unwrap();
        stream
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A POST of `body` as JSON, accepting JSON and event streams, plus `headers`.
    pub fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        self.send("POST", path, &all, body)
    }

    /// Any request; `Host` is the server's own unless `headers` names one.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut stream = self.request(method, path, headers, body.len());
        stream.write_all(body.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        Reply::parse(&raw)
    }

    /// A POST declaring `len` body bytes and sending none: the server must refuse it
    /// from the headers alone.
    pub fn oversized(&self, path: &str, len: usize) -> Reply {
        let headers = [("Content-Type", "application/json")];
        let mut stream = self.request("POST", path, &headers, len);
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        Reply::parse(&raw)
    }

    /// The status and headers of a response whose body may never end (an event stream).
    pub fn head(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut all = vec![("Accept", "text/event-stream")];
        all.extend_from_slice(headers);
        let stream = self.request(method, path, &all, 0);
        let mut reader = BufReader::new(stream);
        let mut raw = Vec::new();
        loop {
            let mut line = Vec::new();
            if reader.read_until(b'\n', &mut line).unwrap() == 0 || line == b"\r\n" {
                break;
            }
            raw.extend_from_slice(&line);
        }
        raw.extend_from_slice(b"\r\n");
        Reply::parse(&raw)
    }

    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], len: usize) -> TcpStream {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!(
            "Content-Length: {len}\r\nConnection: close\r\n\r\n"
        ));
        stream.write_all(head.as_bytes()).unwrap();
        stream
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status, lower-cased headers, body (de-chunked).
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    fn parse(raw: &[u8]) -> Reply {
        let text = String::from_utf8_lossy(raw);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {text:.200}"));
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let body = if chunked {
            dechunk(body)
        } else {
            body.to_owned()
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// A modern-era (stateless) request body.
pub(crate) fn modern(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": crate::common::MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "gitward-tests", "version": "1.0.0" },
    });
    json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string()
}

/// A 2025-11-25 `initialize` body.
pub(crate) fn init_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "gitward-tests", "version": "1.0.0" },
        },
    })
    .to_string()
}

/// Mints a capability for `descriptor` with the real CLI; returns its token.
pub(crate) fn capability_add(fx: &Fixture, descriptor: &str, addr: &str) -> String {
    let file = fx.path(&format!("descriptor-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&file, descriptor).unwrap();
    let out = fx_cli(
        fx,
        &[
            "capability",
            "add",
            "--workspace",
            file.to_str().unwrap(),
            "--http",
            addr,
        ],
    );
    let line: Value = serde_json::from_str(&out).unwrap();
    let url = line["url"].as_str().unwrap();
    let prefix = format!("http://{addr}/mcp/");
    assert!(url.starts_with(&prefix), "{url}");
    url[prefix.len()..].to_owned()
}

/// Runs a gitward verb with the fixture's environment; returns its stdout.
pub(crate) fn fx_cli(fx: &Fixture, args: &[&str]) -> String {
    let out = Command::new(gitward_bin())
        .args(args)
        .env_clear()
        .envs(fx.env())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gitward {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A workspace with one git repository and a data directory, for the spec tools.
pub(crate) struct SpecWs {
    pub fx: Fixture,
    pub repo: PathBuf,
}

impl SpecWs {
    pub fn new() -> SpecWs {
        let fx = Fixture::new();
        let repo = fx.init("api", &[]);
        fx.commit(&repo, "README.md", "# project\n", "init");
        std::fs::create_dir_all(fx.path("data")).unwrap();
        SpecWs { fx, repo }
    }

    /// A descriptor authorizing the repository as folder `<workspace id>-api`.
    pub fn descriptor(&self, workspace_id: &str) -> String {
        json!({
            "version": 2,
            "workspaceId": workspace_id,
            "workspaceKind": "folder",
            "primaryFolderId": format!("{workspace_id}-api"),
            "folders": [{
                "folderId": format!("{workspace_id}-api"),
                "folderName": "api",
                "folderPath": self.repo,
            }],
            "workspaceDataDir": self.fx.path("data"),
            "sessionId": format!("{workspace_id}-session"),
        })
        .to_string()
    }

    /// What the server needs to run the pinned OpenSpec CLI.
    pub fn env(&self) -> Vec<(String, String)> {
        let cli = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin/openspec");
        vec![("FYLLO_OPENSPEC_CLI_PATH".into(), cli.display().to_string())]
    }

    pub fn fx_cli(&self, args: &[&str]) -> String {
        fx_cli(&self.fx, args)
    }
}
