//! The official clients of the current generation: the TypeScript v2 client
//! (`@modelcontextprotocol/client` 2.x) in both eras and the Inspector 2.x CLI, each over
//! stdio and Streamable HTTP, beside the v1 SDK and the Python SDK of the other interop
//! tests. Pinned in package-lock.json; skipped (failing in CI) when not installed.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{Fixture, gitward_bin};
use crate::http::HttpServer;
use crate::interop::fixture_repo;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn installed(package: &str) -> bool {
    let there = root()
        .join("node_modules")
        .join(package)
        .join("package.json")
        .exists();
    assert!(
        there || std::env::var_os("CI").is_none(),
        "{package} is missing in CI: scripts/setup must install it"
    );
    there
}

fn node(fx: &Fixture) -> Command {
    let mut cmd = Command::new("node");
    cmd.current_dir(root())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env());
    cmd
}

fn run(what: &str, cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_typescript_v2_client_lists_and_calls_in_both_eras_over_both_transports() {
    if !installed("@modelcontextprotocol/client") {
        return;
    }
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let root_arg = repo.display().to_string();
    let http = HttpServer::start(&fx, &["--allowed-root", &root_arg], &[]);
    let url = http.url("/mcp");
    for (kind, target) in [
        ("stdio", gitward_bin().display().to_string()),
        ("http", url),
    ] {
        for (era, version) in [("legacy", "2025-11-25"), ("modern", "2026-07-28")] {
            let what = format!("the TypeScript v2 client ({kind}, {era})");
            let stdout = run(
                &what,
                node(&fx)
                    .arg("tests/interop/ts_v2_client.mjs")
                    .args([kind, &target, &root_arg, era]),
            );
            let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
            assert_eq!(summary["protocolVersion"], version, "{what}: {summary}");
            let tools = summary["tools"].as_array().unwrap();
            assert!(tools.len() > 20, "{what}: {summary}");
            assert!(tools.contains(&"repo_status".into()), "{what}: {summary}");
            for name in ["repo_status", "repo.status"] {
                assert_eq!(summary["calls"][name], "main", "{what}: {summary}");
            }
            let error = summary["error"].as_str().unwrap_or_default();
            assert!(
                error.contains("no commit named 'no-such-branch'"),
                "{what}: {summary}"
            );
        }
    }
}

#[test]
fn the_inspector_2_cli_lists_and_calls_over_both_transports() {
    if !installed("@modelcontextprotocol/inspector") {
        return;
    }
    let fx = Fixture::new();
    let repo = fixture_repo(&fx);
    let root_arg = repo.display().to_string();
    let http = HttpServer::start(&fx, &["--allowed-root", &root_arg], &[]);
    let launcher = "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js";
    let stdio_target = [
        gitward_bin().display().to_string(),
        "--allowed-root".into(),
        root_arg.clone(),
    ];
    let http_target = [http.url("/mcp")];
    for (kind, target) in [("stdio", &stdio_target[..]), ("http", &http_target[..])] {
        let inspect = |extra: &[&str]| -> Value {
            let what = format!("the Inspector 2 CLI ({kind}) {extra:?}");
            let stdout = run(
                &what,
                node(&fx)
                    .arg(launcher)
                    .arg("--cli")
                    .args(target)
                    .args(extra),
            );
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{what}: {e}: {stdout}"))
        };
        let list = inspect(&["--method", "tools/list"]);
        let names: Vec<&str> = list["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{kind}: {list}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"repo_status"), "{kind}: {names:?}");
        // The Inspector calls only what it was shown: the listed name.
        let repo_arg = format!("repoPath={root_arg}");
        let ok = inspect(&[
            "--method",
            "tools/call",
            "--tool-name",
            "repo_status",
            "--tool-arg",
            &repo_arg,
        ]);
        assert_ne!(ok["isError"], true, "{kind}: {ok}");
        assert_eq!(
            ok["structuredContent"]["data"]["branch"], "main",
            "{kind}: {ok}"
        );
    }
}
