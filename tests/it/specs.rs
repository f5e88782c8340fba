//! The spec workflow tools against the real OpenSpec CLI (installed by `scripts/setup`) and
//! real git, in temporary workspaces.
//!
//! Cases where OpenSpec must misbehave run the real CLI through a small wrapper script
//! written by the test, which alters what the real CLI did or printed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Fixture, Server, write_executable};
use crate::tool_snapshot;

/// The CLI installed in this checkout by `scripts/setup`.
fn openspec_cli() -> PathBuf {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin/openspec");
    assert!(
        cli.exists(),
        "run scripts/setup first: {} is missing",
        cli.display()
    );
    cli
}

/// A YAML file as JSON, read by the YAML parser the pinned OpenSpec CLI itself uses.
fn parse_yaml(path: &Path) -> Value {
    let script = "const { createRequire } = require('module');\
        const req = createRequire(process.cwd() + '/node_modules/@fission-ai/openspec/package.json');\
        const text = require('fs').readFileSync(process.argv[1], 'utf8');\
        process.stdout.write(JSON.stringify(req('yaml').parse(text)));";
    let out = std::process::Command::new("node")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["-e", script])
        .arg(path)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{} is not valid YAML: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A workspace of folders plus a data directory, all under one fixture root.
pub(crate) struct Ws {
    pub(crate) fx: Fixture,
    folders: Vec<(String, PathBuf)>,
    cli: PathBuf,
}

impl Ws {
    pub(crate) fn new() -> Ws {
        let fx = Fixture::new();
        std::fs::create_dir_all(fx.path("data")).unwrap();
        Ws {
            fx,
            folders: Vec::new(),
            cli: openspec_cli(),
        }
    }

    /// A git repository with one commit, authorized as folder `id`.
    pub(crate) fn repo(&mut self, id: &str) -> PathBuf {
        let repo = self.fx.init(id, &[]);
        self.fx.commit(&repo, "README.md", "# project\n", "init");
        self.folders.push((id.to_owned(), repo.clone()));
        repo
    }

    /// A plain directory authorized as folder `id`.
    pub(crate) fn plain(&mut self, id: &str) -> PathBuf {
        let dir = self.fx.path(id);
        std::fs::create_dir_all(&dir).unwrap();
        self.folders.push((id.to_owned(), dir.clone()));
        dir
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.fx.path("data")
    }

    fn descriptor(&self) -> String {
        let folders: Vec<Value> = self
            .folders
            .iter()
            .map(|(id, p)| json!({ "folderId": id, "folderName": format!("{id}-name"), "folderPath": p }))
            .collect();
        json!({
            "version": 2,
            "workspaceId": "ws-1",
            "workspaceKind": if folders.len() == 1 { "folder" } else { "collection" },
            "primaryFolderId": self.folders[0].0,
            "folders": folders,
            "workspaceDataDir": self.data(),
            "sessionId": "s-1",
        })
        .to_string()
    }

    pub(crate) fn server(&self) -> Server {
        let desc = self.descriptor();
        let cli = self.cli.display().to_string();
        self.fx.server(
            &[],
            &[
                ("FYLLO_WORKSPACE_JSON", &desc),
                ("FYLLO_OPENSPEC_CLI_PATH", &cli),
            ],
        )
    }

    /// A wrapper around the real CLI; `on_archive` is shell run instead of a plain pass-through
    /// when the first argument is `archive` (`$REAL` is the real CLI). Every call is logged.
    pub(crate) fn wrap(&mut self, on_archive: &str) -> PathBuf {
        let script = self.fx.path("openspec-wrapper.sh");
        let log = self.fx.path("openspec-calls.log");
        write_executable(
            &script,
            &format!(
                "#!/bin/sh\nREAL='{}'\necho \"$*\" >> '{}'\nif [ \"$1\" = archive ]; then\n{on_archive}\nfi\nexec \"$REAL\" \"$@\"\n",
                self.cli.display(),
                log.display()
            ),
        );
        self.cli = script.clone();
        script
    }

    pub(crate) fn calls_log(&self) -> String {
        std::fs::read_to_string(self.fx.path("openspec-calls.log")).unwrap_or_default()
    }

    fn redact(&self, v: &Value) -> Value {
        let v = self.fx.redact(v);
        let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
        redact_values(&v, &today)
    }
}

impl crate::common::Redact for Ws {
    fn redact_value(&self, value: &Value) -> Value {
        self.redact(value)
    }
}

