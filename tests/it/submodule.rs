//! `submodule.status` against nested submodules in every state.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::tool_snapshot;

/// A small repository with two commits; returns (path, first, second).
fn library(fx: &Fixture, rel: &str) -> (PathBuf, String, String) {
    let repo = fx.init(rel, &[]);
    let first = fx.commit(&repo, "lib.txt", "v1\n", "lib v1");
    let second = fx.commit(&repo, "lib.txt", "v2\n", "lib v2");
    (repo, first, second)
}

fn add_sub(fx: &Fixture, parent: &Path, url: &Path, at: &str) {
    fx.git(
        parent,
        &["submodule", "add", "-q", url.to_str().unwrap(), at],
    );
}

/// top ─ libs/lib (drifted) ─ deep (clean, nested)
///     ├ dirty-sub (modified file)
///     ├ uninit (deinitialized)
///     └ gone (directory removed, URL with credentials)
fn world(fx: &Fixture) -> (PathBuf, String) {
    let (deep, _, _) = library(fx, "src/deep");
    let (lib, _, _) = library(fx, "src/lib");
    add_sub(fx, &lib, &deep, "deep");
    fx.git(&lib, &["commit", "-q", "-m", "lib adds deep"]);
    let (plain, _, _) = library(fx, "src/plain");

    let top = fx.init("top", &[]);
    fx.commit(&top, "README", "top\n", "top");
    add_sub(fx, &top, &lib, "libs/lib");
    add_sub(fx, &top, &plain, "dirty-sub");
    add_sub(fx, &top, &plain, "uninit");
    add_sub(fx, &top, &plain, "gone");
    fx.git(&top, &["commit", "-q", "-m", "add submodules"]);
    fx.git(
        &top,
        &["submodule", "update", "-q", "--init", "--recursive"],
    );
    fx.git(
        &top,
        &[
            "config",
            "-f",
            ".gitmodules",
            "submodule.gone.url",
            "https://user:s3cret@example.com/gone.git",
        ],
    );
    fx.git(&top, &["commit", "-q", "-am", "credentials in a url"]);

    let lib_in_top = top.join("libs/lib");
    let recorded = fx.git(&lib_in_top, &["rev-parse", "HEAD"]);
    fx.commit(&lib_in_top, "lib.txt", "v3\n", "lib moves ahead");
    fx.write(&top.join("dirty-sub"), "lib.txt", "local edit\n");
    fx.git(&top, &["submodule", "deinit", "-q", "-f", "uninit"]);
    std::fs::remove_dir_all(top.join("gone")).unwrap();
    (top, recorded)
}

fn by_path<'a>(data: &'a Value, path: &str) -> &'a Value {
    data["submodules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == path)
        .unwrap_or_else(|| panic!("{path} not listed: {data}"))
}

