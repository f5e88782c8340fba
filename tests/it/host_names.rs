//! A strict host: Claude Desktop and claude.ai withhold a server's whole tool list when one
//! name falls outside `^[a-zA-Z0-9_-]{1,64}$`, and Copilot CLI refuses it. By default
//! every era and transport lists names of that shape; every tool answers to that name and
//! to the seed's dotted one; and what names a tool to the model (instructions,
//! descriptions, hints, `nextAction`, error texts) names it as it is listed. With
//! `--tool-names seed` (or `GITWARD_TOOL_NAMES=seed`) the seed's names are listed exactly.

use serde_json::{Value, json};

use crate::common::registry::minimal_arguments;
use crate::common::{Fixture, MODERN, Server};
use crate::http::{HttpServer, init_body};
use crate::interop::fixture_repo;

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The pattern strict hosts hold every tool name to.
fn host_accepts(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The dotted tool names a text names, by the seed's groups.
fn dotted_names(text: &str) -> Vec<String> {
    const GROUPS: [&str; 11] = [
        "agents",
        "commit",
        "conflict",
        "diff",
        "fleet",
        "flux",
        "operation",
        "repo",
        "safety",
        "submodule",
        "worktree",
    ];
    let word = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_';
    text.split(|c: char| !word(c))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| {
            w.split_once('.').is_some_and(|(g, rest)| {
                GROUPS.contains(&g) && rest.starts_with(|c: char| c.is_ascii_alphabetic())
            })
        })
        .map(str::to_owned)
        .collect()
}

/// Every string in `value`, keys aside.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(obj) => obj.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Removes every `lastTool`: what presence records, the identity.
fn without_presence_tools(value: &mut Value) {
    match value {
        Value::Object(obj) => {
            obj.remove("lastTool");
            obj.values_mut().for_each(without_presence_tools);
        }
        Value::Array(items) => items.iter_mut().for_each(without_presence_tools),
        _ => {}
    }
}

/// The dotted names in a call's answer, besides the envelope's `tool` (an error's data
/// repeats it) and presence's `lastTool`: those are the tool's identity, which stays the
/// seed's name.
fn dotted_in_answer(payload: &Value) -> Vec<String> {
    let mut payload = payload.clone();
    if let Some(obj) = payload.as_object_mut() {
        obj.remove("tool");
    }
    if let Some(data) = payload
        .get_mut("error")
        .and_then(|e| e.get_mut("data"))
        .and_then(Value::as_object_mut)
    {
        data.remove("tool");
    }
    without_presence_tools(&mut payload);
    let mut texts = Vec::new();
    strings(&payload, &mut texts);
    texts.iter().flat_map(|t| dotted_names(t)).collect()
}

/// The seed's name of a listed safe name: the dots put back where the seed has them.
fn seed_of(safe: &str, seed_names: &[String]) -> String {
    seed_names
        .iter()
        .find(|s| s.replace('.', "_") == safe)
        .cloned()
        .unwrap_or_else(|| panic!("no seed name for {safe}"))
}

/// One conversation, over either transport, in one era.
trait Conversation {
    fn ask(&mut self, method: &str, params: Value) -> Value;
}

struct Stdio {
    server: Server,
    modern: bool,
}

impl Stdio {
    fn open(fx: &Fixture, args: &[&str], env: &[(&str, &str)], era: &str) -> (Stdio, Value) {
        let mut server = Server::start(fx, args, env);
        if era == MODERN {
            let discover = server.request("server/discover", json!({}));
            return (
                Stdio {
                    server,
                    modern: true,
                },
                discover,
            );
        }
        let init = server.request_raw(
            "initialize",
            json!({ "protocolVersion": era, "capabilities": {}, "clientInfo": { "name": "strict-host", "version": "1" } }),
        );
        server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        (
            Stdio {
                server,
                modern: false,
            },
            init,
        )
    }
}

impl Conversation for Stdio {
    fn ask(&mut self, method: &str, params: Value) -> Value {
        if self.modern {
            self.server.request(method, params)
        } else {
            self.server.request_raw(method, params)
        }
    }
}

struct Http {
    server: HttpServer,
    era: String,
    session: Option<String>,
}

