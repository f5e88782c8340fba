//! Shared test machinery: hermetic git fixtures, a stdio MCP client for the real binary,
//! and snapshot redaction.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

mod refused;
pub mod registry;
pub mod second_user;
mod snapshot;

pub use refused::assert_refused;
pub use snapshot::Redact;

/// The binary under test.
pub fn gitward_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gitward"))
}

/// Writes an executable script that no process of this test binary ever holds open for
/// writing. A write descriptor here can leak, for the instant between fork and exec, into
/// a child another test thread is spawning, and exec of the script then fails with
/// "Text file busy"; `install` writes the file in a process of its own instead.
pub fn write_executable(path: &Path, text: &str) {
    let name = path.file_name().expect("a file name").to_string_lossy();
    let staging = path.with_file_name(format!(".{name}.staging"));
    std::fs::create_dir_all(path.parent().expect("a parent")).unwrap();
    std::fs::write(&staging, text).unwrap();
    copy_executable(&staging, path);
    std::fs::remove_file(&staging).unwrap();
}

/// Copies an executable the way [`write_executable`] writes one.
pub fn copy_executable(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().expect("a parent")).unwrap();
    let status = Command::new("install")
        .args(["-m", "0755", "--"])
        .args([from, to])
        .status()
        .expect("install runs");
    assert!(
        status.success(),
        "install {} {}",
        from.display(),
        to.display()
    );
}

/// A temporary world: a home with its own git config, and room for repositories.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    clock: AtomicU64,
}

/// First commit time of every fixture (2026-01-01T00:00:00Z); each commit adds a minute.
const EPOCH: u64 = 1_767_225_600;

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("gitward-test-")
            .tempdir()
            .unwrap();
        let fixture = Fixture {
            dir,
            clock: AtomicU64::new(EPOCH),
        };
        std::fs::create_dir_all(fixture.home()).unwrap();
        std::fs::create_dir_all(fixture.run_dir()).unwrap();
        std::fs::write(
            fixture.home().join(".gitconfig"),
            "[user]\n\tname = Test Author\n\temail = author@example.com\n\
             [init]\n\tdefaultBranch = main\n\
             [commit]\n\tgpgsign = false\n\
             [tag]\n\tgpgsign = false\n\
             [core]\n\tautocrlf = false\n\
             [protocol \"file\"]\n\tallow = always\n\
             [advice]\n\tdetachedHead = false\n",
        )
        .unwrap();
        fixture
    }

    /// The canonical temporary root (symlinks resolved, as gitward reports paths).
    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    pub fn run_dir(&self) -> PathBuf {
        self.root().join("run")
    }

    /// The environment both git and gitward see in tests.
    pub fn env(&self) -> Vec<(String, String)> {
        let home = self.home();
        vec![
            ("HOME".into(), home.display().to_string()),
            (
                "GIT_CONFIG_GLOBAL".into(),
                home.join(".gitconfig").display().to_string(),
            ),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            (
                "FLUXGIT_RUN_DIR".into(),
                self.run_dir().display().to_string(),
            ),
            ("LC_ALL".into(), "C".into()),
            ("TZ".into(), "UTC".into()),
        ]
    }

    /// A path under the fixture root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// Runs git in `dir` with fixed dates; panics on failure. Returns trimmed stdout.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_output(dir, args);
        assert!(
            out.status.success(),
            "git {args:?} failed in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
    }

    /// Runs git and returns its raw output, success or not.
    pub fn git_output(&self, dir: &Path, args: &[&str]) -> std::process::Output {
        let when = self.clock.fetch_add(60, Ordering::SeqCst);
        let date = format!("{when} +0000");
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .stdin(Stdio::null());
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// `git init` a new repository at `rel` (extra init flags allowed).
    pub fn init(&self, rel: &str, flags: &[&str]) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(&path).unwrap();
        let mut args = vec!["init", "-q"];
        args.extend_from_slice(flags);
        self.git(&path, &args);
        path
    }

    /// Clones `src` to `rel` under the fixture root (`--bare` when asked); returns the path.
    pub fn clone(&self, src: &Path, rel: &str, bare: bool) -> PathBuf {
        let dest = self.path(rel);
        let mut args = vec!["clone", "-q"];
        if bare {
            args.push("--bare");
        }
        args.extend([src.to_str().unwrap(), dest.to_str().unwrap()]);
        self.git(&self.root(), &args);
        dest
    }

    /// Writes a file (creating directories) relative to `repo`.
    pub fn write(&self, repo: &Path, rel: &str, content: &str) {
        let file = repo.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, content).unwrap();
    }

    /// Writes `rel`, stages everything and commits; returns the new commit id.
    pub fn commit(&self, repo: &Path, rel: &str, content: &str, message: &str) -> String {
        self.write(repo, rel, content);
        self.git(repo, &["add", "-A"]);
        self.git(repo, &["commit", "-q", "-m", message]);
        self.git(repo, &["rev-parse", "HEAD"])
    }

    /// A workspace descriptor file for the spec tools (pass it as `--workspace`): `dir`
    /// as its one folder, id `ws`. Spec tools are served only with a descriptor.
    pub fn workspace_file(&self, dir: &Path) -> String {
        let data = self.path("workspace-data");
        std::fs::create_dir_all(&data).unwrap();
        let descriptor = json!({
            "version": 2, "workspaceId": "ws", "workspaceKind": "folder", "primaryFolderId": "ws",
            "folders": [{ "folderId": "ws", "folderName": "ws", "folderPath": dir }],
            "workspaceDataDir": data,
        });
        let file = self.path("workspace.json");
        std::fs::write(&file, descriptor.to_string()).unwrap();
        file.display().to_string()
    }

    /// Starts the server with this fixture's environment plus `env`.
    pub fn server(&self, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start(self, args, env)
    }

    /// One tool call through a fresh server; returns the structured result.
    pub fn call(&self, tool: &str, args: Value) -> Value {
        self.server(&[], &[]).call(tool, args)
    }

    /// Replaces what changes between runs (temp paths, object ids, times) with stable markers.
    pub fn redact(&self, value: &Value) -> Value {
        let root = self.root().display().to_string();
        let raw = self.dir.path().display().to_string();
        redact_with(value, &[(&root, "[ROOT]"), (&raw, "[ROOT]")])
    }
}

