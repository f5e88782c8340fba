//! `diff.text` against real repositories.

use serde_json::{Value, json};

use crate::common::{Fixture, assert_refused};
use crate::hostile;
use crate::tool_snapshot;

/// What plain `git diff` prints with the repository's own configuration.
fn raw_diff(fx: &Fixture, repo: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let mut full = vec![
        "--literal-pathspecs",
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-M",
    ];
    full.extend_from_slice(args);
    let out = fx.git_output(repo, &full);
    assert!(out.status.success());
    out.stdout
}

fn diff_of(result: &Value) -> &str {
    result["data"]["diff"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"))
}

/// A repository with two commits, staged and unstaged changes.
fn setup(fx: &Fixture) -> std::path::PathBuf {
    let repo = fx.init("repo", &[]);
    fx.write(&repo, "old name.txt", "one\ntwo\nthree\nfour\nfive\n");
    fx.write(&repo, "bin.dat", "x\0y");
    fx.commit(&repo, "a.txt", "a\n", "first");
    fx.git(&repo, &["mv", "old name.txt", "new name.txt"]);
    fx.write(&repo, "bin.dat", "z\0y");
    fx.commit(&repo, "a.txt", "a\nb\n", "second");
    fx.write(&repo, "a.txt", "a\nb\nstaged\n");
    fx.git(&repo, &["add", "a.txt"]);
    fx.write(&repo, "a.txt", "a\nb\nstaged\nunstaged\n");
    repo
}

#[test]
fn every_mode_matches_git_diff() {
    let fx = Fixture::new();
    let repo = setup(&fx);
    let mut server = fx.server(&[], &[]);
    let cases: [(Value, &[&str]); 6] = [
        (
            json!({ "base": "HEAD~1", "head": "HEAD" }),
            &["HEAD~1", "HEAD"],
        ),
        (json!({ "base": "HEAD~1" }), &["HEAD~1"]),
        (json!({ "head": "HEAD~1" }), &["HEAD~1"]),
        (
            json!({ "base": "HEAD~1", "staged": true }),
            &["--cached", "HEAD~1"],
        ),
        (json!({}), &[]),
        (json!({ "staged": true }), &["--cached"]),
    ];
    for (mut args, git_args) in cases {
        args["repoPath"] = json!(repo);
        let result = server.call("diff.text", args.clone());
        let expected = raw_diff(&fx, &repo, git_args);
        assert!(!expected.is_empty(), "{git_args:?}");
        assert_eq!(diff_of(&result).as_bytes(), expected, "{args}");
        assert_eq!(result["data"]["totalBytes"], expected.len(), "{args}");
        assert_eq!(result["data"]["truncated"], false);
        assert_eq!(result["data"]["totalBytesExact"], true);
    }
    let two = server.call(
        "diff.text",
        json!({ "repoPath": repo, "base": "HEAD~1", "head": "HEAD" }),
    );
    assert_eq!(two["data"]["binaryFiles"], json!([{ "path": "bin.dat" }]));
    tool_snapshot!("diff_text_two_revisions", fx, two);

    let filtered = server.call(
        "diff.text",
        json!({ "repoPath": repo, "base": "HEAD~1", "head": "HEAD", "path": "bin.dat" }),
    );
    assert_eq!(
        diff_of(&filtered).as_bytes(),
        raw_diff(&fx, &repo, &["HEAD~1", "HEAD", "--", "bin.dat"])
    );
}

#[test]
fn truncation_keeps_lines_and_true_totals() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "start\n", "first");
    let body: String = (0..400).map(|i| format!("line {i} é\n")).collect();
    fx.write(&repo, "a.txt", &body);
    let full = raw_diff(&fx, &repo, &[]);
    let mut server = fx.server(&[], &[]);
    let cut = server.call("diff.text", json!({ "repoPath": repo, "maxBytes": 1000 }));
    let text = diff_of(&cut);
    assert!(text.len() <= 1000 && text.ends_with('\n'), "{text}");
    assert!(full.starts_with(text.as_bytes()));
    assert_eq!(cut["data"]["truncated"], true);
    assert_eq!(cut["data"]["totalBytes"], full.len());
    assert_eq!(cut["data"]["totalBytesExact"], true);
    let lines = full.iter().filter(|b| **b == b'\n').count();
    assert_eq!(cut["data"]["totalLines"], lines);

    let few = server.call("diff.text", json!({ "repoPath": repo, "maxLines": 3 }));
    assert_eq!(diff_of(&few).lines().count(), 3);
    assert_eq!(few["data"]["truncated"], true);

    // A line longer than what is left is never split, not even a giant one.
    fx.write(&repo, "a.txt", &"é".repeat(5000));
    let giant = server.call("diff.text", json!({ "repoPath": repo, "maxBytes": 301 }));
    let text = diff_of(&giant);
    let full = raw_diff(&fx, &repo, &[]);
    assert!(text.len() <= 301 && text.ends_with('\n'), "{text}");
    assert!(full.starts_with(text.as_bytes()));
    assert_eq!(giant["data"]["lossy"], false);
    let tiny = server.call("diff.text", json!({ "repoPath": repo, "maxBytes": 10 }));
    assert_eq!(
        diff_of(&tiny),
        "",
        "the first line alone is longer than 10 bytes"
    );
    assert_eq!(tiny["data"]["truncated"], true);
    assert_eq!(tiny["data"]["totalBytes"], full.len());
}