/// Dates and times that change from run to run.
fn redact_values(v: &Value, today: &str) -> Value {
    match v {
        Value::String(s) => Value::String(short_ids(&s.replace(today, "[DATE]"))),
        Value::Array(a) => Value::Array(a.iter().map(|x| redact_values(x, today)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| match k.as_str() {
                    "lastModified" | "createdAt" => (k.clone(), json!("[TIME]")),
                    _ => (k.clone(), redact_values(x, today)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Abbreviated commit ids inside git's messages (the commits gitward makes carry the
/// current time, so their ids differ on every run).
fn short_ids(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let run = b[i..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
            .count();
        let bounded = (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b.get(i + run).is_none_or(|c| !c.is_ascii_alphanumeric());
        if run > 0 && bounded && (7..=12).contains(&run) {
            out.push_str("[SHORT]");
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
    out
}

/// One spec tool call: the state (for a failed call, the error payload of its text
/// block), the text block, and `isError`.
pub(crate) fn call(server: &mut Server, tool: &str, args: Value) -> (Value, String, bool) {
    let reply = server.request("tools/call", json!({ "name": tool, "arguments": args }));
    let result = &reply["result"];
    assert!(result.is_object(), "tools/call failed: {reply}");
    let text = result["content"][0]["text"].as_str().unwrap().to_owned();
    let is_error = result["isError"] == json!(true);
    let state = if is_error {
        assert!(result.get("structuredContent").is_none(), "{reply}");
        serde_json::from_str(&text).unwrap()
    } else {
        result["structuredContent"].clone()
    };
    (state, text, is_error)
}

/// The state of a successful call, checked against its text block.
pub(crate) fn state(server: &mut Server, tool: &str, args: Value) -> Value {
    let (state, text, is_error) = call(server, tool, args);
    assert!(!is_error, "{tool} failed: {state}");
    let inner = text
        .split("<state>\n")
        .nth(1)
        .and_then(|t| t.split("\n</state>").next())
        .unwrap_or_else(|| panic!("no <state> in {text}"));
    assert!(text.starts_with("<tool_instruction>\n"), "{text}");
    assert_eq!(serde_json::from_str::<Value>(inner).unwrap(), state);
    state
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes a complete, archivable set of artifacts for `name` under `dir`.
pub(crate) fn write_artifacts(fx: &Fixture, dir: &Path, name: &str, cap: &str) {
    let base = format!("openspec/changes/{name}");
    fx.write(dir, &format!("{base}/proposal.md"), "## Why\n\nUsers need a greeting so the product feels friendly from the first screen.\n\n## What Changes\n\n- Add a greeting.\n\n## Capabilities\n\n### New Capabilities\n- `greeting`: says hello\n\n## Impact\n\nNone.\n");
    fx.write(dir, &format!("{base}/specs/{cap}/spec.md"), "## ADDED Requirements\n\n### Requirement: Greeting\nThe system SHALL greet the user.\n\n#### Scenario: First visit\n- **WHEN** a user opens the app\n- **THEN** the app says hello\n");
    fx.write(
        dir,
        &format!("{base}/design.md"),
        "## Context\n\nSmall.\n\n## Decisions\n\nPrint hello.\n",
    );
    fx.write(
        dir,
        &format!("{base}/tasks.md"),
        "## 1. Greeting\n\n- [ ] 1.1 Add the greeting to `src/app.rs`\n- [ ] 1.2 Test it\n",
    );
}

pub(crate) fn tick_all(dir: &Path, name: &str) {
    let path = dir.join(format!("openspec/changes/{name}/tasks.md"));
    let text = read(&path).replace("- [ ]", "- [x]");
    std::fs::write(path, text).unwrap();
}

/// Every path under `root` except those under `skip`, with file contents, sorted.
fn listing(root: &Path, skip: &[&Path]) -> Vec<String> {
    fn walk(dir: &Path, skip: &[&Path], out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if skip.iter().any(|s| p.starts_with(s)) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                out.push(format!("{}/", p.display()));
                walk(&p, skip, out);
            } else {
                let content = std::fs::read(&p).unwrap_or_default();
                out.push(format!("{} {}", p.display(), content.len()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, skip, &mut out);
    out.sort();
    out
}

/// Large instruction text and templates are OpenSpec's; keep snapshots to our shape.
fn prune(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(list) = v["artifacts"].as_array_mut() {
        for a in list {
            if let Some(o) = a.as_object_mut() {
                for k in [
                    "instruction",
                    "template",
                    "description",
                    "dependencies",
                    "unlocks",
                ] {
                    if o.contains_key(k) {
                        o.insert(k.into(), json!("[OPENSPEC]"));
                    }
                }
            }
        }
    }
    for k in ["instruction", "template"] {
        if v.get(k).is_some_and(|x| !x.is_null()) {
            v[k] = json!("[OPENSPEC]");
        }
    }
    v
}

#[test]
fn tools_are_listed_only_with_a_workspace() {
    let mut ws = Ws::new();
    ws.repo("api");
    let names = |server: &mut Server| -> Vec<String> {
        let reply = server.request("tools/list", json!({}));
        reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            // The spec tools: the git tools' names have a dot (seed) or an underscore.
            .filter(|n| !n.contains('.') && !n.contains('_'))
            .collect()
    };
    let mut server = ws.server();
    assert_eq!(
        names(&mut server),
        [
            "explore",
            "create-plan",
            "create-proposal",
            "apply-change",
            "archive-change"
        ]
    );
    let desc = ws.descriptor();
    for on in ["1", "true", "YES", "On"] {
        let mut disabled = ws.fx.server(
            &[],
            &[
                ("FYLLO_WORKSPACE_JSON", &desc),
                ("FYLLO_DISABLE_BUNDLED_MCP", on),
            ],
        );
        assert!(names(&mut disabled).is_empty(), "{on}");
    }
    let mut kept = ws.fx.server(
        &[],
        &[
            ("FYLLO_WORKSPACE_JSON", &desc),
            ("FYLLO_DISABLE_BUNDLED_MCP", "0"),
        ],
    );
    assert_eq!(names(&mut kept).len(), 5);
    let mut none = ws.fx.server(&[], &[]);
    assert!(names(&mut none).is_empty(), "no cwd fallback");
    // A descriptor file works like the variable.
    let file = ws.fx.path("workspace.json");
    std::fs::write(&file, &desc).unwrap();
    let mut from_file = ws
        .fx
        .server(&["--workspace", &file.display().to_string()], &[]);
    assert_eq!(names(&mut from_file).len(), 5);
    // A broken descriptor stops the server before it serves anything.
    let broken = desc.replace("\"version\":2", "\"version\":3");
    let server = ws.fx.server(&[], &[("FYLLO_WORKSPACE_JSON", &broken)]);
    assert!(server.finish().is_empty());
}

#[test]
fn explore_to_archive_linked_lifecycle_in_a_single_folder() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    // The server's own run directory (audit ledger, presence record) is its state, not a
    // write into anyone's project.
    let run_dir = ws.fx.run_dir();
    let outside_before = listing(&ws.fx.root(), &[&repo, &ws.data(), &run_dir]);
    let mut server = ws.server();

    let created = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "add-greeting" }),
    );
    tool_snapshot!("specs_create_linked", ws, prune(&created));
    let wt = repo.join(".worktrees/add-greeting");
    assert_eq!(created["target"]["worktreePath"], json!(wt));
    assert_eq!(
        ws.fx.git(&wt, &["branch", "--show-current"]),
        "proposal/add-greeting"
    );
    assert_eq!(
        ws.fx.git(&repo, &["status", "--porcelain"]),
        "",
        "main stays clean"
    );
    assert!(read(&repo.join(".git/info/exclude")).contains(".worktrees/"));
    let meta_path = wt.join("openspec/changes/add-greeting/.openspec.yaml");
    let meta = read(&meta_path);
    assert!(meta.starts_with("schema: spec-driven\ncreated: "), "{meta}");
    assert!(
        meta.contains("\ncreatedAt: 20") && meta.ends_with("\nstatus: creating\n"),
        "{meta}"
    );
    assert!(!meta.contains("createdAt: \""), "plain scalar");
    let config = parse_yaml(&wt.join("openspec/config.yaml"));
    assert_eq!(config["schema"], "spec-driven", "{config}");
    let rule = config["rules"]["tasks"][0].as_str().unwrap_or_default();
    assert!(rule.contains("guidelines"), "{config}");
    // OpenSpec itself reads the rule into the tasks guidance.
    let tasks = created["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "tasks")
        .unwrap();
    assert_eq!(tasks["rules"], json!([rule]), "{tasks}");
    assert!(!repo.join("openspec").exists(), "nothing in main");

    write_artifacts(&ws.fx, &wt, "add-greeting", "greeting");
    std::fs::write(
        &meta_path,
        meta.replace("status: creating", "status: draft"),
    )
    .unwrap();

    let explored = state(
        &mut server,
        "explore",
        json!({ "changeName": "add-greeting" }),
    );
    tool_snapshot!("specs_explore_linked", ws, explored);
    // Our listing agrees with OpenSpec's own.
    let out = std::process::Command::new(openspec_cli())
        .args(["list", "--json"])
        .current_dir(&wt)
        .env("CI", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours = &explored["activeChanges"][0];
    let first = &theirs["changes"][0];
    assert_eq!(ours["changeId"], first["name"]);
    assert_eq!(ours["completedTasks"], first["completedTasks"]);
    assert_eq!(ours["totalTasks"], first["totalTasks"]);
    assert_eq!(ours["status"], first["status"]);
    assert_eq!(ours["lastModified"], first["lastModified"]);

    let applied = state(
        &mut server,
        "apply-change",
        json!({ "changeName": "add-greeting", "folderId": "api" }),
    );
    tool_snapshot!("specs_apply_ready", ws, applied);
    assert_eq!(applied["applyState"], "ready");
    assert_eq!(applied["tasks"][0]["line"], 3);
    assert!(read(&meta_path).ends_with("status: applying\n"));
    assert_eq!(
        read(&meta_path).replace("status: applying", "status: draft"),
        meta.replace("status: creating", "status: draft"),
        "every other byte kept"
    );

    tick_all(&wt, "add-greeting");
    ws.fx.write(&wt, "src/app.rs", "fn hello() {}\n");
    ws.fx.git(&wt, &["add", "src/app.rs"]);
    ws.fx.git(&wt, &["commit", "-q", "-m", "feat(app): greet"]);
    let done = state(
        &mut server,
        "apply-change",
        json!({ "changeName": "add-greeting", "folderId": "api" }),
    );
    assert_eq!(done["applyState"], "all_done");

    let before = listing(&repo, &[]);
    let preview = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "add-greeting", "folderId": "api" }),
    );
    assert_eq!(preview["status"], "done");
    assert_eq!(preview["deltaSpecs"], json!(["greeting"]));
    assert_eq!(listing(&repo, &[]), before, "a preview writes nothing");

    let archived = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "add-greeting", "folderId": "api", "confirm": true,
                "commitMessage": "feat(greeting): greet users on first visit" }),
    );
    tool_snapshot!("specs_archive_linked_done", ws, archived);
    assert_eq!(archived["status"], "done", "{archived:#}");
    assert!(!wt.exists(), "worktree removed");
    assert_eq!(
        ws.fx.git(&repo, &["branch", "--list", "proposal/*"]),
        "",
        "branch deleted"
    );
    assert_eq!(ws.fx.git(&repo, &["status", "--porcelain"]), "");
    assert_eq!(
        ws.fx.git(&repo, &["log", "-1", "--format=%s"]),
        "feat(greeting): greet users on first visit"
    );
    let target = PathBuf::from(archived["archive"]["archiveTarget"].as_str().unwrap());
    let in_main = repo.join(target.strip_prefix(&wt).unwrap());
    assert!(read(&in_main.join(".openspec.yaml")).ends_with("status: archived\n"));
    assert!(read(&repo.join("openspec/specs/greeting/spec.md")).contains("Requirement: Greeting"));
    let committed = ws
        .fx
        .git(&repo, &["show", "--name-only", "--format=", "HEAD"]);
    assert!(
        committed.lines().all(|l| l.starts_with("openspec/")),
        "{committed}"
    );

    // Nothing outside the owning project and the data directory was written.
    assert_eq!(
        listing(&ws.fx.root(), &[&repo, &ws.data(), &run_dir]),
        outside_before
    );

    // The archived change is gone from the active list; a new archive call says where
    // it was archived, and writes nothing.
    let head = ws.fx.git(&repo, &["rev-parse", "HEAD"]);
    let again = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "add-greeting", "folderId": "api", "confirm": true, "commitMessage": "feat(greeting): again" }),
    );
    assert_eq!(again["errors"][0]["code"], "PROPOSAL_ALREADY_ARCHIVED");
    let at = again["errors"][0]["details"]["archivePath"]
        .as_str()
        .unwrap();
    assert!(
        at.starts_with(&repo.join("openspec/changes/archive/").display().to_string()),
        "{at}"
    );
    assert_eq!(ws.fx.git(&repo, &["rev-parse", "HEAD"]), head);
    let unknown = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "never-made", "folderId": "api" }),
    );
    assert_eq!(unknown["errors"][0]["code"], "PROPOSAL_NOT_FOUND");
}

