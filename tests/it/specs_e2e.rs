//! The execution paths played end to end as an agent plays them: every file it writes,
//! every argument it passes and every command it runs comes from what the tools returned
//! (the instruction text and the state), never from knowledge of the server. Each path
//! runs in a one-folder and in a two-folder workspace, and ends with the implementation
//! and the archive on main, the worktree and the branch gone, and every tool and
//! parameter the followed instructions named served for real.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Server;
use crate::specs::{Ws, read};

/// The project the user asks for: a greeting script and the spec it implements.
const SPEC: &str = "# greeting Specification\n\n## Purpose\n\nThe greeting the command line prints to welcome its user on every start.\n\n## Requirements\n\n### Requirement: Greeting\nThe script SHALL print `hi`.\n\n#### Scenario: Run\n- **WHEN** the user runs greet.sh\n- **THEN** it prints hi\n";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Flow {
    Plan,
    Linked,
    Main,
}

/// An agent that knows the user's request and nothing of the server but its answers.
struct Agent {
    server: Server,
    /// Each served tool's input parameters.
    tools: Vec<(String, BTreeSet<String>)>,
    /// Every instruction text it received, with the tool that gave it.
    followed: Vec<(String, String)>,
    /// Every key of every state it received.
    keys: BTreeSet<String>,
}

impl Agent {
    fn new(mut server: Server) -> Agent {
        let list = server.request("tools/list", json!({}));
        let tools = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let params = t["inputSchema"]["properties"]
                    .as_object()
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                (t["name"].as_str().unwrap().to_owned(), params)
            })
            .collect();
        Agent {
            server,
            tools,
            followed: Vec::new(),
            keys: BTreeSet::new(),
        }
    }

    /// Calls a tool the way its schema declares it, and reads the two sections.
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let params = &self
            .tools
            .iter()
            .find(|(n, _)| n == tool)
            .unwrap_or_else(|| panic!("{tool} is not served"))
            .1;
        for key in args.as_object().unwrap().keys() {
            assert!(params.contains(key), "{tool} has no parameter {key}");
        }
        let reply = self
            .server
            .request("tools/call", json!({ "name": tool, "arguments": args }));
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}: {reply}"))
            .to_owned();
        assert_ne!(reply["result"]["isError"], true, "{tool}: {text}");
        let instruction = section(&text, "tool_instruction");
        let state: Value = serde_json::from_str(&section(&text, "state")).unwrap();
        assert_eq!(state, reply["result"]["structuredContent"]);
        self.followed.push((tool.to_owned(), instruction));
        collect_keys(&state, &mut self.keys);
        state
    }

    /// Every tool an instruction names is served, and every parameter or field it names
    /// exists: a parameter of a served tool, or a key of a state the agent received.
    fn check_instructions(&self, states_of_forwarded: &[Value]) {
        let mut texts: Vec<(String, String)> = self.followed.clone();
        for s in states_of_forwarded {
            for a in s["artifacts"].as_array().into_iter().flatten() {
                texts.push((
                    format!("forwarded {}", a["id"]),
                    a["instruction"].as_str().unwrap_or_default().to_owned(),
                ));
            }
        }
        let params: BTreeSet<&String> = self.tools.iter().flat_map(|(_, p)| p).collect();
        let served: BTreeSet<&str> = self.tools.iter().map(|(n, _)| n.as_str()).collect();
        let mut checked: BTreeSet<String> = BTreeSet::new();
        for (from, text) in &texts {
            if from.starts_with("forwarded") {
                // OpenSpec's own guidance names its CLI; ours must override it first.
                if text.contains("openspec ") {
                    assert!(text.starts_with("[gitward"), "{from}: {text:.300}");
                }
                continue;
            }
            assert!(
                !text.contains("changeId` from"),
                "{from}: the field is changeName"
            );
            for token in backticked(text) {
                let word = token.split(':').next().unwrap().trim();
                if is_tool_like(word) {
                    assert!(served.contains(word), "{from} names the tool {word}");
                    checked.insert(word.to_owned());
                    continue;
                }
                let segments: Vec<&str> = word
                    .strip_prefix("state.")
                    .unwrap_or(word)
                    .split('.')
                    .collect();
                let identifiers = segments
                    .iter()
                    .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()));
                let named = token.contains(": ")
                    || word.starts_with("state.")
                    || segments.iter().any(|s| is_camel(s));
                if !identifiers || !named {
                    continue;
                }
                for s in segments {
                    assert!(
                        params.contains(&s.to_owned()) || self.keys.contains(s),
                        "{from} names `{token}`, and `{s}` is neither a parameter nor a state field"
                    );
                    checked.insert(s.to_owned());
                }
            }
        }
        for named in [
            "archive-change",
            "apply-change",
            "changeName",
            "folderId",
            "commitMessage",
            "confirm",
            "worktreePath",
        ] {
            assert!(
                checked.contains(named),
                "the instructions name {named}: {checked:?}"
            );
        }
    }
}

