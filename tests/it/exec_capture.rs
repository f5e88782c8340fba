//! The cheap readings of the write path, against what plain git says: the index identity
//! read from the index file follows its entries and nothing else, a restore point's
//! worktree tree is exactly what `git add -A` would store however the changes were
//! listed, and index copies never outlive the process that made them.

use std::path::Path;
use std::time::{Duration, SystemTime};

use gitward::gateway::server::restore::{self, Caps};
use gitward::gateway::server::store::RestorePoint;
use gitward::git::ObjectFormat;
use gitward::git::index_file;
use serde_json::json;

use super::exec_ops::Rig;
use super::exec_restore::{open, try_take};

fn digest(repo: &Path) -> String {
    index_file::digest(&repo.join(".git/index"), ObjectFormat::Sha1)
        .expect("a real index always parses")
}

/// Gives `rel` a new modification time without touching its bytes.
fn touch(repo: &Path, rel: &str, secs_ago: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(repo.join(rel))
        .unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

#[test]
fn index_digest_follows_entries_not_stat_data_or_encoding() {
    let rig = Rig::new();
    let repo = &rig.repo;
    let base = digest(repo);
    let bytes = std::fs::read(repo.join(".git/index")).unwrap();
    touch(repo, "a.txt", 3600);
    rig.git(&["update-index", "--refresh"]);
    assert_ne!(std::fs::read(repo.join(".git/index")).unwrap(), bytes);
    assert_eq!(digest(repo), base, "a refresh only rewrote stat data");
    for version in ["4", "3", "2"] {
        rig.git(&["update-index", "--index-version", version]);
        assert_eq!(digest(repo), base, "index version {version}");
    }
    let mut seen = vec![base.clone()];
    let mut changed = |what: &str, args: &[&str], undo: &[&str]| {
        rig.git(args);
        let now = digest(repo);
        assert!(!seen.contains(&now), "{what} left the digest as before");
        seen.push(now);
        rig.git(undo);
        assert_eq!(digest(repo), base, "undoing {what}");
    };
    changed(
        "skip-worktree",
        &["update-index", "--skip-worktree", "a.txt"],
        &["update-index", "--no-skip-worktree", "a.txt"],
    );
    changed(
        "a mode",
        &["update-index", "--chmod=+x", "a.txt"],
        &["update-index", "--chmod=-x", "a.txt"],
    );
    rig.fx.write(repo, "new.txt", "new\n");
    changed(
        "intent-to-add",
        &["add", "-N", "new.txt"],
        &["rm", "-q", "--cached", "new.txt"],
    );
    rig.git(&["update-index", "--index-version", "4"]);
    changed(
        "a staged file in a v4 index",
        &["add", "new.txt"],
        &["rm", "-q", "--cached", "new.txt"],
    );
    rig.fx.write(repo, "a.txt", "one\ntwo\nthree\n");
    changed(
        "staged bytes",
        &["add", "a.txt"],
        &["reset", "-q", "--", "a.txt"],
    );
    rig.git(&["update-index", "--split-index"]);
    assert!(index_file::digest(&repo.join(".git/index"), ObjectFormat::Sha1).is_some());
}

/// The tree `git add -A` makes of the worktree, on a copy of the index.
pub fn tree_git_would_store(rig: &Rig) -> String {
    let copy = rig.fx.path("index-for-add");
    std::fs::copy(rig.repo.join(".git/index"), &copy).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&rig.repo)
            .args(args)
            .envs(rig.fx.env())
            .env("GIT_INDEX_FILE", &copy)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    run(&["add", "-A"]);
    run(&["write-tree"])
}

async fn point_tree(rig: &Rig) -> (String, u64) {
    let refs = ["refs/heads/main".to_owned()];
    let point = try_take(rig, &mut rig.store(), &Caps::default(), &refs)
        .await
        .unwrap();
    (
        whole_tree(rig, &point).await,
        point.captured["worktree"]["hashed"].as_u64().unwrap(),
    )
}

/// The whole worktree tree of `point`, as a restore makes it.
pub(crate) async fn whole_tree(rig: &Rig, point: &RestorePoint) -> String {
    let repo = open(rig).await;
    let git = gitward::git::Git::new(&repo, &rig.cancel);
    let tree = restore::whole_tree(&git, point).await.unwrap();
    tree.unwrap().as_str().to_owned()
}

#[tokio::test]
async fn restore_point_stores_the_worktree_git_would_add() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "edited\n");
    rig.fx.write(&rig.repo, "new/deep.txt", "untracked\n");
    std::fs::remove_file(rig.repo.join("dir/b.txt")).unwrap();
    // Stat data alone changed: git compares the bytes and leaves it out.
    rig.fx.write(&rig.repo, "same.txt", "same\n");
    rig.git(&["add", "same.txt"]);
    touch(&rig.repo, "same.txt", 7200);
    let (tree, hashed) = point_tree(&rig).await;
    assert_eq!(tree, tree_git_would_store(&rig));
    assert_eq!(hashed, 2, "a.txt and new/deep.txt");
}

#[tokio::test]
async fn restore_point_of_a_stale_index_compares_contents_first() {
    let rig = Rig::new();
    let names: Vec<String> = (0..2100).map(|i| format!("many/f{i:04}.txt")).collect();
    for name in &names {
        rig.fx.write(&rig.repo, name, "same\n");
    }
    rig.git(&["add", "many"]);
    rig.git(&["commit", "-q", "-m", "many"]);
    for name in &names {
        touch(&rig.repo, name, 7200);
    }
    rig.fx
        .write(&rig.repo, "many/f0007.txt", "really changed\n");
    let (tree, hashed) = point_tree(&rig).await;
    assert_eq!(tree, tree_git_would_store(&rig));
    assert_eq!(hashed, 1, "only the file whose bytes changed is stored");
}

#[test]
fn index_copies_of_a_gone_process_are_swept_and_none_leak() {
    let rig = Rig::new();
    let tmp = rig.fx.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let stale = tmp.join(format!("gitward-index-{gone_pid}-AbC123"));
    let live = tmp.join(format!("gitward-index-{}-XyZ789", std::process::id()));
    let unnamed = tmp.join("gitward-index-Qw3rty");
    for dir in [&stale, &live, &unnamed] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("index"), b"DIRC").unwrap();
    }
    rig.fx.write(&rig.repo, "a.txt", "edited\n");
    let tmp_env = tmp.display().to_string();
    let mut server = rig.fx.server(&[], &[("TMPDIR", tmp_env.as_str())]);
    let result = server.call(
        "diff.text",
        json!({"repoPath": rig.repo.display().to_string()}),
    );
    assert!(result.get("error").is_none(), "{result}");
    assert_ne!(result["data"]["totalBytes"], json!(0), "{result}");
    drop(server);
    let mut left: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    // The gone process's copy is swept; a live one and a young unnamed one stay; the
    // server's own copy went with the call.
    let mut kept = vec![
        "gitward-index-Qw3rty".to_owned(),
        format!("gitward-index-{}-XyZ789", std::process::id()),
    ];
    kept.sort();
    assert_eq!(left, kept);
}