#[test]
fn main_mode_in_a_multi_root_workspace() {
    let mut ws = Ws::new();
    let api = ws.repo("api");
    let web = ws.repo("web");
    let mut server = ws.server();

    let (owner_required, _, is_error) =
        call(&mut server, "create-proposal", json!({ "changeName": "x" }));
    assert!(!is_error, "a workflow failure lives in the state");
    assert_eq!(
        owner_required["errors"][0]["code"],
        "MCP_WORKSPACE_OWNER_REQUIRED"
    );
    assert_eq!(owner_required["errors"][0]["details"]["folderCount"], 2);
    let listed: Vec<_> = owner_required["errors"][0]["details"]["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["folderId"].clone(), f["path"].clone()))
        .collect();
    assert_eq!(
        listed,
        [(json!("api"), json!(api)), (json!("web"), json!(web))]
    );
    let unknown = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "x", "folderId": "nope" }),
    );
    assert_eq!(
        unknown["errors"][0]["code"],
        "MCP_WORKSPACE_FOLDER_UNAUTHORIZED"
    );

    let created = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "add-greeting", "folderId": "web", "worktreeMode": "main" }),
    );
    assert_eq!(created["target"]["worktreeMode"], "main");
    assert_eq!(created["target"]["worktreePath"], json!(web));
    assert!(
        web.join("openspec/changes/add-greeting/.openspec.yaml")
            .exists()
    );
    assert!(!api.join("openspec").exists(), "one owner per proposal");
    // The same name in the other folder is a separate proposal.
    let other = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "add-greeting", "folderId": "api", "worktreeMode": "main" }),
    );
    assert_eq!(other["target"]["proposalRef"]["folderId"], "api");

    let explored = state(&mut server, "explore", json!({}));
    let ids: Vec<_> = explored["activeChanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}/{}",
                c["folderId"].as_str().unwrap(),
                c["changeId"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(ids, ["api/add-greeting", "web/add-greeting"]);
    let ambiguous = state(
        &mut server,
        "explore",
        json!({ "changeName": "add-greeting" }),
    );
    assert_eq!(ambiguous["errors"][0]["code"], "PROPOSAL_OWNER_AMBIGUOUS");
    let one = state(
        &mut server,
        "explore",
        json!({ "changeName": "add-greeting", "folderId": "web" }),
    );
    assert_eq!(one["currentChange"]["proposalRef"]["folderId"], "web");
    assert_eq!(one["activeChanges"].as_array().unwrap().len(), 1);

    write_artifacts(&ws.fx, &web, "add-greeting", "greeting");
    let (applied, text, _) = call(
        &mut server,
        "apply-change",
        json!({ "changeName": "add-greeting", "folderId": "web", "includeInstruction": false }),
    );
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        applied,
        "bare JSON"
    );
    assert_eq!(applied["applyState"], "ready");
    assert_eq!(applied["target"]["worktreeMode"], "main");
    assert_eq!(
        applied["contextFiles"]["specs"],
        json!([web.join("openspec/changes/add-greeting/specs/greeting/spec.md")])
    );
    tick_all(&web, "add-greeting");
    // An unrelated edit in the same tree is never swept into the archive commit: it is
    // named, and nothing is archived until the user has dealt with it.
    ws.fx.write(&web, "README.md", "# project, edited\n");
    let confirm = json!({ "changeName": "add-greeting", "folderId": "web", "confirm": true,
                "commitMessage": "feat(greeting): greet users\n\nWith a body." });
    let blocked = state(&mut server, "archive-change", confirm.clone());
    assert_eq!(blocked["status"], "failed");
    assert_eq!(
        blocked["archive"]["error"]["code"], "finalization-blocked",
        "{blocked:#}"
    );
    assert_eq!(
        blocked["finalizationCheck"]["blockers"][0]["paths"],
        json!(["README.md"])
    );
    assert!(
        web.join("openspec/changes/add-greeting").is_dir(),
        "not archived"
    );
    ws.fx.git(&web, &["stash", "-q"]);
    let (bad, _, _) = call(
        &mut server,
        "archive-change",
        json!({ "changeName": "add-greeting", "folderId": "web", "confirm": true, "commitMessage": "archive it" }),
    );
    assert_eq!(bad["archive"]["error"]["code"], "invalid-commit-message");
    let archived = state(&mut server, "archive-change", confirm);
    assert_eq!(archived["status"], "done", "{archived:#}");
    ws.fx.git(&web, &["stash", "pop", "-q"]);
    let steps: Vec<_> = archived["finalization"]["gitOps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["commit"]);
    assert_eq!(ws.fx.git(&web, &["status", "--porcelain"]), " M README.md");
    let committed = ws
        .fx
        .git(&web, &["show", "--name-only", "--format=%B", "HEAD"]);
    assert!(
        committed.starts_with("feat(greeting): greet users\n\nWith a body."),
        "{committed}"
    );
    assert!(!committed.contains("README.md"), "{committed}");
}

#[test]
fn non_git_folder_falls_back_to_main() {
    let mut ws = Ws::new();
    let dir = ws.plain("notes");
    let mut server = ws.server();
    let created = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "add-greeting" }),
    );
    assert_eq!(created["target"]["worktreeMode"], "main");
    assert!(
        created["warnings"][0]
            .as_str()
            .unwrap()
            .contains("not a git repository")
    );
    write_artifacts(&ws.fx, &dir, "add-greeting", "greeting");
    let archived = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "add-greeting", "folderId": "notes", "confirm": true,
                "commitMessage": "feat(greeting): greet" }),
    );
    assert_eq!(archived["status"], "done");
    assert_eq!(archived["finalization"]["skipped"], "not a git repository");
    assert_eq!(archived["finalization"]["gitOps"], json!([]));
    assert_eq!(archived["archive"]["incompleteTasks"], 2);
}