#[test]
fn submodule_status_nested_submodules_in_every_state() {
    let fx = Fixture::new();
    let (top, recorded) = world(&fx);
    let result = fx.call("submodule.status", json!({ "repoPath": top }));
    tool_snapshot!("submodule_status_states", fx, result);
    let data = &result["data"];
    assert!(!data.to_string().contains("s3cret"), "credentials leaked");
    let lib = by_path(data, "libs/lib");
    assert_eq!(lib["state"], "drifted");
    assert_eq!(lib["recordedOid"], recorded);
    assert_eq!(
        lib["checkedOutOid"],
        fx.git(&top.join("libs/lib"), &["rev-parse", "HEAD"])
    );
    let deep = by_path(data, "libs/lib/deep");
    assert_eq!(deep["parentPath"], "libs/lib");
    assert_eq!(deep["relativePath"], "deep");
    assert_eq!(deep["depth"], 2);
    assert_eq!(deep["state"], "clean");
    assert_eq!(by_path(data, "dirty-sub")["state"], "dirty");
    assert_eq!(by_path(data, "dirty-sub")["dirty"], true);
    assert_eq!(by_path(data, "uninit")["state"], "uninitialized");
    assert_eq!(by_path(data, "uninit")["checkedOutOid"], json!(null));
    assert_eq!(by_path(data, "gone")["state"], "missing");

    // The same picture as `git submodule status --recursive` (which cannot tell dirty
    // or missing apart from clean and uninitialized).
    let plain = fx.git(&top, &["submodule", "status", "--recursive"]);
    for line in plain.lines() {
        let flag = &line[..1];
        let mut fields = line[1..].split(' ');
        let (oid, path) = (fields.next().unwrap(), fields.next().unwrap());
        let ours = by_path(data, path);
        let expected = match flag {
            "+" => vec!["drifted"],
            "-" => vec!["uninitialized", "missing"],
            "U" => vec!["conflict"],
            _ => vec!["clean", "dirty"],
        };
        assert!(
            expected.contains(&ours["state"].as_str().unwrap()),
            "{line} vs {ours}"
        );
        if flag == "+" || flag == " " {
            assert_eq!(ours["checkedOutOid"], oid, "{line}");
        } else {
            assert_eq!(ours["recordedOid"], oid, "{line}");
        }
    }
}

#[test]
fn path_filter_reaches_nested_submodules() {
    let fx = Fixture::new();
    let (top, _) = world(&fx);
    let mut server = fx.server(&[], &[]);
    let nested = server.call(
        "submodule.status",
        json!({ "repoPath": top, "path": "libs/lib/deep" }),
    );
    let paths: Vec<_> = nested["data"]["submodules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].clone())
        .collect();
    assert_eq!(paths, vec![json!("libs/lib/deep")]);
    let subtree = server.call(
        "submodule.status",
        json!({ "repoPath": top, "path": "libs/" }),
    );
    assert_eq!(subtree["data"]["total"], 2);
    let none = server.call(
        "submodule.status",
        json!({ "repoPath": top, "path": "README" }),
    );
    assert_eq!(none["data"]["total"], 0);
}

#[test]
fn conflicting_pointer() {
    let fx = Fixture::new();
    let lib = fx.init("src/lib", &[]);
    fx.commit(&lib, "lib.txt", "base\n", "base");
    fx.git(&lib, &["checkout", "-q", "-b", "left"]);
    let left = fx.commit(&lib, "lib.txt", "left\n", "left");
    fx.git(&lib, &["checkout", "-q", "-b", "right", "main"]);
    let right = fx.commit(&lib, "lib.txt", "right\n", "right");
    fx.git(&lib, &["checkout", "-q", "main"]);
    let top = fx.init("top", &[]);
    add_sub(&fx, &top, &lib, "lib");
    fx.git(&top, &["commit", "-q", "-m", "add lib"]);
    fx.git(&top, &["checkout", "-q", "-b", "other"]);
    fx.git(&top.join("lib"), &["checkout", "-q", &left]);
    fx.git(&top, &["commit", "-q", "-am", "lib to left"]);
    fx.git(&top, &["checkout", "-q", "main"]);
    fx.git(&top, &["submodule", "update", "-q"]);
    fx.git(&top.join("lib"), &["checkout", "-q", &right]);
    fx.git(&top, &["commit", "-q", "-am", "lib to right"]);
    assert!(
        !fx.git_output(&top, &["merge", "--no-edit", "other"])
            .status
            .success()
    );
    let result = fx.call("submodule.status", json!({ "repoPath": top }));
    let lib = by_path(&result["data"], "lib");
    assert_eq!(lib["state"], "conflict", "{result}");
    assert_eq!(lib["recordedOid"], json!(null));
    assert!(fx.git(&top, &["submodule", "status"]).starts_with('U'));
    // conflict.read shows the pointer's sides as submodule commits, without contents.
    let conflict = fx.call("conflict.read", json!({ "repoPath": top }));
    let file = &conflict["data"]["files"][0];
    assert_eq!(file["path"], "lib");
    assert_eq!(file["sides"]["ours"]["sha"], right);
    assert_eq!(file["sides"]["theirs"]["sha"], left);
    assert_eq!(file["sides"]["theirs"]["submodule"], true);
    assert_eq!(file["sides"]["theirs"]["mode"], "160000");
    assert!(file["sides"]["theirs"].get("content").is_none());
}

#[test]
fn no_submodules_sha256_and_bad_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &["--object-format=sha256"]);
    fx.commit(&repo, "a.txt", "x\n", "first");
    let bare = fx.clone(&repo, "bare.git", true);
    let mut server = fx.server(&[], &[]);
    let empty = server.call("submodule.status", json!({ "repoPath": repo }));
    assert_eq!(empty["data"]["total"], 0);
    let errors: Vec<Value> = [
        json!({ "repoPath": repo, "path": "../outside" }),
        json!({ "repoPath": repo, "path": "/etc" }),
        json!({ "repoPath": repo, "path": "--output=x" }),
        json!({ "repoPath": bare }),
    ]
    .into_iter()
    .map(|args| server.call("submodule.status", args)["error"].clone())
    .collect();
    tool_snapshot!("submodule_status_bad_input", fx, json!(errors));
}