impl Http {
    fn open(fx: &Fixture, args: &[&str], env: &[(String, String)], era: &str) -> (Http, Value) {
        let server = HttpServer::start(fx, args, env);
        if era == MODERN {
            let mut http = Http {
                server,
                era: era.to_owned(),
                session: None,
            };
            let discover = http.ask("server/discover", json!({}));
            return (http, discover);
        }
        let body = init_body().replace("2025-11-25", era);
        let init = server.post("/mcp", &[], &body);
        assert_eq!(init.status, 200, "{}", init.body);
        let session = init.header("mcp-session-id").map(str::to_owned);
        let http = Http {
            server,
            era: era.to_owned(),
            session,
        };
        (http, init.json())
    }
}

impl Conversation for Http {
    fn ask(&mut self, method: &str, params: Value) -> Value {
        let mut params = params;
        let mut headers = Vec::new();
        if self.era == MODERN {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "strict-host", "version": "1" },
            });
        }
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id", session.as_str()));
        }
        if self.era.as_str() >= "2025-06-18" {
            headers.push(("MCP-Protocol-Version", self.era.as_str()));
        }
        let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
        let reply = self.server.post("/mcp", &headers, &body.to_string());
        assert_eq!(reply.status, 200, "{method}: {}", reply.body);
        reply.json()
    }
}

/// The listed tools, checked the way a strict host checks them.
fn strict_list(conversation: &mut dyn Conversation, what: &str) -> Vec<Value> {
    let list = conversation.ask("tools/list", json!({}));
    let tools = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: tools/list failed: {list}"))
        .clone();
    assert!(!tools.is_empty(), "{what}");
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        assert!(host_accepts(name), "{what}: a strict host refuses {name:?}");
        let description = tool["description"].as_str().unwrap();
        assert_eq!(
            dotted_names(description),
            Vec::<String>::new(),
            "{what}: {name}'s description names tools that are not listed"
        );
    }
    tools
}

/// The instructions name only listed tools.
fn strict_instructions(opening: &Value, what: &str) {
    let text = opening["result"]["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no instructions: {opening}"));
    assert!(text.contains("repo_brief"), "{what}: {text}");
    assert_eq!(dotted_names(text), Vec::<String>::new(), "{what}: {text}");
}

/// Calls every listed tool by its listed name and by the seed's; both reach the same
/// tool, and neither answer names a tool by a name that is not listed.
fn call_by_both_names(
    conversation: &mut dyn Conversation,
    tools: &[Value],
    seed_names: &[String],
    repo: &std::path::Path,
    what: &str,
) {
    for tool in tools {
        let listed = tool["name"].as_str().unwrap();
        let seed = seed_of(listed, seed_names);
        let args = minimal_arguments(tool, repo);
        for name in [listed, seed.as_str()] {
            let reply = conversation.ask("tools/call", json!({ "name": name, "arguments": args }));
            let result = &reply["result"];
            assert!(
                result.is_object(),
                "{what}: calling {name} did not reach the tool: {reply}"
            );
            let text = result["content"][0]["text"].as_str().unwrap();
            let payload: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            if payload.is_object() {
                // The identity, whichever name called it.
                assert_eq!(payload["tool"], json!(seed), "{what}: {name}: {text}");
            }
            let dotted = dotted_in_answer(&payload);
            assert!(
                dotted.is_empty(),
                "{what}: {name}'s answer names {dotted:?}: {text}"
            );
        }
    }
}