#[test]
fn create_plan_writes_only_the_session_plan() {
    let mut ws = Ws::new();
    ws.repo("api");
    ws.repo("web");
    let mut server = ws.server();
    let plan = state(
        &mut server,
        "create-plan",
        json!({ "goal": "Decide how caching works", "slug": "cache-design" }),
    );
    let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    let path = ws
        .data()
        .join(format!("sessions/s-1/plans/{today}-cache-design.md"));
    assert_eq!(plan["planPath"], json!(path));
    let text = read(&path);
    assert!(
        text.starts_with(&format!(
            "---\nslug: {today}-cache-design\ngoal: \"Decide how caching works\"\ncreatedAt: "
        )),
        "{text}"
    );
    for h in [
        "## Goal",
        "## Scope",
        "## Constraints",
        "## Trade-offs",
        "## Steps",
        "## Verification",
    ] {
        assert!(text.contains(h), "{h}");
    }
    let dup = state(
        &mut server,
        "create-plan",
        json!({ "goal": "Again", "slug": "cache-design" }),
    );
    assert_eq!(dup["errors"][0]["code"], "EEXIST");
    assert_eq!(read(&path), text, "the existing plan is kept");

    let (bare, text, _) = call(
        &mut server,
        "create-plan",
        json!({ "goal": "Other", "slug": "other", "includeInstruction": false }),
    );
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        bare,
        "bare JSON"
    );

    for (args, field) in [
        (
            json!({ "goal": "g", "slug": "x", "folderId": "api" }),
            "folderId",
        ),
        (json!({ "goal": "g", "slug": "2026-01-01-x" }), "slug"),
        (json!({ "goal": "g", "slug": "Bad Slug" }), "slug"),
        (json!({ "goal": "", "slug": "x" }), "goal"),
    ] {
        let (err, _, is_error) = call(&mut server, "create-plan", args);
        assert!(is_error, "{err}");
        assert_eq!(err["error"]["code"], -32602);
        assert_eq!(err["error"]["data"]["field"], field, "{err}");
    }
}