fn section(text: &str, tag: &str) -> String {
    let open = format!("<{tag}>\n");
    let close = format!("\n</{tag}>");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("no {tag} in {text}"))
        + open.len();
    let end = text[start..].find(&close).unwrap() + start;
    text[start..end].to_owned()
}

fn collect_keys(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.insert(k.clone());
                collect_keys(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_keys(x, out)),
        _ => {}
    }
}

/// `worktreePath`, not `TBD` nor `draft`.
fn is_camel(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase()) && s.chars().any(|c| c.is_ascii_uppercase())
}

fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// A spec tool's name shape: `explore`, or a workflow verb and one noun in kebab-case
/// (`archive-change`); longer kebab words are codes (`archive-target-conflict`).
fn is_tool_like(word: &str) -> bool {
    let parts: Vec<&str> = word.split('-').collect();
    word == "explore"
        || (parts.len() == 2
            && ["create", "apply", "archive"].contains(&parts[0])
            && parts[1].chars().all(|c| c.is_ascii_lowercase())
            && !parts[1].is_empty())
}

/// Replaces one task's checkbox, found by the line number the state gave.
fn tick(tasks: &Path, line: u64) {
    let text = read(tasks);
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let l = &mut lines[line as usize - 1];
    assert!(l.contains("- [ ]"), "{l}");
    *l = l.replacen("- [ ]", "- [x]", 1);
    std::fs::write(tasks, lines.join("\n")).unwrap();
}

/// The workspace: `api` holds the project (a script and its spec, with OpenSpec set up);
/// with two folders, `web` sits beside it and must stay untouched.
fn workspace(folders: usize) -> (Ws, PathBuf, Option<PathBuf>) {
    let mut ws = Ws::new();
    let api = ws.repo("api");
    ws.fx.write(&api, "greet.sh", "echo hi\n");
    ws.fx
        .write(&api, "openspec/config.yaml", "schema: spec-driven\n");
    ws.fx.write(&api, "openspec/specs/greeting/spec.md", SPEC);
    ws.fx.git(&api, &["add", "-A"]);
    ws.fx.git(&api, &["commit", "-q", "-m", "greeting"]);
    let web = (folders == 2).then(|| ws.repo("web"));
    (ws, api, web)
}