#[test]
fn non_utf8_content_and_names() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(repo.join(name), b"caf\xe9\n").unwrap();
    std::fs::write(repo.join("tab\there.bin"), b"\0binary").unwrap();
    fx.git(&repo, &["add", "-A"]);
    let result = fx.call("diff.text", json!({ "repoPath": repo, "staged": true }));
    assert_eq!(result["data"]["lossy"], true);
    let expected = raw_diff(&fx, &repo, &["--cached"]);
    assert_eq!(
        diff_of(&result),
        String::from_utf8_lossy(&expected),
        "the lossy rendering of git's bytes"
    );
    assert_eq!(
        result["data"]["binaryFiles"],
        json!([{ "path": "tab\there.bin" }])
    );
}

#[test]
fn unborn_bare_and_sha256() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, "a.txt", "a\n");
    fx.git(&repo, &["add", "a.txt"]);
    fx.write(&repo, "a.txt", "a\nb\n");
    let mut server = fx.server(&[], &[]);
    let unstaged = server.call("diff.text", json!({ "repoPath": repo }));
    assert_eq!(diff_of(&unstaged).as_bytes(), raw_diff(&fx, &repo, &[]));
    let staged = server.call("diff.text", json!({ "repoPath": repo, "staged": true }));
    assert_eq!(
        diff_of(&staged).as_bytes(),
        raw_diff(&fx, &repo, &["--cached"])
    );
    assert!(diff_of(&staged).contains("new file mode"));

    let src = fx.init("src", &["--object-format=sha256"]);
    fx.commit(&src, "a.txt", "a\n", "first");
    fx.commit(&src, "a.txt", "a\nb\n", "second");
    let root = fx.root();
    fx.git(
        &root,
        &["clone", "-q", "--bare", src.to_str().unwrap(), "bare.git"],
    );
    let bare = fx.path("bare.git");
    let two = server.call(
        "diff.text",
        json!({ "repoPath": bare, "base": "main~1", "head": "main" }),
    );
    assert_eq!(
        diff_of(&two).as_bytes(),
        raw_diff(&fx, &src, &["HEAD~1", "HEAD"])
    );
    assert_eq!(two["data"]["headOid"].as_str().unwrap().len(), 64);
    let worktree = server.call("diff.text", json!({ "repoPath": bare }));
    assert_eq!(worktree["error"]["code"], 10010, "{worktree}");
}

