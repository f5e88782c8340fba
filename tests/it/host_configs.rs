//! The README's drop-in host configurations, checked: each snippet marked
//! `<!-- host-config: HOST stdio|http -->` is parsed as its host reads it, and gitward is
//! started with exactly its command, arguments and environment (the placeholder paths
//! swapped for the fixture's), or its URL is connected to on a running `serve --http`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{Fixture, gitward_bin};
use crate::http::{HttpServer, init_body};
use crate::interop::fixture_repo;

const BINARY: &str = "/absolute/path/to/gitward";
const ROOTS: &str = "/home/me/src";
const URL: &str = "http://127.0.0.1:8765/mcp";
/// How each host lets a project file name the URL without holding it.
const URL_VARIABLES: [&str; 3] = [
    "${GITWARD_MCP_URL}",
    "${env:GITWARD_MCP_URL}",
    "${input:gitward-url}",
];

struct Snippet {
    host: String,
    transport: String,
    lang: String,
    text: String,
}

fn snippets() -> Vec<Snippet> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(marker) = line
            .strip_prefix("<!-- host-config: ")
            .and_then(|l| l.strip_suffix(" -->"))
        else {
            continue;
        };
        let (host, transport) = marker.split_once(' ').expect("HOST TRANSPORT");
        let fence = lines.next().expect("a fenced block after the marker");
        let lang = fence.strip_prefix("```").expect("a fence").to_owned();
        let text: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        out.push(Snippet {
            host: host.to_owned(),
            transport: transport.to_owned(),
            lang,
            text: text.join("\n"),
        });
    }
    out
}

/// What a host starts, or where it connects.
#[derive(Debug)]
enum Launch {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
    },
}

/// Reads a snippet the way its host does.
fn launch(snippet: &Snippet) -> Launch {
    let entry = match snippet.lang.as_str() {
        "json" => {
            let doc: Value = serde_json::from_str(&snippet.text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", snippet.host));
            let key = match snippet.host.as_str() {
                "vscode" => "servers",
                "zed" => "context_servers",
                _ => "mcpServers",
            };
            doc[key]["gitward"].clone()
        }
        "toml" => {
            let out = Command::new("python3")
                .args([
                    "-c",
                    "import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))",
                ])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    child
                        .stdin
                        .take()
                        .unwrap()
                        .write_all(snippet.text.as_bytes())?;
                    child.wait_with_output()
                })
                .expect("python3 reads TOML");
            assert!(out.status.success(), "{}: not TOML", snippet.host);
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            doc["mcp_servers"]["gitward"].clone()
        }
        "sh" => return claude_mcp_add(&snippet.text),
        other => panic!("{}: unexpected block {other}", snippet.host),
    };
    assert!(entry.is_object(), "{}: no gitward entry", snippet.host);
    if let Some(url) = entry
        .get("url")
        .or_else(|| entry.get("serverUrl"))
        .and_then(Value::as_str)
    {
        return Launch::Http {
            url: url.to_owned(),
        };
    }
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    Launch::Stdio {
        command: text(&entry["command"]),
        args: entry["args"]
            .as_array()
            .map(|a| a.iter().map(text).collect())
            .unwrap_or_default(),
        env: entry["env"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), text(v))).collect())
            .unwrap_or_default(),
    }
}

/// `claude mcp add [--transport T] [--scope S] [--env K=V]... NAME (URL | -- CMD ARGS...)`.
fn claude_mcp_add(line: &str) -> Launch {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&words[..3], ["claude", "mcp", "add"], "{line}");
    let mut env = BTreeMap::new();
    let mut transport = "stdio";
    let mut rest = words[3..].iter();
    let mut positional = Vec::new();
    while let Some(word) = rest.next() {
        match *word {
            "--transport" => transport = rest.next().unwrap(),
            "--scope" => {
                rest.next();
            }
            "--env" => {
                let (k, v) = rest.next().unwrap().split_once('=').unwrap();
                env.insert(k.to_owned(), v.to_owned());
            }
            "--" => {
                let command: Vec<String> = rest.by_ref().map(|w| (*w).to_owned()).collect();
                return Launch::Stdio {
                    command: command[0].clone(),
                    args: command[1..].to_vec(),
                    env,
                };
            }
            other => positional.push(other),
        }
    }
    assert_eq!(transport, "http", "{line}");
    assert_eq!(positional[0], "gitward", "{line}");
    Launch::Http {
        url: positional[1].to_owned(),
    }
}