#[test]
fn strict_inputs() {
    let mut ws = Ws::new();
    ws.repo("api");
    let mut server = ws.server();
    for (tool, args, field) in [
        (
            "apply-change",
            json!({ "changeName": "a", "folderId": "api", "targetPath": "/tmp" }),
            "targetPath",
        ),
        (
            "archive-change",
            json!({ "changeName": "a", "folderId": "api", "worktreePath": "/tmp" }),
            "worktreePath",
        ),
        ("apply-change", json!({ "changeName": "a" }), "folderId"),
        (
            "create-proposal",
            json!({ "changeName": "../escape" }),
            "changeName",
        ),
        (
            "create-proposal",
            json!({ "changeName": "2026-11-29-dated" }),
            "changeName",
        ),
        (
            "create-proposal",
            json!({ "changeName": "--output=x" }),
            "changeName",
        ),
        (
            "create-proposal",
            json!({ "changeName": "ok", "worktreeMode": "elsewhere" }),
            "worktreeMode",
        ),
        ("explore", json!({ "changeName": "a\nb" }), "changeName"),
    ] {
        let (err, _, is_error) = call(&mut server, tool, args.clone());
        assert!(is_error, "{tool} {args}: {err}");
        assert_eq!(err["error"]["data"]["field"], field, "{tool} {args}: {err}");
    }
}

#[test]
fn create_proposal_duplicate_and_existing_worktrees() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    let first = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one" }),
    );
    let meta = read(&repo.join(".worktrees/one/openspec/changes/one/.openspec.yaml"));
    let dup = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one" }),
    );
    assert_eq!(dup["status"], "failed");
    assert_eq!(dup["error"]["code"], "PROPOSAL_ALREADY_EXISTS");
    assert_eq!(dup["target"], first["target"]);
    assert_eq!(
        read(&repo.join(".worktrees/one/openspec/changes/one/.openspec.yaml")),
        meta
    );

    // A directory where the worktree would go, not registered with git.
    std::fs::create_dir_all(repo.join(".worktrees/two")).unwrap();
    let unregistered = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "two" }),
    );
    assert_eq!(
        unregistered["errors"][0]["code"],
        "MCP_WORKTREE_NOT_REGISTERED"
    );

    // A registered worktree without openspec/: reused, bootstrapped, and OpenSpec must not
    // escape to the main checkout (which has an openspec/ of its own here).
    ws.fx.commit(
        &repo,
        "openspec/config.yaml",
        "schema: spec-driven\n",
        "openspec",
    );
    std::fs::create_dir_all(repo.join("openspec/changes/main-only")).unwrap();
    ws.fx.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "proposal/three",
            ".worktrees/three",
        ],
    );
    std::fs::remove_dir_all(repo.join(".worktrees/three/openspec")).unwrap();
    let explored = state(&mut server, "explore", json!({}));
    let warned: Vec<_> = explored["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].clone())
        .collect();
    assert!(
        warned.contains(&json!("PROPOSAL_WORKTREE_WITHOUT_OPENSPEC")),
        "{explored:#}"
    );
    assert!(
        explored["activeChanges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["changeId"] != "main-only" || c["worktreeMode"] == "main"),
        "main's change is never shown as the linked worktree's"
    );
    let reused = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "three" }),
    );
    assert!(
        reused["warnings"][0].as_str().unwrap().contains("reused"),
        "{reused:#}"
    );
    assert!(
        repo.join(".worktrees/three/openspec/changes/three/.openspec.yaml")
            .exists()
    );
    assert!(!repo.join("openspec/changes/three").exists(), "not in main");
}

#[test]
fn an_existing_proposal_branch_is_reused_only_when_it_is_the_changes() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    let created = |server: &mut Server, name: &str| {
        state(server, "create-proposal", json!({ "changeName": name }))
    };
    let branch_of = |wt: &Path| ws.fx.git(wt, &["branch", "--show-current"]);

    // A leftover branch with nothing of its own: checked out again.
    ws.fx.git(&repo, &["branch", "proposal/four"]);
    let four = created(&mut server, "four");
    assert_eq!(four["errors"], Value::Null, "{four:#}");
    assert!(
        four["warnings"][0]
            .as_str()
            .unwrap()
            .contains("already existed"),
        "{four:#}"
    );
    assert_eq!(branch_of(&repo.join(".worktrees/four")), "proposal/four");

    // The same change's branch whose worktree is gone: its committed work comes back.
    created(&mut server, "six");
    let six = repo.join(".worktrees/six");
    write_artifacts(&ws.fx, &six, "six", "greeting");
    ws.fx.git(&six, &["add", "-A"]);
    ws.fx.git(&six, &["commit", "-q", "-m", "six so far"]);
    ws.fx
        .git(&repo, &["worktree", "remove", "--force", ".worktrees/six"]);
    let again = created(&mut server, "six");
    assert_eq!(again["errors"], Value::Null, "{again:#}");
    assert_eq!(branch_of(&six), "proposal/six");
    assert!(six.join("openspec/changes/six/design.md").exists());

    // Somebody else's branch: commits of its own and no such change. Nothing is created,
    // and the agent is told what to do instead of git's raw refusal.
    ws.fx.git(&repo, &["checkout", "-q", "-b", "proposal/five"]);
    ws.fx.commit(&repo, "theirs.txt", "x\n", "their work");
    ws.fx.git(&repo, &["checkout", "-q", "main"]);
    let taken = created(&mut server, "five");
    let e = &taken["errors"][0];
    assert_eq!(e["code"], "PROPOSAL_BRANCH_EXISTS", "{taken:#}");
    assert!(
        e["details"]["nextSteps"][0]
            .as_str()
            .unwrap()
            .contains("another changeName")
    );
    assert!(!repo.join(".worktrees/five").exists());
    assert_eq!(
        ws.fx
            .git(&repo, &["log", "-1", "--format=%s", "proposal/five"]),
        "their work"
    );

    // A failure git reports itself (the branch is checked out in main) comes with the
    // next steps.
    ws.fx
        .git(&repo, &["checkout", "-q", "-b", "proposal/seven"]);
    let busy = created(&mut server, "seven");
    let e = &busy["errors"][0];
    assert_eq!(e["code"], "GIT_WORKTREE_ADD_FAILED", "{busy:#}");
    assert!(
        e["details"]["nextSteps"]
            .as_array()
            .is_some_and(|s| s.len() == 2),
        "{busy:#}"
    );
    ws.fx.git(&repo, &["checkout", "-q", "main"]);
}

