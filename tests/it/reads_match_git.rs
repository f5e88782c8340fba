//! Reads checked against plain git where they used to differ from it: reflogs whose
//! times go backwards, a bisect, nested submodule drift, messages with trailing
//! whitespace and the stash's selector.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::Fixture;

fn data(fx: &Fixture, tool: &str, args: Value) -> Value {
    let out = fx.call(tool, args);
    assert!(out.get("error").is_none(), "{tool}: {out}");
    out["data"].clone()
}

/// Commits with a committer date of our choosing (the reflog records that date too).
fn commit_dated(fx: &Fixture, repo: &Path, message: &str, date: &str) {
    let out = Command::new("git")
        .current_dir(repo)
        .args(["commit", "-q", "--allow-empty", "-m", message])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env())
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// Entries of `refname`'s reflog git dates at or after `since` (Unix seconds).
fn git_reflog_since(fx: &Fixture, repo: &Path, refname: &str, since: i64) -> usize {
    fx.git(
        repo,
        &["log", "-g", "--date=unix", "--format=%gd", refname, "--"],
    )
    .lines()
    .filter(|l| {
        let at = l.split_once("@{").unwrap().1.trim_end_matches('}');
        at.parse::<i64>().unwrap() >= since
    })
    .count()
}

#[test]
fn digest_reads_past_an_entry_dated_before_the_window() {
    let fx = Fixture::new();
    let repo = fx.init("skew", &[]);
    fx.commit(&repo, "a", "1\n", "one");
    commit_dated(&fx, &repo, "two", "1500000000 +0000");
    fx.commit(&repo, "a", "3\n", "three");
    let since = 1_767_225_600;
    let expected = git_reflog_since(&fx, &repo, "HEAD", since);
    assert_eq!(expected, 2, "fixture shape");
    let d = data(
        &fx,
        "fleet.digest",
        json!({ "since": since * 1000, "repoPaths": [&repo], "refs": "head" }),
    );
    let messages: Vec<&str> = d["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["commit: three", "commit (initial): one"]);
    assert_eq!(d["eventsTotal"], expected);
    let d = data(
        &fx,
        "fleet.digest",
        json!({ "since": since * 1000, "repoPaths": [&repo], "maxEvents": 1 }),
    );
    assert_eq!(
        d["eventsTotal"],
        expected + git_reflog_since(&fx, &repo, "refs/heads/main", since)
    );
}

#[test]
fn radar_names_a_clean_bisect_as_bisecting() {
    let fx = Fixture::new();
    let repo = fx.init("bisect", &[]);
    for i in 0..4 {
        fx.commit(&repo, "a", &format!("{i}\n"), &format!("c{i}"));
    }
    fx.git(&repo, &["bisect", "start", "HEAD", "HEAD~3"]);
    fx.git(&repo, &["bisect", "good"]);
    let d = data(&fx, "fleet.radar", json!({ "repoPaths": [&repo] }));
    let e = &d["entries"][0];
    assert_eq!(e["status"], "bisecting", "{e}");
    assert_eq!(e["priority"], 85);
    assert_eq!(e["dirty"], false);
    assert_eq!(e["operation"], "bisect");
    assert_eq!(
        e["bisect"]["bad"],
        fx.git(&repo, &["rev-parse", "refs/bisect/bad"])
    );
    let good: Vec<String> = fx
        .git(
            &repo,
            &[
                "for-each-ref",
                "--format=%(objectname)",
                "refs/bisect/good-*",
            ],
        )
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(good.len(), 2);
    assert_eq!(e["bisect"]["good"], json!(good));
    assert_eq!(e["head"], fx.git(&repo, &["rev-parse", "HEAD"]));
    assert!(
        e["summary"].as_str().unwrap().starts_with("bisecting at "),
        "{e}"
    );
    assert_ne!(e["suggestedActions"][0]["tool"], "worktree.changes");
}

#[test]
fn brief_counts_nested_submodule_drift_as_submodule_status_does() {
    let fx = Fixture::new();
    let inner = fx.init("src/inner", &[]);
    fx.commit(&inner, "i.txt", "1\n", "inner one");
    fx.commit(&inner, "i.txt", "2\n", "inner two");
    let mid = fx.init("src/mid", &[]);
    fx.commit(&mid, "m.txt", "m\n", "mid");
    fx.git(
        &mid,
        &["submodule", "add", "-q", inner.to_str().unwrap(), "inner"],
    );
    fx.git(&mid, &["commit", "-q", "-m", "mid adds inner"]);
    let top = fx.init("top", &[]);
    fx.commit(&top, "t.txt", "t\n", "top");
    fx.git(
        &top,
        &["submodule", "add", "-q", mid.to_str().unwrap(), "mid"],
    );
    fx.git(&top, &["commit", "-q", "-m", "top adds mid"]);
    fx.git(
        &top,
        &["submodule", "update", "-q", "--init", "--recursive"],
    );
    // The nested submodule drifts: checked out one commit back from the recorded one.
    fx.git(&top.join("mid/inner"), &["checkout", "-q", "HEAD~1"]);

    let status = data(&fx, "submodule.status", json!({ "repoPath": &top }));
    assert_eq!(status["drifted"], 1, "{status}");
    let brief = data(&fx, "repo.brief", json!({ "repoPath": &top }));
    let subs = &brief["submodules"];
    assert_eq!(subs["drifted"], status["drifted"], "{subs}");
    assert_eq!(subs["total"], status["total"], "{subs}");
    assert!(
        subs["attention"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["path"] == "mid/inner" && a["state"] == "drifted"),
        "{subs}"
    );
}

#[test]
fn commit_details_keeps_trailing_whitespace_as_stored() {
    let fx = Fixture::new();
    let repo = fx.init("ws", &[]);
    fx.commit(&repo, "a", "1\n", "one");
    fx.git(
        &repo,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "--cleanup=verbatim",
            "-m",
            "subject  \n\nbody line\t \n\n",
        ],
    );
    let stored = fx.git_output(&repo, &["cat-file", "commit", "HEAD"]).stdout;
    let stored = String::from_utf8(stored).unwrap();
    let message = stored.split_once("\n\n").unwrap().1;
    let d = data(
        &fx,
        "commit.details",
        json!({ "repoPath": &repo, "commit": "HEAD" }),
    );
    assert_eq!(
        d["commit"]["message"],
        message.strip_suffix('\n').unwrap(),
        "{d}"
    );
    assert_eq!(d["commit"]["message"], "subject  \n\nbody line\t \n");
}

