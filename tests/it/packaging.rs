//! What the installable packages say about gitward, checked against the crate: the MCP
//! Registry's `server.json` against the registry's published schema (vendored in
//! `tests/fixtures/mcp-registry/`, validated by the pinned Ajv), and the npm launcher, the
//! Python project and `server.json` against `Cargo.toml`, `package.json` and the README.
//! `scripts/test-install` builds and installs the packages themselves.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn json(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).expect(path);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Validates `document` against the vendored registry schema with Ajv (draft-07, formats
/// checked); the errors Ajv reports, empty when valid.
fn schema_errors(document: &Value) -> Vec<Value> {
    let ajv = root().join("node_modules/ajv-formats/package.json");
    if !ajv.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "node_modules lacks Ajv in CI: scripts/setup must install it"
        );
        eprintln!("SKIPPED server.json schema check: run scripts/setup");
        return Vec::new();
    }
    // The schema's descriptive `example` keywords are not JSON Schema: strict mode is off,
    // formats (uri) are still checked.
    let script = "const Ajv = require('ajv'); const formats = require('ajv-formats');\
        const ajv = new Ajv({ strict: false, allErrors: true }); formats(ajv);\
        const check = ajv.compile(require(process.argv[1]));\
        const doc = JSON.parse(require('fs').readFileSync(0, 'utf8'));\
        process.stdout.write(JSON.stringify(check(doc) ? [] : check.errors));";
    let mut child = Command::new("node")
        .current_dir(root())
        .args(["-e", script])
        .arg(root().join("tests/fixtures/mcp-registry/server.schema.json"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs");
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        document.to_string().as_bytes(),
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "Ajv did not run");
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

#[test]
fn server_json_matches_the_registry_schema() {
    let server = json("server.json");
    let errors = schema_errors(&server);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(
        server["$schema"],
        json("tests/fixtures/mcp-registry/server.schema.json")["$id"],
        "server.json names the schema it is checked against"
    );
    // The check can fail: a package without its transport is refused.
    let mut broken = server.clone();
    broken["packages"][0]
        .as_object_mut()
        .unwrap()
        .remove("transport");
    if root().join("node_modules/ajv-formats").exists() {
        assert!(!schema_errors(&broken).is_empty());
    }
}

#[test]
fn server_json_names_the_three_packages_and_both_transports() {
    let server = json("server.json");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(server["version"], version);
    let packages = server["packages"].as_array().unwrap();
    let mut seen = Vec::new();
    for package in packages {
        assert_eq!(package["version"], version, "{package}");
        assert_eq!(package["identifier"], "gitward", "{package}");
        let kind = package["registryType"].as_str().unwrap().to_owned();
        let transport = package["transport"]["type"].as_str().unwrap().to_owned();
        if transport == "streamable-http" {
            // A named argument is its flag, then its value.
            let args: Vec<&str> = package["packageArguments"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|a| [a["name"].as_str(), a["value"].as_str()])
                .flatten()
                .collect();
            // `serve --http ADDR` prints the URL the transport names.
            assert_eq!(args, ["serve", "--http", "127.0.0.1:8765"]);
            assert_eq!(package["transport"]["url"], "http://127.0.0.1:8765/mcp");
        }
        // Every variable is one gitward reads and the README documents.
        let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
        for var in package["environmentVariables"].as_array().unwrap() {
            let name = var["name"].as_str().unwrap();
            assert!(gitward::config::vars::ALL.contains(&name), "{name}");
            assert!(readme.contains(&format!("| `{name}` |")), "{name}");
        }
        seen.push(format!("{kind} {transport}"));
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "cargo stdio",
            "cargo streamable-http",
            "npm stdio",
            "npm streamable-http",
            "pypi stdio",
            "pypi streamable-http"
        ]
    );
}

#[test]
fn the_npm_launcher_pins_the_crate_version_and_openspec() {
    let launcher = json("packaging/npm/gitward/package.json");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(launcher["name"], "gitward");
    assert_eq!(launcher["version"], version);
    assert_eq!(launcher["bin"]["gitward"], "bin/gitward.js");
    // The OpenSpec CLI the spec tools are written against, as the checkout pins it.
    assert_eq!(
        launcher["dependencies"]["@fission-ai/openspec"],
        json("package.json")["dependencies"]["@fission-ai/openspec"]
    );
    let platforms = launcher["optionalDependencies"].as_object().unwrap();
    assert!(platforms.contains_key("gitward-linux-x64"));
    for (name, pinned) in platforms {
        assert_eq!(pinned, version, "{name}");
        // The launcher maps the platform to exactly these package names.
        let script =
            std::fs::read_to_string(root().join("packaging/npm/gitward/bin/gitward.js")).unwrap();
        assert!(script.contains(&format!("'{name}'")), "{name}");
    }
}

#[test]
fn the_python_project_builds_the_binary_with_the_crate_version() {
    let text = std::fs::read_to_string(root().join("pyproject.toml")).unwrap();
    assert!(text.contains("\nname = \"gitward\"\n"));
    assert!(text.contains("\nbindings = \"bin\"\n"));
    // The version comes from Cargo.toml.
    assert!(text.contains("\ndynamic = [\"version\"]\n"));
    assert!(!text.contains("\nversion = "));
}