#[test]
fn apply_change_stops_on_ambiguous_status() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one", "worktreeMode": "main" }),
    );
    write_artifacts(&ws.fx, &repo, "one", "greeting");
    let meta_path = repo.join("openspec/changes/one/.openspec.yaml");
    let broken = format!("{}status: draft\n", read(&meta_path));
    std::fs::write(&meta_path, &broken).unwrap();
    let applied = state(
        &mut server,
        "apply-change",
        json!({ "changeName": "one", "folderId": "api" }),
    );
    assert_eq!(
        applied["errors"][0]["code"], "METADATA_STATUS_DUPLICATED",
        "{applied:#}"
    );
    assert_eq!(read(&meta_path), broken, "untouched");
    let missing = state(
        &mut server,
        "apply-change",
        json!({ "changeName": "nope", "folderId": "api" }),
    );
    assert_eq!(missing["errors"][0]["code"], "PROPOSAL_NOT_FOUND");
}

#[test]
fn unexpected_status_output_stops_apply_before_writing() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    // The real CLI, whose status reply loses the paths of one artifact on the way.
    let script = ws.fx.path("openspec-lossy.sh");
    write_executable(
        &script,
        &format!(
            "#!/bin/sh\nif [ \"$1\" = status ]; then\n'{}' \"$@\" | python3 -c 'import json,sys; r=json.load(sys.stdin); r[\"artifactPaths\"].pop(\"tasks\"); print(json.dumps(r))'\nexit 0\nfi\nexec '{}' \"$@\"\n",
            ws.cli.display(),
            ws.cli.display()
        ),
    );
    ws.cli = script;
    let mut server = ws.server();
    state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one", "worktreeMode": "main" }),
    );
    write_artifacts(&ws.fx, &repo, "one", "greeting");
    let meta_path = repo.join("openspec/changes/one/.openspec.yaml");
    let before = read(&meta_path);
    let applied = state(
        &mut server,
        "apply-change",
        json!({ "changeName": "one", "folderId": "api" }),
    );
    let e = &applied["errors"][0];
    assert_eq!(e["code"], "OPENSPEC_OUTPUT_INVALID", "{applied:#}");
    assert!(
        e["message"].as_str().unwrap().contains("\"tasks\""),
        "{applied:#}"
    );
    assert_eq!(read(&meta_path), before, "the status was not touched");
    // The server is still there.
    assert!(server.request("tools/list", json!({}))["result"]["tools"].is_array());
}

#[test]
fn created_in_iso_form_gets_a_repair_hint() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one", "worktreeMode": "main" }),
    );
    let meta_path = repo.join("openspec/changes/one/.openspec.yaml");
    let text = read(&meta_path);
    let line = text
        .lines()
        .find(|l| l.starts_with("created:"))
        .unwrap()
        .to_owned();
    std::fs::write(
        &meta_path,
        text.replace(&line, "created: 2026-11-29T20:00:00.123Z"),
    )
    .unwrap();
    let explored = state(&mut server, "explore", json!({ "changeName": "one" }));
    let e = &explored["errors"][0];
    assert_eq!(
        e["code"], "OPENSPEC_METADATA_CREATED_FORMAT",
        "{explored:#}"
    );
    assert_eq!(e["details"]["line"], 2);
}

/// A change in `repo` (main mode) ready to archive.
pub(crate) fn ready_main(ws: &mut Ws, server: &mut Server, repo: &Path, name: &str) {
    state(
        server,
        "create-proposal",
        json!({ "changeName": name, "worktreeMode": "main" }),
    );
    write_artifacts(&ws.fx, repo, name, "greeting");
    tick_all(repo, name);
}

#[test]
fn archive_change_cli_failure_writes_nothing() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    ready_main(&mut ws, &mut server, &repo, "one");
    // A requirement without a scenario fails OpenSpec's delta validation.
    ws.fx.write(
        &repo,
        "openspec/changes/one/specs/greeting/spec.md",
        "## ADDED Requirements\n\n### Requirement: Greeting\nThe system SHALL greet.\n",
    );
    let meta = read(&repo.join("openspec/changes/one/.openspec.yaml"));
    let failed = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "one", "folderId": "api", "confirm": true, "commitMessage": "feat(x): y" }),
    );
    tool_snapshot!("specs_archive_cli_failed", ws, failed);
    assert_eq!(
        failed["archive"]["error"]["code"],
        "openspec-archive-failed"
    );
    assert_eq!(failed["archive"]["ok"], false);
    assert_eq!(
        read(&repo.join("openspec/changes/one/.openspec.yaml")),
        meta
    );
    assert_eq!(failed["finalization"]["gitOps"], json!([]));
}

#[test]
fn archive_output_without_confirmation_writes_nothing() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    // OpenSpec answers the archive call with something that is not an archive reply.
    ws.wrap("exec \"$REAL\" list --json");
    let mut server = ws.server();
    ready_main(&mut ws, &mut server, &repo, "one");
    let meta = read(&repo.join("openspec/changes/one/.openspec.yaml"));
    let failed = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "one", "folderId": "api", "confirm": true, "commitMessage": "feat(x): y" }),
    );
    assert_eq!(
        failed["archive"]["error"]["code"], "openspec-archive-not-confirmed",
        "{failed:#}"
    );
    assert_eq!(
        read(&repo.join("openspec/changes/one/.openspec.yaml")),
        meta
    );
    assert!(repo.join("openspec/changes/one").is_dir());
    assert_eq!(ws.fx.git(&repo, &["log", "--format=%s"]), "init");
}

#[test]
fn archive_conflict_is_caught_before_openspec_runs() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    ws.wrap("");
    let mut server = ws.server();
    ready_main(&mut ws, &mut server, &repo, "one");
    let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    std::fs::create_dir_all(repo.join(format!("openspec/changes/archive/{today}-one"))).unwrap();
    let preview = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "one", "folderId": "api" }),
    );
    assert_eq!(
        preview["archive"]["error"]["code"],
        "archive-target-conflict"
    );
    let confirmed = state(
        &mut server,
        "archive-change",
        json!({ "changeName": "one", "folderId": "api", "confirm": true, "commitMessage": "feat(x): y" }),
    );
    assert_eq!(confirmed["status"], "failed");
    assert!(!ws.calls_log().contains("archive"), "{}", ws.calls_log());
}