/// Redacts strings in `value`: the given prefixes, then hex object ids.
pub fn redact_with(value: &Value, replacements: &[(&str, &str)]) -> Value {
    match value {
        Value::String(s) => {
            let mut s = s.clone();
            for (from, to) in replacements {
                if !from.is_empty() {
                    s = s.replace(from, to);
                }
            }
            Value::String(redact_oids(&s))
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact_with(v, replacements)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact_with(v, replacements)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Replaces runs of 40 or 64 hex digits with `[OID]`, and 7–12 hex digits that stand alone
/// as a whole string with `[SHORT]`.
pub fn redact_oids(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            .count();
        let bounded = (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
            && bytes
                .get(i + run)
                .is_none_or(|b| !b.is_ascii_alphanumeric());
        if bounded && (run == 40 || run == 64) {
            out.push_str("[OID]");
            i += run;
        } else if run > 0 {
            out.push_str(&s[i..i + run]);
            i += run;
        } else {
            let ch = s[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    if (7..=12).contains(&out.len())
        && out.bytes().all(|b| b.is_ascii_hexdigit())
        && out.bytes().any(|b| b.is_ascii_digit())
    {
        return "[SHORT]".into();
    }
    out
}

/// A running `gitward` speaking MCP over its stdio.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

pub const MODERN: &str = "2026-07-28";

impl Server {
    pub fn start(fixture: &Fixture, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut cmd = Command::new(gitward_bin());
        cmd.args(args);
        Server::start_cmd(fixture, cmd, env)
    }

    /// Starts the server as the child of another program (`cmd`, which must run
    /// gitward with its stdio inherited), with the fixture's environment plus `env`.
    pub fn start_cmd(fixture: &Fixture, mut cmd: Command, env: &[(&str, &str)]) -> Server {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in fixture.env() {
            cmd.env(k, v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("gitward starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    /// Sends raw bytes (a frame, or something broken on purpose).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Reads the next line of stdout as JSON (panics at end of output).
    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    /// Closes stdin and returns every remaining line of output.
    pub fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let mut out = Vec::new();
        let mut line = String::new();
        while self.stdout.read_line(&mut line).unwrap() > 0 {
            out.push(serde_json::from_str(&line).unwrap());
            line.clear();
        }
        let _ = self.child.wait();
        out
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to exit, stdin left open.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }

    /// A request in the modern era (the `_meta` envelope added); returns the whole response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let mut params = params;
        if params.is_null() {
            params = json!({});
        }
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { "name": "gitward-tests", "version": "1.0.0" },
        });
        self.request_raw(method, params)
    }

    /// A request with exactly these params; returns the response with the same id.
    pub fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let reply = self.recv();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    }

    /// Calls a tool and returns `structuredContent`, checking it matches the text block;
    /// for a failed call, the error payload its text block carries.
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let reply = self.request("tools/call", json!({ "name": tool, "arguments": args }));
        let result = &reply["result"];
        assert!(result.is_object(), "tools/call failed: {reply}");
        let text = result["content"][0]["text"].as_str().expect("text content");
        if result["isError"] == json!(true) {
            assert!(
                result.get("structuredContent").is_none(),
                "an error result has no structuredContent: {reply}"
            );
            let payload: Value = serde_json::from_str(text).expect("error text is JSON");
            assert!(payload.get("error").is_some(), "{reply}");
            return payload;
        }
        let structured = result["structuredContent"].clone();
        if tool_returns_json(tool) {
            assert_eq!(
                serde_json::from_str::<Value>(text).unwrap(),
                structured,
                "text and structuredContent differ"
            );
        }
        assert_eq!(
            result["isError"],
            json!(structured.get("error").is_some()),
            "{reply}"
        );
        structured
    }
}

/// The spec tools answer with instruction text around their state; the rest with JSON.
fn tool_returns_json(tool: &str) -> bool {
    !matches!(
        tool,
        "explore" | "create-plan" | "create-proposal" | "apply-change" | "archive-change"
    )
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Snapshots `value` (already redacted) under the top-level `snapshots/` directory.
#[macro_export]
macro_rules! snap {
    ($name:expr, $value:expr) => {{
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_json_snapshot!($name, $value));
    }};
}
