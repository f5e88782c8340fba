//! `repo.status` against real repositories.

use serde_json::json;

use crate::common::Fixture;
use crate::tool_snapshot;

#[test]
fn changes_of_every_kind() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    fx.commit(&repo, "old name.txt", "rename me\n", "second");
    fx.write(&repo, "a.txt", "a changed\n");
    fx.git(&repo, &["mv", "old name.txt", "new name.txt"]);
    fx.write(&repo, "untracked dir/new\nline.txt", "x\n");
    std::fs::write(repo.join(std::ffi::OsStr::new(unsafe_name())), "bytes\n").unwrap();

    let result = tool_snapshot!(
        "repo_status_changes",
        fx,
        "repo.status",
        json!({ "repoPath": repo })
    );
    let porcelain = fx.git(&repo, &["status", "--porcelain=v1"]);
    assert_eq!(
        result["data"]["changedFiles"].as_u64().unwrap() as usize,
        porcelain.lines().count(),
        "totals match git:\n{porcelain}"
    );
}

/// A file name that is not valid UTF-8.
fn unsafe_name() -> &'static std::ffi::OsStr {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(b"caf\xe9.txt")
}

#[test]
fn unborn_detached_and_subdirectory() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let unborn = fx.call("repo.status", json!({ "repoPath": repo }));
    assert_eq!(unborn["data"]["unborn"], true);
    assert_eq!(unborn["data"]["branch"], "main");
    assert_eq!(unborn["data"]["headOid"], json!(null));

    let first = fx.commit(&repo, "src/lib.rs", "fn main() {}\n", "first");
    fx.commit(&repo, "src/lib.rs", "fn main() { }\n", "second");
    fx.git(&repo, &["checkout", "-q", "--detach", &first]);
    let detached = fx.call("repo.status", json!({ "repoPath": repo.join("src") }));
    assert_eq!(detached["data"]["detached"], true);
    assert_eq!(detached["data"]["branch"], json!(null));
    assert_eq!(detached["data"]["headOid"], json!(first));
    assert_eq!(
        detached["repoPath"],
        json!(repo),
        "a subdirectory means its working tree"
    );
}

#[test]
fn entries_are_capped_with_true_totals() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    for i in 0..30 {
        fx.write(&repo, &format!("f{i:02}.txt"), "x\n");
    }
    let result = fx.call("repo.status", json!({ "repoPath": repo, "maxEntries": 10 }));
    assert_eq!(result["data"]["entries"].as_array().unwrap().len(), 10);
    assert_eq!(result["data"]["changedFiles"], 30);
    assert_eq!(result["data"]["counts"]["untracked"], 30);
    assert_eq!(result["data"]["entriesTruncated"], true);
}

#[test]
fn bad_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let plain = fx.path("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let mut server = fx.server(&[], &[]);
    let errors: Vec<_> = [
        json!({}),
        json!({ "repoPath": "relative/path" }),
        json!({ "repoPath": fx.path("missing") }),
        json!({ "repoPath": plain }),
        json!({ "repoPath": repo, "maxEntries": 0 }),
        json!({ "repoPath": repo, "unknown": true }),
    ]
    .into_iter()
    .map(|args| server.call("repo.status", args))
    .collect();
    tool_snapshot!("repo_status_bad_input", fx, json!(errors));
}

#[test]
fn allowed_roots_are_enforced_without_revealing_them() {
    let fx = Fixture::new();
    let inside = fx.init("allowed/repo", &[]);
    let outside = fx.init("elsewhere/repo", &[]);
    let root = fx.path("allowed").display().to_string();
    let mut server = fx.server(&[], &[("FLUXGIT_MCP_ALLOWED_ROOTS", &root)]);
    let ok = server.call("repo.status", json!({ "repoPath": inside }));
    assert_eq!(ok["data"]["unborn"], true);
    let denied = server.call("repo.status", json!({ "repoPath": outside }));
    assert_eq!(denied["error"]["code"], -32602);
    assert!(
        !denied.to_string().contains(&root),
        "roots must not leak: {denied}"
    );
    // A symlink from inside the root to outside it is judged by where it leads.
    let link = fx.path("allowed/link");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let via_link = server.call("repo.status", json!({ "repoPath": link }));
    assert_eq!(via_link["error"]["code"], -32602);
}

/// 20,000 changed paths with long names: the default answer stays within 64 KiB, says it
/// was cut, and every total stays true; the largest `maxEntries` is held to the same size.
#[test]
fn twenty_thousand_changes_fit_in_64_kib_with_true_totals() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let dir = "some/rather/deep/directory/holding/generated/files";
    let name = |i: usize, ext: &str| format!("{dir}/generated-file-number-{i:05}.{ext}");
    for i in 0..10_000 {
        fx.write(&repo, &name(i, "txt"), "x");
    }
    fx.git(&repo, &["add", "-A"]);
    fx.git(&repo, &["commit", "-q", "-m", "generate"]);
    for i in 0..10_000 {
        fx.write(&repo, &name(i, "txt"), "changed");
        fx.write(&repo, &name(i, "new"), "untracked");
    }
    let mut server = fx.server(&[], &[]);
    for args in [
        json!({ "repoPath": repo }),
        json!({ "repoPath": repo, "maxEntries": 5000 }),
    ] {
        let out = server.call("repo.status", args.clone());
        let size = serde_json::to_string(&out).unwrap().len();
        assert!(size <= 64 * 1024, "{args}: {size} bytes");
        let d = &out["data"];
        assert_eq!(d["changedFiles"], 20_000, "{args}");
        assert_eq!(d["counts"]["unstaged"], 10_000, "{args}");
        assert_eq!(d["counts"]["untracked"], 10_000, "{args}");
        assert_eq!(d["entriesTruncated"], true, "{args}");
        let listed = d["entries"].as_array().unwrap().len();
        assert!(listed >= 300, "{args}: only {listed} entries listed");
    }
}