#[test]
fn metadata_failure_then_resume() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    // The real archive runs; then its metadata gets a second status line, so the write
    // that must follow is refused.
    ws.wrap("\"$REAL\" \"$@\"; rc=$?\nfor d in openspec/changes/archive/*-\"$2\"; do echo 'status: other' >> \"$d/.openspec.yaml\"; done\nexit $rc");
    let mut server = ws.server();
    state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one" }),
    );
    let wt = repo.join(".worktrees/one");
    write_artifacts(&ws.fx, &wt, "one", "greeting");
    tick_all(&wt, "one");
    let args = json!({ "changeName": "one", "folderId": "api", "confirm": true, "commitMessage": "feat(greeting): greet" });
    let partial = state(&mut server, "archive-change", args.clone());
    tool_snapshot!("specs_archive_metadata_recovery", ws, partial);
    assert_eq!(partial["archive"]["ok"], true);
    assert_eq!(
        partial["archive"]["error"]["code"],
        "archive-metadata-update-failed"
    );
    assert_eq!(
        partial["finalization"]["recovery"]["kind"],
        "archive-metadata-update"
    );
    assert_eq!(partial["finalization"]["gitOps"], json!([]));
    assert!(wt.exists());

    // The agent repairs the file; the second call resumes without OpenSpec.
    let archived = PathBuf::from(partial["archive"]["archiveTarget"].as_str().unwrap());
    let meta = archived.join(".openspec.yaml");
    std::fs::write(&meta, read(&meta).replace("status: other\n", "")).unwrap();
    let archive_calls = |log: String| log.lines().filter(|l| l.starts_with("archive")).count();
    assert_eq!(archive_calls(ws.calls_log()), 1);
    let resumed = state(&mut server, "archive-change", args);
    assert_eq!(resumed["mode"], "resume");
    assert_eq!(resumed["status"], "done", "{resumed:#}");
    assert_eq!(
        archive_calls(ws.calls_log()),
        1,
        "OpenSpec archive ran once"
    );
    assert!(!wt.exists());
    assert_eq!(
        ws.fx.git(&repo, &["log", "-1", "--format=%s"]),
        "feat(greeting): greet"
    );
    let in_main = repo.join(archived.strip_prefix(&wt).unwrap());
    assert!(read(&in_main.join(".openspec.yaml")).ends_with("status: archived\n"));
}

/// Installs a `post-commit` hook in `repo` (shared by its worktrees) running `body`.
pub(crate) fn post_commit_hook(repo: &Path, body: &str) {
    write_executable(
        &repo.join(".git/hooks/post-commit"),
        &format!("#!/bin/sh\n{body}\n"),
    );
}

/// A linked proposal ready to archive, with main moved on by one commit touching `file`.
fn diverged(ws: &mut Ws, server: &mut Server, repo: &Path, file: &str, content: &str) -> PathBuf {
    state(server, "create-proposal", json!({ "changeName": "one" }));
    let wt = repo.join(".worktrees/one");
    write_artifacts(&ws.fx, &wt, "one", "greeting");
    tick_all(&wt, "one");
    ws.fx.commit(repo, file, content, "main moves on");
    wt
}

const CONFIRM: &str = r#"{"changeName":"one","folderId":"api","confirm":true,"commitMessage":"feat(greeting): greet"}"#;

fn steps(v: &Value) -> Vec<String> {
    v["finalization"]["gitOps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["step"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn non_fast_forward_with_clean_trees_rebases() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    diverged(&mut ws, &mut server, &repo, "other.txt", "x\n");
    let done = state(
        &mut server,
        "archive-change",
        serde_json::from_str(CONFIRM).unwrap(),
    );
    assert_eq!(done["status"], "done", "{done:#}");
    assert_eq!(
        steps(&done),
        [
            "commit",
            "merge-to-main",
            "rebase-onto-main",
            "merge-to-main-retry",
            "worktree-remove",
            "branch-delete"
        ]
    );
    let log = ws.fx.git(&repo, &["log", "--format=%s"]);
    assert_eq!(log, "feat(greeting): greet\nmain moves on\ninit");
}

#[test]
fn dirty_workspace_at_finalization() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    diverged(&mut ws, &mut server, &repo, "other.txt", "x\n");
    // Main is clean when the archive checks; the archive commit's own hook then edits it,
    // so the finalization meets the dirty tree after OpenSpec has archived.
    post_commit_hook(
        &repo,
        &format!(
            "printf '# uncommitted edit\\n' > '{}'",
            repo.join("README.md").display()
        ),
    );
    let failed = state(
        &mut server,
        "archive-change",
        serde_json::from_str(CONFIRM).unwrap(),
    );
    tool_snapshot!("specs_archive_dirty", ws, failed);
    let fin = &failed["finalization"];
    assert_eq!(fin["recovery"]["kind"], "dirty-workspace");
    assert_eq!(fin["failedStep"], "merge-to-main");
    assert_eq!(fin["error"]["details"]["main"], json!(["README.md"]));
    assert_eq!(
        ws.fx.git(&repo, &["status", "--porcelain"]),
        " M README.md",
        "the edit is kept"
    );

    // Once the user protects the edit, the same call finishes without OpenSpec.
    post_commit_hook(&repo, "true");
    ws.fx.git(&repo, &["stash", "-q"]);
    let resumed = state(
        &mut server,
        "archive-change",
        serde_json::from_str(CONFIRM).unwrap(),
    );
    assert_eq!(resumed["status"], "done", "{resumed:#}");
    assert_eq!(resumed["mode"], "resume");
}