/// Runs git with arguments that need not be UTF-8; returns stdout.
fn git_bytes(fx: &Fixture, dir: &Path, args: &[&[u8]]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut cmd = std::process::Command::new("git");
    cmd.current_dir(dir)
        .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (k, v) in fx.env() {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    out.stdout
}

#[test]
fn a_name_and_path_that_are_not_utf8() {
    use base64::Engine;
    let fx = Fixture::new();
    let (plain, _, _) = library(&fx, "src/plain");
    let top = fx.init("top", &[]);
    fx.commit(&top, "README", "top\n", "top");
    add_sub(&fx, &top, &plain, "plain");
    let url = plain.to_str().unwrap().as_bytes();
    git_bytes(&fx, &top, &[b"submodule", b"add", b"-q", url, b"caf\xe9"]);
    fx.git(&top, &["commit", "-q", "-m", "add submodules"]);

    let data = fx.call("submodule.status", json!({ "repoPath": top }))["data"].clone();
    let decode = |v: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap())
            .unwrap()
    };
    let ours: Vec<(u8, Vec<u8>, Vec<u8>)> = data["submodules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let raw = |field: &str, bytes: &str| match s.get(bytes) {
                Some(b) => decode(b),
                None => s[field].as_str().unwrap_or("").as_bytes().to_vec(),
            };
            assert!(s["url"].as_str().is_some_and(|u| !u.is_empty()), "{s}");
            let mark = match s["state"].as_str().unwrap() {
                "clean" => b' ',
                "uninitialized" => b'-',
                other => panic!("{other}: {s}"),
            };
            (
                mark,
                raw("path", "pathBytesB64"),
                raw("name", "nameBytesB64"),
            )
        })
        .collect();
    // `git submodule status`: a state mark, the commit, the path.
    let theirs: Vec<(u8, Vec<u8>)> = git_bytes(&fx, &top, &[b"submodule", b"status"])
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let path = l[42..].split(|b| *b == b' ').next().unwrap().to_vec();
            (l[0], path)
        })
        .collect();
    let mut ours_by_path: Vec<(u8, Vec<u8>)> =
        ours.iter().map(|(m, p, _)| (*m, p.clone())).collect();
    ours_by_path.sort_by(|a, b| a.1.cmp(&b.1));
    let mut theirs = theirs;
    theirs.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(ours_by_path, theirs);
    assert!(
        ours.iter()
            .any(|(m, p, n)| *m == b' ' && p == b"caf\xe9" && n == b"caf\xe9")
    );
    assert!(ours.iter().any(|(_, p, n)| p == b"plain" && n == b"plain"));
}