#[test]
fn reflog_of_the_stash_uses_gits_selector() {
    let fx = Fixture::new();
    let repo = fx.init("stash", &[]);
    fx.commit(&repo, "a", "1\n", "one");
    for text in ["s1\n", "s2\n"] {
        fx.write(&repo, "a", text);
        fx.git(&repo, &["stash", "-q"]);
    }
    let listed: Vec<String> = fx
        .git(&repo, &["stash", "list", "--format=%gd"])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, ["stash@{0}", "stash@{1}"]);
    // A branch named `stash` makes the short name ambiguous; git still says `stash@{n}`.
    fx.git(&repo, &["branch", "stash"]);
    for name in ["refs/stash", "stash"] {
        let d = data(
            &fx,
            "repo.reflog",
            json!({ "repoPath": &repo, "refName": name }),
        );
        assert_eq!(d["fullRef"], "refs/stash");
        let selectors: Vec<&str> = d["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["selector"].as_str().unwrap())
            .collect();
        assert_eq!(selectors, listed, "{name}");
    }
}

#[test]
fn a_glob_in_path_is_literal_and_says_so() {
    let fx = Fixture::new();
    let repo = fx.init("glob", &[]);
    fx.commit(&repo, "README.md", "a\n", "readme");
    fx.commit(&repo, "crates/x/Cargo.toml", "[package]\n", "crate x");
    fx.write(&repo, "README.md", "changed\n");
    // git itself matches the glob; the tools take the path literally, and say so.
    assert!(!fx.git(&repo, &["diff", "--", "*.md"]).is_empty());
    let d = data(
        &fx,
        "diff.text",
        json!({ "repoPath": &repo, "path": "*.md" }),
    );
    assert_eq!(d["diff"], "");
    let warning = d["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("literally"), "{d}");
    let d = data(
        &fx,
        "repo.history",
        json!({ "repoPath": &repo, "path": "crates/*/Cargo.toml" }),
    );
    assert_eq!(d["commits"], json!([]));
    assert!(
        d["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .contains("literally"),
        "{d}"
    );
    // A literal path that exists, or a plain path with no match, gets no warning.
    let d = data(
        &fx,
        "repo.history",
        json!({ "repoPath": &repo, "path": "crates/x/Cargo.toml" }),
    );
    assert_eq!(d["commits"].as_array().unwrap().len(), 1);
    assert!(d.get("warnings").is_none(), "{d}");
    let d = data(
        &fx,
        "diff.text",
        json!({ "repoPath": &repo, "path": "nothing" }),
    );
    assert!(d.get("warnings").is_none(), "{d}");
}

/// Runs git with a ref name that is not UTF-8 (argv bytes).
fn git_bytes(fx: &Fixture, repo: &Path, args: &[&[u8]]) -> String {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new("git")
        .current_dir(repo)
        .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn non_utf8_ref_names_keep_their_bytes_and_can_be_passed_back() {
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let fx = Fixture::new();
    let repo = fx.init("names", &[]);
    fx.commit(&repo, "a", "1\n", "one");
    git_bytes(&fx, &repo, &[b"branch", b"feat\xfex"]);
    git_bytes(&fx, &repo, &[b"checkout", b"-q", b"-b", b"feat\xffx"]);
    fx.commit(&repo, "a", "2\n", "two on ff");
    git_bytes(&fx, &repo, &[b"tag", b"v\xfe"]);
    let want_fe = fx.git(&repo, &["rev-parse", "HEAD~1"]);
    let want_ff = fx.git(&repo, &["rev-parse", "HEAD"]);

    let refs = data(&fx, "repo.refs", json!({ "repoPath": &repo }));
    let raw: Vec<&str> = refs["local"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["nameBytesB64"].as_str())
        .collect();
    assert_eq!(raw, [b64(b"feat\xfex"), b64(b"feat\xffx")], "{refs}");
    assert_eq!(refs["tags"][0]["nameBytesB64"], b64(b"v\xfe"));
    assert_eq!(refs["head"]["refBytesB64"], b64(b"refs/heads/feat\xffx"));

    let stack = data(&fx, "repo.branchStack", json!({ "repoPath": &repo }));
    assert_eq!(
        stack["current"]["refBytesB64"],
        b64(b"refs/heads/feat\xffx")
    );
    let related: Vec<&Value> = stack["related"].as_array().unwrap().iter().collect();
    assert!(
        related
            .iter()
            .any(|r| r["refBytesB64"] == b64(b"refs/heads/feat\xfex")),
        "{stack}"
    );
    assert!(
        !related
            .iter()
            .any(|r| r["refBytesB64"] == b64(b"refs/heads/feat\xffx")),
        "the current branch is not its own relative: {stack}"
    );

    let digest = data(
        &fx,
        "fleet.digest",
        json!({ "since": 0, "repoPaths": [&repo], "refs": "branches" }),
    );
    let names: std::collections::BTreeSet<&str> = digest["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["refBytesB64"].as_str())
        .collect();
    let expected: std::collections::BTreeSet<String> =
        [b64(b"refs/heads/feat\xfex"), b64(b"refs/heads/feat\xffx")].into();
    assert_eq!(
        names,
        expected.iter().map(String::as_str).collect(),
        "{digest}"
    );

    for (name, want) in [(b"feat\xfex", &want_fe), (b"feat\xffx", &want_ff)] {
        let d = data(
            &fx,
            "repo.history",
            json!({ "repoPath": &repo, "refBytesB64": b64(name) }),
        );
        assert_eq!(d["startOid"], json!(want), "{d}");
    }
}

#[test]
fn scope_and_status_count_an_untracked_directory_alike() {
    let fx = Fixture::new();
    let repo = fx.init("untracked", &[]);
    fx.commit(&repo, "src/lib.rs", "x\n", "lib");
    fx.write(&repo, "src/newdir/a.rs", "a\n");
    fx.write(&repo, "src/newdir/b.rs", "b\n");
    let git_says = fx.git(
        &repo,
        &["status", "--porcelain", "--untracked-files=normal"],
    );
    assert_eq!(git_says, "?? src/newdir/");
    let status = data(&fx, "repo.status", json!({ "repoPath": &repo }));
    let scope = data(
        &fx,
        "repo.scope",
        json!({ "repoPath": &repo, "path": "src" }),
    );
    assert_eq!(status["counts"]["untracked"], 1, "{status}");
    assert_eq!(scope["workingTree"]["untracked"], 1, "{scope}");
    assert_eq!(scope["workingTree"]["entries"][0]["path"], "src/newdir/");
    assert_eq!(status["entries"][0]["path"], "src/newdir/");
}

#[test]
fn reflog_reads_latin1_messages_as_commit_details_does() {
    let fx = Fixture::new();
    let repo = fx.init("latin1", &[]);
    // Written in Latin-1 (the commit records `encoding ISO-8859-1`); read with the
    // default UTF-8 output encoding, as any other repository is.
    let file = repo.join("msg");
    std::fs::write(&file, b"caf\xe9 cr\xe8me\n").unwrap();
    let commit_in = |fx: &Fixture, encoding: &str| {
        fx.git(
            &repo,
            &[
                "-c",
                &format!("i18n.commitEncoding={encoding}"),
                "commit",
                "-q",
                "--allow-empty",
                "-F",
                file.to_str().unwrap(),
            ],
        );
    };
    commit_in(&fx, "ISO-8859-1");
    let details = data(
        &fx,
        "commit.details",
        json!({ "repoPath": &repo, "commit": "HEAD" }),
    );
    assert_eq!(details["commit"]["subject"], "café crème");
    let reflog = data(&fx, "repo.reflog", json!({ "repoPath": &repo }));
    let e = &reflog["entries"][0];
    assert_eq!(e["message"], "commit (initial): café crème", "{e}");
    assert!(e.get("messageBytesB64").is_none());

    // An encoding git names but we cannot read: the bytes come beside the text.
    std::fs::write(&file, b"od\xff\n").unwrap();
    commit_in(&fx, "x-unknown");
    let reflog = data(&fx, "repo.reflog", json!({ "repoPath": &repo }));
    use base64::Engine;
    assert_eq!(
        reflog["entries"][0]["messageBytesB64"],
        base64::engine::general_purpose::STANDARD.encode(b"commit: od\xff")
    );
}