#[test]
fn cleanup_failure_after_the_merge() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one" }),
    );
    let wt = repo.join(".worktrees/one");
    write_artifacts(&ws.fx, &wt, "one", "greeting");
    tick_all(&wt, "one");
    // Not part of the archive, and made by the archive commit's own hook (after the
    // readiness check): git refuses to remove a worktree holding it.
    post_commit_hook(&repo, "echo mine > notes.txt");
    let failed = state(
        &mut server,
        "archive-change",
        serde_json::from_str(CONFIRM).unwrap(),
    );
    let fin = &failed["finalization"];
    assert_eq!(fin["failedStep"], "worktree-remove", "{failed:#}");
    assert_eq!(
        steps(&failed),
        ["commit", "merge-to-main", "worktree-remove"]
    );
    assert_eq!(
        fin["recovery"]["remainingSteps"],
        json!(["complete-worktree-and-branch-cleanup"])
    );
    assert_eq!(
        fin["recovery"]["completedSteps"],
        json!([
            "openspec-archive",
            "spec-sync",
            "archive-metadata",
            "commit",
            "merge-to-main"
        ])
    );
    assert_eq!(fin["error"]["details"]["workspace"], json!(["notes.txt"]));
    assert_eq!(
        ws.fx.git(&repo, &["log", "-1", "--format=%s"]),
        "feat(greeting): greet",
        "merged"
    );
    assert!(wt.join("notes.txt").exists(), "the file is kept");
}

#[test]
fn rebase_conflict_is_reported() {
    let mut ws = Ws::new();
    let repo = ws.repo("api");
    let mut server = ws.server();
    let wt = diverged(
        &mut ws,
        &mut server,
        &repo,
        "openspec/specs/greeting/spec.md",
        "# main's own greeting spec\n",
    );
    let failed = state(
        &mut server,
        "archive-change",
        serde_json::from_str(CONFIRM).unwrap(),
    );
    let fin = &failed["finalization"];
    assert_eq!(fin["recovery"]["kind"], "rebase-conflict", "{failed:#}");
    assert_eq!(fin["failedStep"], "rebase-onto-main");
    assert_eq!(
        fin["recovery"]["remainingSteps"],
        json!([
            "resolve-or-abort-rebase",
            "merge-to-main-retry",
            "worktree-remove",
            "branch-delete"
        ])
    );
    assert!(wt.exists());
}

#[test]
fn scan_failures_are_per_folder_warnings() {
    let mut ws = Ws::new();
    let api = ws.repo("api");
    let gone = ws.plain("gone");
    let mut server = ws.server();
    std::fs::remove_dir_all(&gone).unwrap();
    std::fs::create_dir_all(api.join("openspec/changes/one")).unwrap();
    let explored = state(&mut server, "explore", json!({}));
    assert_eq!(
        explored["warnings"].as_array().unwrap().len(),
        1,
        "{explored:#}"
    );
    assert_eq!(explored["warnings"][0]["folderId"], "gone");
    assert_eq!(
        explored["warnings"][0]["code"],
        "PROPOSAL_FOLDER_SCAN_FAILED"
    );
    assert_eq!(
        explored["activeChanges"][0]["changeId"], "one",
        "the other folder still answers"
    );
    let unverified = state(&mut server, "explore", json!({ "changeName": "one" }));
    assert_eq!(unverified["errors"][0]["code"], "PROPOSAL_OWNER_UNVERIFIED");
    let unknown = state(&mut server, "explore", json!({ "folderId": "nope" }));
    assert_eq!(
        unknown["errors"][0]["code"],
        "MCP_WORKSPACE_FOLDER_UNAUTHORIZED"
    );
}

/// The spec tools a server lists.
fn spec_tool_names(server: &mut Server) -> Vec<String> {
    let reply = server.request("tools/list", json!({}));
    reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .filter(|n| SPEC_TOOLS.contains(&n.as_str()))
        .collect()
}

const SPEC_TOOLS: [&str; 5] = [
    "explore",
    "create-plan",
    "create-proposal",
    "apply-change",
    "archive-change",
];

#[test]
fn allowed_roots_alone_serve_no_spec_tools() {
    let mut ws = Ws::new();
    let api = ws.repo("api");
    let root = api.display().to_string();
    let cli = ws.cli.display().to_string();
    let by_flag = ws.fx.server(
        &["--allowed-root", &root],
        &[("FYLLO_OPENSPEC_CLI_PATH", &cli)],
    );
    let by_env = ws.fx.server(
        &[],
        &[
            ("FLUXGIT_MCP_ALLOWED_ROOTS", &root),
            ("FYLLO_OPENSPEC_CLI_PATH", &cli),
        ],
    );
    for mut server in [by_flag, by_env] {
        assert!(spec_tool_names(&mut server).is_empty());
        let reply = server.request(
            "tools/call",
            json!({ "name": "create-proposal", "arguments": { "changeName": "x", "worktreeMode": "main" } }),
        );
        let refused = reply.get("error").is_some() || reply["result"]["isError"] == true;
        assert!(refused, "{reply}");
        // The git tools are still there.
        let status = server.call("repo.status", json!({ "repoPath": root }));
        assert!(status.is_object(), "{status}");
    }
    assert!(
        !api.join("openspec").exists(),
        "nothing written into the project"
    );
}

#[test]
fn a_missing_cli_is_reported_at_call_time() {
    let mut ws = Ws::new();
    ws.repo("api");
    ws.cli = ws.fx.path("no-such-openspec");
    let mut server = ws.server();
    let failed = state(
        &mut server,
        "create-proposal",
        json!({ "changeName": "one", "worktreeMode": "main" }),
    );
    let e = &failed["errors"][0];
    assert_eq!(e["code"], "OPENSPEC_NOT_FOUND", "{failed:#}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("FYLLO_OPENSPEC_CLI_PATH")
    );
}

#[test]
fn events_are_dropped_for_the_host() {
    let mut ws = Ws::new();
    ws.repo("api");
    let events = ws.data().join("mcp-events");
    let desc = ws.descriptor().replace(
        "\"sessionId\"",
        &format!("\"mcpEventDir\":{},\"sessionId\"", json!(events)),
    );
    let cli = ws.cli.display().to_string();
    let mut server = ws.fx.server(
        &[],
        &[
            ("FYLLO_WORKSPACE_JSON", &desc),
            ("FYLLO_OPENSPEC_CLI_PATH", &cli),
        ],
    );
    state(
        &mut server,
        "create-plan",
        json!({ "goal": "g", "slug": "p" }),
    );
    let files: Vec<_> = std::fs::read_dir(&events).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let event: Value = serde_json::from_str(&read(&files[0].path())).unwrap();
    assert_eq!(event["tool"], "create-plan");
    assert_eq!(event["sessionId"], "s-1");
    assert_eq!(event["workspaceId"], "ws-1");
    assert!(event["planSlug"].as_str().unwrap().ends_with("-p"));
}