/// The seed's names, as `--tool-names seed` lists them.
fn seed_names(fx: &Fixture, args: &[&str]) -> Vec<String> {
    let mut all = args.to_vec();
    all.extend(["--tool-names", "seed"]);
    let mut server = Server::start(fx, &all, &[]);
    let list = server.request("tools/list", json!({}));
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_strict_host_accepts_every_list_and_every_tool_answers_to_both_names() {
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    // Without spec tools: their names have no dots, and calling them writes a workspace.
    let args = ["--toolsets", "git,ops"];
    let seed = seed_names(&fx, &args);
    assert!(seed.iter().any(|n| n == "repo.brief"), "{seed:?}");
    for era in LEGACY.iter().copied().chain([MODERN]) {
        let (mut stdio, opening) = Stdio::open(&fx, &args, &[], era);
        let what = format!("stdio {era}");
        strict_instructions(&opening, &what);
        let tools = strict_list(&mut stdio, &what);
        assert_eq!(tools.len(), seed.len(), "{what}");
        call_by_both_names(&mut stdio, &tools, &seed, &repo, &what);

        let (mut http, opening) = Http::open(&fx, &args, &[], era);
        let what = format!("http {era}");
        strict_instructions(&opening, &what);
        let tools = strict_list(&mut http, &what);
        assert_eq!(tools.len(), seed.len(), "{what}");
        call_by_both_names(&mut http, &tools, &seed, &repo, &what);
    }
}

#[test]
fn with_the_spec_tools_every_list_stays_strict() {
    let fx = Fixture::new();
    let root = fx.root().display().to_string();
    // The spec tools are served only with a workspace descriptor.
    let workspace = fx.workspace_file(&fx.root());
    let args = ["--allowed-root", root.as_str(), "--workspace", &workspace];
    let has_spec_tools = |tools: &[Value]| tools.iter().any(|t| t["name"] == "create-proposal");
    for era in LEGACY.iter().copied().chain([MODERN]) {
        let (mut stdio, _) = Stdio::open(&fx, &args, &[], era);
        let tools = strict_list(&mut stdio, &format!("stdio {era}"));
        assert!(has_spec_tools(&tools), "stdio {era}: no spec tools");
        // Over HTTP the spec tools come with a workspace capability's URL, not with
        // `--workspace`; the names are the same ones.
        let (mut http, _) = Http::open(&fx, &args, &[], era);
        strict_list(&mut http, &format!("http {era}"));
    }
}

#[test]
fn seed_names_are_listed_exactly_when_asked_for_by_flag_or_environment() {
    let fx = Fixture::new();
    let by_flag = seed_names(&fx, &[]);
    let mut server = Server::start(&fx, &[], &[("GITWARD_TOOL_NAMES", "seed")]);
    let list = server.request("tools/list", json!({}));
    let by_env: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(by_flag, by_env);
    for name in [
        "repo.brief",
        "operation.preview.merge",
        "diff.semanticFallbacks",
    ] {
        assert!(by_env.contains(&name), "{by_env:?}");
    }
    // The seed's names in the instructions too.
    let discover = server.request("server/discover", json!({}));
    let text = discover["result"]["instructions"].as_str().unwrap();
    assert!(text.contains("Start with repo.brief"), "{text}");
    // A value that is neither refuses to start, saying why.
    let out = std::process::Command::new(crate::common::gitward_bin())
        .args(["tools"])
        .env_clear()
        .envs(fx.env())
        .env("GITWARD_TOOL_NAMES", "dotted")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("GITWARD_TOOL_NAMES"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn hints_next_actions_and_error_texts_name_tools_as_listed() {
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    // The fixture's working tree has changes: the brief points at worktree.changes.
    for (style, expect_brief, expect_changes) in [
        (None, "repo_brief", "worktree_changes"),
        (Some("seed"), "repo.brief", "worktree.changes"),
    ] {
        let mut args = vec![];
        if let Some(style) = style {
            args.extend(["--tool-names", style]);
        }
        let mut server = Server::start(&fx, &args, &[]);
        let brief = server.call(expect_brief, json!({ "repoPath": repo }));
        assert_eq!(brief["tool"], "repo.brief", "{brief}");
        let hinted: Vec<&str> = brief["data"]["hints"]
            .as_array()
            .unwrap_or_else(|| panic!("{brief}"))
            .iter()
            .map(|h| h["tool"].as_str().unwrap())
            .collect();
        assert!(hinted.contains(&expect_changes), "{hinted:?}");
        // An error text names tools as listed: a restore point without a gateway.
        let failed = server.call(
            "flux.restorePointDetails",
            json!({ "repoPath": repo, "restorePointId": "rp_x" }),
        );
        let text = failed.to_string();
        if style.is_none() {
            assert!(text.contains("repo_reflog"), "{text}");
            assert!(!text.contains("repo.reflog"), "{text}");
        } else {
            assert!(text.contains("repo.reflog"), "{text}");
        }
        // An unknown tool lists what is served, as served.
        let unknown = server.request(
            "tools/call",
            json!({ "name": "repo.nothing", "arguments": {} }),
        );
        let served = unknown["error"]["data"]["readOnlyTools"].to_string();
        assert!(served.contains(&format!("\"{expect_brief}\"")), "{served}");
    }
}