/// Starts exactly what the snippet says, placeholders swapped, and holds a conversation:
/// `initialize`, `tools/list`, a call.
fn run_stdio(
    fx: &Fixture,
    repo: &std::path::Path,
    host: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
) {
    assert_eq!(command, BINARY, "{host}: the command is the binary");
    let root = fx.root().display().to_string();
    let mut cmd = Command::new(gitward_bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v.replace(ROOTS, &root));
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |id: u64, method: &str, params: Value| -> Value {
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(stdin, "{line}").unwrap();
        let mut reply = String::new();
        stdout.read_line(&mut reply).unwrap();
        serde_json::from_str(&reply).unwrap_or_else(|_| panic!("{host}: {reply:?}"))
    };
    let init = ask(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": host, "version": "1" } }),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "gitward", "{host}");
    let list = ask(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{host}: {list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"repo_status"), "{host}: {names:?}");
    let call = ask(
        3,
        "tools/call",
        json!({ "name": "repo_status", "arguments": { "repoPath": repo } }),
    );
    assert_eq!(call["result"]["isError"], false, "{host}: {call}");
    let _ = child.kill();
    let _ = child.wait();
}

/// Connects to the snippet's URL on a running server: the host's variable stands for the
/// URL, and the port is the running server's.
fn run_http(http: &HttpServer, host: &str, url: &str) {
    let url = URL_VARIABLES
        .iter()
        .fold(url.to_owned(), |u, var| u.replace(var, URL));
    let path = url
        .strip_prefix("http://127.0.0.1:8765")
        .unwrap_or_else(|| panic!("{host}: {url} is not the documented address"));
    let init = http.post(path, &[], &init_body());
    assert_eq!(init.status, 200, "{host}: {}", init.body);
    assert!(init.header("mcp-session-id").is_some(), "{host}");
}

/// What each install form puts in a host's configuration to start gitward.
fn installed_launcher(form: &str) -> Vec<&'static str> {
    match form {
        "install-uvx" => vec!["uvx", "gitward"],
        "install-npx" => vec!["npx", "-y", "gitward"],
        "install-cargo" => vec!["gitward"],
        other => panic!("unknown install form {other}"),
    }
}

#[test]
fn every_readme_host_config_starts_or_reaches_gitward() {
    let snippets = snippets();
    let hosts = [
        "claude-code-cli",
        "claude-code-json",
        "claude-desktop",
        "cursor",
        "vscode",
        "codex",
        "zed",
        "windsurf",
    ];
    for host in hosts {
        for transport in ["stdio", "http"] {
            assert!(
                snippets
                    .iter()
                    .any(|s| s.host == host && s.transport == transport),
                "the README has no {transport} config for {host}"
            );
        }
    }
    for form in ["install-uvx", "install-npx", "install-cargo"] {
        assert!(
            snippets.iter().any(|s| s.transport == form),
            "the README has no host config for {form}"
        );
    }
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let http = HttpServer::start(&fx, &[], &[]);
    for snippet in &snippets {
        let host = format!("{} {}", snippet.host, snippet.transport);
        match (launch(snippet), snippet.transport.as_str()) {
            (Launch::Stdio { command, args, env }, "stdio") => {
                run_stdio(&fx, &repo, &host, &command, &args, &env)
            }
            (Launch::Http { url }, "http") => run_http(&http, &host, &url),
            // The README's one-line installs: the documented launcher, then the binary it
            // runs with the rest of the entry (scripts/test-install runs each launcher on
            // its installed package).
            (Launch::Stdio { command, args, env }, install) if install.starts_with("install-") => {
                let launcher = installed_launcher(install);
                let given: Vec<&str> = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect();
                assert_eq!(given[..launcher.len()], launcher[..], "{host}");
                let rest = args[launcher.len() - 1..].to_vec();
                run_stdio(&fx, &repo, &host, BINARY, &rest, &env)
            }
            // The bridge a host without HTTP runs: its last argument is the URL.
            (Launch::Stdio { command, args, .. }, "http") if command == "npx" => {
                assert_eq!(args[..2], ["-y", "mcp-remote"], "{host}");
                run_http(&http, &host, args.last().unwrap());
            }
            (other, _) => panic!("{host}: {other:?}"),
        }
    }
}