fn play(path: Flow, folders: usize) {
    let (ws, api, web) = workspace(folders);
    let web_head = web.as_ref().map(|w| ws.fx.git(w, &["rev-parse", "HEAD"]));
    let mut agent = Agent::new(ws.server());

    // The user asks: "make the greeting in api louder". First, where is api?
    let explored = agent.call("explore", json!({}));
    let folder = explored["workspace"]["folders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == json!(api))
        .expect("the project is listed")
        .clone();
    assert_eq!(folder["git"], true);
    assert_eq!(folder["openspec"], true);
    let spec = folder["specs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "greeting")
        .expect("its spec is listed")
        .clone();
    assert_eq!(spec["requirementCount"], 1);
    assert_eq!(spec["title"], "greeting Specification");
    let several = explored["workspace"]["folders"].as_array().unwrap().len() > 1;
    let folder_id = folder["folderId"].as_str().unwrap().to_owned();
    let owner = |mut args: Value| {
        if several {
            args["folderId"] = json!(folder_id);
        }
        args
    };

    if path == Flow::Plan {
        // Exploratory work first: a session plan, outside every project.
        let plan = agent.call(
            "create-plan",
            json!({ "goal": "Find out how the greeting should change", "slug": "greeting" }),
        );
        let plan_path = PathBuf::from(plan["planPath"].as_str().unwrap());
        assert!(!plan_path.starts_with(&api));
        let skeleton = read(&plan_path);
        std::fs::write(
            &plan_path,
            skeleton.replace(
                "## Scope\n",
                "## Scope\n\nThe greeting printed by greet.sh; it is user-visible behaviour.\n",
            ),
        )
        .unwrap();
        // The investigation shows a user-visible change: the instruction says to stop
        // refining the plan and open a proposal.
        let told = &agent.followed.last().unwrap().1;
        assert!(told.contains("user-visible") && told.contains("`create-proposal`"));
    }

    let mut create = owner(json!({ "changeName": "loud-greeting" }));
    if path == Flow::Main {
        create["worktreeMode"] = json!("main");
    }
    let created = agent.call("create-proposal", create);
    assert_eq!(created["errors"], Value::Null, "{created:#}");
    let target = created["target"].clone();
    let wt = PathBuf::from(target["worktreePath"].as_str().unwrap());
    let folder_ref = target["proposalRef"]["folderId"]
        .as_str()
        .unwrap()
        .to_owned();
    let change_ref = target["proposalRef"]["changeId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(created["planningHome"]["root"], json!(wt));
    // Research the modified capability from the state, as the forwarded guidance says.
    let known = created["specs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "greeting")
        .unwrap()
        .clone();
    let current = read(Path::new(known["path"].as_str().unwrap()));
    let block = &current[current.find("### Requirement: Greeting").unwrap()..];

    // Write every artifact in dependency order, at the place the state names.
    let mut written: BTreeSet<String> = BTreeSet::new();
    let artifacts = created["artifacts"].as_array().unwrap().clone();
    while written.len() < artifacts.len() {
        let next = artifacts
            .iter()
            .find(|a| {
                !written.contains(a["id"].as_str().unwrap())
                    && a["requires"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|r| written.contains(r.as_str().unwrap()))
            })
            .expect("the dependency order leads somewhere");
        let id = next["id"].as_str().unwrap();
        let out = next["resolvedOutputPath"].as_str().unwrap();
        let (file, body) = match id {
            "proposal" => (out.to_owned(), "## Why\n\nThe greeting is too quiet for users who start the tool in a noisy terminal.\n\n## What Changes\n\n- greet.sh prints HI.\n\n## Capabilities\n\n### New Capabilities\n\n### Modified Capabilities\n- `greeting`: prints HI\n\n## Impact\n\ngreet.sh\n".to_owned()),
            "specs" => (
                out.replace("**/*.md", &format!("{}/spec.md", known["id"].as_str().unwrap())),
                format!("## MODIFIED Requirements\n\n{}", block.replace("print `hi`", "print `HI`").replace("prints hi", "prints HI")),
            ),
            "design" => {
                let text = next["instruction"].as_str().unwrap();
                assert!(text.starts_with("[gitward: required]"), "{text:.200}");
                (out.to_owned(), "## Context\n\ngreet.sh echoes a word.\n\n## Decisions\n\nEcho it in capitals.\n".to_owned())
            }
            "tasks" => (out.to_owned(), "## 1. Greeting\n\n- [ ] 1.1 Print HI in `greet.sh`; verify by running it\n- [ ] 1.2 Mention the loud greeting in `README.md`; verify by reading it\n".to_owned()),
            other => panic!("unexpected artifact {other}"),
        };
        assert!(file.starts_with(&wt.display().to_string()), "{file}");
        std::fs::create_dir_all(Path::new(&file).parent().unwrap()).unwrap();
        std::fs::write(&file, body).unwrap();
        written.insert(id.to_owned());
    }
    // Ready: status draft, by replacing the single top-level status value.
    let meta = wt.join(format!("openspec/changes/{change_ref}/.openspec.yaml"));
    let text = read(&meta);
    assert_eq!(text.lines().filter(|l| l.starts_with("status:")).count(), 1);
    let drafted: String = text
        .split_inclusive('\n')
        .map(|l| {
            if l.starts_with("status:") {
                "status: draft\n".to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect();
    std::fs::write(&meta, drafted).unwrap();

    // Apply: implement each task in the worktree, tick it at once, commit as told.
    let refs = json!({ "folderId": folder_ref, "changeName": change_ref });
    let applying = agent.call("apply-change", refs.clone());
    assert_eq!(applying["applyState"], "ready", "{applying:#}");
    let tasks_path = PathBuf::from(applying["tasksPath"].as_str().unwrap());
    for task in applying["tasks"].as_array().unwrap() {
        let text = task["text"].as_str().unwrap();
        if text.contains("greet.sh") {
            std::fs::write(wt.join("greet.sh"), "echo HI\n").unwrap();
        } else {
            std::fs::write(
                wt.join("README.md"),
                "# project\n\ngreet.sh greets loudly.\n",
            )
            .unwrap();
        }
        tick(&tasks_path, task["line"].as_u64().unwrap());
    }
    let told = agent.followed.last().unwrap().1.clone();
    assert!(told.contains("git -C <worktreePath> add -A"), "{told}");
    ws.fx.git(&wt, &["add", "-A"]);
    ws.fx
        .git(&wt, &["commit", "-q", "-m", "feat(greeting): print HI"]);
    let done = agent.call("apply-change", refs.clone());
    assert_eq!(done["applyState"], "all_done");

    // Archive: preview, then confirm with a message about the delivered work.
    let preview = agent.call("archive-change", refs.clone());
    assert_eq!(preview["status"], "done", "{preview:#}");
    assert_eq!(preview["finalizationCheck"]["blockers"], json!([]));
    let mut confirm = refs.clone();
    confirm["confirm"] = json!(true);
    confirm["commitMessage"] = json!("feat(greeting): greet loudly");
    let archived = agent.call("archive-change", confirm.clone());
    assert_eq!(archived["status"], "done", "{archived:#}");
    let main = PathBuf::from(archived["finalization"]["mainPath"].as_str().unwrap());
    assert_eq!(main, api);

    // Main holds the implementation, the archive and the synced spec; nothing is left.
    assert_eq!(ws.fx.git(&api, &["show", "HEAD:greet.sh"]), "echo HI");
    assert!(
        ws.fx
            .git(&api, &["show", "HEAD:README.md"])
            .contains("loudly")
    );
    let tree = ws.fx.git(
        &api,
        &["ls-tree", "-r", "--name-only", "HEAD", "openspec/changes"],
    );
    assert!(
        tree.contains(&format!("-{change_ref}/proposal.md")),
        "{tree}"
    );
    assert!(!tree.contains(&format!("changes/{change_ref}/")), "{tree}");
    let synced = ws
        .fx
        .git(&api, &["show", "HEAD:openspec/specs/greeting/spec.md"]);
    assert!(synced.contains("print `HI`"), "{synced}");
    assert_eq!(ws.fx.git(&api, &["status", "--porcelain"]), "");
    assert!(!api.join(".worktrees/loud-greeting").exists());
    assert_eq!(ws.fx.git(&api, &["branch", "--list", "proposal/*"]), "");
    assert_eq!(
        ws.fx
            .git(&api, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    if let (Some(web), Some(head)) = (&web, &web_head) {
        assert_eq!(&ws.fx.git(web, &["rev-parse", "HEAD"]), head);
        assert_eq!(ws.fx.git(web, &["status", "--porcelain", "--ignored"]), "");
    }
    // Asking again is answered truthfully, and changes nothing.
    let again = agent.call("archive-change", confirm);
    assert_eq!(again["errors"][0]["code"], "PROPOSAL_ALREADY_ARCHIVED");

    agent.check_instructions(&[created]);
}

#[test]
fn proposal_path_linked_in_one_folder() {
    play(Flow::Linked, 1);
}

#[test]
fn proposal_path_linked_in_two_folders() {
    play(Flow::Linked, 2);
}

#[test]
fn proposal_path_main_in_one_folder() {
    play(Flow::Main, 1);
}

#[test]
fn proposal_path_main_in_two_folders() {
    play(Flow::Main, 2);
}

#[test]
fn plan_path_turning_into_a_proposal_in_one_folder() {
    play(Flow::Plan, 1);
}

#[test]
fn plan_path_turning_into_a_proposal_in_two_folders() {
    play(Flow::Plan, 2);
}