#[test]
fn bad_and_hostile_input() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let marker = repo.join("created-by-option");
    let mut server = fx.server(&[], &[]);
    let revs = hostile::hostile_revs(&marker);
    let base = json!({ "repoPath": repo });
    let with_head = json!({ "repoPath": repo, "head": "HEAD" });
    let both = json!({ "repoPath": repo, "base": "HEAD", "head": "HEAD" });
    assert_refused(&mut server, "diff.text", &base, "base", &revs);
    assert_refused(&mut server, "diff.text", &base, "head", &revs);
    assert_refused(&mut server, "diff.text", &with_head, "base", &revs);
    assert_refused(
        &mut server,
        "diff.text",
        &base,
        "path",
        &hostile::hostile_paths(),
    );
    assert!(!marker.exists(), "a refused value created a file");
    assert_refused(&mut server, "diff.text", &base, "maxBytes", &[0, 1_048_577]);
    assert_refused(&mut server, "diff.text", &base, "maxLines", &[0]);
    assert_refused(&mut server, "diff.text", &base, "base", &["nope"]);
    assert_refused(&mut server, "diff.text", &both, "staged", &[true]);
}

/// Peak resident memory of a process, from /proc (Linux only).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

#[test]
fn a_large_diff_streams_in_flat_memory() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "keep.txt", "k\n", "first");
    // About 48 MiB of patch: larger than the memory bound, so buffering it would show.
    let line = format!("{}\n", "x".repeat(99));
    let chunk = line.repeat(10_000);
    let mut file = std::fs::File::create(repo.join("big.txt")).unwrap();
    for _ in 0..48 {
        use std::io::Write;
        file.write_all(chunk.as_bytes()).unwrap();
    }
    drop(file);
    fx.git(&repo, &["add", "big.txt"]);
    let mut server = fx.server(&[], &[]);
    let result = server.call("diff.text", json!({ "repoPath": repo, "staged": true }));
    let data = &result["data"];
    assert_eq!(data["truncated"], true);
    assert_eq!(data["totalBytesExact"], true);
    assert!(
        data["totalBytes"].as_u64().unwrap() > 48 * 1_000_000,
        "{}",
        data["totalBytes"]
    );
    assert_eq!(data["totalLines"].as_u64().unwrap(), 480_000 + 6);
    if let Some(peak) = peak_rss_kib(server.pid()) {
        assert!(peak < 32 * 1024, "peak RSS {peak} KiB");
    }
}

#[test]
fn in_a_conflicted_merge_and_a_linked_worktree() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "c.txt", "base\n", "base");
    fx.git(&repo, &["checkout", "-q", "-b", "side"]);
    fx.commit(&repo, "c.txt", "theirs\n", "theirs");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.commit(&repo, "c.txt", "ours\n", "ours");
    assert!(!fx.git_output(&repo, &["merge", "side"]).status.success());
    let mut server = fx.server(&[], &[]);
    let result = server.call("diff.text", json!({ "repoPath": repo }));
    let expected = raw_diff(&fx, &repo, &[]);
    assert!(String::from_utf8_lossy(&expected).contains("diff --cc c.txt"));
    assert_eq!(diff_of(&result).as_bytes(), expected);

    let linked = fx.path("linked");
    fx.git(
        &repo,
        &["worktree", "add", "-q", linked.to_str().unwrap(), "side"],
    );
    fx.write(&linked, "c.txt", "edited in linked\n");
    let result = server.call("diff.text", json!({ "repoPath": linked, "base": "main" }));
    assert_eq!(
        diff_of(&result).as_bytes(),
        raw_diff(&fx, &linked, &["main"])
    );
    assert!(diff_of(&result).contains("+edited in linked"));
}

fn b64(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

#[test]
fn paths_are_printed_as_plain_git_diff_prints_them() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    use std::os::unix::ffi::OsStrExt;
    std::fs::write(repo.join("café.txt"), "x\n").unwrap();
    std::fs::write(
        repo.join(std::ffi::OsStr::from_bytes(b"lat\xe9.txt")),
        "y\n",
    )
    .unwrap();
    fx.git(&repo, &["add", "-A"]);
    let mut server = fx.server(&[], &[]);

    // Default configuration: git C-quotes the non-ASCII names, so the patch is ASCII.
    let quoted = server.call("diff.text", json!({ "repoPath": repo, "staged": true }));
    let expected = raw_diff(&fx, &repo, &["--cached"]);
    assert!(String::from_utf8_lossy(&expected).contains("\"b/caf\\303\\251.txt\""));
    assert_eq!(diff_of(&quoted).as_bytes(), expected);
    assert_eq!(quoted["data"]["lossy"], false);
    assert!(quoted["data"].get("diffBase64").is_none());

    // core.quotePath=false: names as raw bytes, one of them not UTF-8; the exact patch
    // comes back in diffBase64.
    fx.git(&repo, &["config", "core.quotePath", "false"]);
    let raw = server.call("diff.text", json!({ "repoPath": repo, "staged": true }));
    let expected = raw_diff(&fx, &repo, &["--cached"]);
    assert!(expected.windows(9).any(|w| w == b"caf\xc3\xa9.txt"));
    assert_eq!(raw["data"]["lossy"], true);
    assert_eq!(b64(raw["data"]["diffBase64"].as_str().unwrap()), expected);
    assert_eq!(diff_of(&raw), String::from_utf8_lossy(&expected));
}

#[test]
fn binary_files_with_awkward_names_and_in_a_conflict() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.write(&repo, "p and b/q", "a\0b");
    fx.write(&repo, "bin.dat", "base\0");
    fx.commit(&repo, "t.txt", "base\n", "base");
    fx.write(&repo, "p and b/q", "c\0b");
    let mut server = fx.server(&[], &[]);
    let result = server.call("diff.text", json!({ "repoPath": repo }));
    assert_eq!(diff_of(&result).as_bytes(), raw_diff(&fx, &repo, &[]));
    assert_eq!(
        result["data"]["binaryFiles"],
        json!([{ "path": "p and b/q" }])
    );
    fx.git(&repo, &["checkout", "-q", "--", "."]);

    fx.git(&repo, &["checkout", "-q", "-b", "side"]);
    fx.write(&repo, "bin.dat", "side\0");
    fx.commit(&repo, "t.txt", "side\n", "side");
    fx.git(&repo, &["checkout", "-q", "main"]);
    fx.write(&repo, "bin.dat", "main\0");
    fx.commit(&repo, "t.txt", "main\n", "main");
    assert!(!fx.git_output(&repo, &["merge", "side"]).status.success());
    let result = server.call("diff.text", json!({ "repoPath": repo }));
    let expected = raw_diff(&fx, &repo, &[]);
    assert!(String::from_utf8_lossy(&expected).contains("diff --cc bin.dat\n"));
    assert_eq!(diff_of(&result).as_bytes(), expected);
    assert_eq!(
        result["data"]["binaryFiles"],
        json!([{ "path": "bin.dat" }])
    );
    assert_eq!(result["data"]["binaryFilesTotal"], 1);
}

#[test]
fn the_path_filter_takes_real_names_literally() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    let names = ["tab\there.txt", ":colon.txt", ".hidden", ":(glob)*"];
    for name in names {
        fx.write(&repo, name, "one\n");
    }
    fx.commit(&repo, "other.txt", "one\n", "first");
    for name in names.iter().chain(&["other.txt"]) {
        fx.write(&repo, name, "two\n");
    }
    let mut server = fx.server(&[], &[]);
    for name in names {
        let result = server.call("diff.text", json!({ "repoPath": repo, "path": name }));
        let expected = raw_diff(&fx, &repo, &["--", name]);
        assert_eq!(diff_of(&result).as_bytes(), expected, "{name:?}");
        assert_eq!(
            String::from_utf8_lossy(&expected)
                .matches("diff --git")
                .count(),
            1,
            "{name:?} names exactly one file"
        );
    }
    // Magic is never applied: `:(glob)*.txt` names no file.
    let none = server.call(
        "diff.text",
        json!({ "repoPath": repo, "path": ":(glob)*.txt" }),
    );
    assert_eq!(diff_of(&none), "");
}
